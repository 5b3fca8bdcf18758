"""Attention a tile of keys at a time, as a fused kernel computes it (the "online softmax" of Milakov and
Gimelshein, 2018, used by FlashAttention): the T × S weights are never stored.

For each query the kernel keeps three running numbers while it walks through the keys, B at a time:

    m_j = max(m_{j-1}, max of tile j's scores)             the largest score so far
    ℓ_j = e^(m_{j-1} − m_j) · ℓ_{j-1} + Σ_tile e^(s − m_j)   the softmax's denominator so far
    o_j = e^(m_{j-1} − m_j) · o_{j-1} + Σ_tile e^(s − m_j) v  its numerator, a weighted sum of values

and after the last tile, context = o / ℓ: the same row as ``attend`` gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .attention import _check_bool_mask, _check_qkv, apply_mask
from .errors import AttentionInputError


@dataclass(frozen=True)
class TiledAttention:
    """What a tiled pass keeps after each of its J tiles (key ``starts[j]`` to ``ends[j] - 1``), per query:

    ``scaled`` (..., T, S): the scores q·k / √d_k, −inf where the mask blocks (computed tile by tile; kept here
    only to be shown); ``tile_max`` (..., J, T): the largest score in tile j (−inf where it blocks every key);
    ``running_max`` m, ``rescale`` e^(m_{j-1} − m_j), ``running_sum`` ℓ (..., J, T);
    ``running_out`` o (..., J, T, d_v); ``context`` (..., T, d_v) = o_J / ℓ_J, a zero row where every key is
    blocked (as ``attend``)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    scaled: torch.Tensor
    tile_max: torch.Tensor
    running_max: torch.Tensor
    rescale: torch.Tensor
    running_sum: torch.Tensor
    running_out: torch.Tensor
    context: torch.Tensor

    def weights_so_far(self, tile: int) -> torch.Tensor:
        """(..., T, S): the weights the softmax would give if the keys ended with tile ``tile``: e^(s − m_j) / ℓ_j
        for the keys seen, 0 for the rest (and 0 where nothing was allowed yet)."""
        m = self.running_max[..., tile, :].unsqueeze(-1)  # (..., T, 1)
        total = self.running_sum[..., tile, :].unsqueeze(-1)  # (..., T, 1)
        seen = torch.arange(self.scaled.shape[-1], device=self.scaled.device) < self.ends[tile]  # (S,)
        safe_m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        share = torch.exp(self.scaled - safe_m) / torch.where(total > 0, total, torch.ones_like(total))
        return torch.where(seen & (total > 0), share, torch.zeros_like(share))


def tiled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None, *,
                    tile_size: int) -> TiledAttention:
    """``attend(q, k, v, mask)``'s context, computed ``tile_size`` keys at a time with a running max and sum.

    q (..., T, d_k), k (..., S, d_k), v (..., S, d_v); mask None or bool broadcastable to (..., T, S), True = may
    attend; ``tile_size`` B ≥ 1 (the last tile may be shorter). Returns every running value (``TiledAttention``).
    """
    _check_qkv(q, k, v)
    if isinstance(tile_size, bool) or not isinstance(tile_size, int) or tile_size < 1:
        raise AttentionInputError(f"tile_size must be a whole number of keys, 1 or more, got {tile_size!r}.")
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    mask = _check_bool_mask(mask, batch + (q.shape[-2], k.shape[-2]), q.device)
    S = k.shape[-2]
    if S == 0:
        raise AttentionInputError("k and v must hold at least one key to walk through.")
    scaled = apply_mask(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)  # (..., T, S) q·k / √d_k, −∞ blocked
    m = torch.full(scaled.shape[:-1], float("-inf"), dtype=scaled.dtype, device=scaled.device)  # (..., T)
    total = torch.zeros_like(m)  # (..., T)   ℓ
    out = torch.zeros(scaled.shape[:-1] + (v.shape[-1],), dtype=scaled.dtype, device=scaled.device)  # o
    starts = tuple(range(0, S, tile_size))
    ends = tuple(min(start + tile_size, S) for start in starts)
    kept = {name: [] for name in ("tile_max", "running_max", "rescale", "running_sum", "running_out")}
    for start, end in zip(starts, ends):
        s = scaled[..., start:end]  # (..., T, B)   this tile's scores
        tile_max = s.amax(dim=-1)  # (..., T)
        m_new = torch.maximum(m, tile_max)  # m_j = max(m_{j-1}, max s)
        safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)  # nothing allowed yet: no shift
        rescale = torch.exp(m - safe)  # e^(m_{j-1} − m_j), 0 while nothing was summed
        p = torch.exp(s - safe.unsqueeze(-1))  # (..., T, B)   e^(s − m_j)
        total = rescale * total + p.sum(dim=-1)  # ℓ_j
        out = rescale.unsqueeze(-1) * out + p @ v[..., start:end, :]  # (..., T, d_v)   o_j
        m = m_new
        for name, value in zip(kept, (tile_max, m, rescale, total, out)):
            kept[name].append(value)
    context = out / torch.where(total > 0, total, torch.ones_like(total)).unsqueeze(-1)  # o / ℓ; 0 if all blocked
    stacked = {name: torch.stack(values, dim=-2 if name != "running_out" else -3) for name, values in kept.items()}
    return TiledAttention(starts, ends, scaled, context=context, **stacked)
