"""The numbers in a slide's cells grow with the window they are shown in (``?presenter=true``, in Chromium).

A slide's charts stretch to the window, but their numbers were sized for a 1280-px window: on a 1920 × 1080
projector an 11-token sentence's weights printed 13-px numbers in 67-px cells, and its scores, masked scores and
Q, K, V (whose cells are too narrow for numbers at 1280 px) printed none in cells 68–92 px wide; then they stopped
at 16 px, the smallest text of the slide, in cells of 247 × 84 px. Now the browser prints them as large as the
cells it draws hold, up to a little more than the slide's 20-px labels; at 1280 × 800 nothing shrinks. Each number
must stay inside its cell at both sizes.
"""

from __future__ import annotations

import contextlib
import json

import pytest

import browser_support as bs
from apptest_support import open_page, spec_titles
from test_presenter_layout import needs_browser

from attention_ui import charts
from attention_ui.views import PRESENTER_FONT, SLIDE_CELL

SENTENCE = "The+animal+did+not+cross+the+street+because+it+was+tired"  # 11 tokens
SLIDE_VALUE_PX = charts.cell_value_font(SLIDE_CELL, PRESENTER_FONT, diverging=True, fit=True)  # 16
LOAD_MS = 120_000  # a first run imports torch


# stage -> its charts whose numbers print at the slide's label size or more at 1920 × 1080 (16 px before); at
# 1280 × 800 the weights A beside the context, which name their rows once, print at 16 px or more (13 before)
WIDE = {"qkv": ["Q —", "K —", "V —"], "scaled": ["before:", "after:"], "masked": ["scores, −∞"],
        "context": ["weights A", "context ="]}
AT_1280 = {"weights A": SLIDE_VALUE_PX, "context =": SLIDE_VALUE_PX}


def _problems(page, where: str, least: dict[str, float]) -> list[str]:
    """What is wrong with the numbers of the slide shown in ``page``: a chart whose title starts with a key of
    ``least`` prints none or smaller ones than its value; any chart's number lies out of its cell."""
    drawn = None
    for _ in range(20):  # a chart stretched to a new width draws again: read it once it has stopped changing
        page.wait_for_timeout(300)
        drawn, before = page.evaluate(_CELL_TEXT_JS, False), drawn
        if drawn == before:
            break
    problems = []
    for start, px in least.items():
        chart = next((c for c in drawn if c["title"].startswith(start)), None)
        if chart is None or not chart["px"]:
            problems.append(f"{where}: no numbers in {start!r} ({[c['title'] for c in drawn]})")
        elif min(chart["px"]) < px - 0.5:
            problems.append(f"{where}: {start!r} prints {min(chart['px']):.1f} px, not {px}")
    return problems + [f"{where}: {c['title']!r} has numbers out of their cells: {c['outside'][:3]}"
                       for c in drawn if c["outside"]]


@contextlib.contextmanager
def _slide(browser, url: str, width: int, height: int):
    """A new browser window of ``width`` × ``height`` on the slide at ``url``, once its charts are drawn."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url, wait_until="domcontentloaded", timeout=LOAD_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        bs.wait_for_all_charts(page, timeout=15_000)
        yield page
    finally:
        context.close()


def _step_on(page, stage: str, moves: int) -> None:
    """Press → ``moves`` times; the slide is then at ``stage``."""
    for _ in range(moves):
        bs.press_key(page, "ArrowRight")
    assert bs.stage_in_url(page) == stage, (bs.stage_in_url(page), stage)


@pytest.mark.browser
@needs_browser
def test_a_slides_numbers_grow_with_the_window_and_stay_in_their_cells(server, browser):
    """Stages 2 (Q, K, V), 4 (scaling), 5 (masking) and 7 (weights and context) at 1920 × 1080, moved through with
    the → key; then stage 7 in a window made 1280 × 800."""
    problems = []
    with _slide(browser, f"{server}/step-through?step=qkv&sentence={SENTENCE}&heads=4&presenter=true",
                1920, 1080) as page:
        for stage, moves in (("qkv", 0), ("scaled", 2), ("masked", 1), ("context", 2)):
            _step_on(page, stage, moves)
            problems += _problems(page, f"1920 px, {stage}", {title: PRESENTER_FONT for title in WIDE[stage]})
        page.set_viewport_size({"width": 1280, "height": 800})
        problems += _problems(page, "1280 px, context", AT_1280)
    assert not problems, "\n".join(problems)


_CELL_TEXT_JS = """(digitsOnly) => Array.from(
    document.querySelectorAll("[data-testid='stMain'] [data-testid='stVegaLiteChart'] svg.marks"), svg => {
        const title = Array.from(svg.querySelectorAll('.role-title-text'), e => e.textContent).join(' ');
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        const cells = Array.from(svg.querySelectorAll('g.mark-rect.role-mark path'), p => p.getBoundingClientRect())
            .filter(r => r.width > 2 && r.height > 2);
        const numbers = Array.from(svg.querySelectorAll('g.mark-text.role-mark text'))
            .filter(t => (digitsOnly ? /[0-9]/.test(t.textContent) : t.textContent.trim())
                         && t.getBoundingClientRect().width > 0);
        const outside = numbers.filter(t => {
            const b = t.getBoundingClientRect(), x = (b.left + b.right) / 2, y = (b.top + b.bottom) / 2;
            const cell = cells.find(r => r.left <= x && x <= r.right && r.top <= y && y <= r.bottom);
            return !cell || b.left < cell.left - 0.5 || b.right > cell.right + 0.5 || b.top < cell.top - 0.5
                || b.bottom > cell.bottom + 0.5;
        }).map(t => t.textContent);
        const tops = cells.map(r => r.top), bottoms = cells.map(r => r.bottom);
        return {title, px: numbers.map(t => parseFloat(getComputedStyle(t).fontSize) * scale), outside,
                top: Math.min(...tops), bottom: Math.max(...bottoms), cell: Math.min(...cells.map(r => r.width))};
    })"""
"""Per chart: its title, the drawn size in px of each text in its cells (with ``digitsOnly``, of each number: a
blocked cell's "×" or "−∞" left out), the texts whose box is not inside the cell under its middle, where its cells
start and end (px from the window's top) and its narrowest cell's width."""

# stage -> the charts (their titles' start) shown side by side on its slide
SIDE_BY_SIDE = {"qkv": ("Q —", "K —", "V —"), "scaled": ("before:", "after:"),
                "masked": ("mask (✓", "scores, −∞"), "concat": ("Concat",)}


def _read_slide(page, where: str, titles: tuple[str, ...], least_px: float) -> list[str]:
    """What is wrong with the charts titled like ``titles`` in ``page``: one prints no numbers (a mask's ✓ aside) or
    some under ``least_px``, or out of their cells; the charts' cells do not start and end level."""
    page.wait_for_timeout(300)
    drawn = page.evaluate(_CELL_TEXT_JS, True)
    charts_shown = [next((c for c in drawn if c["title"].startswith(t)), None) for t in titles]
    if None in charts_shown:
        return [f"{where}: missing charts {titles} in {[c['title'] for c in drawn]}"]
    problems = []
    for title, chart in zip(titles, charts_shown):
        if title.startswith(("mask", "window w")):  # a mask's ✓ and ×
            continue
        if not chart["px"]:
            problems.append(f"{where}: {title!r} prints no numbers (cells {chart['cell']:.0f} px)")
        elif min(chart["px"]) < least_px - 0.5:
            problems.append(f"{where}: {title!r} prints {min(chart['px']):.1f}-px numbers, under {least_px}")
        if chart["outside"]:
            problems.append(f"{where}: {title!r} has numbers out of their cells: {chart['outside'][:3]}")
    for edge in ("top", "bottom"):
        if max(c[edge] for c in charts_shown) - min(c[edge] for c in charts_shown) > 1.5:
            problems.append(f"{where}: rows not level ({edge}: {[round(c[edge]) for c in charts_shown]})")
    return problems


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("size", [(1920, 1080), (1280, 800)])
def test_a_slides_numbers_in_large_cells_are_not_its_smallest_text(server, browser, size):
    """The default sentence's raw scores (stage 3) in cells of 247 × 84 px at 1920 × 1080 printed 16-px numbers
    beside 20-px axis labels and 22-px words: the values the lecture is about were the smallest text on the slide.
    They now grow with their cells to a little more than the labels (24 px), inside their cells."""
    width, height = size
    with _slide(browser, f"{server}/step-through?step=scores&presenter=true", width, height) as page:
        problems = _problems(page, f"{width} px, scores", {"QKᵀ": PRESENTER_FONT + 4})
    assert not problems, "\n".join(problems)


@pytest.mark.browser
@needs_browser
def test_side_by_side_slides_print_their_numbers_at_1280_with_11_tokens(server, browser):
    """At 1280 × 800 an 11-token sentence's Q, K, V (stage 2), scores before and after ÷√d_k (4), scores beside the
    mask (5) and 4 heads' concat (8, 16 columns) printed no numbers: side by side, each chart with its own row labels
    and colour bar, their cells were 38–42 px wide, and the concat's more than 12 columns never printed any. Now
    they print them at the slide's smallest size or more, inside their cells, the charts' rows level; the slide still
    fits the window (no scrolling to its charts)."""
    from attention_ui.views import MIN_SLIDE_VALUE_PX

    problems = []
    with _slide(browser, f"{server}/step-through?step=qkv&sentence={SENTENCE}&heads=4&mask=causal&presenter=true",
                1280, 800) as page:
        for stage, moves in (("qkv", 0), ("scaled", 2), ("masked", 1), ("concat", 3)):
            _step_on(page, stage, moves)
            problems += _read_slide(page, f"1280 px, {stage}", SIDE_BY_SIDE[stage], MIN_SLIDE_VALUE_PX)
            bottom = page.evaluate("() => Math.max(...Array.from(document.querySelectorAll("
                                   "\".st-key-slide [data-testid='stVegaLiteChart']\"), c => "
                                   "c.getBoundingClientRect().bottom))")
            if bottom > 800:
                problems.append(f"1280 px, {stage}: the charts end at {bottom:.0f} px, below the window")
    assert not problems, "\n".join(problems)


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("size", [(1024, 768), (1280, 800), (1920, 1080)])
def test_the_masking_slide_prints_its_weights_to_fit_the_window(server, browser, size):
    """The Masking page's slide drew its masks and weights at a size fixed for a 1280-px window: an 11-token
    sentence's weights printed no numbers under no mask (34-px cells), 12 px under the padding mask at 1280 and at
    1920 px alike, and 9.7 px at 1024 px. Now each mask sits beside its weights in narrower cells, and the weights
    print their numbers as large as the cells the browser draws hold, rows level with the mask's."""
    from attention_ui.views import MIN_SLIDE_VALUE_PX

    width, height = size
    problems = []
    with _slide(browser, f"{server}/masks?sentence={SENTENCE}&mask=causal&presenter=true", width, height) as page:
        least = MIN_SLIDE_VALUE_PX if width < 1280 else SLIDE_VALUE_PX
        for kind in ("none", "causal", "padding"):
            problems += _read_slide(page, f"{width} px, {kind}", (f"mask: {kind}", f"weights with {kind} mask"),
                                    least)
    assert not problems, "\n".join(problems)


# page, the section heading brought up first (None: its first screen; "": the charts' own top, as a clicker's press
# after the section's words does), its charts' titles, their container, the least font of their numbers at 1280 px
SIGNED_SLIDE_VALUE_PX = 13  # "−0.390" in an 11-token pair's cells at 1280 px: 13-14 px (they were 12 px)
WEIGHTS_SLIDES = {"why-scaling": ("3 ·", ("softmax(QKᵀ): no", "softmax(QKᵀ / √d_k)"), "why_pair", SLIDE_VALUE_PX),
                  "cross-attention": (None, ("self-attention: 11 × 11", "cross-attention: 11 × 8"), "cross_pair",
                                      SLIDE_VALUE_PX),
                  "overview": (None, ("attention weights (head 1)",), "overview_live", SLIDE_VALUE_PX),
                  "order-and-position": ("", ("RoPE scores", "positions 100"), "rope_scores",
                                         SIGNED_SLIDE_VALUE_PX),
                  "modern-attention": ("3 ·", ("window w = 3", "weights of head 1"), "window_pair", SLIDE_VALUE_PX)}


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
@pytest.mark.parametrize("path", list(WEIGHTS_SLIDES))
def test_weights_on_a_page_slide_print_slide_sized_numbers(server, browser, path, size):
    """Why √d_k's section 3 (the weights without and with ÷√d_k) and Cross-attention's first screen (the
    sentence's self-attention, 11 × 11, beside its cross-attention to the source, 11 × 8) drew their two charts
    at the page's size on a slide, each with its own row labels and colour bar: an 11-token sentence's numbers
    printed at 12 px at 1280 px and at 1920 px alike. Now each pair shares one set of row labels and one colour bar
    in cells of one width, prints its numbers as large as those cells hold with rows level, and fits the screen
    with its heading and words. Overview's live chart, the first a class sees, printed 12 px in half the width
    beside the words: it now takes more of the width and the window's height. So do Order and position's RoPE
    scores (12 px, each grid with its own row labels and colour bar), which fill the screen a press brings up, and
    Shared keys and windows' sliding window beside its weights (13 px in a third of the slide each)."""
    heading, titles, key, least = WEIGHTS_SLIDES[path]
    width, height = size
    with _slide(browser, f"{server}/{path}?sentence={SENTENCE}&presenter=true", width, height) as page:
        if heading == "":
            page.evaluate("""(key) => { const main = document.querySelector("[data-testid='stMain']");
                const top = document.querySelector(`.st-key-${key}`).getBoundingClientRect().top;
                main.scrollBy(0, top - main.getBoundingClientRect().top - 64); }""", key)
        elif heading is not None:
            page.evaluate("""(start) => { const main = document.querySelector("[data-testid='stMain']");
                const heading = [...main.querySelectorAll('h3')].find(h => h.innerText.startsWith(start));
                main.scrollBy(0, heading.getBoundingClientRect().top - main.getBoundingClientRect().top - 64); }""",
                          heading)
        problems = _read_slide(page, f"{width} px", titles, least if width < 1920 else SLIDE_VALUE_PX)
        bottom = page.evaluate("(key) => Math.max(...Array.from(document.querySelectorAll("
                               "`.st-key-${key} [data-testid='stVegaLiteChart']`), c => "
                               "c.getBoundingClientRect().bottom))", key)
    if bottom > height:
        problems.append(f"{width} px: the charts end at {bottom:.0f} px, below the window")
    assert not problems, "\n".join(problems)


def _slide_specs(step: str) -> dict[str, dict]:
    """The slide's charts at ``step`` for the 11-token sentence and 4 heads, by title."""
    at = open_page("pages/step_through.py", {"presenter": "true", "step": step, "heads": "4", "mask": "causal",
                                             "sentence": SENTENCE.replace("+", " ")})
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    return {spec_titles(spec)[0]: spec for spec in specs if spec.get("width") == "container"}


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def _prints_numbers(spec: dict) -> bool:
    """Whether a heatmap's text layer prints its numbers (not kept to the blocked cells' marks)."""
    return any(isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"
               and {"filter": "datum.masked"} not in layer.get("transform", []) for layer in _layers(spec))


def _has_row_labels(spec: dict) -> bool:
    return any("y" in layer.get("encoding", {}) and layer["encoding"]["y"].get("axis", {}) is not None
               for layer in _layers(spec))  # (a layer without a y encoding, such as a line of text, has no rows)


def _has_colour_bar(spec: dict) -> bool:
    return any("scale" in layer.get("encoding", {}).get("color", {})
               and layer["encoding"]["color"].get("legend", {}) is not None for layer in _layers(spec))


@pytest.mark.parametrize("step, names", [("qkv", ("Q", "K", "V")), ("scaled", ("before", "after")),
                                         ("masked", ("mask", "scores")), ("concat", ("Concat",))])
def test_a_slides_charts_side_by_side_name_their_rows_once_and_print_numbers(step, names):
    """Charts side by side on a slide draw one set of row labels (the left one's) and one colour bar (the right
    one's), so their cells take the slide's width, and print their numbers (the browser fits them to the cells);
    the concat of 4 heads' 16 columns prints them too (it stopped at 12 columns)."""
    specs = _slide_specs(step)
    shown = [next(spec for title, spec in specs.items() if title.startswith(name)) for name in names]
    assert [_has_row_labels(spec) for spec in shown] == [True] + [False] * (len(shown) - 1)
    assert [_has_colour_bar(spec) for spec in shown][-1] and not any(_has_colour_bar(s) for s in shown[:-1])
    assert all(_prints_numbers(spec) for spec in shown if not spec_titles(spec)[0].startswith("mask")), step


def test_the_weights_and_the_context_on_a_slide_each_keep_their_colour_bar():
    """The weights A and the context C have scales of their own (0..1 and signed features): side by side on a slide
    they name their rows once (beside A) but each keeps its colour bar, in columns of one cell width."""
    specs = _slide_specs("context")
    weights, context = (next(spec for title, spec in specs.items() if title.startswith(name))
                        for name in ("weights A", "context"))
    assert [_has_row_labels(weights), _has_row_labels(context)] == [True, False]
    assert _has_colour_bar(weights) and _has_colour_bar(context)
    assert all("slide_column" in spec.get("usermeta", {}) for spec in (weights, context))


_DRAWN_NUMBERS_JS = """() => Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'))
  .map(c => { const t = c.querySelector('g.role-title text'); const box = c.getBoundingClientRect();
              const heights = Array.from(c.querySelectorAll('g.mark-text.role-mark text'))
                .filter(x => x.textContent.trim()).map(x => x.getBoundingClientRect().height);
              return {title: t ? t.textContent : '', right: box.right, tallest: Math.max(0, ...heights)}; })"""


@pytest.mark.browser
@needs_browser
def test_order_and_positions_slide_draws_its_grids_larger_on_a_large_screen(server, browser):
    """Order and position's slide lays its grids out in pixels for a 1280-px window: at 1920 × 1080 their 16-px
    numbers filled two thirds of the screen. From 1920 px on they are drawn 1.5 times as large, still inside it.
    (RoPE's scores stretch to the window: at 1280 px a 7-token sentence's print at the slide's largest size already,
    and they stay so.)"""
    drawn = {}
    for width, height in ((1280, 800), (1920, 1080)):
        with _slide(browser, f"{server}/order-and-position?presenter=true", width, height) as page:
            charts_drawn = page.evaluate(_DRAWN_NUMBERS_JS)
            for chart in charts_drawn:
                assert chart["right"] <= width, f"{width} px: {chart['title']!r} ends at {chart['right']:.0f} px"
            drawn[width] = {c["title"]: c["tallest"] for c in charts_drawn if c["tallest"]}
    grids = [t for t in drawn[1280] if t.startswith(("output for", "RoPE scores", "positions "))]
    assert len(grids) == 4, drawn[1280]
    for title in grids:
        grows = 1.0 if title.startswith(("RoPE scores", "positions ")) else 1.4
        assert drawn[1920][title] >= grows * drawn[1280][title], (title, drawn[1280][title], drawn[1920][title])


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("query, printed", [("", True),
                                            ("&heads=4&sentence=The+professor+wrote+the+formula+and+the+students"
                                             "+copied+it", False),
                                            (f"&sentence={SENTENCE}", True)],
                         ids=["2 heads, 7 tokens", "4 heads, 10 tokens", "2 heads, 11 tokens"])
def test_multi_heads_grids_print_readable_numbers_or_none(server, shared_pages, query, printed):
    """4 heads of a 10-token sentence printed their 400 weights at 8.6 px on a slide: the grid, sized to 36-px cells,
    is wider than the slide and the browser shrank it, numbers and all, below the 12 px a slide promises. A grid's
    numbers are now sized for the cells it is drawn with: 12 px or more, or none and a line that says to hover.
    2 heads of an 11-token sentence showed colours only in 32-px squares, in two thirds of the slide's width: their
    cells are now as wide as the slide allows (their height is the screen's) and print their numbers."""
    from attention_ui.views import MIN_SLIDE_VALUE_PX

    page = shared_pages.show(f"{server}/multi-head?presenter=true{query}", {"width": 1280, "height": 800})
    page.wait_for_timeout(300)
    drawn = page.evaluate(_CELL_TEXT_JS, True)
    captions = page.locator("[data-testid='stMain'] [data-testid='stCaptionContainer']").all_inner_texts()
    grids = [drawn[0]] + [c for c in drawn if "Q of each head" in c["title"]]
    assert len(grids) == 2, [c["title"] for c in drawn]
    for grid in grids:
        assert not grid["px"] or min(grid["px"]) >= MIN_SLIDE_VALUE_PX - 0.5, (grid["title"], min(grid["px"]))
    assert bool(drawn[0]["px"]) == printed, len(drawn[0]["px"])
    assert any("hover a cell for its weight" in c for c in captions) != printed, captions


def test_multi_heads_q_grid_on_a_slide_prints_slide_sized_numbers():
    """Section 2's Q of each head: 2 heads of an 11-token sentence drew 52-px squares in 60 % of the slide, their
    signed numbers at 15 px; the cells are now as wide as the slide allows (up to twice their height)."""
    at = open_page("pages/multi_head.py", {"presenter": "true", "sentence": SENTENCE.replace("+", " ")})
    grid = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart")
                if "Q of each head" in json.dumps(json.loads(c.proto.spec).get("title")))
    panel = grid["spec"]
    fonts = [layer["mark"]["fontSize"] for layer in panel["layer"]
             if isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"]
    assert panel["width"] / 4 > panel["height"] / 11, (panel["width"], panel["height"])  # wider than tall
    assert fonts and min(fonts) >= PRESENTER_FONT, fonts


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("path, key", [("overview", "overview_live"), ("cross-attention", "cross_pair")])
def test_a_first_screens_charts_fit_the_window_under_a_links_note(server, browser, path, key):
    """A link with a value it cannot use opens with a note at the top of the page: on Overview's slide the live
    chart then ran 80 px below the window, its key labels cut off. A first screen's charts leave the note its room."""
    url = f"{server}/{path}?sentence={SENTENCE}&presenter=true&step=zzz"
    with _slide(browser, url, 1280, 800) as page:
        assert page.locator(".st-key-link_notes").count(), "the link's note is shown"
        bottom = page.evaluate("(key) => Math.max(...Array.from(document.querySelectorAll("
                               "`.st-key-${key} [data-testid='stVegaLiteChart']`), c => "
                               "c.getBoundingClientRect().bottom))", key)
    assert bottom <= 800, f"the charts end at {bottom:.0f} px, below the window"


_SECTION_CHARTS_JS = """() => Array.from(document.querySelectorAll("[class*='st-key-section_']"), (section) => {
    const chart = section.querySelector("[data-testid='stVegaLiteChart']").getBoundingClientRect();
    const heading = [...document.querySelectorAll("[data-testid='stMain'] h3")]
        .filter((h) => h.getBoundingClientRect().top < chart.top).pop().getBoundingClientRect();
    return {width: chart.width, tall: chart.bottom - heading.top}; })"""
"""Each slide section's chart: its width, and how far its section's heading is from the chart's foot."""


@pytest.mark.browser
@needs_browser
def test_multi_heads_concat_and_w_o_sections_fill_the_slide_under_their_heading(server, shared_pages):
    """Sections 4 and 5 drew Concat and the output at a page's size, 600 of a 1280-px slide's 1230 px with 17-px
    numbers, where the step-through's slides of the same stages fill the width. Each now spans the slide and fits, with
    its heading, words and formula, in the window under the menu bar. (Multi-head's slide, only read, is the one the
    grids' check above reads.)"""
    page = shared_pages.show(f"{server}/multi-head?presenter=true", {"width": 1280, "height": 800})
    page.wait_for_timeout(300)
    sections = page.evaluate(_SECTION_CHARTS_JS)
    main = page.evaluate(f"() => document.querySelector({bs.MAIN!r}).clientWidth")
    assert len(sections) == 2, sections
    for section in sections:
        assert section["width"] >= 0.85 * (main - 48), (section, main)
        assert section["tall"] <= 800 - 60, section
