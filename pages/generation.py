"""Generation step by step: the KV cache grows by one row per token, the new query attends to it all."""

from dataclasses import replace

import numpy as np
import streamlit as st

from attention_core import AttentionInputError, MAX_REAL_MODEL_TOKENS, check_cache, divisors, time_generation_step
from attention_core.generation import MAX_NEW_TOKENS
from attention_core.real_models import MODEL_ALLOWLIST
from attention_ui import charts, frames
from attention_ui.checks.modern import generation_questions
from attention_ui.controls import (BOUND, GENERATION_BACK_KEY, GENERATION_NEXT_KEY, PRESENTER_GAP_PX, SLIDE_ROW_PX,
                                   lesson_settings)
from attention_ui.models import load_or_explain, model_names
from attention_ui.modern import TIMING_WIDTH_PX, timing_chart, timing_frame
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_matrix_chart, cached_spec
from attention_ui.text import counted, plain, size_in_words
from attention_ui.url_state import (SHOWN_NOTES_KEY, check_linked_choice, keep_in_link, note_ignored,
                                    set_link_value, show_link_notes)
from attention_ui.views import (GENERATION_CACHES_KEY, MAX_FEATURES_SHOWN, MIN_SIDE_BY_SIDE_CELL, PRESENTER_COLUMN_PX,
                                 SLIDE_CELL, SLIDE_HALF_PX, SLIDE_LINES_FRAME_PX, StageView, feature_heatmap,
                                 in_the_sidebar, shared_domain, shared_scale_cell, show_chart, shown_features,
                                 side_by_side, slide_cell_value_font)

STEP_KEY = "generation_step"
PICK_KEY = "generation_pick"
DECODERS = [name for name, spec in MODEL_ALLOWLIST.items() if spec.kind == "decoder"]


@st.cache_data(show_spinner=False, max_entries=1)
def measured_timings():
    return time_generation_step()


@st.cache_data(show_spinner=False, max_entries=16)
def cached_generation(name: str, prompt: str, num_new_tokens: int):
    from attention_core.generation import generate_with_attention
    from attention_ui.models import cached_model

    return generate_with_attention(cached_model(name), prompt, num_new_tokens)


settings = lesson_settings("Generation with a KV cache")
config, lesson = settings.config, settings.lesson
labels = list(settings.labels)
T, h = len(labels), config.num_heads
# On a slide the step's buttons and charts come first (what changes at each step is on the first screen); the
# words, the formula and the rarely changed number of key/value heads follow them
first, second = st.container(), st.container()
intro_box, step_box = (second, first) if settings.presenter else (first, second)
offered = [name for name in DECODERS if name in model_names()]  # the GPT-style models this server has
if offered:
    real_one = "(it predicts no words; section 4 shows a real model that does)."
elif settings.presenter:  # (a slide leaves section 4 out without a model)
    real_one = "(it predicts no words)."
else:
    real_one = "(it predicts no words). A real model that does needs one installed on the server: section 4 says how."
with intro_box:
    st.markdown(
        "A GPT-style model writes one token at a time. Each new token needs its own query, key and value; the "
        "keys and values of all earlier tokens never change (a causal mask means no token looks ahead), so they "
        "are kept in a **KV cache**. Each step adds one row of K and one row of V, and the new query attends to "
        "every cached row. Here the toy layer takes your sentence's own tokens one at a time, as if it had written "
        "them " + real_one
    )
    st.latex(r"K_{1:t} = \begin{bmatrix} K_{1:t-1} \\ x_t W_K \end{bmatrix},\quad "
             r"V_{1:t} = \begin{bmatrix} V_{1:t-1} \\ x_t W_V \end{bmatrix},\quad "
             r"a_t = \mathrm{softmax}\!\Big(\frac{x_t W_Q\, K_{1:t}^\top}{\sqrt{d_k}}\Big),\quad c_t = a_t V_{1:t}")

    g = st.columns(3)[0].selectbox("Key/value heads g (shared by the query heads)", divisors(h),
                                   index=len(divisors(h)) - 1, key="generation_kv_heads",
                                   help=f"g = h = {h} is multi-head; smaller g shares the cache.", **BOUND)
check = check_cache(lesson.x, lesson.projections, None if g == h else g)

step_note_shown = False
with step_box:  # a note on a link's step goes above the buttons
    if STEP_KEY not in st.session_state and (linked := st.query_params.get(STEP_KEY)):
        if int(linked) <= T:  # the link's form was checked by check_link
            st.session_state[STEP_KEY] = int(linked)
        else:
            note_ignored(STEP_KEY, linked, f"the sentence has {counted(T, 'token')}")
            show_link_notes(key="generation_step_link_notes")  # (the settings' notes may have taken "link_notes")
            step_note_shown = True
    if not isinstance(st.session_state.get(STEP_KEY), int) or not 1 <= st.session_state[STEP_KEY] <= T:
        st.session_state[STEP_KEY] = 1


def slide_room(rows: list[str], value_title: str) -> int:
    """Presenter mode: what a heatmap draws beside its cells, its ``rows`` labels and its colour bar titled
    ``value_title`` ("" for none), at the slide's font."""
    longest = max((len(label) for label in rows), default=1)
    return 50 + int(0.55 * settings.font_size * (longest + len(value_title)))  # measured: 151 px for "1·The", "weight"


def slide_cell(columns: int, rows: list[str], value_title: str, width: int = SLIDE_HALF_PX) -> int:
    """Presenter mode: the cell size at which a heatmap of ``columns`` cells beside its ``rows`` labels and its colour
    bar titled ``value_title`` (at the slide's font) fits ``width`` pixels, at most the slide's cell size."""
    return max(8, min(settings.cell_size, (width - slide_room(rows, value_title)) // max(columns, 1)))


# A slide's layout in pixels (comments, not docstrings: Streamlit draws a page script's bare strings).
# The height of the shortest window a slide is made for (1280 × 720): what fits it fits 800 and 1080 too.
SLIDE_WINDOW_PX = 720
# Where the caches' charts start on a slide: under the page's title, the step's buttons and its line.
CACHE_TOP_PX = 274
# A cache chart's height besides its rows: the title over them, the feature labels and their axis title under.
CACHE_FRAME_PX = 94
WINDOW_MARGIN_PX = 8
# The new query's chart besides its one row, and its least height (its "token" axis title's length and more).
QUERY_FRAME_PX, QUERY_CHART_MIN_PX = 104, 132
# From the new query's chart down to its weights' chart: the heading between them.
WEIGHTS_HEADING_PX = 71
# The weights' bars lie across, one row per key (its name level, its value at the bar's end, both at the labels'
# font): under the rows their axis's numbers (a slide leaves out its title, which the heading over it says), and
# the least room a row takes besides its text. (Upright bars, drawn on the page and on a slide whose rows did not
# fit, turned their values on their side at a smaller font and slanted the keys' names once a value outgrew its
# bar: the chart changed its direction with the sentence and between page and slide.)
ACROSS_AXIS_PX, ACROSS_ROW_MARGIN_PX = 36, 4
# On the page: the most the rows take (32 keys get rows of 20 px, a short sentence its rows at most PAGE_BAR_ROW_PX)
# and the bars' length at a weight of 1.
PAGE_BARS_PX, PAGE_BAR_ROW_PX, PAGE_BARS_WIDTH_PX = 640, 30, 400
# A link note's box above the slide (one line, and its gap), each further line, the characters a line holds at
# 1280 px, and those of the note's words before the values.
NOTE_PX, NOTE_LINE_PX, NOTE_LINE_CHARS, NOTE_INTRO_CHARS = 75, 24, 150, 75


def note_height_px() -> int:
    """How far this run's link notes push the slide down (0: none shown): the settings' box, and the step's under
    it (its note is the last one shown)."""
    shown = list(st.session_state.get(SHOWN_NOTES_KEY) or [])
    boxes = [shown[:-1], shown[-1:]] if step_note_shown else [shown]
    return sum(NOTE_PX + NOTE_LINE_PX * ((NOTE_INTRO_CHARS + len("; ".join(box))) // NOTE_LINE_CHARS)
               for box in boxes if box)


def slide_cache_layout(features: int, notes_px: int) -> tuple[int, int, list[int]]:
    """Presenter mode: the width and the height, in pixels, of a cell of the K cache, the V cache and the new query
    (``features`` columns each, three charts side by side, V's with the colour bar), and the three columns' widths.
    A cell is as wide as the slide allows (at most the slide's cell size) and as tall as that while the sentence's T
    rows fit a 720-px-tall window under the slide's top and the link notes (``notes_px`` tall, ``note_height_px``),
    else shorter (a token's label still fits in a row): the numbers need the width, not the height. (Square cells
    of an 11-token sentence went below an 800-px window from step 9, and at 53 px they showed colours only; rows
    sized for 800 px went below a 720-px window, or below 800 px under a link note.) The sizes are the sentence's,
    not the step's, so nothing moves from step to step."""
    bare, with_bar = slide_room(labels, ""), slide_room(labels, "feature value")
    width = (PRESENTER_COLUMN_PX - 2 * PRESENTER_GAP_PX - 2 * bare - with_bar) // max(3 * features, 1)
    cell = max(8, min(settings.cell_size, width))
    rows_room = SLIDE_WINDOW_PX - CACHE_TOP_PX - notes_px - CACHE_FRAME_PX - WINDOW_MARGIN_PX
    row_px = max(SLIDE_ROW_PX, min(cell, rows_room // T))
    widths = [bare + features * cell, with_bar + features * cell, bare + features * cell]
    return cell, row_px, widths


def cache_cell(cell: int, features: int, columns: int) -> int:
    """Presenter mode: the width of a cell of a chart of ``columns`` cells in a column laid out for ``features``
    cells ``cell`` wide: a narrower head fills its column (d_v = 4 beside d_k = 32 drew four 8-px cells, their labels
    printed over one another as "v1234")."""
    return max(cell, min(settings.cell_size, features * cell // max(columns, 1)))


def slide_weights_rows_px(row_px: int, notes_px: int) -> int:
    """Presenter mode: the room for the rows of the new query's bars, under its one-row chart (``row_px`` tall, as
    the caches' rows) and the heading, above the bars' axis, in a 720-px window under the link notes (``notes_px``
    tall)."""
    query_px = max(QUERY_CHART_MIN_PX, QUERY_FRAME_PX + row_px)
    return (SLIDE_WINDOW_PX - WINDOW_MARGIN_PX - CACHE_TOP_PX - notes_px - query_px - WEIGHTS_HEADING_PX
            - ACROSS_AXIS_PX)


def fitting_title(titles: tuple[str, ...], width_px: float) -> str:
    """The first of ``titles`` (longest first) that fits over a chart ``width_px`` wide at the page's title font
    (Vega cuts a longer one to "…"), else the last one."""
    room = charts.title_chars(width_px, settings.font_size)
    return next((title for title in titles if len(title) <= room), titles[-1])


def move(delta: int) -> None:
    st.session_state[STEP_KEY] = min(max(st.session_state[STEP_KEY] + delta, 1), T)


def step_buttons() -> None:
    """Back, Start again and Next token; → and ← press Back and Next (Streamlit ignores them while an input has
    the focus), and on a slide a clicker's Page Up and Page Down too, as on the step-through."""
    back, reset, forward = st.columns(3)
    back.button("◀ Back", on_click=move, args=(-1,), disabled=st.session_state[STEP_KEY] == 1, width="stretch",
                key=GENERATION_BACK_KEY, shortcut="Left")
    reset.button("Start again", on_click=move, args=(-T,), width="stretch", key="generation_reset")
    forward.button("Next token ▶", on_click=move, args=(1,), disabled=st.session_state[STEP_KEY] == T,
                   width="stretch", key=GENERATION_NEXT_KEY, shortcut="Right")
    if settings.presenter:  # hidden twins for the clicker's keys (a reader's Page Down scrolls the page)
        with st.container(key="clicker_keys", height=1, border=False):
            st.button("back", on_click=move, args=(-1,), key="generation_back_page_key", shortcut="PageUp")
            st.button("next", on_click=move, args=(1,), key="generation_next_page_key", shortcut="PageDown")


def new_query_weights(row, row_px: int, width_px: int) -> dict:
    """The new query's weights over the cached keys (``row``: a ``row_frame`` of t keys) as bars lying across,
    ``row_px`` tall each and ``width_px`` long at a weight of 1, on the page and on a slide alike: a student compares
    the bars' lengths down one column of level key names ("3·fox"), and each step adds a row under the others, as
    it adds one to the caches. Values print at the labels' font; a row is never thinner than that text."""
    row_px = max(row_px, settings.font_size + ACROSS_ROW_MARGIN_PX)
    return cached_spec(charts.weight_bars_across, row, font_size=settings.font_size, row_px=row_px, width=width_px,
                       value_font_px=settings.font_size, axis_title=not settings.presenter)


def page_weights_row_px() -> int:
    """On the page, the height of a bar's row: at most PAGE_BAR_ROW_PX, and the sentence's T rows within
    PAGE_BARS_PX. It is the sentence's, not the step's, so the rows keep their height from step to step."""
    return min(PAGE_BAR_ROW_PX, PAGE_BARS_PX // T)


def slide_weights_layout(column_px: int, rows_room_px: int) -> tuple[int, int]:
    """On a slide, the new query's bars' row height and length in its column ``column_px`` wide beside the caches:
    the sentence's T rows fill ``rows_room_px`` (``slide_weights_rows_px``) up to the slide's cell size, but are
    never thinner than the slide's text (SLIDE_ROW_PX, as the caches'): a long sentence's bars reach below the
    first screen, as its caches do."""
    row_px = max(SLIDE_ROW_PX, min(settings.cell_size, rows_room_px // T))
    return row_px, column_px - int(charts.fit_room_px(labels, settings.font_size))


with step_box:
    step_buttons()
    t = st.session_state[STEP_KEY]
    keep_in_link(STEP_KEY, str(t))  # step 1 too: see url_state.ALWAYS_IN_LINK
    step = check.steps[t - 1]
    head = settings.head
    row = frames.row_frame(step.weights[head, 0], frames.AxisLabels(labels[:t]))
    in_head = f", head {head + 1}" if h > 1 else ""
    # shared keys and values: the caches are the key/value head's, which several query heads read
    in_kv_head, in_kv_short = ((f", key/value head {step.kv_group(head) + 1}", f", kv head {step.kv_group(head) + 1}")
                               if g < h else (in_head, in_head))
    if settings.presenter:  # the step's line stands for section 1's heading (a slide has no room for both)
        st.progress(t / T, text=f"1 · The cache at step {t} of {T}: {counted(t, 'row')} of K and V, the newest "
                                f"token {plain(labels[t - 1])}")  # ("1 · Step 1 of 7" read as two counts)
    else:
        st.progress(t / T, text=f"Step {t} of {T}: the newest token is {plain(labels[t - 1])}")
        st.subheader(f"1 · After step {t} the cache holds {counted(t, 'row')} of K and V")
    view = StageView(step, labels[t - 1:t], 0, head, settings.cell_size, settings.font_size, key_labels=labels[:t])
    features = min(max(step.d_k, step.d_v), MAX_FEATURES_SHOWN)
    if not settings.presenter and view.fit_cell(features + 3, 1 / 3) < MIN_SIDE_BY_SIDE_CELL:
        view = replace(view, stacked=True)  # wide heads: one under another, each full width
    # Each chart's titles, longest first: a narrow chart takes the longest that fits (the caption names the head)
    matrices = ((step.q[head], labels[t - 1:t], (f"new query q_t{in_head}", "new query q_t", "q_t"), "q"),
                *((values, labels[:t], (f"{name} cache ({counted(t, 'row')}){in_kv_head}", f"{name} cache{in_kv_head}",
                                        f"{name} cache{in_kv_short}", f"{name} cache", name), name.lower())
                  for name, values in (("K", step.k[head]), ("V", step.v[head]))))
    if settings.presenter:
        # On a slide the K cache, the V cache and (beside them) the new query with its weights, side by side, so
        # that the row each step adds is on the first screen. The three share one colour scale (one colour bar,
        # beside V) and one cell size, each drawn at its own size (not shrunk with its text) at the slide's font.
        # The sizes are the sentence's, not the step's, so nothing moves from step to step.
        domain = shared_domain(*(values for values, *_ in matrices))
        notes_px = note_height_px()
        cell, row_px, widths = slide_cache_layout(features, notes_px)
        k_col, v_col, q_col = st.container(key=GENERATION_CACHES_KEY).columns(widths)  # (its zoom: the slide's style)
        q_col = q_col.container(key="generation_new_query")
        for col, (values, rows, titles, prefix) in zip((q_col, k_col, v_col), matrices):
            shown, _ = shown_features(values)
            own_cell = cache_cell(cell, features, shown.shape[-1])
            value_font = slide_cell_value_font(own_cell, settings.font_size, signed=True, row_px=row_px,
                                               largest=True)
            spec = cached_matrix_chart(
                charts.matrix_heatmap, shown, rows, frames.feature_labels(shown.shape[-1], prefix),
                row_name="token", col_name="feature", title=fitting_title(titles, features * cell),
                cell_size=row_px, font_size=settings.font_size, domain=domain, legend=prefix == "v",
                show_values=value_font is not None, value_font_px=value_font, value_title="feature value",
                follow_row=len(rows) - 1)  # the row this step added
            with col:  # cells row_px tall (and the colour bar as long as the rows), own_cell wide
                show_chart({**spec, "width": shown.shape[-1] * own_cell})
        with q_col:
            st.markdown(f"**Its weights over the {counted(t, 'cached key')}**")
            column_px = (PRESENTER_COLUMN_PX - 2 * PRESENTER_GAP_PX) * widths[2] // sum(widths)
            rows_room = slide_weights_rows_px(row_px, notes_px)
            show_chart(new_query_weights(row, *slide_weights_layout(column_px, rows_room)))
    else:
        # Side by side, the three share one colour scale (one colour bar, beside V) and one cell size that fills
        # the row
        cell = domain = None
        if not view.stacked:
            domain = shared_domain(*(values for values, *_ in matrices))
            cell = shared_scale_cell(view, labels[:t], sum(shown_features(v)[0].shape[-1] for v, *_ in matrices), 3)
        drawn = []
        for values, rows, titles, prefix in matrices:
            columns = shown_features(values)[0].shape[-1]
            title = fitting_title(titles, columns * (cell or view.fit_cell(columns + 3, 1 / 3)))
            # the caches' bottom row, the one this step added, outlined as on a slide
            own = view if prefix == "q" else replace(view, labels=rows, follow=len(rows) - 1)
            drawn.append(feature_heatmap(own, values, rows, title, prefix=prefix, share=1 / 3, domain=domain,
                                         cell=cell, legend=view.stacked or prefix == "v")[0])
        cols = [st.container() for _ in drawn] if view.stacked else side_by_side(drawn, view)
        for col, chart in zip(cols, drawn):
            with col:
                show_chart(chart)
    st.caption(f"The bottom row of K and V (outlined) is new: {plain(labels[t - 1])} was projected once and appended. "
               + (f"The charts show head {head + 1} of {h} (the head is picked {in_the_sidebar()}). " if h > 1 else "")
               + (f"With g = {g}, head {head + 1} reads key/value head {step.kv_group(head) + 1}." if g < h else ""))

st.subheader("2 · The new query attends to everything cached")
if not settings.presenter:  # (a slide shows the bars beside the caches, on its first screen)
    st.markdown(f"**Weights of the new query {plain(labels[t - 1])} over the {counted(t, 'cached key')}** "
                "(they add up to 1):")
    show_chart(new_query_weights(row, page_weights_row_px(), PAGE_BARS_WIDTH_PX))
# Step r's row covers the keys cached by then; the later keys did not exist yet: grey with ×, like the cells
# the causal mask blocks in the full attention on the right.
so_far, not_cached = np.zeros((t, T)), np.ones((t, T), dtype=bool)
for r, cached_step in enumerate(check.steps[:t]):
    cached_row = frames.to_numpy(cached_step.weights[head, 0])
    so_far[r, :len(cached_row)], not_cached[r, :len(cached_row)] = cached_row, False
# two charts side by side (on a slide, each fits half the window at the slide's font)
cell = slide_cell(T, labels, "weight") if settings.presenter else max(8, min(settings.cell_size - 6, 330 // T))
weights_options = {"domain": (0, 1), "value_title": "weight", "cell_size": cell, "font_size": settings.font_size,
                   "show_values": T <= 8 and cell >= (SLIDE_CELL if settings.presenter else 30)}
left, right = st.columns(2)
with left:
    show_chart(cached_matrix_chart(charts.heatmap, so_far, labels[:t], labels, blocked=not_cached,
                                   title="rows made by the cache (" + ("step 1)" if t == 1 else f"steps 1–{t})"),
                                   **weights_options))
with right:
    show_chart(cached_matrix_chart(charts.heatmap, check.full.weights[head], labels, labels,
                                   blocked=~check.full.mask[head],
                                   title="full causal attention, all rows at once", **weights_options))
st.caption("Grey cells with ×: keys that did not exist yet at that step (left), blocked by the causal mask "
           "(right). Every row matches the same row on the right.")
left, right = st.columns([1, 2])
left.metric("Largest |cached − full causal|", size_in_words(check.max_abs_diff),
            help="Over every output number of every step: the stacked step outputs against full causal attention.")
right.success("The same numbers: a token's attention row only uses keys and values of tokens at or before it, "
              "and those never change, so caching them loses nothing.")

st.subheader("3 · Time per step, with and without the cache")
with st.spinner("Timing one generation step at several lengths…"):
    timings = measured_timings()
show_chart(cached_spec(timing_chart, timing_frame(timings), font_size=settings.font_size,
                       width=PRESENTER_COLUMN_PX - SLIDE_LINES_FRAME_PX if settings.presenter else TIMING_WIDTH_PX))
last = timings[-1]
st.markdown(f"Measured on this server (d_model 64, 8 heads, the CPU time of one thread, the fastest of 9 runs): at "
            f"{last.length} tokens a step takes **{last.cached_ms:.2f} ms** with the cache and "
            f"**{last.recompute_ms:.2f} ms** recomputing every key, value and row. With the cache a step's work grows "
            "linearly with the length (at these short lengths fixed costs hide most of it, so its line is nearly "
            "flat). Without it every step projects all n tokens again (n times the work) and scores n × n pairs: "
            "the time grows with n at first and, once the n × n part dominates, with n².")

show_page_questions("generation", generation_questions(step=t, num_tokens=T, kv_heads=int(g), d_k=step.d_k,
                                                        d_v=step.d_v))



def check_linked_pick(generated: list[str], first: int) -> None:
    """A link's generated token (``PICK_KEY``), made to fit the pick box before it reads it: the box writes the
    token's label ("9·␣the"; ``generated`` holds the new tokens' labels), and a link may give its position in the
    text alone ("9"). A position among the new tokens' (``first`` + 1 to ``first`` + len(generated)) becomes that
    token's label; any other is dropped with a note."""
    raw = st.query_params.get(PICK_KEY)
    if raw is None or PICK_KEY in st.session_state:
        return
    position = int(raw.split("·", 1)[0])  # check_link lets only "<digits>" or "<digits>·<label>" through
    if first < position <= first + len(generated):
        if raw != generated[position - first - 1]:
            set_link_value(PICK_KEY, generated[position - first - 1])
    else:
        note_ignored(PICK_KEY, raw, f"the model wrote tokens {first + 1} to {first + len(generated)} of the text")


def real_generation() -> None:
    """Section 4: a GPT-style model, if the server has one, writes new tokens; where each looked, in one layer.
    Returns early (the page's path link still follows) without a model, with the toggle off or a bad prompt; a slide
    without a model leaves the section out.

    Every choice is kept in the page's address, so a class opening the lecturer's link sees the same tokens. A
    link may name only a model offered here (one some local source holds, or the hub where the host allows it): it
    never makes the server download one. A value the model or its text cannot have is dropped with a note."""
    if not offered and settings.presenter:  # its note is for whoever runs the server, not for a class
        return
    st.subheader("4 · A real model generating")
    st.markdown("A GPT-style model continues your sentence, always taking its most likely next token, with its own "
                "KV cache. For each new token we show where it looked, in every head of one layer.")
    if not offered:
        st.info("No GPT-style model is available on this server, so this part is left out; everything above works "
                "without one. (A GPT-style model is one that writes text a token at a time, such as distilgpt2. "
                "If you run the app yourself, on your own computer say, you can add one: a folder holding "
                "`distilgpt2/` (saved with transformers' `save_pretrained`), named by the environment variable "
                "`ATTENTION_MODEL_DIR` when you start the app.)",
                icon=":material/info:")
        return
    use_real = st.toggle("Generate with a real GPT-style model", key="generation_real",
                         help="distilgpt2 or gpt2, from a local folder or the model hub where this server allows it.",
                         **BOUND)
    if not use_real:
        return

    check_linked_choice("generation_model", offered, "one of the GPT-style models offered here: " + ", ".join(offered))
    show_link_notes(key="generation_model_link_notes")
    left, right = st.columns(2)
    name = left.selectbox("Model", offered, key="generation_model", **BOUND)
    count = right.slider("New tokens", 1, MAX_NEW_TOKENS, 6, key="generation_count", **BOUND)
    if load_or_explain(name) is None:
        return
    try:
        with st.spinner(f"{name} is writing…"):
            gen = cached_generation(name, config.sentence, int(count))
    except AttentionInputError as err:
        st.warning(f"**Please adjust the prompt.** {err}", icon=":material/warning:")
        return
    if gen.truncated:
        st.info(f"The prompt was long, so only its last {gen.prompt_length} pieces were kept "
                f"(prompt and new tokens together stay within {MAX_REAL_MODEL_TOKENS}).")
    prompt_text = "".join(gen.tokens[:gen.prompt_length]).replace("␣", " ")
    new_text = "".join(gen.tokens[gen.prompt_length:]).replace("␣", " ")
    st.markdown(f"**Prompt:** {plain(prompt_text)}  \n**Generated:** {plain(new_text)}")
    all_labels = list(frames.token_labels(gen.tokens))
    loaded_layers = gen.full_attentions.shape[0]
    check_linked_pick(all_labels[gen.prompt_length:gen.prompt_length + gen.num_generated], gen.prompt_length)
    check_linked_choice("generation_layer", range(1, loaded_layers + 1), f"{name} has layers 1 to {loaded_layers}")
    show_link_notes(key="generation_link_notes")
    left, right = st.columns(2)
    pick = left.select_slider("Generated token", options=list(range(gen.num_generated)),
                              format_func=lambda s: all_labels[gen.prompt_length + s], key=PICK_KEY, **BOUND)
    layer = right.selectbox("Layer", range(1, loaded_layers + 1), key="generation_layer", **BOUND)
    weights = gen.step_attentions[pick][int(layer) - 1]  # (h, P + s + 1)
    keys = all_labels[:gen.prompt_length + pick + 1]
    heads = [f"head {i + 1}" for i in range(weights.shape[0])]
    cell = max(10, min(settings.cell_size - 6, 900 // (len(keys) + 4)))
    show_chart(cached_matrix_chart(charts.heatmap, weights, heads, keys, row_name="head", col_name="key", row="head",
                                   col="key", domain=(0, 1), value_title="weight", cell_size=cell,
                                   font_size=settings.font_size, show_values=False,
                                   title=f"{all_labels[gen.prompt_length + pick]} read into the cache: layer "
                                         f"{int(layer)}, every head"))
    st.metric("Largest |step-by-step − one full pass|", size_in_words(gen.max_abs_diff),
              help="Every generated token's attention row, in every layer and head, against the same row of one causal "
                   "pass over the whole text.")
    st.success("Takeaway: a real decoder does exactly this: one new row of K and V per token, one new query row, and "
               "the same attention as if it had read the whole text at once.")


real_generation()
