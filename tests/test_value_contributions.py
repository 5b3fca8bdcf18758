"""What each token adds through a head (Kobayashi et al., 2020): α_ij ‖v_j W_O^h‖ and its shares of a row."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import (AttentionInputError, sink_shares, sink_shares_of, trace_attention, value_contributions,
                            value_norms)


def test_hand_worked_shares():
    """One head, two keys: v = (3, 4) and (0, 1) are 5 and 1 long. A row of weights 0.5, 0.5 adds 2.5 and 0.5
    (shares 5/6 and 1/6); one of 0.25, 0.75 adds 1.25 and 0.75 (0.625 and 0.375)."""
    v = torch.tensor([[[3.0, 4.0], [0.0, 1.0]]])  # (1, 2, 2)
    weights = torch.tensor([[[0.5, 0.5], [0.25, 0.75]]])  # (1, 2, 2)
    norms = value_norms(v)
    assert torch.equal(norms, torch.tensor([[5.0, 1.0]]))
    found = value_contributions(weights, norms)
    torch.testing.assert_close(found.added, torch.tensor([[[2.5, 0.5], [1.25, 0.75]]]))
    torch.testing.assert_close(found.share, torch.tensor([[[5 / 6, 1 / 6], [0.625, 0.375]]]))


def test_hand_worked_output_projection():
    """Two heads of d_v = 1: head 1's rows of W_O are [[1, 0]], head 2's [[0, 2]]; v_j = 3 in head 1 hands on
    (3, 0), 3 long; v_j = 3 in head 2 hands on (0, 6), 6 long."""
    v = torch.tensor([[[3.0]], [[3.0]]])  # (2, 1, 1)
    w_o = torch.tensor([[1.0, 0.0], [0.0, 2.0]])  # (2·1, 2)
    assert torch.equal(value_norms(v, w_o), torch.tensor([[3.0], [6.0]]))


def test_what_a_head_adds_is_the_sum_of_its_parts():
    """Σ_j α_ij f(x_j) over a head's keys is the head's part of the output, and the heads' parts plus b_O are
    trace_attention's output; each part's length is at most the sum of the lengths ``added`` gives (triangle)."""
    torch.manual_seed(0)
    T, d_model, h, d_k = 5, 8, 2, 4
    x = torch.randn(T, d_model)
    w_q, w_k, w_v = (torch.randn(d_model, h * d_k) for _ in range(3))
    w_o, b_o, b_v = torch.randn(h * d_k, d_model), torch.randn(d_model), torch.randn(h * d_k)
    trace = trace_attention(x, w_q, w_k, w_v, num_heads=h, w_o=w_o, b_o=b_o, b_v=b_v)
    f = trace.v @ w_o.reshape(h, d_k, d_model)  # (h, T, d_model)
    parts = trace.weights @ f  # (h, T, d_model)
    torch.testing.assert_close(parts.sum(0) + b_o, trace.output)
    found = value_contributions(trace.weights, value_norms(trace.v, w_o))
    torch.testing.assert_close(found.added, trace.weights * f.norm(dim=-1).unsqueeze(-2))
    assert (parts.norm(dim=-1) <= found.added.sum(-1) + 1e-5).all()


def test_a_row_that_adds_nothing_has_no_shares():
    """A fully blocked row (all weights 0) and a row on a zero vector only: shares 0, never NaN."""
    weights = torch.tensor([[[0.0, 0.0], [1.0, 0.0]]])
    found = value_contributions(weights, torch.tensor([[0.0, 2.0]]))
    assert torch.equal(found.share, torch.zeros(1, 2, 2))


@settings(max_examples=60, deadline=None)
@given(h=st.integers(1, 3), T=st.integers(1, 6), S=st.integers(1, 6), d_v=st.integers(1, 5), seed=st.integers(0, 999))
def test_shares_are_a_distribution_over_keys(h, T, S, d_v, seed):
    generator = torch.Generator().manual_seed(seed)
    weights = torch.randn(h, T, S, generator=generator).softmax(-1)
    norms = value_norms(torch.randn(h, S, d_v, generator=generator))
    share = value_contributions(weights, norms).share
    assert share.shape == (h, T, S) and (share >= 0).all()
    torch.testing.assert_close(share.sum(-1), torch.ones(h, T))
    torch.testing.assert_close(value_contributions(weights, 7.0 * norms).share, share)  # only relative lengths count
    equal = value_contributions(weights, torch.ones(h, S)).share  # vectors all as long: the shares are the weights
    torch.testing.assert_close(equal, weights)


def test_sink_shares_hand_worked():
    """One layer, one head, three tokens, the last a sink 0.5 long against 2 for the others. Rows give it 0.6, 0.5
    and 0.2: it adds 0.3 / 1.1, 0.25 / 1.25 and 0.1 / 1.7 of each row."""
    attentions = torch.tensor([[[[0.2, 0.2, 0.6], [0.25, 0.25, 0.5], [0.4, 0.4, 0.2]]]])  # (1, 1, 3, 3)
    norms = torch.tensor([[[2.0, 2.0, 0.5]]])  # (1, 1, 3)
    weight, added = sink_shares(attentions, norms, [False, False, True])
    torch.testing.assert_close(weight, torch.tensor([(0.6 + 0.5 + 0.2) / 3]))
    torch.testing.assert_close(added, torch.tensor([(0.3 / 1.1 + 0.25 / 1.25 + 0.1 / 1.7) / 3]))
    causal_weight, _ = sink_shares(attentions, norms, [False, False, True], causal=True)  # without the first row
    torch.testing.assert_close(causal_weight, torch.tensor([(0.5 + 0.2) / 2]))
    weight_of, added_of = sink_shares_of(attentions, norms, [False, False, True], 0)  # the first row, per head
    torch.testing.assert_close(weight_of, torch.tensor([[0.6]]))
    torch.testing.assert_close(added_of, torch.tensor([[0.3 / 1.1]]))


@pytest.mark.parametrize("call", [
    lambda: value_norms(torch.ones(2, 3)),
    lambda: value_norms(torch.ones(2, 3, 4), torch.ones(6, 5)),
    lambda: value_contributions(torch.ones(2, 3, 3), torch.ones(2, 4)),
    lambda: sink_shares(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3), [True, False]),
    lambda: sink_shares_of(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3), [True, False, False], 3),
])
def test_mismatched_shapes_are_named(call):
    with pytest.raises(AttentionInputError):
        call()
