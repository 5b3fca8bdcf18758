"""Server memory under use: one session walking many seeds with real word vectors, then many sessions
with different sentences.

    python bench/bench_memory.py                       # 300 seeds, then 20 sessions
    python bench/bench_memory.py --seeds 50 --sessions 5

A fresh app server (127.0.0.1, stopped afterwards) with the packaged all-MiniLM-L6-v2. Every step is
a browserless session over the websocket (``bench/streamlit_ws.py``). Prints the server's RSS after
each phase and the median server time per seed step. Bounded caches keep the RSS flat once full.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers import streamlit_server  # noqa: E402
from streamlit_ws import SessionError, StreamlitSession  # noqa: E402

MODEL = "all-MiniLM-L6-v2"
WORDS = ("cat dog bird river mountain city music light storm garden ocean paper window forest teacher "
         "student morning evening winter summer").split()


def sentence(i: int) -> str:
    """A different 12-word sentence for each i."""
    return " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12)) + f" number {i}."


def check(result, what: str):
    if not result.ok:
        raise SessionError(f"{what}: {result.exceptions or result.status}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=300, choices=range(1, 1001), metavar="N")
    parser.add_argument("--sessions", type=int, default=20, choices=range(1, 101), metavar="N")
    args = parser.parse_args()
    rows = []
    with streamlit_server("app.py") as server:
        rows.append(("server started", server.rss_mb()))
        walker = StreamlitSession(server.port)
        query = urlencode({"embeddings": MODEL, "init": "random", "heads": 8, "d_k": 64, "d_v": 64,
                           "sentence": sentence(0), "seed": 0, "step": "softmax"})
        check(walker.open("step-through", query), "open with real vectors")
        rows.append(("one session, real vectors, seed 0", server.rss_mb()))
        step_times = []
        for seed in range(1, args.seeds + 1):
            step_times.append(check(walker.set_number("Seed", seed), f"seed {seed}").seconds)
            if seed % 100 == 0 or seed == args.seeds:
                rows.append((f"  … after {seed} seeds", server.rss_mb()))
        walker.close()

        sessions = []
        started = time.perf_counter()
        for i in range(1, args.sessions + 1):
            text = sentence(i)
            for page in ("step-through", "real-model"):
                session = StreamlitSession(server.port)
                check(session.open(page, urlencode({"embeddings": MODEL, "sentence": text})), f"{page} {i}")
                sessions.append(session)
        rows.append((f"{args.sessions} sessions × (step-through + real model), different sentences",
                     server.rss_mb()))
        for session in sessions:
            session.close()
        time.sleep(2)
        rows.append(("after those sessions closed", server.rss_mb()))
        sessions_s = time.perf_counter() - started

    print(f"Server RSS ({MODEL} loaded for real word vectors and the real-model page)")
    for label, rss in rows:
        print(f"  {label:70} {rss:7.0f} MB")
    print(f"  seed step: median {statistics.median(step_times) * 1000:.0f} ms, "
          f"p95 {sorted(step_times)[int(0.95 * (len(step_times) - 1))] * 1000:.0f} ms server time")
    print(f"  {args.sessions} × 2 sessions opened one after another in {sessions_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
