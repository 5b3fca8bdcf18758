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


class SharedPages:
    """Pages opened once for the tests of a module that only read them (no click, key or scroll of their own):
    ``show(url, viewport)`` returns the page at ``url`` in a window of ``viewport``, opened on first use. A stage in
    the address (``step=``) up to ``MOST_STEPS`` stages from the one shown is reached with the stage keys in a page
    opened at the address's other settings: a stage walked to draws as one opened there (the slide tests walk every
    stage so); farther, a step costs more than a new page, and the page is opened again at that stage. Each call
    puts the page back at its top, the pointer off its charts. At most ``keep`` pages stay open; ``close()`` closes
    them all."""

    MOST_STEPS = 2

    def __init__(self, browser, keep: int = 8):
        self.browser, self.keep = browser, keep
        self._open: dict[tuple, tuple] = {}  # (address without step, width, height) -> (context, page)

    def show(self, url: str, viewport: dict = PROJECTORS[0]):
        from urllib.parse import urlencode

        from attention_ui.text import STAGES

        parts = urlsplit(url)
        query = parse_qs(parts.query, keep_blank_values=True)
        step = query.pop("step", [None])[-1]
        if step is not None and step.isdigit():
            step = STAGES[int(step) - 1].key
        base = parts._replace(query=urlencode(query, doseq=True)).geturl()
        key = (base, viewport["width"], viewport["height"])
        keys = [stage.key for stage in STAGES]
        if key in self._open:
            self._open[key] = self._open.pop(key)  # the most recently used last
            shown = bs.stage_in_url(self._open[key][1])
            if shown is not None and abs(keys.index(shown) - keys.index(step or keys[0])) > self.MOST_STEPS:
                self._open.pop(key)[0].close()  # opened again below, at that stage
        if key not in self._open:
            while len(self._open) >= self.keep:
                context, _ = self._open.pop(next(iter(self._open)))
                context.close()
            context, page = new_page(self.browser, viewport)
            self._open[key] = context, page
            open_page(page, bs.with_query(base, f"step={step}") if step else base, FIRST_LOAD_MS)
        page = self._open[key][1]
        if step is None and bs.stage_in_url(page) is not None:  # a stage walked to by a test before: back to the first
            step = keys[0]
        if step is not None:
            while (bs.stage_in_url(page) or keys[0]) != step:
                shown = keys.index(bs.stage_in_url(page) or keys[0])
                bs.press_key(page, "ArrowRight" if shown < keys.index(step) else "ArrowLeft")
        page.mouse.move(0, viewport["height"] - 1)
        page.evaluate(f"() => {{ const main = document.querySelector({bs.MAIN!r}); if (main) main.scrollTop = 0; }}")
        return page

    def close(self) -> None:
        for context, _ in self._open.values():
            context.close()
        self._open.clear()
