"""Entry point: page config and navigation over the lessons in pages/."""

import streamlit as st

st.set_page_config(page_title="Attention, step by step", page_icon="🔎", layout="wide",
                   initial_sidebar_state="expanded")

LESSONS = [
    st.Page("pages/overview.py", title="Overview", icon="🏠", default=True),
    st.Page("pages/step_through.py", title="Step through", icon="👣"),
    st.Page("pages/multi_head.py", title="Multi-head", icon="🧠"),
    st.Page("pages/masking.py", title="Masking", icon="🎭"),
]

st.navigation(LESSONS).run()
