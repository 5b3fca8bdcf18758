"""The worked numbers for one query row, so a page can show the arithmetic step by step."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace


@dataclass(frozen=True)
class RowArithmetic:
    """Every number behind row ``query`` of head ``head`` (S keys, d_k and d_v features).

    products (S, d_k): q_i[d]·k_j[d], whose row sums are the scores
    scores (S,) = q_i · k_j        scaled (S,) = scores / √d_k        allowed (S,) bool
    shifted (S,) = scaled − max (over allowed keys), −inf where blocked
    exps (S,) = exp(shifted)       total = Σ exps       weights (S,) = exps / total
    weighted_values (S, d_v) = weights[j]·v_j      context (d_v,) = Σ_j weighted_values[j]
    """

    head: int
    query: int
    sqrt_d_k: float
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    products: torch.Tensor
    scores: torch.Tensor
    scaled: torch.Tensor
    allowed: torch.Tensor
    shifted: torch.Tensor
    exps: torch.Tensor
    total: float
    weights: torch.Tensor
    weighted_values: torch.Tensor
    context: torch.Tensor


def row_arithmetic(trace: AttentionTrace, head: int, query: int) -> RowArithmetic:
    """Recompute row ``query`` of ``head`` step by step (softmax written out with the max shift)."""
    if not 0 <= head < trace.num_heads:
        raise AttentionInputError(f"head must be between 0 and {trace.num_heads - 1}, got {head}.")
    if not 0 <= query < trace.q.shape[1]:
        raise AttentionInputError(f"query must be between 0 and {trace.q.shape[1] - 1}, got {query}.")
    q_i = trace.q[head, query]  # (d_k,)
    k, v = trace.k[head], trace.v[head]  # (S, d_k), (S, d_v)
    allowed = trace.mask[head, query]  # (S,)
    products = q_i * k  # (S, d_k)     q_i[d]·k_j[d]
    scores = products.sum(dim=-1)  # (S,)        q_i · k_j
    sqrt_d_k = math.sqrt(trace.d_k)
    scaled = scores / sqrt_d_k  # (S,)        (q_i · k_j) / √d_k
    neg_inf = torch.full_like(scaled, float("-inf"))
    if allowed.any():
        # subtract the max: the same softmax, and no overflow
        shifted = torch.where(allowed, scaled - scaled[allowed].max(), neg_inf)
    else:
        shifted = neg_inf
    exps = torch.exp(shifted)  # (S,)        e^{shifted}, 0 where blocked
    total = exps.sum()
    weights = exps / total if total > 0 else torch.zeros_like(exps)  # (S,)  softmax
    weighted_values = weights[:, None] * v  # (S, d_v)    a_ij · v_j
    context = weighted_values.sum(dim=0)  # (d_v,)      Σ_j a_ij v_j
    return RowArithmetic(head, query, sqrt_d_k, q_i, k, v, products, scores, scaled, allowed, shifted, exps,
                         float(total), weights, weighted_values, context)


@dataclass(frozen=True)
class LinearTerms:
    """Every product behind one row of ``x @ w + b`` (d_in inputs, d_out outputs).

    products (d_out, d_in): x[d]·w[d, c]     bias (d_out,) or None     result (d_out,) = Σ_d products + bias
    """

    x: torch.Tensor
    products: torch.Tensor
    bias: torch.Tensor | None
    result: torch.Tensor


def linear_terms(x_row: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> LinearTerms:
    """The terms of ``x_row @ w + b`` for x_row (d_in,), w (d_in, d_out), b (d_out,) or None."""
    if x_row.ndim != 1 or w.ndim != 2 or x_row.shape[0] != w.shape[0]:
        raise AttentionInputError(f"x_row (d_in,) and w (d_in, d_out) do not fit: {tuple(x_row.shape)} and "
                                  f"{tuple(w.shape)}.")
    products = (x_row[:, None] * w).T  # (d_out, d_in)   x[d]·w[d, c]
    result = products.sum(dim=-1)  # (d_out,)          Σ_d x[d]·w[d, c]
    if b is not None:
        result = result + b  # (d_out,)          + b[c]
    return LinearTerms(x_row, products, b, result)

