"""`attend`: golden numbers from the seed notebooks, and agreement with PyTorch's SDPA.

Golden numbers are kept here as literals (so the suite runs anywhere); when the seed
notebooks are present beside the repo (``../shared/seeds``) a separate test checks that
the literals really are what the notebooks print.
"""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

from attention_core import attend, causal_mask  # noqa: E402

SEEDS = ROOT.parent / "shared" / "seeds"

# --- seed 000: torch.manual_seed(42); q, k, v = torch.randn(3, 2) three times -------------
SEED000_Q = [[0.3367, 0.1288], [0.2345, 0.2303], [-1.1229, -0.1863]]
SEED000_K = [[2.2082, -0.6380], [0.4617, 0.2674], [0.5349, 0.8094]]
SEED000_V = [[1.1103, -1.6898], [-0.9890, 0.9580], [1.3221, 0.8172]]
SEED000_VALUES = [[0.5698, -0.1520], [0.5379, -0.0265], [0.2246, 0.5556]]
SEED000_ATTENTION = [[0.4028, 0.2886, 0.3086], [0.3538, 0.3069, 0.3393], [0.1303, 0.4630, 0.4067]]

# --- seed 002: printed X (3×5), Q = K = V = X, causal mask --------------------------------
SEED002_X = [
    [0.8505, 0.4000, 0.3561, 0.2708, 0.9474],
    [0.6939, 0.9952, 0.3525, 0.0898, 0.2699],
    [0.1606, 0.4863, 0.0489, 0.7793, 0.2100],
]
SEED002_WEIGHTS = [[1.0000, 0.0000, 0.0000], [0.4684, 0.5316, 0.0000], [0.3263, 0.3235, 0.3502]]
SEED002_OUTPUT = [
    [0.8505, 0.4000, 0.3561, 0.2708, 0.9474],
    [0.7673, 0.7164, 0.3542, 0.1746, 0.5872],
    [0.5583, 0.6228, 0.2474, 0.3903, 0.4700],
]

PRINTED = 1e-4  # the notebooks print 4 decimals


def t(rows, dtype=torch.float64) -> torch.Tensor:
    return torch.tensor(rows, dtype=dtype)


def seed000_qkv() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(42)
    q = torch.randn(3, 2)
    k = torch.randn(3, 2)
    v = torch.randn(3, 2)
    return q, k, v


# ----------------------------------------------------------------------------- seed 000

def test_seed000_rederived_qkv_match_printed_numbers():
    q, k, v = seed000_qkv()
    torch.testing.assert_close(q, t(SEED000_Q, torch.float32), atol=PRINTED, rtol=0)
    torch.testing.assert_close(k, t(SEED000_K, torch.float32), atol=PRINTED, rtol=0)
    torch.testing.assert_close(v, t(SEED000_V, torch.float32), atol=PRINTED, rtol=0)


def test_seed000_values_and_attention():
    q, k, v = seed000_qkv()
    context, weights = attend(q, k, v)
    assert context.shape == (3, 2) and weights.shape == (3, 3)
    torch.testing.assert_close(weights, t(SEED000_ATTENTION, torch.float32), atol=PRINTED, rtol=0)
    torch.testing.assert_close(context, t(SEED000_VALUES, torch.float32), atol=PRINTED, rtol=0)


def test_seed000_from_printed_inputs_by_hand():
    """Rebuild row 0 with plain Python floats from the printed Q, K, V (4 decimals)."""
    q, k, v = t(SEED000_Q), t(SEED000_K), t(SEED000_V)
    scaled = [sum(a * b for a, b in zip(SEED000_Q[0], key)) / math.sqrt(2) for key in SEED000_K]
    exps = [math.exp(s) for s in scaled]
    by_hand = [e / sum(exps) for e in exps]
    context, weights = attend(q, k, v)
    assert weights[0].tolist() == pytest.approx(by_hand, abs=1e-12)
    assert weights[0].tolist() == pytest.approx(SEED000_ATTENTION[0], abs=2e-4)
    expected_ctx0 = [sum(w * row[j] for w, row in zip(by_hand, SEED000_V)) for j in range(2)]
    assert context[0].tolist() == pytest.approx(expected_ctx0, abs=1e-12)
    torch.testing.assert_close(context, t(SEED000_VALUES), atol=3e-4, rtol=0)


# ----------------------------------------------------------------------------- seed 002

def test_seed002_causal_example():
    x = t(SEED002_X)
    context, weights = attend(x, x, x, mask=causal_mask(3))
    # X is printed to 4 decimals, so the recomputation matches the print to ~1e-4, well inside 1e-3.
    torch.testing.assert_close(weights, t(SEED002_WEIGHTS), atol=1e-3, rtol=0)
    torch.testing.assert_close(context, t(SEED002_OUTPUT), atol=1e-3, rtol=0)
    # Blocked (future) positions are exactly zero and the first token only sees itself.
    assert weights[0].tolist() == [1.0, 0.0, 0.0]
    assert weights[1, 2].item() == 0.0
    assert torch.equal(context[0], x[0])


# ----------------------------------------------------------- the literals vs the notebooks

def _tensor_literals(text: str) -> list[list[list[float]]]:
    return [ast.literal_eval(body) for body in re.findall(r"tensor\((\[\[.*?\]\])", text, flags=re.DOTALL)]


@pytest.mark.skipif(not (SEEDS / "000_attention_notebook.txt").is_file(),
                    reason="seed notebooks (../shared/seeds beside the repo) are not present")
def test_seed000_literals_are_what_the_notebook_prints():
    notebook = json.loads((SEEDS / "000_attention_notebook.txt").read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"]
                if c["cell_type"] == "code" and "seed_everything(42)" in "".join(c["source"]))
    printed = "".join("".join(o.get("text", [])) for o in cell["outputs"])
    names = re.findall(r"^(\w+)\n tensor", printed, flags=re.MULTILINE)
    tensors = dict(zip(names, _tensor_literals(printed)))
    assert names == ["Q", "K", "V", "Values", "Attention"]
    assert tensors["Q"] == SEED000_Q
    assert tensors["K"] == SEED000_K
    assert tensors["V"] == SEED000_V
    assert tensors["Values"] == SEED000_VALUES
    assert tensors["Attention"] == SEED000_ATTENTION


@pytest.mark.skipif(not (SEEDS / "002_causal_attention_notebook.txt").is_file(),
                    reason="seed notebooks (../shared/seeds beside the repo) are not present")
def test_seed002_literals_are_what_the_notebook_prints():
    text = (SEEDS / "002_causal_attention_notebook.txt").read_text(encoding="utf-8")
    after = text[text.index("X = torch.rand(3, 5)"):]
    x, weights, output = _tensor_literals(after)[:3]
    assert x == SEED002_X
    assert weights == SEED002_WEIGHTS
    assert output == SEED002_OUTPUT


# ------------------------------------------------------------------- agreement with SDPA

SHAPES = [
    # (batch dims, T, S, d_k, d_v)
    ((), 1, 1, 1, 1),
    ((), 1, 5, 3, 2),
    ((), 4, 4, 8, 8),
    ((), 6, 3, 4, 7),
    ((2,), 5, 7, 8, 3),
    ((2, 3), 4, 6, 4, 5),
    ((1, 4), 3, 1, 2, 6),
]


def _qkv(batch, T, S, d_k, d_v, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, T, d_k, generator=g, dtype=dtype)
    k = torch.randn(*batch, S, d_k, generator=g, dtype=dtype)
    v = torch.randn(*batch, S, d_v, generator=g, dtype=dtype)
    return q, k, v


def _sdpa_weights(q, k, mask=None):
    """SDPA only returns the context; the reference weights come from the textbook formula."""
    scaled = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scaled = scaled.masked_fill(~mask, float("-inf"))
    return torch.softmax(scaled, dim=-1)


@pytest.mark.parametrize("batch,T,S,d_k,d_v", SHAPES)
def test_matches_sdpa_without_mask(batch, T, S, d_k, d_v):
    q, k, v = _qkv(batch, T, S, d_k, d_v, seed=T * 100 + S)
    context, weights = attend(q, k, v)
    assert context.shape == (*batch, T, d_v)
    assert weights.shape == (*batch, T, S)
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v), atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(weights, _sdpa_weights(q, k), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("batch,T,S,d_k,d_v", SHAPES)
def test_matches_sdpa_with_bool_mask(batch, T, S, d_k, d_v):
    q, k, v = _qkv(batch, T, S, d_k, d_v, seed=7 + T + S)
    g = torch.Generator().manual_seed(123 + T * S)
    mask = torch.rand(*batch, T, S, generator=g) < 0.6
    mask[..., 0] = True  # every row keeps one key, so SDPA is defined everywhere
    context, weights = attend(q, k, v, mask=mask)
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(weights, _sdpa_weights(q, k, mask), atol=1e-12, rtol=1e-12)
    assert torch.all(weights[~mask] == 0)


def test_matches_sdpa_with_broadcast_mask_over_batch_and_heads():
    q, k, v = _qkv((2, 3), 5, 5, 4, 6, seed=5)
    mask = causal_mask(5)  # (T, S) broadcasts over (2, 3)
    context, weights = attend(q, k, v, mask=mask)
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v, is_causal=True),
                               atol=1e-10, rtol=1e-10)
    assert weights.shape == (2, 3, 5, 5)
    assert torch.all(weights.triu(diagonal=1) == 0)


def test_matches_sdpa_in_float32():
    q, k, v = _qkv((2,), 6, 9, 16, 5, seed=11, dtype=torch.float32)
    mask = torch.ones(6, 9, dtype=torch.bool).tril(diagonal=3)
    context, weights = attend(q, k, v, mask=mask)
    assert context.dtype == weights.dtype == torch.float32
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               atol=1e-5, rtol=1e-5)


def test_all_true_mask_equals_no_mask():
    q, k, v = _qkv((3,), 4, 5, 2, 3, seed=2)
    with_mask = attend(q, k, v, mask=torch.ones(4, 5, dtype=torch.bool))
    without = attend(q, k, v)
    assert torch.equal(with_mask[0], without[0]) and torch.equal(with_mask[1], without[1])


def test_fully_masked_rows_give_zero_weights_and_zero_context():
    q, k, v = _qkv((2,), 4, 5, 3, 2, seed=9)
    mask = torch.ones(2, 4, 5, dtype=torch.bool)
    mask[0, 1] = False  # batch 0, query 1 sees nothing
    mask[1, 3] = False  # batch 1, query 3 sees nothing
    mask[1, 0, 2:] = False  # a partly masked row, for contrast
    context, weights = attend(q, k, v, mask=mask)
    assert not torch.isnan(context).any() and not torch.isnan(weights).any()
    assert torch.equal(weights[0, 1], torch.zeros(5, dtype=torch.float64))
    assert torch.equal(weights[1, 3], torch.zeros(5, dtype=torch.float64))
    assert torch.equal(context[0, 1], torch.zeros(2, dtype=torch.float64))
    assert torch.equal(context[1, 3], torch.zeros(2, dtype=torch.float64))
    sums = weights.sum(-1)
    assert torch.allclose(sums[mask.any(-1)], torch.ones(6, dtype=torch.float64))
    # Every row that can see something agrees with SDPA.
    live = mask.any(-1)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(context[live], reference[live], atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(weights[live], _sdpa_weights(q, k, mask)[live], atol=1e-12, rtol=1e-12)


def test_every_row_masked():
    q, k, v = _qkv((), 3, 4, 2, 2, seed=3)
    context, weights = attend(q, k, v, mask=torch.zeros(3, 4, dtype=torch.bool))
    assert torch.equal(weights, torch.zeros(3, 4, dtype=torch.float64))
    assert torch.equal(context, torch.zeros(3, 2, dtype=torch.float64))


def test_large_scores_do_not_overflow():
    q = torch.tensor([[1000.0, 0.0]])
    k = torch.tensor([[1000.0, 0.0], [-1000.0, 0.0]])
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    context, weights = attend(q, k, v)
    assert weights.tolist() == [[1.0, 0.0]]
    assert context.tolist() == [[1.0, 2.0]]


def test_output_follows_input_dtype():
    for dtype in (torch.float32, torch.float64):
        q, k, v = _qkv((), 2, 3, 2, 2, seed=1, dtype=dtype)
        context, weights = attend(q, k, v, mask=causal_mask(2, 3))
        assert context.dtype == dtype and weights.dtype == dtype
        assert context.device == q.device
