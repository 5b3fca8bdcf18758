"""Order and position: attention alone ignores word order; sinusoidal encodings, RoPE and ALiBi add it."""

import math
from dataclasses import replace

import streamlit as st

from attention_core import (AttentionInputError, MAX_POSITION, alibi_attention, alibi_slopes, equivariance_check,
                            rope_shift_check, shuffled_order, sinusoidal_positions)
from attention_ui import charts, frames
from attention_ui.checks.why import alibi_questions, position_questions
from attention_ui.controls import PRESENTER_GAP_PX, keep_page_settings, lesson_settings, show_slide_row, stop_page
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_matrix_chart, cached_spec
from attention_ui.text import counted, plain, size_in_words
from attention_ui.views import (DRAWN_FRAME_SHARE, PRESENTER_COLUMN_PX, SIGNED_READABLE_CELL_PX, StageView,
                                 column_cell, feature_heatmap, head_title, in_the_sidebar, outline_note, prints_values,
                                 shared_domain, shared_scale_cell, show_chart,
                                 shown_features, side_by_side, slide_largest_value_font, slide_token_pair,
                                 slide_usual_value_font,
                                 stacked_slide_cell, token_heatmap)
from attention_ui.why import encoding_lines, half_share, line_chart, page_choice, page_slider


def positions_span(first: int, count: int, dash: str) -> str:
    """"positions 0–6", or "position 0" for a one-token sentence ("positions 0–0" read oddly)."""
    return f"position {first}" if count == 1 else f"positions {first}{dash}{first + count - 1}"


KEYS = ("pos_shuffle", "pos_shift", "pos_alibi")
ALIBI_HEAD_KEY = "_alibi_head"  # session key: the head the slope slider last started from
ALIBI_DIVISORS = [2**k for k in range(8, -1, -1)]  # slopes 1/256, …, 1/2, 1 (gentle to steep, left to right)
LINE_POSITIONS = 64  # positions drawn in the line chart of the encodings
EQUIVARIANT = 1e-4  # a largest difference below this counts as "the same rows, reordered"

settings = lesson_settings("Order and position")
half = half_share(settings.presenter)
keep_page_settings(KEYS)
lesson, head = settings.lesson, settings.head
tokens, T = lesson.tokens, len(lesson.tokens)
view = StageView(lesson.trace, settings.labels, settings.follow, head, settings.cell_size, settings.font_size)
st.markdown(
    "Attention compares every query with every key, and nothing in QKᵀ says which token came first. "
    "Shuffle the sentence and each token still finds the same partners: the outputs are the same rows, "
    "only reordered. For attention “dog bites man” and “man bites dog” are the same set of words, so a "
    "transformer must be told where each token stands."
)
st.latex(r"\mathrm{Attn}(P X) = P\, \mathrm{Attn}(X) \quad \text{for every permutation } P")


SIGNED_CHARS = 6  # the widest number the grids print: a signed "−0.390"
# On a slide, what a window's height keeps besides RoPE's two grids of scores: the menu bar and the line under them
# (a clicker's press brings the grids up once the section's words and slider are seen; each with its own row labels
# and colour bar, an 11-token sentence's scores printed 12 px)
ROPE_ROOM_PX = 170


def slide_pair(columns: int, legend_title: str, legends: int, key: str) -> tuple[int, int | None, list, bool]:
    """On a slide, two grids of ``columns`` cells each beside the sentence's token labels, with ``legends`` colour
    bars titled ``legend_title`` (one: the second grid's): their cell size, the font of their numbers (None: too
    small to read, colours only), the two places to draw them in and whether these are one above the other: side
    by side while their numbers are as large as the other slides print them (the slide's 16 px). (Cells sized by
    ``StageView.fit_cell`` printed them at 13-14 px.) The places are in the container ``key``, whose charts grow
    with a large window (``presenter_charts_zoom_style``)."""
    font = settings.font_size
    wanted = slide_usual_value_font(font)
    rows = charts.fit_room_px(settings.labels, font)  # the token labels and the axis title beside one grid
    legend = charts.label_px([legend_title, *charts.LEGEND_NUMBERS], font) + font + 8

    def value_font(cell: int) -> int:
        return min(wanted, int(cell / (charts.VALUE_CHAR_EM * SIGNED_CHARS)))

    cell = column_cell(view, PRESENTER_COLUMN_PX - PRESENTER_GAP_PX, 2 * columns, 2 * rows + legends * legend)
    stacked = value_font(cell) < wanted
    if stacked:  # only when that makes the cells much larger: the two are drawn to be compared
        tall = stacked_slide_cell(cell, column_cell(view, PRESENTER_COLUMN_PX, columns, rows + legend),
                                  len(settings.labels))
        stacked, cell = tall is not None, tall or cell
    box = st.container(key=key)
    if stacked:
        places = [box.container(), box.container()]
    else:  # each column as wide as its grid (the one with a colour bar is wider)
        places = box.columns([columns * cell + DRAWN_FRAME_SHARE * (rows + (legend if legends == 2 or i else 0))
                             for i in (0, 1)])
    # printed as large as the cells hold, up to the slide's largest numbers (at the usual 16 px they were 13 px once
    # a 1024-px window shrank the grids)
    font_px = min(slide_largest_value_font(font), int(cell / (charts.VALUE_CHAR_EM * SIGNED_CHARS)))
    return cell, font_px if font_px >= charts.MIN_FITTED_VALUE_PX else None, places, stacked


def slide_grid(builder, values, rows, cols, title: str, *, cell: int, value_font: int | None, follow: int,
               **options) -> dict:
    """A slide's grid (``charts.heatmap`` or ``charts.matrix_heatmap``) drawn with ``cell``-px cells and its
    numbers at ``value_font`` px (None: colours only, the values in the tooltips)."""
    return cached_matrix_chart(builder, values, rows, cols, title=title, cell_size=cell, font_size=settings.font_size,
                               value_font_px=value_font, show_values=value_font is not None, follow_row=follow,
                               **options)


def show_gap(check, label: str) -> None:
    """The largest difference between the shuffled run and the reordered original run, and its verdict."""
    left, right = st.columns([1, 2], vertical_alignment="center")
    left.metric(label, size_in_words(check.gap))
    if check.gap < EQUIVARIANT:
        right.markdown("**Equivariant:** the shuffled sentence gives exactly the same output rows, reordered "
                       "(the difference is rounding).")
    else:
        right.markdown("**Not equivariant any more:** after reordering, the rows differ. The output now depends "
                       "on where each token stands.")


# ------------------------------------------------------------------------------------------ shuffle
st.subheader("1 · Without positions, shuffling only shuffles the output")
order = None
if T < 2:
    st.info("Type a sentence of at least two tokens to shuffle it.")
else:
    shuffle = page_slider("Shuffle number", 1, 99, 1, "pos_shuffle", help="Each number is a different seeded shuffle.")
    order = shuffled_order(T, shuffle)
    shuffled_labels = frames.token_labels([tokens[i] for i in order])
    st.markdown("**Shuffled sentence:** " + " ".join(plain(tokens[i]) for i in order))
    plain_check = equivariance_check(lesson.x, lesson.projections, order)
    # On the page the two share one colour scale (the same numbers, reordered), one colour bar and one cell size;
    # one above the other when side by side would print their numbers too small (then each has its colour bar).
    # On a slide likewise, their numbers as large as the slide's other charts print them
    domain = shared_domain(plain_check.output)
    features = shown_features(plain_check.output)[0].shape[-1]
    moved = replace(view, follow=list(order).index(settings.follow))  # the followed token, where it moved to
    titles = ("output for the sentence", "output for the shuffled sentence")
    if settings.presenter:
        cell, value_font, places, stacked = slide_pair(features, "feature value", 1, "shuffled_outputs")
        value_font = value_font if features <= 12 else None
        outputs = [shown_features(plain_check.output)[0], shown_features(plain_check.shuffled_output)[0]]
        drawn = [slide_grid(charts.matrix_heatmap, values, rows, frames.feature_labels(features, "o"), title,
                            cell=cell, value_font=value_font, follow=shown_view.follow, row_name="token",
                            col_name="feature", row="token", col="feature", value_title="feature value",
                            domain=domain, legend=stacked or shown_view is moved)
                 for values, rows, title, shown_view in zip(outputs, (settings.labels, shuffled_labels), titles,
                                                            (view, moved))]
    else:
        cell = shared_scale_cell(view, settings.labels, 2 * features, 2)
        stacked = cell < SIGNED_READABLE_CELL_PX
        if stacked:
            cell = shared_scale_cell(view, settings.labels, features, 1)
        drawn = [feature_heatmap(view, plain_check.output, settings.labels, titles[0], prefix="o", share=half,
                                 domain=domain, cell=cell, legend=stacked)[0],
                 feature_heatmap(moved, plain_check.shuffled_output, shuffled_labels, titles[1], prefix="o",
                                 share=half, domain=domain, cell=cell)[0]]
        places = [st.container(), st.container()] if stacked else side_by_side(drawn, view)
    for column, chart in zip(places, drawn):
        with column:
            show_chart(chart)
    show_gap(plain_check, "largest difference, no positions")
    followed, moved_to = settings.labels[settings.follow], shuffled_labels[moved.follow]
    where = f", {plain(moved_to)} in the shuffled sentence" if moved_to != followed else ""
    st.caption("Both runs use the same weights and no mask (a causal mask itself depends on order)."
               + ("" if settings.presenter else " " + outline_note(followed, where)))

# ---------------------------------------------------------------------------------------- sinusoidal
d_model = lesson.x.shape[1]
st.subheader("2 · Sinusoidal positional encodings")
st.markdown(
    "The original Transformer adds a fixed vector to each slot: position p gets sines and cosines of p at "
    "frequencies that fall from one column pair to the next, so every position has its own pattern and "
    "nearby positions have similar ones. The words move; the encodings stay with the slots."
)
st.latex(r"PE_{p,\,2i} = \sin\!\left(\frac{p}{10000^{2i/d_{model}}}\right),\qquad "
         r"PE_{p,\,2i+1} = \cos\!\left(\frac{p}{10000^{2i/d_{model}}}\right),\qquad X' = X + PE")
try:
    encodings = sinusoidal_positions(T, d_model, dtype=lesson.x.dtype, device=lesson.x.device)  # (T, d_model)
    positioned = None if order is None else equivariance_check(lesson.x, lesson.projections, order,
                                                               positions=encodings)
except AttentionInputError as err:
    st.error(f"**The encodings cannot be built for these settings.** {err}", icon=":material/warning:")
    stop_page()
chart, note = feature_heatmap(view, encodings, frames.AxisLabels(f"p = {p}" for p in range(T)),  # p counts from 0
                              f"PE for {positions_span(0, T, '–')} (rows) × d_model = {d_model} (columns)", prefix="d",
                              row_name="position")
show_chart(chart)
if note:
    st.caption(note)
columns = sorted({0, 2, d_model // 2 - d_model // 2 % 2, d_model - 2} & set(range(0, d_model, 2)))
long_range = sinusoidal_positions(LINE_POSITIONS, d_model)  # (64, d_model)
show_chart(cached_spec(line_chart, encoding_lines(long_range, columns), x="position", y="value", series="column",
                       title=f"some sin columns over positions 0–{LINE_POSITIONS - 1}: the frequency falls with i",
                       font_size=settings.font_size, width=900 if settings.presenter else 560, height=220))
st.caption(f"Positions count from p = 0 as in the formula (the first token, {plain(settings.labels[0])}, sits at "
           "p = 0), and column d1 is 2i = 0. It turns by one radian per position, so at whole positions it jumps "
           "about; each later column pair turns more slowly and draws a smoother, longer wave.")
if positioned is not None:
    show_gap(positioned, "largest difference, with PE")

# ----------------------------------------------------------------------------------------------- RoPE
st.subheader("3 · Rotary embeddings (RoPE): scores that depend on distance")
st.markdown(
    "Most recent models rotate the queries and keys instead of adding vectors to X. Each pair of features "
    "of q (and of k) at position p is turned by the angle p·θᵢ. A rotation keeps lengths, and the score of a "
    "rotated query at m with a rotated key at n depends on their positions only through **m − n**: move every "
    "token by the same amount and every score stays the same."
)
st.latex(r"\theta_i = 10000^{-2i/d_k},\qquad q_m' = R(m\theta)\, q_m,\quad k_n' = R(n\theta)\, k_n,\qquad "
         r"q_m'^{\top} k_n' = q_m^\top R\big((n - m)\theta\big)\, k_n")
d_k = lesson.trace.d_k
if d_k % 2:  # (the demo had stopped here: a lecturer's slider slipped to d_k = 33 and the section was gone)
    st.info(f"RoPE turns features in pairs. With this lesson's odd d_k = {d_k}, the first {d_k - 1} are turned (the "
            f"formula's d_k is then {d_k - 1}: θᵢ = 10000^(−2i/{d_k - 1})) and the last one is left as it is, as "
            "models that turn only part of q and k do: its part of a score depends on no position.",
            icon=":material/info:")
st.caption(f"The grids show the scores divided by √d_k = {d_k ** 0.5:.3f}, as attention itself does (Step "
           "through's stage 4, “Scaling by √d_k”): a token at position 0 is not turned, so the first row's score with "
           "itself is the scaled score that stage shows for it.")
shift = page_slider("Shift every position by", 0, 1000, 100, "pos_shift",
                    help=f"Positions up to {MAX_POSITION:,} are accepted by the core.")
try:
    rope = rope_shift_check(lesson.trace.q[head], lesson.trace.k[head], shift)
except AttentionInputError as err:
    st.error(f"**The shift cannot be applied.** {err}", icon=":material/warning:")
    stop_page()
bound = float(rope.scores.abs().max()) or 1.0
rope_titles = (f"RoPE scores ÷ √d_k, {positions_span(0, T, '…')}{head_title(view)}",
               f"{positions_span(shift, T, '…')}{head_title(view)}")
if settings.presenter:  # one set of row labels and one colour bar, as wide as the window and as tall as it allows
    slide_view = replace(view, fit=True)
    show_slide_row("rope_scores", slide_view, slide_token_pair(
        slide_view, *zip((rope.scores, rope.shifted_scores), rope_titles), domain=(-bound, bound)), ROPE_ROOM_PX)
else:
    rope_share = half
    if view.fit_cell(T + 3, half) < SIGNED_READABLE_CELL_PX:
        rope_share, left, right = 1.0, st.container(), st.container()  # side by side, its scores would be too small
    else:
        left, right = st.columns(2)
    for column, scores, title in zip((left, right), (rope.scores, rope.shifted_scores), rope_titles):
        with column:
            show_chart(token_heatmap(view, scores, title, domain=(-bound, bound), share=rope_share))
left, right = st.columns([1, 2], vertical_alignment="center")
left.metric("largest score difference after the shift", size_in_words(rope.gap))
right.markdown("The two grids are the same: a RoPE score sees how far apart two tokens are, not where they are. "
               "(Values, V, are not rotated.)")


st.subheader("4 · ALiBi: a penalty for distance")
heads = lesson.trace.num_heads
paper = alibi_slopes(heads)  # (h,) the paper's slope of each head
st.markdown(
    "ALiBi (used by BLOOM and MPT) adds nothing to X and turns nothing: it subtracts a penalty from each score, the "
    "slope **m** times the distance between the two tokens. Each head has its own slope, from 1/2 down to 1/256 with "
    "8 heads: a steep head looks near, a shallow one looks far. As with RoPE only the distance counts. Its point is "
    "length: sinusoidal and rotary encodings are defined at any position too, yet models trained with them read "
    "texts longer than their training texts badly, while ALiBi's models keep reading well, helped by the steady "
    "pull toward nearby tokens (Press et al., 2022). The penalty has no sign: it tells near from far, and the causal "
    "mask, which hides the keys after a query, tells before from after.")
st.latex(r"a_{ij} = \mathrm{softmax}_j\Big(\frac{q_i \cdot k_j}{\sqrt{d_k}} - m_k\,|i - j|\Big),\qquad "
         r"m_k = 2^{-8k/h}\ \ (\text{head } k = 1 \ldots h)")
st.caption("The slopes' formula holds for h a power of two (1, 2, 4, 8 heads); for another h the paper takes the "
           "slopes of the power of two below it, then every other slope of twice that (6 heads: 1/4, 1/16, 1/64, "
           "1/256, then 1/2 and 1/8).")
slopes_said = ", ".join(f"1/{round(1 / m)}" for m in paper.tolist())
own = min(ALIBI_DIVISORS, key=lambda n: abs(math.log2(n) + math.log2(float(paper[head]))))
if st.session_state.get(ALIBI_HEAD_KEY, head) != head:  # another head followed: its own slope (a link's is kept)
    st.session_state["pos_alibi"] = own
st.session_state[ALIBI_HEAD_KEY] = head
slope_text = {n: "1" if n == 1 else f"1/{n}" for n in ALIBI_DIVISORS}
divisor = page_choice("Slope m", ALIBI_DIVISORS, own, "pos_alibi", format_func=slope_text.get,
                      help=f"The paper gives this lesson's {counted(heads, 'head')} the slope"
                           f"{'s' if heads > 1 else ''} {slopes_said}; head {head + 1}'s is 1/{own}, where the "
                           "slider starts. The slider runs from the gentlest slope on the left to 1, steeper than any "
                           "of the paper's, on the right.")
slope = 1 / divisor
_, alibi_weights = alibi_attention(lesson.trace.q[head:head + 1], lesson.trace.k[head:head + 1],
                                   lesson.trace.v[head:head + 1], slope, lesson.trace.mask[head:head + 1])
alibi_titles = (f"weights without ALiBi{head_title(view)}", f"with ALiBi, m = {slope_text[divisor]}")
if settings.presenter:
    slide_view = replace(view, fit=True)
    show_slide_row("alibi_weights", slide_view, slide_token_pair(
        slide_view, *zip((lesson.trace.weights[head], alibi_weights[0]), alibi_titles), weights=True), ROPE_ROOM_PX)
else:  # side by side while their weights (0.123: no sign) still print; else one above the other
    alibi_share = half
    if prints_values(view.fit_cell(T + 3, half), settings.font_size, signed=False):
        left, right = st.columns(2)
    else:
        alibi_share, left, right = 1.0, st.container(), st.container()
    for column, values, title in zip((left, right), (lesson.trace.weights[head], alibi_weights[0]), alibi_titles):
        with column:
            show_chart(token_heatmap(view, values, title, weights=True, share=alibi_share))
far = T - 1
if far:
    said = (f"The penalty is m·|i − j|: {slope:g} for a neighbour, {slope * far:g} for tokens {far} apart, which "
            f"multiplies that key's e^score by e^−{slope * far:.3g} = {math.exp(-slope * far):.3g} before the "
            "softmax.")
    change = float((alibi_weights[0] - lesson.trace.weights[head]).abs().max())
    if change < 0.05:
        said += (f" Over {counted(T, 'token')} a slope of {slope_text[divisor]} changes no weight by more than "
                 f"{change:.3f}: ALiBi's gentle heads matter over long texts. Slide m to the right, up to 1/2 or 1, "
                 "to see the near keys win here.")
    if lesson.config.mask != "causal":
        said += (f" The paper's models are causal (pick “causal” {in_the_sidebar()}): a query sees only the keys "
                 "before it, and the further back a key lies, the more is taken off its score.")
else:
    said = "With one token there is no distance: the penalty m·|i − i| is 0 and the weight stays 1."
st.caption(said)

show_page_questions("order-and-position", position_questions(encodings, rope, settings.labels,
                                                             follow=settings.follow) + alibi_questions())
st.markdown("**Takeaway:** attention by itself treats a sentence as a bag of tokens; position enters only "
            "through what we add — encodings added to X, rotations of q and k that make scores depend on distance, "
            "or a penalty for distance taken off the scores (ALiBi).")
