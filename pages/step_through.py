"""Step through one attention layer, stage by stage, with the followed token's numbers."""

from dataclasses import replace

import streamlit as st

from attention_core import unscaled_weights

from attention_ui import export, questions
from attention_ui.controls import (Settings, keep_page_settings, lesson_settings, open_check_keys, page_top,
                                  path_page, real_vectors_caption, stage_footer, stage_picker, token_caption)
from attention_ui.progress import READING, keep_progress, restoring
from attention_ui.text import STAGES, TOY_CAPTION, next_on_path
from attention_ui.url_state import linked_flag
from attention_ui.views import RERUN_PAGE, UNSCALED_KEY, lesson_view, show_slide, show_stage

with page_top():
    settings = lesson_settings("Step through attention", slides=True)
    if not settings.presenter:
        st.caption(f"Following the query token {token_caption(settings, settings.follow)} (click a row of a chart "
                   "to follow another). Change it, the sentence or any size in the sidebar: every stage updates.")
        if settings.config.seeded_embeddings and settings.config.init == "random":
            st.caption(TOY_CAPTION)
        elif not settings.config.seeded_embeddings:
            st.caption(real_vectors_caption(settings))


@st.fragment
def stage(settings: Settings) -> None:
    """Back/Next rerun only this part of the page."""
    if st.session_state.pop(RERUN_PAGE, False):
        st.rerun(scope="app")  # a click picked another token or mask: the sidebar and the lesson show it too
    # A run of this part alone draws its widgets again. Their values go with them, or a stage menu still coming in
    # the browser takes stage 1 (the stored record's rerun of this part, just after a page's first run, did that,
    # and the next click sent stage 1 to the server)
    keep_page_settings(("step", UNSCALED_KEY, *open_check_keys()))
    following, url_path, title = next_on_path("pages/step_through.py")
    next_page = (path_page(following, url_path), title)
    step = stage_picker(settings.presenter, next_page)
    key = STAGES[step].key
    st.session_state.setdefault("stages_seen", set()).add(key)  # this page's stages only: Start here counts them
    lesson = settings.lesson
    unscaled = unscaled_weights(lesson.trace) if key == "scaled" and linked_flag(UNSCALED_KEY) else None
    view = replace(lesson_view(lesson, settings.labels, settings.follow, settings.head, cell_size=settings.cell_size,
                               font_size=settings.font_size, colour=settings.colour, unscaled=unscaled),
                   asked=questions.asked_cell(settings, key))
    if settings.presenter:
        show_slide(view, key)
    else:
        show_stage(view, key)
    if not settings.presenter:  # a student's own progress (a lecturer's rehearsal showed it to the hall)
        seen = st.session_state["stages_seen"]
        st.caption(READING if restoring() else
                   f"You have looked at {len(seen)} of {len(STAGES)} stages (kept in this browser).")
    questions.show_check_yourself(settings, key, asked=view.asked)
    if not settings.presenter:  # downloads are for a student or a lecturer preparing: a hall has no use for them
        export.show_downloads(settings, key)
        stage_footer(step, (next_page[0], f"Next on the path: {title}"))
    keep_progress()  # the run's one store, here so that Back/Next, which rerun this alone, are kept too


stage(settings)
