"""Tidy frames and Altair chart builders, checked through ``chart.to_dict()``."""

import inspect
import json
import math

import altair as alt
import pandas as pd
import numpy as np
import pytest
import torch

from attention_ui import charts, frames
from attention_ui.frames import feature_labels, heads_frame, mask_frame, matrix_frame, row_frame, token_labels

TOKENS = ["the", "cat", "sat", "on", "the"]
MINUS_INF = "−∞"


def causal(n):
    return torch.tril(torch.ones(n, n, dtype=torch.bool))


def masked_scores(n=5, seed=0):
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(n, n, generator=generator)
    return scores.masked_fill(~causal(n), float("-inf"))


def dataset(spec):
    return spec["datasets"][spec["data"]["name"]]


def layer_with_mark(spec, mark_type, *, index=0):
    return [layer for layer in spec["layer"] if layer["mark"]["type"] == mark_type][index]


def coloured(spec):
    """The heatmap's coloured cells: the rect layer whose colour encodes a field."""
    return [layer for layer in spec["layer"] if layer["mark"]["type"] == "rect" and "field" in
            layer["encoding"].get("color", {})][0]


def axis_order(channel):
    """The categories of a band axis, in the order drawn (the scale's given domain)."""
    return channel["scale"]["domain"]


def tooltip_fields(encoding):
    return [item["field"] for item in encoding["tooltip"]]


# ---------------------------------------------------------------- frames


def test_token_labels_are_unique_and_ordered_for_repeated_tokens():
    labels = token_labels(TOKENS)
    assert labels == ["1·the", "2·cat", "3·sat", "4·on", "5·the"]
    assert len(set(labels)) == len(TOKENS)


def test_a_very_long_token_is_cut_in_its_label():
    """A 340-letter word filled three lines of the step-through's caption and half of a chart with its label."""
    long = "a" * 340
    labels = token_labels([long, "cat", long])
    assert labels == [f"1·{'a' * 23}…", "2·cat", f"3·{'a' * 23}…"]
    assert token_labels(["b" * 24]) == ["1·" + "b" * 24], "a word of 24 letters is whole"


def test_feature_labels():
    assert feature_labels(3) == ["d1", "d2", "d3"]  # counted from 1, like tokens and heads
    assert feature_labels(2, prefix="v") == ["v1", "v2"]
    assert feature_labels(0) == []


def test_matrix_frame_columns_shape_and_row_major_order():
    values = torch.arange(15, dtype=torch.float32).reshape(5, 3)
    df = matrix_frame(values, TOKENS, None, row_name="token", col_name="feature")
    assert list(df.columns) == ["token", "feature", "value", "label", "masked", "row_index", "col_index", "row_scaled"]
    assert len(df) == 15
    assert df["token"].tolist()[:4] == ["1·the", "1·the", "1·the", "2·cat"]
    assert df["feature"].tolist()[:4] == ["d1", "d2", "d3", "d1"]
    assert df["value"].tolist() == list(range(15))
    assert df["row_index"].tolist()[-3:] == [4, 4, 4]
    assert df["col_index"].tolist()[-3:] == [0, 1, 2]
    assert df["label"].iloc[7] == "7.000"


def test_matrix_frame_default_names_and_repeated_tokens_on_both_axes():
    df = matrix_frame(np.eye(5), TOKENS, TOKENS)
    assert set(df.columns) >= {"query", "key", "value", "row_index", "col_index"}
    assert df["query"].nunique() == 5
    assert df.loc[(df["query"] == "5·the") & (df["key"] == "5·the"), "value"].item() == 1.0
    assert df.loc[(df["query"] == "5·the") & (df["key"] == "1·the"), "value"].item() == 0.0


def test_matrix_frame_keeps_given_axis_labels_and_numbers_plain_tokens():
    df = matrix_frame(np.zeros((2, 2)), token_labels(["a", "b"]), feature_labels(2))
    assert df["query"].unique().tolist() == ["1·a", "2·b"]
    assert df["key"].unique().tolist() == ["d1", "d2"]
    plain = matrix_frame(np.zeros((2, 2)), ["a", "b"], ["d0", "d1"])
    assert plain["key"].unique().tolist() == ["1·d0", "2·d1"]
    sliced = matrix_frame(np.zeros((1, 1)), token_labels(["a", "b"])[1:], feature_labels(3)[:1])
    assert (sliced["query"].item(), sliced["key"].item()) == ("2·b", "d1")


def test_matrix_frame_turns_minus_inf_into_nan_with_a_label():
    df = matrix_frame(masked_scores(3), TOKENS[:3], TOKENS[:3])
    blocked = df[(df["row_index"] == 0) & (df["col_index"] == 2)].iloc[0]
    assert math.isnan(blocked["value"])
    assert blocked["label"] == MINUS_INF
    assert bool(blocked["masked"]) is True
    assert int(df["masked"].sum()) == 3
    kept = df[(df["row_index"] == 2) & (df["col_index"] == 0)].iloc[0]
    assert np.isfinite(kept["value"])
    assert kept["label"] == f"{kept['value']:.3f}"
    assert bool(kept["masked"]) is False


def test_format_value_edge_cases():
    assert frames.format_value(float("-inf")) == MINUS_INF
    assert frames.format_value(float("inf")) == "+∞"
    assert frames.format_value(float("nan")) == "NaN"
    assert frames.format_value(-0.0001) == "0.000"
    assert frames.format_value(0.12345) == "0.123"
    assert frames.format_value(-2.5) == "−2.500"  # a true minus, as the worked tables write it


def test_frames_accept_tensors_with_grad_and_half_precision():
    values = torch.ones(2, 2, dtype=torch.float16, requires_grad=False) * 0.5
    grad = torch.full((2, 2), 0.25, requires_grad=True)
    assert matrix_frame(values, ["a", "b"], ["a", "b"])["value"].tolist() == [0.5] * 4
    assert matrix_frame(grad, ["a", "b"], ["a", "b"])["value"].tolist() == [0.25] * 4


def test_frames_reject_wrong_shapes_and_label_counts():
    with pytest.raises(ValueError, match="2 labels for 3"):
        matrix_frame(np.zeros((3, 3)), ["a", "b"], None)
    with pytest.raises(ValueError, match="2-D"):
        matrix_frame(np.zeros(3), ["a"], None)
    with pytest.raises(ValueError, match="3-D"):
        heads_frame(np.zeros((3, 3)), ["a"] * 3, ["a"] * 3)
    with pytest.raises(ValueError, match="1-D"):
        row_frame(np.zeros((2, 2)), ["a", "b"])


def test_heads_frame_numbers_heads_from_one():
    values = torch.rand(3, 2, 4)
    df = heads_frame(values, ["a", "b"], ["w", "x", "y", "z"])
    assert len(df) == 3 * 2 * 4
    assert df["head"].unique().tolist() == ["head 1", "head 2", "head 3"]
    assert df["head_index"].unique().tolist() == [0, 1, 2]
    assert set(df.columns) >= {"head", "query", "key", "value", "label", "row_index", "col_index"}
    last = df[(df["head"] == "head 3") & (df["row_index"] == 1) & (df["col_index"] == 3)]
    assert last["value"].item() == pytest.approx(values[2, 1, 3].item())


def test_row_frame():
    df = row_frame(torch.tensor([0.5, float("-inf"), 0.25]), ["the", "cat", "the"])
    assert list(df.columns) == ["key", "value", "label", "masked", "index"]
    assert df["key"].tolist() == ["1·the", "2·cat", "3·the"]
    assert df["index"].tolist() == [0, 1, 2]
    assert df["label"].tolist() == ["0.500", MINUS_INF, "0.250"]
    assert math.isnan(df["value"].iloc[1])
    assert row_frame(np.ones(2), ["a", "b"], name="token").columns[0] == "token"


def test_mask_frame_states():
    df = mask_frame(causal(3), ["a", "b", "c"], ["a", "b", "c"])
    assert df["state"].value_counts().to_dict() == {"may attend": 6, "blocked": 3}
    first_row = df[df["row_index"] == 0]
    assert first_row["state"].tolist() == ["may attend", "blocked", "blocked"]
    assert first_row["allowed"].tolist() == [True, False, False]


# ---------------------------------------------------------------- heatmap


def test_heatmap_axes_are_sorted_by_position_not_alphabet():
    tokens = ["zebra", "apple", "mango"]
    spec = charts.heatmap(matrix_frame(np.eye(3), tokens, tokens)).to_dict()
    rect = coloured(spec)
    assert rect["encoding"]["x"]["field"] == "key"
    assert rect["encoding"]["y"]["field"] == "query"
    assert axis_order(rect["encoding"]["x"]) == ["1·zebra", "2·apple", "3·mango"]
    assert axis_order(rect["encoding"]["y"]) == ["1·zebra", "2·apple", "3·mango"]


def test_heatmap_colour_scale_domain_tooltips_and_rows():
    df = matrix_frame(torch.softmax(masked_scores(), dim=-1), TOKENS, TOKENS)
    spec = charts.heatmap(df, domain=(0, 1), value_title="weight").to_dict()
    rect = coloured(spec)
    color = rect["encoding"]["color"]
    assert color["field"] == "value"
    assert color["scale"]["scheme"] == "viridis"
    assert color["scale"]["domain"] == [0.0, 1.0]
    assert "domainMid" not in color["scale"]
    assert color["legend"]["title"] == "weight"
    assert tooltip_fields(rect["encoding"]) == ["query", "key", "value"]
    assert len(dataset(spec)) == 25


def test_heatmap_diverging_is_centred_at_zero_with_symmetric_default_domain():
    values = torch.tensor([[-1.0, 3.0], [0.5, 2.0]])
    spec = charts.heatmap(matrix_frame(values, ["a", "b"], ["a", "b"]), diverging=True, scheme="blueorange").to_dict()
    scale = coloured(spec)["encoding"]["color"]["scale"]
    assert scale["scheme"] == "blueorange"
    assert scale["domainMid"] == 0
    assert scale["domain"] == [-3.0, 3.0]


def test_heatmap_sequential_default_domain_is_data_extent():
    values = torch.tensor([[0.2, 0.4], [0.6, 0.8]])
    spec = charts.heatmap(matrix_frame(values, ["a", "b"], ["a", "b"])).to_dict()
    domain = coloured(spec)["encoding"]["color"]["scale"]["domain"]
    assert domain == pytest.approx([0.2, 0.8])


def test_heatmap_masked_cells_are_grey_with_masked_tooltip():
    spec = charts.heatmap(matrix_frame(masked_scores(), TOKENS, TOKENS), diverging=True).to_dict()
    backdrop = layer_with_mark(spec, "rect", index=0)
    assert backdrop["mark"]["color"] == charts.MASKED_COLOR
    assert tooltip_fields(backdrop["encoding"]) == ["query", "key", "label", "status"]
    assert "'blocked by the mask'" in backdrop["transform"][0]["calculate"]
    colored = coloured(spec)
    assert colored["transform"] == [{"filter": f"{charts.VALID} && !datum.masked"}]
    rows = dataset(spec)
    blocked = [row for row in rows if row["masked"]]
    assert len(blocked) == 10
    assert all(row["value"] is None and row["label"] == MINUS_INF for row in blocked)


def test_heatmap_without_masked_or_missing_cells_draws_no_backdrop_and_no_filters():
    # The browser evaluates each layer's filters and encodings once per cell: a real model's layer × head
    # grid has tens of thousands of cells, so layers that would draw nothing are left out.
    df = matrix_frame(torch.softmax(torch.randn(4, 4), dim=-1), TOKENS[:4], TOKENS[:4])
    bare = charts.heatmap(df, show_values=False).to_dict()
    assert [layer["mark"]["type"] for layer in bare["layer"]] == ["rect"]
    assert "transform" not in bare["layer"][0] and bare["layer"][0]["encoding"]["color"]["field"] == "value"
    valued = charts.heatmap(df).to_dict()
    assert [layer["mark"]["type"] for layer in valued["layer"]] == ["rect", "text"]
    with_nan = matrix_frame(torch.tensor([[0.5, float("nan")], [0.1, 0.9]]), ["a", "b"], ["a", "b"])
    assert len(charts.heatmap(with_nan, show_values=False).to_dict()["layer"]) == 3  # the grey backdrop is back


def test_axes_and_panels_are_ordered_without_sort_lists():
    # A sort list makes the browser compare each row's label with every label in turn; a given scale domain
    # (axes) or a sort by the index field (panels) orders them without that.
    spec = charts.head_grid(heads_frame(torch.rand(3, 4, 4), TOKENS[:4], TOKENS[:4])).to_dict()

    def sort_lists(node):
        if isinstance(node, dict):
            return [v for k, v in node.items() if k == "sort" and isinstance(v, list)] + [
                found for v in node.values() for found in sort_lists(v)]
        return [found for v in node for found in sort_lists(v)] if isinstance(node, list) else []

    assert sort_lists({k: v for k, v in spec.items() if k != "datasets"}) == []
    assert sort_lists(charts.heatmap(matrix_frame(np.eye(3), TOKENS[:3], TOKENS[:3])).to_dict()) == []


def test_drawn_order_is_the_token_and_head_order():
    from attention_ui.export import chart_svg

    heads = heads_frame(torch.rand(11, 3, 3), ["zebra", "apple", "mango"], ["zebra", "apple", "mango"])
    svg = chart_svg(charts.head_grid(heads, columns=11))
    positions = [svg.index(f">head {h}<") for h in range(1, 12)]
    assert positions == sorted(positions)  # head 10 and 11 after head 9, not after head 1
    tokens = [f"w{i}" for i in range(11)]
    svg = chart_svg(charts.heatmap(matrix_frame(np.eye(11), tokens, tokens)))
    labels = [svg.index(f">{label}<") for label in token_labels(tokens)]
    assert labels == sorted(labels)  # 10·w9 after 9·w8, not after 1·w0


def test_heatmap_prints_values_only_when_asked():
    df = matrix_frame(masked_scores(), TOKENS, TOKENS)
    shown = layer_with_mark(charts.heatmap(df).to_dict(), "text")
    assert shown["encoding"]["text"]["field"] == "label"
    assert "transform" not in shown
    assert "condition" in shown["encoding"]["color"]
    hidden = layer_with_mark(charts.heatmap(df, show_values=False).to_dict(), "text")
    assert hidden["transform"] == [{"filter": "datum.masked"}]


def test_heatmap_sizes_follow_cell_and_font_size():
    df = matrix_frame(np.zeros((2, 3)), ["a", "b"], ["x", "y", "z"])
    spec = charts.heatmap(df, cell_size=50, font_size=20, title="Scores").to_dict()
    assert (spec["width"], spec["height"]) == (150, 100)
    assert spec["title"]["text"] == "Scores"
    axis = layer_with_mark(spec, "rect")["encoding"]["x"]["axis"]
    assert axis["labelFontSize"] == 20
    assert axis["labelAngle"] == 0


def test_heatmap_single_token():
    spec = charts.heatmap(matrix_frame(torch.ones(1, 1), ["hi"], ["hi"])).to_dict()
    assert len(dataset(spec)) == 1
    assert spec["width"] == 36 and spec["height"] == 36
    assert axis_order(layer_with_mark(spec, "rect")["encoding"]["x"]) == ["1·hi"]
    assert coloured(spec)["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]


def test_long_token_lists_slant_the_column_labels():
    short = charts.heatmap(matrix_frame(np.zeros((4, 4)), TOKENS[:4], TOKENS[:4])).to_dict()
    tokens = [f"t{i}" for i in range(32)]
    long = charts.heatmap(matrix_frame(np.zeros((32, 32)), tokens, tokens), show_values=False).to_dict()
    assert layer_with_mark(short, "rect")["encoding"]["x"]["axis"]["labelAngle"] == 0
    assert layer_with_mark(long, "rect")["encoding"]["x"]["axis"]["labelAngle"] == -45
    assert layer_with_mark(long, "rect")["encoding"]["y"]["axis"]["labelAngle"] == 0
    assert len(dataset(long)) == 1024


def test_label_angle_rule():
    assert charts.label_angle(token_labels(["a"] * 10)) == 0
    assert charts.label_angle(token_labels(["a"] * 11)) == -45
    assert charts.label_angle(token_labels(["extraordinarily"])) == -45
    assert charts.label_angle(token_labels(["extraordinarily"]), step=200) == 0


def test_matrix_heatmap_defaults_for_tokens_by_features():
    df = matrix_frame(torch.randn(3, 4), TOKENS[:3], None, row_name="token", col_name="feature")
    spec = charts.matrix_heatmap(df).to_dict()
    rect = coloured(spec)
    assert axis_order(rect["encoding"]["x"]) == ["d1", "d2", "d3", "d4"]
    assert rect["encoding"]["y"]["field"] == "token"
    assert rect["encoding"]["color"]["scale"]["domainMid"] == 0
    assert tooltip_fields(rect["encoding"]) == ["token", "feature", "value"]
    assert (spec["width"], spec["height"]) == (4 * 36, 3 * 36)


def test_heatmap_reports_missing_columns():
    df = matrix_frame(np.zeros((2, 2)), ["a", "b"], ["a", "b"])
    with pytest.raises(KeyError, match="token"):
        charts.heatmap(df, row="token")


def test_builders_are_deterministic():
    df = matrix_frame(masked_scores(), TOKENS, TOKENS)
    assert charts.heatmap(df).to_dict() == charts.heatmap(df.copy()).to_dict()


def test_building_a_chart_checks_nothing_against_the_schema(monkeypatch):
    """Every encoding is given as its channel class and every composite chart is made with its properties:
    a string or dict encoding, or a ``.properties()`` call, makes Altair check it against the schema (2-8 ms
    each) even with its debug mode off, as in the app. Only Altair's own lifting of the click selections to
    the chart's top is left. The built charts stay valid."""
    from altair.utils import schemapi

    checks = []
    real = schemapi.validate_jsonschema
    lifted = {"#/definitions/SelectionParameter", "#/definitions/TopLevelSelectionParameter"}

    def counting(spec, schema, *args, **kwargs):
        if schema.get("$ref") not in lifted:
            checks.append(schema.get("$ref") or sorted(schema))
        return real(spec, schema, *args, **kwargs)

    monkeypatch.setattr(schemapi, "validate_jsonschema", counting)
    scores = matrix_frame(masked_scores(), TOKENS, TOKENS)
    weights = torch.softmax(masked_scores(), dim=-1)
    heads = heads_frame(torch.stack([weights, weights.T]), TOKENS, TOKENS)
    row = row_frame(weights[2], TOKENS)
    by_head = row.assign(head="head 1", head_index=0)
    monkeypatch.setattr(schemapi, "DEBUG_MODE", False)  # as render.py sets it for the app
    built = {
        "heatmap": charts.heatmap(scores, pick=True, follow_row=1, title="scores"),
        "matrix_heatmap": charts.matrix_heatmap(matrix_frame(torch.randn(5, 3), TOKENS, None, row_name="token",
                                                             col_name="feature")),
        "head_grid": charts.head_grid(heads, pick=True, selected=0, show_values=True, title="heads"),
        "row_bars": charts.row_bars(row, domain=None),
        "row_bars_by_head": charts.row_bars_by_head(by_head),
        "before_after_softmax": charts.before_after_softmax(row_frame(masked_scores()[2], TOKENS), row),
        "mask_grid": charts.mask_grid(mask_frame(causal(5), TOKENS, TOKENS)),
        "lines_view": charts.lines_view(matrix_frame(weights, TOKENS, TOKENS), follow_row=2, pick=True),
    }
    assert not checks, f"{len(checks)} schema look-ups while building: {checks[:5]}"
    monkeypatch.setattr(schemapi, "validate_jsonschema", real)
    for name, chart in built.items():
        assert chart.to_dict(), name  # validates the whole spec


# ---------------------------------------------------------------- bars


def test_row_bars():
    weights = torch.tensor([0.1, 0.6, 0.3])
    spec = charts.row_bars(row_frame(weights, ["zebra", "apple", "mango"]), title="weights").to_dict()
    bar = layer_with_mark(spec, "bar")
    assert axis_order(bar["encoding"]["x"]) == ["1·zebra", "2·apple", "3·mango"]
    assert bar["encoding"]["y"]["field"] == "value"
    assert bar["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert tooltip_fields(bar["encoding"]) == ["key", "value"]
    text = layer_with_mark(spec, "text")
    assert text["encoding"]["text"]["field"] == "label"
    assert [row["label"] for row in dataset(spec)] == ["0.100", "0.600", "0.300"]


def _value_layers(spec) -> dict[str, dict]:
    """A bars-across chart's two text layers by where they print: "in" the bar (light text) or "past" its end."""
    texts = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    return {("in" if layer["mark"].get("color") == charts.LIGHT_TEXT else "past"): layer for layer in texts}


def _shows(layer, value: float) -> bool:
    """Whether ``layer``'s one filter (a Vega expression over ``datum.value``) keeps a row of ``value``."""
    (expression,) = [step["filter"] for step in layer.get("transform", [])]
    python = expression.replace("datum.value", repr(value)).replace("!(", "not (")
    return bool(eval(python))  # noqa: S307 - our own spec's arithmetic


def test_weight_bars_across_name_their_keys_level_and_print_each_value_in_or_past_its_bar():
    """Generation's slide: upright value labels over 37-px bars read badly; lying across, each key's name is a row
    label and its value reads level, inside a bar long enough to hold it, else just past its end."""
    weights = torch.tensor([0.912, 0.057, 0.031])
    spec = charts.weight_bars_across(row_frame(weights, ["The", "cat", "sat"]), font_size=18, row_px=22,
                                     width=240).to_dict()
    bar = layer_with_mark(spec, "bar")
    assert axis_order(bar["encoding"]["y"]) == ["1·The", "2·cat", "3·sat"]
    assert bar["encoding"]["x"]["field"] == "value" and bar["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert spec["height"] == {"step": 22} and spec["width"] == 240
    layers = _value_layers(spec)
    assert set(layers) == {"in", "past"}
    for layer in layers.values():
        assert layer["encoding"]["text"]["field"] == "label" and "angle" not in layer["mark"]
        assert layer["mark"]["fontSize"] == 16  # the slide's font less 2, as the upright bars' labels
    assert _shows(layers["in"], 0.912) and not _shows(layers["past"], 0.912)  # 219 px of bar holds "0.912"
    assert _shows(layers["past"], 0.057) and not _shows(layers["in"], 0.057)  # 14 px does not
    assert [row["label"] for row in dataset(spec)] == ["0.912", "0.057", "0.031"]


CHICKEN = "The chicken crossed the road because it wanted to get to the other side .".split()


def _text_layers(panel):
    return [layer for layer in panel["layer"] if layer["mark"]["type"] == "text"]


def test_row_bars_by_head_value_labels_do_not_overlap_on_narrow_bars():
    """15 keys at the multi-head page's 22 px per bar: "0.086" is wider than its bar, so printed level the labels
    of neighbouring bars ran into each other ("0.0860.072"). They are turned upright (each is then one line of
    text wide) and the exact value stays in the bar's tooltip."""
    weights = torch.softmax(torch.randn(2, 15, generator=torch.Generator().manual_seed(0)), dim=-1)
    df = pd.concat([row_frame(weights[i], CHICKEN).assign(head=f"head {i + 1}", head_index=i) for i in range(2)],
                   ignore_index=True)
    spec = charts.row_bars_by_head(df, cell_size=22, font_size=13).to_dict()  # validated against the schema
    panel = spec["spec"]
    texts = _text_layers(panel)
    assert texts, "the values are still printed"
    for layer in texts:
        mark = layer["mark"]
        if layer["transform"][-1]["filter"].startswith("!("):  # blocked keys' "−∞": level (none here)
            continue
        assert mark.get("angle") in (90, 270), mark  # upright: 11 px of width per label, within 22 px
        assert mark["fontSize"] * 1.2 <= 22
    bar = layer_with_mark(panel, "bar")
    assert tooltip_fields(bar["encoding"]) == ["key", "value"]


def test_lines_view_title_is_broken_into_lines_not_cut_off():
    """A title wider than the chart was cut off with "…" ("…click a word on the left to …"): it is broken into
    lines that fit the width, and the click hint is a subtitle."""
    weights = torch.softmax(torch.randn(15, 15, generator=torch.Generator().manual_seed(1)), dim=-1)
    title = "head 1 as lines: each query (left) to each key (right), thicker = more weight"
    spec = charts.lines_view(matrix_frame(weights, CHICKEN, CHICKEN), title=title, width=420, font_size=14,
                             pick=True).to_dict()
    text = spec["title"]["text"]
    assert isinstance(text, list) and " ".join(text) == title
    assert all(len(line) * 0.5 * 16 <= 420 for line in text)
    assert spec["title"]["subtitle"] == "click a word on the left to follow it"
    short = charts.lines_view(matrix_frame(weights, CHICKEN, CHICKEN), title="weights as lines", width=420).to_dict()
    assert short["title"]["text"] == "weights as lines" and "subtitle" not in short["title"]


def lines_opacity(keys: int, weight: float) -> float:
    """The opacity the lines chart of ``keys`` keys gives a line of ``weight``, from its spec's scale (Vega's pow
    scale: the exponent applied to domain and value, then linear onto the range, clamped)."""
    labels = [f"w{i}" for i in range(keys)]
    spec = charts.lines_view(matrix_frame(torch.full((keys, keys), 1 / keys), labels, labels)).to_dict()
    scale = spec["layer"][0]["encoding"]["opacity"]["scale"]
    (d0, d1), (r0, r1), exponent = scale["domain"], scale["range"], scale.get("exponent", 1)
    assert scale.get("type", "linear") in ("linear", "pow")
    share = (weight ** exponent - d0 ** exponent) / (d1 ** exponent - d0 ** exponent)
    return r0 + (r1 - r0) * (min(max(share, 0.0), 1.0) if scale.get("clamp") else share)


def test_lines_stand_out_on_a_projector_for_few_keys_and_many():
    """Linear in the weight from 0 to 1, a 7-token row’s strong line (weight 0.45) had opacity 0.48 and its usual
    ones (0.1–0.2) 0.15–0.24: pale on a projector. Opacity is relative to the uniform weight 1/S now."""
    assert lines_opacity(7, 0.45) >= 0.95, "a strong line of 7 keys is solid"
    assert lines_opacity(7, 1 / 7) <= 0.15, "a uniform one stays faint"
    assert lines_opacity(30, 0.1) >= 0.9 and lines_opacity(30, 1 / 30) <= 0.15, "30 keys: same, at their 1/S"
    assert lines_opacity(30, 0.004) < lines_opacity(30, 0.03) < lines_opacity(30, 0.06) < lines_opacity(30, 0.09)
    assert lines_opacity(1, 1.0) == pytest.approx(1.0), "a lone key's line (weight 1) is solid"


def test_narrow_bars_keep_a_blocked_keys_minus_infinity_level():
    """Turned upright like the numbers beside it, "−∞" read as "8" with a dash."""
    scores = torch.tensor([0.3, -1.2, float("-inf"), float("-inf"), 0.8, -0.5, 0.1, float("-inf")])
    spec = charts.row_bars(row_frame(scores, CHICKEN[:8]), domain=None, cell_size=18, font_size=14,
                           value_title="score").to_dict()
    texts = _text_layers(spec)
    infinite = [layer for layer in texts if layer["transform"][-1]["filter"].startswith("!(")]
    assert len(infinite) == 1 and infinite[0]["mark"].get("angle", 0) == 0
    assert all(layer["mark"].get("angle") == 270 for layer in texts if layer not in infinite)
    assert [row["label"] for row in dataset(spec) if row["masked"]] == ["−∞"] * 3


@pytest.mark.parametrize("cell_size", [34, 60])  # 34: the pages' default cell, where "0.721" (28 px) fits
def test_row_bars_keep_level_value_labels_where_they_fit(cell_size):
    weights = torch.tensor([0.1, 0.6, 0.3])
    spec = charts.row_bars(row_frame(weights, ["zebra", "apple", "mango"]), cell_size=cell_size,
                           font_size=13).to_dict()
    assert all(layer["mark"].get("angle", 0) == 0 for layer in _text_layers(spec))


def test_before_after_softmax_side_by_side():
    scaled = masked_scores()[1]
    weights = torch.softmax(scaled, dim=-1)
    chart = charts.before_after_softmax(row_frame(scaled, TOKENS), row_frame(weights, TOKENS))
    spec = chart.to_dict()
    before, after = spec["hconcat"]
    assert before["title"]["text"] == "scaled scores"
    assert after["title"]["text"] == "softmax weights"
    before_y = layer_with_mark(before, "bar")["encoding"]["y"]["scale"]
    assert "domain" not in before_y and before_y["zero"] is True
    assert layer_with_mark(after, "bar")["encoding"]["y"]["scale"]["domain"] == [0, 1]
    before_rows = spec["datasets"][before["data"]["name"]]
    assert [row["label"] for row in before_rows][2:] == [MINUS_INF] * 3
    assert [row["value"] for row in before_rows][2:] == [None] * 3
    assert spec["resolve"]["scale"]["y"] == "independent"


# ---------------------------------------------------------------- head grid


def test_head_grid_shares_one_colour_scale_and_orders_heads_numerically():
    heads = torch.softmax(torch.randn(10, 3, 3), dim=-1)
    spec = charts.head_grid(heads_frame(heads, TOKENS[:3], TOKENS[:3]), columns=4).to_dict()
    assert spec["facet"]["field"] == "head"
    assert spec["facet"]["sort"] == {"field": "head_index", "op": "min"}  # numeric: head 10 after head 9
    assert spec["columns"] == 4
    assert spec["resolve"]["scale"]["color"] == "shared"
    colored = coloured(spec["spec"])
    assert colored["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]
    assert len(dataset(spec)) == 10 * 3 * 3


def test_head_grid_default_domain_spans_all_heads():
    heads = torch.zeros(2, 2, 2)
    heads[0, 0, 0] = -4.0
    heads[1, 1, 1] = 2.0
    df = heads_frame(heads, ["a", "b"], ["a", "b"])
    sequential = charts.head_grid(df, domain=None).to_dict()
    assert coloured(sequential["spec"])["encoding"]["color"]["scale"]["domain"] == [-4.0, 2.0]
    diverging = charts.head_grid(df, domain=None, diverging=True, scheme="redblue").to_dict()
    scale = coloured(diverging["spec"])["encoding"]["color"]["scale"]
    assert scale["domain"] == [-4.0, 4.0] and scale["domainMid"] == 0


def test_head_grid_handles_many_rows():
    heads = torch.softmax(torch.randn(8, 32, 32), dim=-1)
    tokens = [f"w{i}" for i in range(32)]
    with alt.data_transformers.disable_max_rows():
        spec = charts.head_grid(heads_frame(heads, tokens, tokens)).to_dict()
    assert len(dataset(spec)) == 8 * 32 * 32


# ---------------------------------------------------------------- mask grid


def test_mask_grid_colours_two_categories():
    spec = charts.mask_grid(mask_frame(causal(4), TOKENS[:4], TOKENS[:4])).to_dict()
    rect = layer_with_mark(spec, "rect")
    color = rect["encoding"]["color"]
    assert color["field"] == "state"
    assert color["scale"]["domain"] == ["may attend", "blocked"]
    assert color["scale"]["range"] == [charts.ALLOWED_COLOR, charts.BLOCKED_COLOR]
    assert charts.ALLOWED_COLOR != charts.BLOCKED_COLOR
    states = [row["state"] for row in dataset(spec)]
    assert states.count("may attend") == 10 and states.count("blocked") == 6
    assert tooltip_fields(rect["encoding"]) == ["query", "key", "state"]


def test_mask_grid_accepts_a_boolean_matrix_frame():
    df = matrix_frame(causal(2), ["a", "b"], ["a", "b"])
    states = [row["state"] for row in dataset(charts.mask_grid(df).to_dict())]
    assert states == ["may attend", "blocked", "may attend", "may attend"]


def test_mask_grid_single_token():
    spec = charts.mask_grid(mask_frame(torch.ones(1, 1, dtype=torch.bool), ["x"], ["x"])).to_dict()
    assert [row["state"] for row in dataset(spec)] == ["may attend"]


def test_chart_modules_do_not_import_streamlit():
    for module in (charts, frames):
        source = inspect.getsource(module)
        assert "import streamlit" not in source and "from streamlit" not in source


# ---------------------------------------------------------------- prepared specs (what the pages send)


def _arrow(data: bytes):
    import pyarrow as pa

    return pa.ipc.open_stream(data).read_pandas()


def test_prepared_spec_sends_each_frame_once_as_arrow_with_every_value():
    from attention_ui import render

    df = matrix_frame(masked_scores(), TOKENS, TOKENS)
    panels = alt.hconcat(charts.heatmap(df, title="a"), charts.heatmap(df, title="b"))  # one frame, two panels
    spec = render.prepared_spec(panels)
    assert len(spec["datasets"]) == 1, list(spec["datasets"])
    sent = _arrow(next(iter(spec["datasets"].values())))
    text = ["query", "key", "label"]
    assert sent[text].astype(str).equals(df[text].astype(str)) and sent["masked"].equals(df["masked"])
    assert np.allclose(sent["value"], df["value"], equal_nan=True)
    # Outside the pages' preparation (e.g. the SVG/PNG downloads) Altair still writes the rows into the spec.
    inline = panels.to_dict()
    assert [len(rows) for rows in inline["datasets"].values()] == [len(df)]


def test_a_heatmap_sends_only_the_columns_it_reads_with_text_as_categories():
    """A layer × head grid has tens of thousands of cells: a column no layer reads (the cell's label, the
    row-scaled colour, the mask flag when nothing is masked) would be decoded by the browser for each."""
    import pyarrow as pa

    from attention_ui import render

    weights = torch.softmax(torch.randn(3, 4, 4), dim=-1)
    df = heads_frame(weights, TOKENS[:4], TOKENS[:4])
    spec = render.prepared_spec(charts.head_grid(df, axes=False, pick=True, selected=1))
    (data,) = spec["datasets"].values()
    table = pa.ipc.open_stream(data).read_all()
    assert set(table.column_names) == {"head", "head_index", "query", "key", "value", "row_index", "col_index"}
    assert all(pa.types.is_dictionary(table.schema.field(name).type) for name in ("head", "query", "key"))
    sent = table.to_pandas()
    assert sent[["head", "query", "key"]].astype(str).equals(df[["head", "query", "key"]].astype(str))
    assert np.allclose(sent["value"], df["value"])
    # With a blocked cell the grey backdrop and its "×" read the label and the mask flag: they are sent.
    masked = heads_frame(weights, TOKENS[:4], TOKENS[:4], blocked=torch.ones(3, 4, 4, dtype=torch.bool).triu(1))
    (data,) = render.prepared_spec(charts.head_grid(masked))["datasets"].values()
    assert {"label", "masked"} <= set(pa.ipc.open_stream(data).read_all().column_names)


def test_cached_charts_tell_apart_tensors_that_differ_in_one_middle_value():
    from attention_ui import render

    a = torch.zeros(40, 40)
    b = a.clone()
    b[20, 20] = 1.0  # a repr of either tensor elides the middle: the same text
    built = []

    def build(values):
        built.append(values)
        return charts.heatmap(matrix_frame(values, None, None))

    first = render.cached_chart(("test", a), lambda: build(a))
    again = render.cached_chart(("test", a.clone()), lambda: build(a))
    other = render.cached_chart(("test", b), lambda: build(b))
    assert first is again and other is not first and len(built) == 2


def test_cached_matrix_charts_make_no_frame_on_a_hit_and_tell_apart_values_masks_and_labels(monkeypatch):
    from attention_ui import render

    made = []
    real_matrix_frame = render.matrix_frame
    monkeypatch.setattr(render, "matrix_frame", lambda *a, **k: made.append(a) or real_matrix_frame(*a, **k))
    values = masked_scores(4, seed=11)
    blocked = ~torch.ones(4, 4, dtype=torch.bool).tril()

    def chart(values=values, rows=TOKENS[:4], blocked=None, title="scores"):
        return render.cached_matrix_chart(charts.heatmap, values, rows, TOKENS[:4], blocked=blocked, title=title)

    first = chart()
    assert chart(values.clone()) is first and len(made) == 1, "same values: the cached spec, no frame made"
    variants = [chart(values + 1), chart(blocked=blocked), chart(rows=TOKENS[1:5]), chart(title="other")]
    assert len(made) == 5 and all(v is not first for v in variants)
    masked = variants[1]
    rows = _arrow(next(iter(masked["datasets"].values())))
    assert rows["masked"].sum() == int(blocked.sum()), "the blocked cells reach the chart"


def test_format_values_matches_format_value_everywhere():
    numbers = np.array([0.0, -0.0, -0.0004, 0.0005, 1.23456, -2.5, np.inf, -np.inf, np.nan, 1e9])
    assert frames.format_values(numbers).tolist() == [frames.format_value(v) for v in numbers]


def test_heads_frame_takes_head_labels_and_scales_rows_within_each_head():
    values = torch.stack([masked_scores(4, seed=s) for s in range(3)])  # (3, 4, 4)
    df = heads_frame(values, TOKENS[:4], TOKENS[:4], head_labels=["L1 H1", "L1 H2", "L2 H1"])
    assert df.drop_duplicates("head")["head"].tolist() == ["L1 H1", "L1 H2", "L2 H1"]
    for h in range(3):  # each head's rows as matrix_frame makes them
        one = matrix_frame(values[h], TOKENS[:4], TOKENS[:4])
        part = df[df["head_index"] == h].reset_index(drop=True)
        assert np.allclose(part["row_scaled"], one["row_scaled"], equal_nan=True)
        assert part["label"].tolist() == one["label"].tolist()
    with pytest.raises(ValueError, match="2 labels for 3 heads"):
        heads_frame(values, None, None, head_labels=["a", "b"])


def test_row_colours_span_only_the_keys_a_query_may_attend_to():
    """Causal weights: row 2 has two open keys (0.25, 0.75) and zeros where the mask blocks. Coloured by its own
    range, its smaller open weight is the row's darkest cell; the blocked zeros take no part (they are grey)."""
    weights = torch.tensor([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])
    blocked = ~torch.ones(3, 3, dtype=torch.bool).tril()
    rows = matrix_frame(weights, TOKENS[:3], TOKENS[:3], blocked=blocked)
    second = rows[rows["row_index"] == 1]["row_scaled"].tolist()
    assert second[:2] == [0.0, 1.0] and math.isnan(second[2])
    stacked = heads_frame(weights[None], TOKENS[:3], TOKENS[:3], blocked=blocked[None])
    assert np.allclose(stacked["row_scaled"], rows["row_scaled"], equal_nan=True)
    unmasked = matrix_frame(weights, TOKENS[:3], TOKENS[:3])
    assert unmasked[unmasked["row_index"] == 1]["row_scaled"].tolist()[:2] == [1 / 3, 1.0], "zeros count unmasked"


def test_narrow_columns_turn_their_labels_upright_and_thin_them():
    tokens = [f"{i}·word" for i in range(1, 19)]
    assert charts.label_angle(tokens, font_size=20, step=30) == -45
    assert charts.label_angle(tokens, font_size=20, step=16) == -90
    narrow = charts.heatmap(matrix_frame(np.zeros((18, 18)), tokens, tokens), cell_size=16, font_size=20,
                            show_values=False).to_dict()
    axis = layer_with_mark(narrow, "rect")["encoding"]["x"]["axis"]
    assert (axis["labelAngle"], axis["labelOverlap"]) == (-90, "parity")


def test_a_fitted_heatmap_lets_the_browser_pick_its_label_angle():
    """A slide's chart fills its container: its key labels' angle follows the width the browser gives each column."""
    tokens = [f"{i}·word" for i in range(1, 19)]
    spec = charts.heatmap(matrix_frame(np.zeros((18, 18)), tokens, tokens), fit=True, font_size=20).to_dict()
    axis = layer_with_mark(spec, "rect")["encoding"]["x"]["axis"]
    assert "containerSize()[0]" in axis["labelAngle"]["expr"] and "-90" in axis["labelAngle"]["expr"]
    assert "'parity'" in axis["labelOverlap"]["expr"]


def test_a_fitted_head_grid_is_one_view_that_fills_its_container_and_picks_a_head():
    values = torch.rand(6, 4, 4)
    df = heads_frame(values, TOKENS[:4], TOKENS[:4], head_labels=[f"L{i // 3 + 1} H{i % 3 + 1}" for i in range(6)])
    spec = charts.head_grid(df, columns=3, fit=True, selected=4, pick=True, axes=False).to_dict()
    assert "facet" not in spec and (spec["width"], spec["height"]) == ("container", "container")
    assert [p["select"]["fields"] for p in spec["params"]] == [["head_index"]]
    assert any("datum.head_index == 4" in json.dumps(layer.get("transform")) for layer in spec["layer"])
    width, height = charts.fitted_grid_size(6, 3, 600, 16)
    assert width == 600 and 300 < height < 600


@pytest.mark.parametrize("tokens", [1, 2, 7])
def test_a_heatmaps_colour_bar_is_about_as_tall_as_its_rows(tokens):
    """A one-word sentence's 1 × 1 heatmap (52 px) had a colour bar of 120 px beside it, taller than the chart."""
    labels = token_labels(["word"] * tokens)
    spec = charts.heatmap(matrix_frame(torch.full((tokens, tokens), 1 / tokens), labels, labels),
                          cell_size=52, domain=(0, 1)).to_dict()
    legends = [layer["encoding"]["color"]["legend"] for layer in spec["layer"]
               if "legend" in layer.get("encoding", {}).get("color", {})]
    assert legends and all(60 <= legend["gradientLength"] <= max(60, 52 * tokens) for legend in legends), legends


@pytest.mark.parametrize("cell", [20, 28, 40])
def test_one_character_marks_are_sized_for_one_character(cell):
    """The mask grid's ✓ and × were sized like a six-digit number (10 px in a 20-px cell), and a blocked weight's
    "×" was printed at the numbers' size (8 px) in narrow cells."""
    grid = charts.mask_grid(mask_frame(causal(5), TOKENS, TOKENS), cell_size=cell, font_size=14).to_dict()
    marks = layer_with_mark(grid, "text")["mark"]["fontSize"]
    assert marks >= min(14, cell // 1.2 - 1) + 2 > charts._value_font_size(cell, 14) + 2
    weights = torch.softmax(masked_scores(), dim=-1)
    frame = matrix_frame(weights, TOKENS, TOKENS, blocked=~causal(5))
    spec = charts.heatmap(frame, cell_size=cell, font_size=14, show_values=False, scheme="viridis").to_dict()
    text = layer_with_mark(spec, "text")
    value_font = text["mark"]["fontSize"]
    size = text["encoding"]["size"]
    assert size["condition"][0]["test"] == "datum.masked" and size["value"] == value_font
    assert size["condition"][0]["value"] == charts._value_font_size(cell, 14, chars=3) > value_font


def test_colour_bar_numbers_are_at_least_10_px():
    weights = torch.softmax(masked_scores(), dim=-1)
    spec = charts.heatmap(matrix_frame(weights, TOKENS, TOKENS), cell_size=20, font_size=11).to_dict()
    assert coloured(spec)["encoding"]["color"]["legend"]["labelFontSize"] == charts.MIN_LEGEND_LABEL_PX == 10


def test_bars_by_head_label_the_keys_under_every_panel():
    """A wrapped facet drew the key axis under its bottom row only: with 8 heads, heads 1-6 had bars and no words."""
    df = pd.DataFrame({"key": ["a", "b"] * 8, "value": [0.5] * 16, "index": [0, 1] * 8,
                       "head": [f"head {i // 2 + 1}" for i in range(16)], "head_index": [i // 2 for i in range(16)]})
    spec = charts.row_bars_by_head(df.assign(label="0.5"), columns=2).to_dict()
    assert spec["resolve"]["axis"]["x"] == "independent"


def test_the_followed_rows_outline_is_a_hue_no_value_is_drawn_in():
    """The followed row's outline must stand out on every heatmap: an orange one vanished among a scores row's
    large (orange) values and read as "negative" next to the orange negative bars. Its hue is at least 40° from
    orange (the diverging scheme's positive end, negative bars) and from blue (its negative end, positive bars),
    and outside viridis' purple-to-yellow track."""
    import colorsys

    def hue(hex_colour: str) -> float:
        r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
        return colorsys.rgb_to_hsv(r, g, b)[0] * 360

    def apart(a: float, b: float) -> float:
        return min(abs(a - b), 360 - abs(a - b))

    follow = hue(charts.FOLLOW_COLOR)
    for used in (charts.POSITIVE_BAR_COLOR, "#e6550d", "#3182bd"):  # positive bars; blueorange's ends
        assert apart(follow, hue(used)) >= 40, used
    viridis = ("#440154", "#3b528b", "#21918c", "#5ec962", "#fde725")
    assert all(apart(follow, hue(colour)) >= 40 for colour in viridis)


def test_a_slides_numbers_are_sized_for_the_widest_window_and_fitted_by_the_browser():
    """An 11-token slide's two score charts side by side have cells too narrow for numbers in a 1280-px window
    but 68 px wide at 1920 px: their spec keeps the numbers, up to a little more than the slide's 20-px labels (they
    stopped at 16 px, the smallest text of a 1920 × 1080 slide), and the browser prints them as large as the cells
    it draws hold (none under 12 px), so they grow with the window."""
    from attention_ui.views import (PRESENTER_CELL, PRESENTER_FONT, StageView, slide_fitted_value_font,
                                    slide_largest_value_font, slide_value_font)

    labels = token_labels("The animal did not cross the street because it was tired".split())
    view = StageView(None, labels, 0, 0, PRESENTER_CELL, PRESENTER_FONT, fit=True)
    assert slide_value_font(view, 11, 0.5, signed=True) is None  # sized for 1280 px: colours only
    usual = slide_largest_value_font(PRESENTER_FONT)
    assert slide_fitted_value_font(view, 11, 0.5, signed=True) == usual > PRESENTER_FONT
    assert slide_fitted_value_font(view, 40, 0.5, signed=True) is None  # too narrow even at 1920 px
    frame = matrix_frame(torch.linspace(-2, 2, 121).reshape(11, 11), labels, labels)  # (T, T) scores
    spec = charts.heatmap(frame, diverging=True, scheme="blueorange", cell_size=60, font_size=PRESENTER_FONT,
                          fit=True, value_font_px=usual).to_dict()
    text = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "text")
    fitted = text["mark"]["fontSize"]["expr"]
    assert f"min({usual}, floor(bandwidth('x')" in fitted, fitted
    # (the number printed, whole or rounded shorter, only where it is that large: in its mark or its encoding)
    assert f">= {charts.MIN_FITTED_VALUE_PX}" in json.dumps(text), text


@pytest.mark.parametrize("cell_size", [18, 60], ids=["narrow bars", "wide bars"])
def test_a_blocked_keys_minus_infinity_sits_at_the_bottom_edge_below_every_score(cell_size):
    """At zero, "−∞" stood above a row of negative scores, where positive scores would be (the causal mask's
    first query: one score of −0.402 and six "−∞" over the 0 line)."""
    scores = torch.tensor([-0.402, float("-inf"), float("-inf")])
    spec = charts.row_bars(row_frame(scores, CHICKEN[:3]), domain=None, cell_size=cell_size, font_size=14,
                           value_title="score", height=200).to_dict()
    infinite = [layer for layer in _text_layers(spec) if layer["transform"][-1]["filter"].startswith("!(")]
    assert len(infinite) == 1 and infinite[0]["encoding"]["y"] == {"value": 200}, infinite
    assert infinite[0]["mark"]["baseline"] == "bottom" and infinite[0]["mark"].get("angle", 0) == 0
    finite = [layer for layer in _text_layers(spec) if layer not in infinite]
    assert not any(layer["transform"][-1]["filter"].startswith("!(") for layer in finite)
    assert all(layer["transform"][-1]["filter"].startswith(charts.VALID) for layer in finite), "each label drawn once"


def test_bars_a_little_too_narrow_print_their_values_level_and_slightly_smaller():
    """Generation's slide drew "0.107" upright over 52-px bars (18-px labels need 52.4 px): level at 17 px reads
    better. Bars much too narrow still turn them upright rather than print them tiny."""
    weights = torch.tensor([0.107, 0.187, 0.424, 0.175, 0.107])
    spec = charts.row_bars(row_frame(weights, CHICKEN[:5]), cell_size=52, font_size=20).to_dict()
    sizes = {layer["mark"]["fontSize"] for layer in _text_layers(spec)
             if not layer["transform"][-1]["filter"].startswith("!(")}
    assert all(layer["mark"].get("angle", 0) == 0 for layer in _text_layers(spec)) and sizes == {17}, sizes
    narrow = charts.row_bars(row_frame(weights, CHICKEN[:5]), cell_size=40, font_size=20).to_dict()
    assert any(layer["mark"].get("angle") == 270 for layer in _text_layers(narrow)), "13 px would be too small"


@pytest.mark.parametrize("show_values", [True, False])
@pytest.mark.parametrize("blocked", [False, True])
def test_colours_only_tells_a_heatmap_that_prints_no_values(show_values, blocked):
    """Without its values a heatmap has no text layer, or (with blocked cells) only the "×" / "−∞" marks."""
    scores = masked_scores() if blocked else torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    spec = charts.heatmap(matrix_frame(scores, TOKENS, TOKENS), diverging=True, show_values=show_values).to_dict()
    assert charts.colours_only(spec) is (not show_values)
    bars = charts.row_bars(row_frame(torch.tensor([0.2, 0.8]), ["a", "b"])).to_dict()
    assert not charts.colours_only(bars)  # not a heatmap


def test_a_fitted_heatmap_says_over_its_cells_when_the_browser_draws_them_too_narrow_for_numbers():
    # Only the browser knows how wide a fitted chart's cells are drawn; where they are too narrow for the numbers
    # (the same test as the numbers' own) one line over the cells says the numbers are in the tooltips.
    tokens = [f"{i}·w" for i in range(1, 15)]
    fitted = charts.heatmap(matrix_frame(np.zeros((14, 14)), tokens, tokens), fit=True, font_size=20).to_dict()
    hints = [layer for layer in fitted["layer"] if "hover" in str(layer.get("mark", {}).get("text", ""))]
    assert len(hints) == 1, [layer.get("mark") for layer in fitted["layer"]]
    mark = hints[0]["mark"]
    shown = next(layer for layer in fitted["layer"] if layer["mark"]["type"] == "text" and layer is not hints[0])
    said = mark["text"]["expr"]
    assert f"< {charts.MIN_FITTED_VALUE_PX}" in said and f">= {charts.MIN_FITTED_VALUE_PX}" in str(shown)
    assert all(f"'{hint}'" in said for hint in charts.COLOURS_ONLY_HINTS) and said.endswith(": ''")
    assert mark["y"]["expr"].endswith("? -6 : height"), "where it says nothing it lies among the cells"
    sized = charts.heatmap(matrix_frame(np.zeros((14, 14)), tokens, tokens))  # the server sizes its cells
    assert not any("hover" in str(layer.get("mark", "")) for layer in sized.to_dict()["layer"])


def test_a_fitted_heatmap_the_server_finds_too_narrow_for_numbers_says_so_over_its_cells():
    # A slide of 22 tokens: the server leaves the numbers out, and the chart showed colours without a word (the
    # caption saying so was under the stage's words, below the window).
    tokens = [f"{i}·w" for i in range(1, 23)]
    spec = charts.heatmap(matrix_frame(np.zeros((22, 22)), tokens, tokens), fit=True, show_values=False,
                          font_size=20).to_dict()
    hints = [layer for layer in spec["layer"] if "hover" in str(layer.get("mark", {}).get("text", ""))]
    assert len(hints) == 1, [layer.get("mark") for layer in spec["layer"]]
    assert hints[0]["mark"]["text"]["expr"].startswith("(true) && width >= ")
    assert hints[0]["mark"]["y"]["expr"] == "(true) ? -6 : height"
    assert charts.colours_only(spec), "the line is not a number: the page still says it under the stage's words"


def test_a_head_grid_without_axes_names_each_panel_nearer_its_panel_than_the_row_above():
    """A real model's 72 heads: "L4 H1" sat as far from the L4 panel under it as from the L3 panel above it, and read
    as the name of either. The name now sits on its panel and the rows are further apart than that."""
    df = heads_frame(np.random.default_rng(0).random((4, 3, 3)), TOKENS[:3], TOKENS[:3],
                     head_labels=[f"L{i // 2 + 1} H{i % 2 + 1}" for i in range(4)])
    spec = charts.head_grid(df, columns=2, axes=False, spacing=6, font_size=11).to_dict()
    assert spec["facet"]["header"]["labelPadding"] <= 2
    assert spec["spacing"] == {"row": 6 + 11, "column": 6}
    with_axes = charts.head_grid(df, columns=2, spacing=6).to_dict()
    assert with_axes["spacing"] == 6 and "labelPadding" not in with_axes["facet"]["header"]


def test_a_negative_scores_bar_is_not_drawn_in_a_heatmaps_colour_for_high_scores():
    """Negative scores' bars were orange, the colour of high scores in the heatmaps beside them; a student read
    the two oranges as opposites. They are a grey now (no hue), and the step-through's words say so."""
    import colorsys

    from apptest_support import open_page

    frame = pd.DataFrame({"key": ["a", "b"], "value": [-1.0, 2.0], "label": ["-1", "2"], "index": [0, 1]})
    colour = json.dumps(charts.row_bars(frame, domain=None, value_title="score").to_dict())
    assert charts.NEGATIVE_BAR_COLOR in colour and "#f58518" not in colour
    r, g, b = (int(charts.NEGATIVE_BAR_COLOR[i:i + 2], 16) / 255 for i in (1, 3, 5))
    assert colorsys.rgb_to_hsv(r, g, b)[1] < 0.05, "a colour with a hue"
    shown = " ".join(m.value for m in open_page("pages/step_through.py", {"step": "softmax"}).markdown)
    assert "grey bars: negative scores" in shown and "orange bars" not in shown
