"""Numbers printed on coloured cells and bars are readable: each is drawn in whichever of the two text colours
contrasts more with the colour Vega actually paints under it (WCAG contrast, from the rendered SVG)."""

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from attention_ui import charts, frames

vl_convert = pytest.importorskip("vl_convert")

SVG = "{http://www.w3.org/2000/svg}"
BEST_TEXT_TOLERANCE = 0.35
"""How much less contrast than the other text colour a printed number may have: cells next to a scheme's
crossing have both near 4.2 : 1, and Vega's colour interpolation differs a little from the crossings found."""


def luminance(colour: str) -> float:
    if colour.startswith("rgb"):
        rgb = np.array([float(v) for v in re.findall(r"[\d.]+", colour)[:3]]) / 255
    elif colour == "white":
        rgb = np.ones(3)
    else:
        hex_digits = colour.lstrip("#")
        if len(hex_digits) == 3:
            hex_digits = "".join(c * 2 for c in hex_digits)
        rgb = np.array([int(hex_digits[i:i + 2], 16) for i in (0, 2, 4)]) / 255
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def contrast(a: str, b: str) -> float:
    hi, lo = sorted([luminance(a), luminance(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


NAME_FIELDS = ("query", "key", "token", "feature")


def mark_of(label: str) -> str:
    """The fields of an aria label that name a cell or bar ("key: 2·k1; query: 1·q0")."""
    return "; ".join(field for field in label.split("; ") if field.split(": ")[0] in NAME_FIELDS)


def printed_on(spec: dict) -> list[tuple[str, str, str | None]]:
    """(text, its colour, the colour of the cell or bar of the same row and column) for every printed value."""
    root = ET.fromstring(vl_convert.vegalite_to_svg(spec))
    fills = {mark_of(path.get("aria-label")): path.get("fill") for path in root.iter(f"{SVG}path")
             if path.get("aria-roledescription") in ("rect mark", "bar") and "value: " in path.get("aria-label", "")
             and path.get("fill", "").startswith(("rgb", "#"))}
    return [(text.text, text.get("fill"), fills.get(mark_of(text.get("aria-label"))))
            for text in root.iter(f"{SVG}text") if "; label: " in text.get("aria-label", "")]


def assert_readable(printed) -> int:
    """Checks each printed value's colour against the other text colour on its mark; returns how many."""
    checked = 0
    for text, colour, under in printed:
        assert under is not None, f"{text!r} has no cell or bar under it"
        other = charts.DARK_TEXT if colour == charts.LIGHT_TEXT else charts.LIGHT_TEXT
        assert contrast(colour, under) >= contrast(other, under) - BEST_TEXT_TOLERANCE, (
            f"{text!r} in {colour} on {under}: {contrast(colour, under):.2f} : 1, "
            f"{other} would be {contrast(other, under):.2f} : 1")
        checked += 1
    return checked


def matrix(values):
    rows, cols = values.shape
    return frames.matrix_frame(values, [f"q{i}" for i in range(rows)], [f"k{j}" for j in range(cols)])


@pytest.mark.parametrize("values", [np.linspace(-1, 1, 41).reshape(1, 41), np.linspace(-0.4, 2.0, 41).reshape(1, 41),
                                    np.linspace(-3.0, 0.5, 41).reshape(1, 41)], ids=["even", "mostly_positive",
                                                                                       "mostly_negative"])
def test_signed_matrices_print_each_number_in_the_text_colour_that_reads_best_on_its_cell(values):
    spec = charts.matrix_heatmap(matrix(values), row="query", col="key").to_dict()
    printed = printed_on(spec)
    assert assert_readable(printed) == values.size
    assert {colour for _, colour, _ in printed} == {charts.LIGHT_TEXT, charts.DARK_TEXT}


def test_weights_print_each_number_in_the_text_colour_that_reads_best_on_its_cell():
    values = np.linspace(0, 1, 41).reshape(1, 41)
    spec = charts.heatmap(matrix(values), domain=(0, 1)).to_dict()
    assert assert_readable(printed_on(spec)) == values.size


def test_weights_coloured_row_by_row_print_each_number_in_the_text_colour_that_reads_best_on_its_cell():
    values = np.vstack([np.linspace(0, 0.3, 21), np.linspace(0, 1, 21)])
    spec = charts.heatmap(matrix(values), color_field="row_scaled").to_dict()
    assert assert_readable(printed_on(spec)) == values.size


def test_numbers_printed_inside_bars_read_best_on_the_bar_under_them():
    values = np.array([-2.0, -1.5, 1.5, 2.0, -1.8, 1.9, -1.0, 1.0] * 2)
    df = frames.row_frame(values, [f"k{j}" for j in range(values.size)])
    spec = charts.row_bars(df, domain=None, cell_size=14, height=300, value_title="score").to_dict()
    inside = [entry for entry in printed_on(spec) if entry[1] in (charts.LIGHT_TEXT, charts.DARK_TEXT)]
    assert len(inside) == values.size, "every bar here is long enough to hold its number"
    assert assert_readable(inside) == values.size


def _value_fonts(spec: dict) -> set[int]:
    """The font sizes of a heatmap's printed values (its text layers that print the label)."""
    layers = spec.get("spec", spec)["layer"]
    return {layer["mark"]["fontSize"] for layer in layers if layer["mark"].get("type") == "text"
            and isinstance(layer["mark"].get("fontSize"), int) and "label" in json.dumps(layer["encoding"])}


@pytest.mark.parametrize("cell_size", [36, 44])
def test_a_longer_printed_number_gets_a_font_that_keeps_it_in_its_cell(cell_size):
    """At d_k = 64 a raw score of −15.518 (7 characters) was printed at the font sized for "−0.390" and ran into the
    next cells; a matrix of such numbers prints them smaller, one of small numbers as before."""
    small = charts.matrix_heatmap(matrix(np.array([[-0.39, 0.5], [1.25, -2.0]])), cell_size=cell_size, row="query",
                                    col="key").to_dict()
    large = charts.matrix_heatmap(matrix(np.array([[-15.518, 0.5], [22.421, -2.0]])), cell_size=cell_size, row="query",
                                    col="key").to_dict()
    (small_font,), (large_font,) = _value_fonts(small), _value_fonts(large)
    assert large_font * charts.VALUE_CHAR_EM * len("−15.518") <= cell_size < small_font * 0.6 * len("−15.518")
    assert small_font == charts.cell_value_font(cell_size, 14, diverging=True, fit=False)


def test_a_head_grid_of_longer_numbers_is_not_filled_into_the_spec_of_shorter_ones():
    from attention_ui import render

    short = render.cached_head_grid(np.array([[[0.5, -0.25], [1.0, 2.0]]]), ["a", "b"], ["head 1"], diverging=True,
                                    show_values=True, scheme="blueorange", domain=(-20, 20), cell_size=44)
    long = render.cached_head_grid(np.array([[[-15.5, -0.25], [1.0, 2.0]]]), ["a", "b"], ["head 1"], diverging=True,
                                   show_values=True, scheme="blueorange", domain=(-20, 20), cell_size=44)
    assert max(_value_fonts(long)) < max(_value_fonts(short))


def _unnamed_symbols(spec: dict) -> list[str]:
    """The rendered SVG's elements a screen reader is told are graphics (role img, graphics-symbol or
    graphics-document) that have no name: no aria-label and no <title> (axe's rule svg-img-alt)."""
    root = ET.fromstring(vl_convert.vegalite_to_svg(spec))
    return [ET.tostring(element, encoding="unicode")[:160] for element in root.iter()
            if element.get("role") in ("img", "graphics-symbol", "graphics-document")
            and not element.get("aria-label") and element.find(f"{SVG}title") is None]


@pytest.mark.parametrize("fit", [False, True], ids=["panels", "fitted"])
def test_a_head_grids_outline_of_the_chosen_head_is_not_an_unnamed_graphic(fit):
    """Multi-head's frame around the chosen head (a rect with no fields to describe it) was told to a screen reader
    as a graphic with no name."""
    weights = np.full((4, 3, 3), 1 / 3)
    labels = ["a", "b", "c"]
    spec = charts.head_grid(frames.heads_frame(weights, labels, labels), columns=2, selected=1, fit=fit).to_dict()
    if fit:
        spec = {**spec, "width": 400}
    assert _unnamed_symbols(spec) == []


def test_the_sharing_diagrams_head_names_contrast_with_their_dots():
    """"KV1" was white on the orange key/value dots, 2.6 : 1."""
    from attention_ui.modern import sharing_diagram

    root = ET.fromstring(vl_convert.vegalite_to_svg(sharing_diagram(4, [0, 0, 1, 1]).to_dict()))
    dots = {path.get("aria-label").split("head: ")[-1]: path.get("fill") for path in root.iter(f"{SVG}path")
            if path.get("aria-roledescription") == "circle"}
    names = [(text.text, text.get("fill")) for text in root.iter(f"{SVG}text") if text.text in dots]
    assert {name for name, _ in names} == {"Q1", "Q2", "Q3", "Q4", "KV1", "KV2"}, names
    assert all(contrast(colour, dots[name]) >= 4.5 for name, colour in names), [
        (name, colour, dots[name], round(contrast(colour, dots[name]), 2)) for name, colour in names]


def test_the_why_pages_marker_words_are_dark_enough_for_small_text():
    """"d_k = 64" (Why √d_k) and "T = d" (What it costs) were grey at 3.3 : 1 on white."""
    from attention_ui.why import GUIDE_COLOR

    assert contrast(GUIDE_COLOR, "white") >= 4.5
