"""Start here: a self-paced order through the lessons, with what each teaches and what you have done."""

import streamlit as st

from attention_core import HAND_STAGES
from attention_ui.controls import page_start
from attention_ui.hand import EVER_CHECKED_KEY, SOLVED_KEY
from attention_ui.questions import answered_stages, session_score
from attention_ui.text import STAGES

PATH = (
    ("pages/overview.py", ("", "overview", "home"), "Overview",
     "What attention is in one sentence, the pipeline, and your sentence's weights at a glance."),
    ("pages/step_through.py", ("step-through",), "Step through",
     "The nine stages one at a time: words, formula, chart and the worked numbers of one token. "
     "Each stage ends with check-yourself questions."),
    ("pages/by_hand.py", ("by-hand",), "Work it by hand",
     "Compute scores, scaled scores, weights and context for a tiny example yourself; every cell is checked."),
    ("pages/multi_head.py", ("multi-head",), "Multi-head",
     "How heads split the projection columns, look at different things, and are joined by W_O."),
    ("pages/masking.py", ("masks",), "Masking",
     "No mask, causal, padding and your own grid, side by side with the weights they give."),
    ("pages/why_scaling.py", ("why-scaling",), "Why √d_k",
     "Why the scores are divided by √d_k: the spread of q·k grows with d_k and a saturated softmax stops learning."),
    ("pages/positions.py", ("order-and-position",), "Order and position",
     "Attention alone ignores word order; sinusoidal encodings and RoPE put it back."),
    ("pages/cross_attention.py", ("cross-attention",), "Cross-attention",
     "Queries from one sentence, keys and values from another, as a translator's decoder reads its source."),
    ("pages/cost.py", ("what-it-costs",), "What it costs",
     "Time and memory against the sequence length T, measured on this machine."),
    ("pages/modern_attention.py", ("modern-attention",), "Shared keys and windows",
     "Today's attention: grouped-query and multi-query heads, the KV cache's memory, sliding windows."),
    ("pages/generation.py", ("generation",), "Generation",
     "Writing one token at a time: the KV cache grows by a row and the new query attends to all of it."),
    ("pages/real_model.py", ("real-model",), "Real model",
     "A small pretrained model reads your sentence: all its layers and heads."),
    ("pages/inside_real_head.py", ("inside-real-head",), "Inside a real head",
     "The same stages on a real layer's own weights, matching the model to about 1e-7."),
)
# (page file, its url paths, title, what it teaches), in the suggested order.

DONE, STARTED, NOT_YET = ("### :green[:material/check_circle:]", "### :orange[:material/clock_loader_40:]",
                          "### :gray[:material/radio_button_unchecked:]")
VISITED_KEY = "pages_visited"  # session key: the url paths of the pages opened in this session

visited = st.session_state.setdefault(VISITED_KEY, set())
visited.add("start-here")
page_start("Start here")
st.markdown("A path through the app for learning on your own. Go in order, at your own pace: each page says what "
            "it teaches, and a check mark shows what you have already done in this session (a part-filled circle: "
            "started; a page of stages is done when you have looked at every stage, or checked every one by hand).")

stages_seen = st.session_state.get("stages_seen", set())
answered = answered_stages()
checked = st.session_state.get(EVER_CHECKED_KEY, set())
solved = st.session_state.get(SOLVED_KEY, set())
progress = {
    "pages/step_through.py": f"{len(stages_seen & {s.key for s in STAGES})} of {len(STAGES)} stages looked at, "
                             f"questions answered on {len(answered & {s.key for s in STAGES})} of them",
    "pages/by_hand.py": f"{len(checked)} of {len(HAND_STAGES)} stages checked, {len(solved)} all right",
}
# Pages with stages are done when every stage was looked at (or checked); opened, they are only started.
# (A string here would be drawn on the page: Streamlit shows a bare expression of a page script.)
finished = {"pages/step_through.py": stages_seen >= {s.key for s in STAGES},
            "pages/by_hand.py": len(checked) >= len(HAND_STAGES)}
done_count = 0
for number, (page, paths, title, teaches) in enumerate(PATH, start=1):
    opened = bool(visited & set(paths)) or (page == "pages/step_through.py" and bool(stages_seen))
    done = finished.get(page, opened)
    done_count += done
    with st.container(border=True, key=f"path_card_{number}"):  # PAGE_STYLE sets its title above its text
        mark, body = st.columns([1, 12], vertical_alignment="center")
        mark.markdown(DONE if done else STARTED if opened else NOT_YET)
        body.page_link(page, label=f"{number}. {title}")
        body.markdown(teaches)
        if page in progress:
            body.caption(progress[page])

st.progress(done_count / len(PATH), text=f"{done_count} of {len(PATH)} pages done")
st.caption(f"Check-yourself score this session: {session_score().in_words()}.")
st.markdown("**Takeaway:** read each page top to bottom (words, formula, chart, numbers), then answer its "
            "questions before moving on.")
