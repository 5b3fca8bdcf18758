"""Home: what attention is, the pipeline, and where each lesson lives."""

import streamlit as st

from attention_ui import charts
from attention_ui.checks.layer import overview_questions
from attention_ui.controls import lesson_settings, show_slide_row
from attention_ui.questions import show_page_questions
from attention_ui.text import TOY_NOTE
from attention_ui.views import (WEIGHT_TITLE, StageView, column_cell, in_slide_column, in_the_sidebar, main_column_px,
                                show_chart, token_heatmap, weights_slide_column)

GAP_PX = 32  # st.columns' "medium" gap between the words and the live chart
# Up to this many tokens the live chart sits beside the words; a longer sentence's chart takes the whole width under
# them (in half the column 27 rows were 8 px tall and their labels ran together)
BESIDE_TOKENS = 14
SLIDE_ROWS_PX = 540  # a slide's long-sentence chart: its rows within one screen (at 57-px cells 18 rows ran past it)
# On a slide the live chart takes this share of the width beside the words (at half, an 11-token sentence's weights
# printed 12 px), and the window's height less SLIDE_ROOM_PX (the menu bar, the title and the chart's heading)
SLIDE_CHART_SHARE = 0.6
SLIDE_ROOM_PX = 215
# ... and the formula beside it shrinks with a narrow window (a 1024-px projector's cut it off at the right)
SLIDE_FORMULA_STYLE = "<style>.st-key-overview_words .katex {font-size: min(1.45em, 2vw) !important;}</style>"

settings = lesson_settings("Attention, step by step")
lesson = settings.lesson
# The definition and, beside it, what it does to the sidebar's sentence: both on the first screen.
beside = len(settings.labels) <= BESIDE_TOKENS
on_slide = settings.presenter and beside
shares = (1 - SLIDE_CHART_SHARE, SLIDE_CHART_SHARE) if on_slide else (1, 1)
words, live = st.columns(shares, gap="medium") if beside else (st.container(), st.container())
words = words.container(key="overview_words")
if on_slide:
    words.html(SLIDE_FORMULA_STYLE)
words.markdown(
    "**Attention is a weighted average of values, with the weights computed from how well a query "
    "matches each key.** Every token asks a question (its *query*), every token offers an answer "
    "(its *key*) and some content (its *value*). A token's new vector (its *context vector*) is the average of "
    "the values it may see, weighted by how well its query matches each key."
)
words.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
with live:
    st.markdown("**Your sentence right now**")
    view = StageView(lesson.trace, settings.labels, settings.follow, settings.head, settings.cell_size,
                     settings.font_size, colour=settings.colour, fit=on_slide)
    title = f"attention weights (head {settings.head + 1})"
    if on_slide:  # as wide as its column and as tall as the window allows: cells wide enough for slide numbers
        column = weights_slide_column(view)
        show_slide_row("overview_live", view, [in_slide_column(token_heatmap(
            view, lesson.trace.weights[settings.head], title, weights=True, slide_row=(column,)), column)],
            SLIDE_ROOM_PX, first_screen=True)
    else:
        # Cells sized to the column less the row labels, axis title and colour bar: a long sentence's chart was drawn
        # at full cell size and shrunk into the column, its labels to 5-8 px
        room = (main_column_px(settings.presenter) - GAP_PX) / 2 if beside else main_column_px(settings.presenter)
        cell = column_cell(view, room, len(settings.labels),
                           charts.heatmap_fit_room(settings.labels, settings.font_size, WEIGHT_TITLE,
                                                   by_row=settings.colour == "row"))
        if settings.presenter:
            cell = min(cell, SLIDE_ROWS_PX // len(settings.labels))
        show_chart(token_heatmap(view, lesson.trace.weights[settings.head], title, weights=True, cell=cell))
# The chart is taller than the words: how to read it goes under the formula, beside the chart (on a slide's first
# screen too, where under the chart it was below the window)
every_row_sees = bool(lesson.trace.mask[settings.head].any(dim=-1).all())  # else a row is blocked: all zero
words.caption(
    "Row = the token that is looking (query), column = the token it looks at (key). Each row adds up to 1"
    f"{'' if every_row_sees else ', except a row whose every key is blocked, which is all zero'}. A layer "
    f"runs several such attentions side by side, its heads; this is head {settings.head + 1} of "
    f"{settings.config.num_heads} (Multi-head shows them all). The outlined row is the token the lessons follow.")
if not settings.presenter:  # a student's way in, on the first screen (under the pipeline it was below a laptop's fold)
    words.page_link("pages/start_here.py", label="New here? Start here: a path through the pages, in order",
                    icon=":material/flag:")
if settings.config.seeded_embeddings and settings.config.init == "random":
    st.info(TOY_NOTE, icon=":material/casino:")

st.subheader("The pipeline")
st.graphviz_chart(  # tight spacing, stretched: the nine boxes fill the width with legible text, also on a projector
    """
    digraph {
      rankdir=LR; bgcolor="transparent"; ranksep=0.18; nodesep=0.15; pad=0.02;
      node [shape=box, style="rounded,filled", fillcolor="#eef2ff", color="#3b5bdb", fontname="sans-serif",
            fontsize=14, margin="0.07,0.04"];
      edge [color="#555555", arrowsize=0.6];
      X [label="tokens → X"]; QKV [label="Q = XW_Q\\nK = XW_K\\nV = XW_V"]; S [label="scores\\nQKᵀ"];
      D [label="÷ √d_k"]; M [label="mask"]; A [label="softmax\\nweights A"]; C [label="context\\nA·V"];
      H [label="concat\\nheads"]; O [label="output\\n· W_O"];
      X -> QKV -> S -> D -> M -> A -> C -> H -> O;
    }
    """,
    width="stretch",
)

# On a slide the hall needs the lesson, not how to drive the app or a student's path (the lecturer has both): both
# are left out.
if not settings.presenter:
    st.subheader("How to use this app")
    st.markdown(
        f"1. Type a sentence or pick an example {in_the_sidebar()}; set d_model, d_k, d_v, the number of heads and "
        "a mask.\n"
        "2. Open **Step through** and walk through the stages with **Next ▶** and **◀ Back**; the followed token's "
        "numbers are worked out.\n"
        "3. The address bar always holds the exact view: copy it to share a state with a class.\n"
        "4. **Presenter mode** (top of every page) enlarges everything and moves the controls under **Settings**."
    )
cols = st.columns(3)
cols[0].page_link("pages/step_through.py", label="Step through the stages", icon=":material/footprint:")
cols[1].page_link("pages/multi_head.py", label="Compare the heads", icon=":material/view_module:")
cols[2].page_link("pages/masking.py", label="Play with masks", icon=":material/visibility_off:")

show_page_questions("overview", overview_questions(lesson.trace, settings.labels, follow=settings.follow,
                                                       head=settings.head))
