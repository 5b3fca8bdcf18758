"""A real pretrained model's attention: its tokens, a layer × head overview, one head up close."""

import pandas as pd
import streamlit as st

from attention_ui import charts, frames
from attention_ui.checks.real import real_model_questions
from attention_ui.controls import CHART_SIDEWAYS_CUE, sentence_settings
from attention_ui.models import note_follow_shown, opening_head_note, real_model_or_stop
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_head_grid, cached_matrix_chart, cached_spec
from attention_ui.text import hidden_share_note, plain
from attention_ui.views import (BARS_FRAME_PX, PAGE_WIDTH_PX, PRESENTER_COLUMN_PX, WIDEST_SLIDE_CELL_PX,
                                main_column_px, on_pick, show_chart, slide_bar_px, slide_cell_value_font)

GRID_SPACING_PX = 6  # the gap between two panels of the heads grid
GRID_FRAME_PX = 115  # what the heads grid draws beside its panels at the page's font: "query" and the colour bar

SLIDE_ABOVE_GRID_PX = 190  # a slide's top bar and title above the heads grid, and a margin below it

settings = sentence_settings("A real model's attention")
INTRO = ("The same attention you stepped through runs inside every layer of a real transformer: here a small "
         "pretrained model reads your sentence. Each small square of the heads grid is one head's weights (rows: the "
         "token looking, columns: the token looked at). A BERT-style model such as MiniLM adds marker tokens of its "
         "own, [CLS] and [SEP] (section 2); GPT-2 adds none.")
PICKERS = "Model, layer, head and the token to follow"
# The page's grid of heads keeps its size; where the column is narrower (a laptop with the sidebar open) it
# scrolls sideways and says so over its top right corner, as the page's wide tables do
MODEL_GRID_CUE = """<style>
.st-key-model_grid_page {position: relative; timeline-scope: --heads-sideways;}
.st-key-model_grid_page [data-testid='stVegaLiteChart'] {scroll-timeline: --heads-sideways x;}
.st-key-model_grid_page::after {CHART_SIDEWAYS_CUE animation-timeline: --heads-sideways;}
</style>""".replace("CHART_SIDEWAYS_CUE", CHART_SIDEWAYS_CUE)
if settings.presenter:  # the heads grid first, on the first screen; the pickers under it (a click picks a head)
    slide = st.container()
    pick = real_model_or_stop(settings.sentence, st.expander(PICKERS), slide=slide, place_label=PICKERS)
else:
    st.markdown(INTRO)
    slide = st.container()
    pick = real_model_or_stop(settings.sentence, slide)
run = pick.run
keep = pick.shown
all_labels = frames.token_labels(run.tokens)
labels = frames.AxisLabels(all_labels[i] for i in keep)
attentions = run.attentions[:, :, keep][:, :, :, keep]  # (L, h, T', T'): the shown tokens only

# The panels of a layer fit the main column beside the sidebar (PAGE_WIDTH_PX, with GRID_FRAME_PX for the row
# title and the colour bar): 12 panels are 47 px wide, so a long sentence gets cells under 2 px. The browser draws a
# grid this large on a canvas, which does not shrink to the page as an SVG does (and a canvas shrunk by the page's
# style would take a click for the head beside the one under the pointer). A slide's grid is one view that Vega
# sizes to the main column (at most PRESENTER_COLUMN_PX wide, the column at 1280 px): on a 1024-px window the
# grid of panels drawn 84 px wide ran 200 px past it.
per_layer = pick.model.num_heads
panel = (PAGE_WIDTH_PX - GRID_FRAME_PX - GRID_SPACING_PX * (per_layer - 1)) / per_layer
cell = min(12, panel / max(len(keep), 1))
selected = pick.layer * per_layer + pick.head
head_labels = [f"L{i // per_layer + 1} H{i % per_layer + 1}" for i in range(pick.model.num_layers * per_layer)]
font_size = 16 if settings.presenter else 11
spec = cached_head_grid(attentions.reshape(-1, len(keep), len(keep)), labels, head_labels,
                        columns=per_layer, domain=(0, 1), cell_size=cell, font_size=font_size,
                        axes=False, spacing=GRID_SPACING_PX,
                        title="layer (row) × head (column), one colour scale; click a head to look at it",
                        selected=selected, pick=True, fit=settings.presenter)
on_head = on_pick("pick_model_head", "head_index",
                  lambda i: {"layer": i // per_layer + 1, "model_head": i % per_layer + 1})
with slide:
    if len(keep) < run.num_tokens:
        st.info("Special tokens are hidden from the charts, but the model still gives them weight: the visible "
                "weights in a row now add up to less than 1 (often much less, as many heads rest on [CLS] or [SEP]).")
    if settings.presenter:  # the grid follows the title (its panels are named L1 H1 … L6 H12)
        width, height = charts.fitted_grid_size(len(head_labels), per_layer, PRESENTER_COLUMN_PX, font_size)
        fits_window = f"calc((100vh - {SLIDE_ABOVE_GRID_PX}px) * {width / height:.4f})"  # its height within the window
        with st.container(key="model_grid"):  # as wide as the column allows, as tall as square panels need
            st.html(f"<style>.st-key-model_grid [data-testid='stVegaLiteChart'] {{height: auto !important; max-width: "
                    f"min(100%, {fits_window}); aspect-ratio: {width:.0f} / {height:.0f};}}</style>")
            show_chart(spec, key="pick_model_head", on_select=on_head, fit=True)
    else:
        st.subheader(f"All {pick.model.num_layers} layers × {pick.model.num_heads} heads")
        with st.container(key="model_grid_page"):  # (it keeps its size: in a narrower column it scrolls, and says so)
            st.html(MODEL_GRID_CUE)
            show_chart(spec, key="pick_model_head", on_select=on_head)
    markers = "[CLS]/[SEP]" if any(run.is_special) else "the first token"  # (GPT-2's tokenizer adds no markers)
    st.caption("Each square's rows and columns are the tokens in order (hover for the pair and the weight); the "
               "outlined one is shown up close below. Look for patterns: heads that attend to the previous or next "
               f"token, to {markers}, or to the same word.")
    if settings.presenter:
        st.markdown(INTRO)


# The head up close: cells (and bars) as large as the page's usual ones, or as fit the column beside the labels and
# colour bar, and no smaller than MIN_CLOSE_UP_CELL (a token label in the page's font still fits a row). A sentence
# of 32 pieces drew 44-px cells, 1,400 px wide, and the page shrank the chart to its column, labels and all, to 5-6 px.
MIN_CLOSE_UP_CELL = 16
# On a slide its rows take at most this many pixels (drawn 1.25× from 1600 px, 1.5× from 1920): brought under the menu
# bar by the clicker, the close-up with its heading, labels and key axis fits 1280 × 800, 1600 × 900 and 1920 × 1080
# (its 64-px rows ran 44 px past the bottom of a 1280 × 800 window, and 118 px past 1920 × 1080).
SLIDE_CLOSE_UP_ROWS_PX = 460


# The heads grid leads the page unnumbered (a slide shows it without its heading, right under the title), so the
# sections count from 1 after it alike on a page and on a slide: a lecturer's "section 2" is the students' too
st.subheader(f"1 · Layer {pick.layer + 1}, head {pick.head + 1} up close")
if opened_note := opening_head_note(pick, slide=settings.presenter):
    st.caption(opened_note)
weights = attentions[pick.layer, pick.head]
follow_row = keep.index(pick.shown_follow) if pick.shown_follow in keep else None  # its row among the shown tokens
note_follow_shown(pick)
column = main_column_px(settings.presenter)
close_cell = max(MIN_CLOSE_UP_CELL, min(settings.cell_size, int(
    (column - charts.heatmap_fit_room(labels, settings.font_size, "weight")) // max(len(keep), 1))))
close_width, close_font = close_cell, None  # a page's cells are square, their numbers at the page's size
if settings.presenter:
    # On a slide the rows fit the window, and the cells are as wide as the column leaves them (up to a slide's
    # widest cell), their numbers as large as the row and the width allow: square 32-px cells of a 14-token sentence
    # printed 10-px numbers beside half a slide of empty width, and 60-px cells of 9 tokens left half of it empty.
    close_cell = max(MIN_CLOSE_UP_CELL, min(close_cell, SLIDE_CLOSE_UP_ROWS_PX // max(len(keep), 1)))
    close_width = max(close_cell, min(WIDEST_SLIDE_CELL_PX, int(
        (column - charts.heatmap_fit_room(labels, settings.font_size, "weight")) // max(len(keep), 1))))
    close_font = slide_cell_value_font(close_width, settings.font_size, signed=False, row_px=close_cell,
                                       largest=True)
readable = close_font is not None or not settings.presenter
close_spec = cached_matrix_chart(charts.heatmap, weights, labels, labels,
                                 title=f"layer {pick.layer + 1}, head {pick.head + 1}", domain=(0, 1),
                                 value_title="weight", cell_size=close_cell, font_size=settings.font_size,
                                 show_values=len(keep) <= 14 and readable, value_font_px=close_font,
                                 follow_row=follow_row, pick=True)
# a click on a row follows its token, as on the step-through's charts (the outline looked clickable, and was not)
show_chart({**close_spec, "width": len(keep) * close_width} if close_width != close_cell else close_spec,
           key="pick_model_token", on_select=on_pick("pick_model_token", "row_index", lambda row: {"piece": keep[row]}))
if follow_row is not None and not settings.presenter:  # (a slide's close-up fits the window down to its bars)
    st.caption(f"Outlined: the row of {plain(labels[follow_row])}, the token followed; click a row to follow another.")
if follow_row is not None:
    row = frames.row_frame(weights[follow_row], labels)
    bar = slide_bar_px(len(keep)) if settings.presenter else max(MIN_CLOSE_UP_CELL, min(
        max(settings.cell_size, 26), (column - BARS_FRAME_PX) // max(len(keep), 1)))
    show_chart(cached_spec(charts.row_bars, row, title=f"what {labels[follow_row]} attends to",
                           cell_size=bar, font_size=settings.font_size))
    if note := hidden_share_note(plain(labels[follow_row]), 1.0 - float(weights[follow_row].sum())):
        st.caption(note)  # bars near 0 with nothing to say where the weight went
else:
    st.info("Every token of this sentence is a special token, and they are hidden now.")
st.page_link("pages/inside_real_head.py", label="See this head computed stage by stage",
             icon=":material/arrow_forward:")

st.subheader("2 · The sentence as the model's tokenizer sees it")
st.markdown("Real tokenizers split rare words into **sub-word pieces** (BERT marks a continuation with “##”, "
            "GPT-2 marks a leading space with “Ġ”, shown here as “␣”) and add **special tokens** such as [CLS] "
            "and [SEP].")
# One column per token (position 1, 2, …): the table is two rows tall.
shown_pieces = [plain(p) for p in run.tokens] if settings.presenter else list(run.tokens)
pieces = pd.DataFrame([shown_pieces, ["yes" if s else "" for s in run.is_special]], index=["piece", "special token"],
                      columns=[str(p) for p in range(1, run.num_tokens + 1)])
if settings.presenter:  # HTML, which the slide's style enlarges (a dataframe's canvas keeps the page's small text)
    st.table(pieces, width="content")
else:
    st.dataframe(pieces, width="content")
if "[UNK]" in run.tokens:
    st.caption("[UNK] stands for a piece the tokenizer has no entry for (an emoji, say): the model sees one "
               "“unknown” token there, whatever the character was.")

from attention_ui.contributions import show_value_contributions  # noqa: E402
from attention_ui.summaries import show_model_summaries  # noqa: E402

show_model_summaries(pick, settings, first_section=3)
show_value_contributions(pick, settings, sentence=settings.sentence, section=6)
show_page_questions("real-model", real_model_questions(num_tokens=run.num_tokens, labels=labels, weights=weights,
                                                       layer=pick.layer, head=pick.head, follow=follow_row,
                                                       causal=pick.model.causal))
