"""What a lecturer at a projector noticed on the slides (``?presenter=true``), and a chart toolbar on the pages.

Through AppTest (what the page sends):
- Sections read 1, 2, 3… in the order shown. The Real model and Generation slides started at "2 ·" (section 1's
  heading is left out on a slide) and the Cross-attention slide, which shows its sections in the opposite order,
  had no numbers while its page had them.
- Order and position printed its output and RoPE grids' numbers at 13–14 px on a slide, where the other slides
  print 16 px.
- What it costs: on a slide the last T label, "2048", was drawn flush with the plot's end and all but touched
  "1024".

In a real browser (skipped without Playwright or Chromium):
- At 1024×768 (a common projector) a slide of 11 tokens printed its numbers at 9 px (a style set the size for the
  window width, whatever the cells): now each chart prints them to fit the cells it draws, 12 px at least, or shows
  colours only (the values stay in the tooltips).
- On a page, the toolbar Streamlit shows over a chart on hover lay over the last line of the text above the chart.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from apptest_support import open_page, spec_titles
from test_presenter_layout import needs_browser, read_slide, server, slide

from attention_ui.views import MIN_SLIDE_VALUE_PX, PRESENTER_FONT, SLIDE_CELL
from attention_ui import charts

# the presenter-layout tests' app server, ``slide(path)`` and ``read_slide(path)`` (Chromium: conftest)
SHARED_FIXTURES = (server, slide, read_slide)

SLIDE = {"presenter": "true"}
SLIDE_VALUE_PX = charts.cell_value_font(SLIDE_CELL, PRESENTER_FONT, diverging=True, fit=True)  # 16
ELEVEN_TOKENS = "The quick brown fox jumps over the lazy dog again ."
TWELVE_TOKENS = "The quick brown fox jumps over the lazy dog again today ."
PROJECTOR = {"width": 1024, "height": 768}
READABLE_PX = 12  # the smallest number read from the back of a hall


def _specs(at) -> dict[str, dict]:
    """Every chart's spec under its title."""
    found = {}
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        found.setdefault(spec_titles(spec)[0], spec)
    return found


def _spec(at, title_part: str) -> dict:
    specs = _specs(at)
    title = next((t for t in specs if title_part in t), None)
    assert title is not None, f"no chart titled like {title_part!r}: {list(specs)}"
    return specs[title]


# ------------------------------------------------------------------------------------------ 1, 2, 3…


def _section_numbers(at) -> list[int]:
    """The numbers of the sections in the order the page shows them: its numbered headings, and on Generation's
    slide the step's line that stands for section 1's heading."""
    lines = [p.proto.text for p in at.get("progress")] + [s.value for s in at.subheader]
    return [int(m.group(1)) for line in lines if (m := re.match(r"(\d+) · ", line))]


@pytest.mark.parametrize("query", [{}, SLIDE], ids=["page", "slide"])
@pytest.mark.parametrize("page", ["pages/real_model.py", "pages/generation.py", "pages/cross_attention.py"])
def test_sections_read_1_2_3_in_the_order_shown(page, query):
    at = open_page(page, query)
    if page == "pages/real_model.py" and not any("up close" in s.value for s in at.subheader):
        pytest.skip("no real model is available here")
    numbers = _section_numbers(at)
    assert len(numbers) >= 3 and numbers == list(range(1, len(numbers) + 1)), numbers


def test_the_cross_attention_slide_numbers_its_weights_first():
    at = open_page("pages/cross_attention.py", SLIDE)
    headings = [s.value for s in at.subheader]
    assert headings[0].startswith("1 · Cross-attention weights"), headings
    assert headings[-1].startswith("3 · Where each attention sits"), headings
    # the weights' keys come from the source sentence, whose box is in section 2 further down: the slide names it
    said = [m.value for m in at.markdown if "keys and values from the source" in m.value]
    assert said == ["Queries from your sentence; keys and values from the source “Le chat s'est assis sur le tapis\\.” "
                    "(section 2 below changes it)."], said
    assert [s.value for s in at.subheader].index(next(h for h in headings if h.startswith("2 · Two sentences"))) == 1


# -------------------------------------------------------------------------------- Order and position


def _value_fonts(spec: dict) -> list[float]:
    """The font sizes of a heatmap's printed values (its text layers)."""
    return [layer["mark"]["fontSize"] for layer in spec.get("layer", [spec])
            if isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"]


@pytest.mark.parametrize("sentence", [None, TWELVE_TOKENS], ids=["7 tokens", "12 tokens"])
def test_order_and_position_slide_keeps_its_pairs_side_by_side(sentence):
    """Each pair of grids is drawn to be compared (a sentence and its shuffle; RoPE at positions 0… and 100…): on a
    slide they stay side by side, their numbers at the slide's size where the cells allow it, else at least at a
    slide's smallest size or colours only. One under the other, a 12-token pair was two grids taller than the
    window. RoPE's pair stretches to the window (its numbers fit the cells the browser draws: the browser tests
    measure them)."""
    at = open_page("pages/positions.py", {**SLIDE, **({"sentence": sentence} if sentence else {})})
    grids = ["output for the sentence", "output for the shuffled sentence"]
    stretched = ["RoPE scores", "positions 100…"]
    in_columns = [json.loads(c.proto.spec)["title"]["text"] for column in at.columns
                  for c in column.get("vega_lite_chart")]
    for title in grids + stretched:
        assert any(shown.startswith(title) for shown in in_columns), (title, in_columns)
    for title in grids:
        fonts = _value_fonts(_spec(at, title))
        if sentence is None:
            assert fonts and min(fonts) >= SLIDE_VALUE_PX, (title, fonts)
        else:
            assert not fonts or min(fonts) >= MIN_SLIDE_VALUE_PX, (title, fonts)
    for title in stretched:
        assert _spec(at, title)["width"] == "container" and _value_fonts(_spec(at, title)), title
    cells = {title: _spec(at, title)["width"] / len(_spec(at, title)["layer"][0]["encoding"]["x"]["scale"]["domain"])
             for title in grids}
    assert cells[grids[0]] == cells[grids[1]], cells  # rows level


def test_order_and_position_page_keeps_its_numbers():
    at = open_page("pages/positions.py")
    for title in ("output for the sentence", "RoPE scores"):
        fonts = _value_fonts(_spec(at, title))
        assert fonts and min(fonts) >= 10, (title, fonts)


# ---------------------------------------------------------------------------------------- What it costs


LABEL_CHAR_EM = 0.55  # a digit's width in the axis labels' font, in ems


def _tick_label_gaps(spec: dict) -> list[float]:
    """The gaps, in px, between the upright labels of a log x axis with given tick values: each label is centred on
    its tick, except the first and last, which Vega-Lite draws flush with the plot's ends unless told not to."""
    axis = spec["layer"][0]["encoding"]["x"]["axis"]
    values, font, width = axis["values"], axis["labelFontSize"], spec["width"]
    if axis.get("labelAngle", 0) != 0:
        return []  # slanted labels lie a line apart
    low, high = math.log(values[0]), math.log(values[-1])
    spans = []
    for i, value in enumerate(values):
        centre = width * (math.log(value) - low) / (high - low)
        half = LABEL_CHAR_EM * font * len(f"{value:g}") / 2
        left, right = centre - half, centre + half
        if axis.get("labelFlush", True) is not False and i == 0:
            left, right = 0, 2 * half
        if axis.get("labelFlush", True) is not False and i == len(values) - 1:
            left, right = width - 2 * half, width
        spans.append((left, right))
    return [b[0] - a[1] for a, b in zip(spans, spans[1:])]


def _slanted_label_gaps(spec: dict) -> list[float]:
    """The distances, in px, between neighbouring slanted labels of a log x axis (none when they are upright)."""
    axis = spec["layer"][0]["encoding"]["x"]["axis"]
    values, width, angle = axis["values"], spec["width"], axis.get("labelAngle", 0)
    if angle == 0:
        return []
    low, high = math.log(values[0]), math.log(values[-1])
    centres = [width * (math.log(value) - low) / (high - low) for value in values]
    return [(b - a) * abs(math.sin(math.radians(angle))) for a, b in zip(centres, centres[1:])]


@pytest.mark.parametrize("query", [{}, SLIDE], ids=["page", "slide"])
def test_what_it_costs_t_labels_stay_apart(query):
    at = open_page("pages/cost.py", query)
    for title in ("multiply-adds", "memory of the attention weights"):
        spec = _spec(at, title)
        font = spec["layer"][0]["encoding"]["x"]["axis"]["labelFontSize"]
        gaps = _tick_label_gaps(spec)
        assert all(gap >= font / 2 for gap in gaps), (title, [round(g) for g in gaps])
        if query:
            assert gaps, "a slide's T labels are upright"
        else:  # a page's are slanted: parallel labels a tick apart lie (tick gap) × sin(angle) apart, a line or more
            assert not gaps and _slanted_label_gaps(spec), title
            assert min(_slanted_label_gaps(spec)) >= font, (title, [round(g) for g in _slanted_label_gaps(spec)])


# ------------------------------------------------------------------------------- a 1024-px projector

_CELL_NUMBER_PX_JS = """() => Array.from(
    document.querySelectorAll("[data-testid='stMain'] [data-testid='stVegaLiteChart'] svg.marks"), svg => {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return Array.from(svg.querySelectorAll('g.mark-text.role-mark text'))
            .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
            .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
    })"""
"""Per chart, the drawn size in px of each number (or mark) printed in its cells."""


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("step, window, printed", [
    ("scaled", PROJECTOR, False), ("masked", PROJECTOR, False), ("softmax", PROJECTOR, False),
    ("context", PROJECTOR, True), ("scaled", {"width": 1280, "height": 800}, True)],
    ids=["scaling 1024", "masked 1024", "weights 1024", "context 1024", "scaling 1280"])
def test_slide_numbers_are_readable_or_left_out(read_slide, step, window, printed):
    """``printed``: some chart of the slide still prints its numbers (the context's wide cells at 1024 px, both
    charts at 1280). (The four stages at 1024 px read one page, walked to each with the stage keys.)"""
    page = read_slide(f"/step-through?step={step}&mask=causal&sentence={ELEVEN_TOKENS.replace(' ', '+')}", window)
    page.wait_for_timeout(500)
    charts_px = page.evaluate(_CELL_NUMBER_PX_JS)
    smallest = min((px for chart in charts_px for px in chart), default=None)
    assert smallest is None or smallest >= READABLE_PX - 0.5, (smallest, [len(c) for c in charts_px])
    if printed:
        assert any(len(chart) >= 11 * 4 for chart in charts_px), [len(c) for c in charts_px]


# ----------------------------------------------------------------------------------- a chart's toolbar

_TOOLBAR_JS = """(title) => {
    const chart = Array.from(document.querySelectorAll("[data-testid='stMain'] [data-testid='stVegaLiteChart']"))
        .find(c => Array.from(c.querySelectorAll('.role-title-text'), e => e.textContent).join(' ').includes(title));
    const element = chart?.closest("[data-testid='stElementContainer']");
    const bar = element?.querySelector("[data-testid='stElementToolbarButtonContainer']")?.getBoundingClientRect();
    if (!bar) return null;
    const covered = [];
    for (const text of document.querySelectorAll("[data-testid='stMain'] :is(p, h1, h2, h3, li, .katex)")) {
        if (element.contains(text)) continue;
        const range = document.createRange();
        range.selectNodeContents(text);
        for (const line of range.getClientRects()) {
            if (line.width > 0 && line.left < bar.right && line.right > bar.left && line.top < bar.bottom - 1
                && line.bottom > bar.top + 1) covered.push(text.textContent.slice(0, 50));
        }
    }
    return {bar: [bar.left, bar.top, bar.right, bar.bottom], covered: [...new Set(covered)]};
}"""
"""The box of the toolbar shown over the chart titled like ``title``, and the text its box lies over."""


@pytest.mark.browser
@needs_browser
@pytest.mark.parametrize("path, title", [("/cross-attention?sentence=Unbelievably+long+words", "row of 1·Unbeliev"),
                                         ("/step-through?step=scores", "QKᵀ — head 1")],
                         ids=["cross-attention", "step through"])
def test_a_charts_toolbar_leaves_the_text_above_it_free(server, browser, path, title):
    """Cross-attention's "What 1·Unbelievably reads from the source (head 1):" and the scores' formula."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(server + path, wait_until="domcontentloaded", timeout=120_000)
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=120_000)
        chart = page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart']").filter(has_text=title).first
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        chart.hover()
        page.wait_for_timeout(800)  # the toolbar fades in
        found = page.evaluate(_TOOLBAR_JS, title)
    finally:
        context.close()
    assert found is not None, "no toolbar shown"
    assert not found["covered"], found


@pytest.mark.browser
@needs_browser
def test_a_slides_charts_keep_no_room_for_the_toolbar(slide):
    """The room above a page's charts is not taken from a slide, where every pixel of height counts."""
    page = slide("/cross-attention")
    margins = page.evaluate("""() => Array.from(document.querySelectorAll(
        "[data-testid='stMain'] [data-testid='stElementContainer']:has([data-testid='stVegaLiteChart'])"),
        e => getComputedStyle(e).marginTop)""")
    assert margins and set(margins) == {"0px"}, margins


@pytest.mark.browser
@needs_browser
def test_the_mask_editors_ticks_are_the_mask_charts_blue_on_a_slide(slide):
    """Its tick boxes, drawn in a mid grey on the editor's canvas, looked switched off on a projector beside the mask
    charts' blue ✓ cells. On a slide the grid is seen through a filter that draws that grey in the charts' blue."""
    from io import BytesIO

    from PIL import Image

    page = slide("/masks")
    editor = page.locator("[class*='st-key-mask_editor_'] [data-testid='stDataFrame']").first
    image = Image.open(BytesIO(editor.screenshot())).convert("RGB")
    blue = tuple(int(charts.ALLOWED_COLOR[i:i + 2], 16) for i in (1, 3, 5))
    pixels = np.asarray(image, dtype=int).reshape(-1, 3)
    in_blue, total = int((np.abs(pixels - blue) <= 12).all(axis=1).sum()), len(pixels)
    assert in_blue > 0.05 * total, f"{in_blue} of {total} pixels in {charts.ALLOWED_COLOR}"


def test_real_model_numbers_its_sections_alike_on_a_page_and_a_slide():
    """A lecturer's "section 2" is the students' too: the slide left the heads grid's heading out and counted the
    close-up as 1, where the page counted it as 2. The grid now leads both unnumbered."""
    page, slide_ = open_page("pages/real_model.py", {}), open_page("pages/real_model.py", SLIDE)
    if not any("up close" in s.value for s in page.subheader):
        pytest.skip("no real model is available here")
    numbered = [[s.value for s in at.subheader if re.match(r"\d+ · ", s.value)] for at in (page, slide_)]
    assert numbered[0] == numbered[1] and numbered[0][0].startswith("1 · Layer 1, head 3 up close"), numbered
    assert any(re.fullmatch(r"All \d+ layers × \d+ heads", s.value) for s in page.subheader)
