"""What a new sentence costs in the browser, on every page, at the largest settings.

    python bench/bench_browser.py                          # every page with a sentence box, 3 sentences each
    python bench/bench_browser.py --pages real-model multi-head --sentences 5

One fresh server (127.0.0.1) and headless Chromium at 1280 × 800. For each page the browser opens a link with
the largest sizes the sidebar allows (32 tokens, d_model = d_k = d_v = 64, 8 heads, a causal mask; the
sentence has 31 words), waits until its charts are drawn, then types other sentences of as many words into
the sidebar's sentence box one after another. Each is timed from pressing Enter to the page's script state
going back to "not running" and two animation frames later, as ``bench/bench_rerun.py`` times a click: the
server's run, the messages, and the browser redrawing every chart. The real-model page is opened once before
the timings, so the model is loaded. Prints the median and the slowest per page; nothing passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pages import LARGEST, WORDS, page_paths  # noqa: E402
from bench_rerun import BROWSER_ARGS, CHROMIUM, WATCH_JS  # noqa: E402
from servers import streamlit_server  # noqa: E402

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
SENTENCE_BOX = 'section[data-testid="stSidebar"] input[aria-label="Sentence"]'
TITLE = '[data-testid="stMain"] h1'
"""Every page starts with its title: until it is there, the page has not rendered (and has no charts yet)."""
CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                        .every(chart => chart.querySelector('svg, canvas'))"""


SIDEBAR_WAIT_MS = 15_000


def sentence_times(tab, base: str, page: str, sentences: int) -> list[float] | None:
    """Seconds from Enter in the sentence box to the page idle and drawn, for ``sentences`` new sentences;
    None when the page has no sentence box."""
    tab.goto(f"{base}/{page}?{urlencode(LARGEST)}")
    tab.wait_for_selector(TITLE, timeout=180_000)
    tab.wait_for_selector(IDLE, timeout=180_000)
    tab.wait_for_function(CHARTS_DRAWN, timeout=180_000)
    box = tab.locator(SENTENCE_BOX)
    try:  # the sidebar is drawn after the title: give it time before saying the page has no sentence box
        box.wait_for(state="attached", timeout=SIDEBAR_WAIT_MS)
    except PlaywrightTimeout:
        return None
    tab.wait_for_selector(IDLE, timeout=180_000)
    tab.wait_for_function(CHARTS_DRAWN, timeout=180_000)
    times = []
    for i in range(sentences):
        box.fill(" ".join(WORDS[i + 1:i + 32]) + ".")
        tab.evaluate(WATCH_JS)
        box.press("Enter")
        finished = tab.evaluate("() => window.__idle")
        if finished == finished:  # not NaN: a run was seen
            times.append((finished - tab.evaluate("() => window.__clickedAt")) / 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="*", default=None, help="url paths (default: every page)")
    parser.add_argument("--sentences", type=int, default=3)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"no Chromium at {CHROMIUM}: nothing measured")
    from playwright.sync_api import sync_playwright

    pages = args.pages or page_paths()
    with streamlit_server("app.py") as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        base = f"http://127.0.0.1:{server.port}"
        tab.goto(f"{base}/real-model")  # the model loads once, before any timing
        tab.wait_for_selector(IDLE, timeout=180_000)
        rows = {page: sentence_times(tab, base, page, args.sentences) for page in pages}
        browser.close()
    print("Largest settings (31 words, d_model = d_k = d_v = 64, 8 heads, causal); Chromium, a new sentence → "
          "idle and drawn, s")
    print(f"{'page':22} {'median':>8} {'slowest':>8} {'timed':>6}")
    for page, times in rows.items():
        if times:
            print(f"{page:22} {statistics.median(times):8.2f} {max(times):8.2f} {len(times):6d}")
        else:
            print(f"{page:22} {'no sentence box':>17}")


if __name__ == "__main__":
    main()
