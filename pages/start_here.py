"""Start here: a self-paced order through the lessons, with what each teaches and what you have done."""

import streamlit as st

from attention_core import HAND_STAGES
from attention_ui.controls import PATH_CARD_KEY, PATH_NEXT_UP_KEY, carried_link_values, page_start, path_page
from attention_ui.hand import EVER_CHECKED_KEY, SOLVED_KEY
from attention_ui.progress import READING, forget, restoring
from attention_ui.questions import QUESTIONS_DONE, answered_stages, page_progress, session_score
from attention_ui.text import LEARNING_PATH, STAGES


# (not headings: each was a "Link to heading" stop for Tab, and a heading named by an icon for a screen reader)
DONE, STARTED, NOT_YET = (":green[:material/check_circle:]", ":orange[:material/clock_loader_40:]",
                          ":gray[:material/radio_button_unchecked:]")
VISITED_KEY = "pages_visited"  # session key: the url paths of the pages opened in this session

NEXT_UP_STYLE = ("<style>.st-key-path_next_up [data-testid='stPageLink'] a {border: 2px solid #3b5bdb; "
                 "border-radius: 0.5rem; background: #edf2ff; padding: 0.5rem 1rem;} .st-key-path_next_up "
                 "[data-testid='stPageLink'] p {font-size: 1.15rem; font-weight: 600;}</style>")
SLIDE_PATH_COLUMNS = 2  # a slide lists the path's titles in two columns: thirteen pages on one 1280×800 screen


def path_link(where, number: int, page: str, path: str, title: str, carried: dict, **options) -> None:
    """Page ``number`` of the path, as the link titled "3. Work it by hand" in the container ``where``."""
    where.page_link(path_page(page, path), label=f"{number}. {title}", icon=":material/arrow_forward:",
                    query_params=carried, **options)


def next_up_link(page: str, path: str, label: str, carried: dict) -> None:
    """The link at the top of the page that says where to go on (``label``: "Start with 1. Overview")."""
    st.page_link(path_page(page, path), label=label, icon=":material/play_circle:", query_params=carried)


def show_agenda(carried: dict) -> None:
    """Presenter mode: the path as a lecture's plan, on one screen. The marks, counts and score are a student's (on a
    projector they were the lecturer's own, from preparing the lecture), and so is the advice to go at one's pace."""
    st.markdown("The lesson's path through the app, in order. At each page's foot a clicker's Page Down opens the "
                "next.")
    first_page, first_paths, first_title, _ = LEARNING_PATH[0]
    with st.container(key="path_next_up"):
        next_up_link(first_page, first_paths[0], f"Start with 1. {first_title}", carried)
    st.html(NEXT_UP_STYLE)
    per_column = -(-len(LEARNING_PATH) // SLIDE_PATH_COLUMNS)
    for at, column in enumerate(st.columns(SLIDE_PATH_COLUMNS)):
        for number, (page, paths, title, teaches) in enumerate(
                LEARNING_PATH[at * per_column:(at + 1) * per_column], start=at * per_column + 1):
            with column.container(key=f"{PATH_CARD_KEY}_{number}"):  # what it teaches: the lecturer's, on hover
                path_link(st, number, page, paths[0], title, carried, help=teaches)
    st.session_state[PATH_NEXT_UP_KEY] = None  # the page's foot starts the path too


def show_checklist(carried: dict, visited: set) -> None:
    """The path for a student on their own: each page's card with its mark and progress (``visited``: the url paths
    of the pages opened in this session), what to do next, the score."""
    st.markdown("A path through the app for learning on your own. Go in order, at your own pace: each page says what "
                "it teaches, and a check mark shows what you have already done (a part-filled circle: "
                "started; a page is done when each of its check-yourself questions is answered right or its answer "
                "was shown, when every stage was looked at, or when every one was checked by hand).")

    reading = restoring()  # the browser's record is still coming: no count, mark or "next" made without it
    stages_seen = st.session_state.get("stages_seen", set())
    answered = answered_stages()
    checked = st.session_state.get(EVER_CHECKED_KEY, set())
    solved = st.session_state.get(SOLVED_KEY, set())
    progress = {
        "pages/step_through.py": f"{len(stages_seen & {s.key for s in STAGES})} of {len(STAGES)} stages looked at, "
                                 f"questions answered on {len(answered & {s.key for s in STAGES})} of them",
        "pages/by_hand.py": f"{len(checked)} of {len(HAND_STAGES)} stages checked, {len(solved)} all right",
    }
    # Pages with stages are done when every stage was looked at (or checked), pages with questions when they are
    # answered; opened, they are only started.
    # (A string here would be drawn on the page: Streamlit shows a bare expression of a page script.)
    finished = {"pages/step_through.py": stages_seen >= {s.key for s in STAGES},
                "pages/by_hand.py": len(checked) >= len(HAND_STAGES)}
    next_up = st.container(key="path_next_up")  # filled once the cards below know what is done
    st.html(NEXT_UP_STYLE)
    done_count, first_not_done = 0, None
    for number, (page, paths, title, teaches) in enumerate(LEARNING_PATH, start=1):
        opened = bool(visited & set(paths)) or (page == "pages/step_through.py" and bool(stages_seen))
        asked = page_progress(paths[0])  # None on a page not opened yet, or without questions
        if asked is not None:
            progress[page] = f"{asked[0]} of {asked[1]} {QUESTIONS_DONE}"
            finished[page] = asked[0] >= asked[1]
        done = finished.get(page, opened)
        done_count += done
        if not done and first_not_done is None:
            first_not_done = (number, page, paths[0], title, opened)
        with st.container(border=True, key=f"{PATH_CARD_KEY}_{number}"):  # PAGE_STYLE sets its title above its text
            mark, body = st.columns([1, 12], vertical_alignment="center")
            mark.markdown(NOT_YET if reading else DONE if done else STARTED if opened else NOT_YET)
            path_link(body, number, page, paths[0], title, carried)
            body.markdown(teaches)
            if page in progress and not reading:
                body.caption(progress[page])

    with next_up:
        if reading:
            st.caption(READING)
        elif first_not_done is None:
            st.success("You have done every page on the path. Go back to any of them, or try other sentences and "
                       "sizes.", icon=":material/celebration:")
        else:
            number, page, path, title, opened = first_not_done
            verb = "Carry on with" if opened else ("Start with" if done_count == 0 else "Next on the path:")
            next_up_link(page, path, f"{verb} {number}. {title}", carried)
    # the page's foot repeats where to go next (path_footer); before any progress it starts the path
    st.session_state[PATH_NEXT_UP_KEY] = (None if reading or first_not_done is None
                                          or not (done_count or first_not_done[4])
                                          else (page, path, f"{verb} {number}. {title}"))
    st.progress(0.0 if reading else done_count / len(LEARNING_PATH),
                text=READING if reading else f"{done_count} of {len(LEARNING_PATH)} pages done")
    score, forget_column = st.columns([4, 1], vertical_alignment="center")
    score.caption(f"Check-yourself score: {'…' if reading else session_score().in_words()}. The marks and the "
                  "score are kept in this browser, not on the server: they are here again after a reload or on your "
                  "next visit (a private window forgets them when it closes).")
    # (one click had cleared 12 pages' marks and a score of 49 of 53, with no way back: it asks first)
    with forget_column.popover("Start again", icon=":material/restart_alt:", width="stretch",
                               help="Clear the marks and the score, here and in this browser (on a shared computer, "
                                    "say)."):
        st.markdown("Clear every mark and the check-yourself score, here and in this browser? This cannot be undone.")
        st.button("Yes, clear them", icon=":material/delete:", key="forget_progress", on_click=forget, type="primary")
    st.markdown("**Takeaway:** read each page top to bottom (words, formula, chart, numbers), then answer its "
                "questions before moving on.")


visited = st.session_state.setdefault(VISITED_KEY, set())
visited.add("start-here")
presenter = page_start("Start here")
carried = carried_link_values()  # a lecture's settings, when this page was opened from its link
if presenter:
    show_agenda(carried)
else:
    show_checklist(carried, visited)
