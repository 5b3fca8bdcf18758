"""The same agreement checks on CUDA and MPS when present; device selection on any machine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

from attention_core import (  # noqa: E402
    DEVICE_CHOICES, LessonConfig, attend, available_devices, causal_mask, resolve_device, run_lesson,
    trace_attention,
)

HAS_CUDA = torch.cuda.is_available()
HAS_MPS = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())

GPUS = [
    pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
        not HAS_CUDA, reason="no CUDA device on this machine (torch.cuda.is_available() is False)")]),
    pytest.param("mps", marks=[pytest.mark.gpu, pytest.mark.skipif(
        not HAS_MPS, reason="no Apple MPS device on this machine (torch.backends.mps.is_available() is False)")]),
]
TOL = dict(atol=1e-5, rtol=1e-5)  # float32: MPS has no float64


def _randn(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))  # drawn on CPU, then moved


@pytest.mark.parametrize("device", GPUS)
def test_attend_matches_sdpa_and_cpu_on_device(device):
    q, k, v = _randn(2, 3, 5, 8, seed=1), _randn(2, 3, 7, 8, seed=2), _randn(2, 3, 7, 4, seed=3)
    mask = torch.rand(5, 7, generator=torch.Generator().manual_seed(4)) < 0.6
    mask[:, 0] = True
    cpu_context, cpu_weights = attend(q, k, v, mask=mask)
    qd, kd, vd, md = (t.to(device) for t in (q, k, v, mask))
    for m_cpu, m_dev in ((None, None), (mask, md)):
        context, weights = attend(qd, kd, vd, mask=m_dev)
        assert context.device.type == device and weights.device.type == device
        assert context.dtype == torch.float32
        torch.testing.assert_close(context, F.scaled_dot_product_attention(qd, kd, vd, attn_mask=m_dev), **TOL)
        ref_context, ref_weights = attend(q, k, v, mask=m_cpu)
        torch.testing.assert_close(context.cpu(), ref_context, **TOL)
        torch.testing.assert_close(weights.cpu(), ref_weights, **TOL)
    torch.testing.assert_close(attend(qd, kd, vd, mask=md)[1].cpu(), cpu_weights, **TOL)
    assert cpu_context.shape == (2, 3, 5, 4)


@pytest.mark.parametrize("device", GPUS)
def test_fully_masked_rows_on_device(device):
    q, k, v = (_randn(4, 3, seed=s).to(device) for s in (5, 6, 7))
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False
    context, weights = attend(q, k, v, mask=mask.to(device))
    assert not torch.isnan(context).any()
    assert weights[2].abs().sum().item() == 0 and context[2].abs().sum().item() == 0


@pytest.mark.parametrize("device", GPUS)
def test_trace_matches_multihead_attention_on_device(device):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, dropout=0.0).eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    mha = mha.to(device)
    E = 8
    w, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
    x = _randn(5, E, seed=8).to(device)
    allowed = causal_mask(5, device=device)
    tr = trace_attention(x, w[:E].T, w[E:2 * E].T, w[2 * E:].T, num_heads=2, mask="causal",
                         w_o=mha.out_proj.weight.detach().T, b_q=b[:E], b_k=b[E:2 * E], b_v=b[2 * E:],
                         b_o=mha.out_proj.bias.detach())
    with torch.no_grad():
        out, weights = mha(x, x, x, attn_mask=~allowed, need_weights=True, average_attn_weights=False)
    assert tr.output.device.type == device and tr.mask.device.type == device
    torch.testing.assert_close(tr.output, out, **TOL)
    torch.testing.assert_close(tr.weights, weights, **TOL)


@pytest.mark.parametrize("device", GPUS)
def test_run_lesson_on_device_matches_cpu(device):
    on_device = run_lesson(LessonConfig(device=device, mask="causal"))
    on_cpu = run_lesson(LessonConfig(device="cpu", mask="causal"))
    assert on_device.trace.output.device.type == device
    torch.testing.assert_close(on_device.trace.output.cpu(), on_cpu.trace.output, **TOL)


# ------------------------------------------------------------------ device selection (CPU)

def test_available_devices_lists_what_exists():
    names = available_devices()
    assert names[:2] == ["auto", "cpu"]
    assert ("cuda" in names) == HAS_CUDA
    assert ("mps" in names) == HAS_MPS
    assert set(names) <= set(DEVICE_CHOICES)


def test_auto_resolves_to_an_available_device():
    device = resolve_device("auto")
    assert isinstance(device, torch.device)
    assert device.type in available_devices() and device.type != "auto"
    expected = "cuda" if HAS_CUDA else "mps" if HAS_MPS else "cpu"
    assert device.type == expected
    assert resolve_device() == device


def test_resolve_named_devices():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(ValueError, match=r"Unknown device 'tpu': choose one of auto, cpu, cuda, mps"):
        resolve_device("tpu")


def test_unavailable_device_raises_with_message():
    missing = [d for d in ("cuda", "mps") if d not in available_devices()]
    if not missing:
        pytest.skip("both cuda and mps are present, so no device is unavailable")
    for name in missing:
        with pytest.raises(ValueError, match=rf"Device '{name}' is not available on this machine; "
                                             rf"available: auto, cpu"):
            resolve_device(name)
