"""A clicker's Page Down on a slide without stages shows mostly new content at every press (``?presenter=true``,
in Chromium, 1280 × 800).

Some presses moved 140–220 px and showed most of the same chart again: Multi-head's fourth brought the title of a
chart already in view up to the menu bar. Forward, a press now moves at least half a screen, except at the page's
foot, where it brings the next numbered section's heading up to the line (a press is a section, however near its
heading was: Order and position's third brings up section 2's, 137 px down), and where it brings wholly into view a
chart that ran past the window's foot by more than its axis labels (a longer move would leave it never seen whole).
"""

from __future__ import annotations

import pytest

import browser_support as bs
from test_presenter_layout import needs_browser
from test_presenter_path import _SECTION_AT_TOP_JS
from test_slide_numbers import _slide

from attention_ui.controls import SECTION_TOP_PX

WINDOW = {"width": 1280, "height": 800}
SCROLL = "document.querySelector('[data-testid=stMain]').scrollTop"
FOOT = "(() => { const m = document.querySelector('[data-testid=stMain]'); return m.scrollHeight - m.clientHeight; })()"
PARTS = """() => { const m = document.querySelector('[data-testid=stMain]'), top = m.getBoundingClientRect().top;
  return [...m.querySelectorAll('[data-testid=stElementContainer]')].map((e) => e.getBoundingClientRect())
    .filter((r) => r.height > 0).map((r) => [r.top - top + m.scrollTop, r.bottom - top + m.scrollTop]); }"""
"""Every part of the page as [its top, its bottom] in the page's own coordinates."""


def _completed(parts: list, before: int, after: int, window: int) -> bool:
    """Whether a press from ``before`` to ``after`` brought wholly into view a part that ran past the window's foot."""
    cut = [(top, bottom) for top, bottom in parts if top < before + window - 4 < bottom - 8]
    return any(top >= after + SECTION_TOP_PX - 4 and bottom <= after + window + 4 for top, bottom in cut)


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("path", ["/multi-head", "/order-and-position"])
def test_every_page_down_shows_mostly_new_content(server, browser, path):
    with _slide(browser, f"{server}{path}?presenter=true", **WINDOW) as page:
        window = page.evaluate("document.querySelector('[data-testid=stMain]').clientHeight")
        screen = window - SECTION_TOP_PX - 60
        moves = []
        for _ in range(12):
            before, foot, parts = page.evaluate(SCROLL), page.evaluate(FOOT), page.evaluate(PARTS)
            page.keyboard.press("PageDown")
            page.wait_for_timeout(700)
            if path not in page.url:  # the path's link to the next page was followed: the page's end
                break
            bs.wait_for_app_idle(page)
            after = page.evaluate(SCROLL)
            moves.append(after - before)
            if after >= foot - 2:
                break
            if page.evaluate(_SECTION_AT_TOP_JS % SECTION_TOP_PX)["heading"] is None:
                assert after - before >= screen / 2 or _completed(parts, before, after, window), (path, moves)
        assert len(moves) >= 4, moves


CUT_BY_THE_BAR = """() => { const bar = document.querySelector('[data-testid=stHeader]').getBoundingClientRect().bottom;
  const m = document.querySelector('[data-testid=stMain]');
  return [...m.querySelectorAll('[data-testid=stElementContainer], [role=tablist]')].filter((e) => {
    const r = e.getBoundingClientRect();
    return r.height > 0 && r.top < bar - 2 && r.bottom > bar + 2 && e.innerText.trim(); })
    .map((e) => e.innerText.slice(0, 40)); }"""
"""The parts of the page the menu bar cuts, their top under it and the rest below it: their text's start (a closed
expander's content, which shows nothing, is left out)."""


@pytest.mark.browser
@needs_browser
def test_the_last_page_down_before_work_it_by_hands_next_tab_leaves_nothing_cut_by_the_menu_bar(server, browser):
    """At the page's foot the browser stops a press short; Work it by hand's last press left its row of tabs cut in
    half by the menu bar ("1 · Raw scores QKᵀ" with its lower half showing). It now stops at that row's top."""
    with _slide(browser, f"{server}/by-hand?presenter=true", **WINDOW) as page:
        tab = "() => document.querySelector('[role=tab][aria-selected=true]').innerText"
        first = page.evaluate(tab)
        seen = []
        for _ in range(6):
            page.keyboard.press("PageDown")
            page.wait_for_timeout(700)
            bs.wait_for_app_idle(page)
            if page.evaluate(tab) != first:  # the clicker went on to the next tab: the first one's foot was seen
                break
            seen.append((page.evaluate(SCROLL), page.evaluate(CUT_BY_THE_BAR)))
        assert len(seen) >= 3 and page.evaluate(tab) != first, seen
        assert all(not cut for _, cut in seen), seen
