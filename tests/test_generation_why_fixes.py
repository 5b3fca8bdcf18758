"""Generation and Why √d_k, as a student sees them: counts in the right number ("1 row", "2 rows"), masked
positions drawn grey with × as on the other pages, and the three d_k panels with every d_k labelled and their
titles at one height (the panels rendered to SVG with vl-convert, as the download buttons do)."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pyarrow as pa
import pytest

from apptest_support import open_page
from attention_ui.frames import BLOCKED_MARK
from attention_ui.why import SCALING_D_KS

GENERATION = "pages/generation.py"
WHY_SCALING = "pages/why_scaling.py"


def spec_title(spec: dict) -> str:
    title = spec.get("title", "")
    return title.get("text", "") if isinstance(title, dict) else str(title)


def page_texts(at) -> str:
    parts = [e.value for kind in (at.subheader, at.markdown, at.caption, at.success, at.info) for e in kind]
    parts += [spec_title(json.loads(c.proto.spec)) for c in at.get("vega_lite_chart")]
    parts += [p.proto.text for p in at.get("progress")]
    return "\n".join(str(p) for p in parts)


def chart(at, title_part: str):
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        if title_part in spec_title(spec) or any(title_part in spec_title(p) for p in spec.get("hconcat", [])):
            return element, spec
    raise AssertionError(f"no chart titled like {title_part!r}")


def chart_frame(at, title_part: str) -> pd.DataFrame:
    element, _ = chart(at, title_part)
    return pd.concat([pa.ipc.open_stream(d.data.data).read_pandas() for d in element.proto.datasets],
                     ignore_index=True)


# ------------------------------------------------------------------------------------------- generation


@pytest.fixture(scope="module")
def generation():
    return open_page(GENERATION)


def test_counts_on_the_generation_page_are_singular_for_one_and_plural_for_more(generation):
    at = generation
    at.button(key="generation_reset").click().run()
    first = page_texts(at)
    assert at.subheader[0].value == "1 · After step 1 the cache holds 1 row of K and V"
    assert "K cache, head 1" in first and "V cache, head 1" in first  # the row count is in the heading
    assert "over the 1 cached key**" in first
    assert "rows made by the cache (step 1)" in first
    at.button(key="generation_next").click().run()
    second = page_texts(at)
    assert at.subheader[0].value == "1 · After step 2 the cache holds 2 rows of K and V"
    assert "over the 2 cached keys**" in second
    assert "rows made by the cache (steps 1–2)" in second
    for shown in (first, second):
        assert not re.search(r"\(s\)|\b1 rows\b|\b1 cached keys\b|\b1 row\(|steps 1–1\b", shown), shown


@pytest.mark.parametrize("title", ["full causal attention", "rows made by the cache"])
def test_generation_draws_future_keys_grey_with_a_cross_like_the_other_pages(generation, title):
    at = generation
    at.button(key="generation_reset").click().run()
    for _ in range(2):
        at.button(key="generation_next").click().run()  # step 3: both charts have cells of both kinds
    cells = chart_frame(at, title)
    future = cells["col_index"] > cells["row_index"]
    assert future.any() and (~future).any()
    assert cells.loc[future, "masked"].all(), "every key after its query is drawn as blocked (grey)"
    assert (cells.loc[future, "label"] == BLOCKED_MARK).all(), "and carries the × of a blocked cell"
    assert not cells.loc[~future, "masked"].any(), "the keys a row may read keep their colour"
    assert (cells.loc[~future].groupby("row_index")["value"].sum() - 1).abs().max() < 1e-5


def test_cached_rows_and_full_causal_attention_mark_the_same_cells(generation):
    at = generation
    at.button(key="generation_reset").click().run()
    for _ in range(3):
        at.button(key="generation_next").click().run()
    cache, full = chart_frame(at, "rows made by the cache"), chart_frame(at, "full causal attention")
    full = full[full["row_index"] < cache["row_index"].max() + 1]
    key = ["row_index", "col_index"]
    merged = cache.merge(full, on=key, suffixes=("_cache", "_full"))
    assert len(merged) == len(cache)
    assert (merged["masked_cache"] == merged["masked_full"]).all()
    assert (merged["value_cache"] - merged["value_full"]).abs().max() < 1e-5


# ------------------------------------------------------------------------------------------- why √d_k


def panels_spec(query: dict[str, str] | None = None) -> dict:
    """The side-by-side panels of section 2 as the page sends them, with their data put back inline."""
    at = open_page(WHY_SCALING, query)
    element, spec = chart(at, "largest weight in a row")
    spec["datasets"] = {d.name: pa.ipc.open_stream(d.data.data).read_pandas().to_dict("records")
                        for d in element.proto.datasets}
    return json.loads(json.dumps(spec, default=float))


@pytest.fixture(scope="module")
def saturation_spec() -> dict:
    return panels_spec()


def rendered(spec: dict) -> ET.Element:
    vl_convert = pytest.importorskip("vl_convert")
    return ET.fromstring(vl_convert.vegalite_to_svg(spec))


def placed(root: ET.Element):
    """Every element with its absolute (x, y) from the translate() transforms above it."""
    out = []

    def walk(element, x, y):
        move = re.match(r"translate\(([-\d.e]+),\s*([-\d.e]+)\)", element.get("transform", ""))
        if move:
            x, y = x + float(move.group(1)), y + float(move.group(2))
        out.append((element, x, y))
        for child in element:
            walk(child, x, y)

    walk(root, 0.0, 0.0)
    return out


def test_every_swept_d_k_has_a_visible_tick_label_that_does_not_run_into_its_neighbours(saturation_spec):
    panels = saturation_spec["hconcat"]
    assert len(panels) == 3
    for panel in panels:
        axis = panel["layer"][0]["encoding"]["x"]["axis"]
        assert axis["values"] == list(SCALING_D_KS)
    axes = [(element, x) for element, x, _ in placed(rendered(saturation_spec))
            if (element.get("aria-label") or "").startswith("X-axis")]
    assert len(axes) == 3
    font = 13
    for axis, _ in axes:
        labels = [(text, x) for text, x, _ in placed(axis)
                  if text.tag.endswith("text") and text.text and text.get("opacity", "1") != "0"
                  and text.text != "d_k"]
        assert [text.text for text, _ in labels] == [f"{v:g}" for v in SCALING_D_KS], "one visible label per d_k"
        gaps = [b - a for (_, a), (_, b) in zip(labels, labels[1:])]
        slanted = "rotate" in (labels[0][0].get("transform") or "")
        if slanted:  # parallel slanted labels: their distance across the slant is gap · sin 45°
            assert min(gaps) / math.sqrt(2) >= font
        else:
            widest = max(len(text.text) for text, _ in labels) * 0.6 * font
            assert min(gaps) >= widest + 2, "horizontal labels side by side need room for the widest"


@pytest.mark.parametrize("query", [{}, {"why_keys": "2", "why_dk": "512"}, {"why_keys": "64", "why_dk": "1"},
                                   {"presenter": "true"}])
def test_the_three_panel_titles_sit_on_one_line_at_one_height(query):
    """Whatever the data (a point or a label at the very top pushed its panel's title up) and in presenter mode."""
    spec = panels_spec(query)
    titles = [(element.get("aria-label"), round(y, 1)) for element, _, y in placed(rendered(spec))
              if element.get("aria-roledescription") == "title"]
    assert len(titles) == 3
    assert len({y for _, y in titles}) == 1, titles
    for panel in spec["hconcat"]:
        assert isinstance(panel["title"]["text"], str) and "\n" not in panel["title"]["text"]


@pytest.mark.parametrize("width, font, angle", [(215, 13, -45), (290, 20, -45), (560, 13, 0), (100, 13, -90)])
def test_tick_label_angle_slants_labels_only_when_they_would_not_fit(width, font, angle):
    from attention_ui.why import tick_label_angle

    assert tick_label_angle(SCALING_D_KS, width, font, log=True) == angle
