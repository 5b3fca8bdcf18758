"""Modern attention in the core: grouped-query heads (against SDPA's enable_gqa), sliding windows,
the KV cache (against full causal attention), KV-cache sizes, rollout and head statistics, and a
tiny GPT-2 generating with its own cache."""

from __future__ import annotations

import inspect
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

from attention_core import (PUBLISHED_SHAPES, KVCache, attention_rollout, causal_mask, check_cache,  # noqa: E402
                            compare_kv_sharing, decode_step, decode_with_kv_cache, grouped_kwargs, head_roles,
                            head_stats, kv_cache_table, mean_over_heads, random_projections, reach_span,
                            sliding_window_mask, sliding_window_reach, time_generation_step, trace_attention)

FAST = settings(max_examples=25, deadline=None)


def _gqa_layer(T, S, d_model, h, g, d_k, d_v, seed, dtype=torch.float64, bias=True):
    gen = torch.Generator().manual_seed(seed)

    def r(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)

    w = dict(w_q=r(d_model, h * d_k), w_k=r(d_model, g * d_k), w_v=r(d_model, g * d_v), w_o=r(h * d_v, d_model))
    if bias:
        w.update(b_q=r(h * d_k), b_k=r(g * d_k), b_v=r(g * d_v), b_o=r(d_model))
    return r(T, d_model), r(S, d_model), w


def _heads(projected, n):  # (T, n·d) -> (n, T, d)
    return projected.view(projected.shape[0], n, -1).transpose(0, 1)


# ---------------------------------------------------------------- grouped-query attention

@pytest.mark.parametrize("h,g", [(8, 2), (8, 1), (8, 8), (6, 3), (4, 2), (3, 1)])
@pytest.mark.parametrize("mask_kind", [None, "causal", "grid"])
def test_grouped_query_matches_sdpa_enable_gqa(h, g, mask_kind):
    T, S, d_k, d_v = 5, 7, 3, 4
    x, x_kv, w = _gqa_layer(T, S, 6, h, g, d_k, d_v, seed=h * 10 + g)
    grid = torch.rand(T, S, generator=torch.Generator().manual_seed(3)) < 0.6
    mask = {None: None, "causal": causal_mask(T, S), "grid": grid}[mask_kind]
    if mask is not None:
        mask[:, 0] = True  # SDPA gives NaN for a fully blocked row
    tr = trace_attention(x, num_heads=h, num_kv_heads=g, x_kv=x_kv, mask=mask, **w)
    q = _heads(x @ w["w_q"] + w["b_q"], h)[None]  # (1, h, T, d_k)
    k = _heads(x_kv @ w["w_k"] + w["b_k"], g)[None]  # (1, g, S, d_k)
    v = _heads(x_kv @ w["w_v"] + w["b_v"], g)[None]  # (1, g, S, d_v)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)[0]  # (h, T, d_v)
    torch.testing.assert_close(tr.context, reference, atol=1e-10, rtol=1e-10)
    assert tr.weights.shape == (h, T, S) and tr.k.shape == (h, S, d_k) and tr.v.shape == (h, S, d_v)
    for i in range(h):  # head i reads group i // (h / g)
        assert tr.kv_group(i) == i // (h // g)
        torch.testing.assert_close(tr.k[i], k[0, i // (h // g)], atol=1e-12, rtol=0)
    assert tr.kv_groups == g


def test_g_equal_h_is_plain_multi_head():
    x, x_kv, w = _gqa_layer(4, 6, 8, 4, 4, 2, 3, seed=1)
    plain = trace_attention(x, num_heads=4, x_kv=x_kv, mask=None, **w)
    grouped = trace_attention(x, num_heads=4, num_kv_heads=4, x_kv=x_kv, mask=None, **w)
    for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "context", "concat", "output"):
        assert torch.equal(getattr(plain, name), getattr(grouped, name)), name
    assert plain.kv_groups == grouped.kv_groups == 4


def test_multi_query_equals_multi_head_with_one_key_value_head_copied():
    h, d_k, d_v = 4, 3, 2
    x, _, w = _gqa_layer(5, 5, 6, h, 1, d_k, d_v, seed=2)
    mqa = trace_attention(x, num_heads=h, num_kv_heads=1, mask="causal", **w)
    copied = dict(w, w_k=w["w_k"].repeat(1, h), w_v=w["w_v"].repeat(1, h),
                  b_k=w["b_k"].repeat(h), b_v=w["b_v"].repeat(h))
    mha = trace_attention(x, num_heads=h, mask="causal", **copied)
    torch.testing.assert_close(mqa.weights, mha.weights, atol=1e-12, rtol=0)
    torch.testing.assert_close(mqa.output, mha.output, atol=1e-12, rtol=0)
    assert all(mqa.kv_group(i) == 0 for i in range(h))


@pytest.mark.parametrize("h,g,message", [(4, 3, "divide"), (4, 0, "at least 1"), (4, 8, "divide")])
def test_heads_that_do_not_divide_are_refused(h, g, message):
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match=message):
        trace_attention(x, torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8), num_heads=h, num_kv_heads=g)


def test_wrong_key_width_for_the_groups_is_refused():
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="w_k must have"):
        trace_attention(x, torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 4), num_heads=4, num_kv_heads=2)


def test_grouped_kwargs_average_each_groups_key_and_value_columns():
    p = random_projections(8, 2, 3, 4, seed=5, dtype=torch.float64)
    kw = grouped_kwargs(p, 2)
    assert kw["num_kv_heads"] == 2 and kw["w_k"].shape == (8, 4) and kw["w_v"].shape == (8, 6)
    torch.testing.assert_close(kw["w_k"][:, :2], (p.w_k[:, 0:2] + p.w_k[:, 2:4]) / 2)
    torch.testing.assert_close(kw["w_v"][:, 3:], (p.w_v[:, 6:9] + p.w_v[:, 9:12]) / 2)
    assert torch.equal(kw["w_q"], p.w_q)
    assert torch.equal(grouped_kwargs(p, 4)["w_k"], p.w_k)
    with pytest.raises(ValueError, match="divisor of 4 \\(1, 2, 4\\)"):
        grouped_kwargs(p, 3)


def test_compare_kv_sharing_gives_three_traces_with_h_heads_each():
    p = random_projections(8, 2, 2, 4, seed=1)
    traces = compare_kv_sharing(torch.randn(6, 8), p, 2, mask="causal")
    assert list(traces) == ["multi-head", "grouped-query", "multi-query"]
    assert [t.kv_groups for t in traces.values()] == [4, 2, 1]
    assert all(t.weights.shape == (4, 6, 6) for t in traces.values())


def test_fully_blocked_rows_stay_zero_with_grouped_heads():
    x, _, w = _gqa_layer(4, 4, 6, 4, 2, 2, 2, seed=4)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False
    tr = trace_attention(x, num_heads=4, num_kv_heads=2, mask=mask, **w)
    assert torch.equal(tr.weights[:, 2], torch.zeros(4, 4, dtype=torch.float64))
    assert not torch.isnan(tr.output).any()


# ---------------------------------------------------------------- sliding windows

@given(st.integers(1, 9), st.integers(1, 12), st.integers(1, 9))
@FAST
def test_sliding_window_mask_follows_its_definition(T, window, S):
    mask = sliding_window_mask(T, window, S)
    assert mask.shape == (T, S) and mask.dtype == torch.bool
    for i in range(T):
        for j in range(S):
            assert bool(mask[i, j]) == (0 <= i - j < window)


def test_a_window_as_long_as_the_sentence_is_causal_and_one_is_the_diagonal():
    assert torch.equal(sliding_window_mask(6, 6), causal_mask(6))
    assert torch.equal(sliding_window_mask(6, 100), causal_mask(6))
    assert torch.equal(sliding_window_mask(5, 1), torch.eye(5, dtype=torch.bool))


@pytest.mark.parametrize("window", [0, -2, 1.5, True, "3"])
def test_bad_windows_are_refused(window):
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(4, window)


def test_reach_grows_by_window_minus_one_per_layer():
    T, window, layers = 20, 4, 5
    reach = sliding_window_reach(T, window, layers)  # (L, T, T)
    assert reach.shape == (layers, T, T)
    assert torch.equal(reach[0], sliding_window_mask(T, window))
    for layer in range(layers):
        assert int(reach[layer, -1].sum()) == reach_span(window, layer + 1) == (layer + 1) * 3 + 1
    assert int(sliding_window_reach(6, 4, 5)[-1, -1].sum()) == 6  # capped by the sentence
    with pytest.raises(ValueError, match="layers"):
        sliding_window_reach(5, 2, 0)


# ---------------------------------------------------------------- the KV cache

cache_sizes = st.fixed_dictionaries({
    "T": st.integers(1, 7), "d_model": st.integers(1, 6), "d_k": st.integers(1, 4), "d_v": st.integers(1, 4),
    "h": st.sampled_from([1, 2, 4]), "g_index": st.integers(0, 2), "seed": st.integers(0, 2**31 - 1),
    "use_o": st.booleans(),
})


@given(cache_sizes)
@FAST
def test_decoding_with_a_cache_equals_full_causal_attention(p):
    h = p["h"]
    g = [d for d in (1, 2, 4) if h % d == 0][min(p["g_index"], len([d for d in (1, 2, 4) if h % d == 0]) - 1)]
    x, _, w = _gqa_layer(p["T"], p["T"], p["d_model"], h, g, p["d_k"], p["d_v"], p["seed"], bias=False)  # float64
    if not p["use_o"]:
        w.pop("w_o")
    steps = decode_with_kv_cache(x, **w, num_heads=h, num_kv_heads=g)
    full = trace_attention(x, **w, num_heads=h, num_kv_heads=g, mask="causal")
    assert len(steps) == p["T"]
    for t, step in enumerate(steps):
        assert step.q.shape == (h, 1, p["d_k"]) and step.k.shape == (h, t + 1, p["d_k"])
        assert step.weights.shape == (h, 1, t + 1)
        torch.testing.assert_close(step.weights[:, 0], full.weights[:, t, :t + 1], atol=1e-9, rtol=0)
    stacked = torch.cat([s.output for s in steps])
    torch.testing.assert_close(stacked, full.output, atol=1e-9, rtol=0)


@pytest.mark.parametrize("h,g", [(8, 2), (4, 4), (4, 1)])
def test_float32_cache_agrees_with_full_causal_attention_to_1e_6(h, g):
    p = random_projections(32, 8, 8, h, seed=h + g)  # float32, N(0, 1/d_model): unit-sized numbers
    x = torch.randn(24, 32, generator=torch.Generator().manual_seed(g))
    check = check_cache(x, p, num_kv_heads=g)
    assert check.max_abs_diff < 1e-6
    assert check.outputs.dtype == torch.float32


@pytest.mark.parametrize("g", [None, 1, 2])
def test_a_layer_with_biases_decoded_with_a_cache_equals_full_causal_attention(g):
    """A real model's layer adds b_Q, b_K, b_V: the cache's steps left them out (the full pass did not), and the two
    differed by up to 4 on this layer."""
    gen = torch.Generator().manual_seed(1)
    biases = {name: torch.randn(8, generator=gen, dtype=torch.float64) for name in ("b_q", "b_k", "b_v", "b_o")}
    p = replace(random_projections(8, 4, 4, 2, seed=0, dtype=torch.float64), **biases)
    x = torch.randn(5, 8, generator=gen, dtype=torch.float64)
    check = check_cache(x, p, num_kv_heads=g)
    assert check.max_abs_diff < 1e-12, check.max_abs_diff
    _, cache = decode_step(x[:1], KVCache.empty(2, 4, 4, like=x), p.w_q, p.w_k, p.w_v, num_heads=2, b_k=p.b_k,
                           b_v=p.b_v)
    torch.testing.assert_close(cache.k[1, 0], (x[0] @ p.w_k + p.b_k)[4:])  # head 2's key: the second 4 columns
    torch.testing.assert_close(cache.v[0, 0], (x[0] @ p.w_v + p.b_v)[:4])


def test_cache_rows_are_the_full_keys_rows():
    p = random_projections(8, 4, 4, 2, seed=3, dtype=torch.float64)
    x = torch.randn(5, 8, dtype=torch.float64)
    check = check_cache(x, p)
    assert check.max_abs_diff < 1e-12
    last = check.steps[-1]
    torch.testing.assert_close(last.k, check.full.k, atol=1e-12, rtol=0)  # the cache holds every key row
    torch.testing.assert_close(last.v, check.full.v, atol=1e-12, rtol=0)
    assert check_cache(x, p, num_kv_heads=1).max_abs_diff < 1e-12


def test_step_timing_reports_every_length():
    timings = time_generation_step((4, 16), d_model=8, num_heads=2, repeats=1)
    assert [t.length for t in timings] == [4, 16]
    assert all(t.cached_ms > 0 and t.recompute_ms > 0 for t in timings)
    with pytest.raises(ValueError):
        time_generation_step(())


# ---------------------------------------------------------------- KV-cache sizes of published models

def test_kv_cache_sizes_of_published_models():
    rows = {r["model"]: r for r in kv_cache_table(4096)}
    assert rows["Llama 2 7B"]["KiB per token"] == 512  # 32 layers · 32 heads · 128 · 2 (K and V) · 2 bytes
    assert rows["Llama 2 7B"]["cache MiB"] == 2048
    assert rows["Llama 3 8B"]["KiB per token"] == 128  # 8 kv heads: a quarter
    assert rows["Llama 3 8B"]["cache MiB if multi-head"] == 2048
    assert rows["Falcon 7B"]["attention"] == "multi-query"
    assert rows["GPT-2 small"]["KiB per token"] == 36
    mistral = {r["model"]: r for r in kv_cache_table(32768)}["Mistral 7B v0.1"]
    assert mistral["cached tokens"] == 4096 and mistral["cache MiB"] == 512  # the window caps the cache
    assert len(rows) == len(PUBLISHED_SHAPES)
    for bad in (0, -1, 10**9, 2.5):
        with pytest.raises(ValueError):
            kv_cache_table(bad)
    with pytest.raises(ValueError):
        kv_cache_table(10, bytes_per_value=3)


# ---------------------------------------------------------------- summaries of real attention

def _random_attention(L=3, h=4, T=6, seed=0, causal=False):
    scores = torch.randn(L, h, T, T, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    if causal:
        scores = scores.masked_fill(~causal_mask(T), float("-inf"))
    return torch.softmax(scores, dim=-1)


@pytest.mark.parametrize("causal", [False, True])
def test_rollout_rows_sum_to_one(causal):
    att = _random_attention(causal=causal)
    rollout = attention_rollout(att)
    assert rollout.shape == (3, 6, 6)
    torch.testing.assert_close(rollout.sum(-1), torch.ones(3, 6, dtype=torch.float64))
    assert bool((rollout >= 0).all())
    if causal:  # information never flows backwards in a decoder
        assert bool((rollout.triu(1) == 0).all())


def test_rollout_by_hand_for_one_and_two_layers():
    att = _random_attention(L=2, h=3, T=4, seed=7)
    eye = torch.eye(4, dtype=torch.float64)
    first = 0.5 * att[0].mean(0) + 0.5 * eye
    second = 0.5 * att[1].mean(0) + 0.5 * eye
    rollout = attention_rollout(att)
    torch.testing.assert_close(rollout[0], first)  # rows of 0.5·A + 0.5·I already sum to 1
    torch.testing.assert_close(rollout[1], second @ first)
    torch.testing.assert_close(attention_rollout(att, residual=False)[1], att[1].mean(0) @ att[0].mean(0))
    torch.testing.assert_close(mean_over_heads(att), att.mean(1))


def test_head_stats_find_a_previous_token_head_and_a_sink():
    T = 5
    previous = torch.zeros(T, T, dtype=torch.float64)
    previous[0, 0] = 1
    previous[torch.arange(1, T), torch.arange(0, T - 1)] = 1  # each token looks at the one before
    sink = torch.zeros(T, T, dtype=torch.float64)
    sink[:, 0] = 1  # everything on the first token
    uniform = torch.full((T, T), 1 / T, dtype=torch.float64)
    att = torch.stack([previous, sink, uniform])[None]  # (1, 3, T, T)
    stats = head_stats(att, is_special=[True, False, False, False, True])
    assert stats.previous[0].tolist() == [1.0, 0.25, pytest.approx(0.2)]
    assert stats.first[0].tolist() == [pytest.approx(0.4), 1.0, pytest.approx(0.2)]  # rows 1 and 2 of the first head
    assert stats.special[0].tolist() == [pytest.approx(0.4), 1.0, pytest.approx(0.4)]
    assert stats.entropy[0].tolist() == [0.0, 0.0, pytest.approx(math.log2(T))]
    assert head_roles(stats) == [["previous token", "first-token sink", ""]]
    with pytest.raises(ValueError, match="is_special"):
        head_stats(att, is_special=[True])


def test_a_causal_models_first_row_does_not_count_as_a_sink():
    """In a causal model the first token can attend only to itself, so its row always puts weight 1 on the first
    token; counted, it made every head of GPT-2 look more like a first-token sink than it is."""
    T = 5
    causal_previous = torch.zeros(T, T, dtype=torch.float64)
    causal_previous[0, 0] = 1
    causal_previous[torch.arange(1, T), torch.arange(0, T - 1)] = 1  # the token before, from the second row on
    att = causal_previous[None, None]  # (1, 1, T, T)
    assert head_stats(att).first.item() == pytest.approx(2 / T)  # rows 1 and 2 both on the first token
    assert head_stats(att, causal=True).first.item() == pytest.approx(1 / (T - 1))  # only row 2 of rows 2..T
    assert head_stats(att, causal=True).previous.item() == 1.0


# ---------------------------------------------------------------- a tiny GPT-2 generating

@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    pytest.importorskip("transformers")
    from test_real_models import save_tiny_bert, save_tiny_gpt2

    from attention_core import load_model

    gpt2 = load_model("tiny-gpt2", local_dir=save_tiny_gpt2(tmp_path_factory.mktemp("gpt2")), device="cpu")
    bert = load_model("tiny-bert", local_dir=save_tiny_bert(tmp_path_factory.mktemp("bert")), device="cpu")
    return gpt2, bert


def test_generation_with_the_models_cache_matches_a_full_pass(tiny_models):
    from attention_core.generation import generate_with_attention

    gpt2, _ = tiny_models
    gen = generate_with_attention(gpt2, "The cat sat on the mat.", num_new_tokens=4)
    P = gen.prompt_length
    assert gen.num_generated == 4 and len(gen.tokens) == P + 4
    for s, row in enumerate(gen.step_attentions):
        assert row.shape == (gpt2.num_layers, gpt2.num_heads, P + s + 1)
        torch.testing.assert_close(row.sum(-1), torch.ones(gpt2.num_layers, gpt2.num_heads), atol=1e-5, rtol=0)
    assert gen.max_abs_diff < 1e-5
    again = generate_with_attention(gpt2, "The cat sat on the mat.", num_new_tokens=4)
    assert again.tokens == gen.tokens  # greedy: the same text every time


def test_generation_passes_the_cache_by_the_name_the_installed_transformers_uses(tiny_models):
    """transformers 5 calls the KV cache ``cache`` and warns that ``past_key_values`` will be removed; 4.x knows
    only ``past_key_values``. Generation uses whichever the model's forward takes, so it keeps working past the
    removal and warns nothing now."""
    import warnings

    from attention_core.generation import _cache_argument, generate_with_attention

    gpt2, _ = tiny_models
    assert _cache_argument(gpt2.model) in inspect.signature(gpt2.model.forward).parameters
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        gen = generate_with_attention(gpt2, "The cat sat on the mat.", num_new_tokens=2)
    assert gen.num_generated == 2


def test_generation_refuses_bad_input(tiny_models):
    from attention_core.generation import MAX_NEW_TOKENS, generate_with_attention

    gpt2, bert = tiny_models
    with pytest.raises(ValueError, match="encoder"):
        generate_with_attention(bert, "The cat sat.")
    with pytest.raises(ValueError, match="empty"):
        generate_with_attention(gpt2, "   ")
    with pytest.raises(ValueError, match="new tokens"):
        generate_with_attention(gpt2, "The cat", num_new_tokens=MAX_NEW_TOKENS + 1)
    long = generate_with_attention(gpt2, "The cat sat on the mat. " * 20, num_new_tokens=3)
    assert long.truncated and len(long.tokens) <= 40
