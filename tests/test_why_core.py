"""The core behind the why-lessons: scaling experiments, cross-attention, cost measurements."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import (LAYER_KINDS, LessonConfig, cost_lengths, cross_attention, dot_product_variance,
                            fit_loglog_slope, fitted_slope, operation_counts, row_entropy, run_lesson,
                            softmax_jacobian_norm, softmax_saturation, source_tokens, time_layer, unscaled_weights,
                            weights_bytes)

# --------------------------------------------------------------------------------------------- scaling


@pytest.mark.parametrize("d_k", [1, 4, 64, 512])
def test_sampled_variance_of_q_dot_k_is_d_k(d_k):
    sample = dot_product_variance(d_k, 2000, seed=0)
    assert abs(sample.variance - d_k) <= 4 * sample.standard_error
    assert abs(sample.scaled_variance - 1) <= 4 * sample.standard_error / d_k


def test_standard_error_matches_the_spread_over_seeds():
    variances = torch.tensor([dot_product_variance(16, 500, seed=s).variance for s in range(200)])
    predicted = dot_product_variance(16, 500).standard_error
    assert 0.8 < float(variances.std()) / predicted < 1.25


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 10**6), spread=st.floats(0.1, 30))
def test_softmax_jacobian_norm_matches_autograd(n, seed, spread):
    scores = torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * spread
    jacobian = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores)  # (n, n)
    norm = softmax_jacobian_norm(torch.softmax(scores, dim=-1))
    assert math.isclose(float(norm), float(jacobian.norm()), rel_tol=1e-9, abs_tol=1e-12)


def test_unscaled_softmax_saturates_and_its_gradient_vanishes():
    small_raw, small_scaled = softmax_saturation(1, 16, 800)
    big_raw, big_scaled = softmax_saturation(512, 16, 800)
    assert small_raw == small_scaled.__class__(1, False, small_scaled.max_weight, small_scaled.entropy,
                                               small_scaled.jacobian_norm), "d_k = 1: scaling changes nothing"
    assert big_raw.max_weight > 0.9 and big_raw.entropy < 0.3 and big_raw.jacobian_norm < 0.12
    assert big_scaled.max_weight < 0.4 and big_scaled.entropy > 1.8 and big_scaled.jacobian_norm > 0.25
    for stats in (small_raw, big_raw, big_scaled):
        assert 1 / 16 <= stats.max_weight <= 1 and 0 <= stats.entropy <= math.log(16)


@pytest.mark.parametrize("kwargs", [{"d_k": 0}, {"d_k": 513}, {"num_keys": 0}, {"num_keys": 65}, {"samples": 2001},
                                    {"d_k": 2.0}])
def test_scaling_experiments_refuse_bad_sizes(kwargs):
    args = {"d_k": 8, "num_keys": 4, "samples": 10} | kwargs
    with pytest.raises(ValueError):
        softmax_saturation(**args)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_row_entropy_counts_blocked_keys_as_zero(dtype):
    weights = torch.tensor([[1.0, 0.0, 0.0, 0.0],  # one allowed key: entropy 0
                            [0.5, 0.5, 0.0, 0.0],  # two of four allowed: log 2
                            [0.25, 0.25, 0.25, 0.25],  # uniform: log 4
                            [0.0, 0.0, 0.0, 0.0]], dtype=dtype)  # every key blocked: 0, not NaN
    entropy = row_entropy(weights)
    assert entropy.dtype == dtype and torch.isfinite(entropy).all() and not entropy.signbit().any()
    torch.testing.assert_close(entropy, torch.tensor([0.0, math.log(2), math.log(4), 0.0], dtype=dtype))


def test_row_entropy_of_causal_weights_is_finite_in_every_row():
    lesson = run_lesson(LessonConfig(mask="causal"))
    for weights in (lesson.trace.weights, unscaled_weights(lesson.trace)):
        entropy = row_entropy(weights)  # (h, T)
        assert torch.isfinite(entropy).all()
        assert entropy[:, 0].abs().max() < 1e-6  # the first token sees only itself
        assert (entropy <= torch.arange(1, 8).log() + 1e-5).all()  # at most log(allowed keys)


def test_unscaled_weights_are_softmax_of_raw_scores_with_the_same_mask():
    lesson = run_lesson(LessonConfig(mask="causal"))
    raw = unscaled_weights(lesson.trace)
    expected = F.scaled_dot_product_attention(lesson.trace.q, lesson.trace.k, torch.eye(7).expand(2, 7, 7),
                                              is_causal=True, scale=1.0)
    torch.testing.assert_close(raw, expected)


# ----------------------------------------------------------------------------------------------- cross


def test_cross_attention_is_t_by_s_and_matches_sdpa():
    lesson = run_lesson(LessonConfig())
    cross = cross_attention(lesson, "Le chat s'est assis sur le tapis.")
    T, S = len(lesson.tokens), len(cross.source_tokens)
    assert (T, S) == (7, 8)
    assert cross.trace.weights.shape == (2, T, S)
    assert cross.row_sum_error < 1e-6
    p = lesson.projections
    q = (lesson.x @ p.w_q).view(T, 2, 4).transpose(0, 1)
    k = (cross.x_kv @ p.w_k).view(S, 2, 4).transpose(0, 1)
    v = (cross.x_kv @ p.w_v).view(S, 2, 4).transpose(0, 1)
    torch.testing.assert_close(cross.trace.context, F.scaled_dot_product_attention(q, k, v))


def test_padded_source_keys_get_no_weight():
    lesson = run_lesson(LessonConfig())
    cross = cross_attention(lesson, "Le chat.", pad_to=6)
    assert cross.source_tokens == ["Le", "chat", ".", "[PAD]", "[PAD]", "[PAD]"]
    assert torch.all(cross.trace.weights[..., 3:] == 0)
    assert cross.row_sum_error < 1e-6


@pytest.mark.parametrize("source, pad_to", [("", 0), ("a b c d", 2), ("a", 99), ("x " * 40, 0)])
def test_cross_attention_refuses_bad_sources(source, pad_to):
    with pytest.raises(ValueError):
        source_tokens(source, pad_to)


def test_cross_attention_checks_real_source_vectors():
    lesson = run_lesson(LessonConfig())
    with pytest.raises(ValueError):
        cross_attention(lesson, "Le chat.", source_vectors=torch.zeros(2, 8))
    cross = cross_attention(lesson, "Le chat.", pad_to=4, source_vectors=torch.ones(3, 8))
    assert torch.equal(cross.x_kv[3], torch.zeros(8))


# ------------------------------------------------------------------------------------------------ cost


def test_loglog_slope_recovers_a_power_law():
    xs = [64, 128, 256, 512]
    slope, intercept = fit_loglog_slope(xs, [3 * x**2 for x in xs])
    assert math.isclose(slope, 2, abs_tol=1e-9) and math.isclose(intercept, math.log(3), abs_tol=1e-9)
    slope, used = fitted_slope(xs, [1e-3 + 1e-9 * x**2 for x in xs], from_length=256)
    assert used == [256, 512]
    assert fitted_slope([64, 128], [1.0, 2.0])[1] == [64, 128]


@pytest.mark.parametrize("xs, ys", [([1], [1]), ([1, 2], [1, 0]), ([2, 2], [1, 3]), ([1, 2], [1, float("nan")])])
def test_loglog_slope_refuses_unusable_points(xs, ys):
    with pytest.raises(ValueError):
        fit_loglog_slope(xs, ys)


def test_cost_sizes():
    assert cost_lengths(1024) == [64, 128, 256, 512, 1024]
    assert weights_bytes(2048) == 2048 * 2048 * 4 == 16 * 2**20
    counts = operation_counts(64, 64)
    assert counts["self-attention"] == counts["recurrent"]
    assert operation_counts(128, 64)["self-attention"] > operation_counts(128, 64)["recurrent"]
    for bad in (0, 10**6, 100.5):
        with pytest.raises(ValueError):
            cost_lengths(bad)


@pytest.mark.parametrize("kind", LAYER_KINDS)
def test_time_layer_times_each_layer(kind):
    seconds = time_layer(kind, 64, 16, "cpu", min_run_time=0.01)
    assert 0 < seconds < 1


@pytest.mark.parametrize("args", [("conv", 64, 16), ("attend", 1, 16), ("attend", 64, 0), ("attend", 64, 999)])
def test_time_layer_refuses_bad_settings(args):
    with pytest.raises(ValueError):
        time_layer(*args, min_run_time=0.01)
