"""Draw Altair charts as ready Vega-Lite specs, built once and shared by every visitor.

Building an Altair chart and turning it into a spec costs tens of milliseconds, and ``st.altair_chart``
does the second part under a process-wide lock. A class that opens one link asks for the same charts
again and again, so a chart is built once per (builder, data, options) and its spec, with the data already
in Arrow form, is kept in a small process-wide cache bounded in entries and bytes.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Callable

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch
from altair.utils import schemapi
from streamlit import dataframe_util

from .frames import AxisLabels, matrix_frame

MAX_SPECS = 512
MAX_SPEC_BYTES = 48 * 2**20
"""Bounds of the shared spec cache (entries; bytes of Arrow data and spec text)."""

_lock = threading.Lock()
_specs: OrderedDict[str, tuple[dict, int]] = OrderedDict()
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
    _building.frames = {}
    try:
        spec = chart.to_dict(validate=False)  # the builders' specs are checked by the chart tests
        frames = _building.frames
    finally:
        _building.frames = None
    datasets = {name: pd.DataFrame(rows) for name, rows in (spec.get("datasets") or {}).items()}
    datasets.update(frames)
    spec["datasets"] = {name: dataframe_util.convert_anything_to_arrow_bytes(frame)
                        for name, frame in datasets.items()}
    return spec


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
    with _lock:
        hit = _specs.get(key)
        if hit is not None:
            _specs.move_to_end(key)
            return hit[0]
    spec = prepared_spec(build())
    _remember(key, spec)
    return spec


def cached_matrix_chart(builder: Callable[..., alt.TopLevelMixin], values, rows: list[str], cols: list[str], *,
                        row_name: str = "query", col_name: str = "key", blocked=None, **options) -> dict:
    """``builder(frames.matrix_frame(values, rows, cols, …), **options)`` as a prepared spec, cached under the
    matrix's values (and ``blocked``) rather than under its frame: on a hit no frame is made or hashed."""
    inputs = (builder.__module__, builder.__qualname__, values, blocked, list(rows), list(cols), row_name, col_name,
              sorted(options.items()))
    return cached_chart(inputs, lambda: builder(matrix_frame(values, AxisLabels(rows), AxisLabels(cols), row_name=row_name,
                                                             col_name=col_name, blocked=blocked), **options))


def _remember(key: str, spec: dict) -> None:
    global _bytes
    size = sum(len(b) for b in spec["datasets"].values()) + len(repr({k: v for k, v in spec.items()
                                                                       if k != "datasets"}))
    with _lock:
        if key in _specs:
            return
        _specs[key] = (spec, size)
        _bytes += size
        while _specs and (len(_specs) > MAX_SPECS or _bytes > MAX_SPEC_BYTES):
            _, (_, dropped) = _specs.popitem(last=False)
            _bytes -= dropped


def cache_size() -> tuple[int, int]:
    """(entries, bytes) held by the shared spec cache."""
    with _lock:
        return len(_specs), _bytes


def show_chart(chart, *, key: str | None = None, on_select=None, fit: bool = False):
    """Draw an Altair chart or a prepared spec.

    Without ``fit`` it is drawn at its own size (``pad`` keeps the cell sizes; axes and legend are added
    around them) and shrinks with a narrow screen; with ``fit`` it fills its container's width and the
    height the page's style gives it. ``on_select`` (with ``key``) turns clicks on its selections into a
    callback. Our own theme keeps the projector-sized fonts."""
    spec = chart if isinstance(chart, dict) else prepared_spec(chart)
    spec = {**spec, "datasets": dict(spec.get("datasets") or {}),
            "autosize": {"type": "fit", "contains": "padding"} if fit else {"type": "pad"}}
    if fit and ("layer" in spec or "mark" in spec):
        spec.update(width="container", height="container")
    selections = _selections(spec)
    options = {"theme": None, "width": "stretch" if fit else "content"}
    if fit:
        options["height"] = "stretch"
    if on_select is not None and key is not None and selections:
        return st.vega_lite_chart(spec, key=key, on_select=on_select, selection_mode=selections, **options)
    return st.vega_lite_chart(spec, **options)


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
