"""The Modern attention and Generation pages, and the real-model summaries, through AppTest:
every control, bad input as a message, and a tiny random GPT-2 (saved to a temp folder and found
through ATTENTION_MODEL_DIR) generating with its cache."""

from __future__ import annotations

import json
import re

import pandas as pd
import pyarrow as pa
import pytest
import torch

from apptest_support import open_page, shown_number, switch_to
from attention_core import MODEL_DIR_ENV, attention_rollout, head_roles, head_stats
from attention_ui import models
from attention_ui.summaries import head_table

MODERN = "pages/modern_attention.py"
GENERATION = "pages/generation.py"
REAL = "pages/real_model.py"


def texts(at) -> str:
    parts = [e.value for kind in (at.markdown, at.caption, at.success, at.info, at.warning, at.error)
             for e in kind]
    return "\n".join(str(p) for p in parts)


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def chart_data(at, title_part: str) -> pd.DataFrame:
    """The data of the first chart whose title contains ``title_part`` (Streamlit ships it as Arrow)."""
    for chart in at.get("vega_lite_chart"):
        if title_part in json.dumps(json.loads(chart.proto.spec).get("title", "")):
            frames = [pa.ipc.open_stream(d.data.data).read_pandas() for d in chart.proto.datasets]
            return pd.concat(frames, ignore_index=True)
    raise AssertionError(f"no chart titled like {title_part!r}: {chart_titles(at)}")


def chart_titles(at) -> list[str]:
    titles = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec.get("title")
        titles.append(title.get("text") if isinstance(title, dict) else title)
    return titles


@pytest.fixture
def tiny_gpt2_as_distilgpt2(tmp_path, monkeypatch):
    """A tiny random GPT-2 saved where the loader looks for "distilgpt2"; no hub."""
    pytest.importorskip("transformers")
    from test_real_models import save_tiny_gpt2

    save_tiny_gpt2(tmp_path / "distilgpt2")
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models.cached_model.clear()
    yield
    models.cached_model.clear()


# ---------------------------------------------------------------- Modern attention

def assert_one_multi_query_diagram_is_yours(at):
    """g = 1 is multi-query: its diagram is drawn once, named as the chosen g, and nothing is called grouped-query."""
    titles = chart_titles(at)
    assert "multi-query: g = 1 (your g)" in titles, titles
    assert not [t for t in titles if t and t.startswith(("grouped-query", "multi-query: g = 1")) and "your g" not in t]
    assert list(at.dataframe[0].value["attention"]) == ["multi-head", "multi-query (your g)"]


def test_modern_page_shows_the_three_sharing_schemes_and_their_table():
    at = open_page(MODERN, {"heads": "4"})
    assert [s.value for s in at.subheader] == ["1 · Multi-head, grouped-query, multi-query",
                                               "2 · How big the KV cache gets", "3 · Sliding-window attention"]
    assert at.selectbox(key="kv_heads").value == 2
    titles = chart_titles(at)
    assert {"multi-head: g = 4", "grouped-query: g = 2", "multi-query: g = 1"} <= set(titles)
    summary = at.dataframe[0].value
    assert summary["key/value heads g"].tolist() == [4, 2, 1]
    assert summary["numbers cached per token and layer"].tolist() == [32, 16, 8]  # g · (d_k + d_v), d_k = d_v = 4
    assert summary["largest weight change vs multi-head"].tolist()[0] == "0.000"
    assert "stores 2× fewer keys and values" in texts(at)
    assert not warnings(at)


def test_grouping_the_heads_changes_the_diagram_and_bad_groups_get_a_message():
    at = open_page(MODERN, {"heads": "4"})
    assert at.selectbox(key="kv_heads").options == ["1", "2", "3", "4"]  # any may be tried
    at.selectbox(key="kv_heads").set_value(1).run()
    assert_one_multi_query_diagram_is_yours(at)
    at.selectbox(key="kv_heads").set_value(4).run()
    assert [t for t in chart_titles(at) if t and ": g = " in t] == ["multi-head: g = 4 (your g)", "multi-query: g = 1"]
    assert list(at.dataframe[0].value["attention"]) == ["multi-head (your g)", "multi-query"]
    at.selectbox(key="kv_heads").set_value(3).run()
    assert not at.exception
    assert any("cannot be shared evenly by 4 query heads" in w and "1, 2, 4" in w for w in warnings(at))
    assert len(at.dataframe) >= 1 and "grouped-query: g = 3" not in chart_titles(at)
    assert at.subheader[2].value == "3 · Sliding-window attention"  # the rest of the page still draws


def test_more_heads_take_g_to_their_grouped_query_default_unless_g_was_chosen():
    """A lecturer went from 2 heads (g = 1, the only grouping below h) to 4: g stayed 1, so the middle diagram showed
    multi-query again where grouped-query was wanted. A g left at the old default now moves to the new one; a g
    chosen for the old number of heads stays."""
    at = open_page(MODERN, {"heads": "2"})
    assert at.selectbox(key="kv_heads").value == 1
    at.slider(key="heads").set_value(4).run()
    assert at.selectbox(key="kv_heads").value == 2
    assert "grouped-query: g = 2" in chart_titles(at)
    at.selectbox(key="kv_heads").set_value(4).run()
    at.slider(key="heads").set_value(8).run()
    assert at.selectbox(key="kv_heads").value == 4, "a chosen g stays"


def test_the_sharing_formula_counts_heads_as_the_diagram_does():
    """The formula said query head i reads key/value head ⌊i / (h/g)⌋ for i = 0, …, h−1 beside a diagram whose
    heads are Q1…Q4 and KV1, KV2: read with the diagram's numbers, Q3 went to KV1 where the diagram drew KV2."""
    at = open_page(MODERN, {"heads": "8", "kv_heads": "2"})
    formula = " ".join(latex.value for latex in at.latex)
    assert r"\lceil i/(h/g) \rceil" in formula and r"i = 1,\dots,h" in formula
    edges = chart_data(at, "grouped-query: g = 2")[["query", "group"]].dropna().drop_duplicates()
    assert len(edges) == 8
    for query, group in edges.itertuples(index=False):
        i = int(query.removeprefix("Q"))
        assert group == f"KV{-(-i // (8 // 2))}", (query, group)  # ⌈i / (h/g)⌉


@pytest.mark.parametrize("query, context, g, note", [
    ({"context_length": "1024", "kv_heads": "3"}, 1024, 3, None),
    ({"context_length": "1,024", "kv_heads": "1"}, 1024, 1, None),
    ({"context_length": "1000"}, 8192, 2, "context_length = “1,000” (a power of 2 from 256 to 1,048,576)"),
    ({"kv_heads": "5"}, 8192, 2, "kv_heads = “5” (there are 4 heads)"),
])
def test_a_link_restores_the_context_length_and_g_or_says_why_not(query, context, g, note):
    """The page wrote context_length=1,024 into its own links and then refused it (and "1024" too), and a g that
    does not divide h (or a g past h) fell back to the default without a word."""
    at = open_page(MODERN, {"heads": "4", **query})
    assert not at.exception
    assert at.select_slider(key="context_length").value == context and at.selectbox(key="kv_heads").value == g
    notes = [i.value for i in at.info if i.value.startswith("Some values in the link")]
    assert (note in notes[0]) if note else not notes, notes
    if context != 8192:
        assert at.query_params.get("context_length") == f"{context:,}", "the form the slider writes itself"


def takeaway(at) -> str:
    found = [s.value for s in at.success if s.value.startswith("Takeaway: with g")]
    assert len(found) == 1, [s.value for s in at.success]
    return found[0]


@pytest.mark.parametrize("heads", ["2", "4", "8"])
def test_takeaway_says_nothing_is_shared_when_g_equals_h(heads):
    at = open_page(MODERN, {"heads": heads})
    at.selectbox(key="kv_heads").set_value(int(heads)).run()
    assert not at.exception
    words = takeaway(at)
    assert "as many keys and values as multi-head attention: nothing is shared" in words
    assert "1× fewer" not in words and "fewer" not in words


@pytest.mark.parametrize("heads, g, words", [
    ("2", 1, "with g = 1, both query heads share one key/value head (multi-query), so the cache stores 2× fewer"),
    ("8", 1, "with g = 1, all 8 query heads share one key/value head (multi-query), so the cache stores 8× fewer"),
    ("8", 2, "with g = 2, each group of 4 query heads shares one key/value head, so the cache stores 4× fewer "
             "keys and values than multi-head attention (2 key/value heads instead of 8)"),
    ("8", 4, "with g = 4, each group of 2 query heads shares one key/value head, so the cache stores 2× fewer"),
    ("4", 1, "(1 key/value head instead of 4)"),
])
def test_takeaway_reads_right_for_every_grouping(heads, g, words):
    at = open_page(MODERN, {"heads": heads})
    at.selectbox(key="kv_heads").set_value(g).run()
    assert not at.exception
    assert words in takeaway(at)
    assert not re.search(r"\b1× fewer", takeaway(at))


def test_one_head_has_nothing_to_share():
    at = open_page(MODERN, {"heads": "1"})
    assert any("nothing to share" in i.value for i in at.info)
    assert not warnings(at)


def test_kv_cache_table_follows_context_length_and_precision():
    at = open_page(MODERN, {"heads": "2"})
    table = at.dataframe[-1].value if len(at.dataframe) == 1 else at.dataframe[1].value
    llama = table.set_index("model").loc["Llama 2 7B"]
    assert llama["cache MiB"] == 4096  # 8,192 tokens × 512 KiB
    at.select_slider(key="context_length").set_value(1024).run()
    at.selectbox(key="cache_precision").set_value("32-bit (fp32)").run()
    table = at.dataframe[1].value.set_index("model")
    assert table.loc["Llama 2 7B", "cache MiB"] == 1024  # 1,024 tokens × 1 MiB
    assert table.loc["Mistral 7B v0.1", "cached tokens"] == 1024
    at.select_slider(key="context_length").set_value(2**20).run()
    table = at.dataframe[1].value.set_index("model")
    assert table.loc["Mistral 7B v0.1", "cached tokens"] == 4096  # its window caps the cache
    # 1M tokens × 256 KiB (32-bit) = 256 GiB: past 100 GiB the table and the chart count in GiB ("2,800,000" MiB
    # was the chart's axis)
    assert table.loc["Llama 3 8B", "cache GiB"] == 2**20 * 128 * 2 / 1024 / 1024
    assert "cache MiB" not in table.columns and any("KV cache (GiB)" in c.proto.spec for c in at.get("vega_lite_chart"))
    # GPT-2 reads at most 1,024 tokens: the table says so, and the page calls a longer context a what-if
    assert table.loc["GPT-2 small", "longest context"] == 1024
    what_if = [c.value for c in at.caption if "can read (its position limit)" in c.value]
    assert what_if and "GPT-2 small" in what_if[0] and "Mistral 7B v0.1" in what_if[0], what_if
    pale = {name.removesuffix(" (what-if)") for name, what_if in cache_bar_names(at).items()
            if what_if and name.endswith(" (what-if)")}
    assert pale == {name for name in table.index if name in what_if[0]}, "the chart names the caption's what-ifs"
    at.select_slider(key="context_length").set_value(1024).run()
    assert not [c.value for c in at.caption if "can read (its position limit)" in c.value]
    assert not any(cache_bar_names(at).values()) and not any("what-if" in name for name in cache_bar_names(at))


def cache_bar_names(at) -> dict[str, bool]:
    """The KV-cache chart's model names, each with whether its bars are drawn as a what-if."""
    import json

    import pyarrow as pa

    chart = next(c for c in at.get("vega_lite_chart") if re.search(r"KV cache \((MiB|GiB)\)", c.proto.spec))
    rows = [row for d in chart.proto.datasets for row in pa.ipc.open_stream(d.data.data).read_pandas()
            .to_dict("records")] or json.loads(chart.proto.spec)["datasets"]
    return {row["model"]: bool(row["what_if"]) for row in rows}


def test_the_cache_bars_stay_visible_on_a_projector():
    """The what-if bars at opacity 0.4 and the light grey multi-head bars (#c7c7c7) all but vanished on a projector:
    the grey is one a chart's shapes may use on white (3 : 1), and a what-if is half as strong with a dashed outline."""
    from test_printed_number_contrast import contrast

    at = open_page(MODERN, {"presenter": "true"})
    spec = json.loads(next(c for c in at.get("vega_lite_chart") if "KV cache (MiB)" in c.proto.spec).proto.spec)
    encoding = next(layer for layer in [spec, *spec.get("layer", [])] if "encoding" in layer)["encoding"]
    grey = encoding["color"]["scale"]["range"][1]
    assert contrast(grey, "#ffffff") >= 3, grey
    assert encoding["opacity"]["condition"]["value"] >= 0.5
    assert encoding["stroke"]["condition"]["value"] and encoding["strokeDash"]["condition"]["value"] == [4, 2]
    assert any(cache_bar_names(at).values()), "the default context makes some models what-ifs"


def test_sliding_window_controls_and_reach():
    at = open_page(MODERN, {"heads": "2"})
    at.number_input(key="window").set_value(2).run()
    at.slider(key="window_layers").set_value(4).run()
    assert "window w = 2" in chart_titles(at)
    assert "After 4 layers the last token can draw on **5 of 7** tokens (L·(w − 1) + 1 = 5)" in texts(at)
    cells = chart_data(at, "can reach")
    last_layer = cells[cells["depth"] == "after layer 4"]["state"].tolist()
    assert last_layer == ["out of reach"] * 2 + ["can reach"] * 5
    at.number_input(key="window").set_value(7).run()  # 4 · 6 + 1 = 25 > 7: capped, and the page says why
    assert ("After 4 layers the last token can draw on **7 of 7** tokens (L·(w − 1) + 1 = 25, more than the "
            "sentence's 7: it reaches them all)") in texts(at)
    for bad, shown in ((0, 1), (-3, 1), (33, 32), (40, 32)):
        at.number_input(key="window").set_value(bad).run()
        assert not at.exception
        assert any(f"got {bad}. The charts below show w = {shown}, the nearest allowed" in w for w in warnings(at)), bad
        assert f"window w = {shown}" in chart_titles(at), bad  # the section goes on: its mask, reach and questions
        assert "After 4 layers the last token can draw on" in texts(at), bad


# ---------------------------------------------------------------- Generation

def _step_text(at) -> str:
    return next(p.proto.text for p in at.get("progress"))


def test_a_generation_slides_line_names_its_section_and_the_step_once():
    """A slide's step line stands for section 1's heading: it read "1 · Step 1 of 7: …", two counts in a row."""
    at = open_page(GENERATION, {"presenter": "true", "generation_step": "4"})
    assert _step_text(at) == "1 · The cache at step 4 of 7: 4 rows of K and V, the newest token 4·on", _step_text(at)
    assert not [s.value for s in at.subheader if s.value.startswith("1 · ")], "the line is section 1's heading"


def test_next_back_and_start_again_move_through_the_tokens():
    at = open_page(GENERATION)
    assert _step_text(at).startswith("Step 1 of 7")
    assert at.subheader[0].value == "1 · After step 1 the cache holds 1 row of K and V"
    for _ in range(3):
        at.button(key="generation_next").click().run()
    assert _step_text(at).startswith("Step 4 of 7") and "4·on" in _step_text(at)
    assert "K cache, head 1" in chart_titles(at) and "4 rows of K and V" in at.subheader[0].value
    at.button(key="generation_back").click().run()
    assert _step_text(at).startswith("Step 3 of 7")
    at.button(key="generation_reset").click().run()
    assert _step_text(at).startswith("Step 1 of 7")
    assert at.button(key="generation_back").disabled
    metric = next(m for m in at.metric if "cached" in m.label)
    assert shown_number(metric.value) < 1e-5
    assert not at.exception


def test_the_generation_step_is_in_the_link_and_a_link_opens_at_it():
    at = open_page(GENERATION)
    assert at.query_params["generation_step"] in ("1", ["1"]), "step 1 too: see url_state.ALWAYS_IN_LINK"
    at.button(key="generation_next").click().run()
    at.button(key="generation_next").click().run()
    assert at.query_params["generation_step"] in ("3", ["3"])
    shared = open_page(GENERATION, {"generation_step": "3"})
    assert _step_text(shared).startswith("Step 3 of 7") and "3 rows of K and V" in shared.subheader[0].value


@pytest.mark.parametrize("step", ["8", "0", "x", "1e9"])
def test_a_generation_step_past_the_sentence_opens_at_step_1_with_a_note(step):
    at = open_page(GENERATION, {"generation_step": step})
    assert _step_text(at).startswith("Step 1 of 7")
    assert any("generation_step" in i.value and "could not be used" in i.value for i in at.info)
    assert at.query_params["generation_step"] in ("1", ["1"])


def test_last_step_disables_next_and_a_shorter_sentence_keeps_the_step_in_range():
    at = open_page(GENERATION)
    for _ in range(10):
        if at.button(key="generation_next").disabled:
            break
        at.button(key="generation_next").click().run()
    assert _step_text(at).startswith("Step 7 of 7")
    at.text_input(key="sentence").input("Hello there").run()
    assert _step_text(at).startswith("Step 1 of 2")


def test_shared_key_value_heads_in_generation():
    at = open_page(GENERATION, {"heads": "4"})
    assert at.selectbox(key="generation_kv_heads").options == ["1", "2", "4"]
    at.selectbox(key="generation_kv_heads").set_value(1).run()
    at.button(key="generation_next").click().run()
    assert "head 1 reads key/value head 1" in texts(at)
    assert shown_number(next(m for m in at.metric if "cached" in m.label).value) < 1e-5


def test_timing_chart_has_both_methods():
    at = open_page(GENERATION)
    chart = next(c for c in at.get("vega_lite_chart") if "ms per step" in c.proto.spec)
    rows = pd.concat([pa.ipc.open_stream(d.data.data).read_pandas() for d in chart.proto.datasets])
    assert set(rows["method"]) == {"with the KV cache", "recompute everything"}
    assert sorted(set(rows["tokens so far"])) == [8, 32, 64, 128, 256]
    assert re.search(r"at 256 tokens a step takes \*\*[\d.]+ ms\*\* with the cache", texts(at))


def test_real_model_generation_without_a_model_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))  # an empty folder: no model here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models.cached_model.clear()
    at = open_page(GENERATION)
    assert not at.exception
    assert not [t for t in at.toggle if t.key == "generation_real"], "no model to generate with: nothing offered"
    note = next(i.value for i in at.info if "No GPT-style model is available" in i.value)
    assert "`ATTENTION_MODEL_DIR`" in note and "README" not in note, "how to add one, said where it is read"
    assert "If you run the app yourself" in note, "a student on a laptop is the one who runs it"
    models.cached_model.clear()


@pytest.mark.parametrize("query", [{}, {"presenter": "true"}], ids=["page", "slide"])
def test_generations_words_promise_section_4_only_where_it_is_shown(monkeypatch, tmp_path, query):
    """The page's first words said "section 4 shows a real model that does" on a slide that leaves section 4 out
    (no GPT-style model on the server): the class never saw it."""
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models.cached_model.clear()
    at = open_page(GENERATION, query)
    intro = next(m.value for m in at.markdown if "KV cache" in m.value and "as if it had written" in m.value)
    assert "section 4 shows" not in intro, intro
    assert ("section 4 says how" in intro) == (not query), intro
    assert ("4 · A real model generating" in [s.value for s in at.subheader]) == (not query)
    models.cached_model.clear()


def test_generations_words_point_to_section_4_where_a_model_writes(tiny_gpt2_as_distilgpt2):
    at = open_page(GENERATION, {"presenter": "true"})
    intro = next(m.value for m in at.markdown if "KV cache" in m.value and "as if it had written" in m.value)
    assert "section 4 shows a real model that does" in intro, intro
    assert "4 · A real model generating" in [s.value for s in at.subheader]


def test_real_model_generates_and_shows_each_tokens_attention(tiny_gpt2_as_distilgpt2):
    at = open_page(GENERATION)
    at.toggle(key="generation_real").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert "**Generated:**" in texts(at)
    at.slider(key="generation_count").set_value(3).run()
    assert at.select_slider(key="generation_pick").options.__len__() == 3
    at.selectbox(key="generation_layer").set_value(2).run()
    at.select_slider(key="generation_pick").set_value(2).run()
    title = next(t for t in chart_titles(at) if t and "read into the cache" in t)
    assert "layer 2, every head" in title
    metric = next(m for m in at.metric if "full pass" in m.label)
    assert shown_number(metric.value) < 1e-4


# ---------------------------------------------------------------- real-model summaries

def test_a_gpt2_first_token_and_a_one_token_sentence_claim_no_overstated_weight(tiny_gpt2_as_distilgpt2):
    """GPT-2's first token sees only itself: its weight and what is added are both all its own (1.00 against 1.00),
    so section 6 shows no comparison for it and no button to a head "where the weight most overstates" it; a
    one-token sentence says why there is nothing to compare."""
    at = switch_to(open_page("app.py"), REAL)
    at.selectbox(key="model").set_value("distilgpt2").run()
    at.selectbox(key="piece").set_value(0).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [s for s in at.success if "of what the head adds to it" in s.value]
    assert not [b for b in at.button if b.key == "strongest_sink"]
    at.text_input(key="sentence").input("cat").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("One token can only look at itself" in i.value for i in at.info)
    assert not [d for d in at.dataframe if "share of the lengths added" in d.value.columns]


def test_real_model_page_ends_with_the_summaries(tiny_gpt2_as_distilgpt2):
    at = open_page("app.py")
    at = switch_to(at, REAL)
    at.selectbox(key="model").set_value("distilgpt2").run()
    assert not at.exception, [e.value for e in at.exception]
    heads = [s.value for s in at.subheader]
    assert heads[-4:] == ["3 · Mean over heads, layer by layer",
                          "4 · Attention rollout: where each token's information came from",
                          "5 · Every head in numbers",
                          "6 · A weight is not what a token adds"]
    # GPT-2 adds no [CLS] or [SEP]: its resting place is the first token, whose own row (it sees only itself) is left
    # out of the per-layer means
    sinks = next(d.value for d in at.dataframe if "share of the lengths added" in d.value.columns)
    assert list(sinks.columns) == ["layer", "weight on the first token", "share of the lengths added"]
    assert len(sinks) == 2 and ((sinks.iloc[:, 1:] >= 0) & (sinks.iloc[:, 1:] <= 1)).all().all()
    assert any("The first token's own row can only look at itself" in c.value for c in at.caption)
    # nor does the heads grid's caption name them for GPT-2: its heads rest on the first token
    look_for = next(c.value for c in at.caption if c.value.startswith("Each square's rows and columns"))
    assert "to the first token, or to the same word" in look_for and "[CLS]" not in look_for
    table = next(d.value for d in at.dataframe if "to previous token" in d.value.columns)
    assert len(table) == 2 * 4  # tiny GPT-2: 2 layers × 4 heads
    assert table[["layer", "head"]].values.tolist()[:2] == [[1, 1], [1, 2]]
    assert ((table["to previous token"] >= 0) & (table["to previous token"] <= 1)).all()
    assert any("rollout after each layer" in (t or "") for t in chart_titles(at))
    assert re.search(r"(strongest previous-token heads are|no head gives 50% of its weight to the previous token "
                     r"\(the largest shares:) L\dH\d \(\d\.\d\d\)", texts(at))


@pytest.mark.parametrize("shares, said", [
    ([1.0, 0.62, 0.51], "the strongest previous-token heads are L1H1 (1.00), L1H2 (0.62), L1H3 (0.51)"),
    ([1.0, 0.41, 0.34], "the strongest previous-token heads are L1H1 (1.00), then under 50%: L1H2 (0.41), L1H3 (0.34)"),
    ([0.41, 0.34, 0.2], "no head gives 50% of its weight to the previous token (the largest shares: L1H1 (0.41), "
                        "L1H2 (0.34), L1H3 (0.20))"),
])
def test_the_line_under_the_head_table_calls_heads_previous_token_heads_only_when_the_table_does(shares, said):
    """Heads giving 0.41 and 0.34 of their weight to the previous token were "the strongest previous-token heads",
    while the table beside the line named them sinks (its roles start at 50%)."""
    from attention_ui.summaries import strongest_in_words

    table = pd.DataFrame({"layer": [1] * 4, "head": [1, 2, 3, 4], "to previous token": shares + [0.1]})
    assert strongest_in_words(table, "to previous token", "previous-token heads", "to the previous token") == said


def test_head_table_names_previous_token_and_sink_heads():
    T = 6
    previous = torch.eye(T).roll(-1, dims=1).tril()  # row i -> i - 1 (row 0 -> nothing)
    previous[0, 0] = 1
    sink = torch.zeros(T, T)
    sink[:, 0] = 1
    att = torch.stack([previous, sink])[None]  # (1, 2, T, T)
    stats = head_stats(att, [False] * T)
    table = head_table(stats, head_roles(stats))
    assert table["looks like"].tolist() == ["previous token", "first-token sink"]
    assert table["to previous token"].tolist() == [1.0, pytest.approx(1 / 5)]  # the sink's row 2 looks back too
    rollout = attention_rollout(att)
    torch.testing.assert_close(rollout.sum(-1), torch.ones(1, T))


@pytest.mark.parametrize("page", [MODERN, GENERATION])
@pytest.mark.parametrize("query", [
    {"sentence": "Hi", "heads": "8"},
    {"sentence": "<b>bold</b> 🙂 $x$", "heads": "2", "mask": "causal"},
    {"mask": "padding", "pad_to": "10", "heads": "4"},
    {"init": "identity", "heads": "4"},
    {"sentence": " ".join(["word"] * 32), "heads": "8", "d_model": "64"},
])
def test_odd_sentences_and_settings_draw_without_tracebacks(page, query):
    at = open_page(page, query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(at.get("vega_lite_chart")) >= 4


def test_an_empty_sentence_is_a_message():
    at = open_page(GENERATION)
    at.text_input(key="sentence").set_value("   ").run()
    assert not at.exception
    assert at.error and "empty" in at.error[0].value.lower()


def test_a_link_restores_the_modern_settings():
    at = open_page(MODERN, {"heads": "4", "kv_heads": "1", "cache_precision": "8-bit", "window_layers": "2",
                            "window": "5"})
    assert at.selectbox(key="kv_heads").value == 1
    assert at.number_input(key="window").value == 5  # a class opening the lecturer's link sees the same window
    assert_one_multi_query_diagram_is_yours(at)
    assert at.dataframe[1].value.set_index("model").loc["Llama 2 7B", "cache MiB"] == 2048  # 8,192 × 256 KiB
    assert "After 2 layers" in texts(at)
    for widget in (at.selectbox(key="kv_heads"), at.slider(key="window_layers"), at.selectbox(key="cache_precision"),
                   at.select_slider(key="context_length"), at.number_input(key="window")):
        assert widget.proto.query_param_key == widget.key  # the browser writes these back into the address bar


@pytest.mark.parametrize("query", [
    {"kv_heads": "1e999"}, {"kv_heads": "²"}, {"kv_heads": "9"}, {"kv_heads": "3"}, {"window_layers": "99"},
    {"window_layers": "inf"}, {"cache_precision": "bogus"}, {"context_length": "1e999"}, {"context_length": "3"},
    {"window": "99"}, {"window": "0"}, {"window": "-3"}, {"window": "1e999"}, {"window": "nan"}, {"window": "x"},
])
def test_forged_links_to_the_modern_page_never_fail(query):
    at = open_page(MODERN, {"heads": "4", **query})
    assert not at.exception
    assert at.subheader[-1].value == "3 · Sliding-window attention"
    if "window" in query:  # dropped with a note, and the default window drawn
        assert any("window = " in note.value for note in at.info), [note.value for note in at.info]
        assert at.number_input(key="window").value == 3


def test_forged_generation_link_falls_back_to_a_divisor():
    at = open_page(GENERATION, {"heads": "4", "generation_kv_heads": "3"})
    assert not at.exception
    assert at.selectbox(key="generation_kv_heads").value in (1, 2, 4)


def test_only_a_model_that_is_there_is_offered(tiny_gpt2_as_distilgpt2):
    at = open_page(GENERATION)
    at.toggle(key="generation_real").set_value(True).run()
    assert "**Generated:**" in texts(at)
    assert at.selectbox(key="generation_model").options == ["distilgpt2"], "gpt2 is not here, so not offered"


def test_with_two_heads_the_page_says_why_two_diagrams_match():
    """h = 2 (the default) leaves g = 1 or 2 only: the page says so and how to see grouped-query attention."""
    assert "the only groupings are g = 1" in texts(open_page(MODERN))
    assert "the only groupings" not in texts(open_page(MODERN, {"heads": "4"}))


def test_one_click_shows_grouped_query_attention_at_the_default_two_heads():
    """At the default 2 heads grouped-query attention cannot be seen: a student had to find the number of heads in
    the settings. A button sets 4 heads and g = 2, and the page draws the grouped-query diagram between the others."""
    at = open_page(MODERN)
    assert_one_multi_query_diagram_is_yours(at)
    at.button(key="use_more_heads").click().run()
    assert not at.exception
    assert at.slider(key="heads").value == 4 and at.selectbox(key="kv_heads").value == 2
    assert {"multi-head: g = 4", "grouped-query: g = 2", "multi-query: g = 1"} <= set(chart_titles(at))
    assert "the only groupings" not in texts(at) and not [b for b in at.button if b.key == "use_more_heads"]


def test_the_new_query_and_the_caches_share_one_colour_bar_and_cell_size():
    """Side by side in thirds of the column, q_t, the K cache and the V cache printed their numbers at 8-9 px."""
    at = open_page("pages/generation.py")
    specs = {spec["title"]["text"] if isinstance(spec.get("title"), dict) else spec.get("title"): spec
             for spec in (json.loads(c.proto.spec) for c in at.get("vega_lite_chart"))}
    found = [specs[t] for name in ("new query q_t", "K cache", "V cache") for t in specs if str(t).startswith(name)]
    assert len(found) == 3, list(specs)
    legends = [sum(1 for layer in spec["layer"] if "scale" in layer["encoding"].get("color", {})
                   and layer["encoding"]["color"].get("legend", {}) is not None) for spec in found]
    assert legends == [0, 0, 1], legends
    cells = {spec["width"] / len(spec["layer"][0]["encoding"]["x"]["scale"]["domain"]) for spec in found}
    assert len(cells) == 1 and cells.pop() >= 38, cells


@pytest.mark.parametrize("presenter", ["false", "true"])
def test_shared_caches_are_titled_by_their_key_value_head(presenter):
    """With g = 1 key/value head for h = 4, head 4's caches were titled “K cache, head 4”: a cache of its own, which
    is what grouped-query attention does away with. They are the key/value head's; with g = h, the head's own."""
    shared = open_page("pages/generation.py", {"heads": "4", "generation_kv_heads": "1", "head": "4",
                                               "generation_step": "3", "presenter": presenter})
    titles = json.dumps([json.loads(c.proto.spec).get("title") for c in shared.get("vega_lite_chart")],
                        ensure_ascii=False)
    assert "K cache" in titles and "V cache" in titles
    assert re.search(r"[KV] cache[^\"]*(key/value|kv) head 1", titles), titles
    assert not re.search(r"[KV] cache[^\"]*, head 4", titles), titles
    own = open_page("pages/generation.py", {"heads": "4", "head": "4", "generation_step": "3", "presenter": presenter})
    titles = json.dumps([json.loads(c.proto.spec).get("title") for c in own.get("vega_lite_chart")],
                        ensure_ascii=False)
    assert re.search(r"K cache[^\"]*, head 4", titles), titles
