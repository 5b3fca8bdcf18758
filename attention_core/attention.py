"""Scaled dot-product and multi-head attention, one line per formula.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V                      (Vaswani et al., 2017)
    MultiHead(X) = Concat(head_1, …, head_h) W_O,  head_i = Attention(X W_Q^i, X W_K^i, X W_V^i)

Vectors are rows (``Q = X @ W_q``); batch/head dims come first; a bool mask is
True where a query may attend to a key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .errors import AttentionInputError
from .masks import causal_mask


@dataclass(frozen=True)
class AttentionTrace:
    """Every stage of one multi-head attention call (h heads, T queries, S keys).

    q (h,T,d_k)  k (h,S,d_k)  v (h,S,d_v)
    scores (h,T,S) = q @ kᵀ             scaled (h,T,S) = scores / √d_k
    masked (h,T,S) = scaled, -inf where blocked
    weights (h,T,S) = softmax over each row (all-zero for a fully blocked row)
    context (h,T,d_v) = weights @ v
    concat (T, h·d_v)                   output (T, d_out) = concat @ w_o + b_o (concat if no w_o)
    mask (h,T,S) bool, True = may attend (all True when no mask was given; may be a broadcast view)
    num_kv_heads g: query head i read the keys/values of group i // (h // g); k and v hold each
    head's copy, so k[i] is what head i used (None = one key/value head per query head)
    """

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    scores: torch.Tensor
    scaled: torch.Tensor
    masked: torch.Tensor
    weights: torch.Tensor
    context: torch.Tensor
    concat: torch.Tensor
    output: torch.Tensor
    mask: torch.Tensor
    num_kv_heads: int | None = None

    @property
    def num_heads(self) -> int:
        return self.q.shape[0]

    @property
    def kv_groups(self) -> int:
        """Number of distinct key/value heads g (= num_heads for plain multi-head attention)."""
        return self.num_heads if self.num_kv_heads is None else self.num_kv_heads

    def kv_group(self, head: int) -> int:
        """The key/value group that query head ``head`` reads."""
        return head // (self.num_heads // self.kv_groups)

    @property
    def d_k(self) -> int:
        return self.q.shape[-1]

    @property
    def d_v(self) -> int:
        return self.v.shape[-1]


def apply_mask(scaled: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Put -inf where ``mask`` is False (blocked); ``mask`` broadcasts to ``scaled`` (..., T, S)."""
    if mask is None:
        return scaled
    return scaled.masked_fill(~mask, float("-inf"))


def masked_softmax(masked: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim; a row that is all -inf (fully blocked) gives zeros, never NaN."""
    weights = torch.softmax(masked, dim=-1)
    fully_blocked = torch.isneginf(masked).all(dim=-1, keepdim=True)
    return weights.masked_fill(fully_blocked, 0.0)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None):
    """Scaled dot-product attention: ``softmax(q kᵀ / √d_k) v`` with blocked positions excluded.

    q (..., T, d_k), k (..., S, d_k), v (..., S, d_v); mask None or bool broadcastable to
    (..., T, S), True = may attend. Returns ``(context (..., T, d_v), weights (..., T, S))``.
    A fully masked query row gets zero weights and a zero context row.
    """
    _check_qkv(q, k, v)
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    mask = _check_bool_mask(mask, batch + (q.shape[-2], k.shape[-2]), q.device)
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1)  # (..., T, S)   Q Kᵀ
    scaled = scores / math.sqrt(d_k)  # (..., T, S)   Q Kᵀ / √d_k
    weights = torch.softmax(apply_mask(scaled, mask), dim=-1)  # (..., T, S)
    if mask is not None:
        _zero_fully_blocked_rows_(weights, mask)
    context = weights @ v  # (..., T, d_v)
    return context, weights


def trace_attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    *,
    num_heads: int = 1,
    x_kv: torch.Tensor | None = None,
    mask: str | torch.Tensor | None = None,
    w_o: torch.Tensor | None = None,
    b_q: torch.Tensor | None = None,
    b_k: torch.Tensor | None = None,
    b_v: torch.Tensor | None = None,
    b_o: torch.Tensor | None = None,
    num_kv_heads: int | None = None,
) -> AttentionTrace:
    """Multi-head attention keeping every intermediate stage.

    x (T, d_model) is the query side, x_kv (S, d_model) the key/value side (default x).
    w_q (d_model, h·d_k); w_k (d_model, g·d_k); w_v (d_model, g·d_v) with g = num_kv_heads
    (default h); head i owns columns [i·d_k, (i+1)·d_k) of w_q and reads key/value group
    i // (h // g) (grouped-query attention; g = 1 is multi-query).
    mask: None | "causal" | bool (T, S) or (h, T, S), True = may attend.
    w_o (h·d_v, d_out) and b_o (d_out,) are the optional output projection.
    """
    x_kv = x if x_kv is None else x_kv
    d_k, d_v = _check_trace_inputs(x, x_kv, w_q, w_k, w_v, num_heads, w_o, b_q, b_k, b_v, b_o, num_kv_heads)
    T, S, h = x.shape[0], x_kv.shape[0], num_heads
    g = h if num_kv_heads is None else num_kv_heads
    allowed = _resolve_trace_mask(mask, h, T, S, x.device)  # None, (T, S) or (h, T, S)
    if isinstance(mask, str):  # causal: the bias is a triangle, and only T > S leaves rows with no key
        bias = torch.full((T, S), float("-inf"), dtype=x.dtype, device=x.device).triu_(S - T + 1)  # (T, S)
        blocked_rows = T > S
    else:
        bias = None if allowed is None else _mask_bias(allowed, x.dtype)
        blocked_rows = allowed is not None

    q = _split_heads(_project(x, w_q, b_q), h)  # (h, T, d_k)   Q = X W_Q + b_Q
    k = _split_heads(_project(x_kv, w_k, b_k), g)  # (g, S, d_k)   K = X W_K + b_K
    v = _split_heads(_project(x_kv, w_v, b_v), g)  # (g, S, d_v)   V = X W_V + b_V
    return _trace_from_heads(q, k, v, allowed, w_o, b_o, num_kv_heads, bias=bias, blocked_rows=blocked_rows)


def _trace_from_heads(q, k, v, allowed, w_o, b_o, num_kv_heads, *, bias=None, blocked_rows=True) -> AttentionTrace:
    """The stages after the projections: q (h,T,d_k), k (g,S,d_k), v (g,S,d_v); allowed None or
    bool broadcastable to (h,T,S); bias its 0/-inf form; blocked_rows False when no row can be fully
    blocked. No pass over (h,T,S) is spent on a mask that blocks nothing."""
    h, T, d_k = q.shape
    g, S, d_v = v.shape
    k = k.repeat_interleave(h // g, dim=0) if g != h else k  # (h, S, d_k)  head i reads group i // (h/g)
    v = v.repeat_interleave(h // g, dim=0) if g != h else v  # (h, S, d_v)
    if allowed is not None and bias is None:
        bias = _mask_bias(allowed, q.dtype)
    out = _stage_block(q, k, bias)  # where scores, scaled and masked go: one block when large
    scores = torch.matmul(q, k.transpose(-2, -1), out=out[0])  # (h, T, S)     Q Kᵀ
    scaled = torch.div(scores, math.sqrt(d_k), out=out[1])  # (h, T, S)     Q Kᵀ / √d_k
    masked = scaled if bias is None else torch.add(scaled, bias, out=out[2])  # (h, T, S)  -inf where blocked
    weights = torch.softmax(masked, dim=-1)  # (h, T, S)     softmax per row
    if allowed is not None and blocked_rows:
        _zero_fully_blocked_rows_(weights, allowed)
    context = weights @ v  # (h, T, d_v)   weights · V
    concat = context.transpose(0, 1).reshape(T, h * d_v)  # (T, h·d_v)  Concat(head_1..head_h)
    output = concat if w_o is None else _project(concat, w_o, b_o)  # (T, d_out)  concat W_O + b_O
    full_mask = _all_allowed(h, T, S, q.device) if allowed is None else allowed.expand(h, T, S)
    return AttentionTrace(q, k, v, scores, scaled, masked, weights, context, concat, output, full_mask,
                          num_kv_heads)


ONE_BLOCK_FROM = 1 << 18
"""Elements per (h, T, S) stage from which scores, scaled and masked share one block (1 MB in float32)."""


def _stage_block(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None) -> tuple:
    """Three ``out=`` places for scores, scaled and masked: (h, T, S) views of one new block, or Nones.

    Allocated one by one, a long sentence's stages are freed one by one, and glibc gives the memory back to
    the system after every call, so the next call pages it in again (at T = 512 most of a call's time).
    Freed as one block, it raises glibc's bar for giving memory back above the trace's footprint. Small
    stages, and inputs that need gradients (autograd cannot follow ``out=``), are allocated as usual."""
    h, T, S = q.shape[0], q.shape[1], k.shape[1]
    needs_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, bias))
    if h * T * S < ONE_BLOCK_FROM or needs_grad:
        return None, None, None
    block = torch.empty((2 if bias is None else 3, h, T, S), dtype=torch.result_type(q, k), device=q.device)
    return block[0], block[1], None if bias is None else block[2]


def _mask_bias(allowed: torch.Tensor, dtype) -> torch.Tensor:
    """0 where allowed, -inf where blocked, in the mask's own shape ((T, S) or (h, T, S)).
    Adding it equals apply_mask for finite scores, and a broadcast add is much cheaper than
    masked_fill with a broadcast bool mask."""
    return torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill_(~allowed, float("-inf"))


def _zero_fully_blocked_rows_(weights: torch.Tensor, allowed: torch.Tensor) -> None:
    """In place: rows whose mask allows nothing (softmax of all -inf = NaN) become zeros.
    The test runs on the mask, (T, S) or (h, T, S), never on the (h, T, S) scores."""
    live = allowed.any(dim=-1, keepdim=True)  # (..., T, 1)
    if not bool(live.all()):
        weights.masked_fill_(~live, 0.0)


def _all_allowed(h: int, T: int, S: int, device) -> torch.Tensor:
    """An all-True (h, T, S) mask as a broadcast view of one element (nothing allocated per cell)."""
    return torch.ones((), dtype=torch.bool, device=device).expand(h, T, S)


def _project(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    return x @ w if b is None else torch.addmm(b, x, w)


def _split_heads(projected: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(T, h·d) -> (h, T, d): head i takes the contiguous columns [i·d, (i+1)·d)."""
    T, width = projected.shape
    return projected.view(T, num_heads, width // num_heads).transpose(0, 1)


def _resolve_trace_mask(mask, h: int, T: int, S: int, device) -> torch.Tensor | None:
    """The mask in its smallest form: None (nothing blocked), (T, S) or (h, T, S)."""
    if mask is None:
        return None
    if isinstance(mask, str):
        if mask != "causal":
            raise AttentionInputError(f'mask must be None, "causal" or a bool tensor, got the string {mask!r}.')
        return causal_mask(T, S, device=device)
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise AttentionInputError("mask must be a bool tensor (True = may attend), \"causal\" or None.")
    if tuple(mask.shape) not in {(T, S), (h, T, S)}:
        raise AttentionInputError(
            f"mask has shape {tuple(mask.shape)}; expected ({T}, {S}) or ({h}, {T}, {S}) "
            f"for {T} queries, {S} keys and {h} heads."
        )
    return mask.to(device)


def _check_qkv(q, k, v) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise AttentionInputError(f"{name} must be a torch.Tensor, got {type(t).__name__}.")
        if t.dim() < 2:
            raise AttentionInputError(f"{name} must have at least 2 dims (..., length, features); "
                                      f"got shape {tuple(t.shape)}.")
    if q.shape[-1] == 0:
        raise AttentionInputError("d_k must be at least 1 (q and k have 0 features).")
    if q.shape[-1] != k.shape[-1]:
        raise AttentionInputError(f"q and k need the same d_k: q has {q.shape[-1]} features, k has {k.shape[-1]}.")
    if k.shape[-2] != v.shape[-2]:
        raise AttentionInputError(f"k and v need the same length S: k has {k.shape[-2]} rows, v has {v.shape[-2]}.")
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise AttentionInputError(
            f"q, k and v have batch/head dims {tuple(q.shape[:-2])}, {tuple(k.shape[:-2])} and "
            f"{tuple(v.shape[:-2])}, which do not broadcast together."
        ) from None
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype or t.device != q.device:
            raise AttentionInputError(
                f"{name} is {t.dtype} on {t.device} but q is {q.dtype} on {q.device}; "
                "put q, k and v on one device and dtype."
            )


def _check_bool_mask(mask, scores_shape, device):
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise AttentionInputError("mask must be a bool tensor (True = may attend) or None.")
    try:
        fits = torch.broadcast_shapes(mask.shape, scores_shape) == tuple(scores_shape)
    except RuntimeError:
        fits = False
    if not fits:  # (a mask with more batch dims than the scores would grow the output: SDPA refuses it too)
        raise AttentionInputError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape {tuple(scores_shape)}."
        )
    return mask.to(device)


def _check_trace_inputs(x, x_kv, w_q, w_k, w_v, num_heads, w_o, b_q, b_k, b_v, b_o, num_kv_heads=None):
    tensors = {"x": x, "x_kv": x_kv, "w_q": w_q, "w_k": w_k, "w_v": w_v}
    optional = {"w_o": w_o, "b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}
    tensors.update({n: t for n, t in optional.items() if t is not None})
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise AttentionInputError(f"{name} must be a torch.Tensor, got {type(t).__name__}.")
    for name in ("x", "x_kv", "w_q", "w_k", "w_v") + (("w_o",) if w_o is not None else ()):
        if tensors[name].dim() != 2:
            raise AttentionInputError(f"{name} must be 2-D; got shape {tuple(tensors[name].shape)}.")
    for name, t in tensors.items():
        if t.device != x.device or t.dtype != x.dtype:
            raise AttentionInputError(
                f"{name} is {t.dtype} on {t.device} but x is {x.dtype} on {x.device}; "
                "put every tensor on one device and dtype."
            )
    if not isinstance(num_heads, int) or num_heads < 1:
        raise AttentionInputError(f"num_heads must be a whole number of at least 1, got {num_heads!r}.")
    g = num_heads if num_kv_heads is None else num_kv_heads
    if not isinstance(g, int) or isinstance(g, bool) or g < 1:
        raise AttentionInputError(f"num_kv_heads must be a whole number of at least 1, got {num_kv_heads!r}.")
    if num_heads % g:
        raise AttentionInputError(f"{g} key/value heads cannot be shared evenly by {num_heads} query heads: "
                         "the number of key/value heads must divide the number of heads.")
    if x.shape[0] == 0 or x_kv.shape[0] == 0:
        raise AttentionInputError("x and x_kv need at least one row (token).")
    d_model = x.shape[1]
    if x_kv.shape[1] != d_model:
        raise AttentionInputError(f"x has d_model={d_model} but x_kv has {x_kv.shape[1]} features.")
    for name in ("w_q", "w_k", "w_v"):
        if tensors[name].shape[0] != d_model:
            raise AttentionInputError(f"{name} must have d_model={d_model} rows; "
                                      f"got shape {tuple(tensors[name].shape)}.")
    for name, heads in (("w_q", num_heads), ("w_v", g)):
        width = tensors[name].shape[1]
        if width == 0:
            raise AttentionInputError(f"{name} has no columns: d_k and d_v must be at least 1.")
        if width % heads:
            raise AttentionInputError(f"{name} has {width} columns, which do not split evenly into {heads} heads.")
    d_k, d_v = w_q.shape[1] // num_heads, w_v.shape[1] // g
    if w_k.shape[1] != g * d_k:
        if g == num_heads:
            raise AttentionInputError(f"w_q and w_k must match; got {tuple(w_q.shape)} and {tuple(w_k.shape)}.")
        raise AttentionInputError(f"w_k must have g·d_k = {g}·{d_k} = {g * d_k} columns for {g} key/value heads; "
                         f"got shape {tuple(w_k.shape)}.")
    for name, b, width in (("b_q", b_q, w_q.shape[1]), ("b_k", b_k, w_k.shape[1]), ("b_v", b_v, w_v.shape[1])):
        if b is not None and tuple(b.shape) != (width,):
            raise AttentionInputError(f"{name} must have shape ({width},); got {tuple(b.shape)}.")
    if w_o is not None and w_o.shape[0] != num_heads * d_v:
        raise AttentionInputError(f"w_o must have h·d_v={num_heads * d_v} rows; got shape {tuple(w_o.shape)}.")
    if b_o is not None:
        if w_o is None:
            raise AttentionInputError("b_o was given without w_o.")
        if tuple(b_o.shape) != (w_o.shape[1],):
            raise AttentionInputError(f"b_o must have shape ({w_o.shape[1]},); got {tuple(b_o.shape)}.")
    return d_k, d_v
