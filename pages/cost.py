"""What attention costs: time and memory against the sequence length T, next to a recurrent layer and a
fused kernel. Measurements run when the button is pressed; a slide, which a clicker cannot press, makes a quick one
by itself."""

import pandas as pd
import streamlit as st
import torch

from attention_core import (AttentionInputError, MAX_COST_LENGTH, MAX_COST_SECONDS, SLOPE_FROM_LENGTH, cost_lengths,
                            fitted_slope, operation_counts, resolve_device, tiled_attention, weights_bytes)
from attention_core.cost import CONVOLUTION_KERNEL, MIN_RUN_TIME, formula_lengths
from attention_ui.checks.modern import cost_questions, tile_questions
from attention_ui.controls import keep_page_settings, lesson_settings, stop_page
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_spec
from attention_ui.charts import heatmap
from attention_ui.text import counted, joined, plain
from attention_ui.url_state import note_ignored, show_link_notes
from attention_ui.tiles import TILE_ROW, running_table, weights_so_far_frame
from attention_ui.views import in_the_sidebar, show_chart, show_table
from attention_ui.why import (BYTES_LABEL, SECONDS_LABEL, SERIES_COLORS, CostRun, binary_ticks, bytes_text,
                              QUICK_RUN_TIME, fused_in_words, line_chart, measure_costs, one_two_five, page_choice,
                              page_slider, quick_costs, seconds_text)

KEYS = ("cost_longest", "cost_width", "cost_tile")
LONGEST_CHOICES = [n for n in (256, 512, 1024, 2048, 4096) if n <= MAX_COST_LENGTH]
CPU_LONGEST = 2048  # on a shared CPU host, T = 4096 would hold about 250 MB of scores and weights at once
WIDTH_CHOICES = [16, 32, 64, 128, 256]
RESULTS = "cost_results"  # session key: {(device, longest, width): CostRun}
BACKGROUND = "Why T²: the formulas and the paper's table"  # a slide folds them away, so its first chart is on screen
COUNTS_IN_DETAIL = "Reading the log axes, and the exact counts"  # on a slide, under section 1's charts
HOW_TIMED = "How the times are measured"  # on a slide, in section 2
LAYER_NAMES = {"attend": "attention (attend: keeps the T×T weights)",
               "fused": "fused scaled_dot_product_attention",
               "recurrent": "recurrent layer (torch.nn.RNN)"}
# One colour per kind of layer in every chart of the page (the formulas' and the timings' lines); attend and the
# fused kernel, measured side by side, get a blue and a red (blue and violet were hard to tell apart).
KIND_COLORS = {"self-attention": SERIES_COLORS[0], "attend": SERIES_COLORS[0], "recurrent": SERIES_COLORS[1],
               "convolution": SERIES_COLORS[2], "fused": SERIES_COLORS[3]}

settings = lesson_settings("What attention costs", uses_lesson=False)  # it never reads the sentence
keep_page_settings(KEYS)
font, wide = settings.font_size, settings.presenter
background = st.expander(BACKGROUND) if wide else st.container()
background.markdown(
    "Every query is compared with every key, so a sequence of T tokens makes T² scores per head, and the "
    "softmax weights form a T × T matrix. Double the sentence and attention does four times the work and "
    "needs four times the memory for its weights. A recurrent layer (an RNN, the layer attention replaced: it "
    "reads the tokens one at a time, carrying a vector of d numbers from each to the next) grows only linearly in T, "
    "but it has to walk through the tokens one after another, while attention does all of them at once."
)
background.latex(r"\underbrace{Q K^\top}_{T \times T}:\ O(T^2 \cdot d)\ \text{operations},\quad "
         r"O(T^2)\ \text{memory per head} \qquad\text{vs.}\qquad \text{RNN: } O(T \cdot d^2)")
background.markdown(
    "| Layer | Operations per layer | Sequential steps | Longest path between two tokens |\n"
    "|---|---|---|---|\n"
    "| Self-attention | O(T²·d) | O(1) | O(1) |\n"
    "| Recurrent | O(T·d²) | O(T) | O(T) |\n"
    "| Convolution (kernel k) | O(k·T·d²) | O(1) | O(log_k T) dilated, O(T/k) not |\n"
    "| Self-attention within a window r | O(r·T·d) | O(1) | O(T/r) |\n"
)
background.caption("From Vaswani et al. (2017), “Attention is all you need”, table 1. "
                   "T: sequence length, d: width. O(·) says how a cost grows and leaves out fixed factors: O(T²) "
                   "is about T² times some constant, so twice the tokens cost four times as much.")

try:
    device = resolve_device(settings.config.device).type
except AttentionInputError as err:
    st.error(f"**Please pick another device.** {err}", icon=":material/warning:")
    stop_page()
choices = [n for n in LONGEST_CHOICES if device != "cpu" or n <= CPU_LONGEST]
above = st.container()  # the page's two sliders: above section 1, or on a slide under its charts
# A link's form was checked (a whole number in range); one the sliders do not offer (4,096 from a GPU's page, opened on
# a CPU) was dropped without a word
for key, offered, what in (("cost_longest", choices,
                            f"Longest T is one of {joined([f'{n:,}' for n in choices], 'or')} on {device}"),
                           ("cost_width", WIDTH_CHOICES, f"Width d is one of {joined(WIDTH_CHOICES, 'or')}")):
    linked = st.query_params.get(key)
    if linked is not None and key not in st.session_state and int(linked) not in offered:
        note_ignored(key, linked, what)
with above:
    show_link_notes(key="cost_size_link_notes")
st.subheader("1 · What the formulas predict")
charts = st.container()
with st.container() if wide else above:
    left, right = st.columns(2)
    with left:
        longest = page_choice("Longest T", choices, 2048, "cost_longest",
                              help=f"Up to {choices[-1]} on {device} (the device is picked {in_the_sidebar()}).")
    with right:
        width = page_choice("Width d (d_k = d_v = the RNN's hidden size)", WIDTH_CHOICES, 64, "cost_width")
lengths = cost_lengths(longest)

predicted = formula_lengths(longest, width)  # from well below d, so the lines' crossing at T = d is on the chart
counts = pd.DataFrame([{"T": n, "layer": name, "operations": ops}
                       for n in predicted for name, ops in operation_counts(n, width).items()])
memory = pd.DataFrame({"T": predicted, "layer": "T × T float32 weights, one head",
                       "bytes": [weights_bytes(n) for n in predicted]})
memory["memory"] = memory["bytes"].map(bytes_text)  # in the words' binary units: 16.0 MiB, not 16.8M
size = {"font_size": font, "width": 500 if wide else 300, "height": 300 if wide else 240, "log_x": True, "log_y": True,
        "y_axis_format": "~s", "x_values": predicted, "x_label_flush": False}
with charts:
    left, right = st.columns(2)
    with left:
        show_chart(cached_spec(line_chart, counts, x="T", y="operations", series="layer",
                               title=f"multiply-adds (d = {width})", y_format=".3~s", marker=(width, "T = d"),
                               colors=[KIND_COLORS[k] for k in dict.fromkeys(counts["layer"])], **size))
    with right:
        show_chart(cached_spec(line_chart, memory, x="T", y="bytes", series="layer",
                               title="memory of the attention weights", y_title="memory", y_tooltip="memory",
                               y_label_expr=BYTES_LABEL,
                               y_values=binary_ticks(memory["bytes"].min(), memory["bytes"].max()), **size))
LOG_AXES = ("Both charts have log axes: each step along an axis multiplies by the same factor, so a cost that grows as "
            "T² is a straight line twice as steep as one that grows as T. The weights are float32 numbers (32-bit "
            "floating point), 4 bytes each; 1 MiB is 2²⁰ bytes, about a million.")
crossing = (f"The self-attention and recurrent lines cross at T = d = {width} (the grey line marked T = d): for "
            f"sentences shorter than the width, attention's QKᵀ and AV do fewer operations than a recurrent layer; "
            f"beyond it, more.")
counts = ("The chart plots Vaswani et al.'s per-layer orders, T²·d and T·d², as their table gives them. Counted one "
          "by one, QKᵀ alone is T²·d and AV as many again, and a recurrent layer that multiplies its state and its "
          "input by d × d matrices does 2·T·d²: both exact counts are twice the plotted lines, so they too cross at "
          "T = d. (A whole attention layer also has its Q, K, V and output projections, about 4·T·d² at any T, which "
          f"the table leaves out, as the paper's does.) The convolution's kernel is k = {CONVOLUTION_KERNEL} tokens "
          "wide.")
takeaway = (f"At T = {longest} one head's weights take {bytes_text(weights_bytes(longest))}. More operations need "
            "not mean more time: section 2 measures it, and says why the two can disagree.")
if wide:  # a slide keeps what the charts say; how to read them and the exact counts are a click away
    st.markdown(f"{crossing} {takeaway}")
    with st.expander(COUNTS_IN_DETAIL):
        st.markdown(LOG_AXES)
        st.markdown(counts)
else:
    st.markdown(LOG_AXES)
    st.markdown(f"{crossing} {counts} {takeaway}")
questions = cost_questions(longest, width)

st.subheader("2 · Measure it on this machine")
clock = "the CPU time of one thread, which other programs cannot inflate" if device == "cpu" else "wall time"
timed = (f"Times one forward pass at T = {', '.join(map(str, lengths))} on **{device}** for each layer: attention as "
         "this app computes it (`attend`, which keeps the T × T weights), a recurrent layer (`torch.nn.RNN`) and "
         "PyTorch's **fused kernel** (`scaled_dot_product_attention`: one routine that does the scores, the softmax "
         "and the weighted sum together, without keeping the weights).")
how = (f"The time is {clock}. Each layer is repeated for at least {MIN_RUN_TIME:g} s, in two passes (the faster "
       f"counts). A length is timed only if it is expected to fit in the {MAX_COST_SECONDS:.0f} s the whole run may "
       "take; results are kept for this device, so pressing again is instant.")
if wide:
    st.markdown(timed)
    with st.expander(HOW_TIMED):
        st.markdown(how)
else:
    st.markdown(f"{timed} {how}")
key = (device, longest, width)
if st.button(f"Measure on {device}", key="cost_measure", type="primary", icon=":material/timer:"):
    bar = st.progress(0.0, text="Starting…")
    try:
        run = measure_costs(device, lengths, width, lambda f, text: bar.progress(f, text=text))
    except (AttentionInputError, RuntimeError) as err:
        st.error(f"**The measurement failed.** {err}", icon=":material/warning:")
    else:
        st.session_state.setdefault(RESULTS, {})[key] = run
    bar.empty()


def left_out(skipped: list[int]) -> str:
    """[1024] -> "T = 1024 was left out", [1024, 2048] -> "T = 1024 and 2048 were left out"."""
    return f"T = {joined(skipped)} {'was' if len(skipped) == 1 else 'were'} left out"


def about_seconds(seconds: float) -> str:
    """A predicted or elapsed time, as rounded as it is rough: "0.4 s", "12 s"."""
    return f"{seconds:.1f} s" if seconds < 2 else f"{seconds:.0f} s"


def left_out_words(run: CostRun) -> str:
    """Which lengths the run left out, and why, with its own numbers."""
    timed = sorted(set(run.timings["T"]))
    said = (f"Measured T = {timed[0]}" + (f" to {timed[-1]}" if len(timed) > 1 else "")
            + f" in {about_seconds(run.elapsed)}. ")
    if run.next_seconds > 0:
        said += (f"Timing T = {run.skipped[0]} would take about {about_seconds(run.next_seconds)} more, past the "
                 f"{MAX_COST_SECONDS:.0f} s the run may take, ")
    else:
        said += f"To stay within {MAX_COST_SECONDS:.0f} s, "
    return said + (f"so {left_out(run.skipped)}. This machine "
                   "is busy: press the button again later (the lengths already timed are reused, which leaves more "
                   "time for the longer ones), or pick a smaller longest T.")


def quick_words(run: CostRun) -> str:
    """What a quick measurement (a slide's, made without a press) timed, and what the button does instead."""
    timed = sorted(set(run.timings["T"]))
    skipped = f" {left_out(run.skipped)} to keep the slide quick." if run.skipped else ""
    return (f"**A quick run, measured without a press:** T = {joined(timed)} only, each layer timed once for "
            f"{QUICK_RUN_TIME:g} s, in {about_seconds(run.elapsed)}.{skipped} **Measure on {device}** times every "
            f"T from {lengths[0]} to {longest}, twice and for longer: steadier numbers.")


def show_measured(run: CostRun, quick: bool = False) -> None:
    """Section 2's results: the times per T (``run.timings``, long format: T, layer, seconds) as a chart, fitted
    slopes and a table, what they say, and why the count and the clock may disagree; ``run.skipped`` lengths were
    not timed. A ``quick`` run (:func:`quick_costs`) says so above its chart and in the chart's title."""
    timings = run.timings
    if quick:
        st.info(quick_words(run), icon=":material/timer:")
    elif run.skipped:
        st.warning(left_out_words(run))
    measured_lengths = sorted(set(timings["T"]))
    slopes = {}
    if len(measured_lengths) >= 2:  # a slope needs two lengths: a busy machine may time only the first in the budget
        for kind, group in timings.groupby("layer", sort=False):
            slopes[kind], _ = fitted_slope(group["T"].tolist(), group["seconds"].tolist())
    named = timings.assign(layer=[f"{LAYER_NAMES[k]}: slope {slopes[k]:.2f}" if slopes else LAYER_NAMES[k]
                                  for k in timings["layer"]], time=timings["seconds"].map(seconds_text))
    show_chart(cached_spec(line_chart, named, x="T", y="seconds", series="layer",
                           colors=[KIND_COLORS[k] for k in dict.fromkeys(timings["layer"])],
                           title=f"time per forward pass on {device} (log–log{', quick run' if quick else ''})",
                           y_title="time per forward pass",
                           y_label_expr=SECONDS_LABEL, y_tooltip="time", x_values=measured_lengths,
                           y_values=one_two_five(timings["seconds"].min(), timings["seconds"].max()), log_x=True,
                           log_y=True, font_size=font, width=900 if wide else 560, height=380 if wide else 300,
                           x_label_flush=False))
    if slopes:
        memory_slope, _ = fitted_slope(measured_lengths, [weights_bytes(n) for n in measured_lengths])
        cols = st.columns(4)
        cols[0].metric("attention: fitted slope", f"{slopes['attend']:.2f}")
        cols[1].metric("fused kernel: fitted slope", f"{slopes['fused']:.2f}")
        cols[2].metric("recurrent: fitted slope", f"{slopes['recurrent']:.2f}")
        cols[3].metric("T×T weights memory: slope", f"{memory_slope:.2f}")
        st.caption(f"Slopes are fitted to log(time) against log(T) for T ≥ {SLOPE_FROM_LENGTH} (all points if fewer "
                   "than two are that long): below it fixed overheads dominate. Slope 2 means ×4 time for ×2 tokens.")
    else:
        st.info(f"Only T = {measured_lengths[0]} was timed, and a slope needs two lengths: this machine is busy. Press "
                "the button again later, or pick a smaller longest T.")
    by_length = timings.pivot(index="T", columns="layer", values="seconds")  # (T, layer) in seconds, T in order
    table = by_length.map(seconds_text).assign(**{"T×T weights": [bytes_text(weights_bytes(n))
                                                                   for n in by_length.index]})
    show_table(table, hide_index=False, width="content")
    st.markdown(
        "The fused kernel does the same arithmetic but in tiles, without writing the T × T weights to memory "
        "(which kernel runs depends on the device and dtype): less memory traffic, which can make it faster (the "
        "gain is largest on a GPU and for long sequences) and lets it handle longer sequences. It still does O(T²) "
        "work. The recurrent layer grows about linearly, but its T steps run one after another, which a GPU cannot "
        "spread out."
    )
    st.markdown(fused_in_words(timings))
    beyond = [(n, row) for n, row in by_length.iterrows()
              if n > width and seconds_text(row["attend"]) != seconds_text(row["recurrent"])]  # as the table shows
    disagree = [n for n, row in beyond if row["attend"] < row["recurrent"]]
    caught_up = [n for n, row in beyond if row["attend"] > row["recurrent"]]
    if disagree:
        st.markdown(
            f"**Why the count and the clock disagree.** Beyond T = d = {width}, section 1 counts more multiply-adds "
            f"for attention than for the recurrent layer, yet on this machine attention ran faster at "
            f"T = {joined(disagree)}. "
            "A count is not a time. Attention's T × T work is a few large matrix products, each one call to an "
            "optimised kernel that keeps the processor busy (vectorised; on a GPU spread over thousands of cores). "
            "The recurrent layer takes T small steps, and step t cannot start before step t − 1 is done: each "
            "multiplies one vector by a d × d matrix and pays a fixed overhead, so the hardware mostly waits. That "
            "per-step overhead dominates until T is large enough for attention's T² to catch up."
            + (f" Here it had caught up at T = {joined(caught_up)}: there attention was the slower of the two."
               if caught_up and min(caught_up) > max(disagree) else "")
        )


measured, quick = st.session_state.get(RESULTS, {}).get(key), False
if measured is None and wide:  # a clicker cannot press the button: a slide times a few lengths quickly by itself
    try:
        with st.spinner("Timing a quick run…"):
            measured, quick = quick_costs(device, longest, width), True
    except (AttentionInputError, RuntimeError) as err:
        st.warning(f"**The quick measurement failed.** {err} Press the button to try the full one.",
                   icon=":material/warning:")
if measured is None:
    st.info("Nothing measured yet for these settings: press the button (it takes a few seconds).")
else:
    show_measured(measured, quick)


def tiles_section(settings) -> list:
    """Section 3 on the lesson's sentence: the followed token's query walks through its keys a tile at a time, as a
    fused kernel's does; returns the section's check-yourself questions."""
    trace, head, query = settings.lesson.trace, settings.head, settings.follow
    labels = list(settings.labels)
    keys = len(labels)
    linked = st.query_params.get("cost_tile")  # (its form was checked with the link: a whole number to 32)
    if linked is not None and "cost_tile" not in st.session_state and int(linked) > keys:
        note_ignored("cost_tile", linked, f"the sentence has {counted(keys, 'key')}, the most a tile can hold")
        show_link_notes(key="cost_tile_link_notes")  # (beside the slider: the settings' notes are at the top)
    if keys > 1:
        tile_size = page_slider("Keys per tile B", 1, keys, min(2, keys), "cost_tile",
                                help=f"How many keys the kernel reads at once (a GPU's kernel reads 64 or 128; here 1 "
                                     f"to the {keys} keys of your sentence).")
    else:  # (a slider from 1 to 1 is no slider: Streamlit refuses it)
        tile_size = 1
        st.caption("Your sentence has one token, so one key: one tile of B = 1. A longer sentence shows tiles.")
    run = tiled_attention(trace.q, trace.k, trace.v, trace.mask, tile_size=tile_size)  # (h, …) every head
    token = labels[query]
    heads, tiles = trace.num_heads, len(run.starts)
    in_head = f" in head {head + 1} of {heads}" if heads > 1 else ""
    st.markdown(f"Below, the query of **{plain(token)}** (the token the lessons follow{in_head}) goes through its "
                f"{counted(keys, 'key')} in {counted(tiles, 'tile')} of {tile_size}. Row j of the chart is the "
                "softmax the kernel would give if the keys ended with tile j: each new tile takes a share of the "
                "weight from the keys before it.")
    frame = weights_so_far_frame(run, head, query, labels, trace.mask[head, query].tolist())
    show_chart(heatmap(frame, row=TILE_ROW, col="key", title=f"weights of {token} after each tile",
                       domain=(0, 1), cell_size=settings.cell_size, font_size=settings.font_size,
                       value_title="weight"))
    st.caption("Grey: a key not read yet (× a key the mask blocks). The table shows the three running things after "
               "each tile.")
    show_table(running_table(run, head, query, labels))
    m = run.running_max[head, :, query]
    allowed = trace.mask[head, query]
    if not bool(allowed.any()):
        st.markdown(f"The mask blocks every key of **{plain(token)}**: nothing is ever summed, ℓ stays 0 and there is "
                    "no o / ℓ to take; `attend` gives such a row zero weights and a zero context vector, and so does "
                    "the kernel here.")
        return tile_questions(run, head, query, labels)
    if tiles > 1 and bool(torch.isfinite(m[0])) and bool((m[1:] == m[:-1]).all()):
        first_allowed = int(allowed.nonzero()[0])  # a smaller B can rescale only if a later allowed key may be larger
        smaller = " A smaller B, or another followed token, may show one." if tile_size > 1 and bool(
            allowed[first_allowed + 1:].any()) else " Another followed token may show one."
        st.caption("Here tile 1 already held the largest score, so no tile rescaled anything (each rescale is 1)."
                   + smaller)
    same = torch.allclose(run.context[head, query], trace.context[head, query], rtol=1e-5, atol=1e-5)
    kept = "Between tiles the kernel kept" if tiles > 1 else "The kernel kept"
    st.markdown(f"The last row is the weights row of **{plain(token)}** at Step through's stage 6, and o / ℓ after "
                f"the last tile is its context vector at stage 7{' (the same numbers)' if same else ''}. {kept} "
                f"{trace.v.shape[-1] + 2} numbers for this query (o's d_v = {trace.v.shape[-1]}, m and ℓ) and one "
                f"tile's {counted(tile_size, 'score')}, never the row of {keys} weights: for T queries, memory that "
                "grows as T, not T².")
    return tile_questions(run, head, query, labels)


st.subheader("3 · How the fused kernel never keeps the weights")
st.markdown(
    "Section 2's fused kernel gives the same context vectors as `attend`, but it never holds a query's row of "
    "weights. It reads the keys a tile of B at a time (J tiles in all), and for each query keeps three running "
    "things over the scaled scores s = q·k / √d_k (Step through's stage 4): the largest score so far **m**, the "
    "softmax's denominator so far **ℓ** (a sum of e^(s − m)) and its numerator **o** (the same sum, each term times "
    "its key's value vector). They start at m₀ = −∞, ℓ₀ = 0 and o₀ = 0. A tile with a larger score than any before "
    "makes what was summed too large by e^(m_new − m_old): the kernel multiplies ℓ and o by e^(m_old − m_new) and "
    "goes on. After the last tile, o / ℓ is the context vector: exactly, not an approximation (the \"online "
    "softmax\" that FlashAttention is built on).")
st.latex(r"m_j = \max\big(m_{j-1},\ \max_{k \in \text{tile } j} s_k\big),\qquad "
         r"\ell_j = e^{m_{j-1}-m_j}\,\ell_{j-1} + \sum_{k \in \text{tile } j} e^{\,s_k - m_j}")
st.latex(r"o_j = e^{m_{j-1}-m_j}\,o_{j-1} + \sum_{k \in \text{tile } j} e^{\,s_k - m_j}\, v_k,\qquad "
         r"\text{context} = o_J / \ell_J")
if settings.lesson is None:
    st.info("This section runs on your sentence, which cannot make a lesson with these settings yet (the note at "
            f"the top of the page says why; change it {in_the_sidebar()}). Sections 1 and 2 do not need it.")
else:
    questions += tiles_section(settings)
show_page_questions("what-it-costs", questions)
st.markdown("**Takeaway:** attention's cost grows with the square of the length — in time and in the memory of its "
            "weights. Long contexts need kernels that never store the T × T weights (fused attention: the memory "
            "stays linear, whatever the time does on this device), windows or other tricks.")
