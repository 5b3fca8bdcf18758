"""What a student sees at 1280×800 beside the sidebar: each page's main chart is on the first screen.

Overview put its live heatmap under the pipeline (cut off after row 3), Multi-head showed the heads' weights
1.2 screens down and Real model its heads grid on the second screen, under a tall table of tokens. The numbers in
a heatmap's cells were printed at 8–9 px.
"""

from __future__ import annotations

import json

import pytest

import browser_support as bs

from apptest_support import open_page

from attention_ui.views import _cell_px

WINDOW = {"width": 1280, "height": 800}


@pytest.fixture
def opened(request):
    """``opened(path)``: a new 1280×800 page of the app server at ``path``, its run finished and charts drawn; the
    test's pages are closed after it."""
    bs.require_browser()
    server, browser = request.getfixturevalue("server"), request.getfixturevalue("browser")
    pages = []

    def open_at(path: str):
        page = browser.new_page(viewport=WINDOW)
        pages.append(page)
        page.goto(server + path, wait_until="domcontentloaded", timeout=90_000)
        bs.wait_for_app_idle(page, timeout=90_000)
        bs.wait_for_all_charts(page, timeout=15_000)
        return page

    try:
        yield open_at
    finally:
        for page in pages:
            page.close()


def _text_sizes(spec: dict) -> list[float]:
    layers = spec.get("layer", [spec])
    return [layer["mark"]["fontSize"] for layer in layers
            if isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"
            and "fontSize" in layer["mark"]]


@pytest.mark.parametrize("step, smallest_px", [("scores", 12), ("softmax", 12), ("scaled", 10), ("qkv", 10),
                                               ("context", 11)],
                         ids=["scores", "weights", "two side by side", "Q, K and V side by side", "A beside C"])
def test_numbers_in_a_lessons_heatmap_cells_are_large_enough(step, smallest_px):
    at = open_page("pages/step_through.py", {"step": step})
    sizes = [size for chart in at.get("vega_lite_chart") for size in _text_sizes(json.loads(chart.proto.spec))]
    assert sizes and min(sizes) >= smallest_px, sizes


@pytest.mark.parametrize("page", ["pages/cross_attention.py", "pages/masking.py"])
def test_weights_beside_another_chart_print_numbers_a_student_can_read(page):
    """Two charts side by side leave cells of 33–37 px: weights were printed at 9–10 px in them, sized as if each
    were a signed "−0.390". A weight is never negative, so "0.390" (five characters of about 0.6 em) gets the cell's
    width. (The padding mask's weights have 9 keys in half the column: narrower cells, smaller numbers.)"""
    at = open_page(page, {})
    weights = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart") if "weight" in str(c.proto.spec)]
    sizes = [(_cell_px(spec), size) for spec in weights for size in _text_sizes(spec)]
    roomy = [(cell, size) for cell, size in sizes if cell >= 33]
    assert roomy and all(size >= 11 and 5 * 0.6 * size <= cell for cell, size in roomy), sizes


@pytest.mark.parametrize("page, query", [("pages/step_through.py", {"step": "softmax"}),
                                         ("pages/step_through.py", {"step": "softmax", "presenter": "true"}),
                                         ("pages/multi_head.py", {}), ("pages/multi_head.py", {"presenter": "true"})])
def test_the_lines_charts_title_is_one_line(page, query):
    """The lines chart's title was broken into two or three lines in the chart's left third."""
    at = open_page(page, query)
    titles = [json.loads(c.proto.spec).get("title", {}) for c in at.get("vega_lite_chart")]
    lines = [t["text"] for t in titles if isinstance(t, dict) and "as lines" in str(t.get("text"))]
    assert lines and all(isinstance(line, str) for line in lines), lines  # (a slide of Multi-head draws two heads)


@pytest.mark.browser
@pytest.mark.parametrize("path, whole", [("/overview", True), ("/multi-head", True), ("/real-model", False),
                                         ("/multi-head?presenter=true", True),
                                         ("/multi-head?presenter=true&heads=8&d_model=32", True)],
                         ids=["overview heatmap", "multi-head weights", "real model heads grid",
                              "multi-head on a slide", "eight heads on a slide"])
def test_the_main_chart_is_on_the_first_screen(opened, path, whole):
    """The whole chart, or for the real model's 6 × 12 grid (taller than what is left of the screen) its top."""
    page = opened(path)
    found = page.locator("[data-testid='stVegaLiteChart']").first.bounding_box()
    assert found is not None, "no chart drawn"
    if whole:
        assert found["y"] + found["height"] <= WINDOW["height"], found
    else:
        assert found["y"] <= WINDOW["height"] - 200, found
    if path == "/multi-head":
        title = page.locator("[data-testid='stVegaLiteChart']").first.inner_text()
        assert "head 1" in title and "columns" not in title, "the weights come before the column split"
    hidden = page.evaluate("() => { const c = document.querySelector(\"[data-testid='stVegaLiteChart']\");"
                           " return c.scrollWidth - c.clientWidth; }")
    assert hidden <= 1, f"{hidden} px of the chart (the real model's colour bar) lie outside its box"


LONG_SENTENCE = "The quick brown fox jumps over the lazy dog while the cat sat on the warm mat"


@pytest.mark.browser
@pytest.mark.parametrize("query", ["", "&presenter=true"], ids=["page", "slide"])
def test_overviews_live_chart_fits_its_column_with_a_long_sentence(opened, query):
    """Seventeen tokens drew the home page's live chart 1351 px wide and shrank it into its 516-px column: labels of
    7.6 px on a projector. Its cells are sized to the column, so it is drawn at its own size."""
    page = opened("/overview?sentence=" + LONG_SENTENCE.replace(" ", "+") + query)
    drawn = page.evaluate("""() => { const svg = document.querySelector("[data-testid='stVegaLiteChart'] svg");
        const box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
        const labels = Array.from(svg.querySelectorAll('.role-axis-label text'),
                                  t => parseFloat(getComputedStyle(t).fontSize) * scale);
        return {scale, smallest_label: Math.min(...labels), labels: labels.length}; }""")
    assert drawn["labels"] >= 17 and drawn["scale"] >= 0.99, drawn
    assert drawn["smallest_label"] >= (20 if query else 13) - 0.5, drawn


@pytest.mark.browser
@pytest.mark.parametrize("query", ["", "&presenter=true"], ids=["page", "slide"])
def test_masking_draws_its_charts_at_their_own_size_with_a_long_sentence(opened, query):
    """With 17 tokens each mask and its weights were drawn up to 1.25× wider than their half of the row and shrunk
    into it, the ✓ marks to 7.6 px on a slide."""
    page = opened("/masks?sentence=" + LONG_SENTENCE.replace(" ", "+") + query)
    scales = page.evaluate("""() => Array.from(document.querySelectorAll("[data-testid='stVegaLiteChart'] svg.marks"),
        svg => svg.getBoundingClientRect().width / svg.viewBox.baseVal.width)""")
    # the four masks and their weights, and the weights under the mask editor (a slide leaves out the untouched
    # custom mask's pair, the "none" pair again)
    assert len(scales) == (7 if query else 9) and min(scales) >= 0.97, scales  # (was 0.77-0.83)


@pytest.mark.browser
def test_the_mask_editors_toolbar_leaves_the_buttons_above_it_free(opened):
    """Hovering the mask editor shows its toolbar above the editor's top right corner: it lay over "Allow
    everything", so a click meant for the button hit the toolbar."""
    page = opened("/masks")
    editor = page.locator("[data-testid='stDataFrame']").first
    editor.scroll_into_view_if_needed()
    editor.hover()
    toolbar = page.locator("[data-testid='stElementContainer']:has([data-testid='stDataFrame']) "
                           "[data-testid='stElementToolbar']").first
    toolbar.wait_for(state="visible", timeout=5_000)
    bar = toolbar.bounding_box()
    for label in ("Start from causal", "Start from a window", "Allow everything", "Block the followed row"):
        button = page.get_by_role("button", name=label).bounding_box()
        assert bar["y"] >= button["y"] + button["height"], (label, button, bar)


_CAPTION_CONTRAST_JS = """() => {
  const caption = document.querySelector('[data-testid=stMain] [data-testid=stCaptionContainer]');
  const style = getComputedStyle(caption), alpha = parseFloat(style.opacity);
  const [r, g, b] = style.color.match(/\\d+/g).slice(0, 3).map(Number).map((c) => alpha * c + (1 - alpha) * 255);
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const luminance = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return 1.05 / (luminance + 0.05);
}"""


@pytest.mark.browser
def test_captions_are_dark_enough_to_read(opened):
    """Streamlit's captions (60 % opaque) were 3.9 : 1 on white, under the 4.5 : 1 that small text needs."""
    page = opened("/step-through")
    assert page.evaluate(_CAPTION_CONTRAST_JS) >= 4.5


def _click_after_rest(page, x: float, y: float) -> None:
    """As a person with a mouse: move there, rest a moment, click. Streamlit's grid ignores a press whose pointer it
    has not yet seen over it (the page scrolled under a resting pointer) and keeps the cell selected before."""
    page.mouse.move(x, y, steps=8)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


_FOCUS_IN_GRID_JS = "() => !!document.activeElement?.closest('[data-testid=stDataFrame]')"
_FOCUS_ON_A_CELL_JS = ("() => !!document.activeElement?.closest('[data-testid=stDataFrame]')"
                       " && !document.activeElement.closest('[data-testid=stElementToolbar]')")  # (toolbar: in it)


@pytest.mark.browser
def test_the_mask_editor_keeps_the_keyboard_in_it_from_cell_to_cell(opened):
    """Each change of a cell made the editor again: the keyboard's focus fell to the page, and a keyboard user took 5
    Tabs and the arrows from the top-left cell for every next cell. Space, → and Space now tick off two cells."""
    page = opened("/masks")
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    _click_after_rest(page, box["x"] + 20, box["y"] + 35 * 1.5)  # the first row's label: the grid has the keyboard
    page.wait_for_timeout(800)
    for key in ("ArrowRight", "Space", "ArrowRight", "Space"):
        page.keyboard.press(key)
        page.wait_for_timeout(400)
        bs.wait_for_app_idle(page)
        assert page.evaluate(_FOCUS_IN_GRID_JS), f"the focus left the grid after {key}"
    assert "grid=0011111." in page.url, page.url


@pytest.mark.browser
def test_a_keyboard_alone_ticks_the_mask_editors_cells(opened):
    """Tabbed into from the buttons above it, with the pointer resting elsewhere, the mask editor ignored the arrows
    and Space: Streamlit's grid takes a new cell only after it has seen the pointer move over it. The page's grid
    script shows it such a move before each key (``attention_ui/grid_input.py``)."""
    page = opened("/masks")
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    page.mouse.move(5, 5)  # over the sidebar, away from the grid
    page.get_by_role("button", name="Block the followed row").focus()
    for _ in range(8):  # past the grid's toolbar (shown columns, download, search, full screen) to its first cell
        page.keyboard.press("Tab")
        if page.evaluate(_FOCUS_ON_A_CELL_JS):
            break
    assert page.evaluate(_FOCUS_ON_A_CELL_JS), "Tab did not reach the grid's cells"
    for key in ("ArrowRight", "Space", "ArrowDown", "Space", "ArrowRight", "Space"):  # 1·The→1·The, 2·cat→1·The, →2·cat
        page.keyboard.press(key)
        page.wait_for_timeout(400)
        bs.wait_for_app_idle(page)
    assert "grid=0111111.0011111.1111111." in page.url, page.url


@pytest.mark.browser
def test_a_worked_sum_takes_its_cells_width(opened):
    """Streamlit stops a table cell's text at 400 px: each worked sum of 4 products broke into two lines beside
    300 px of empty cell."""
    page = opened("/step-through?step=scores")
    cell = page.locator("[data-testid='stTable'] tbody tr").first.locator("td").nth(1)
    text = cell.locator("[data-testid='stMarkdownContainer']").first
    cell_box, text_box = cell.bounding_box(), text.bounding_box()
    assert text_box["width"] > 400 and cell_box["width"] > text_box["width"], (text_box, cell_box)
    line_px = text.evaluate("e => parseFloat(getComputedStyle(e.querySelector('p') || e).lineHeight)")
    assert text_box["height"] < 1.5 * line_px, ("the sum is one line", text_box, line_px)


@pytest.mark.browser
def test_every_page_is_listed_and_the_sentence_box_starts_on_the_first_screen(opened):
    """The sidebar's menu showed ten pages and "View 4 more": the real-model pages, which other pages point to,
    were hidden. Every page is listed now, compact enough that the sentence box still starts on the screen."""
    from app import LESSONS

    page = opened("/step-through")
    sidebar = page.locator("[data-testid='stSidebar']")
    titles = [title for lessons in LESSONS.values() for _, title, _, _ in lessons]
    for title in titles:
        assert sidebar.get_by_role("link", name=title).first.is_visible(), f"{title} is not listed"
    assert not sidebar.get_by_text("View", exact=False).filter(has_text="more").count(), "a collapsed menu"
    box = sidebar.get_by_label("Sentence").first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= WINDOW["height"], box


@pytest.mark.browser
def test_the_kv_cache_table_shows_every_column_without_scrolling(opened):
    """Its last column ("MiB if g = h", which the grey bars under it plot) was 86 px past the table's right edge."""
    page = opened("/modern-attention")
    widths = page.evaluate("""() => [...document.querySelectorAll("[data-testid='stDataFrame'] .dvn-scroller")]
                                     .map(e => [e.scrollWidth, e.clientWidth])""")
    assert len(widths) >= 2 and all(scroll <= client + 1 for scroll, client in widths), widths


@pytest.mark.browser
def test_a_slides_editable_grid_is_enlarged_and_a_click_still_edits_the_cell_under_it(opened):
    """The by-hand grids kept the page's 13-px text on a slide (a canvas that the slide's text style does not reach);
    they are zoomed, and a click on a zoomed cell must still open that cell, not a neighbour."""
    plain_width = opened("/by-hand").locator("[data-testid='stDataFrame']").first.bounding_box()["width"]
    page = opened("/by-hand?presenter=true")
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box["width"] >= 1.3 * plain_width, (box, plain_width)
    # X is 3 rows × (index, x1, x2) under a header row: the cell of 2·like, x2
    _click_after_rest(page, box["x"] + box["width"] * 0.85, box["y"] + box["height"] * 2.5 / 4)
    page.wait_for_timeout(800)  # a person's pause: the grid drops a key typed at once after its first click
    page.keyboard.type("7")
    page.wait_for_timeout(500)
    page.keyboard.press("Enter")
    bs.wait_for_app_idle(page)
    cells = grid.evaluate("e => [...e.querySelectorAll('td, [role=gridcell]')].map(c => c.innerText)")
    assert cells == ["1·I", "1", "0", "2·like", "0", "7", "3·tea", "1", "1"], cells


@pytest.mark.browser
def test_on_a_1024_px_slide_the_by_hand_grids_show_every_column(opened):
    """Zoomed on a 1024-px window, W_Q, W_K and W_V were cut at their second column (they scrolled inside)."""
    page = opened("/by-hand?presenter=true")
    page.set_viewport_size({"width": 1024, "height": 768})
    page.wait_for_timeout(800)
    widths = page.evaluate("""() => [...document.querySelectorAll("[data-testid='stDataFrame'] .dvn-scroller")]
                                     .slice(0, 4).map(e => [e.scrollWidth, e.clientWidth])""")
    assert len(widths) == 4 and all(scroll <= client + 1 for scroll, client in widths), widths


def _cell_centre(page, index: int, row: int, column: int, columns: int) -> tuple[float, float]:
    """Where cell (row, column) of the page's ``index``-th grid is in the window (its data columns 75 px wide, rows
    35 px under a 35-px header, the last column at the grid's right edge), the grid scrolled into view."""
    grid = page.locator("[data-testid='stDataFrame']").nth(index)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    return box["x"] + box["width"] - (columns - column - 0.5) * 75, box["y"] + 35 * (row + 1.5)


def _type_in_grid(page, index: int, row: int, column: int, columns: int, text: str) -> None:
    """Type ``text`` in cell (row, column) of the page's ``index``-th grid and press Enter."""
    x, y = _cell_centre(page, index, row, column, columns)
    _click_after_rest(page, x, y)
    page.wait_for_timeout(800)  # a person's pause: the grid drops a key typed at once after its first click
    page.mouse.dblclick(x, y)  # the cell's editor, its text selected: the typing replaces it
    page.wait_for_timeout(600)
    page.keyboard.press("Control+a")
    page.keyboard.type(text)
    page.wait_for_timeout(300)
    page.keyboard.press("Enter")
    bs.wait_for_app_idle(page)


def _gone(locator, timeout: float = 10_000) -> bool:
    """Whether what ``locator`` finds is gone from the page within ``timeout`` ms."""
    try:
        locator.first.wait_for(state="detached", timeout=timeout)
    except Exception:  # playwright's TimeoutError
        return False
    return True


def _shown(locator, timeout: float = 10_000) -> bool:
    """Whether what ``locator`` finds is on the page within ``timeout`` ms."""
    try:
        locator.first.wait_for(state="visible", timeout=timeout)
    except Exception:  # playwright's TimeoutError
        return False
    return True


def _grid_cells(page, index: int) -> list[str]:
    """The grid's cells as its table for screen readers gives them (once it has drawn them)."""
    grid = page.locator("[data-testid='stDataFrame']").nth(index)
    grid.scroll_into_view_if_needed()
    grid.locator("td, [role=gridcell]").first.wait_for(state="attached", timeout=10_000)
    return grid.evaluate("e => [...e.querySelectorAll('td, [role=gridcell]')].map(c => c.innerText)")


@pytest.mark.browser
def test_answers_typed_by_hand_come_back_after_an_x_cell_is_fixed(opened):
    """A cell of X that could not be read ("abc") stops the page above the answer grids; once it was fixed the
    answer grids came back empty, while Check still marked what had been typed in them."""
    page = opened("/by-hand")
    answer = 4  # X, W_Q, W_K, W_V, then step 1's answer (3 × 3)
    _type_in_grid(page, answer, 1, 1, 3, "3")
    assert _grid_cells(page, answer)[4:8] == ["2·like", "", "3", ""], _grid_cells(page, answer)
    stopped = page.get_by_text("Some cells cannot be used yet")
    for _ in range(3):  # a busy machine's grid can drop the typing; a person types it again
        _type_in_grid(page, 0, 0, 0, 2, "abc")
        if _shown(stopped):
            break
    assert stopped.count() == 1
    for _ in range(3):
        _type_in_grid(page, 0, 0, 0, 2, "1")
        if _gone(stopped):
            break
    assert stopped.count() == 0
    assert _grid_cells(page, answer)[4:8] == ["2·like", "", "3", ""], "the typed answer is shown again"


def _double_click_after_rest(page, x: float, y: float) -> None:
    """As a person with a mouse: move there, rest a moment, double-click."""
    page.mouse.move(x, y, steps=8)
    page.wait_for_timeout(300)
    page.mouse.dblclick(x, y)


def _double_click_as_pointer_arrives(page, x: float, y: float) -> None:
    """Double-click at (x, y) with the pointer coming there in the same moment."""
    page.mouse.dblclick(x, y)


@pytest.mark.browser
def test_numbers_typed_cell_after_cell_by_double_click_are_all_kept(opened):
    """After one number was typed, a double-click on the next cell opened its editor but left the focus on the grid:
    the key typed opened a second editor over it, and Enter closed that without keeping the number (a student's
    numbers came back empty and Check called the cells empty)."""
    page = opened("/by-hand")
    answer = 4  # X, W_Q, W_K, W_V, then step 1's answer (3 × 3)
    for column, text in enumerate(("1", "2", "3")):
        _double_click_after_rest(page, *_cell_centre(page, answer, 0, column, 3))
        page.wait_for_timeout(300)
        page.keyboard.type(text, delay=90)
        page.keyboard.press("Enter")
        page.wait_for_timeout(1500)  # a person reads the cell before going on
        bs.wait_for_app_idle(page)
    assert _grid_cells(page, answer)[:4] == ["1·I", "1", "2", "3"], _grid_cells(page, answer)


@pytest.mark.browser
@pytest.mark.parametrize("double_click", [_double_click_after_rest, _double_click_as_pointer_arrives],
                         ids=["after a rest", "as the pointer arrives"])
def test_a_double_click_opens_the_cell_and_keeps_what_is_typed(opened, double_click):
    """A spreadsheet's habit: double-click a cell, type, Enter. The number typed is kept, wherever the pointer was
    (a student read that a number typed after a double-click was lost)."""
    page = opened("/by-hand")
    answer = 4  # X, W_Q, W_K, W_V, then step 1's answer (3 × 3)
    double_click(page, *_cell_centre(page, answer, 1, 1, 3))
    page.wait_for_timeout(400)  # a person's pause before the first key
    page.keyboard.type("7")
    page.wait_for_timeout(200)
    page.keyboard.press("Enter")
    bs.wait_for_app_idle(page)
    assert _grid_cells(page, answer) == ["1·I", "", "", "", "2·like", "", "7", "", "3·tea", "", "", ""], \
        "the typed 7 was lost"
