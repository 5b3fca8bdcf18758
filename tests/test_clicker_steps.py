"""A clicker's Page Down on a slide without stages shows mostly new content at every press (``?presenter=true``,
in Chromium, 1280 × 800).

Some presses moved 140–220 px and showed most of the same chart again: Multi-head's fourth brought the title of a
chart already in view up to the menu bar, Order and position's third a heading 137 px down. Forward, a press now
moves at least half a screen, except at the page's foot.
"""

from __future__ import annotations

import pytest

import browser_support as bs
from test_presenter_layout import needs_browser

from attention_ui.controls import SECTION_TOP_PX

WINDOW = {"width": 1280, "height": 800}
LOAD_MS = 120_000
SCROLL = "document.querySelector('[data-testid=stMain]').scrollTop"
FOOT = "(() => { const m = document.querySelector('[data-testid=stMain]'); return m.scrollHeight - m.clientHeight; })()"


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("path", ["/multi-head", "/order-and-position"])
def test_every_page_down_shows_mostly_new_content(server, browser, path):
    context = browser.new_context(viewport=WINDOW)
    try:
        page = context.new_page()
        page.goto(f"{server}{path}?presenter=true", wait_until="domcontentloaded", timeout=LOAD_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        bs.wait_for_all_charts(page, timeout=15_000)
        screen = page.evaluate("document.querySelector('[data-testid=stMain]').clientHeight") - SECTION_TOP_PX - 60
        moves = []
        for _ in range(12):
            before, foot = page.evaluate(SCROLL), page.evaluate(FOOT)
            page.keyboard.press("PageDown")
            page.wait_for_timeout(700)
            if path not in page.url:  # the path's link to the next page was followed: the page's end
                break
            bs.wait_for_app_idle(page)
            after = page.evaluate(SCROLL)
            moves.append(after - before)
            if after >= foot - 2:
                break
            assert after - before >= screen / 2, (path, moves)
        assert len(moves) >= 4, moves
    finally:
        context.close()
