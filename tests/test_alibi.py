"""ALiBi (attention_core.positions): the paper's slopes, the distance penalty, and attention with it agreeing with
PyTorch's fused kernel given the same penalty as an additive mask."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import AttentionInputError, alibi_attention, alibi_bias, alibi_slopes, attend


def test_the_papers_slopes():
    """Press et al. (2022): 8 heads start at 2^−1 and halve; a count that is no power of two takes the power of two
    below, then every other slope of twice that."""
    assert alibi_slopes(8).tolist() == [2.0 ** -i for i in range(1, 9)]
    assert alibi_slopes(2).tolist() == [2.0 ** -4, 2.0 ** -8]
    assert alibi_slopes(1).tolist() == [2.0 ** -8]
    assert alibi_slopes(6).tolist() == [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8, 2.0 ** -1, 2.0 ** -3]


def test_the_bias_is_minus_the_slope_times_the_distance():
    bias = alibi_bias(4, [0.5, 0.25])
    assert bias.shape == (2, 4, 4)
    assert bias[0, 3].tolist() == [-1.5, -1.0, -0.5, 0.0]
    assert bias[1, 0].tolist() == [0.0, -0.25, -0.5, -0.75]
    assert alibi_bias(3, 1.0).shape == (1, 3, 3)


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_attention_is_the_fused_kernel_with_the_penalty_as_a_float_mask(causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(4, 6, 8, dtype=torch.float64) for _ in range(3))
    slopes = alibi_slopes(4)
    mask = torch.ones(6, 6, dtype=torch.bool).tril() if causal else None
    context, weights = alibi_attention(q, k, v, slopes, mask)
    bias = alibi_bias(6, slopes, dtype=torch.float64)
    if causal:
        bias = bias.masked_fill(~mask, float("-inf"))
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    torch.testing.assert_close(weights.sum(-1), torch.ones(4, 6, dtype=torch.float64))


def test_a_slope_of_zero_is_plain_attention_and_a_steeper_one_looks_closer():
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, 7, 4) for _ in range(3))
    plain_context, plain_weights = attend(q, k, v)
    torch.testing.assert_close(alibi_attention(q, k, v, 0.0)[1], plain_weights)
    near = [alibi_attention(q, k, v, slope)[1][0, 3, 2:5].sum().item() for slope in (0.0, 0.5, 2.0)]
    assert near[0] < near[1] < near[2], "the weight on the query and its neighbours grows with the slope"


def test_a_fully_blocked_row_gets_zero_weights():
    q = k = v = torch.randn(1, 3, 2)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    _, weights = alibi_attention(q, k, v, 0.5, mask)
    assert weights[0, 1].tolist() == [0.0, 0.0, 0.0] and not torch.isnan(weights).any()


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_a_head_count_that_is_no_whole_number_is_refused(bad):
    with pytest.raises(AttentionInputError):
        alibi_slopes(bad)


def test_cross_attention_shapes_are_refused():
    with pytest.raises(AttentionInputError, match="self-attention"):
        alibi_attention(torch.randn(1, 3, 2), torch.randn(1, 4, 2), torch.randn(1, 4, 2), 0.5)


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 16), length=st.integers(1, 9), shift=st.integers(0, 50))
def test_the_penalty_depends_on_distance_only(heads, length, shift):
    """Like RoPE's scores, the penalty of a pair depends on how far apart the tokens are: the last `length` rows and
    columns of a longer sequence's bias are the shorter one's."""
    slopes = alibi_slopes(heads)
    assert len(slopes) == heads and (slopes > 0).all() and (slopes < 1).all()
    torch.testing.assert_close(alibi_bias(length + shift, slopes)[:, shift:, shift:], alibi_bias(length, slopes))
