"""attention_core.tiles: attention a tile of keys at a time (online softmax), as a fused kernel computes it.

Golden numbers worked by hand; agreement with ``attend`` and with PyTorch's fused
``scaled_dot_product_attention`` for every tile size; property tests over shapes, masks and tile sizes.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import AttentionInputError, attend, tiled_attention


def one_query(scores: list[float], values: list[float]):
    """q = [1] and k = scores (d_k = 1: the scaled scores are the scores), v a column of ``values``."""
    q = torch.tensor([[1.0]], dtype=torch.float64)
    k = torch.tensor(scores, dtype=torch.float64).unsqueeze(-1)
    v = torch.tensor(values, dtype=torch.float64).unsqueeze(-1)
    return q, k, v


def test_two_tiles_worked_by_hand():
    """Scores 1, 3, 2 in tiles of 2: tile 1 sets m = 3, ℓ = e^(1−3) + e^0, o = e^−2·1 + 1·2; tile 2 brings no larger
    score (rescale 1) and adds e^(2−3) and e^−1·3."""
    run = tiled_attention(*one_query([1, 3, 2], [1, 2, 3]), tile_size=2)
    assert (run.starts, run.ends) == ((0, 2), (2, 3))
    assert run.tile_max[:, 0].tolist() == [3.0, 2.0]
    assert run.running_max[:, 0].tolist() == [3.0, 3.0]
    assert run.rescale[:, 0].tolist() == [0.0, 1.0]  # nothing summed before tile 1
    assert run.running_sum[:, 0].tolist() == pytest.approx([math.exp(-2) + 1, math.exp(-2) + 1 + math.exp(-1)])
    assert run.running_out[:, 0, 0].tolist() == pytest.approx([math.exp(-2) + 2, math.exp(-2) + 2 + 3 * math.exp(-1)])
    weights = torch.softmax(torch.tensor([1.0, 3.0, 2.0], dtype=torch.float64), dim=0)
    assert run.context.item() == pytest.approx((weights * torch.tensor([1.0, 2.0, 3.0])).sum().item())
    assert run.context.item() == pytest.approx(2.15470, abs=1e-5)


def test_a_larger_score_later_rescales_what_was_summed():
    """Scores 3, 1, 5 one key at a time: the third key's 5 shrinks the sum so far by e^(3−5)."""
    run = tiled_attention(*one_query([3, 1, 5], [0, 0, 1]), tile_size=1)
    assert run.running_max[:, 0].tolist() == [3.0, 3.0, 5.0]
    assert run.rescale[:, 0].tolist() == pytest.approx([0.0, 1.0, math.exp(-2)])
    assert run.running_sum[-1, 0].item() == pytest.approx(math.exp(-2) + math.exp(-4) + 1)
    first_two = 1 + math.exp(-2)
    assert run.weights_so_far(1)[0].tolist() == pytest.approx([1 / first_two, math.exp(-2) / first_two, 0.0])
    assert run.weights_so_far(2)[0].tolist() == pytest.approx(torch.softmax(torch.tensor([3.0, 1, 5]), 0).tolist())


@pytest.mark.parametrize("tile_size", [1, 2, 3, 5, 8, 13])
def test_every_tile_size_gives_attend_and_the_fused_kernels_context(tile_size):
    torch.manual_seed(tile_size)
    q, k, v = torch.randn(2, 3, 6, 4, dtype=torch.float64), torch.randn(2, 3, 8, 4, dtype=torch.float64), \
        torch.randn(2, 3, 8, 5, dtype=torch.float64)
    causal = torch.ones(6, 8, dtype=torch.bool).tril(diagonal=2)
    for mask in (None, causal):
        run = tiled_attention(q, k, v, mask, tile_size=tile_size)
        context, weights = attend(q, k, v, mask)
        torch.testing.assert_close(run.context, context)
        torch.testing.assert_close(run.context, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
        torch.testing.assert_close(run.weights_so_far(len(run.starts) - 1), weights)
        assert run.running_max.shape == run.running_sum.shape == (2, 3, math.ceil(8 / tile_size), 6)
        assert run.running_out.shape == (2, 3, math.ceil(8 / tile_size), 6, 5)


def test_a_fully_blocked_row_gets_a_zero_context_and_no_nan():
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    mask[2, :3] = False  # nothing allowed in the first tile of 2, nor in the second's first key
    run = tiled_attention(q, k, v, mask, tile_size=2)
    assert run.context[1].tolist() == [0.0, 0.0]
    for name in ("running_max", "rescale", "running_sum", "running_out", "context"):
        assert not torch.isnan(getattr(run, name)).any(), name
    assert run.rescale[:2, 2].tolist() == [0.0, 0.0]
    torch.testing.assert_close(run.context, attend(q, k, v, mask)[0])
    assert run.weights_so_far(0)[2].tolist() == [0.0] * 5


@pytest.mark.parametrize("tile_size", [0, -1, 1.5, True, "2"])
def test_a_tile_size_that_is_no_count_of_keys_is_refused(tile_size):
    with pytest.raises(AttentionInputError, match="tile_size"):
        tiled_attention(torch.randn(2, 3), torch.randn(4, 3), torch.randn(4, 3), tile_size=tile_size)


def test_no_keys_is_refused():
    with pytest.raises(AttentionInputError):
        tiled_attention(torch.randn(2, 3), torch.randn(0, 3), torch.randn(0, 3), tile_size=1)


@settings(max_examples=60, deadline=None)
@given(T=st.integers(1, 7), S=st.integers(1, 9), d_k=st.integers(1, 5), d_v=st.integers(1, 4),
       tile_size=st.integers(1, 10), seed=st.integers(0, 10_000), masked=st.booleans())
def test_any_shape_mask_and_tile_size_agree_with_attend(T, S, d_k, d_v, tile_size, seed, masked):
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(T, d_k, generator=generator, dtype=torch.float64) * 3
    k = torch.randn(S, d_k, generator=generator, dtype=torch.float64) * 3
    v = torch.randn(S, d_v, generator=generator, dtype=torch.float64)
    mask = torch.rand(T, S, generator=generator) > 0.5 if masked else None
    run = tiled_attention(q, k, v, mask, tile_size=tile_size)
    torch.testing.assert_close(run.context, attend(q, k, v, mask)[0])
    assert len(run.starts) == math.ceil(S / tile_size) and run.ends[-1] == S
    assert (run.running_max[1:] >= run.running_max[:-1]).all(), "the running max never falls"
    assert ((run.rescale >= 0) & (run.rescale <= 1)).all(), "a rescale only ever shrinks what was summed"
    sums = run.weights_so_far(len(run.starts) - 1).sum(dim=-1)
    allowed = mask.any(dim=-1) if masked else torch.ones(T, dtype=torch.bool)
    torch.testing.assert_close(sums, allowed.to(sums.dtype))
