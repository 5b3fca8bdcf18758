"""The address bar: every setting a link may carry, checked before any widget reads it.

A link is shared with a whole class, so whatever it holds (``inf``, ``nan``, ``²``, 10⁵ digits, markup, an
empty value, a key given twice) must open the page with a fallback and a short note, never an error.
``LINK_PARAMS`` names every URL key the app uses; ``check_link()`` runs first on every page.

Most settings are widgets bound to the URL (``bind="query-params"``): Streamlit seeds them from the link
and writes their changes back. Streamlit seeds a widget from the query string the run *started* with, so
a bad value is removed there too, not only from ``st.query_params``. Other spellings are rewritten to the
canonical form a widget understands (``?head=head 3``, as earlier links wrote it, → ``?head=3``). The stage
and the followed token are kept by this module itself, in their short forms (``?step=softmax``,
``?token=2``), because their select boxes show long labels.
"""

from __future__ import annotations

import functools
import re
import secrets
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

from attention_core import (MAX_CELL_MAGNITUDE, MAX_CONTEXT_LENGTH, MAX_COST_LENGTH, MAX_COST_WIDTH, MAX_D_K,
                            MAX_D_MODEL, MAX_D_V, MAX_HAND_TOKENS, MAX_HAND_WIDTH, MAX_HEADS, MAX_LAYERS,
                            MAX_SCALING_D_K, MAX_SCALING_KEYS, MAX_SCALING_SAMPLES, MAX_SEED,
                            MAX_SENTENCE_CHARS, MAX_TOKENS, MAX_WINDOW, MIN_COST_LENGTH, MODEL_ALLOWLIST,
                            AttentionInputError, available_devices, format_cell, tokenize)
from attention_core.limits import MAX_NEW_TOKENS

from .text import STAGE_KEYS, STAGES, plain

MAX_PARAM_CHARS = MAX_SENTENCE_CHARS
"""Longest value any link parameter may hold."""

_WHOLE = re.compile(r"[0-9]{1,10}")  # ASCII digits only: "²".isdigit() is True but int("²") fails


@dataclass(frozen=True)
class LinkParam:
    """One URL key: ``canonical(raw)`` gives the value to keep (None: ignore it); ``expects`` says what fits."""

    key: str
    canonical: Callable[[str], str | None]
    expects: str


def whole(low: int, high: int) -> Callable[[str], str | None]:
    def canonical(raw: str) -> str | None:
        text = raw.strip()
        return str(int(text)) if _WHOLE.fullmatch(text) and low <= int(text) <= high else None
    return canonical


def one_of(*options: str) -> Callable[[str], str | None]:
    def canonical(raw: str) -> str | None:
        return raw if raw in options else None
    return canonical


BOUND = {"bind": "query-params", "persist_state": "session"}
"""A widget's options that keep its value in the page's address (a copied link restores it) and across pages."""


FLAG_WORDS = {"true": "true", "1": "true", "yes": "true", "on": "true",
              "false": "false", "0": "false", "no": "false", "off": "false"}
"""How a link may write a switch (``?presenter=1``, ``=yes``, ``=on``); the address then says "true" or "false"."""


def flag(raw: str) -> str | None:
    return FLAG_WORDS.get(raw.strip().lower())


def grouped_whole(low: int, high: int) -> Callable[[str], str | None]:
    """A whole number written with or without thousands commas ("8192", "8,192") -> "8,192", as a select slider
    that shows "{:,}"-formatted options writes it in the address."""
    def canonical(raw: str) -> str | None:
        text = raw.strip().replace(",", "")
        return f"{int(text):,}" if _WHOLE.fullmatch(text) and low <= int(text) <= high else None
    return canonical


def sentence(raw: str) -> str | None:
    try:
        tokenize(raw)
    except AttentionInputError:
        return None
    return raw


def head_number(raw: str) -> str | None:
    """'3' or 'head 3' (how earlier links wrote it) -> '3'; the upper bound is checked against the heads."""
    number = raw.removeprefix("head").strip()
    return str(int(number)) if _WHOLE.fullmatch(number) and 1 <= int(number) <= MAX_HEADS else None


def stage_key(raw: str) -> str | None:
    """'6', 'softmax' or '6 · Softmax: attention weights' -> 'softmax'."""
    text = raw.strip()
    if _WHOLE.fullmatch(text) and 1 <= int(text) <= len(STAGE_KEYS):
        return STAGE_KEYS[int(text) - 1]
    if text.lower() in STAGE_KEYS:
        return text.lower()
    return next((s.key for s in STAGES if s.title == text), None)


def token_number(raw: str) -> str | None:
    """'2' or '2·cat' (a label) -> '2': the followed token, counted from 1."""
    number = raw.split("·", 1)[0].strip()
    return str(int(number)) if _WHOLE.fullmatch(number) and 1 <= int(number) <= MAX_TOKENS + 64 else None


HAND_LINK_SIZES = ("tokens", "d_model", "d_k", "d_v", "causal")
"""The by-hand example's sizes, in the order its link (``encode_hand``) gives them."""
HAND_LINK_DIGITS = 10
"""Significant digits of a by-hand link's numbers (and of the cells a link fills): 1/3 comes back within its answers'
tolerance."""
_HAND_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?")


def hand_shapes(sizes: dict) -> dict[str, tuple[int, int]]:
    """Work it by hand's typed matrices and their shapes for ``sizes``: X (T, d_model), W_Q and W_K (d_model, d_k),
    W_V (d_model, d_v)."""
    return {"X": (sizes["tokens"], sizes["d_model"]), "W_Q": (sizes["d_model"], sizes["d_k"]),
            "W_K": (sizes["d_model"], sizes["d_k"]), "W_V": (sizes["d_model"], sizes["d_v"])}


def encode_hand(sizes: dict, values: dict) -> str:
    """Work it by hand's example as a link value: its sizes, then every number of X, W_Q, W_K and W_V row by row,
    e.g. ``3~2~2~2~0~1_0_0_1_…`` (``~`` and ``_`` stay as they are in an address; HAND_LINK_DIGITS significant
    digits)."""
    head = "~".join(str(int(sizes[key])) for key in HAND_LINK_SIZES)
    cells = "_".join(format_cell(float(v), HAND_LINK_DIGITS) for name in hand_shapes(sizes) for row in values[name]
                     for v in row)
    return f"{head}~{cells}"


def decode_hand(raw: str) -> tuple[dict, dict[str, list[list[float]]]] | None:
    """``encode_hand``'s sizes and matrices back, or None when ``raw`` is not one within the page's limits."""
    parts = raw.split("~")
    if len(parts) != len(HAND_LINK_SIZES) + 1 or not all(_WHOLE.fullmatch(p) for p in parts[:-1]):
        return None
    sizes = dict(zip(HAND_LINK_SIZES, (int(p) for p in parts[:-1])))
    if not (1 <= sizes["tokens"] <= MAX_HAND_TOKENS and sizes["causal"] in (0, 1)
            and all(1 <= sizes[key] <= MAX_HAND_WIDTH for key in ("d_model", "d_k", "d_v"))):
        return None
    sizes["causal"] = bool(sizes["causal"])
    cells = parts[-1].split("_")
    shapes = hand_shapes(sizes)
    if len(cells) != sum(rows * cols for rows, cols in shapes.values()) or not all(map(_HAND_NUMBER.fullmatch, cells)):
        return None
    numbers = [float(c) for c in cells]
    if not all(abs(v) <= MAX_CELL_MAGNITUDE for v in numbers):
        return None
    values, start = {}, 0
    for name, (rows, cols) in shapes.items():
        values[name] = [numbers[start + r * cols:start + (r + 1) * cols] for r in range(rows)]
        start += rows * cols
    return sizes, values


def hand_link(raw: str) -> str | None:
    """A by-hand link value in its short form, or None."""
    decoded = decode_hand(raw)
    return None if decoded is None else encode_hand(*decoded)


def _model_names() -> tuple[str, ...]:
    return tuple(MODEL_ALLOWLIST)


LINK_PARAMS: dict[str, LinkParam] = {p.key: p for p in (
    LinkParam("presenter", flag, "true or false"),
    LinkParam("sentence", sentence, f"a sentence of 1 to {MAX_TOKENS} tokens"),
    LinkParam("embeddings", lambda raw: raw if raw in ("seeded", *_model_names()) else None,
              "seeded or a model name"),
    LinkParam("d_model", whole(2, MAX_D_MODEL), f"a whole number from 2 to {MAX_D_MODEL}"),
    LinkParam("heads", whole(1, MAX_HEADS), f"a whole number from 1 to {MAX_HEADS}"),
    LinkParam("init", one_of("random", "identity"), "random or identity"),
    LinkParam("d_k", whole(1, MAX_D_K), f"a whole number from 1 to {MAX_D_K}"),
    LinkParam("d_v", whole(1, MAX_D_V), f"a whole number from 1 to {MAX_D_V}"),
    LinkParam("mask", one_of("none", "causal", "padding", "custom"), "none, causal, padding or custom"),
    LinkParam("pad_to", whole(1, MAX_TOKENS), f"a whole number from 1 to {MAX_TOKENS}"),
    LinkParam("seed", whole(0, MAX_SEED), f"a whole number from 0 to {MAX_SEED}"),
    LinkParam("device", lambda raw: raw if raw in available_devices() else None,
              "one of " + ", ".join(available_devices())),
    LinkParam("colour", one_of("fixed", "row"), "fixed or row"),
    LinkParam("unscaled", flag, "true or false"),
    LinkParam("worked_first", flag, "true or false"),
    LinkParam("token", token_number, "a token's position, from 1 to the number of tokens"),
    LinkParam("head", head_number,
              f"a head of the toy layer, from 1 to {MAX_HEADS}; a real model's head is model_head"),
    LinkParam("step", stage_key, f"a stage of Step through, from 1 to {len(STAGE_KEYS)} or its short name; "
              "Generation's step is generation_step"),
    LinkParam("grid", lambda raw: raw if re.fullmatch(r"[01]{1,64}(\.[01]{1,64}){0,63}", raw) else None,
              "rows of 0/1 joined by '.'"),
    LinkParam("hand", hand_link, "Work it by hand's sizes and numbers as the page writes them"),
    LinkParam("model", lambda raw: raw if raw in _model_names() else None, "one of the listed models"),
    LinkParam("layer", whole(1, 99), "a layer of the model, counted from 1"),
    LinkParam("model_head", whole(1, 99), "a head of the model, counted from 1"),
    LinkParam("piece", lambda raw: raw if 0 < len(raw) <= 200 else None, "a token of the model"),
    LinkParam("hide_special", flag, "true or false"),
    LinkParam("kv_heads", whole(1, MAX_HEADS), f"a whole number from 1 to {MAX_HEADS}"),
    LinkParam("generation_kv_heads", whole(1, MAX_HEADS), f"a whole number from 1 to {MAX_HEADS}"),
    LinkParam("generation_step", whole(1, MAX_TOKENS), f"a whole number from 1 to {MAX_TOKENS}"),
    LinkParam("generation_real", flag, "true or false"),
    LinkParam("generation_model", lambda raw: raw if raw in _model_names() else None, "one of the listed models"),
    LinkParam("generation_count", whole(1, MAX_NEW_TOKENS), f"a whole number from 1 to {MAX_NEW_TOKENS}"),
    LinkParam("generation_pick", lambda raw: raw if re.fullmatch(r"[0-9]{1,4}(·.{1,200})?", raw, re.S) else None,
              "a generated token: its position in the text, or its label"),
    LinkParam("generation_layer", whole(1, 99), "a layer of the model, counted from 1"),
    LinkParam("context_length", grouped_whole(1, MAX_CONTEXT_LENGTH),
              f"a whole number from 1 to {MAX_CONTEXT_LENGTH:,}"),
    LinkParam("cache_precision", lambda raw: raw if len(raw) <= 40 and "bit" in raw else None, "a number format"),
    LinkParam("window", whole(1, MAX_WINDOW), f"a whole number from 1 to {MAX_WINDOW}"),
    LinkParam("window_layers", whole(1, MAX_LAYERS), f"a whole number from 1 to {MAX_LAYERS}"),
    LinkParam("why_dk", whole(1, MAX_SCALING_D_K), f"a whole number from 1 to {MAX_SCALING_D_K}"),
    LinkParam("why_keys", whole(2, MAX_SCALING_KEYS), f"a whole number from 2 to {MAX_SCALING_KEYS}"),
    LinkParam("why_samples", whole(100, MAX_SCALING_SAMPLES), f"a whole number from 100 to {MAX_SCALING_SAMPLES}"),
    LinkParam("pos_shuffle", whole(1, 99), "a whole number from 1 to 99"),
    LinkParam("pos_shift", whole(0, 1000), "a whole number from 0 to 1000"),
    LinkParam("pos_alibi", one_of("1", *(f"1/{2**k}" for k in range(1, 9))), "1, 1/2, 1/4, …, 1/256"),
    LinkParam("cross_source", sentence, f"a sentence of 1 to {MAX_TOKENS} tokens"),
    LinkParam("cross_pad", flag, "true or false"),
    LinkParam("cross_pad_to", whole(1, MAX_TOKENS), f"a whole number from 1 to {MAX_TOKENS}"),
    LinkParam("cost_longest", whole(MIN_COST_LENGTH, MAX_COST_LENGTH),
              f"a whole number from {MIN_COST_LENGTH} to {MAX_COST_LENGTH}"),
    LinkParam("cost_width", whole(1, MAX_COST_WIDTH), f"a whole number from 1 to {MAX_COST_WIDTH}"),
    LinkParam("cost_tile", whole(1, MAX_TOKENS), f"a whole number from 1 to {MAX_TOKENS}"),
)}
"""Every URL key the app reads. A widget bound to the URL must use one of these keys (a test checks it)."""

OWN_KEYS = ("step", "token", "generation_step", "hand")
"""Kept in the URL by this module (short forms) rather than by a bound widget."""

NOTES_KEY = "_link_notes"
SHOWN_NOTES_KEY = "_link_notes_shown"
"""Session key: the link notes this run has shown (``repeat_link_notes`` shows them once more)."""
REPEAT_NOTES_KEY = "_link_notes_again"


QUERY_PARAMS_INTERNALS = ("_send_query_param_msg", "populate_from_query_string", "set_initial_query_params",
                          "_set_item_internal", "remove_param", "has_param", "set_corrected_value")
RUN_CONTEXT_FIELDS = ("query_string", "cursors", "is_history_navigation", "shared")
SESSION_STATE_INTERNALS = ("get_widget_id_from_key", "get_widget_metadata", "get_widget_value")
"""What the link writing below uses of Streamlit's inside (its session's QueryParams and state, its script run
context): not public API, so a Streamlit that changed them gets Streamlit's own address handling instead (every change
a history entry), never an error."""


@functools.cache
def streamlit_internals_known() -> bool:
    """Whether this Streamlit has every part in QUERY_PARAMS_INTERNALS, RUN_CONTEXT_FIELDS and
    SESSION_STATE_INTERNALS."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
        from streamlit.runtime.state.query_params import QueryParams
        from streamlit.runtime.state.session_state import SessionState
    except ImportError:
        return False
    known_fields = set(getattr(QueryParams, "__dataclass_fields__", {}))  # empty if no longer a dataclass
    context_fields = set(getattr(ScriptRunContext, "__dataclass_fields__", {}))
    return (all(callable(getattr(QueryParams, name, None)) for name in QUERY_PARAMS_INTERNALS)
            and {"_query_params", "_initial_query_params"} <= known_fields
            and set(RUN_CONTEXT_FIELDS) <= context_fields
            and all(callable(getattr(SessionState, name, None)) for name in SESSION_STATE_INTERNALS))


def _session_query_params():
    """Streamlit's QueryParams of this session (current values and the snapshot widgets are seeded from)."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    return get_session_state().query_params()


def set_link_value(key: str, value: str | None) -> None:
    """Put ``key=value`` in the address bar (``None`` removes it), also for widgets seeded in this run.

    This goes through Streamlit's own QueryParams (bound parameters may not be deleted through
    ``st.query_params``); a link's value must be cleaned before the widget bound to it reads it."""
    if not streamlit_internals_known():
        try:
            if value is None:
                st.query_params.pop(key, None)
            else:
                st.query_params[key] = value
        except StreamlitAPIException:  # a parameter bound to a widget: it keeps its value
            pass
        return
    follow_written_link()
    with _session_query_params() as qp:
        initial = getattr(qp, "_initial_query_params", None)
        if isinstance(initial, dict):
            if value is None:
                initial.pop(key, None)
            else:
                initial[key] = [value]
        if value is None:
            qp.remove_param(key)
        elif qp.get(key) != value:
            qp._set_item_internal(key, value)
            qp._send_query_param_msg()


def check_link() -> list[str]:
    """Check every parameter of the current link that no widget has taken yet; drop or rewrite what does not
    fit. (Once a widget holds a setting, the URL only mirrors what the person did, and the page itself says
    what is wrong with it, e.g. an empty sentence.)

    Returns notes on what was ignored (markdown-safe), also kept for this run under ``NOTES_KEY``."""
    switched = watch_page_switches()
    if OPENED_LINK_KEY not in st.session_state or switched:
        hold_opening_writes()
    follow_written_link()
    notes = []
    for key in list(st.query_params.keys()):
        param = LINK_PARAMS.get(key)
        if param is None or key in st.session_state:
            continue
        values = st.query_params.get_all(key)
        raw = values[-1] if values else ""
        value = param.canonical(raw) if len(values) == 1 and 0 < len(raw) <= MAX_PARAM_CHARS else None
        if value is None:
            set_link_value(key, None)
            notes.append(f"{key} = “{_shown(raw)}” (expected {param.expects})")
        elif value != raw:
            set_link_value(key, value)
    # a note repeated from the run before may be made again by this one (the browser's rerun still had the value)
    st.session_state[NOTES_KEY] = list(dict.fromkeys(st.session_state.pop(REPEAT_NOTES_KEY, []) + notes))
    st.session_state[SHOWN_NOTES_KEY] = []
    return notes


OPENED_LINK_KEY = "_opened_link"
"""Session key: ``{"opened": the query string the page was opened with, "written": the one the app wrote over it in
the browser without a history entry (None once the browser reports another)}``."""
LINK_WRITER_KEY = "link_writer"

_LINK_WRITER_JS = """
export default function ({ data }) {
  if (typeof data?.query !== "string" || typeof data?.once !== "string") return;
  const done = (window.__attentionLinksWritten ??= new Set());
  if (done.has(data.once)) return;  // once per held run: later addresses are the person's
  done.add(data.once);
  // after a page switch, Streamlit's browser side puts the new page's path in the address (a new entry) once the
  // run's navigation has arrived; the address is written over that entry, never over the page left
  const onPage = () => typeof data.path !== "string" ||
    (data.path ? location.pathname.endsWith("/" + data.path) : location.pathname.endsWith("/"));
  let tries = 0;
  const write = () => {
    if (!onPage()) {
      if (tries++ < 60) setTimeout(write, 50);
      return;
    }
    const url = location.pathname + (data.query ? "?" + data.query : "") + location.hash;
    history.replaceState(history.state, "", url);
  };
  write();
}
"""
_link_writer = st.components.v2.component(LINK_WRITER_KEY, js=_LINK_WRITER_JS)


def hold_opening_writes() -> None:
    """The first run of a page load writes the link's settings back (a value rewritten to its short form or dropped,
    a widget's default left out, the page's own keys added) without adding history entries.

    Streamlit's browser side turns every address change the server sends into a new history entry (``pushState``;
    only while it replays Back or Forward does it replace the entry), and the server sends one per change: each
    setting a widget takes from the link at its default or corrects, and each ``set_link_value``. A freshly opened
    link thus left a trail of entries with fewer and fewer settings, and Back walked through them before it left
    the page. In this run the changes are kept on the server only; ``write_opened_link`` then puts the final
    address in place of the opened one, in the same history entry.

    The first run after a page switch (``watch_page_switches``) is held the same way: the browser side adds the new
    page's entry itself, once, and the run's changes would each have added another."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not streamlit_internals_known():
        return
    st.session_state[OPENED_LINK_KEY] = {"opened": ctx.query_string, "written": None,
                                         "page": st.session_state.get(CURRENT_PAGE) if switched_run(ctx) else None}
    opening_run = ctx.cursors  # a new dict for every run, fragment runs too
    with _session_query_params() as qp:
        def send_held() -> None:
            run = get_script_run_ctx()
            if run is None or run.cursors is not opening_run:
                release_opening_writes(qp)
                qp._send_query_param_msg()
            else:  # what Streamlit's own message records, without the message (AppTest reads it too)
                run.query_string = urlencode(qp._query_params, doseq=True)

        qp._send_query_param_msg = send_held


def release_opening_writes(qp) -> bool:
    """Undo ``hold_opening_writes``; returns whether it was in effect."""
    held = "_send_query_param_msg" in vars(qp)
    if held:
        del qp._send_query_param_msg
    return held


def keep_bound_values_in_link() -> None:
    """Put back in the address every widget bound to it (``BOUND``) that this run drew at a value other than its
    default and the address lacks.

    Streamlit drops a bound widget's parameter when the page changes, and the new page's widget writes it back only
    when its value was set in the browser or by code: a value a link gave it (the lecture's sentence, heads, mask)
    stayed in the session but left the address, so the next page's copied link opened on the defaults."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
    from streamlit.runtime.state.session_state_proxy import get_session_state

    ctx = get_script_run_ctx()
    if ctx is None or not streamlit_internals_known():
        return
    drawn, state = ctx.shared.widget_ids_this_run, get_session_state()._state
    with _session_query_params() as qp:
        for key in LINK_PARAMS:
            widget_id = state.get_widget_id_from_key(key)
            metadata = state.get_widget_metadata(widget_id) if widget_id in drawn else None
            if metadata is None or metadata.bind != "query-params" or qp.has_param(key):
                continue
            value = state.get_widget_value(widget_id)
            if value != metadata.deserializer(None):
                qp.set_corrected_value(key, metadata.serializer(value), metadata.value_type)


def write_opened_link() -> None:
    """At the end of a page load's first run: the address the run wrote (``hold_opening_writes``) replaces the one
    the browser opened, in its history entry, so Back from the page leaves it at once."""
    with _session_query_params() as qp:
        if not release_opening_writes(qp):
            return
        written = urlencode(qp._query_params, doseq=True)
    opened = st.session_state.get(OPENED_LINK_KEY)
    if not isinstance(opened, dict):
        return
    page = opened.get("page")
    if page is None and written == opened.get("opened"):
        return
    opened["written"] = written
    # a page switch's entry is the browser side's, made with the address it held when the switch was asked for
    data = {"query": written, "once": secrets.token_hex(8)}
    if page is not None:
        data["path"] = page
    _link_writer(data=data, key=LINK_WRITER_KEY, height=0)


def follow_written_link() -> None:
    """Streamlit's browser side keeps its own copy of the address, which the address written over the opened one
    (``write_opened_link``) does not update: until a change of its own, each run comes with the link as it was
    opened. Such a run takes the written address instead, so that the next change the server sends does not bring
    back what was rewritten or dropped."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    link, ctx = st.session_state.get(OPENED_LINK_KEY), get_script_run_ctx()
    if not isinstance(link, dict) or not link.get("written") or ctx is None or ctx.query_string == link["written"]:
        return
    if ctx.query_string != link["opened"]:
        link["written"] = None  # the browser's copy has caught up
        return
    with _session_query_params() as qp:
        qp.populate_from_query_string(link["written"])
        qp.set_initial_query_params(link["written"])
    ctx.query_string = link["written"]


_SWITCH_RUN_ATTR = "_attention_switch_run"
"""On the session's QueryParams: the script run context's cursors of the run a page switch started (see
``watch_page_switches``), and whether its filtering left an address change unsent."""


def watch_page_switches() -> bool:
    """Returns whether this run is the first after a page switch the person asked for (a link, the navigation; not
    the browser's Back or Forward), whose address changes are then held (``hold_opening_writes``).

    Streamlit starts such a run by dropping from its copy of the address the settings bound to the page left's
    widgets, and sends that before the page's code runs: the browser side made an entry of the page left without
    any settings (the new page's widgets then wrote them back, one entry each, and only then did the new page's
    path come). From the first run on, that filtering sends nothing; the run it starts learns of it here. On Back
    and Forward the browser side replaces its entry instead of adding one, and the held change is sent at once."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not streamlit_internals_known():
        return False
    with _session_query_params() as qp:
        if "populate_from_query_string" not in vars(qp):
            _watch_filtering(qp)
        switch = vars(qp).pop(_SWITCH_RUN_ATTR, None)
        if switch is None:
            return False
        if getattr(ctx, "is_history_navigation", False):
            if switch["unsent"]:
                qp._send_query_param_msg()
            return False
        vars(qp)[_SWITCH_RUN_ATTR + "_cursors"] = ctx.cursors
        return True


def switched_run(ctx) -> bool:
    """Whether the run of ``ctx`` is one ``watch_page_switches`` found to follow a page switch."""
    with _session_query_params() as qp:
        return vars(qp).get(_SWITCH_RUN_ATTR + "_cursors") is ctx.cursors


def _watch_filtering(qp) -> None:
    """Make the session's QueryParams keep the address change of a page switch's filtering to itself (once)."""
    populate = type(qp).populate_from_query_string

    def watched(query_string: str, valid_script_hashes=None) -> None:
        if valid_script_hashes is None:  # not a page's first run
            populate(qp, query_string)
            return
        sent = []
        own = vars(qp).get("_send_query_param_msg")
        qp._send_query_param_msg = lambda: sent.append(True)
        try:
            populate(qp, query_string, valid_script_hashes)
        finally:
            if own is None:
                del qp._send_query_param_msg
            else:
                qp._send_query_param_msg = own
        vars(qp)[_SWITCH_RUN_ATTR] = {"unsent": bool(sent)}

    qp.populate_from_query_string = watched


def check_linked_choice(key: str, options, why: str) -> None:
    """A link's value for the select box (or select slider) ``key`` that is not one of its ``options`` (as the
    widget writes them in the address) is dropped with a note: the widget would otherwise show its default
    without a word."""
    raw = st.query_params.get(key)
    if raw is not None and key not in st.session_state and raw not in {str(option) for option in options}:
        note_ignored(key, raw, why)


def note_ignored(key: str, raw: str, why: str) -> None:
    """Record a link value that passed its format check but not the page (e.g. token 9 of 5)."""
    set_link_value(key, None)
    st.session_state.setdefault(NOTES_KEY, []).append(f"{key} = “{_shown(raw)}” ({why})")


def show_link_notes(key: str = "link_notes") -> None:
    """The notes on link values that could not be used, in a box (its container ``key`` unique on the page)."""
    notes = st.session_state.get(NOTES_KEY) or []
    st.session_state.setdefault(SHOWN_NOTES_KEY, []).extend(notes)
    if notes:
        with st.container(key=key):  # presenter mode makes the slide's charts shorter by its height
            st.info("Some values in the link could not be used, so defaults are shown instead: " + "; ".join(notes)
                    + ".", icon=":material/link:")
        st.session_state[NOTES_KEY] = []


def repeat_link_notes() -> None:
    """The next run shows this run's link notes again: a rerun the person did not ask for (the browser reporting the
    progress it keeps, right after a link opened) must not take away a note they may not have read yet."""
    st.session_state[REPEAT_NOTES_KEY] = list(st.session_state.get(SHOWN_NOTES_KEY, []))


def _shown(raw: str) -> str:
    """A bad value as it may be shown: shortened, escaped, never rendered as markup."""
    short = raw if len(raw) <= 24 else raw[:24] + "…"
    return plain(short)


def linked_stage() -> str | None:
    raw = st.query_params.get("step")
    return stage_key(raw) if raw else None


def linked_flag(key: str) -> bool:
    """A bound toggle's value: its own once drawn, before that (on the first run of a link) the link's."""
    if key in st.session_state:
        return bool(st.session_state[key])
    return flag(st.query_params.get(key, "")) == "true"


def linked_token() -> int | None:
    """The followed token from the link, 0-based, or None."""
    raw = st.query_params.get("token")
    number = token_number(raw) if raw else None
    return None if number is None else int(number) - 1


def keep_in_link(key: str, value: str | None, default: str | None = None) -> None:
    """Write one of ``OWN_KEYS`` to the address bar; the ``default`` value, if given, is left out of it."""
    set_link_value(key, None if value == default else value)
    page = st.session_state.get(CURRENT_PAGE)
    if page is not None:  # also a fragment's run (Next, Back), which app.py does not finish
        remember_link(page)


STEP_THROUGH = "step-through"
"""The step-through page's url path."""
GENERATION = "generation"
"""Generation's url path."""
CURRENT_PAGE = "current_page"
"""Session key: the url path of the page this run draws (set by ``app.py``; a page that stops early reads it to draw
its path link itself)."""
LEFT_LINKS_KEY = "_left_links"
"""Session key: url path -> that page's address parameters when the session last drew it (``remember_link``)."""


APP_WIDE_KEYS = ("presenter",)
"""Address keys that every page keeps, also in the history entries Streamlit adds when the page changes: an entry
holding only these says nothing about the page's own settings (in presenter mode Back lost them all)."""

ALWAYS_IN_LINK = {STEP_THROUGH: "step", GENERATION: "generation_step"}
"""url path -> the one of ``OWN_KEYS`` that page writes in its address at every value, its default too: an entry of
that page without it is one Streamlit added on leaving the page (it keeps only the bound widgets' values). A stage
(or a generation step) left out at its default could not tell those apart from stage 1, so Back from another page
went to stage 1."""


def remember_link(page: str) -> None:
    """Keep page ``page``'s address parameters as they are now, for ``restore_left_link``."""
    st.session_state.setdefault(LEFT_LINKS_KEY, {})[page] = {key: st.query_params.get_all(key)
                                                             for key in st.query_params}


def restore_left_link(page: str) -> bool:
    """The browser's Back or Forward button landed on page ``page``: give its settings the values of that history
    entry, or, for an entry without any, the values the page had when this session last drew it; returns whether
    it put any back.

    Streamlit lets the address decide on Back and Forward, and two things there lost a student's settings without
    a word: going to another page adds two history entries without parameters (the page left, then the page
    opened before its settings are written back), where every setting gets its default; and on an entry of
    another page it drops the settings whose widgets the sidebar last drew there (all of them). An entry is one
    Streamlit added when it holds only ``APP_WIDE_KEYS``, or lacks the key its page always writes
    (``ALWAYS_IN_LINK``)."""
    from urllib.parse import parse_qs

    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not getattr(ctx, "is_history_navigation", False):
        return False
    entry = {key: values for key, values in parse_qs(getattr(ctx, "query_string", "") or "").items()
             if key in LINK_PARAMS}
    added = all(key in APP_WIDE_KEYS for key in entry) or (page in ALWAYS_IN_LINK and ALWAYS_IN_LINK[page] not in entry)
    if added:  # an entry Streamlit added, without the page's own keys: the page's last values, and the entry's own
        wanted = {**st.session_state.get(LEFT_LINKS_KEY, {}).get(page, {}), **entry}
    else:
        wanted = entry
    restored = False
    for key, values in wanted.items():
        if key in LINK_PARAMS and len(values) == 1 and st.query_params.get_all(key) != values:
            set_link_value(key, values[0])
            restored = True
    # the followed token, the step-through's stage and Generation's step are kept by the session, not by widgets:
    # the entry's values (an address leaves out a default) replace them
    token = token_number((wanted.get("token") or ["1"])[-1])
    if token is not None and wanted:
        st.session_state["token"] = int(token) - 1
    if page == STEP_THROUGH and wanted:
        st.session_state["step"] = stage_key((wanted.get("step") or [STAGE_KEYS[0]])[-1]) or STAGE_KEYS[0]
    if page == GENERATION and wanted:  # the page itself falls back to step 1 past the sentence's end
        st.session_state["generation_step"] = int(LINK_PARAMS["generation_step"].canonical(
            (wanted.get("generation_step") or ["1"])[-1]) or 1)
    return restored
