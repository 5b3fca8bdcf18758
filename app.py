"""Entry point: page config and navigation over the lessons in pages/.

`streamlit run app.py` reads this file twice over. Once, at server start, it imports it as a module
to find ``app`` (an ``st.App``), warms up (imports, one lesson) and serves that; from then on every visit runs it as a
script (``__name__ == "__main__"``), which draws the navigation.
"""

from pathlib import Path

import streamlit as st

# a small attention grid; a file, not an emoji: an emoji icon makes Streamlit load its emoji table (0.2 s of every
# server start), and a Material icon makes the browser fetch the picture from a font host
ICON = Path(__file__).resolve().parent / "attention_ui" / "favicon.svg"
LESSONS = {
    # section: [(file, title, icon, url path)]. Distinct hyphenated url paths: a deep link always goes through
    # this file's navigation, never through the legacy pages-folder routing.
    "Start": [
        ("pages/start_here.py", "Start here", ":material/flag:", "start-here"),
        ("pages/overview.py", "Overview", ":material/home:", "overview"),
    ],
    "One attention layer": [
        ("pages/step_through.py", "Step through", ":material/footprint:", "step-through"),
        ("pages/by_hand.py", "Work it by hand", ":material/edit_note:", "by-hand"),
        ("pages/multi_head.py", "Multi-head", ":material/view_module:", "multi-head"),
        ("pages/masking.py", "Masking", ":material/visibility_off:", "masks"),
    ],
    "Why it is built this way": [
        ("pages/why_scaling.py", "Why √d_k", ":material/functions:", "why-scaling"),
        ("pages/positions.py", "Order and position", ":material/format_list_numbered:", "order-and-position"),
        ("pages/cross_attention.py", "Cross-attention", ":material/compare_arrows:", "cross-attention"),
        ("pages/cost.py", "What it costs", ":material/speed:", "what-it-costs"),
    ],
    "Modern attention": [
        ("pages/modern_attention.py", "Shared keys and windows", ":material/hub:", "modern-attention"),
        ("pages/generation.py", "Generation", ":material/keyboard_double_arrow_right:", "generation"),
    ],
    "Real models": [
        ("pages/real_model.py", "Real model", ":material/neurology:", "real-model"),
        ("pages/inside_real_head.py", "Inside a real head", ":material/biotech:", "inside-real-head"),
    ],
}
HOME = "overview"
HOME_URL = "home"


def navigation() -> None:
    st.set_page_config(page_title="Attention, step by step", page_icon=str(ICON), layout="wide",
                       initial_sidebar_state="auto")
    sections = {section: [st.Page(path, title=title, icon=icon, url_path=HOME_URL if url == HOME else url,
                                  default=url == HOME) for path, title, icon, url in lessons]
                for section, lessons in LESSONS.items()}
    # The default page is served at "/" only (its own url path answers "Page not found"); this hidden
    # twin keeps a link to /overview working too.
    home_path, home_title, _, _ = next(lesson for lessons in LESSONS.values() for lesson in lessons
                                       if lesson[3] == HOME)
    sections["Start"].append(st.Page(home_path, title=home_title, url_path=HOME, visibility="hidden"))
    # Presenter mode hides the sidebar, so the pages move to the top (one menu per section).
    from attention_ui.url_state import linked_flag

    presenter = linked_flag("presenter")
    # every page listed: a collapsed menu ("View 4 more") hid the real-model pages that other pages point to
    page = st.navigation(sections, position="top" if presenter else "sidebar", expanded=True)
    # the Start here path shows them; the default page's url path is "" (served at "/"), which the browser's copy of
    # the progress leaves out: the Overview is kept by its own name, or after a reload it showed as never opened
    st.session_state.setdefault("pages_visited", set()).add(page.url_path or HOME)
    from attention_ui.controls import ARRIVED_KEY, CURRENT_PAGE, page_end  # imported by every page already
    from attention_ui.url_state import remember_link, restore_left_link
    from attention_ui.warm_up import warm_up_the_rest

    st.session_state[ARRIVED_KEY] = st.session_state.get(CURRENT_PAGE) != page.url_path
    st.session_state[CURRENT_PAGE] = page.url_path
    restore_left_link(page.url_path)  # the browser's Back to an entry without the settings
    page.run()
    page_end(page.url_path)  # a page that stops early draws it itself
    remember_link(page.url_path)
    warm_up_the_rest()  # the first run of a fresh server: its page is sent, the other stages' charts made now


if __name__ == "__main__":
    navigation()
else:  # imported once by `streamlit run`, before any visitor arrives
    from attention_ui.serving import lifespan, prepare_server

    prepare_server()  # st.navigation only, warmed up
    app = st.App(__file__, lifespan=lifespan)  # found by `streamlit run` in this source; lifespan: TCP_NODELAY
