"""A student's progress, kept in the browser's local storage: the pages opened, the stages looked at, the stages
checked by hand and the check-yourself answers (right or not, never the text typed). Start here's marks and score
then survive a reload, a closed tab and the next day's visit in the same browser; nothing is kept on the server.

The browser side is a small component with no view. On a page load it reports what it has stored, once (only when
it holds a record: a report reruns the page), when the page's controls are drawn; the server merges that into the
session (``restore``). Every full run sends the session's record from the first run on, and the browser joins it to
what it has stored by the rules ``restore`` uses, so a visit left before the stored record reached the server is kept,
and an empty new session never wipes what is stored. Only "Start again" (``forget``) replaces the stored record.
While the browser holds a record it also sets a cookie (``HELD_COOKIE``, no record in it), so that a new session knows
the record is coming and its counts say so (``restoring``) rather than count without it."""

from __future__ import annotations

import json

import streamlit as st
from streamlit.errors import StreamlitDuplicateElementKey

from .hand import EVER_CHECKED_KEY, SOLVED_KEY
from .questions import ANSWERS_KEY, PAGE_QUESTIONS_KEY
from .url_state import repeat_link_notes

STORAGE_KEY = "attention-step-by-step/progress"
"""The browser's local-storage entry."""
COMPONENT_KEY = "progress_store"
RESTORED_KEY = "_progress_restored"
"""Session flag: the browser's record has been merged into the session (or there was none, or "Start again" came
first): a later report is not merged again."""
FORGET_KEY = "_progress_forget"
"""Session flag: "Start again" was pressed; the next record sent replaces the stored one instead of joining it."""
SET_KEYS = ("pages_visited", "stages_seen", EVER_CHECKED_KEY, SOLVED_KEY)
"""Session keys of sets of names (url paths, stage keys)."""
MAX_STORED_CHARS = 200_000
MAX_ENTRIES = 2_000
MAX_NAME_CHARS = 200
MAX_QUESTIONS = 100
"""The most check-yourself questions a page may be counted as asking."""
_ANSWER_FIELDS = {"stage": str, "correct": bool, "wrong": int, "shown": bool}
HELD_COOKIE = "attention_progress_held"
"""A cookie the browser sets while it holds a record with anything in it. A new session reads it from its
connection (``restoring``): the record is on its way, and a count made without it ("1 of 9 stages") would be wrong
for the second or two until it comes. The record itself stays in local storage; a cookie holds 4 KB at most."""
READING = "Reading what you have done from this browser…"
"""What a count of the student's progress says while ``restoring``."""
DRAWN_WAIT_MS = 15_000
"""The longest the browser holds its record back while the page's controls are still being drawn."""
_RULES = {"chars": MAX_STORED_CHARS, "entries": MAX_ENTRIES, "name_chars": MAX_NAME_CHARS,
          "max_count": MAX_QUESTIONS, "set_keys": SET_KEYS, "answers": ANSWERS_KEY, "counts": PAGE_QUESTIONS_KEY,
          "cookie": HELD_COOKIE}

_JS = """
const RULES = %s;  // the limits and names restore() reads a record with (progress.py)

const isName = v => typeof v === "string" && v.length > 0 && v.length <= RULES.name_chars;
const isObject = v => v !== null && typeof v === "object" && !Array.isArray(v);
const entries = v => (isObject(v) ? Object.entries(v).slice(0, RULES.entries) : []);
const isAnswer = a => isObject(a) && isName(a.stage) && typeof a.correct === "boolean"
  && Number.isInteger(a.wrong) && a.wrong >= 0 && typeof a.shown === "boolean";

// A record as restore() reads it: what is not JSON, too long or of the wrong kind is left out, part by part.
function clean(text) {
  let record = {};
  if (typeof text === "string" && text && text.length <= RULES.chars) {
    try { record = JSON.parse(text); } catch (e) { record = {}; }
  }
  if (!isObject(record)) record = {};
  const out = {};
  for (const key of RULES.set_keys) {
    out[key] = Array.isArray(record[key]) ? record[key].slice(0, RULES.entries).filter(isName) : [];
  }
  out.answers = new Map(entries(record[RULES.answers]).filter(([id, a]) => isName(id) && isAnswer(a))
    .map(([id, a]) => [id, { stage: a.stage, correct: a.correct, wrong: a.wrong, shown: a.shown }]));
  out.counts = new Map(entries(record[RULES.counts])
    .filter(([page, n]) => isName(page) && Number.isInteger(n) && n >= 0 && n <= RULES.max_count));
  return out;
}

// The session's record joined to the stored one: sets joined, the session's answer kept over a stored one,
// a page's question count the larger. The session's own entries come first under the size limits.
function join(session, stored) {
  const out = { answers: new Map(session.answers), counts: new Map(session.counts) };
  for (const key of RULES.set_keys) out[key] = [...new Set([...session[key], ...stored[key]])].slice(0, RULES.entries);
  for (const [id, a] of stored.answers) {
    if (!out.answers.has(id) && out.answers.size < RULES.entries) out.answers.set(id, a);
  }
  for (const [page, n] of stored.counts) {
    if (out.counts.has(page)) out.counts.set(page, Math.max(out.counts.get(page), n));
    else if (out.counts.size < RULES.entries) out.counts.set(page, n);
  }
  return out;
}

function text(record) {
  const out = {};
  for (const key of RULES.set_keys) out[key] = [...record[key]].sort();
  out[RULES.answers] = Object.fromEntries(record.answers);
  out[RULES.counts] = Object.fromEntries(record.counts);
  return JSON.stringify(out);
}

// Once the page's controls are drawn (or after DRAWN_WAIT_MS): a control whose code was still coming when the report's
// rerun came took its default instead of the value the first run gave it (a link's stage, its sizes on Work it by
// hand), and the next click sent that default to the server.
function whenDrawn(report, since = performance.now()) {
  if (document.querySelector("[data-testid='stSkeleton']") && performance.now() - since < DRAWN_WAIT_MS)
    setTimeout(() => whenDrawn(report, since), 100);
  else report();
}

const EMPTY = text(clean(""));
const held = () => document.cookie.split("; ").includes(`${RULES.cookie}=1`);
// The cookie tells the server's next session that a record is coming (progress.restoring): set while one is stored
function hold(record) {
  const want = record !== "" && record !== EMPTY;
  if (want === held()) return;
  document.cookie = `${RULES.cookie}=${want ? "1" : ""}; path=/; SameSite=Lax; max-age=${want ? 34560000 : 0}`;
}

export default function ({ data, setStateValue }) {
  let saved = "";
  try { saved = window.localStorage.getItem(data.storage_key) || ""; } catch (e) { /* storage off */ }
  if (!window.__attentionProgressStarted) {  // once per page load: a new session
    window.__attentionProgressStarted = true;
    // (a report reruns the page: with nothing stored, a first visit's page ran twice, and a key pressed during
    // the second run was lost. Unless the cookie promised a record that is gone: the page waits for it)
    if (!saved && !held()) window.__attentionProgressRead = true;
    else whenDrawn(() => { setStateValue("saved", saved); window.__attentionProgressRead = true; });
  }
  const session = clean(data.save);
  let record = text(data.replace ? session : join(session, clean(saved)));
  if (record.length > RULES.chars) record = text(session);  // too much stored (not this app's): the session's
  if (record.length > RULES.chars || record === saved) return hold(saved);
  try { window.localStorage.setItem(data.storage_key, record); } catch (e) { return; /* storage off: nothing kept */ }
  hold(record);
}
""".replace("DRAWN_WAIT_MS", str(DRAWN_WAIT_MS)) % json.dumps(_RULES)

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


def restoring() -> bool:
    """Whether the browser's stored record is still on its way to this session (its cookie says it holds one): a
    count of what was done shows it is being read instead of a count without it."""
    if st.session_state.get(RESTORED_KEY):
        return False
    try:
        return st.context.cookies.get(HELD_COOKIE) == "1"
    except Exception:  # no connection to read it from (a script run outside a browser's session)
        return False


def forget() -> None:
    """Clear the session's progress; the next full run replaces the browser's record with the empty one (a report
    of the stored record still on its way is not merged any more)."""
    for key in (*SET_KEYS, ANSWERS_KEY, PAGE_QUESTIONS_KEY):
        st.session_state.pop(key, None)
    st.session_state[FORGET_KEY] = True
    st.session_state[RESTORED_KEY] = True


def keep_progress() -> None:
    """Mount the store (it draws nothing): the browser reports its record once a page load, and joins the
    session's to it on every run. One store serves a run: the step-through's stage mounts it inside its fragment,
    so Back/Next, which rerun the stage alone, are kept too, and the call under the page (``page_end``) then finds
    it mounted already and adds no second one."""
    try:
        _store(data={"storage_key": STORAGE_KEY, "save": snapshot(),
                     "replace": bool(st.session_state.get(FORGET_KEY))},
               key=COMPONENT_KEY, default={"saved": None}, on_saved_change=_on_saved, height=0)
    except StreamlitDuplicateElementKey:
        return  # mounted earlier in this run (inside the step-through's stage)
    st.session_state.pop(FORGET_KEY, None)


def _on_saved() -> None:
    saved = (st.session_state.get(COMPONENT_KEY) or {}).get("saved")
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
            if _name(page) and type(count) is int and 0 <= count <= MAX_QUESTIONS}
