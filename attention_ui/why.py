"""Helpers for the "why" lessons (scaling, positions, cross-attention, cost): page controls kept in the
URL, cached experiments as DataFrames, and line charts on linear or log axes.

Chart builders here are plain functions returning Altair charts from DataFrames (like
:mod:`attention_ui.charts`); cached functions take only numbers and strings.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import altair as alt
import pandas as pd
import streamlit as st
import torch

from attention_core import (LAYER_KINDS, MAX_COST_SECONDS, dot_product_variance, row_entropy, softmax_saturation,
                            time_layer)
from attention_core.cost import MIN_RUN_TIME, cost_lengths, predicted_timing_seconds, timing_seconds

from .charts import chart_title
from .controls import BOUND
from .text import joined
from .views import show_table

SERIES_COLORS = ["#3b5bdb", "#f08c00", "#2b8a3e", "#c2255c", "#5f3dc4"]
GUIDE_COLOR = "#6c757d"
"""A marker line and its words ("d_k = 64", "T = d"): a grey dark enough for small text (4.7 : 1 on white)."""
SCALING_D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""The d_k values swept by the scaling experiments (the slider's value is added)."""


def half_share(presenter: bool) -> float:
    """The share of the width budget for one of two charts side by side (presenter cells are larger
    than the budget assumes, so they get less, or the pair would overlap on a 1280-px screen)."""
    return 0.38 if presenter else 0.5


def page_slider(label: str, low: int, high: int, default: int, key: str, **options) -> int:
    """A main-area slider kept in the URL (``?key=value``) and for the session; returns an int."""
    value = st.session_state.get(key)
    if value is not None and not (isinstance(value, int) and low <= value <= high):
        st.session_state[key] = default  # a stale or forged value
    return int(st.slider(label, low, high, default, key=key, **BOUND, **options))


def page_choice(label: str, options: list, default, key: str, **extra):
    """A main-area select slider over fixed options, kept in the URL and for the session."""
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = default
    return st.select_slider(label, options=options, value=default, key=key, **BOUND, **extra)


def source_word_vectors(config, words: list[str]):
    """The real model's word vectors (S, hidden) for a second sentence when the lesson uses them, else None."""
    if config.seeded_embeddings:
        return None
    from .models import cached_word_embeddings

    return torch.from_numpy(cached_word_embeddings(config.embeddings, tuple(words)))


# ------------------------------------------------------------------------------------------- experiments


@st.cache_data(max_entries=64, max_size="8MB", show_spinner=False)
def variance_table(d_ks: tuple[int, ...], samples: int, seed: int) -> pd.DataFrame:
    """One row per d_k: sampled Var(q·k), Var(q·k/√d_k), the theory d_k and the standard error."""
    rows = [dot_product_variance(d_k, samples, seed) for d_k in d_ks]
    return pd.DataFrame({"d_k": [r.d_k for r in rows], "sampled": [r.variance for r in rows],
                         "scaled": [r.scaled_variance for r in rows], "theory": [float(r.d_k) for r in rows],
                         "standard_error": [r.standard_error for r in rows]})


@st.cache_data(max_entries=64, max_size="8MB", show_spinner=False)
def saturation_table(d_ks: tuple[int, ...], num_keys: int, samples: int, seed: int) -> pd.DataFrame:
    """One row per (d_k, scaling): mean largest weight, entropy and softmax Jacobian norm."""
    rows = [stats for d_k in d_ks for stats in softmax_saturation(d_k, num_keys, samples, seed)]
    return pd.DataFrame({"d_k": [r.d_k for r in rows],
                         "scores": [SCALED if r.scaled else UNSCALED for r in rows],
                         "largest weight": [r.max_weight for r in rows], "entropy": [r.entropy for r in rows],
                         "gradient size": [r.jacobian_norm for r in rows]})


UNSCALED, SCALED = "q·k (unscaled)", "q·k / √d_k (scaled)"
"""``saturation_table``'s two kinds of scores."""
AHEAD_SHARE = 1.02
"""The unscaled rows' gradient counts as higher than the scaled rows' when it is at least this many times theirs."""


def gradient_words(saturation: pd.DataFrame) -> str:
    """What the gradient panel of ``saturation_table`` shows, in words made from its numbers: from which d_k the
    unscaled rows' gradient stays below the scaled rows', where it ends, and whether it is higher below that (it
    is for many keys: the gradient peaks at a moderate spread)."""
    by = {kind: rows.set_index("d_k")["gradient size"] for kind, rows in saturation.groupby("scores")}
    unscaled, scaled = by[UNSCALED], by[SCALED]
    d_ks = list(unscaled.index)
    behind = [d for d in d_ks if all(unscaled[e] < scaled[e] for e in d_ks if e >= d)]
    last = d_ks[-1]
    if not behind:
        return "here the unscaled rows keep as much of it as the scaled rows at every d_k shown."
    first = behind[0]
    words = (f"from d_k = {first} on the unscaled rows fall behind and keep losing it as d_k grows "
             f"({unscaled[last]:.2f} at d_k = {last}, against {scaled[last]:.2f} scaled), while the scaled rows keep "
             "theirs.")
    if any(unscaled[d] >= AHEAD_SHARE * scaled[d] for d in d_ks if d < first):
        words += (" Below that the unscaled line is higher, because the signal is not largest for a "
                  "perfectly even row: it peaks at a moderate spread and only falls to 0 as one weight goes to 1.")
    return words


MEASURE_PASSES = 2
"""Each length is timed once per pass, the passes one after the other; the faster result counts, so a
burst of other work on the machine spoils at most one of them."""


@st.cache_data(max_entries=64, max_size="1MB", show_spinner=False)
def measured_seconds(device: str, kind: str, length: int, width: int, attempt: int = 0) -> float:
    """One timing, cached per (device, layer, T, d, pass): a second press or visitor reuses it."""
    return time_layer(kind, length, width, device)


class CostRun(NamedTuple):
    """What :func:`measure_costs` found: one row per (T, layer) with the fastest ``seconds`` over the passes; the
    lengths left out to stay within the budget; the whole run's seconds; and, when lengths were left out, how many
    more seconds timing the first of them was expected to take (0 otherwise)."""

    timings: pd.DataFrame
    skipped: list[int]
    elapsed: float
    next_seconds: float = 0.0


def measure_costs(device: str, lengths: list[int], width: int, on_progress: Callable[[float, str], None],
                  budget: float = MAX_COST_SECONDS, clock: Callable[[], float] | None = None, *,
                  passes: int = MEASURE_PASSES, min_run_time: float = MIN_RUN_TIME, always: int = 1) -> CostRun:
    """Time every layer kind at every length, shortest first, in ``passes`` passes, within ``budget`` s of
    ``clock`` (``time.perf_counter`` by default), each timing repeating a layer for at least ``min_run_time`` s
    (timings of the default length are cached per pass; shorter ones are not). The first ``always`` lengths are
    timed whatever the budget says.

    The first pass times a length (and every longer one) only if the time spent so far plus the time the length is
    predicted to take stays within the budget. The prediction grows the previous length's time per forward pass
    with T² and adds each timing's minimum run (:func:`predicted_timing_seconds`), scaled by how much longer the
    previous length took than predicted for it (a busy machine, the first run's warm-up). Later passes time again
    the lengths the first one timed, while the time each took in the first pass still fits; a length not timed
    again keeps its first time."""
    clock = clock or time.perf_counter
    times: dict[tuple[int, str], float] = {}
    took: dict[int, float] = {}  # seconds each length took in the first pass
    started, timed, next_seconds = clock(), [], 0.0
    steps, done = len(lengths) * len(LAYER_KINDS) * passes, 0
    for attempt in range(passes):
        previous = None  # (length, {layer: seconds per pass}, seconds its timing took)
        for length in lengths if attempt == 0 else timed:
            spent = clock() - started
            if attempt > 0:
                expected = took[length]
            elif len(timed) < always:
                expected = 0.0  # the shortest length (or the first few) is always timed
            else:
                before, per_call, seconds = previous
                slower = max(1.0, seconds / sum(timing_seconds(s, min_run_time) for s in per_call.values()))
                expected = predicted_timing_seconds(per_call, before, length, min_run_time) * slower
            if spent + expected > budget and (attempt > 0 or len(timed) >= always):
                if attempt == 0:  # (a later pass keeps the first pass's time of a length it cannot time again)
                    next_seconds = expected
                break
            begin, per_call = clock(), {}
            for kind in LAYER_KINDS:
                on_progress(done / steps, f"Pass {attempt + 1} of {passes}: timing {kind} at T = {length}…")
                per_call[kind] = (measured_seconds(device, kind, length, width, attempt) if min_run_time == MIN_RUN_TIME
                                  else time_layer(kind, length, width, device, min_run_time=min_run_time))
                times[length, kind] = min(per_call[kind], times.get((length, kind), per_call[kind]))
                done += 1
            previous = (length, per_call, clock() - begin)
            if attempt == 0:
                timed.append(length)
                took[length] = previous[2]
    on_progress(1.0, "Done.")
    rows = [{"T": n, "layer": kind, "seconds": times[n, kind]} for n in timed for kind in LAYER_KINDS]
    return CostRun(pd.DataFrame(rows), [n for n in lengths if n not in timed], clock() - started, next_seconds)


QUICK_RUN_TIME = 0.01
"""Seconds a quick measurement (a slide's, made without a press) repeats each layer for, at least."""
QUICK_SECONDS = 1.5
"""The seconds a quick measurement may take: a longer length is left out rather than keep a slide waiting."""
QUICK_LONGEST = 1024
"""The longest T a quick measurement times."""


def quick_lengths(longest: int) -> list[int]:
    """The lengths a quick measurement times: the three longest of the full run's, up to QUICK_LONGEST (where T²
    already shows over the fixed costs of a call)."""
    return cost_lengths(min(longest, QUICK_LONGEST))[-3:]


@st.cache_data(max_entries=32, max_size="1MB", show_spinner=False)
def quick_costs(device: str, longest: int, width: int) -> CostRun:
    """A quick measurement for a slide, which a clicker cannot ask for: :func:`quick_lengths`, one pass of
    QUICK_RUN_TIME per layer, the first two lengths (a slope needs two) and the third if it fits in QUICK_SECONDS;
    made once per (device, longest T, d) on the server, then kept."""
    return measure_costs(device, quick_lengths(longest), width, lambda fraction, text: None, budget=QUICK_SECONDS,
                         passes=1, min_run_time=QUICK_RUN_TIME, always=2)


SLOWER_NOTE = ": less memory traffic does not always mean less time"
"""Added where the fused kernel measured slower (at every length, or at the longest)."""


def fused_in_words(timings: pd.DataFrame) -> str:
    """What a measurement (rows T, layer, seconds) found for the fused kernel against ``attend``, in one
    sentence built from the times as the page shows them (a length where both show the same time is a tie)."""
    wide = timings.pivot(index="T", columns="layer", values="seconds").sort_index()
    verdicts = {}
    for length, row in wide.iterrows():
        fused, attend = row["fused"], row["attend"]
        verdicts[length] = ("about as fast" if seconds_text(fused) == seconds_text(attend)
                            else "faster" if fused < attend else "slower")
    longest = wide.index[-1]
    example = (f"at T = {longest}: {seconds_text(wide.loc[longest, 'fused'])} for fused against "
               f"{seconds_text(wide.loc[longest, 'attend'])} for attend")
    found = set(verdicts.values())
    if len(found) == 1:
        verdict = found.pop()
        where = "at every length" if len(verdicts) > 1 else f"at T = {longest}"
        if verdict == "about as fast":
            return f"In this measurement the fused kernel was about as fast as attention (attend) {where} ({example})."
        extra = "" if verdict == "faster" else SLOWER_NOTE
        return (f"In this measurement the fused kernel was **{verdict}** than attention (attend) {where} ({example})"
                f"{extra}.")
    parts = []
    for verdict in dict.fromkeys(verdicts.values()):  # in the order of the first length with each verdict
        lengths = [str(n) for n, v in verdicts.items() if v == verdict]
        parts.append(f"**{verdict}** at T = {joined(lengths)}")
    extra = SLOWER_NOTE if verdicts[longest] == "slower" else ""
    return (f"Against attention (attend), in this measurement the fused kernel was {', '.join(parts)} ({example})"
            f"{extra}.")


def encoding_lines(encodings: torch.Tensor, columns: list[int]) -> pd.DataFrame:
    """Long frame of some columns (0-based indices) of positional encodings (length, d_model): position, column
    (named from d1, as the heatmap's columns), value."""
    values = encodings.detach().cpu().double()
    names = {c: f"d{c + 1} ({'sin' if c % 2 == 0 else 'cos'}, i = {c // 2})" for c in columns}  # as the heatmap
    return pd.DataFrame([{"position": p, "column": names[c], "value": float(values[p, c])}
                         for c in columns for p in range(values.shape[0])])


ALL_BLOCKED = "all keys blocked"
"""What the row table shows for the entropy of a query row whose every key is masked (it has no weights)."""


def row_stats_frame(labels: list[str], weights: dict) -> pd.DataFrame:
    """Per query row: the largest weight and the entropy of each named (T, S) weights tensor.

    Blocked keys count 0 towards the entropy. A row whose keys are all blocked (all weights 0) is no
    distribution: its entropy is NaN, shown as :data:`ALL_BLOCKED` by the page."""
    table = {"query": list(labels)}
    for name, values in weights.items():
        table[f"largest weight, {name}"] = values.amax(dim=-1).tolist()
    for name, values in weights.items():
        entropy = row_entropy(values).double()
        table[f"entropy, {name}"] = entropy.masked_fill(values.sum(dim=-1) == 0, float("nan")).tolist()
    return pd.DataFrame(table)


def show_row_stats(rows: pd.DataFrame) -> None:
    """Draw a :func:`row_stats_frame` to 4 decimals, with :data:`ALL_BLOCKED` written where a row has no
    entropy (the grid would show a missing number as "None", whatever a Styler's ``na_rep`` says)."""
    shown = rows.copy()
    config = {}
    for column in rows.columns:
        if column.startswith("entropy"):
            shown[column] = [ALL_BLOCKED if pd.isna(v) else f"{v:.4f}" for v in rows[column]]
            config[column] = st.column_config.TextColumn(alignment="right")
        elif column != "query":
            config[column] = st.column_config.NumberColumn(format="%.4f")
    show_table(shown, column_config=config, width="stretch")


# ------------------------------------------------------------------------------------------------ charts


POINT_ROOM = 6
"""Pixels kept free at the ends of a y scale of charts side by side: a point (size 50, radius 4) at the
largest value stays inside the plot, so it does not push that chart's title up."""


def _scale(log: bool, base: int = 10, padding: float | None = None) -> alt.Scale:
    room = {} if padding is None else {"padding": padding}
    return alt.Scale(type="log", base=base, **room) if log else alt.Scale(zero=False, **room)


def tick_label_angle(values: Sequence[float], width: float, font_size: int, *, log: bool = False) -> int:
    """0 when the tick labels of ``values`` fit side by side along ``width`` pixels, else −45 (slanted labels
    are a font height apart when the ticks are √2 font heights apart), else −90. Assumes evenly spaced
    ticks (powers of 2 on a log axis, or a linear run) and digits about 0.6 font sizes wide."""
    values = sorted(values)
    if len(values) < 2:
        return 0
    span = (math.log(values[-1]) - math.log(values[0])) if log else (values[-1] - values[0])
    steps = [(math.log(b) - math.log(a)) if log else (b - a) for a, b in zip(values, values[1:])]
    gap = width * min(steps) / span if span else width
    longest = max(len(f"{v:g}") for v in values) * 0.6 * font_size
    if gap >= longest + font_size / 2:
        return 0
    return -45 if gap >= math.sqrt(2) * font_size else -90


Y_TITLE_PADDING_EM = 0.4
"""Room between a line chart's y labels and its title, in ems: with Vega's 4 px a slide's 20-px "‖J‖_F" touched the
"0.20" beside it."""


def line_chart(df: pd.DataFrame, *, x: str, y: str, series: str | None = None, title: str = "",
               log_x: bool = False, log_y: bool = False, x_title: str | None = None, y_title: str | None = None,
               width: int = 360, height: int = 240, font_size: int = 13, colors: list[str] | None = None,
               y_format: str = ".4~g", dashed: tuple[str, ...] = (),
               marker: tuple[float, str] | None = None, y_axis_format: str | None = None,
               x_values: Sequence[float] | None = None, side_by_side: bool = False,
               y_label_expr: str | None = None, y_tooltip: str | None = None,
               y_values: Sequence[float] | None = None, x_label_flush: bool = True) -> alt.LayerChart:
    """Lines with points: ``y`` against ``x`` (one line per value of ``series``), optional log axes.

    ``dashed`` lists series drawn as dashed lines without points (theory lines and fits);
    ``marker=(x value, text)`` adds a labelled vertical rule (e.g. at the slider's value);
    ``y_axis_format`` (a d3 format such as "~s": 2M, 40k) keeps long axis numbers short;
    ``x_values`` puts a labelled tick at each of these x values (and only there), the labels slanted
    when they would not fit side by side (see :func:`tick_label_angle`);
    ``side_by_side`` keeps the y labels and the points inside the plot's top edge, so the titles of
    charts drawn side by side (``alt.hconcat``) sit at one height whatever the data;
    ``y_label_expr`` (a Vega expression of ``datum.value``, such as :data:`SECONDS_LABEL`) writes the y labels;
    ``y_tooltip`` names a column the hover box shows in place of ``y`` (the value as text, say);
    ``y_values`` puts the y ticks at these values only (see :func:`one_two_five`);
    ``x_label_flush`` False centres every x label on its tick: Vega-Lite sets the first and last flush with the
    plot's ends, and on a slide a last "2048", drawn to the left of its tick, all but touched "1024"."""
    axis = {"labelFontSize": font_size, "titleFontSize": font_size}
    ticks = {} if x_values is None else {
        "values": list(x_values), "labelOverlap": False, "format": "~g",
        "labelAngle": tick_label_angle(x_values, width, font_size, log=log_x)}
    flush = {} if x_label_flush else {"labelFlush": False}
    x_enc = alt.X(f"{x}:Q", scale=_scale(log_x, 2), axis=alt.Axis(title=x_title or x, **axis, **ticks, **flush))
    flush = {"labelFlush": True} if side_by_side else {}
    y_scale = _scale(log_y, padding=POINT_ROOM if side_by_side else None)
    y_enc = alt.Y(f"{y}:Q", scale=y_scale,
                  axis=alt.Axis(title=y_title or y, format=y_axis_format or alt.Undefined,
                                labelExpr=y_label_expr or alt.Undefined,
                                values=alt.Undefined if y_values is None else list(y_values),
                                titlePadding=Y_TITLE_PADDING_EM * font_size, **axis, **flush))
    tooltip = ([alt.Tooltip(f"{series}:N")] if series else []) + [
        alt.Tooltip(f"{x}:Q", format=".4~g"),
        alt.Tooltip(f"{y_tooltip}:N") if y_tooltip else alt.Tooltip(f"{y}:Q", format=y_format)]
    base = alt.Chart(df).encode(x=x_enc, y=y_enc, tooltip=tooltip)
    if series:
        names = list(dict.fromkeys(df[series]))
        palette = (colors or SERIES_COLORS)
        color = alt.Color(f"{series}:N", sort=names,
                          scale=alt.Scale(domain=names, range=[palette[i % len(palette)] for i in range(len(names))]),
                          legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelFontSize=font_size,
                                            labelLimit=800))
        stroke = alt.StrokeDash(f"{series}:N", sort=names, legend=None,
                                scale=alt.Scale(domain=names, range=[[6, 4] if n in dashed else [1, 0] for n in names]))
        base = base.encode(color=color, strokeDash=stroke)
        points = base.transform_filter(alt.FieldOneOfPredicate(series, [n for n in names if n not in dashed]))
    else:
        points = base
    layers = [base.mark_line(strokeWidth=2.5), points.mark_point(filled=True, size=50)]
    if marker is not None:
        spot = pd.DataFrame({x: [marker[0]], "text": [marker[1]]})
        rule = alt.Chart(spot).encode(x=alt.X(f"{x}:Q"))
        layers += [rule.mark_rule(color=GUIDE_COLOR, strokeDash=[2, 2]),
                   rule.mark_text(align="left", dx=4, baseline="top", color=GUIDE_COLOR, fontSize=font_size)
                   .encode(y=alt.YValue(2), text=alt.Text("text:N"))]
    return alt.layer(*layers, width=width, height=height, title=chart_title(title, font_size))


def one_two_five(low: float, high: float) -> list[float]:
    """Ticks for a log axis from ``low`` to ``high`` (both > 0): 1, 2 and 5 times powers of ten, from the one at or
    below ``low`` to the one at or above ``high`` (a log axis labels every minor tick, which crowds its labels)."""
    ticks = []
    for power in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [float(f"{m}e{power}") for m in (1, 2, 5)]  # (written in decimal: 0.0002, not 0.00020000000000000001)
    below = max([t for t in ticks if t <= low], default=ticks[0])
    above = min([t for t in ticks if t >= high], default=ticks[-1])
    return [t for t in ticks if below <= t <= above]


SECONDS_LABEL = ("datum.value >= 1 ? format(datum.value, '~g') + ' s' : datum.value >= 1e-3 ? "
                 "format(datum.value * 1e3, '~g') + ' ms' : format(datum.value * 1e6, '~g') + ' µs'")
"""A y-label expression for times in seconds: 0.0001 -> "100 µs", 0.02 -> "20 ms", 2 -> "2 s"."""


BYTES_LABEL = ("datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB' : "
               "datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB' : "
               "datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB' : format(datum.value, '~g') + ' B'")
"""A y-label expression for bytes in binary units, as :func:`bytes_text` writes them: 4096 -> "4 KiB"."""


def binary_ticks(low: float, high: float, most: int = 6) -> list[int]:
    """Ticks for a log axis of bytes from ``low`` to ``high`` (both > 0): powers of two 2×, 4×, 16× or 1024× apart,
    so that each is a whole number of one binary unit (256 B, 4 KiB, 64 KiB, 1 MiB, …), from the one at or below
    ``low`` to the one at or above ``high``: at most ``most`` of them where a step allows."""
    first, last = math.floor(math.log2(low)), math.ceil(math.log2(high))
    step = next(s for s in (1, 2, 4, 10) if math.ceil((last - first) / s) + 1 <= most or s == 10)
    first -= first % step
    return [2**p for p in range(first, last + step, step) if p - step < last]


def bytes_text(count: float) -> str:
    """1536 -> "1.5 KiB"."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"


def seconds_text(seconds: float) -> str:
    """0.00123 -> "1.23 ms"."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"
