"""Projection weights W_Q, W_K, W_V, W_O (and optional biases) for ``trace_attention``.

Shapes (vectors are rows, so Q = X @ W_Q):
    w_q, w_k (d_model, h·d_k)   w_v (d_model, h·d_v)   w_o (h·d_v, d_model)
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, fields

import torch

from .errors import AttentionInputError

INIT_KINDS = ("random", "identity")


@dataclass(frozen=True)
class Projections:
    """The weights of one attention layer; ``as_kwargs()`` feeds ``trace_attention``."""

    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    w_o: torch.Tensor | None = None
    b_q: torch.Tensor | None = None
    b_k: torch.Tensor | None = None
    b_v: torch.Tensor | None = None
    b_o: torch.Tensor | None = None
    num_heads: int = 1

    @property
    def d_k(self) -> int:
        return self.w_q.shape[1] // self.num_heads

    @property
    def d_v(self) -> int:
        return self.w_v.shape[1] // self.num_heads

    def as_kwargs(self) -> dict:
        """Keyword arguments for ``trace_attention(x, **p.as_kwargs())``: the weights themselves, not copies (a
        real model's are megabytes)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def random_projections(d_model: int, d_k: int, d_v: int, num_heads: int, seed: int, *,
                       dtype=torch.float32, device=None) -> Projections:
    """Seeded random weights, no biases.

    W_Q, W_K, W_V ~ N(0, 1/d_model) and W_O ~ N(0, 1/(h·d_v)) element-wise (so Q, K, V and
    the output keep roughly unit variance when X does). Each head's block of columns (of W_O: rows)
    is drawn from its own generator seeded by (seed, matrix, head), so a seed gives the same numbers
    on every machine, and head 1 keeps its weights when more heads are added.
    """
    _check_sizes(d_model=d_model, d_k=d_k, d_v=d_v, num_heads=num_heads)
    h = num_heads

    def block(name: str, head: int, rows: int, cols: int) -> torch.Tensor:
        digest = hashlib.sha256(f"{int(seed)}\x1f{name}\x1f{head}".encode()).digest()
        generator = torch.Generator().manual_seed(int.from_bytes(digest[:8], "big") >> 1)
        return torch.randn(rows, cols, generator=generator, dtype=torch.float64)

    def columns(name: str, width: int) -> torch.Tensor:  # (d_model, h·width), head i = columns [i·width, (i+1)·width)
        w = torch.cat([block(name, i, d_model, width) for i in range(h)], dim=1) / math.sqrt(d_model)
        return w.to(dtype=dtype, device=device)

    w_o = torch.cat([block("o", i, d_v, d_model) for i in range(h)], dim=0) / math.sqrt(h * d_v)  # (h·d_v, d_model)
    return Projections(columns("q", d_k), columns("k", d_k), columns("v", d_v),
                       w_o.to(dtype=dtype, device=device), num_heads=h)


def identity_projections(d_model: int, num_heads: int = 1, *, dtype=torch.float32, device=None) -> Projections:
    """W_Q = W_K = W_V = W_O = I (d_model × d_model), so Q = K = V = X.

    Head i then sees features [i·d, (i+1)·d) of X with d = d_k = d_v = d_model / h, so
    d_model must split evenly into the heads.
    """
    _check_sizes(d_model=d_model, num_heads=num_heads)
    if d_model % num_heads:
        raise AttentionInputError(
            f"Identity projections need d_model ({d_model}) to split evenly into {num_heads} heads."
        )
    eye = torch.eye(d_model, dtype=dtype, device=device)
    return Projections(eye, eye.clone(), eye.clone(), eye.clone(), num_heads=num_heads)


def projections_from_tensors(w_q, w_k, w_v, w_o=None, *, b_q=None, b_k=None, b_v=None, b_o=None,
                             num_heads: int = 1) -> Projections:
    """Wrap given weights (e.g. a real model's, already in the x @ W convention), checking shapes."""
    _check_sizes(num_heads=num_heads)
    if w_q.dim() != 2 or w_q.shape != w_k.shape:
        raise AttentionInputError(f"w_q and w_k must be 2-D and equal in shape; got {tuple(w_q.shape)} and "
                                  f"{tuple(w_k.shape)}.")
    if w_v.dim() != 2 or w_v.shape[0] != w_q.shape[0]:
        raise AttentionInputError(f"w_v must be 2-D with {w_q.shape[0]} rows; got {tuple(w_v.shape)}.")
    for name, w in (("w_q", w_q), ("w_v", w_v)):
        if w.shape[1] % num_heads:
            raise AttentionInputError(f"{name} has {w.shape[1]} columns, which do not split evenly into "
                                      f"{num_heads} heads.")
    return Projections(w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, num_heads=num_heads)


def _check_sizes(**sizes: int) -> None:
    for name, value in sizes.items():
        if not isinstance(value, int) or value < 1:
            raise AttentionInputError(f"{name} must be a whole number of at least 1, got {value!r}.")
