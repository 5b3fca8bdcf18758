"""Real-browser checks: run ``streamlit run app.py`` and drive it with headless Chromium.

Pages are discovered from the app's navigation, so every page that exists is covered
without naming it here. The first navigation entry (the default page, served at ``/``)
is the home page: it must show a headline (``st.title``) or a chart. Every other page
must draw at least one Altair/Vega-Lite chart. No page may show an exception box.

Skips (with the reason) when Playwright is not importable or no Chromium is found
(set ``CHROMIUM_PATH`` to point at one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from attention_ui.hand import DEFAULT_SIZES, hand_shapes
from attention_ui.progress import STORAGE_KEY
from attention_ui.url_state import encode_hand

import browser_support as bs

pytestmark = pytest.mark.browser

sync_api = bs.require_browser()

FIRST_LOAD_TIMEOUT_MS = 90_000  # the first run imports torch and may load a model
LOAD_TIMEOUT_MS = 60_000
CHART_TIMEOUT_MS = 15_000
SLIDER = f'{bs.SIDEBAR} input[type="range"]'
SENTENCE_LABEL = re.compile("sentence", re.IGNORECASE)
# Short enough (about 20 tokens) that the app should accept it and draw its charts.
XSS_PAYLOAD = "<b>bold</b> <script>window.__xss=1</script> hi"

# Uncaught errors the browser reports that are not the app's fault.
BENIGN_PAGE_ERRORS = ("ResizeObserver loop",)


@dataclass
class PageReport:
    label: str
    url: str
    is_home: bool
    exceptions: list[str] = field(default_factory=list)
    charts: int = 0
    headline: str = ""
    has_slider: bool = False
    has_sentence: bool = False
    page_errors: list[str] = field(default_factory=list)
    load_error: str = ""
    path_links: list[tuple[str, str]] = field(default_factory=list)  # (words, address) of "Next on the path" links

    def problems(self) -> list[str]:
        out = []
        if self.load_error:
            out.append(f"did not finish loading: {self.load_error}")
        for text in self.exceptions:
            out.append(f"shows an exception box (stException): {text!r}")
        if self.is_home:
            if not self.charts and not self.headline:
                out.append("home page shows neither a headline (st.title) nor a drawn chart")
        elif not self.charts and not self.exceptions:
            out.append(
                f"draws no chart: no [data-testid=\"stVegaLiteChart\"] with an svg/canvas appeared "
                f"within {CHART_TIMEOUT_MS // 1000}s"
            )
        for err in self.page_errors:
            out.append(f"uncaught JavaScript error: {err}")
        return out


def _collect_page_errors(page) -> list[str]:
    errors: list[str] = []

    def on_error(exc) -> None:
        text = str(exc)
        if not any(b in text for b in BENIGN_PAGE_ERRORS):
            errors.append(text.splitlines()[0][:300] if text else repr(exc))

    page.on("pageerror", on_error)
    return errors


def _exception_texts(page) -> list[str]:
    boxes = page.locator(bs.EXCEPTION)
    return [" ".join((boxes.nth(i).inner_text() or "").split())[:400] for i in range(boxes.count())]


def _headline(page) -> str:
    h1 = page.locator(f"{bs.MAIN} h1")
    return (h1.first.inner_text() or "").strip() if h1.count() else ""


def _sentence_box(page):
    """The sidebar text input / text area whose label contains "Sentence", or None."""
    sidebar = page.locator(bs.SIDEBAR)
    box = sidebar.get_by_label(SENTENCE_LABEL).and_(sidebar.locator("input[type='text'], textarea"))
    if box.count():
        return box.first
    # Fallback: match the widget container by its visible label.
    for testid, inner in (("stTextInput", "input"), ("stTextArea", "textarea")):
        widget = sidebar.locator(f'[data-testid="{testid}"]').filter(
            has=page.locator('[data-testid="stWidgetLabel"]', has_text=SENTENCE_LABEL)
        )
        if widget.count():
            return widget.first.locator(inner).first
    return None


def _load(page, url: str, timeout_ms: int = LOAD_TIMEOUT_MS) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    bs.wait_for_app_idle(page, timeout=timeout_ms)




@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport=bs.VIEWPORT)
    context.set_default_timeout(LOAD_TIMEOUT_MS)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="module")
def site(server, browser) -> list[PageReport]:
    """Visit the home page and every page in the navigation once; report what each shows."""
    context = browser.new_context(viewport=bs.VIEWPORT)
    context.set_default_timeout(LOAD_TIMEOUT_MS)
    pg = context.new_page()
    errors = _collect_page_errors(pg)
    try:
        home_url = server + "/"
        try:
            _load(pg, home_url, FIRST_LOAD_TIMEOUT_MS)  # first run: imports torch, warms caches
        except Exception as exc:
            pytest.fail(f"the home page ({home_url}) did not finish its first run: {exc}" + bs.server_log(server))
        nav = bs.discover_pages(pg)
        targets: list[tuple[str, str, bool]] = []
        for i, (label, href) in enumerate(nav):
            targets.append((label, href, i == 0 or urlsplit(href).path in ("", "/")))
        if not any(is_home for _, _, is_home in targets):
            targets.insert(0, ("home", home_url, True))

        reports = []
        for i, (label, url, is_home) in enumerate(targets):
            report = PageReport(label=label, url=url, is_home=is_home)
            seen_errors = 0 if i == 0 else len(errors)
            try:
                if i > 0 or urlsplit(url).path not in ("", "/"):  # the home page is already loaded
                    _load(pg, url)
                report.exceptions = _exception_texts(pg)
                report.headline = _headline(pg)
                report.charts = bs.count_drawn_charts(pg)
                needs_chart = not is_home or not report.headline
                if needs_chart and not report.charts and not report.exceptions:
                    report.charts = bs.wait_for_charts(pg, CHART_TIMEOUT_MS)
                if report.charts:
                    pg.wait_for_timeout(300)  # let sibling charts finish drawing
                    report.charts = bs.count_drawn_charts(pg)
                report.has_slider = pg.locator(SLIDER).count() > 0
                report.has_sentence = _sentence_box(pg) is not None
                links = pg.locator("[data-testid='stPageLink'] a").filter(has_text=PATH_LINK)
                report.path_links = [(a.inner_text().strip(), urlsplit(a.get_attribute("href") or "").path)
                                     for a in links.all()]
            except Exception as exc:  # keep going: report every page, not just the first bad one
                report.load_error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                try:
                    report.exceptions = _exception_texts(pg)
                except Exception:
                    pass
            report.page_errors = errors[seen_errors:]
            reports.append(report)
        return reports
    finally:
        context.close()


def test_every_page_renders_without_exception_and_draws_charts(site, server):
    failures = [f"  {r.label} ({r.url}): {p}" for r in site for p in r.problems()]
    summary = ", ".join(f"{r.label}{' [home]' if r.is_home else ''}: {r.charts} chart(s)" for r in site)
    assert not failures, (
        f"{len(failures)} problem(s) across {len(site)} page(s):\n"
        + "\n".join(failures)
        + f"\n(pages: {summary})"
        + (bs.server_log(server) if any(r.exceptions or r.load_error for r in site) else "")
    )


PATH_LINK = re.compile(r"Next on the path|The end of the path")


def test_every_lesson_page_ends_with_the_next_page_on_the_path(site):
    """Drawn by app.py after a page's own run (AppTest runs a page file alone, without it): Only Step through's last
    stage led on before, and What it costs and Generation stopped before their end."""
    from attention_ui.text import LEARNING_PATH

    urls = [paths[0] for _, paths, *_ in LEARNING_PATH]
    checked = 0
    for report in site:
        path = urlsplit(report.url).path.strip("/") or "overview"
        if path in ("start-here", "step-through") or path not in urls and path != "home":
            assert not report.path_links, (report.label, report.path_links)
            continue
        here = urls.index("overview" if path == "home" else path)
        expected = urls[here + 1] if here + 1 < len(urls) else "start-here"
        assert [href.strip("/") for _, href in report.path_links] == [expected], (report.label, report.path_links)
        checked += 1
    assert checked == len(urls) - 1, "every lesson page but Step through was visited"


def test_sidebar_slider_step_reruns_and_updates_url(site, page, server):
    report = next((r for r in site if r.has_slider and not r.load_error), None)
    if report is None:
        pytest.skip(f"no page has a sidebar slider ({SLIDER}); pages seen: {[r.label for r in site]}")
    errors = _collect_page_errors(page)
    _load(page, report.url)
    slider = page.locator(SLIDER).first
    label = slider.get_attribute("aria-label") or "(unlabelled)"
    before_url, before_value = page.url, slider.input_value()
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(100)
    if slider.input_value() == before_value:  # already at its maximum: step down instead
        page.keyboard.press("ArrowLeft")
    bs.wait_for_app_idle(page)
    after_value = slider.input_value()
    assert after_value != before_value, (
        f"{report.label}: slider {label!r} did not move with the arrow keys (value stayed {before_value})"
    )
    try:  # the URL is updated by the frontend after the rerun; give it a moment
        page.wait_for_function("u => window.location.href !== u", arg=before_url, timeout=5_000)
    except sync_api.TimeoutError:
        pass
    assert page.url != before_url, (
        f"{report.label}: moving sidebar slider {label!r} from {before_value} to {after_value} did not change "
        f"the URL ({before_url}); settings should live in st.query_params (e.g. bind=\"query-params\" with a key) "
        f"so a link restores them"
    )
    exceptions = _exception_texts(page)
    assert not exceptions, (
        f"{report.label}: exception after moving slider {label!r}: {exceptions}" + bs.server_log(server)
    )
    if report.charts:
        charts = bs.wait_for_charts(page, CHART_TIMEOUT_MS)
        assert charts, f"{report.label}: charts disappeared after moving slider {label!r}"
    assert not errors, f"{report.label}: uncaught JavaScript error(s) after moving the slider: {errors}"


def test_sentence_markup_is_shown_as_text_not_html(site, page, server):
    report = next((r for r in site if r.has_sentence and not r.load_error), None)
    if report is None:
        pytest.skip(
            "no page has a sidebar text input or text area labelled 'Sentence'; "
            f"pages seen: {[r.label for r in site]}"
        )
    errors = _collect_page_errors(page)
    _load(page, report.url)
    box = _sentence_box(page)
    assert box is not None, f"{report.label}: the 'Sentence' input vanished on reload"
    is_textarea = box.evaluate("el => el.tagName.toLowerCase()") == "textarea"
    box.fill(XSS_PAYLOAD)
    box.press("Control+Enter" if is_textarea else "Enter")
    page.wait_for_timeout(100)
    bs.wait_for_app_idle(page)
    exceptions = _exception_texts(page)
    assert not exceptions, (
        f"{report.label}: exception after entering a sentence with markup: {exceptions}" + bs.server_log(server)
    )
    if report.charts:  # the sentence must really have been drawn, or this test proves nothing
        alerts = page.locator(f'{bs.MAIN} [data-testid="stAlert"]')
        alert_texts = [" ".join(alerts.nth(i).inner_text().split()) for i in range(alerts.count())]
        assert bs.wait_for_charts(page, CHART_TIMEOUT_MS), (
            f"{report.label}: no chart was drawn for the sentence {XSS_PAYLOAD!r}"
            + (f"; the page says: {alert_texts}" if alert_texts else "")
        )
    page.wait_for_timeout(300)
    xss = page.evaluate("() => window.__xss")
    assert xss is None, f"{report.label}: markup typed into the sentence box ran as script (window.__xss={xss})"
    injected = page.evaluate(
        """(main) => {
            const root = document.querySelector(main) || document.body;
            return {
                bold: Array.from(root.querySelectorAll('b')).filter(b => b.textContent.trim() === 'bold').length,
                img: root.querySelectorAll('img[src="x"]').length,
                script: Array.from(root.querySelectorAll('script'))
                    .filter(s => s.textContent.includes('__xss')).length,
            };
        }""",
        bs.MAIN,
    )
    assert not any(injected.values()), (
        f"{report.label}: the sentence was rendered as HTML in the main area {injected}; "
        "show user text with st.text/st.code or escape it (never unsafe_allow_html with user input)"
    )
    assert not errors, f"{report.label}: uncaught JavaScript error(s) after entering markup: {errors}"


CARD_FONTS_JS = """() => [...document.querySelectorAll('[class*="st-key-path_card_"]')].map(card => {
  const size = el => el ? parseFloat(getComputedStyle(el).fontSize) : null;
  const title = card.querySelector('[data-testid="stPageLink"] p');
  const text = [...card.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
      .find(p => !p.closest('[data-testid="stPageLink"]') && !p.closest('[data-testid="stCaptionContainer"]')
                 && !p.querySelector('[role="img"]'));  // (not the done/started mark beside it: an icon)
  return {title: title && title.innerText, titlePx: size(title), textPx: size(text),
          weight: title ? parseInt(getComputedStyle(title).fontWeight) : null};
})"""


def test_every_start_here_card_title_is_larger_and_bolder_than_its_text(page, server):
    """The titles ("1. Overview") were smaller than the sentence under them."""
    _load(page, f"{server}/start-here")
    cards = page.evaluate(CARD_FONTS_JS)
    assert len(cards) >= 10, cards
    assert cards[0]["title"].startswith("1. ")
    for card in cards:
        assert card["titlePx"] > card["textPx"] and card["weight"] >= 600, card


_FOREIGN_REFERENCES_JS = """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] [fill^='url(']")]
    .map((element) => element.getAttribute('fill'))
    .filter((fill) => !fill.startsWith('url(#') && !fill.startsWith(`url(${location.href.split('#')[0]}#`))"""
"""Fills of chart marks that refer to a gradient in another document than the page's current address."""


def test_colour_bars_stay_when_the_address_changes(page, server):
    """Vega writes a colour bar's gradient as url(<the page's address>#gradient_3). Streamlit changes the address's
    query whenever a setting bound to it changes; every chart not drawn again since (Work it by hand's tabs 2-4, any
    chart whose numbers stayed) then showed "4" and "−4" with no colour bar between them."""
    _load(page, f"{server}/by-hand")
    assert page.evaluate("() => document.querySelectorAll(`[fill^='url(']`).length") >= 4, "no colour bars drawn"
    page.evaluate("() => history.replaceState(null, '', location.pathname + '?heads=2')")  # as Streamlit does
    page.get_by_role("tab", name="2 · Scale by √d_k").click()
    page.wait_for_timeout(500)
    assert page.evaluate(_FOREIGN_REFERENCES_JS) == []


_MAIN_SCROLL_JS = "() => document.querySelector('[data-testid=stMain]').scrollTop"


def test_a_page_opened_from_the_navigation_starts_at_its_top(page, server):
    """The main column is one element from page to page, and a page opened from the sidebar while the one before was
    scrolled to its foot often kept that scroll: Start here opened at its foot, its list of pages above the window
    (What it costs → Start here, twice out of two; Order and position → Start here, once out of two)."""
    landed = []
    for before in ("what-it-costs", "order-and-position") * 2:
        _load(page, f"{server}/{before}")
        page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 100000)")
        page.wait_for_function(f"() => ({_MAIN_SCROLL_JS})() > 800")
        page.locator('[data-testid="stSidebarNav"] a:has-text("Start here")').first.click()
        page.wait_for_url("**/start-here*", timeout=LOAD_TIMEOUT_MS)
        bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
        landed.append((before, page.evaluate(_MAIN_SCROLL_JS)))
    assert all(top == 0 for _, top in landed), landed


_TITLES_JS = "() => [...document.querySelectorAll('[data-testid=stVegaLiteChart] g.role-title-text text')]" \
    ".map(t => t.textContent)"


def test_a_charts_title_is_not_cut_to_the_size_of_the_chart_drawn_there_before(page, server):
    """After a sentence of one word, the next sentence's bar charts kept titles cut to one bar's width: Real model's
    "what 1·[CLS] att…", the step-through's heatmap "attention weights …"."""
    _load(page, f"{server}/step-through?step=softmax&sentence=Hi")
    bs.wait_for_all_charts(page)
    box = _sentence_box(page)
    box.fill("The quick brown fox jumps over the lazy dog again today")
    box.press("Enter")
    page.wait_for_function("() => document.querySelectorAll("  # the new sentence's charts are drawn
                           "'[data-testid=stVegaLiteChart] g.role-axis-label text').length > 40")
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    bs.wait_for_all_charts(page)
    titles = page.evaluate(_TITLES_JS)
    assert "softmax weights" in titles and not [t for t in titles if t.endswith("…")], titles


def _step_through_caption(page) -> str:
    return next(text for text in page.locator("[data-testid=stCaptionContainer]").all_inner_texts()
                if "stages looked at" in text)


def test_a_link_s_settings_stay_in_the_address_on_the_next_page(page, browser, server):
    """A lecturer opened a link with the lecture's sentence, heads and mask, and went on to the next page: the page
    kept them, but the address bar dropped them (Streamlit writes a setting back there only when it was set on the
    page), so the link copied from it opened on "The cat sat on the mat." for the class. Settings typed in the
    sidebar were kept all along."""
    sentence = "The animal did not cross the street"
    _load(page, f"{server}/masks?sentence={quote(sentence)}&heads=4&mask=causal")
    page.locator(".st-key-path_link a").click()
    page.wait_for_url("**/why-scaling*", timeout=LOAD_TIMEOUT_MS)
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    query = parse_qs(urlsplit(page.url).query)
    assert (query.get("sentence"), query.get("heads"), query.get("mask")) == ([sentence], ["4"], ["causal"]), page.url
    context = browser.new_context(viewport=bs.VIEWPORT)
    try:
        copied = context.new_page()
        _load(copied, page.url)
        box = copied.locator(".st-key-sentence textarea, .st-key-sentence input").first
        assert box.input_value() == sentence
    finally:
        context.close()


_COUNT_RUNS_JS = """window.__runs = 0; new MutationObserver(() => {
  const state = document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state');
  if (state === 'running' && window.__lastState !== 'running') window.__runs += 1;
  window.__lastState = state; }).observe(document, {subtree: true, attributes: true, childList: true});"""


def test_a_first_visit_runs_the_page_once_and_a_return_visit_brings_its_record(page, server):
    """The progress store reported the browser's record on every page load, an empty one too, and that report ran
    the page a second time: a first visitor's page ran twice (twice the server's work when a class opens a link at
    once), and a clicker key pressed during the second run was lost. With nothing stored there is no report now; a
    return visit still brings its record (Start here counts the stage seen before the reload)."""
    page.add_init_script(_COUNT_RUNS_JS)
    _load(page, f"{server}/step-through?step=3")
    page.wait_for_timeout(1500)  # a report comes after the first run
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    assert page.evaluate("window.__runs") == 1, "a first visit ran the page more than once"
    _load(page, f"{server}/start-here")  # a new page load: the session is new, and the stored record is reported
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stCaptionContainer]')]"
                           ".some(c => c.innerText.startsWith('1 of 9 stages looked at'))", timeout=LOAD_TIMEOUT_MS)
    # (its rerun may merge with the page's first run when it comes early, so the runs are not counted here)


_STAGE_COUNTS_JS = """window.__counts = []; new MutationObserver(() => {
  for (const c of document.querySelectorAll('[data-testid=stCaptionContainer]')) {
    const text = c.innerText;
    if (/You have looked at|Reading what you have done/.test(text) && window.__counts.at(-1) !== text)
      window.__counts.push(text);
  } }).observe(document, {subtree: true, childList: true, characterData: true});"""


def test_a_reload_never_counts_the_stages_without_the_browser_s_record(page, server):
    """A reload of Step through said "You have looked at 1 of 9 stages" for two or three seconds, until the
    browser's record reached the new session, and then "3 of 9". The count now waits for the record (a cookie tells
    the new session one is coming); with the record gone from the browser the page does not wait for ever."""
    _load(page, f"{server}/step-through?step=3")
    bs.click_stage_button(page, "Next")
    page.add_init_script(_STAGE_COUNTS_JS)
    _load(page, f"{server}/step-through?step=5")
    page.wait_for_function("() => window.__counts.at(-1)?.startsWith('You have looked at')", timeout=LOAD_TIMEOUT_MS)
    counts = page.evaluate("window.__counts")
    assert [c for c in counts if c.startswith("You have looked at")] == [
        "You have looked at 3 of 9 stages (kept in this browser)."], counts
    page.evaluate(f"window.localStorage.removeItem({STORAGE_KEY!r})")  # the record gone, its cookie left
    _load(page, f"{server}/step-through?step=5")
    page.wait_for_function("() => window.__counts.at(-1)?.startsWith('You have looked at 1 of 9')",
                           timeout=LOAD_TIMEOUT_MS)


def _open_with_a_record_and_late_code(page, url: str, control: str) -> None:
    """Open ``url`` in a browser that holds a progress record (its report reruns the page), with the code of
    Streamlit's ``control`` (e.g. ``Selectbox``) held back until 2.5 s after the page's first run, as on a slow
    machine or network."""
    page.add_init_script(f"localStorage.setItem({STORAGE_KEY!r}, JSON.stringify({{pages_visited: ['overview']}}))")
    held = []
    page.route(f"**/{control}.*.js", lambda route: held.append(route))
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function("() => !!document.querySelector('.st-key-progress_store') && document.querySelector("
                           "'[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'",
                           timeout=FIRST_LOAD_TIMEOUT_MS)
    page.wait_for_timeout(2500)
    assert held, f"the page asked for no {control} code"
    for route in held:
        route.continue_()
    page.unroute(f"**/{control}.*.js")
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)


def test_a_links_stage_holds_when_the_stage_menu_is_drawn_late(page, server):
    """A lecturer opened a link at stage 4, ticked "Also show the softmax without ÷√d_k", and the slide went to
    stage 1 (now and then: 4 tries in 8 on a busy machine). The browser's stored record reruns the stage's part of
    the page just after its first run; when the stage menu's code came after that rerun, the menu took its first
    stage, and the next click sent that to the server."""
    _open_with_a_record_and_late_code(page, f"{server}/step-through?step=scaled", "Selectbox")
    assert page.locator(bs.STAGE_SELECT).input_value().startswith("4"), "the stage menu shows another stage"
    page.get_by_text("Also show the softmax without").first.click()
    page.wait_for_function("() => location.search.includes('unscaled=true')", timeout=LOAD_TIMEOUT_MS)
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    assert parse_qs(urlsplit(page.url).query).get("step") == ["scaled"], page.url
    assert page.locator(bs.STAGE_SELECT).input_value().startswith("4")


def test_a_links_example_on_work_it_by_hand_holds_when_its_size_boxes_are_drawn_late(page, server):
    """The same on Work it by hand: a link's 2-token example showed 1 token in its size box, and the next change of
    a size cut the example to 1 × 1."""
    sizes = {**DEFAULT_SIZES, "tokens": 2}
    example = {name: [[1.0] * columns for _ in range(rows)] for name, (rows, columns) in hand_shapes(sizes).items()}
    _open_with_a_record_and_late_code(page, f"{server}/by-hand?hand={quote(encode_hand(sizes, example))}",
                                      "NumberInput")
    page.get_by_text("Sizes and mask").first.click()
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    assert page.locator(".st-key-hand-size-tokens input").input_value() == "2"
    d_k = page.locator(".st-key-hand-size-d_k input")
    d_k.fill("3")
    d_k.press("Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('hand')?.split('~')[2] === '3'",
                           timeout=LOAD_TIMEOUT_MS)
    assert page.locator(".st-key-hand-size-tokens input").input_value() == "2"
    assert parse_qs(urlsplit(page.url).query)["hand"][0].split("~")[0] == "2", page.url


def test_start_here_keeps_the_progress_across_a_reload_until_start_again(page, server):
    """Start here's marks lived in the tab's session: a reload, or coming back the next day, lost them all."""
    _load(page, f"{server}/step-through?step=3")
    bs.click_stage_button(page, "Next")  # a Back/Next run is the stage's alone: it is kept too
    _load(page, f"{server}/masks")
    _load(page, f"{server}/start-here")
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stCaptionContainer]')]"
                           ".some(c => c.innerText.startsWith('2 of 9 stages looked at'))", timeout=LOAD_TIMEOUT_MS)
    page.reload()
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stCaptionContainer]')]"
                           ".some(c => c.innerText.startsWith('2 of 9 stages looked at'))", timeout=LOAD_TIMEOUT_MS)
    page.get_by_role("button", name="Start again").click()
    page.get_by_role("button", name="Yes, clear them").click()
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    assert _step_through_caption(page).startswith("0 of 9 stages looked at")
    page.reload()
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(1500)  # the stored record is read after the first run: give it the time to arrive
    bs.wait_for_app_idle(page, timeout=LOAD_TIMEOUT_MS)
    assert _step_through_caption(page).startswith("0 of 9 stages looked at"), "Start again cleared the browser's copy"
