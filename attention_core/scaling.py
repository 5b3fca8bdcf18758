"""Why the scores are divided by √d_k: experiments on random queries and keys.

For q, k with independent unit-variance entries, q · k = Σ_m q_m k_m has variance d_k. Unscaled,
the scores spread out as d_k grows, the softmax saturates (one weight near 1, the rest near 0) and
its Jacobian — the gradient that training needs — shrinks towards zero. Dividing by √d_k keeps the
variance at 1 for every d_k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace, apply_mask, masked_softmax
from .limits import MAX_SCALING_D_K, MAX_SCALING_KEYS, MAX_SCALING_SAMPLES


_CHUNK_NUMBERS = 2**21  # random numbers drawn at once (16 MiB of float64), whatever the sizes


def _standard_normal(*shape: int, generator: torch.Generator) -> torch.Tensor:
    """N(0, 1) numbers of ``shape`` in float64. Drawn in float32 (four times faster to draw); the sums and
    variances made from them are taken in float64."""
    return torch.randn(*shape, generator=generator, dtype=torch.float32).double()


@dataclass(frozen=True)
class VarianceSample:
    """Sampled variance of q · k (and of q · k / √d_k) for one d_k, with the standard error of the
    sampled variance of the raw dot product."""

    d_k: int
    variance: float
    scaled_variance: float
    standard_error: float


@dataclass(frozen=True)
class SoftmaxStats:
    """Means over sampled rows of ``num_keys`` scores, for one d_k and one choice of scaling.

    max_weight: the largest weight in a row (1/num_keys when uniform, 1 when saturated);
    entropy: −Σ a log a in nats (log num_keys when uniform, 0 when saturated);
    jacobian_norm: ‖∂a/∂s‖_F of the softmax, the size of the gradient it lets through.
    """

    d_k: int
    scaled: bool
    max_weight: float
    entropy: float
    jacobian_norm: float


def dot_product_variance(d_k: int, samples: int, seed: int = 0) -> VarianceSample:
    """Draw ``samples`` pairs q, k ~ N(0, I_{d_k}) and measure the variance of q · k (theory: d_k)."""
    _check_sizes(d_k=d_k, samples=samples)
    if samples < 2:
        raise AttentionInputError("At least 2 samples are needed to measure a variance.")
    generator = torch.Generator().manual_seed(_seed(seed, d_k, "variance"))
    q = _standard_normal(samples, d_k, generator=generator)  # (n, d_k)
    k = _standard_normal(samples, d_k, generator=generator)  # (n, d_k)
    dots = (q * k).sum(dim=-1)  # (n,)   q · k
    variance = dots.var().item()
    # Var of a sample variance ≈ σ⁴ (2/(n−1) + excess kurtosis / n); q · k has excess kurtosis 6/d_k.
    standard_error = d_k * math.sqrt(2 / (samples - 1) + 6 / (d_k * samples))
    return VarianceSample(d_k, variance, (dots / math.sqrt(d_k)).var().item(), standard_error)


def softmax_jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """‖J‖_F for each row a (..., n) of softmax weights, where J = ∂a/∂s = diag(a) − a aᵀ. Returns (...).

    Row i of J is a_i (e_i − a), so ‖J‖_F² = Σ_i a_i² ((1 − a_i)² + Σ_{j≠i} a_j²),
    with 1 − a_i = Σ_{j≠i} a_j.
    The sums over j ≠ i are added up directly (no subtraction), so a saturated row keeps full precision."""
    rest = _sum_of_others(weights)  # (..., n)   Σ_{j≠i} a_j = 1 − a_i
    rest_sq = _sum_of_others(weights**2)  # (..., n)   Σ_{j≠i} a_j²
    return (weights**2 * (rest**2 + rest_sq)).sum(dim=-1).sqrt()


def _sum_of_others(values: torch.Tensor) -> torch.Tensor:
    """For each entry i of the last dim, the sum of all the other entries, without cancellation."""
    zero = torch.zeros_like(values[..., :1])
    before = torch.cat((zero, values.cumsum(dim=-1)[..., :-1]), dim=-1)  # Σ_{j<i}
    after = torch.cat((zero, values.flip(-1).cumsum(dim=-1)[..., :-1]), dim=-1).flip(-1)  # Σ_{j>i}
    return before + after


def softmax_saturation(d_k: int, num_keys: int, samples: int, seed: int = 0) -> tuple[SoftmaxStats, SoftmaxStats]:
    """Softmax of q · k_j (unscaled) and of q · k_j / √d_k (scaled) over ``num_keys`` random keys,
    averaged over ``samples`` random queries; q, k_j ~ N(0, I_{d_k}). Returns (unscaled, scaled).

    Given q, the scores q · k_j are independent N(0, ‖q‖²), so each row is drawn as ‖q‖ · z with
    z ~ N(0, I_S): the same distribution as drawing every k_j, at d_k times less work."""
    _check_sizes(d_k=d_k, num_keys=num_keys, samples=samples)
    generator = torch.Generator().manual_seed(_seed(seed, d_k, "softmax"))
    totals = {False: torch.zeros(3, dtype=torch.float64), True: torch.zeros(3, dtype=torch.float64)}
    chunk = max(1, _CHUNK_NUMBERS // (num_keys + d_k))  # rows per step
    for start in range(0, samples, chunk):
        n = min(chunk, samples - start)
        q = _standard_normal(n, d_k, generator=generator)  # (n, d_k)
        z = _standard_normal(n, num_keys, generator=generator)  # (n, S)
        scores = q.norm(dim=-1, keepdim=True) * z  # (n, S)   q · k_j ~ N(0, ‖q‖²)
        for scaled in (False, True):
            weights = torch.softmax(scores / math.sqrt(d_k) if scaled else scores, dim=-1)  # (n, S)
            stats = torch.stack((weights.max(dim=-1).values, row_entropy(weights),
                                 softmax_jacobian_norm(weights)))  # (3, n)
            totals[scaled] += stats.sum(dim=-1)
    unscaled, scaled = (SoftmaxStats(d_k, s, *(totals[s] / samples).tolist()) for s in (False, True))
    return unscaled, scaled


def unscaled_weights(trace: AttentionTrace) -> torch.Tensor:
    """The weights (h, T, S) the trace would have without the division by √d_k (same mask)."""
    return masked_softmax(apply_mask(trace.scores, trace.mask))


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """−Σ a log a (nats) of each row (..., S) of weights; a blocked all-zero row gives 0.

    A blocked key has weight 0 and adds 0 · log 0 = 0 (``xlogy``), in every dtype: clamping before the log
    would not do, since no positive clamp survives float32 and the product 0 · log 0 would then be NaN.
    Written as 0 − Σ so that a row with entropy 0 gives +0, not −0 (shown as "-0.0000")."""
    return 0.0 - torch.special.xlogy(weights, weights).sum(dim=-1)


def _seed(seed: int, d_k: int, what: str) -> int:
    return (int(seed) * 1_000_003 + d_k * 7919 + (1 if what == "softmax" else 0)) % (2**63)


def _check_sizes(**sizes: int) -> None:
    limits = {"d_k": MAX_SCALING_D_K, "num_keys": MAX_SCALING_KEYS, "samples": MAX_SCALING_SAMPLES}
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limits[name]:
            raise AttentionInputError(f"{name} must be a whole number from 1 to {limits[name]}, got {value!r}.")
