"""The four masks side by side with their weights; an editable custom mask; fully blocked rows."""

from dataclasses import replace

import pandas as pd
import streamlit as st

from attention_core import AttentionInputError, MASK_KINDS, causal_mask, lesson_tokens, sliding_window_mask
from attention_ui import charts, frames
from attention_ui.checks.layer import ShownMask, masking_questions
from attention_ui.controls import (DEFAULT_PAD_TO, PRESENTER_GAP_PX, cached_lesson, kept_grid, lesson_settings,
                                   real_word_vectors, set_custom_grid, show_slide_row)
from attention_ui.frames import ALLOWED, BLOCKED
from attention_ui.grid_input import GRID_ROW_PX, MASK_GRID_KEY
from attention_ui.hand import DARK_ROW_NAMES, PRESENTER_GRID_ZOOM
from attention_ui.questions import show_page_questions
from attention_ui.text import counted, plain, repeated_words_note, says_why_words_repeat
from attention_ui.views import (COLOURS_ONLY_NOTE, WEIGHT_TITLE, StageView, column_cell, head_title, in_the_sidebar,
                                main_column_px, mask_chart, numbers_table, pad_rows_note, show_chart,
                                slide_cell_value_font, slide_mask_pair, token_heatmap)

settings = lesson_settings("Masking: who may look at whom")
config = settings.config
st.markdown(
    "A mask says which keys each query may use. Blocked scores are set to −∞ before the softmax, "
    "so they get exactly zero weight and the remaining weights in the row still add up to 1 (a row with every key "
    "blocked has none left: this app gives it all-zero weights)."
)
st.latex(r"A = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right),\qquad "
         r"M_{ij} = \begin{cases} 0 & \text{may attend} \\ -\infty & \text{blocked} \end{cases}")

EXPLAIN = {
    "none": "Every token sees every token (an encoder such as BERT).",
    "causal": "Token i sees tokens 1…i only: no peeking at the future (a decoder such as GPT).",
    "padding": "Sentences in a batch are padded to one length; the [PAD] keys are blocked. The [PAD] rows still "
               "get weights (their queries see the real tokens), but nothing reads them: a model drops their output.",
    "custom": "Any pattern you like: tick the cells below.",
}

words, _ = lesson_tokens(replace(config, mask="none"))  # the sentence's own tokens, no [PAD]
T = len(words)
labels = frames.token_labels(words)
grid = kept_grid(T)
# The padding chart pads to the lesson's length if that adds a [PAD] token, else to a length that does
SHOWN_PAD_TO = max(DEFAULT_PAD_TO, T + 2)
pads_nothing = config.mask == "padding" and config.pad_to <= T
pad_to = config.pad_to if config.mask == "padding" and not pads_nothing else SHOWN_PAD_TO


def padding_note() -> str:
    """What the padding chart pads the sentence to, and why when that is not the lesson's length."""
    pads = (f"Here your {counted(T, 'token')} {'is' if T == 1 else 'are'} padded to {pad_to}: "
            f"{counted(pad_to - T, '[PAD] token')}.")
    if config.mask != "padding":
        return (f"{pads} (This example picks that length itself. To choose it, pick the mask “padding” "
                f"{in_the_sidebar()}: “Pad the sentence to … tokens” appears under it.)")
    return pads


# On a slide, what a window's height keeps besides a mask and its weights: the page's menu bar and the line that
# explains the mask, so that the line and its charts fill one screen
MASK_PAIR_ROOM_PX = 210


def show_slide_pair(kind: str, view: StageView, mask_title: str, title: str) -> None:
    """On a slide: the mask and its weights (``views.slide_mask_pair``) as wide as the window and as tall as it
    allows (their numbers fitted to the cells the browser draws: with cells fixed for a 1280-px window they printed
    12 px at 1920 px too, and 9.7 px at 1024 px)."""
    slide_view = replace(view, fit=True)
    drawn = slide_mask_pair(slide_view, mask_title, view.trace.weights[view.head], title, weights=True)
    show_slide_row(f"mask_pair_{kind}", slide_view, drawn, MASK_PAIR_ROOM_PX)


def level_cell(view: StageView, width_px: float) -> int:
    """One cell size for a mask chart and its weights chart, each ``width_px`` wide, so that their rows are level."""
    return min(column_cell(view, width_px, len(view.labels),
                           charts.fit_room_px(view.labels, settings.font_size, ["mask", ALLOWED, BLOCKED])),
               column_cell(view, width_px, len(view.labels),
                           charts.heatmap_fit_room(view.labels, settings.font_size, WEIGHT_TITLE)))


st.subheader("The four masks and what they do to the weights")
shown = {}  # mask kind -> ShownMask, for the questions
custom_lesson = None  # the lesson with the grid below as its mask, whatever the sidebar's mask
for kind in MASK_KINDS:
    variant = replace(config, mask=kind, pad_to=pad_to, custom_mask=grid if kind == "custom" else None)
    try:
        lesson = cached_lesson(variant, real_word_vectors(variant))
    except AttentionInputError as err:
        st.warning(f"{kind.capitalize()} mask: {err}")
        continue
    variant_labels = frames.token_labels(lesson.tokens)
    if kind == "custom":
        custom_lesson = lesson
    mask = lesson.trace.mask[settings.head]
    if kind == "padding" and pads_nothing:  # the lesson's padding mask blocks nothing: say so, and show one that does
        st.info(f"Your sentence already has {counted(T, 'token')}, so padding it to {config.pad_to} pads nothing "
                f"and the padding mask blocks nothing: pad to {T + 1} or more ({in_the_sidebar()}) to see [PAD] "
                f"keys. The padding charts below pad it to {pad_to} to show them.", icon=":material/info:")
    said = EXPLAIN[kind] + (f" {padding_note()}" if kind == "padding" else "")
    if kind == "custom" and grid is None:  # (a slide's custom pair looked exactly like "none", with nothing said)
        said += (" Until a cell is changed it allows everything, as “none” does"
                 + (", so its pair would repeat the one above" if settings.presenter else "")
                 + "; “Start from a window” below gives it a pattern of its own.")
    st.markdown(f"**{kind.capitalize()}**: {said}")
    # the followed token (a row of the sentence; [PAD] rows come after it) is outlined as on the rest of the page
    follow = min(settings.follow, len(variant_labels) - 1)
    shown[kind] = ShownMask(variant_labels, mask, follow)
    view = StageView(lesson.trace, variant_labels, follow, settings.head, settings.cell_size - 6, settings.font_size)
    if settings.presenter:
        if kind != "custom" or grid is not None:  # (an untouched grid's pair repeats "none": nothing new to see)
            show_slide_pair(kind, view, f"mask: {kind}", f"weights with {kind} mask{head_title(view)}")
        continue
    # One cell size for the two, so their rows are level, each drawn at its own size in its half of the row (with a
    # long sentence they were drawn wider and shrunk, the ✓ marks to 8 px)
    cell = level_cell(view, (main_column_px(False) - PRESENTER_GAP_PX) / 2)
    left, right = st.columns(2)
    with left:
        show_chart(mask_chart(mask, variant_labels, variant_labels, title=f"mask: {kind}", cell_size=cell,
                              font_size=settings.font_size))
    weights_chart = token_heatmap(view, lesson.trace.weights[settings.head],
                                  f"weights with {kind} mask{head_title(view)}", weights=True, cell=cell)
    with right:
        show_chart(weights_chart)
    if charts.colours_only(weights_chart):  # (a padded or long sentence): the numbers a student checks, at hand
        st.caption(COLOURS_ONLY_NOTE)
        numbers_table(lesson.trace.weights[settings.head], variant_labels, variant_labels, key=f"numbers_{kind}",
                      caption=f"All the numbers: weights with {kind} mask{head_title(view)}")
    if kind == "none" and says_why_words_repeat(config, settings.presenter):  # (equal rows looked like a bug)
        twins = repeated_words_note(lesson.tokens, variant_labels, ending=(
            "so a row that may see both gives them the same weight (with no mask, their own rows are the same too)"))
        if twins:
            st.caption(twins)
    if kind == "padding":  # why the [PAD] rows are even (1/7 on every real key; the words above say why weighted)
        pad_rows_note(replace(view, x=lesson.x, mask_choice="padding"), why_weighted=False)

st.subheader("Edit your own mask")
EDITOR_ROW_PX = GRID_ROW_PX  # a data editor's row (and header) height
EDITOR_COLUMN_PX = 46  # a tick box and a two-digit number
EDITOR_CHAR_PX, EDITOR_HEADER_PX = 8, 36  # a header's character, and its edit icon and padding
EDITOR_BESIDE_SHARE = 0.55  # the most of a slide's width the zoomed grid takes with its weights beside it
current = grid or tuple(tuple(True for _ in range(T)) for _ in range(T))
st.markdown("Tick a cell to let the row's token (query) attend to the column's token (key). "
            "Untick a whole row to see what a **fully blocked row** does.")
WINDOW = 3  # "Start from a window": each token sees itself and the two before it (the Shared keys and windows page)
EDITOR_VERSION = "mask_editor_version"  # session key: bumped when a button (not the editor) sets the grid


def start_from(grid) -> None:
    """A button's new grid: the editor is made again with it (its own edits, kept in its state, are dropped)."""
    set_custom_grid(grid)
    st.session_state[EDITOR_VERSION] = st.session_state.get(EDITOR_VERSION, 0) + 1
    st.rerun()


start = st.columns(4)
if start[0].button("Start from causal", width="stretch"):
    start_from(causal_mask(T).tolist())
if start[1].button("Start from a window", width="stretch",
                   help=f"Each token may attend to itself and the {WINDOW - 1} tokens before it: the sliding window "
                        "of Mistral-style models (the Shared keys and windows page)."):
    start_from(sliding_window_mask(T, WINDOW).tolist())
if start[2].button("Allow everything", width="stretch"):
    start_from([[True] * T for _ in range(T)])
if start[3].button("Block the followed row", width="stretch",
                   help="Untick every key of the followed token's row: a fully blocked row."):
    blocked = [list(row) for row in current]
    blocked[min(settings.follow, T - 1)] = [False] * T
    start_from(blocked)

table = pd.DataFrame([list(row) for row in current], index=labels, columns=labels)
st.space(28)  # the editor's toolbar, shown on hover above its top right corner, stays off the buttons
# Columns headed by their tokens where the grid still fits the page (a slide's grid is zoomed), else by the key's
# number only (its token on hover): with the tokens' words the grid of an 11-token sentence was wider than the page
# and its last keys hid behind a scroll bar; with numbers only a room could not tell which key was which.
# Every row shown.
worded = [max(EDITOR_COLUMN_PX, EDITOR_CHAR_PX * len(label) + EDITOR_HEADER_PX) for label in labels]
room = main_column_px(settings.presenter) / (PRESENTER_GRID_ZOOM if settings.presenter else 1)
row_names_px = EDITOR_CHAR_PX * max(map(len, labels)) + EDITOR_HEADER_PX
# On a slide the weights stand beside the grid where its numbered columns leave them room, so that a tick's effect is
# on the screen with it (under a zoomed grid of 7 tokens they were a screen below, and a tick showed nothing)
numbered_share = (row_names_px + EDITOR_COLUMN_PX * T) / room
beside = settings.presenter and numbered_share <= EDITOR_BESIDE_SHARE
by_word = row_names_px + sum(worded) <= room and not beside
# The row names in the text's colour where the grid fits the page; one that scrolls sideways keeps them pinned
# (in Streamlit's faded grey) so that they stay in view
dark_row_names = DARK_ROW_NAMES if by_word or row_names_px + EDITOR_COLUMN_PX * T <= room else {}
# (one key while the grid is changed in the editor itself: made again on each change, it lost the keyboard's focus
# and selected cell, and a keyboard user took 5 Tabs and the arrows from the top-left cell for every next cell)
if beside:
    grid_box, weights_box = st.columns([numbered_share, 1 - numbered_share], gap="medium")
else:
    grid_box = weights_box = st.container()
with grid_box:
    edited = st.data_editor(table, key=f"{MASK_GRID_KEY}{T}_{st.session_state.get(EDITOR_VERSION, 0)}",
                            width="content", height=EDITOR_ROW_PX * (T + 1) + 3,
                            column_config={c: st.column_config.CheckboxColumn(
                                c if by_word else str(j), default=False, width=px if by_word else EDITOR_COLUMN_PX,
                                help=f"key {c}") for j, (c, px) in enumerate(zip(labels, worded), start=1)}
                            | dark_row_names)
    st.caption("Rows are the queries, columns the keys" + (
        "." if by_word else ", numbered as the rows: the weights beside name them." if beside
        else " (numbered as the rows; hover a column's number for its token)."))
    if edited.isna().to_numpy().any():
        st.error("A cell of the mask is empty: tick it or leave it unticked.")
    elif not edited.equals(table):
        set_custom_grid(edited.astype(bool).to_numpy().tolist())
        st.rerun()


def use_custom_mask() -> None:
    st.session_state["mask"] = "custom"  # the sidebar's mask (read on the run this click starts)


def show_grid_weights(trace, title: str) -> None:
    """The weights of ``trace``, a lesson masked by the grid above, drawn under the editor (``title`` and its head)."""
    view = StageView(trace, labels, min(settings.follow, T - 1), settings.head, settings.cell_size, settings.font_size)
    cell = value_font = None
    if beside:  # rows as tall as the zoomed grid's, so that each row of weights stands beside its row of ticks
        share = (1 - numbered_share) * main_column_px(True) / view.width_budget
        cell = min(view.fit_cell(T + 3, share), int(EDITOR_ROW_PX * PRESENTER_GRID_ZOOM))
        # its numbers as large as its cells hold them on a slide (a page's rule printed 16 px in 49-px cells)
        value_font = slide_cell_value_font(cell, settings.font_size, signed=False, row_px=cell, largest=True)
    show_chart(token_heatmap(view, trace.weights[settings.head], f"{title}{head_title(view)}", weights=True,
                             cell=cell, value_font_px=value_font))


with weights_box:
    if config.mask != "custom":
        if custom_lesson is not None:  # what a tick or a button above just did, under the grid (and as "custom" above)
            show_grid_weights(custom_lesson.trace, "weights with your grid")
        if grid is not None:
            st.info(f"These are your grid's weights (the “custom” pair above shows them too), but the lesson's mask is "
                    f"still “{config.mask}”, so the other pages do not use your grid yet. Use it as the mask (the "
                    "lesson's mask becomes “custom”) to step through it on every page.")
            st.button("Use my grid as the mask", on_click=use_custom_mask, icon=":material/grid_on:")
    else:
        trace = settings.lesson.trace
        blocked_rows = [labels[i] for i in range(T) if not bool(trace.mask[settings.head, i].any())]
        if blocked_rows:
            one = len(blocked_rows) == 1
            st.warning(f"{counted(len(blocked_rows), 'row')} {'is' if one else 'are'} fully blocked "
                       f"({', '.join(plain(label) for label in blocked_rows)}). "
                       f"{'Its' if one else 'Their'} weights are all zero and {'its' if one else 'their'} context "
                       f"{'vector is' if one else 'vectors are'} zero: the token{'' if one else 's'} "
                       f"take{'s' if one else ''} in nothing from the others. In the chart below such a row is all "
                       "grey “×” cells, as every blocked key is: each of its weights is exactly 0.")
        show_grid_weights(trace, "weights with your mask")

show_page_questions("masks", masking_questions(shown))
