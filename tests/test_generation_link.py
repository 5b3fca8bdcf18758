"""Generation's real-model part in the page's address, through AppTest.

A lecturer copies the link with the real model on (its toggle, the model, the number of new tokens, the generated
token picked and the layer) and a class opening it sees the same tokens and the same chart, not the toy part alone.
A value the link cannot have (a model not offered here, more new tokens than allowed, a layer or a generated token
the model has not got) is dropped with a note in the page, never a traceback; and a link never makes the server
load, or download, a model it does not offer. A tiny random GPT-2 saved as "distilgpt2" stands in for the model
(found through ATTENTION_MODEL_DIR; no hub)."""

from __future__ import annotations

import json

import pytest

from apptest_support import open_page
from attention_core import MODEL_DIR_ENV
from attention_ui import models

GENERATION = "pages/generation.py"
REAL_KEYS = ("generation_real", "generation_model", "generation_count", "generation_pick", "generation_layer")
NOTE = "could not be used"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    pytest.importorskip("transformers")
    from test_real_models import save_tiny_gpt2

    folder = tmp_path_factory.mktemp("models")
    save_tiny_gpt2(folder / "distilgpt2")  # 2 layers × 4 heads
    return folder


@pytest.fixture
def distilgpt2_here(model_dir, monkeypatch):
    """The tiny GPT-2 is the server's distilgpt2; gpt2 is on the allowlist but not here, and the hub is off. Every
    model the page asks the loader for is recorded."""
    monkeypatch.setenv(MODEL_DIR_ENV, str(model_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(models.ALLOW_HUB_ENV, raising=False)
    asked = []
    load = models.load_model

    def recording_load(name, **options):
        asked.append(name)
        return load(name, **options)

    monkeypatch.setattr(models, "load_model", recording_load)
    models.cached_model.clear()
    yield asked
    models.cached_model.clear()


def notes(at) -> str:
    return " ".join(i.value for i in at.info if NOTE in i.value)


def heatmap_title(at) -> str:
    for chart in at.get("vega_lite_chart"):
        title = json.loads(chart.proto.spec).get("title", "")
        text = title.get("text", "") if isinstance(title, dict) else str(title)
        if "read into the cache" in text:
            return text
    raise AssertionError("no chart of the generated token's attention")


def link_of(at) -> dict[str, str]:
    """The page's address parameters, as a copied link holds them."""
    return {key: at.query_params[key] if isinstance(at.query_params[key], str) else at.query_params[key][-1]
            for key in at.query_params}


def test_a_copied_link_opens_the_real_model_part_as_the_lecturer_left_it(distilgpt2_here):
    lecturer = open_page(GENERATION)
    lecturer.toggle(key="generation_real").set_value(True).run()
    lecturer.slider(key="generation_count").set_value(3).run()
    lecturer.selectbox(key="generation_layer").set_value(2).run()
    lecturer.select_slider(key="generation_pick").set_value(2).run()
    assert not lecturer.exception, [e.value for e in lecturer.exception]
    link = link_of(lecturer)
    assert {"generation_real", "generation_count", "generation_layer", "generation_pick"} <= set(link), link
    for key in REAL_KEYS:  # each widget writes its value back into the address bar
        widget = next(w for kind in ("toggle", "selectbox", "slider", "select_slider") for w in lecturer.get(kind)
                      if w.key == key)
        assert widget.proto.query_param_key == key

    student = open_page(GENERATION, link)
    assert not notes(student), notes(student)
    assert student.toggle(key="generation_real").value is True
    assert student.selectbox(key="generation_model").value == "distilgpt2"
    assert student.slider(key="generation_count").value == 3
    assert student.selectbox(key="generation_layer").value == 2
    assert student.select_slider(key="generation_pick").value == 2
    assert heatmap_title(student) == heatmap_title(lecturer)
    assert "layer 2, every head" in heatmap_title(student)


def test_a_link_may_give_the_generated_token_by_its_position(distilgpt2_here):
    """A link written by hand says ?generation_pick=9 (the token's number in the text, as its label starts): it
    opens that token, and the address then holds its label, as the pick box writes it."""
    at = open_page(GENERATION, {"generation_real": "true", "generation_count": "3"})
    labels = at.select_slider(key="generation_pick").options
    second = int(labels[1].split("·", 1)[0])
    at = open_page(GENERATION, {"generation_real": "true", "generation_count": "3", "generation_pick": str(second)})
    assert not notes(at), notes(at)
    assert at.select_slider(key="generation_pick").value == 1
    assert at.query_params["generation_pick"] in (labels[1], [labels[1]])


@pytest.mark.parametrize("forged, says", [
    ({"generation_model": "gpt2"}, "generation_model = “gpt2” (one of the GPT-style models offered here: distil"),
    ({"generation_model": "all-MiniLM-L6-v2"}, "one of the GPT-style models offered here"),
    ({"generation_model": "evil/model"}, "generation_model = “evil/model” (expected one of the listed models)"),
    ({"generation_count": "11"}, "generation_count = “11” (expected a whole number from 1 to 10)"),
    ({"generation_count": "0"}, "generation_count = “0”"),
    ({"generation_count": "1e999"}, "generation_count = “1e999”"),
    ({"generation_layer": "3"}, "generation_layer = “3” (distilgpt2 has layers 1 to 2)"),
    ({"generation_layer": "²"}, "generation_layer = “²”"),
    ({"generation_pick": "99"}, "generation_pick = “99” (the model wrote tokens"),
    ({"generation_pick": "1·The"}, "generation_pick = “1·The” (the model wrote tokens"),  # a prompt token
    ({"generation_pick": "<b>x</b>"}, "generation_pick = “\\<b\\>x\\</b\\>” (expected a generated"),  # as text
    ({"generation_real": "maybe"}, "generation_real = “maybe” (expected true or false)"),
], ids=lambda value: "&".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else "")
def test_a_forged_real_model_value_in_a_link_is_dropped_with_a_note(distilgpt2_here, forged, says):
    at = open_page(GENERATION, {"generation_real": "true", "generation_count": "3", **forged})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert says in notes(at), notes(at)
    key, = forged
    assert key not in at.query_params
    if key != "generation_real":  # the rest of the link is used: the real model writes, at the defaults left
        assert at.toggle(key="generation_real").value is True
        assert at.selectbox(key="generation_model").value == "distilgpt2"
        assert at.selectbox(key="generation_layer").value == 1
        heatmap_title(at)
    else:
        assert at.toggle(key="generation_real").value is False
    assert set(distilgpt2_here) <= {"distilgpt2"}, f"the link made the server load {distilgpt2_here}"


def test_a_link_never_makes_the_server_load_a_model_it_does_not_offer(distilgpt2_here):
    """gpt2 is on the allowlist but not on this server, which may not download: the link names it, the server loads
    only what it offers."""
    at = open_page(GENERATION, {"generation_real": "true", "generation_model": "gpt2", "generation_count": "2"})
    assert "gpt2" not in distilgpt2_here and distilgpt2_here == ["distilgpt2"], distilgpt2_here
    assert at.selectbox(key="generation_model").options == ["distilgpt2"]


def test_a_link_to_the_real_model_part_on_a_server_without_one_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))  # an empty folder: no GPT-style model here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(models.ALLOW_HUB_ENV, raising=False)
    models.cached_model.clear()
    at = open_page(GENERATION, {"generation_real": "true", "generation_model": "distilgpt2", "generation_count": "3",
                                "generation_pick": "9", "generation_layer": "2"})
    models.cached_model.clear()
    assert not at.exception and not at.error
    assert any("No GPT-style model is available" in i.value for i in at.info)
    assert not [t for t in at.toggle if t.key == "generation_real"]
