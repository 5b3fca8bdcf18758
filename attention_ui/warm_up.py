"""Warm the server up before the first visitor: load the lessons' libraries and run one lesson.

``streamlit run app.py`` imports the entry point once at server start (to find its ``st.App``);
that import starts this in a background thread. Without it the first visitors of a fresh server,
often a whole class opening one link, wait together for torch, pandas and Altair to load (about
1.5 s here). Nothing here needs a session, and a real model is not loaded: that stays on demand.
"""

from __future__ import annotations

import threading


def _warm_up() -> None:
    from attention_core import LessonConfig, run_lesson

    from . import controls, questions, views  # noqa: F401  (torch, pandas, altair and the pages' modules)

    run_lesson(LessonConfig())  # torch's first kernels


def warm_up_in_background() -> threading.Thread:
    """Start the warm-up (a daemon thread: it never holds the server back from stopping)."""
    thread = threading.Thread(target=_warm_up, name="attention-warm-up", daemon=True)
    thread.start()
    return thread
