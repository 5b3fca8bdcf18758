"""Warm the server up before it takes its first visitor: load the lessons' libraries, run the default lesson and
make its charts and worked numbers.

``streamlit run app.py`` imports the entry point once at server start, to find its ``st.App``, before
the server answers its health check; that import calls ``warm_up()``. Without it the first visitors of
a fresh server, often a whole class opening one link, wait together for torch, pandas and Altair to
load (about 1.5 s here), and the first student to reach each stage for its charts (30-250 ms each, while
every other run waits). Nothing here needs a session, and no real model is loaded: that stays on demand.
"""

from __future__ import annotations

import logging
import time

_log = logging.getLogger(__name__)


def warm_up() -> float:
    """Import what every lesson page needs, run the default lesson once and make its stages' charts (the first
    use of Altair, narwhals and Arrow loads and compiles more of them); returns the seconds it took.
    A failure is logged, never raised: the pages then load the same modules themselves."""
    started = time.perf_counter()
    try:
        from attention_core import LessonConfig, run_lesson

        # torch, pandas and Altair; not the modules that define st.cache_data functions, which made now (before
        # Streamlit's runtime exists) would not use the runtime's cache storage
        from . import frames, views

        lesson = run_lesson(LessonConfig())  # torch's first kernels
        # Altair's, narwhals' and Arrow's first use (lazy imports, compiled patterns), and the charts and worked
        # numbers of every stage of the default lesson, as a fresh session follows it: what a class opening a
        # shared link sees
        labels = frames.token_labels(lesson.tokens)
        views.prebuild_stages(views.lesson_view(lesson, labels, 0, 0, cell_size=views.PAGE_CELL,
                                                font_size=views.PAGE_FONT))
    except Exception:  # noqa: BLE001  (a warm-up must never stop the server from starting)
        _log.warning("warm-up failed; the first visitor loads the libraries instead", exc_info=True)
    return time.perf_counter() - started
