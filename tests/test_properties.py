"""Properties of attention that hold for any sizes and numbers (hypothesis)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

from attention_core import attend, causal_mask, trace_attention  # noqa: E402
from attention_core.tokens import _TOKEN, first_tokens  # noqa: E402

FAST = settings(max_examples=30, deadline=None)

sizes = st.fixed_dictionaries({
    "T": st.integers(1, 6),
    "S": st.integers(1, 6),
    "d_model": st.integers(1, 6),
    "d_k": st.integers(1, 4),
    "d_v": st.integers(1, 4),
    "h": st.integers(1, 3),
    "d_out": st.integers(1, 5),
    "seed": st.integers(0, 2**31 - 1),
})


def _layer(T, S, d_model, d_k, d_v, h, d_out, seed, *, cross=True, scale=1.0):
    g = torch.Generator().manual_seed(seed)

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    x = r(T, d_model)
    x_kv = r(S, d_model) if cross else None
    weights = dict(w_q=r(d_model, h * d_k), w_k=r(d_model, h * d_k), w_v=r(d_model, h * d_v),
                   w_o=r(h * d_v, d_out), b_q=r(h * d_k), b_k=r(h * d_k), b_v=r(h * d_v), b_o=r(d_out))
    return x, x_kv, weights, g


@FAST
@given(sizes, st.floats(0.0, 1.0))
def test_rows_sum_to_one_or_zero_and_masked_positions_are_zero(p, keep):
    x, x_kv, w, g = _layer(**p, scale=2.0)
    mask = torch.rand(p["h"], p["T"], p["S"], generator=g) < keep
    tr = trace_attention(x, num_heads=p["h"], x_kv=x_kv, mask=mask, **w)
    sums = tr.weights.sum(-1)
    live = mask.any(-1)
    assert torch.allclose(sums[live], torch.ones_like(sums[live]), atol=1e-12)
    assert torch.equal(sums[~live], torch.zeros_like(sums[~live]))
    assert torch.all(tr.weights[~mask] == 0)  # exactly zero, not just small
    assert torch.all(tr.weights >= 0)
    assert not torch.isnan(tr.output).any()
    assert torch.all(tr.context[~live] == 0)


@FAST
@given(sizes)
def test_scaled_is_scores_over_sqrt_dk_exactly(p):
    x, x_kv, w, _ = _layer(**p)
    tr = trace_attention(x, num_heads=p["h"], x_kv=x_kv, **w)
    assert torch.equal(tr.scaled, tr.scores / math.sqrt(p["d_k"]))
    torch.testing.assert_close(tr.scores, tr.q @ tr.k.transpose(-2, -1), atol=1e-10, rtol=1e-10)


@FAST
@given(sizes)
def test_shapes_with_cross_attention(p):
    x, x_kv, w, _ = _layer(**p)
    h, T, S = p["h"], p["T"], p["S"]
    tr = trace_attention(x, num_heads=h, x_kv=x_kv, mask="causal", **w)
    assert tr.q.shape == (h, T, p["d_k"])
    assert tr.k.shape == (h, S, p["d_k"])
    assert tr.v.shape == (h, S, p["d_v"])
    assert tr.scores.shape == tr.scaled.shape == tr.masked.shape == tr.weights.shape == tr.mask.shape == (h, T, S)
    assert tr.context.shape == (h, T, p["d_v"])
    assert tr.concat.shape == (T, h * p["d_v"])
    assert tr.output.shape == (T, p["d_out"])
    assert torch.equal(tr.mask[0], causal_mask(T, S))


@FAST
@given(sizes, st.randoms(use_true_random=False))
def test_self_attention_is_permutation_equivariant(p, rnd):
    x, _, w, _ = _layer(**p, cross=False)
    T = p["T"]
    perm_list = list(range(T))
    rnd.shuffle(perm_list)
    perm = torch.tensor(perm_list)
    h = p["h"]
    tr = trace_attention(x, num_heads=h, **w)
    tp = trace_attention(x[perm], num_heads=h, **w)
    torch.testing.assert_close(tp.output, tr.output[perm], atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(tp.weights, tr.weights[:, perm][:, :, perm], atol=1e-12, rtol=1e-9)


@FAST
@given(sizes, st.randoms(use_true_random=False))
def test_permuting_keys_and_values_permutes_weight_columns_only(p, rnd):
    x, x_kv, w, _ = _layer(**p)
    order = list(range(p["S"]))
    rnd.shuffle(order)
    perm = torch.tensor(order)
    h = p["h"]
    tr = trace_attention(x, num_heads=h, x_kv=x_kv, **w)
    tp = trace_attention(x, num_heads=h, x_kv=x_kv[perm], **w)
    torch.testing.assert_close(tp.output, tr.output, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(tp.weights, tr.weights[:, :, perm], atol=1e-12, rtol=1e-9)


@FAST
@given(sizes, st.integers(1, 3))
def test_causal_outputs_ignore_later_tokens(p, extra):
    """With a causal mask, appending tokens never changes the outputs of earlier ones."""
    x, _, w, g = _layer(**p, cross=False)
    longer = torch.cat([x, torch.randn(extra, p["d_model"], generator=g, dtype=torch.float64)])
    short = trace_attention(x, num_heads=p["h"], mask="causal", **w)
    long = trace_attention(longer, num_heads=p["h"], mask="causal", **w)
    torch.testing.assert_close(long.output[: p["T"]], short.output, atol=1e-10, rtol=1e-10)
    assert torch.all(long.weights.triu(diagonal=1) == 0)


@FAST
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 4), st.integers(1, 4),
       st.lists(st.integers(1, 3), max_size=2), st.integers(0, 2**31 - 1), st.floats(-3, 3))
def test_attend_context_is_a_convex_combination_of_values(T, S, d_k, d_v, batch, seed, shift):
    """Each context row is a weighted average of the value rows: inside their range, and
    shifting every value row by a constant shifts every context row by that constant."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, T, d_k, generator=g, dtype=torch.float64) * 3
    k = torch.randn(*batch, S, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(*batch, S, d_v, generator=g, dtype=torch.float64) + shift
    context, weights = attend(q, k, v)
    assert context.shape == (*batch, T, d_v) and weights.shape == (*batch, T, S)
    lo = v.min(dim=-2, keepdim=True).values
    hi = v.max(dim=-2, keepdim=True).values
    assert torch.all(context >= lo - 1e-12) and torch.all(context <= hi + 1e-12)
    # Shifting every value row by the same vector shifts every context row by it (weights sum to 1).
    c2, w2 = attend(q, k, v + 1.5)
    torch.testing.assert_close(c2, context + 1.5, atol=1e-10, rtol=1e-10)
    assert torch.equal(w2, weights)


@FAST
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300), st.integers(1, 40))
def test_first_tokens_keeps_the_sentence_up_to_its_last_allowed_token(sentence, limit):
    tokens = _TOKEN.findall(sentence)
    shorter = first_tokens(sentence, limit)
    assert sentence.startswith(shorter)
    if len(tokens) <= limit:
        assert shorter == sentence
    else:
        assert _TOKEN.findall(shorter) == tokens[:limit]
        assert _TOKEN.findall(shorter[:-1]) != tokens[:limit], "nothing kept after the last allowed token"
