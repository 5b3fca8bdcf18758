"""One real head recomputed by attention_core, stage by stage, and checked against the model."""

from dataclasses import replace

import pandas as pd
import streamlit as st

from attention_ui import frames
from attention_ui.checks.real import inside_head_questions
from attention_ui.controls import REAL_HEAD_LINE_KEY, sentence_settings, stage_footer, stage_picker
from attention_ui.models import cached_reproduction, note_follow_shown, opening_head_note, real_model_or_stop
from attention_ui.questions import show_page_questions
from attention_ui.text import STAGES, agreement_in_words, layer_input_words, size_in_words
from attention_ui.views import StageView, only_tokens, show_slide, show_stage, show_table

DETAILS = "Model, layer, head and the check against the model"
settings = sentence_settings("Inside one real head", slides=True)
if settings.presenter:
    # A slide first; the model, layer and head pickers and the check against the model below it.
    slide = st.container()
    details = st.expander(DETAILS, expanded=False)
else:
    st.markdown(
        "We take the layer's own input vectors and its own W_Q, W_K, W_V (and biases), run them through **the "
        "same code as the lesson's stages**, and compare our weights with the attention the model itself reports."
    )
    slide = details = st.container()

pick = real_model_or_stop(settings.sentence, details, slide=slide if settings.presenter else None, place_label=DETAILS)
with details:
    if opened_note := opening_head_note(pick):
        st.caption(opened_note)
    rep = cached_reproduction(pick.name, pick.run.sentence, pick.layer)
    left, right = st.columns([1, 2])
    left.metric("Largest |our weights − model's|", size_in_words(rep.max_abs_diff),
                help="Over every head of this layer and every query–key pair.")
    with right:
        if rep.max_abs_diff < 1e-4:
            st.success(f"The lesson's code reproduces the model's attention: {agreement_in_words(rep.max_abs_diff)}. "
                       "What is left is the rounding of 32-bit floating-point numbers.")
        else:
            st.error("The reproduction differs from the model's attention more than rounding would explain.")
        st.caption("BERT-style (post-LayerNorm: each layer rescales its vectors with LayerNorm after attention): "
                   "the input is the layer's hidden state as it is. "
                   if pick.model.family == "bert" else
                   "GPT-2-style (pre-LayerNorm: each block rescales its vectors with LayerNorm before attention): the "
                   "input is the hidden state after the block's first LayerNorm; W_Q, W_K, W_V are column blocks of "
                   "GPT-2's one c_attn matrix, which holds the three side by side. ")
    with st.expander("Difference per head"):
        show_table(pd.DataFrame({"head": range(1, len(rep.per_head_max_abs_diff) + 1),
                                 "largest |difference|": [size_in_words(d) for d in rep.per_head_max_abs_diff]}))


with slide:
    if settings.presenter:  # the slide has no title: say which page, whose head this is and that it is the model's
        # own, in one line (two pushed the words under a stage's chart past a 1280×800 window's foot)
        agreement = "matches the model to" if rep.max_abs_diff < 1e-4 else "differs from the model by"
        with st.container(key=REAL_HEAD_LINE_KEY):
            st.caption(f"**Inside a real head · {pick.name} · layer {pick.layer + 1} · head {pick.head + 1}** · the "
                       f"lesson's code {agreement} {size_in_words(rep.max_abs_diff)}")
    step = stage_picker(settings.presenter)
    run = pick.run
    labels = frames.token_labels(run.tokens)
    keep, follow = pick.shown, pick.shown_follow
    embed_words, embed_more = layer_input_words(pick.layer)
    view = StageView(rep.trace, labels, follow, pick.head, settings.cell_size, settings.font_size, x=rep.x,
                     projections=rep.projections, embed_words=embed_words, embed_more=embed_more,
                     colour=settings.colour)
    if len(keep) == run.num_tokens:
        (show_slide if settings.presenter else show_stage)(view, STAGES[step].key)
    else:
        st.info("Special tokens are hidden from the charts, but the model still gives them weight: the visible "
                "weights in a row now add up to less than 1 (often much less, as many heads rest on [CLS] or "
                "[SEP]). Everything is still computed over the whole sequence, as the model does.")
        note_follow_shown(pick)
        shown = replace(view, trace=only_tokens(rep.trace, keep), labels=frames.AxisLabels(labels[i] for i in keep),
                        follow=keep.index(follow), x=rep.x[keep], hidden_tokens=run.num_tokens - len(keep))
        (show_slide if settings.presenter else show_stage)(shown, STAGES[step].key, worked_view=view)
        st.caption("The worked numbers list every token, special ones included: the model's sums run over them all.")

show_page_questions("inside-real-head", inside_head_questions(
    model_name=pick.name, hidden_size=pick.model.hidden_size, num_heads=pick.model.num_heads, causal=pick.model.causal,
    trace=rep.trace, labels=labels, shown=keep, follow=follow, layer=pick.layer, head=pick.head,
    max_abs_diff=rep.max_abs_diff))
if not settings.presenter:  # Back and Next again under the stage, as on Step through (they were only at the top)
    stage_footer(step, None)
