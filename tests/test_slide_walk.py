"""What a lecturer walking the slides at 1280 × 800 with a clicker found (``?presenter=true``, through AppTest).

Charts that took half of a slide's width and a screen of their own:

- Step through, stage 6: the weights as lines and the followed row's bars before and after softmax were one under
  the other, each about half the slide wide: a lecturer paged twice past white space to show one token's row. They
  now share a row, the lines left and the two bar charts one above the other right, each within its half, when the
  row's bars fit there (MIN_SLIDE_BAR_PX); a longer row keeps the page's order.
- Cross-attention's and the real model's bars of the followed row, the real model's close-up and Generation's
  timing lines were drawn at a page's size on a slide, about half its width: they now span it (a bar or a cell at
  most WIDEST_SLIDE_CELL_PX wide), and so do the real model's rollout bars ("[CLS] is made of…").

And on the way:
- Shared keys and windows: the KV-cache bars, after the table, were cut at the window's foot with their key out of
  sight; a slide draws them before the table.
- Generation without a GPT-style model: its slide showed the class a note for whoever runs the server; it leaves
  section 4 out (the page keeps the note). The timing chart's last x labels, across a slide, ran together
  ("250260").
- Cross-attention said "the none mask".
"""

from __future__ import annotations

import json

import pytest

from apptest_support import open_page, spec_titles
from streamlit.testing.v1 import AppTest

from test_real_model_pages import needs_model

from attention_ui.charts import FOLLOW_COLOR
from attention_ui.views import (BARS_FRAME_PX, MIN_SLIDE_BAR_PX, PRESENTER_COLUMN_PX, SLIDE_HALF_PX,
                                SLIDE_LINES_FRAME_PX, WIDEST_SLIDE_CELL_PX, slide_bar_px)

THIRTY_ONE_TOKENS = " ".join(f"word{i}" for i in range(31))
MOST_BESIDE = (SLIDE_HALF_PX - BARS_FRAME_PX) // MIN_SLIDE_BAR_PX  # 18 keys


def _column_charts(at) -> list[list[dict]]:
    """The chart specs in each column of the page, column by column."""
    return [[json.loads(chart.proto.spec) for chart in column.get("vega_lite_chart")] for column in at.columns]


def _titled(specs: list[dict], part: str) -> list[dict]:
    return [spec for spec in specs if any(part in title for title in spec_titles(spec))]


@pytest.mark.parametrize("sentence", ["The cat sat on the mat .", " ".join(["cat"] * MOST_BESIDE)],
                         ids=["7 tokens", "the most beside"])
def test_stage_6_slide_puts_the_lines_beside_the_rows_bars(sentence):
    at = open_page("pages/step_through.py", {"presenter": "true", "step": "softmax", "sentence": sentence})
    assert not at.exception
    columns = _column_charts(at)
    pair = next((i for i, specs in enumerate(columns[:-1]) if _titled(specs, "weights as lines")), None)
    assert pair is not None, "the lines chart sits in a column"
    lines, bars = _titled(columns[pair], "weights as lines")[0], _titled(columns[pair + 1], "softmax weights")
    assert len(bars) == 1 and len(bars[0]["vconcat"]) == 2, "the bars, one above the other, in the next column"
    assert lines["width"] <= SLIDE_HALF_PX
    keys = len(sentence.split())
    for panel in bars[0]["vconcat"]:
        assert panel["width"]["step"] * keys + BARS_FRAME_PX <= SLIDE_HALF_PX, "each bar chart within its half"


@pytest.mark.parametrize("query", [{}, {"presenter": "true", "sentence": THIRTY_ONE_TOKENS}],
                         ids=["page", "slide of 31 tokens"])
def test_stage_6_keeps_lines_and_bars_one_under_the_other(query):
    at = open_page("pages/step_through.py", {"step": "softmax", **query})
    assert not at.exception
    in_columns = [spec for specs in _column_charts(at) for spec in specs]
    assert not _titled(in_columns, "weights as lines") and not _titled(in_columns, "softmax weights")
    bars = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(_titled(bars, "softmax weights")) == 1 and _titled(bars, "weights as lines")


@pytest.mark.parametrize("query, heads", [({"heads": "2"}, (1, 2)),
                                          ({"heads": "8", "d_model": "32", "head": "8"}, (8, 1))],
                         ids=["2 heads", "the last of 8"])
def test_multi_heads_slide_draws_the_head_shown_and_the_next_as_lines_side_by_side(query, heads):
    """One head's lines took the left half of the slide's row and left the right half empty."""
    at = open_page("pages/multi_head.py", {"presenter": "true", **query})
    assert not at.exception
    pairs = [_titled(specs, "as lines") for specs in _column_charts(at)]
    shown = [spec for specs in pairs if specs for spec in specs]
    assert [spec_titles(spec)[0].split(" as lines")[0] for spec in shown] == [f"head {h}" for h in heads], shown
    assert all(spec["width"] <= SLIDE_HALF_PX for spec in shown), [spec["width"] for spec in shown]


def test_multi_heads_page_draws_one_heads_lines():
    at = open_page("pages/multi_head.py", {"heads": "2"})
    lines = _titled([json.loads(c.proto.spec) for c in at.get("vega_lite_chart")], "as lines")
    assert [spec_titles(spec)[0] for spec in lines] == ["head 1 as lines, query (left) → key (right)"]


def _chart_titled(at, part: str) -> dict:
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    found = _titled(specs, part)
    assert len(found) == 1, [spec_titles(spec) for spec in specs]
    return found[0]


def _bars(spec: dict) -> int:
    """How many bars a bar chart draws: its x axis' categories."""
    return len(spec["layer"][0]["encoding"]["x"]["scale"]["domain"])


def _spans_the_slide(px: float) -> None:
    assert SLIDE_HALF_PX < px <= PRESENTER_COLUMN_PX


def test_cross_attention_slide_bars_span_the_slide():
    at = open_page("pages/cross_attention.py", {"presenter": "true"})
    bars = _chart_titled(at, "row of 1·The")
    keys = _bars(bars)
    assert bars["width"]["step"] == slide_bar_px(keys) <= WIDEST_SLIDE_CELL_PX
    _spans_the_slide(bars["width"]["step"] * keys)
    page = _chart_titled(open_page("pages/cross_attention.py"), "row of 1·The")
    assert page["width"]["step"] * keys <= SLIDE_HALF_PX, "a page keeps its size"


def test_generation_slide_timing_spans_the_slide():
    at = open_page("pages/generation.py", {"presenter": "true"})
    timing = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart") if "ms per step" in c.proto.spec)
    assert timing["width"] == PRESENTER_COLUMN_PX - SLIDE_LINES_FRAME_PX
    page = next(json.loads(c.proto.spec) for c in open_page("pages/generation.py").get("vega_lite_chart")
                if "ms per step" in c.proto.spec)
    assert page["width"] < SLIDE_HALF_PX


@needs_model
def test_real_model_slide_close_up_and_bars_span_the_slide():
    at = open_page("pages/real_model.py", {"presenter": "true"})
    close_up = _chart_titled(at, ", head ")
    bars = _chart_titled(at, "attends to")
    tokens = _bars(bars)
    _spans_the_slide(close_up["width"])
    assert bars["width"]["step"] == slide_bar_px(tokens)
    _spans_the_slide(bars["width"]["step"] * tokens)


@needs_model
def test_real_model_slide_rollout_bars_span_the_slide():
    at = open_page("pages/real_model.py", {"presenter": "true"})
    bars = _chart_titled(at, "is made of")
    assert bars["width"]["step"] == slide_bar_px(_bars(bars))
    _spans_the_slide(bars["width"]["step"] * _bars(bars))


def _in_order(at: AppTest) -> list:
    """The page's elements in the order shown (containers opened)."""
    found = []

    def walk(node) -> None:
        children = getattr(node, "children", None)
        if children:
            for index in sorted(children):
                walk(children[index])
        else:
            found.append(node)
    walk(at.main)
    return found


@pytest.mark.parametrize("presenter, bars_first", [(True, True), (False, False)], ids=["slide", "page"])
def test_kv_cache_bars_come_before_their_table_on_a_slide(presenter, bars_first):
    at = open_page("pages/modern_attention.py", {"presenter": "true"} if presenter else {})
    shown = _in_order(at)
    section = next(i for i, e in enumerate(shown) if "How big the KV cache gets" in str(getattr(e, "value", "")))
    rest = shown[section:]
    table = next(i for i, e in enumerate(rest) if type(e).__name__ in ("Table", "Dataframe"))
    bars = next(i for i, e in enumerate(rest) if "KV cache (MiB)" in str(getattr(e, "proto", "")))
    assert (bars < table) == bars_first


def test_generation_slide_without_a_model_leaves_section_4_out():
    slide = open_page("pages/generation.py", {"presenter": "true"})
    page = open_page("pages/generation.py")
    heading = "4 · A real model generating"
    if any("No GPT-style model" in i.value for i in page.info):
        assert heading in [s.value for s in page.subheader]
        assert heading not in [s.value for s in slide.subheader]
        assert not any("No GPT-style model" in i.value for i in slide.info)
    else:  # a server with a GPT-style model shows the section on both
        assert heading in [s.value for s in slide.subheader]


def test_generation_timing_labels_stay_apart():
    at = open_page("pages/generation.py", {"presenter": "true"})
    timing = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart") if "ms per step" in c.proto.spec)
    axis = timing["encoding"]["x"]["axis"]
    assert axis["tickCount"] <= 8 and axis["labelFlush"] is False


def test_cross_attention_names_no_mask_in_words():
    at = open_page("pages/cross_attention.py")
    words = " ".join(c.value for c in at.caption)
    assert "the left chart uses no mask, as picked" in words and "the none mask" not in words


@pytest.mark.parametrize("step", ["embed", "scores", "softmax", "output"])
def test_a_stage_says_what_its_outlined_row_is(step):
    """Every chart of a stage outlines the followed token's row in magenta, and nothing said so. Under a page's
    charts a line names it; a slide leaves it to the lecturer (its charts fill the window down to the words)."""
    at = open_page("pages/step_through.py", {"step": step, "token": "3"})
    assert not at.exception
    said = [c.value for c in at.caption if c.value.startswith("Outlined:")]
    assert said == ["Outlined: the row of 3·sat, the token followed; its worked numbers are below."], said
    specs = json.dumps([json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")])
    assert FOLLOW_COLOR in specs, "no chart outlines the row"
    slide = open_page("pages/step_through.py", {"step": step, "token": "3", "presenter": "true"})
    assert not [c.value for c in slide.caption if c.value.startswith("Outlined:")]
