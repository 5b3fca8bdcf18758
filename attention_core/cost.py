"""What attention costs as the sequence grows: timings, the memory of the weights, fitted slopes.

Self-attention compares every query with every key: O(T²·d) operations and a T × T matrix of weights
per head. A recurrent layer does O(T·d²) work, but in T steps one after another. A fused kernel
(``torch.nn.functional.scaled_dot_product_attention``) does the same arithmetic as ``attend`` without
writing the T × T weights to memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch.utils import benchmark

from .errors import AttentionInputError
from .attention import attend
from .device import resolve_device
from .limits import MAX_COST_LENGTH, MIN_COST_LENGTH, MAX_COST_WIDTH


SLOPE_FROM_LENGTH = 256
"""Slopes are fitted from this length up: below it fixed overheads hide the growth."""

MIN_RUN_TIME = 0.1
"""Seconds that ``time_layer`` repeats a forward pass for, at least (on the CPU, of the thread's own CPU time)."""

BLOCK_SECONDS = 0.01
"""About the shortest block of passes ``torch.utils.benchmark`` times at once: it grows the block tenfold until
the timer's own overhead is at most 1e-4 of it (about 10 ms), or to one pass when a pass is longer."""

LAYER_KINDS = ("attend", "fused", "recurrent")
"""attend: this project's attention (materialises the weights); fused: torch's
scaled_dot_product_attention; recurrent: torch.nn.RNN with d hidden units."""


def cost_lengths(longest: int, shortest: int = 64) -> list[int]:
    """Powers of two from ``shortest`` to ``longest``: [64, 128, …, longest]."""
    _check_length(longest)
    _check_length(shortest)
    lengths = [2**p for p in range(int(math.log2(shortest)), int(math.log2(longest)) + 1)]
    return [n for n in lengths if shortest <= n <= longest] or [longest]


def formula_lengths(longest: int, width: int) -> list[int]:
    """Powers of two from well below the width d (d/4, or 8 if that is smaller) to ``longest`` (or to 2·d if that
    is longer): the lengths of the formulas' chart, so that it shows where attention's and the recurrent layer's
    counts cross (T = d) with room on both sides."""
    _check_length(longest)
    if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= MAX_COST_WIDTH:
        raise AttentionInputError(f"d must be a whole number from 1 to {MAX_COST_WIDTH}, got {width!r}.")
    shortest, longest = max(1, min(8, width // 4)), max(longest, 2 * width)
    return [2**p for p in range(int(math.log2(shortest)), int(math.log2(longest)) + 1) if shortest <= 2**p <= longest]


def weights_bytes(length: int, num_heads: int = 1, dtype=torch.float32) -> int:
    """Bytes of the (h, T, T) attention weights that ``attend`` keeps in memory."""
    return num_heads * length * length * torch.empty((), dtype=dtype).element_size()


CONVOLUTION_KERNEL = 3
"""The kernel size k of the convolution that ``operation_counts`` counts by default."""


def operation_counts(length: int, width: int, kernel: int = CONVOLUTION_KERNEL) -> dict[str, int]:
    """Multiply-adds of one layer in the orders of Vaswani et al.'s table: self-attention T²·d,
    recurrent T·d², convolution k·T·d². (QKᵀ and AV together are 2·T²·d, and an RNN with input and state
    matrices does 2·T·d²: the constant factors are left out, as the table leaves them out.)"""
    return {"self-attention": length**2 * width, "recurrent": length * width**2,
            "convolution": kernel * length * width**2}


def time_layer(kind: str, length: int, width: int, device: str = "cpu", *, min_run_time: float = MIN_RUN_TIME,
               seed: int = 0) -> float:
    """Seconds for one forward pass of ``kind`` on a sequence of ``length`` tokens of width d.

    Attention gets q, k, v of shape (1, T, d); the recurrent layer gets x (T, d). Timed with
    ``torch.utils.benchmark`` on one CPU thread, repeating in blocks for at least ``min_run_time``
    seconds; the fastest block's mean is returned. On the CPU the clock is the thread's own CPU time,
    which other programs on a busy machine cannot inflate; on a GPU it is wall time (waiting for the GPU).
    """
    if kind not in LAYER_KINDS:
        raise AttentionInputError(f"Unknown layer {kind!r}: choose one of {', '.join(LAYER_KINDS)}.")
    _check_length(length)
    if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= MAX_COST_WIDTH:
        raise AttentionInputError(f"d must be a whole number from 1 to {MAX_COST_WIDTH}, got {width!r}.")
    device = resolve_device(device)
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, length, width, generator=generator).to(device) for _ in range(3))  # (1, T, d)
    if kind == "attend":
        def run():
            return attend(q, k, v)
    elif kind == "fused":
        def run():
            return F.scaled_dot_product_attention(q, k, v)
    else:
        rnn = torch.nn.RNN(width, width).to(device)

        def run():
            return rnn(q[0])  # (T, d): T steps, each x_t W_ih + h_{t−1} W_hh

    def step():
        with torch.inference_mode():
            run()
        if device.type == "mps":
            torch.mps.synchronize()

    clock = time.thread_time if device.type == "cpu" else time.perf_counter
    timer = benchmark.Timer(stmt="step()", globals={"step": step}, num_threads=1, timer=clock)
    return min(timer.blocked_autorange(min_run_time=min_run_time).times)


def timing_seconds(per_call: float, min_run_time: float = MIN_RUN_TIME) -> float:
    """About how long ``time_layer`` runs for a layer whose forward pass takes ``per_call`` seconds.

    It repeats the pass in blocks (one pass, or enough passes for about ``BLOCK_SECONDS``) until ``min_run_time``
    has passed: sizing the block costs about one block, and the last block can overshoot by one. One more block
    covers making the inputs. A fast layer thus costs about ``min_run_time`` whatever its pass takes."""
    return min_run_time + 3 * max(per_call, BLOCK_SECONDS)


def predicted_timing_seconds(per_call: dict[str, float], length: int, next_length: int,
                             min_run_time: float = MIN_RUN_TIME) -> float:
    """About how long timing every layer of ``per_call`` (its seconds per forward pass at ``length``) takes at
    ``next_length``, on an idle machine: each pass is taken to grow with the square of T (attention's rate, the
    fastest of the three), and each timing follows :func:`timing_seconds`."""
    growth = (next_length / length) ** 2
    return sum(timing_seconds(seconds * growth, min_run_time) for seconds in per_call.values())


def fit_loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares line through (log x, log y): returns (slope, intercept), y ≈ e^intercept · x^slope.

    A slope of 2 means doubling T quadruples the cost."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise AttentionInputError("A slope needs at least two (T, value) points.")
    if any(not (x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y)) for x, y in zip(xs, ys)):
        raise AttentionInputError("A log–log slope needs positive, finite values.")
    log_x = torch.tensor([math.log(x) for x in xs], dtype=torch.float64)
    log_y = torch.tensor([math.log(y) for y in ys], dtype=torch.float64)
    if float(log_x.max() - log_x.min()) == 0:
        raise AttentionInputError("A slope needs at least two different lengths.")
    design = torch.stack((log_x, torch.ones_like(log_x)), dim=1)  # (n, 2)
    slope, intercept = torch.linalg.lstsq(design, log_y.unsqueeze(1)).solution.squeeze(1).tolist()
    return slope, intercept


def fitted_slope(lengths: Sequence[int], values: Sequence[float],
                 from_length: int = SLOPE_FROM_LENGTH) -> tuple[float, list[int]]:
    """The log–log slope over the lengths ≥ ``from_length`` (all of them if fewer than two are);
    returns (slope, the lengths used)."""
    points = [(n, v) for n, v in zip(lengths, values) if n >= from_length]
    if len(points) < 2:
        points = list(zip(lengths, values))
    slope, _ = fit_loglog_slope([n for n, _ in points], [v for _, v in points])
    return slope, [n for n, _ in points]


def _check_length(length: int) -> None:
    if isinstance(length, bool) or not isinstance(length, int) or not MIN_COST_LENGTH <= length <= MAX_COST_LENGTH:
        raise AttentionInputError(
            f"T must be a whole number from {MIN_COST_LENGTH} to {MAX_COST_LENGTH}, got {length!r}.")
