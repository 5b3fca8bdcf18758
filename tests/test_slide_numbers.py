"""The numbers in a slide's cells grow with the window they are shown in (``?presenter=true``, in Chromium).

A slide's charts stretch to the window, but their numbers were sized for a 1280-px window: on a 1920 × 1080
projector an 11-token sentence's weights printed 13-px numbers in 67-px cells, and its scores, masked scores and
Q, K, V (whose cells are too narrow for numbers at 1280 px) printed none in cells 68–92 px wide. Now the browser
prints them as large as the cells it draws hold, up to the slide's usual 16 px; at 1280 × 800 nothing shrinks.
Each number must stay inside its cell at both sizes.
"""

from __future__ import annotations

import pytest

import browser_support as bs
from test_presenter_layout import needs_browser

from attention_ui import charts
from attention_ui.views import PRESENTER_FONT, SLIDE_CELL

SENTENCE = "The+animal+did+not+cross+the+street+because+it+was+tired"  # 11 tokens
SLIDE_VALUE_PX = charts.cell_value_font(SLIDE_CELL, PRESENTER_FONT, diverging=True, fit=True)  # 16
LOAD_MS = 120_000  # a first run imports torch

_NUMBERS_JS = """() => Array.from(
    document.querySelectorAll("[data-testid='stMain'] [data-testid='stVegaLiteChart'] svg.marks"), svg => {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        const title = Array.from(svg.querySelectorAll('.role-title-text'), e => e.textContent).join(' ');
        const cells = Array.from(svg.querySelectorAll('g.mark-rect.role-mark path'), p => p.getBoundingClientRect())
            .filter(r => r.width > 2 && r.height > 2);
        const numbers = Array.from(svg.querySelectorAll('g.mark-text.role-mark text'))
            .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0);
        const outside = numbers.filter(t => {
            const b = t.getBoundingClientRect(), x = (b.left + b.right) / 2, y = (b.top + b.bottom) / 2;
            const cell = cells.find(r => r.left <= x && x <= r.right && r.top <= y && y <= r.bottom);
            return !cell || b.left < cell.left - 0.5 || b.right > cell.right + 0.5 || b.top < cell.top - 0.5
                || b.bottom > cell.bottom + 0.5;
        }).map(t => t.textContent);
        return {title, px: numbers.map(t => parseFloat(getComputedStyle(t).fontSize) * scale), outside};
    })"""
"""Per chart: its title, the drawn size in px of each number printed in its cells, and the numbers whose text box
is not inside the cell under its middle."""

# stage -> the least size of its charts' numbers: at 1920 × 1080 all of them print at the slide's size; at
# 1280 × 800 the weights A print at 13 px (as before) and the context beside them at 16 px
WIDE = {"qkv": ["Q —", "K —", "V —"], "scaled": ["before:", "after:"], "masked": ["scores, −∞"],
        "context": ["weights A", "context ="]}
AT_1280 = {"weights A": 13, "context =": SLIDE_VALUE_PX}


def _problems(page, where: str, least: dict[str, float]) -> list[str]:
    """What is wrong with the numbers of the slide shown in ``page``: a chart whose title starts with a key of
    ``least`` prints none or smaller ones than its value; any chart's number lies out of its cell."""
    page.wait_for_timeout(300)  # a chart stretched to a new width draws again
    drawn = page.evaluate(_NUMBERS_JS)
    problems = []
    for start, px in least.items():
        chart = next((c for c in drawn if c["title"].startswith(start)), None)
        if chart is None or not chart["px"]:
            problems.append(f"{where}: no numbers in {start!r} ({[c['title'] for c in drawn]})")
        elif min(chart["px"]) < px - 0.5:
            problems.append(f"{where}: {start!r} prints {min(chart['px']):.1f} px, not {px}")
    return problems + [f"{where}: {c['title']!r} has numbers out of their cells: {c['outside'][:3]}"
                       for c in drawn if c["outside"]]


@pytest.mark.browser
@needs_browser
def test_a_slides_numbers_grow_with_the_window_and_stay_in_their_cells(server, browser):
    """Stages 2 (Q, K, V), 4 (scaling), 5 (masking) and 7 (weights and context) at 1920 × 1080, moved through with
    the → key; then stage 7 in a window made 1280 × 800."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    problems = []
    try:
        page = context.new_page()
        page.goto(f"{server}/step-through?step=qkv&sentence={SENTENCE}&heads=4&presenter=true",
                  wait_until="domcontentloaded", timeout=LOAD_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        bs.wait_for_all_charts(page, timeout=15_000)
        for stage, moves in (("qkv", 0), ("scaled", 2), ("masked", 1), ("context", 2)):
            for _ in range(moves):
                bs.press_key(page, "ArrowRight")
            assert bs.stage_in_url(page) == stage, (bs.stage_in_url(page), stage)
            problems += _problems(page, f"1920 px, {stage}", {title: SLIDE_VALUE_PX for title in WIDE[stage]})
        page.set_viewport_size({"width": 1280, "height": 800})
        problems += _problems(page, "1280 px, context", AT_1280)
    finally:
        context.close()
    assert not problems, "\n".join(problems)
