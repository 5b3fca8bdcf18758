"""The URL holds the view: settings made with the widgets come back, with the same numbers, in a
fresh session opened with that URL's query parameters; bad parameters never crash a page.

AppTest note: in a browser the *frontend* writes a URL-bound widget's new value into the address
bar (each such widget's proto carries its ``query_param_key``). AppTest has no frontend, so
``at.query_params`` only holds what the server wrote (the custom grid, a stage set by Next/Back,
values restored after a page switch). ``browser_url`` adds what the frontend would write: every
bound widget's value that differs from its default, spelled as the widget shows it (the option's
label for a select box).
"""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import APP, ROOT, TIMEOUT, open_page, switch_to  # noqa: F401



def browser_url(at: AppTest) -> dict[str, str]:
    """The query parameters a browser's address bar would hold now (see the module docstring)."""
    url = dict(at.query_params)
    for kind in ("slider", "number_input", "text_input", "toggle", "radio", "selectbox"):
        for widget in at.get(kind):
            key = widget.proto.query_param_key
            if not key:
                continue
            proto = widget.proto
            if kind in ("radio", "selectbox"):
                index = widget.index
                if index is None or (proto.HasField("default") and index == proto.default):
                    url.pop(key, None)
                    continue
                url[key] = proto.options[index]
            elif kind == "toggle":
                if not widget.value:
                    url.pop(key, None)
                    continue
                url[key] = "true"
            elif kind == "text_input":
                if widget.value == proto.default:
                    url.pop(key, None)
                    continue
                url[key] = widget.value
            else:  # slider, number_input: whole numbers here
                default = proto.default[0] if kind == "slider" else proto.default
                if widget.value == default:
                    url.pop(key, None)
                    continue
                url[key] = str(int(widget.value))
    return url


def chart_data(at: AppTest) -> list[tuple[str, pd.DataFrame]]:
    """(title, data) of every chart on the page, in page order."""
    out = []
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        title = spec.get("title", {})
        title = title.get("text", "") if isinstance(title, dict) else str(title or "")
        frames = [pa.ipc.open_stream(d.data.data).read_pandas() for d in element.proto.datasets]
        out.append((title, pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()))
    return out


def weights_of(at: AppTest, title: str):
    data = next(df for t, df in chart_data(at) if title in t)
    return data.pivot_table(index="row_index", columns="col_index", values="value").to_numpy()


def settings(at: AppTest) -> dict:
    values = {
        "sentence": at.text_input(key="sentence").value,
        "d_model": at.slider(key="d_model").value,
        "heads": at.slider(key="heads").value,
        "init": at.radio(key="init").value,
        "mask": at.radio(key="mask").value,
        "seed": at.number_input(key="seed").value,
        "device": at.selectbox(key="device").value,
        "token": at.selectbox(key="token").value,
        "presenter": at.toggle(key="presenter").value,
    }
    for key in ("d_k", "d_v"):  # not drawn with identity weights, which fix them to d_model / h
        if any(s.key == key for s in at.slider):
            values[key] = at.slider(key=key).value
    for key in ("head", "step"):
        if any(s.key == key for s in at.selectbox):
            values[key] = at.selectbox(key=key).value
    return values


def assert_same_charts(first: AppTest, second: AppTest) -> None:
    a, b = chart_data(first), chart_data(second)
    assert [t for t, _ in a] == [t for t, _ in b]
    assert a, "no charts to compare"
    for (title, left), (_, right) in zip(a, b):
        pd.testing.assert_frame_equal(left, right, check_exact=False, rtol=1e-6, obj=title)


# ------------------------------------------------------------------------------------ round trips


def test_round_trip_restores_every_setting_and_the_same_numbers():
    at = open_page("pages/step_through.py")
    at.text_input(key="sentence").set_value("Hello brave new world").run()
    at.slider(key="d_model").set_value(12).run()
    at.slider(key="heads").set_value(3).run()
    at.slider(key="d_k").set_value(5).run()
    at.slider(key="d_v").set_value(6).run()
    at.radio(key="mask").set_value("causal").run()
    at.number_input(key="seed").set_value(7).run()
    at.selectbox(key="token").set_value(2).run()
    at.selectbox(key="head").set_value(3).run()
    for _ in range(3):
        at.button(key="next").click().run()
    at.toggle(key="presenter").set_value(True).run()
    assert not at.exception
    assert at.query_params.get("step") == "scaled", "the Next button writes the stage's short name into the URL"
    url = browser_url(at)
    for key in ("sentence", "d_model", "heads", "d_k", "d_v", "mask", "seed", "token", "head", "step", "presenter"):
        assert key in url, f"{key} is not in the URL: {url}"
    assert url["sentence"] == "Hello brave new world" and url["d_model"] == "12" and url["mask"] == "causal"
    assert url["head"] == "3", "a link names the head by its number, not by a label (head=head+3)"

    restored = open_page("pages/step_through.py", url)
    expected = settings(at)
    assert expected["step"] == "scaled" and expected["head"] == 3 and expected["token"] == 2
    assert settings(restored) == expected
    assert [s.value for s in restored.subheader] == [s.value for s in at.subheader]
    assert_same_charts(at, restored)

    # The same numbers at another stage, too.
    for session in (at, restored):
        session.selectbox(key="step").set_value("softmax").run()
        assert not session.exception
    assert_same_charts(at, restored)
    weights = weights_of(restored, "attention weights")
    assert weights.shape == (4, 4) and weights[0, 1:].max() == 0  # causal, followed through the URL


def test_round_trip_restores_a_custom_grid():
    at = open_page("pages/masking.py")
    at.radio(key="mask").set_value("custom").run()
    next(b for b in at.button if b.label == "Start from causal").click().run()
    at.selectbox(key="token").set_value(4).run()
    next(b for b in at.button if "Block" in b.label).click().run()
    assert not at.exception
    url = browser_url(at)
    assert url.get("grid") == "1000000.1100000.1110000.1111000.0000000.1111110.1111111", url

    restored = open_page("pages/masking.py", url)
    assert restored.radio(key="mask").value == "custom"
    assert restored.session_state["custom_grid"] == at.session_state["custom_grid"]
    assert any("1 row is fully blocked" in w.value for w in restored.warning)
    mine = weights_of(restored, "weights with your mask")
    assert (mine == weights_of(at, "weights with your mask")).all()
    assert (mine[4] == 0).all() and mine[3, :4].min() > 0 and mine[3, 4:].max() == 0


def test_round_trip_restores_padding_and_identity_weights():
    at = open_page("pages/overview.py")
    at.radio(key="mask").set_value("padding").run()
    at.slider(key="pad_to").set_value(12).run()
    at.radio(key="init").set_value("identity").run()
    at.slider(key="heads").set_value(4).run()
    url = browser_url(at)
    assert {k: url.get(k) for k in ("mask", "pad_to", "init", "heads")} == \
        {"mask": "padding", "pad_to": "12", "init": "identity", "heads": "4"}, url
    restored = open_page("pages/overview.py", url)
    assert settings(restored) == settings(at)
    assert restored.slider(key="pad_to").value == 12
    assert "d_k" not in [s.key for s in restored.slider]
    labels = next(df for t, df in chart_data(restored) if "attention weights" in t)["query"].unique().tolist()
    assert sum("[PAD]" in label for label in labels) == 5
    assert_same_charts(at, restored)


def test_default_view_keeps_only_the_stage_in_the_url():
    """Defaults stay out of the address, but the stage is always there: an entry of the page without it is one
    Streamlit added on leaving the page (``url_state.ALWAYS_IN_LINK``)."""
    at = open_page("pages/step_through.py")
    assert dict(at.query_params) == {"step": "embed"}


def test_settings_survive_switching_pages():
    at = open_page("pages/overview.py")
    at.text_input(key="sentence").set_value("Dogs chase cats").run()
    at.slider(key="d_model").set_value(10).run()
    at.radio(key="mask").set_value("causal").run()
    before = settings(at)
    for page in ("pages/step_through.py", "pages/multi_head.py", "pages/masking.py", "pages/overview.py"):
        switch_to(at, page)
        now = settings(at)
        assert {k: now[k] for k in ("sentence", "d_model", "mask")} == \
            {k: before[k] for k in ("sentence", "d_model", "mask")}, page
        data = chart_data(at)[0][1]
        tokens = data[next(c for c in ("query", "token") if c in data.columns)].unique().tolist()
        assert tokens[0] == "1·Dogs", (page, tokens)


def test_settings_from_a_link_survive_the_first_page_switch():
    at = open_page("app.py", {"sentence": "Hello brave new world", "heads": "3", "head": "head 3"})
    assert at.text_input(key="sentence").value == "Hello brave new world"
    at.switch_page("pages/step_through.py").run()
    assert not at.exception
    following = [c.value for c in at.caption if c.value.startswith("Following")]
    assert following and "“1·Hello”" in following[0], following
    assert at.slider(key="heads").value == 3
    assert at.selectbox(key="head").value == 3


def test_short_stage_name_in_the_url_opens_that_stage():
    at = open_page("pages/step_through.py", {"step": "softmax"})
    assert "Softmax" in at.subheader[0].value


def test_full_stage_title_in_the_url_opens_that_stage():
    at = open_page("pages/step_through.py", {"step": "6 · Softmax: attention weights"})
    assert at.subheader[0].value.startswith("6 · Softmax")


def test_stage_4s_softmax_without_scaling_is_kept_in_the_link():
    """Switched on, "Also show the softmax without ÷√d_k" was the one setting a copied link lost."""
    at = open_page("pages/step_through.py", {"step": "scaled"})
    assert not any("Without ÷√d_k" in m.value for m in at.markdown)
    at.toggle(key="unscaled").set_value(True).run()
    assert at.query_params["unscaled"] == "true", dict(at.query_params)
    copied = open_page("pages/step_through.py", {"step": "scaled", "unscaled": "true"})
    assert copied.toggle(key="unscaled").value
    shown = [json.loads(c.proto.spec) for c in copied.get("vega_lite_chart")]
    assert any("Without ÷√d_k" in m.value for m in copied.markdown) and len(shown) == 4, len(shown)


# ----------------------------------------------------------------------------------- bad parameters


@pytest.mark.parametrize("grid", ["", "abc", "10.1", "1x1.010", "10.01", "....", "1" * 5000, "2222222"])
def test_malformed_grid_param_is_ignored_without_a_crash(grid):
    at = open_page("pages/masking.py", {"mask": "custom", "grid": grid})
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value.startswith("Masking")
    assert at.radio(key="mask").value == "custom"
    assert (weights_of(at, "weights with your mask") > 0).all(), "a malformed grid must not block anything"
    assert not at.warning


BAD_PARAMS = [
    {"d_k": "0"}, {"d_v": "-3"}, {"heads": "99"}, {"d_model": "-5"}, {"d_model": "1e9"}, {"seed": "abc"},
    {"seed": "99999999999"}, {"mask": "bogus"}, {"init": "zeros"}, {"step": "bogus"}, {"token": "99·zzz"},
    {"head": "head 9"}, {"presenter": "maybe"}, {"device": "cuda:7"}, {"pad_to": "500", "mask": "padding"},
    {"embeddings": "gpt-9"}, {"example": "<script>alert(1)</script>"},
    {"sentence": "<script>alert(1)</script>", "token": "2·script"},
]


@pytest.mark.parametrize("params", BAD_PARAMS, ids=lambda p: "&".join(f"{k}={v}"[:24] for k, v in p.items()))
def test_bad_url_params_never_crash(params):
    at = open_page("pages/step_through.py", params)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Step through attention"
    assert at.get("vega_lite_chart")
    values = settings(at)
    assert 2 <= values["d_model"] <= 64 and 1 <= values["heads"] <= 8
    assert 1 <= values["d_k"] <= 64 and 1 <= values["d_v"] <= 64
    assert 0 <= values["seed"] <= 2**31 - 1
    assert values["mask"] in at.radio(key="mask").options
    assert values["device"] in at.selectbox(key="device").options


def test_a_bad_step_on_generation_says_whose_step_it_is():
    """On Generation "step=bogus" was said to expect "a stage from 1 to 9": that page has no stages, its own step
    is generation_step."""
    at = open_page("pages/generation.py", {"step": "bogus"})
    notes = " ".join(i.value for i in at.info)
    assert "step = “bogus”" in notes and "a stage of Step through" in notes and "generation_step" in notes, notes


def test_too_long_sentence_in_the_url_falls_back_with_a_note():
    at = open_page("pages/step_through.py", {"sentence": "ab " * 900})
    notes = [i.value for i in at.info]
    assert any("sentence" in n and "1 to 32 tokens" in n for n in notes), notes
    assert at.text_input(key="sentence").value == "The cat sat on the mat."
    assert "sentence" not in at.query_params


def test_wrong_size_grid_in_a_link_is_not_blamed_on_a_sentence_change():
    at = open_page("pages/masking.py", {"mask": "custom", "grid": "10.01"})
    assert (weights_of(at, "weights with your mask") > 0).all()
    assert not any("sentence changed length" in i.value for i in at.info), [i.value for i in at.info]


@pytest.mark.parametrize("page", ["pages/real_model.py", "pages/inside_real_head.py"])
@pytest.mark.parametrize("params, says", [
    ({"layer": "9"}, "layer = “9” (all-MiniLM-L6-v2 has layers 1 to 6)"),
    ({"model_head": "13"}, "model_head = “13” (all-MiniLM-L6-v2 has heads 1 to 12)"),
    ({"layer": "9", "model_head": "13"}, "model_head = “13”"),
])
def test_a_real_models_layer_or_head_beyond_it_is_dropped_with_a_note(page, params, says):
    """The layer and head boxes fell back to 1 without a word when a link named a layer or head the model has
    not got."""
    at = open_page(page, params)
    if not at.get("vega_lite_chart"):
        pytest.skip("the real model is not available here; the page says so")
    notes = [i.value for i in at.info]
    assert any(says in n for n in notes), notes
    assert at.selectbox(key="layer").value == 1 and at.selectbox(key="model_head").value == 1
    assert not set(params) & set(at.query_params)


def test_a_model_not_offered_here_is_dropped_with_a_note():
    at = open_page("pages/real_model.py", {"model": "distilgpt2"})
    if any(label.startswith("distilgpt2") for label in at.selectbox(key="model").options):  # formatted labels
        pytest.skip("distilgpt2 is offered on this machine")
    notes = [i.value for i in at.info]
    assert any("model = “distilgpt2” (one of the models offered here: all-MiniLM-L6-v2)" in n for n in notes), notes
    assert "model" not in at.query_params


NOTES_AGAIN_SCRIPT = """
import streamlit as st
from attention_ui import url_state
url_state.check_link()
url_state.show_link_notes()
st.button("again", key="again", on_click=url_state.repeat_link_notes)
"""


def test_a_link_note_survives_one_rerun_the_person_did_not_ask_for():
    """The browser reports the progress it keeps right after a page opens, and that reruns the page: the note on
    a link's unusable values was gone about a second after it appeared."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(NOTES_AGAIN_SCRIPT, default_timeout=60)
    at.query_params["d_k"] = "999"
    at.run()
    first = [i.value for i in at.info]
    assert len(first) == 1 and "d_k" in first[0], first
    at.button(key="again").click().run()  # what the progress store's report does before its rerun
    assert [i.value for i in at.info] == first
    at.run()  # any later run: the note has been seen
    assert not at.info


@pytest.mark.parametrize("written, on", [("1", True), ("yes", True), ("ON", True), ("0", False), ("off", False)])
def test_a_link_may_write_presenter_mode_as_1_or_0(written, on):
    """``?presenter=1`` is how many people write a switch: it opened the page in normal mode with a note."""
    at = open_page("pages/step_through.py", {"presenter": written})
    assert not at.info, [i.value for i in at.info]
    assert at.toggle(key="presenter").value is on
    assert at.query_params.get("presenter") == ("true" if on else None)  # off is the default: left out


def test_the_link_writer_knows_this_streamlits_internals():
    """The link writer replaces parts of Streamlit's QueryParams (not public API). When this fails, a Streamlit
    release changed them: the app still works (the test below) but every address change is a history entry again,
    so tests/test_history_back.py fails too; bring ``url_state``'s link writing up to date."""
    from attention_ui import url_state

    assert url_state.streamlit_internals_known()


def test_without_those_internals_links_still_restore_and_bad_values_are_dropped_with_a_note(monkeypatch):
    from attention_ui import url_state

    monkeypatch.setattr(url_state, "streamlit_internals_known", lambda: False)
    at = open_page("pages/step_through.py", {"sentence": "Hello brave new world", "heads": "3",
                                             "step": "6 · Softmax: attention weights", "token": "2", "seed": "banana"})
    assert not at.error, [e.value for e in at.error]
    values = settings(at)
    assert (values["heads"], values["token"]) == (3, 1) and at.subheader[0].value.startswith("6 · Softmax")
    assert at.text_input(key="sentence").value == "Hello brave new world"
    assert any("seed" in i.value and "banana" in i.value for i in at.info), [i.value for i in at.info]
    assert at.query_params["step"] == "softmax" and "seed" not in at.query_params
    at.button(key="next").click().run()
    assert not at.exception and at.query_params["step"] == "context"
