#!/usr/bin/env python
"""Screenshot every page of the app in headless Chromium.

Starts ``streamlit run app.py`` on a free local port, visits the home page and every
page in the navigation at 1280x720, waits until each has finished running and drawn its
charts, and saves full-page PNGs named by page slug into ``--out``
(default ``artifacts/screenshots/``, which git ignores). Prints the saved paths.

Usage::

    python tools/screenshots.py [--out DIR] [--presenter] [--query "sentence=...&heads=2"]
    python tools/screenshots.py --slides [--out docs/presenter] [--query "mask=causal"]
    python tools/screenshots.py --readme [NAME ...] [--out docs]

``--presenter`` additionally switches on a toggle labelled "Presenter..." (if the page
has one) and saves ``<slug>-presenter.png``. ``--query`` is appended to every URL.

``--readme`` instead saves the pictures the README shows (``docs/<name>.png``, the window at
1280x800 with a page's part scrolled to its top; see ``README_SHOTS``), so they can be made again
after the pages change.

``--slides`` instead saves what a projector shows in presenter mode: every stage of the
step-through page at 1280x800 and 1920x1080 (the window only, no scrolling), stepping
with the → key, as ``<width>x<height>-<stage number>-<stage>.png`` (e.g.
``1280x800-06-softmax.png``; default folder ``docs/presenter/``). It warns about any
slide whose first chart or Back/Next button is outside the window.
Needs Playwright and a Chromium (``CHROMIUM_PATH`` or chromium on ``PATH``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

try:
    from tests import browser_support as bs
except ImportError:  # e.g. another top-level "tests" package shadows ours
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    import browser_support as bs

PRESENTER = re.compile("presenter", re.IGNORECASE)

# Streamlit scrolls inside its own container, so a "full page" screenshot of the document
# would stop at the viewport: measure the content and grow the viewport to fit it instead.
_CONTENT_HEIGHT_JS = """() => {
    let h = document.documentElement.scrollHeight;
    for (const sel of ['[data-testid="stMain"]', '[data-testid="stAppViewContainer"]',
                       '[data-testid="stMainBlockContainer"]', '[data-testid="stSidebarContent"]']) {
        const el = document.querySelector(sel);
        if (el) h = Math.max(h, el.scrollHeight);
    }
    return h;
}"""


def _shoot(page, path: Path, max_height: int) -> None:
    height = min(max(bs.VIEWPORT["height"], int(page.evaluate(_CONTENT_HEIGHT_JS))), max_height)
    page.set_viewport_size({"width": bs.VIEWPORT["width"], "height": height})
    try:
        page.wait_for_timeout(300)  # let charts re-layout for the new size
        bs.wait_for_app_idle(page, timeout=30_000)
        bs.wait_for_all_charts(page, timeout=10_000)
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(bs.VIEWPORT)


def _presenter_toggle(page):
    """The toggle (st.toggle, or an st.checkbox) whose label contains "Presenter", anywhere."""
    for role in ("switch", "checkbox"):
        found = page.get_by_role(role, name=PRESENTER)
        if found.count():
            return found.first
    return None


def _load(page, url: str, timeout_ms: float) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    bs.wait_for_app_idle(page, timeout=timeout_ms)
    bs.wait_for_all_charts(page, timeout=15_000)


SLIDE_SIZES = ((1280, 800), (1920, 1080))


def _outside_window(b: dict | None, width: int, height: int) -> bool:
    return b is None or b["top"] < -1 or b["left"] < -1 or b["bottom"] > height + 1 or b["right"] > width + 1


def save_slides(browser, base_url: str, out: Path, query: str, timeout_ms: float) -> tuple[list[Path], list[str]]:
    """Screenshot every stage of the step-through page in presenter mode at each of ``SLIDE_SIZES``."""
    from attention_ui.text import STAGES

    saved: list[Path] = []
    problems: list[str] = []
    for width, height in SLIDE_SIZES:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.set_default_timeout(timeout_ms)
        page = context.new_page()
        try:
            _load(page, bs.with_query(base_url + "/step-through", "presenter=true&" + query.lstrip("?&")), timeout_ms)
            page.mouse.move(5, 150)  # over the margin beside the formula: no tooltip or chart menu in the picture
            for number, stage in enumerate(STAGES, start=1):
                if number > 1:
                    bs.press_key(page, "ArrowRight", timeout=timeout_ms)
                shown = bs.stage_title(page)
                if shown != stage.title:
                    problems.append(f"{width}x{height}: expected stage {stage.title!r}, the page shows {shown!r}")
                page.wait_for_timeout(300)
                path = out / f"{width}x{height}-{number:02d}-{stage.key}.png"
                page.screenshot(path=str(path))
                saved.append(path)
                print(path, flush=True)
                charts = bs.chart_boxes(page, within=bs.SLIDE)
                for name, b in (("first chart", charts[0] if charts else None),
                                ("Back", bs.box(page, bs.BACK_BUTTON)), ("Next", bs.box(page, bs.NEXT_BUTTON))):
                    if _outside_window(b, width, height):
                        problems.append(f"{path.name}: {name} is not inside the window: {b}")
                if page.locator(bs.EXCEPTION).count():
                    problems.append(f"{path.name}: shows an exception")
        finally:
            context.close()
    return saved, problems


def _answer_check_yourself(page) -> None:
    """Stage 3's check-yourself: a wrong number first (its hint shows), then the right choice."""
    page.get_by_text("Check yourself").first.click()
    bs.wait_for_app_idle(page)
    page.get_by_label("Your answer").first.fill("1.0")
    page.get_by_role("button", name="Check", exact=True).first.click()
    bs.wait_for_app_idle(page)
    page.locator("label").filter(has_text="The key matches what the query looks for").first.click()
    bs.wait_for_app_idle(page)
    page.get_by_role("button", name="Check", exact=True).nth(1).click()
    bs.wait_for_app_idle(page)


def _type_scaled_scores(page) -> None:
    """Work it by hand's step 2: the scaled scores typed cell by cell, three of them left as raw scores, then
    checked (the page names that slip)."""
    page.get_by_role("tab", name="2").first.click()
    bs.wait_for_app_idle(page)
    grid = page.locator("[data-testid='stTabPanel']:visible [data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    typed = [["0.707", "0", "0.707"], ["1.414", "1", "3"], ["2.121", "0.707", "4"]]
    for _ in range(3):  # the grid can drop a key typed just after a click: type what is missing again
        cells = grid.evaluate("e => [...e.querySelectorAll('[role=gridcell]')].map(c => c.innerText.trim())")
        shown = [cells[i * 4 + 1:i * 4 + 4] for i in range(3)]  # each row: its token, then 3 cells
        missing = [(r, c) for r in range(3) for c in range(3) if shown[r][c] != typed[r][c]]
        if not missing:
            break
        for row, col in missing:
            box = grid.bounding_box()  # 3 rows under a header; an index column, then 3 columns
            page.mouse.click(box["x"] + box["width"] * (0.185 + 0.272 * (col + 0.5)),
                             box["y"] + box["height"] * (row + 1.5) / 4)
            page.wait_for_timeout(800)
            page.keyboard.type(typed[row][col], delay=80)  # a person's pace: keys sent at once can be dropped
            page.keyboard.press("Enter")
            bs.wait_for_app_idle(page)
    page.get_by_role("button", name="Check").first.click()
    bs.wait_for_app_idle(page)


def _measure_cost(page) -> None:
    page.get_by_role("button", name="Measure").first.click()
    bs.wait_for_app_idle(page, timeout=120_000)
    bs.wait_for_all_charts(page)


README_SHOTS = (
    # (file in docs/, page and query, text at the top of the window, what to do first)
    ("step-through-softmax", "step-through?step=6&mask=causal&token=3", "6 · Softmax", None),
    ("by-hand-check", "by-hand", "Start from the raw scores S", _type_scaled_scores),
    ("check-yourself", "step-through?step=3", "Check yourself", _answer_check_yourself),
    ("start-here", "start-here", "Start here", None),
    ("multi-head", "multi-head", "1 · Each head", None),
    ("real-model", "real-model", "All 6 layers", None),
    ("real-model-summaries", "real-model", "5 · Every head in numbers", None),
    ("modern-attention", "modern-attention", "1 · Multi-head, grouped-query", None),
    ("sliding-window", "modern-attention", "3 · Sliding-window", None),
    ("generation", "generation?generation_step=4", "1 · After step 4 the cache holds", None),
    ("why-scaling", "why-scaling", "2 · Unscaled scores", None),
    ("positions", "order-and-position", "1 · Without positions", None),
    ("cross-attention", "cross-attention", "3 · Cross-attention weights", None),
    ("cost", "what-it-costs", "2 · Measure it", _measure_cost),
)
"""The README's pictures."""

_TO_TOP_JS = """(e) => { e.scrollIntoView({block: 'start'});
    const main = document.querySelector('[data-testid="stMain"]'); if (main) main.scrollBy(0, -16); }"""


def save_readme(browser, base_url: str, out: Path, timeout_ms: float,
                only: list[str] | None = None) -> tuple[list[Path], list[str]]:
    """The README's pictures (``README_SHOTS``, or those named in ``only``) at 1280x800, each in a new
    browser context."""
    saved: list[Path] = []
    problems: list[str] = []
    for name, link, top, action in README_SHOTS:
        if only and name not in only:
            continue
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(timeout_ms)
        page = context.new_page()
        try:
            _load(page, f"{base_url}/{link}", timeout_ms)
            if action is not None:
                action(page)
            page.get_by_text(top, exact=False).first.evaluate(_TO_TOP_JS)
            page.mouse.move(5, 790)
            page.wait_for_timeout(600)
            bs.wait_for_all_charts(page)
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            saved.append(path)
            print(path, flush=True)
            if page.locator(bs.EXCEPTION).count():
                problems.append(f"{name}: shows an exception")
        except Exception as exc:  # keep going; report at the end
            problems.append(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        finally:
            context.close()
    return saved, problems


def save_pages(browser, base_url: str, out: Path, args, timeout_ms: float) -> tuple[list[Path], list[str]]:
    """Screenshot the home page and every page in the navigation (and their presenter mode if asked)."""
    saved: list[Path] = []
    problems: list[str] = []
    context = browser.new_context(viewport=bs.VIEWPORT)
    context.set_default_timeout(timeout_ms)
    page = context.new_page()
    _load(page, bs.with_query(base_url + "/", args.query), timeout_ms)  # first run imports torch
    pages = bs.discover_pages(page) or [("home", base_url + "/")]

    used: set[str] = set()
    for label, href in pages:
        slug = bs.page_slug(label, href)
        if slug in used:
            slug = f"{slug}_{len(used)}"
        used.add(slug)
        try:
            _load(page, bs.with_query(href, args.query), timeout_ms)
            if page.locator(bs.EXCEPTION).count():
                problems.append(f"{label}: shows an exception")
            path = out / f"{slug}.png"
            _shoot(page, path, args.max_height)
            saved.append(path)
            print(path, flush=True)

            if args.presenter:
                toggle = _presenter_toggle(page)
                if toggle is None:
                    problems.append(f"{label}: no toggle labelled 'Presenter'")
                    continue
                if not toggle.is_checked():
                    toggle.check(force=True)
                bs.wait_for_app_idle(page, timeout=timeout_ms)
                bs.wait_for_all_charts(page, timeout=15_000)
                path = out / f"{slug}-presenter.png"
                _shoot(page, path, args.max_height)
                saved.append(path)
                print(path, flush=True)
        except Exception as exc:  # keep going; report at the end
            problems.append(f"{label}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    return saved, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None,
                        help="folder for the PNGs (default: artifacts/screenshots/, or docs/presenter/ with --slides)")
    parser.add_argument("--presenter", action="store_true",
                        help="also screenshot each page with its 'Presenter' toggle switched on")
    parser.add_argument("--slides", action="store_true",
                        help="save presenter-mode slides of every stage at 1280x800 and 1920x1080 instead")
    parser.add_argument("--readme", nargs="*", default=None, metavar="NAME",
                        help="save the README's pictures (docs/<name>.png; all, or those named) instead")
    parser.add_argument("--query", default="", help='query string appended to every URL, e.g. "sentence=hi&heads=2"')
    parser.add_argument("--app", default="app.py", help="the Streamlit entry file, relative to the repo root")
    parser.add_argument("--timeout", type=float, default=90,
                        help="seconds to wait for the server or a page (default 90)")
    parser.add_argument("--max-height", type=int, default=8000, help="cap on a screenshot's height in pixels")
    args = parser.parse_args(argv)

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("playwright is not installed: pip install playwright", file=sys.stderr)
        return 2
    if bs.find_chromium() is None:
        print("no Chromium found: set CHROMIUM_PATH or put chromium on PATH", file=sys.stderr)
        return 2

    default_out = REPO_ROOT / ("docs/presenter" if args.slides else "docs" if args.readme is not None else "artifacts/screenshots")
    out = Path(args.out) if args.out else default_out
    out.mkdir(parents=True, exist_ok=True)
    timeout_ms = args.timeout * 1000
    with bs.streamlit_server(app=args.app, timeout=args.timeout) as base_url, sync_playwright() as p:
        browser = bs.launch_chromium(p)
        try:
            if args.slides:
                saved, problems = save_slides(browser, base_url, out, args.query, timeout_ms)
            elif args.readme is not None:
                saved, problems = save_readme(browser, base_url, out, timeout_ms, args.readme)
            else:
                saved, problems = save_pages(browser, base_url, out, args, timeout_ms)
        finally:
            browser.close()

    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    if not saved:
        print("no screenshots were saved", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
