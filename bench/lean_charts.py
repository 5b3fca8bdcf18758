"""The bare pages' chart: an 8 × 8 Vega-Lite heatmap given as a spec dict built once, and its data per stage.

Shared by ``bench/lean_page.py`` and ``bench/controls_page.py`` (no torch, no Altair).
"""

import numpy as np
import streamlit as st

STAGE_COUNT = 9
SIZE = 8
TOKENS = [f"t{i + 1}" for i in range(SIZE)]


@st.cache_resource(max_entries=1)
def heatmap_spec() -> dict:
    """A Vega-Lite heatmap (tokens on both axes, value on hover) without data: built once per process."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "width": 300, "height": 300,
        "mark": {"type": "rect"},
        "encoding": {
            "x": {"field": "key", "type": "ordinal", "sort": TOKENS, "title": "key"},
            "y": {"field": "query", "type": "ordinal", "sort": TOKENS, "title": "query"},
            "color": {"field": "value", "type": "quantitative", "scale": {"scheme": "blues"}},
            "tooltip": [{"field": "query"}, {"field": "key"}, {"field": "value", "format": ".3f"}],
        },
    }


@st.cache_data(max_entries=2 * STAGE_COUNT)
def stage_values(step: int, which: str) -> list[dict]:
    """Stage ``step``'s heatmap rows: random scores ("before") or their row softmax ("after")."""
    rng = np.random.default_rng(step * 2 + (which == "after"))
    grid = rng.normal(size=(SIZE, SIZE))
    if which == "after":
        grid = np.exp(grid) / np.exp(grid).sum(axis=1, keepdims=True)
    return [{"query": TOKENS[i], "key": TOKENS[j], "value": float(grid[i, j])}
            for i in range(SIZE) for j in range(SIZE)]
