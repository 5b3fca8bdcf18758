"""Opening pages with Streamlit's AppTest, shared by the page tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 180  # seconds per run: importing torch/transformers or loading a model the first time is slow


def open_page(page: str = "app.py", query: dict[str, str] | None = None) -> AppTest:
    """A fresh session opened at ``page`` (a deep link: app.py runs and its navigation picks the page),
    optionally with URL query parameters."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    if page != "app.py":
        at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def one_session_per_page():
    """``get(page)``: an opened session of ``page``, the same one each time (for a module's tests that each set what
    they need)."""
    cache: dict[str, AppTest] = {}

    def get(page: str) -> AppTest:
        if page not in cache:
            cache[page] = open_page(page)
        return cache[page]

    return get


def is_path_mark(markdown: str) -> bool:
    """Whether a Markdown element's text is one of Start here's cards' marks (done, started, not yet)."""
    return markdown in (":green[:material/check_circle:]", ":orange[:material/clock_loader_40:]",
                        ":gray[:material/radio_button_unchecked:]")


def switch_to(at: AppTest, page: str) -> AppTest:
    """Go to another page in the same session. AppTest then runs the page file on its own; a second
    run checks that the settings it restored stay put."""
    at.switch_page(page).run()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


_POWER = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def shown_number(text: str) -> float:
    """A number as a page shows it: "0.67", or "1.5 × 10⁻⁷" (``text.size_in_words``)."""
    written = re.fullmatch(r"(\S+) × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text.strip())
    if written:
        return float(written.group(1)) * 10 ** int(written.group(2).translate(_POWER))
    return float(text)


def spec_titles(spec: dict) -> list[str]:
    """A chart's title and those of its side-by-side or stacked parts, as text."""
    title = spec.get("title", "")
    found = [title.get("text", "") if isinstance(title, dict) else json.dumps(title, ensure_ascii=False)
             if isinstance(title, list) else str(title)]
    return found + [t for key in ("hconcat", "vconcat") for part in spec.get(key, []) for t in spec_titles(part)]


def chart_data(at: AppTest, title_part: str) -> pd.DataFrame:
    """The data of the first chart whose title, or one of whose parts' titles, contains ``title_part`` (all its
    datasets, one frame)."""
    titles = []
    for chart in at.get("vega_lite_chart"):
        names = spec_titles(json.loads(chart.proto.spec))
        titles.extend(names)
        if any(title_part in name for name in names):
            frames = [pa.ipc.open_stream(d.data.data).read_pandas() for d in chart.proto.datasets]
            return pd.concat(frames, ignore_index=True)
    raise AssertionError(f"no chart titled like {title_part!r}; charts: {titles}")
