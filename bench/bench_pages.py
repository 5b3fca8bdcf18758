"""Every page at the largest settings: server time of a first visit, of a rerun, and of a new seed.

    python bench/bench_pages.py                 # all pages, 5 reruns each
    python bench/bench_pages.py --pages multi-head masks --repeats 3

One fresh server (127.0.0.1). For each page a browserless session (``bench/streamlit_ws.py``) opens a
link with the largest sizes the sidebar allows (32 tokens, d_model = d_k = d_v = 64, 8 heads, a causal
mask), then times a rerun with nothing changed (caches warm: what a click elsewhere on the page costs)
and a rerun after a new seed (a new lesson: every number and chart made again; pages without a seed
rerun with a new sentence instead, pages with neither show "nan"). Time runs from sending the message to the run's
script_finished. Prints the median of each and the page's elements; nothing passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers import app_lessons, streamlit_server  # noqa: E402
from streamlit_ws import SessionError, StreamlitSession  # noqa: E402

WORDS = ("the old lighthouse keeper watched the grey storm roll over the quiet harbour while small boats "
         "pulled at their ropes and gulls cried above the dark water near the rocks").split()
LARGEST = {"sentence": " ".join(WORDS[:31]) + ".", "d_model": "64", "d_k": "64", "d_v": "64", "heads": "8",
           "mask": "causal", "step": "softmax"}


def page_paths() -> list[str]:
    """The app's pages' url paths, in the navigation's order."""
    lessons, _ = app_lessons()
    return [url for section in lessons.values() for *_, url in section]


def time_page(port: int, page: str, repeats: int) -> dict[str, object]:
    query = urlencode(LARGEST)
    with StreamlitSession(port, timeout=300) as session:
        opened = session.open(page, query)
        if not opened.ok:
            raise SessionError(f"{page}: {opened.exceptions}")
        reruns = [session.rerun().seconds for _ in range(repeats)]
        fresh = []
        for i in range(repeats):
            if session.has_enabled("number_input", "Seed"):
                fresh.append(session.set_number("Seed", 100 + i).seconds)
            elif session.has_enabled("text_input", "Sentence"):  # a page that reads only the sentence
                fresh.append(session.set_text("Sentence", " ".join(WORDS[i + 1:i + 32]) + ".").seconds)
    return {"open": opened.seconds, "rerun": statistics.median(reruns),
            "fresh": statistics.median(fresh) if fresh else float("nan"),
            "charts": opened.count("vega_lite_chart"), "elements": len(opened.elements)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="*", default=None, help="url paths (default: every page)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pages = args.pages or page_paths()
    with streamlit_server("app.py") as server:
        rows = {page: time_page(server.port, page, args.repeats) for page in pages}
    print("Largest settings (32 tokens, d_model = d_k = d_v = 64, 8 heads, causal); server time, ms")
    print(f"{'page':22} {'first visit':>12} {'rerun':>8} {'new seed':>9} {'charts':>7} {'elements':>9}")
    for page, row in rows.items():
        print(f"{page:22} {row['open'] * 1000:12.0f} {row['rerun'] * 1000:8.0f} {row['fresh'] * 1000:9.0f} "
              f"{row['charts']:7d} {row['elements']:9d}")
    worst = max((p for p in rows if rows[p]["fresh"] == rows[p]["fresh"]), key=lambda p: rows[p]["fresh"], default=None)
    if worst is not None:
        print(f"slowest rerun after a new seed: {worst}, {rows[worst]['fresh'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
