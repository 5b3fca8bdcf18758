"""Attention as today's language models run it: shared key/value heads, sliding windows, a KV cache.

    trace = trace_attention(x, w_q, w_k, w_v, num_heads=8, num_kv_heads=2)       # grouped-query
    steps = decode_with_kv_cache(x, w_q, w_k, w_v, num_heads=8, num_kv_heads=2)  # one trace per token
    mask = sliding_window_mask(T, window=4)                                       # local attention

Grouped-query attention (Ainslie et al., 2023): h query heads share g key/value heads, query
head i reading group i // (h / g); g = h is multi-head, g = 1 is multi-query (Shazeer, 2019).
A KV cache keeps every earlier token's keys and values, so generating token t projects only
that token and attends with one query row over t + 1 cached rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch.utils import benchmark

from .errors import AttentionInputError
from .attention import AttentionTrace, _check_trace_inputs, _split_heads, _trace_from_heads, trace_attention
from .masks import sliding_window_mask
from .weights import Projections, random_projections
from .limits import MAX_LAYERS, MAX_CONTEXT_LENGTH


TIMED_LENGTHS = (8, 32, 64, 128, 256)
"""Sequence lengths at which one generation step is timed with and without the cache."""


# ---------------------------------------------------------------- grouped-query heads

def grouped_kwargs(projections: Projections, num_kv_heads: int) -> dict:
    """``trace_attention`` keyword arguments with ``num_kv_heads`` = g shared key/value heads.

    Each group's W_K and W_V (and biases) are the mean of its h / g heads' columns: how
    Ainslie et al. (2023) turn a multi-head checkpoint into a grouped-query one. W_Q and W_O
    are unchanged. Raises ValueError when g does not divide h.
    """
    h = projections.num_heads
    if isinstance(num_kv_heads, bool) or not isinstance(num_kv_heads, int) or not 1 <= num_kv_heads <= h:
        raise AttentionInputError(f"The number of key/value heads must be a whole number from 1 to {h}, "
                                  f"got {num_kv_heads!r}.")
    if h % num_kv_heads:
        raise AttentionInputError(f"{num_kv_heads} key/value heads cannot be shared evenly by {h} query heads: "
                         f"choose a divisor of {h} ({', '.join(str(d) for d in divisors(h))}).")
    g = num_kv_heads

    def pooled(w: torch.Tensor | None) -> torch.Tensor | None:  # (..., h·d) -> (..., g·d), mean over each group
        if w is None:
            return None
        *lead, width = w.shape
        return w.reshape(*lead, g, h // g, width // h).mean(dim=-2).reshape(*lead, width // h * g)

    kwargs = projections.as_kwargs()
    for name in ("w_k", "w_v", "b_k", "b_v"):
        kwargs[name] = pooled(kwargs[name])
    return kwargs | {"num_kv_heads": g}


def divisors(n: int) -> list[int]:
    """The numbers of key/value heads that n query heads can share evenly."""
    return [d for d in range(1, n + 1) if n % d == 0]


def compare_kv_sharing(x: torch.Tensor, projections: Projections, num_kv_heads: int,
                       mask=None) -> dict[str, AttentionTrace]:
    """Multi-head (g = h), grouped-query (g = num_kv_heads) and multi-query (g = 1) on the same x.

    The grouped variants average the multi-head K/V weights per group (see ``grouped_kwargs``).
    """
    h = projections.num_heads
    return {kind: trace_attention(x, **grouped_kwargs(projections, g), mask=mask)
            for kind, g in (("multi-head", h), ("grouped-query", num_kv_heads), ("multi-query", 1))}


# ---------------------------------------------------------------- the KV cache

@dataclass(frozen=True)
class KVCache:
    """Keys (g, t, d_k) and values (g, t, d_v) of the t tokens seen so far."""

    k: torch.Tensor
    v: torch.Tensor

    @property
    def length(self) -> int:
        return self.k.shape[1]

    @staticmethod
    def empty(num_kv_heads: int, d_k: int, d_v: int, like: torch.Tensor) -> KVCache:
        return KVCache(like.new_zeros(num_kv_heads, 0, d_k), like.new_zeros(num_kv_heads, 0, d_v))


def decode_step(x_new: torch.Tensor, cache: KVCache, w_q, w_k, w_v, *, num_heads: int,
                num_kv_heads: int | None = None, w_o=None, b_o=None, b_q=None, b_k=None,
                b_v=None) -> tuple[AttentionTrace, KVCache]:
    """One generation step: project only the newest token x_new (1, d_model), append its key and
    value to the cache, and attend with its query over every cached row (no mask: they are all
    in the past). Returns the step's trace (h, 1, t+1) and the grown cache."""
    g = num_heads if num_kv_heads is None else num_kv_heads
    q = _split_heads(_project(x_new, w_q, b_q), num_heads)  # (h, 1, d_k)   the new query row
    k = torch.cat([cache.k, _split_heads(_project(x_new, w_k, b_k), g)], dim=1)  # (g, t+1, d_k)  one new key row
    v = torch.cat([cache.v, _split_heads(_project(x_new, w_v, b_v), g)], dim=1)  # (g, t+1, d_v)  one new value row
    return _trace_from_heads(q, k, v, None, w_o, b_o, num_kv_heads), KVCache(k, v)


def _project(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    return x @ w if b is None else x @ w + b  # (1, d_model) @ (d_model, n) -> (1, n)


def decode_with_kv_cache(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor, *,
                         num_heads: int = 1, num_kv_heads: int | None = None, w_o: torch.Tensor | None = None,
                         b_o: torch.Tensor | None = None) -> list[AttentionTrace]:
    """Attention computed the way a decoder generates: token by token with a KV cache.

    x (T, d_model); weights as for ``trace_attention``. Returns T traces; trace t has 1 query and
    t + 1 cached keys (q (h,1,d_k), k (h,t+1,d_k), weights (h,1,t+1)). Stacking their outputs
    equals ``trace_attention(x, ..., mask="causal").output``.
    """
    return _decode(x, w_q, w_k, w_v, num_heads=num_heads, num_kv_heads=num_kv_heads, w_o=w_o, b_o=b_o)


def _decode(x, w_q, w_k, w_v, *, num_heads, num_kv_heads=None, w_o=None, b_o=None, b_q=None, b_k=None, b_v=None):
    """``decode_with_kv_cache`` with the projections' biases too (a real model's)."""
    d_k, d_v = _check_trace_inputs(x, x, w_q, w_k, w_v, num_heads, w_o, b_q, b_k, b_v, b_o, num_kv_heads)
    g = num_heads if num_kv_heads is None else num_kv_heads
    cache = KVCache.empty(g, d_k, d_v, like=x)
    traces = []
    for t in range(x.shape[0]):
        trace, cache = decode_step(x[t:t + 1], cache, w_q, w_k, w_v, num_heads=num_heads, num_kv_heads=num_kv_heads,
                                   w_o=w_o, b_o=b_o, b_q=b_q, b_k=b_k, b_v=b_v)
        traces.append(trace)
    return traces


@dataclass(frozen=True)
class CacheCheck:
    """Generation with a cache next to full causal attention over the same tokens.

    steps: one trace per token (1 query each); full: the causal trace over all T tokens;
    outputs (T, d_out): the steps' outputs stacked; max_abs_diff: largest |outputs - full.output|.
    """

    steps: list[AttentionTrace]
    full: AttentionTrace
    outputs: torch.Tensor
    max_abs_diff: float


def check_cache(x: torch.Tensor, projections: Projections, num_kv_heads: int | None = None) -> CacheCheck:
    """Decode x with a KV cache and compare with ``trace_attention(..., mask="causal")``."""
    kwargs = projections.as_kwargs() if num_kv_heads is None else grouped_kwargs(projections, num_kv_heads)
    steps = _decode(x, **kwargs)
    full = trace_attention(x, **kwargs, mask="causal")
    outputs = torch.cat([step.output for step in steps])  # (T, d_out)
    return CacheCheck(steps, full, outputs, float((outputs - full.output).abs().max()))


@dataclass(frozen=True)
class StepTiming:
    """Milliseconds for one generation step at a given length: with the cache and recomputing everything."""

    length: int
    cached_ms: float
    recompute_ms: float


def time_generation_step(lengths=TIMED_LENGTHS, *, d_model: int = 64, num_heads: int = 8, repeats: int = 9,
                         seed: int = 0) -> list[StepTiming]:
    """Measure one step of generating token n (for each n in ``lengths``), the fastest of ``repeats`` runs in the
    CPU time of one thread: with a cache of n - 1 rows (project 1 token, attend 1 query) and without one (project
    all n tokens and run causal attention over them, as a decoder without a cache must)."""
    if not lengths or any(not isinstance(n, int) or n < 1 for n in lengths):
        raise AttentionInputError("Timing needs lengths that are whole numbers of at least 1.")
    d_head = max(1, d_model // num_heads)
    p = random_projections(d_model, d_head, d_head, num_heads, seed=seed)
    timings = []
    for n in (min(lengths), *lengths):  # the first, smallest case warms the code up and is dropped
        x = torch.randn(n, d_model, generator=torch.Generator().manual_seed(seed + n))
        past = x[:-1]
        cache = KVCache(_split_heads(past @ p.w_k, num_heads), _split_heads(past @ p.w_v, num_heads))

        def cached():
            decode_step(x[-1:], cache, p.w_q, p.w_k, p.w_v, num_heads=num_heads, w_o=p.w_o)

        def recompute():
            trace_attention(x, **p.as_kwargs(), mask="causal")

        with torch.no_grad():
            timings.append(StepTiming(n, _fastest_ms(cached, repeats), _fastest_ms(recompute, repeats)))
    return timings[1:]


def _fastest_ms(fn, repeats: int) -> float:
    """The fastest of ``repeats`` runs of ``fn`` (after one to warm up), in milliseconds of one thread's CPU time:
    other sessions and programs on the server cannot inflate it (a median of wall times, measured once per server
    while it was busy, showed a step with the cache slower at 128 tokens than at 256)."""
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=1, timer=time.thread_time)
    timer.timeit(1)
    return min(timer.timeit(1).times[0] for _ in range(max(1, repeats))) * 1000


# ---------------------------------------------------------------- KV-cache memory of real models

@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a published model (from its released config); ``longest_context``: the most
    tokens it was made to read (its position limit)."""

    name: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    window: int | None = None
    longest_context: int | None = None

    @property
    def kind(self) -> str:
        if self.kv_heads == self.heads:
            return "multi-head"
        return "multi-query" if self.kv_heads == 1 else "grouped-query"

    def kv_bytes_per_token(self, bytes_per_value: int = 2) -> int:
        """Keys and values of one token in every layer: layers × kv heads × head size × 2 × bytes."""
        return self.layers * self.kv_heads * self.head_dim * 2 * bytes_per_value

    def cached_tokens(self, context_length: int) -> int:
        """Tokens the cache must hold: all of them, or at most the window (a rolling buffer)."""
        return context_length if self.window is None else min(context_length, self.window)


PUBLISHED_SHAPES = (
    ModelShape("GPT-2 small", layers=12, heads=12, kv_heads=12, head_dim=64, longest_context=1024),
    ModelShape("Llama 2 7B", layers=32, heads=32, kv_heads=32, head_dim=128, longest_context=4096),
    ModelShape("Llama 2 70B", layers=80, heads=64, kv_heads=8, head_dim=128, longest_context=4096),
    ModelShape("Llama 3 8B", layers=32, heads=32, kv_heads=8, head_dim=128, longest_context=8192),
    ModelShape("Mistral 7B v0.1", layers=32, heads=32, kv_heads=8, head_dim=128, window=4096, longest_context=32768),
    ModelShape("Falcon 7B", layers=32, heads=71, kv_heads=1, head_dim=64, longest_context=2048),
    ModelShape("Gemma 2B", layers=18, heads=8, kv_heads=1, head_dim=256, longest_context=8192),
)
"""Layer and head counts, windows and position limits from each model's published configuration file."""


def kv_cache_table(context_length: int, bytes_per_value: int = 2, shapes=PUBLISHED_SHAPES) -> list[dict]:
    """One row per model: its shape, bytes per token, and the cache size for ``context_length`` tokens
    (and what it would be with one key/value head per query head). Past a model's longest context the size is
    what its cache would need; the model itself reads no more than that."""
    whole = isinstance(context_length, int) and not isinstance(context_length, bool)
    if not whole or not 1 <= context_length <= MAX_CONTEXT_LENGTH:
        raise AttentionInputError(f"The context length must be a whole number from 1 to {MAX_CONTEXT_LENGTH:,} tokens.")
    if bytes_per_value not in (1, 2, 4):
        raise AttentionInputError("Each number takes 1, 2 or 4 bytes (8-bit, 16-bit or 32-bit).")
    rows = []
    for shape in shapes:
        per_token = shape.kv_bytes_per_token(bytes_per_value)
        as_multi_head = shape.layers * shape.heads * shape.head_dim * 2 * bytes_per_value
        tokens = shape.cached_tokens(context_length)
        rows.append({"model": shape.name, "attention": shape.kind, "layers": shape.layers, "heads": shape.heads,
                     "kv heads": shape.kv_heads, "head size": shape.head_dim, "window": shape.window,
                     "longest context": shape.longest_context, "KiB per token": per_token / 1024,
                     "cached tokens": tokens,
                     "cache MiB": per_token * tokens / 2**20,
                     "cache MiB if multi-head": as_multi_head * tokens / 2**20})
    return rows


# ---------------------------------------------------------------- sliding windows through depth

def sliding_window_reach(num_tokens: int, window: int, num_layers: int) -> torch.Tensor:
    """Bool (L, T, T): reach[l, i, j] is True when token j can influence token i after l + 1 layers
    of sliding-window attention (information hops up to window - 1 tokens per layer)."""
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or not 1 <= num_layers <= MAX_LAYERS:
        raise AttentionInputError(f"The number of layers must be a whole number from 1 to {MAX_LAYERS}, "
                                  f"got {num_layers!r}.")
    one_layer = sliding_window_mask(num_tokens, window).double()  # (T, T)
    reach, layers = one_layer, []
    for _ in range(num_layers):
        layers.append(reach > 0)
        reach = reach @ one_layer  # (T, T)   paths of one more hop
    return torch.stack(layers)  # (L, T, T)


def reach_span(window: int, num_layers: int) -> int:
    """How many tokens the last layer can draw on: L·(w − 1) + 1 (itself plus L hops of w − 1)."""
    return num_layers * (window - 1) + 1
