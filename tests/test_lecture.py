"""What a lecture needs from every page: worked numbers that add up, links that always open, linked views.

AppTest cannot click a chart; the click's selection state goes through ``views.on_pick``, tested here on its own,
and the charts are checked to carry that selection.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
import torch

from apptest_support import ROOT, chart_data, open_page, shown_number
from attention_core import (MAX_SENTENCE_CHARS, MODEL_ALLOWLIST, LessonConfig, Projections, row_arithmetic,
                            run_lesson)
from attention_ui import url_state, views, worked
from attention_ui.frames import token_labels
from attention_ui.text import STAGE_KEYS

LESSON_PAGES = ("pages/overview.py", "pages/step_through.py", "pages/multi_head.py", "pages/masking.py")
ALL_PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
HALF_UNIT = 0.5 * 10 ** -worked.DIGITS


def shown(text: str) -> float:
    return float(text.replace(worked.MINUS, "-").replace("∞", "inf"))


def products(text: str) -> list[float]:
    """'(0.1234)(−0.5000) + (1.0000)(2.0000) + [the other 3 products: 0.1000] + bias b1 (0.2000)' -> the shown
    terms, multiplied out."""
    terms = []
    for part in text.split(" + "):
        factors = re.findall(r"\(([^()]*)\)", part)
        if factors:
            value = 1.0
            for factor in factors:
                value *= shown(factor)
            terms.append(value)
        else:
            terms.append(shown(part.split(":")[-1].strip(" ]")))
    return terms


def bound(terms_text: str) -> float:
    """How far the sum of the shown products may be from the shown result, from rounding what is shown alone."""
    factors = [abs(shown(f)) for f in re.findall(r"\(([^()]*)\)", terms_text)]
    return HALF_UNIT * (sum(factors) + 2 * len(factors) + 2) + 1e-9


def worked_tables(at) -> list:
    return [d.value for d in at.dataframe] + [t.value for t in at.table]


def is_worked(table) -> bool:
    """A worked-numbers table (not the full matrix in "All the numbers"): it has a result column, or is the
    followed token's row of X, or the concatenation by head."""
    columns = [str(c) for c in table.columns]
    return (any(c.startswith("= ") for c in columns) or columns in (["feature", "value"],)
            or "context of this head" in columns)


# ------------------------------------------------------------------------------------- worked numbers


@pytest.mark.parametrize("stage", STAGE_KEYS)
def test_every_stage_shows_worked_numbers_that_add_up(stage):
    at = open_page("pages/step_through.py", {"step": stage, "mask": "causal", "token": "4", "heads": "2",
                                             "head": "2"})
    headings = [m.value for m in at.markdown if m.value.startswith("#### Worked numbers")]
    assert headings == ["#### Worked numbers for 4·on"], headings
    table = next(t for t in worked_tables(at) if is_worked(t))
    assert len(table) > 0
    sums = [c for c in table.columns if any(f"){worked.KEEP_TOGETHER}(" in str(v) for v in table[c])]  # products
    results = [c for c in table.columns if c.startswith("= ")]
    for sum_column, result_column in zip(sums, results):
        for text, result in zip(table[sum_column], table[result_column]):
            if not text:
                continue
            total = sum(products(text))
            assert abs(total - shown(result)) <= bound(text), (stage, text, result)
    if stage == "scaled":
        divisor = next(c for c in table.columns if c.startswith("÷ √"))
        for score, root, scaled in zip(table["score"], table[divisor], table["= scaled"]):
            assert abs(shown(score) / shown(root) - shown(scaled)) <= 2 * HALF_UNIT
    if stage == "softmax":
        weights = [shown(w) for w in table["= weight (e ÷ Σe)"]]
        assert abs(sum(weights) - 1) <= len(weights) * HALF_UNIT
        assert weights[4:] == [0.0] * (len(weights) - 4), "causal: the 4th token gives no weight to later ones"
    if stage == "context":
        per_key = [t for t in worked_tables(at) if "v_j" in t.columns]
        assert per_key and len(per_key[0]) == 7, "the context stage shows every key's value vector, a row each"
        assert "key" not in table.columns, "the sums are a table of their own, a row per feature of c"
    if stage in ("qkv", "output"):
        assert sums and results, f"{stage} writes out x·W / concat·W_O"


def test_worked_numbers_of_a_fully_blocked_row_are_zero_without_nan():
    lesson = run_lesson(LessonConfig(mask="custom", custom_mask=((False,) * 7,) + ((True,) * 7,) * 6))
    r = row_arithmetic(lesson.trace, 0, 0)
    assert r.total == 0 and torch.equal(r.weights, torch.zeros(7))
    assert torch.equal(r.context, torch.zeros_like(r.context))
    labels = [f"{i}·t" for i in range(1, 8)]
    numbers = worked.softmax(lesson.trace, labels, 0, 0)
    assert "blocked" in numbers.intro and set(numbers.table["= weight (e ÷ Σe)"]) == {"0.0000"}
    assert "convention" in numbers.intro and set(numbers.table["s − max"]) == {"undefined"}  # not −∞ − (−∞)
    context = worked.context(lesson.trace, labels, 0, 0)
    assert set(context.sums["= c"]) == {"0.0000"}


def test_small_softmax_numbers_keep_four_significant_digits_so_the_shown_ones_divide():
    """A real head's e^(s − max) 0.0020 and weight 0.0019 beside Σe = 1.0141: 0.0020 ÷ 1.0141 is 0.0020, so the shown
    numbers did not divide. Under 0.01 they keep four significant digits."""
    lesson = run_lesson(LessonConfig(init="identity", d_model=8, seed=3))
    trace = lesson.trace
    sharp = replace(trace, q=trace.q * 12)  # the worked numbers work from q and k: sharper scores
    labels = [f"{i}·t" for i in range(1, 8)]
    table = worked.softmax(sharp, labels, 0, 0).table
    r = row_arithmetic(sharp, 0, 0)
    small = [j for j, e in enumerate(r.exps.tolist()) if 0 < e < 0.01]
    assert small, "the sharpened row has small e^(s − max)"
    for j in small:
        e, w = (float(table[c][j].replace(worked.MINUS, "-")) for c in ("e^(s − max)", "= weight (e ÷ Σe)"))
        assert e == pytest.approx(float(r.exps[j]), rel=1e-3) and w == pytest.approx(float(r.weights[j]), rel=1e-3)
        assert e / float(r.total) == pytest.approx(w, rel=2e-3), "the shown e over the shown Σe gives the shown weight"
    assert worked.small_number(0.25) == "0.2500" and worked.small_number(0) == "0.0000"


def test_product_sums_collapse_long_tails_without_changing_the_total():
    left, right = torch.arange(100.0) / 100, torch.ones(100)
    text = worked.product_sum(left, right)
    assert text.count("(") == 2 * worked.SHORT_TERMS and "[the other 92 products:" in text
    whole = worked.product_sum(left[:worked.MAX_TERMS], right[:worked.MAX_TERMS])  # a toy lesson's: every product
    assert whole.count("(") == 2 * worked.MAX_TERMS and "other" not in whole
    assert sum(products(text)) == pytest.approx(float(left.sum()), abs=1e-3)


def test_a_table_of_long_sums_writes_its_first_rows_whole_and_shortens_the_rest():
    """At d_model = d_k = 64 the Q/K/V table wrote 64 rows of 64 products (over 30,000 pixels tall)."""
    lesson = run_lesson(LessonConfig(d_model=64, d_k=64, d_v=64, num_heads=1,
                                     sentence=" ".join(f"w{i}" for i in range(20))))
    labels = token_labels(lesson.tokens)
    made = {"projection": worked.projection(lesson.x, lesson.projections, labels, 0, 0, 64),
            "scores": worked.scores(lesson.trace, labels, 0, 0),
            "output": worked.output(lesson.trace, lesson.projections, labels, 0)}
    pairs = lambda text: text.count(")\u2060(")  # noqa: E731  (the products written out)
    for name, numbers in made.items():
        column = numbers.table[next(c for c in numbers.table.columns if "·" in c or "Σ" in c)].tolist()
        assert all(pairs(text) == 64 for text in column[:worked.WHOLE_ROWS]), name
        assert all(pairs(text) == worked.SHORT_TERMS and "[the other 56 products:" in text
                   for text in column[worked.WHOLE_ROWS:]), name
        assert worked.SHORTENED in numbers.intro, name
    context = worked.context(lesson.trace, labels, 5, 0)
    assert all(pairs(text) == worked.SHORT_TERMS for text in context.sums["Σ_j a_j v_j,c"][2:])
    assert context.table["v_j"][0].count(",") == 63 and context.table["v_j"][2].endswith(", …)")
    real_width = worked.projection(torch.ones(3, 100), Projections(torch.ones(100, 4), torch.ones(100, 4),
                                                                    torch.ones(100, 4)), ["a", "b", "c"], 0, 0, 4)
    assert "Each sum of 100 products" in real_width.intro and worked.SHORTENED not in real_width.intro
    small = worked.scores(run_lesson(LessonConfig()).trace, token_labels(run_lesson(LessonConfig()).tokens), 0, 0)
    assert worked.SHORTENED not in small.intro and "other" not in "".join(small.table["q · k = Σ q_m k_m"])


@pytest.mark.parametrize("value, shown", [(0, "0"), (0.67, "0.67"), (0.0012, "0.0012"), (1.5e-7, "1.5 × 10⁻⁷"),
                                          (3.3e-16, "3.3 × 10⁻¹⁶")])
def test_differences_are_written_as_people_read_them(value, shown):
    """The pages showed "6.7e-01" for 0.67 and "1.5e-07" for a rounding difference."""
    from attention_ui.text import size_in_words

    assert size_in_words(value) == shown
    assert shown_number(shown) == pytest.approx(value)


def test_a_product_is_never_split_across_two_lines():
    """A line may break between the terms of a sum (after " + "), never between the two factors of a product."""
    text = worked.product_sum(torch.tensor([0.5, -1.25]), torch.tensor([2.0, 0.1]))
    assert text == "(0.5000)\u2060(2.0000) + (−1.2500)\u2060(0.1000)", text


def test_a_long_embedding_row_lists_its_first_numbers_and_says_where_the_rest_are():
    x = torch.linspace(-1, 1, 3 * 384).reshape(3, 384)  # a real model's width
    numbers = worked.embed(x, ["1·a", "2·b", "3·c"], 1, seeded=False)
    assert len(numbers.table) == worked.MAX_ROWS and numbers.table["feature"].iloc[-1] == f"x{worked.MAX_ROWS}"
    assert "384 numbers" in numbers.intro
    # the page shows the table's first rows and the rest under "The other … rows": "listed here" read as the first few
    assert f"The first {worked.MAX_ROWS} are in the table below; all 384 are in “All the numbers”." in numbers.intro
    assert len(worked.embed(x[:, :8], ["1·a", "2·b", "3·c"], 1, seeded=False).table) == 8


def test_one_counting_convention_from_one():
    at = open_page("pages/step_through.py", {"step": "concat", "heads": "2"})
    table = next(t for t in worked_tables(at) if is_worked(t))
    assert list(table["head"])[:2] == ["head 1", "head 2"] and list(table["columns"])[:2] == ["1–4", "5–8"]
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert "h1·c1" in json.dumps(spec, ensure_ascii=False), "concat columns are named from 1"


# ------------------------------------------------------------------------------------------------ links

ODD_VALUES = ["inf", "-inf", "nan", "1e999", "²", "٣", "9" * 100_000, "<b>x</b><script>alert(1)</script>", "",
              "-1", "0x10", " 3", "true\u0000", "🐈"]


def test_every_bound_widget_is_a_known_link_parameter():
    found = set()
    for page in ALL_PAGES:
        at = open_page(page, {"mask": "padding", "heads": "2"})
        for kind in ("slider", "number_input", "text_input", "toggle", "radio", "selectbox", "checkbox"):
            for widget in at.get(kind):
                key = getattr(widget.proto, "query_param_key", "")
                if key:
                    found.add(key)
                    assert key in url_state.LINK_PARAMS, f"{page}: widget bound to ?{key} is not in LINK_PARAMS"
    assert {"sentence", "seed", "presenter", "d_k"} <= found


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_link_parameter_with_odd_values_opens_the_page(page):
    for value in ODD_VALUES:
        at = open_page(page, {key: value for key in url_state.LINK_PARAMS if key != "sentence"})
        assert not at.exception
        if page in LESSON_PAGES:
            assert at.get("vega_lite_chart"), (page, value[:20])
            if len(value) * len(url_state.LINK_PARAMS) > 500_000:
                continue  # Streamlit itself drops a query string this long: the page opens with its defaults
            notes = " ".join(i.value for i in at.info)
            assert "could not be used" in notes, (page, value[:20], notes[:200])
            assert "<script>" not in notes and "<b>" not in notes


@pytest.mark.parametrize("value", ODD_VALUES)
def test_an_odd_sentence_in_a_link_never_breaks_a_page(value):
    """A sentence the page can use is taken as it is (markup as plain text); one it cannot (empty, or longer than
    the limit) is named in the link's note and the default sentence is shown; an odd step or token is named too."""
    at = open_page("pages/step_through.py", {"sentence": value, "step": value, "token": value})
    assert not at.exception and at.get("vega_lite_chart")
    notes = " ".join(i.value for i in at.info)
    assert "could not be used" in notes and "<script>" not in notes, notes[:300]
    if value.strip() and len(value) <= MAX_SENTENCE_CHARS:
        assert at.text_input(key="sentence").value == value and "sentence = " not in notes
    else:
        assert "sentence = " in notes and at.text_input(key="sentence").value == LessonConfig().sentence, notes[:300]


def test_short_forms_are_rewritten_and_restore_the_view():
    at = open_page("pages/step_through.py", {"step": "6", "token": "2"})
    assert at.query_params["step"] == "softmax" and at.query_params["token"] == "2"
    assert at.selectbox(key="token").value == 1 and at.selectbox(key="step").value == "softmax"
    again = open_page("pages/step_through.py", dict(at.query_params))
    assert again.selectbox(key="step").value == "softmax" and again.selectbox(key="token").value == 1


def test_a_token_past_the_end_of_the_sentence_is_noted():
    at = open_page("pages/step_through.py", {"token": "30"})
    assert at.selectbox(key="token").value == 0
    assert any("token" in i.value and "7 tokens" in i.value for i in at.info), [i.value for i in at.info]
    assert "token" not in at.query_params


def test_a_head_past_the_number_of_heads_is_noted():
    at = open_page("pages/step_through.py", {"heads": "2", "head": "5"})
    assert at.selectbox(key="head").value == 1
    assert any("head" in i.value and "2 heads" in i.value for i in at.info), [i.value for i in at.info]


def test_canonical_forms():
    assert url_state.stage_key("6") == url_state.stage_key("softmax") == url_state.stage_key("SOFTMAX") == "softmax"
    assert url_state.stage_key("6 · Softmax: attention weights") == "softmax"
    assert url_state.stage_key("10") is None and url_state.stage_key("٣") is None
    assert url_state.token_number("2·cat") == url_state.token_number("2") == "2"
    assert url_state.head_number("3") == url_state.head_number("head 3") == url_state.head_number("03") == "3"
    assert url_state.head_number("head 99") is None and url_state.head_number("0") is None
    assert url_state.whole(0, 10)("²") is None and url_state.whole(0, 10)("1e3") is None


# --------------------------------------------------------------------------------------- linked views


def test_a_click_on_a_row_follows_its_token():
    state = {"pick_softmax_0": {"selection": {"pick": [{"row_index": 3}]}}}
    callback = views.on_pick("pick_softmax_0", "row_index", views.follow_token)
    import streamlit as st

    original = st.session_state
    try:
        st.session_state = state  # the callback only reads and updates a mapping
        callback()
    finally:
        st.session_state = original
    assert state[views.FOLLOW_KEY] == 3


def test_stage_charts_carry_the_click_selection_and_outline_the_followed_row():
    at = open_page("pages/step_through.py", {"step": "softmax", "token": "3"})
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    text = json.dumps(spec)
    assert '"name": "pick"' in text and '"row_index"' in text
    assert "datum.row_index == 2" in text, "the followed row (3, counted from 1) is outlined"


@pytest.mark.parametrize("presenter", ["false", "true"])
def test_the_mask_grid_beside_the_masked_scores_follows_a_click_too(presenter):
    """Stage 5's page says "click a row of a chart to follow another": a click on its mask grid showed a tooltip and
    changed nothing. Both charts carry the click selection and outline the followed row."""
    at = open_page("pages/step_through.py", {"step": "masked", "mask": "causal", "token": "3",
                                             "presenter": presenter})
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2
    for chart in charts:
        text = chart.proto.spec
        assert "mask (" in text or "scores, " in text
        assert '"name": "pick"' in json.dumps(json.loads(text)) and "datum.row_index == 2" in text, text[:200]
        assert chart.proto.selection_mode, "the chart is drawn with on_select"


def test_blocked_cells_are_marked_after_masking():
    at = open_page("pages/step_through.py", {"step": "softmax", "mask": "causal"})
    element = at.get("vega_lite_chart")[0]
    import pyarrow as pa

    data = pa.ipc.open_stream(element.proto.datasets[0].data.data).read_pandas()
    blocked = data[data["masked"]]
    assert len(blocked) == 21 and set(blocked["label"]) == {"×"}


def test_per_row_colours_are_offered():
    at = open_page("pages/step_through.py", {"step": "softmax", "colour": "row"})
    text = at.get("vega_lite_chart")[0].proto.spec
    assert "row_scaled" in text and "(weight \\u2212 row min)" in text and "row range" in text


def test_masking_page_uses_the_lessons_word_vectors():
    if "all-MiniLM-L6-v2" not in MODEL_ALLOWLIST:
        pytest.skip("no packaged model in the allowlist")
    at = open_page("pages/masking.py", {"embeddings": "all-MiniLM-L6-v2"})
    if any("not available" in w.value for w in at.warning):
        pytest.skip("the packaged model is not installed")
    assert not at.warning and len(at.get("vega_lite_chart")) >= 8


def test_real_model_pages_show_only_their_own_controls():
    at = open_page("pages/real_model.py")
    sidebar_keys = {w.key for kind in ("slider", "radio", "number_input") for w in at.get(kind)}
    assert not sidebar_keys & {"d_k", "d_v", "d_model", "heads", "seed", "mask", "init"}, sidebar_keys
    assert at.text_input(key="sentence")


def test_closed_expanders_send_nothing_and_open_ones_show_every_number():
    """A closed "All the numbers" costs a click nothing (no table sent); opened, it holds the whole matrix."""
    at = open_page("pages/step_through.py", {"step": "scores"})
    assert [e.label for e in at.expander if e.label == "All the numbers"] and not at.dataframe
    at.session_state["open_scores"] = True
    at.run()
    table = at.dataframe[0].value
    trace = run_lesson(LessonConfig()).trace
    assert table.shape == tuple(trace.scores[0].shape)
    assert abs(shown(table.iloc[2, 3]) - float(trace.scores[0, 2, 3])) < 1e-3
    at.selectbox(key="step").set_value("scaled").run()
    assert not at.dataframe, "the next stage's expander starts closed"


@pytest.mark.parametrize("words, stacked", [(6, False), (31, True)])
def test_a_long_rows_bars_go_one_above_the_other(words, stacked):
    """Side by side, the followed row's bars before and after softmax were 1,289 px wide for 31 tokens: the page
    shrank them to 820, their numbers to about 6 px. A row too long for two panels side by side stacks them."""
    sentence = " ".join(f"word{i}" for i in range(words))
    at = open_page("pages/step_through.py", {"step": "softmax", "sentence": sentence})
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    bars = [spec for spec in specs if "softmax weights" in json.dumps(spec.get("hconcat") or spec.get("vconcat"))]
    assert len(bars) == 1 and ("vconcat" in bars[0]) == stacked and ("hconcat" in bars[0]) != stacked


@pytest.mark.parametrize("button", ["next_page", "onward_page_key"], ids=["Next", "clicker's Page Down"])
def test_the_last_slide_goes_on_to_the_next_page_on_the_path(button):
    """On the last stage's slide Next was greyed out and → did nothing: a lecturer was left with no word on where to
    go. It now names the next page on Start here's path and goes there (the clicker's Page Down too), still in
    presenter mode; on the page (not a slide) the last stage keeps its link under the stage instead."""
    at = open_page("pages/step_through.py", {"presenter": "true", "step": "output", "sentence": "Hello brave world"})
    labels = {b.key: b.label for b in at.button}
    assert labels.get("next_page") == "Work it by hand ▶" and "next" not in labels, labels
    at.button(key=button).click().run()
    assert not at.exception and at.title[0].value == "Work it by hand"
    assert at.toggle(key="presenter").value and at.query_params.get("presenter") == "true"
    stage_8 = open_page("pages/step_through.py", {"presenter": "true", "step": "concat"})
    assert "next_page" not in {b.key for b in stage_8.button}, "Next goes on to stage 9 first"
    page = open_page("pages/step_through.py", {"step": "output"})
    assert page.button(key="next").disabled and "next_page" not in {b.key for b in page.button}
    assert [link.label for link in page.get("page_link")][-1] == "Next on the path: Work it by hand"


@pytest.mark.parametrize("key", ["next_page_key", "next"], ids=["clicker's Page Down", "→"])
def test_the_key_that_takes_stage_8_to_9_shows_stage_9(key):
    """Page Down on stage 8's slide opened Work it by hand: the hidden button that moved to stage 9 had the key of
    stage 9's button to the next page, which the same run then read as pressed. A lecturer never showed W_O."""
    at = open_page("pages/step_through.py", {"presenter": "true", "step": "concat"})
    at.button(key=key).click().run()
    assert not at.exception and at.session_state["step"] == "output"
    assert at.selectbox(key="step").value == "output" and at.button(key="next_page").label == "Work it by hand ▶"
    at.button(key="onward_page_key").click().run()  # a second press goes on
    assert not at.exception and at.title[0].value == "Work it by hand"


@pytest.mark.parametrize("query", [{"d_model": "2", "heads": "2", "d_k": "1", "d_v": "1"},
                                   {"d_model": "8", "heads": "4", "d_k": "2", "d_v": "2"},
                                   {"heads": "2"}])
def test_the_concat_stage_names_a_column_its_chart_has(query):
    """With d_v < 3 the words named the column “h2·c3”, which the chart did not have."""
    at = open_page("pages/step_through.py", {"step": "concat", **query})
    words = next(m.value for m in at.markdown if "is feature" in m.value)
    d_v = int(re.search(r"d_v = (\d+)", words).group(1))
    named = re.search(r"“(h2·c\d+)” is feature (\d+) of head 2's context \(column (\d+)\)", words)
    assert named, words
    columns = list(views.frames.head_column_labels(int(query["heads"]), d_v))
    assert named.group(1) in columns and columns.index(named.group(1)) + 1 == int(named.group(3))
    data = chart_data(at, "Concat")
    assert named.group(1) in set(data.astype(str).stack()), "the chart draws the named column"


def test_fewer_heads_or_a_shorter_sentence_keep_the_nearest_head_and_token_and_say_so():
    """With head 3 of 3 shown, two heads jumped every chart to head 1 without a word; a shorter sentence did the same
    to the followed token."""
    at = open_page("pages/step_through.py", {"step": "scaled", "heads": "3", "head": "3", "token": "6"})
    assert at.selectbox(key="head").value == 3
    at.slider(key="heads").set_value(2).run()
    assert at.selectbox(key="head").value == 2
    assert any("Head 3 is gone with 2 heads: head 2 is shown." in c.value for c in at.sidebar.caption)
    assert "head 2" in at.get("vega_lite_chart")[0].proto.spec
    at.run()
    assert not any("is gone" in c.value for c in at.sidebar.caption), "said once"
    at.text_input(key="sentence").input("Dogs bark loudly").run()
    assert at.selectbox(key="token").value == 2
    assert any("The sentence has 3 tokens now: the last one is followed." in c.value for c in at.sidebar.caption)
    assert not at.exception


def test_a_stage_whose_heatmaps_show_colours_only_says_where_the_numbers_are():
    """The 7-token default prints every number; a student who typed 9 words saw stage 4's numbers go without a word."""
    from attention_ui.views import COLOURS_ONLY_NOTE

    nine = "My dog loves chasing red balls in the park"
    for query, said in (({"step": "scaled", "sentence": nine}, True), ({"step": "scaled"}, False),
                        ({"step": "masked", "mask": "causal", "sentence": nine}, True)):
        at = open_page("pages/step_through.py", query)
        assert not at.exception
        assert (COLOURS_ONLY_NOTE in [c.value for c in at.caption]) is said, query
