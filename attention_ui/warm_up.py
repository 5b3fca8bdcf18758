"""Warm the server up before it takes its first visitor: load the lessons' libraries, run the default lesson and
make its first stage's charts; make the other stages' charts just after the first visit has been answered.

``streamlit run app.py`` imports the entry point once at server start, to find its ``st.App``, before
the server answers its health check; that import calls ``warm_up()``. Without it the first visitors of
a fresh server, often a whole class opening one link, wait together for torch, pandas and Altair to
load (about 1.5 s here), and the first student to reach each stage for its charts (30-250 ms each, while
every other run waits). The other stages (about 0.3 s here) are left to ``warm_up_the_rest()``, which the
app calls at the end of every run: the first call makes them in a background thread, after the first page
has been sent, so the first visitor of a cold server (a Community Cloud app waking up) waits for none of it.
Nothing here needs a session, and no real model is loaded: that stays on demand.
"""

from __future__ import annotations

import logging
import threading
import time

_log = logging.getLogger(__name__)

FIRST_STAGES = ("embed",)
"""The stages made before the server listens: the first one a shared step-through link opens (its first use of
Altair, narwhals and Arrow also loads and compiles what every later chart uses)."""

_rest = None  # the default lesson's view (views.StageView) while its other stages are still to make
_rest_lock = threading.Lock()


def warm_up() -> float:
    """Import what every lesson page needs, run the default lesson once and make its first stage's charts (the
    first use of Altair, narwhals and Arrow loads and compiles more of them); returns the seconds it took.
    A failure is logged, never raised: the pages then load the same modules themselves."""
    global _rest
    started = time.perf_counter()
    try:
        from attention_core import LessonConfig, run_lesson

        # torch, pandas and Altair; not the modules that define st.cache_data functions, which made now (before
        # Streamlit's runtime exists) would not use the runtime's cache storage
        from . import frames, views

        lesson = run_lesson(LessonConfig())  # torch's first kernels
        # the charts and worked numbers of the default lesson, as a fresh session follows it: what a class opening a
        # shared link sees
        view = views.lesson_view(lesson, frames.token_labels(lesson.tokens), 0, 0, cell_size=views.PAGE_CELL,
                                 font_size=views.PAGE_FONT)
        views.prebuild_stages(view, FIRST_STAGES)
        with _rest_lock:
            _rest = view
    except Exception:  # noqa: BLE001  (a warm-up must never stop the server from starting)
        _log.warning("warm-up failed; the first visitor loads the libraries instead", exc_info=True)
    return time.perf_counter() - started


def warm_up_the_rest() -> threading.Thread | None:
    """Make the default lesson's other stages in a background thread, once (called at the end of every run: the
    first call starts it, after that run's page has been sent). Returns the thread it started, else None."""
    global _rest
    with _rest_lock:
        view, _rest = _rest, None
    if view is None:  # started already, or no warm-up (a test, or a warm-up that failed)
        return None
    # Not a daemon: the interpreter waits for it (under a second) before it exits. A daemon thread still inside
    # torch when a process exited aborted it ("terminate called without an active exception").
    thread = threading.Thread(target=_make_the_rest, args=(view,), name="warm-up-the-rest", daemon=False)
    thread.start()
    return thread


def _make_the_rest(view) -> None:
    """The other stages' charts, kept by the shared spec cache for the server's life: like the first warm-up's
    objects, left out of later garbage collections (``serving.long_lived_objects``)."""
    try:
        from . import views
        from .serving import long_lived_objects

        with long_lived_objects():
            views.prebuild_stages(view, tuple(rec.key for rec in views.STAGE_RECORDS if rec.key not in FIRST_STAGES))
    except Exception:  # noqa: BLE001  (the stages are then made by their first visitors)
        _log.warning("warming up the other stages failed; their first visitors make them", exc_info=True)
