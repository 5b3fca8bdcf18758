"""The progress kept in the browser: what is stored, how a stored record is read back, and (in a real browser,
skipped without Playwright or Chromium) how the browser joins the session's record to the one it has stored."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

try:  # ``tests`` may or may not be a package, and pytest's import mode varies: support both.
    from tests import browser_support as bs
except ImportError:  # pragma: no cover - depends on how pytest set up sys.path
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser_support as bs

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import json
import streamlit as st
from attention_ui import progress
st.session_state.update({session})
progress.restore({saved!r})
st.session_state["snapshot"] = progress.snapshot()
"""

ANSWER = {"stage": "masks", "correct": True, "wrong": 0, "shown": False}


def run(saved: str, session: dict | None = None) -> dict:
    """The session after ``restore(saved)``, as its snapshot (JSON) reads."""
    at = AppTest.from_string(SCRIPT.format(saved=saved, session=repr(session or {})), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return json.loads(at.session_state["snapshot"])


def test_a_stored_record_is_merged_into_the_session():
    stored = {"pages_visited": ["masks", "overview"], "stages_seen": ["scores"], "hand_solved": ["weights"],
              "check_yourself": {"masks-blocked-1a2b": ANSWER,
                                 "masks-why-3c4d": {**ANSWER, "correct": False, "wrong": 2, "shown": True}},
              "page_questions_asked": {"masks": 3, "overview": 2}}
    session = {"pages_visited": {"start-here"}, "stages_seen": {"qkv"},
               "check_yourself": {"masks-why-3c4d": {**ANSWER, "response": "0.5"}},
               "page_questions_asked": {"masks": 4}}
    merged = run(json.dumps(stored), session)
    assert merged["pages_visited"] == ["masks", "overview", "start-here"]
    assert merged["stages_seen"] == ["qkv", "scores"] and merged["hand_solved"] == ["weights"]
    assert merged["check_yourself"] == {"masks-blocked-1a2b": ANSWER, "masks-why-3c4d": ANSWER}, \
        "the session's own answer wins over the stored one"
    assert merged["page_questions_asked"] == {"masks": 4, "overview": 2}


def test_the_stored_record_never_holds_the_text_typed():
    stored = run("", {"check_yourself": {"masks-blocked-1a2b": {**ANSWER, "response": "<b>my answer</b>"}}})
    assert stored["check_yourself"] == {"masks-blocked-1a2b": ANSWER}
    assert "my answer" not in json.dumps(stored)


@pytest.mark.parametrize("saved", [
    "", "not json", "[1, 2]", "null", "{\"pages_visited\": \"masks\"}", "x" * 300_000,
    json.dumps({"pages_visited": [1, None, "", "x" * 500], "stages_seen": {"a": 1},
                "check_yourself": {"q": {**ANSWER, "wrong": -1}, "r": {**ANSWER, "correct": "yes"},
                                   "s": ["masks"], "": ANSWER},
                "page_questions_asked": {"masks": 10 ** 9, "why": "3", "ok": True}}),
])
def test_a_record_this_app_did_not_write_is_left_out(saved):
    """Local storage can hold anything (edited by hand, another version): nothing unreadable reaches the session."""
    assert run(saved, {"pages_visited": {"start-here"}}) == {
        "pages_visited": ["start-here"], "stages_seen": [], "hand_checked_ever": [], "hand_solved": [],
        "check_yourself": {}, "page_questions_asked": {}}


def test_start_again_clears_the_session_and_stores_the_empty_record():
    at = AppTest.from_string("""
import streamlit as st
from attention_ui import progress
st.button("Start again", key="forget_progress", on_click=progress.forget)
st.session_state["snapshot"] = progress.snapshot()
""", default_timeout=60)
    at.session_state["stages_seen"] = {"qkv"}
    at.session_state["check_yourself"] = {"masks-blocked-1a2b": dict(ANSWER)}
    at.run()
    assert json.loads(at.session_state["snapshot"])["stages_seen"] == ["qkv"]
    at.button(key="forget_progress").click().run()
    assert json.loads(at.session_state["snapshot"]) == {
        "pages_visited": [], "stages_seen": [], "hand_checked_ever": [], "hand_solved": [], "check_yourself": {},
        "page_questions_asked": {}}


STORE_SCRIPT = """
import json
import streamlit as st
from attention_ui import progress
st.button("Start again", key="forget_progress", on_click=progress.forget)
st.session_state.setdefault("pages_visited", set()).add("overview")
progress.keep_progress()
"""


def sent_to_store(at: AppTest) -> list[dict]:
    """What each progress store of the last run sends the browser."""
    return [json.loads(element.proto.json) for element in at.get("bidi_component")
            if element.proto.component_name == "progress_store"]


def test_the_first_run_sends_the_session_record_to_store():
    """The record went to the browser only after the browser had reported its own (a rerun about a second after
    a page opened): a visit left before that was not kept. The browser now joins what it is sent to what it has,
    so the first run sends the session's record."""
    at = AppTest.from_string(STORE_SCRIPT, default_timeout=60).run()
    (sent,) = sent_to_store(at)
    assert sent["save"] is not None and json.loads(sent["save"])["pages_visited"] == ["overview"]
    assert sent["replace"] is False, "a new session's record joins the stored one, it does not replace it"


def test_start_again_replaces_the_stored_record_once_and_ignores_a_late_report():
    at = AppTest.from_string(STORE_SCRIPT, default_timeout=60).run()
    at.button(key="forget_progress").click().run()
    (sent,) = sent_to_store(at)
    assert sent["replace"] is True and json.loads(sent["save"])["pages_visited"] == ["overview"]
    at.run()
    assert sent_to_store(at)[0]["replace"] is False, "only the run right after Start again replaces the record"

    late = AppTest.from_string("""
import json
import streamlit as st
from attention_ui import progress
progress.forget()
st.session_state[progress.COMPONENT_KEY] = {"saved": json.dumps({"pages_visited": ["masks"]})}
progress._on_saved()  # the browser's report of the record it had, arriving after Start again
st.session_state["snapshot"] = progress.snapshot()
""", default_timeout=60).run()
    assert not late.exception, [e.value for e in late.exception]
    assert json.loads(late.session_state["snapshot"])["pages_visited"] == [], "Start again came first: it stays"


STEP_THROUGH_RUN = f"""
import streamlit as st
from attention_ui.controls import page_end
page = st.navigation([st.Page({str(ROOT / "pages" / "step_through.py")!r}, url_path="step-through")])
st.session_state.setdefault("pages_visited", set()).add(page.url_path)
page.run()
page_end(page.url_path)  # as app.py runs every page
"""


def test_a_step_through_run_has_one_progress_store_that_keeps_back_and_next():
    """A full run mounted two stores (the stage's, for Back/Next, and the one under every page)."""
    at = AppTest.from_string(STEP_THROUGH_RUN, default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    (sent,) = sent_to_store(at)
    assert json.loads(sent["save"])["stages_seen"] == ["embed"]
    at.button(key="next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (sent,) = sent_to_store(at)
    assert json.loads(sent["save"])["stages_seen"] == ["embed", "qkv"]


# --- in a real browser ------------------------------------------------------------------------------------------


needs_browser = pytest.mark.skipif(not bs.browser_available(), reason=bs.NO_BROWSER)
LOAD_MS = 90_000
STORAGE_KEY = "attention-step-by-step/progress"




@pytest.fixture
def fresh_context(server, browser):
    """A new browser context (its own local storage) whose storage for the app holds ``stored`` (a string)."""
    contexts = []

    def open_context(stored: str):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(LOAD_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{server}/_stcore/health")
        page.evaluate("([key, value]) => localStorage.setItem(key, value)", [STORAGE_KEY, stored])
        page.close()
        return context

    yield open_context
    for context in contexts:
        context.close()


def _stored(page) -> str | None:
    return page.evaluate("(key) => localStorage.getItem(key)", STORAGE_KEY)


def _open_without_the_report(context, url: str):
    """Open ``url`` in a page whose browser never gets its report of the stored record to the server: as if the
    page were left before that report arrived (about a second after opening). Returns the page once the record
    holds this visit (or after 30 s)."""
    page = context.new_page()

    def route(socket):
        server = socket.connect_to_server()

        def from_page(message):
            if b"progress_store" not in (message if isinstance(message, bytes) else message.encode()):
                server.send(message)  # everything but the report, which names the store's state

        socket.on_message(from_page)

    page.route_web_socket("**/_stcore/stream", route)
    page.goto(url)
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    visit = url.rsplit("/", 1)[-1]
    try:
        page.wait_for_function("([key, visit]) => (localStorage.getItem(key) || '').includes('\"' + visit + '\"')",
                               arg=[STORAGE_KEY, visit], timeout=30_000)
    except Exception:  # playwright's TimeoutError: the assertions say what is missing
        pass
    return page


MARKS_JS = """() => Object.fromEntries([...document.querySelectorAll('[class*="st-key-path_card_"]')].map(card =>
    [card.querySelector('[data-testid="stPageLink"] p').innerText, card.querySelector('[role=img]').innerText]))"""


@needs_browser
def test_a_visit_is_kept_before_the_stored_record_reaches_the_server(server, fresh_context):
    """A visit left before the browser's report of its record had come back from the server was not stored;
    the browser now joins the first run's record to what it has, keeping both."""
    answer = {"stage": "scores", "correct": True, "wrong": 1, "shown": False}
    context = fresh_context(json.dumps({"pages_visited": ["by-hand"], "stages_seen": ["qkv"],
                                        "check_yourself": {"step-scores-1a2b": answer},
                                        "page_questions_asked": {"overview": 2}}))
    page = _open_without_the_report(context, f"{server}/overview")
    stored = json.loads(_stored(page))
    page.close()
    assert stored["pages_visited"] == ["by-hand", "overview"], "the visit joins the stored record"
    assert stored["stages_seen"] == ["qkv"] and stored["check_yourself"] == {"step-scores-1a2b": answer}
    assert stored["page_questions_asked"] == {"overview": 3}, "a page's question count is the larger"

    page = context.new_page()
    page.goto(f"{server}/start-here")
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    page.wait_for_function("() => document.body.innerText.includes('1 of 9 stages looked at')", timeout=30_000)
    marks = page.evaluate(MARKS_JS)
    assert marks["1. Overview"] != "radio_button_unchecked" and marks["3. Work it by hand"] != \
        "radio_button_unchecked", marks


HOSTILE_RECORDS = [
    "not json",
    json.dumps(["masks"]),
    json.dumps({"pages_visited": "masks", "stages_seen": {"a": 1}, "check_yourself": ["x"]}),
    json.dumps({"pages_visited": [1, None, "", "x" * 500, "masks"], "__proto__": {"polluted": True},
                "check_yourself": {"__proto__": {"stage": "masks", "correct": True, "wrong": 0, "shown": False},
                                   "q": {"stage": "masks", "correct": "yes", "wrong": 0, "shown": False},
                                   "r": {"stage": "masks", "correct": True, "wrong": 0, "shown": False,
                                         "response": "my secret answer"}},
                "page_questions_asked": {"masks": 10 ** 9, "why": "3", "ok": True, "by-hand": 2}}),
    json.dumps({"pages_visited": ["masks"]}) + " " * 200_000,
]


@needs_browser
def test_the_browser_keeps_nothing_it_cannot_read_and_no_typed_text(server, fresh_context):
    """The join runs in the browser on whatever local storage holds: what restore() would leave out is dropped,
    an answer's text never stays, and a hostile record changes nothing else (no polluted objects)."""
    for number, hostile in enumerate(HOSTILE_RECORDS):
        context = fresh_context(hostile)
        page = _open_without_the_report(context, f"{server}/start-here")
        text = _stored(page)
        assert "my secret answer" not in text and "polluted" not in text, (number, text)
        stored = json.loads(text)
        assert sorted(stored) == ["check_yourself", "hand_checked_ever", "hand_solved", "page_questions_asked",
                                  "pages_visited", "stages_seen"], (number, stored)
        assert "start-here" in stored["pages_visited"], (number, stored)
        assert page.evaluate("() => ({}).polluted === undefined"), number
        if number == 3:
            assert stored["pages_visited"] == ["masks", "start-here"]
            kept = {"stage": "masks", "correct": True, "wrong": 0, "shown": False}
            assert stored["check_yourself"] == {"__proto__": kept, "r": kept}, "kept as restore() keeps them"
            assert stored["page_questions_asked"] == {"by-hand": 2}
        else:
            assert stored["pages_visited"] == ["start-here"] and stored["check_yourself"] == {}, (number, stored)


@needs_browser
def test_start_again_still_clears_the_stored_record(server, fresh_context):
    context = fresh_context(json.dumps({"pages_visited": ["by-hand", "masks"], "stages_seen": ["qkv"]}))
    page = context.new_page()
    page.goto(f"{server}/start-here")
    bs.wait_for_app_idle(page, timeout=LOAD_MS)
    page.wait_for_function("() => document.body.innerText.includes('1 of 9 stages looked at')", timeout=30_000)
    page.get_by_role("button", name="Start again").click()
    page.get_by_role("button", name="Yes, clear them").click()
    page.wait_for_function("(key) => !(localStorage.getItem(key) || '').includes('masks')", arg=STORAGE_KEY,
                           timeout=30_000)
    stored = json.loads(_stored(page))
    assert stored["pages_visited"] == ["start-here"] and stored["stages_seen"] == [], stored


def test_the_overview_opened_at_the_root_is_kept_by_its_name():
    """The default page's url path is "" (it is served at "/"); the browser's copy of the progress leaves an empty
    name out, so after a reload Start here showed the Overview as never opened, beside its answered questions."""
    from apptest_support import open_page

    at = open_page()
    visited = at.session_state["pages_visited"]
    assert "overview" in visited and "" not in visited, visited
