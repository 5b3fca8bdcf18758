"""Editable grids for the work-it-by-hand page, kept in plain session state so nothing typed is lost.

Every grid a person types (X, W_Q, W_K, W_V, one answer grid per stage and step 3's working) lives under
``GRIDS_KEY`` as rows of the cells exactly as typed. ``grid_editor`` draws one with
``st.data_editor`` on top of that store: the store is the editor's starting data, and a
changed store (reset, resize, or a test setting it) starts a fresh editor from it.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

from attention_core import (ANSWER_TOLERANCE, EXAMPLE, MAX_CELL_MAGNITUDE, AnswerCheck, AttentionTrace, Diagnosis,
                            format_cell, read_grid, resize_grid)
from attention_core.by_hand import DIVISION_BY_ZERO, EMPTY, INVALID, RIGHT, TOO_LARGE, WRONG, rounded_too_far

from .frames import format_value
from .grid_input import HAND_GRID_KEY
from .text import joined, quoted
from .url_state import HAND_LINK_DIGITS, decode_hand, encode_hand, hand_shapes, keep_in_link
from .views import PRESENTER_COLUMN_PX

GRIDS_KEY = "hand_grids"
"""Session key: grid name -> rows of typed cells (X, W_Q, W_K, W_V, answer_<stage>, WORKING_GRID)."""
SIZES_KEY = "hand_sizes"
"""Session key: {"tokens", "d_model", "d_k", "d_v", "causal"} of the by-hand example."""
CHECKED_KEY = "hand_checked"
"""Session key: the answer stages whose Check was pressed."""
SOLVED_KEY = "hand_solved"
"""Session key: the answer stages checked with every cell right."""
EVER_CHECKED_KEY = "hand_checked_ever"
"""The stages checked at least once in this session (Start here's progress). CHECKED_KEY holds the stages whose
marks are shown for the grids as they are now, and a reset or a size change clears it; this set is never cleared."""
SET_ASIDE_KEY = "hand_set_aside"
"""Session key: matrix name (X, W_Q, W_K, W_V) -> its cells at the largest size it had, the latest value of each:
lowering a size and raising it again gives back the numbers it hid (they came back as zeros)."""
_SHOWN_KEY, _VERSIONS_KEY = "hand_last_shown", "hand_editor_versions"
_DRAWN_KEY = "hand_editors_drawn"
"""Session key: the grids drawn so far in this run (``begin_run``, ``retire_undrawn_editors``)."""
HAND_PARAM = "hand"
"""The address key of the example's sizes and numbers."""

TOKENS = EXAMPLE.tokens + ("too", "much")
"""The example's words; fewer or more tokens take the first ones of these."""

DEFAULT_SIZES = {"tokens": len(EXAMPLE.tokens), "d_model": len(EXAMPLE.x[0]), "d_k": len(EXAMPLE.w_q[0]),
                 "d_v": len(EXAMPLE.w_v[0]), "causal": False}

EXAMPLE_LINK = encode_hand(DEFAULT_SIZES, {"X": EXAMPLE.x, "W_Q": EXAMPLE.w_q, "W_K": EXAMPLE.w_k, "W_V": EXAMPLE.w_v})
"""The built-in example as the address would hold it (it is left out)."""

MARK_TEXT = {RIGHT: "✓", WRONG: "✗", EMPTY: "… empty", INVALID: "⚠ not a number"}
PROBLEM_TEXT = {TOO_LARGE: "⚠ too large", DIVISION_BY_ZERO: "⚠ division by zero"}
"""The mark of a cell that cannot be used for a reason the list above the grid names: a number too large for a
cell (it is a number, so "not a number" would mislead), a fraction over 0 (the list said "a division by zero")."""
MARK_COLOURS = {RIGHT: "background-color: #d3f9d8", WRONG: "background-color: #ffe3e3",
                EMPTY: "background-color: #f1f3f5", INVALID: "background-color: #fff3bf"}


def sizes() -> dict:
    return st.session_state.setdefault(SIZES_KEY, dict(DEFAULT_SIZES))


def grids() -> dict:
    return st.session_state.setdefault(GRIDS_KEY, {})


def start_from_link() -> None:
    """A session's first visit to the page, opened with a link that holds an example (``url_state.encode_hand``):
    its sizes and numbers instead of the built-in example. An edited example was lost in its link: a lecturer who
    prepared one on a laptop got the built-in one on the hall's computer."""
    if GRIDS_KEY in st.session_state or HAND_PARAM not in st.query_params:
        return
    decoded = decode_hand(st.query_params[HAND_PARAM])
    if decoded is None:  # the link's check has dropped it and said so
        return
    linked_sizes, values = decoded
    st.session_state[SIZES_KEY] = dict(linked_sizes)
    st.session_state[GRIDS_KEY] = {name: [[format_cell(v, HAND_LINK_DIGITS) for v in row] for row in rows]
                                   for name, rows in values.items()}


def keep_in_address(s: dict, values: dict) -> None:
    """Write the example's sizes and numbers (``values``: name -> rows of numbers) to the address; the built-in
    example is left out of it."""
    keep_in_link(HAND_PARAM, encode_hand(s, values), default=EXAMPLE_LINK)


def example_grids(s: dict) -> dict[str, list[list[str]]]:
    """The built-in example as typed text, cut or padded with zeros to sizes ``s``."""
    source = {"X": EXAMPLE.x, "W_Q": EXAMPLE.w_q, "W_K": EXAMPLE.w_k, "W_V": EXAMPLE.w_v}
    shapes = hand_shapes(s)
    return {name: resize_grid([[format_cell(v) for v in row] for row in rows], shapes[name])
            for name, rows in source.items()}


def reset_to_example() -> None:
    """Back to the example: its sizes and numbers; typed answers and checks are cleared."""
    st.session_state[SIZES_KEY] = dict(DEFAULT_SIZES)
    for name, value in DEFAULT_SIZES.items():
        st.session_state[f"hand-size-{name}"] = value
    st.session_state[GRIDS_KEY] = example_grids(DEFAULT_SIZES)
    st.session_state[CHECKED_KEY] = set()
    st.session_state.pop(SET_ASIDE_KEY, None)


def overlay(under: list[list], over: list[list]) -> list[list]:
    """A grid as tall and as wide as both: ``over``'s cells where it has them, else ``under``'s, else "0"."""
    n_rows, n_cols = max(len(under), len(over)), max((len(row) for row in [*under, *over]), default=0)

    def cell(i: int, j: int):
        for rows in (over, under):
            if i < len(rows) and j < len(rows[i]):
                return rows[i][j]
        return "0"
    return [[cell(i, j) for j in range(n_cols)] for i in range(n_rows)]


def apply_size_change() -> None:
    """Copy the size widgets into the kept sizes and fit every kept grid to them. A matrix keeps its overlapping
    cells and takes back the ones a smaller size hid (else the example's, else 0); the answers keep theirs, and the
    marks of earlier checks go (they were for another example)."""
    s = sizes()
    for name in DEFAULT_SIZES:
        s[name] = st.session_state.get(f"hand-size-{name}", s[name])
    store, aside = grids(), st.session_state.setdefault(SET_ASIDE_KEY, {})
    example = example_grids(DEFAULT_SIZES)
    for name, shape in hand_shapes(s).items():
        aside[name] = overlay(aside.get(name) or example[name], store.get(name) or [])
        store[name] = resize_grid(aside[name], shape)
    for name in [n for n in store if n.startswith("answer_")]:
        store[name] = resize_grid(store[name], answer_shape(name.removeprefix("answer_"), s), fill="")
    st.session_state[CHECKED_KEY] = set()


def answer_shape(stage: str, s: dict) -> tuple[int, int]:
    return (s["tokens"], s["d_v"]) if stage == "context" else (s["tokens"], s["tokens"])


def keep_sizes_widgets() -> None:
    """Give the size widgets their kept values (they are cleared when the person visits another page)."""
    for name, value in sizes().items():
        st.session_state.setdefault(f"hand-size-{name}", value)


def begin_run() -> None:
    """At the top of the page: no grid drawn yet in this run."""
    st.session_state[_DRAWN_KEY] = set()


def retire_undrawn_editors() -> None:
    """Before the page stops early: the grids it did not draw get a fresh editor, started from what they hold, when
    they are drawn again. (A stopped run keeps an undrawn editor's edits on the server while the browser drops the
    editor: after an X cell was fixed, the answer grids came back empty, yet Check still marked what had been
    typed in them.)"""
    drawn = st.session_state.get(_DRAWN_KEY, set())
    shown = st.session_state.get(_SHOWN_KEY, {})
    for name in [name for name in shown if name not in drawn]:
        del shown[name]


DARK_ROW_NAMES = {"_index": st.column_config.Column(pinned=False)}
"""A grid's ``column_config`` entry that draws its row names (the index) in the text's colour: Streamlit draws a
pinned column, as the index is by default, in a faded grey (about 2.6 : 1 on white), which a projector washes out.
The grids here are a few columns wide, so the names never need to stay in view while the grid scrolls sideways."""


def reader_name(what: str, shape: tuple[int, int]) -> str:
    """A grid's accessible name: what it holds and its size ("Your answer: raw scores QKᵀ, 3 rows × 3 columns")."""
    rows, columns = shape
    return f"{what}, {rows} row{'s' if rows != 1 else ''} × {columns} column{'s' if columns != 1 else ''}"


def grid_editor(name: str, shape: tuple[int, int], row_labels: list[str], col_labels: list[str], *,
                default=None, height: int | str = "content", column_px: int | str = "small",
                wider: dict[str, tuple[int, str]] | None = None, what: str | None = None) -> list[list]:
    """Draw an editable ``shape`` grid of text cells and return its rows as typed ("" for an empty cell). An empty
    cell shows empty (Streamlit writes a grey "None" in it, a word the student never typed).

    ``default`` (rows) fills a grid the session has not typed yet (else empty cells); ``column_px`` is a column's
    width (Streamlit's "small" is 75 px). ``wider`` gives some columns
    (by label) a width in pixels and a tooltip, where the label needs more room than a number. ``what`` (plain text,
    the page's own words) names the grid for a screen reader, with its size (``reader_name``); else its ``name``.
    """
    st.session_state.setdefault(_DRAWN_KEY, set()).add(name)
    store = grids()
    if name not in store:
        store[name] = resize_grid(default, shape, fill="")
    elif len(store[name]) != shape[0] or any(len(row) != shape[1] for row in store[name]):
        store[name] = resize_grid(store[name], shape, fill="")
    versions = st.session_state.setdefault(_VERSIONS_KEY, {})
    shown = st.session_state.setdefault(_SHOWN_KEY, {})
    widget_key = f"{HAND_GRID_KEY}{name}-{versions.get(name, 0)}"
    if widget_key not in st.session_state or shown.get(name) != store[name]:
        versions[name] = versions.get(name, 0) + 1  # a fresh editor, started from the kept grid
        widget_key = f"{HAND_GRID_KEY}{name}-{versions[name]}"
        st.session_state[f"hand-base-{name}"] = [list(row) for row in store[name]]
    base = pd.DataFrame(st.session_state[f"hand-base-{name}"], index=row_labels, columns=col_labels, dtype=object)
    column_config = {col: st.column_config.TextColumn(col, width=column_px) for col in col_labels} | DARK_ROW_NAMES
    for col, (width, tooltip) in (wider or {}).items():
        column_config[col] = st.column_config.TextColumn(col, width=width, help=tooltip)
    edited = st.data_editor(base, key=widget_key, column_config=column_config, num_rows="fixed", height=height,
                            width="content", placeholder="", alt=reader_name(what or name, shape))
    rows = [[_cell(v) for v in row] for row in edited.astype(object).values.tolist()]
    store[name] = rows
    shown[name] = [list(row) for row in rows]  # a copy: a change to the kept grid shows up as a difference
    return rows


def _cell(value):
    """An editor cell as typed: "" for empty (the editor gives None or NaN for a cleared cell), else as it came."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return value


PLAIN_NUMBER = re.compile(r"\s*[-+−]?(\d+[.,]?\d*|[.,]\d+)\s*")
"""A cell typed as a plain decimal number: its mark shows it as it is. Any other form (2√2, 1/3, 25%) also shows the
number it was read as."""


def read_as(typed, check: AnswerCheck, i: int, j: int) -> str:
    """" = 2.828" after a cell typed as 2√2 (the number the check read), "" after a plain number such as 2.83."""
    if check.values is None or isinstance(typed, numbers.Real) or PLAIN_NUMBER.fullmatch(str(typed)):
        return ""
    return f" = {format_value(float(check.values[i, j]))}"


def marks_table(check: AnswerCheck, typed: list[list], row_labels: list[str], col_labels: list[str], *,
                show_answer: bool):
    """A styled table: ✓ / ✗ per cell with the typed number, and the right value when asked for."""
    named = {(p.row, p.col): PROBLEM_TEXT[p.kind] for p in check.problems if p.kind in PROBLEM_TEXT}
    cells = []
    for i, marks in enumerate(check.marks):
        row = []
        for j, mark in enumerate(marks):
            text = named.get((i, j), MARK_TEXT[mark])
            if mark in (RIGHT, WRONG):
                text = f"{text} {typed[i][j]}{read_as(typed[i][j], check, i, j)}".strip()
            if show_answer and mark != RIGHT:
                text += f" → {format_value(float(check.truth[i, j]))}"
            row.append(text)
        cells.append(row)
    table = pd.DataFrame(cells, index=row_labels, columns=col_labels)
    colours = pd.DataFrame([[MARK_COLOURS[m] for m in marks] for marks in check.marks], index=row_labels,
                           columns=col_labels)
    return table.style.apply(lambda _: colours, axis=None)


ONE_CELL = {"These cells are ": "This cell is ", "These cells hold ": "This cell holds ",
            "These cells make ": "This cell makes ", "These cells ignore ": "This cell ignores ",
            "These cells use ": "This cell uses ", "These cells mix ": "This cell mixes ",
            "These cells weigh ": "This cell weighs ", "These cells have ": "This cell has "}
"""A slip's hint speaks of "these cells"; said of a single cell, its start becomes singular."""


def one_cell(hint: str) -> str:
    """``hint`` said of one cell: "These cells are …" -> "This cell is …"."""
    for many, one in ONE_CELL.items():
        if hint.startswith(many):
            return one + hint[len(many):]
    return hint


def diagnosis_text(diagnosis: Diagnosis, row_labels: list[str], col_labels: list[str]) -> str:
    """A diagnosis in words (markdown; the labels are the page's own token and feature names)."""
    parts = []
    if diagnosis.slip is not None:
        explained, wrong = len(diagnosis.cells), diagnosis.wrong
        if explained == wrong:
            which = "Both wrong cells look" if wrong == 2 else f"All {wrong} wrong cells look"
        else:
            named = ", ".join(f"{row_labels[i]} → {col_labels[j]}" for i, j in diagnosis.cells[:4])
            which = f"{explained} of your {wrong} wrong cells ({named}{', …' if explained > 4 else ''}) look"
        hint = diagnosis.slip.hint if explained > 1 else one_cell(diagnosis.slip.hint)
        if wrong == 1:  # one cell can match a slip by chance (a 5 typed for 4 is also q₃ · q₃ here): a typo, maybe
            parts.append(f"**A slip, or a typo?** Your wrong cell matches a common mistake. {hint}")
        else:
            parts.append(f"**A likely slip.** {which} like a common mistake. {hint}")
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
        return StartingPoint(stage, "**Start from the weights A** (the right values of step 3) **and V** (from “Q, K "
                             "and V from your numbers” above):",
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


# ------------------------------------------------------------------------------- step 3's working

WORKING_GRID = "working_weights"
"""The grid of step 3's working: e^x of each scaled score, one column per key, then each row's sum."""
SUM_COLUMN = "row sum"
SUM_COLUMN_PX = 95
"""The width of the working's sum column: its label needs more than a number's 75 px."""
WORKING_RELATIVE_TOLERANCE = 0.001
"""A number of the working is right within ±ANSWER_TOLERANCE, or within 0.1 % of the true value when that is
wider (above 10): e^x grows fast, and a score rounded to 3 decimals, as the page shows it, moves e^7 ≈ 1097 by up
to 0.55."""
NEAR_MISS = 0.02
"""A wrong number of the working this close to the right one (relatively) is called a rounding, not a slip."""
SMALLEST_WORKED_EXP = 0.1
"""A row whose largest e^x is below this is too small to check to ±ANSWER_TOLERANCE (all zeros would pass, and
0 / 0 gives no weights): it is worked with its largest score subtracted first, as a row too large to type is."""


@dataclass(frozen=True)
class SoftmaxWorking:
    """The right working of step 3 for the trace's first head, (T, S + 1) each: ``plain`` holds e^x of each scaled
    score (0 where the mask blocks the key; +∞ where it overflows) and the row's sum in the last column; ``shifted``
    the same for each score less its row's ``largest`` allowed score (T,), which gives the same weights with a
    largest e^x of e^0 = 1. ``forced`` (T,) marks the rows whose plain working cannot be typed or checked: a sum
    above MAX_CELL_MAGNITUDE (``too_large``) or a largest e^x below SMALLEST_WORKED_EXP. ``allowed`` (T, S) is the
    mask; ``raw_exps`` (e to each raw score, not divided by √d_k) and ``scaled`` (T, S) are what two slips type."""

    plain: torch.Tensor
    shifted: torch.Tensor
    largest: torch.Tensor
    allowed: torch.Tensor
    too_large: tuple[bool, ...]
    forced: tuple[bool, ...]
    raw_exps: torch.Tensor
    scaled: torch.Tensor

    @property
    def shown(self) -> torch.Tensor:
        """The working a student is asked for: plain, or shifted in a forced row."""
        return torch.stack([s if f else p for p, s, f in zip(self.plain, self.shifted, self.forced)])


def softmax_working(trace: AttentionTrace) -> SoftmaxWorking:
    """Step 3's right working (e^x and row sums) for the trace's first head."""
    scaled = trace.scaled[0].detach().to("cpu", torch.float64)  # (T, S)
    allowed = trace.mask[0].to("cpu")
    largest = scaled.masked_fill(~allowed, -math.inf).amax(dim=-1)  # (T,); −∞ for a fully blocked row
    largest = torch.where(torch.isinf(largest), torch.zeros_like(largest), largest)

    def with_sums(exps: torch.Tensor) -> torch.Tensor:
        exps = exps.masked_fill(~allowed, 0.0)
        return torch.cat([exps, exps.sum(dim=-1, keepdim=True)], dim=-1)

    plain, shifted = with_sums(scaled.exp()), with_sums((scaled - largest[:, None]).exp())
    too_large = tuple(bool(total > MAX_CELL_MAGNITUDE) for total in plain[:, -1])
    too_small = tuple(bool(row.any()) and float(largest_exp) < SMALLEST_WORKED_EXP
                      for row, largest_exp in zip(allowed, plain[:, :-1].amax(dim=-1)))
    raw = trace.scores[0].detach().to("cpu", torch.float64).exp()
    return SoftmaxWorking(plain, shifted, largest, allowed, too_large,
                          tuple(big or small for big, small in zip(too_large, too_small)), raw, scaled)


def listed(labels) -> str:
    """Labels in running markdown, quoted and escaped: "“1·I”", "“1·I” and “3·tea”",
    "“1·I”, “2·like” and “3·tea”"."""
    return joined(quoted(label) for label in labels)


def shifted_exp(largest: float) -> str:
    """e^(x − m) as the page writes it for a row's largest score m ("e^(x − 2.828)", "e^(x + 4.000)")."""
    return f"e^(x {'−' if largest >= 0 else '+'} {format_value(abs(largest))})"


def forced_rows_text(working: SoftmaxWorking, queries: list[str]) -> list[str]:
    """Markdown telling the student which rows to work with their largest score subtracted first, and why; one
    paragraph for rows too large to type, one for rows too small to check. Empty when every row is plain."""
    texts = []
    for large, why in ((True, f"add up to more than {MAX_CELL_MAGNITUDE:g}, the largest number a cell takes"),
                       (False, f"are all below {SMALLEST_WORKED_EXP:g}, too small to check to ±{ANSWER_TOLERANCE:g}")):
        rows = [i for i, forced in enumerate(working.forced) if forced and working.too_large[i] == large]
        if not rows:
            continue
        how = ", ".join(f"{shifted_exp(float(working.largest[i]))} in row {quoted(queries[i])}" for i in rows)
        title = "too large to type" if large else "too small to check"
        which = f"row{'s' if len(rows) > 1 else ''} {listed(queries[i] for i in rows)}"
        texts.append(f"**e^x {title}.** The e^x of {which} {why}. In such a row, "
                     f"subtract the row's largest score from each score first and type {how}: the largest e^x "
                     "becomes e^0 = 1, and the weights come out the same (e to the largest score cancels in the "
                     "division).")
    return texts


@dataclass(frozen=True)
class WorkingCheck:
    """Step 3's working as typed, marked cell by cell in ``answer`` (its ``truth`` is, per row, the plain or the
    shifted working: the one the student used, or must use). ``shifted`` (T,) says which; ``notes`` (markdown) say
    row by row what is right and what went wrong; ``typed`` counts the cells typed (an empty cell is not checked)."""

    answer: AnswerCheck
    shifted: tuple[bool, ...]
    notes: tuple[str, ...]
    typed: int

    @property
    def right(self) -> int:
        return self.answer.count(RIGHT)


def close_to(typed: float, truth: float) -> bool:
    """Whether a typed number of the working is right: within ±ANSWER_TOLERANCE, or WORKING_RELATIVE_TOLERANCE of a
    large true value. Never for a true value that overflowed (+∞)."""
    if not math.isfinite(truth) or not math.isfinite(typed):
        return False
    return abs(typed - truth) <= max(ANSWER_TOLERANCE, WORKING_RELATIVE_TOLERANCE * abs(truth))


SHIFT_EVIDENCE = 2
"""How many of a row's typed cells must match the working with its largest score subtracted (and more of them than
match the plain working) before the page says the student worked it that way."""


def check_working(rows, working: SoftmaxWorking, weights: AnswerCheck, queries: list[str],
                  keys: list[str]) -> WorkingCheck | None:
    """Mark step 3's typed working (rows of (S + 1) cells: e^x per key, then the row's sum) against the right one,
    and say per row what went wrong, using the weights' own ``weights`` check (which it never changes). None when
    nothing is typed. A blocked key's e^x is 0; a row counts as worked with its largest score subtracted when it
    must be, or when at least SHIFT_EVIDENCE typed cells match that, and more than match the plain working."""
    T, S = working.allowed.shape
    reading = read_grid(rows, (T, S + 1), "Your working", queries, [*keys, SUM_COLUMN])
    empty = {(p.row, p.col) for p in reading.problems if p.kind == EMPTY}
    if len(empty) == T * (S + 1):
        return None
    typed = reading.values

    def rights(i: int, truth: torch.Tensor) -> int:
        return sum(close_to(float(typed[i, j]), float(truth[j])) for j in range(S + 1))

    def worked_shifted(i: int) -> bool:  # one matching number is no evidence: 0.5 typed as a weight matched e^(−0.707)
        shifted_rights = rights(i, working.shifted[i])
        return shifted_rights >= SHIFT_EVIDENCE and shifted_rights > rights(i, working.plain[i])

    shifted = tuple(working.forced[i] or worked_shifted(i) for i in range(T))
    truth = torch.stack([working.shifted[i] if shifted[i] else working.plain[i] for i in range(T)])
    bad = {(p.row, p.col): EMPTY if (p.row, p.col) in empty else INVALID for p in reading.problems}
    marks = tuple(tuple(bad.get((i, j)) or (RIGHT if close_to(float(typed[i, j]), float(truth[i, j])) else WRONG)
                        for j in range(S + 1)) for i in range(T))
    problems = tuple(p for p in reading.problems if (p.row, p.col) not in empty)
    answer = AnswerCheck(marks, problems, truth, ANSWER_TOLERANCE, typed)
    notes = tuple(note for i in range(T)
                  if (note := _row_note(i, answer, working, shifted[i], weights, queries, keys)))
    return WorkingCheck(answer, shifted, notes, T * (S + 1) - len(empty))


def _row_note(i: int, answer: AnswerCheck, working: SoftmaxWorking, shifted: bool, weights: AnswerCheck,
              queries: list[str], keys: list[str]) -> str:
    """What a student's working of row ``i`` says about their weights (``weights``: the weights' own check), in
    words ("" when there is nothing to say)."""
    marks, typed, allowed = answer.marks[i], answer.values[i], working.allowed[i]
    weight_marks = weights.marks[i]
    S = len(allowed)
    seen = [j for j in range(S) if allowed[j]]
    wrong_seen = [j for j in seen if marks[j] == WRONG]
    wrong_blocked = [j for j in range(S) if not allowed[j] and marks[j] == WRONG]
    exps_right = all(marks[j] == RIGHT for j in seen) and not wrong_blocked
    parts = []
    if working.forced[i] and (wrong_seen or marks[S] == WRONG or INVALID in marks):
        size = "too large to type" if working.too_large[i] else "too small to check"
        parts.append(f"its e^x are {size}, so type {shifted_exp(float(working.largest[i]))} instead (see the note "
                     "under your working)")
    if shifted and not working.forced[i]:
        parts.append(f"you subtracted the row's largest score first ({shifted_exp(float(working.largest[i]))}): "
                     "fine, the weights come out the same")
    if wrong_seen:
        near = all(abs(float(typed[j]) - float(answer.truth[i, j])) <= NEAR_MISS * abs(float(answer.truth[i, j]))
                   for j in wrong_seen)  # (16.9 typed for e^2.828 = 16.92 was only "off")
        parts.append(f"your e^x for {listed(keys[j] for j in wrong_seen)} {'is' if len(wrong_seen) == 1 else 'are'} off"
                     + (f", if only a little: keep more digits (a number of the working is right within "
                        f"{WORKING_RELATIVE_TOLERANCE:.1%} of it, or ±{ANSWER_TOLERANCE:g})" if near
                        else "" if shifted else _exp_slip(wrong_seen, typed, working, i)))
    if wrong_blocked:
        one = len(wrong_blocked) == 1
        parts.append(f"{listed(keys[j] for j in wrong_blocked)} {'is' if one else 'are'} blocked by the causal mask, "
                     f"so {'its' if one else 'their'} e^x is e^(−∞) = 0")
    if marks[S] == WRONG:
        typed_sum = float(typed[S])
        all_typed = all(marks[j] in (RIGHT, WRONG) for j in seen)
        own_sum = float(typed[:S].nan_to_num(0.0).sum())  # an empty blocked cell counts as its 0
        every_key_sum = float((working.scaled[i] - (working.largest[i] if shifted else 0.0)).exp().sum())
        if not bool(allowed.all()) and close_to(typed_sum, every_key_sum):
            parts.append(("your e^x are right, but " if exps_right else "")
                         + "your row sum adds the e^x of blocked keys too: add only those of the keys this token "
                         "may see")
        elif exps_right:
            parts.append("your e^x are right, but your row sum is off (add them up again)")
        elif all_typed and close_to(typed_sum, own_sum):
            parts.append("your row sum adds up your e^x, so it is off only because they are")
        else:
            parts.append("your row sum is off" + (" (it is not the sum of your e^x either)" if all_typed else ""))
    elif marks[S] == RIGHT and exps_right and WRONG in weight_marks:
        wrong_weights = [j for j in range(S) if weight_marks[j] == WRONG]
        if weights.values is not None and all(close_to(float(weights.values[i, j]), float(rounded_too_far(
                weights.truth[i, j]))) for j in wrong_weights):
            # (0.3, 0.1, 0.6 typed for 0.306, 0.074, 0.620: the student divided, and was told to divide)
            parts.append("your e^x and row sum are right, and so are your weights, but rounded too far: keep two or "
                         "three decimals")
        else:
            # (not "so the slip is in the division": weights worked from other numbers, e.g. the raw scores' softmax,
            # got this beside the main hint naming that slip, and the two seemed to disagree)
            parts.append("your e^x and row sum are right, but these weights are not your e^x ÷ your row sum: divide "
                         "each e^x by it")
    if not parts:
        return ""
    return f"Row {quoted(queries[i])}: " + "; ".join(parts) + "."


def _exp_slip(cells: list[int], typed: torch.Tensor, working: SoftmaxWorking, i: int) -> str:
    """Why wrong e^x of row ``i`` (columns ``cells``) are wrong, when every one matches the same slip."""
    for slip, words in ((working.raw_exps[i], "e to the raw score: start from the scaled score of step 2"),
                        (working.scaled[i], "the scaled score itself: take e to its power")):
        if all(close_to(float(typed[j]), float(slip[j])) and not close_to(float(slip[j]), float(working.plain[i, j]))
               for j in cells):
            return f" ({'it is' if len(cells) == 1 else 'they are'} {words})"
    return ""


def working_table(working: SoftmaxWorking, queries: list[str], keys: list[str]) -> pd.DataFrame:
    """The right working as text: e^x per key ("0 (blocked)" where the mask blocks it), then the row's sum; a forced
    row is shifted (see ``forced_rows_text``)."""
    shown, allowed = working.shown, working.allowed
    cells = [[format_value(float(shown[i, j])) if j == len(keys) or allowed[i, j] else "0 (blocked)"
              for j in range(len(keys) + 1)] for i in range(len(queries))]
    return pd.DataFrame(cells, index=queries, columns=[*keys, SUM_COLUMN])


# ------------------------------------------------------------------------------- side by side in a tab

PAGE_MAIN_PX = 820
"""The main column's width beside the sidebar on a 1280-px-wide window (``views.PRESENTER_COLUMN_PX`` on a slide)."""
PAGE_FRAME_PX = 120
"""What a by-hand chart draws beside its cells on the page: the token labels, the axis title and the colour bar."""
GRID_INDEX_PX, GRID_COLUMN_PX = 60, 75
"""An editable grid's token column ("3·tea") and one of its text columns (``width="small"``), on the page."""
MATRIX_COLUMN_PX = 64
"""A column of the grids of X and the W's, whose heads are short ("x1", "q2"): X and three 2-column W's fit in one
row of the main column at 1280 px (at ``GRID_COLUMN_PX`` each W showed its second column cut)."""
PRESENTER_GRID_ZOOM = 1.4
"""How much presenter mode enlarges a grid (``controls.PRESENTER_STYLE``)."""
COLUMN_GAP_PX = 32
"""The gap between two of ``st.columns(gap="medium")``."""


PRESENTER_LEGEND_PX = 70
"""What a presenter-mode chart's colour bar takes of ``PRESENTER_FRAME_PX``: its title, numbers and gap."""


def chart_px(columns: int, presenter: bool, cell_size: int, *, legend: bool = True) -> int:
    """The width of a by-hand chart of ``columns`` cells of ``cell_size``, its labels and (``legend``) its colour bar
    included."""
    frame = PRESENTER_FRAME_PX - (0 if legend else PRESENTER_LEGEND_PX) if presenter else PAGE_FRAME_PX
    return columns * cell_size + frame


def sizes_beside(columns: int, other_px: float, presenter: bool, sizes: dict) -> dict:
    """``heatmap`` options of a chart of ``columns`` cells that goes beside a part ``other_px`` wide (step 3's
    scaled scores beside the working grid): ``sizes`` when both fit in one row; on a slide where they do not, the
    chart leaves out its colour bar (its numbers are printed) and its cells shrink until they fit, down to the
    page's own cell size (five tokens: 64-px cells, 17-px numbers, beside the working; they went under it)."""
    if not presenter or fit_in_a_row([chart_px(columns, presenter, sizes["cell_size"]), other_px], presenter):
        return sizes
    room = PRESENTER_COLUMN_PX - COLUMN_GAP_PX - other_px - chart_px(0, presenter, 0, legend=False)
    cell = min(int(room // max(columns, 1)), sizes["cell_size"])
    if cell < PAGE_CHART["cell_size"]:
        return sizes
    return {**sizes, "cell_size": cell, "legend": False}


def grid_px(columns: int, presenter: bool, extra_px: int = 0, column_px: int = GRID_COLUMN_PX) -> float:
    """The width of an editable grid of ``columns`` text columns of ``column_px`` (``extra_px`` wider in all) and
    its token column."""
    return (GRID_INDEX_PX + columns * column_px + extra_px) * (PRESENTER_GRID_ZOOM if presenter else 1)


GAP_PX = {"small": 16, "medium": COLUMN_GAP_PX}
"""The gaps between ``st.columns`` by their ``gap`` name."""


def wrapping_columns(key: str, widths: list[float], *, shares: list[float] | None = None, gap: str = "medium",
                     pairs: bool = False) -> list:
    """``st.columns`` for parts of these widths (``shares`` of the row, default the widths) in a container ``key``,
    laid out by the width the main column really has: side by side while they fit, two by two (``pairs``) and then
    one under another when the column is narrower than they need. An editable grid squeezed into a narrower column
    hides its last columns behind a scroll bar that does not show (a 1024-px laptop's main column beside the sidebar
    showed one of W_Q's two columns, and step 3's working without its row sums)."""
    gap_px = GAP_PX[gap]
    need = sum(widths) + gap_px * (len(widths) - 1)
    need_pair = max(widths[i] + widths[i + 1] for i in range(0, len(widths) - 1, 2)) + gap_px if pairs else need
    inside = f".st-key-{key} [data-testid='stHorizontalBlock']"
    two = (f"@container (max-width: {need - 1:.0f}px) {{{inside} {{flex-wrap: wrap; row-gap: 1rem;}} "
           f"{inside} > [data-testid='stColumn'] {{flex: 1 1 40% !important; min-width: 40% !important;}}}}"
           if pairs and len(widths) > 2 else "")
    one = (f"@container (max-width: {need_pair - 1:.0f}px) {{{inside} {{flex-wrap: wrap; row-gap: 1rem;}} "
           f"{inside} > [data-testid='stColumn'] {{flex: 1 1 100% !important; min-width: 100% !important;}}}}")
    box = st.container(key=key)
    box.html(f"<style>.st-key-{key} {{container-type: inline-size;}} {two} {one}</style>")
    return box.columns(shares or widths, gap=gap)


def fit_in_a_row(widths: list[float], presenter: bool) -> bool:
    """Whether parts of these widths fit side by side in the main column of a 1280-px-wide window."""
    return row_shares(widths, presenter) is not None


def row_shares(widths: list[float], presenter: bool) -> list[float] | None:
    """How to share one row of the main column at 1280 px between parts of these widths: equally when each fits
    its equal share (a chart keeps room for a title longer than its cells), else in proportion to the widths; None
    when they do not fit side by side."""
    room = (PRESENTER_COLUMN_PX if presenter else PAGE_MAIN_PX) - COLUMN_GAP_PX * (len(widths) - 1)
    if sum(widths) > room:
        return None
    return [1.0] * len(widths) if max(widths) <= room / len(widths) else list(widths)
