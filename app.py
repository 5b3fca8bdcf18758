"""Entry point: page config and navigation over the lessons in pages/."""

import os

import streamlit as st
import torch

# Many visitors share a small CPU: one thread per computation keeps every rerun responsive.
torch.set_num_threads(int(os.environ.get("ATTENTION_TORCH_THREADS", "1")))

st.set_page_config(page_title="Attention, step by step", page_icon="🔎", layout="wide",
                   initial_sidebar_state="expanded")

# Each lesson has its own url_path (hyphenated): a deep link then always goes through this file's
# navigation, never through the legacy pages-folder routing that would skip it.
LESSONS = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", url_path="overview", default=True),
    st.Page("pages/step_through.py", title="Step through", icon=":material/footprint:", url_path="step-through"),
    st.Page("pages/multi_head.py", title="Multi-head", icon=":material/view_module:", url_path="multi-head"),
    st.Page("pages/masking.py", title="Masking", icon=":material/grid_on:", url_path="masks"),
    st.Page("pages/real_model.py", title="Real model", icon=":material/neurology:", url_path="real-model"),
    st.Page("pages/inside_real_head.py", title="Inside a real head", icon=":material/biotech:",
            url_path="inside-real-head"),
    st.Page("pages/why_scaling.py", title="Why √d_k", icon=":material/functions:", url_path="why-scaling"),
    st.Page("pages/positions.py", title="Order and position", icon=":material/format_list_numbered:",
            url_path="order-and-position"),
    st.Page("pages/cross_attention.py", title="Cross-attention", icon=":material/compare_arrows:",
            url_path="cross-attention"),
    st.Page("pages/cost.py", title="What it costs", icon=":material/speed:", url_path="what-it-costs"),
]

st.navigation(LESSONS).run()
