"""Work it by hand's answer grids in a real browser, at 1280×800: a spreadsheet's habit, double-click a cell, type,
Enter, keeps the number typed (a student read that a number typed after a double-click was lost).

Skips when Playwright or Chromium is missing (see tests/test_browser.py).
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

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if bs.find_chromium() is None:
    pytest.skip("no Chromium found: set CHROMIUM_PATH or install chromium", allow_module_level=True)

WINDOW = {"width": 1280, "height": 800}
TIMEOUT_MS = 90_000  # the first run imports torch
ANSWER_GRID = 4  # X, W_Q, W_K, W_V, then step 1's answer: the raw scores, 3 × 3 (1 0 1 / 2 1 3 / 3 1 4)
COLUMN_PX, ROW_PX = 75, 35  # a grid's text column (width="small"); a row, and the header row above them
PERSON_PAUSE_MS = 400  # between a press and the first key, as a person types


@pytest.fixture
def page(server, browser):
    """Work it by hand in a new 1280×800 window, its run finished."""
    context = browser.new_context(viewport=WINDOW)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    tab.goto(f"{server}/by-hand", wait_until="domcontentloaded")
    bs.wait_for_app_idle(tab, timeout=TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def _cell_centre(page, row: int, column: int) -> tuple[float, float]:
    """Where cell (row, column) of the answer grid is in the window (its last column at the grid's right edge)."""
    box = page.locator("[data-testid='stDataFrame']").nth(ANSWER_GRID).bounding_box()
    return box["x"] + box["width"] - (3 - column - 0.5) * COLUMN_PX, box["y"] + ROW_PX * (row + 1.5)


def _answer_cells(page) -> list[list[str]]:
    """The answer grid's cells as its table for screen readers gives them, row by row (no token labels)."""
    grid = page.locator("[data-testid='stDataFrame']").nth(ANSWER_GRID)
    texts = grid.evaluate("e => [...e.querySelectorAll('td, [role=gridcell]')].map(c => c.innerText)")
    return [texts[i + 1:i + 4] for i in range(0, len(texts), 4)]


def _type(page, text: str) -> None:
    """Type ``text`` into the selected cell after a person's pause, press Enter and wait for the page's run."""
    page.wait_for_timeout(PERSON_PAUSE_MS)
    page.keyboard.type(text)
    page.wait_for_timeout(200)
    page.keyboard.press("Enter")
    bs.wait_for_app_idle(page)


def _double_click_after_rest(page, x: float, y: float) -> None:
    """As a person with a mouse: move there, rest a moment, double-click."""
    page.mouse.move(x, y, steps=8)
    page.wait_for_timeout(300)
    page.mouse.dblclick(x, y)


def _double_click_as_pointer_arrives(page, x: float, y: float) -> None:
    """Double-click at (x, y) with the pointer coming there in the same moment."""
    page.mouse.dblclick(x, y)


@pytest.mark.parametrize("double_click", [_double_click_after_rest, _double_click_as_pointer_arrives],
                         ids=["after a rest", "as the pointer arrives"])
def test_a_double_click_opens_the_cell_and_keeps_what_is_typed(page, double_click):
    """A spreadsheet's habit: double-click a cell, type, Enter. The number typed is kept, wherever the pointer was."""
    page.locator("[data-testid='stDataFrame']").nth(ANSWER_GRID).scroll_into_view_if_needed()
    double_click(page, *_cell_centre(page, 1, 1))
    _type(page, "7")
    assert _answer_cells(page) == [["", "", ""], ["", "7", ""], ["", "", ""]], "the typed 7 was lost"
