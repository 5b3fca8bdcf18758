"""The shared sidebar: draws every control, returns one Settings object.

Every page starts with ``settings = lesson_settings("Its title")``. Each control is keyed, bound to
the URL (``bind="query-params"``) and kept for the whole session, so a pasted link
restores the exact view and settings survive page switches. Invalid input is shown as a
message in the page and the page stops there: never a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from dataclasses import dataclass, replace
from typing import NoReturn

import streamlit as st
import torch

from attention_core import (MAX_D_K, MAX_D_MODEL, MAX_D_V, MAX_HEADS, MAX_SEED, MAX_SENTENCE_CHARS, MAX_TOKENS,
                            AttentionInputError, Lesson, LessonConfig, available_devices, lesson_tokens, run_lesson)

from attention_core.tokens import first_tokens, tokenize

from .frames import token_labels
from .grid_input import GRID_INPUT_JS, HAND_GRID_KEY, MASK_GRID_KEY
from .pickling import TensorsAsArrays
from .progress import keep_progress
from .text import (EXAMPLE_SENTENCES, LEARNING_PATH, REAL_VECTORS_CAPTION, STAGE_KEYS, STAGES, counted,
                   next_on_path, path_file, path_title, plain, previous_on_path, quoted)
from .url_state import (BOUND, CURRENT_PAGE, LINK_PARAMS, check_link, keep_bound_values_in_link, keep_in_link,
                        linked_flag, linked_stage, linked_token, note_ignored, set_link_value, show_link_notes,
                        write_opened_link)
from .questions import OPEN_CHECK_PREFIX
from .render import show_chart
from .views import (PAGE_CELL, PAGE_FONT, PRESENTER_CELL, PRESENTER_FONT, SLIDE_COLUMN_GAP_PX, SLIDE_FRAME_PX,
                    SLIDE_MOVE_NOTE_KEY, SLIDE_ROW_PX, WORKED_FIRST_KEY, StageView, presenting, richest_word,
                    presenter_charts_zoom_style, side_by_side)

APP_ROOT = Path(__file__).resolve().parent.parent
"""The folder of app.py, which the page files' paths start from."""

# Many visitors share a small CPU: one thread per computation keeps every rerun responsive.
torch.set_num_threads(int(os.environ.get("ATTENTION_TORCH_THREADS", "1")))

DEFAULTS = LessonConfig()
MASK_LABELS = {"none": "every token sees every token", "causal": "no peeking ahead (GPT-style)",
               "padding": "hide the [PAD] tokens", "custom": "your grid, edited on the Masking page"}
INIT_LABELS = {"random": "seeded N(0, 1/d_model)", "identity": "Q = K = V = X"}
DEFAULT_PAD_TO = 10
PASTE_CHARS = 10 * MAX_SENTENCE_CHARS
"""The sentence box takes a long paste, so the page can say what the limit is instead of dropping it."""
GRID_PARAM = "grid"
GRID_KEY = "custom_grid"


@dataclass(frozen=True)
class Settings:
    """What a page needs: the lesson (tokens, X, weights, trace), the followed token and head, view options."""

    config: LessonConfig
    lesson: Lesson | None  # None only on a page that does not use it (lesson_settings' uses_lesson=False)
    labels: list[str]
    follow: int
    head: int
    presenter: bool
    colour: str = "fixed"

    @property
    def cell_size(self) -> int:
        return PRESENTER_CELL if self.presenter else PAGE_CELL

    @property
    def font_size(self) -> int:
        return PRESENTER_FONT if self.presenter else PAGE_FONT


URL_KEYS = tuple(LINK_PARAMS)
"""Every key a link may hold; pages draw different subsets of the widgets bound to them."""


def keep_page_settings(keys) -> None:
    """Re-assign each of ``keys`` the session holds (widget values), before their widgets are drawn: a value that
    came from a link survives a page switch even where the next page draws its widget for the first time (see
    Streamlit's widget clean-up), and a value re-assigned is sent with its widget on this run, so the browser shows
    it even where its control had not been drawn yet."""
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def open_check_keys() -> list[str]:
    """The session's keys of the Check yourself sections opened (an opened one is open again on coming back)."""
    return [key for key in st.session_state if str(key).startswith(OPEN_CHECK_PREFIX)]


def keep_settings_across_pages() -> None:
    """Every setting a link may hold, and the Check yourself sections opened: see ``keep_page_settings``."""
    keep_page_settings((*URL_KEYS, *open_check_keys()))


PAGE_TOP_KEY = "page_top"


def page_top():
    """A block for everything a page draws above a fragment (the switch, the title, a slide's Settings menu,
    captions), laid out as if it were not there (``display: contents``, in PAGE_STYLE). Streamlit knows a fragment
    by its place on the page: the stage's fragment sat at another place on a slide (no title, no captions), so a
    Next pressed while the presenter switch's rerun ran went to a fragment the slide no longer had and was lost.
    Inside this block the fragment's place is the same in both modes."""
    return st.container(key=PAGE_TOP_KEY)


def page_start(title: str, *, slides: bool = False) -> bool:
    """What every page does first: check the link, keep settings across pages, draw the presenter switch and
    the title. A page of ``slides`` has no title in presenter mode: its stage picker names each slide, and the
    slide's charts take the room. Returns whether presenter mode is on."""
    check_link()
    keep_settings_across_pages()
    presenter = _presenter_toggle()
    if not (presenter and slides):
        st.title(title)
    return presenter


def lesson_settings(title: str, *, slides: bool = False, uses_lesson: bool = True) -> Settings:
    """Draw the page title and the settings (the sidebar, or a slide's Settings menu); return the settings, or show
    what is wrong and stop the page. ``slides``: as in ``page_start``. A page that reads only the device and the
    view options (``uses_lesson=False``) is not stopped by settings that cannot make a lesson (an empty sentence,
    say): it gets a note instead, and ``lesson`` is None."""
    presenter = page_start(title, slides=slides)
    places = _control_places(presenter)
    config = _config_controls(places)
    config = _fit_custom_grid(config)
    try:
        lesson = cached_lesson(config, real_word_vectors(config))
    except AttentionInputError as err:
        show_link_notes()
        if uses_lesson:
            st.error(f"**Please adjust the settings.** {err}", icon=":material/warning:")
            offer_first_tokens(config.sentence, "sentence")
            stop_page()
        st.caption(f"The settings cannot make a lesson yet ({plain(str(err))}); this page carries on with what "
                   "does not need one.")
        offer_first_tokens(config.sentence, "sentence")
        return Settings(config, None, [], 0, 0, presenter)
    labels = token_labels(lesson.tokens)
    with places.follow:
        follow, head = _follow_controls(labels, config.num_heads, config.mask, lesson.trace.mask[0].sum(dim=-1))
        colour = _colour_control()
        if presenter and slides:
            _worked_first_control()
    with places.sizes:
        _limits_note()
    show_link_notes()
    return Settings(config, lesson, labels, follow, head, presenter, colour)


@dataclass(frozen=True)
class SentenceSettings:
    """What a real-model page needs from the settings: the sentence and the view options."""

    sentence: str
    presenter: bool
    colour: str = "fixed"

    cell_size = Settings.cell_size
    font_size = Settings.font_size


def sentence_settings(title: str, *, slides: bool = False) -> SentenceSettings:
    """Like ``lesson_settings``, for pages that read only the sentence (a real model brings its own sizes,
    weights and mask): the settings are the sentence alone."""
    presenter = page_start(title, slides=slides)
    with _control_places(presenter, columns=1).sentence:
        sentence = _sentence_control()
        st.caption("The model brings its own sizes, weights and mask; the toy lesson's settings are kept for the "
                   "other pages.")
        colour = _colour_control()
        if presenter and slides:
            _worked_first_control()
    show_link_notes()
    return SentenceSettings(sentence, presenter, colour)


def _worked_first_control() -> None:
    """On a page of stages shown as slides: whether a clicker's Page Down shows a stage's worked numbers before
    going on (a clicker sends only Page Down and Page Up, and they went from slide to slide, never to the numbers
    under each one)."""
    st.toggle("Page Down: worked numbers, then the next stage", key=WORKED_FIRST_KEY,
              help="For a clicker, which sends only Page Down and Page Up. On: Page Down first brings up what is "
                   "under the stage's charts (its worked numbers, and on stage 6 the weights as lines and bars), a "
                   "screen at a time, then goes to the next stage; Page Up goes back to the top of the slide, then "
                   "to the stage before. → and ← always go stage by stage.",
              **BOUND)


SETTINGS_MENU_KEY = "slide_settings"
"""The Settings menu that holds the sidebar's controls on a slide (presenter mode hides the sidebar)."""


@dataclass(frozen=True)
class ControlPlaces:
    """Where each group of settings is drawn: all in the sidebar, or on a slide in a Settings menu's columns."""

    sentence: object
    sizes: object
    mask: object
    follow: object
    numbers: object


def _control_places(presenter: bool, columns: int = 3) -> ControlPlaces:
    """The sidebar; in presenter mode a Settings menu at the top right, so a lecturer can change the sentence, a
    size, the mask, the head or the followed token without leaving the slide. The widgets keep their keys, so
    their values are the same wherever they are drawn."""
    if not presenter:
        return ControlPlaces(*[st.sidebar] * 5)
    menu = st.popover("Settings", icon=":material/tune:", key=SETTINGS_MENU_KEY)
    if columns == 1:
        return ControlPlaces(*[menu] * 5)
    with menu, st.container(key="settings_columns"):
        viewing, sizes, words = st.columns(3, gap="medium")
    # Columns of about equal height, so that the menu fits a 1280 × 800 window without a scroll: the head and the
    # token first (what a lecturer changes most), then the seed; the sizes; the sentence, then the mask.
    return ControlPlaces(follow=viewing.container(), numbers=viewing.container(), sizes=sizes,
                         sentence=words.container(), mask=words.container())


def cached_lesson(config: LessonConfig, x=None) -> Lesson:
    """``run_lesson`` cached by its (frozen) config and the given word vectors x (numpy (T, d_model) or None);
    each run gets its own copy."""
    return _lesson_copy(config, x).value


@st.cache_data(max_entries=32, max_size="64MB", show_spinner=False)  # a lesson ≤ 3.7 MB (32 tokens, real vectors)
def _lesson_copy(config: LessonConfig, x=None) -> TensorsAsArrays[Lesson]:
    return TensorsAsArrays(run_lesson(config, None if x is None else torch.from_numpy(x)))


def real_word_vectors(config: LessonConfig):
    """The real model's word vectors for the lesson's tokens, or None for seeded embeddings."""
    if config.seeded_embeddings:
        return None
    from .models import cached_word_embeddings

    tokens, _ = lesson_tokens(config)
    with st.spinner(f"Looking up the words in {config.embeddings}…"):
        return cached_word_embeddings(config.embeddings, tuple(tokens))


def real_vectors_caption(settings: Settings) -> str:
    """Why a lesson on a real model's word vectors has nearly even weights (their length, over their width)."""
    x = settings.lesson.x  # (T, d_model)
    return REAL_VECTORS_CAPTION.format(model=settings.config.embeddings, width=x.shape[1],
                                       length=float(x.norm(dim=1).mean()))


def _fit_custom_grid(config: LessonConfig) -> LessonConfig:
    """Drop a custom grid that no longer fits the sentence (it changed length) and say so."""
    grid = config.custom_mask
    if config.mask != "custom" or grid is None:
        return config
    try:
        count = len(lesson_tokens(config)[0])
    except AttentionInputError:
        return config
    if len(grid) == count and all(len(row) == count for row in grid):
        return config
    st.session_state.pop(GRID_KEY, None)
    st.query_params.pop(GRID_PARAM, None)
    st.info(f"The custom mask did not fit the sentence's {counted(count, 'token')}, so it was reset to “everything "
            "allowed”.")
    return replace(config, custom_mask=None)


REAL_HEAD_LINE_KEY = "real_head_line"
"""The container of Inside a real head's line over its slide (which page, whose head, how well it matches): the
slide's charts leave it its height, so that the stage's words still fit under them (they ran past the window's foot)."""
PRESENTER_STYLE = """<style>
[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'] {display: none;}
.stMainBlockContainer {max-width: 100%; padding: 4.1rem 1.5rem 2rem 1.5rem;}
.stMarkdown p, .stMarkdown li {font-size: 1.35rem; line-height: 1.45;}
[data-testid='stTable'] :is(th, td, p), [data-testid='stMain'] [data-testid='stMarkdownContainer'] table :is(th, td) {
  font-size: clamp(1.15rem, 1.625vw, 1.6rem) !important; line-height: 1.4;}
[data-testid='stTable'] th {color: rgb(49, 51, 63) !important;}
h1 {font-size: clamp(2.4rem, 3vw, 3.2rem) !important;} h2, h3 {font-size: clamp(1.9rem, 2.375vw, 2.6rem) !important;}
h4 {font-size: clamp(1.5rem, 1.875vw, 2.1rem) !important;}
.katex {font-size: 1.45em !important;}
.st-key-slide_formula {min-height: 4.6rem; justify-content: center;}
.st-key-slide_formula .katex-display {margin: 0;}
[data-testid='stMain'] button p, [data-testid='stMain'] input[role='combobox'],
[data-testid='stMain'] label p, [data-testid='stCaptionContainer'] {font-size: 1.3rem !important;}
[data-testid='stMain'] [data-testid='stCaptionContainer'] {opacity: 0.85;}
[data-testid='stMain'] [data-testid='stMetricLabel'] p {font-size: clamp(1.3rem, 1.625vw, 1.6rem) !important;}
[data-testid='stMetricValue'] {font-size: clamp(1.9rem, 2.5vw, 2.4rem) !important;}
[data-testid='stMain'] :is([data-testid='stExpander'] summary p, [data-testid='stTab'] p,
  [data-testid='stSliderThumbValue'] p, [data-testid='stSliderTickBar'] p, [data-testid='stAlertContainer'] p,
  [data-testid='stAlertContainer'] li), [data-testid='stMain'] :is(input, textarea) {font-size: 1.3rem !important;}
[data-baseweb='popover'] [role='option'] {font-size: 1.3rem !important;}
[data-testid='stMain'] .st-key-link_notes [data-testid='stAlertContainer'] p {font-size: 1rem !important;}
[data-testid='stMain'] [data-testid='stSliderThumbValue'] {margin-top: -0.55rem;}
/* a slider's two ends, which Streamlit shows only under a hovering pointer: no one hovers on a projector */
[data-testid='stMain'] [data-testid='stSliderTickBar'] {opacity: 1 !important;}
@media (min-width: 1180px) {[data-testid='stMain'] [data-testid='stDataFrame'] {zoom: 1.4; height: auto !important;}
  [data-testid='stMain'] :is([data-testid='stElementContainer']:has(> [data-testid='stFullScreenFrame'] >
    [data-testid='stDataFrame']), [data-testid='stFullScreenFrame']:has(> [data-testid='stDataFrame'])) {
    height: auto !important;}}
@media (min-width: 1800px) {[data-testid='stMain'] [data-testid='stDataFrame'] {zoom: 1.8;}}
.st-key-slide [data-testid='stVegaLiteChart'] {height: calc(100vh - 395px) !important; min-height: 260px;}
[data-testid='stMain']:has(.st-key-REAL_HEAD_LINE_KEY) .st-key-slide [data-testid='stVegaLiteChart'] {
  height: calc(100vh - 430px) !important;}
.st-key-REAL_HEAD_LINE_KEY {margin-bottom: -1rem;}
[data-testid='stMain']:has(.st-key-link_notes) .st-key-slide [data-testid='stVegaLiteChart'] {
  height: calc(100vh - 477px) !important;}
[data-testid='stMain']:has(.st-key-lone_key_note) .st-key-slide [data-testid='stVegaLiteChart'] {
  height: calc(100vh - 440px) !important;}
.st-key-step input[role='combobox'] {font-size: 1.7rem !important; font-weight: 600; height: 2.6rem;}
.st-key-presenter {position: fixed; top: 0.7rem; right: 4rem; z-index: 999990; background: white;
  padding: 0 0.5rem; border-radius: 0.5rem;}
.st-key-slide_settings {position: fixed; top: 0.55rem; right: 19rem; z-index: 999990; width: auto !important;}
[data-testid='stPopoverBody']:has(.st-key-settings_columns) {min-width: min(1100px, 94vw);
  max-height: calc(100vh - 72px) !important;}
.st-key-settings_columns [data-testid='stVerticalBlock'] {gap: 0.6rem;}
[data-testid='stPopoverBody'] h2 {font-size: 1.4rem !important; padding-top: 0.2rem;}
[data-testid='stPopoverBody'] :is([data-testid='stCaptionContainer'], .stMarkdown p) {font-size: 1rem !important;}
:is([data-testid='stTopNavSection'], [data-testid='stTopNavDropdownLink']) p {font-size: 1.05rem !important;}
@media (max-width: 1180px) {.st-key-slide_settings button :is(span:has(> [data-testid='stIconMaterial']),
    div:has(> span > [data-testid='stIconMaterial'])) {display: none;}
  .st-key-slide_settings {right: 15.7rem;} .st-key-slide_settings button {padding: 0 0.6rem; min-width: 0;}
  .st-key-slide_settings button p {font-size: 1rem !important;} .st-key-presenter label p {font-size: 1rem !important;}
  :is([data-testid='stTopNavSection'], [data-testid='stTopNavDropdownLink']) p {font-size: 0.875rem !important;}}
[data-testid='stMain'] .stProgress {margin-top: -0.6rem;}
[data-testid='stMain'] :is(.stProgress p, [data-testid='stPageLink'] p) {font-size: 1.3rem !important;}
[data-testid='stMain']:focus, [data-testid='stMain'] *:focus:not(input):not(button) {outline: none;}
.st-key-slide [data-testid='stElementToolbar'] {display: none;}
[data-testid='stMain'] [data-testid='stElementContainer']:has([data-testid='stVegaLiteChart']) {margin-top: 0;}
#vg-tooltip-element.vg-tooltip {font-size: 1.15rem; padding: 6px 10px;}
[class*='st-key-MASK_GRID_KEY'] [data-testid='stDataFrame'] {filter: url(#ticks-in-mask-blue);}
</style>""".replace("REAL_HEAD_LINE_KEY", REAL_HEAD_LINE_KEY).replace(
    "MASK_GRID_KEY", MASK_GRID_KEY)
"""Presenter mode: no sidebar, large text (also in expander and tab labels, slider values, inputs, select options and
message boxes; captions darker, as their 60 % grey, 3.9 : 1 on white, is what a projector washes out first, and on a
slide a caption is often the key to the chart beside it) and tables, and the slide's charts as tall as the window
allows while the stage's words (up to three lines) still fit under them. The page menus at the top, a progress bar's
words and page links are enlarged too; a slide's charts have no toolbar (it lay over the formula), no chart keeps the
page's room for one above it, and a chart's hover box is as large as the slide's captions (it was 12 px, the size of
the page's), and the page draws no focus frame when a clicker's key has moved it on (a grey frame appeared round the
slide from the second one). A slide's formula sits in a box as tall as the tallest one (stage 3's sum with its limits,
73 px), centred in it and without the formula's own margin above (the gap under the progress bar is there already):
the charts under it start at one height on every stage (at 1280 × 800 their top moved between 226 and 269 px as the
formulas did, and stepping through the stages made the grid jump).

Headings grow with the window as the charts do, at 1280 px their fixed sizes, up to about 1.35 times them (a section's
heading 30.4 px at 1280, 38 px at 1600 and 41.6 px from 1752 px on): at 1920 × 1080 a chart's title, drawn 1.5 times
larger with its chart (SLIDE_ZOOMS), stood 33 px bold over a 30-px section heading, its own section's name smaller
than the chart's.

Tables. Pages draw their read-only tables with st.table in presenter mode (HTML, enlarged here, as is a Markdown
table such as What it costs' table from the paper, which kept the page's 16 px). Their text grows with the window,
as the slide's charts do: 1.625vw, so 20.8 px at 1280 px (the slide's labels' size), 25.6 px from 1575 px on and
18.4 px at 1132 px or less. At a fixed 18.4 px the worked numbers and the real model's per-head table looked small
beside the rest of a slide, and at 1920 × 1080 more so (18.4 px of 1080 rows is what 13.6 px is of 800). A wide
table scrolls inside its own box. A metric's label grows as the tables do and its value is half as large again (it
was set to the labels' 1.3rem: no larger than its label, and smaller than on the page). The dataframes left, the
editable grids (Work it by hand's and the mask editor) and the by-hand marks, are zoomed 1.4× on a window 1180 px
wide or more and 1.8× from 1800 px on (their canvas text is 14 px, out of reach of a font size: 19.6 and 25.2 px;
there the grids stay within their columns, and a click still lands on the cell under it; at 1024 px the four grids
of Work it by hand side by side would be cut at their columns' edges). A grid given a height (the mask editor) is
as tall as its zoomed rows: Streamlit fixes its element's height before the zoom, and the editor's last rows lay
over the caption and the "Check yourself" box under it.

A note on a link's unusable values keeps the page's size: the slide's charts leave room for it at that size, and
for the line that says the followed token may attend to one key only. The Settings menu (the sidebar's controls)
sits beside the presenter switch, in its usual small text, as tall as the window allows (its three columns fit
1280 × 800 unscrolled). On a window narrower than 1180 px the menu shows its name only, in a smaller text (the
slides send a lecturer "under Settings at the top"), and the page menus and the switch's label keep a smaller text,
so that the three fit. (A slide's charts size the numbers in their cells to the cells the browser draws, see
``charts.MIN_FITTED_VALUE_PX``: a font set here for a window width printed them at 9 px in cells of 32 px and in the
context's cells of 62.)"""

PRESENTER_GAP_PX = SLIDE_COLUMN_GAP_PX
"""The gap between two of ``st.columns`` (Streamlit's default "small" gap, 1rem)."""

SLIDE_ROWS_STYLE = "<style>" + "".join(
    f".st-key-slide_rows_{rows} [data-testid='stVegaLiteChart'] "
    f"{{min-height: {rows * SLIDE_ROW_PX + SLIDE_FRAME_PX}px;}}"
    for rows in range(1, MAX_TOKENS + 1)) + "</style>"
"""``.st-key-slide_rows_<T>``: a slide of T rows keeps every row at least SLIDE_ROW_PX tall."""


LINK_NOTE_PX = 82
"""The height a one-line note about a link's ignored values (``url_state.show_link_notes``, at the top of a page)
takes from the first screen of a slide."""


def show_slide_row(key: str, view: StageView, drawn: list[dict], room_px: int, *, first_screen: bool = False) -> None:
    """On a slide: the chart specs ``drawn`` side by side (each carrying its ``views.SlideColumn``: their cells are
    one width) as wide as the window and as tall as it allows once ``room_px`` is left for the menu bar and what
    shares their screen, every row of ``view`` at least SLIDE_ROW_PX; their numbers fit the cells the browser draws.
    ``key`` names the row's container (its columns' is ``<key>_columns``). ``first_screen``: on the page's first
    screen, which a note about the link's ignored values shares too (Overview's key labels fell below the window)."""
    under_note = (f"[data-testid='stMain']:has(.st-key-link_notes) .st-key-{key} [data-testid='stVegaLiteChart'] "
                  f"{{height: calc(100vh - {room_px + LINK_NOTE_PX}px) !important;}}" if first_screen else "")
    with st.container(key=key):
        st.html(f"<style>.st-key-{key} [data-testid='stVegaLiteChart'] {{height: calc(100vh - {room_px}px) "
                f"!important; min-height: {len(view.labels) * SLIDE_ROW_PX + SLIDE_FRAME_PX}px;}}{under_note}</style>")
        for column, spec in zip(side_by_side(drawn, view, key=f"{key}_columns"), drawn):
            with column:
                show_chart(spec, fit=True)


CHART_SIDEWAYS_CUE = ('content: "scroll sideways →"; position: absolute; top: -1.3rem; right: 0; font-size: 0.875rem; '
                      "color: rgba(49, 51, 63, 0.75); pointer-events: none; opacity: 0; "
                      "animation: chart-sideways-cue linear both;")
"""The declarations of a chart's "scroll sideways →" (an ``::after`` over its top right corner, shown while the chart
scrolls sideways): add the ``animation-timeline`` of the chart's scroll box."""
PAGE_STYLE = """<style>
[data-testid='stMain']:focus::before {box-shadow: none;}
[class*='st-key-HAND_GRID_KEY'] [data-testid='stElementToolbar'] {display: none;}
.stMainBlockContainer {padding-top: 3.6rem;}
[data-testid='stTable'] td [data-testid='stMarkdownContainer'] {max-width: none;}
[data-testid='stVegaLiteChart'] svg {max-width: 100%; height: auto;}
.st-key-clicker_keys {position: absolute; left: -10000px; height: 1px; overflow: hidden; visibility: hidden;}
[data-testid='stElementContainer']:has(#page-keys) {position: absolute;}
[data-testid='stLayoutWrapper']:has(> .st-key-page_top), .st-key-page_top {display: contents;}
[class*='st-key-path_card_'] [data-testid='stPageLink'] p {font-size: 1.2rem !important; font-weight: 600;}
[class*='st-key-path_card_'] [data-testid='stColumn']:first-child [data-testid='stMarkdownContainer'] p {
  font-size: 1.75rem; line-height: 1;}
[data-testid='stCaptionContainer'] {opacity: 0.8;}
[data-testid='stMain'] :is(button, label:has([role='switch'])) :is(.stMarkdownEllipsis, .stMarkdownEllipsis p) {
  white-space: normal; text-overflow: clip; overflow: visible; overflow-wrap: break-word;}
[data-testid='stRadioCaption'] {cursor: pointer;}
[data-testid='stSidebarHeader'] {height: 2.75rem; margin-bottom: 0.25rem;}
[data-testid='stSidebarNavLink'] {min-height: 1.5rem; margin-top: 0; margin-bottom: 0;}
[data-testid='stSidebarNavLink'] span {line-height: 1.5rem;}
[data-testid='stNavSectionHeader'] {margin-top: 0.25rem;}
[data-testid='stMain'] [data-testid='stVegaLiteChart'] {max-width: 100%; overflow-x: auto;}
[data-testid='stMain'] [data-testid='stElementContainer']:has([data-testid='stVegaLiteChart']) {margin-top: 1.25rem;}
.st-key-sentence [data-testid='InputInstructions'] span:last-child {display: none;}
[class*='st-key-progress_store'] {display: none;}
:is([data-testid='stSidebarNavLink'], [data-testid='stPageLink-NavLink'],
  [data-testid='stBaseButton-elementToolbar']):focus-visible,
:is([data-testid='stCheckbox'], [data-testid='stRadio']) label:has(input:focus-visible) {
  outline: 3px solid #3b5bdb; outline-offset: 2px; border-radius: 0.25rem;}
[data-testid='stElementToolbar']:focus-within {opacity: 1 !important;}
@media (hover: none) {
  [data-testid='stMain'] [data-testid='stElementContainer']:has([data-testid='stDataFrame']) {margin-top: 1.75rem;}
}
[data-testid='stMain'] :is(.katex-display, [data-testid='stMarkdownContainer'] table) {
  background: linear-gradient(to right, white 30%, rgba(255, 255, 255, 0)) left / 2rem 100%,
    linear-gradient(to left, white 30%, rgba(255, 255, 255, 0)) right / 2rem 100%,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.25), rgba(0, 0, 0, 0)) left / 0.8rem 100%,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.25), rgba(0, 0, 0, 0)) right / 0.8rem 100%;
  background-repeat: no-repeat; background-attachment: local, local, scroll, scroll;}
@keyframes chart-sideways-cue {from {opacity: 1;} 90% {opacity: 1;} to {opacity: 0;}}
[data-testid='stMain'] [data-testid='stElementContainer']:has(.dvn-scroller, [data-testid='stGraphVizChart']) {
  position: relative; timeline-scope: --grid-sideways;}
[data-testid='stMain'] :is(.dvn-scroller, [data-testid='stGraphVizChart']) {scroll-timeline: --grid-sideways x;}
[data-testid='stMain'] [data-testid='stElementContainer']:has(.dvn-scroller, [data-testid='stGraphVizChart'])::after {
  content: "scroll sideways →"; position: absolute; bottom: -1.25rem; right: 0; font-size: 0.8rem;
  color: rgba(49, 51, 63, 0.75); pointer-events: none; opacity: 0;
  animation: chart-sideways-cue linear both; animation-timeline: --grid-sideways;}
@media (max-width: 640px) {
  [data-testid='stMain'] [data-testid='stVegaLiteChart'] svg {max-width: none;}
  [data-testid='stMain'] [data-testid='stMarkdownContainer'] table {display: block; overflow-x: auto;}
  [data-testid='stMain'] [data-testid='stGraphVizChart'] {overflow-x: auto;}
  [data-testid='stMain'] [data-testid='stGraphVizChart'] svg {min-width: 640px;}
  [data-testid='stMain'] [data-testid='stElementContainer']:has([data-testid='stVegaLiteChart']) {
    position: relative; timeline-scope: --chart-sideways;}
  [data-testid='stMain'] [data-testid='stVegaLiteChart'] {scroll-timeline: --chart-sideways x;}
  [data-testid='stMain'] [data-testid='stElementContainer']:has([data-testid='stVegaLiteChart'])::after {
    CHART_SIDEWAYS_CUE animation-timeline: --chart-sideways;}
  [data-testid='stMain'] [data-testid='stPageLink'] p {white-space: normal; line-height: 1.4;}
  [data-testid='stMain'] [role='tablist'] {flex-wrap: wrap; overflow-x: visible; row-gap: 0.25rem;}
  [data-testid='stExpandSidebarButton'] {min-width: 44px; min-height: 44px;}
  [data-testid='stSidebarNavLink'] {min-height: 2.5rem;}
  [data-testid='stTooltipIcon'] button {padding: 0.75rem; margin: -0.75rem;}
}
</style>""".replace("CHART_SIDEWAYS_CUE", CHART_SIDEWAYS_CUE).replace(
    "HAND_GRID_KEY", HAND_GRID_KEY)
"""Every page: the page starts under Streamlit's header instead of 6rem down (more of it on the first screen); Work it
by hand's typed grids have no toolbar (its eye, download, search and full-screen buttons lay over the words above a
grid whenever the pointer was on it, and a 3 × 3 answer needs none of them); a table
cell's text may take the cell's width (Streamlit stops it at 400 px, which broke a worked sum into two lines beside
empty room); charts shrink to a narrower column instead of running past it (but see small screens below); the buttons
that take a presentation clicker's Page Up / Page Down keys stay out of sight, and the element that holds this style and
the clicker keys' script (``#page-keys``) out of the page's flow (an element that is more than a style would take a row
and its gap); ``page_top``'s block lays its elements out as the page's own (as a row of its own, with nothing in the
flow on a slide, its gap pushed the slide 16 px down); a Start here card's title (its page link) is larger than the text
under it; a button in a narrow column wraps its words instead of cutting them ("Start from a wi…" beside a 1024-px
laptop's sidebar); captions are 80 % opaque (Streamlit's 60 % grey was 3.9 : 1 on white, under the 4.5 : 1 small text
needs to be read, and a slide makes them darker still); the keyboard's focus is a 3-px ring in the theme's blue on a
page link, a switch, a checkbox, a radio option or a toolbar button (Streamlit's was a faint grey background or none),
and a chart's or table's toolbar shows while one of its buttons has the focus (it stayed invisible, the focus with it);
the sidebar's list of pages is compact, so that with every page listed the sentence box still starts on an 800-px
screen. A chart keeps 20 px more above it: the toolbar Streamlit shows over a chart's top right corner on hover (its ⋯
menu and full-screen button, 36 px tall) lay over the last line of the text above it ("(head 1):" of Cross-attention's
"What 1·The reads from the source"); a slide keeps the room (see PRESENTER_STYLE).

On a touch screen, where Streamlit always shows a grid's toolbar (its eye, download, search and full-screen buttons)
over the grid's top right corner, a grid keeps 28 px more above it: the toolbar lay over the end of the line above it,
Work it by hand's "Σ" of S_ij = Σ_m q_i,m k_j,m and the real model's "[SEP]."

Small screens: a chart wider than the page (a real model's grid, drawn on a canvas, does not shrink) scrolls inside
its own box instead of widening the page; on a phone (640 px or less) a chart keeps its size and scrolls rather
than shrinking until its numbers cannot be read, and so do a wide text table and a diagram (the pipeline's nine
boxes in a row were 4-px text). Work it by hand lays its grids out by its main column's own width
(``hand.wrapping_columns``). The sentence box does not show its character counter: its limit is a long paste's,
not the sentence's (MAX_TOKENS tokens, said in its help). A formula or text table wider than its column (on a
phone, or beside a laptop's open sidebar) shows a shadow at the edge it scrolls past (a cut formula such as
"Q = XW_Q, K = XW_K, V = XW_V," looked whole); the shadow goes when that edge is scrolled into view. A chart wider
than the screen says "scroll sideways →" over its top right corner (its attention weights ran off the screen with
nothing to say so); the words show only while the chart's box scrolls (the box's scroll position drives them) and
fade out at its end. A table wider than its column (at any width: a laptop's open sidebar leaves 564 px) says the
same under its right corner, driven by its grid's own scroll box, and so does a diagram (on a phone, Overview's nine
boxes seemed to end at "mask", Cross-attention's hid its cross-attention box). A page
link's words wrap there instead of being cut ("New here? Start here: a path through the pages, in orde"), and so do
a row of tabs (Work it by hand's four stages ran off the screen, the last ones reached only by scrolling the row).
Fingers get larger targets there: the button that opens the sidebar (where the settings are) and the sidebar's
page links are 44 and 40 px tall (28 and 24), and a help icon (16 px) takes a tap on the 40 px around it."""


BACK_KEY, NEXT_KEY, NEXT_PAGE_KEY = "back", "next", "next_page"
"""Keys of the step-through's Back and Next, and of the page button in Next's place on its last slide."""
GENERATION_BACK_KEY, GENERATION_NEXT_KEY = "generation_back", "generation_next"
STEP_KEYS = {"forward": (NEXT_KEY, NEXT_PAGE_KEY, GENERATION_NEXT_KEY), "back": (BACK_KEY, GENERATION_BACK_KEY)}
"""Keys of the buttons that take a step on a page (the step-through's stages, its last slide's page button,
Generation's tokens): while one of them can still be pressed, the clicker's keys press it instead of moving on to
the next section."""
SECTION_TOP_PX = 72
"""On a slide without steps, how far below the top of the window the clicker's keys bring a section's heading: under
the slide's menu bar (60 px), with a little air."""
NEAR_HEADING_PX = 100
"""A heading this close to where the clicker's keys bring headings counts as there: the keys go on past it."""
SMALL_REST_PX = 60
"""Forward, a press that would move less than half a screen goes on past what runs over the window's foot when at
most this much of it is out of view (a chart's axis labels), which is then skipped."""
STEPS_WAIT_MS = 4000
"""A clicker's press made while the page still runs the step before waits for it at most this long, then is
dropped: a slide that moved on seconds after the last press would surprise the lecturer more than a lost press."""
START_HERE_PATH = "start-here"
"""Start here's url path: its foot links to the path's first page."""
PATH_CARD_KEY = "path_card"
"""Start here's card of page n is the container ``<PATH_CARD_KEY>_<n>``."""
PATH_LINK_KEY = "path_link"
"""The container of a page's link to the next page on the path: on a slide the clicker's keys follow it from the
bottom of the page."""
PATH_END_KEY = "path_end"
"""The container of the last page's link back to Start here. The clicker's keys leave it alone: a lecturer's last
slide stays on the screen however often they are pressed (they had opened Start here, a page for learning alone,
then the Overview, in front of the class)."""
PATH_BACK_LINK_KEY = "path_back_link"
"""The container of a slide's hidden link to the page before on the path: the clicker's keys follow it back from the
top of the page."""


CLICKER_KEYS_JS = """<span id="page-keys"></span><script>
if (!window.clickerKeysAfterUse) {
  window.clickerKeysAfterUse = true;
  // The mask editor's tick boxes are drawn (on a canvas) in a mid grey, which on a projector looked switched off
  // beside the mask charts' blue. On a slide its grid is seen through this filter (PRESENTER_STYLE): every grey keeps
  // its lightness except the tick boxes' mid grey, which becomes the charts' ALLOWED_COLOR. (Made element by element:
  // Streamlit drops a script whose text holds markup.)
  const svgElement = (parent, name, attributes) => {
    const element = parent.appendChild(document.createElementNS("http://www.w3.org/2000/svg", name));
    for (const [attribute, value] of Object.entries(attributes)) element.setAttribute(attribute, value);
    return element;
  };
  const tickFilter = svgElement(svgElement(document.body, "svg", {width: 0, height: 0, style: "position: absolute",
    "aria-hidden": "true"}), "filter", {id: "ticks-in-mask-blue", "color-interpolation-filters": "sRGB"});
  const tickTransfer = svgElement(tickFilter, "feComponentTransfer", {});
  const greys = (from, to) => Array.from({length: to - from + 1}, (_, i) => (from + i) / 16);  // kept as they are
  for (const [channel, blue, edge] of [["R", 0.173, 0.46], ["G", 0.435, 0.59], ["B", 0.733, 0.74]])
    svgElement(tickTransfer, "feFunc" + channel, {type: "table",
      tableValues: [...greys(0, 7), blue, blue, blue, edge, ...greys(12, 16)].join(" ")});
  const ways = {ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1};  // a clicker's keys: forward or back
  // A dialog of Streamlit's over a slide (the one saying a link's page does not exist, after a mistyped page) stayed
  // over every slide after it, for the rest of the lecture: a clicker cannot press its ×. Its first key closes it.
  // (These words must not name the dialog's title: a script's text is part of the page's.)
  document.addEventListener("keydown", (event) => {
    const dialog = document.querySelector("[data-testid='stDialog'] [role='dialog']");
    if (!(event.key in ways) || !dialog || !presenting()) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    dialog.querySelector("button[aria-label='Close']")?.click();
  }, true);
  // the button that can still take a step that way on this page (the step-through's stages, Generation's tokens)
  const stepButton = (way) => document.querySelector(
    STEP_KEYS[way > 0 ? "forward" : "back"].map((key) => `.st-key-${key} button:not([disabled])`).join(", "));
  // a slide: presenter mode, also on a page without the lesson's Settings menu (Start here, Work it by hand)
  // a chart of the page that is not drawn yet (its box holds no svg or canvas)
  const chartsComing = (main) => [...main.querySelectorAll("[data-testid='stVegaLiteChart']")]
    .some((chart) => !chart.querySelector("svg, canvas"));
  const presenting = () => !!document.querySelector(".st-key-slide_settings, .st-key-presenter input:checked");
  // A choice in the Settings menu made with the mouse (not a text box, and not reached with the keyboard, which
  // keeps the keys a radio or a slider moves by) leaves the slide's keys to the slide, and Page Up / Page Down, a
  // clicker's keys, do nothing to a radio, a switch, a button or a one-line box: both close the menu and take the step.
  // (a key pressed makes the focused element :focus-visible before its keydown is seen: the pointer is tracked)
  let pointerAt = -Infinity, pointerFocused = null;
  // A step button that had the keyboard's focus (Tab to Next, then Enter) and is gone or greyed out after its step
  // (stage 9's Next becomes the next page's button, stage 1's Back is disabled) left the focus on the page, and Tab
  // started again from the top: the focus goes on to the button that can still step (``keepStepFocus``), or where
  // none can, to the stage menu between them (it had gone to Back at stage 9, and the next Enter went back a stage).
  // Back or Next under a stage (``stage_footer``) pressed with the keyboard leaves the focus on the new stage's Back
  // or Next at its top, where the page scrolls to (it was lost, or stayed on a button off the screen).
  let stepFocus = 0;  // 1 or -1: a forward or a back step button has the keyboard's focus
  let footFocus = 0;  // the same for the stage's foot's Next and Back
  document.addEventListener("pointerdown", () => { pointerAt = performance.now(); }, true);
  document.addEventListener("focusin", (event) => {
    const byPointer = performance.now() - pointerAt < 1000;
    pointerFocused = byPointer ? event.target : null;
    const key = event.target.closest?.("[class*='st-key-']");
    const is = (way) => !!key && STEP_KEYS[way].some((k) => key.classList.contains(`st-key-${k}`));
    stepFocus = byPointer ? 0 : is("forward") ? 1 : is("back") ? -1 : 0;
    const foot = (name) => !!key && key.classList.contains(`st-key-${name}`);
    footFocus = byPointer ? 0 : foot("next_bottom") ? 1 : foot("back_bottom") ? -1 : 0;
  }, true);
  const stageMenu = () => document.querySelector(".st-key-step input");
  const focusStep = (way) => (stepButton(way) || stageMenu() || stepButton(-way))?.focus({preventScroll: true});
  // On a slide the page's scrolling part holds the focus when nothing else does: ↓ ↑, Space, Home and End then
  // scroll it as on any web page (with the focus on the body they scrolled nothing, and every key that took a step
  // or went to a section left it there)
  const focusSlide = () => {
    if (document.activeElement && document.activeElement !== document.body) return;
    if (presenting()) document.querySelector("[data-testid='stMain']")?.focus({preventScroll: true});
  };
  const keepStepFocus = () => {
    if (!stepFocus || (document.activeElement && document.activeElement !== document.body)) return;
    focusStep(stepFocus);
  };
  // (after a change of the page, once the browser's own focus moves are done: between a Tab's focusout and its
  // focusin the body has the focus, and a change made then, a help icon's tooltip closing, took it to the slide,
  // so Tab went round the presenter switch, its help and the slide, and never reached Settings or Next)
  let focusDue = false;
  const focusSlideSoon = () => {
    if (focusDue) return;
    focusDue = true;
    requestAnimationFrame(() => { focusDue = false; keepStepFocus(); focusSlide(); });
  };
  // (a slider keeps ← →, however it was reached: they are how a value such as d_k = 32 is set exactly after a drag;
  // a tab chosen with the mouse keeps them too, to move between tabs, but Page Down had scrolled the page under it
  // and stopped at its foot. A one-line text or number box leaves a clicker's Page keys too, which do nothing in it:
  // after a new sentence typed in Settings and Enter, the clicker did nothing and the menu stayed over the slide.)
  const clickerChoice = (active, key) => !!active && (
    (active === pointerFocused && active.matches(
      "input[type='radio'], input[type='checkbox'], button, [role='combobox'][aria-expanded='false']"))
    || (key.startsWith("Page") && active.matches(
      "input[type='radio'], input[type='checkbox'], input[type='range'], [role='slider'], [role='tab'], button, "
      + "input[type='text'], input[type='number'], input:not([type])")));
  // the app's run: "running" while the page's script runs, "notRunning" once it has finished
  const scriptState = () => document.querySelector("[data-testid='stApp']")?.getAttribute("data-test-script-state");
  const menuChoice = (active, key) => !!active?.closest("[data-testid='stPopoverBody']") && clickerChoice(active, key);
  // Settings' "Page Down: worked numbers, then the next stage" (its slides hold their worked numbers in a box of
  // their own): Page Down brings the stage's worked numbers up under the menu bar, then a screen at a time while they
  // go on below the window, and only then lets the stage's own key take the step; Page Up goes back to the top of
  // the slide before it goes to the stage before. (Registered first: these come before the step keys below.)
  document.addEventListener("keydown", (event) => {
    const numbers = document.querySelector(".st-key-WORKED_FIRST_KEY_numbers");
    const main = document.querySelector("[data-testid='stMain']");
    const active = document.activeElement;
    // (the switch just turned on in the Settings menu keeps the focus there: the key closes the menu and goes on)
    const inMenu = !!active?.closest("[data-testid='stPopoverBody']");
    if (!numbers || !main || !event.key.startsWith("Page") || event.repeat || !presenting()
        || scriptState() === "running" || (inMenu && !menuChoice(active, event.key))
        || active?.matches("textarea, [contenteditable='true']")) return;
    const top = main.getBoundingClientRect().top + SECTION_TOP_PX, bottom = main.getBoundingClientRect().bottom;
    const box = numbers.getBoundingClientRect();
    // (how far the page can still go down: on a short slide the numbers never reach the top line, and a press that
    // asked for it anyway moved nothing, again and again, and the clicker was stuck on that stage)
    const left = main.scrollHeight - main.clientHeight - main.scrollTop;
    let step = null;
    if (event.key === "PageUp") step = main.scrollTop > 2 ? -main.scrollTop : null;
    else if (left > 2 && box.top > top + NEAR_HEADING_PX) step = Math.min(box.top - top, left);
    else if (left > 2 && box.bottom > bottom + 4)
      step = Math.min(box.bottom - bottom, main.clientHeight - SECTION_TOP_PX - 60, left);
    if (step === null) return;  // the numbers were seen (or the slide is at its top): the key takes the step
    event.preventDefault();
    event.stopImmediatePropagation();
    if (inMenu) document.querySelector(".st-key-slide_settings button")?.click();  // the menu's button closes it
    if (active && active !== document.body && active !== main) active.blur();
    focusSlide();
    main.scrollBy({top: step});
  }, true);
  // whether the focused element keeps ``key`` for itself (a text box, a slider, a radio, a tab, a menu; a grid's cell
  // keeps the arrows that move between cells, a clicker's Page keys leave it)
  const keepsKey = (active, key) => !!active && active !== document.body
    && !active.closest(".st-key-presenter, .st-key-slide_settings") && (active.matches(
      "input, textarea, select, [contenteditable='true'], [role='slider'], [role='radio'], [role='tab']")
    || !!active.closest("[data-testid='stPopoverBody'], [data-baseweb='popover']")
    || (!key.startsWith("Page") && !!active.closest("[data-testid='stDataFrame']")));
  // On a slide scrolled down from its top (a lecturer gone on through the last stage's numbers, or back at
  // Generation's foot from the page after it), ← and Page Up go back up it, a section or a screen at a time, before
  // they take a step back: a step taken there was off the screen (six Page Ups took Generation's cache from 7 tokens
  // back to 1 while the screen stayed the same, and Inside a real head's last stage was left for stage 8 from the
  // foot of its numbers). (After the worked-numbers switch's keys, which go back to the top of the slide at once.)
  document.addEventListener("keydown", (event) => {
    const main = document.querySelector("[data-testid='stMain']");
    if (ways[event.key] !== -1 || event.defaultPrevented || !main || !presenting() || !stepButton(-1)
        || main.scrollTop <= 2 || keepsKey(document.activeElement, event.key)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const active = document.activeElement;
    if (active && active !== document.body && active !== main) active.blur();
    focusSlide();
    if (scriptState() !== "running") moveSection(-1);
  }, true);
  document.addEventListener("keydown", (event) => {
    const active = document.activeElement;
    const slide = document.querySelector(".st-key-slide_settings");
    const fromMenu = !!slide && event.key in ways && menuChoice(active, event.key);
    if (!(event.key in ways) || (event.key.startsWith("Page") && !presenting()) || !active
        || !(fromMenu || active.closest(".st-key-presenter, .st-key-step, .st-key-slide_settings"))
        || active.getAttribute("aria-expanded") === "true") return;
    const button = document.querySelector(".st-key-" + (ways[event.key] > 0 ? NEXT_KEY : BACK_KEY) + " button");
    if (!button && !fromMenu) return;  // a page without stages: the section keys below take them
    event.preventDefault();
    event.stopPropagation();
    active.blur();
    focusSlide();
    if (!fromMenu) return button.click();
    slide.querySelector("button")?.click();  // the menu's own button closes it
    const step = stepButton(ways[event.key]);
    if (step) step.click();
    else moveSection(ways[event.key]);
  }, true);
  // The same rule on the slide itself: a switch, an answer, a slider or a button there chosen with the mouse (Why
  // √d_k's d_k, stage 4's "softmax without ÷√d_k", a Check yourself answer) had kept the clicker's keys, which then
  // moved the slider or the answer in front of the class, or did nothing; they now take the step or go on.
  document.addEventListener("keydown", (event) => {
    const way = ways[event.key], active = document.activeElement;
    if (!way || event.defaultPrevented || !presenting() || !document.querySelector("[data-testid='stMain']")
        || active?.closest("[data-testid='stPopoverBody'], .st-key-presenter, .st-key-step, .st-key-slide_settings")
        || !clickerChoice(active, event.key)) return;
    event.preventDefault();
    event.stopPropagation();
    active.blur();
    focusSlide();
    const step = stepButton(way);
    if (step) step.click();
    else if (scriptState() !== "running")
      moveSection(way);
  }, true);
  // On a slide of a page without steps of its own, the same keys go from one numbered section to the next (its
  // heading to the top of the window) and back: such a slide is a long page, and they did nothing useful on it.
  document.addEventListener("keydown", (event) => {
    const way = ways[event.key];
    // a step that can still be taken is the key's (the last step of Generation's slide goes on through its sections)
    if (!way || event.defaultPrevented || !document.querySelector("[data-testid='stMain']") || !presenting()
        || stepButton(way)) return;
    const active = document.activeElement;
    if (keepsKey(active, event.key)) return;
    event.preventDefault();
    event.stopPropagation();
    if (active?.closest(".st-key-presenter, .st-key-slide_settings, [data-testid='stDataFrame']")) active.blur();
    focusSlide();
    // not while the page runs: a page just opened from the last one's link is still growing, and keys pressed while
    // it came (nothing seemed to happen) had taken the new page most of the way down before its title was seen
    if (scriptState() !== "running")
      moveSection(way);
  }, true);
  function moveSection(way) {  // the next (way 1) or the last (-1) section's heading under the menu bar, or a screen
    const main = document.querySelector("[data-testid='stMain']");
    const link = document.querySelector(".st-key-PATH_LINK_KEY a");  // the page's last line: the next page
    // (not while a chart or an element is still coming: a page just opened looked short, and its first press
    // went on to the next page unseen)
    const drawing = document.querySelector("[data-testid='stSkeleton']") || chartsComing(main);
    // (at the foot, or once all above the link and its rule is in view: a press that only brought the link up,
    // 12 px on What it costs and 90 on Cross-attention, looked dead)
    const allAboveLinkSeen = () => Math.max(...[...main.querySelectorAll(
      "[data-testid='stElementContainer'], [data-testid='stExpander']")]
      .filter((e) => !e.closest(".st-key-PATH_LINK_KEY, .st-key-PATH_BACK_LINK_KEY") && !e.querySelector("hr"))
      .map((e) => e.getBoundingClientRect()).filter((r) => r.height > 0).map((r) => r.bottom))
      <= main.getBoundingClientRect().bottom + 4;
    // a row of tabs (Work it by hand's four stages): forward from the foot of one, its next tab opens at the top of
    // the row, and back from the top of the row the tab before does (a clicker showed only the first of four)
    const tabs = [...main.querySelectorAll("[role='tablist']")].find((list) => list.getBoundingClientRect().height);
    const chosen = tabs ? [...tabs.querySelectorAll("[role='tab']")] : [];
    const at = chosen.findIndex((tab) => tab.getAttribute("aria-selected") === "true");
    const openTab = (tab) => {
      tab.click();
      requestAnimationFrame(() => main.scrollBy({top: tabs.getBoundingClientRect().top
        - main.getBoundingClientRect().top - SECTION_TOP_PX}));
    };
    const line = main.getBoundingClientRect().top + SECTION_TOP_PX;
    if (way > 0 && link && (main.scrollTop + main.clientHeight >= main.scrollHeight - 2 || allAboveLinkSeen()))
      return drawing ? undefined : at >= 0 && at < chosen.length - 1 ? openTab(chosen[at + 1]) : link.click();
    if (way < 0 && at > 0 && tabs.getBoundingClientRect().top >= line - NEAR_HEADING_PX
        && tabs.getBoundingClientRect().top < main.getBoundingClientRect().bottom) return openTab(chosen[at - 1]);
    const back = document.querySelector(".st-key-PATH_BACK_LINK_KEY a");  // hidden: the page before
    if (way < 0 && back && main.scrollTop <= 2) {
      const target = new URL(back.href);
      arriveAtEnd = target.searchParams.has("step") ? null : {path: target.pathname, until: null};
      return back.click();
    }
    // a page's numbered sections (st.subheader); none: a screen
    const headings = [...main.querySelectorAll("h3")];
    const offsets = headings.map((h) => h.getBoundingClientRect().top - line);
    // a section taller than the window: a screen at a time, each keeping the last 60 px of the one before in view,
    // so that a heading within them is brought up at once
    const screen = main.clientHeight - SECTION_TOP_PX - 60;
    // (a heading already within NEAR_HEADING_PX of that line counts as there: a press that moved 11 px to it looked
    // dead, and one of 76 px, which only hid Cross-attention's title, did too)
    const next = way > 0 ? offsets.find((o) => o > NEAR_HEADING_PX)
      : offsets.filter((o) => o < -NEAR_HEADING_PX).pop();
    let step = next !== undefined && Math.abs(next) <= screen + 60 ? next : way * screen;
    const boxes = [...main.querySelectorAll("[data-testid='stElementContainer']")]
      .map((e) => e.getBoundingClientRect()).filter((r) => r.height > 0).map((r) => [r.top - line, r.bottom - line]);
    const cuts = (at) => boxes.some(([top, bottom]) => bottom - top < screen && top < at - 4 && bottom > at + 4);
    if (step === way * screen) {
      // a screen at a time, each starting where a chart, a table or a line starts and none that fits a screen is
      // cut (the farthest such start within the window: all above it was in view), not part-way down one, its title
      // half under the menu bar. (Only starts within a screen, 60 px short of the window's foot, left a line cut
      // there for the next press: Real model's first → moved 76 px, hiding its title and showing nothing new.)
      const whole = boxes.map(([top]) => top).filter((top) => way * top >= 60 && way * top <= screen + 60)
        .sort((a, b) => way * (b - a)).find((top) => !cuts(top));
      if (whole !== undefined) step = whole;
      // Forward, when nothing is cut at the window's foot: the first part not yet seen comes up to the line, a
      // whole screen on (Multi-head's concat chart ended just above the foot, and the press moved 174 px to that
      // chart's start, showing one new line)
      const foot = screen + 60;
      const unseen = Math.min(...boxes.map(([top]) => top).filter((top) => top >= foot - 4));
      if (way > 0 && Number.isFinite(unseen) && unseen > step
          && !boxes.some(([top, bottom]) => top < foot - 4 && bottom > foot + 4)) step = unseen;
    }
    if (way > 0 && step < screen / 2 && step !== next) {
      // Forward, a press shows mostly what was not on the screen: one that moved less than half a screen showed
      // most of it again (a chart's title 221 px down on Multi-head). A section's heading still comes up to the
      // line however near it is: a press is a section. It brings up the first part not yet seen where nothing runs
      // past the window's foot, else the farthest start in the screen's lower half that cuts nothing (a caption's
      // second line stays), else past what runs over the foot where at most SMALL_REST_PX of it is out of view (a
      // chart's axis labels, skipped) and nothing is left cut under the menu bar.
      const foot = screen + 60;
      const starts = [...boxes.map(([top]) => top), ...offsets];
      const unseen = Math.min(...starts.filter((top) => top >= foot - 4));
      const rest = Math.max(0, ...boxes.filter(([top, bottom]) => top < foot - 4 && bottom > foot + 4)
        .map(([, bottom]) => bottom - foot));
      const lower = starts.filter((top) => top >= screen / 2 && top <= foot && !cuts(top)).sort((a, b) => b - a);
      if (Number.isFinite(unseen) && rest === 0) step = unseen;
      else if (lower.length) step = lower[0];
      else if (rest <= SMALL_REST_PX) {
        // (a section's heading there, or just under it, comes up to the line: it is not passed by or left just below)
        const heading = offsets.find((o) => o >= foot - 4 && o <= foot + rest + NEAR_HEADING_PX);
        if (heading !== undefined) step = heading;
        else if (!cuts(foot + rest)) step = foot + rest;
      }
    }
    const room = main.scrollHeight - main.clientHeight - main.scrollTop;
    if (way > 0 && step > room) {
      // At the page's foot the move stops short: a part it would leave cut by the menu bar (Work it by hand's row of
      // tabs, its labels half hidden) comes wholly into view instead, where all below it still fits the window
      const bar = (document.querySelector("[data-testid='stHeader']")?.getBoundingClientRect().bottom ?? line) - line;
      const rows = [...main.querySelectorAll("[role='tablist']")].map((e) => e.getBoundingClientRect())
        .filter((r) => r.height > 0).map((r) => [r.top - line, r.bottom - line]);
      const cut = [...boxes, ...rows].filter(([top, bottom]) => top > 4 && top < room + bar - 2
        && bottom > room + bar + 2).map(([top]) => top);
      const lowest = Math.max(...boxes.map(([, bottom]) => bottom));
      // (within 10 px: the last link's box has its padding under the words)
      if (cut.length && lowest - Math.min(...cut) <= main.clientHeight - SECTION_TOP_PX + 10) step = Math.min(...cut);
    }
    main.scrollBy({top: step});
  }
  // A clicker's blank-screen button (B or . on a slide, as in slide software) turns the projector black, so that the
  // hall looks at the lecturer or the board; B or . again, Escape, any other key or a click brings the slide back
  // (that key takes no step: the slide comes back as it was left).
  let blank = null;
  const unblank = () => { blank?.remove(); blank = null; };
  window.addEventListener("keydown", (event) => {  // (on the window: before every key of the page's own)
    const active = document.activeElement;
    const typing = !!active?.matches?.("input, textarea, select, [contenteditable='true']")
      || !!active?.closest?.("[data-testid='stDataFrame'], .gdg-clip-region");
    if (blank) {
      if (["Shift", "Control", "Alt", "Meta"].includes(event.key)) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      return unblank();
    }
    if (!["b", "B", "."].includes(event.key) || event.ctrlKey || event.metaKey || event.altKey || typing
        || !presenting()) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    blank = document.createElement("div");
    blank.id = "blank-screen";
    blank.setAttribute("role", "presentation");
    blank.style.cssText = "position: fixed; inset: 0; background: #000; z-index: 2147483647; cursor: none;";
    blank.addEventListener("pointerdown", (click) => { click.preventDefault(); unblank(); });
    document.body.appendChild(blank);
  }, true);
  // A clicker pressed again before the page had drawn the step before: Streamlit sent that press with the stage the
  // page still showed, or to a button being drawn anew, and its step was lost (three Page Downs 0.15 s apart went
  // two stages on). Such a press waits, and the presses waiting are taken in order, each as if pressed once the
  // step before has run and been drawn. (A held key's repeats are not kept; a press kept for more than
  // STEPS_WAIT_MS ms, or for another page, is dropped.)
  const waiting = [];
  let waitingOn = null;  // the path of the page the waiting presses are for
  let endedAt = -Infinity, changedAt = -Infinity, sentAt = -Infinity;  // a run's end, the page's last change, a press
  let landedOn = null;  // the path of the page whose run has ended since it was opened
  // (the page's changes are timed by the observer of every change below; this one sees the run's state only)
  const app = document.querySelector("[data-testid='stApp']");
  // (this script comes with the page's first run and may start after it has ended: Streamlit draws an element some
  // time after the run that sent it, and that end is then never seen by the observer below)
  if (scriptState() === "notRunning") [endedAt, landedOn] = [performance.now(), location.pathname];
  if (app) new MutationObserver(() => {
    if (scriptState() === "notRunning") [endedAt, landedOn] = [performance.now(), location.pathname];
  }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
  // (the new stage shows some 50 ms after its run ends, and a press's run starts some 50 ms after the press)
  const drawn = () => {
    const now = performance.now();
    if (scriptState() !== "notRunning" || document.querySelector("[data-stale='true']")) return false;
    if (sentAt > endedAt && now - sentAt < 1000) return false;
    return now - endedAt > 1000 || (now - endedAt > 150 && now - changedAt > 50);
  };
  const takeWaitingPress = () => {
    if (!waiting.length) return;
    if (!drawn()) return setTimeout(takeWaitingPress, 40);
    const {key, at} = waiting.shift();
    if (waitingOn !== location.pathname || performance.now() - at > STEPS_WAIT_MS) return (waiting.length = 0);
    sentAt = performance.now();
    const target = document.activeElement || document.body;
    for (const type of ["keydown", "keyup"])
      target.dispatchEvent(new KeyboardEvent(type, {key, code: key, bubbles: true, cancelable: true}));
    if (waiting.length) setTimeout(takeWaitingPress, 40);
  };
  window.addEventListener("keydown", (event) => {
    const way = ways[event.key], active = document.activeElement;
    if (!way || !event.isTrusted || event.repeat || event.ctrlKey || event.metaKey || event.altKey
        || (event.key.startsWith("Page") && !presenting()) || keepsKey(active, event.key) || !stepButton(way)
        || landedOn !== location.pathname) return;  // (a page still coming takes its keys as it did: see arriveAtTop)
    if (drawn() && !waiting.length) return void (sentAt = performance.now());
    event.preventDefault();
    event.stopImmediatePropagation();
    if (waitingOn !== location.pathname) waiting.length = 0;
    waitingOn = location.pathname;
    if (waiting.push({key: event.key, at: performance.now()}) === 1) takeWaitingPress();
  }, true);
  // A page just opened, or left by a button that went away, has the focus on no element, and a reader's scroll keys
  // (Page Down, Space, ↓, End, …) scrolled nothing: the page scrolls in its main column, not the document. With the
  // focus nowhere they go to the main column. (A slide's keys above take their own steps.)
  const scrollKeys = new Set(["PageDown", "PageUp", " ", "ArrowDown", "ArrowUp", "Home", "End"]);
  document.addEventListener("keydown", (event) => {
    if (!scrollKeys.has(event.key) || event.defaultPrevented || presenting()
        || (document.activeElement && document.activeElement !== document.body)) return;
    document.querySelector("[data-testid='stMain']")?.focus({preventScroll: true});
  }, true);
  document.addEventListener("keydown", (event) => {
    const active = document.activeElement;
    if (event.key === "Escape" && active?.matches("input, textarea")
        && active.closest("[data-testid='stPopoverBody']")) active.blur();
  }, true);
  document.addEventListener("click", (event) => {
    if (!event.target.closest?.("label [data-testid='stTooltipIcon']")) return;
    event.preventDefault();
    event.stopPropagation();
  }, true);
  // a radio option's grey words under it pick it too, as its name does ("no peeking ahead (GPT-style)" picked nothing)
  document.addEventListener("click", (event) => {
    const option = event.target.closest?.("[data-testid='stRadioCaption']")?.previousElementSibling;
    if (option?.matches("[data-testid='stRadioOption']")) option.click();
  });
  // Back to the page before lands on its last screen, where a lecturer one press too far had been (the
  // step-through's link opens its last stage instead): once that page has run, while its charts are drawn and for a
  // second and a half after, each change keeps it at its foot, unless a key, the wheel or the mouse is used first.
  let arriveAtEnd = null;
  const keepAtEnd = () => {  // (called on every change of the page: nothing is looked up unless a landing is due)
    if (!arriveAtEnd || location.pathname !== arriveAtEnd.path || scriptState() !== "notRunning") return;
    const main = document.querySelector("[data-testid='stMain']");
    if (!main) return;
    arriveAtEnd.ran = true;
    // (the second and a half counts from the last chart drawn: on a busy machine Masking's charts came later and
    // pushed its foot down, out of the window)
    if (!chartsComing(main)) arriveAtEnd.until ??= performance.now() + 1500;
    // a row of tabs (Work it by hand's stages) opens on its last tab, the one the lecturer had left
    const tabs = [...main.querySelectorAll("[role='tablist'] [role='tab']")];
    if (!arriveAtEnd.tabbed && tabs.length) {
      arriveAtEnd.tabbed = true;
      if (tabs.at(-1).getAttribute("aria-selected") !== "true") tabs.at(-1).click();
    }
    if (arriveAtEnd.until && performance.now() > arriveAtEnd.until) arriveAtEnd = null;
    else main.scrollTo(0, main.scrollHeight);
  };
  // A slide opened from the page before (or from a link) starts at its top: a clicker's key pressed while it came
  // (a lecturer who thought the first press lost) had scrolled it down by the browser's own Page Down, past the
  // stage's title and formula, before anything was seen. Once its first run has ended it is put back at the top.
  let arriveAtTop = null;
  const keepAtTop = () => {
    if (!arriveAtTop || location.pathname !== arriveAtTop.path) return;
    if (performance.now() - arriveAtTop.since > 10000) arriveAtTop = null;  // (a run never seen: none is waited for)
    else if (scriptState() === "running") arriveAtTop.ran = true;
    else if (arriveAtTop.ran) {
      arriveAtTop = null;
      if (presenting()) document.querySelector("[data-testid='stMain']")?.scrollTo(0, 0);
    }
  };
  for (const type of ["keydown", "wheel", "pointerdown"])
    document.addEventListener(type, () => { if (arriveAtEnd?.ran) arriveAtEnd = null; }, true);
  // Vega writes a colour bar's gradient and a chart's clip as a reference with the whole address
  // (url(http://…/by-hand?…#gradient_3)). Once the address changes (a setting bound to it, a page's own key), that
  // is another document's: every chart not drawn again since lost its colour bar. Each change of the address makes
  // the references point into this page whatever its address.
  const referring = ["fill", "stroke", "clip-path"];
  const ownReferences = () => {
    for (const element of document.querySelectorAll(referring.map((name) => `[${name}^="url(http"]`).join(", ")))
      for (const name of referring) {
        const value = element.getAttribute(name);
        if (value?.startsWith("url(http")) element.setAttribute(name, "url(" + value.slice(value.indexOf("#")));
      }
  };
  for (const name of ["pushState", "replaceState"]) {
    const change = history[name];
    history[name] = function (...args) {
      const path = location.pathname, done = change.apply(this, args);
      if (location.pathname !== path) {
        arriveAtTop = arriveAtEnd ? null : {path: location.pathname, ran: false, since: performance.now()};
        // Another page starts at its top: the main column is the same element from page to page, and a page opened
        // while the one before was scrolled down (Start here from What it costs' foot) kept that scroll.
        if (arriveAtTop) document.querySelector("[data-testid='stMain']")?.scrollTo(0, 0);
      }
      ownReferences();
      return done;
    };
  }
  window.addEventListener("popstate", ownReferences);
  // A button of the page pressed with the keyboard (Tab to it, then Enter or Space) keeps the focus through the run it
  // starts: Masking's "Start from causal" drew its mask above the editor, the button was drawn anew and the focus went
  // to the top of the page, 30 Tabs from the next button. (Step buttons and Settings have their own rules above.)
  let pressed = null;  // {label, nth, at, ran}: the button's words and which of the buttons with them it is, when,
  // and whether its run has started (each question of Check yourself has a "Check" of its own)
  const labelled = (label) => [...(document.querySelector("[data-testid='stMain']")?.querySelectorAll("button") || [])]
    .filter((button) => button.textContent === label);
  document.addEventListener("keydown", (event) => {
    const button = event.target?.closest?.("[data-testid='stMain'] button");
    if ((event.key !== "Enter" && event.key !== " ") || event.repeat || !button) return;
    const owner = button.closest("[class*='st-key-']");
    const own = !!owner && [...STEP_KEYS.forward, ...STEP_KEYS.back, "next_bottom", "back_bottom", "slide_settings",
      "presenter"].some((key) => owner.classList.contains(`st-key-${key}`));
    const label = button.textContent;
    pressed = own ? null : {label, nth: labelled(label).indexOf(button), at: performance.now(), ran: false};
  }, true);
  const keepPressedFocus = () => {
    if (!pressed) return;
    if (scriptState() === "running") pressed.ran = true;
    if (performance.now() - pressed.at > 10000) pressed = null;
    if (!pressed?.ran || scriptState() !== "notRunning") return;
    const active = document.activeElement, main = document.querySelector("[data-testid='stMain']");
    const lost = !active || active === document.body || active === main;
    const again = lost && labelled(pressed.label)[pressed.nth];
    pressed = null;
    if (again) again.focus();
  };
  const appRoot = document.querySelector("[data-testid='stApp']");  // (the run's end may change nothing else)
  if (appRoot) new MutationObserver(keepPressedFocus).observe(appRoot, {attributes: true,
    attributeFilter: ["data-test-script-state"]});
  // The Settings menu opened with the keyboard takes the focus to its first control: Tab went first through the
  // slide's own controls under the menu (24 of them on Cross-attention) before it reached the menu.
  let menuKeyAt = -Infinity;
  document.addEventListener("keydown", (event) => {
    if ((event.key === "Enter" || event.key === " ") && event.target?.closest?.(".st-key-slide_settings button"))
      menuKeyAt = performance.now();
  }, true);
  const focusOpenedMenu = () => {  // (its controls come in after the menu's box: each change looks again)
    const menu = document.querySelector("[data-testid='stPopoverBody']");
    const first = menu && performance.now() - menuKeyAt < 2000
      && (menu.querySelector("input:not([disabled]), textarea") || menu.querySelector("button"));
    if (!first) return;
    menuKeyAt = -Infinity;
    first.focus({preventScroll: true});
  };
  // On a slide a chart's toolbar (show the data, download, full screen) is no Tab stop: each chart added four hidden
  // ones, and Masking's "Start from causal" was the 31st. The mouse still shows and uses it.
  const untabToolbars = () => {
    if (!presenting()) return;
    for (const button of document.querySelectorAll(
      "[data-testid='stMain'] [data-testid='stElementToolbar'] button:not([tabindex='-1'])")) button.tabIndex = -1;
  };
  let shownStage = null;
  new MutationObserver(() => {
    changedAt = performance.now();
    keepPressedFocus();
    focusOpenedMenu();
    untabToolbars();
    focusSlideSoon();
    keepAtEnd();
    keepAtTop();
    const stage = document.querySelector(".st-key-step input")?.value;
    if (stage === undefined || stage === shownStage) return;
    const main = document.querySelector("[data-testid='stMain']");
    const picker = document.querySelector(".st-key-step")?.getBoundingClientRect();
    if (shownStage !== null && main && document.querySelector(".st-key-slide_settings")) main.scrollTo(0, 0);
    else if (shownStage !== null && main && picker && picker.top < 0) main.scrollBy(0, picker.top - 80);
    if (shownStage !== null && footFocus) {
      focusStep(footFocus);
      footFocus = 0;
    }
    shownStage = stage;
  }).observe(document.body, {childList: true, subtree: true});
}
</script>""".replace("SECTION_TOP_PX", str(SECTION_TOP_PX)).replace("SMALL_REST_PX", str(SMALL_REST_PX)).replace(
    "STEPS_WAIT_MS", str(STEPS_WAIT_MS)).replace(
    "NEAR_HEADING_PX", str(NEAR_HEADING_PX)).replace("WORKED_FIRST_KEY", WORKED_FIRST_KEY).replace(
    "PATH_LINK_KEY", PATH_LINK_KEY).replace(
    "PATH_BACK_LINK_KEY", PATH_BACK_LINK_KEY).replace(
    "STEP_KEYS", json.dumps(STEP_KEYS)).replace("NEXT_KEY", json.dumps(NEXT_KEY)).replace(
    "BACK_KEY", json.dumps(BACK_KEY))
"""The page's keys (← →, and on a slide Page Up / Page Down) move the stage only while no input has the focus; on a
slide of a page without stages (or past its last step, or before its first) they move on to the next numbered
section's heading (SECTION_TOP_PX under the window's top), or a screen on where that is further, and back the same
way; at the bottom of such a page, → and Page Down follow its link to the next page on the path. The presenter
switch, the stage menu and the Settings button keep it after being used: a lecturer who switched presenter mode
on, or picked a stage, found the clicker dead until a click on Next. With the focus on one of them (its menu
closed), these keys press Back or Next and give the focus back to the page. A text box, or a menu while open,
keeps its keys. Escape in a text box of the Settings menu applies what was typed before the menu closes (Streamlit
takes a text box's value when it loses the focus; closing the menu first dropped it). In the Settings menu, a
control chosen with the mouse (a radio, a switch, a closed menu; not a text box) leaves ← → to the slide, and
Page Up / Page Down, which a radio, a switch, a slider or a one-line text or number box has no use for on a slide, go
to the slide however it was reached: the key closes the menu and takes the step (a lecturer who typed a new sentence
and pressed Enter found the clicker dead and the menu over the slide; one who clicked "causal" and pressed → moved the
mask on to "padding" instead of the slide, and a clicker's Page Down did nothing). A slider keeps ← → (a lecturer who
dragged d_k to 33 corrected it with ←, and the menu closed and the slide went back instead), and so does a radio
reached with the keyboard. Near a section's heading (within NEAR_HEADING_PX of where the keys bring it) the keys go on
to the next one: a press that moved 11 px to it looked dead. Forward, a screen at a time brings the first part not
yet seen to the top when nothing is cut at the window's foot, and once all but the path link is in view the keys
follow it. At a page's foot they wait while a chart is still being drawn: a page just opened looked short, and its
first press went on to the next page unseen. A slide is presenter mode, also on the pages
without the lesson's Settings menu (Start here, Work it by hand: the clicker moved nothing there), and a page without
numbered sections moves a screen at a time. A screen at
a time starts where an element starts and cuts none that fits a screen, where it can (the farthest such start within
a screen, at least 60 px on): a full screen often opened on the lower half of a chart's title or a sliced row under
the menu bar. A grid's cell (Work it by hand's matrices, the mask editor) keeps the arrows that move between cells.
A press of a step's key made before the page has drawn the step before (a clicker pressed three times at once)
waits for it and is then taken: Streamlit had sent it with the stage still shown, and the step was lost.
On a slide the page's scrolling part takes the focus whenever nothing has it (the slide just opened, or a key just
took a step or went to a section): ↓ ↑, Space, Home and End scroll the slide as on any web page (they scrolled
nothing until the page was clicked, so the worked numbers under a stage's charts were out of a keyboard's reach).
On a slide, a new stage starts at the top of the page: a lecturer who had scrolled down to the worked numbers got the
next slide scrolled down as far. On a page, a stage reached from the Back/Next under it starts at the stage menu. A
click or tap on a radio option's grey words picks that option, as one on its name does. A
click or tap on a control's help icon (its "?") shows the help and does nothing else: the icon lies inside the
control's label, so it switched presenter mode (or any toggle or checkbox) on or off, and focused a text box. A
chart's colour bar stays when the address changes (Vega refers to its gradient by the whole address, and a chart not
drawn again since lost it: Work it by hand's tabs, after any setting)."""


def _presenter_toggle() -> bool:
    presenter = st.toggle("Presenter mode", key="presenter", help="One slide per stage: large charts and text, "
                          "the lesson's settings under Settings at the top, pages at the top; ←/→ or a clicker move "
                          "between stages (on other pages, between sections); ↓ and Space scroll to a stage's worked "
                          "numbers and questions under the slide (or, under Settings, let Page Down show the worked "
                          "numbers before the next stage).", **BOUND)
    # One element with the page's style, the clicker keys' script and the editable grids' one, drawn with the page (a
    # Back/Next, a fragment's rerun, sends nothing more). Fixed code, no user text.
    st.html(PAGE_STYLE + (PRESENTER_STYLE + SLIDE_ROWS_STYLE + presenter_charts_zoom_style() if presenter else "")
            + CLICKER_KEYS_JS + GRID_INPUT_JS,
            unsafe_allow_javascript=True)
    if presenter and st.query_params.get("presenter") != "true":
        set_link_value("presenter", "true")  # after a page change from the top menus the address drops it
    return presenter


def offer_example(key: str, example: str = DEFAULTS.sentence) -> None:
    """Under an empty sentence, a button that puts ``example`` in the box (session state ``key``): a cleared box had
    left the page with nothing but the message, and the example to type back by hand."""
    st.button(f"Use the example: “{plain(example)}”", key=f"example_for_{key}", on_click=st.session_state.update,
              args=({key: example},), icon=":material/undo:")


def offer_first_tokens(sentence: str, key: str, example: str = DEFAULTS.sentence) -> None:
    """Under a sentence with more than MAX_TOKENS tokens, a button that puts its first MAX_TOKENS in the box
    (session state ``key``) in its place, as typed; nothing for a sentence that would still be refused. Under an
    empty one, ``offer_example``."""
    if not sentence.strip():
        return offer_example(key, example)
    shorter = first_tokens(sentence)
    if shorter == sentence:
        return
    try:
        tokenize(shorter)
    except AttentionInputError:  # one "word" of thousands of letters: still too long, so no offer to make
        return
    st.button(f"Use its first {MAX_TOKENS} tokens: “{plain(_start_and_end(shorter))}”", key=f"first_tokens_{key}",
              on_click=st.session_state.update, args=({key: shorter},), icon=":material/content_cut:")


def _start_and_end(text: str, words: int = 4, longest: int = 20) -> str:
    """A long text by its first and last ``words`` words (each cut to ``longest`` characters): where it starts
    and where it now ends."""
    pieces = [p if len(p) <= longest else p[:longest] + "…" for p in text.split()]
    if len(pieces) <= 2 * words + 1:
        return " ".join(pieces)
    return " ".join(pieces[:words] + ["…"] + pieces[-words:])


def _pick_example() -> None:
    choice = st.session_state.get("example")
    if choice:
        st.session_state["sentence"] = choice
        st.session_state["example"] = None


def _sentence_control() -> str:
    st.header("Your sentence")
    sentence = st.text_input("Sentence", value=DEFAULTS.sentence, key="sentence", max_chars=PASTE_CHARS,
                             help=f"Words and punctuation become tokens; at most {MAX_TOKENS} tokens.", **BOUND)
    st.selectbox("…or pick an example", EXAMPLE_SENTENCES, index=None, key="example",
                 placeholder="Example sentences", on_change=_pick_example)
    return sentence


def _config_controls(places: ControlPlaces) -> LessonConfig:
    with places.sentence:
        sentence = _sentence_control()
        embeddings, real_width = _embeddings_control()
    with places.sizes:
        d_model, num_heads, init, d_k, d_v = _size_controls(real_width)
    with places.mask:
        mask, pad_to = _mask_controls()
    with places.numbers:
        seed, device = _number_controls()
    return LessonConfig(sentence=sentence, d_model=int(d_model), d_k=int(d_k), d_v=int(d_v),
                        num_heads=int(num_heads), mask=mask, pad_to=int(pad_to),
                        custom_mask=custom_grid() if mask == "custom" else None, init=init, seed=int(seed),
                        device=device, embeddings=embeddings)


def _size_controls(real_width: int | None):
    st.header("Sizes")
    if real_width is None:
        d_model = st.slider("d_model (embedding width)", 2, MAX_D_MODEL, DEFAULTS.d_model, key="d_model", **BOUND)
    else:
        d_model = real_width
        st.caption(f"d_model = {real_width}: the model's embedding width (fixed by its word vectors).")
    num_heads = st.slider("Number of heads h", 1, MAX_HEADS, DEFAULTS.num_heads, key="heads",
                          help="Real models usually set d_k = d_model / h; here d_k is set on its own (with "
                               "Projection weights “Q = K = V = X” it is d_model / h).", **BOUND)
    init = st.radio("Projection weights", list(INIT_LABELS), captions=list(INIT_LABELS.values()), key="init",
                    help="Where W_Q, W_K and W_V come from. Random: numbers drawn from a normal distribution with "
                    "mean 0 and variance 1/d_model (so Q, K and V are about as large as X), the same for the same "
                    "seed; W_O's variance is 1/(h·d_v), the width of what it reads. Identity: the weights copy X, "
                    "so a query matches the keys of similar words.", **BOUND)
    if init == "identity":
        d_k = d_v = DEFAULTS.d_k  # unused: identity weights give each head d_model / h features
        if d_model % num_heads == 0:
            st.caption(f"Identity: each head sees d_k = d_v = d_model / h = {d_model // num_heads} features of X.")
    else:
        d_k = st.slider("d_k (query/key width per head)", 1, MAX_D_K, DEFAULTS.d_k, key="d_k", **BOUND)
        d_v = st.slider("d_v (value width per head)", 1, MAX_D_V, DEFAULTS.d_v, key="d_v", **BOUND)
    return d_model, num_heads, init, d_k, d_v


def _mask_controls() -> tuple[str, int]:
    st.header("Mask")
    mask = st.radio("Mask", list(MASK_LABELS), captions=list(MASK_LABELS.values()), key="mask",
                    label_visibility="collapsed", **BOUND)
    pad_to = 0
    if mask == "padding":
        pad_to = st.slider("Pad the sentence to … tokens", 1, MAX_TOKENS, DEFAULT_PAD_TO, key="pad_to", **BOUND)
    return mask, pad_to


def _number_controls() -> tuple[int, str]:
    st.header("Numbers")
    seed = st.number_input("Seed", 0, MAX_SEED, DEFAULTS.seed, step=1, key="seed",
                           help="The starting number of the random numbers (word vectors and weights). Same seed, "
                           "same numbers, on every machine; another seed, another example. A whole number from 0 "
                           f"to {MAX_SEED:,}: press Enter to use it.", **BOUND)
    devices = available_devices()
    device = st.selectbox("Device", devices, key="device", help="Where the numbers are computed: the CPU, or a "
                          "graphics card (cuda, mps) when this machine has one; the results are the same. Only devices "
                          "present on this machine are listed.", **BOUND)
    return int(seed), device


def _embeddings_control() -> tuple[str, int | None]:
    """Seeded vectors, or a real model's word vectors (only offered when the model loads)."""
    from .models import DEFAULT_MODEL, cached_model, real_embeddings_available

    choice = st.radio("Word vectors X", ["seeded", DEFAULT_MODEL], key="embeddings",
                      captions=["random, one fixed vector per word", "the real model's word embeddings"],
                      help="With real vectors and Projection weights “Q = K = V = X”, words with similar vectors get "
                           "the most weight, but only by a little: real vectors are short, so every score stays close "
                           "to 0. Seeded vectors, about 1 in size per feature, make sharper weights.",
                      **BOUND)
    if choice == "seeded":
        return "seeded", None
    if not real_embeddings_available(choice):
        st.warning(f"{choice} is not available here, so seeded vectors are used. "
                   "See the Real model page for how to install it.")
        return "seeded", None
    return choice, cached_model(choice).hidden_size


FOLLOW_MASK_KEY = "follow_mask"
"""The mask the followed token was last shown under: a change of mask that leaves it one key follows another."""
DEFAULT_FOLLOW_KEY = "follow_defaulted"
"""Session key: (the sentence's token labels, the token followed) of the last run that followed the default token, or
None when another was followed. On a new sentence that follow is the new sentence's default: under the causal mask a
follow kept from a sentence of one word (its token 1) was left one key, though no one had chosen it."""
FOLLOW_SET_ASIDE_KEY = "follow_set_aside"
"""Session key: {"mask", "token", "instead"}: the token a change of mask stopped following (under ``mask``) and the
one followed instead. Back to that mask, while ``instead`` is still followed, the token comes back (stage 5's "Use the
causal mask", then "Back to no mask", had left the class following 6·mat instead of 1·The)."""


def default_follow(labels: list[str], keys_per_query: torch.Tensor) -> int:
    """The token followed when none is chosen: the first, unless the mask leaves it one key (itself, under the
    causal mask), whose worked numbers mix nothing; then the word that attends to the most keys.
    ``keys_per_query``: (T,) how many keys each query may attend to."""
    if int(keys_per_query[0]) != 1 or int(keys_per_query.max()) < 2:
        return 0
    return richest_word(labels, keys_per_query)


def _follow_controls(labels: list[str], num_heads: int, mask: str, keys_per_query: torch.Tensor) -> tuple[int, int]:
    st.header("Follow")
    default = default_follow(labels, keys_per_query)
    if "token" not in st.session_state:
        linked = linked_token()
        if linked is not None and linked >= len(labels):
            note_ignored("token", str(linked + 1), f"the sentence has {counted(len(labels), 'token')}")
        st.session_state["token"] = linked if linked is not None and linked < len(labels) else default
    defaulted = st.session_state.get(DEFAULT_FOLLOW_KEY)
    if defaulted is not None and defaulted[0] != tuple(labels) and st.session_state.get("token") == defaulted[1]:
        st.session_state["token"] = default  # a new sentence: the follow nobody chose is chosen again, for it
    # a followed token or a head that a shorter sentence or fewer heads took away, the nearest one left: (the
    # sidebar's note, the toast's words); a toast shows three lines, and a longer one was cut, over the chart
    moved: list[tuple[str, str]] = []
    if whole_number_in(st.session_state.get("token", 0), len(labels), MAX_TOKENS):
        st.session_state["token"] = len(labels) - 1
        moved.append((f"The sentence has {counted(len(labels), 'token')} now: the last one is followed."
                      if len(labels) > 1 else "The sentence has 1 token now: it is followed.",) * 2)
    elif not whole_number_in(st.session_state.get("token", 0), 0, len(labels) - 1):
        st.session_state["token"] = 0
    elif (st.session_state.get(FOLLOW_MASK_KEY, mask) != mask and int(keys_per_query[st.session_state["token"]]) == 1
          and int(keys_per_query[default]) > 1):
        lone = labels[st.session_state["token"]]
        st.session_state[FOLLOW_SET_ASIDE_KEY] = {"mask": st.session_state[FOLLOW_MASK_KEY],
                                                  "token": st.session_state["token"], "instead": default}
        st.session_state["token"] = default
        moved.append((f"With this mask {plain(lone)} may attend to only one key, so its weights would mix nothing: "
                      f"{plain(labels[default])} is followed instead (it may attend to "
                      f"{int(keys_per_query[default])} keys).",
                      f"Now following {plain(labels[default])}: {plain(lone)} has one key under this mask"
                      f"{SEE_FOLLOW}."))
    elif (st.session_state.get(FOLLOW_MASK_KEY, mask) != mask
          and (aside := st.session_state.pop(FOLLOW_SET_ASIDE_KEY, None)) and aside["mask"] == mask
          and aside["instead"] == st.session_state["token"] and aside["token"] < len(labels)):
        st.session_state["token"] = aside["token"]
        moved.append((f"Back to this mask, {plain(labels[aside['token']])} is followed again.",) * 2)
    st.session_state[FOLLOW_MASK_KEY] = mask
    linked_head = st.query_params.get("head")
    if linked_head and "head" not in st.session_state and int(linked_head.split()[-1]) > num_heads:
        note_ignored("head", linked_head, f"there are {num_heads} heads")
    if whole_number_in(st.session_state.get("head", 1), num_heads + 1, MAX_HEADS):
        if num_heads > 1:
            moved.append((f"Head {st.session_state['head']} is gone with {num_heads} heads: head {num_heads} is "
                          "shown.",) * 2)
        st.session_state["head"] = num_heads
    elif not whole_number_in(st.session_state.get("head", 1), 1, num_heads):
        st.session_state["head"] = 1
    follow = st.selectbox("Query token to follow", range(len(labels)), format_func=labels.__getitem__,
                          key="token", persist_state="session",  # kept through a page without it (Work it by hand)
                          help="Its row of numbers is worked out step by step. Clicking a row of a chart follows that "
                          "token too.")
    keep_in_link("token", str(follow + 1), str(default + 1))
    st.session_state[DEFAULT_FOLLOW_KEY] = (tuple(labels), follow) if follow == default else None
    head = 1
    if num_heads > 1:
        head = st.selectbox("Head to show", range(1, num_heads + 1), key="head", **BOUND)  # a link says head=3
    for note, short in moved:  # under the token menu, and for a moment where a student's eyes are (a button in the
        st.caption(note)  # page moved it); on a slide that moment covered Next: the slide's mask button says it
        if not presenting():
            st.toast(short, icon=":material/swap_horiz:")
    if presenting() and moved:
        st.session_state[SLIDE_MOVE_NOTE_KEY] = (st.session_state.get("step"),
                                                 [short.replace(SEE_FOLLOW, "") for _, short in moved])
    return int(follow), int(head) - 1


SEE_FOLLOW = " (see Follow)"
"""Where a page's toast sends a student for the whole note (under the token menu); a slide's note leaves it out."""


COLOUR_LABELS = {"fixed": "0 to 1 for every row", "row": "each row from its own smallest to largest weight"}


def _colour_control() -> str:
    return st.radio("Colour of the weights", list(COLOUR_LABELS), captions=list(COLOUR_LABELS.values()),
                    key="colour", help="Per-row colours show the pattern of a row even when all weights are "
                    "small (long sentences), and make a small difference look as large as 0 against 1.", **BOUND)


def whole_number_in(value, low: int, high: int) -> bool:
    """Whether a stored widget value is a usable index (a stale or forged one may be of any type)."""
    return isinstance(value, int) and low <= value <= high


def _limits_note() -> None:
    st.caption(f"Limits: {MAX_TOKENS} tokens, d_model ≤ {MAX_D_MODEL} (seeded vectors), d_k ≤ {MAX_D_K}, "
               f"d_v ≤ {MAX_D_V}, {MAX_HEADS} heads, seed 0 to {MAX_SEED:,}. The link in the address bar restores "
               "this exact view.")


def custom_grid() -> tuple[tuple[bool, ...], ...] | None:
    """The custom mask kept for this session (and in the URL as rows of 1/0 joined by '.')."""
    if GRID_KEY not in st.session_state and GRID_PARAM in st.query_params:
        st.session_state[GRID_KEY] = decode_grid(st.query_params[GRID_PARAM])
        if st.session_state[GRID_KEY] is None:
            del st.query_params[GRID_PARAM]
    grid = st.session_state.get(GRID_KEY)
    if grid is not None:
        st.query_params[GRID_PARAM] = encode_grid(grid)
    return grid


def kept_grid(size: int) -> tuple[tuple[bool, ...], ...] | None:
    """The session's custom grid if it is ``size`` × ``size`` (whatever mask the sidebar shows now)."""
    grid = custom_grid()
    if grid is not None and len(grid) == size and all(len(row) == size for row in grid):
        return grid
    return None


def set_custom_grid(grid) -> None:
    st.session_state[GRID_KEY] = tuple(tuple(bool(c) for c in row) for row in grid)
    st.query_params[GRID_PARAM] = encode_grid(st.session_state[GRID_KEY])


def encode_grid(grid) -> str:
    return ".".join("".join("1" if c else "0" for c in row) for row in grid)


def decode_grid(text: str) -> tuple[tuple[bool, ...], ...] | None:
    """'110.011' -> ((True, True, False), (False, True, True)); None for anything malformed."""
    rows = text.split(".")
    if not rows or any(set(r) - {"0", "1"} or len(r) != len(rows[0]) or not r for r in rows):
        return None
    return tuple(tuple(c == "1" for c in r) for r in rows)


def _move(delta: int) -> None:
    """Go ``delta`` stages on (a button's callback: it runs before the stage selector is drawn)."""
    index = STAGE_KEYS.index(st.session_state.get("step", STAGE_KEYS[0])) + delta
    st.session_state["step"] = STAGE_KEYS[min(max(index, 0), len(STAGE_KEYS) - 1)]


STAGE_PAGES = ("pages/step_through.py", "pages/inside_real_head.py")
"""The pages of the nine stages (one stage picker, one session's stage): the path's link to one opens its first
stage, and its link back its last (a lecturer who had ended Step through at stage 9 came to Inside a real head on
its last stage, and the clicker went on past its first eight)."""
ARRIVED_KEY = "_arrived"
"""Session key: this full run is the first on its page since another page (or the session's first); set by app.py,
taken by the stage picker (a run of its fragment alone is never an arrival)."""


def stage_picker(presenter: bool = False, next_page: tuple[st.Page, str] | None = None) -> int:
    """Back/Next buttons (also on the arrow and page keys a presentation clicker sends) and a stage selector;
    returns the stage index. The URL holds the stage's short name, e.g. ``?step=softmax``. On a slide's last stage
    Next becomes a button to ``next_page`` (a page and its title), the clicker's keys too: a lecturer at the end of
    the stages was left with a greyed-out Next and no word on where to go."""
    linked = linked_stage()
    if st.session_state.pop(ARRIVED_KEY, False) and linked is not None:  # a link's stage, from another page
        st.session_state["step"] = linked
    if st.session_state.get("step") not in STAGE_KEYS:
        st.session_state["step"] = linked or STAGE_KEYS[0]
    move = _move
    titles = {s.key: s.title for s in STAGES}
    index = STAGE_KEYS.index(st.session_state["step"])
    here, left_on = st.session_state.get(CURRENT_PAGE), st.session_state.get(STAGE_PAGE_KEY)
    st.session_state[STAGE_PAGE_KEY] = here
    carried = path_title(left_on) if index and here is not None and left_on != here else None  # (another page's)
    last = index == len(STAGE_KEYS) - 1
    onward = next_page if presenter and last else None
    widths = [1, 4, 1] if not presenter else [1, 5, 1] if onward is None else [1, 4, 2]  # room for the page's title
    back, pick, forward = st.columns(widths, vertical_alignment="bottom")
    # No tooltips: one left open by a mouse click covered the presenter switch above Next on a slide, and the caption
    # above the buttons on a page. The buttons show their arrow key, and the switch's own help names a clicker's.
    back.button("◀ Back", on_click=move, args=(-1,), disabled=index == 0, width="stretch", key=BACK_KEY,
                shortcut="Left")
    if onward is None:
        forward.button("Next ▶", on_click=move, args=(1,), disabled=last, width="stretch",
                       key=NEXT_KEY, shortcut="Right")
    elif forward.button(f"{onward[1]} ▶", width="stretch", key=NEXT_PAGE_KEY, shortcut="Right",
                        type="primary"):
        st.switch_page(onward[0], query_params={})
    if presenter:  # a clicker sends Page Up / Page Down: hidden twins of Back and Next take those keys on a slide
        with st.container(key="clicker_keys", height=1, border=False):  # (a reader's Page Down scrolls the page)
            st.button("back", on_click=move, args=(-1,), key="back_page_key", shortcut="PageUp", disabled=index == 0)
            if onward is None:
                st.button("next", on_click=move, args=(1,), key="next_page_key", shortcut="PageDown")
            # its own key: with stage 8's key, the Page Down that took stage 8 to 9 read as pressed on 9 too, and
            # the slide went on to the next page, skipping stage 9
            elif st.button("next", key="onward_page_key", shortcut="PageDown"):
                st.switch_page(onward[0], query_params={})
    key = pick.selectbox("Stage", STAGE_KEYS, format_func=titles.get, key="step",
                         label_visibility="collapsed")
    index = STAGE_KEYS.index(key)
    keep_in_link("step", key)  # stage 1 too: see url_state.ALWAYS_IN_LINK
    where = f", where you left {carried}: the two pages share their stage" if carried else ""
    st.progress((index + 1) / len(STAGE_KEYS),
                text=None if presenter else f"Stage {index + 1} of {len(STAGE_KEYS)}{where}")
    return index


STAGE_PAGE_KEY = "_stage_page"
"""Session key: the url path of the page that last drew the stage picker. A page of stages opened from the other
says that its stage is the one left there (a student who came to Inside a real head from Step through's stage 6
took its stage 6 for a first stage gone missing)."""


def path_page(file: str, url_path: str) -> st.Page:
    """The navigation's page ``file`` at ``url_path``, for a link with its own address: a link given the Overview's
    file would go to the app's default page, whose link has an empty address (opened in a new tab, it showed the
    page the link was on)."""
    return st.Page(APP_ROOT / file, url_path=url_path)


def stop_page() -> NoReturn:
    """``st.stop()`` for a page that cannot go on (settings it cannot use, no model): its link to the next page
    on the path first, so that a student who cannot fix the settings is not left at a dead end."""
    url_path = st.session_state.get(CURRENT_PAGE)
    if url_path is not None:  # None: a page file run on its own, without the app's navigation
        page_end(url_path, stopped=True)
    st.stop()


def page_end(url_path: str, *, stopped: bool = False) -> None:
    """What ``app.py`` draws under every page (``stop_page`` too, ``stopped``): the path link, and the browser's copy
    of the student's progress brought up to date."""
    path_footer(url_path, stopped=stopped)
    keep_progress()
    keep_bound_values_in_link()
    write_opened_link()


LESSON_LINK_KEYS = ("sentence", "embeddings", "d_model", "heads", "init", "d_k", "d_v", "mask", "pad_to", "seed",
                    "device", "colour", "token", "head")
"""The lesson's settings (the sidebar's) that a link may hold."""


def carried_link_values(query_params: dict | None = None) -> dict[str, str] | None:
    """``query_params`` for a link to another page, with the lesson's settings this page's address holds that no
    widget of the session has taken: a page without the lesson's settings (Start here, Work it by hand) opened
    from a lecture's link kept the sentence and sizes in its address only, and the next page opened on the
    defaults. None when there is nothing to carry."""
    carried = {key: st.query_params[key] for key in LESSON_LINK_KEYS
               if key in st.query_params and key not in st.session_state}
    return {**carried, **(query_params or {})} or None


PATH_NEXT_UP_KEY = "_path_next_up"
"""Session key: Start here's link to the first page on the path not done yet, (file, url path, label), which its
foot repeats (it said "Start the path: Overview" under "Carry on with 5. Masking"); None when none is done yet or
all are."""


def path_footer(url_path: str, *, stopped: bool = False) -> None:
    """Under a lesson page (not the step-through, which has its own under its stages, unless it was ``stopped``
    before them): a link to the next page on Start here's path, or back to Start here after the last one. On a
    slide too: there → or Page Down at the bottom of the page follows it (a lecturer reached the end of Masking and
    had to take the mouse to the top menus)."""
    file = path_file(url_path)
    if file is not None and linked_flag("presenter"):
        path_back_link(file)
    first_stage = {"step": STAGE_KEYS[0]}  # a page of stages reached by the path's link opens at its first stage
    if url_path == START_HERE_PATH and st.session_state.get(PATH_NEXT_UP_KEY):  # as the page's own "Carry on"
        next_file, next_path, label = st.session_state[PATH_NEXT_UP_KEY]
        following, first_stage = (next_file, next_path), None  # a page of stages carries on where it was left
    elif url_path == START_HERE_PATH:  # the path's start (a clicker at its foot had nowhere to go)
        first_file, first_paths, first_title, _ = LEARNING_PATH[0]
        following, label = (first_file, first_paths[0], first_title), f"Start the path: {first_title}"
    elif file is None or (file == "pages/step_through.py" and not stopped):
        return
    else:
        following = next_on_path(file)
        label = None if following is None else f"Next on the path: {following[2]}"
    # Start here's slide links to the path's first page twice already ("Start with 1. Overview" and its list; a third
    # link read as a third place): there it is hidden, for the clicker's Page Down at its foot, as the link back is
    hidden = url_path == START_HERE_PATH and linked_flag("presenter") and following is not None
    if not hidden:
        st.divider()
    if following is None:  # (a box of its own: the clicker's keys follow PATH_LINK_KEY's link, not this one)
        with st.container(key=PATH_END_KEY):
            st.page_link(path_page("pages/start_here.py", START_HERE_PATH),
                         label="The end of the path: back to Start here", icon=":material/flag:")
        return
    with st.container(key=PATH_LINK_KEY, **({"height": 1, "border": False} if hidden else {})):
        st.page_link(path_page(following[0], following[1]), label=label, icon=":material/arrow_forward:",
                     query_params=carried_link_values(first_stage if following[0] in STAGE_PAGES else None))


def path_back_link(file: str) -> None:
    """On a slide, a hidden link to the page before ``file`` on the path: ← or Page Up at the top of a slide (or on
    its first step) follow it, as → and Page Down at the bottom follow the path link. A lecturer one press too far
    was stranded: Page Up on Work it by hand's first screen did nothing. The page opens on its last screen, the
    step-through on its last stage. Before the path's first page: Start here, whose foot links to it."""
    before = previous_on_path(file) or ("pages/start_here.py", START_HERE_PATH, "Start here")
    with st.container(key=PATH_BACK_LINK_KEY, height=1, border=False):
        st.page_link(path_page(before[0], before[1]), label=f"Back on the path: {before[2]}",
                     query_params=carried_link_values({"step": STAGE_KEYS[-1]} if before[0] in STAGE_PAGES
                                                      else None))


def stage_footer(index: int, next_page: tuple[st.Page, str] | None) -> None:
    """Back and Next again under a stage (a reader who has scrolled down through the worked numbers and the
    questions moves on from there); after the last stage, a link to ``next_page`` (a page and the link's words),
    if any."""
    back, forward = st.columns(2)
    if index > 0:
        back.button(f"◀ Back: {STAGES[index - 1].title}", on_click=_move, args=(-1,), key="back_bottom",
                    width="stretch")
    if index < len(STAGES) - 1:
        forward.button(f"Next: {STAGES[index + 1].title} ▶", on_click=_move, args=(1,), key="next_bottom",
                       width="stretch", type="primary")
    elif next_page is not None:
        forward.page_link(next_page[0], label=next_page[1], icon=":material/arrow_forward:")


def token_caption(settings: Settings, index: int) -> str:
    """A markdown-safe mention of token ``index`` (user text escaped)."""
    return quoted(settings.labels[index])
