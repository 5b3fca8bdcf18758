"""Entry point: page config and navigation over the lessons in pages/."""

import streamlit as st

st.set_page_config(page_title="Attention, step by step", page_icon="🔎", layout="wide")

st.title("Attention, step by step")
st.write("The lessons are being built; `attention_core` already computes every stage.")
