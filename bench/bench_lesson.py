"""How long one slider move costs: run_lesson and the charts of a stage, at small and at the largest sizes.

Run: python bench/bench_lesson.py     (prints a table; no assertions)
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import altair as alt  # noqa: E402
import torch  # noqa: E402

from attention_core import MAX_D_MODEL, MAX_HEADS, MAX_TOKENS, LessonConfig, run_lesson  # noqa: E402
from attention_ui import charts, frames  # noqa: E402

CASES = {
    "default (7 tokens, d_model 8, 2 heads)": LessonConfig(),
    f"largest ({MAX_TOKENS} tokens, d_model {MAX_D_MODEL}, {MAX_HEADS} heads, causal)": LessonConfig(
        sentence=" ".join(["word"] * MAX_TOKENS), d_model=MAX_D_MODEL, d_k=8, d_v=8, num_heads=MAX_HEADS,
        mask="causal"),
}


def best_ms(fn, repeat: int = 15) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def stage_charts(config: LessonConfig) -> None:
    """The heavy charts of the softmax stage and the multi-head grid, serialised as the browser gets them."""
    lesson = run_lesson(config)
    labels = frames.token_labels(lesson.tokens)
    weights = frames.matrix_frame(lesson.trace.weights[0], labels, labels)
    grid = frames.heads_frame(lesson.trace.weights, labels, labels)
    with alt.data_transformers.disable_max_rows():
        charts.heatmap(weights, domain=(0, 1)).to_dict()
        charts.head_grid(grid).to_dict()


def main() -> None:
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    print(f"{'case':62} {'run_lesson ms (best/median)':>28} {'+ charts ms (best/median)':>27}")
    for name, config in CASES.items():
        core = best_ms(lambda: run_lesson(config))
        full = best_ms(lambda: stage_charts(config), repeat=5)
        print(f"{name:62} {core[0]:>12.2f} / {core[1]:<12.2f} {full[0]:>12.1f} / {full[1]:<12.1f}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
