"""The bare page with the step-through's controls and one chart: what a click costs before any lesson.

    streamlit run bench/controls_page.py --server.address 127.0.0.1

The same navigation (every section and page of the app, the other pages empty), the same sidebar
(sentence, sizes, mask, seed, device, followed token, head, colour, limits), the same presenter switch
and stage picker (Back/Next, the stage menu, the progress bar) and Back/Next under the stage as
``pages/step_through.py``, then one
8 × 8 Vega-Lite heatmap of the lean page (``bench/lean_charts.py``): no lesson, no torch run, no worked
numbers. Served as the app is (an ``st.App`` with ``attention_ui.serving.lifespan``), so a click is
compared on the same server settings.
``bench/bench_rerun.py`` compares one click of the app with one click of this page.
"""

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the app's packages

import torch  # noqa: E402

from attention_core import tokenize  # noqa: E402
from attention_ui.controls import (  # noqa: E402
    _colour_control, _config_controls, _control_places, _follow_controls, _limits_note, page_start, stage_footer,
    stage_picker)
from attention_ui.url_state import show_link_notes  # noqa: E402
from lean_charts import heatmap_spec, stage_values  # noqa: E402
from servers import app_lessons  # noqa: E402


def step_through() -> None:
    places = _control_places(page_start("Step through attention"))
    config = _config_controls(places)
    labels = tokenize(config.sentence) or ["(empty)"]
    with places.follow:
        _follow_controls(labels, config.num_heads, config.mask, torch.full((len(labels),), len(labels)))
        _colour_control()
    with places.sizes:
        _limits_note()
    show_link_notes()
    st.caption("Following one query token (the bare page: the app's controls and one chart).")

    @st.fragment
    def stage() -> None:
        presenter = st.session_state.get("presenter", False)
        step = stage_picker(presenter)
        st.vega_lite_chart({**heatmap_spec(), "data": {"values": stage_values(step + 1, "after")}})
        if not presenter:
            stage_footer(step, None)  # (the other pages here are empty)

    stage()


def other_page() -> None:
    st.title("Another page")


if __name__ == "__main__":
    LESSONS, HOME = app_lessons()
    st.set_page_config(page_title="Bare page with the app's controls", layout="wide")
    pages = {section: [st.Page(step_through if url == "step-through" else other_page, title=title, icon=icon,
                               url_path=url, default=url == HOME)
                       for _, title, icon, url in lessons] for section, lessons in LESSONS.items()}
    st.navigation(pages).run()
else:  # imported once at server start, as app.py is: the same server socket settings as the app
    from attention_ui.serving import lifespan

    app = st.App(__file__, lifespan=lifespan)
