"""Draw Altair charts as ready Vega-Lite specs, built once and shared by every visitor.

Building an Altair chart and turning it into a spec costs tens of milliseconds, and ``st.altair_chart``
does the second part under a process-wide lock. A class that opens one link asks for the same charts
again and again, so a chart is built once per (builder, data, options) and its spec, with the data already
in Arrow form, is kept in a small process-wide cache bounded in entries and bytes.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch
from altair.utils import schemapi
from streamlit import dataframe_util

from . import charts
from .frames import AxisLabels, format_value, heads_frame, matrix_frame

MAX_SPECS = 512
MAX_SPEC_BYTES = 48 * 2**20
"""Bounds of the shared spec cache (entries; bytes of Arrow data and spec text)."""

_lock = threading.Lock()
_specs: OrderedDict[str, tuple[object, int]] = OrderedDict()  # specs, and values kept by cached_value
_bytes = 0
_building = threading.local()  # .frames: the DataFrames met while this thread prepares a spec


def _named_frames(data, **_):
    """Altair's data transformer: while ``prepared_spec`` runs (in this thread), a DataFrame becomes a named
    dataset kept aside as it is; otherwise, as Altair's default, rows written into the spec (no row limit:
    a real model's layer × head grid has more than 5000 cells)."""
    frames = getattr(_building, "frames", None)
    if frames is None or not isinstance(data, pd.DataFrame):
        return alt.to_values(data)
    for name, frame in frames.items():
        if frame is data or _same_frame(frame, data):  # one frame used by several layers or panels: one dataset
            return {"name": name}
    name = f"frame-{len(frames) + 1}"
    frames[name] = data
    return {"name": name}


def _same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two frames hold the same table (two charts of one spec may each have cut the same frame down
    to the same columns)."""
    return a.shape == b.shape and list(a.columns) == list(b.columns) and a.equals(b)


alt.data_transformers.register("attention", _named_frames)
alt.data_transformers.enable("attention")
# Altair's debug mode validates every schema object as it is made (each encoding, each copy a layer makes):
# about a quarter of the time a chart takes to build. The chart tests validate every builder's whole spec.
schemapi.disable_debug_mode()


def prepared_spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite spec with each dataset as Arrow bytes (the form Streamlit sends). A DataFrame
    goes to Arrow directly, never through rows of JSON."""
    spec, datasets = _spec_and_frames(chart)
    spec["datasets"] = {name: _arrow(frame) for name, frame in datasets.items()}
    return spec


def _spec_and_frames(chart: alt.TopLevelMixin) -> tuple[dict, dict[str, pd.DataFrame]]:
    """The chart's spec (its "datasets" still to be filled in) and each of its datasets as a DataFrame."""
    _building.frames = {}
    try:
        spec = chart.to_dict(validate=False)  # the builders' specs are checked by the chart tests
        frames = _building.frames
    finally:
        _building.frames = None
    datasets = {name: pd.DataFrame(rows) for name, rows in (spec.get("datasets") or {}).items()}
    datasets.update(frames)
    return spec, datasets


def _arrow(frame: pd.DataFrame) -> bytes:
    return dataframe_util.convert_anything_to_arrow_bytes(frame)


def _fingerprint(parts) -> str:
    digest = hashlib.blake2b(digest_size=20)
    for part in parts:
        if isinstance(part, pd.DataFrame):
            digest.update(pd.util.hash_pandas_object(part, index=False).to_numpy().tobytes())
            digest.update(repr(list(part.columns)).encode())
        elif isinstance(part, (torch.Tensor, np.ndarray)):  # every value (a repr elides long arrays)
            array = part.detach().cpu().numpy() if isinstance(part, torch.Tensor) else part
            digest.update(np.ascontiguousarray(array).tobytes())
            digest.update(repr((array.shape, str(array.dtype))).encode())
        else:
            digest.update(repr(part).encode())
    return digest.hexdigest()


def cached_spec(builder: Callable[..., alt.TopLevelMixin], *frames: pd.DataFrame, **options) -> dict:
    """``builder(*frames, **options)`` as a prepared spec, from the shared cache when it was built before."""
    return cached_chart((builder.__module__, builder.__qualname__, *frames, sorted(options.items())),
                        lambda: builder(*frames, **options))


def cached_chart(inputs: tuple, build: Callable[[], alt.TopLevelMixin]) -> dict:
    """``build()`` as a prepared spec, cached under ``inputs``: everything the chart depends on (tensors,
    arrays, frames, labels, sizes, titles). For charts whose frames cost more to make than to key: on a
    hit the frames are never made."""
    key = _fingerprint(inputs)
    hit = _cached(key)
    if hit is not None:
        return hit
    spec = prepared_spec(build())
    _remember(key, spec)
    return spec


def _cached(key: str) -> object | None:
    """The spec (or ``cached_value``'s value) cached under ``key``, now the most recently used; or None."""
    with _lock:
        hit = _specs.get(key)
        if hit is None:
            return None
        _specs.move_to_end(key)
        return hit[0]


def cached_matrix_chart(builder: Callable[..., alt.TopLevelMixin], values, rows: list[str], cols: list[str], *,
                        row_name: str = "query", col_name: str = "key", blocked=None,
                        asked: tuple[int, int] | None = None, **options) -> dict:
    """``builder(frames.matrix_frame(values, rows, cols, …), **options)`` as a prepared spec, cached under the
    matrix's values (and ``blocked``) rather than under its frame: on a hit no frame is made or hashed. ``asked``:
    the (row, column) of a cell that prints ``charts.ASKED_MARK`` instead of its number (its colour and tooltip
    stay)."""
    inputs = (builder.__module__, builder.__qualname__, values, blocked, list(rows), list(cols), row_name, col_name,
              asked, sorted(options.items()))

    def build() -> alt.TopLevelMixin:
        frame = matrix_frame(values, AxisLabels(rows), AxisLabels(cols), row_name=row_name, col_name=col_name,
                             blocked=blocked)
        if asked is not None:
            cell = (frame["row_index"] == asked[0]) & (frame["col_index"] == asked[1]) & ~frame["masked"]
            frame.loc[cell, "label"] = charts.ASKED_MARK
        return builder(frame, **options)

    return cached_chart(inputs, build)


MAX_TEMPLATES = 64
"""Bound of the template cache (entries; a template is a spec without its data, a few kB to tens of kB)."""


@dataclass(frozen=True)
class _Template:
    """A spec made by Altair without its data, and what to put in again: the values of its slots it was made
    with (label lists and strings that change from chart to chart of one shape), and for each dataset the
    columns it sent and which of them went as categories."""

    spec: dict
    slots: tuple
    datasets: dict[str, tuple[list[str], frozenset[str]]]


_templates: OrderedDict[str, _Template | None] = OrderedDict()  # None: that shape cannot be filled in


def templated_chart(inputs: tuple, shape: tuple, slots: tuple, build: Callable[[], alt.TopLevelMixin],
                    frame: Callable[[list[str]], pd.DataFrame]) -> dict:
    """``cached_chart(inputs, build)``, but a chart of a shape met before is not built again: the spec Altair
    made for the first chart of that ``shape`` is filled in with this one's ``slots`` and data.

    ``shape`` holds everything the spec depends on besides its data and its ``slots``; each slot is a list
    (e.g. an axis's labels, the scale's domain) or a string (e.g. a filter's expression) that the spec holds
    as it is, or a (key, number) pair: the number the spec holds under that key (e.g. ("width", 240)).
    ``frame(columns)`` gives a DataFrame holding (at least) those columns of the chart's one dataset: the
    template keeps the columns the builder sent and which of them it sent as categories. A template is kept
    only if filling it in for the chart it was made from gives that chart's spec exactly, every slot included;
    else the shape is always built."""
    key = _fingerprint(inputs)
    shape_key = _fingerprint(shape)
    hit = _cached(key)
    if hit is not None:
        return hit
    with _lock:
        template = _templates.get(shape_key, False)
        if template is not False:
            _templates.move_to_end(shape_key)
    spec = _filled(template, slots, frame) if template else None
    if spec is None:
        spec, datasets = _spec_and_frames(build())
        spec["datasets"] = {name: _arrow(data) for name, data in datasets.items()}
        if template is False:
            _keep_template(shape_key, _template_of(spec, datasets, slots, frame))
    _remember(key, spec)
    return spec


def _template_of(spec: dict, datasets: dict[str, pd.DataFrame], slots: tuple,
                 frame: Callable[[list[str]], pd.DataFrame]) -> _Template | None:
    """The template of a freshly built ``spec``, or None when filling it in would not give ``spec`` back."""
    if len(datasets) != 1 or not all(isinstance(slot, (list, str)) or _numbered(slot) for slot in slots):
        return None
    template = _Template({k: v for k, v in spec.items() if k != "datasets"}, tuple(slots),
                         {name: (list(data.columns), frozenset(c for c in data.columns
                                                               if isinstance(data[c].dtype, pd.CategoricalDtype)))
                          for name, data in datasets.items()})
    counts = [0] * len(slots)
    _substituted(template.spec, template.slots, template.slots, counts)
    if 0 in counts:  # a slot the spec does not hold (or holds in another form) would never be filled in
        return None
    again = _filled(template, slots, frame)
    return template if again == spec else None


def _filled(template: _Template, slots: tuple, frame: Callable[[list[str]], pd.DataFrame]) -> dict | None:
    """The template with ``slots`` in place of the ones it was made with and the data of ``frame(columns)``; None when
    two slots held the same value and now differ (the spec cannot tell them apart)."""
    if len(slots) != len(template.slots):
        return None
    for i, old in enumerate(template.slots):
        for j in range(i):
            if old == template.slots[j] and slots[i] != slots[j]:
                return None
    spec = _substituted(template.spec, template.slots, slots, [0] * len(slots))
    datasets = {}
    for name, (columns, categories) in template.datasets.items():
        data = frame(columns)
        if not set(columns) <= set(data.columns):
            return None
        chosen = data[columns]
        datasets[name] = _arrow(chosen.astype({c: "category" for c in categories if
                                                not isinstance(chosen[c].dtype, pd.CategoricalDtype)}))
    spec["datasets"] = datasets
    return spec


def _substituted(node, old: tuple, new: tuple, counts: list[int]):
    """A copy of a spec's ``node`` with each list equal to a list of ``old``, each string value of a dict equal
    to a string of ``old`` and each number under a (key, number) of ``old`` replaced by its counterpart in
    ``new`` (``counts`` counts the replacements)."""
    if isinstance(node, dict):
        out = {}
        for name, value in node.items():
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                for i, slot in enumerate(old):
                    if (value == slot if isinstance(value, str) else
                            _numbered(slot) and slot[0] == name and type(value) is type(slot[1]) and value == slot[1]):
                        value = new[i] if isinstance(value, str) else new[i][1]
                        counts[i] += 1
                        break
                out[name] = value
            else:
                out[name] = _substituted(value, old, new, counts)
        return out
    if isinstance(node, list):
        for i, slot in enumerate(old):
            if isinstance(slot, list) and node == slot:
                counts[i] += 1
                return list(new[i])
        return [_substituted(value, old, new, counts) for value in node]
    return node


def _numbered(slot) -> bool:
    return (isinstance(slot, tuple) and len(slot) == 2 and isinstance(slot[0], str)
            and isinstance(slot[1], (int, float)) and not isinstance(slot[1], bool))


def _keep_template(shape_key: str, template: _Template | None) -> None:
    with _lock:
        _templates[shape_key] = template
        _templates.move_to_end(shape_key)
        while len(_templates) > MAX_TEMPLATES:
            _templates.popitem(last=False)


def template_count() -> int:
    """How many chart shapes the template cache holds."""
    with _lock:
        return len(_templates)


_HEAD_GRID_DEFAULTS = {name: parameter.default for name, parameter in
                       inspect.signature(charts.head_grid).parameters.items()
                       if parameter.default is not inspect.Parameter.empty}


def cached_head_grid(values, labels: list[str], head_labels: list[str], **options) -> dict:
    """``charts.head_grid(frames.heads_frame(values, labels, labels, head_labels=…), **options)`` as a prepared
    spec: cached under its values like ``cached_matrix_chart``, and for new values (a new sentence) or another
    ``selected`` head, filled into the spec of the first grid of its shape instead of built again (Altair takes
    tens of milliseconds to lay out a real model's 72 panels)."""
    array = np.asarray(values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else values)
    labels, head_labels = list(labels), list(head_labels)
    inputs = ("head grid", array, labels, head_labels, sorted(options.items()))
    given = {**_HEAD_GRID_DEFAULTS, **options}
    selected = given["selected"]
    domain = given["domain"]
    if domain is None:
        domain = charts.color_domain(pd.Series(array.reshape(-1)), diverging=given["diverging"])
    order = list(dict.fromkeys(labels))
    cell, font_size = given["cell_size"], given["font_size"]
    # A new sentence's length changes the labels, the panels' size and the legend's length (as head_grid sets
    # them): slots. Everything else that the values or the cell size decide is part of the shape.
    side = cell * len(order)
    slots = [order, ("width", side), ("height", side), ("gradientLength", charts.legend_length(side))]
    if selected is not None:
        slots.append(f"datum.head_index == {int(selected)}")
    shape = ("head grid", array.shape[0], len(dict.fromkeys(head_labels)), bool(np.isfinite(array).all()),
             tuple(float(v) for v in domain), selected is None, type(side).__name__,
             charts.label_angle(order, font_size=font_size, step=cell) if given["axes"] else None,
             charts.cell_value_font(cell, font_size, diverging=given["diverging"], fit=given["fit"],
                                    chars=_longest_label(array)),
             sorted((k, v) for k, v in options.items() if k not in ("selected", "cell_size")))
    names = {"row_name": given["row"], "col_name": given["col"], "head_name": given["head"]}

    def frame() -> pd.DataFrame:
        return heads_frame(array, AxisLabels(labels), AxisLabels(labels), head_labels=head_labels, **names)

    def columns(wanted: list[str]) -> pd.DataFrame:
        made = _grid_columns(array, order, head_labels, wanted, **names) if len(order) == len(labels) else None
        return frame() if made is None else made

    return templated_chart(inputs, shape, tuple(slots), lambda: charts.head_grid(frame(), **options), columns)


def _longest_label(array: np.ndarray) -> int:
    """How many characters the longest printed value of ``array`` has: its largest or its smallest finite value's."""
    finite = array[np.isfinite(array)]
    return max(len(format_value(float(v))) for v in (finite.max(), finite.min())) if finite.size else 0


def _grid_columns(array: np.ndarray, labels: list[str], head_labels: list[str], wanted: list[str], *, row_name: str,
                  col_name: str, head_name: str) -> pd.DataFrame | None:
    """``wanted`` columns of ``heads_frame(array, labels, labels, head_labels=head_labels)`` (each label once) made
    straight from the array, the labels as categories; None when a column other than the labels, the values
    and the indices is wanted. The frame with every column formats each number as text: most of a fill's time."""
    h, n_rows, n_cols = array.shape
    if len(set(head_labels)) != h or not np.isfinite(array).all():
        return None
    head_index = np.repeat(np.arange(h), n_rows * n_cols)
    row_index = np.tile(np.repeat(np.arange(n_rows), n_cols), h)
    col_index = np.tile(np.arange(n_cols), n_rows * h)
    made = {head_name: lambda: _categories(head_labels, head_index), row_name: lambda: _categories(labels, row_index),
            col_name: lambda: _categories(labels, col_index), "value": lambda: array.astype(np.float64).reshape(-1),
            "row_index": lambda: row_index, "col_index": lambda: col_index, "head_index": lambda: head_index}
    if not set(wanted) <= set(made):
        return None
    return pd.DataFrame({name: made[name]() for name in wanted})


def _categories(labels: list[str], index: np.ndarray) -> pd.Categorical:
    """``labels[index]`` as a categorical whose categories are the labels sorted, as ``astype("category")``
    gives them (``labels`` distinct)."""
    ordered = sorted(labels)
    rank = {label: i for i, label in enumerate(ordered)}
    codes = np.array([rank[label] for label in labels], dtype=np.int64)[index]
    return pd.Categorical.from_codes(codes, categories=pd.Index(ordered))


def cached_value(inputs: tuple, build: Callable[[], object], size: Callable[[object], int]):
    """``build()``, kept in the shared cache (with the specs, under the same bounds) under ``inputs``, which must
    hold everything it depends on; ``size(value)`` is its weight in bytes. The value is shared by every session:
    it must never be changed after it is made."""
    key = _fingerprint(("value", *inputs))
    hit = _cached(key)
    if hit is not None:
        return hit
    value = build()
    _store(key, value, size(value))
    return value


def _remember(key: str, spec: dict) -> None:
    size = sum(len(b) for b in spec["datasets"].values()) + len(repr({k: v for k, v in spec.items()
                                                                       if k != "datasets"}))
    _store(key, spec, size)


def _store(key: str, value, size: int) -> None:
    global _bytes
    with _lock:
        if key in _specs:
            return
        _specs[key] = (value, size)
        _bytes += size
        while _specs and (len(_specs) > MAX_SPECS or _bytes > MAX_SPEC_BYTES):
            _, (_, dropped) = _specs.popitem(last=False)
            _bytes -= dropped


def cache_size() -> tuple[int, int]:
    """(entries, bytes) held by the shared spec cache."""
    with _lock:
        return len(_specs), _bytes


def show_chart(chart, *, key: str | None = None, on_select=None, fit: bool = False, description: str | None = None):
    """Draw an Altair chart or a prepared spec.

    Without ``fit`` it is drawn at its own size (``pad`` keeps the cell sizes; axes and legend are added
    around them) and shrinks with a narrow screen; with ``fit`` it fills its container's width and the
    height the page's style gives it. ``on_select`` (with ``key``) turns clicks on its selections into a
    callback. Our own theme keeps the projector-sized fonts. ``description`` (default: its title) is what a screen
    reader names it by."""
    spec = chart if isinstance(chart, dict) else prepared_spec(chart)
    spec = {**spec, "datasets": dict(spec.get("datasets") or {}),
            "autosize": {"type": "fit", "contains": "padding"} if fit else {"type": "pad"}}
    description = description or spec.get("description") or spec_title(spec)
    if description:  # what a screen reader names the chart by (its aria-label)
        spec["description"] = description if description.startswith("Chart: ") else f"Chart: {description}"
    if fit and ("layer" in spec or "mark" in spec):
        spec.update(width="container", height="container")
    title = {"text": spec["title"]} if isinstance(spec.get("title"), (str, list)) else spec.get("title")
    if not fit and isinstance(title, dict) and "limit" not in title:
        # Drawn at its own size, it grows to hold its title. Vega cut the title of a chart drawn where a narrower one
        # had been to that one's width ("what 1·[CLS] att…" after a sentence of one word): no width cuts it.
        spec["title"] = {**title, "limit": UNCUT_TITLE_PX}
    selections = _selections(spec)
    options = {"theme": None, "width": "stretch" if fit else "content"}
    if fit:
        options["height"] = "stretch"
    if on_select is not None and key is not None and selections:
        return st.vega_lite_chart(spec, key=key, on_select=on_select, selection_mode=selections, **options)
    return st.vega_lite_chart(spec, **options)


UNCUT_TITLE_PX = 10_000
"""The title length (px) past which Vega would cut a chart's title drawn at its own size: none is that long."""


def spec_title(spec: dict) -> str:
    """A chart spec's title as one line of text (a concatenation's titles joined by " | "); "" without one. (A
    screen reader read every chart as "Vega visualization", whatever it showed.)"""
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text", "")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    if title:
        return str(title)
    parts = [spec_title(child) for key in ("hconcat", "vconcat", "concat") for child in spec.get(key, [])]
    return " | ".join(p for p in parts if p)


def _selections(spec: dict) -> list[str]:
    names = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for param in node.get("params", []) or []:
                if isinstance(param, dict) and "select" in param:
                    names.append(param["name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk({k: v for k, v in spec.items() if k != "datasets"})
    return names
