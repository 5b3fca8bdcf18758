"""Presenter mode's keys and links in a real browser (headless Chromium driving ``streamlit run``).

- → and Page Down move to the next stage, ← and Page Up back (focus on the page body); Page Down shows a stage's
  worked numbers first when asked to; keys typed into an input stay there; the keyboard's focus stays on a step button.
- A fresh server answering a deep link right after its health check, and five visits at once during its
  first run, never shows "Page not found"; nor does ``/overview``.
- A short link (``?step=6&token=2``) is rewritten to ``?step=softmax&token=2`` and the rewritten address
  restores the same stage and followed token in a new session.

Skips (with the reason) when Playwright is not importable or no Chromium is found.
"""

from __future__ import annotations

import pytest

import browser_support as bs
from slide_support import (FIRST_LOAD_MS, LOAD_MS, PROJECTORS, address_query, exceptions, new_page, open_page,
                           outside_window, slide_problems)

from attention_ui.text import STAGES

pytestmark = pytest.mark.browser

sync_api = bs.require_browser()


@pytest.mark.parametrize("presenter", [True, False], ids=["presenter", "lesson"])
def test_arrow_and_page_keys_move_between_stages(server, browser, presenter):
    context, page = new_page(browser)
    try:
        open_page(page, server + f"/step-through?step=scores&presenter={str(presenter).lower()}", FIRST_LOAD_MS)
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
            assert not exceptions(page), f"{key}: {exceptions(page)}" + bs.server_log(server)
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
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?step=softmax&presenter=true&worked_first=true", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page) + [bs.server_log(server)]
    finally:
        context.close()


def test_with_the_worked_numbers_switch_page_down_goes_through_every_stage(server, browser):
    """On a slide whose page ends before its worked numbers reach the top line (stages 4, 5 and 8 at 1280 × 800),
    each Page Down asked for a scroll that could not happen, and the clicker was stuck on that stage. Every stage
    now takes at most four presses (what is under its charts, maybe a screen or two more, the step), through to the
    next page."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?presenter=true&worked_first=true", FIRST_LOAD_MS)
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
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?presenter=true&step=scores", FIRST_LOAD_MS)
        page.locator(".st-key-slide_settings button").first.click()
        page.locator(".st-key-worked_first label").first.click()
        page.wait_for_selector(".st-key-worked_first_numbers", state="attached", timeout=LOAD_MS)
        bs.wait_for_app_idle(page)
        page.keyboard.press("PageDown")
        page.wait_for_function(f"() => ({SCROLL_TOP_JS[6:]}) > 300", timeout=5_000)
        page.wait_for_timeout(800)
        assert bs.stage_title(page) == STAGES[2].title
        assert not page.locator("[data-testid='stPopoverBody']").is_visible(), "the key closed the menu"
        assert address_query(page).get("worked_first") == ["true"]
    finally:
        context.close()


def test_down_and_space_scroll_a_slide_without_a_click_first(server, browser):
    """A slide's worked numbers lie under its charts. With the focus on the page's body (a slide just opened, or
    just moved on by a key) ↓ and Space scrolled nothing: a lecturer at the keyboard had to click the page first.
    They scroll the slide now, and → still takes the step (the new stage starts at the top)."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?step=softmax&presenter=true", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page)
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
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_keys_typed_into_an_input_do_not_change_the_stage(server, browser):
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?step=scores", FIRST_LOAD_MS)
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
    context, page = new_page(browser, viewport)
    try:
        open_page(page, server + "/step-through?presenter=true&step=softmax", FIRST_LOAD_MS)
        assert not page.locator(bs.SIDEBAR).is_visible(), "the sidebar stays hidden on a slide"
        page.locator(".st-key-slide_settings button").first.click()
        body = '[data-testid="stPopoverBody"]'
        page.wait_for_selector(body)
        assert outside_window("the open Settings menu", bs.box(page, body), viewport) is None, bs.box(page, body)
        hidden = page.locator(body).evaluate("e => e.scrollHeight - e.clientHeight")
        assert hidden <= 1, f"the menu's last {hidden} px need a scroll"  # its first column ran 220 px past it
        for label in ("Query token to follow", "Head to show", "Sentence"):
            page.locator(f'{body} label:has-text("{label}")').first.wait_for(state="visible", timeout=5_000)
        page.locator(f'{body} label:has-text("causal")').first.click()
        bs.wait_for_app_idle(page)
        assert address_query(page).get("mask") == ["causal"]
        assert page.locator(body).is_visible(), "the menu stays open while the lecturer changes settings"
        page.keyboard.press("Escape")
        page.wait_for_selector(body, state="hidden")
        assert _press_as_is(page, "ArrowRight") == STAGES[6].title, "→ after closing the menu"
        assert address_query(page).get("mask") == ["causal"] and address_query(page).get("presenter") == ["true"]
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


@pytest.mark.parametrize("key", ["ArrowRight", "PageDown"])
def test_a_key_after_a_mouse_choice_in_the_settings_menu_goes_to_the_slide(server, browser, key):
    """A lecturer clicked "causal" in the Settings menu and pressed → to go on: the radio took the key and moved the
    mask on to "padding" (ten tokens, a new slider, the chart redrawn), and a clicker's Page Down did nothing. The
    key now closes the menu and takes the step, the mask left as chosen. Reached with the keyboard, a radio keeps its
    arrow keys."""
    context, page = new_page(browser)
    body = '[data-testid="stPopoverBody"]'
    try:
        open_page(page, server + "/step-through?presenter=true&step=masked", FIRST_LOAD_MS)
        page.locator(".st-key-slide_settings button").first.click()
        page.locator(f'{body} label:has-text("causal")').first.click()
        bs.wait_for_app_idle(page)
        assert address_query(page).get("mask") == ["causal"]
        assert _press_as_is(page, key) == STAGES[5].title, f"{key} after a click on a radio"
        page.wait_for_selector(body, state="hidden", timeout=5_000)
        assert address_query(page).get("mask") == ["causal"], f"{key} changed the mask: {page.url}"
        if key != "ArrowRight":
            return
        page.locator(".st-key-slide_settings button").first.click()
        page.wait_for_timeout(1_200)  # a focus this long after the last click is the keyboard's
        page.locator(f'{body} label:has-text("causal") input').first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => !location.search.includes('mask=causal')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert bs.stage_title(page) == STAGES[5].title, "a radio reached with the keyboard keeps its arrow keys"
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_a_new_slide_starts_at_the_top_and_escape_keeps_a_typed_sentence(server, browser):
    """A lecturer scrolled down to the worked numbers and pressed →: the next slide opened scrolled down as far,
    its chart and Back/Next off the screen. Typing a sentence in the Settings menu and pressing Escape dropped it."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?presenter=true&step=scores", FIRST_LOAD_MS)
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
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_a_clickers_page_down_after_a_sentence_typed_in_the_settings_menu_takes_the_step(server, browser):
    """A lecturer typed a new sentence in the slide's Settings menu and pressed Enter: the cursor stayed in the box,
    the clicker's Page Down did nothing and the menu stayed over the slide until Escape or a click."""
    context, page = new_page(browser)
    body = '[data-testid="stPopoverBody"]'
    try:
        open_page(page, server + "/step-through?presenter=true&step=softmax", FIRST_LOAD_MS)
        page.locator(".st-key-slide_settings button").first.click()
        sentence = page.locator(f"{body} .st-key-sentence input").first
        sentence.fill("Dogs chase the red ball")
        page.keyboard.press("Enter")
        page.wait_for_function("() => location.search.includes('sentence=Dogs')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert _press_as_is(page, "PageDown") == STAGES[6].title, "Page Down after typing a sentence"
        page.wait_for_selector(body, state="hidden", timeout=5_000)
        assert "sentence=Dogs" in page.url, page.url
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_the_lone_key_note_is_on_the_slides_first_screen(server, browser):
    """Under the causal mask token 1 sees only itself; the slide said so 2,000 px down, under the worked numbers."""
    viewport = PROJECTORS[0]
    context, page = new_page(browser, viewport)
    try:
        open_page(page, server + "/step-through?presenter=true&step=softmax&mask=causal&token=1", FIRST_LOAD_MS)
        note = bs.box(page, ".st-key-lone_key_note")
        assert outside_window("the one-key note", note, viewport) is None, note
        assert not slide_problems(page, viewport), slide_problems(page, viewport)
        page.locator(".st-key-lone_key_note button").first.click()
        page.wait_for_function("() => !location.search.includes('token=1')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert bs.box(page, ".st-key-lone_key_note") is None, "the last word, 6·mat, attends to six keys"
    finally:
        context.close()


def test_next_under_a_stage_moves_on_and_shows_the_new_stage_from_its_top(server, browser):
    """A reader who had scrolled through the worked numbers had to scroll back up to find Next."""
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?step=scores", FIRST_LOAD_MS)
        bottom = page.locator(".st-key-next_bottom button").first
        bottom.scroll_into_view_if_needed()
        assert "4 · Scaling" in bottom.inner_text()
        bottom.click()
        page.wait_for_function("() => new URLSearchParams(location.search).get('step') === 'scaled'", timeout=10_000)
        bs.wait_for_app_idle(page)
        picker = bs.box(page, ".st-key-step")
        assert picker is not None and 0 <= picker["top"] < 200, picker
        assert not exceptions(page), exceptions(page)
    finally:
        context.close()


def test_the_keyboards_focus_stays_on_a_step_button_that_can_still_step(server, browser):
    """Enter on Next under a stage showed the new stage from its top with the focus lost (or left on the foot's
    button, off the screen); Enter on Next at stage 8 left the focus on Back, and the next Enter went back."""
    context, page = new_page(browser)
    focused = "() => document.activeElement.closest('[class*=st-key-]')?.className.match(/st-key-[\\w-]+/)?.[0]"
    try:
        open_page(page, server + f"/step-through?step={STAGES[2].key}", FIRST_LOAD_MS)
        page.locator(".st-key-next_bottom button").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("k => new URLSearchParams(location.search).get('step') === k", arg=STAGES[3].key,
                               timeout=10_000)
        bs.wait_for_app_idle(page)
        page.wait_for_timeout(500)
        assert page.evaluate(focused) == "st-key-next", page.evaluate(focused)
        assert 0 <= bs.box(page, ".st-key-next")["top"] < 300  # in view, where the page went
        open_page(page, server + f"/step-through?step={STAGES[-2].key}", FIRST_LOAD_MS)
        page.locator(".st-key-next button").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("k => new URLSearchParams(location.search).get('step') === k", arg=STAGES[-1].key,
                               timeout=10_000)
        bs.wait_for_app_idle(page)
        page.wait_for_timeout(500)
        assert page.evaluate(focused) == "st-key-step", page.evaluate(focused)  # the stage menu, not Back
    finally:
        context.close()


_ACTIVE_JS = "() => [document.activeElement.tagName, document.activeElement.textContent.trim(), " \
    "!!document.activeElement.closest('[data-testid=stPopoverBody]')]"


def test_a_slides_keyboard_user_keeps_the_focus_on_a_button_and_tabs_into_the_menu_and_past_the_toolbars(
        server, browser):
    """A lecturer with the keyboard only, at a 1024×768 projector:
    - Enter on Masking's "Start from causal" sent the focus to the top of the page, 30 Tabs from the next button;
    - each chart's hidden toolbar took four Tab stops before the mask's buttons;
    - after Enter on Settings, Tab went through 24 of the slide's controls under the menu before it reached the menu."""
    context, page = new_page(browser, {"width": 1024, "height": 768})
    try:
        open_page(page, server + "/masks?presenter=true", FIRST_LOAD_MS)
        toolbars = page.locator(f"{bs.MAIN} [data-testid=stElementToolbar] button")
        assert toolbars.count() and all(b.get_attribute("tabindex") == "-1" for b in toolbars.all())
        page.get_by_role("button", name="Start from causal").focus()
        page.keyboard.press("Enter")
        page.wait_for_function("() => new URLSearchParams(location.search).has('grid')", timeout=10_000)
        bs.wait_for_app_idle(page)
        page.wait_for_timeout(300)
        assert page.evaluate(_ACTIVE_JS)[:2] == ["BUTTON", "Start from causal"], page.evaluate(_ACTIVE_JS)
        page.keyboard.press("Tab")
        assert page.evaluate(_ACTIVE_JS)[:2] == ["BUTTON", "Start from a window"], page.evaluate(_ACTIVE_JS)
        page.locator(".st-key-slide_settings button").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_selector("[data-testid=stPopoverBody]", timeout=10_000)
        page.wait_for_timeout(300)
        assert page.evaluate(_ACTIVE_JS)[2], f"the menu has the focus: {page.evaluate(_ACTIVE_JS)}"
        page.keyboard.press("Tab")
        assert page.evaluate(_ACTIVE_JS)[2], f"and keeps it: {page.evaluate(_ACTIVE_JS)}"
        page.keyboard.press("Escape")
        page.locator(".st-key-presenter label").first.click()  # presenter mode off: the page's toolbars are Tab stops
        page.wait_for_function("() => !new URLSearchParams(location.search).has('presenter')", timeout=10_000)
        bs.wait_for_app_idle(page)
        assert toolbars.count() and not [b for b in toolbars.all() if b.get_attribute("tabindex") == "-1"]
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
                context, page = new_page(browser)
                contexts.append(context)
                pages.append(page)
            for page, link in zip(pages, links):
                _visit(page, fresh + link)
            seen = {}
            for page, link in zip(pages, links):
                bs.wait_for_app_idle(page, timeout=FIRST_LOAD_MS)
                seen[link] = bs.page_not_found_seen(page)
                assert not exceptions(page), f"{link}: {exceptions(page)}" + bs.server_log(fresh)
            assert not any(seen.values()), f"'Page not found' shown: { {k: v for k, v in seen.items() if v} }"
            assert bs.stage_title(pages[0]) == STAGES[5].title, f"the deep link opened {bs.stage_title(pages[0])!r}"
            # The check can fail: a page that does not exist shows the dialog it looks for.
            open_page(pages[1], fresh + "/no-such-page")
            assert bs.page_not_found_seen(pages[1]), "an unknown page showed no 'Page not found': the check is blind"
    finally:
        for context in contexts:
            context.close()


def test_a_clickers_key_closes_the_page_not_found_dialog_over_a_slide(server, browser):
    """A link with a mistyped page ("/work-it-by-hand") opens the main page under Streamlit's "Page not found"
    dialog, which stayed over every slide the clicker went on to: its first key closes it, the next takes a step."""
    context, page = new_page(browser)
    dialog = page.locator(bs.DIALOG).filter(has_text=bs.PAGE_NOT_FOUND)
    try:
        open_page(page, server + "/work-it-by-hand?presenter=true", FIRST_LOAD_MS)
        dialog.first.wait_for(timeout=LOAD_MS)
        moved = f"p => location.href !== p || document.querySelector({bs.MAIN!r}).scrollTop > 0"
        path = page.url
        page.keyboard.press("PageDown")
        dialog.first.wait_for(state="detached", timeout=5_000)
        page.wait_for_timeout(500)
        assert not page.evaluate(moved, path), "the key that closed the dialog took no step under it"
        page.keyboard.press("PageDown")  # (Start here, the main page: it goes on down the slide)
        page.wait_for_function(moved, arg=path, timeout=LOAD_MS)
        assert not dialog.count()
    finally:
        context.close()


def _followed_token(page) -> str:
    token = page.locator(f'{bs.SIDEBAR} input[aria-label*="Query token"]')
    return token.first.input_value()


def test_short_link_is_rewritten_and_restores_in_a_new_session(server, browser):
    context, page = new_page(browser)
    try:
        open_page(page, server + "/step-through?step=6&token=2", FIRST_LOAD_MS)
        try:
            page.wait_for_function("() => new URLSearchParams(location.search).get('step') === 'softmax'",
                                   timeout=10_000)
        except sync_api.TimeoutError:
            pass
        query = address_query(page)
        assert query.get("step") == ["softmax"], f"the address bar was not rewritten to step=softmax: {page.url}"
        assert query.get("token") == ["2"], f"token=2 was not kept in the address bar: {page.url}"
        stage, token = bs.stage_title(page), _followed_token(page)
        assert stage == STAGES[5].title
        assert token.startswith("2"), f"the followed token is {token!r}, not the second one"
        copied = page.url
    finally:
        context.close()

    context, page = new_page(browser)
    try:
        open_page(page, copied)
        assert (bs.stage_title(page), _followed_token(page)) == (stage, token), f"{copied} did not restore the view"
        assert address_query(page).get("step") == ["softmax"] and address_query(page).get("token") == ["2"], page.url
    finally:
        context.close()
