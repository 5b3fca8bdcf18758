"""All heads side by side: how the columns are split, each head's weights, concat and W_O."""

import pandas as pd
import streamlit as st

from attention_ui import charts, frames
from attention_ui.checks.layer import multi_head_questions
from attention_ui.controls import lesson_settings
from attention_ui.questions import show_page_questions
from attention_ui.text import numbered, plain, repeated_words_note, says_why_words_repeat
from attention_ui.render import cached_chart
from attention_ui.views import (MIN_SLIDE_VALUE_PX, PRESENTER_COLUMN_PX, StageView, in_the_sidebar, main_column_px,
                                note_lone_key, on_pick, panel_prints_values, show_chart, show_lines, show_stage,
                                shown_features, slide_panel_width)

settings = lesson_settings("Multi-head attention")
trace = settings.lesson.trace
h, d_k, d_v = trace.num_heads, trace.d_k, trace.d_v
labels = frames.AxisLabels(settings.labels)

INTRO = ("Instead of one attention, the layer runs **h** of them side by side, the heads, each with its own block "
         "of columns of W_Q, W_K and W_V (section 2): each head can look for a different kind of relation. The "
         "heads' results are then put side by side and mixed by W_O.")
if not settings.presenter:  # on a slide the words follow the heads' panels, which take their room on the screen
    st.markdown(INTRO)
st.latex(r"\mathrm{head}_i = \mathrm{Attention}(X W_Q^{(i)}, X W_K^{(i)}, X W_V^{(i)}),\qquad "
         r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O")
if h == 1:
    st.info(f"There is only one head now. Raise “Number of heads” {in_the_sidebar()} to compare heads.")

# Pixels the panels of one row of a head grid are sized to; wide panels wrap to fewer per row, so that at
# least GRID_CELL pixels per cell fit in 4/3 of it (the chart then shrinks to the page by at most that).
# (A string here would be drawn on the page: Streamlit shows a bare expression of a page script.)
GRID_WIDTH = 1500 if settings.presenter else 680
GRID_CELL = 12
PRESENTER_GRID_HEIGHT = 360  # what is left under the title, formula and heading at 800 px, less the labels
PRESENTER_PANEL_ROW_PX = 64  # a second row of panels adds its heads' titles and the gap above them
PRESENTER_MIN_GRID_CELL = 20  # read from the back of a hall: 8 heads' panels at 16 px were colour stamps; they scroll
PRESENTER_MAX_CELL_SHAPE = 2  # a slide's cells at most this many times as wide as tall
ROW_ROOM = GRID_WIDTH * 4 // 3
st.subheader("1 · Each head's attention weights (one shared colour scale)")
panels_per_row = max(1, min(h, 4, ROW_ROOM // (GRID_CELL * len(labels))))
grid_cell = max(GRID_CELL, min(settings.cell_size - 8, GRID_WIDTH // (panels_per_row * len(labels))))
if settings.presenter:  # the panels' rows and their key labels on a 1280×800 projector's first screen, too
    panel_rows = -(-h // panels_per_row)
    room = PRESENTER_GRID_HEIGHT - (panel_rows - 1) * PRESENTER_PANEL_ROW_PX
    grid_cell = max(min(PRESENTER_MIN_GRID_CELL, grid_cell), min(grid_cell, room // (panel_rows * len(labels))))


def cell_width(cell: int, panels_per_row: int, value_title: str = "weight", columns: int | None = None) -> int:
    """The width of a head grid's ``cell``-px-tall cells: on a slide as wide as the slide allows, up to
    PRESENTER_MAX_CELL_SHAPE times their height, which the screen sets (two heads of an 11-token sentence were 32-px
    squares, too narrow for numbers, in two thirds of the width); on the page square."""
    if not settings.presenter:
        return cell
    across = slide_panel_width(labels, settings.font_size, panels_per_row, value_title, columns=columns)
    return max(cell, min(across, PRESENTER_MAX_CELL_SHAPE * cell))


grid_cell_width = cell_width(grid_cell, panels_per_row)


def drawn_cell(cell: int, panels_per_row: int, cells_per_panel: int, value_title: str) -> int:
    """The size a grid's ``cell``-px cells are drawn at: a grid wider than the page's column (or the slide's) is
    shrunk to it, its numbers with it. (4 heads of a 10-token sentence: 36-px cells drawn at 26 px, and their
    "0.049" at 8.6 px on a slide that promised 12 px or colours only.)"""
    natural = (panels_per_row * cells_per_panel * cell + (panels_per_row - 1) * charts.HEAD_GRID_SPACING_PX
               + charts.heatmap_fit_room(labels, settings.font_size, value_title))
    return int(cell * min(1.0, main_column_px(settings.presenter) / natural))


drawn_width = drawn_cell(grid_cell_width, panels_per_row, len(labels), "weight")
drawn_height = drawn_width * grid_cell / grid_cell_width  # (a grid shrunk to the column shrinks both alike)
grid_values = (panel_prints_values(drawn_width, settings.font_size, signed=False)
               and drawn_height / charts.TEXT_LINE_EM >= MIN_SLIDE_VALUE_PX)
grid_options = {"columns": panels_per_row, "domain": (0, 1), "cell_size": grid_cell_width, "cell_height": grid_cell,
                "font_size": settings.font_size,
                "selected": settings.head if h > 1 else None, "pick": h > 1, "show_values": grid_values}
grid = cached_chart(("head grid", trace.weights, trace.mask, tuple(labels), sorted(grid_options.items())),
                    lambda: charts.head_grid(frames.heads_frame(trace.weights, labels, labels, blocked=~trace.mask),
                                             **grid_options))
show_chart(grid, key="pick_head", on_select=on_pick("pick_head", "head_index", lambda i: {"head": i + 1}),
           description="each head's attention weights, one panel per head, one colour scale")
st.caption(" ".join(filter(None, (
    "Same colour = same weight in every head, so the panels can be compared directly.",
    "Click a head to look at it closely (outlined: the head shown below)." if h > 1 else "",
    "" if grid_values else "The cells are too small for numbers that can be read: hover a cell for its weight.",
    # (on a page: a slide's charts fill the window down to its words)
    repeated_words_note(settings.lesson.tokens, labels)
    if says_why_words_repeat(settings.config, settings.presenter) else ""))))
if settings.presenter:
    st.markdown(INTRO)
view = StageView(trace, settings.labels, settings.follow, settings.head, settings.cell_size, settings.font_size,
                 x=settings.lesson.x, projections=settings.lesson.projections, colour=settings.colour, pick=True)
if settings.presenter and h > 1:
    # On a slide the head shown and the next one side by side (one head's lines filled half the row): where two heads
    # look differs at a glance
    for column, shown in zip(st.columns(2), (settings.head, (settings.head + 1) % h)):
        with column:
            show_lines(view, head=shown, title=f"head {shown + 1} as lines, query (left) → key (right)", half=True)
else:
    show_lines(view, title=f"head {settings.head + 1} as lines, query (left) → key (right)")

st.subheader("2 · Where the heads differ: each owns a block of columns")
st.markdown(f"W_Q and W_K have h·d_k = {h}·{d_k} = {h * d_k} columns, W_V has h·d_v = {h * d_v}. "
            "Head i takes columns (i−1)·d_k + 1 to i·d_k of W_Q and W_K, its own queries and keys, and "
            "(i−1)·d_v + 1 to i·d_v of W_V, its own values.")
d_model = settings.lesson.x.shape[-1]
if settings.config.init != "identity":  # there d_k = d_model / h already
    split = (f"with d_model = {d_model} and {h} head{'s' if h > 1 else ''} that would be d_k = {d_model // h}"
             if d_model % h == 0 else f"d_model = {d_model} does not split into {h} equal heads, so such a model "
             f"would not allow {h}")
    st.caption("Here d_k is a setting of its own, so another head adds d_k columns and the heads before it keep "
               "theirs. Many models instead fix d_k = d_model / h, so that more heads are narrower ones and the "
               f"layer costs the same: {split}.")
q_shown, q_note = shown_features(trace.q)  # (h, T, d_k), at most MAX_FEATURES_SHOWN features drawn
per_row = max(1, min(h, 4, ROW_ROOM // (GRID_CELL * (q_shown.shape[-1] + 2))))
q_cell = max(GRID_CELL, min(settings.cell_size - 8, GRID_WIDTH // (per_row * (q_shown.shape[-1] + 2))))
q_cell_width = cell_width(q_cell, per_row, "feature value", columns=q_shown.shape[-1])


def q_grid():
    df = frames.heads_frame(q_shown, labels, frames.feature_labels(q_shown.shape[-1], "q"), row_name="token",
                            col_name="feature",
                            head_labels=[f"head {i + 1}: {numbered(1, d_k, prefix='q')} = Q's "
                                         f"{numbered(i * d_k + 1, (i + 1) * d_k, 'column')}"
                                         for i in range(h)])  # every panel's axis reads q1 … q_dk: its own
    return charts.head_grid(df, columns=per_row, domain=None, diverging=True, scheme="blueorange", row="token",
                            col="feature", value_title="feature value", cell_size=q_cell_width, cell_height=q_cell,
                            font_size=settings.font_size,
                            show_values=panel_prints_values(drawn_cell(q_cell_width, per_row, q_shown.shape[-1],
                                                                       "feature value"),
                                                            settings.font_size, signed=True),
                            title="Q of each head (one colour scale; rows = tokens, columns = that head's q features)")


show_chart(cached_chart(("q by head", q_shown, tuple(labels), d_k, per_row, q_cell, q_cell_width, settings.font_size,
                         settings.presenter), q_grid))
if q_note:
    st.caption(q_note)

st.subheader(f"3 · What {plain(settings.labels[settings.follow])} attends to, head by head")
note_lone_key(view, "multi_head", in_fragment=False)  # under the causal mask token 1's bars are the same in every head
# Two panels of bars side by side: half a slide's width each, or a part of the page's column
bars_room = PRESENTER_COLUMN_PX // 2 - 120 if settings.presenter else 340
bars_cell = max(min(settings.cell_size, bars_room // len(labels)), 18)


def rows_by_head():
    parts = [frames.row_frame(trace.weights[i, settings.follow], labels).assign(head=f"head {i + 1}", head_index=i)
             for i in range(h)]
    return charts.row_bars_by_head(pd.concat(parts, ignore_index=True), columns=2, font_size=settings.font_size,
                                   cell_size=bars_cell,
                                   title=f"the row of {settings.labels[settings.follow]} in each head")


show_chart(cached_chart(("rows by head", trace.weights[:, settings.follow], tuple(labels), bars_cell,
                         settings.font_size), rows_by_head))

show_stage(view, "concat", heading="4 · Concatenate the heads", on_slide=settings.presenter)
show_stage(view, "output", heading="5 · Mix them with W_O", on_slide=settings.presenter)
show_page_questions("multi-head", multi_head_questions(trace, head=settings.head))
