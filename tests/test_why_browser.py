"""The why-lessons in a real browser: each page draws its charts, a page slider reruns it, and the cost
page measures on a button press and draws the timings.

Skips when Playwright or Chromium is missing (see tests/test_browser.py).
"""

from __future__ import annotations

import re

import pytest

import browser_support as bs

pytestmark = pytest.mark.browser
sync_api = bs.require_browser()

# url path -> charts on arrival
PAGES = {"why-scaling": 4, "order-and-position": 6, "cross-attention": 3, "what-it-costs": 2}
TIMEOUT_MS = 90_000
MEASURE_TIMEOUT_MS = 240_000


@pytest.fixture(scope="module")
def session(server, browser):
    """(a Chromium tab, the app's base URL), shared by this module's tests."""
    tab = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(server + "/", wait_until="domcontentloaded")  # the server's first run imports torch
        bs.wait_for_app_idle(tab, timeout=TIMEOUT_MS)
        yield tab, server
    finally:
        tab.close()


def wait_for_drawn_charts(page, count: int) -> None:
    """Wait until at least ``count`` charts have drawn (a finished run may still be adding them)."""
    page.wait_for_function(
        """n => Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
                    .filter(c => c.querySelector('svg, canvas')).length >= n""",
        arg=count, timeout=TIMEOUT_MS)


def open_lesson(session, path: str, charts: int = 1):
    page, base_url = session
    page.goto(f"{base_url}/{path}", wait_until="domcontentloaded")
    bs.wait_for_app_idle(page, timeout=TIMEOUT_MS)
    wait_for_drawn_charts(page, charts)
    return page


@pytest.mark.parametrize("path", list(PAGES))
def test_page_draws_its_charts(session, path):
    page = open_lesson(session, path, PAGES[path])
    assert page.locator(bs.EXCEPTION).count() == 0


def test_d_k_slider_reruns_the_scaling_page(session):
    page = open_lesson(session, "why-scaling")
    main = page.locator(bs.MAIN)
    assert main.get_by_text("Var(q·k) at d_k = 64, sampled").count() == 1
    main.locator('input[type="range"]').first.focus()
    page.keyboard.press("ArrowRight")
    bs.wait_for_app_idle(page, timeout=TIMEOUT_MS)
    main.get_by_text("Var(q·k) at d_k = 65, sampled").wait_for()
    assert "why_dk=65" in page.url


def test_cost_page_measures_on_a_button_press(session):
    page = open_lesson(session, "what-it-costs?cost_longest=512&cost_width=32")
    main = page.locator(bs.MAIN)
    assert main.get_by_text("Nothing measured yet").count() == 1
    main.get_by_role("button", name=re.compile("Measure on")).click()
    try:  # about 15 s alone; on a machine busy with other tests' servers and browsers it has taken over 90 s
        main.get_by_text("attention: fitted slope").wait_for(timeout=MEASURE_TIMEOUT_MS)
    except sync_api.TimeoutError as err:
        shown = main.inner_text()[-1500:]
        raise AssertionError(f"no measurement after {MEASURE_TIMEOUT_MS / 1000:.0f} s; the page shows:\n{shown}\n"
                             f"--- server output ---\n{session[1].output(3000)}") from err
    bs.wait_for_app_idle(page, timeout=TIMEOUT_MS)
    wait_for_drawn_charts(page, 3)
    assert page.locator(bs.EXCEPTION).count() == 0


def test_a_slides_sliders_show_their_two_ends(session):
    """On a slide ALiBi's slope read "1/16" with no range and no direction: Streamlit shows a slider's ends only under
    a hovering pointer, and no one hovers on a projector. On a page they still wait for the pointer."""
    ends = """() => [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stSliderTickBar']")]
        .map(bar => [bar.innerText.split(/\\s+/).filter(Boolean).join(" "), getComputedStyle(bar).opacity])"""
    page = open_lesson(session, "order-and-position?presenter=true", PAGES["order-and-position"])
    page.mouse.move(5, 5)
    shown = page.evaluate(ends)
    assert ["1/256 1", "1"] in shown and all(opacity == "1" for _, opacity in shown), shown
    page = open_lesson(session, "order-and-position", PAGES["order-and-position"])
    page.mouse.move(5, 5)
    assert all(opacity == "0" for _, opacity in page.evaluate(ends))
