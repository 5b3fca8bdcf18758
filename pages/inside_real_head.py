"""One real head recomputed by attention_core, stage by stage, and checked against the model."""

import pandas as pd
import streamlit as st

from attention_ui import frames
from attention_ui.controls import sentence_settings, stage_picker
from attention_ui.models import cached_reproduction, real_model_controls
from attention_ui.text import EMBED_WORDS_LAYER, STAGES, agreement_in_words
from attention_ui.views import StageView, show_slide, show_stage

settings = sentence_settings("Inside one real head")
if settings.presenter:
    # A slide first; the model, layer and head pickers and the check against the model below it.
    slide = st.container()
    details = st.expander("Model, layer, head and the check against the model", expanded=False)
else:
    st.markdown(
        "We take the layer's own input vectors and its own W_Q, W_K, W_V (and biases), run them through **the "
        "same code as the lesson's stages**, and compare our weights with the attention the model itself reports."
    )
    slide = details = st.container()

with details:
    pick = real_model_controls(settings.sentence)
    if pick is None:
        st.stop()
    rep = cached_reproduction(pick.name, pick.run.sentence, pick.layer)
    left, right = st.columns([1, 2])
    left.metric("Largest |our weights − model's|", f"{rep.max_abs_diff:.1e}",
                help="Over every head of this layer and every query–key pair.")
    with right:
        if rep.max_abs_diff < 1e-4:
            st.success(f"The lesson's code reproduces the model's attention: {agreement_in_words(rep.max_abs_diff)}. "
                       "What is left is the rounding of 32-bit floating-point numbers.")
        else:
            st.error("The reproduction differs from the model's attention more than rounding would explain.")
        st.caption("BERT-style (post-LayerNorm): the input is the layer's hidden state as it is. "
                   if pick.model.family == "bert" else
                   "GPT-2-style (pre-LayerNorm): the input is the hidden state after the block's first LayerNorm; "
                   "W_Q, W_K, W_V are column blocks of the fused c_attn matrix. ")
    with st.expander("Difference per head"):
        st.dataframe(pd.DataFrame({"head": range(1, len(rep.per_head_max_abs_diff) + 1),
                                   "largest |difference|": [f"{d:.2e}" for d in rep.per_head_max_abs_diff]}),
                     hide_index=True)

with slide:
    step = stage_picker(settings.presenter)
    labels = frames.token_labels(pick.run.tokens)
    view = StageView(rep.trace, labels, pick.follow, pick.head, settings.cell_size, settings.font_size, x=rep.x,
                     projections=rep.projections, embed_words=EMBED_WORDS_LAYER, colour=settings.colour)
    (show_slide if settings.presenter else show_stage)(view, STAGES[step].key)
