"""Charts filled into the spec Altair made for the first chart of their shape (``render.templated_chart``):
the same spec as a chart built from scratch, and built from scratch whenever a template cannot be trusted."""

import json
import re

import pyarrow as pa
import pytest
import torch
from altair.utils import schemapi
from altair.vegalite.v6.schema import core

from attention_ui import charts, frames, render

WORDS = "the old lighthouse keeper watched the grey storm roll over the quiet harbour while small boats".split()
GRID = {"columns": 4, "domain": (0, 1), "font_size": 11, "axes": False, "spacing": 6, "title": "layer × head",
        "pick": True}
BUILD = charts.head_grid  # the builder itself, for the charts built from scratch here (not counted in ``builds``)


@pytest.fixture(autouse=True)
def empty_caches():
    with render._lock:
        render._specs.clear()
        render._templates.clear()
        render._bytes = 0
    yield


@pytest.fixture
def builds(monkeypatch):
    """The head grids Altair builds (a filled template builds none)."""
    made = []
    real = charts.head_grid
    monkeypatch.setattr(charts, "head_grid", lambda *a, **k: made.append(k) or real(*a, **k))
    return made


def weights(tokens: int, heads: int = 8, seed: int = 0) -> torch.Tensor:
    return torch.softmax(torch.randn(heads, tokens, tokens, generator=torch.Generator().manual_seed(seed)), dim=-1)


def comparable(spec: dict):
    """The spec as text with Altair's view names (a hash of the view's encoding) numbered in order, and each
    dataset as an Arrow table."""
    names: dict[str, str] = {}
    text = json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True)
    text = re.sub(r"view_[0-9a-f]+", lambda m: names.setdefault(m.group(0), f"view {len(names)}"), text)
    return text, {name: pa.ipc.open_stream(data).read_all() for name, data in spec["datasets"].items()}


def from_scratch(values, labels, heads, **options) -> dict:
    return render.prepared_spec(BUILD(frames.heads_frame(values, labels, labels, head_labels=heads),
                                                 **options))


def grid(values, labels, heads, **options) -> dict:
    return render.cached_head_grid(values, labels, heads, **{**GRID, **options})


def assert_same_chart(filled: dict, built: dict) -> None:
    text, data = comparable(filled)
    built_text, built_data = comparable(built)
    assert text == built_text
    assert data.keys() == built_data.keys() and all(data[n].equals(built_data[n]) for n in data)
    assert filled["datasets"] == built["datasets"], "the same Arrow bytes"
    rows = {name: table.slice(0, 3).to_pylist() for name, table in data.items()}
    schemapi.validate_jsonschema({**json.loads(text), "datasets": rows}, core.load_schema())


@pytest.mark.parametrize("sizes", [(3, 5, 4), (12, 9, 16), (32, 31, 34)])
def test_a_grid_filled_in_for_new_sentences_and_heads_is_the_grid_built_from_scratch(builds, sizes):
    """The first grid of a shape is built by Altair; grids for sentences of other lengths and other picked heads
    are filled into its spec and equal the same grids built from scratch: labels, panel sizes, the legend's
    length, the outlined head, the data."""
    first, *others = sizes
    heads = [f"L{i // 4 + 1} H{i % 4 + 1}" for i in range(8)]
    for round_, (tokens, selected) in enumerate([(first, 2), *[(t, 5) for t in others], (first, 7)]):
        labels = frames.token_labels(WORDS[:tokens] if tokens <= len(WORDS) else [f"w{i}" for i in range(tokens)])
        values = weights(tokens, seed=round_)
        cell = 56 / tokens
        filled = grid(values, labels, heads, cell_size=cell, selected=selected)
        assert_same_chart(filled, from_scratch(values, labels, heads, **GRID, cell_size=cell, selected=selected))
    assert len(builds) == 1, "one grid built by Altair, the others filled in"
    assert render.template_count() == 1


def test_a_layer_grid_with_whole_cells_and_axes_is_filled_in_exactly(builds):
    heads = [f"layer {i + 1}" for i in range(6)]
    options = {"columns": 3, "domain": (0, 1), "font_size": 11, "spacing": 10, "title": "mean of the heads"}
    for tokens in (9, 11, 10):
        labels = frames.token_labels(WORDS[:tokens])
        values, cell = weights(tokens, heads=6, seed=tokens), max(4, min(26, 240 // tokens))
        filled = render.cached_head_grid(values, labels, heads, cell_size=cell, axes=True, **options)
        assert_same_chart(filled, from_scratch(values, labels, heads, cell_size=cell, axes=True, **options))
    assert len(builds) == 1


def test_masked_or_missing_values_get_their_own_shape_and_every_column_they_read(builds):
    labels = frames.token_labels(WORDS[:4])
    heads = [f"head {i + 1}" for i in range(8)]
    for seed in (1, 2):
        values = weights(4, seed=seed).masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))
        values[seed, 3, 0] = float("nan")
        filled = grid(values, labels, heads, cell_size=14, selected=None)
        assert_same_chart(filled, from_scratch(values, labels, heads, **GRID, cell_size=14, selected=None))
        assert {"label", "masked"} <= set(comparable(filled)[1]["frame-1"].column_names)
    grid(weights(4), labels, heads, cell_size=14, selected=None)
    assert len(builds) == 2, "finite weights are another shape: its own template"


def test_the_same_inputs_give_the_cached_spec_and_other_selected_heads_make_no_frame_of_every_cell(monkeypatch):
    labels, heads = frames.token_labels(WORDS[:5]), [f"head {i + 1}" for i in range(8)]
    values = weights(5)
    first = grid(values, labels, heads, cell_size=10, selected=1)
    assert grid(values.clone(), labels, heads, cell_size=10, selected=1) is first
    made = []
    real = render.heads_frame
    monkeypatch.setattr(render, "heads_frame", lambda *a, **k: made.append(a) or real(*a, **k))
    other = grid(values, labels, heads, cell_size=10, selected=6)
    assert not made, "a fill makes only the columns the chart sends, without formatting every number"
    assert '"datum.head_index == 6"' in comparable(other)[0] and other["datasets"] == first["datasets"]


def three_token_grids(shape: str, slots: tuple, fill_scale: float = 1.0):
    """A templated 3-token head grid of ``shape`` with these extra ``slots``, whose fill's values are scaled by
    ``fill_scale``; returns (make a chart of these values, the values each build was called with)."""
    labels = frames.token_labels(WORDS[:3])
    built = []

    def chart(values):
        def build():
            built.append(values)
            return BUILD(frames.heads_frame(values, labels, labels), title="t")
        return render.templated_chart(("test", values), (shape,), (list(labels), *slots), build,
                                      lambda columns: frames.heads_frame(values * fill_scale, labels, labels)[columns])

    return chart, built


def test_a_template_whose_slots_the_spec_does_not_hold_is_never_kept():
    """A slot that is not in the spec (or is there in another form) could not be filled in: the shape is built
    every time, never filled from a spec with the first chart's values."""
    chart, built = three_token_grids("test shape", ("not in the spec",))
    first, second = chart(weights(3, seed=1)), chart(weights(3, seed=2))
    assert len(built) == 2 and first["datasets"] != second["datasets"]


def test_a_template_that_does_not_give_its_own_chart_back_is_never_kept():
    """Filling a template in for the chart it was made from must give that chart's spec exactly (here the data
    it would be filled with is wrong): else the shape is built every time."""
    chart, built = three_token_grids("test shape 2", (), fill_scale=0.0)
    labels = frames.token_labels(WORDS[:3])
    values = [weights(3, seed=seed) for seed in (1, 2)]
    specs = [chart(v) for v in values]
    assert len(built) == 2 and render._templates[render._fingerprint(("test shape 2",))] is None
    for spec, v in zip(specs, values):
        assert comparable(spec)[1]["frame-1"]["value"].to_pylist() == frames.heads_frame(v, labels, labels)[
            "value"].tolist()


def test_slots_that_were_equal_and_now_differ_are_not_filled_in():
    """A template made where two slots held the same value cannot tell them apart in its spec: a chart whose
    two values differ is not filled in from it (it is built)."""
    labels = list(frames.token_labels(WORDS[:3]))
    values = weights(3)
    render.cached_head_grid(values, labels, [f"head {i + 1}" for i in range(8)], cell_size=10)
    (template,) = render._templates.values()
    twice = render._Template(template.spec, (*template.slots, labels), template.datasets)

    def columns(wanted):
        return frames.heads_frame(values, labels, labels)[wanted]

    assert render._filled(twice, (*template.slots, labels[::-1]), columns) is None
    assert render._filled(twice, (*template.slots, labels), columns) is not None


def test_the_template_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(render, "MAX_TEMPLATES", 3)
    labels = frames.token_labels(WORDS[:3])
    for heads in range(1, 7):  # the number of panels is part of a grid's shape
        render.cached_head_grid(weights(3, heads=heads), labels, [f"head {i + 1}" for i in range(heads)],
                                cell_size=10)
    assert render.template_count() == 3
