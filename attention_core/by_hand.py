"""Attention worked by hand: read the numbers a person typed into a grid, and check their answers.

A grid is a list of rows of whatever an editable table returned: numbers, strings such as
"0.5", "−1" or "1/2", empty cells (None, "", NaN). ``read_grid`` turns it into a tensor or
names every cell it cannot use; ``check_answer`` marks each typed cell right or wrong against
the true stage (a (T, S) or (T, d_v) tensor) within ``ANSWER_TOLERANCE``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace, trace_attention
from .limits import MAX_CELL_MAGNITUDE


ANSWER_TOLERANCE = 0.01
"""A typed answer is right when it is within this distance of the true value."""

HAND_STAGES = ("scores", "scaled", "weights", "context")
"""The stages a student works out and checks, in order."""

RIGHT, WRONG, EMPTY, INVALID = "right", "wrong", "empty", "invalid"


@dataclass(frozen=True)
class HandExample:
    """A small example to work out on paper: tokens (T,), x (T, d_model), w_q and w_k (d_model, d_k),
    w_v (d_model, d_v), as rows of numbers."""

    tokens: tuple[str, ...]
    x: tuple[tuple[float, ...], ...]
    w_q: tuple[tuple[float, ...], ...]
    w_k: tuple[tuple[float, ...], ...]
    w_v: tuple[tuple[float, ...], ...]


EXAMPLE = HandExample(
    tokens=("I", "like", "tea"),
    x=((1, 0), (0, 1), (1, 1)),
    w_q=((1, 0), (1, 1)),
    w_k=((0, 1), (1, 0)),
    w_v=((1, 2), (0, 1)),
)
"""Whole numbers, so Q = XW_Q, K and V are easy to find by hand: 3 tokens, d_model = d_k = d_v = 2."""


@dataclass(frozen=True)
class CellProblem:
    """Why the cell at (row, col) of grid ``grid`` cannot be used; ``message`` names the cell."""

    grid: str
    row: int
    col: int
    message: str


@dataclass(frozen=True)
class GridReading:
    """A typed grid read as numbers: ``values`` (rows, cols) float64 with NaN where a cell is unusable."""

    values: torch.Tensor
    problems: tuple[CellProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class AnswerCheck:
    """Each typed cell marked: ``marks`` rows of RIGHT | WRONG | EMPTY | INVALID; ``truth`` is the true stage."""

    marks: tuple[tuple[str, ...], ...]
    problems: tuple[CellProblem, ...]
    truth: torch.Tensor
    tolerance: float

    def count(self, mark: str) -> int:
        return sum(row.count(mark) for row in self.marks)

    @property
    def cells(self) -> int:
        return sum(len(row) for row in self.marks)

    @property
    def all_right(self) -> bool:
        return self.count(RIGHT) == self.cells


def read_number(cell) -> float:
    """One typed cell as a float; ``ValueError`` with a short reason when it is not a usable number.

    Accepts ints, floats and text such as "0.5", "-2", "−1" (a typographic minus), "1/2", "1e-3".
    """
    if cell is None:
        raise AttentionInputError("is empty")
    if isinstance(cell, bool):
        raise AttentionInputError("is not a number")
    if isinstance(cell, numbers.Real):
        value = float(cell)
    else:
        text = str(cell).strip().replace("−", "-").replace("–", "-").replace(" ", "")
        if not text:
            raise AttentionInputError("is empty")
        if len(text) > 40:
            raise AttentionInputError("holds text too long to be a number")
        try:
            value = float(text)
        except ValueError:
            try:
                value = float(Fraction(text))
            except (ValueError, ZeroDivisionError, OverflowError):
                raise AttentionInputError(f"holds “{text[:20]}”, which is not a number") from None
    if math.isnan(value):
        raise AttentionInputError("is NaN (not a number)")
    if math.isinf(value):
        raise AttentionInputError("is infinite")
    if abs(value) > MAX_CELL_MAGNITUDE:
        raise AttentionInputError(f"is too large: use numbers between −{MAX_CELL_MAGNITUDE:g} and {MAX_CELL_MAGNITUDE:g}")
    return value


def read_grid(rows, shape: tuple[int, int], name: str, row_labels=None, col_labels=None) -> GridReading:
    """Read a typed grid of ``shape`` (rows, cols); every unusable cell becomes a named ``CellProblem``.

    ``row_labels``/``col_labels`` name the cells in messages ("W_Q, row x1, column 2 is empty");
    by default rows and columns are numbered from 1.
    """
    n_rows, n_cols = shape
    row_labels = list(row_labels) if row_labels is not None else [str(i + 1) for i in range(n_rows)]
    col_labels = list(col_labels) if col_labels is not None else [str(j + 1) for j in range(n_cols)]
    values = torch.full((n_rows, n_cols), float("nan"), dtype=torch.float64)
    problems = []
    rows = list(rows) if rows is not None else []
    for i in range(n_rows):
        row = list(rows[i]) if i < len(rows) and rows[i] is not None else []
        for j in range(n_cols):
            cell = row[j] if j < len(row) else None
            try:
                values[i, j] = read_number(cell)
            except ValueError as err:
                problems.append(CellProblem(name, i, j, f"{name}, row {row_labels[i]}, column {col_labels[j]} {err}."))
    return GridReading(values, tuple(problems))


def hand_trace(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor, *,
               causal: bool = False) -> AttentionTrace:
    """One head of attention on the typed matrices: x (T, d_model), w_q/w_k (d_model, d_k), w_v (d_model, d_v)."""
    return trace_attention(x, w_q, w_k, w_v, num_heads=1, mask="causal" if causal else None)


def stage_truth(trace: AttentionTrace, stage: str) -> torch.Tensor:
    """The true matrix a student computes at ``stage`` (one of HAND_STAGES), for the trace's first head."""
    if stage not in HAND_STAGES:
        raise AttentionInputError(f"stage must be one of {', '.join(HAND_STAGES)}, got {stage!r}.")
    return getattr(trace, stage)[0]


def check_answer(rows, truth: torch.Tensor, name: str = "Your answer", row_labels=None, col_labels=None,
                 tolerance: float = ANSWER_TOLERANCE) -> AnswerCheck:
    """Mark every typed cell against ``truth`` (rows, cols): right when |typed − true| ≤ tolerance.

    A blocked score's true value is −∞ in the masked stage, but the checked stages are finite
    (a blocked weight is 0), so every true value here is a plain number.
    """
    reading = read_grid(rows, tuple(truth.shape), name, row_labels, col_labels)
    truth = truth.detach().to("cpu", torch.float64)
    bad = {(p.row, p.col): EMPTY if p.message.endswith("is empty.") else INVALID for p in reading.problems}
    marks = tuple(
        tuple(bad.get((i, j)) or (RIGHT if abs(float(reading.values[i, j] - truth[i, j])) <= tolerance else WRONG)
              for j in range(truth.shape[1]))
        for i in range(truth.shape[0])
    )
    return AnswerCheck(marks, reading.problems, truth, tolerance)


def resize_grid(rows, shape: tuple[int, int], fill="0") -> list[list]:
    """Keep the overlapping cells of a typed grid and fill new ones with ``fill``: (r, c) -> ``shape``."""
    rows = [list(r) for r in (rows or [])]
    n_rows, n_cols = shape
    return [[rows[i][j] if i < len(rows) and j < len(rows[i]) else fill for j in range(n_cols)]
            for i in range(n_rows)]


def format_cell(value: float) -> str:
    """A number as a person would type it: 1.0 -> "1", 0.70710678 -> "0.7071"."""
    return f"{value:.4g}" if value != int(value) else str(int(value))
