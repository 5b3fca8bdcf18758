"""Work it by hand's answer grids in a real browser, at 1280×800: after Check, one press on another cell selects it and
the digit typed next lands there.

The grid took the pointer to be elsewhere until a pointer move over it had been drawn, and dropped the cell a press
selected meanwhile: a press that came with the pointer (the page scrolled under a resting pointer, a pointer that
jumps there) selected nothing, and the digit typed next went to the cell selected before Check ("8 of 9 cells
right" became "7 of 9"), or nowhere.

Skips when Playwright or Chromium is missing (see tests/test_browser.py).
"""

from __future__ import annotations

import re
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


def _move_and_click(page, x: float, y: float) -> None:
    """As a person with a mouse: move there, rest a moment, click."""
    page.mouse.move(x, y, steps=8)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def _check_with_two_cells_typed(page) -> None:
    """Type a wrong 9 in row 1, column 2 and a right 4 in the last cell (it stays selected after Enter), then press
    Check."""
    page.locator("[data-testid='stDataFrame']").nth(ANSWER_GRID).scroll_into_view_if_needed()
    for row, column, text in ((0, 1, "9"), (2, 2, "4")):
        _move_and_click(page, *_cell_centre(page, row, column))
        _type(page, text)
    assert _answer_cells(page) == [["", "9", ""], ["", "", ""], ["", "", "4"]]
    box = page.locator(".st-key-hand-check-scores button").bounding_box()
    _move_and_click(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    bs.wait_for_app_idle(page)
    assert page.get_by_text(re.compile(r"Your raw scores: 1 of 9 cells right")).count() == 1


def _press_scrolled_under_pointer(page, x: float, y: float) -> None:
    """Rest the pointer under the grid, scroll the page until (x, y) is under it, and press there without a move."""
    grid = page.locator("[data-testid='stDataFrame']").nth(ANSWER_GRID)
    box = grid.bounding_box()
    below = y - box["y"]  # how far the point is below the grid's top
    rest_y = min(y + 200, WINDOW["height"] - 20)
    assert rest_y > box["y"] + box["height"], "the pointer rests on the grid: it knows where the pointer is"
    page.mouse.move(x, rest_y, steps=8)
    page.wait_for_timeout(300)
    page.mouse.wheel(0, y - rest_y)
    grid.evaluate("(e, [below, y]) => new Promise(done => { const under = () => "
                  "Math.abs(e.getBoundingClientRect().top + below - y) < 2 ? done() : requestAnimationFrame(under); "
                  "under(); })", [below, rest_y])
    page.wait_for_timeout(300)
    page.mouse.down()
    page.mouse.up()


def _press_as_pointer_jumps(page, x: float, y: float) -> None:
    """Press at (x, y) with the pointer coming there in the same moment (a pointer that jumps there)."""
    page.mouse.click(x, y)


@pytest.mark.parametrize("press", [_press_scrolled_under_pointer, _press_as_pointer_jumps],
                         ids=["page scrolled under a resting pointer", "pointer jumps there"])
def test_after_check_one_press_on_another_cell_selects_it_for_the_next_digit(page, press):
    """The press on the wrong cell selects it, the right digit replaces the 9, and the 4 typed before stays."""
    _check_with_two_cells_typed(page)
    press(page, *_cell_centre(page, 0, 1))
    _type(page, "0")
    assert _answer_cells(page) == [["", "0", ""], ["", "", ""], ["", "", "4"]], \
        "the digit went to the cell selected before Check, or nowhere"
    assert page.get_by_text(re.compile(r"Your raw scores: 2 of 9 cells right")).count() == 1
