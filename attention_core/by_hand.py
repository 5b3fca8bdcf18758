"""Attention worked by hand: read the numbers a person typed into a grid, and check their answers.

A grid is a list of rows of whatever an editable table returned: numbers, strings such as
"0.5", "−1" or "1/2", empty cells (None, "", NaN). ``read_grid`` turns it into a tensor or
names every cell it cannot use; ``check_answer`` marks each typed cell right or wrong against
the true stage (a (T, S) or (T, d_v) tensor) within ``ANSWER_TOLERANCE``.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace, apply_mask, masked_softmax, trace_attention
from .limits import MAX_CELL_MAGNITUDE


ANSWER_TOLERANCE = 0.01
"""A typed answer is right when it is within this distance of the true value."""

HAND_STAGES = ("scores", "scaled", "weights", "context")
"""The stages a student works out and checks, in order."""

RIGHT, WRONG, EMPTY, INVALID = "right", "wrong", "empty", "invalid"
TOO_LARGE = "too large"
"""A ``CellProblem``'s kind for a number beyond MAX_CELL_MAGNITUDE (marked INVALID, but it is a number)."""
DIVISION_BY_ZERO = "division by zero"
"""A ``CellProblem``'s kind for a fraction over 0 such as "1/0" (marked INVALID)."""
EMPTY_REASON, TOO_LARGE_REASON = "is empty", "is too large"


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
    w_k=((1, 1), (0, 1)),
    w_v=((1, 2), (0, 1)),
)
"""Whole numbers, so Q = XW_Q, K and V are easy to find by hand: 3 tokens, d_model = d_k = d_v = 2. Its Q Kᵀ is
not symmetric (q_i · k_j ≠ q_j · k_i): a token need not attend to another as that one attends to it, and a
score worked out the wrong way round shows as wrong."""


@dataclass(frozen=True)
class CellProblem:
    """Why the cell at (row, col) of grid ``grid`` cannot be used; ``message`` names the cell; ``kind`` is EMPTY,
    TOO_LARGE (a number beyond MAX_CELL_MAGNITUDE), DIVISION_BY_ZERO or INVALID (anything else)."""

    grid: str
    row: int
    col: int
    message: str
    kind: str = "invalid"


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
    values: torch.Tensor | None = None  # the typed numbers (rows, cols) float64, NaN where unusable

    def count(self, mark: str) -> int:
        return sum(row.count(mark) for row in self.marks)

    @property
    def cells(self) -> int:
        return sum(len(row) for row in self.marks)

    @property
    def all_right(self) -> bool:
        return self.count(RIGHT) == self.cells


_TIMES = re.compile(r"[*×·]")
"""A product's sign as a student types it: 2*1.5, 2×1.5, 2·1.5."""


def _product(text: str) -> float:
    """ "2*1.4142" as a float (a number alone too); ValueError unless every factor is a number."""
    factors = [float(factor) for factor in _TIMES.split(text)]  # ValueError on an empty or other factor
    return math.prod(factors)


def _decimal_fraction(text: str, typed: str) -> float:
    """ "3/1.4142" (a score over √d_k as a student writes it; ``Fraction`` reads whole numbers only) as a float, and
    products on either side: "2*1.4142", "1/2*1.4142" (one over the product, as "1/2√2" is read). ``typed``: the
    cell as the student typed it ("3/√2"), which a reason quotes."""
    try:
        parts = text.split("/")
        numerator, denominator = (_product(parts[0]), 1.0) if len(parts) == 1 else map(_product, parts)
    except ValueError:  # (also unless one or two sides)
        numerator = denominator = math.nan
    if not (math.isfinite(numerator) and math.isfinite(denominator)):
        raise AttentionInputError(f"holds “{typed[:20]}”, which is not a number")
    if denominator == 0:
        raise AttentionInputError(f"holds “{typed[:20]}”, a {DIVISION_BY_ZERO}")
    return numerator / denominator


_SQUARE_ROOT = re.compile(r"sqrt\(([0-9]*\.?[0-9]+)\)|√\(([0-9]*\.?[0-9]+)\)|√([0-9]*\.?[0-9]+)")
"""A square root as a student types one: sqrt(2), √(2), √2 (of a plain number)."""


def _square_roots(text: str) -> str:
    """``text`` with each square root of a plain number written out: "1/√2" -> "1/1.414…" and
    "sqrt(512)" -> "22.627…"; a root right after a number is a product: "2√2" -> "2*1.414…"."""
    def value(match: re.Match) -> str:
        before = text[match.start() - 1] if match.start() else ""
        if before in (".", ")"):  # (not a number before it: left as it is, and so not read)
            return match.group(0)
        root = repr(math.sqrt(float(next(group for group in match.groups() if group is not None))))
        return "*" + root if before.isdigit() else root
    return _SQUARE_ROOT.sub(value, text)


def read_number(cell, limit: float = MAX_CELL_MAGNITUDE) -> float:
    """One typed cell as a float; ``ValueError`` with a short reason when it is not a usable number (also one beyond
    ±``limit``).

    Accepts ints, floats and text such as "0.5", "-2", "−1" (a typographic minus), "1/2", "3/1.4142", "1e-3",
    "0,5" (a decimal comma, when the text has one comma and no point), "25%" (0.25), square roots of plain
    numbers: "√512", "sqrt(512)", "1/√2", "3/sqrt(2)", and products: "2√2", "2*sqrt(2)", "0.5×0.2", "1/2√2"
    (one over 2√2).
    """
    if cell is None:
        raise AttentionInputError(EMPTY_REASON)
    if isinstance(cell, bool):
        raise AttentionInputError("is not a number")
    if isinstance(cell, numbers.Real):
        value = float(cell)
    else:
        typed = str(cell).strip()
        text = typed.replace("−", "-").replace("–", "-").replace(" ", "")
        if not text:
            raise AttentionInputError(EMPTY_REASON)
        if text.count(",") == 1 and "." not in text:
            text = text.replace(",", ".")
        if len(text) > 40:
            raise AttentionInputError("holds text too long to be a number")
        if "√" in text or "sqrt" in text.lower():
            text = _square_roots(text.lower())
        if text.endswith("%") and text.count("%") == 1 and len(text) > 1:  # a percentage, as Check yourself reads it
            return read_number(typed[:-1], limit) / 100
        try:
            value = float(text)
        except ValueError:
            try:
                value = float(Fraction(text))
            except (ValueError, ZeroDivisionError, OverflowError):
                value = _decimal_fraction(text, typed)
    if math.isnan(value):
        raise AttentionInputError("is NaN (not a number)")
    if abs(value) > limit:  # infinity too: a number, marked "too large" beside its cell as in the list
        raise AttentionInputError(f"{TOO_LARGE_REASON}: use numbers between −{limit:g} and {limit:g}")
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
                reason = str(err)
                kind = (EMPTY if reason == EMPTY_REASON else TOO_LARGE if reason.startswith(TOO_LARGE_REASON)
                        else DIVISION_BY_ZERO if reason.endswith(DIVISION_BY_ZERO) else INVALID)
                problems.append(CellProblem(name, i, j, f"{name}, row {row_labels[i]}, column {col_labels[j]} "
                                                        f"{reason}.", kind))
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
    bad = {(p.row, p.col): EMPTY if p.kind == EMPTY else INVALID for p in reading.problems}
    marks = tuple(
        tuple(bad.get((i, j)) or (RIGHT if abs(float(reading.values[i, j] - truth[i, j])) <= tolerance else WRONG)
              for j in range(truth.shape[1]))
        for i in range(truth.shape[0])
    )
    return AnswerCheck(marks, reading.problems, truth, tolerance, reading.values)


def resize_grid(rows, shape: tuple[int, int], fill="0") -> list[list]:
    """Keep the overlapping cells of a typed grid and fill new ones with ``fill``: (r, c) -> ``shape``."""
    rows = [list(r) for r in (rows or [])]
    n_rows, n_cols = shape
    return [[rows[i][j] if i < len(rows) and j < len(rows[i]) else fill for j in range(n_cols)]
            for i in range(n_rows)]


def format_cell(value: float, digits: int = 4) -> str:
    """A number as a person would type it, to ``digits`` significant digits: 1.0 -> "1", 0.70710678 -> "0.7071"."""
    return f"{value:.{digits}g}" if value != int(value) else str(int(value))


# ------------------------------------------------------------------------------------------ slips


@dataclass(frozen=True)
class Slip:
    """A common mistake at one stage: ``values`` is the matrix it gives (the true stage's shape, NaN where it
    gives nothing), ``hint`` says in words what went wrong and what to do instead."""

    key: str
    hint: str
    values: torch.Tensor


@dataclass(frozen=True)
class Diagnosis:
    """Why some typed cells are wrong: the ``slip`` (or None) that explains ``cells`` ((row, col) pairs) of the
    ``wrong`` cells marked wrong, and for the weights, what makes a typed row impossible (``row_notes``)."""

    slip: Slip | None
    cells: tuple[tuple[int, int], ...]
    wrong: int
    row_notes: tuple[tuple[int, str], ...] = ()  # (row, what is wrong with it), e.g. (0, "adds up to 1.5; …")


def likely_slips(trace: AttentionTrace, stage: str) -> list[Slip]:
    """The usual mistakes at ``stage`` (a HAND_STAGES name) for the trace's first head, each as the matrix it
    gives. Blocked keys follow the trace's mask, so a slip differs from the truth only by its own mistake."""
    q, k, v, scores, scaled, weights = (t[0].detach().to("cpu", torch.float64) for t in (
        trace.q, trace.k, trace.v, trace.scores, trace.scaled, trace.weights))  # (T, d_k), (S, ·), (T, S) …
    allowed = trace.mask[0].to("cpu")  # (T, S)
    d_k = q.shape[-1]
    root = math.sqrt(d_k)
    if stage == "scores":
        slips = [Slip("transposed", "These cells hold query j's score for key i in row i, column j (rows and "
                      "columns swapped). Rows are queries and columns are keys: that cell is q_i · k_j, query i's "
                      "row of Q times key j's row of K.", scores.T if scores.shape[0] == scores.shape[1]
                      else None),
                 Slip("scaled-early", f"These cells are already divided by √d_k = {root:.4g}. Step 1 is the raw "
                      "dot product q_i · k_j; the division is step 2.", scaled),
                 Slip("q-q", "These cells are q_i · q_j: the columns come from the keys, so use K's rows for them.",
                      q @ q.T),
                 Slip("k-k", "These cells are k_i · k_j: the rows come from the queries, so use Q's rows for them.",
                      k @ k.T if k.shape[0] == q.shape[0] else None)]
    elif stage == "scaled":
        slips = [Slip("not-divided", f"These cells are the raw scores: divide each by √d_k = {root:.4g}.", scores),
                 Slip("divided-by-d_k", f"These cells are divided by d_k = {d_k}; divide by its square root, "
                      f"√d_k = {root:.4g}, instead.", scores / d_k),
                 Slip("multiplied", f"These cells are multiplied by √d_k = {root:.4g}; divide by it instead.",
                      scores * root)]
    elif stage == "weights":
        slips = [Slip("unscaled", "These cells are the softmax of the raw scores: start from the scaled scores "
                      f"(step 2, each score divided by √d_k = {root:.4g}).",
                      masked_softmax(apply_mask(scores, allowed))),
                 Slip("columns", "These cells make each column add up to 1: the softmax runs along each row "
                      "(one query over all its keys), so each row adds up to 1.",
                      masked_softmax(apply_mask(scaled.T, allowed.T)).T),
                 Slip("no-exp", "These cells are the scaled scores divided by their row's sum: take e to the "
                      "power of each score first, then divide by the sum of those.", _share_of_row(scaled, allowed)),
                 Slip("not-normalised", "These cells are e to the power of the scaled score: now divide each by "
                      "the sum of its row's values, so the row adds up to 1.",
                      scaled.exp().masked_fill(~allowed, 0.0)),
                 Slip("mask-ignored", "These cells ignore the causal mask: a blocked key gets weight 0, and each "
                      "row's sum runs over the keys it may see only.", torch.softmax(scaled, dim=-1))
                 if not bool(allowed.all()) else None]
    elif stage == "context":
        slips = [Slip("columns-of-A", "These cells use column i of the weights: context row i mixes V's rows with "
                      "the weights in row i of A.", weights.T @ v if weights.shape[0] == weights.shape[1] else None),
                 Slip("used-K", "These cells mix K's rows: the context is a weighted sum of V's rows.",
                      weights @ k if k.shape[-1] == v.shape[-1] else None),
                 Slip("unscaled-weights", "These cells use the softmax of the raw scores: the weights come from the "
                      f"scaled scores (divided by √d_k = {root:.4g}).",
                      masked_softmax(apply_mask(scores, allowed)) @ v),
                 Slip("even", "These cells weigh every visible row of V the same: each row counts with its own weight "
                      "from A.", masked_softmax(apply_mask(torch.zeros_like(scores), allowed)) @ v)]
    else:
        raise AttentionInputError(f"stage must be one of {', '.join(HAND_STAGES)}, got {stage!r}.")
    truth = {"scores": scores, "scaled": scaled, "weights": weights,
             "context": trace.context[0].detach().to("cpu", torch.float64)}[stage]  # (T, S) or (T, d_v)
    slips.append(Slip("rounded", "These cells are the right answer rounded too far, to one decimal place: keep two "
                      f"or three decimals (a number within {ANSWER_TOLERANCE} of the exact one counts as right).",
                      rounded_too_far(truth)))
    if stage != "weights":  # (a weight is never negative: its rows' notes say so)
        slips.append(Slip("sign", "These cells have the right size but the wrong sign: check the minus signs (a "
                          "negative times a negative is positive).", -truth))
    return [slip for slip in slips if slip is not None and slip.values is not None]


ROUNDED_TOO_FAR_DECIMALS = 1
"""The decimals of an answer rounded too far (0.3 for 0.306): the ``rounded`` slip, and Work it by hand's check of
weights worked out right and then rounded."""


def rounded_too_far(values: torch.Tensor) -> torch.Tensor:
    """``values`` rounded to ROUNDED_TOO_FAR_DECIMALS decimals, as a student who rounded too far types them."""
    return torch.round(values, decimals=ROUNDED_TOO_FAR_DECIMALS)


def diagnose(check: AnswerCheck, trace: AttentionTrace, stage: str) -> Diagnosis | None:
    """The slip that explains the most wrong cells of ``check`` (an answer for ``stage``), or for the weights,
    rows that cannot be weights; None when every cell is right or nothing known explains a wrong one.

    A wrong cell is explained by a slip when the typed number is within the check's tolerance of the slip's value
    and that value is itself wrong (so a slip that happens to equal the truth there explains nothing). A slip is
    named only when it explains every wrong cell, or at least two and at least half of them."""
    if check.values is None:
        raise AttentionInputError("the check holds no typed values to diagnose.")
    typed, truth, tol = check.values, check.truth, check.tolerance
    wrong = [(i, j) for i, row in enumerate(check.marks) for j, mark in enumerate(row) if mark == WRONG]
    if not wrong:
        return None
    best: tuple[Slip, tuple] | None = None
    for slip in likely_slips(trace, stage):
        values = slip.values
        cells = tuple((i, j) for i, j in wrong
                      if abs(float(values[i, j] - typed[i, j])) <= tol and abs(float(values[i, j] - truth[i, j])) > tol)
        if _telling(len(cells), len(wrong)) and (best is None or len(cells) > len(best[1])):
            best = (slip, cells)
    notes = _weight_row_notes(typed, tol) if stage == "weights" else ()
    if best is None and not notes:
        return None
    slip, cells = best if best is not None else (None, ())
    return Diagnosis(slip, cells, len(wrong), notes)


def _telling(explained: int, wrong: int) -> bool:
    """Whether ``explained`` of ``wrong`` wrong cells point to a slip: all of them, or at least two and at least half
    (one cell of many can match a slip by chance: a typed 0.1 is within 0.01 of many a weight)."""
    return explained == wrong or explained >= max(2, (wrong + 1) // 2)


def _share_of_row(scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Each allowed score over its row's sum of allowed scores (NaN where that sum is 0)."""
    kept = scores.masked_fill(~allowed, 0.0)
    total = kept.sum(dim=-1, keepdim=True)
    return torch.where(total == 0, torch.full_like(kept, float("nan")), kept / total)


def _weight_row_notes(typed: torch.Tensor, tol: float) -> tuple[tuple[int, str], ...]:
    """What makes typed rows impossible as weights: a negative weight, or a whole row that does not add up to 1."""
    notes = []
    for i, row in enumerate(typed):
        if bool(torch.isnan(row).any()):
            continue
        if bool((row < -tol).any()):
            notes.append((i, "has a negative weight; e^x is never negative, so no weight is."))
        elif abs(float(row.sum()) - 1.0) > tol * len(row):
            notes.append((i, f"adds up to {float(row.sum()):.4g}; the weights of a row always add up to 1."))
    return tuple(notes)
