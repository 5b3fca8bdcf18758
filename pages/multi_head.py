"""All heads side by side: how the columns are split, each head's weights, concat and W_O."""

import streamlit as st

from attention_ui import charts, frames
from attention_ui.controls import lesson_settings
from attention_ui.text import plain
from attention_ui.render import cached_spec
from attention_ui.views import StageView, feature_heatmap, on_pick, show_chart, show_lines, show_stage

settings = lesson_settings("Multi-head attention")
trace = settings.lesson.trace
h, d_k, d_v = trace.num_heads, trace.d_k, trace.d_v
labels = frames.AxisLabels(settings.labels)

st.markdown(
    "Instead of one attention over all features, the projections are cut into **h** slices and each "
    "slice runs its own attention: each head can look for a different kind of relation. "
    "The heads' results are then put side by side and mixed by W_O."
)
st.latex(r"\mathrm{head}_i = \mathrm{Attention}(X W_Q^{(i)}, X W_K^{(i)}, X W_V^{(i)}),\qquad "
         r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O")
if h == 1:
    st.info("There is only one head now. Raise “Number of heads” in the sidebar to compare heads.")

st.subheader("1 · The split: head i owns a block of columns")
st.markdown(f"W_Q and W_K have h·d_k = {h}·{d_k} = {h * d_k} columns, W_V has h·d_v = {h * d_v}. "
            f"Head i takes columns (i−1)·d_k + 1 to i·d_k: its own queries, keys and values.")
cols = st.columns(min(h, 4))
for i in range(h):
    with cols[i % len(cols)]:
        chart, note = feature_heatmap(StageView(trace, settings.labels, settings.follow, i, settings.cell_size,
                                                settings.font_size), trace.q[i], settings.labels,
                                      f"Q of head {i + 1} (columns {i * d_k + 1}–{(i + 1) * d_k})", prefix="q",
                                      share=1 / len(cols))
        show_chart(chart)

st.subheader("2 · Each head's attention weights (one shared colour scale)")
panels_per_row = min(h, 4)
grid_cell = max(12, min(settings.cell_size - 8, (1500 if settings.presenter else 680) // (panels_per_row * len(labels))))
grid = cached_spec(charts.head_grid, frames.heads_frame(trace.weights, labels, labels, blocked=~trace.mask),
                   columns=panels_per_row, domain=(0, 1), cell_size=grid_cell, font_size=settings.font_size,
                   selected=settings.head if h > 1 else None, pick=h > 1)
show_chart(grid, key="pick_head", on_select=on_pick("pick_head", "head_index", lambda i: {"head": i + 1}))
st.caption("Same colour = same weight in every head, so the panels can be compared directly. "
           + ("Click a head to look at it closely (outlined: the head chosen in the sidebar)." if h > 1 else ""))
view = StageView(trace, settings.labels, settings.follow, settings.head, settings.cell_size, settings.font_size,
                 x=settings.lesson.x, projections=settings.lesson.projections, colour=settings.colour, pick=True)
show_lines(view, title=f"head {settings.head + 1} as lines: each query (left) to each key (right), thicker = more "
           "weight; click a word on the left to follow it")

st.subheader(f"3 · What {plain(settings.labels[settings.follow])} attends to, head by head")
cols = st.columns(min(h, 2))  # two per row: room for every bar's value label
for i in range(h):
    with cols[i % len(cols)]:
        row = frames.row_frame(trace.weights[i, settings.follow], labels)
        show_chart(cached_spec(charts.row_bars, row, title=f"head {i + 1}", font_size=settings.font_size,
                               cell_size=max(min(settings.cell_size, 340 // len(labels)), 18), height=180))

show_stage(view, "concat", heading="4 · Concatenate the heads")
show_stage(view, "output", heading="5 · Mix them with W_O")
