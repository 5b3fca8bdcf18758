"""Presenter mode (``?presenter=true``) on the pages beyond the step-through slides, at 1280×800.

What the page sends (AppTest):
- Modern attention's sliding-window weights draw keys outside the window as blocked (grey with ×), as the
  Step through, Masking and Cross-attention pages do, instead of as a dark weight 0.
- The sharing diagrams' circles are wide enough for their names ("KV1", "Q16") at the page's and the slide's
  font size, and never wider than the gap between two heads.

In a real browser (headless Chromium driving ``streamlit run``; skipped without Playwright or Chromium):
- Real model: the layers × heads grid lies inside the main column; no table runs past the column or needs a
  horizontal scroll bar, and nothing below a table is drawn over its rows (the per-head table). Its tables are HTML
  with the slide's text size, and the mean-over-heads and rollout grids are drawn at their own size (not shrunk
  to the column), with labels of at least 18 px.
- Generation: the new query, K and V cache charts and the two weights charts likewise.
- Step through: "All the numbers" on a slide is an enlarged HTML table inside the column.
- Modern attention: the same for its tables (the KV-cache table), and each diagram's names lie inside their circles.
- Labels that Streamlit draws at 14–16 px (expander and tab labels, slider values, inputs, select boxes, message
  boxes) are enlarged with the rest of the slide's text.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

try:
    from tests import browser_support as bs
except ImportError:  # pragma: no cover - depends on how pytest set up sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser_support as bs

from apptest_support import chart_data, open_page
from attention_core import sliding_window_mask
from attention_ui.charts import FIT_GRID_GAP, FIT_GRID_LEGEND_PX, FIT_GRID_ROW_GAP
from attention_ui.modern import NAME_CHAR_EM, node_size, sharing_diagram
from attention_ui.views import PAGE_FONT, PRESENTER_FONT

MODERN = "pages/modern_attention.py"
VIEWPORT = {"width": 1280, "height": 800}
TOLERANCE_PX = 1
LOAD_MS = 120_000  # a first run imports torch and loads the real model
PRESENTER_SMALLEST_PX = 18  # the slide's other labels are 1.3rem = 20.8 px; Streamlit's own are 14-16 px
SLIDE_VALUE_PX = 16  # the numbers inside a slide's cells (SLIDE_CELL 60 px wide)


# ------------------------------------------------------------------------------------------ AppTest


@pytest.mark.parametrize("window", [2, 3])
def test_sliding_window_weights_show_blocked_keys_as_blocked(window):
    at = open_page(MODERN)
    at.number_input(key="window").set_value(window).run()
    data = chart_data(at, "weights of head")
    assert "masked" in data.columns, list(data.columns)
    tokens = int(data["row_index"].max()) + 1
    allowed = sliding_window_mask(tokens, window)
    expected = [not bool(allowed[r, c]) for r, c in zip(data["row_index"], data["col_index"])]
    assert data["masked"].tolist() == expected
    assert (data[data["masked"]]["label"] == "×").all(), data[data["masked"]]["label"].unique()


@pytest.mark.parametrize("font_size", [PAGE_FONT, PRESENTER_FONT], ids=["lesson", "presenter"])
@pytest.mark.parametrize("heads, groups, width", [(1, 1, 260), (2, 2, 260), (4, 2, 260), (4, 4, 260), (8, 8, 560),
                                                  (16, 16, 1120), (16, 1, 1120)])
def test_sharing_diagram_names_fit_their_circles(font_size, heads, groups, width):
    diameter, name_size = node_size(heads, groups, width=width, font_size=font_size)
    longest = max(len(f"Q{heads}"), len(f"KV{groups}"))
    assert longest * NAME_CHAR_EM * name_size + 6 <= diameter, (diameter, name_size)
    assert name_size >= 9
    gap = width / (max(heads - 1, 1) + 1.2)
    assert diameter <= gap, f"circles of {diameter:.0f} px overlap at {gap:.0f} px apart"
    spec = sharing_diagram(heads, [i * groups // heads for i in range(heads)], width=width,
                           font_size=font_size).to_dict()
    marks = {layer["mark"]["type"]: layer["mark"] for layer in spec["layer"]}
    assert math.isclose(math.sqrt(marks["circle"]["size"]), diameter)
    assert marks["text"]["fontSize"] == name_size


# ------------------------------------------------------------------------------------------ browser

_MAIN_COLUMN_JS = """() => {
    const b = document.querySelector('[data-testid=stMainBlockContainer], .stMainBlockContainer');
    const r = b.getBoundingClientRect(), s = getComputedStyle(b);
    return {left: r.left + parseFloat(s.paddingLeft), right: r.right - parseFloat(s.paddingRight)};
}"""

_DATAFRAMES_JS = """() => Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stDataFrame], [data-testid=stMain] [data-testid=stTable]'), d => {
    const canvas = d.querySelector('canvas');
    const boxes = [d, canvas].filter(e => e).map(e => e.getBoundingClientRect());
    const right = Math.max(...boxes.map(r => r.right)), bottom = Math.max(...boxes.map(r => r.bottom));
    const scroller = d.querySelector('.dvn-scroller') || [d, ...d.querySelectorAll('div')].find(
        e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX));
    const container = d.closest('[data-testid=stElementContainer]');
    let next = container && container.nextElementSibling;
    while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;
    const header = Array.from(d.querySelectorAll('th'), th => th.textContent.trim()).slice(0, 3).join(' | ');
    const cells = Array.from(d.querySelectorAll('td, th'), c => parseFloat(getComputedStyle(c).fontSize));
    return {name: header, right, bottom, kind: d.dataset.testid,
            smallest_text: cells.length ? Math.min(...cells) : null,
            hidden_width: scroller ? scroller.scrollWidth - scroller.clientWidth : 0,
            next_top: next ? next.getBoundingClientRect().top : null};
})"""

_CHART_RIGHTS_JS = """() => Array.from(
  document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'), c => {
    const parts = [c, ...c.querySelectorAll('svg, canvas')].map(e => e.getBoundingClientRect())
      .filter(r => r.width > 0);
    const t = c.querySelector('.role-title-text, text.role-title-text');
    return {title: t ? t.textContent : '', right: Math.max(...parts.map(r => r.right))};
})"""

_NAMES_IN_CIRCLES_JS = """() => {
    const out = [];
    for (const chart of document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]')) {
        const circles = Array.from(chart.querySelectorAll('.mark-symbol path'), p => p.getBoundingClientRect());
        const names = Array.from(chart.querySelectorAll('.mark-text text'))
            .filter(t => /^(Q|KV)\\d+$/.test(t.textContent));
        for (const name of names) {
            const n = name.getBoundingClientRect(), x = (n.left + n.right) / 2, y = (n.top + n.bottom) / 2;
            const c = circles.find(c => c.left <= x && x <= c.right && c.top <= y && y <= c.bottom);
            out.push({name: name.textContent, name_width: n.width, circle_width: c ? c.width : null});
        }
    }
    return out;
}"""

_CHART_TEXT_JS = """(titles) => Array.from(
  document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'))
    .map(c => {
        const svg = c.querySelector('svg.marks, .vega-embed > svg, svg');
        const title = Array.from(c.querySelectorAll('.role-title-text'), e => e.textContent).join(' ');
        if (!svg || !titles.some(part => title.includes(part))) return null;
        const box = svg.getBoundingClientRect(), scale = box.width / parseFloat(svg.getAttribute('width'));
        const px = e => parseFloat(e.getAttribute('font-size') || getComputedStyle(e).fontSize) * scale;
        const texts = Array.from(svg.querySelectorAll('text')).filter(e => e.textContent.trim());
        const labels = texts.filter(e => !e.closest('.role-mark')).map(px);  // axes, colour bar, titles
        const values = texts.filter(e => e.closest('.role-mark') && !/^[×✓]$/.test(e.textContent.trim())).map(px);
        const container = c.closest('[data-testid=stElementContainer]');
        let next = container && container.nextElementSibling;
        while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;
        return {title, scale, right: box.right, bottom: box.bottom,
                next_top: next ? next.getBoundingClientRect().top : null,
                smallest_label: Math.min(...labels), smallest_value: values.length ? Math.min(...values) : null};
    }).filter(c => c)"""

_FONT_SIZES_JS = """(selectors) => Object.fromEntries(Object.entries(selectors).map(([what, sel]) =>
    [what, Array.from(document.querySelectorAll(sel), e => parseFloat(getComputedStyle(e).fontSize))]))"""


needs_browser = pytest.mark.skipif(not bs.browser_available(), reason=bs.NO_BROWSER)


@pytest.fixture(scope="module")
def server(request):
    port = os.environ.get("PRESENTER_LAYOUT_PORT")  # a fixed port where several servers share a machine
    if not (port and port.isdigit()):
        yield request.getfixturevalue("app_server")  # the test process's server (conftest)
        return
    with bs.streamlit_server(port=int(port), timeout=60) as base_url:
        yield base_url


@pytest.fixture
def slide(server, browser):
    """Open ``path`` in presenter mode in a window of ``viewport`` (default 1280×800) and return the page (closed
    after the test)."""
    contexts = []

    def open_slide(path: str, viewport: dict = VIEWPORT):
        context = browser.new_context(viewport=viewport)
        context.set_default_timeout(LOAD_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto(bs.with_query(server + path, "presenter=true"), wait_until="domcontentloaded", timeout=LOAD_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        bs.wait_for_all_charts(page, timeout=15_000)
        assert not page.locator(bs.EXCEPTION).count(), page.locator(bs.EXCEPTION).first.inner_text()
        return page

    yield open_slide
    for context in contexts:
        context.close()


@pytest.fixture
def read_slide(server, shared_pages):
    """As ``slide``, for a test that only reads the page: one page per address and window, kept for the module's
    other tests that read it (a stage in the address is walked to with the stage keys: ``SharedPages``)."""

    def show(path: str, viewport: dict = VIEWPORT):
        page = shared_pages.show(bs.with_query(server + path, "presenter=true"), viewport)
        assert not page.locator(bs.EXCEPTION).count(), page.locator(bs.EXCEPTION).first.inner_text()
        return page

    return show


def _layout_problems(page) -> list[str]:
    column = page.evaluate(_MAIN_COLUMN_JS)
    limit = min(column["right"], VIEWPORT["width"]) + TOLERANCE_PX
    problems = [f"chart {c['title']!r} ends at {c['right']:.0f} px, past the main column's {column['right']:.0f}"
                for c in page.evaluate(_CHART_RIGHTS_JS) if c["right"] > limit]
    frames = page.evaluate(_DATAFRAMES_JS)
    assert frames, "no table on the page"
    for f in frames:
        if f["right"] > limit:
            problems.append(f"table {f['name']!r} ends at {f['right']:.0f} px, past the main column's "
                            f"{column['right']:.0f}")
        if f["hidden_width"] > TOLERANCE_PX:
            problems.append(f"table {f['name']!r} hides {f['hidden_width']:.0f} px of columns behind a scroll bar")
        if f["next_top"] is not None and f["next_top"] < f["bottom"] - TOLERANCE_PX:
            problems.append(f"the element after table {f['name']!r} starts at {f['next_top']:.0f} px, over the "
                            f"table's rows (which end at {f['bottom']:.0f} px)")
    return problems


def _small_tables(page) -> list[str]:
    """HTML tables (``st.table``) whose text is smaller than the slide's (a dataframe's canvas is not measured)."""
    return [f"table {f['name']!r}: {f['smallest_text']:.1f} px" for f in page.evaluate(_DATAFRAMES_JS)
            if f["kind"] == "stTable" and f["smallest_text"] is not None and f["smallest_text"] < PRESENTER_SMALLEST_PX]


def _chart_text_problems(page, titles: list[str], count: int) -> list[str]:
    """The charts titled like one of ``titles``: drawn at their own size (not shrunk to the column, which shrinks
    their text), labels at least PRESENTER_SMALLEST_PX and numbers in the cells at least a slide's (16 px), inside
    the main column and above the next element."""
    column = page.evaluate(_MAIN_COLUMN_JS)
    charts = page.evaluate(_CHART_TEXT_JS, titles)
    assert len(charts) == count, [c["title"] for c in charts]
    problems = []
    for c in charts:
        name = c["title"]
        if c["scale"] < 0.99:
            problems.append(f"chart {name!r} is shrunk to {c['scale']:.2f} of its size")
        if c["smallest_label"] < PRESENTER_SMALLEST_PX:
            problems.append(f"chart {name!r} has labels of {c['smallest_label']:.1f} px")
        if c["smallest_value"] is not None and c["smallest_value"] < SLIDE_VALUE_PX:
            problems.append(f"chart {name!r} has numbers of {c['smallest_value']:.1f} px")
        if c["right"] > column["right"] + TOLERANCE_PX:
            problems.append(f"chart {name!r} ends at {c['right']:.0f} px, past the column's {column['right']:.0f}")
        if c["next_top"] is not None and c["next_top"] < c["bottom"] - TOLERANCE_PX:
            problems.append(f"the element after chart {name!r} starts over it")
    return problems


def _too_small(sizes: dict[str, list[float]]) -> list[str]:
    missing = [what for what, found in sizes.items() if not found]
    assert not missing, f"not on the page: {missing}"
    return [f"{what}: {min(found):.1f} px" for what, found in sizes.items() if min(found) < PRESENTER_SMALLEST_PX]


@needs_browser
def test_real_model_slide_fits_its_grid_and_tables_in_the_window(read_slide):
    page = read_slide("/real-model")
    problems = _layout_problems(page)
    small = _too_small(page.evaluate(_FONT_SIZES_JS, {
        "expander label": "[data-testid=stMain] [data-testid=stExpander] summary p",
        "select box value": "[data-testid=stMain] [data-testid=stSelectbox] input",
    }))
    problems += _chart_text_problems(page, ["mean of the heads", "rollout after each layer"], count=2)
    small += _small_tables(page)
    assert not problems, "\n  ".join(problems)
    assert not small, f"labels left small on a slide: {small}"


@needs_browser
def test_generation_slide_draws_its_cache_charts_at_the_slide_size(slide):
    page = slide("/generation?generation_step=4")
    problems = _chart_text_problems(page, ["new query", "K cache", "V cache", "rows made by", "full causal"], count=5)
    assert not problems, "\n  ".join(problems)


@needs_browser
def test_numbers_on_a_slide_are_an_enlarged_table_inside_the_column(slide):
    page = slide("/step-through?step=scores")
    page.locator("[data-testid=stMain] [data-testid=stExpander] summary").filter(has_text="All the numbers").click()
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    problems = _layout_problems(page)
    tables = page.evaluate(_DATAFRAMES_JS)
    assert not [t for t in tables if t["kind"] == "stDataFrame"], tables
    small = _small_tables(page)
    assert not problems, "\n  ".join(problems)
    assert not small, f"tables left small on a slide: {small}"


@needs_browser
def test_modern_attention_slide_fits_its_tables_and_names(slide):
    page = slide("/modern-attention?heads=4")
    problems = _layout_problems(page)
    names = page.evaluate(_NAMES_IN_CIRCLES_JS)
    assert {n["name"] for n in names} >= {"Q1", "Q4", "KV1", "KV2"}, names
    problems += [f"{n['name']} is {n['name_width']:.0f} px wide in a circle of {n['circle_width']} px"
                 for n in names if n["circle_width"] is None or n["name_width"] > n["circle_width"] - 2]
    small = _too_small(page.evaluate(_FONT_SIZES_JS, {
        "slider value": "[data-testid=stMain] [data-testid=stSliderThumbValue] p",
        "slider ends": "[data-testid=stMain] [data-testid=stSliderTickBar] p",
        "number input": "[data-testid=stMain] [data-testid=stNumberInputField]",
        "select box value": "[data-testid=stMain] [data-testid=stSelectbox] input",
        "message box": "[data-testid=stMain] [data-testid=stAlertContainer] p",
    }))
    assert not problems, "\n  ".join(problems)
    assert not small, f"labels left small on a slide: {small}"


@needs_browser
def test_by_hand_slide_enlarges_tab_and_expander_labels(slide):
    page = slide("/by-hand")
    small = _too_small(page.evaluate(_FONT_SIZES_JS, {
        "tab label": "[data-testid=stMain] [data-testid=stTab] p",
        "expander label": "[data-testid=stMain] [data-testid=stExpander] summary p",
    }))
    assert not small, f"labels left small on a slide: {small}"



# ------------------------------------------------------------------------------ words on a slide


@pytest.mark.parametrize("page, query, where", [
    ("pages/step_through.py", {"step": "masked"}, "info"),
    ("pages/multi_head.py", {"heads": "1"}, "info"),
    ("pages/modern_attention.py", {"heads": "1"}, "info"),
    ("pages/why_scaling.py", {}, "caption"),
])  # (Overview's slide leaves out its "how to use this app", which said where the controls are)
def test_a_slide_that_points_to_the_sidebar_says_where_its_controls_are(page, query, where):
    """Presenter mode hides the sidebar, but the slides said "Pick a mask in the sidebar" as if it were there.
    Its controls are under the slide's Settings menu."""
    lesson = open_page(page, query)
    slide = open_page(page, {**query, "presenter": "true"})
    for at in (lesson, slide):
        assert not at.exception, [e.value for e in at.exception]
    said = [e.value for e in getattr(lesson, where) if "in the sidebar" in e.value]
    on_slide = [e.value for e in getattr(slide, where) if "under Settings at the top" in e.value]
    assert said and not any("under Settings at the top" in text for text in said), said
    assert on_slide and not any("in the sidebar" in e.value for e in getattr(slide, where)), on_slide


def test_presenter_pages_keep_their_title_except_the_slides():
    """In presenter mode every page dropped its title, so a lesson began mid-paragraph and the hall could not
    tell which lesson it was. Pages of slides keep it off: the stage picker names each slide."""
    for page in ("pages/multi_head.py", "pages/overview.py", "pages/real_model.py", "pages/start_here.py"):
        at = open_page(page, {"presenter": "true"})
        assert not at.exception and len(at.title) == 1, (page, [t.value for t in at.title])
    for page in ("pages/step_through.py", "pages/inside_real_head.py"):
        assert not open_page(page, {"presenter": "true"}).title, page
        assert len(open_page(page).title) == 1, page


def _min_extents(spec) -> list:
    found = []
    if isinstance(spec, dict):
        for name, value in spec.items():
            found += [value] if name == "minExtent" else _min_extents(value)
    elif isinstance(spec, list):
        for item in spec:
            found += _min_extents(item)
    return found


@pytest.mark.parametrize("step, levelled", [("embed", 0), ("qkv", 0), ("scores", 0), ("context", 2)])
def test_only_charts_side_by_side_keep_room_for_each_others_labels(step, levelled):
    """Every slide chart left room under its cells for slanted key labels, so a feature chart on its own (X, Q/K/V)
    had an empty band there and smaller rows; only stage 7's A and C, side by side, need it."""
    sentence = "the students asked why the teacher drew attention maps"
    at = open_page("pages/step_through.py", {"presenter": "true", "step": step, "sentence": sentence})
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    with_room = [s for s in specs if _min_extents(s)]
    assert len(with_room) == levelled, [s.get("title") for s in with_room]
    if levelled:  # each works out the weights' key labels' angle from its own column's width: the same room
        outcomes = {json.dumps(re.findall(r"[?:] (\d+)", extent["expr"])) for s in with_room
                    for extent in _min_extents(s)}
        assert len(outcomes) == 1, ("both charts leave the same room", outcomes)


# ------------------------------------------------------------------------------ long sentences, narrow windows

LONG_SENTENCE = "The quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat."

_X_LABELS_JS = """() => Array.from(
  document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart] svg.marks'))
    .flatMap(svg => {
        const scale = svg.getBoundingClientRect().width / parseFloat(svg.getAttribute('width'));
        return Array.from(svg.querySelectorAll('g.role-axis'))
            .filter(g => (g.getAttribute('aria-label') || '').startsWith('X-axis'))
            .map(axis => {
                const texts = Array.from(axis.querySelectorAll('g.role-axis-label text'));
                const shown = texts.filter(t => parseFloat(t.getAttribute('opacity') || '1') > 0);
                return {count: texts.length, labels: shown.map(t => {
                    const r = t.getBoundingClientRect();
                    const turn = /rotate\\(([-\\d.]+)\\)/.exec(t.getAttribute('transform') || '');
                    return {text: t.textContent, left: r.left, right: r.right, angle: turn ? parseFloat(turn[1]) : 0,
                            font: parseFloat(getComputedStyle(t).fontSize) * scale};
                })};
            });
    })"""
"""Per x axis of every chart on the page: how many labels it has, and the screen box, angle and font size (px on
the screen) of each label the browser shows (one thinned out is drawn transparent)."""


def _labels_running_together(axis: dict) -> list[str]:
    """Neighbouring labels of one axis that touch: upright ones whose boxes meet, turned ones whose lines of text lie
    closer than 0.9 of their font size (slanted labels at a distance of their column × sin of the angle)."""
    labels = sorted(axis["labels"], key=lambda label: label["right"])
    touching = []
    for a, b in zip(labels, labels[1:]):
        turn = math.sin(math.radians(a["angle"]))
        if abs(turn) < 0.01:
            apart = b["left"] - a["right"]
            if apart < 1:
                touching.append(f"{a['text']!r} and {b['text']!r} (upright, {apart:.0f} px apart)")
        elif (b["right"] - a["right"]) * abs(turn) < 0.9 * a["font"]:
            touching.append(f"{a['text']!r} and {b['text']!r} at {a['angle']:.0f}°: lines "
                            f"{(b['right'] - a['right']) * abs(turn):.0f} px apart for {a['font']:.0f}-px text")
    return touching


@needs_browser
@pytest.mark.parametrize("path, width", [
    (f"/multi-head?heads=4&sentence={quote(LONG_SENTENCE)}", 1280),
    (f"/multi-head?heads=4&sentence={quote(LONG_SENTENCE)}", 1024),
    (f"/step-through?step=4&sentence={quote(LONG_SENTENCE)}", 1024),
    (f"/step-through?step=5&sentence={quote(LONG_SENTENCE)}", 1280),
    (f"/step-through?step=7&sentence={quote(LONG_SENTENCE)}", 1280),
    ("/step-through?step=5", 1024),
], ids=["multi-head 1280", "multi-head 1024", "stage 4 1024", "stage 5 1280", "stage 7 1280",
        "stage 5, 7 tokens, 1024"])
def test_key_labels_on_a_slide_stay_apart(read_slide, path, width):
    """Slides of 18 tokens slanted their key labels at −45° in columns too narrow for that, and they ran together
    into one unreadable band (and at 1024 px, stage 5's upright labels of 7 tokens too). Narrow columns turn their
    labels to −90° and the browser leaves out every other one where they would still overlap; at least a third
    stays."""
    page = read_slide(path, {"width": width, "height": 800 if width == 1280 else 768})
    page.wait_for_timeout(300)  # a fitted chart draws again once its container has its width
    axes = page.evaluate(_X_LABELS_JS)
    assert axes, "no chart with an x axis"
    problems = []
    for axis in axes:
        problems += _labels_running_together(axis)
        if len(axis["labels"]) * 3 < axis["count"]:
            problems.append(f"only {len(axis['labels'])} of {axis['count']} labels shown")
    assert not problems, "\n  ".join(problems)


_COLUMNS_AND_LABELS_JS = """() => Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stVegaLiteChart] svg.marks'))
    .map(svg => {
        const cells = svg.querySelector('g.mark-rect.role-mark');
        const middles = cells ? Array.from(cells.querySelectorAll('path'), c => {
            const r = c.getBoundingClientRect(); return Math.round(r.left + r.width / 2); }) : [];
        const axis = Array.from(svg.querySelectorAll('g.role-axis'))
            .find(g => (g.getAttribute('aria-label') || '').startsWith('X-axis'));
        const labels = axis ? Array.from(axis.querySelectorAll('g.role-axis-label text'), t => {
            const r = t.getBoundingClientRect(); return (r.left + r.right) / 2; }) : [];
        return {columns: [...new Set(middles)].sort((a, b) => a - b), labels: labels.sort((a, b) => a - b)};
    }).filter(chart => chart.labels.length && chart.columns.length === chart.labels.length)"""
"""Per chart whose x labels match its columns one to one: the middle of each column of cells and of each label (px)."""


@needs_browser
def test_upright_key_labels_on_a_slide_sit_under_their_columns(slide):
    """A slide picks its labels' angle in the browser; Vega-Lite then gave upright labels no alignment, and each was
    drawn from its column's middle to the right (“1·The” under the gap between the first two columns)."""
    charts = slide("/step-through?step=5").evaluate(_COLUMNS_AND_LABELS_JS)
    assert charts, "no chart with one label per column"
    for chart in charts:
        step = (chart["columns"][-1] - chart["columns"][0]) / max(len(chart["columns"]) - 1, 1)
        off = [round(label - column) for label, column in zip(chart["labels"], chart["columns"])]
        assert all(abs(d) <= step / 5 for d in off), f"labels off their columns by {off} px (a column is {step:.0f})"


_GRID_JS = """() => {
    const chart = document.querySelector('[data-testid=stMain] [data-testid=stVegaLiteChart]');
    const drawn = chart.querySelector('canvas, svg').getBoundingClientRect();
    return {left: drawn.left, top: drawn.top, width: drawn.width, height: drawn.height, right: drawn.right};
}"""


def _picked(page, key: str) -> str:
    return page.locator(f".st-key-{key} input").first.input_value()


@needs_browser
def test_real_model_grid_fits_a_1024_slide_and_a_click_picks_the_head_under_it(slide):
    """On a 1024×768 window the slide's 6 × 12 grid of heads was drawn 1209 px wide and cut at the window's edge.
    It is sized to the main column by Vega (a canvas shrunk by the page's style would take a click for another
    head), so a click on a head still picks that head."""
    page = slide("/real-model", {"width": 1024, "height": 768})
    page.wait_for_timeout(300)  # a fitted chart draws again once its container has its width
    chart = page.locator("[data-testid=stMain] [data-testid=stVegaLiteChart]").first
    chart.scroll_into_view_if_needed()
    column, grid = page.evaluate(_MAIN_COLUMN_JS), page.evaluate(_GRID_JS)
    assert grid["right"] <= column["right"] + TOLERANCE_PX, (grid, column)
    layers, heads = 6, 12
    title_px = 1.5 * (16 + 2) + 8  # the grid's title (charts.fitted_grid_size)
    for layer, head in ((3, 7), (5, 12)):  # counted from 1; a panel lies in the lower part of its row's step
        chart.scroll_into_view_if_needed()
        grid = page.evaluate(_GRID_JS)
        step_x = (grid["width"] - FIT_GRID_LEGEND_PX) / (heads - FIT_GRID_GAP)
        step_y = (grid["height"] - title_px) / layers
        x = grid["left"] + (head - 1 + (1 - FIT_GRID_GAP) / 2) * step_x
        y = grid["top"] + title_px + (layer - 1 + FIT_GRID_ROW_GAP + (1 - FIT_GRID_ROW_GAP) / 2) * step_y
        page.mouse.click(x, y)
        page.wait_for_function("(head) => document.querySelector('.st-key-model_head input').value === head",
                               arg=str(head), timeout=30_000)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        assert (_picked(page, "layer"), _picked(page, "model_head")) == (str(layer), str(head))


@needs_browser
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_real_model_grid_is_on_the_first_screen_of_a_slide(read_slide, size):
    """At 1280 × 800 the slide's 6 × 12 grid of heads began under the model and head pickers and its last three
    layers were below the window. The pickers are under the grid now, and the grid is short enough for the window."""
    page = read_slide("/real-model", {"width": size[0], "height": size[1]})
    page.wait_for_timeout(300)  # a fitted chart draws again once its container has its width
    grid = page.evaluate(_GRID_JS)
    assert grid["top"] > 0 and grid["top"] + grid["height"] <= size[1], (grid, size)
    assert grid["width"] >= 0.6 * size[0], f"the grid is shrunk more than the window needs: {grid}"


@needs_browser
def test_a_charts_hover_box_on_a_slide_is_slide_sized(slide):
    """A lecturer points at a cell to read out its pair and exact value; the box said so in 12-px text."""
    page = slide("/step-through?step=4")
    cell = page.locator("[data-testid=stMain] [data-testid=stVegaLiteChart] svg g.mark-rect.role-mark path").nth(20)
    box = cell.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = page.locator("#vg-tooltip-element.visible")
    tip.wait_for(timeout=10_000)
    assert "query" in tip.inner_text() and "score" in tip.inner_text()
    size = page.evaluate("() => parseFloat(getComputedStyle("
                         "document.querySelector('#vg-tooltip-element td')).fontSize)")
    assert size >= 18, size


def test_multi_head_bars_on_a_slide_print_their_values_level():
    """Section 3's bars on a slide were 48 px wide in two panels that left a third of the slide empty, so their
    values were turned upright (0.289 read sideways from the back of the hall)."""
    for query in ({"presenter": "true"}, {"presenter": "true", "heads": "4"}):
        at = open_page("pages/multi_head.py", query)
        spec = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart")
                    if "the row of" in json.dumps(json.loads(c.proto.spec).get("title", "")))
        angles = re.findall(r'"angle": *(\d+)', json.dumps(spec))
        assert not angles, (query, angles)


@needs_browser
def test_why_scaling_slide_shows_its_first_chart_whole_on_the_first_screen(slide):
    """The slide began with a paragraph and a row of sliders, and the variance chart was cut at its middle."""
    page = slide("/why-scaling")
    chart = page.locator("[data-testid=stMain] [data-testid=stVegaLiteChart]").first.bounding_box()
    assert chart["y"] > 0 and chart["y"] + chart["height"] <= VIEWPORT["height"], chart
    sliders = page.locator("[data-testid=stMain] [data-testid=stSlider]").first.bounding_box()
    assert sliders["y"] > chart["y"] + chart["height"], "the sliders come after the chart on a slide"


def _titles_and_fit(at) -> list[tuple[str, bool]]:
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    return [(json.dumps(spec.get("title", ""), ensure_ascii=False), spec.get("width") == "container")
            for spec in specs]


def test_stage_4_slide_draws_the_asked_for_softmaxes_in_its_place_and_the_scores_below():
    """Switched on in a slide, "Also show the softmax without ÷√d_k" drew its two charts below the first screen of
    1280 × 800, where a lecturer had to scroll for them. They now take the slide's place (sized to the window) and
    the scores before and after ÷√d_k go below; on a page they stay in the order of the stage."""
    query = {"step": "scaled", "unscaled": "true"}
    slide = _titles_and_fit(open_page("pages/step_through.py", {**query, "presenter": "true"}))
    assert [fit for _, fit in slide] == [True, True, False, False], slide
    for (title, _), part in zip(slide, ("without scaling", "with scaling", "before", "after")):
        assert part in title, slide
    page = _titles_and_fit(open_page("pages/step_through.py", query))
    assert not any(fit for _, fit in page), page
    for (title, _), part in zip(page, ("before", "after", "without scaling", "with scaling")):
        assert part in title, page
    plain_slide = _titles_and_fit(open_page("pages/step_through.py", {"step": "scaled", "presenter": "true"}))
    assert len(plain_slide) == 2 and "before" in plain_slide[0][0] and plain_slide[0][1], plain_slide
