"""Work it by hand: type a tiny example, compute each stage yourself, and have every cell checked."""

import math

import streamlit as st

from attention_core import (ANSWER_TOLERANCE, HAND_STAGES, MAX_CELL_MAGNITUDE, MAX_HAND_TOKENS, MAX_HAND_WIDTH,
                            check_answer, diagnose, hand_trace, read_grid, stage_truth)
from attention_ui import charts, frames, hand
from attention_ui.controls import page_start, stop_page
from attention_ui.render import cached_matrix_chart, show_chart
from attention_ui.text import plain

HAND_STAGE_TEXT = {
    "scores": ("1 · Raw scores QKᵀ", r"S_{ij} = q_i \cdot k_j = \sum_{d} q_{i,d}\, k_{j,d}",
               "For each query row i and key row j, multiply q_i and k_j number by number and add them up. The "
               "order matters: S_ij takes its query from token i and S_ji from token j, so the two usually differ "
               "(a token need not attend to another as that one attends to it)."),
    "scaled": ("2 · Scale by √d_k", r"\tilde S_{ij} = \frac{S_{ij}}{\sqrt{d_k}}",
               "Divide every score by √d_k."),
    "weights": ("3 · Softmax: the weights", r"A_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_l e^{\tilde S_{il}}}",
                "In each row, take e to the power of every scaled score, then divide each by the row's sum. "
                "A blocked key (causal mask) gets weight 0."),
    "context": ("4 · Context vectors", r"c_i = \sum_j A_{ij}\, v_j",
                "Row i of the context is the sum of V's rows, each multiplied by its weight in row i of A."),
}


def start_chart(start: hand.StartingPoint, tokens: list[str]) -> dict:
    """The previous stage's right values as a heatmap with the answer grid's labels (queries × keys)."""
    if start.kind == "weights":
        return cached_matrix_chart(charts.heatmap, start.values, tokens, tokens, blocked=start.blocked,
                                   title=start.title, scheme="viridis", domain=(0, 1), value_title="weight",
                                   **HAND_CHART)
    return cached_matrix_chart(charts.heatmap, start.values, tokens, tokens, blocked=start.blocked,
                               title=start.title, diverging=True, scheme="blueorange", value_title="score",
                               **HAND_CHART)


def introduce() -> None:
    """What the page is for, and the formula it works through."""
    st.markdown(
        "Attention is a handful of small sums. **Work them out yourself** on a tiny example (at first three tokens "
        "with two numbers each). Change any number in X or the weights and every stage below is recomputed. Then "
        "type your own answer for a stage and press **Check**: each cell is marked right or wrong."
    )
    st.latex(r"Q = XW_Q,\quad K = XW_K,\quad V = XW_V,\qquad "
             r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V")


def sizes_and_mask() -> None:
    """The sizes of the example and its mask, folded (its number inputs change every grid)."""
    with st.expander("Sizes and mask", expanded=False):
        cols = st.columns(5, vertical_alignment="bottom")
        cols[0].number_input("Tokens T", 1, MAX_HAND_TOKENS, step=1, key="hand-size-tokens",
                             on_change=hand.apply_size_change)
        cols[1].number_input("d_model", 1, MAX_HAND_WIDTH, step=1, key="hand-size-d_model",
                             on_change=hand.apply_size_change)
        cols[2].number_input("d_k", 1, MAX_HAND_WIDTH, step=1, key="hand-size-d_k", on_change=hand.apply_size_change)
        cols[3].number_input("d_v", 1, MAX_HAND_WIDTH, step=1, key="hand-size-d_v", on_change=hand.apply_size_change)
        cols[4].checkbox("Causal mask", key="hand-size-causal", on_change=hand.apply_size_change,
                         help="Token i may only attend to tokens 1…i.")
        st.caption(f"Limits: {MAX_HAND_TOKENS} tokens, d_model, d_k and d_v up to {MAX_HAND_WIDTH}; every number "
                   f"between −{MAX_CELL_MAGNITUDE:g} and {MAX_CELL_MAGNITUDE:g}. Fractions such as 1/2 and a decimal "
                   "comma (0,5) are fine.")
        st.button("Reset to the example", on_click=hand.reset_to_example, key="hand-reset",
                  icon=":material/restart_alt:")


st.session_state.setdefault("pages_visited", set()).add("by-hand")
presenter = page_start("Work it by hand")
if not presenter:
    introduce()

# ------------------------------------------------------------------------------------------ sizes
hand.keep_sizes_widgets()
sizes = hand.sizes()
if hand.GRIDS_KEY not in st.session_state:
    st.session_state[hand.GRIDS_KEY] = hand.example_grids(sizes)
if not presenter:
    sizes_and_mask()

tokens = frames.token_labels(hand.TOKENS[:sizes["tokens"]])
x_cols = frames.feature_labels(sizes["d_model"], "x")
shapes = hand.matrix_shapes(sizes)
col_labels = {"X": x_cols, "W_Q": frames.feature_labels(sizes["d_k"], "q"),
              "W_K": frames.feature_labels(sizes["d_k"], "k"), "W_V": frames.feature_labels(sizes["d_v"], "v")}
row_labels = {"X": tokens, "W_Q": x_cols, "W_K": x_cols, "W_V": x_cols}

# ------------------------------------------------------------------------------- typed matrices
HOW_TO_TYPE = ("Click a cell (on a touch screen, tap it twice) and type. X has one row per token; each W has one row "
               "per feature of X.")
if not presenter:  # a slide opens on the grids and the Q, K and V they make; the words go under Q, K and V
    st.subheader("Your matrices")
    st.caption(HOW_TO_TYPE)
typed, readings = {}, {}
# Four in a row while each matrix has at most two columns; wider ones go two by two (four 4-column grids in one row
# showed half their columns, the rest behind a hidden scroll). Two by two on a tablet as well.
with st.container(key="hand_grids"):
    if max(sizes["d_model"], sizes["d_k"], sizes["d_v"]) <= 2:
        grid_columns = st.columns([1.3, 1, 1, 1])
    else:
        grid_columns = [*st.columns(2, gap="medium"), *st.columns(2, gap="medium")]
for col, name in zip(grid_columns, shapes):
    with col:
        st.markdown(f"**${name}$**  ({shapes[name][0]} × {shapes[name][1]})")
        typed[name] = hand.grid_editor(name, shapes[name], row_labels[name], col_labels[name])
        readings[name] = read_grid(typed[name], shapes[name], name, row_labels[name], col_labels[name])

problems = [p for reading in readings.values() for p in reading.problems]
if problems:
    st.error("**Some cells cannot be used yet**, so nothing is computed until they are fixed:\n\n"
             + "\n".join(f"- {plain(p.message)}" for p in problems[:12])
             + ("\n- …" if len(problems) > 12 else ""), icon=":material/warning:")
    if presenter:
        introduce()
        sizes_and_mask()
    stop_page()

trace = hand_trace(readings["X"].values, readings["W_Q"].values, readings["W_K"].values, readings["W_V"].values,
                   causal=bool(sizes["causal"]))

# ----------------------------------------------------------------------------- Q, K, V (given)
if presenter:
    st.markdown("**Click a cell above and type: Q, K and V follow your numbers.** They are given, so you can start "
                "from them: each row of X times each W.")
else:
    st.subheader("Q, K and V from your numbers")
    st.markdown("These are given, so you can start from them: each row of X times each W.")
HAND_CHART = hand.chart_sizes(presenter, max(sizes["d_k"], sizes["d_v"]))  # Q, K and V side by side
for col, name, values, prefix in zip(st.columns(3), "QKV", (trace.q[0], trace.k[0], trace.v[0]), "qkv"):
    features = frames.feature_labels(values.shape[1], prefix)
    with col:
        show_chart(cached_matrix_chart(charts.matrix_heatmap, values, tokens, features, row_name="token",
                                       col_name="feature", title=f"{name} = X·W_{name}", **HAND_CHART))
if presenter:
    st.caption(HOW_TO_TYPE)
    introduce()
    sizes_and_mask()

# ------------------------------------------------------------------------------ your answers
st.subheader("Your turn")
d_k = trace.d_k
st.markdown(f"Here d_k = {d_k}, so √d_k = {math.sqrt(d_k):.4f}. A cell is right when it is within "
            f"±{ANSWER_TOLERANCE:g} of the true value: round to 2 or 3 decimals.")
checked = st.session_state.setdefault(hand.CHECKED_KEY, set())


def answer_grid(stage: str, shape: tuple[int, int], columns: list[str]):
    """The editable grid for ``stage``'s answer, and what its rows and columns are (the grid has no axis titles)."""
    typed = hand.grid_editor(f"answer_{stage}", shape, tokens, columns)
    st.caption("Rows: the query tokens. Columns: " + ("the context's numbers c1, c2, … (one per column of V)."
                                                      if stage == "context" else
                                                      "the key tokens, so row i, column j is token i's number for "
                                                      "token j."))
    return typed


for tab, stage in zip(st.tabs([HAND_STAGE_TEXT[s][0] for s in HAND_STAGES]), HAND_STAGES):
    title, formula, how = HAND_STAGE_TEXT[stage]
    truth = stage_truth(trace, stage)  # (T, T) or (T, d_v)
    answer_cols = tokens if stage != "context" else frames.feature_labels(truth.shape[1], "c")
    start = hand.starting_point(trace, stage)
    with tab:
        st.markdown(how)
        st.latex(formula)
        if start is None:  # the first stage starts from Q and K, shown above
            answer = answer_grid(stage, tuple(truth.shape), answer_cols)
        else:
            given, yours = st.columns(2, gap="medium")
            with given:
                st.markdown(start.label)
                show_chart(start_chart(start, tokens))
                if start.note:
                    st.caption(start.note)
            with yours:
                st.markdown("**Your answer:**")
                answer = answer_grid(stage, tuple(truth.shape), answer_cols)
        left, right = st.columns([1, 3], vertical_alignment="center")
        if left.button("Check", key=f"hand-check-{stage}", type="primary", icon=":material/check:"):
            checked.add(stage)
            st.session_state.setdefault(hand.EVER_CHECKED_KEY, set()).add(stage)
        show_answer = right.toggle("Show the right values", key=f"hand-show-{stage}")
        if stage in checked:
            check = check_answer(answer, truth, "Your answer", tokens, answer_cols)
            right_count = check.count("right")
            if check.all_right:
                st.session_state.setdefault(hand.SOLVED_KEY, set()).add(stage)
                st.success(f"All {check.cells} cells right. Well done!", icon=":material/check_circle:")
            else:
                st.info(f"{right_count} of {check.cells} cells right (within ±{ANSWER_TOLERANCE:g}).")
                if diagnosis := diagnose(check, trace, stage):
                    st.warning(hand.diagnosis_text(diagnosis, tokens, answer_cols), icon=":material/lightbulb:")
            if check.problems:
                st.warning("\n".join(f"- {plain(p.message)}" for p in check.problems[:8])
                           + ("\n- …" if len(check.problems) > 8 else ""))
            wide = {col: st.column_config.TextColumn(width="medium") for col in answer_cols} if show_answer else None
            st.dataframe(hand.marks_table(check, answer, tokens, answer_cols, show_answer=show_answer),
                         width="content", column_config=wide)  # "✗ 4 → 3.000" needs more than a number's width
        if show_answer:
            if stage == "weights":
                chart = cached_matrix_chart(charts.heatmap, truth, tokens, answer_cols, title=title, scheme="viridis",
                                            domain=(0, 1), value_title="weight", **HAND_CHART)
            elif stage == "context":
                chart = cached_matrix_chart(charts.matrix_heatmap, truth, tokens, answer_cols, row_name="token",
                                            col_name="feature", title=title, **HAND_CHART)
            else:
                chart = cached_matrix_chart(charts.heatmap, truth, tokens, answer_cols, title=title, diverging=True,
                                            scheme="blueorange", **HAND_CHART)
            show_chart(chart)

st.markdown("**Takeaway:** every number in attention is a dot product, a division, an e^x or a weighted "
            "sum; a computer only does many of them at once.")
