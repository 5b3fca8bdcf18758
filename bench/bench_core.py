"""trace_attention against torch.nn.MultiheadAttention: same weights, one thread, interleaved timing.

Run: python bench/bench_core.py     (prints a table of times and ratios; no assertions)

At T = 512 each (h, T, S) stage is 8 MB. Allocated one by one, such blocks are given back to the system
by glibc when freed, and every call faults fresh pages in again (that was most of a call's time, on both
sides). The trace now writes scores, scaled and masked into one block; freed, it raises glibc's bar for
giving memory back above the trace's footprint, for the whole process (so MultiheadAttention, alternating
with it, keeps its memory too). On Linux the table is printed twice: as the process runs by default, and
with glibc told to keep freed memory (MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_THRESHOLD_): the arithmetic
alone.

Both sides return the per-head weights (``need_weights=True, average_attn_weights=False``); the
trace also keeps every other stage. The two calls alternate, so a busy machine slows both alike;
the ratio is the median over back-to-back pairs of (trace_attention time / MultiheadAttention time).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from attention_core import trace_attention  # noqa: E402

D_MODEL = 64
HEADS = 8
LENGTHS = (16, 128, 512)
MASKS = (None, "causal")
BUDGET_S = 1.5  # per case: short, so the whole run takes well under a minute
KEEP_FREED_MEMORY = {"MALLOC_TRIM_THRESHOLD_": str(2**30), "MALLOC_MMAP_THRESHOLD_": str(2**25)}
"""glibc settings: never give freed heap back to the system, and serve blocks up to 32 MB from the heap."""


def mha_and_weights(seed: int = 0):
    """A MultiheadAttention with biases and the same weights in trace_attention's x @ W convention."""
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(D_MODEL, HEADS, bias=True, dropout=0.0).eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    w, b, E = mha.in_proj_weight.detach(), mha.in_proj_bias.detach(), D_MODEL
    kwargs = dict(w_q=w[:E].T.contiguous(), w_k=w[E:2 * E].T.contiguous(), w_v=w[2 * E:].T.contiguous(),
                  b_q=b[:E], b_k=b[E:2 * E], b_v=b[2 * E:],
                  w_o=mha.out_proj.weight.detach().T.contiguous(), b_o=mha.out_proj.bias.detach())
    return mha, kwargs


def interleaved_ms(first, second, budget_s: float = BUDGET_S) -> tuple[float, float, float]:
    """Median ms of each callable and the median of the per-pair ratios first/second, alternating
    first/second until the budget is spent (a pair runs back to back, so both see the same load)."""
    for _ in range(3):  # warm-up
        first(), second()
    a, b = [], []
    stop = time.perf_counter() + budget_s
    while time.perf_counter() < stop or len(a) < 5:
        for fn, out in ((first, a), (second, b)):
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1000)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def main() -> None:
    torch.set_num_threads(1)
    mha, kwargs = mha_and_weights()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, d_model {D_MODEL}, {HEADS} heads, float32")
    print(f"{'T':>5} {'mask':>7} {'trace_attention ms':>19} {'MultiheadAttention ms':>22} {'ratio':>7}")
    print("(medians; ratio = median of paired ratios)")
    for T in LENGTHS:
        x = torch.randn(T, D_MODEL, generator=torch.Generator().manual_seed(T))
        for mask in MASKS:
            blocked = None if mask is None else ~torch.ones(T, T, dtype=torch.bool).tril()

            def ours():
                return trace_attention(x, num_heads=HEADS, mask=mask, **kwargs)

            def theirs():
                return mha(x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False)

            with torch.no_grad():
                ours_ms, theirs_ms, ratio = interleaved_ms(ours, theirs)
            print(f"{T:>5} {str(mask):>7} {ours_ms:>19.3f} {theirs_ms:>22.3f} {ratio:>6.2f}x", flush=True)


if __name__ == "__main__":
    main()
    if sys.platform == "linux" and not all(os.environ.get(k) == v for k, v in KEEP_FREED_MEMORY.items()):
        print("\nThe same with glibc keeping freed memory (no page faults on fresh blocks):", flush=True)
        subprocess.run([sys.executable, __file__], env={**os.environ, **KEEP_FREED_MEMORY}, check=True)
