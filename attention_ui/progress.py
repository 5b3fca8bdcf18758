"""A student's progress, kept in the browser's local storage: the pages opened, the stages looked at, the stages
checked by hand and the check-yourself answers (right or not, never the text typed). Start here's marks and score
then survive a reload, a closed tab and the next day's visit in the same browser; nothing is kept on the server.

The browser side is a small component with no view: on a page load it reports what it has stored once, and from
then on it stores what each full run sends. The server merges the stored record into the session once, before it
sends anything to store, so an empty new session never overwrites the record it is about to read.
"""

from __future__ import annotations

import json

import streamlit as st

from .hand import EVER_CHECKED_KEY, SOLVED_KEY
from .questions import ANSWERS_KEY, PAGE_QUESTIONS_KEY
from .url_state import repeat_link_notes

STORAGE_KEY = "attention-step-by-step/progress"
"""The browser's local-storage entry."""
COMPONENT_KEY = "progress_store"
RESTORED_KEY = "_progress_restored"
"""Session flag: the browser's record has been read (or there was none), so the session's progress may be stored."""
SET_KEYS = ("pages_visited", "stages_seen", EVER_CHECKED_KEY, SOLVED_KEY)
"""Session keys of sets of names (url paths, stage keys)."""
MAX_STORED_CHARS = 200_000
MAX_ENTRIES = 2_000
MAX_NAME_CHARS = 200
_ANSWER_FIELDS = {"stage": str, "correct": bool, "wrong": int, "shown": bool}

_JS = """
export default function ({ data, setStateValue }) {
  if (data.save !== null) {
    try { window.localStorage.setItem(data.storage_key, data.save); } catch (e) { /* storage off: nothing kept */ }
    return;
  }
  if (window.__attentionProgressRead) return;  // once per page load: a new session
  window.__attentionProgressRead = true;
  let saved = "";
  try { saved = window.localStorage.getItem(data.storage_key) || ""; } catch (e) { /* storage off */ }
  setStateValue("saved", saved);
}
"""

_store = st.components.v2.component(COMPONENT_KEY, js=_JS)


def snapshot() -> str:
    """The session's progress as the JSON the browser keeps (sets as sorted lists; an answer without its text)."""
    state = st.session_state
    record = {key: sorted(state.get(key, ())) for key in SET_KEYS}
    record[ANSWERS_KEY] = {qid: {field: entry.get(field, kind()) for field, kind in _ANSWER_FIELDS.items()}
                           for qid, entry in state.get(ANSWERS_KEY, {}).items()}
    record[PAGE_QUESTIONS_KEY] = dict(state.get(PAGE_QUESTIONS_KEY, {}))
    return json.dumps(record, separators=(",", ":"))


def restore(saved: str) -> None:
    """Merge a stored record into the session: sets are joined, an answer the session already has is kept as it
    is, a page's question count is the larger. Anything that is not a record this module wrote (another app's,
    edited by hand, too large) is left out, part by part."""
    record = _parse(saved)
    state = st.session_state
    for key in SET_KEYS:
        state[key] = set(state.get(key, set())) | set(_names(record.get(key)))
    answers = state.setdefault(ANSWERS_KEY, {})
    for qid, entry in _answers(record.get(ANSWERS_KEY)).items():
        answers.setdefault(qid, entry)
    asked = state.setdefault(PAGE_QUESTIONS_KEY, {})
    for page, count in _counts(record.get(PAGE_QUESTIONS_KEY)).items():
        asked[page] = max(asked.get(page, 0), count)


def forget() -> None:
    """Clear the session's progress; the next full run stores the empty record in the browser."""
    for key in (*SET_KEYS, ANSWERS_KEY, PAGE_QUESTIONS_KEY):
        st.session_state.pop(key, None)


def keep_progress(key: str = COMPONENT_KEY) -> None:
    """Mount the store (it draws nothing): read the browser's record once a session, then store the session's.
    A fragment that reruns alone (the step-through's stage) mounts one of its own, under another ``key``, so what
    is done there is kept without a full run; the browser reads its record for the first one mounted only."""
    restored = st.session_state.get(RESTORED_KEY, False)
    _store(data={"storage_key": STORAGE_KEY, "save": snapshot() if restored else None}, key=key,
           default={"saved": None}, on_saved_change=lambda: _on_saved(key), height=0)


def _on_saved(key: str) -> None:
    saved = (st.session_state.get(key) or {}).get("saved")
    if saved is not None and not st.session_state.get(RESTORED_KEY):
        restore(saved)
        st.session_state[RESTORED_KEY] = True
        repeat_link_notes()  # this report reruns the page: a link's notes stay in view


def _parse(saved) -> dict:
    if not isinstance(saved, str) or not saved or len(saved) > MAX_STORED_CHARS:
        return {}
    try:
        record = json.loads(saved)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def _name(value) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS


def _names(values) -> list[str]:
    return [v for v in values[:MAX_ENTRIES] if _name(v)] if isinstance(values, list) else []


def _answers(values) -> dict[str, dict]:
    if not isinstance(values, dict):
        return {}
    return {qid: {**{field: entry[field] for field in _ANSWER_FIELDS}, "response": ""}
            for qid, entry in list(values.items())[:MAX_ENTRIES]
            if _name(qid) and isinstance(entry, dict) and _name(entry.get("stage"))
            and all(type(entry.get(field)) is kind for field, kind in _ANSWER_FIELDS.items())
            and entry["wrong"] >= 0}


def _counts(values) -> dict[str, int]:
    if not isinstance(values, dict):
        return {}
    return {page: count for page, count in list(values.items())[:MAX_ENTRIES]
            if _name(page) and type(count) is int and 0 <= count <= 100}
