"""Work it by hand: type a tiny example, compute each stage yourself, and have every cell checked."""

import math

import streamlit as st

from attention_core import (ANSWER_TOLERANCE, HAND_STAGES, MAX_CELL_MAGNITUDE, MAX_HAND_TOKENS, MAX_HAND_WIDTH,
                            AnswerCheck, check_answer, diagnose, hand_trace, read_grid, stage_truth)
from attention_core.by_hand import EMPTY, WRONG
from attention_ui import charts, frames, hand
from attention_ui.controls import page_start, stop_page
from attention_ui.render import cached_matrix_chart, show_chart
from attention_ui.text import plain
from attention_ui.url_state import hand_shapes, show_link_notes

HAND_STAGE_TEXT = {
    "scores": ("1 · Raw scores QKᵀ", r"S_{ij} = q_i \cdot k_j = \sum_{m=1}^{d_k} q_{i,m}\, k_{j,m}",
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


def start_chart(start: hand.StartingPoint, tokens: list[str], sizes: dict) -> dict:
    """The previous stage's right values as a heatmap with the answer grid's labels (queries × keys), drawn with
    ``sizes`` (``HAND_CHART``, or smaller to fit beside a grid)."""
    if start.kind == "weights":
        return cached_matrix_chart(charts.heatmap, start.values, tokens, tokens, blocked=start.blocked,
                                   title=start.title, scheme="viridis", domain=(0, 1), value_title="weight", **sizes)
    return cached_matrix_chart(charts.heatmap, start.values, tokens, tokens, blocked=start.blocked,
                               title=start.title, diverging=True, scheme="blueorange", value_title="score", **sizes)


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
                   f"between −{MAX_CELL_MAGNITUDE:g} and {MAX_CELL_MAGNITUDE:g}. Fractions such as 1/2 or 3/1.4142, "
                   "a decimal comma (0,5), a percentage (25%) and a square root (√2, 1/sqrt(2)) are fine.")
        st.button("Reset to the example", on_click=hand.reset_to_example, key="hand-reset",
                  icon=":material/restart_alt:", help="Back to the example's sizes and numbers. This also clears "
                                                      "the answers you typed on every stage, and their checks.")


st.session_state.setdefault("pages_visited", set()).add("by-hand")
presenter = page_start("Work it by hand")
show_link_notes()  # e.g. an example in the link that is not one (the built-in example is shown instead)
if not presenter:
    introduce()

# ------------------------------------------------------------------------------------------ sizes
hand.begin_run()
hand.start_from_link()
hand.keep_sizes_widgets()
sizes = hand.sizes()
if hand.GRIDS_KEY not in st.session_state:
    st.session_state[hand.GRIDS_KEY] = hand.example_grids(sizes)
if not presenter:
    sizes_and_mask()

tokens = frames.token_labels(hand.TOKENS[:sizes["tokens"]])
x_cols = frames.feature_labels(sizes["d_model"], "x")
shapes = hand_shapes(sizes)
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
# showed half their columns, the rest behind a hidden scroll). A narrower main column (a laptop with the sidebar
# open, a tablet, a phone) takes them two by two, then one under another.
matrix_px = [hand.grid_px(shapes[name][1], presenter, column_px=hand.MATRIX_COLUMN_PX) for name in shapes]
with st.container(key="hand_grids"):
    if max(sizes["d_model"], sizes["d_k"], sizes["d_v"]) <= 2:
        grid_columns = hand.wrapping_columns("hand_grids_row", matrix_px, gap="small", pairs=True)
    else:
        grid_columns = [*hand.wrapping_columns("hand_grids_top", matrix_px[:2]),
                        *hand.wrapping_columns("hand_grids_bottom", matrix_px[2:])]
for col, name in zip(grid_columns, shapes):
    with col:
        st.markdown(f"**${name}$**  ({shapes[name][0]} × {shapes[name][1]})")
        typed[name] = hand.grid_editor(name, shapes[name], row_labels[name], col_labels[name],
                                       column_px=hand.MATRIX_COLUMN_PX, what=f"Your matrix {name}")
        readings[name] = read_grid(typed[name], shapes[name], name, row_labels[name], col_labels[name])

problems = [p for reading in readings.values() for p in reading.problems]
if problems:
    st.error("**Some cells cannot be used yet**, so nothing is computed until they are fixed:\n\n"
             + "\n".join(f"- {plain(p.message)}" for p in problems[:12])
             + ("\n- …" if len(problems) > 12 else ""), icon=":material/warning:")
    if presenter:
        introduce()
        sizes_and_mask()
    hand.retire_undrawn_editors()
    stop_page()

hand.keep_in_address(sizes, {name: reading.values.tolist() for name, reading in readings.items()})
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
QKV_CHARTS = {name: cached_matrix_chart(charts.matrix_heatmap, values, tokens,
                                        frames.feature_labels(values.shape[1], prefix), row_name="token",
                                        col_name="feature", title=f"{name} = X·W_{name}", **HAND_CHART)
              for name, values, prefix in zip("QKV", (trace.q[0], trace.k[0], trace.v[0]), "qkv")}
V_CHART = QKV_CHARTS["V"]  # drawn again in step 4, beside the weights it is mixed with
for col, chart in zip(st.columns(3), QKV_CHARTS.values()):
    with col:
        show_chart(chart)
if presenter:
    st.caption(HOW_TO_TYPE)
    introduce()
    sizes_and_mask()

# ------------------------------------------------------------------------------ your answers
st.subheader("Your turn")
d_k = trace.d_k
st.markdown(f"Here d_k = {d_k}, so √d_k = {math.sqrt(d_k):.4f}. A cell is right when it is within "
            f"±{ANSWER_TOLERANCE:g} of the true value: round to 2 or 3 decimals, or type a fraction such as "
            f"3/{math.sqrt(d_k):.4f}.")
if not presenter:  # (a student had typed and checked two tabs, reloaded, and found every grid empty)
    st.caption("The numbers you type stay while this tab is open, through the other tabs, settings and pages; a "
               "reload or a new visit starts with empty grids (Start here keeps which stages you got right).")
checked = st.session_state.setdefault(hand.CHECKED_KEY, set())


# what a stage's answer grid holds, in its name for a screen reader
READER_NAMES = {"scores": "raw scores QKᵀ", "scaled": "scaled scores QKᵀ / √d_k", "weights": "the weights (softmax)",
                "context": "context vectors"}


def answer_grid(stage: str, shape: tuple[int, int], columns: list[str]):
    """The editable grid for ``stage``'s answer, and what its rows and columns are (the grid has no axis titles)."""
    typed = hand.grid_editor(f"answer_{stage}", shape, tokens, columns, what=f"Your answer: {READER_NAMES[stage]}")
    st.caption("Rows: the query tokens. Columns: " + ("the context's numbers c1, c2, … (one per column of V)."
                                                      if stage == "context" else
                                                      "the key tokens, so row i, column j is token i's number for "
                                                      "token j."))
    return typed


def show_start(start: hand.StartingPoint, sizes: dict | None = None) -> None:
    """The previous stage's right values a tab starts from, with what they are."""
    show_chart(start_chart(start, tokens, sizes or HAND_CHART))
    if start.note:
        st.caption(start.note)


def side_by_side(widths: list[float], key: str) -> list:
    """Columns for parts of these widths when they fit in one row at 1280 px (one under another in a narrower main
    column, in the container ``key``), else places one under the other."""
    shares = hand.row_shares(widths, presenter)
    if shares is not None:
        return hand.wrapping_columns(key, widths, shares=shares)
    return [st.container() for _ in widths]


def working_grid(working: hand.SoftmaxWorking) -> list[list]:
    """Step 3's optional working, before the weights in the order a student computes: e^x of each scaled score, then
    each row's sum; what to do with a blocked key, and with a row whose e^x cannot be typed."""
    st.markdown("**Your working** (optional): e^x of each scaled score, then each row's sum.")
    typed = hand.grid_editor(hand.WORKING_GRID, (len(tokens), len(tokens) + 1), tokens, [*tokens, hand.SUM_COLUMN],
                             wider={hand.SUM_COLUMN: (hand.SUM_COLUMN_PX, "The sum of the row's e^x")},
                             what="Your working: e^x of each scaled score, then each row's sum")
    blocked = ("A key the causal mask blocks has e^(−∞) = 0: type 0 or leave it empty. "
               if not bool(working.allowed.all()) else "")
    st.caption(f"{blocked}Type as much as you like: an empty cell is not checked. A number here is right within "
               f"±{ANSWER_TOLERANCE:g}, or within {hand.WORKING_RELATIVE_TOLERANCE:.1%} when it is larger than "
               f"{ANSWER_TOLERANCE / hand.WORKING_RELATIVE_TOLERANCE:g}.")
    for text in hand.forced_rows_text(working, tokens):
        st.info(text, icon=":material/info:")
    return typed


def context_inputs(start: hand.StartingPoint, shape: tuple[int, int], columns: list[str]) -> list[list]:
    """Step 4's weights, V and the answer grid side by side, so that a student sees all three while typing; when
    they do not fit in one row, the weights and V side by side, the answer under them."""
    st.markdown(start.label)
    widths = [hand.chart_px(len(tokens), presenter, HAND_CHART["cell_size"]),
              hand.chart_px(shape[1], presenter, HAND_CHART["cell_size"]), hand.grid_px(shape[1], presenter)]
    if hand.fit_in_a_row(widths, presenter):
        weights_place, v_place, yours = side_by_side(widths, "hand_row_context")
    else:
        weights_place, v_place = side_by_side(widths[:2], "hand_row_context")
        yours = st.container()
    with weights_place:
        show_start(start)
    with v_place:
        show_chart(V_CHART)
    with yours:
        st.markdown("**Your answer:**")
        return answer_grid("context", shape, columns)


def problems_list(problems, blocked: set[tuple[int, int]] = frozenset()) -> str:
    """Cells that are not usable numbers, as a markdown list (their messages escaped), at most eight; two or more
    empty cells are one line (a student checking a grid as they filled it got a line for every cell not typed yet).
    ``blocked``: the (row, column) cells the causal mask blocks, whose weight is 0 (a student left them empty)."""
    empty = sum(p.kind == EMPTY for p in problems)
    lines = [f"- {empty} cells are still empty (marked “{hand.MARK_TEXT[EMPTY]}” below)."] if empty > 1 else []
    named = [p for p in problems if empty < 2 or p.kind != EMPTY]
    lines += [f"- {plain(p.message)}" for p in named[:8]] + (["- …"] if len(named) > 8 else [])
    if empty_blocked := sum(p.kind == EMPTY and (p.row, p.col) in blocked for p in problems):
        which = ("That empty cell is" if empty == 1 else "The empty cells are all" if empty_blocked == empty
                 else f"{empty_blocked} of the empty cells are")
        lines.append(f"- {which} blocked by the causal mask: a blocked key's weight is 0, so type 0 there.")
    return "\n".join(lines)


def wrong_cells(check: AnswerCheck, columns: list[str], named: int = 4) -> str:
    """The wrong cells named after a check's count (" Off: row 3·tea, column 3·tea.", at most ``named`` of them and
    the rest counted), or "" when none is wrong: "8 of 9 cells right" left a student searching the grid for the one."""
    wrong = [(r, c) for r, row in enumerate(check.marks) for c, mark in enumerate(row) if mark == WRONG]
    if not wrong:
        return ""
    places = [f"row {plain(tokens[r])}, column {plain(columns[c])}" for r, c in wrong[:named]]
    more = f" and {len(wrong) - named} more" if len(wrong) > named else ""
    return f" Off: {'; '.join(places)}{more} (✗ in the marks below)."


# what a stage's answer is, in its check's message (step 3's sits beside the working's own message)
ANSWER_NAMES = {"scores": "raw scores", "scaled": "scaled scores", "weights": "weights", "context": "context vectors"}


def show_check(stage: str, check: AnswerCheck, answer: list[list], answer_cols: list[str], show_answer: bool) -> None:
    """How many cells of a stage's answer are right, a likely slip, the cells that are not numbers, and the marks."""
    yours = f"Your {ANSWER_NAMES[stage]}"
    if check.all_right:
        st.session_state.setdefault(hand.SOLVED_KEY, set()).add(stage)
        every = f"all {check.cells} cells" if check.cells > 1 else "the one cell"
        st.success(f"{yours}: {every} right. Well done!", icon=":material/check_circle:")
    else:
        st.info(f"{yours}: {check.count('right')} of {check.cells} cells right (within ±{ANSWER_TOLERANCE:g})."
                + wrong_cells(check, answer_cols))
        if diagnosis := diagnose(check, trace, stage):
            st.warning(hand.diagnosis_text(diagnosis, tokens, answer_cols), icon=":material/lightbulb:")
    if check.problems:
        blocked = set(map(tuple, (~trace.mask[0]).nonzero().tolist())) if stage == "weights" else set()
        st.warning(problems_list(check.problems, blocked))
    show_marks(check, answer, answer_cols, show_answer)


SHORT_MARK_CHARS = 8  # a mark this long ("… empty", "✗ −1.234") fits a number's 75-px column


def show_marks(check: AnswerCheck, typed: list[list], columns: list[str], show_answer: bool) -> None:
    """The typed grid marked ✓ / ✗ cell by cell (with the right values when asked for)."""
    marks = hand.marks_table(check, typed, tokens, columns, show_answer=show_answer)
    # "✗ 4 → 3.000" needs a wide column. A column of short marks gets a number's 75 px, as the grid typed into has
    # (sized to its "✓ 1", its "… empty" was cut); a longer mark ("⚠ not a number") sizes its own column
    short = [col for col in columns if col != hand.SUM_COLUMN and marks.data[col].str.len().max() <= SHORT_MARK_CHARS]
    wide = ({col: st.column_config.TextColumn(width="medium") for col in columns} if show_answer
            else {col: st.column_config.TextColumn(width="small") for col in short})
    st.dataframe(marks, width="content", column_config=wide | hand.DARK_ROW_NAMES)


def show_working_check(result: hand.WorkingCheck | None, typed: list[list], show_answer: bool) -> None:
    """How much of step 3's working is right, what each row's working says about the weights, and the marks. Nothing
    when no working was typed: it is optional."""
    if result is None:
        return
    if result.right == result.typed:
        st.success(f"Your working: all {result.typed} numbers you typed are right.", icon=":material/check_circle:")
    else:
        st.info(f"Your working: {result.right} of {result.typed} numbers you typed are right (empty cells are not "
                "checked).")
    if result.notes:
        st.warning("\n".join(f"- {note}" for note in result.notes), icon=":material/lightbulb:")
    if result.answer.problems:
        st.warning(problems_list(result.answer.problems))
    show_marks(result.answer, typed, [*tokens, hand.SUM_COLUMN], show_answer)


working = hand.softmax_working(trace)  # step 3's e^x and row sums
typed_working = None
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
        elif stage == "context":
            answer = context_inputs(start, tuple(truth.shape), answer_cols)
        elif stage == "weights":
            working_px = hand.grid_px(len(tokens) + 1, presenter, hand.SUM_COLUMN_PX - hand.GRID_COLUMN_PX)
            start_sizes = hand.sizes_beside(len(tokens), working_px, presenter, HAND_CHART)
            given, yours = side_by_side([hand.chart_px(len(tokens), presenter, start_sizes["cell_size"],
                                                       legend=start_sizes.get("legend", True)), working_px],
                                        "hand_row_weights")
            with given:
                st.markdown(start.label)
                show_start(start, start_sizes)
            with yours:
                typed_working = working_grid(working)
                st.markdown("**Your answer: the weights** (each e^x ÷ its row's sum)")
                answer = answer_grid(stage, tuple(truth.shape), answer_cols)
        else:
            given, yours = side_by_side([hand.chart_px(len(tokens), presenter, HAND_CHART["cell_size"]),
                                         hand.grid_px(len(answer_cols), presenter)], f"hand_row_{stage}")
            with given:
                st.markdown(start.label)
                show_start(start)
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
            working_check = (hand.check_working(typed_working, working, check, tokens, tokens)
                             if stage == "weights" else None)
            if working_check is not None and check.count("empty") == check.cells:
                st.info("Your weights are still empty, so only your working is checked. When it is right, divide "
                        "each e^x by its row's sum.")
            else:
                show_check(stage, check, answer, answer_cols, show_answer)
            show_working_check(working_check, typed_working, show_answer)
        if show_answer:
            if stage == "weights":
                st.markdown("**The right working:** e^x of each scaled score, then each row's sum.")
                st.dataframe(hand.working_table(working, tokens, tokens), width="content",
                             column_config=hand.DARK_ROW_NAMES)
                if any(working.forced):
                    st.caption("Where a row's e^x cannot be typed, the row shows e^(x − its largest score), as the "
                               "note under your working says; its weights are the same.")
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
