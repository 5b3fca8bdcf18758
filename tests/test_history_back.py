"""The browser keeps a student's settings: through the Back and Forward buttons, and through pages without them.

Going to another page, Streamlit adds history entries without the page's settings, and on Back it lets the
address decide: every setting bound to the address went back to its default there (a typed sentence, the number
of heads), and an entry of another page lost the sidebar's settings too. ``url_state.restore_left_link`` puts
back the entry's values, or the page's last values for an entry without any. In a real browser, since only a
browser makes those entries.
"""

from __future__ import annotations

import re

from urllib.parse import parse_qs, urlsplit

import pytest

import browser_support as bs

from attention_ui.text import STAGES


pytestmark = pytest.mark.skipif(not bs.browser_available(), reason=bs.NO_BROWSER)
LOAD_MS = 90_000
SENTENCE = "the dog chased the red ball across the wide green field"
SENTENCE_BOX = 'section[data-testid="stSidebar"] input[aria-label="Sentence"]'


@pytest.fixture(scope="module")
def tab(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.base_url = server
    yield page
    page.close()


def settle(page) -> None:
    page.wait_for_timeout(600)  # the run a history step starts
    bs.wait_for_app_idle(page, timeout=LOAD_MS)


def next_stages(page, count: int) -> None:
    for _ in range(count):
        bs.click_stage_button(page, "next", timeout=LOAD_MS)
        settle(page)


def sidebar_link(page, title: str):
    return page.locator(f'section[data-testid="stSidebar"] a:has-text("{title}")').first


def test_back_and_forward_keep_the_sentence_and_go_back_a_stage(tab):
    tab.goto(f"{tab.base_url}/masks")
    settle(tab)
    box = tab.locator(SENTENCE_BOX)
    box.fill(SENTENCE)
    box.press("Enter")
    settle(tab)
    sidebar_link(tab, "Step through").click()
    settle(tab)
    next_stages(tab, 2)
    assert bs.stage_in_url(tab) == "scores"
    sidebar_link(tab, "Multi-head").click()
    settle(tab)
    assert "/multi-head" in tab.url and box.input_value() == SENTENCE

    seen = []
    for _ in range(12):  # back through Streamlit's own entries to the stages and the Masking page
        tab.go_back()
        settle(tab)
        seen.append((tab.url.split("?")[0].rsplit("/", 1)[-1], bs.stage_in_url(tab)))
        assert box.input_value() == SENTENCE, f"the sentence was lost going back: {seen}"
        if seen[-1][0] == "masks":
            break
    step_through = [stage for page, stage in seen if page == "step-through"]
    assert "scores" in step_through and "qkv" in step_through, seen  # Back goes back a stage too
    assert seen[-1][0] == "masks", seen

    tab.go_forward()
    settle(tab)
    assert box.input_value() == SENTENCE


def test_back_from_another_page_lands_on_the_stage_that_was_left(tab):
    """Leaving the step-through, Streamlit adds an entry of it that keeps the sentence but not the stage: Back from
    the next page showed stage 1 there (twice), and a lecturer had to find the stage again."""
    tab.goto(f"{tab.base_url}/step-through?sentence=the+dog+ran+home&step=qkv")
    settle(tab)
    next_stages(tab, 2)
    assert bs.stage_in_url(tab) == "scaled"
    sidebar_link(tab, "Masking").click()
    settle(tab)
    back_to(tab, "/step-through")
    assert bs.stage_in_url(tab) == "scaled" and bs.stage_title(tab) == STAGES[3].title



def back_to(tab, path: str, presses: int = 3) -> None:
    """The browser's Back until the page at ``path`` shows, at most ``presses`` times (a switch's entries were
    several before a page switch added one)."""
    for _ in range(presses):
        tab.go_back()
        settle(tab)
        if path in tab.url:
            break
    assert path in tab.url, tab.url


LEFT_FOR_THE_APP = "data:text/html,<title>before</title>another site"


def test_a_freshly_opened_link_adds_one_history_entry_and_back_leaves_the_page_at_once(tab):
    """Streamlit's browser side makes a history entry of every address change the server sends, and opening a link
    sent one per setting written back (a short form, a default left out, a bad value dropped): this link left seven
    entries with fewer and fewer settings, and Back walked through them before it left the page. Now the opened
    entry holds the written address, and Back from the next stage returns to it."""
    tab.goto(LEFT_FOR_THE_APP)
    before = tab.evaluate("history.length")
    tab.goto(f"{tab.base_url}/step-through?sentence=the+dog+ran+home&d_model=8&heads=2&head=head+2&step=6"
             "&token=2%C2%B7dog&seed=x")
    settle(tab)
    assert tab.evaluate("history.length") == before + 1
    query = parse_qs(urlsplit(tab.url).query)
    assert query == {"sentence": ["the dog ran home"], "head": ["2"], "step": ["softmax"], "token": ["2"]}, tab.url
    assert bs.stage_title(tab) == STAGES[5].title
    assert "seed" in tab.locator(bs.MAIN).inner_text()  # the dropped value's note
    next_stages(tab, 1)
    assert bs.stage_in_url(tab) == "context" and tab.evaluate("history.length") == before + 2
    tab.go_back()
    settle(tab)
    assert bs.stage_in_url(tab) == "softmax" and bs.stage_title(tab) == STAGES[5].title
    assert parse_qs(urlsplit(tab.url).query) == query, tab.url
    tab.go_back()
    tab.wait_for_url(lambda url: url.startswith("data:"), timeout=10_000)


SWITCH_LINK = "sentence=the+dog+ran+home&mask=causal&seed=3&head=2&token=2&step=qkv"
"""Step-through settings, several of them bound to the sidebar's widgets, that a page switch carries along."""


def go_to_masking(page, way: str) -> None:
    if way == "sidebar":
        sidebar_link(page, "Masking").click()
    elif way == "top navigation":
        page.get_by_text("One attention layer", exact=True).click()
        page.locator('a[href$="/masks"]').last.click()
    else:  # Work it by hand's "Next on the path" link goes to Multi-head, Multi-head's to Masking
        page.locator('[data-testid="stPageLink"] a:has-text("Next on the path")').last.click()
    settle(page)
    page.wait_for_timeout(500)  # an entry written late would show now
    settle(page)


@pytest.mark.parametrize("way", ["sidebar", "top navigation", "path link"])
def test_a_page_switch_adds_one_history_entry_and_one_back_returns_to_the_page_left(tab, way):
    """Streamlit's browser side made an entry of every address change a page switch's first run sent: the page
    left without its settings, then that page again with one more setting for each widget the new page drew, and
    only then the new page (seven entries for five settings); Back walked through them. A page switch now adds
    the new page's entry only, holding its final address, and Back returns to the page left as it was."""
    start, left = ("multi-head", None) if way == "path link" else ("step-through", "scaled")
    presenter = "presenter=true&" if way == "top navigation" else ""
    tab.goto(f"{tab.base_url}/{start}?{presenter}{SWITCH_LINK}")
    settle(tab)
    if left:
        next_stages(tab, 2)
        assert bs.stage_in_url(tab) == left
    address = parse_qs(urlsplit(tab.url).query)
    before = tab.evaluate("history.length")
    go_to_masking(tab, way)
    assert "/masks" in tab.url, tab.url
    assert tab.evaluate("history.length") == before + 1, tab.url
    masking = parse_qs(urlsplit(tab.url).query)
    for key in ("sentence", "mask", "seed", "token"):
        assert masking.get(key) == address[key], (key, tab.url)
    tab.go_back()
    settle(tab)
    assert f"/{start}?" in tab.url and parse_qs(urlsplit(tab.url).query) == address, tab.url
    if left:
        assert bs.stage_title(tab) == STAGES[3].title
    if not presenter:
        assert tab.locator(SENTENCE_BOX).input_value() == "the dog ran home"
    tab.go_forward()
    settle(tab)
    assert "/masks" in tab.url and parse_qs(urlsplit(tab.url).query) == masking, tab.url
    assert tab.evaluate("history.length") == before + 1


def generation_step_shown(page) -> str:
    """The step Generation's progress line names, e.g. "4" for "Step 4 of 4: …"."""
    text = page.locator('[data-testid="stProgress"]').first.inner_text()
    found = re.search(r"[Ss]tep (\d+) of", text)  # (a slide's line: "1 · The cache at step 4 of 4: …")
    return found.group(1) if found else text


def test_back_from_another_page_lands_on_the_generation_step_that_was_left(tab):
    """Back on Generation kept the step the page was at (an entry's step was not read), and an entry's step could
    not be read as long as the page left it out at step 1: the entry Streamlit adds on leaving the page (the
    sentence without the step) would have read as step 1. The step is now always in the address."""
    tab.goto(f"{tab.base_url}/generation?sentence=the+dog+ran+home&generation_step=2")
    settle(tab)
    for _ in range(2):
        tab.locator(".st-key-generation_next button").click()
        settle(tab)
    assert "generation_step=4" in tab.url and generation_step_shown(tab) == "4"
    sidebar_link(tab, "Masking").click()
    settle(tab)
    back_to(tab, "/generation")
    assert generation_step_shown(tab) == "4" and "generation_step=4" in tab.url, tab.url
    seen = []
    for _ in range(3):  # past Streamlit's other entry of the page left, Back goes back a step
        tab.go_back()
        settle(tab)
        seen.append(generation_step_shown(tab))
        if seen[-1] != "4":
            break
    assert seen[-1] == "3" and "generation_step=3" in tab.url, (seen, tab.url)


def test_the_followed_token_survives_a_page_without_the_follow_control(tab):
    """Work it by hand has no "Query token to follow": going through it reset the followed token to 1 (Streamlit
    drops a widget's value on a page that does not draw it), while the mask and the sentence were kept."""
    tab.goto(f"{tab.base_url}/step-through?step=softmax&token=5")
    settle(tab)
    for title in ("Work it by hand", "Multi-head"):
        sidebar_link(tab, title).click()
        settle(tab)
    assert "/multi-head" in tab.url and "token=5" in tab.url


def chart_rows(page) -> str:
    """The first two row labels of the page's first chart, e.g. "1·The,2·animal": which sentence it shows."""
    return page.evaluate("""() => [...document.querySelectorAll('.vega-embed svg .role-axis-label text')]
                                  .slice(0, 2).map(t => t.textContent).join(',')""")


def test_in_presenter_mode_back_keeps_the_lecturers_sentence(tab):
    """On a slide the pages are in menus at the top, and the history entries Streamlit adds when the page changes
    keep ``presenter=true``: Back took that for the page's own settings and showed the default sentence."""
    sentence = "The animal didn't cross the street because it was too tired"
    tab.goto(f"{tab.base_url}/step-through?presenter=true&sentence={sentence.replace(' ', '+')}&step=scaled")
    settle(tab)
    assert chart_rows(tab).startswith("1·The,2·animal")
    for href in ("multi-head", "masks"):
        tab.get_by_text("One attention layer", exact=True).click()
        tab.locator(f'a[href$="/{href}"]').last.click()
        settle(tab)
        assert chart_rows(tab).startswith("1·The,2·animal"), href
    seen = []
    for _ in range(8):
        tab.go_back()
        settle(tab)
        seen.append((tab.url.split("?")[0].rsplit("/", 1)[-1], chart_rows(tab)))
        if seen[-1][0] == "step-through" and seen[-1][1] and not seen[-1][1].startswith("x"):
            break
    assert all("2·cat" not in rows for _, rows in seen), f"the default sentence came back: {seen}"


def test_the_last_slides_arrow_key_opens_the_next_page_and_back_returns_to_the_slide(tab):
    tab.goto(f"{tab.base_url}/step-through?presenter=true&step=output&sentence=Hello+brave+new+world")
    settle(tab)
    tab.evaluate("() => document.activeElement && document.activeElement.blur()")  # as a clicker's keys find it
    tab.keyboard.press("ArrowRight")
    tab.wait_for_url("**/by-hand?**", timeout=LOAD_MS)
    settle(tab)
    assert tab.locator('[data-testid="stMain"] h1').first.inner_text() == "Work it by hand"
    assert "presenter=true" in tab.url
    tab.go_back()
    settle(tab)
    assert tab.url.split("?")[0].endswith("/step-through") and bs.stage_in_url(tab) == "output"
    labels = tab.evaluate("() => [...document.querySelectorAll('.vega-embed svg .role-axis-label text')]"
                          ".map(t => t.textContent)")
    assert "1·Hello" in labels and "4·world" in labels, labels
