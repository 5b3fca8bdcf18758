"""Editable grids for the work-it-by-hand page, kept in plain session state so nothing typed is lost.

Every grid a person types (X, W_Q, W_K, W_V and one answer grid per stage) lives under
``GRIDS_KEY`` as rows of the cells exactly as typed. ``grid_editor`` draws one with
``st.data_editor`` on top of that store: the store is the editor's starting data, and a
changed store (reset, resize, or a test setting it) starts a fresh editor from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

from attention_core import EXAMPLE, AnswerCheck, AttentionTrace, Diagnosis, format_cell, resize_grid
from attention_core.by_hand import EMPTY, INVALID, RIGHT, WRONG

from .frames import format_value

GRIDS_KEY = "hand_grids"
"""Session key: grid name -> rows of typed cells (X, W_Q, W_K, W_V, answer_<stage>)."""
SIZES_KEY = "hand_sizes"
"""Session key: {"tokens", "d_model", "d_k", "d_v", "causal"} of the by-hand example."""
CHECKED_KEY = "hand_checked"
"""Session key: the answer stages whose Check was pressed."""
SOLVED_KEY = "hand_solved"
"""Session key: the answer stages checked with every cell right."""
EVER_CHECKED_KEY = "hand_checked_ever"
"""The stages checked at least once in this session (Start here's progress). CHECKED_KEY holds the stages whose
marks are shown for the grids as they are now, and a reset or a size change clears it; this set is never cleared."""
_SHOWN_KEY, _VERSIONS_KEY = "hand_last_shown", "hand_editor_versions"

TOKENS = EXAMPLE.tokens + ("too", "much")
"""The example's words; fewer or more tokens take the first ones of these."""

DEFAULT_SIZES = {"tokens": len(EXAMPLE.tokens), "d_model": len(EXAMPLE.x[0]), "d_k": len(EXAMPLE.w_q[0]),
                 "d_v": len(EXAMPLE.w_v[0]), "causal": False}

MARK_TEXT = {RIGHT: "✓", WRONG: "✗", EMPTY: "… empty", INVALID: "⚠ not a number"}
MARK_COLOURS = {RIGHT: "background-color: #d3f9d8", WRONG: "background-color: #ffe3e3",
                EMPTY: "background-color: #f1f3f5", INVALID: "background-color: #fff3bf"}


def sizes() -> dict:
    return st.session_state.setdefault(SIZES_KEY, dict(DEFAULT_SIZES))


def grids() -> dict:
    return st.session_state.setdefault(GRIDS_KEY, {})


def matrix_shapes(s: dict) -> dict[str, tuple[int, int]]:
    """The typed matrices' shapes for sizes ``s``: X (T, d_model), W_Q and W_K (d_model, d_k), W_V (d_model, d_v)."""
    return {"X": (s["tokens"], s["d_model"]), "W_Q": (s["d_model"], s["d_k"]), "W_K": (s["d_model"], s["d_k"]),
            "W_V": (s["d_model"], s["d_v"])}


def example_grids(s: dict) -> dict[str, list[list[str]]]:
    """The built-in example as typed text, cut or padded with zeros to sizes ``s``."""
    source = {"X": EXAMPLE.x, "W_Q": EXAMPLE.w_q, "W_K": EXAMPLE.w_k, "W_V": EXAMPLE.w_v}
    shapes = matrix_shapes(s)
    return {name: resize_grid([[format_cell(v) for v in row] for row in rows], shapes[name])
            for name, rows in source.items()}


def reset_to_example() -> None:
    """Back to the example: its sizes and numbers; typed answers and checks are cleared."""
    st.session_state[SIZES_KEY] = dict(DEFAULT_SIZES)
    for name, value in DEFAULT_SIZES.items():
        st.session_state[f"hand-size-{name}"] = value
    st.session_state[GRIDS_KEY] = example_grids(DEFAULT_SIZES)
    st.session_state[CHECKED_KEY] = set()


def apply_size_change() -> None:
    """Copy the size widgets into the kept sizes and fit every kept grid to them (overlapping cells stay)."""
    s = sizes()
    for name in DEFAULT_SIZES:
        s[name] = st.session_state.get(f"hand-size-{name}", s[name])
    store = grids()
    for name, shape in matrix_shapes(s).items():
        store[name] = resize_grid(store.get(name), shape)
    for name in [n for n in store if n.startswith("answer_")]:
        store[name] = resize_grid(store[name], answer_shape(name.removeprefix("answer_"), s), fill="")


def answer_shape(stage: str, s: dict) -> tuple[int, int]:
    return (s["tokens"], s["d_v"]) if stage == "context" else (s["tokens"], s["tokens"])


def keep_sizes_widgets() -> None:
    """Give the size widgets their kept values (they are cleared when the person visits another page)."""
    for name, value in sizes().items():
        st.session_state.setdefault(f"hand-size-{name}", value)


def grid_editor(name: str, shape: tuple[int, int], row_labels: list[str], col_labels: list[str], *,
                default=None, height: int | str = "content") -> list[list]:
    """Draw an editable ``shape`` grid of text cells and return its rows as typed ("" for an empty cell).

    ``default`` (rows) fills a grid the session has not typed yet (else empty cells).
    """
    store = grids()
    if name not in store:
        store[name] = resize_grid(default, shape, fill="")
    elif len(store[name]) != shape[0] or any(len(row) != shape[1] for row in store[name]):
        store[name] = resize_grid(store[name], shape, fill="")
    versions = st.session_state.setdefault(_VERSIONS_KEY, {})
    shown = st.session_state.setdefault(_SHOWN_KEY, {})
    widget_key = f"hand-edit-{name}-{versions.get(name, 0)}"
    if widget_key not in st.session_state or shown.get(name) != store[name]:
        versions[name] = versions.get(name, 0) + 1  # a fresh editor, started from the kept grid
        widget_key = f"hand-edit-{name}-{versions[name]}"
        st.session_state[f"hand-base-{name}"] = [list(row) for row in store[name]]
    base = pd.DataFrame(st.session_state[f"hand-base-{name}"], index=row_labels, columns=col_labels, dtype=object)
    column_config = {col: st.column_config.TextColumn(col, width="small") for col in col_labels}
    edited = st.data_editor(base, key=widget_key, column_config=column_config, num_rows="fixed", height=height,
                            width="content")
    rows = [[_cell(v) for v in row] for row in edited.astype(object).values.tolist()]
    store[name] = rows
    shown[name] = [list(row) for row in rows]  # a copy: a change to the kept grid shows up as a difference
    return rows


def _cell(value):
    """An editor cell as typed: "" for empty (the editor gives None or NaN for a cleared cell), else as it came."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return value


def marks_table(check: AnswerCheck, typed: list[list], row_labels: list[str], col_labels: list[str], *,
                show_answer: bool):
    """A styled table: ✓ / ✗ per cell with the typed number, and the right value when asked for."""
    cells = []
    for i, marks in enumerate(check.marks):
        row = []
        for j, mark in enumerate(marks):
            text = MARK_TEXT[mark]
            if mark in (RIGHT, WRONG):
                text = f"{text} {typed[i][j]}".strip()
            if show_answer and mark != RIGHT:
                text += f" → {format_value(float(check.truth[i, j]))}"
            row.append(text)
        cells.append(row)
    table = pd.DataFrame(cells, index=row_labels, columns=col_labels)
    colours = pd.DataFrame([[MARK_COLOURS[m] for m in marks] for marks in check.marks], index=row_labels,
                           columns=col_labels)
    return table.style.apply(lambda _: colours, axis=None)


def diagnosis_text(diagnosis: Diagnosis, row_labels: list[str], col_labels: list[str]) -> str:
    """A diagnosis in words (markdown; the labels are the page's own token and feature names)."""
    parts = []
    if diagnosis.slip is not None:
        explained, wrong = len(diagnosis.cells), diagnosis.wrong
        if explained == wrong:
            which = {1: "Your wrong cell looks", 2: "Both wrong cells look"}.get(wrong, f"All {wrong} wrong cells look")
        else:
            named = ", ".join(f"{row_labels[i]} → {col_labels[j]}" for i, j in diagnosis.cells[:4])
            which = f"{explained} of your {wrong} wrong cells ({named}{', …' if explained > 4 else ''}) look"
        parts.append(f"**A likely slip.** {which} like a common mistake. {diagnosis.slip.hint}")
    if diagnosis.row_notes:
        rows = " ".join(f"Row {row_labels[i]} {note}" for i, note in diagnosis.row_notes)
        parts.append(f"**Not weights yet.** {rows}")
    return "\n\n".join(parts)


# ------------------------------------------------------------------------------- starting points


@dataclass(frozen=True)
class StartingPoint:
    """The right values of the stage before ``stage``, which a student starts from: ``values`` (T, T) with
    ``blocked`` (bool (T, T), True = blocked by the mask, drawn "×") or None; a blocked scaled score is −∞ in
    ``values`` itself. ``label`` (markdown) says what they are; ``title`` is the chart's; ``kind`` picks its
    colours ("scores" signed, "weights" 0 to 1)."""

    stage: str
    label: str
    title: str
    values: torch.Tensor
    kind: str
    blocked: torch.Tensor | None = None
    note: str = ""


def starting_point(trace: AttentionTrace, stage: str) -> StartingPoint | None:
    """What the student starts from at ``stage`` (a HAND_STAGES name): the previous stage's right values, for
    the trace's first head. None for the first stage (Q and K are shown above the stages)."""
    causal = not bool(trace.mask[0].all())
    if stage == "scaled":
        note = ("The mask comes in at step 3: here every pair has a score, blocked or not." if causal else "")
        return StartingPoint(stage, "**Start from the raw scores S** (the right values of step 1):",
                             "Raw scores S = QKᵀ (step 1)", trace.scores[0], "scores", note=note)
    if stage == "weights":
        if causal:
            return StartingPoint(stage, "**Start from the scaled scores S̃** (the right values of step 2), with the "
                                 "causal mask applied: a blocked pair's score becomes −∞.",
                                 "Masked scaled scores (step 2, then −∞ where blocked)", trace.masked[0], "scores",
                                 note="−∞: a key the causal mask blocks. e^(−∞) = 0, so its weight is 0.")
        return StartingPoint(stage, "**Start from the scaled scores S̃** (the right values of step 2):",
                             "Scaled scores S / √d_k (step 2)", trace.masked[0], "scores")
    if stage == "context":
        blocked = ~trace.mask[0] if causal else None
        note = "×: a key the causal mask blocks (weight 0, so its value row adds nothing)." if causal else ""
        return StartingPoint(stage, "**Start from the weights A** (the right values of step 3) and V, which is "
                             "shown above under “Q, K and V from your numbers”:",
                             "Weights A (step 3)", trace.weights[0], "weights", blocked=blocked, note=note)
    return None


PAGE_CHART = {"cell_size": 52, "font_size": 14}
"""Q, K, V and the stages' charts on the page: numbers at 14 px."""
PRESENTER_FONT = 22
PRESENTER_MAX_CELL = 84
PRESENTER_THIRD_PX = 390
"""Width of one of three side-by-side columns in presenter mode at 1280 px (no sidebar): about a third of
``views.PRESENTER_COLUMN_PX``, less the gaps between the columns."""
PRESENTER_FRAME_PX = 205
"""What a chart needs besides its cells in presenter mode: the token labels, the axis title and the legend."""


def chart_sizes(presenter: bool, widest: int) -> dict:
    """``cell_size`` and ``font_size`` of the by-hand charts. In presenter mode numbers are large (22 px in
    84 px cells) and the cells shrink for a wide matrix (``widest`` columns) so that three charts still fit
    side by side at 1280 px; never below the page's own size."""
    if not presenter:
        return dict(PAGE_CHART)
    room = (PRESENTER_THIRD_PX - PRESENTER_FRAME_PX) // max(widest, 1)
    return {"cell_size": max(PAGE_CHART["cell_size"], min(PRESENTER_MAX_CELL, room)), "font_size": PRESENTER_FONT}
