"""`trace_attention`: agreement with torch.nn.MultiheadAttention, and every stage's formula."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

from attention_core import causal_mask, trace_attention  # noqa: E402


# ------------------------------------------------------------------ MultiheadAttention

def _mha(embed_dim: int, num_heads: int, *, bias: bool, seed: int, dtype=torch.float32):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(embed_dim, num_heads, bias=bias, dropout=0.0)
    if bias:  # torch initialises in_proj_bias and out_proj.bias to zero; make them count
        with torch.no_grad():
            mha.in_proj_bias.normal_()
            mha.out_proj.bias.normal_()
    return mha.to(dtype).eval()


def _weights_of(mha) -> dict:
    """MHA computes y = x Wᵀ + b with in_proj_weight (3E, E); our convention is y = x W + b."""
    E = mha.embed_dim
    w = mha.in_proj_weight.detach()
    kwargs = dict(w_q=w[:E].T, w_k=w[E:2 * E].T, w_v=w[2 * E:].T, w_o=mha.out_proj.weight.detach().T)
    if mha.in_proj_bias is not None:
        b = mha.in_proj_bias.detach()
        kwargs.update(b_q=b[:E], b_k=b[E:2 * E], b_v=b[2 * E:], b_o=mha.out_proj.bias.detach())
    return kwargs


def _run_mha(mha, x, x_kv=None, allowed=None):
    x_kv = x if x_kv is None else x_kv
    blocked = None if allowed is None else ~allowed  # MHA's bool mask: True = NOT allowed
    with torch.no_grad():
        out, weights = mha(x, x_kv, x_kv, attn_mask=blocked, need_weights=True, average_attn_weights=False)
    return out, weights  # (T, E), (h, T, S)


CASES = [
    # (E, heads, T, S or None for self-attention, bias, mask kind)
    (4, 1, 3, None, False, None),
    (8, 2, 5, None, True, None),
    (8, 4, 6, None, True, "causal"),
    (12, 3, 1, None, True, "causal"),
    (6, 2, 4, 7, True, None),  # cross-attention, S > T
    (6, 3, 5, 2, False, None),  # cross-attention, S < T
    (8, 2, 3, 5, True, "causal"),  # cross-attention with the offset causal mask
    (8, 2, 5, None, True, "custom"),
    (8, 4, 4, 6, True, "per_head"),
]


def _mask_for(kind, h, T, S, seed):
    if kind is None:
        return None, None
    if kind == "causal":
        return "causal", causal_mask(T, S)
    g = torch.Generator().manual_seed(seed)
    shape = (T, S) if kind == "custom" else (h, T, S)
    grid = torch.rand(shape, generator=g) < 0.5
    grid[..., 0] = True  # no fully masked rows: MHA would give NaN there
    return grid, grid


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("E,h,T,S,bias,mask_kind", CASES)
def test_matches_multihead_attention(E, h, T, S, bias, mask_kind, dtype, tol):
    seed = E * 31 + h * 7 + T
    mha = _mha(E, h, bias=bias, seed=seed, dtype=dtype)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(T, E, generator=g, dtype=dtype)
    x_kv = None if S is None else torch.randn(S, E, generator=g, dtype=dtype)
    S_ = T if S is None else S
    mask_arg, allowed = _mask_for(mask_kind, h, T, S_, seed)

    trace = trace_attention(x, num_heads=h, x_kv=x_kv, mask=mask_arg, **_weights_of(mha))
    out, weights = _run_mha(mha, x, x_kv, None if allowed is None else allowed)

    assert trace.output.shape == (T, E) and trace.weights.shape == (h, T, S_)
    torch.testing.assert_close(trace.output, out, atol=tol, rtol=tol)
    torch.testing.assert_close(trace.weights, weights, atol=tol, rtol=tol)


def test_matches_multihead_attention_without_bias_or_output_projection():
    """With w_o = None the trace's output is the concatenated heads: MHA's output before out_proj."""
    mha = _mha(6, 2, bias=False, seed=3, dtype=torch.float64)
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    kw = _weights_of(mha)
    w_o = kw.pop("w_o")
    trace = trace_attention(x, num_heads=2, **kw)
    out, _ = _run_mha(mha, x)
    assert trace.output is trace.concat
    torch.testing.assert_close(trace.output @ w_o, out, atol=1e-12, rtol=1e-12)


def test_cross_attention_with_different_width_is_refused():
    """The contract has x_kv (S, d_model), the same width as x (MHA's kdim/vdim = embed_dim)."""
    x, x_kv = torch.randn(3, 4), torch.randn(5, 6)
    w = torch.randn(4, 4)
    with pytest.raises(ValueError, match=r"x has d_model=4 but x_kv has 6 features"):
        trace_attention(x, w, w, w, x_kv=x_kv)


def test_matches_multihead_attention_with_explicit_kdim_vdim():
    """MHA built with kdim = vdim = embed_dim (cross-attention layer) agrees too."""
    torch.manual_seed(5)
    mha = torch.nn.MultiheadAttention(8, 2, kdim=8, vdim=8, dropout=0.0).double().eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 8, generator=g, dtype=torch.float64)
    x_kv = torch.randn(6, 8, generator=g, dtype=torch.float64)
    trace = trace_attention(x, num_heads=2, x_kv=x_kv, **_weights_of(mha))
    out, weights = _run_mha(mha, x, x_kv)
    torch.testing.assert_close(trace.output, out, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(trace.weights, weights, atol=1e-12, rtol=1e-12)


# ------------------------------------------------------------------------ each stage

H, T, S, D_MODEL, D_K, D_V, D_OUT = 3, 4, 6, 5, 2, 3, 7


@pytest.fixture()
def setup():
    g = torch.Generator().manual_seed(2024)

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    args = dict(
        x=r(T, D_MODEL), x_kv=r(S, D_MODEL),
        w_q=r(D_MODEL, H * D_K), w_k=r(D_MODEL, H * D_K), w_v=r(D_MODEL, H * D_V), w_o=r(H * D_V, D_OUT),
        b_q=r(H * D_K), b_k=r(H * D_K), b_v=r(H * D_V), b_o=r(D_OUT),
    )
    mask = torch.rand(H, T, S, generator=g) < 0.6
    mask[0, 1] = False  # head 0, query 1: fully masked
    mask[1, :, 2] = False  # head 1 never looks at key 2
    mask[2] = True  # head 2 sees everything
    return args, mask


def _trace(args, mask):
    a = dict(args)
    x = a.pop("x")
    return trace_attention(x, num_heads=H, mask=mask, **a)


def test_stage_shapes(setup):
    args, mask = setup
    tr = _trace(args, mask)
    assert tr.q.shape == (H, T, D_K) and tr.k.shape == (H, S, D_K) and tr.v.shape == (H, S, D_V)
    for name in ("scores", "scaled", "masked", "weights", "mask"):
        assert getattr(tr, name).shape == (H, T, S), name
    assert tr.context.shape == (H, T, D_V)
    assert tr.concat.shape == (T, H * D_V)
    assert tr.output.shape == (T, D_OUT)
    assert (tr.num_heads, tr.d_k, tr.d_v) == (H, D_K, D_V)


def test_projections_split_into_contiguous_head_columns(setup):
    args, mask = setup
    tr = _trace(args, mask)
    Q = args["x"] @ args["w_q"] + args["b_q"]
    K = args["x_kv"] @ args["w_k"] + args["b_k"]
    V = args["x_kv"] @ args["w_v"] + args["b_v"]
    for i in range(H):
        torch.testing.assert_close(tr.q[i], Q[:, i * D_K:(i + 1) * D_K], atol=1e-12, rtol=0)
        torch.testing.assert_close(tr.k[i], K[:, i * D_K:(i + 1) * D_K], atol=1e-12, rtol=0)
        torch.testing.assert_close(tr.v[i], V[:, i * D_V:(i + 1) * D_V], atol=1e-12, rtol=0)


def test_scores_and_scaling(setup):
    args, mask = setup
    tr = _trace(args, mask)
    for i in range(H):
        torch.testing.assert_close(tr.scores[i], tr.q[i] @ tr.k[i].T, atol=1e-12, rtol=0)
    assert torch.equal(tr.scaled, tr.scores / math.sqrt(D_K))


def test_masked_is_minus_inf_exactly_where_blocked(setup):
    args, mask = setup
    tr = _trace(args, mask)
    assert torch.equal(tr.mask, mask)
    assert torch.equal(torch.isneginf(tr.masked), ~mask)
    assert torch.equal(tr.masked[mask], tr.scaled[mask])
    assert torch.isfinite(tr.scaled).all()


def test_weights_are_row_softmax_and_context_is_weights_times_v(setup):
    args, mask = setup
    tr = _trace(args, mask)
    assert torch.all(tr.weights[~mask] == 0)
    assert torch.equal(tr.weights[0, 1], torch.zeros(S, dtype=torch.float64))  # fully masked row
    assert torch.equal(tr.context[0, 1], torch.zeros(D_V, dtype=torch.float64))
    live = mask.any(-1)
    torch.testing.assert_close(tr.weights.sum(-1)[live], torch.ones(int(live.sum()), dtype=torch.float64))
    for i in range(H):
        for row in range(T):
            if not live[i, row]:
                continue
            allowed = mask[i, row]
            expected = torch.zeros(S, dtype=torch.float64)
            expected[allowed] = torch.softmax(tr.scaled[i, row][allowed], dim=0)
            torch.testing.assert_close(tr.weights[i, row], expected, atol=1e-12, rtol=0)
        torch.testing.assert_close(tr.context[i], tr.weights[i] @ tr.v[i], atol=1e-12, rtol=0)
    assert not torch.isnan(tr.output).any()


def test_concat_layout_and_output_projection(setup):
    args, mask = setup
    tr = _trace(args, mask)
    for i in range(H):
        assert torch.equal(tr.concat[:, i * D_V:(i + 1) * D_V], tr.context[i])
    torch.testing.assert_close(tr.output, tr.concat @ args["w_o"] + args["b_o"], atol=1e-12, rtol=0)


def test_no_mask_means_all_true_and_no_inf(setup):
    args, _ = setup
    tr = _trace(args, None)
    assert tr.mask.dtype == torch.bool and tr.mask.shape == (H, T, S) and bool(tr.mask.all())
    assert torch.equal(tr.masked, tr.scaled)
    torch.testing.assert_close(tr.weights.sum(-1), torch.ones(H, T, dtype=torch.float64))


def test_two_dim_mask_is_shared_by_every_head(setup):
    args, _ = setup
    grid = torch.ones(T, S, dtype=torch.bool).tril()
    tr = _trace(args, grid)
    assert tr.mask.shape == (H, T, S)
    for i in range(H):
        assert torch.equal(tr.mask[i], grid)
        assert torch.all(tr.weights[i][~grid] == 0)


def test_per_head_masks_act_per_head(setup):
    args, mask = setup
    tr = _trace(args, mask)
    assert torch.all(tr.weights[1, :, 2] == 0)  # head 1 blocked key 2
    assert torch.all(tr.weights[2] > 0)  # head 2 sees everything: softmax is positive
    # Each head equals a single-head trace that uses that head's columns and mask.
    for i in range(H):
        one = trace_attention(
            args["x"], args["w_q"][:, i * D_K:(i + 1) * D_K], args["w_k"][:, i * D_K:(i + 1) * D_K],
            args["w_v"][:, i * D_V:(i + 1) * D_V], x_kv=args["x_kv"], mask=mask[i],
            b_q=args["b_q"][i * D_K:(i + 1) * D_K], b_k=args["b_k"][i * D_K:(i + 1) * D_K],
            b_v=args["b_v"][i * D_V:(i + 1) * D_V],
        )
        torch.testing.assert_close(one.weights[0], tr.weights[i], atol=1e-12, rtol=0)
        torch.testing.assert_close(one.context[0], tr.context[i], atol=1e-12, rtol=0)


def test_causal_string_mask_with_more_keys_than_queries(setup):
    args, _ = setup
    tr = _trace(args, "causal")
    expected = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
    assert torch.equal(tr.mask[0], expected)
    assert torch.equal(tr.mask[0], causal_mask(T, S))
    assert torch.all(tr.weights[:, ~expected] == 0)
    assert bool(tr.weights[:, expected].gt(0).all())


def test_causal_with_more_queries_than_keys_gives_zero_rows():
    x = torch.randn(4, 3, dtype=torch.float64)
    x_kv = torch.randn(2, 3, dtype=torch.float64)
    w = torch.eye(3, dtype=torch.float64)
    tr = trace_attention(x, w, w, w, x_kv=x_kv, mask="causal")
    # query i may see keys j <= i + (S - T) = i - 2: queries 0 and 1 see nothing.
    assert torch.equal(tr.weights[0, :2], torch.zeros(2, 2, dtype=torch.float64))
    assert torch.equal(tr.output[:2], torch.zeros(2, 3, dtype=torch.float64))
    assert tr.weights[0, 2].tolist() == [1.0, 0.0]
    torch.testing.assert_close(tr.output[2], x_kv[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_device_and_dtype_follow_inputs(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=g).to(dtype)
    w = torch.randn(4, 4, generator=g).to(dtype)
    tr = trace_attention(x, w, w, w, num_heads=2, w_o=w, mask="causal")
    for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "context", "concat", "output"):
        tensor = getattr(tr, name)
        assert tensor.dtype == dtype, name
        assert tensor.device == x.device, name
    assert tr.mask.dtype == torch.bool and tr.mask.device == x.device


def test_single_token():
    x = torch.tensor([[1.0, -2.0]], dtype=torch.float64)
    w = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    tr = trace_attention(x, w, w, w, mask="causal")
    assert tr.weights.tolist() == [[[1.0]]]
    assert tr.scores.tolist() == [[[5.0]]]
    assert tr.scaled.item() == pytest.approx(5.0 / math.sqrt(2), abs=1e-15)
    assert tr.output.tolist() == [[1.0, -2.0]]


# ------------------------------------------------------------------ long sentences: the stages in one block

def _shares_block(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize("h,T,S,mask_kind", [(4, 256, None, None), (4, 256, None, "causal"),
                                             (4, 256, None, "custom"), (4, 256, None, "per_head"),
                                             (2, 300, 450, "causal")])
def test_long_sentences_keep_every_stage_in_one_block_with_the_same_numbers(h, T, S, mask_kind):
    """From ONE_BLOCK_FROM elements per stage, scores, scaled and masked are views of one block; the numbers
    are MultiheadAttention's, and each stage is still its own formula applied to the one before."""
    from attention_core.attention import ONE_BLOCK_FROM

    S_ = T if S is None else S
    assert h * T * S_ >= ONE_BLOCK_FROM
    E = 4 * h
    mha = _mha(E, h, bias=True, seed=T + h)
    g = torch.Generator().manual_seed(T)
    x = torch.randn(T, E, generator=g)
    x_kv = None if S is None else torch.randn(S, E, generator=g)
    mask_arg, allowed = _mask_for(mask_kind, h, T, S_, seed=T)
    trace = trace_attention(x, num_heads=h, x_kv=x_kv, mask=mask_arg, **_weights_of(mha))
    out, weights = _run_mha(mha, x, x_kv, allowed)

    torch.testing.assert_close(trace.output, out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(trace.weights, weights, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(trace.scores, trace.q @ trace.k.transpose(-2, -1))
    assert torch.equal(trace.scaled, trace.scores / math.sqrt(trace.d_k))
    if allowed is None:
        assert trace.masked is trace.scaled
    else:
        assert torch.equal(trace.masked, trace.scaled.masked_fill(~allowed, float("-inf")))
        assert _shares_block(trace.masked, trace.scores)
    assert _shares_block(trace.scores, trace.scaled)
    assert not _shares_block(trace.weights, trace.scores)


def test_short_sentences_and_inputs_needing_gradients_allocate_each_stage_alone():
    """Below ONE_BLOCK_FROM, and whenever autograd must follow the stages (it cannot follow ``out=``), each
    stage is its own tensor; gradients reach the input through scores, scaling and the mask."""
    g = torch.Generator().manual_seed(1)
    w = torch.randn(16, 16, generator=g)
    short = trace_attention(torch.randn(8, 16, generator=g), w, w, w, num_heads=4, mask="causal")
    assert not _shares_block(short.scores, short.scaled)

    x = torch.randn(256, 16, generator=g).requires_grad_()
    long = trace_attention(x, w, w, w, num_heads=4, mask="causal")
    assert not _shares_block(long.scores, long.scaled) and not _shares_block(long.scaled, long.masked)
    long.weights[:, 5, :3].sum().backward()  # row 5 may see keys 0..5 and sums to 1: half of it moves
    assert x.grad is not None and x.grad[:6].abs().sum() > 0 and torch.equal(x.grad[6:], torch.zeros(250, 16))
