"""Take the lesson with you: the trace as CSV and JSON, charts as SVG and PNG, a one-file HTML handout.

Pure functions build every file (so tests read them back); ``show_downloads(settings, stage)``
draws the download buttons. Files are built only when a button is pressed (Streamlit calls
the function then), so a rerun costs nothing.

Formats
- CSV, one row per number: ``stage, head, row, row_index, column, column_index, value`` (head is
  1-based, empty for concat, output and the inputs; masked scores are ``-inf``). Given the lesson's inputs,
  the first "stages" are ``x`` (T × d_model) and the weights ``w_q``, ``w_k``, ``w_v`` (d_model × h·d_k, a
  column "h2·q3" is feature 3 of head 2) and ``w_o`` (h·d_v × d_model), so Q = X W_Q can be redone by hand.
- JSON: ``{"tokens", "settings", "stages": {name: {"axes", "shape", "rows", "columns", "values"}}}``
  with nested lists in the tensor's shape; a masked score (−∞) is ``null``.
SVG and PNG come from vl-convert (``vl-convert-python``); without it they are unavailable and the
page says so, while CSV, JSON and the handout (without its charts) still work.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
import unicodedata
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from attention_core import AttentionTrace, Projections, row_arithmetic

from . import charts, frames, worked
from .text import STAGE_KEYS, STAGES

PER_HEAD = ("q", "k", "v", "scores", "scaled", "masked", "weights", "context")
"""Trace stages with one matrix per head (h, rows, columns); concat and output are (T, width)."""

MISSING_CONVERTER = ("SVG and PNG need the package vl-convert-python (pip install vl-convert-python); "
                     "CSV, JSON and the handout still work without it.")

HANDOUT_FORMULAS = {
    "embed": "X = [x₁; x₂; …; x_T],  one row of d_model numbers per token",
    "qkv": "Q = X·W_Q,   K = X·W_K,   V = X·W_V",
    "scores": "S = Q·Kᵀ,   S_ij = q_i · k_j = Σ_m q_i,m · k_j,m",
    "scaled": "S̃ = Q·Kᵀ / √d_k",
    "masked": "S̃_ij ← −∞  where token i may not attend to token j",
    "softmax": "A_ij = softmax_j(S̃_ij) = e^(S̃_ij) / Σ_l e^(S̃_il)",
    "context": "C = A·V,   c_i = Σ_j A_ij · v_j",
    "concat": "Concat(head₁, …, head_h)  ∈  ℝ^(T × h·d_v)",
    "output": "MultiHead(X) = Concat(head₁, …, head_h) · W_O",
}
"""The stages' formulas in plain Unicode, so the handout shows them offline without a maths renderer."""


class ExportUnavailable(RuntimeError):
    """Raised when SVG or PNG is asked for and vl-convert is not installed."""


@dataclass(frozen=True)
class TraceAxes:
    """Display labels of the trace's axes: queries (T,), keys (S,)."""

    queries: list[str]
    keys: list[str]


def _stage_axes(trace: AttentionTrace, stage: str, axes: TraceAxes) -> tuple[list[str], list[str], list[str]]:
    """(axis names, row labels, column labels) of one stage."""
    features = {"q": ("q", trace.d_k), "k": ("k", trace.d_k), "v": ("v", trace.d_v), "context": ("c", trace.d_v)}
    if stage in features:
        prefix, width = features[stage]
        rows = axes.keys if stage in ("k", "v") else axes.queries
        return ["head", "token", "feature"], rows, list(frames.feature_labels(width, prefix))
    if stage in PER_HEAD:
        return ["head", "query", "key"], axes.queries, axes.keys
    if stage == "concat":
        return ["token", "feature"], axes.queries, list(frames.head_column_labels(trace.num_heads, trace.d_v))
    return ["token", "feature"], axes.queries, list(frames.feature_labels(trace.output.shape[1], "o"))


INPUTS = ("x", "w_q", "w_k", "w_v", "w_o")
"""What a trace is computed from, exported before its stages when given: X and the weight matrices."""


def trace_stages(trace: AttentionTrace, x=None, projections: Projections | None = None) -> dict[str, np.ndarray]:
    """Every stage as float64 numpy: per-head stages (h, rows, cols), concat and output (T, width); first, when
    given, the inputs x (T, d_model) and the weights w_q, w_k, w_v (d_model, width) and w_o (h·d_v, d_out)."""
    inputs = {"x": x} if x is not None else {}
    if projections is not None:
        inputs |= {name: getattr(projections, name) for name in INPUTS[1:] if getattr(projections, name) is not None}
    stages = {name: frames.to_numpy(values) for name, values in inputs.items()}
    return stages | {name: frames.to_numpy(getattr(trace, name)) for name in PER_HEAD + ("concat", "output")}


def _axes(trace: AttentionTrace, stage: str, values: np.ndarray, axes: TraceAxes) -> tuple[list, list, list]:
    """(axis names, row labels, column labels) of a stage or an input."""
    if stage not in INPUTS:
        return _stage_axes(trace, stage, axes)
    rows, cols = values.shape
    if stage == "x":
        return ["token", "feature"], axes.queries, list(frames.feature_labels(cols, "x"))
    if stage == "w_o":
        return ["feature of concat", "feature"], list(frames.head_column_labels(trace.num_heads, trace.d_v)), list(
            frames.feature_labels(cols, "o"))
    prefix = stage[-1]
    width = trace.d_v if prefix == "v" else trace.d_k
    return ["feature of x", "column"], list(frames.feature_labels(rows, "x")), list(
        frames.head_column_labels(cols // width, width, prefix))


def trace_frame(trace: AttentionTrace, labels: list[str], key_labels: list[str] | None = None, *, x=None,
                projections: Projections | None = None) -> pd.DataFrame:
    """The whole trace in long form, one row per number, labelled by stage, head, token and feature (the inputs
    first, when given)."""
    axes = TraceAxes(list(labels), list(labels if key_labels is None else key_labels))
    parts = []
    for stage, values in trace_stages(trace, x, projections).items():
        _, rows, cols = _axes(trace, stage, values, axes)
        matrices = values if values.ndim == 3 else values[None]
        for h, matrix in enumerate(matrices):
            r, c = np.meshgrid(np.arange(matrix.shape[0]), np.arange(matrix.shape[1]), indexing="ij")
            parts.append(pd.DataFrame({
                "stage": stage,
                "head": h + 1 if values.ndim == 3 else None,
                "row": [rows[i] for i in r.ravel()],
                "row_index": r.ravel(),
                "column": [cols[j] for j in c.ravel()],
                "column_index": c.ravel(),
                "value": matrix.ravel(),
            }))
    frame = pd.concat(parts, ignore_index=True)
    frame["head"] = frame["head"].astype("Int64")
    return frame


def trace_csv(trace: AttentionTrace, labels: list[str], key_labels: list[str] | None = None, *, x=None,
              projections: Projections | None = None) -> str:
    """The trace as CSV text (see the module docstring for the columns)."""
    return trace_frame(trace, labels, key_labels, x=x, projections=projections).to_csv(index=False,
                                                                                       float_format="%.9g")


def trace_json(trace: AttentionTrace, labels: list[str], key_labels: list[str] | None = None,
               settings: dict | None = None, *, x=None, projections: Projections | None = None) -> str:
    """The trace as JSON text: every stage (the inputs first, when given) in its tensor shape, with its axes'
    labels; −∞ is null."""
    axes = TraceAxes(list(labels), list(labels if key_labels is None else key_labels))
    stages = {}
    for stage, values in trace_stages(trace, x, projections).items():
        names, rows, cols = _axes(trace, stage, values, axes)
        cells = values.astype(object)
        cells[~np.isfinite(values)] = None  # −∞ of a masked score: JSON has no infinity
        stages[stage] = {"axes": names, "shape": list(values.shape), "rows": rows, "columns": cols,
                         "values": cells.tolist()}
    document = {"tokens": axes.queries, "keys": axes.keys, "num_heads": trace.num_heads, "d_k": trace.d_k,
                "d_v": trace.d_v, "settings": settings or {}, "stages": stages}
    return json.dumps(document, ensure_ascii=False, allow_nan=False)


def stages_from_json(text: str) -> dict[str, np.ndarray]:
    """Read ``trace_json`` back: stage -> float64 array in the tensor's shape (null -> −∞)."""
    document = json.loads(text)
    return {name: _nulls_to_neg_inf(stage["values"], stage["shape"]) for name, stage in document["stages"].items()}


def _nulls_to_neg_inf(values, shape) -> np.ndarray:
    flat = np.array(values, dtype=object).reshape(-1)
    return np.array([-math.inf if v is None else float(v) for v in flat], dtype=np.float64).reshape(shape)


def stages_from_csv(text: str) -> dict[str, np.ndarray]:
    """Read ``trace_csv`` back: stage -> float64 array, per-head stages (h, rows, cols), others (rows, cols)."""
    frame = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values={"head": [""]})
    frame["value"] = frame["value"].astype(float)
    stages = {}
    for stage, part in frame.groupby("stage", sort=False):
        heads = part["head"].dropna()
        n_heads = int(heads.max()) if len(heads) else 0
        shape = (int(part["row_index"].max()) + 1, int(part["column_index"].max()) + 1)
        if n_heads:
            array = np.zeros((n_heads,) + shape)
            array[part["head"].astype(int) - 1, part["row_index"], part["column_index"]] = part["value"]
        else:
            array = np.zeros(shape)
            array[part["row_index"], part["column_index"]] = part["value"]
        stages[stage] = array
    return stages


# ------------------------------------------------------------------------------------------- charts

STAGE_CHART_NAMES = {"embed": ("x",), "qkv": ("q", "k", "v"), "scores": ("scores",), "scaled": ("scaled",),
                     "masked": ("mask", "masked"), "softmax": ("weights", "row"), "context": ("context",),
                     "concat": ("concat",), "output": ("output",)}
"""The names ``stage_charts`` gives each stage's charts (known without building them)."""

CHART_DESCRIPTIONS = {"x": "X, the embeddings (heatmap)", "q": "Q (heatmap)", "k": "K (heatmap)",
                      "v": "V (heatmap)", "scores": "raw scores QKᵀ (heatmap)", "scaled": "scaled scores (heatmap)",
                      "mask": "the mask (grid)", "masked": "masked scores (heatmap)",
                      "weights": "attention weights (heatmap)", "row": "the followed token's row (bars)",
                      "context": "context vectors (heatmap)", "concat": "concatenated heads (heatmap)",
                      "output": "output (heatmap)"}


def converter_available() -> bool:
    """Whether vl-convert is installed (SVG and PNG need it)."""
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        return False
    return True


def _converter():
    try:
        import vl_convert
    except ImportError:
        raise ExportUnavailable(MISSING_CONVERTER) from None
    return vl_convert


def chart_svg(chart: alt.TopLevelMixin) -> str:
    """The chart as an SVG document (rendered on the server; text stays text). Not validated again: the builders'
    specs are checked by the chart tests (validating took a third of a handout's time)."""
    return _converter().vegalite_to_svg(chart.to_dict(validate=False))


def chart_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes, ``scale`` × its size in pixels (2 = sharp on slides)."""
    return _converter().vegalite_to_png(chart.to_dict(validate=False), scale=scale)


def _token_heatmap(values, axes: TraceAxes, title: str, *, weights: bool = False, domain=None, blocked=None):
    """``blocked`` (bool (T, S)): the cells the mask blocks, grey with "×" as on the page (a weight's 0 there read
    as a small weight in the handout)."""
    df = frames.matrix_frame(values, frames.AxisLabels(axes.queries), frames.AxisLabels(axes.keys), blocked=blocked)
    many = len(axes.keys) > 14
    if weights:
        return charts.heatmap(df, title=title, domain=domain or (0, 1), scheme="viridis", value_title="weight",
                              show_values=not many)
    return charts.heatmap(df, title=title, diverging=True, scheme="blueorange", value_title="score", domain=domain,
                          show_values=not many)


def _feature_heatmap(values, rows: list[str], title: str, prefix: str, col_labels=None):
    values = values[..., :32]
    width = values.shape[-1]
    cols = frames.AxisLabels(col_labels[:width]) if col_labels else frames.feature_labels(width, prefix)
    df = frames.matrix_frame(values, frames.AxisLabels(rows), cols, row_name="token", col_name="feature")
    return charts.matrix_heatmap(df, title=title, show_values=values.shape[-1] <= 12)


def stage_charts(trace: AttentionTrace, labels: list[str], stage: str, *, head: int = 0, follow: int = 0,
                 x=None, key_labels: list[str] | None = None) -> dict[str, alt.TopLevelMixin]:
    """The charts of one stage (STAGE_KEYS name) by file-friendly name, built with the app's chart builders.

    x (T, d_model) is needed for the embeddings stage; matrices wider than 32 show their first 32 columns.
    """
    axes = TraceAxes(list(labels), list(labels if key_labels is None else key_labels))
    h = head
    suffix = f" (head {h + 1})" if trace.num_heads > 1 else ""
    if stage == "embed":
        return {} if x is None else {"x": _feature_heatmap(x, axes.queries, "X: one row per token", "x")}
    if stage == "qkv":
        return {"q": _feature_heatmap(trace.q[h], axes.queries, f"Q{suffix}", "q"),
                "k": _feature_heatmap(trace.k[h], axes.keys, f"K{suffix}", "k"),
                "v": _feature_heatmap(trace.v[h], axes.keys, f"V{suffix}", "v")}
    if stage == "scores":
        return {"scores": _token_heatmap(trace.scores[h], axes, f"QKᵀ{suffix}")}
    if stage == "scaled":
        return {"scaled": _token_heatmap(trace.scaled[h], axes, f"QKᵀ / √d_k{suffix}")}
    if stage == "masked":
        mask_df = frames.mask_frame(trace.mask[h], frames.AxisLabels(axes.queries), frames.AxisLabels(axes.keys))
        return {"mask": charts.mask_grid(mask_df, title=f"mask (✓ may attend){suffix}"),
                "masked": _token_heatmap(trace.masked[h], axes, f"scores, −∞ where blocked{suffix}")}
    if stage == "softmax":
        row = charts.before_after_softmax(
            frames.row_frame(trace.masked[h, follow], frames.AxisLabels(axes.keys)),
            frames.row_frame(trace.weights[h, follow], frames.AxisLabels(axes.keys)),
            title=f"row of {axes.queries[follow]}: before and after softmax")
        return {"weights": _token_heatmap(trace.weights[h], axes, f"attention weights{suffix}", weights=True,
                                          blocked=~trace.mask[h]),
                "row": row}
    if stage == "context":
        return {"context": _feature_heatmap(trace.context[h], axes.queries, f"context = A·V{suffix}", "c")}
    if stage == "concat":
        _, _, cols = _stage_axes(trace, "concat", axes)
        return {"concat": _feature_heatmap(trace.concat, axes.queries, "Concat(head_1 … head_h)", "c", cols)}
    if stage == "output":
        return {"output": _feature_heatmap(trace.output, axes.queries, "output = Concat · W_O", "o")}
    return {}


# ------------------------------------------------------------------------------------------ handout

_HANDOUT_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
h1 { color: #3b5bdb; } h2 { border-top: 2px solid #eef2ff; padding-top: 1rem; }
.formula { font-family: "Cambria Math", "STIX Two Math", serif; font-size: 1.25rem; background: #eef2ff;
           padding: .6rem 1rem; border-radius: 6px; }
table { border-collapse: collapse; margin: .5rem 0; font-size: .9rem; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: right; }
th { background: #f4f4f4; } figure { margin: .5rem 0; overflow-x: auto; } .note { color: #555; }
"""


def _table(frame: pd.DataFrame, index: bool = True) -> str:
    return frame.to_html(index=index, escape=True, border=0, na_rep="−∞", float_format=frames.format_value)


def _matrix_table(values, rows: list[str], cols: list[str]) -> str:
    return _table(pd.DataFrame(frames.to_numpy(values), index=list(rows), columns=list(cols)))


def _stage_matrix(trace: AttentionTrace, stage: str, head: int, axes: TraceAxes, x=None) -> str:
    if stage == "embed":
        return "" if x is None else _matrix_table(x, axes.queries, list(frames.feature_labels(x.shape[1], "x")))
    name = {"qkv": "q", "softmax": "weights"}.get(stage, stage)
    _, rows, cols = _stage_axes(trace, name, axes)
    values = getattr(trace, name)
    return _matrix_table(values[head] if name in PER_HEAD else values, rows, cols)


def _worked_numbers(trace: AttentionTrace, stage: str, head: int, follow: int, axes: TraceAxes) -> str:
    """The followed query's row worked out, as an HTML table (for the stages that act on one row)."""
    if stage not in ("scores", "scaled", "masked", "softmax", "context"):
        return ""
    r = row_arithmetic(trace, head, follow)
    table = {"key": axes.keys}
    if stage == "scores":  # the d_k products, as the page writes them
        table["q · k = Σ q_m k_m"] = [worked.product_sum(r.q, r.k[j], longest=worked.longest_in_row(j))
                                      for j in range(len(axes.keys))]
    table["q·k"] = r.scores.tolist()
    if stage != "scores":
        table[f"÷ √d_k = ÷ {r.sqrt_d_k:.3f}"] = r.scaled.tolist()
    if stage == "masked":
        table["allowed?"] = ["yes" if a else "no → −∞" for a in r.allowed.tolist()]
    if stage in ("softmax", "context"):
        table["e^(s − max)"] = r.exps.tolist()
        table["weight"] = r.weights.tolist()
    if stage == "context":
        table["weight · v (first numbers)"] = [", ".join(f"{v:.3f}" for v in row[:4]) for row in
                                               r.weighted_values.tolist()]
    words = f"<h3>Worked numbers for {html.escape(axes.queries[follow])}</h3>"
    if stage == "context":
        words += "<p>c = " + html.escape(", ".join(f"{v:.4f}" for v in r.context.tolist())) + "</p>"
    return words + _table(pd.DataFrame(table), index=False)



def _prose_html(text: str) -> str:
    """A stage's words (Markdown paragraphs, "- " lists and **bold**) as HTML, every character escaped first."""
    def bold(line: str) -> str:
        return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(line))

    blocks = []
    for block in filter(None, (b.strip() for b in text.split("\n\n"))):
        lines = block.split("\n")
        if all(line.startswith("- ") for line in lines):
            blocks.append("<ul>" + "".join(f"<li>{bold(line[2:])}</li>" for line in lines) + "</ul>")
        else:
            blocks.append(f"<p>{bold(block)}</p>")
    return "".join(blocks)


def handout_html(trace: AttentionTrace, labels: list[str], *, x=None, head: int = 0, follow: int = 0,
                 settings: dict | None = None, title: str = "Attention, step by step",
                 key_labels: list[str] | None = None, with_charts: bool | None = None) -> str:
    """One self-contained HTML page with every stage: words, formula, chart (inline SVG), worked numbers.

    Opens offline: no scripts, fonts or images from elsewhere. ``settings`` (name -> value) is listed at the
    top. Charts are left out, with a note, when vl-convert is missing (or ``with_charts=False``).
    """
    axes = TraceAxes(list(labels), list(labels if key_labels is None else key_labels))
    with_charts = converter_available() if with_charts is None else with_charts
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{e(title)}</title><style>{_HANDOUT_STYLE}</style></head><body>",
             f"<h1>{e(title)}</h1>",
             "<p>Tokens: " + e(", ".join(axes.queries)) + "</p>"]
    if settings:
        parts.append("<ul>" + "".join(f"<li>{e(str(k))}: {e(str(v))}</li>" for k, v in settings.items()) + "</ul>")
    parts.append(f"<p class='note'>Head {head + 1} of {trace.num_heads}; worked numbers follow the query "
                 f"token {e(axes.queries[follow])}.</p>")
    if not with_charts:
        parts.append(f"<p class='note'>Charts are not included: {e(MISSING_CONVERTER)}</p>")
    for stage in STAGES:
        parts.append(f"<section id='{e(stage.key)}'><h2>{e(stage.title)}</h2>{_prose_html(stage.words)}"
                     f"{_prose_html(stage.more)}")
        parts.append(f"<p class='formula'>{e(HANDOUT_FORMULAS.get(stage.key, stage.latex))}</p>")
        if with_charts:
            for chart in stage_charts(trace, labels, stage.key, head=head, follow=follow, x=x,
                                      key_labels=key_labels).values():
                parts.append(f"<figure>{_inline_svg(chart_svg(chart))}</figure>")
        parts.append(_worked_numbers(trace, stage.key, head, follow, axes))
        matrix = _stage_matrix(trace, stage.key, head, axes, x)
        if matrix:
            parts.append(f"<details><summary>All the numbers</summary>{matrix}</details>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _inline_svg(svg: str) -> str:
    """An SVG document ready to sit inside HTML (no XML declaration)."""
    return svg[svg.index("<svg"):] if "<svg" in svg else ""


# -------------------------------------------------------------------------------------------- page


def _settings_summary(settings) -> dict:
    c = settings.config
    return {"sentence": c.sentence, "d_model": c.d_model, "d_k": settings.lesson.trace.d_k,
            "d_v": settings.lesson.trace.d_v, "heads": c.num_heads, "mask": c.mask, "projections": c.init,
            "seed": c.seed, "word vectors": c.embeddings}


FILE_WORDS = 3
"""How many of the sentence's words a download's file name starts with."""


def file_stem(settings) -> str:
    """The start of a download's file name, from the settings it holds: the sentence's first words (ASCII letters and
    digits; "sentence" when none), heads, d_k, the mask and the seed, e.g. ``attention_the-cat-sat_h2-dk4-none-seed0``.
    Two downloads on other settings no longer both came as "attention-trace.csv" and "attention-trace (1).csv"."""
    c = settings.config
    ascii_text = unicodedata.normalize("NFKD", c.sentence).encode("ascii", "ignore").decode().lower()
    words = "-".join(re.findall(r"[a-z0-9]+", ascii_text)[:FILE_WORDS]) or "sentence"
    return f"attention_{words}_h{c.num_heads}-dk{settings.lesson.trace.d_k}-{c.mask}-seed{c.seed}"


def chart_file_name(settings, stage_key: str, name: str, kind: str) -> str:
    """A stage chart's file name: the settings (``file_stem``), the stage's number and key, the chart's name where
    the stage has several, and the head where there are several, e.g. ``…_stage2-qkv-q-head1.svg`` (it was
    ``qkv-q.svg``, and ``scaled-scaled.svg`` for stage 4's one chart)."""
    chart = "" if name == stage_key else f"-{name}"
    head = f"-head{settings.head + 1}" if settings.config.num_heads > 1 else ""
    return f"{file_stem(settings)}_stage{STAGE_KEYS.index(stage_key) + 1}-{stage_key}{chart}{head}.{kind}"


def show_downloads(settings, stage_key: str | None = None) -> None:
    """Download buttons: the trace (CSV, JSON), the handout (HTML) and the current stage's charts (SVG, PNG).
    Each file is built only when its button is pressed, and the buttons are drawn only when asked for (a
    lecture hall's Next then costs nothing for them)."""
    import streamlit as st

    lesson = settings.lesson
    trace, labels = lesson.trace, settings.labels
    if not st.toggle("Take it with you: downloads", key="show_downloads",
                     help="The trace as CSV or JSON, this stage's charts as SVG or PNG, and a handout."):
        return
    with st.container(border=True):
        st.caption("X, the weights and the numbers of every stage (labelled by token and head), the current "
                   "stage's charts for slides, and a handout of the whole lesson that opens offline.")
        cols = st.columns(3)
        inputs = {"x": lesson.x, "projections": lesson.projections}
        stem = file_stem(settings)
        cols[0].download_button("Trace (CSV)", lambda: trace_csv(trace, labels, **inputs),
                                file_name=f"{stem}_trace.csv", mime="text/csv", on_click="ignore", key="dl-csv",
                                icon=":material/table:")
        cols[1].download_button("Trace (JSON)", lambda: trace_json(trace, labels, settings=_settings_summary(settings),
                                                                   **inputs),
                                file_name=f"{stem}_trace.json", mime="application/json", on_click="ignore",
                                key="dl-json", icon=":material/data_object:")
        cols[2].download_button("Handout (HTML)", lambda: handout_html(
            trace, labels, x=lesson.x, head=settings.head, follow=settings.follow,
            settings=_settings_summary(settings)), file_name=f"{stem}_handout.html", mime="text/html",
            on_click="ignore", key="dl-handout", icon=":material/description:",
            help="Every stage's words, formula, charts and worked numbers in one page that opens offline. Drawing its "
                 "charts takes a second or two after the click.")
        if stage_key is None:
            return
        names = STAGE_CHART_NAMES.get(stage_key, ())
        if not names:
            return
        if not converter_available():
            st.info(MISSING_CONVERTER)
            return

        def render(name: str, kind: str):
            chart = stage_charts(trace, labels, stage_key, head=settings.head, follow=settings.follow,
                                 x=lesson.x)[name]
            return chart_svg(chart) if kind == "svg" else chart_png(chart)

        st.markdown("**This stage's charts** (SVG for slides that scale, PNG at twice the screen size)")
        for name in names:
            row = st.columns([3, 1, 1, 3], vertical_alignment="center")
            row[0].markdown(CHART_DESCRIPTIONS.get(name, name))
            for col, kind, mime in ((row[1], "svg", "image/svg+xml"), (row[2], "png", "image/png")):
                col.download_button(kind.upper(), lambda name=name, kind=kind: render(name, kind),
                                    file_name=chart_file_name(settings, stage_key, name, kind), mime=mime,
                                    on_click="ignore", key=f"dl-{stage_key}-{name}-{kind}")
