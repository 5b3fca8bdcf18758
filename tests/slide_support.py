"""What the presenter-mode browser tests share: window sizes, sentences, and opening a slide in a new context."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import browser_support as bs

FIRST_LOAD_MS = 90_000  # a first run imports torch
LOAD_MS = 60_000
TOLERANCE_PX = 1  # sub-pixel layout rounding
PROJECTORS = ({"width": 1280, "height": 800}, {"width": 1920, "height": 1080}, {"width": 1024, "height": 768})
PHONE = {"width": 390, "height": 844}
EIGHT_TOKENS = "The cat sat on the mat because it"


def new_page(browser, viewport=PROJECTORS[0]):
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(LOAD_MS)
    bs.watch_for_page_not_found(context)
    return context, context.new_page()


def open_page(page, url: str, timeout: float = LOAD_MS) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    bs.wait_for_app_idle(page, timeout=timeout)
    bs.wait_for_all_charts(page, timeout=15_000)


def exceptions(page) -> list[str]:
    boxes = page.locator(bs.EXCEPTION)
    return [" ".join(boxes.nth(i).inner_text().split())[:300] for i in range(boxes.count())]


def address_query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def outside_window(name: str, b: dict | None, viewport: dict) -> str | None:
    """What is wrong with box ``b`` in the window (``None`` when it lies inside it)."""
    if b is None:
        return f"{name} not found or not visible"
    width, height = viewport["width"], viewport["height"]
    where = f"left {b['left']:.0f}, top {b['top']:.0f}, right {b['right']:.0f}, bottom {b['bottom']:.0f}"
    if b["top"] < -TOLERANCE_PX or b["left"] < -TOLERANCE_PX:
        return f"{name} starts outside the window ({where})"
    if b["bottom"] > height + TOLERANCE_PX:
        return f"{name} ends below the window's {height} px ({where})"
    if b["right"] > width + TOLERANCE_PX:
        return f"{name} runs past the window's {width} px ({where})"
    return None


def slide_problems(page, viewport: dict) -> list[str]:
    """What is wrong with the slide in the window: an exception box, its first chart, words or Back/Next outside the
    window or covered, a chart wider than the window, a cut chart title."""
    problems = [f"exception box: {text}" for text in exceptions(page)]
    slide_charts = bs.chart_boxes(page, within=bs.SLIDE)
    problems.append(outside_window("the slide's first chart", slide_charts[0] if slide_charts else None, viewport))
    problems.append(outside_window("the stage's words under the chart", bs.box(page, ".st-key-slide_words"), viewport))
    for name, selector in (("Back", bs.BACK_BUTTON), ("Next", bs.NEXT_BUTTON)):
        problems.append(outside_window(name, bs.box(page, selector), viewport))
        if not bs.hit_by_a_click(page, selector):
            problems.append(f"{name}: something else lies over the middle of the button")
    for i, chart in enumerate(bs.chart_boxes(page)):
        if chart["width"] > viewport["width"] + TOLERANCE_PX:
            problems.append(f"chart {i + 1} is {chart['width']:.0f} px wide in a {viewport['width']} px window")
    problems += [f"a chart's title is cut: {title!r}" for title in page.evaluate(CHART_TITLES_JS)
                 if title.endswith("…")]
    return [p for p in problems if p]


CHART_TITLES_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid=stMain] [data-testid=stVegaLiteChart] .role-title-text'), t => t.textContent)"""
