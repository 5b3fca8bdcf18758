"""A slide opens on its chart, and Modern attention's "more heads" button says what it changes and can be undone.

In a real browser at 1280×800 (``?presenter=true``; skipped without Playwright or Chromium): Modern attention drew
its three sharing diagrams at y ≈ 761 under the introduction and the formula, Cross-attention its T × S weights at
y ≈ 1148 under a diagram that filled the screen, and Work it by hand its Q, K and V at y ≈ 902 under the words above
its grids. A lecturer had to scroll before there was anything to point at. On a slide the words come under the
chart now (or in an expander), and the chart's top is within the first screen.

Through AppTest: "Use 4 heads" changed the number of heads of the whole lesson without saying so, with no way
back. The button says that every page changes, and once pressed the page says so and offers to go back.
"""

from __future__ import annotations

import pytest

from apptest_support import open_page, switch_to
from test_presenter_layout import needs_browser, server, slide

SHARED_FIXTURES = (server, slide)  # the presenter-layout tests' app server and ``slide(path)`` (Chromium: conftest)

MODERN = "pages/modern_attention.py"
FIRST_SCREEN_TOP_PX = 480  # the chart's top above about y = 450: the lecturer points at it without scrolling

_CHART_TOP_JS = """(title) => {
    for (const chart of document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]')) {
        const text = Array.from(chart.querySelectorAll('.role-title-text'), e => e.textContent).join(' ');
        if (!text.includes(title)) continue;
        const drawn = chart.querySelector('svg, canvas').getBoundingClientRect();
        return {title: text, top: drawn.top, height: drawn.height,
                scrolled: document.querySelector('[data-testid=stMain]').scrollTop};
    }
    return null;
}"""


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("path, title", [
    ("/modern-attention", "multi-head: g = 2"),
    ("/modern-attention?heads=4", "grouped-query: g = 2"),
    ("/cross-attention", "cross-attention: 7 × 8"),
    ("/by-hand", "Q = X·W_Q"),
], ids=["modern attention", "modern attention, 4 heads", "cross-attention", "by hand"])
def test_a_slides_main_chart_starts_on_the_first_screen(slide, path, title):
    page = slide(path)
    page.wait_for_timeout(300)  # a chart sized to its column draws again once the column has its width
    chart = page.evaluate(_CHART_TOP_JS, title)
    assert chart is not None, f"no chart titled like {title!r}"
    assert chart["scrolled"] == 0 and chart["height"] > 100, chart
    assert 0 < chart["top"] <= FIRST_SCREEN_TOP_PX, f"{title!r} starts at y = {chart['top']:.0f} px: {chart}"


@pytest.mark.browser
@needs_browser
def test_by_hand_slide_keeps_its_grids_above_q_k_and_v(slide):
    """The grids are the activity: a slide still opens on them, Q, K and V right under them."""
    page = slide("/by-hand")
    grid = page.locator("[data-testid=stMain] [data-testid=stDataFrame]").first.bounding_box()
    chart = page.evaluate(_CHART_TOP_JS, "Q = X·W_Q")
    assert grid is not None and 0 < grid["y"] and grid["y"] + grid["height"] <= chart["top"], (grid, chart)


# ------------------------------------------------------------------------------ the "more heads" button


def _buttons(at) -> dict[str, str]:
    return {b.key: b.label for b in at.button if b.key}


def _infos(at) -> str:
    return "\n".join(i.value for i in at.info)


@pytest.mark.parametrize("query", [{}, {"presenter": "true"}], ids=["page", "slide"])
def test_the_more_heads_button_says_it_changes_every_page(query):
    at = open_page(MODERN, query)
    label = _buttons(at)["use_more_heads"]
    assert "4 heads" in label and "every page" in label, label
    assert "back_to_fewer_heads" not in _buttons(at)


@pytest.mark.parametrize("query", [{}, {"presenter": "true"}], ids=["page", "slide"])
def test_more_heads_says_what_it_did_and_goes_back(query):
    at = open_page(MODERN, query)
    g_before = at.selectbox(key="kv_heads").value
    at.button(key="use_more_heads").click().run()
    assert not at.exception
    assert at.slider(key="heads").value == 4
    note = _infos(at)
    assert "4 heads on every page" in note and "before: 2" in note, note
    assert _buttons(at)["back_to_fewer_heads"] == "Back to 2 heads"

    at.button(key="back_to_fewer_heads").click().run()
    assert not at.exception
    assert at.slider(key="heads").value == 2 and at.selectbox(key="kv_heads").value == g_before
    assert "on every page" not in _infos(at)
    buttons = _buttons(at)
    assert "back_to_fewer_heads" not in buttons and "every page" in buttons["use_more_heads"], buttons


def test_the_way_back_stays_on_other_pages_and_goes_once_heads_are_changed_elsewhere():
    at = open_page(MODERN)
    at.button(key="use_more_heads").click().run()
    switch_to(at, "pages/multi_head.py")
    assert at.slider(key="heads").value == 4, "the lesson's number of heads, on every page"
    switch_to(at, MODERN)
    assert _buttons(at)["back_to_fewer_heads"] == "Back to 2 heads", "still offered after a visit elsewhere"
    at.slider(key="heads").set_value(8).run()
    assert not at.exception
    assert "back_to_fewer_heads" not in _buttons(at) and "on every page" not in _infos(at)


def test_the_overview_slide_leaves_out_how_to_drive_the_app():
    """On a projector the Overview's second screen was half "Type a sentence…", "The address bar…", "Presenter
    mode…" and "New here? Start here": words for a student at a laptop, not for a hall."""
    page, slide = open_page("pages/overview.py"), open_page("pages/overview.py", {"presenter": "true"})
    assert any(h.value == "How to use this app" for h in page.subheader)
    assert not any(h.value == "How to use this app" for h in slide.subheader)
    assert not any("address bar" in m.value for m in slide.markdown)
    assert any(h.value == "The pipeline" for h in slide.subheader), "the lesson itself stays"
