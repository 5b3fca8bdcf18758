"""Attention masks. Convention (as in ``torch.nn.functional.scaled_dot_product_attention``):
a bool tensor where ``True`` means *may attend* and ``False`` means *blocked*.
Query positions are rows (T), key positions are columns (S)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .errors import AttentionInputError

MASK_KINDS = ("none", "causal", "padding", "custom")


def causal_mask(num_queries: int, num_keys: int | None = None, *, device=None) -> torch.Tensor:
    """Lower-triangular mask (T, S): query i may attend to keys j <= i.

    With S > T the queries are taken as the last T positions (as when generating
    with a cache), so query i may attend to keys j <= i + (S - T).
    """
    num_keys = num_queries if num_keys is None else num_keys
    _check_positive(num_queries=num_queries, num_keys=num_keys)
    ones = torch.ones(num_queries, num_keys, dtype=torch.bool, device=device)
    return torch.tril(ones, diagonal=num_keys - num_queries)  # (T, S)


def padding_mask(length: int, num_keys: int, num_queries: int | None = None, *, device=None) -> torch.Tensor:
    """Mask (T, S) that blocks the padding keys: key j is allowed iff j < length.

    ``length`` is the number of real (non-padding) tokens; every query row gets the same
    pattern, so padding queries still read the real tokens.
    """
    num_queries = num_keys if num_queries is None else num_queries
    _check_positive(num_queries=num_queries, num_keys=num_keys)
    if not 0 <= length <= num_keys:
        raise AttentionInputError(f"Padding length must be between 0 and {num_keys} (the number of keys), "
                                  f"got {length}.")
    allowed_keys = torch.arange(num_keys, device=device) < length  # (S,)
    return allowed_keys.expand(num_queries, num_keys).clone()  # (T, S)


def padding_mask_batch(lengths: Sequence[int], num_keys: int, *, device=None) -> torch.Tensor:
    """Batched padding mask (B, 1, S) from per-sequence lengths; broadcasts over queries."""
    rows = [padding_mask(n, num_keys, 1, device=device) for n in lengths]
    return torch.stack(rows)  # (B, 1, S)


def custom_mask(grid, num_queries: int | None = None, num_keys: int | None = None, *, device=None) -> torch.Tensor:
    """A mask from a grid of truthy values (nested lists, numpy array or tensor), shape (T, S).

    ``None``/NaN cells are refused with a message naming the cell, so an empty cell in an
    editable table is caught before it reaches the math.
    """
    rows = grid.tolist() if hasattr(grid, "tolist") else [list(r) for r in grid]
    if not rows or not isinstance(rows[0], list) or not rows[0]:
        raise AttentionInputError("A custom mask needs at least one row and one column.")
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise AttentionInputError(f"Every mask row needs {width} cells; row {i + 1} has {len(row)}.")
        for j, cell in enumerate(row):
            if cell is None or (isinstance(cell, float) and cell != cell):
                raise AttentionInputError(f"Mask cell (row {i + 1}, column {j + 1}) is empty: "
                                          "tick it or leave it unticked.")
    mask = torch.tensor([[bool(c) for c in row] for row in rows], dtype=torch.bool, device=device)
    expected = (num_queries or mask.shape[0], num_keys or mask.shape[1])
    if tuple(mask.shape) != expected:
        raise AttentionInputError(f"Custom mask has shape {tuple(mask.shape)} but the sentence needs {expected}.")
    return mask


def sliding_window_mask(num_queries: int, window: int, num_keys: int | None = None, *, device=None) -> torch.Tensor:
    """Causal sliding window (T, S): query i may attend to key j iff 0 <= i - j < window.

    Each token sees itself and the ``window - 1`` tokens before it (as in Mistral's sliding-window
    attention; Longformer's local window looks both ways). With S = T, ``window >= T`` gives the
    causal mask; with more keys than queries it counts positions from the first key, unlike
    ``causal_mask``, which lines the last query up with the last key.
    """
    num_keys = num_queries if num_keys is None else num_keys
    _check_positive(num_queries=num_queries, num_keys=num_keys)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise AttentionInputError(f"The window must be a whole number of at least 1 token, got {window!r}.")
    rows, cols = torch.arange(num_queries, device=device), torch.arange(num_keys, device=device)
    distance = rows[:, None] - cols  # (T, S)  i - j
    return (distance >= 0) & (distance < window)  # (T, S)


def fully_masked_rows(mask: torch.Tensor) -> torch.Tensor:
    """Bool (..., T): True for query rows that may attend to nothing."""
    return ~mask.any(dim=-1)


def _check_positive(**sizes: int) -> None:
    for name, value in sizes.items():
        if int(value) < 1:
            raise AttentionInputError(f"{name} must be at least 1, got {value}.")
