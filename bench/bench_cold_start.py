"""Cold start: server start -> first chart, and the first visit to a real-model page.

    python bench/bench_cold_start.py            # 3 fresh servers, medians
    python bench/bench_cold_start.py --repeats 1

For each fresh server (127.0.0.1, stopped afterwards) it prints, from the moment the process starts:
the health check answering, the first session's overview (``/``) finishing with a chart, a deep link
to the step-through page finishing with a chart, and then a first visit to the real-model page (the
model loads) — server time, as a browserless session over the websocket sees it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers import streamlit_server  # noqa: E402
from streamlit_ws import StreamlitSession  # noqa: E402

STEPS = ("health", "first chart (/)", "step-through link", "real-model page")


def one_cold_start() -> dict[str, float]:
    times = {}
    with streamlit_server("app.py", health_poll=0.02) as server:
        times["health"] = server.started_s
        with StreamlitSession(server.port) as first:
            opened = first.open("", "")
            times["first chart (/)"] = time.perf_counter() - server.launched_at
            if not opened.count("vega_lite_chart") or not opened.ok:
                raise RuntimeError(f"the overview showed no chart: {opened.elements} {opened.exceptions}")
        with StreamlitSession(server.port) as linked:
            shown = linked.open("step-through", "step=softmax")
            times["step-through link"] = shown.seconds
            if not shown.count("vega_lite_chart") or not shown.ok:
                raise RuntimeError(f"the step-through page showed no chart: {shown.exceptions}")
        with StreamlitSession(server.port) as real:
            model_page = real.open("real-model", "")
            times["real-model page"] = model_page.seconds
            if not model_page.count("vega_lite_chart") or not model_page.ok:
                raise RuntimeError(f"the real-model page showed no chart: {model_page.exceptions}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, choices=range(1, 6))
    args = parser.parse_args()
    runs = [one_cold_start() for _ in range(args.repeats)]
    print(f"Cold start, {args.repeats} fresh server(s); seconds, median (min–max)")
    labels = {"health": "process start -> health answers",
              "first chart (/)": "process start -> first chart on /",
              "step-through link": "then a step-through deep link, open -> finished",
              "real-model page": "then the first real-model visit (model loads)"}
    for step in STEPS:
        values = [run[step] for run in runs]
        print(f"  {labels[step]:50} {statistics.median(values):6.2f}  ({min(values):.2f}–{max(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
