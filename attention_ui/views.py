"""Drawing blocks shared by the pages: one record per attention stage.

A page builds a ``StageView`` (the trace plus labels and view options) and calls ``show_stage(view, key)``
(a page of its own) or ``show_slide(view, key)`` (presenter mode: title, formula and the main charts fill
one screen). The same blocks draw the toy lesson and a real model's head.

Each stage is one ``StageRecord``: its title, words and formula (from ``text.STAGES``), the main charts,
extra material below them, and the followed token's worked numbers (``worked``).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import cache
from typing import Callable

import pandas as pd
import streamlit as st
import torch
from streamlit import dataframe_util

from attention_core import MAX_D_K, PAD_TOKEN, AttentionTrace, Projections

from . import charts, frames, worked
from .render import cached_chart, cached_matrix_chart, cached_spec, cached_value, show_chart
from .text import (EMBED_WORDS_REAL, OUTPUT_WITH_BIAS, QKV_BIASES_WORDS, QKV_WITH_BIASES, STAGES, Stage,
                   counted, hidden_share_note, identity_qkv_more, numbered, plain, real_qkv_more)
from .url_state import BOUND, linked_flag

PAGE_CELL, PAGE_FONT = 44, 13
PRESENTER_CELL, PRESENTER_FONT = 64, 20
"""A lesson's cell size and font size in pixels: on a page beside the sidebar, and in presenter mode. A page's
cell of 44 px holds a weight such as 0.073 at 12 px (at 34 px it was printed at 9 px)."""
PAGE_WIDTH_PX = 748
"""What a full-width chart may take in the main column beside the sidebar on a 1280-px-wide window, its labels
and legend included."""
PRESENTER_COLUMN_PX = 1232
"""The main column's width in presenter mode on a 1280-px-wide window (``controls.PRESENTER_STYLE``'s 1.5rem
padding on each side, no sidebar): what a chart drawn at its own size may take before the page shrinks it (and
its text) to fit."""


def presenting() -> bool:
    """Whether presenter mode is on (also on the first run of a link that asks for it)."""
    return linked_flag("presenter")


def in_the_sidebar() -> str:
    """Where the page sends a person to change a setting (presenter mode hides the sidebar: its controls are under
    the Settings menu at the top)."""
    return "under Settings at the top" if presenting() else "in the sidebar"


SLIDE_CELL = 60
"""The nominal cell size of a slide's charts (they stretch to the window; this sets label angles and fonts)."""

MAX_FEATURES_SHOWN = 32
"""Widest feature axis drawn as a heatmap; wider matrices show their first columns."""

UNSCALED_KEY = "unscaled"
"""Session key of the stage-4 toggle that adds the softmax without ÷√d_k."""

WORKED_FIRST_KEY = "worked_first"
"""Session and link key of presenter mode's switch "Page Down: worked numbers, then the next stage". When it is on, a
slide's worked numbers sit in a container of key ``WORKED_FIRST_KEY + "_numbers"``, which the clicker's keys look
for (``controls.CLICKER_KEYS_JS``)."""

FOLLOW_KEY = "token"
"""Session key of the followed query token (0-based); clicking a chart's row sets it."""
RERUN_PAGE = "_rerun_page"
"""Session flag: a click inside the step-through's stage (which reruns alone) changed a setting that the sidebar
and the lesson show, so the whole page runs again."""

__all__ = ["MAX_FEATURES_SHOWN", "MIN_SIDE_BY_SIDE_CELL", "SlideColumn", "StageRecord", "StageView", "STAGE_RECORDS",
           "column_cell", "in_slide_column", "slide_columns", "slide_mask_pair", "slide_token_pair",
           "feature_heatmap", "follow_token", "in_the_sidebar", "lesson_view", "lines_spec", "main_column_px",
           "mask_chart", "mean_row_peak", "numbers_table", "on_pick", "only_tokens", "prebuild_stages",
           "prints_values", "raise_d_k", "shared_domain", "shared_scale_cell", "show_chart", "show_lines", "show_slide",
           "slide_bar_px", "show_stage", "shown_features", "side_by_side", "softmax_row_spec", "stacked_slide_cell",
           "stage_header", "token_heatmap", "panel_prints_values", "slide_panel_width", "weights_slide_column",
           "presenter_charts_zoom_style",
           "GENERATION_CACHES_KEY"]


@dataclass(frozen=True)
class StageView:
    """Everything a stage block draws. Shapes: x (T, d_model); trace as in AttentionTrace.

    ``colour`` "fixed" puts every weight on 0..1, "row" colours each row on its own range; ``fit`` sizes the
    main charts to the screen (presenter mode); ``pick`` lets a click on a row follow that token;
    ``unscaled`` (h, T, S): softmax weights without ÷√d_k, shown beside the scaled ones at stage 4;
    ``mask_choice`` the lesson's mask ("none", "causal", "padding", "custom"), None for a model's own mask;
    ``stacked``: a stage's main charts are drawn one under another, so each may take the whole width;
    ``embed_words`` and ``embed_more``: what X is, for a real model's layer (``Stage.words`` and ``Stage.more``);
    ``hidden_tokens``: how many of the sequence's tokens the trace leaves out (a real model's special tokens);
    ``identity``: the lesson's projections are “Q = K = V = X”, so d_k is d_model / h and has no setting."""

    trace: AttentionTrace
    labels: list[str]
    follow: int
    head: int
    cell_size: int = 34
    font_size: int = 13
    x: torch.Tensor | None = None
    projections: Projections | None = None
    key_labels: list[str] | None = None
    embed_words: str | None = None
    embed_more: str = ""
    colour: str = "fixed"
    fit: bool = False
    pick: bool = False
    seeded: bool = False
    unscaled: torch.Tensor | None = None
    mask_choice: str | None = None
    stacked: bool = False
    hidden_tokens: int = 0
    identity: bool = False  # the projections are “Q = K = V = X”: d_k = d_model / h, not a setting of its own
    asked: tuple[int, int] | None = None
    """The (row, column) of the stage's main chart that an open Check yourself question asks for, unanswered: that
    cell prints ``charts.ASKED_MARK`` (its number was there to copy)."""

    @property
    def width_budget(self) -> int:
        """Pixels a full-width chart may take: the main column beside the sidebar (PAGE_WIDTH_PX), or in presenter
        mode (its larger font) 22 of its cells."""
        return self.cell_size * 22 if self.font_size >= PRESENTER_FONT else PAGE_WIDTH_PX

    def fit_cell(self, columns: int, share: float = 1.0) -> int:
        """A cell size that fits ``columns`` cells into ``share`` of the width budget (all of it when stacked)."""
        share = 1.0 if self.stacked else share
        return max(8, min(self.cell_size, int(self.width_budget * share) // max(columns, 1)))

    @property
    def keys(self) -> list[str]:
        return self.labels if self.key_labels is None else self.key_labels

    @property
    def follow_label(self) -> str:
        return self.labels[self.follow]

    @property
    def blocked(self) -> torch.Tensor:
        """(T, S) bool, True where this head's query may not attend to the key."""
        return ~self.trace.mask[self.head]


@dataclass(frozen=True)
class StageRecord:
    """One stage: words and formula, the main charts (side by side; a slide shows only these), extra material
    below them, and the followed token's worked numbers."""

    stage: Stage
    charts: Callable[[StageView], list]
    worked: Callable[[StageView], worked.Worked]
    extra: Callable[[StageView], None] | None = None

    @property
    def key(self) -> str:
        return self.stage.key


def stage_header(stage: Stage, heading: str | None = None, *, on_slide: bool = False) -> None:
    """The stage's title, words and formula; ``on_slide``: without the words a slide leaves to the lecturer."""
    st.subheader(heading or stage.title)
    st.markdown(f"{stage.words} {stage.more}" if stage.more and not on_slide else stage.words)
    st.latex(stage.latex)


def record(key: str) -> StageRecord:
    return next(r for r in STAGE_RECORDS if r.key == key)


def _stage_of(view: StageView, key: str) -> Stage:
    """The stage as this view shows it: a real model's own words for X, and its biases in the formulas."""
    stage = record(key).stage
    projections = view.projections
    if key == "embed" and view.embed_words:
        stage = replace(stage, words=view.embed_words, more=view.embed_more)
    if key == "qkv" and view.embed_words:  # a real model's layer: its d_k is the model's, not a setting
        t = view.trace
        d_model = view.x.shape[-1] if view.x is not None else t.num_heads * t.d_k
        stage = replace(stage, more=real_qkv_more(d_model, t.num_heads, t.d_k))
    elif key == "qkv" and view.identity:
        stage = replace(stage, more=identity_qkv_more(view.trace.num_heads * view.trace.d_k, view.trace.num_heads,
                                                      view.trace.d_k))
    if key == "qkv" and projections is not None and projections.b_q is not None:  # (the formula shows them)
        stage = replace(stage, latex=QKV_WITH_BIASES, more=f"{QKV_BIASES_WORDS} {stage.more}".strip())
    elif key == "output" and projections is not None and projections.b_o is not None:
        stage = replace(stage, latex=OUTPUT_WITH_BIAS)
    return stage


SLIDE_ROW_PX = 24
"""Smallest row of a slide's chart, in pixels: a token label in the slide's font (PRESENTER_FONT) fits in it.
A slide whose rows would be smaller on this window grows taller than the window and scrolls."""
SLIDE_FRAME_PX = 170
"""A slide chart's height besides its rows: title, the key axis' (rotated) labels and its title."""
SECTION_CHART_ROOM_PX = 330
"""A stage shown as a section of a slide (``show_stage(on_slide=True)``): its charts take the window's height less
this, which the menu bar, the section's heading, its short words and its formula take once a clicker's press has
brought the heading up."""


def show_stage(view: StageView, key: str, heading: str | None = None, *, worked_view: StageView | None = None,
               on_slide: bool = False) -> None:
    """Draw one stage: words, formula, charts, extras and the followed token's worked numbers.
    ``heading`` replaces the stage's numbered title (for pages with their own numbering); ``worked_view`` (default
    ``view``) is the view the worked numbers come from, e.g. every token where the charts leave some out;
    ``on_slide``: a section of a slide, with a slide's short words (``Stage.more`` is the lecturer's to say)."""
    rec = record(key)
    stage_header(_stage_of(view, key), heading, on_slide=on_slide)
    if key in LONE_KEY_STAGES:  # before the charts: under them it was the third screen down
        note_lone_key(worked_view or view, key)
    if on_slide:  # as wide as the slide and as tall as its window allows, as a stage's own slide draws them
        section = f"section_{key}"
        with st.container(key=section):
            st.html(f"<style>.st-key-{section} [data-testid='stVegaLiteChart'] {{height: calc(100vh - "
                    f"{SECTION_CHART_ROOM_PX}px) !important; min-height: "
                    f"{len(view.labels) * SLIDE_ROW_PX + SLIDE_FRAME_PX}px;}}</style>")
            colours_only = _draw_charts(replace(view, fit=True), rec, columns_key=f"{section}_columns")
    else:
        colours_only = _draw_charts(view, rec)
    if not on_slide:  # (a slide's charts fill the window down to its words: the lecturer says it)
        st.caption(follow_note(view))
        if key in ROW_COLOUR_STAGES and (spread := row_colour_note(view)):
            st.caption(spread)
    if colours_only:
        st.caption(COLOURS_ONLY_NOTE)
    if rec.extra is not None:
        rec.extra(view)
    show_worked(worked_view or view, rec, lone_key_note=False)


def show_slide(view: StageView, key: str, *, worked_view: StageView | None = None) -> None:
    """Presenter mode: the formula and the main charts sized to the screen, then words and worked numbers
    (of ``worked_view``, default ``view``)."""
    rec = record(key)
    if key == "scaled" and view.unscaled is not None:  # asked for on this slide: the two softmaxes take its place
        rec = replace(rec, charts=_unscaled_charts)
    stage = _stage_of(view, key)
    moved_on, moved = st.session_state.pop(SLIDE_MOVE_NOTE_KEY, (None, []))
    with st.container(key="slide_formula"):  # one height on every stage: the charts under it stay put
        if key == "masked" and _mask_toggle(view):  # beside the formula: under the words it was off the screen
            formula, toggle = st.columns([3, 1], vertical_alignment="center")
            formula.latex(stage.latex)
            with toggle:
                _mask_toggle_button(view)
                for note in moved if moved_on == key else ():
                    st.caption(note)
        else:
            st.latex(stage.latex)
    with st.container(key="slide"), st.container(key=f"slide_rows_{len(view.labels)}"):  # rows stay readable
        colours_only = _draw_charts(replace(view, fit=True), rec)
    with st.container(key="slide_words"):  # the slide's charts leave room for these on the screen
        st.markdown(stage.words)
        if colours_only:
            st.caption(COLOURS_ONLY_NOTE)
        if key in LONE_KEY_STAGES:
            note_lone_key(view, key, on_slide=True)
    # what a clicker's Page Down brings up before the next stage, with the worked-numbers switch on: the extras too
    # (stage 6's lines and bars, under the charts, were skipped on the way to its numbers)
    numbers = st.container(key=WORKED_FIRST_KEY + "_numbers") if linked_flag(WORKED_FIRST_KEY) else nullcontext()
    with numbers:
        if rec.extra is not None:
            rec.extra(view)
        show_worked(worked_view or view, rec, lone_key_note=False)


def only_tokens(trace: AttentionTrace, keep: list[int]) -> AttentionTrace:
    """The trace's rows and columns of the tokens ``keep`` (self-attention: queries and keys are the same tokens)
    only, to draw. Nothing is recomputed: every number is the one computed over the whole sequence, so a row's
    shown weights may add up to less than 1."""
    index = torch.tensor(keep, device=trace.q.device)

    def both(t: torch.Tensor) -> torch.Tensor:  # (h, T, S) -> (h, T', S')
        return t.index_select(-2, index).index_select(-1, index)

    return replace(trace, q=trace.q[:, index], k=trace.k[:, index], v=trace.v[:, index], scores=both(trace.scores),
                   scaled=both(trace.scaled), masked=both(trace.masked), weights=both(trace.weights),
                   context=trace.context[:, index], concat=trace.concat[index], output=trace.output[index],
                   mask=both(trace.mask))


ROW_COLOUR_STAGES = ("softmax", "context")
"""The stages whose charts colour the weights, each row on its own range under "Colour: each row"."""
SMALL_ROW_SPREAD = 0.05
"""A row's weights closer together than this look as far apart as 0 and 1 under per-row colours: said so."""


def row_colour_note(view: StageView) -> str | None:
    """Under per-row colours, how far apart the outlined row's open weights are, drawn as the whole colour scale (a
    student read 0.080 against 0.104 as a strong preference); None with the fixed scale or a fully blocked row."""
    if view.colour != "row":
        return None
    row = view.trace.weights[view.head, view.follow][view.trace.mask[view.head, view.follow]]
    if row.numel() == 0:
        return None
    low, high = float(row.min()), float(row.max())
    if f"{low:.3f}" == f"{high:.3f}":
        words = (f"Colour per row: the outlined row's weights all print as {high:.3f}, and the colours stretch "
                 "whatever difference is left over the whole colour bar, 0 to 1.")
    else:
        words = (f"Colour per row: the outlined row's weights run from {low:.3f} (the colour bar's 0) to {high:.3f} "
                 f"(its 1), a spread of {high - low:.3f} drawn as the whole colour scale.")
    if high - low < SMALL_ROW_SPREAD:
        words += (" So small a difference looks large here: Colour of the weights “fixed” "
                  f"{in_the_sidebar()} draws it at its size.")
    return words


def follow_note(view: StageView) -> str:
    """What the outlined row of a stage's charts is (a student saw a magenta frame and no word about it). Said on a
    page; a slide's charts fill the window down to the stage's words, and one more line ran past its foot."""
    return f"Outlined: the row of {plain(view.follow_label)}, the token followed; its worked numbers are below."


def outline_note(label: str, where: str = "") -> str:
    """What the outlined row on a lesson page's charts is, said under the first of them (a student saw the magenta
    frame on several pages and no word about it). ``label``: the followed token's label, as the charts show it;
    ``where``: where it stands now, if the chart moved it (made safe with ``plain`` already)."""
    return (f"Outlined: the row of {plain(label)}{where}, the token followed (“Query token to follow” in the sidebar, "
            "the token whose numbers Step through works out).")


COLOURS_ONLY_NOTE = ("These cells are too narrow for their numbers: hover a cell to read it, or (on a touch screen) "
                     "open “All the numbers” below.")
"""Said under a stage whose heatmap shows colours only (many tokens or features): the 7-token default prints
every number, and a student who typed a longer sentence saw them go without a word."""


def _draw_charts(view: StageView, rec: StageRecord, columns_key: str = "slide_columns") -> bool:
    """Draw the stage's charts (side by side, or one under another when their cells would be too narrow);
    True when a heatmap among them shows colours only. ``columns_key``: the container of a slide's columns."""
    drawn = rec.charts(view)
    if not drawn:
        return False
    if len(drawn) > 1 and not view.fit and any(_cell_px(spec) < MIN_SIDE_BY_SIDE_CELL for spec in drawn):
        view = replace(view, stacked=True)  # many tokens or features: one chart under another, each full width
        drawn = rec.charts(view)
        columns = [st.container() for _ in drawn]
    else:  # side by side, each chart's column as wide as the chart wants (a chart without colour bar is narrower)
        columns = side_by_side(drawn, view, key=columns_key) if len(drawn) > 1 else [st.container()]
    for i, (column, chart) in enumerate(zip(columns, drawn)):
        with column:
            _show_main(view, chart, f"{rec.key}_{i}")
    return any(charts.colours_only(spec) for spec in drawn)


MIN_SIDE_BY_SIDE_CELL = 18
"""Smallest cell, in pixels, of a stage's charts drawn side by side: below it their row labels would overlap
(and a narrow column shrinks the chart further), so the charts are drawn one under another instead."""


def side_by_side(drawn: list[dict], view: StageView, key: str = "slide_columns") -> list:
    """One row of columns for the chart specs ``drawn``, each as wide as its chart wants (``natural_px``); on a
    slide, charts that carry their ``SlideColumn`` (``in_slide_column``) get columns in which all their cells are one
    width (``slide_columns``, whose container is named ``key``)."""
    row = [slide_column_of(spec) for spec in drawn] if view.fit else []
    if row and all(column is not None for column in row):
        return slide_columns(row, key)
    return st.columns([natural_px(spec, view) for spec in drawn])


SLIDE_COLUMN_GAP_PX = 16
"""The gap between two of ``st.columns`` (Streamlit's default "small" gap, 1rem)."""
COLOURS_ONLY_SHARE = 0.5
"""The share of a slide's row that a chart drawn in colours only (a real head's 32 context features) takes beside a
weights chart with as many columns as it has keys: the weights' cells get the room for their numbers."""
MASK_CELL_SHARE = 0.5
"""A mask grid's cell width beside a slide's scores, as a share of theirs: a ✓ or × needs less room than a number.
Larger when that leaves its cells at 1280 px narrower than a steep key label's line (the slide's font and 4 px):
the browser would leave out every other label."""


@dataclass(frozen=True)
class SlideColumn:
    """One chart of a row of charts side by side on a slide: ``cells``, its columns of cells counted in the row's
    cell width (a mask's narrow cells count MASK_CELL_SHARE each), and ``frame_px``, about how wide it draws what
    lies beside its cells (row labels and their title, colour bar)."""

    cells: float
    frame_px: float


def slide_cell_px(row: tuple[SlideColumn, ...], column_px: float = PRESENTER_COLUMN_PX) -> float:
    """The cell width, in pixels, of the charts ``row`` side by side in a main column ``column_px`` wide."""
    room = column_px - SLIDE_COLUMN_GAP_PX * (len(row) - 1) - sum(column.frame_px for column in row)
    return room / max(sum(column.cells for column in row), 1)


def slide_rows_px(view: StageView, rows: list[str]) -> float:
    """About how wide a slide chart draws the labels ``rows`` and the row axis's title beside its cells."""
    return DRAWN_FRAME_SHARE * charts.fit_room_px(rows, view.font_size)


def slide_legend_px(view: StageView, value_title: str, *, by_row: bool = False) -> float:
    """About how wide a slide chart draws its colour bar titled ``value_title`` (``by_row``: see ``charts.heatmap``)."""
    return DRAWN_FRAME_SHARE * charts.heatmap_fit_room([], view.font_size, value_title, by_row=by_row)


_SLIDE_COLUMN_META = "slide_column"


def in_slide_column(spec: dict, column: SlideColumn) -> dict:
    """``spec`` carrying its place in a slide's row (Vega-Lite's ``usermeta``, which drawing leaves aside)."""
    return {**spec, "usermeta": {_SLIDE_COLUMN_META: [column.cells, column.frame_px]}}


def weights_slide_column(view: StageView) -> SlideColumn:
    """A slide's weights chart of ``view`` (queries × keys) with its row labels and its colour bar, as one column
    of a row of slide charts."""
    return SlideColumn(len(view.keys), slide_rows_px(view, view.labels)
                       + slide_legend_px(view, WEIGHT_TITLE, by_row=view.colour == "row"))


def slide_column_of(spec: dict) -> SlideColumn | None:
    given = (spec.get("usermeta") or {}).get(_SLIDE_COLUMN_META)
    return None if given is None else SlideColumn(*given)


def slide_column_width(other: SlideColumn, own: SlideColumn) -> str:
    """The container width of ``other``'s chart, as a Vega expression of ``own``'s, in one row of ``slide_columns``."""
    return f"({other.frame_px:.0f} + {other.cells:g} * (containerSize()[0] - {own.frame_px:.0f}) / {own.cells:g})"


def slide_columns(row: list[SlideColumn], key: str = "slide_columns") -> list:
    """``st.columns`` for the charts ``row`` of a slide, in a container named ``key``: each column as wide as its
    chart's frame plus a share of the rest in proportion to its cells, so that every chart's cells are one width at
    any window width (equal columns gave Q, with its row labels and colour bar, cells of 38 px at 1280 px, and K and
    V no wider)."""
    with st.container(key=key):
        st.html("<style>" + "".join(
            f".st-key-{key} [data-testid='stHorizontalBlock'] > [data-testid='stColumn']:nth-child({i}) "
            f"{{flex: {column.cells:g} 1 {column.frame_px:.0f}px !important; width: auto !important; "
            "min-width: 0 !important;}"
            for i, column in enumerate(row, start=1)) + "</style>")
        return st.columns(len(row))


def natural_px(spec: dict, view: StageView) -> float:
    """About how wide a chart drawn at its own size is: its cells, its row labels and, if it has one, its colour
    bar. A fitted chart (a slide's) or one of unknown width counts as one equal share."""
    width = spec.get("width")
    if view.fit or not isinstance(width, (int, float)):
        return 1.0
    has_legend = any(layer.get("encoding", {}).get("color", {}).get("legend", {}) is not None
                     and "scale" in layer.get("encoding", {}).get("color", {})
                     for layer in spec.get("layer", [spec]))
    return width + charts.label_px(view.labels, view.font_size) + ROW_AXIS_TITLE_PX + (LEGEND_PX if has_legend else 0)


def _cell_px(spec: dict) -> float:
    """A heatmap spec's cell width in pixels (its width over its x categories); inf when it has no such axis."""
    width = spec.get("width")
    if not isinstance(width, int):
        return float("inf")
    for layer in spec.get("layer", [spec]):
        x = layer.get("encoding", {}).get("x", {})
        order = x.get("scale", {}).get("domain") if x.get("type") == "nominal" else None
        if isinstance(order, list) and order:
            return width / len(order)
    return float("inf")


def _show_main(view: StageView, chart, key: str) -> None:
    if view.pick:
        show_chart(chart, key=f"pick_{key}", on_select=on_pick(f"pick_{key}", "row_index", follow_token), fit=view.fit)
    else:
        show_chart(chart, fit=view.fit)


def follow_token(row) -> dict:
    """What a click on query row ``row`` changes: the followed token (and a note that the sidebar must redraw)."""
    return {FOLLOW_KEY: int(row), RERUN_PAGE: True}


LONE_KEY_STAGES = ("masked", "softmax", "context")
"""Stages whose worked numbers say nothing when the followed query may attend to one key only."""


def note_lone_key(view: StageView, key: str, *, on_slide: bool = False, in_fragment: bool = True) -> None:
    """When the mask leaves the followed query one key (token 1 under the causal mask), its weight is 1 and its
    context is that key's value: nothing is mixed. Say so, and on the lesson's own stages (``view.pick``: its
    followed token is the sidebar's) offer the query that attends to the most keys. ``on_slide``: one line beside
    the button, under the slide's words (the worked numbers are screens down). ``in_fragment``: drawn by the
    step-through's stage, which then reruns the whole page (the sidebar shows the followed token)."""
    allowed = view.trace.mask[view.head]  # (T, S) bool
    counts = allowed.sum(dim=-1)  # (T,) keys each query may attend to
    if int(counts[view.follow]) != 1 or int(counts.max()) < 2:
        return
    only = int(allowed[view.follow].nonzero()[0, 0])
    richest = richest_word(view.labels, counts)
    follow, key_label, other = plain(view.follow_label), plain(view.keys[only]), plain(view.labels[richest])
    changes = follow_token(richest) if in_fragment else {FOLLOW_KEY: richest}
    button = {"key": f"follow_richest_{key}", "on_click": st.session_state.update, "args": (changes,)}
    if on_slide:
        with st.container(key="lone_key_note"):
            words, press = st.columns([5, 1], vertical_alignment="center")
            words.markdown(f"**{follow} may attend to {key_label} only:** weight 1, nothing mixed. {other} attends "
                           f"to {int(counts[richest])} keys.")
            if view.pick:
                press.button(f"Follow {other}", width="stretch", **button)
        return
    st.info(f"With this mask {follow} may attend to only one key, {key_label}: its weight is 1 and its context is "
            f"that key's value vector, so nothing is mixed. {other} may attend to {int(counts[richest])} keys.",
            icon=":material/info:")
    if view.pick:
        st.button(f"Follow {other} ({int(counts[richest])} keys)", **button)


def richest_word(labels: list[str], counts: torch.Tensor) -> int:
    """The token that attends to the most keys (``counts``, (T,)), a word rather than punctuation where one attends
    to 2 keys or more: under the causal mask the last token, most often the full stop, was offered in place of the
    sentence's last word."""
    words = [i for i, label in enumerate(labels) if any(ch.isalnum() for ch in label.split("·", 1)[-1])]
    best_word = max(words, key=lambda i: (int(counts[i]), i), default=None)
    if best_word is not None and int(counts[best_word]) >= 2:
        return best_word
    return int(counts.argmax())


def on_pick(chart_key: str, field: str, changes: Callable[[int], dict]) -> Callable[[], None]:
    """A chart's click callback: the clicked point's ``field`` goes through ``changes`` into session state.
    It runs before the next run, so it may change the value of a widget drawn earlier on the page."""

    def callback() -> None:
        state = st.session_state.get(chart_key) or {}
        selection = state.get("selection") or {}
        for points in selection.values():
            value = points[-1].get(field) if points else None
            if isinstance(value, (int, float)):
                st.session_state.update(changes(int(value)))
                return

    return callback


def show_worked(view: StageView, rec: StageRecord, *, lone_key_note: bool = True) -> None:
    """The followed token's worked numbers; ``lone_key_note`` False where the page says it already (a slide)."""
    numbers = _shown_worked(view, rec)
    st.markdown(f"#### Worked numbers for {plain(view.follow_label)}")
    if lone_key_note and rec.key in LONE_KEY_STAGES:
        note_lone_key(view, rec.key)
    st.markdown(plain(numbers.intro))
    if numbers.latex:
        st.latex(numbers.latex)
    _folded_table(numbers.table, key=f"worked_rest_{rec.key}")
    if numbers.sums is not None:
        st.table(numbers.sums, hide_index=True)
    if not presenting():  # (a student who redid 0.2891 × −1.5822 by hand got −0.4574, not the table's −0.4575)
        st.caption(ROUNDING_NOTE)


ROUNDING_NOTE = (f"Every number is shown to {worked.DIGITS} decimals, and each result is worked out from the exact "
                 "numbers, not from the rounded ones shown: redone by hand from the table, a result can differ in its "
                 "last digit (a sum of many terms by a few units there).")


WORKED_ROWS_FOLDED = 12
"""A worked-numbers table of more rows shows its first WORKED_ROWS_FIRST, and the others one click away: a real
head's 32 features of q made a table two screens tall (three on a slide) before the next heading."""
WORKED_ROWS_FIRST = 8


def _folded_table(table, *, key: str) -> None:
    """``st.table`` of a pyarrow table, its rows after the first WORKED_ROWS_FIRST in an expander when it has more
    than WORKED_ROWS_FOLDED. The expander names the rows it holds by the table's first column."""
    if table.num_rows <= WORKED_ROWS_FOLDED:
        st.table(table, hide_index=True)
        return
    st.table(table.slice(0, WORKED_ROWS_FIRST), hide_index=True)
    names = table.column(0).to_pylist()
    shown = str if table.column_names[0] == "key" else lambda name: plain(str(name))  # keys are escaped already
    rest = f"{shown(names[WORKED_ROWS_FIRST])} … {shown(names[-1])}"
    with lazy_expander(f"The other {table.num_rows - WORKED_ROWS_FIRST} rows ({rest})", key) as box:
        if box.open:
            st.table(table.slice(WORKED_ROWS_FIRST), hide_index=True)


@dataclass(frozen=True)
class _ShownWorked:
    """A stage's worked numbers as the page sends them: the tables already in Arrow form (pyarrow.Table), the
    token labels escaped. Shared by every session that shows the same numbers."""

    intro: str
    latex: str | None
    table: object
    sums: object | None


def _shown_worked(view: StageView, rec: StageRecord) -> _ShownWorked:
    """``rec.worked(view)`` ready to send, from the shared cache when another run showed the same numbers (a
    lecture hall's students all reach the same stages): the terms and their tables are not made again."""
    def build() -> _ShownWorked:
        numbers = rec.worked(view)
        sums = None if numbers.sums is None else dataframe_util.convert_pandas_df_to_arrow_table(numbers.sums)
        return _ShownWorked(numbers.intro, numbers.latex,
                            dataframe_util.convert_pandas_df_to_arrow_table(_literal_keys(numbers.table)), sums)

    def size(shown: _ShownWorked) -> int:
        return shown.table.nbytes + (0 if shown.sums is None else shown.sums.nbytes) + len(shown.intro)

    return cached_value(("worked numbers", rec.key, *_view_inputs(view)), build, size)


def _view_inputs(view: StageView) -> list:
    """Every field of ``view`` as parts of a cache key: tensors whole (the trace's and projections' one by one),
    the rest as they are."""
    parts = []
    for field in fields(view):
        value = getattr(view, field.name)
        if is_dataclass(value):
            parts += [field.name, *(getattr(value, f.name) for f in fields(value))]
        else:
            parts += [field.name, list(value) if isinstance(value, frames.AxisLabels) else value]
    return parts


def _literal_keys(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its token labels (the "key" column, user text) escaped: st.table reads every cell as
    Markdown, so a token such as "$$" or "**" would otherwise be drawn as markup."""
    if "key" not in table.columns:
        return table
    return table.assign(key=table["key"].map(plain))


def lazy_expander(label: str, key: str):
    """An expander whose content is drawn only while it is open (``.open``); opening it reruns the page, or
    only the fragment it sits in. A closed expander's content would otherwise be sent and drawn on every run."""
    return st.expander(label, key=f"open_{key}", on_change="rerun")


def numbers_table(values, rows: list[str], cols: list[str], *, key: str, caption: str = "All the numbers",
                  asked: tuple[int, int] | None = None) -> None:
    """The exact numbers of a matrix in an expander (user text is shown as plain table text); ``key`` names
    the expander (unique on the page). ``asked``: a (row, column) that shows ``charts.ASKED_MARK`` instead of its
    number, as the chart above it does (``StageView.asked``).

    In presenter mode the table is HTML (``st.table``), which the slide's style enlarges: a dataframe is painted on
    a canvas at the page's small size. Its token labels are escaped (st.table reads every cell as Markdown); a wide
    table scrolls sideways inside the column with the token labels kept in view."""
    with lazy_expander(caption, key) as box:
        if not box.open:
            return
        array = frames.to_numpy(values)
        table = pd.DataFrame([[worked.number(v) for v in row] for row in array.tolist()], index=list(rows),
                             columns=list(cols))
        if asked is not None:
            table.iloc[asked] = charts.ASKED_MARK
        if presenting():  # a width in pixels (at most the column's) keeps the labels in view as the table scrolls
            st.table(table.rename(index=plain, columns=plain), hide_index=False, width=PRESENTER_COLUMN_PX)
        else:
            st.dataframe(table, width="stretch")


def show_table(table: pd.DataFrame, *, hide_index: bool = True, column_config: dict | None = None,
               **dataframe_options) -> None:
    """A page's table: a dataframe, and on a slide HTML (``st.table``), which the slide's style enlarges (a dataframe
    is painted on a canvas at the page's small size). On a slide a column configured None is left out, a configured
    label names its column, a configured printf format ("%.4f", "%,d") writes its numbers, and text is escaped
    (st.table reads cells as Markdown). ``column_config`` and ``dataframe_options`` are otherwise the dataframe's."""
    if not presenting():
        st.dataframe(table, hide_index=hide_index, column_config=column_config, **dataframe_options)
        return
    frame, labels = table.copy(), {}
    for name, config in (column_config or {}).items():
        if name not in frame.columns:
            continue
        if config is None:
            frame = frame.drop(columns=name)
            continue
        config = {"label": config} if isinstance(config, str) else config
        number_format = (config.get("type_config") or {}).get("format")
        if isinstance(number_format, str) and number_format.startswith("%"):
            thousands = "," in number_format
            spec = number_format[1:].replace(",", "")
            frame[name] = [v if pd.isna(v) else format(v, ("," if thousands else "") + spec) for v in frame[name]]
        if config.get("label"):
            labels[name] = config["label"]
    frame = frame.rename(columns=labels).map(lambda v: plain(v) if isinstance(v, str) else v)
    st.table(frame.rename(index=lambda v: plain(str(v)), columns=lambda v: plain(str(v))), hide_index=hide_index)


def shown_features(values: torch.Tensor) -> tuple[torch.Tensor, str]:
    """The first MAX_FEATURES_SHOWN features (last dimension) of ``values``, and a note when some are left out."""
    width = values.shape[-1]
    if width <= MAX_FEATURES_SHOWN:
        return values, ""
    return values[..., :MAX_FEATURES_SHOWN], f"Showing the first {MAX_FEATURES_SHOWN} of {width} features."


def _caption_cut(*widths: tuple[str, int], table: str = "“All the numbers” below has every feature") -> None:
    """Say which of a stage's feature charts (name, width) show only their first MAX_FEATURES_SHOWN features, and
    (``table``) where the rest are."""
    cut = [f"the first {MAX_FEATURES_SHOWN} of {width} features of {name}" for name, width in widths
           if width > MAX_FEATURES_SHOWN]
    if cut:
        st.caption(f"The charts show {' and '.join(cut)}; {table}.")


def feature_heatmap(view: StageView, values: torch.Tensor, rows: list[str], title: str, prefix: str = "d",
                    share: float = 1.0, row_name: str = "token", col_labels=None, domain=None,
                    cell: int | None = None, legend: bool = True, row_labels: bool = True,
                    slide_row: tuple[SlideColumn, ...] | None = None, col_labels_px: str | None = None,
                    asked: bool = False):
    """A rows × features heatmap (diverging colours around 0; ``domain`` fixes the colour scale), capped at
    MAX_FEATURES_SHOWN columns and sized to fit ``share`` of the page width (or given its ``cell`` size).
    ``legend=False``: no colour bar; ``slide_row``: on a slide, the row of charts it is one of (``slide_columns``;
    else it takes ``share`` of the slide's width); ``row_labels=False``: no row labels (the chart to its left names
    its rows); ``col_labels_px``: on a slide, the least height of its column labels (a Vega expression, e.g.
    ``slide_key_labels_px`` to keep its rows level with a weights chart beside it). A slide prints
    the numbers of all its columns (the browser fits them to the cells); a page's chart of more than 12 only
    colours. Returns (chart, note)."""
    shown, note = shown_features(values)
    if note:  # in the title too: under the chart, a slide's note was screens down, and 32 of 384 read as d = 32
        title = f"{title} (first {shown.shape[-1]} of {values.shape[-1]} features)"
    cols = frames.feature_labels(shown.shape[-1], prefix) if col_labels is None else frames.AxisLabels(
        col_labels[:shown.shape[-1]])
    if cell is None:
        cell = view.fit_cell(shown.shape[-1] + 3, share)  # + room for the token labels and the colour bar
    follow = view.follow if row_name == "token" and len(rows) == len(view.labels) else None
    if not view.fit:
        value_font = None
    elif slide_row is not None:
        value_font = slide_row_value_font(view, slide_row, signed=True)
    else:
        value_font = slide_fitted_value_font(view, shown.shape[-1], share, signed=True, features=True)
    values_fit = value_font is not None if view.fit else prints_values(cell, view.font_size, signed=True)
    chart = cached_matrix_chart(charts.matrix_heatmap, shown, rows, cols, row_name=row_name, col_name="feature",
                                title=title, cell_size=SLIDE_CELL if view.fit else cell, font_size=view.font_size,
                                value_font_px=value_font,
                                row=row_name, show_values=(view.fit or shown.shape[-1] <= 12) and values_fit,
                                value_title="feature value", follow_row=follow, fit=view.fit, domain=domain,
                                col_labels_px=col_labels_px, asked=view.asked if asked else None,
                                legend=legend, row_labels=row_labels)
    return chart, note


ROW_AXIS_TITLE_PX = 24
"""Width of a chart's row-axis title ("token") and the gap beside its labels, at the page's font."""
LEGEND_PX = 80
"""Width of a colour bar with its title ("feature value") and numbers, at the page's font."""


def shared_domain(*matrices: torch.Tensor) -> tuple[float, float] | None:
    """One diverging colour scale for feature charts drawn side by side, over the features each shows
    (``shown_features``): (−m, m) for the largest |value| m, None when every value is 0."""
    largest = max((float(shown_features(m)[0].abs().max()) for m in matrices if m.numel()), default=0.0)
    return (-largest, largest) if largest > 0 else None


DRAWN_FRAME_SHARE = 0.8
"""What a page's chart draws beside its cells (row labels, axis title, colour bar or legend) as a share of
``charts.fit_room_px``'s estimate, which errs wide (a slide's column thought narrower only steepens its labels):
measured at 1280 px, 109 px of an estimated 136 for 7 tokens, 125 of 159 for 17."""


def column_cell(view: StageView, column_px: float, cells: int, frame_px: float) -> int:
    """The largest cell (8 px to ``view.cell_size``) with which ``cells`` columns and what the chart draws beside them
    (``frame_px``, a ``charts.fit_room_px`` estimate) fit into ``column_px``: a chart drawn at its own size, not
    shrunk into its column with its text."""
    return max(8, min(view.cell_size, int((column_px - DRAWN_FRAME_SHARE * frame_px) // max(cells, 1))))


SLIDE_GRID_ROWS_PX = 540
"""On a slide, the most one grid's rows may take of a 1280 × 800 window's height (its title and key labels take the
rest): two grids one under the other are each sized to fit it."""
STACK_GAIN = 1.5
"""Two grids to compare go one under the other on a slide only when their cells grow at least this much that way:
side by side the lecturer shows both at once, which is what they are drawn for."""


def stacked_slide_cell(side_cell: int, stacked_cell: int, rows: int) -> int | None:
    """The cell size of two grids of ``rows`` rows one under the other on a slide: ``stacked_cell`` (as wide as the
    slide) capped so that each grid fits the window's height, or None when that is not STACK_GAIN times their
    ``side_cell`` side by side (drawn side by side then). Stacked without the cap, a mask and its weights for an
    11-token sentence were each taller than the window."""
    cell = min(stacked_cell, SLIDE_GRID_ROWS_PX // max(rows, 1))
    return cell if cell >= STACK_GAIN * side_cell else None


def main_column_px(presenting_now: bool) -> int:
    """What charts may take of the main column: beside the sidebar, or on a slide."""
    return PRESENTER_COLUMN_PX if presenting_now else PAGE_WIDTH_PX


def shared_scale_cell(view: StageView, rows: list[str], columns: int, charts_side_by_side: int,
                      legends: int = 1) -> int:
    """The cell size of ``charts_side_by_side`` charts in one row of the page, with ``columns`` cells in all, each
    with its own row labels, and ``legends`` colour bars between them (one when they share its scale): one cell size
    for all, as large as the row allows."""
    labels = charts_side_by_side * (charts.label_px(rows, view.font_size) + ROW_AXIS_TITLE_PX)
    room = PAGE_WIDTH_PX - labels - legends * LEGEND_PX
    return max(8, min(view.cell_size, int(room // max(columns, 1))))


SLIDE_SIGNED_NUMBER_EM = 3.25
"""Width of a slide cell that holds a signed number ("−0.390") in ems of its font (52 px at the slide's 16 px);
in narrower cells the numbers ran into each other ("−0.3900.165")."""
SLIDE_WEIGHT_NUMBER_EM = 2.75
"""The same for a weight, which has no sign ("0.390")."""
MIN_SLIDE_VALUE_PX = 12
"""Smallest font of the numbers in a slide's cells (read from the back of a hall); cells too narrow for it show
colours only."""


SLIDE_AXIS_AND_LEGEND_PX = 90
"""Width of a slide chart's row-axis title and colour bar titled "score" or "weight" (measured at 1280 px: about
85)."""
SLIDE_FEATURE_LEGEND_PX = 68
"""What a colour bar titled "feature value" takes beyond that (Q, K and V on a slide: cells of 48 px, not 65)."""


WIDE_SLIDE_COLUMN_PX = 1872
"""The main column's width in presenter mode on a 1920-px-wide window (a projector's): a slide's charts stretch to
it, so their cells are half as wide again as on a 1280-px window."""


SLIDE_ZOOMS = ((1.25, 1600, 900), (1.5, 1920, 1080))
"""(zoom, window width, window height): a slide whose charts are laid out in pixels for a 1280-px-wide window (and a
720-px-tall one where it must fit the window) draws them this much larger from that window size on. Its columns
already share the wider main column, so they hold the larger charts: without it a 1920 × 1080 projector showed
their 16-px numbers in two thirds of the screen."""


GENERATION_CACHES_KEY = "generation_caches"
"""The container of Generation's K cache, V cache and new query on a slide."""
FIT_WINDOW_ZOOM_KEYS = (GENERATION_CACHES_KEY,)
"""Containers whose charts must fit the window's height: they take SLIDE_ZOOMS only where the window is tall enough
too."""


@cache  # the same text on every run
def presenter_charts_zoom_style() -> str:
    """A ``<style>`` that, in presenter mode, draws every chart laid out in pixels (one the browser does not size to
    its container: ``fit-x``) SLIDE_ZOOMS larger on a large window, counting its width only. Every page's layout is
    made for a 1280-px window, and its columns grow with the window, so they hold the larger charts; without it a
    1920 × 1080 projector showed Multi-head's, Cross-attention's and Why √d_k's grids at their 1280-px size,
    15–18-px numbers beside half a screen of white, smaller than the slides before them. A slide's own charts, sized to
    their containers, are left out; those in FIT_WINDOW_ZOOM_KEYS grow only where the window's height allows too."""
    chart = "[data-testid='stVegaLiteChart']:not(.fit-x)"
    fitted = ", ".join(f".st-key-{key}" for key in FIT_WINDOW_ZOOM_KEYS)
    return "<style>" + "".join(
        f"@media (min-width: {width}px) {{[data-testid='stMain'] {chart}:not(:is({fitted}) *) {{zoom: {zoom};}}}}"
        f"@media (min-width: {width}px) and (min-height: {height}px) {{:is({fitted}) {chart} {{zoom: {zoom};}}}}"
        for zoom, width, height in SLIDE_ZOOMS) + "</style>"


def slide_value_font(view: StageView, columns: int, share: float, *, signed: bool, features: bool = False,
                     column_px: int = PRESENTER_COLUMN_PX) -> int | None:
    """The font, in pixels, of the numbers in the cells of a slide chart with ``columns`` columns in ``share`` of
    the slide's width (less its row labels and colour bar, wider for ``features``) in a main column ``column_px``
    wide (a 1280-px window's by default): the slide's usual value font where they fit, else as large as fits; None
    under MIN_SLIDE_VALUE_PX (colours only). With 9–12 tokens two charts side by side print their numbers at
    12–15 px at 1280 px (they showed none: their cells were under 52 px)."""
    room = charts.label_px(view.labels, view.font_size) + SLIDE_AXIS_AND_LEGEND_PX
    cell = (column_px * share - room - (SLIDE_FEATURE_LEGEND_PX if features else 0)) / max(columns, 1)
    return slide_cell_value_font(cell, view.font_size, signed=signed)


def slide_cell_value_font(cell_px: float, font_size: int, *, signed: bool, row_px: int | None = None,
                          largest: bool = False) -> int | None:
    """The font of the numbers in a slide's cells ``cell_px`` wide (and ``row_px`` tall, when given): the slide's
    usual value font where they fit, else as large as fits; None under MIN_SLIDE_VALUE_PX (colours only).
    ``largest``: up to ``slide_largest_value_font`` in cells that hold it, for a chart drawn at its own size (the
    real model's close-up printed 16-px numbers in 112-px cells, 13 px once a 1024-px window shrank it)."""
    em = SLIDE_SIGNED_NUMBER_EM if signed else SLIDE_WEIGHT_NUMBER_EM
    most = slide_largest_value_font(font_size) if largest else slide_usual_value_font(font_size)
    font = min(most, int(cell_px / em), *(() if row_px is None else (row_px - 8,)))
    return font if font >= MIN_SLIDE_VALUE_PX else None


def slide_usual_value_font(font_size: int) -> int:
    """The font of the numbers in a slide's cells wide enough for them, at the slide's label font ``font_size``
    (16 px at its 20-px labels)."""
    return charts.cell_value_font(SLIDE_CELL, font_size, diverging=True, fit=True)


SLIDE_VALUE_ABOVE_LABELS_PX = 4
"""How much larger than the slide's axis labels its numbers may grow in cells that hold them."""


def slide_largest_value_font(font_size: int) -> int:
    """The largest font of the numbers in a slide's cells, at the slide's label font ``font_size``: 24 px at its
    20-px labels, a little above its 22-px words (the numbers are what the slide is about). The browser prints them
    as large as the cells it draws hold up to this, so they grow with the window: at 1920 × 1080 a seven-token
    sentence's scores were 16 px in cells of 247 × 84 px, the smallest text on the slide."""
    return font_size + SLIDE_VALUE_ABOVE_LABELS_PX


def slide_fitted_value_font(view: StageView, columns: int, share: float, *, signed: bool,
                            features: bool = False) -> int | None:
    """The largest font of the numbers in a slide chart's cells (``slide_largest_value_font``), or None when even a
    projector's 1920-px window leaves its cells too narrow for MIN_SLIDE_VALUE_PX (colours only). A slide's chart
    stretches to its window and the browser prints its numbers as large as the cells it draws hold
    (``charts.heatmap``'s ``fit``), up to this and at least MIN_SLIDE_VALUE_PX, else not at all: sized for a 1280-px
    window, an 11-token sentence's numbers were 13 px in 67-px cells at 1920 px, and its scores and Q, K, V showed
    none there."""
    wide = slide_value_font(view, columns, share, signed=signed, features=features, column_px=WIDE_SLIDE_COLUMN_PX)
    return None if wide is None else slide_largest_value_font(view.font_size)


def slide_row_value_font(view: StageView, row: tuple[SlideColumn, ...], *, signed: bool) -> int | None:
    """``slide_fitted_value_font`` of charts laid out as ``row`` (``slide_columns``): ``slide_largest_value_font``,
    or None when a 1920-px window leaves their cells too narrow for MIN_SLIDE_VALUE_PX."""
    em = SLIDE_SIGNED_NUMBER_EM if signed else SLIDE_WEIGHT_NUMBER_EM
    fits = int(slide_cell_px(row, WIDE_SLIDE_COLUMN_PX) / em) >= MIN_SLIDE_VALUE_PX
    return slide_largest_value_font(view.font_size) if fits else None


def slide_key_labels_px(view: StageView, width: str = "containerSize()[0]") -> str:
    """Height the key labels of a slide's weights chart take at the angle the browser gives them, a little more
    than measured, as a Vega expression of that chart's container width (``width``, a Vega expression; by default
    the chart's own): a weights chart and a feature chart side by side on a slide (the weights A beside the context
    C, in columns of one width) both leave this much under their cells, so their rows stay level. (Given to every
    slide chart, it left an empty band under the short feature labels of a chart on its own.)"""
    room = charts.heatmap_fit_room(view.labels, view.font_size, WEIGHT_TITLE, by_row=view.colour == "row")
    return charts.fitted_label_extent(list(view.keys), font_size=view.font_size, room_px=room, width=width)


WEIGHT_TITLE = "weight"
"""The colour bar's title of a weights chart (``token_heatmap``)."""


MIN_VALUE_PX = 10
"""Smallest font in which a page's heatmap prints the numbers in its cells; with narrower cells it shows colours
only (the numbers are in its "All the numbers" table and its tooltips). Signed numbers ("−1.541") need 36-px
cells for it, weights ("0.390") 30."""


def prints_values(cell: int, font_size: int, *, signed: bool) -> bool:
    """Whether a page's heatmap with ``cell``-px cells prints its numbers at MIN_VALUE_PX or more."""
    return charts.cell_value_font(cell, font_size, diverging=signed, fit=False) >= MIN_VALUE_PX


def slide_panel_width(labels: list[str], font_size: int, panels_per_row: int, value_title: str = "weight",
                      columns: int | None = None) -> int:
    """The widest cell with which ``panels_per_row`` panels of a head grid (``charts.head_grid``) whose rows are
    ``labels``, each with ``columns`` columns (by default one per label), fit a slide's width beside the grid's row
    labels and colour bar (titled ``value_title``)."""
    room = (PRESENTER_COLUMN_PX - charts.heatmap_fit_room(labels, font_size, value_title)
            - (panels_per_row - 1) * charts.HEAD_GRID_SPACING_PX)
    return int(room // max(panels_per_row * (len(labels) if columns is None else columns), 1))


def panel_prints_values(cell: int, font_size: int, *, signed: bool) -> bool:
    """Whether a grid of panels (one per head) with ``cell``-px cells prints its numbers in a font read from where
    the page is read: a slide's from the back of a hall (MIN_SLIDE_VALUE_PX; 2 heads of a 7-token sentence: 51-px
    cells, 17-px weights), a page's at the desk (``prints_values``)."""
    if presenting():
        return charts.cell_value_font(cell, font_size, diverging=signed, fit=False) >= MIN_SLIDE_VALUE_PX
    return prints_values(cell, font_size, signed=signed)


SIGNED_READABLE_CELL_PX = 40
"""Narrowest cell that prints a signed number ("−1.129") at 11 px: two such charts side by side with narrower
cells go one above the other instead, each as wide as the column allows."""


def token_heatmap(view: StageView, values: torch.Tensor, title: str, *, weights: bool = False, domain=None,
                  share: float = 1.0, blocked: bool | None = None, value_title: str | None = None,
                  cell: int | None = None, min_value_px: int = 0,
                  row_labels: bool = True, legend: bool = True, slide_row: tuple[SlideColumn, ...] | None = None,
                  col_label_angle: str | None = None, col_labels_px: str | None = None,
                  value_font_px: int | None = None, asked: bool = False):
    """A queries × keys heatmap: weights on a 0..1 sequential scale (or per row), scores diverging around 0.
    ``blocked`` draws the mask's blocked cells grey with "×" (by default for weights, on every page alike: a
    blocked key's weight 0 would otherwise look like a small weight); ``cell`` overrides the size ``share`` gives;
    numbers that would print under ``min_value_px`` are left out (colours only, the values in the tooltips).
    ``row_labels``, ``legend``: as for ``charts.heatmap``; ``slide_row``: on a slide, the row of charts it is one of
    (``slide_columns``); ``col_label_angle``: its key labels' angle, a Vega expression (``charts.heatmap``);
    ``col_labels_px``: their least height (a Vega expression); ``value_font_px``: the numbers' font in a chart drawn
    at its own size (by default as large as a page's cells hold them); ``asked``: the chart whose cell ``view.asked``
    is."""
    matrix = (values, view.labels, view.keys)
    cut = view.blocked if (weights if blocked is None else blocked) else None
    if view.fit:
        cell = SLIDE_CELL
    elif cell is None:
        cell = view.fit_cell(len(view.keys) + 3, share)
    value_font = None if view.fit else value_font_px
    if view.fit and slide_row is not None:
        value_font = slide_row_value_font(view, slide_row, signed=not weights)
        many = value_font is None
    elif view.fit:  # a slide's charts share its width equally: at most two token charts side by side
        value_font = slide_fitted_value_font(view, len(view.keys), 1.0 if share >= 1 else 0.5, signed=not weights)
        many = value_font is None
    else:
        many = (len(view.keys) > 14 or not prints_values(cell, view.font_size, signed=not weights)
                or charts.cell_value_font(cell, view.font_size, diverging=not weights, fit=False) < min_value_px)
    common = {"title": title, "cell_size": cell, "font_size": view.font_size, "show_values": not many,
              "value_font_px": value_font,
              "follow_row": view.follow, "pick": view.pick, "fit": view.fit, "row_labels": row_labels,
              "legend": legend, "col_label_angle": col_label_angle,
              "col_labels_px": col_labels_px, "asked": view.asked if asked else None}
    if weights:
        color_field = "row_scaled" if view.colour == "row" else "value"
        return cached_matrix_chart(charts.heatmap, *matrix, blocked=cut, domain=domain or (0, 1), scheme="viridis",
                                   value_title=value_title or WEIGHT_TITLE, color_field=color_field, **common)
    return cached_matrix_chart(charts.heatmap, *matrix, blocked=cut, diverging=True, scheme="blueorange",
                               value_title=value_title or "score", domain=domain, **common)


def mask_chart(mask: torch.Tensor, rows: list[str], cols: list[str], **options) -> dict:
    """``charts.mask_grid`` of a bool (T, S) mask (True = may attend) with these display labels, as a prepared
    spec cached under the mask, labels and options (the frame is made only on a miss)."""
    return cached_chart(("mask grid", mask, list(rows), list(cols), sorted(options.items())),
                        lambda: charts.mask_grid(frames.mask_frame(mask, frames.AxisLabels(rows),
                                                                   frames.AxisLabels(cols)), **options))


def head_title(view: StageView) -> str:
    """" — head 2" after a chart's title when the lesson has more than one head (which one it shows), else ""."""
    return f" — head {view.head + 1}" if view.trace.num_heads > 1 else ""


# ------------------------------------------------------------------------------------------- the stages


def _embed_charts(view: StageView) -> list:
    if view.x is None:
        return []
    chart, _ = feature_heatmap(view, view.x, view.labels, "X: one row per token", prefix="x")
    return [chart]


def _embed_extra(view: StageView) -> None:
    if view.x is None:
        st.info("This view starts from a layer's input vectors; see the next stages.")
        return
    _caption_cut(("X", view.x.shape[1]))
    numbers_table(view.x, view.labels, frames.feature_labels(view.x.shape[1], "x"), key="embed")


def _embed_worked(view: StageView) -> worked.Worked:
    if view.x is None:
        return worked.Worked("This view has no X.", pd.DataFrame())
    return worked.embed(view.x, view.labels, view.follow, view.seeded)


def _qkv_charts(view: StageView) -> list:
    t, h = view.trace, view.head
    matrices = (("Q", t.q[h]), ("K", t.k[h]), ("V", t.v[h]))
    domain = shared_domain(*(values for _, values in matrices))  # the same colour is the same number side by side
    if view.fit:
        return _qkv_slide_charts(view, matrices, domain)
    # On the page (not a slide, not stacked) the three share one colour bar, drawn once beside V, and one cell size
    # that fills the row: their numbers are then printed as large as the width allows.
    joint = not view.fit and not view.stacked
    widths = sum(shown_features(values)[0].shape[-1] for _, values in matrices)
    cell = shared_scale_cell(view, list(view.labels) + list(view.keys), widths, 3) if joint else None
    out = []
    for name, values in matrices:
        rows = view.labels if name == "Q" else view.keys
        chart, _ = feature_heatmap(view, values, rows, f"{name}{head_title(view)}", prefix=name.lower(),
                                   share=1 / 3, domain=domain, cell=cell, legend=not joint or name == "V",
                                   asked=name == "Q")
        out.append(chart)
    return out


def _qkv_slide_charts(view: StageView, matrices: tuple, domain) -> list:
    """Q, K and V on a slide: one colour bar (beside V) and one set of row labels (beside Q; K's too when its keys
    are other tokens), so that their cells take the slide's width (80 px at 1280 px for 11 tokens and d_k = 4; with
    each its own labels and colour bar they were 38 px, too narrow for numbers)."""
    named = {"Q": True, "K": list(view.keys) != list(view.labels), "V": False}  # V's rows are K's
    row = tuple(SlideColumn(shown_features(values)[0].shape[-1],
                            (slide_rows_px(view, view.labels if name == "Q" else view.keys) if named[name] else 0)
                            + (slide_legend_px(view, "feature value") if name == "V" else 0))
                for name, values in matrices)
    out = []
    for (name, values), column in zip(matrices, row):
        chart, _ = feature_heatmap(view, values, view.labels if name == "Q" else view.keys,
                                   f"{name}{head_title(view)}", prefix=name.lower(), domain=domain,
                                   legend=name == "V", row_labels=named[name], slide_row=row, asked=name == "Q")
        out.append(in_slide_column(chart, column))
    return out


PALE_SHARE = 1 / 3
"""A matrix whose largest |value| is under this share of the shared colour scale's end is drawn pale beside the
others (``pale_on_shared_scale``)."""


def pale_on_shared_scale(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> str | None:
    """Words for Q, K and V (each (T, d)) on one colour scale when one of them is so much smaller than the largest
    that its cells are pale (a real head's V beside its Q and K); None when none is."""
    largest = {name: float(m.abs().max()) for name, m in (("Q", q), ("K", k), ("V", v)) if m.numel()}
    end = max(largest.values(), default=0.0)
    pale = [name for name, m in largest.items() if m < PALE_SHARE * end]
    if not pale or end == 0:
        return None
    others = " and ".join(name for name in largest if name not in pale)
    return (f"On the one colour scale {' and '.join(pale)} {'is' if len(pale) == 1 else 'are'} pale: "
            + ", ".join(f"largest |{name.lower()}| = {largest[name]:.2g}" for name in pale)
            + f", against up to {end:.2g} in {others}. The same colour is the same number in all three; "
            "“All the numbers” below has each value.")


def _qkv_extra(view: StageView) -> None:
    t, h = view.trace, view.head
    st.markdown(f"Head {h + 1} uses {numbered(h * t.d_k + 1, (h + 1) * t.d_k, 'column')} of W_Q and W_K and "
                f"{numbered(h * t.d_v + 1, (h + 1) * t.d_v, 'column')} of W_V: d_k = {t.d_k}, d_v = {t.d_v}.")
    pale = pale_on_shared_scale(*(shown_features(m)[0] for m in (t.q[h], t.k[h], t.v[h])))
    if pale:
        st.caption(pale)
    _caption_cut(("Q and K", t.d_k), ("V", t.d_v), table="“All the numbers” of Q, K and V below have every feature")
    if view.projections is not None:
        with lazy_expander("The weight matrices W_Q, W_K, W_V (this head's columns)", "weights_qkv") as box:
            if box.open:
                _show_head_weights(view)
    numbers_table(t.q[h], view.labels, frames.feature_labels(t.d_k, "q"), key="qkv", caption="All the numbers of Q",
                  asked=view.asked)
    numbers_table(t.k[h], view.keys, frames.feature_labels(t.d_k, "k"), key="qkv_k", caption="All the numbers of K")
    numbers_table(t.v[h], view.keys, frames.feature_labels(t.d_v, "v"), key="qkv_v", caption="All the numbers of V")


def _show_head_weights(view: StageView) -> None:
    """This head's columns of W_Q, W_K and W_V as three heatmaps."""
    t, h, p = view.trace, view.head, view.projections
    for name, w, width, prefix in (("W_Q", p.w_q, t.d_k, "q"), ("W_K", p.w_k, t.d_k, "k"), ("W_V", p.w_v, t.d_v, "v")):
        head_cols = w[:, h * width:(h + 1) * width]
        chart, _ = feature_heatmap(replace(view, fit=False), head_cols, frames.feature_labels(w.shape[0], "x"),
                                   f"{name} (d_model × {width}): rows = features of x, columns = of {prefix}",
                                   prefix=prefix, row_name="feature of x")
        show_chart(chart)


def _qkv_worked(view: StageView) -> worked.Worked:
    if view.x is None or view.projections is None:
        return worked.Worked("This view has no projection weights to show.", pd.DataFrame())
    return worked.projection(view.x, view.projections, view.labels, view.follow, view.head, view.trace.d_k)


def _scores_charts(view: StageView) -> list:
    return [token_heatmap(view, view.trace.scores[view.head], f"QKᵀ{head_title(view)}", asked=True)]


def _scores_extra(view: StageView) -> None:
    numbers_table(view.trace.scores[view.head], view.labels, view.keys, key="scores", asked=view.asked)


def _raw_scores_domain(view: StageView) -> tuple[float, float]:
    """The colour scale of the scores before and after ÷√d_k (stage 4) and masked (stage 5): one scale, so a
    number has the same colour on both stages and the shrink shows."""
    bound = float(view.trace.scores[view.head].abs().max()) or 1.0
    return -bound, bound


def slide_token_pair(view: StageView, left: tuple[torch.Tensor, str], right: tuple[torch.Tensor, str], *,
                     right_view: StageView | None = None, asked_right: bool = False, **options) -> list:
    """Two token charts (values, title) side by side on a slide, on one colour scale (``options``, as for
    ``token_heatmap``): row labels beside the left one, the colour bar beside the right one, cells of one width
    (47 px at 1280 px for 11 tokens: with each its own labels and colour bar they were 39 px, too narrow for
    numbers). ``right_view``: the right chart's, when its keys are others (cross-attention's source) and its rows
    the same queries; both then leave room under their cells for the longer key labels, so their rows stay level.
    ``asked_right``: the right chart is the one whose cell ``view.asked`` is."""
    right_view = right_view or view
    weights = options.get("weights", False)
    value_title, by_row = WEIGHT_TITLE if weights else "score", weights and view.colour == "row"
    legend_px = slide_legend_px(view, value_title, by_row=by_row)
    row = (SlideColumn(len(view.keys), slide_rows_px(view, view.labels)), SlideColumn(len(right_view.keys), legend_px))
    left_px = right_px = None
    if right_view is not view:  # each leaves as much room as the taller of the two charts' key labels take
        rooms = (charts.heatmap_fit_room(view.labels, view.font_size, value_title, by_row=by_row, legend=False),
                 charts.heatmap_fit_room([], view.font_size, value_title, by_row=by_row))

        def keys_px(chart: int, width: str = "containerSize()[0]") -> str:  # chart 0 (left) or 1's, at ``width``
            return charts.fitted_label_extent(list((view, right_view)[chart].keys), font_size=view.font_size,
                                              room_px=rooms[chart], width=width)

        left_px = f"max({keys_px(0)}, {keys_px(1, slide_column_width(row[1], row[0]))})"
        right_px = f"max({keys_px(1)}, {keys_px(0, slide_column_width(row[0], row[1]))})"
    (left_values, left_title), (right_values, right_title) = left, right
    return [in_slide_column(token_heatmap(view, left_values, left_title, legend=False, slide_row=row,
                                          col_labels_px=left_px, **options), row[0]),
            in_slide_column(token_heatmap(right_view, right_values, right_title, row_labels=False, slide_row=row,
                                          col_labels_px=right_px, asked=asked_right, **options), row[1])]


def _scaled_charts(view: StageView) -> list:
    raw, scaled = view.trace.scores[view.head], view.trace.scaled[view.head]
    domain = _raw_scores_domain(view)
    if view.fit:
        return slide_token_pair(view, (raw, f"before: QKᵀ{head_title(view)}"),
                                (scaled, f"after: QKᵀ / √d_k{head_title(view)}"), domain=domain, asked_right=True)
    return [token_heatmap(view, raw, f"before: QKᵀ{head_title(view)}", domain=domain, share=0.5),
            token_heatmap(view, scaled, f"after: QKᵀ / √d_k{head_title(view)}", domain=domain, share=0.5,
                          asked=True)]


def _unscaled_charts(view: StageView) -> list:
    """The softmax of the raw scores beside the lesson's weights (the softmax of the scaled scores)."""
    if view.fit:
        return slide_token_pair(view, (view.unscaled[view.head], "softmax(QKᵀ): without scaling"),
                                (view.trace.weights[view.head], "softmax(QKᵀ / √d_k): with scaling"), weights=True,
                                blocked=True)
    return [token_heatmap(view, view.unscaled[view.head], "softmax(QKᵀ): without scaling", weights=True,
                          blocked=True, share=0.5),
            token_heatmap(view, view.trace.weights[view.head], "softmax(QKᵀ / √d_k): with scaling", weights=True,
                          blocked=True, share=0.5)]


def _scaled_extra(view: StageView) -> None:
    t = view.trace
    on_slide = presenting()
    if view.pick:  # the lesson's own stage (not a real model's head): offer the comparison
        shown = ("On a slide they take the charts' place, and the scores before and after move below them."
                 if on_slide else "Drawn below, beside the softmax of the scaled scores.")
        st.toggle("Also show the softmax without ÷√d_k", key=UNSCALED_KEY,
                  help=f"The same scores through softmax without the scaling: see it saturate. {shown}", **BOUND)
    if t.d_k == 1:
        st.markdown(f"Here d_k = 1, so every score is divided by √1 = 1: the two charts are the same. "
                    f"{raise_d_k(view)} to see the scores shrink.")
    else:
        st.markdown(f"Here d_k = {t.d_k}, so every score is divided by √{t.d_k} = {t.d_k ** 0.5:.4f}. "
                    "Both charts share one colour scale so the shrink is visible.")
    if view.unscaled is not None:
        where = "the slide's charts: " if on_slide else ""
        if view.seeded:
            why = ("Unscaled scores spread out more the larger d_k is (their spread grows like √d_k), so the softmax "
                   "leans harder on the largest score. At a small d_k such as 4 the difference is mild; at d_k = 64 "
                   "many rows put almost all their weight on one key (the softmax saturates) and the softmax's "
                   "gradient is about half the scaled rows' (Why √d_k measures it), shrinking further as d_k grows."
                   + (f" {raise_d_k(view)} to see it." if t.d_k < MAX_D_K else ""))
        else:  # real word vectors are short: their scores stay near 0 and no row saturates at any d_k
            why = ("With seeded word vectors, whose features are about 1 in size, unscaled scores spread out more the "
                   "larger d_k is (like √d_k) and at d_k = 64 many rows put almost all their weight on one key. Real "
                   "word vectors are short (each feature near 0), so these scores stay close to 0 at any d_k and "
                   "even the unscaled rows stay almost even: choose the seeded word vectors "
                   f"{in_the_sidebar()} to see the softmax saturate.")
        largest = [mean_row_peak(w[view.head], t.mask[view.head]) for w in (view.unscaled, t.weights)]
        measured = (f" Here a row's largest weight is {largest[0]:.2f} on average without the scaling and "
                    f"{largest[1]:.2f} with it." if largest[0] is not None else "")
        st.markdown(f"**Without ÷√d_k** ({where}the softmax of the raw scores on the left, of the scaled ones on "
                    f"the right). {why}{measured}")
        below = _scaled_charts if on_slide else _unscaled_charts  # the slide drew the other pair
        for column, chart in zip(st.columns(2), below(replace(view, fit=False, pick=False))):
            with column:
                show_chart(chart)
    numbers_table(t.scaled[view.head], view.labels, view.keys, key="scaled", asked=view.asked)


def mean_row_peak(weights: torch.Tensor, allowed: torch.Tensor) -> float | None:
    """The largest weight of each row (T, S) that may attend to a key (``allowed``, bool (T, S)), on average; None
    when every row is blocked."""
    live = allowed.any(dim=-1)  # (T,)
    return float(weights.amax(dim=-1)[live].mean()) if bool(live.any()) else None


def raise_d_k(view: StageView) -> str:
    """How to raise d_k, a sentence's start: its own setting, or with “Q = K = V = X” the width and the heads."""
    if view.identity:
        return (f"Raise d_model or use fewer heads {in_the_sidebar()} (with “Q = K = V = X”, d_k = d_model / h = "
                f"{view.trace.num_heads * view.trace.d_k} / {view.trace.num_heads})")
    return f"Raise d_k {in_the_sidebar()}"


def _masked_charts(view: StageView) -> list:
    head = head_title(view)
    if view.fit:
        return _masked_slide_charts(view, head)
    # The title says what ✓ means: without a legend beside it, the grid's cells are as wide as the scores' and its
    # rows level with theirs (with one, a slide's grid lost every other key label, and a page's grid with 13 tokens
    # was shrunk into its half of the row, its rows 21 px against the scores' 23)
    grid = mask_chart(view.trace.mask[view.head], view.labels, view.keys, title=f"mask (✓ may attend){head}",
                      cell_size=view.fit_cell(len(view.keys) + 3, 0.5), font_size=view.font_size, fit=view.fit,
                      legend=False, follow_row=view.follow, pick=view.pick)
    return [grid, token_heatmap(view, view.trace.masked[view.head], f"scores, −∞ where blocked{head}",
                                domain=_raw_scores_domain(view), share=0.5)]


def _masked_slide_charts(view: StageView, head: str) -> list:
    """The mask beside the masked scores on a slide (``slide_mask_pair``): the scores' cells are 59 px at 1280 px for
    11 tokens (39 px when the two charts shared the slide equally)."""
    return slide_mask_pair(view, f"mask (✓ may attend){head}", view.trace.masked[view.head],
                           f"scores, −∞ where blocked{head}", domain=_raw_scores_domain(view))


def slide_mask_pair(view: StageView, mask_title: str, values: torch.Tensor, title: str, *, weights: bool = False,
                    **options) -> list:
    """A slide's mask grid (the view's head's mask, (T, S)) beside a token chart of ``values`` (T, S) (``weights``
    or scores; ``options`` as for ``token_heatmap``): the mask's cells MASK_CELL_SHARE as wide as the other's (a ✓
    needs less room than a number), its row labels naming both charts' rows, one colour bar. Both draw their key
    labels at the steeper of the angles their columns call for, and at −90° leave the same room under them (the
    browser thins such labels out in each chart on its own), so their cells start at one height and the rows stay
    level. Chart specs for ``side_by_side``."""
    keys = list(view.keys)
    value_title = WEIGHT_TITLE if weights else "score"
    by_row = weights and view.colour == "row"
    mask_room = charts.fit_room_px(view.labels, view.font_size)
    chart_room = charts.heatmap_fit_room([], view.font_size, value_title, by_row=by_row)
    grid_frame, chart_frame = slide_rows_px(view, view.labels), slide_legend_px(view, value_title, by_row=by_row)
    label_line = (view.font_size + 4) * len(keys)  # every steep key label's line under the mask
    room = PRESENTER_COLUMN_PX - SLIDE_COLUMN_GAP_PX - grid_frame - chart_frame
    share = 1.0 if room <= label_line else min(1.0, max(MASK_CELL_SHARE, label_line / (room - label_line)))
    grid_column = SlideColumn(round(len(keys) * share, 2), grid_frame)
    chart_column = SlideColumn(len(keys), chart_frame)
    row = (grid_column, chart_column)

    grid_angle = charts.fitted_shared_angle(keys, font_size=view.font_size, room_px=mask_room,
                                            beside=((slide_column_width(chart_column, grid_column), chart_room),))
    chart_angle = charts.fitted_shared_angle(keys, font_size=view.font_size, room_px=chart_room,
                                             beside=((slide_column_width(grid_column, chart_column), mask_room),))
    grid = mask_chart(view.trace.mask[view.head], view.labels, keys, title=mask_title, cell_size=SLIDE_CELL,
                      font_size=view.font_size, fit=True, legend=False, col_label_angle=grid_angle,
                      col_labels_px=charts.steep_label_extent(keys, font_size=view.font_size, angle=grid_angle),
                      follow_row=view.follow, pick=view.pick)
    chart = token_heatmap(view, values, title, weights=weights, row_labels=False, slide_row=row,
                          col_label_angle=chart_angle,
                          col_labels_px=charts.steep_label_extent(keys, font_size=view.font_size, angle=chart_angle),
                          **options)
    return [in_slide_column(grid, grid_column), in_slide_column(chart, chart_column)]


def _masked_extra(view: StageView) -> None:
    mask = view.trace.mask[view.head]
    blocked = int((~mask).sum())
    if blocked == 0:
        where = "beside the formula" if presenting() else "below"  # a slide has it by its formula (show_slide)
        st.info(_NOTHING_BLOCKED[view.mask_choice].format(tokens=len(view.labels), sidebar=in_the_sidebar(),
                                                          where=where))
        _custom_grid_link(view)
    if not presenting():  # a slide has it beside its formula (show_slide)
        _mask_toggle_button(view)
    if blocked:
        st.markdown(f"{blocked} of {mask.numel()} query–key pairs are blocked (grey, −∞). The other scores keep "
                    "their colours from the stage before (one colour scale for the scores before and after ÷√d_k).")
    numbers_table(view.trace.masked[view.head], view.labels, view.keys, key="masked")


_NOTHING_BLOCKED = {
    None: "Nothing is blocked in this head: the model lets every token attend to every token here.",
    "none": "No mask is set, so nothing is blocked at this stage. Show the causal mask with the button {where}, or "
            "pick another mask {sidebar}.",
    "causal": "The causal mask blocks nothing here: a single token may attend to itself.",
    "padding": "The padding mask blocks nothing here: the sentence already has {tokens} tokens, so no [PAD] token "
               "was added. Pad it to more tokens {sidebar} to see the [PAD] keys blocked.",
    "custom": "The custom mask allows every pair. Untick cells of the grid on the Masking page to block them.",
}
"""What the masking stage says when nothing is blocked, by the lesson's mask (None: a model's own mask)."""


def _mask_toggle(view: StageView) -> str | None:
    """The mask stage 5 offers in one click, if any: the causal mask where no mask is set (the lesson's default),
    and no mask again where that button set the causal mask."""
    if view.mask_choice == "none":
        return "causal"
    return "none" if view.mask_choice == "causal" and st.session_state.get(MASK_TRIED_KEY) else None


def _mask_toggle_button(view: StageView) -> None:
    """Stage 5's one-click mask (``_mask_toggle``), if any: on a slide the mask is a menu away (and what a click on it
    moved, ``SLIDE_MOVE_NOTE_KEY``, is said under it)."""
    if (choice := _mask_toggle(view)) == "causal":
        st.button("Use the causal mask", icon=":material/visibility_off:", key="try_causal_mask",
                  help="Sets the causal mask on every page; “Back to no mask” here undoes it.", on_click=_choose_mask,
                  args=("causal",))
    elif choice == "none":
        st.button("Back to no mask", icon=":material/visibility:", key="back_to_no_mask", on_click=_choose_mask,
                  args=("none",))


SLIDE_MOVE_NOTE_KEY = "_slide_move_notes"
"""Session: on a slide, (the stage shown, the short notes) of what a whole run of the page moved (the followed token,
the head), which the next slide drawn says under stage 5's mask button if it is that stage: the audience saw the
outlined row jump, and the toast that says it on a page covered Next on a slide."""


MASK_TRIED_KEY = "_causal_mask_tried"
"""Session flag: stage 5's button set the causal mask, so the stage offers to go back to no mask."""


def _choose_mask(choice: str) -> None:
    st.session_state.update({"mask": choice, RERUN_PAGE: True, MASK_TRIED_KEY: choice == "causal"})


def _custom_grid_link(view: StageView) -> None:
    """Under the lesson's custom mask, a link to the page where its grid is edited."""
    if view.mask_choice == "custom":
        st.page_link("pages/masking.py", label="Edit the custom grid on the Masking page", icon=":material/grid_on:")


def _softmax_charts(view: StageView) -> list:
    t = view.trace
    return [token_heatmap(view, t.weights[view.head], f"attention weights{head_title(view)}", weights=True,
                          blocked=True, asked=True)]


def _softmax_extra(view: StageView) -> None:
    t = view.trace
    if view.mask_choice == "custom" and bool(t.mask[view.head].all()):  # the same weights as no mask at all
        st.info("These are the weights with no mask: " + _NOTHING_BLOCKED["custom"][0].lower()
                + _NOTHING_BLOCKED["custom"][1:])
        _custom_grid_link(view)
    pad_rows_note(view)  # right under the weights, whose [PAD] rows it is about
    # on a slide the lines and the followed row's bars share one screen (one under the other, each took half of
    # the slide's width and a screen of its own)
    lines, bars = st.columns(2) if _lines_beside_bars(view) else (st.container(), st.container())
    with lines:
        show_lines(view)
    blocked_row = not bool(t.mask[view.head, view.follow].any())
    with bars:
        st.markdown(f"**Row of {plain(view.follow_label)}**: before and after softmax (grey bars: negative "
                    "scores). " + ("Every key of this row is blocked (−∞), so there is no score to compare and no "
                                   "bar: softmax would divide 0 by 0, and this app gives the row zero weights instead."
                                   if blocked_row else
                                   "Softmax compares the scores of one row: the lower a score, the smaller its share "
                                   "of the weight, whatever its sign; a key alone in its row gets all of it."))
        show_chart(softmax_row_spec(view))
        if view.hidden_tokens and not blocked_row and (note := hidden_share_note(
                plain(view.follow_label), 1.0 - float(t.weights[view.head, view.follow].sum()))):
            st.caption(note)
    numbers_table(t.weights[view.head], view.labels, view.keys, key="softmax", asked=view.asked)


def pad_rows_note(view: StageView, *, why_weighted: bool = True) -> None:
    """Under the padding mask: why the [PAD] rows have weights at all (unless ``why_weighted`` is False: the page
    said so already), and why they are even when they are (a student saw 1/7 on every real key of each [PAD] row,
    while the sidebar said the mask hides the [PAD] tokens)."""
    pads = [i for i, label in enumerate(view.labels) if label.endswith(PAD_TOKEN)]
    if view.mask_choice != "padding" or not pads:
        return
    rows = f"row {pads[0] + 1}" if len(pads) == 1 else f"rows {pads[0] + 1}–{pads[-1] + 1}"
    words = (f"**The [PAD] {rows}** {'gets' if len(pads) == 1 else 'get'} weights too: a padded position is computed "
             "like any other query, and only its keys are blocked. Nothing reads these rows: a model drops the output "
             "at padded positions.") if why_weighted else ""
    weights, allowed = view.trace.weights[view.head, pads], view.trace.mask[view.head, pads]
    even = bool(allowed.any(dim=-1).all()) and torch.allclose(
        weights, allowed / allowed.sum(dim=-1, keepdim=True), atol=1e-6)
    if even and view.x is not None and not bool(view.x[pads].any()):
        real = int(allowed[0].sum())
        words += (" Each is spread evenly" if why_weighted else f"**The [PAD] {rows}** are each spread evenly") + (
            f", 1/{real} ≈ {1 / real:.3f} on every real token: a [PAD] token's vector is all zeros, so its query is 0, "
            "every score is 0, and softmax of equal scores is even.")
    if words:
        st.markdown(words)


BARS_FRAME_PX = 60
"""What a bar chart draws beside its bars: the value axis with its title and numbers, and the gap to the next."""


SLIDE_HALF_PX = (PRESENTER_COLUMN_PX - SLIDE_COLUMN_GAP_PX) // 2
"""One of two columns side by side on a slide."""
SLIDE_ROW_BARS_PX = 150
"""Height of each of the followed row's two bar charts on a slide, one above the other beside the lines chart."""
MIN_SLIDE_BAR_PX = 46
"""Narrowest bar of the followed row's bars beside the lines chart on a slide; a longer row is drawn under the lines
as on a page (at 30 px, the printed numbers of 18 bars ran into their keys' names)."""
WIDEST_SLIDE_CELL_PX = 2 * SLIDE_CELL
"""Widest bar of a slide's bar chart, or cell of a heatmap drawn at its own size (three keys across a whole slide
drew bars of 380 px)."""
SLIDE_BARS_FRAME_PX = 90
"""What a bar chart draws beside its bars at a slide's font: the value axis with its title and numbers."""
SLIDE_LINES_FRAME_PX = 100
"""What a line chart draws beside its plot at a slide's font: the value axis with its title and numbers."""


def slide_bar_px(bars: int, column_px: int = PRESENTER_COLUMN_PX) -> int:
    """A slide's bar width: ``bars`` bars across ``column_px`` (a row's bars span the slide as its heatmaps do; at a
    page's size they took half of it), at most WIDEST_SLIDE_CELL_PX."""
    return min(WIDEST_SLIDE_CELL_PX, (column_px - SLIDE_BARS_FRAME_PX) // max(bars, 1))


def _lines_beside_bars(view: StageView) -> bool:
    """Whether stage 6's lines chart and the followed row's bars share a row: on a slide (presenter mode's font),
    when the row's bars fit in half of it."""
    return view.font_size >= PRESENTER_FONT and slide_bar_px(len(view.keys), SLIDE_HALF_PX) >= MIN_SLIDE_BAR_PX


def softmax_row_spec(view: StageView) -> dict:
    """The followed token's row before and after softmax, as bars; on a slide one above the other, in half its
    width (beside the lines chart)."""
    t = view.trace
    before = frames.row_frame(t.masked[view.head, view.follow], frames.AxisLabels(view.keys))
    after = frames.row_frame(t.weights[view.head, view.follow], frames.AxisLabels(view.keys))
    keys = max(len(view.keys), 1)
    if _lines_beside_bars(view):
        cell = min(view.cell_size, slide_bar_px(keys, SLIDE_HALF_PX))
        return cached_spec(charts.before_after_softmax, before, after, cell_size=cell, font_size=view.font_size,
                           stacked=True, height=SLIDE_ROW_BARS_PX)
    cell = max(min(view.cell_size, 600 // keys), 18)
    stacked = 2 * (len(view.keys) * cell + BARS_FRAME_PX) > view.width_budget  # side by side, shrunk to unreadable
    return cached_spec(charts.before_after_softmax, before, after, cell_size=cell, font_size=view.font_size,
                       stacked=stacked)


LINES_WIDTH_PX = 340
"""Width of the lines chart at the page's font, within a phone's 358-px column (at 420 px its words on the right
were cut there, "3·s"); it grows with a larger font (presenter mode), so its title fits."""
LINES_SPAN_PX = 160
"""Least width, at the page's font, between the words on the two sides of the lines chart: long words widen the
chart rather than squeeze its lines."""


LINES_TITLE = "weights as lines, query (left) → key (right)"


def lines_spec(view: StageView, head: int | None = None, title: str | None = None, half: bool = False) -> dict:
    """One head's weights as lines from each query (left) to each key (right); the followed token's in colour.
    ``half``: on a slide, in one of two columns (``lines_width``)."""
    head = view.head if head is None else head
    rows = max(len(view.labels), len(view.keys))
    return cached_matrix_chart(charts.lines_view, view.trace.weights[head], view.labels, view.keys,
                               blocked=~view.trace.mask[head], follow_row=view.follow, font_size=view.font_size,
                               row_height=max(18, min(view.cell_size, 520 // rows)),
                               title=title or LINES_TITLE,
                               pick=view.pick,
                               width=lines_width(view, half))


def lines_width(view: StageView, half: bool = False) -> int:
    """The lines chart's width in px: LINES_WIDTH_PX at the page's font, wider for long words, within the page (on
    a slide within half of it, beside the followed row's bars or, ``half``, another head's lines)."""
    words = 2 * charts.lines_label_room_px(list(view.labels) + list(view.keys), view.font_size)
    grown = max(LINES_WIDTH_PX, words + LINES_SPAN_PX) * view.font_size // PAGE_FONT
    return int(min(SLIDE_HALF_PX if half or _lines_beside_bars(view) else view.width_budget, grown))


def show_lines(view: StageView, head: int | None = None, title: str | None = None, half: bool = False) -> None:
    """``lines_spec`` drawn; with ``view.pick`` a click on a query word follows it."""
    head = view.head if head is None else head
    spec = lines_spec(view, head, title, half)
    key = f"lines_{head}"
    if view.pick:
        show_chart(spec, key=key, on_select=on_pick(key, "row_index", follow_token))
    else:
        show_chart(spec)


def _context_charts(view: StageView) -> list:
    t = view.trace
    context = t.context[view.head]  # (T, d_v)
    if view.fit:
        return _context_slide_charts(view, context)
    cell = None
    if not view.stacked:  # one cell size for A and C, so C's numbers are as large as A's
        columns = len(view.keys) + shown_features(context)[0].shape[-1]
        cell = shared_scale_cell(view, view.labels, columns, 2, legends=2)
    chart, _ = feature_heatmap(view, context, view.labels, f"context = A·V{head_title(view)}",
                               prefix="c", share=1 / 3, cell=cell, asked=True)
    return [token_heatmap(view, t.weights[view.head], f"weights A{head_title(view)}", weights=True, blocked=True,
                          share=2 / 3, cell=cell), chart]


def _context_slide_charts(view: StageView, context: torch.Tensor) -> list:
    """The weights A (T, S) beside the context C (T, d_v) on a slide: A's row labels name C's rows too, each has its
    colour bar, and their cells are one width (``slide_columns``): 58 px at 1280 px for 11 tokens and d_v = 4, whose
    weights print at 20 px (each with its own row labels: 37-px cells, 13-px weights). C leaves as much room under
    its cells as A's key labels take, so their rows stay level."""
    keys = list(view.keys)
    weights_column = weights_slide_column(view)
    features = shown_features(context)[0].shape[-1]
    context_column = SlideColumn(features, slide_legend_px(view, "feature value"))
    row = (weights_column, context_column)
    if features > len(keys) and slide_row_value_font(view, row, signed=True) is None:
        # C's cells hold no numbers at one width with A's anyway (a real head's 32 features beside 9 tokens): C takes
        # half as much of the row as A, and A's cells the room for its weights (they were 11-px numbers in a quarter
        # of it, 12-px in half of it for 13 tokens)
        context_column = SlideColumn(len(keys) * COLOURS_ONLY_SHARE, context_column.frame_px)
        row = (weights_column, context_column)
    keys_px_beside = slide_key_labels_px(view, width=slide_column_width(weights_column, context_column))
    weights = token_heatmap(view, view.trace.weights[view.head], f"weights A{head_title(view)}", weights=True,
                            blocked=True, slide_row=row, col_labels_px=slide_key_labels_px(view))
    chart, _ = feature_heatmap(view, context, view.labels, f"context = A·V{head_title(view)}", prefix="c",
                               row_labels=False, slide_row=row, col_labels_px=keys_px_beside, asked=True)
    return [in_slide_column(weights, weights_column), in_slide_column(chart, context_column)]


def _context_extra(view: StageView) -> None:
    t = view.trace
    _caption_cut(("the context", t.d_v))
    numbers_table(t.context[view.head], view.labels, frames.feature_labels(t.d_v, "c"), key="context",
                  asked=view.asked)


def concat_shown(num_heads: int, d_v: int) -> int:
    """How many of each head's d_v columns the concat's chart shows: all of them when the concat has at most
    MAX_FEATURES_SHOWN or one head (whose chart shows its first features, as any feature chart), else the first few of
    every head (at least one), so that every head's block is in it (the first 32 of a real model's 12 × 32 columns
    were head 1's alone: no concatenation to be seen)."""
    if num_heads == 1 or num_heads * d_v <= MAX_FEATURES_SHOWN:
        return d_v
    return max(1, min(d_v, MAX_FEATURES_SHOWN // num_heads))


def _concat_charts(view: StageView) -> list:
    t = view.trace
    h, d_v = t.num_heads, t.d_v
    each = concat_shown(h, d_v)
    labels = frames.head_column_labels(h, d_v)
    if each == d_v:
        chart, _ = feature_heatmap(view, t.concat, view.labels, "Concat(head_1 … head_h)", col_labels=labels)
        return [chart]
    columns = [head * d_v + j for head in range(h) for j in range(each)][:MAX_FEATURES_SHOWN]  # head by head
    chart, _ = feature_heatmap(view, t.concat[:, columns], view.labels,
                               f"Concat(head_1 … head_h) (the first {each} of each head's {d_v} columns)",
                               col_labels=[labels[i] for i in columns])
    return [chart]


def _concat_extra(view: StageView) -> None:
    t = view.trace
    h, d_v = t.num_heads, t.d_v
    each = concat_shown(h, d_v)
    if h == 1:
        st.info("With one head there is nothing to concatenate: the concat equals the head's context.")
    else:
        feature = min(3, each)  # a column the chart has ("h2·c3" with d_v = 1 named none)
        st.markdown(f"{h} heads × d_v = {d_v} → {h * d_v} columns. Head i fills columns "
                    f"(i−1)·{d_v} + 1 to i·{d_v}; the column “h2·c{feature}” is feature {feature} of head 2's "
                    f"context (column {d_v + feature}).")
    if each < d_v:
        st.caption(f"The chart shows the first {each} of each head's {d_v} columns ({min(h * each, MAX_FEATURES_SHOWN)}"
                   f" of {h * d_v}), head by head; “All the numbers” below has every column.")
    else:
        _caption_cut(("the concat", h * d_v))
    numbers_table(t.concat, view.labels, frames.head_column_labels(t.num_heads, t.d_v), key="concat")


def _output_charts(view: StageView) -> list:
    chart, _ = feature_heatmap(view, view.trace.output, view.labels, "output = Concat · W_O", prefix="o")
    return [chart]


def _output_extra(view: StageView) -> None:
    t = view.trace
    _caption_cut(("the output", t.output.shape[1]))
    if view.projections is not None and view.projections.w_o is None:
        st.info("No output projection W_O is set here, so the output equals the concat.")
    rows = t.output.shape[0]
    hidden = (f" (the {rows} shown; the model's output has a row for each of its {rows + view.hidden_tokens} "
              "tokens, special ones included)") if view.hidden_tokens else ""
    st.markdown(f"The output's shape: {counted(rows, 'token')} × {t.output.shape[1]} features{hidden}, the same width "
                "as X, so attention layers can be stacked.")
    if view.projections is not None and view.projections.w_o is not None:
        with lazy_expander("The weight matrix W_O", "weights_o") as box:
            if box.open:
                w_o = view.projections.w_o
                concat_rows = frames.head_column_labels(t.num_heads, t.d_v)[:w_o.shape[0]]
                chart, _ = feature_heatmap(replace(view, fit=False), w_o, concat_rows,
                                           f"W_O ({w_o.shape[0]} × {w_o.shape[1]}): rows = concat features",
                                           prefix="o", row_name="feature of concat")
                show_chart(chart)
    numbers_table(t.output, view.labels, frames.feature_labels(t.output.shape[1], "o"), key="output")


_PARTS = {
    "embed": (_embed_charts, _embed_worked, _embed_extra),
    "qkv": (_qkv_charts, _qkv_worked, _qkv_extra),
    "scores": (_scores_charts, lambda v: worked.scores(v.trace, v.keys, v.follow, v.head), _scores_extra),
    "scaled": (_scaled_charts, lambda v: worked.scaled(v.trace, v.keys, v.follow, v.head), _scaled_extra),
    "masked": (_masked_charts, lambda v: worked.masked(v.trace, v.keys, v.follow, v.head), _masked_extra),
    "softmax": (_softmax_charts, lambda v: worked.softmax(v.trace, v.keys, v.follow, v.head), _softmax_extra),
    "context": (_context_charts, lambda v: worked.context(v.trace, v.keys, v.follow, v.head), _context_extra),
    "concat": (_concat_charts, lambda v: worked.concat(v.trace, v.labels, v.follow), _concat_extra),
    "output": (_output_charts, lambda v: worked.output(v.trace, v.projections, v.labels, v.follow), _output_extra),
}

STAGE_RECORDS = tuple(StageRecord(stage, *_PARTS[stage.key]) for stage in STAGES)
"""Every stage of one attention layer, in order."""

_EXTRA_SPECS = {"softmax": (lines_spec, softmax_row_spec)}
"""The charts a stage's extra material draws (besides its expanders), by stage key."""


def lesson_view(lesson, labels: list[str], follow: int, head: int, *, cell_size: int, font_size: int,
                colour: str = "fixed", unscaled: torch.Tensor | None = None) -> StageView:
    """The step-through's view of a toy lesson (``attention_core.Lesson``): its X and projection weights, and a
    click on a chart's row follows that token."""
    seeded = lesson.config.seeded_embeddings
    return StageView(lesson.trace, labels, follow, head, cell_size, font_size, x=lesson.x,
                     projections=lesson.projections, embed_words=None if seeded else EMBED_WORDS_REAL,
                     colour=colour, pick=True, seeded=seeded, unscaled=unscaled, mask_choice=lesson.config.mask,
                     identity=lesson.config.init == "identity")


def prebuild_stages(view: StageView, keys: tuple[str, ...] | None = None) -> None:
    """Make the charts and worked numbers of the stages ``keys`` (default: every stage) for ``view`` into the
    shared cache (what the first visitor of each stage would otherwise wait for)."""
    for rec in STAGE_RECORDS:
        if keys is not None and rec.key not in keys:
            continue
        rec.charts(view)
        _shown_worked(view, rec)
        for spec in _EXTRA_SPECS.get(rec.key, ()):
            spec(view)
