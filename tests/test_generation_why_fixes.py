"""Generation as a student sees it: counts in the right number ("1 row", "2 rows") and masked positions drawn
grey with × as on the other pages."""

from __future__ import annotations

import json
import re

import pandas as pd
import pyarrow as pa
import pytest

from apptest_support import open_page
from attention_ui.frames import BLOCKED_MARK

GENERATION = "pages/generation.py"


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
    assert at.subheader[0].value == "1 · The cache after step 1: 1 row of K and V"
    assert "K cache (1 row), head 1" in first and "V cache (1 row), head 1" in first
    assert "over the 1 cached key**" in first
    assert "rows made by the cache (step 1)" in first
    at.button(key="generation_next").click().run()
    second = page_texts(at)
    assert at.subheader[0].value == "1 · The cache after step 2: 2 rows of K and V"
    assert "K cache (2 rows), head 1" in second and "V cache (2 rows), head 1" in second
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
