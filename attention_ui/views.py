"""Drawing blocks shared by the pages: one function per attention stage.

A page builds a ``StageView`` (the trace plus labels and view options) and calls
``show_stage(view, key)``. The same blocks draw the toy lesson and a real model's head.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import altair as alt
import pandas as pd
import streamlit as st
import torch

from attention_core import AttentionTrace, Projections, row_arithmetic

from . import charts, frames
from .text import STAGES, Stage, plain

MAX_FEATURES_SHOWN = 32
"""Widest feature axis drawn as a heatmap; wider matrices show their first columns."""


@dataclass(frozen=True)
class StageView:
    """Everything a stage block draws. Shapes: x (T, d_model); trace as in AttentionTrace."""

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

    @property
    def width_budget(self) -> int:
        """Pixels a full-width chart may take (the main column beside the sidebar; more in presenter mode)."""
        return self.cell_size * 22

    def fit_cell(self, columns: int, share: float = 1.0) -> int:
        """A cell size that fits ``columns`` cells into ``share`` of the width budget."""
        return max(8, min(self.cell_size, int(self.width_budget * share) // max(columns, 1)))

    @property
    def keys(self) -> list[str]:
        return self.labels if self.key_labels is None else self.key_labels

    @property
    def follow_label(self) -> str:
        return self.labels[self.follow]


def show_chart(chart) -> None:
    """Draw at the chart's own size: ``pad`` keeps the cell sizes (axes and legend are added around
    them), and our own theme keeps the projector-sized fonts."""
    st.altair_chart(chart.properties(autosize=alt.AutoSizeParams(type="pad")), width="content", theme=None)


def stage_header(stage: Stage, heading: str | None = None) -> None:
    st.subheader(heading or stage.title)
    st.markdown(stage.words)
    st.latex(stage.latex)


def show_stage(view: StageView, key: str, heading: str | None = None) -> None:
    """Draw one stage: words, formula, chart, numbers, and the followed token's arithmetic.
    ``heading`` replaces the stage's numbered title (for pages with their own numbering)."""
    stage = next(s for s in STAGES if s.key == key)
    if key == "embed" and view.embed_words:
        stage = replace(stage, words=view.embed_words)
    stage_header(stage, heading)
    _DRAW[key](view)


def numbers_table(values, rows: list[str], cols: list[str], *, caption: str = "The numbers") -> None:
    """The exact numbers of a matrix in an expander (user text is shown as plain table text)."""
    with st.expander(caption):
        table = pd.DataFrame(frames.to_numpy(values), index=list(rows), columns=list(cols))
        st.dataframe(table.style.format("{:.4f}", na_rep="−∞"), width="stretch")


def _features(values: torch.Tensor) -> tuple[torch.Tensor, str]:
    width = values.shape[-1]
    if width <= MAX_FEATURES_SHOWN:
        return values, ""
    return values[..., :MAX_FEATURES_SHOWN], f"Showing the first {MAX_FEATURES_SHOWN} of {width} features."


def feature_heatmap(view: StageView, values: torch.Tensor, rows: list[str], title: str, prefix: str = "d",
                    share: float = 1.0):
    """A tokens × features heatmap (diverging colours around 0), capped at MAX_FEATURES_SHOWN columns and
    sized to fit ``share`` of the page width."""
    shown, note = _features(values)
    df = frames.matrix_frame(shown, frames.AxisLabels(rows), frames.feature_labels(shown.shape[-1], prefix),
                             row_name="token", col_name="feature")
    cell = view.fit_cell(shown.shape[-1] + 3, share)  # + room for the token labels and the colour bar
    chart = charts.matrix_heatmap(df, title=title, cell_size=cell, font_size=view.font_size,
                                  show_values=shown.shape[-1] <= 12 and cell >= 30)
    return chart, note


def token_heatmap(view: StageView, values: torch.Tensor, title: str, *, weights: bool = False, domain=None,
                  share: float = 1.0):
    """A queries × keys heatmap: weights on a 0..1 sequential scale, scores diverging around 0."""
    df = frames.matrix_frame(values, frames.AxisLabels(view.labels), frames.AxisLabels(view.keys))
    cell = view.fit_cell(len(view.keys) + 3, share)
    many = len(view.keys) > 14 or cell < 30
    if weights:
        return charts.heatmap(df, title=title, domain=domain or (0, 1), scheme="viridis", value_title="weight",
                              cell_size=cell, font_size=view.font_size, show_values=not many)
    return charts.heatmap(df, title=title, diverging=True, scheme="blueorange", value_title="score", domain=domain,
                          cell_size=cell, font_size=view.font_size, show_values=not many)


def _head_title(view: StageView) -> str:
    return f" — head {view.head + 1}" if view.trace.num_heads > 1 else ""


def _draw_embed(view: StageView) -> None:
    if view.x is None:
        st.info("This view starts from a layer's input vectors; see the next stages.")
        return
    chart, note = feature_heatmap(view, view.x, view.labels, "X: one row per token")
    show_chart(chart)
    if note:
        st.caption(note)
    st.markdown(f"**{len(view.labels)} tokens × d_model = {view.x.shape[1]} numbers.** Tokens (in order):")
    st.dataframe(pd.DataFrame({"position": range(1, len(view.labels) + 1),
                               "token": [label.split("·", 1)[-1] for label in view.labels]}),
                 hide_index=True, width="content")
    numbers_table(view.x, view.labels, frames.feature_labels(view.x.shape[1]))


def _draw_qkv(view: StageView) -> None:
    t, h = view.trace, view.head
    d_k, d_v = t.d_k, t.d_v
    st.markdown(f"Head {h + 1} uses columns {h * d_k + 1}–{(h + 1) * d_k} of W_Q and W_K and columns "
                f"{h * d_v + 1}–{(h + 1) * d_v} of W_V (counting from 1): d_k = {d_k}, d_v = {d_v}.")
    cols = st.columns(3)
    for col, name, values in zip(cols, ("Q", "K", "V"), (t.q[h], t.k[h], t.v[h])):
        rows = view.labels if name == "Q" else view.keys
        with col:
            chart, note = feature_heatmap(view, values, rows, f"{name}{_head_title(view)}", prefix=name.lower(),
                                          share=1 / 3)
            show_chart(chart)
            if note:
                st.caption(note)
    if view.projections is not None:
        with st.expander("The weight matrices W_Q, W_K, W_V (this head's columns)"):
            p = view.projections
            for name, w, width in (("W_Q", p.w_q, d_k), ("W_K", p.w_k, d_k), ("W_V", p.w_v, d_v)):
                head_cols = w[:, h * width:(h + 1) * width]
                rows = frames.feature_labels(w.shape[0], "x")
                chart, note = feature_heatmap(view, head_cols, rows, f"{name} (d_model × {width})")
                show_chart(chart)
    numbers_table(t.q[view.head], view.labels, frames.feature_labels(d_k, "q"), caption="The numbers: Q of this head")


def _draw_scores(view: StageView) -> None:
    t = view.trace
    show_chart(token_heatmap(view, t.scores[view.head], f"QKᵀ{_head_title(view)}"))
    _follow_arithmetic(view, "scores")
    numbers_table(t.scores[view.head], view.labels, view.keys)


def _draw_scaled(view: StageView) -> None:
    t = view.trace
    raw, scaled = t.scores[view.head], t.scaled[view.head]
    st.markdown(f"Here d_k = {t.d_k}, so every score is divided by √{t.d_k} = {t.d_k ** 0.5:.4f}. "
                "Both charts share one colour scale so the shrink is visible.")
    bound = float(raw.abs().max()) or 1.0
    left, right = st.columns(2)
    with left:
        show_chart(token_heatmap(view, raw, "before: QKᵀ", domain=(-bound, bound), share=0.5))
    with right:
        show_chart(token_heatmap(view, scaled, "after: QKᵀ / √d_k", domain=(-bound, bound), share=0.5))
    _follow_arithmetic(view, "scaled")
    numbers_table(scaled, view.labels, view.keys)


def _draw_masked(view: StageView) -> None:
    t = view.trace
    mask = t.mask[view.head]
    blocked = int((~mask).sum())
    left, right = st.columns(2)
    with left:
        show_chart(charts.mask_grid(frames.mask_frame(mask, frames.AxisLabels(view.labels),
                                                      frames.AxisLabels(view.keys)),
                                    title="mask (✓ may attend)", cell_size=view.fit_cell(len(view.keys) + 3, 0.5),
                                    font_size=view.font_size))
    with right:
        show_chart(token_heatmap(view, t.masked[view.head], "scaled scores, −∞ where blocked", share=0.5))
    if blocked == 0:
        st.info("No mask is set, so nothing is blocked at this stage. Pick a mask in the sidebar to see it act.")
    else:
        st.markdown(f"{blocked} of {mask.numel()} query–key pairs are blocked (grey, −∞).")
    _follow_arithmetic(view, "masked")
    numbers_table(t.masked[view.head], view.labels, view.keys)


def _draw_softmax(view: StageView) -> None:
    t = view.trace
    show_chart(token_heatmap(view, t.weights[view.head], f"attention weights{_head_title(view)}", weights=True))
    st.markdown(f"**Row of {plain(view.follow_label)}**: before and after softmax.")
    show_chart(charts.before_after_softmax(
        frames.row_frame(t.masked[view.head, view.follow], frames.AxisLabels(view.keys)),
        frames.row_frame(t.weights[view.head, view.follow], frames.AxisLabels(view.keys)),
        cell_size=max(view.cell_size, 30), font_size=view.font_size))
    _follow_arithmetic(view, "softmax")
    numbers_table(t.weights[view.head], view.labels, view.keys)


def _draw_context(view: StageView) -> None:
    t = view.trace
    left, right = st.columns([2, 1])
    with left:
        show_chart(token_heatmap(view, t.weights[view.head], "weights A", weights=True, share=2 / 3))
    with right:
        chart, note = feature_heatmap(view, t.context[view.head], view.labels, f"context = A·V{_head_title(view)}",
                                      prefix="c", share=1 / 3)
        show_chart(chart)
    _follow_arithmetic(view, "context")
    numbers_table(t.context[view.head], view.labels, frames.feature_labels(t.d_v, "c"))


def _draw_concat(view: StageView) -> None:
    t = view.trace
    h, d_v = t.num_heads, t.d_v
    if h == 1:
        st.info("With one head there is nothing to concatenate: the concat equals the head's context.")
    else:
        st.markdown(f"{h} heads × d_v = {d_v} → {h * d_v} columns. Head i fills columns "
                    f"(i−1)·{d_v} + 1 to i·{d_v}.")
    labels = frames.AxisLabels(f"h{i // d_v + 1}·{i % d_v}" for i in range(h * d_v))
    shown, note = _features(t.concat)
    df = frames.matrix_frame(shown, frames.AxisLabels(view.labels), frames.AxisLabels(labels[:shown.shape[1]]),
                             row_name="token", col_name="feature")
    cell = view.fit_cell(shown.shape[1] + 3)
    show_chart(charts.matrix_heatmap(df, title="Concat(head_1 … head_h)", cell_size=cell,
                                     font_size=view.font_size, show_values=shown.shape[1] <= 12 and cell >= 30))
    if note:
        st.caption(note)
    numbers_table(t.concat, view.labels, labels)


def _draw_output(view: StageView) -> None:
    t = view.trace
    if view.projections is not None and view.projections.w_o is None:
        st.info("No output projection W_O is set here, so the output equals the concat.")
    chart, note = feature_heatmap(view, t.output, view.labels, "output = Concat · W_O", prefix="o")
    show_chart(chart)
    if note:
        st.caption(note)
    st.markdown(f"Shape: {t.output.shape[0]} tokens × {t.output.shape[1]} features, the same width as X, "
                "so attention layers can be stacked.")
    numbers_table(t.output, view.labels, frames.feature_labels(t.output.shape[1], "o"))


def _fmt(value: float) -> str:
    return "−∞" if value == float("-inf") else f"{value:.3f}"


def _follow_arithmetic(view: StageView, upto: str) -> None:
    """The followed query's row worked out by hand, up to the current stage."""
    r = row_arithmetic(view.trace, view.head, view.follow)
    st.markdown(f"#### Worked numbers for {plain(view.follow_label)}")
    keys = list(view.keys)
    table = {"key": keys}
    if upto == "scores":
        d_k = r.products.shape[1]
        terms = [" + ".join(f"({float(r.q[d]):.2f})({float(r.k[j, d]):.2f})" for d in range(min(d_k, 4)))
                 + (" + …" if d_k > 4 else "")
                 for j in range(len(keys))]
        table |= {"q·k = Σ q_d k_d": terms, "score": [_fmt(float(s)) for s in r.scores]}
        st.latex(rf"q \cdot k_j = \sum_{{d=1}}^{{{d_k}}} q_d\,k_{{j,d}}")
    if upto in ("scaled", "masked"):
        table |= {"score": [_fmt(float(s)) for s in r.scores],
                  f"÷ √d_k = ÷ {r.sqrt_d_k:.3f}": [_fmt(float(s)) for s in r.scaled]}
    if upto == "masked":
        table |= {"allowed?": ["yes" if a else "no → −∞" for a in r.allowed]}
    if upto == "softmax":
        st.caption("Subtracting the row's largest score before e^(·) leaves the weights unchanged (it cancels "
                   "in the fraction) and keeps the exponentials from overflowing.")
        table |= {"scaled": [_fmt(float(s)) if a else "−∞" for s, a in zip(r.scaled, r.allowed)],
                  "e^(s − max)": [f"{float(e):.4f}" for e in r.exps],
                  "weight = e / Σe": [f"{float(w):.4f}" for w in r.weights]}
        if r.total > 0:
            st.latex(rf"\Sigma\, e^{{s - \max}} = {r.total:.4f}, \qquad a_j = e^{{s_j - \max}} / {r.total:.4f}")
        else:
            st.warning("Every key is blocked for this token, so all its weights are zero: it takes in nothing.")
    if upto == "context":
        d_v = r.context.shape[0]
        table |= {"weight a_j": [f"{float(w):.4f}" for w in r.weights],
                  "a_j · v_j": [", ".join(f"{float(x):.3f}" for x in row[:6]) + (", …" if d_v > 6 else "")
                                for row in r.weighted_values]}
        st.latex(r"c = \sum_j a_j\, v_j = (" + ",\\ ".join(f"{float(x):.3f}" for x in r.context[:8])
                 + (r",\ \dots" if d_v > 8 else "") + ")")
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")


_DRAW = {"embed": _draw_embed, "qkv": _draw_qkv, "scores": _draw_scores, "scaled": _draw_scaled,
         "masked": _draw_masked, "softmax": _draw_softmax, "context": _draw_context, "concat": _draw_concat,
         "output": _draw_output}
