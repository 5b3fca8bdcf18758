"""Tidy pandas DataFrames built from attention tensors, ready for the chart builders.

Every frame keeps the numeric ``value`` column (NaN where the tensor held a
non-finite number such as the ``-inf`` of a masked score) and a ``label`` text
column that always has something to show: the value to 3 decimals, or "−∞".
Positions (``row_index``, ``col_index``, ``index``, ``head_index``) are 0-based,
as in the tensor; display labels are 1-based ("1·the").

Labels: a plain list of strings is taken as *tokens* and turned into unique,
ordered display labels with :func:`token_labels`. Lists returned by
:func:`token_labels` or :func:`feature_labels` are :class:`AxisLabels` and are
used as they are. ``None`` means feature labels "d0", "d1", ...
"""

from __future__ import annotations

from collections.abc import Sequence

import re

import numpy as np
import pandas as pd

MINUS = "−"  # U+2212: a true minus sign, as wide as a plus
MINUS_INF = f"{MINUS}∞"
BLOCKED_MARK = "×"
PLUS_INF = "+∞"
NOT_A_NUMBER = "NaN"
ALLOWED = "may attend"
BLOCKED = "blocked"


class AxisLabels(list):
    """Display labels that are final: the frame builders use them unchanged.

    Slices and sums of AxisLabels stay AxisLabels.
    """

    def __getitem__(self, item):
        result = super().__getitem__(item)
        return AxisLabels(result) if isinstance(item, slice) else result

    def __add__(self, other):
        return AxisLabels(list(self) + list(other))


_RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
FIRST_STRONG_ISOLATE, POP_DIRECTIONAL_ISOLATE = "\u2068", "\u2069"


MAX_LABEL_CHARS = 24
"""The longest token a label shows whole; a longer one shows its first MAX_LABEL_CHARS − 1 characters and "…" (a
340-letter word filled three lines of a caption and half of a chart with its axis label)."""


def token_labels(tokens: Sequence[str]) -> AxisLabels:
    """Unique, ordered labels for tokens: ["the", "cat", "the"] -> ["1·the", "2·cat", "3·the"].

    A right-to-left token (Arabic, Hebrew) is wrapped in Unicode isolates, so its letters keep their order
    and the position number stays in front of it. A token longer than MAX_LABEL_CHARS is cut (the position keeps
    the labels apart)."""
    return AxisLabels(f"{position}·{_isolated(_short(str(token)))}" for position, token in enumerate(tokens, start=1))


def _short(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[:MAX_LABEL_CHARS - 1] + "…"


def _isolated(token: str) -> str:
    return f"{FIRST_STRONG_ISOLATE}{token}{POP_DIRECTIONAL_ISOLATE}" if _RIGHT_TO_LEFT.search(token) else token


def feature_labels(n: int, prefix: str = "d") -> AxisLabels:
    """Labels for a feature axis, counted from 1 like tokens and heads: feature_labels(3) -> ["d1", "d2", "d3"]."""
    return AxisLabels(f"{prefix}{i}" for i in range(1, n + 1))


def head_column_labels(num_heads: int, width: int, prefix: str = "c") -> AxisLabels:
    """The columns of a matrix cut into heads of ``width`` columns (Concat(head_1, …, head_h), or W_Q's columns),
    counted from 1: column j of head i is "hi·<prefix>j", e.g. "h2·c3"."""
    return AxisLabels(f"h{i // width + 1}·{prefix}{i % width + 1}" for i in range(num_heads * width))


def row_scaled(values: np.ndarray) -> np.ndarray:
    """Each row of a (T, S) matrix (or of every matrix of an (h, T, S) stack) mapped onto 0..1 by its own
    smallest and largest finite entry (a row of equal entries maps to 1; non-finite entries stay NaN)."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.where(np.isfinite(values), values, np.nan)
    with np.errstate(all="ignore"):
        empty = np.isnan(finite).all(axis=-1, keepdims=True)
        low = np.nanmin(np.where(empty, 0.0, finite), axis=-1, keepdims=True)
        high = np.nanmax(np.where(empty, 0.0, finite), axis=-1, keepdims=True)
        span = high - low
        return np.where(span > 0, (finite - low) / np.where(span > 0, span, 1.0),
                        np.where(np.isnan(finite), np.nan, 1.0))


def _display_labels(labels: Sequence[str] | None, n: int, what: str) -> list[str]:
    if labels is None:
        return list(feature_labels(n))
    if not isinstance(labels, AxisLabels):
        labels = token_labels([str(label) for label in labels])
    if len(labels) != n:
        raise ValueError(f"{what}: got {len(labels)} labels for {n} positions")
    return list(labels)


def to_numpy(values) -> np.ndarray:
    """A tensor (any device, any float dtype, with or without grad) or array-like as numpy."""
    if hasattr(values, "detach"):
        values = values.detach().cpu()
        if values.is_floating_point():
            values = values.double()
        return values.numpy()
    return np.asarray(values)


def format_value(value: float) -> str:
    """The text shown for one number: 3 decimals with a true minus sign (as the worked tables write it), "−∞",
    "+∞" or "NaN"."""
    if np.isnan(value):
        return NOT_A_NUMBER
    if np.isinf(value):
        return MINUS_INF if value < 0 else PLUS_INF
    text = f"{value:.3f}"
    return "0.000" if text == "-0.000" else text.replace("-", MINUS)


def format_values(numbers: np.ndarray) -> np.ndarray:
    """``format_value`` of every number of a 1-D array, at array speed (object array of str)."""
    finite = np.where(np.isfinite(numbers), numbers, 0.0).tolist()
    labels = np.array(list(map("{:.3f}".format, finite)), dtype=object)  # twice as fast as Series.map
    labels[labels == "-0.000"] = "0.000"
    labels = np.char.replace(labels.astype(str), "-", MINUS).astype(object)
    labels[np.isnan(numbers)] = NOT_A_NUMBER
    labels[np.isposinf(numbers)] = PLUS_INF
    labels[np.isneginf(numbers)] = MINUS_INF
    return labels


def _value_columns(flat: np.ndarray) -> dict:
    numbers = flat.astype(np.float64)
    finite = np.isfinite(numbers)
    return {
        "value": np.where(finite, numbers, np.nan),
        "label": format_values(numbers),
        "masked": np.isneginf(numbers),
    }


def _matrix_columns(array, row_labels, col_labels, row_name, col_name) -> dict:
    """The columns of every cell of a (T, S) matrix, or of each matrix in turn of an (h, T, S) stack."""
    *_, n_rows, n_cols = array.shape
    stacked = array.size // max(n_rows * n_cols, 1)
    rows = _display_labels(row_labels, n_rows, row_name)
    cols = _display_labels(col_labels, n_cols, col_name)
    row_index = np.tile(np.repeat(np.arange(n_rows), n_cols), stacked)
    col_index = np.tile(np.arange(n_cols), n_rows * stacked)
    return {
        row_name: np.asarray(rows, dtype=object)[row_index],
        col_name: np.asarray(cols, dtype=object)[col_index],
        **_value_columns(array.reshape(-1)),
        "row_index": row_index,
        "col_index": col_index,
    }


def matrix_frame(values, row_labels, col_labels, *, row_name="query", col_name="key", blocked=None) -> pd.DataFrame:
    """One row per cell of a (T, S) matrix, row-major.

    Columns: ``row_name``, ``col_name`` (display labels), ``value`` (float, NaN if
    not finite), ``label`` (text), ``masked`` (True where the value was -inf or ``blocked``),
    ``row_index``, ``col_index`` (0-based), ``row_scaled`` (each row on 0..1, see :func:`row_scaled`).
    ``blocked`` (bool (T, S), True = blocked by the mask) marks cells whose value is 0 because of the
    mask: they are drawn grey with "×" like the −∞ of the masked scores.
    """
    array = to_numpy(values)
    if array.ndim != 2:
        raise ValueError(f"expected a 2-D matrix (T, S), got shape {tuple(array.shape)}")
    frame = pd.DataFrame(_matrix_columns(array, row_labels, col_labels, row_name, col_name))
    frame["row_scaled"] = row_scaled(_open_cells(array, blocked)).reshape(-1) if array.size else np.nan
    _mark_blocked(frame, blocked)
    return frame


def _open_cells(array: np.ndarray, blocked) -> np.ndarray:
    """``array`` with the cells the mask blocks set to NaN, so a row's colour range spans only the keys it
    may attend to (a blocked weight is 0 because of the mask, not because the key matched badly)."""
    if blocked is None:
        return array
    return np.where(to_numpy(blocked).astype(bool).reshape(array.shape), np.nan, array)


def _mark_blocked(frame: pd.DataFrame, blocked) -> None:
    """Cells the mask blocks (``blocked`` True, any shape of the frame's length) drawn grey with "×"."""
    if blocked is None:
        return
    cut = to_numpy(blocked).astype(bool).reshape(-1)
    frame["masked"] = frame["masked"].to_numpy() | cut
    frame.loc[cut & np.isfinite(frame["value"].to_numpy()), "label"] = BLOCKED_MARK


def heads_frame(
    values, row_labels, col_labels, *, row_name="query", col_name="key", head_name="head", blocked=None,
    head_labels: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per cell of a (h, T, S) tensor: :func:`matrix_frame` columns plus
    ``head_name`` ("head 1", "head 2", ... or ``head_labels``) and ``head_index`` (0-based), head-major.
    ``blocked`` (bool (h, T, S)) marks masked cells as in :func:`matrix_frame`.
    """
    array = to_numpy(values)
    if array.ndim != 3:
        raise ValueError(f"expected a 3-D tensor (heads, T, S), got shape {tuple(array.shape)}")
    h, n_rows, n_cols = array.shape
    names = [f"head {i + 1}" for i in range(h)] if head_labels is None else [str(n) for n in head_labels]
    if len(names) != h:
        raise ValueError(f"{head_name}: got {len(names)} labels for {h} heads")
    head_index = np.repeat(np.arange(h), n_rows * n_cols)
    frame = pd.DataFrame({
        head_name: np.asarray(names, dtype=object)[head_index],
        **_matrix_columns(array, row_labels, col_labels, row_name, col_name),
        "row_scaled": row_scaled(_open_cells(array, blocked)).reshape(-1) if array.size else np.full(0, np.nan),
    })
    _mark_blocked(frame, blocked)
    frame["head_index"] = head_index
    return frame


def row_frame(values_1d, labels, *, name="key") -> pd.DataFrame:
    """One row per entry of a 1-D vector (e.g. one query's weights).

    Columns: ``name`` (display labels), ``value``, ``label``, ``masked``, ``index`` (0-based).
    """
    array = to_numpy(values_1d)
    if array.ndim != 1:
        raise ValueError(f"expected a 1-D vector, got shape {tuple(array.shape)}")
    return pd.DataFrame(
        {
            name: _display_labels(labels, array.shape[0], name),
            **_value_columns(array),
            "index": np.arange(array.shape[0]),
        }
    )


def mask_frame(mask, row_labels, col_labels, *, row_name="query", col_name="key") -> pd.DataFrame:
    """One row per cell of a (T, S) boolean mask, True = may attend.

    Columns: ``row_name``, ``col_name``, ``allowed`` (bool), ``state``
    ("may attend" / "blocked"), ``row_index``, ``col_index``.
    """
    array = to_numpy(mask).astype(bool)
    if array.ndim != 2:
        raise ValueError(f"expected a 2-D mask (T, S), got shape {tuple(array.shape)}")
    columns = _matrix_columns(array.astype(np.float64), row_labels, col_labels, row_name, col_name)
    allowed = array.reshape(-1)
    return pd.DataFrame(
        {
            row_name: columns[row_name],
            col_name: columns[col_name],
            "allowed": allowed,
            "state": np.where(allowed, ALLOWED, BLOCKED),
            "row_index": columns["row_index"],
            "col_index": columns["col_index"],
        }
    )
