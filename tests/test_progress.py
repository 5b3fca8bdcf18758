"""The progress kept in the browser: what is stored, and how a stored record is read back (the browser side is
checked in tests/test_browser.py)."""

import json

import pytest
from streamlit.testing.v1 import AppTest

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
