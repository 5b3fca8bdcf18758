"""Presenter mode on a large window: every chart laid out in pixels for a 1280-px window grows with the window.

At 1920 × 1080 Multi-head's, Cross-attention's and Why √d_k's grids kept their 1280-px size: 15–18-px numbers
beside half a screen of white, smaller than the step-through's slides before them. Now such a chart is drawn 1.5× from a
1920-px window (1.25× from 1600 px) and still lies within the page's column; charts the browser sizes to their
container (the step-through's slides) are not zoomed, nor are Generation's caches where the window is not tall
enough for them (they must fit it). In a real browser; skipped without Playwright or Chromium.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

try:
    from tests import browser_support as bs
except ImportError:  # pragma: no cover - depends on how pytest set up sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser_support as bs

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not bs.browser_available(), reason=bs.NO_BROWSER)]
LOAD_MS = 120_000

CHARTS_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]').getBoundingClientRect();
  return [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(c => {
    const r = c.getBoundingClientRect();
    return {zoom: c.currentCSSZoom || 1, fit: c.classList.contains('fit-x'), right: r.right, width: r.width,
            mainRight: main.right, cache: !!c.closest('.st-key-generation_caches')};
  }).filter(c => c.width > 0);  // a chart in a closed tab or expander is not drawn
}"""


def _charts(browser, server: str, path: str, width: int, height: int) -> tuple[list[dict], bool]:
    """The page's drawn charts in presenter mode at ``width`` × ``height``, and whether its main column scrolls
    sideways."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(bs.with_query(server + path, "presenter=true"), wait_until="domcontentloaded", timeout=LOAD_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        drawn, total = bs.wait_for_all_charts(page)
        assert total and drawn == total, f"{path}: {drawn} of {total} charts drawn"
        assert not page.locator(bs.EXCEPTION).count()
        sideways = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                                 " return m.scrollWidth > m.clientWidth + 1; }")
        return page.evaluate(CHARTS_JS), sideways
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/multi-head", "/cross-attention", "/why-scaling"])
@pytest.mark.parametrize("window, zoom", [((1280, 800), 1.0), ((1600, 900), 1.25), ((1920, 1080), 1.5)],
                         ids=["1280x800", "1600x900", "1920x1080"])
def test_a_slides_charts_grow_with_the_window_and_stay_in_the_column(server, browser, path, window, zoom):
    charts, sideways = _charts(browser, server, path, *window)
    laid_out = [c for c in charts if not c["fit"]]
    assert laid_out, f"{path} draws charts laid out in pixels"
    assert all(c["zoom"] == pytest.approx(zoom) for c in laid_out), [c["zoom"] for c in laid_out]
    assert all(c["right"] <= c["mainRight"] + 1 for c in laid_out), "a zoomed chart reaches past the column"
    assert not sideways


def test_the_step_through_slides_own_charts_keep_their_size_and_generation_keeps_its_caches_in_the_window(
        server, browser):
    """The step-through's slide charts fill their container already (a zoom would push them off the screen), and
    Generation's caches, which must fit the window, grow only where it is tall enough too (1.25× from 1600 × 900; not
    at 1920 × 880); the charts under them, which may scroll, grow with the window's width."""
    slide, _ = _charts(browser, server, "/step-through?step=6", 1920, 1080)
    assert any(c["fit"] and c["zoom"] == 1 for c in slide)
    generation, _ = _charts(browser, server, "/generation", 1920, 880)
    caches = [c for c in generation if c["cache"]]
    assert caches and all(c["zoom"] == 1 for c in caches), [c["zoom"] for c in caches]
    assert any(not c["cache"] and c["zoom"] == pytest.approx(1.5) for c in generation)
