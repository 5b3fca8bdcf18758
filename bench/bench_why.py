"""What the why-lessons cost per rerun: the scaling experiments, the position checks and cross-attention,
at their default and largest settings; and how long the cost page's measurement takes.

Run: python bench/bench_why.py     (prints a table; no assertions)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from attention_core import (LAYER_KINDS, MAX_SCALING_D_K, MAX_SCALING_KEYS,  # noqa: E402
                            MAX_SCALING_SAMPLES, MAX_TOKENS, LessonConfig, cost_lengths, cross_attention,
                            dot_product_variance, equivariance_check,
                            rope_shift_check, run_lesson, shuffled_order, sinusoidal_positions, softmax_saturation,
                            time_layer)

SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the d_k values the √d_k page draws


def best_ms(fn, repeat: int = 5) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def scaling(keys: int, samples: int) -> None:
    for d_k in SWEEP:
        dot_product_variance(d_k, samples)
        softmax_saturation(d_k, keys, samples)


def positions(config: LessonConfig) -> None:
    lesson = run_lesson(config)
    order = shuffled_order(len(lesson.tokens), 1)
    equivariance_check(lesson.x, lesson.projections, order)
    encodings = sinusoidal_positions(len(lesson.tokens), config.d_model)
    equivariance_check(lesson.x, lesson.projections, order, positions=encodings)
    rope_shift_check(lesson.trace.q[0], lesson.trace.k[0], 1000)


def main() -> None:
    torch.set_num_threads(1)  # as the app runs
    largest = LessonConfig(sentence=" ".join(["word"] * MAX_TOKENS), d_model=64, d_k=64, d_v=64, num_heads=8)
    cases = {
        "√d_k experiments, default (16 keys, 1000 samples)": lambda: scaling(16, 1000),
        f"√d_k experiments, largest ({MAX_SCALING_KEYS} keys, {MAX_SCALING_SAMPLES} samples, d_k ≤ "
        f"{MAX_SCALING_D_K})": lambda: scaling(MAX_SCALING_KEYS, MAX_SCALING_SAMPLES),
        "positions checks, default sentence": lambda: positions(LessonConfig()),
        f"positions checks, {MAX_TOKENS} tokens, d_model 64, 8 heads": lambda: positions(largest),
        "cross-attention, default": lambda: cross_attention(run_lesson(LessonConfig()), "Le chat s'est assis."),
        f"cross-attention, {MAX_TOKENS} × {MAX_TOKENS} tokens": lambda: cross_attention(
            run_lesson(largest), " ".join(["mot"] * MAX_TOKENS)),
    }
    print(f"{'case':<72} {'best ms':>9} {'median ms':>10}")
    for name, fn in cases.items():
        best, median = best_ms(fn, repeat=3 if "largest" in name else 5)
        print(f"{name:<72} {best:>9.1f} {median:>10.1f}")

    print("\ncost page, one pass over T = 64 … 2048, d = 64 (the page runs two passes)")
    start = time.perf_counter()
    for length in cost_lengths(2048):
        row = {kind: time_layer(kind, length, 64) * 1000 for kind in LAYER_KINDS}
        print(f"  T = {length:>4}: " + "  ".join(f"{kind} {ms:8.3f} ms" for kind, ms in row.items()))
    print(f"  wall time of the pass: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
