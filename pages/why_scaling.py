"""Why the scores are divided by √d_k: the variance of q·k, a saturating softmax, vanishing gradients."""

import math
from dataclasses import replace

import altair as alt
import pandas as pd
import streamlit as st

from attention_core import (AttentionInputError, MAX_SCALING_D_K, MAX_SCALING_KEYS, MAX_SCALING_SAMPLES,
                            unscaled_weights)
from attention_ui.checks.why import scaling_questions
from attention_ui.controls import keep_page_settings, lesson_settings, show_slide_row, stop_page
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_chart, cached_spec
from attention_ui.views import (StageView, head_title, in_the_sidebar, mean_row_peak, outline_note, raise_d_k,
                                show_chart, show_table, slide_token_pair, token_heatmap)
from attention_ui.why import (GUIDE_COLOR, SCALING_D_KS, SERIES_COLORS, gradient_words, half_share, line_chart,
                              page_slider, row_stats_frame, saturation_table, show_row_stats, variance_table)

KEYS = ("why_dk", "why_keys", "why_samples")
TOLERANCE_SE = 4  # the sampled variance is "as expected" within this many standard errors of d_k

settings = lesson_settings("Why divide by √d_k?", uses_lesson=False)  # sections 1 and 2 never read the sentence
half = half_share(settings.presenter)
keep_page_settings(KEYS)
INTRO = ("A score is a dot product of d_k numbers. If the entries of q and k are random with variance 1, every "
         "product q_m·k_m has variance 1, and the sum of d_k of them has variance **d_k**: the longer the vectors, "
         "the more spread out the scores. Softmax turns a wide spread into one weight near 1 and the rest near 0, "
         "and then it barely reacts to its input: the gradient (how much a small change of q or k would move the "
         "weights, the signal training learns from) vanishes.")
top = st.container()  # the words and the formula; on a slide the formula and section 1's chart, above the sliders
if not settings.presenter:
    top.markdown(INTRO)
top.latex(r"q_m, k_m \sim \mathcal{N}(0, 1) \;\Rightarrow\; \operatorname{Var}(q \cdot k) = "
          r"\sum_{m=1}^{d_k} \operatorname{Var}(q_m k_m) = d_k, \qquad "
          r"\operatorname{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1")

controls = st.columns(3)
with controls[0]:
    d_k = page_slider(f"d_k of the experiments (up to {MAX_SCALING_D_K})", 1, MAX_SCALING_D_K, 64, "why_dk",
                      help="Sections 1 and 2 draw random q and k of this width. Section 3 uses your sentence "
                      f"with the lesson's d_k (set {in_the_sidebar()}).")
with controls[1]:
    num_keys = page_slider("Number of keys (one softmax row)", 2, MAX_SCALING_KEYS, 16, "why_keys")
with controls[2]:
    samples = page_slider("Samples", 100, MAX_SCALING_SAMPLES, 1000, "why_samples", step=100,
                          help="Random q, k pairs drawn per d_k. More samples, less noise.")
if not settings.presenter:  # two d_k on one page: a student took this one for the lesson's
    st.caption("Sections 1 and 2 use random vectors of this width (64 is a common head width in real models). "
               f"Your sentence keeps the lesson’s own d_k = {settings.config.effective_d_k()} "
               f"(set {in_the_sidebar()}): section 3 uses it.")
d_ks = tuple(sorted(set(SCALING_D_KS) | {d_k}))
seed = settings.config.seed
font, wide = settings.font_size, settings.presenter

# -------------------------------------------------------------------------------------------- variance
section_1 = top if settings.presenter else st.container()
section_1.subheader("1 · The spread of q·k grows with d_k")
try:
    variance = variance_table(d_ks, samples, seed)
    saturation = saturation_table(d_ks, num_keys, samples, seed)
except AttentionInputError as err:
    st.error(f"**This experiment cannot run with these settings.** {err}", icon=":material/warning:")
    stop_page()
lines = pd.concat([
    variance.assign(series="Var(q·k), sampled", value=variance["sampled"]),
    variance.assign(series="theory: Var = d_k", value=variance["theory"]),
    variance.assign(series="Var(q·k / √d_k), sampled", value=variance["scaled"]),
])[["d_k", "series", "value"]]
with section_1:
    show_chart(cached_spec(line_chart, lines, x="d_k", y="value", series="series", log_x=True, log_y=True,
                           y_title="variance of the score", title="variance of q·k against d_k (log–log)",
                           dashed=("theory: Var = d_k",), marker=(d_k, f"d_k = {d_k}"), x_values=SCALING_D_KS,
                           # unscaled blue and scaled orange, as in the charts below; the theory a grey guide
                           colors=(SERIES_COLORS[0], GUIDE_COLOR, SERIES_COLORS[1]),
                           font_size=font, width=900 if wide else 560, height=280))
here = variance[variance["d_k"] == d_k].iloc[0]
off = (here["sampled"] - d_k) / here["standard_error"]
cols = st.columns(3)
cols[0].metric(f"Var(q·k) at d_k = {d_k}, sampled", f"{here['sampled']:.2f}")
cols[1].metric("theory: d_k", f"{d_k}")
cols[2].metric("Var(q·k / √d_k), sampled", f"{here['scaled']:.3f}")
tolerance = TOLERANCE_SE * here["standard_error"]
verdict = "within" if abs(here["sampled"] - d_k) <= tolerance else "outside"
side = "above" if off > 0 else "below"
share = f", {100 * tolerance / d_k:.0f} % of d_k" if tolerance < d_k else ""
# In plain words first; how close, in the statistics' own terms, under them (students read the standard errors
# first and stopped there)
closeness = ("about d_k, as the theory says" if verdict == "within" else
             "further from d_k than sampling alone usually gives (more samples will bring it closer)")
st.markdown(f"In short: at d_k = {d_k} the sampled variance of q·k is {here['sampled']:.2f}, {closeness}. The wider "
            "q and k are, the more their dot products spread; after dividing by √d_k the variance is about 1 for "
            "every d_k.")
# (the statistics in a fold: a beginner met "1.1 standard errors … ±11.72" in the page's flow and stalled there)
st.expander("How close, in the statistics' terms").caption(
    f"How close: {abs(off):.1f} standard errors {side} d_k = {d_k}, **{verdict}** the tolerance of ±{tolerance:.2f} "
    f"({TOLERANCE_SE} standard errors of a variance sampled from {samples} samples{share}; a standard error is how far "
    "a variance measured on that many random samples typically lands from the true one).")
if settings.presenter:
    st.markdown(INTRO)

# ------------------------------------------------------------------------------------------ saturation
st.subheader("2 · Unscaled scores saturate the softmax")
# On a slide the three charts and their key come first, under the heading (after the words they began at the
# window's foot and their key was a press away); the words follow them
charts_first = st.container() if settings.presenter else None
st.markdown(f"For each d_k: one random query against {num_keys} random keys, softmax over the row, averaged "
            f"over {samples} rows. The **entropy** −Σ a log a says how spread a row's weights are (with the natural "
            "log it is counted in nats; the Real model page uses log₂, which counts bits): a uniform row has largest "
            f"weight 1/{num_keys} = {1 / num_keys:.4g} and entropy log {num_keys} = {math.log(num_keys):.2f}; a "
            "saturated row has largest weight 1 and entropy 0. The scaled rows sit between the two at every d_k: "
            "scaling leaves the scores a spread of about 1 (variance 1), not 0, so the keys still differ, and by "
            "the same amount whatever d_k is.")
st.markdown("**Why it matters for training:** once one weight takes almost everything, a small change of the "
            "scores hardly moves the weights, so training gets almost no signal to learn from. The third chart "
            f"measures that signal: {gradient_words(saturation)}")
symbols = st.expander("In symbols: the gradient's size ‖J‖_F")  # (the third chart's axis; calculus in a fold)
symbols.latex(r"J_{ij} = \frac{\partial a_i}{\partial s_j} = a_i(\delta_{ij} - a_j), \qquad "
              r"\lVert J \rVert_F \to 0 \text{ as one } a_i \to 1")
symbols.caption("The signal is the size ‖J‖_F of the softmax's derivative J (how much the weights move when a score "
                "moves; δ_ij is 1 when i = j, else 0), the square root of the sum of its squared entries.")
panel = {"x": "d_k", "series": "scores", "log_x": True, "marker": (d_k, f"{d_k}"), "font_size": font,
         "width": 290 if wide else 215, "height": 300 if wide else 220, "x_values": SCALING_D_KS,
         "side_by_side": True}
with charts_first or st.container():
    show_chart(cached_chart(("saturation", saturation, sorted(panel.items())), lambda: alt.hconcat(
        line_chart(saturation, y="largest weight", title="largest weight in a row", **panel),
        line_chart(saturation, y="entropy", y_title="entropy (nats)", title="entropy of a row", **panel),
        line_chart(saturation, y="gradient size", y_title="‖J‖_F", title="size of the softmax gradient", **panel))))
current = saturation[saturation["d_k"] == d_k].set_index("scores")
table = current[["largest weight", "entropy", "gradient size"]].T
st.markdown(f"**At d_k = {d_k}**, averaged over {samples} rows of {num_keys} keys:")
show_table(table, hide_index=False, width="content",
           column_config={c: st.column_config.NumberColumn(format="%.4f") for c in table.columns})

# ------------------------------------------------------------------------------------------- sentence


# On a slide, what a window's height keeps besides section 3's two charts: the menu bar, the section's heading and
# its line of words, so that the three fill one screen once a clicker's press brings the heading up
SENTENCE_ROOM_PX = 290


def sentence_section(settings):
    """Section 3 on the lesson's sentence: the weights of head ``settings.head`` with and without ÷√d_k, drawn side
    by side; returns the trace and the unscaled weights (T, S) for the questions."""
    trace, head = settings.lesson.trace, settings.head
    config = settings.lesson.config
    view = StageView(trace, settings.labels, settings.follow, head, settings.cell_size, settings.font_size,
                     identity=config.init == "identity")
    with_scaling = trace.weights[head]
    without = unscaled_weights(trace)[head]
    where = "d_model / h with “Q = K = V = X”" if view.identity else f"set {in_the_sidebar()}"
    st.markdown(f"The same queries and keys (d_k = {trace.d_k}, {where}), softmax with and without "
                f"dividing by √{trace.d_k} = {math.sqrt(trace.d_k):.3f}.")
    pair = ((without, f"softmax(QKᵀ): no scaling{head_title(view)}"),
            (with_scaling, f"softmax(QKᵀ / √d_k){head_title(view)}"))
    if settings.presenter:  # one colour bar and one set of row labels: cells wide enough for slide-sized numbers
        slide_view = replace(view, fit=True)
        show_slide_row("why_pair", slide_view, slide_token_pair(slide_view, *pair, weights=True), SENTENCE_ROOM_PX)
    else:
        for column, (values, title) in zip(st.columns(2), pair):
            with column:
                show_chart(token_heatmap(view, values, title, weights=True, share=half))
        st.caption(outline_note(settings.labels[settings.follow]))
    rows = row_stats_frame(settings.labels, {"unscaled": without, "scaled": with_scaling})
    with st.expander("The numbers, row by row"):
        show_row_stats(rows)
        st.caption("A blocked key has weight 0 and adds 0 · log 0 = 0 to the entropy −Σ a log a; a row with "
                   "one allowed key has weight 1 on it and entropy 0.")
    one_hot = "the unscaled rows turn into near one-hot rows (one weight near 1, the rest near 0)"
    if not config.seeded_embeddings:  # real word vectors are short: no d_k saturates their softmax
        largest = mean_row_peak(without, trace.mask[head])
        here = f": their largest weight is {largest:.2f} on average here" if largest is not None else ""
        st.caption(f"Real word vectors are short (each feature near 0), so these scores stay close to 0 at any d_k "
                   f"and even the unscaled rows stay almost even{here}. With the seeded word vectors "
                   f"{in_the_sidebar()}, whose features are about 1 in size, {one_hot} as d_k grows.")
    elif trace.d_k == 1:  # √1 = 1: the two charts are the same
        st.caption(f"With d_k = 1, √d_k = 1 and the two charts are the same. {raise_d_k(view)}: up to d_k = 64, "
                   f"{one_hot}.")
    elif trace.d_k < 16:
        st.caption(f"With d_k = {trace.d_k} the difference is mild. {raise_d_k(view)}: up to d_k = 64, {one_hot}.")
    return trace, without


st.subheader("3 · Your sentence, with and without the scaling")
if settings.lesson is None:
    st.info("This section runs on your sentence, which cannot make a lesson with these settings yet (the note at "
            f"the top of the page says why; change it {in_the_sidebar()}). Sections 1 and 2 do not need it.")
    trace = without = None
else:
    trace, without = sentence_section(settings)
show_page_questions("why-scaling", scaling_questions(d_k, trace, settings.labels, without, follow=settings.follow,
                                                     head=settings.head))
st.markdown("**Takeaway:** dividing by √d_k keeps the scores' variance at 1 whatever the width, so the softmax "
            "stays soft and keeps passing gradients back to the queries and keys.")
