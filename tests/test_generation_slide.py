"""Generation on a slide: a lecturer steps through it with a clicker, and what changes at each step is on the first
screen.

AppTest: → and ← press Next token and Back (on the page too); on a slide hidden twins take a clicker's Page Down and
Page Up, and work. On a slide the buttons, the K and V caches, the new query and its weights come before the words,
the formula and the key/value heads picker,

With an 11-token sentence the slide's K and V caches print their numbers (at 12 px or more) and the last step's
cache fits the window: its cells are as wide as the numbers need and no taller than the window leaves them.

In a real browser (skipped without Playwright or Chromium): on a 1280 × 800 slide the clicker's keys move the step,
and at every step the K cache, the V cache, the new query and its weights lie inside the window; with an 11-token
sentence every step's newest row of K and V, numbers included, is inside the window.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

from apptest_support import open_page

try:
    from tests import browser_support as bs
except ImportError:  # pragma: no cover - depends on how pytest set up sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser_support as bs

GENERATION = "pages/generation.py"
STEPS = 7  # "The cat sat on the mat." has 7 tokens
ELEVEN = "The cat sat on the mat and looked at me."  # 11 tokens, as a lecturer's sentence had
MIN_SLIDE_VALUE_PX = 12  # views.MIN_SLIDE_VALUE_PX: the smallest number a hall reads
SLIDE_ROW_PX = 24  # controls.SLIDE_ROW_PX: a slide's smallest row, its text's height


def _shortcuts(at) -> dict[str, str]:
    return {button.key: button.proto.shortcut for button in at.button}


@pytest.mark.parametrize("presenter", [False, True], ids=["page", "slide"])
def test_the_step_buttons_take_the_arrow_keys_and_a_slide_the_clicker_keys(presenter):
    at = open_page(GENERATION, {"presenter": "true"} if presenter else None)
    keys = _shortcuts(at)
    assert keys["generation_next"] == "right" and keys["generation_back"] == "left", keys
    page_keys = {key: shortcut for key, shortcut in keys.items() if shortcut in ("pagedown", "pageup")}
    assert len(page_keys) == (2 if presenter else 0), keys  # a reader's Page Down scrolls the page
    if presenter:
        down = next(key for key, shortcut in page_keys.items() if shortcut == "pagedown")
        up = next(key for key, shortcut in page_keys.items() if shortcut == "pageup")
        at.button(key=down).click().run()
        at.button(key=down).click().run()
        assert at.session_state["generation_step"] == 3
        at.button(key=up).click().run()
        assert at.session_state["generation_step"] == 2


def _order(at) -> list[str]:
    """The main column's text, charts and widgets in the order drawn."""
    out = []

    def walk(node):
        kind = type(node).__name__
        if "vega_lite_chart" in str(getattr(node, "type", "")):
            out.append("chart:" + json.dumps(json.loads(node.proto.spec).get("title", ""), ensure_ascii=False))
        elif kind in ("Selectbox", "Button"):
            out.append(f"{kind}:{node.key}")
        elif kind in ("Markdown", "Latex"):
            out.append(f"{kind}:{node.value[:30]}")
        children = getattr(node, "children", None)
        for child in children.values() if isinstance(children, dict) else []:
            walk(child)

    walk(at.main)
    return out


def test_a_slide_shows_the_step_and_its_charts_before_the_words_and_the_heads_picker():
    at = open_page(GENERATION, {"presenter": "true", "generation_step": "4"})
    order = _order(at)
    first = {name: next(i for i, item in enumerate(order) if want in item) for name, want in (
        ("next", "Button:generation_next"), ("K", "K cache"), ("V", "V cache"), ("q", "new query q_t"),
        ("bars", "Its weights over"), ("words", "A GPT-style model"), ("formula", "Latex:"),
        ("g", "Selectbox:generation_kv_heads"), ("cache rows", "rows made by the cache"))}
    assert first["next"] < first["K"] < first["V"] < first["q"] < first["bars"] < first["words"], order
    assert first["bars"] < first["formula"] and first["bars"] < first["g"] < first["cache rows"], order


def test_the_page_keeps_its_words_and_heads_picker_above_the_step():
    order = _order(open_page(GENERATION))
    assert order.index("Selectbox:generation_kv_heads") < order.index("Button:generation_next") < next(
        i for i, item in enumerate(order) if "K cache" in item), order


def test_a_note_on_the_settings_and_one_on_the_step_open_the_page_together():
    """Both notes went in a box keyed "link_notes": a link with a bad seed and a step past the sentence's end
    stopped the page with StreamlitDuplicateElementKey."""
    at = open_page(GENERATION, {"presenter": "true", "seed": "x", "generation_step": "20"})
    assert not at.exception, [e.value for e in at.exception]
    notes = " ".join(i.value for i in at.info)
    assert "seed" in notes and "generation_step" in notes and at.session_state["generation_step"] == 1


# ------------------------------------------------------------------------------------------ in a browser


needs_browser = pytest.mark.skipif(not bs.browser_available(), reason=bs.NO_BROWSER)
LOAD_MS = 120_000

_CHARTS_JS = """() => Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'))
  .map(c => { const r = (c.querySelector('svg, canvas') || c).getBoundingClientRect();
              const t = c.querySelector('g.role-title text');
              const bars = !!c.closest('.st-key-generation_new_query') && !!c.querySelector('g.mark-rect.role-mark');
              return {title: bars && !t ? 'the new query weights' : (t ? t.textContent : ''), top: r.top,
                      bottom: r.bottom}; })"""


@pytest.fixture(scope="module")
def slide(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(LOAD_MS)
    page = context.new_page()
    page.goto(bs.with_query(server + "/generation", "presenter=true"), wait_until="domcontentloaded",
              timeout=LOAD_MS)
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    bs.wait_for_all_charts(page)
    yield page
    context.close()


def _press(page, key: str, step: int) -> None:
    page.evaluate("() => { if (document.activeElement && document.activeElement !== document.body) "
                  "document.activeElement.blur(); }")
    page.keyboard.press(key)
    page.wait_for_function("s => new URLSearchParams(location.search).get('generation_step') === s", arg=str(step),
                           timeout=30_000)
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    bs.wait_for_all_charts(page)
    page.wait_for_timeout(300)


@needs_browser
def test_clicker_keys_step_through_a_slide_and_each_step_is_on_the_first_screen(slide):
    page = slide
    moves = [("ArrowRight", 2), ("PageDown", 3), *((("ArrowRight", s) for s in range(4, STEPS + 1))),
             ("PageUp", STEPS - 1), ("ArrowLeft", STEPS - 2)]
    for key, step in moves:
        _press(page, key, step)
        assert not page.locator(bs.EXCEPTION).count()
        charts = page.evaluate(_CHARTS_JS)
        for want in ("K cache", "V cache", "new query q_t", "the new query weights"):
            found = [c for c in charts if c["title"].startswith(want)]
            assert found, f"step {step}: no chart titled {want!r}: {[c['title'] for c in charts]}"
            assert found[0]["top"] >= 0 and found[0]["bottom"] <= 800, (
                f"step {step} ({key}): {want!r} is not on the first screen: {found[0]}")


@pytest.mark.parametrize("presenter", [True, False], ids=["slide", "page"])
def test_the_row_each_step_adds_to_the_caches_is_outlined(presenter):
    """On a slide only step 1 outlined a K and V row (the only one); from step 2 no row said which one was new. The
    page said "the bottom row of K and V is new" under caches with no row outlined."""
    for step in (1, 4):
        at = open_page("pages/generation.py", {"presenter": str(presenter).lower(), "generation_step": str(step)})
        specs = {json.dumps(json.loads(c.proto.spec).get("title", ""), ensure_ascii=False): c.proto.spec
                 for c in at.get("vega_lite_chart")}
        for name in ("K cache", "V cache"):
            spec = next(s for title, s in specs.items() if name in title)
            assert f"datum.row_index == {step - 1}" in spec, (step, name)


def _cache_specs(at) -> dict[str, dict]:
    """The K cache's, the V cache's and the new query's specs, by the first word of their titles."""
    specs = {}
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec.get("title", "")
        title = title.get("text", "") if isinstance(title, dict) else str(title)
        for name in ("K cache", "V cache", "new query"):
            if title.startswith(name) and name not in specs:
                specs[name] = spec
    return specs


def _printed_font(spec: dict) -> int | None:
    """The font of the numbers a heatmap prints in its cells, None when it prints none (colours only)."""
    for layer in spec["layer"]:
        mark = layer.get("mark", {})
        if mark.get("type") == "text":
            shown_only_where_masked = any("datum.masked" == t.get("filter") for t in layer.get("transform", []))
            return None if shown_only_where_masked else mark.get("fontSize")
    return None


def test_an_eleven_token_slide_prints_the_caches_numbers_and_its_last_cache_fits_the_window():
    """At 1280 × 800 with 11 tokens the caches' square cells were 53 px (colours only, from step 2) and the rows of
    step 9 on went below the window. Cells now keep the width the numbers need and get the height a 720-px window
    leaves: the same sizes at every step, the numbers at 12 px or more, the last step's 11 rows within the 344 px
    under the slide's top (274 px) and above the feature labels (94 px with the title, and an 8-px margin)."""
    sizes = set()
    for step in (1, 2, 9, 11):
        at = open_page(GENERATION, {"presenter": "true", "sentence": ELEVEN, "generation_step": str(step)})
        specs = _cache_specs(at)
        assert set(specs) == {"K cache", "V cache", "new query"}, list(specs)
        for name, spec in specs.items():
            rows = 1 if name == "new query" else step
            font = _printed_font(spec)
            assert font is not None and font >= MIN_SLIDE_VALUE_PX, (step, name, font)
            assert font * 3.25 <= spec["width"] / 4, (step, name, font, spec["width"])  # "−0.367" fits its cell
            assert spec["height"] % rows == 0, (step, name, spec["height"])
            sizes.add((spec["width"], spec["height"] // rows))
    assert len(sizes) == 1, f"the cells changed size from step to step: {sizes}"
    (width, row), = sizes
    assert 11 * row <= 344 and row >= 24, row  # the last cache fits; a token's label still fits a row


def test_a_narrow_v_beside_a_wide_k_fills_its_column_and_prints_its_numbers():
    """With d_k = 32 and d_v = 4 the slide gave V's four columns the 8-px cells of K's 32: a thin strip, its labels
    printed over one another ("v1234"). A narrower head now fills the column laid out for it."""
    at = open_page(GENERATION, {"presenter": "true", "d_k": "32", "d_v": "4", "heads": "4", "generation_step": "6"})
    specs = _cache_specs(at)
    k_cell, v_cell = specs["K cache"]["width"] / 32, specs["V cache"]["width"] / 4
    assert v_cell >= 4 * k_cell and v_cell >= 40, (k_cell, v_cell)
    font = _printed_font(specs["V cache"])
    assert font is not None and font >= MIN_SLIDE_VALUE_PX, font


WEIGHTS_HEADINGS = ("Its weights over", "Weights of the new query")  # a slide's heading, the page's
THIRTY_TWO = ("The quick brown fox jumps over the lazy dog and then the small cat sat on the warm mat while the old "
              "man read his long book by the fire all night")  # 32 tokens, the most a sentence may have


def _drawn(at) -> list[tuple[str, object]]:
    """The main column's Markdown texts and chart specs, in the order drawn, as ("text", value) or ("chart", spec)."""
    drawn = []

    def walk(node):
        if "vega_lite_chart" in str(getattr(node, "type", "")):
            drawn.append(("chart", json.loads(node.proto.spec)))
        elif type(node).__name__ == "Markdown":
            drawn.append(("text", node.value))
        children = getattr(node, "children", None)
        for child in children.values() if isinstance(children, dict) else []:
            walk(child)

    walk(at.main)
    return drawn


def _weights_spec(at) -> dict:
    """The spec of the chart under "Its weights over the … cached keys" on a slide, or "Weights of the new query …"
    on the page (the new query's weights)."""
    drawn = _drawn(at)
    heading = next(i for i, (kind, value) in enumerate(drawn)
                   if kind == "text" and any(words in value for words in WEIGHTS_HEADINGS))
    return next(value for kind, value in drawn[heading:] if kind == "chart")


def _number_fonts(spec: dict) -> list[int]:
    """The fonts, in pixels, of the text a chart prints among its marks (values in cells or at bars' ends)."""
    layers = spec.get("layer", []) or spec.get("spec", {}).get("layer", [])
    return [layer["mark"]["fontSize"] for layer in layers
            if layer.get("mark", {}).get("type") == "text" and isinstance(layer["mark"].get("fontSize"), int)]


@pytest.mark.parametrize("presenter", [False, True], ids=["page", "slide"])
@pytest.mark.parametrize(("sentence", "steps"), [(None, (1, 4, 7)), (ELEVEN, (1, 6, 11)), (THIRTY_TWO, (1, 32))],
                         ids=["7 tokens", "11 tokens", "32 tokens"])
def test_the_weights_lie_across_with_level_values_at_the_labels_font_on_the_page_and_a_slide(presenter, sentence,
                                                                                               steps):
    """The new query's weights changed direction: upright bars on the page, on a slide bars lying across for 7
    tokens and upright ones for 11, whose values were then turned on their side at a smaller font and whose keys'
    names slanted (on a slide from 6 keys on). They lie across everywhere now, for 1 to 32 keys: a key's name level
    on each row, its value level at the bar's end at the labels' font (no smaller than any number the page's other
    charts print), in rows at least that text tall whose height is the sentence's (each step adds a row, as to the
    caches)."""
    heights = set()
    for step in steps:
        params = {"generation_step": str(step), **({"presenter": "true"} if presenter else {}),
                  **({"sentence": sentence} if sentence else {})}
        at = open_page(GENERATION, params)
        spec = _weights_spec(at)
        bar = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "bar")
        keys = bar["encoding"]["y"]
        assert keys["field"] == "key" and len(keys["scale"]["domain"]) == step, (step, bar["encoding"])
        assert keys["axis"]["labelAngle"] == 0, keys["axis"]
        label_font = keys["axis"]["labelFontSize"]
        values = [layer["mark"] for layer in spec["layer"] if layer["mark"]["type"] == "text"]
        assert values and all("angle" not in mark for mark in values), values
        others = [font for kind, other in _drawn(at) if kind == "chart" and other != spec
                  for font in _number_fonts(other)]
        assert all(mark["fontSize"] >= max([label_font, *others]) for mark in values), (step, values, others)
        assert spec["height"]["step"] >= label_font + 4, spec["height"]  # a row holds its text
        heights.add(spec["height"]["step"])
    assert len(heights) == 1, f"the rows changed height from step to step: {heights}"


_CACHE_NUMBERS_JS = """() => Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'))
  .map(c => { const t = c.querySelector('g.role-title text');
              const numbers = Array.from(c.querySelectorAll('g.mark-text.role-mark text'))
                .filter(x => x.textContent.trim()).map(x => { const r = x.getBoundingClientRect();
                  return {bottom: r.bottom, height: r.height, font: parseFloat(getComputedStyle(x).fontSize)}; });
              return {title: t ? t.textContent : '', numbers}; })
  .filter(c => c.title.startsWith('K cache') || c.title.startsWith('V cache'))"""


@needs_browser
def test_every_step_of_an_eleven_token_slide_shows_the_newest_rows_numbers_in_the_window(server, slide):
    """Step by step with the clicker's →: the K and V caches print all t × 4 numbers of step t at 12 px or more,
    and the lowest of them (the newest row's) lies inside the 800-px window."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = slide
    page.goto(bs.with_query(server + "/generation", urlencode({"presenter": "true", "sentence": ELEVEN})),
              wait_until="domcontentloaded", timeout=LOAD_MS)
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    for step in range(1, 12):
        if step > 1:  # the clicker's →, as _press gives it, without its pauses: the numbers drawn are awaited below
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            page.keyboard.press("ArrowRight")
        try:
            page.wait_for_function(f"() => {{ const c = ({_CACHE_NUMBERS_JS})(); return c.length == 2 && "
                                   f"c.every(x => x.numbers.length == {4 * step}); }}", timeout=30_000)
        except PlaywrightTimeout:
            shown = {c["title"]: len(c["numbers"]) for c in page.evaluate(_CACHE_NUMBERS_JS)}
            raise AssertionError(f"step {step}: the caches print {shown} numbers, not {4 * step} each") from None
        for cache in page.evaluate(_CACHE_NUMBERS_JS):
            numbers = cache["numbers"]
            assert min(n["font"] for n in numbers) >= MIN_SLIDE_VALUE_PX, f"step {step}: {cache['title']}"
            assert max(n["bottom"] for n in numbers) <= 800, f"step {step}: {cache['title']}'s newest row is below"
    assert not page.locator(bs.EXCEPTION).count()


@needs_browser
@pytest.mark.parametrize("window", [(1280, 720), (1280, 800), (1920, 1080)], ids=lambda w: f"{w[0]}x{w[1]}")
def test_the_last_step_of_an_eleven_token_slide_fits_the_window_under_a_link_note(server, browser, window):
    """A link note above the slide (here for a bad seed) pushed it down 75 px, and the caches' rows were sized for
    an 800-px window: at 1280 × 800 the last rows of the last step, at 1280 × 720 also without a note, lay below
    the window until the next click. The newest row's numbers, the feature labels under the caches and the new
    query are all inside the window; at 1920 × 1080 the charts are drawn 1.5 times as large (at 12-16 px
    numbers, laid out for 1280 × 720, were small on a large screen). The new query's weights start on the first
    screen, with room for their first rows: their rows are never thinner than the slide's text, so under the note
    the last of 11 may lie below a 720- or 800-px window (as a longer sentence's cache rows do)."""
    width, height = window
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(bs.with_query(server + "/generation", urlencode(
            {"presenter": "true", "sentence": ELEVEN, "generation_step": "11", "seed": "x"})),
            wait_until="domcontentloaded", timeout=LOAD_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        page.wait_for_function(f"() => {{ const c = ({_CACHE_NUMBERS_JS})(); return c.length == 2 && "
                               "c.every(x => x.numbers.length == 44); }", timeout=30_000)
        bs.wait_for_all_charts(page)
        assert "seed" in page.locator(".st-key-link_notes").inner_text()
        zoom = 1.5 if width >= 1920 else 1.0  # a 1920 × 1080 slide draws the charts laid out for 1280 × 720 larger
        for cache in page.evaluate(_CACHE_NUMBERS_JS):
            assert max(n["bottom"] for n in cache["numbers"]) <= height, f"{cache['title']}'s last row is below"
            drawn = min(n["height"] / n["font"] for n in cache["numbers"])  # a glyph box is ~1.06 of its font
            assert zoom <= drawn <= 1.2 * zoom, f"{cache['title']}'s numbers drawn {drawn:.2f}× their font, not {zoom}×"
        charts = page.evaluate(_CHARTS_JS)
        for want in ("K cache", "V cache", "new query q_t"):
            chart = next(c for c in charts if c["title"].startswith(want))
            assert chart["bottom"] <= height, f"{want!r} reaches below the {height}-px window: {chart}"
        weights = next(c for c in charts if c["title"] == "the new query weights")
        assert weights["top"] + 3 * SLIDE_ROW_PX * zoom <= height, f"the weights start below the window: {weights}"
    finally:
        context.close()
