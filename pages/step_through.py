"""Step through one attention layer, stage by stage, with the followed token's numbers."""

import streamlit as st

from attention_ui.controls import lesson_settings, stage_picker, token_caption
from attention_ui.text import EMBED_WORDS_REAL, STAGES
from attention_ui.views import StageView, show_stage

settings = lesson_settings("Step through attention")
st.caption(f"Following the query token {token_caption(settings, settings.follow)}."
           + ("" if settings.presenter else " Change it, the sentence or any size in the sidebar: every stage updates."))

step = stage_picker()
lesson = settings.lesson
view = StageView(lesson.trace, settings.labels, settings.follow, settings.head, settings.cell_size,
                 settings.font_size, x=lesson.x, projections=lesson.projections,
                 embed_words=None if settings.config.seeded_embeddings else EMBED_WORDS_REAL)
show_stage(view, STAGES[step].key)

seen = st.session_state.get("stages_seen", set())
st.caption(f"You have looked at {len(seen)} of {len(STAGES)} stages in this session.")

from attention_ui import export, questions  # noqa: E402  (learning aids below the stage)
questions.show_check_yourself(settings, STAGES[step].key)
export.show_downloads(settings, STAGES[step].key)
