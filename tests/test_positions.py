"""Positional encodings and RoPE in attention_core: against their formulas, their properties, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import (apply_rope, embed_tokens, equivariance_check, random_projections, rope_shift_check,
                            shuffled_order, sinusoidal_positions, tokenize)

# ------------------------------------------------------------------------------------------ sinusoidal


def reference_encoding(length: int, d_model: int) -> list[list[float]]:
    """Vaswani et al., section 3.5, written out one number at a time."""
    rows = []
    for pos in range(length):
        row = []
        for col in range(d_model):
            i = col // 2
            angle = pos / 10000 ** (2 * i / d_model)
            row.append(math.sin(angle) if col % 2 == 0 else math.cos(angle))
        rows.append(row)
    return rows


def test_sinusoidal_golden_numbers():
    pe = sinusoidal_positions(3, 4, dtype=torch.float64)
    expected = torch.tensor([
        [0.0, 1.0, 0.0, 1.0],
        [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
        [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)],
    ], dtype=torch.float64)
    torch.testing.assert_close(pe, expected, rtol=0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 60), d_model=st.integers(1, 40))
def test_sinusoidal_matches_the_formula_for_any_size(length, d_model):
    pe = sinusoidal_positions(length, d_model, dtype=torch.float64)
    assert pe.shape == (length, d_model)
    torch.testing.assert_close(pe, torch.tensor(reference_encoding(length, d_model), dtype=torch.float64),
                               rtol=0, atol=1e-12)


def test_sinusoidal_follows_dtype_and_device():
    pe = sinusoidal_positions(5, 6, dtype=torch.float16, device="cpu")
    assert pe.dtype == torch.float16 and pe.device.type == "cpu"


def test_sinusoidal_positions_are_all_different():
    pe = sinusoidal_positions(64, 16, dtype=torch.float64)
    distances = torch.cdist(pe, pe) + torch.eye(64) * 10
    assert distances.min() > 0.01


@pytest.mark.parametrize("length, d_model", [(0, 4), (4, 0), (-1, 4), (2.5, 4), (True, 4), (4, "8"), (10**6, 4)])
def test_sinusoidal_refuses_bad_sizes(length, d_model):
    with pytest.raises(ValueError):
        sinusoidal_positions(length, d_model)


# ------------------------------------------------------------------------------------------------ RoPE


def reference_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE as complex multiplication (Su et al., eq. 34): pair (x_2i, x_2i+1) is the complex number
    x_2i + i·x_2i+1, multiplied by e^{i·p·θ_i}."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                       positions.double().unsqueeze(-1) * theta)
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).reshape(x.shape)


def test_rope_turns_one_pair_by_its_position():
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    turned = apply_rope(x)
    expected = torch.tensor([[1.0, 0.0], [math.cos(1), math.sin(1)], [-2 * math.sin(2), 2 * math.cos(2)]],
                            dtype=torch.float64)
    torch.testing.assert_close(turned, expected, rtol=0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 12), half=st.integers(1, 16), heads=st.integers(1, 3), seed=st.integers(0, 10**6),
       base=st.sampled_from([100.0, 10000.0, 500000.0]))
def test_rope_agrees_with_complex_rotation_and_keeps_norms(T, half, heads, seed, base):
    x = torch.randn(heads, T, 2 * half, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    positions = torch.arange(T) * 3 + 5
    turned = apply_rope(x, positions, base)
    torch.testing.assert_close(turned, reference_rope(x, positions, base), rtol=0, atol=1e-12)
    torch.testing.assert_close(turned.norm(dim=-1), x.norm(dim=-1), rtol=1e-12, atol=1e-12)


def test_rope_leaves_position_zero_unchanged_and_moves_the_others():
    x = torch.randn(5, 8)
    turned = apply_rope(x)
    assert torch.equal(turned[0], x[0])
    assert (turned[1:] - x[1:]).abs().amax(dim=-1).min() > 1e-3


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 500), n=st.integers(0, 500), shift=st.integers(-200, 2000), seed=st.integers(0, 10**6))
def test_rope_score_depends_only_on_the_distance(m, n, shift, seed):
    generator = torch.Generator().manual_seed(seed)
    q, k = torch.randn(1, 16, generator=generator, dtype=torch.float64), torch.randn(1, 16, generator=generator,
                                                                                      dtype=torch.float64)
    score = apply_rope(q, [m]) @ apply_rope(k, [n]).T
    moved = apply_rope(q, [m + shift]) @ apply_rope(k, [n + shift]).T
    torch.testing.assert_close(moved, score, rtol=0, atol=1e-10)


def test_rope_keeps_dtype_and_float32_norms():
    x = torch.randn(2, 7, 6)
    turned = apply_rope(x)
    assert turned.dtype == torch.float32 and turned.shape == x.shape
    torch.testing.assert_close(turned.norm(dim=-1), x.norm(dim=-1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("x, positions, base", [
    (torch.randn(4, 5), None, 10000.0),  # odd d
    (torch.randn(4, 0), None, 10000.0),  # no features
    (torch.randn(4), None, 10000.0),  # one dim only
    (torch.randn(4, 6), [0, 1, 2], 10000.0),  # wrong number of positions
    (torch.randn(2, 6), [0, float("nan")], 10000.0),
    (torch.randn(2, 6), [0, float("inf")], 10000.0),
    (torch.randn(2, 6), None, 0.5),
    (torch.randn(2, 6), None, float("inf")),
])
def test_rope_refuses_bad_input(x, positions, base):
    with pytest.raises(ValueError):
        apply_rope(x, positions, base)


# ---------------------------------------------------------------------------------- lesson checks


@pytest.fixture
def sentence():
    tokens = tokenize("The cat sat on the mat.")
    return embed_tokens(tokens, 8, seed=42), random_projections(8, 4, 4, 2, seed=42)


def test_shuffled_order_is_a_seeded_shuffle_that_moves_something():
    for length in (2, 3, 7, 20):
        for seed in range(20):
            order = shuffled_order(length, seed)
            assert sorted(order) == list(range(length)) and order != list(range(length))
            assert order == shuffled_order(length, seed)
    assert shuffled_order(1, 3) == [0]


def test_without_positions_shuffling_only_reorders_the_output(sentence):
    x, projections = sentence
    check = equivariance_check(x, projections, shuffled_order(len(x), 1))
    assert check.gap < 1e-5
    torch.testing.assert_close(check.shuffled_output, check.output[check.order])


def test_positional_encodings_break_the_equivariance(sentence):
    x, projections = sentence
    encodings = sinusoidal_positions(len(x), x.shape[1])
    check = equivariance_check(x, projections, shuffled_order(len(x), 1), positions=encodings)
    assert check.gap > 1e-2


def test_equivariance_check_refuses_a_bad_order(sentence):
    x, projections = sentence
    with pytest.raises(ValueError):
        equivariance_check(x, projections, [0, 0, 1, 2, 3, 4, 5])


@pytest.mark.parametrize("shift", [0, 1, 37, 1000, 99_999, -50])
def test_rope_shift_leaves_scores_unchanged(sentence, shift):
    x, projections = sentence
    q, k = x @ projections.w_q[:, :4], x @ projections.w_k[:, :4]
    check = rope_shift_check(q, k, shift)
    assert check.gap <= 1e-6
    plain = q.double() @ k.double().T / 2
    assert (check.scores - plain).abs().max() > 1e-2, "RoPE must change the scores of tokens that are apart"


@pytest.mark.parametrize("shift", [float("nan"), float("inf"), 10**9, "3"])
def test_rope_shift_refuses_bad_shifts(shift):
    with pytest.raises(ValueError):
        rope_shift_check(torch.randn(3, 4), torch.randn(3, 4), shift)


def test_a_one_token_sentence_names_its_one_position():
    """"PE for positions 0–0" and "positions 100…100" read oddly for a one-word sentence."""
    import json
    import re

    from apptest_support import open_page

    at = open_page("pages/positions.py", {"sentence": "Hello"})
    titles = " ".join(json.dumps(json.loads(c.proto.spec).get("title", ""), ensure_ascii=False)
                      for c in at.get("vega_lite_chart"))
    assert "PE for position 0 (rows)" in titles and "RoPE scores ÷ √d_k, position 0" in titles, titles
    assert not re.search(r"\b(\d+)[–…]\1\b", titles), titles  # e.g. "positions 100…100"


@pytest.mark.parametrize("d", [1, 3, 33])
def test_the_shift_check_with_an_odd_width_turns_whole_pairs_and_keeps_the_last_feature(d):
    """An odd d turns its first d − 1 features in pairs and leaves the last as it is: the scores still depend only
    on distances, and the last feature's part of each score is the plain product."""
    from attention_core import rope_shift_check

    generator = torch.Generator().manual_seed(d)
    q, k = torch.randn(5, d, generator=generator), torch.randn(5, d, generator=generator)
    check = rope_shift_check(q, k, 250)
    assert check.gap <= 1e-9
    last_only = rope_shift_check(torch.nn.functional.pad(q[:, -1:], (d - 1, 0)),
                                 torch.nn.functional.pad(k[:, -1:], (d - 1, 0)), 0)
    plain = (q[:, -1:].double() @ k[:, -1:].double().T) / d ** 0.5
    assert torch.allclose(last_only.scores, plain)
