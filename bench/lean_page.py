"""The lean reference page for the lecture-hall benchmark: about the least a step-through page can cost.

    streamlit run bench/lean_page.py --server.address 127.0.0.1      # ?step=1 … ?step=9

A fragment holds Back/Next, a formula and two 8 × 8 Vega-Lite heatmaps given as spec dicts built
once; a click only swaps the data values. No torch, no Altair: what the app is compared with. Served as
the app is (an ``st.App`` with ``attention_ui.serving.lifespan``), so both run on the same server settings.
"""

import sys
from pathlib import Path

import streamlit as st

from lean_charts import STAGE_COUNT, heatmap_spec, stage_values


def move(delta: int) -> None:
    st.session_state["lean_step"] = min(max(st.session_state["lean_step"] + delta, 1), STAGE_COUNT)


@st.fragment
def stage() -> None:
    step = st.session_state["lean_step"]
    back, middle, forward = st.columns([1, 4, 1])
    back.button("◀ Back", on_click=move, args=(-1,), disabled=step == 1, key="back")
    middle.progress(step / STAGE_COUNT, text=f"Stage {step} of {STAGE_COUNT}")
    forward.button("Next ▶", on_click=move, args=(1,), disabled=step == STAGE_COUNT, key="next")
    st.latex(r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V")
    left, right = st.columns(2)
    for column, which in ((left, "before"), (right, "after")):
        column.vega_lite_chart({**heatmap_spec(), "data": {"values": stage_values(step, which)}})


if __name__ == "__main__":
    if "lean_step" not in st.session_state:
        linked = st.query_params.get("step", "1")
        st.session_state["lean_step"] = int(linked) if linked.isascii() and linked.isdigit() and len(linked) < 3 else 1
        move(0)
    st.title("Lean step-through")
    stage()
else:  # imported once at server start, as app.py is: served with the app's server socket settings
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from attention_ui.serving import lifespan

    app = st.App(__file__, lifespan=lifespan)
