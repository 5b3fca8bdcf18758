"""Where a token stands: sinusoidal positional encodings, rotary embeddings (RoPE), and the checks
that show why attention needs them.

    PE[p, 2i] = sin(p / 10000^(2i/d)),   PE[p, 2i+1] = cos(p / 10000^(2i/d))      (Vaswani et al., 2017)
    RoPE: each pair (x_2i, x_2i+1) of a query/key at position p turned by the angle p · base^(-2i/d)
          (Su et al., 2021), so q_m · k_n depends on m and n only through m − n.
    ALiBi: score_ij − m_h · |i − j|, a slope m_h per head (Press et al., 2022): no vectors, a penalty for distance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .errors import AttentionInputError
from .attention import _check_bool_mask, _check_qkv, apply_mask, masked_softmax, trace_attention
from .weights import Projections
from .limits import MAX_POSITION


def sinusoidal_positions(length: int, d_model: int, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """The fixed positional encodings of the Transformer, shape (length, d_model).

    Column 2i holds sin(p / 10000^(2i/d_model)) and column 2i+1 holds cos of the same angle, for
    positions p = 0 … length-1. An odd d_model ends with a sin column.
    """
    _check_whole("length", length, 1)
    _check_whole("d_model", d_model, 1)
    position = torch.arange(length, dtype=torch.float64).unsqueeze(1)  # (length, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d/2),)  the even column indices 2i
    angle = position / 10000.0 ** (two_i / d_model)  # (length, ceil(d/2))
    encoding = torch.zeros(length, d_model, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(angle)
    encoding[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return encoding.to(dtype=dtype, device=device)


def rope_angles(positions: torch.Tensor, d: int, base: float = 10000.0) -> torch.Tensor:
    """Angles (T, d/2) in float64: position p turns pair i by p · base^(-2i/d)."""
    frequency = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    return positions.to(torch.float64).unsqueeze(-1) * frequency  # (T, d/2)


def apply_rope(x: torch.Tensor, positions=None, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding of queries or keys x (..., T, d), d even.

    Features (2i, 2i+1) form a pair that is rotated by the angle p · base^(-2i/d), where p is the
    row's position (``positions``: T numbers, default 0 … T-1). Rotations keep every row's norm,
    and position 0 leaves its row unchanged. The result has x's dtype and device.
    """
    if not isinstance(x, torch.Tensor) or x.dim() < 2:
        raise AttentionInputError("x must be a tensor of shape (..., T, d).")
    T, d = x.shape[-2], x.shape[-1]
    if d == 0 or d % 2:
        raise AttentionInputError(f"RoPE turns features in pairs, so d must be even and at least 2; got d = {d}.")
    if not (isinstance(base, (int, float)) and math.isfinite(base) and base > 1):
        raise AttentionInputError(f"base must be a finite number above 1, got {base!r}.")
    positions = _positions(positions, T)
    angle = rope_angles(positions, d, base)  # (T, d/2)
    cos, sin = angle.cos().to(x.dtype).to(x.device), angle.sin().to(x.dtype).to(x.device)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each: the two coordinates of every pair
    turned = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., T, d/2, 2)
    return turned.flatten(-2)  # (..., T, d)  pairs back in place


def _positions(positions, T: int) -> torch.Tensor:
    if positions is None:
        return torch.arange(T, dtype=torch.float64)
    positions = torch.as_tensor(positions, dtype=torch.float64).cpu()
    if positions.shape != (T,):
        raise AttentionInputError(f"positions must hold one number per row: expected {T}, "
                                  f"got shape {tuple(positions.shape)}.")
    if not torch.isfinite(positions).all():
        raise AttentionInputError("positions must be finite numbers.")
    return positions


@dataclass(frozen=True)
class EquivarianceCheck:
    """Self-attention's output for X and for X shuffled, without or with positional encodings.

    order (T,): the shuffle (row t of the shuffled input is row order[t] of X);
    output (T, d_out), shuffled_output (T, d_out); gap = max |shuffled_output − output[order]|.
    """

    order: list[int]
    output: torch.Tensor
    shuffled_output: torch.Tensor
    gap: float


def shuffled_order(length: int, seed: int) -> list[int]:
    """A seeded shuffle of 0 … length-1 that moves at least one token (when length > 1)."""
    _check_whole("length", length, 1)
    order = torch.randperm(length, generator=torch.Generator().manual_seed(int(seed))).tolist()
    if length > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return order


def equivariance_check(x: torch.Tensor, projections: Projections, order: Sequence[int], *,
                       positions: torch.Tensor | None = None) -> EquivarianceCheck:
    """Run self-attention (no mask) on X and on X with its rows in ``order``.

    ``positions`` (T, d_model) is added to the input *after* shuffling, as a model does: the
    encodings belong to the slots, not to the words. Without it the outputs are the same rows,
    reordered (gap ≈ 0); with it they are not.
    """
    order = list(order)
    if sorted(order) != list(range(x.shape[0])):
        raise AttentionInputError(f"order must be a shuffle of 0 … {x.shape[0] - 1}.")
    shuffled = x[order]  # (T, d_model)
    if positions is not None:
        x, shuffled = x + positions, shuffled + positions
    output = trace_attention(x, **projections.as_kwargs()).output  # (T, d_out)
    shuffled_output = trace_attention(shuffled, **projections.as_kwargs()).output  # (T, d_out)
    gap = (shuffled_output - output[order]).abs().max().item()
    return EquivarianceCheck(order, output, shuffled_output, gap)


@dataclass(frozen=True)
class RopeShiftCheck:
    """Scores of RoPE-rotated q (T, d) and k (S, d) at positions 0… and at the same positions + shift.

    scores, shifted_scores (T, S) = rope(q) · rope(k)ᵀ / √d; gap = max |shifted − scores|.
    """

    scores: torch.Tensor
    shifted_scores: torch.Tensor
    shift: float
    gap: float


def rope_shift_check(q: torch.Tensor, k: torch.Tensor, shift: float, base: float = 10000.0) -> RopeShiftCheck:
    """Move every token by ``shift`` positions; RoPE scores depend only on distances, so they stay.

    An odd d leaves its last feature as it is (``_rope_pairs``): RoPE turns features in pairs. Runs in float64 so
    that the only difference left is the rounding of the arithmetic."""
    if not (isinstance(shift, (int, float)) and math.isfinite(shift) and abs(shift) <= MAX_POSITION):
        raise AttentionInputError(f"The shift must be a number between −{MAX_POSITION:,} and {MAX_POSITION:,}.")
    q, k = q.double(), k.double()  # (T, d), (S, d)
    scale = math.sqrt(q.shape[-1])
    q_pos, k_pos = torch.arange(q.shape[-2]), torch.arange(k.shape[-2])
    scores = _rope_pairs(q, q_pos, base) @ _rope_pairs(k, k_pos, base).T / scale  # (T, S)
    shifted = _rope_pairs(q, q_pos + shift, base) @ _rope_pairs(k, k_pos + shift, base).T / scale  # (T, S)
    return RopeShiftCheck(scores, shifted, float(shift), (shifted - scores).abs().max().item())


def _rope_pairs(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """``apply_rope`` on the features of x (..., T, d) that make whole pairs; an odd d's last feature is kept as it
    is, as models that turn only part of q and k do (its term of a score depends on no position)."""
    paired = x.shape[-1] - x.shape[-1] % 2
    if paired == x.shape[-1]:
        return apply_rope(x, positions, base)
    turned = apply_rope(x[..., :paired], positions, base) if paired else x[..., :0]  # (..., T, d − 1)
    return torch.cat((turned, x[..., paired:]), dim=-1)  # (..., T, d)


def _check_whole(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise AttentionInputError(f"{name} must be a whole number of at least {low}, got {value!r}.")
    if value > MAX_POSITION:
        raise AttentionInputError(f"{name} must be at most {MAX_POSITION:,}, got {value:,}.")


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """ALiBi's slope m_h of each of ``num_heads`` heads (Press et al., 2022), float64 (h,): for h a power of two the
    geometric sequence 2^(−8/h), 2^(−16/h), …, 2^(−8); otherwise the slopes of the power of two n below h, then
    every other slope of 2n, as the paper's code does (h = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8)."""
    _check_whole("num_heads", num_heads, 1)

    def powers_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]

    below = 2 ** int(math.log2(num_heads))
    slopes = powers_of_two(below) + powers_of_two(2 * below)[0::2][: num_heads - below]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(length: int, slopes, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """(h, T, T): −m_h · |i − j|, the penalty ALiBi adds to the score of query i with key j (``slopes`` (h,), or
    one number for (1, T, T)). The paper's models are causal and see only j ≤ i, where |i − j| = i − j."""
    _check_whole("length", length, 1)
    slopes = torch.as_tensor(slopes, dtype=dtype, device=device).reshape(-1)  # (h,)
    place = torch.arange(length, device=slopes.device)
    distance = (place[:, None] - place[None, :]).abs().to(dtype)  # (T, T)   |i − j|
    return -slopes[:, None, None] * distance  # (h, T, T)


def alibi_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, slopes, mask: torch.Tensor | None = None):
    """Attention with ALiBi: ``softmax(q kᵀ / √d_k − m_h·|i − j|) v`` with blocked positions excluded.

    q (h, T, d_k), k (h, T, d_k), v (h, T, d_v), one slope per head (``slopes`` (h,) or one number); mask None or
    bool broadcastable to (h, T, T), True = may attend. Returns ``(context (h, T, d_v), weights (h, T, T))``; a fully
    blocked row gets zero weights, as in ``attend``."""
    _check_qkv(q, k, v)
    if q.dim() != 3 or k.shape[-2] != q.shape[-2]:
        raise AttentionInputError("ALiBi here takes self-attention's q, k, v of shape (h, T, d): one position each.")
    mask = _check_bool_mask(mask, (q.shape[0], q.shape[1], k.shape[1]), q.device)
    bias = alibi_bias(q.shape[1], slopes, dtype=q.dtype, device=q.device)  # (h or 1, T, T)
    scaled = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (h, T, T)   q·k / √d_k
    weights = masked_softmax(apply_mask(scaled + bias, mask))  # (h, T, T)
    return weights @ v, weights
