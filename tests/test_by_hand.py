"""Work it by hand: reading typed grids, checking answers, and the page driven through AppTest.

AppTest cannot type into ``st.data_editor`` (see FACTS.md), so the page tests put the typed grids
in the page's session store (``hand_grids``), exactly where the editors keep what a person types,
and assert on what the page shows: Q's chart, the marks, the messages.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pyarrow as pa
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from apptest_support import APP, ROOT, TIMEOUT, open_page
from attention_core import (ANSWER_TOLERANCE, EXAMPLE, HAND_STAGES, MAX_CELL_MAGNITUDE, AttentionInputError,
                            check_answer,
                            diagnose, hand_trace, likely_slips, read_grid, read_number, resize_grid, stage_truth)
from attention_core.by_hand import EMPTY, INVALID, RIGHT, WRONG

PAGE = "pages/by_hand.py"
EXAMPLE_SCORES = [[1, 0, 1], [2, 1, 3], [3, 1, 4]]  # Q = [[1,0],[1,1],[2,1]], K = [[1,1],[0,1],[1,2]]
BAD_CELLS = {"empty": (None, "is empty"), "blank text": ("  ", "is empty"), "text": ("abc", "not a number"),
             "NaN": ("nan", "NaN"), "inf": ("inf", "too large"), "minus inf": ("-inf", "too large"),
             "huge": ("1e308", "too large"), "huge float": (1e308, "too large"), "float NaN": (math.nan, "NaN"),
             "markup": ("<b>*1*</b>", "not a number"), "over 0": ("1/0", "a division by zero")}


def example_tensors():
    return [read_grid(rows, (len(rows), len(rows[0])), name).values
            for name, rows in (("X", EXAMPLE.x), ("W_Q", EXAMPLE.w_q), ("W_K", EXAMPLE.w_k), ("W_V", EXAMPLE.w_v))]


# ------------------------------------------------------------------------------------------- core


@pytest.mark.parametrize("typed, value", [("0.5", 0.5), (" -2 ", -2.0), ("−1", -1.0), ("1/2", 0.5), ("1e-3", 1e-3),
                                          (3, 3.0), (0.25, 0.25), ("1000", 1000.0), ("4,0", 4.0), ("−0,179", -0.179),
                                          ("3/1.4142", 3 / 1.4142), ("−1/0.5", -2.0)])  # a score over √d_k
def test_read_number_accepts_what_a_person_types(typed, value):
    assert read_number(typed) == value


@pytest.mark.parametrize("typed, value", [("√512", math.sqrt(512)), ("sqrt(512)", math.sqrt(512)),
                                          ("SQRT(4)", 2.0), ("1/√2", 1 / math.sqrt(2)), ("3/sqrt(2)", 3 / math.sqrt(2)),
                                          ("−√2", -math.sqrt(2)), ("√(0.25)", 0.5), ("√2/2", math.sqrt(2) / 2)])
def test_read_number_accepts_a_square_root(typed, value):
    """A student who knew the answer was √512 typed it so, and was told it was not a number."""
    assert read_number(typed) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("typed, value", [("2√2", 2 * math.sqrt(2)), ("2*sqrt(2)", 2 * math.sqrt(2)),
                                          ("3×√2", 3 * math.sqrt(2)), ("−2√2", -2 * math.sqrt(2)), ("0.5*0.2", 0.1),
                                          ("1/2√2", 1 / (2 * math.sqrt(2))), ("2√2/4", math.sqrt(2) / 2),
                                          ("√2√2", 2.0)])
def test_read_number_accepts_a_product(typed, value):
    """A student who wrote √8 as 2√2 was told it was not a number. "1/2√2" is one over 2√2, as it is said."""
    assert read_number(typed) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("typed", ["√", "sqrt(-1)", "sqrt(2", "√x", "1/sqrt(0)", "2**2", "2*", "*2", "(2)√2", "2.√2"])
def test_a_root_that_is_no_plain_number_is_refused(typed):
    with pytest.raises(AttentionInputError):
        read_number(typed)


@pytest.mark.parametrize("typed, reason", [("1/0", "a division by zero"), ("1/2/3", "not a number"),
                                           ("a/2", "not a number"), ("1e999/2", "not a number")])
def test_a_fraction_that_is_not_a_number_says_why(typed, reason):
    with pytest.raises(AttentionInputError, match=reason):
        read_number(typed)


@pytest.mark.parametrize("name", list(BAD_CELLS))
def test_every_bad_cell_is_named_with_its_reason(name):
    cell, reason = BAD_CELLS[name]
    rows = [["1", "2"], ["3", cell]]
    reading = read_grid(rows, (2, 2), "W_Q", ["x0", "x1"], ["q0", "q1"])
    assert not reading.ok
    (problem,) = reading.problems
    assert (problem.row, problem.col) == (1, 1)
    assert problem.message.startswith("W_Q, row x1, column q1") and reason in problem.message, problem.message
    assert reading.values[0].tolist() == [1.0, 2.0] and math.isnan(reading.values[1, 1])


def test_a_missing_row_or_cell_is_reported_not_raised():
    reading = read_grid([["1"]], (2, 2), "X")
    assert len(reading.problems) == 3 and all("is empty" in p.message for p in reading.problems)


def test_example_trace_has_the_worked_numbers_and_agrees_with_sdpa():
    x, w_q, w_k, w_v = example_tensors()
    trace = hand_trace(x, w_q, w_k, w_v)
    assert stage_truth(trace, "scores").tolist() == EXAMPLE_SCORES
    scores = torch.tensor(EXAMPLE_SCORES, dtype=torch.float64)
    assert torch.allclose(stage_truth(trace, "scaled"), scores / math.sqrt(2))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    expected = F.scaled_dot_product_attention(q[None], k[None], v[None])[0]
    assert torch.allclose(stage_truth(trace, "context"), expected, atol=1e-12)
    # row 1: e^0.7071, e^0, e^0.7071 over their sum
    assert stage_truth(trace, "weights")[0].tolist() == pytest.approx([0.40111, 0.19778, 0.40111], abs=1e-5)


def test_causal_example_gives_zero_weight_to_later_tokens():
    trace = hand_trace(*example_tensors(), causal=True)
    weights = stage_truth(trace, "weights")
    assert weights[0].tolist() == [1.0, 0.0, 0.0]
    assert torch.all(weights.triu(1) == 0)


def test_check_answer_marks_each_cell_within_the_tolerance():
    truth = torch.tensor([[0.5, 1.0], [2.0, -1.0]])
    typed = [[str(0.5 + ANSWER_TOLERANCE * 0.9), "1.02"], [None, "minus one"]]
    check = check_answer(typed, truth, "Scores", ["a", "b"], ["a", "b"])
    assert check.marks == ((RIGHT, WRONG), (EMPTY, INVALID))
    assert check.count(RIGHT) == 1 and not check.all_right and check.cells == 4
    assert [p.message for p in check.problems] == [
        "Scores, row b, column a is empty.", "Scores, row b, column b holds “minus one”, which is not a number."]
    assert check_answer([["0.5", "1"], ["2", "-1"]], truth).all_right


@pytest.mark.parametrize(("typed", "reason"), [("1/1/√2", "which is not a number"),
                                               ("3/√0", "a division by zero"), ("SQRT(2)/x", "which is not a number")])
def test_a_cell_that_cannot_be_read_is_quoted_as_typed(typed, reason):
    """The reason quoted "1/1/1.41421356237309" for a cell typed "1/1/√2": the text after its square roots were
    worked out, which the student never typed."""
    with pytest.raises(AttentionInputError) as error:
        read_number(typed)
    assert str(error.value) == f"holds “{typed}”, {reason}"


def typed_from(values: torch.Tensor, decimals: int = 3) -> list[list[str]]:
    return [[f"{v:.{decimals}f}" for v in row] for row in values.tolist()]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("stage", HAND_STAGES)
def test_each_slip_typed_in_full_is_named(stage, causal):
    """Typing what a slip gives makes every cell it changes wrong, and the diagnosis names that slip."""
    trace = hand_trace(*example_tensors(), causal=causal)
    truth = stage_truth(trace, stage)
    named = 0
    for slip in likely_slips(trace, stage):
        check = check_answer(typed_from(slip.values), truth)
        if check.all_right:  # this slip gives the truth for this example
            continue
        diagnosis = diagnose(check, trace, stage)
        assert diagnosis is not None and diagnosis.slip.key == slip.key, (slip.key, diagnosis)
        assert len(diagnosis.cells) == diagnosis.wrong == check.count(WRONG)
        named += 1
    assert named >= 3, f"only {named} slips at {stage} differ from the truth"


def test_forgetting_the_square_root_is_told_apart_from_forgetting_the_division():
    x, w_q, w_k, w_v = example_tensors()
    trace = hand_trace(x, torch.cat([w_q, w_q], 1), torch.cat([w_k, w_k], 1), torch.cat([w_v, w_v], 1))  # d_k = 4
    truth, scores = stage_truth(trace, "scaled"), stage_truth(trace, "scores")
    cases = {"not-divided": scores, "divided-by-d_k": scores / 4, "multiplied": scores * 2}
    for key, typed in cases.items():
        diagnosis = diagnose(check_answer(typed_from(typed), truth), trace, "scaled")
        assert diagnosis.slip.key == key
        assert "√d_k = 2" in diagnosis.slip.hint


def test_a_few_slipped_cells_among_right_ones_are_counted():
    trace = hand_trace(*example_tensors())
    truth = stage_truth(trace, "scaled")
    typed = typed_from(truth)
    typed[2][2] = f"{float(trace.scores[0, 2, 2]):.3f}"  # two cells not divided
    typed[1][2] = f"{float(trace.scores[0, 1, 2]):.3f}"
    typed[0][0] = "7"  # one cell plain wrong
    diagnosis = diagnose(check_answer(typed, truth), trace, "scaled")
    assert diagnosis.slip.key == "not-divided" and diagnosis.cells == ((1, 2), (2, 2)) and diagnosis.wrong == 3


def test_one_cell_of_many_that_matches_a_slip_by_chance_names_no_slip():
    """Weights typed as [0.5, −0.1, 0.6], [0.2, 0.2, 0.6], [0.1, 0.3, 0.6]: only the 0.1 is within 0.01 of the
    softmax of the raw scores (0.090); one cell of nine must not point the student at that mistake."""
    trace = hand_trace(*example_tensors())
    typed = [["0.5", "-0.1", "0.6"], ["0.2", "0.2", "0.6"], ["0.1", "0.3", "0.6"]]
    diagnosis = diagnose(check_answer(typed, stage_truth(trace, "weights")), trace, "weights")
    assert diagnosis is None or diagnosis.slip is None, diagnosis
    assert diagnosis is not None and [i for i, _ in diagnosis.row_notes] == [0], "row 1's −0.1 is still named"


def test_no_diagnosis_for_right_answers_or_unexplained_mistakes():
    trace = hand_trace(*example_tensors())
    truth = stage_truth(trace, "scores")
    assert diagnose(check_answer(typed_from(truth), truth), trace, "scores") is None
    assert diagnose(check_answer([["9", "9", "9"]] * 3, truth), trace, "scores") is None


def test_weights_that_cannot_be_weights_are_explained_by_their_rows():
    trace = hand_trace(*example_tensors())
    truth = stage_truth(trace, "weights")
    typed = typed_from(truth)
    typed[0] = ["0.3", "0.3", "0.9"]  # adds up to 1.5
    typed[1] = ["-0.2", "0.6", "0.6"]  # a negative weight
    diagnosis = diagnose(check_answer(typed, truth), trace, "weights")
    assert diagnosis.slip is None
    assert diagnosis.row_notes == ((0, "adds up to 1.5; the weights of a row always add up to 1."),
                                   (1, "has a negative weight; e^x is never negative, so no weight is."))
    words = hand.diagnosis_text(diagnosis, ["1·I", "2·like", "3·tea"], ["1·I", "2·like", "3·tea"])
    assert words.startswith("**Not weights yet.** Row 1·I adds up to 1.5;") and "Row 2·like has a negative" in words


def test_resize_keeps_the_overlap_and_fills_new_cells():
    assert resize_grid([["1", "2"], ["3", "4"]], (3, 1)) == [["1"], ["3"], ["0"]]
    assert resize_grid(None, (1, 2), fill=None) == [[None, None]]


def test_limits_are_named():
    assert read_number(str(MAX_CELL_MAGNITUDE)) == MAX_CELL_MAGNITUDE
    with pytest.raises(ValueError, match="too large"):
        read_number(str(MAX_CELL_MAGNITUDE * 1.01))


# ------------------------------------------------------------------------------------------- page


def page_charts(at: AppTest) -> dict[str, pd.DataFrame]:
    """Chart title -> its data, for every Altair chart on the page."""
    found = {}
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        title = spec.get("title", {})
        title = title.get("text", "") if isinstance(title, dict) else str(title)
        data = [pa.ipc.open_stream(d.data.data).read_pandas() for d in element.proto.datasets]
        found[title] = pd.concat(data, ignore_index=True)
    return found


def matrix_of(data: pd.DataFrame) -> list[list[float]]:
    return data.pivot_table(index="row_index", columns="col_index", values="value").values.tolist()


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(e.value) for e in at.get(kind)]


def run_page(grids: dict | None = None) -> AppTest:
    """The page run on its own, with typed grids already in the session (as a person's typing leaves them)."""
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    if grids is not None:
        at.session_state["hand_grids"] = grids
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def typed_example() -> dict:
    """The example's matrices as a student would type them."""
    return {name: [[str(v) for v in row] for row in rows]
            for name, rows in (("X", EXAMPLE.x), ("W_Q", EXAMPLE.w_q), ("W_K", EXAMPLE.w_k), ("W_V", EXAMPLE.w_v))}


def check(at: AppTest, stage: str) -> AppTest:
    at.button(key=f"hand-check-{stage}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_opens_from_the_app_with_the_example():
    at = open_page(PAGE)
    assert texts(at, "title") == ["Work it by hand"]
    charts = page_charts(at)
    assert matrix_of(charts["Q = X·W_Q"]) == [[1, 0], [1, 1], [2, 1]]
    assert matrix_of(charts["K = X·W_K"]) == [[1, 1], [0, 1], [1, 2]]
    assert [s for s in texts(at, "subheader")] == ["Your matrices", "Q, K and V from your numbers", "Your turn"]
    assert any("±0.01" in m for m in texts(at, "markdown"))
    assert len(at.tabs) == len(HAND_STAGES)


def test_every_grid_to_type_in_shows_an_empty_cell_empty():
    at = open_page(PAGE)
    editors = [frame for frame in at.dataframe if frame.proto.editing_mode]  # (0 is a read-only table)
    assert len(editors) >= 4 + len(HAND_STAGES), len(editors)  # X, W_Q, W_K, W_V and an answer per stage
    assert {frame.proto.placeholder for frame in editors} == {""}  # not Streamlit's grey "None"
    assert all(frame.proto.HasField("placeholder") for frame in editors)


def test_changed_matrices_change_every_stage():
    grids = typed_example()
    grids["X"][0] = ["2", "3"]  # token 1 becomes (2, 3): q_1 = (5, 3)
    at = run_page(grids)
    assert matrix_of(page_charts(at)["Q = X·W_Q"])[0] == [5, 3]
    grids = at.session_state["hand_grids"]
    grids["answer_scores"] = [["25", "3", "11"], ["7", "1", "3"], ["9", "1", "4"]]  # k_1 = (2, 5) now too
    check(at, "scores")
    assert texts(at, "success") == ["Your raw scores: all 9 cells right. Well done!"]


def test_a_wrong_cell_is_marked_and_the_right_answer_then_accepted():
    grids = typed_example() | {"answer_scores": [["1", "0", "1"], ["2", "1", "3"], ["3", "1", "5"]]}
    at = check(run_page(grids), "scores")
    # the wrong cell named: "8 of 9" alone left a student searching the grid for it
    assert texts(at, "info") == ["Your raw scores: 8 of 9 cells right (within ±0.01). Off: row 3·tea, column 3·tea "
                                 "(✗ in the marks below)."]
    marks = at.tabs[0].dataframe[-1].value  # the scores tab: its answer editor, then the marks
    assert marks.iloc[2, 2] == "✗ 5" and marks.iloc[0, 0] == "✓ 1"
    widths = {c["width"] for name, c in json.loads(at.tabs[0].dataframe[-1].proto.columns).items() if name != "_index"}
    assert widths == {"small"}, widths  # a number's 75 px: "… empty", sized to "✓ 1", was cut off
    at.toggle(key="hand-show-scores").set_value(True).run()
    assert at.tabs[0].dataframe[-1].value.iloc[2, 2] == "✗ 5 → 4.000"
    widths = {c["width"] for name, c in json.loads(at.tabs[0].dataframe[-1].proto.columns).items() if name != "_index"}
    assert widths == {"medium"}, widths  # "✗ 5 → 4.000" is cut off in a column sized for a number
    assert "1 · Raw scores QKᵀ" in page_charts(at)
    at.session_state["hand_grids"]["answer_scores"][2][2] = "4"
    at.run()
    assert texts(at, "success") == ["Your raw scores: all 9 cells right. Well done!"]
    assert at.session_state["hand_solved"] == {"scores"}


def test_a_cell_typed_as_a_root_or_a_fraction_is_marked_with_the_number_it_was_read_as():
    """A student who typed 2√2 saw "✓ 2√2" and could not tell what the page had read; 2.83 typed plainly needs no
    second number."""
    scaled = [[f"{v / math.sqrt(2):.3f}" for v in row] for row in EXAMPLE_SCORES]
    scaled[0][0], scaled[2][2], scaled[1][1] = "1/√2", "2√2", "3/4"  # right, right, wrong (1/√2 = 0.707)
    at = check(run_page(typed_example() | {"answer_scaled": scaled}), "scaled")
    marks = at.tabs[HAND_STAGES.index("scaled")].dataframe[-1].value
    assert marks.iloc[0, 0] == "✓ 1/√2 = 0.707" and marks.iloc[2, 2] == "✓ 2√2 = 2.828", marks
    assert marks.iloc[1, 1] == "✗ 3/4 = 0.750" and marks.iloc[0, 1] == f"✓ {scaled[0][1]}", marks


def test_the_page_names_a_likely_slip():
    scaled_without_division = [[str(v) for v in row] for row in EXAMPLE_SCORES]  # the raw scores typed as scaled
    at = check(run_page(typed_example() | {"answer_scaled": scaled_without_division}), "scaled")
    hints = texts(at, "warning")
    assert any(h.startswith("**A likely slip.** All 8 wrong cells look like a common mistake.")
               and "divide each by √d_k = 1.414" in h for h in hints), hints
    grids = at.session_state["hand_grids"]
    grids["answer_scaled"] = [[f"{v / math.sqrt(2):.3f}" for v in row] for row in EXAMPLE_SCORES]
    grids["answer_scaled"][2][2] = "4"  # tea → tea: the raw score, not divided
    at.run()
    assert any(h.startswith("**A slip, or a typo?** Your wrong cell matches a common mistake. This cell is "
                            "the raw score") for h in texts(at, "warning")), texts(at, "warning")
    grids["answer_scaled"][2][2] = "9"
    at.run()
    assert not any("slip" in h for h in texts(at, "warning")), "nothing known explains a 9"



def test_every_slip_hint_can_be_said_of_one_cell():
    trace = hand_trace(*example_tensors(), causal=True)
    for stage in HAND_STAGES:
        for slip in likely_slips(trace, stage):
            assert hand.one_cell(slip.hint).startswith("This cell "), slip.hint


def test_the_example_scores_are_not_symmetric_so_a_transposed_answer_is_named():
    """Token i need not attend to j as j attends to i: the example shows it, and scores typed the wrong way round
    are marked wrong and named, as they could not be with a symmetric Q Kᵀ. The hint said "k_i · q_j", which a
    student could not tell from q_i · k_j: it says in words that rows and columns are swapped."""
    scores = torch.tensor(EXAMPLE_SCORES)
    assert not torch.equal(scores, scores.T)
    transposed = [[str(v) for v in row] for row in scores.T.tolist()]
    at = check(run_page(typed_example() | {"answer_scores": transposed}), "scores")
    assert texts(at, "info") == ["Your raw scores: 3 of 9 cells right (within ±0.01). Off: row 1·I, column 2·like; "
                                 "row 1·I, column 3·tea; row 2·like, column 1·I; row 2·like, column 3·tea and 2 more "
                                 "(✗ in the marks below)."]  # the diagonal is right
    assert any(h.startswith("**A likely slip.** All 6 wrong cells look like a common mistake.")
               and "query j's score for key i" in h and "rows and columns swapped" in h and "k_i · q_j" not in h
               for h in texts(at, "warning")), texts(at, "warning")

def test_weights_are_checked_within_the_tolerance():
    truth = [[0.401, 0.198, 0.401], [0.284, 0.140, 0.576], [0.306, 0.074, 0.620]]
    grids = typed_example() | {"answer_weights": [[f"{v:.3f}" for v in row] for row in truth]}
    at = check(run_page(grids), "weights")
    assert texts(at, "success") == ["Your weights: all 9 cells right. Well done!"]
    grids = at.session_state["hand_grids"]
    grids["answer_weights"][0][0] = "0.42"  # off by 0.019
    at.run()
    assert texts(at, "info") == ["Your weights: 8 of 9 cells right (within ±0.01). Off: row 1·I, column 1·I (✗ in the "
                                 "marks below)."]


@pytest.mark.parametrize("name", list(BAD_CELLS))
def test_every_bad_matrix_cell_gets_a_message_and_nothing_typed_is_lost(name):
    cell, reason = BAD_CELLS[name]
    if name == "float NaN":
        reason = "is empty"  # the editor hands back a cleared cell as NaN
    grids = typed_example() | {"answer_context": [["1", "2"], [None, None], [None, None]]}
    grids["W_K"][1][0] = cell
    at = run_page(grids)
    (error,) = texts(at, "error")
    # grids["W_K"][1][0]: the second row, first column, counted from 1 as on the page
    assert "W\\_K, row x2, column k1" in error and reason.split()[-1] in error, error
    assert not at.get("vega_lite_chart"), "nothing is computed from a bad matrix"
    kept = at.session_state["hand_grids"]
    assert kept["answer_context"] == [["1", "2"], [None, None], [None, None]]
    kept["W_K"][1][0] = "0"
    at.run()
    assert not at.error and at.get("vega_lite_chart")
    assert at.session_state["hand_grids"]["answer_context"][0] == ["1", "2"]


@pytest.mark.parametrize("name", ["empty", "text", "NaN", "inf", "huge", "over 0"])
def test_bad_answer_cells_are_named_and_the_rest_still_marked(name):
    cell, reason = BAD_CELLS[name]
    grids = typed_example() | {"answer_scaled": [[cell, "0", "0.707"], ["1.414", "0.707", "2.121"],
                                                 ["2.121", "0.707", "2.828"]]}
    at = check(run_page(grids), "scaled")
    assert texts(at, "info") == ["Your scaled scores: 8 of 9 cells right (within ±0.01)."]
    (warning,) = texts(at, "warning")
    assert "row 1·I, column 1·I" in warning and reason.split()[-1] in warning
    named = {"inf": "⚠ too large", "huge": "⚠ too large", "over 0": "⚠ division by zero"}
    if name in named:  # the cell's mark says what the list says (it said "not a number" for "inf" and "1/0")
        marks = at.tabs[HAND_STAGES.index("scaled")].dataframe[-1].value
        assert marks.iloc[0, 0] == named[name], marks


def test_size_change_keeps_the_overlapping_numbers_and_reset_restores_the_example():
    grids = typed_example()
    grids["X"][0] = ["7", "8"]
    at = run_page(grids)
    at.number_input(key="hand-size-tokens").set_value(4).run()
    assert not at.exception
    kept = at.session_state["hand_grids"]
    assert kept["X"] == [["7", "8"], ["0", "1"], ["1", "1"], ["0", "0"]]
    assert len(matrix_of(page_charts(at)["Q = X·W_Q"])) == 4
    at.button(key="hand-reset").click().run()
    assert at.session_state["hand_grids"]["X"] == typed_example()["X"]
    assert matrix_of(page_charts(at)["Q = X·W_Q"]) == [[1, 0], [1, 1], [2, 1]]


def test_a_smaller_size_and_back_gives_the_hidden_numbers_back_and_a_size_change_clears_the_marks():
    """Lowering T hid X's last rows, and raising it again brought them back as zeros (the example's too); a check
    made before went on marking the new, smaller grid unasked ("all 1 cells right", and Start here counted it)."""
    grids = typed_example() | {"answer_scores": [["1", "0", "1"], ["2", "1", "3"], ["3", "1", "5"]]}
    grids["X"][2] = ["7", "8"]
    at = check(run_page(grids), "scores")
    assert texts(at, "info")[0].startswith("Your raw scores: 4 of 9 cells right")
    at.number_input(key="hand-size-tokens").set_value(1).run()
    assert not [t for t in texts(at, "info") + texts(at, "success") if t.startswith("Your raw scores")]
    assert "scores" not in at.session_state["hand_solved"] if "hand_solved" in at.session_state else True
    assert at.session_state["hand_grids"]["answer_scores"] == [["1"]]
    check(at, "scores")
    assert texts(at, "success") == ["Your raw scores: the one cell right. Well done!"]
    at.number_input(key="hand-size-tokens").set_value(4).run()
    assert at.session_state["hand_grids"]["X"] == [["1", "0"], ["0", "1"], ["7", "8"], ["0", "0"]]
    at.number_input(key="hand-size-d_model").set_value(1).run()
    at.number_input(key="hand-size-d_model").set_value(2).run()
    assert at.session_state["hand_grids"]["X"] == [["1", "0"], ["0", "1"], ["7", "8"], ["0", "0"]]
    assert at.session_state["hand_grids"]["W_Q"] == typed_example()["W_Q"]
    at.button(key="hand-reset").click().run()
    at.number_input(key="hand-size-tokens").set_value(1).run()
    at.number_input(key="hand-size-tokens").set_value(3).run()
    assert at.session_state["hand_grids"]["X"] == typed_example()["X"], "a reset forgets the numbers set aside"


def test_causal_mask_changes_the_weights_to_check():
    grids = typed_example() | {"answer_weights": [["1", "0", "0"], ["0.670", "0.330", "0"],
                                                   ["0.306", "0.074", "0.620"]]}
    at = run_page(grids)
    at.checkbox(key="hand-size-causal").check().run()
    check(at, "weights")
    assert texts(at, "success") == ["Your weights: all 9 cells right. Well done!"]


@pytest.mark.parametrize("weights, said", [
    ([["1", "", ""], ["0.670", "0.330", ""], ["0.306", "0.074", "0.620"]], "The empty cells are all blocked"),
    ([["1", "", ""], ["0.670", "", ""], ["0.306", "0.074", "0.620"]], "3 of the empty cells are blocked"),
    ([["1", "0", ""], ["0.670", "0.330", "0"], ["0.306", "0.074", "0.620"]], "That empty cell is blocked")])
def test_blocked_weights_left_empty_are_said_to_be_zero(weights, said):
    """With the causal mask, the three blocked cells left empty got "3 cells are still empty" and no word on why
    they take 0 (that was said only in the tab's intro)."""
    at = run_page(typed_example() | {"answer_weights": weights})
    at.checkbox(key="hand-size-causal").check().run()
    check(at, "weights")
    warnings = texts(at, "warning")
    assert any(f"{said} by the causal mask: a blocked key's weight is 0, so type 0 there." in w for w in warnings), \
        warnings
    unmasked = check(run_page(typed_example() | {"answer_weights": weights}), "weights")
    assert not any("causal mask" in w for w in texts(unmasked, "warning")), "no mask, nothing blocked"


def test_the_page_says_how_long_typed_numbers_stay():
    """A student typed and checked two tabs, reloaded, and found every grid empty, with nothing that had said so."""
    note = [c for c in texts(run_page(), "caption") if "The numbers you type stay while this tab is open" in c]
    assert len(note) == 1 and "a reload or a new visit starts with empty grids" in note[0], note


# ------------------------------------------------------------------------------------- properties

NUMBERS = st.floats(-MAX_CELL_MAGNITUDE, MAX_CELL_MAGNITUDE, allow_nan=False)


@given(NUMBERS)
def test_any_number_in_range_reads_back_as_typed(value):
    assert read_number(repr(value)) == value
    assert read_number(value) == value


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=2), min_size=3, max_size=3))
def test_the_true_stages_rounded_to_3_decimals_are_always_right(x_rows):
    _, w_q, w_k, w_v = example_tensors()
    trace = hand_trace(torch.tensor(x_rows, dtype=torch.float64), w_q, w_k, w_v)
    for stage in HAND_STAGES:
        truth = stage_truth(trace, stage)
        typed = [[f"{v:.3f}" for v in row] for row in truth.tolist()]
        assert check_answer(typed, truth).all_right
        typed[0][0] = f"{float(truth[0, 0]) + 2 * ANSWER_TOLERANCE:.3f}"
        assert check_answer(typed, truth).marks[0][0] == WRONG


# --------------------------------------------------------------------- starting points, presenter

from attention_ui import hand  # noqa: E402

START_TITLES = {"scaled": "Raw scores S = QKᵀ (step 1)", "weights": "Scaled scores S / √d_k (step 2)",
                "context": "Weights A (step 3)"}


def chart_data(at: AppTest, title: str) -> pd.DataFrame:
    return page_charts(at)[title]


def labels_of(data: pd.DataFrame) -> list[list[str]]:
    return data.sort_values(["row_index", "col_index"]).groupby("row_index")["label"].apply(list).tolist()


def test_each_stage_after_the_first_starts_from_the_previous_right_values():
    trace = hand_trace(*example_tensors())
    assert hand.starting_point(trace, "scores") is None
    scaled = hand.starting_point(trace, "scaled")
    assert scaled.values.tolist() == EXAMPLE_SCORES and "raw scores S" in scaled.label and "step 1" in scaled.label
    assert torch.equal(hand.starting_point(trace, "weights").values, stage_truth(trace, "scaled"))
    context = hand.starting_point(trace, "context")
    assert torch.equal(context.values, stage_truth(trace, "weights")) and context.blocked is None
    assert "**and V**" in context.label and not context.note  # V is drawn beside the weights


def test_a_causal_start_shows_blocked_keys_as_blocked():
    trace = hand_trace(*example_tensors(), causal=True)
    weights_start = hand.starting_point(trace, "weights").values
    assert torch.isneginf(weights_start.triu(1)[torch.ones(3, 3, dtype=torch.bool).triu(1)]).all()
    assert torch.equal(hand.starting_point(trace, "context").blocked, torch.ones(3, 3, dtype=torch.bool).triu(1))
    assert "mask" in hand.starting_point(trace, "scaled").note  # every score is still asked for at step 2
    start = hand.starting_point(trace, "weights")  # −∞ where step 2's right answers were numbers: it says so
    assert "causal mask applied" in start.label and "−∞ where blocked" in start.title


def test_the_page_shows_the_starting_values_in_each_later_tab():
    at = run_page(typed_example())
    for index, stage in enumerate(HAND_STAGES):
        words = " ".join(m.value for m in at.tabs[index].markdown)
        assert ("Start from" in words) == (index > 0), (stage, words)
    assert "Start from the raw scores S" in " ".join(m.value for m in at.tabs[1].markdown)
    assert "**and V**" in " ".join(m.value for m in at.tabs[3].markdown)
    assert matrix_of(chart_data(at, START_TITLES["scaled"])) == EXAMPLE_SCORES
    scaled = chart_data(at, START_TITLES["weights"])
    assert sum(matrix_of(scaled), []) == pytest.approx([v / math.sqrt(2) for row in EXAMPLE_SCORES for v in row])
    assert labels_of(scaled)[2] == ["2.121", "0.707", "2.828"]
    weights = chart_data(at, START_TITLES["context"])
    assert labels_of(weights)[0] == ["0.401", "0.198", "0.401"]
    assert set(weights["query"]) == {"1·I", "2·like", "3·tea"}
    assert set(weights["key"]) == {"1·I", "2·like", "3·tea"}  # the answer grid's labels


def test_a_causal_page_marks_blocked_keys_in_the_starting_values():
    at = run_page(typed_example())
    at.checkbox(key="hand-size-causal").check().run()
    scaled = labels_of(chart_data(at, "Masked scaled scores (step 2, then −∞ where blocked)"))
    assert scaled[0][1:] == ["−∞", "−∞"] and scaled[1][2] == "−∞" and scaled[2][2] == "2.828"
    weights = labels_of(chart_data(at, START_TITLES["context"]))
    assert weights[0] == ["1.000", "×", "×"] and weights[1][2] == "×"
    assert any("×: a key the causal mask blocks" in c.value for c in at.tabs[3].caption)
    assert any("−∞" in c.value for c in at.tabs[2].caption)
    assert labels_of(chart_data(at, START_TITLES["scaled"]))[0] == ["1.000", "0.000", "1.000"]


def chart_sizes_of(at: AppTest, title: str) -> tuple[int, int]:
    """(width of the cells, font size of the printed numbers) of a chart on the page."""
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        text = spec.get("title", {})
        if (text.get("text") if isinstance(text, dict) else text) == title:
            fonts = [layer["mark"].get("fontSize") for layer in spec["layer"]
                     if isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"]
            return spec["width"], fonts[0]
    raise KeyError(title)


def test_presenter_mode_draws_q_k_v_larger():
    at = run_page(typed_example())
    width, font = chart_sizes_of(at, "Q = X·W_Q")
    presenting = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    presenting.query_params["presenter"] = "true"
    presenting.session_state["hand_grids"] = typed_example()
    presenting.run()
    assert not presenting.exception
    big_width, big_font = chart_sizes_of(presenting, "Q = X·W_Q")
    assert font == 14 and big_font >= 20 and big_width >= 1.5 * width
    assert chart_sizes_of(presenting, START_TITLES["scaled"])[1] >= 20


@pytest.mark.parametrize("widest", [1, 2, 3, 4])
def test_presenter_charts_fit_three_across_at_1280(widest):
    sizes = hand.chart_sizes(True, widest)
    assert sizes["font_size"] >= 20 and sizes["cell_size"] >= hand.PAGE_CHART["cell_size"]
    if widest <= 3:
        assert sizes["cell_size"] * widest + hand.PRESENTER_FRAME_PX <= hand.PRESENTER_THIRD_PX
    assert hand.chart_sizes(False, widest) == hand.PAGE_CHART


# ------------------------------------------------------------------------- step 3's working, V in step 4

WORKING = "working_weights"  # the session store's name of step 3's working grid (e^x, then each row's sum)


def right_working(causal: bool = False) -> list[list[str]]:
    """Step 3's working as a student types it: e^x of each scaled score (0 where blocked), then the row's sum."""
    trace = hand_trace(*example_tensors(), causal=causal)
    exps = stage_truth(trace, "scaled").exp().masked_fill(~trace.mask[0], 0.0)
    return [[f"{v:.3f}" for v in row] + [f"{float(row.sum()):.3f}"] for row in exps]


def right_weights(causal: bool = False) -> list[list[str]]:
    return typed_from(stage_truth(hand_trace(*example_tensors(), causal=causal), "weights"))


def weights_tab(at: AppTest):
    return at.tabs[HAND_STAGES.index("weights")]


def all_words(at: AppTest) -> str:
    return "\n".join(texts(at, "success") + texts(at, "info") + texts(at, "warning") + texts(at, "error"))


BOTH_RIGHT = ["Your weights: all 9 cells right. Well done!", "Your working: all 12 numbers you typed are right."]


def test_right_working_is_told_right():
    at = check(run_page(typed_example() | {WORKING: right_working(), "answer_weights": right_weights()}), "weights")
    assert texts(at, "success") == BOTH_RIGHT
    assert not texts(at, "warning")
    marks = weights_tab(at).dataframe[-1].value  # the working's marks, under the weights' own
    assert list(marks.columns) == ["1·I", "2·like", "3·tea", "row sum"]
    assert marks.iloc[2, 3] == "✓ 27.289" and marks.iloc[0, 1] == "✓ 1.000"


def test_a_wrong_e_to_the_x_is_named_with_its_slip():
    working = right_working()
    working[1][2] = f"{math.exp(3):.3f}"  # 2·like → 3·tea: e to the raw score 3, not to 3/√2
    at = check(run_page(typed_example() | {WORKING: working, "answer_weights": right_weights()}), "weights")
    assert "Your working: 11 of 12 numbers you typed are right (empty cells are not checked)." in texts(at, "info")
    notes = [w for w in texts(at, "warning") if "Row “2·like”" in w]
    assert len(notes) == 1 and "your e^x for “3·tea” is off" in notes[0], texts(at, "warning")
    assert "(it is e to the raw score: start from the scaled score of step 2)" in notes[0]
    assert "row sum adds up your e^x" not in notes[0]  # the sum typed is the right one, not the sum of these e^x
    assert weights_tab(at).dataframe[-1].value.iloc[1, 2] == "✗ 20.086"


def test_an_e_to_the_x_rounded_too_far_is_told_to_keep_more_digits():
    """16.9 typed for e^2.828 = 16.92 (0.1 % away) was only "off", the student left to look for a slip not made."""
    working = right_working()
    working[2][2] = "16.9"
    at = check(run_page(typed_example() | {WORKING: working}), "weights")
    notes = [w for w in texts(at, "warning") if "Row “3·tea”" in w]
    assert len(notes) == 1 and "your e^x for “3·tea” is off, if only a little: keep more digits (a number of the " \
        "working is right within 0.1% of it, or ±0.01)" in notes[0], texts(at, "warning")
    working[2][2] = "12"  # far off: no word of rounding
    at = check(run_page(typed_example() | {WORKING: working}), "weights")
    assert not [w for w in texts(at, "warning") if "if only a little" in w], texts(at, "warning")


def test_a_wrong_row_sum_is_named_and_told_apart_from_wrong_e_to_the_x():
    working = right_working()
    working[1][3] = "15.5"  # 2·like's sum, e^x right
    at = check(run_page(typed_example() | {WORKING: working}), "weights")
    words = all_words(at)
    assert "Row “2·like”: your e^x are right, but your row sum is off (add them up again)." in words, words
    assert "Row “1·I”" not in words and "Row “3·tea”" not in words
    grids = at.session_state["hand_grids"]
    grids[WORKING][2][0] = "9"  # 3·tea → 1·I wrong, and the sum typed as the sum of the typed e^x
    grids[WORKING][2][3] = f"{9 + float(grids[WORKING][2][1]) + float(grids[WORKING][2][2]):.3f}"
    at.run()
    words = all_words(at)
    assert ("Row “3·tea”: your e^x for “1·I” is off; your row sum adds up your e^x, so it is off only because "
            "they are.") in words, words


def test_right_working_and_wrong_weights_point_at_the_division():
    weights = right_weights()
    weights[2] = ["0.5", "0.2", "0.3"]
    at = check(run_page(typed_example() | {WORKING: right_working(), "answer_weights": weights}), "weights")
    assert "Your working: all 12 numbers you typed are right." in texts(at, "success")
    assert any("Row “3·tea”: your e^x and row sum are right, but these weights are not your e^x ÷ your row sum" in w
               for w in texts(at, "warning")), texts(at, "warning")


def test_right_working_and_weights_rounded_to_one_decimal_are_told_they_are_rounded_too_far():
    """0.3, 0.1, 0.6 typed for 0.306, 0.074, 0.620: the student had divided, and was told to divide."""
    weights = right_weights()
    weights[2] = ["0.3", "0.1", "0.6"]
    at = check(run_page(typed_example() | {WORKING: right_working(), "answer_weights": weights}), "weights")
    warnings = texts(at, "warning")
    assert any("Row “3·tea”: your e^x and row sum are right, and so are your weights, but rounded too far: keep two "
               "or three decimals." in w for w in warnings), warnings
    assert not any("not your e^x ÷ your row sum" in w for w in warnings), warnings


@pytest.mark.parametrize("stage, typed, said", [
    ("scaled", [["0.7", "0", "0.7"], ["1.4", "0.7", "2.1"], ["2.1", "0.7", "2.8"]], "rounded too far"),
    ("scores", [["-1", "0", "-1"], ["-2", "-1", "-3"], ["3", "1", "4"]], "the wrong sign"),
    ("context", [["-0.802", "-2.203"], ["0.86", "2.436"], ["0.926", "2.546"]], "the wrong sign")])
def test_numbers_rounded_to_one_decimal_or_with_the_wrong_sign_are_named(stage, typed, said):
    """Scaled scores typed as 0.7, 1.4, 2.1 for 0.707, 1.414, 2.121 got "5 of 9 cells right" and nothing else."""
    trace = hand_trace(*example_tensors())
    diagnosis = diagnose(check_answer(typed, stage_truth(trace, stage)), trace, stage)
    assert diagnosis is not None and said in diagnosis.slip.hint, diagnosis


@pytest.mark.parametrize("typed, value", [("40%", 0.4), ("12.5%", 0.125), ("−5 %", -0.05), ("0,5%", 0.005)])
def test_a_weight_typed_as_a_percentage_is_read_as_the_check_yourself_boxes_read_it(typed, value):
    assert read_number(typed) == pytest.approx(value)
    for odd in ("%", "12%%"):
        with pytest.raises(AttentionInputError, match="not a number"):
            read_number(odd)


def test_empty_working_is_neither_wrong_nor_in_the_way():
    at = check(run_page(typed_example() | {"answer_weights": right_weights()}), "weights")
    assert texts(at, "success") == ["Your weights: all 9 cells right. Well done!"]
    assert "working" not in all_words(at).lower()
    assert at.session_state["hand_solved"] == {"weights"}
    partial = [row[:] for row in right_working()]  # row 1 only; the rest left empty
    partial[1:] = [[""] * 4, [None] * 4]
    at.session_state["hand_grids"][WORKING] = partial
    at.run()
    assert texts(at, "success") == ["Your weights: all 9 cells right. Well done!",
                                    "Your working: all 4 numbers you typed are right."]
    assert not texts(at, "warning")


def test_a_blocked_keys_e_to_the_x_is_zero_and_a_nonzero_one_is_named():
    at = run_page(typed_example() | {WORKING: right_working(causal=True), "answer_weights": right_weights(causal=True)})
    at.checkbox(key="hand-size-causal").check().run()
    assert any("e^(−∞) = 0" in c.value for c in weights_tab(at).caption), "the working says a blocked e^x is 0"
    check(at, "weights")
    assert texts(at, "success") == BOTH_RIGHT
    at.session_state["hand_grids"][WORKING][0][1] = "1"  # 1·I → 2·like is blocked: e^0 = 1 is its unmasked e^x
    at.session_state["hand_grids"][WORKING][0][2] = ""  # a blocked cell left empty is fine
    at.run()
    words = all_words(at)
    assert "Row “1·I”: “2·like” is blocked by the causal mask, so its e^x is e^(−∞) = 0." in words, words
    assert "“3·tea” is blocked" not in words


def test_show_the_right_values_shows_the_working_too():
    at = run_page(typed_example())
    assert len(weights_tab(at).dataframe) == 2  # the working's grid and the weights' grid
    at.toggle(key="hand-show-weights").set_value(True).run()
    right = weights_tab(at).dataframe[-1].value
    assert list(right.columns) == ["1·I", "2·like", "3·tea", "row sum"]
    assert right.values.tolist() == right_working()
    assert any(m.value.startswith("**The right working:**") for m in weights_tab(at).markdown)
    assert "3 · Softmax: the weights" in page_charts(at)  # and the weights, as before
    at.checkbox(key="hand-size-causal").check().run()
    right = weights_tab(at).dataframe[-1].value
    assert right.iloc[0].tolist() == ["2.028", "0 (blocked)", "0 (blocked)", "2.028"], right
    assert right.iloc[2].tolist() == right_working(causal=True)[2]


def test_an_e_to_the_x_too_large_to_type_gets_words_not_a_traceback():
    grids = typed_example()
    grids["X"] = [["3", "0"], ["0", "3"], ["3", "3"]]  # 3·tea's scaled scores reach 9 · 4 / √2 ≈ 25.5
    at = run_page(grids)
    notes = [i for i in texts(at, "info") if "more than 1000" in i]
    assert len(notes) == 1 and "e^(x − 25.456) in row “3·tea”" in notes[0], texts(at, "info")
    trace = hand_trace(*[read_grid(rows, (len(rows), len(rows[0])), name).values
                         for name, rows in ((n, grids[n]) for n in ("X", "W_Q", "W_K", "W_V"))])
    scaled = stage_truth(trace, "scaled")
    shifted = (scaled[2] - scaled[2].max()).exp()
    working = [[""] * 4, [""] * 4, ["1e11", "2", "3", "4"]]
    at.session_state["hand_grids"][WORKING] = working
    check(at, "weights")
    (problems,) = [w for w in texts(at, "warning") if "Your working, row 3·tea, column 1·I" in w]
    assert "too large" in problems
    at.session_state["hand_grids"][WORKING][2] = [f"{v:.3f}" for v in [*shifted.tolist(), float(shifted.sum())]]
    at.run()
    assert "Your working: all 4 numbers you typed are right." in texts(at, "success"), all_words(at)


def test_v_is_drawn_in_step_4_beside_the_weights():
    at = run_page(typed_example())
    context_tab = at.tabs[HAND_STAGES.index("context")]
    titles = {}
    for element in context_tab.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        title = spec.get("title", {})
        data = [pa.ipc.open_stream(d.data.data).read_pandas() for d in element.proto.datasets]
        titles[title.get("text", "") if isinstance(title, dict) else str(title)] = pd.concat(data, ignore_index=True)
    assert set(titles) == {START_TITLES["context"], "V = X·W_V"}, set(titles)
    assert matrix_of(titles["V = X·W_V"]) == [[1, 2], [0, 1], [1, 3]]  # X·W_V of the example
    words = " ".join(m.value for m in context_tab.markdown)
    assert "shown above" not in words and "and V" in words


def test_checking_the_working_alone_does_not_list_nine_empty_weights():
    at = check(run_page(typed_example() | {WORKING: right_working()}), "weights")
    assert texts(at, "info") == ["Your weights are still empty, so only your working is checked. When it is right, "
                                 "divide each e^x by its row's sum."]
    assert texts(at, "success") == ["Your working: all 12 numbers you typed are right."]
    assert not texts(at, "warning"), "no list of the weights' empty cells"


def test_a_row_too_large_to_type_says_how_to_work_it_when_its_e_to_the_x_is_typed_anyway():
    grids = typed_example()
    grids["X"] = [["3", "0"], ["0", "3"], ["3", "3"]]  # row 1·I: e^6.364 + 1 + e^6.364 ≈ 1163, more than a cell takes
    at = run_page(grids | {WORKING: [["1e5", "1", "", ""], [""] * 4, [""] * 4]})
    check(at, "weights")
    words = all_words(at)
    assert ("Row “1·I”: its e^x are too large to type, so type e^(x − 6.364) instead (see the note under your "
            "working); your e^x for “2·like” is off.") in words, words
    assert weights_tab(at).dataframe[-1].value.iloc[0, 0] == "⚠ too large"  # a number, but too large for a cell


def test_a_row_too_small_to_check_is_worked_with_its_largest_score_subtracted():
    x = torch.tensor([[2.0, 0], [0, 2], [2, 2]], dtype=torch.float64)
    w_k = torch.tensor([[-2.0, -1], [0, -3]], dtype=torch.float64)
    trace = hand_trace(x, torch.tensor([[3.0, 0], [0, 1]], dtype=torch.float64), w_k, torch.eye(2, dtype=torch.float64))
    working = hand.softmax_working(trace)
    assert float(working.plain[2, :3].max()) < hand.SMALLEST_WORKED_EXP  # 3·tea's e^x: all zeros would pass ±0.01
    assert working.forced == (False, True, True) and working.too_large == (False, False, False)
    (text,) = hand.forced_rows_text(working, ["1·I", "2·like", "3·tea"])
    assert text.startswith("**e^x too small to check.** The e^x of rows “2·like” and “3·tea” are all below 0.1")
    assert "e^(x + 8.485) in row “3·tea”" in text  # its largest score is −8.485
    shown = working.shown
    assert float(shown[2, :3].max()) == 1.0
    assert torch.allclose(shown[2, :3] / shown[2, 3], stage_truth(trace, "weights")[2])


def test_large_e_to_the_x_is_checked_within_a_tenth_of_a_percent():
    assert hand.close_to(1096.0, math.exp(7.0))  # e^7 = 1096.63 from a score rounded to 7.000
    assert not hand.close_to(1090.0, math.exp(7.0))
    assert hand.close_to(2.035, 2.028) and not hand.close_to(2.04, 2.028)  # small numbers: ±0.01, as the answer
    assert not hand.close_to(1e300, math.inf)


def test_a_student_who_subtracts_the_largest_score_first_is_told_it_is_fine():
    trace = hand_trace(*example_tensors())
    working = hand.softmax_working(trace)
    shifted = (stage_truth(trace, "scaled")[2] - 2 * math.sqrt(2)).exp()
    typed = [[""] * 4, [""] * 4, [f"{v:.3f}" for v in [*shifted.tolist(), float(shifted.sum())]]]
    weights = check_answer([[""] * 3] * 3, stage_truth(trace, "weights"))
    result = hand.check_working(typed, working, weights, ["1·I", "2·like", "3·tea"], ["1·I", "2·like", "3·tea"])
    assert result.right == result.typed == 4 and result.shifted == (False, False, True)
    assert result.notes == ("Row “3·tea”: you subtracted the row's largest score first (e^(x − 2.828)): fine, the "
                            "weights come out the same.",)
    assert hand.check_working([[""] * 4] * 3, working, weights, ["a", "b", "c"], ["a", "b", "c"]) is None


def test_one_number_that_happens_to_match_the_shifted_working_is_not_read_as_a_shift():
    """A student typed 0.5, 0.2, 0.3 (weights, not e^x) in row 2·like and was told "you subtracted the row's largest
    score first: fine": 0.5 happened to be within the tolerance of e^(−0.707). One number is no evidence of that."""
    trace = hand_trace(*example_tensors())
    working = hand.softmax_working(trace)
    shifted = working.shifted[1]
    assert hand.close_to(0.5, float(shifted[0])) and not any(hand.close_to(v, float(shifted[1])) for v in (0.2, 0.3))
    typed = [[""] * 4, ["0.5", "0.2", "0.3", ""], [""] * 4]
    weights = check_answer([[""] * 3] * 3, stage_truth(trace, "weights"))
    result = hand.check_working(typed, working, weights, ["1·I", "2·like", "3·tea"], ["1·I", "2·like", "3·tea"])
    assert result.shifted == (False, False, False)
    assert not any("subtracted" in note for note in result.notes), result.notes
    assert result.answer.marks[1][:3] == (hand.WRONG,) * 3  # against the plain e^x


def test_step_4_puts_the_weights_v_and_the_answer_in_one_row_when_they_fit():
    at = run_page(typed_example())
    places = at.tabs[HAND_STAGES.index("context")].columns[:3]  # then Check and "Show the right values"
    assert [len(place.get("vega_lite_chart")) for place in places] == [1, 1, 0]
    assert [len(place.dataframe) for place in places] == [0, 0, 1]  # the answer grid beside V
    assert hand.fit_in_a_row([hand.chart_px(3, True, 84), hand.chart_px(2, True, 84), hand.grid_px(2, True)], True)
    assert not hand.fit_in_a_row([hand.chart_px(5, False, 52), hand.chart_px(4, False, 52), hand.grid_px(4, False)],
                                 False), "the largest sizes put the answer under the weights and V"


def test_five_tokens_on_a_slide_keep_the_scaled_scores_beside_the_working():
    """At the largest size a slide's scaled scores went above the working grid (a lecturer scrolled between the
    numbers to raise and the cells to type them in): they drop their colour bar and shrink to fit beside it."""
    presenting = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    presenting.query_params["presenter"] = "true"
    presenting.run()
    presenting.number_input(key="hand-size-tokens").set_value(5).run()
    assert not presenting.exception
    given, yours = weights_tab(presenting).columns[:2]
    (chart,) = given.get("vega_lite_chart")
    assert yours.dataframe, "the working grid is not beside the scaled scores"
    spec = json.loads(chart.proto.spec)
    heat = next(layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "rect")
    assert heat["encoding"]["color"].get("legend", {}) is None, "a colour bar is left beside printed numbers"
    assert spec["width"] >= 5 * hand.PAGE_CHART["cell_size"]
    for tokens in range(1, 6):
        working = hand.grid_px(tokens + 1, True, hand.SUM_COLUMN_PX - hand.GRID_COLUMN_PX)
        sizes = hand.sizes_beside(tokens, working, True, hand.chart_sizes(True, 2))
        chart_px = hand.chart_px(tokens, True, sizes["cell_size"], legend=sizes.get("legend", True))
        assert hand.fit_in_a_row([chart_px, working], True), tokens
        assert sizes.get("legend", True) == (tokens < 5)


def test_a_row_is_shared_equally_when_each_part_fits_its_share():
    assert hand.row_shares([276, 380], False) == [1.0, 1.0]  # step 3 of the example: as the other steps
    assert hand.row_shares([323, 455], False) == [323, 455]  # 4 tokens: the working grid needs more than half
    assert hand.row_shares([380, 530], False) is None  # 5 tokens: the chart goes above the grids


# ------------------------------------------------------------------------------------------- link


def hand_example_grids() -> dict:
    return hand.example_grids(hand.DEFAULT_SIZES)


def test_an_edited_example_is_kept_in_the_link_and_a_fresh_session_opens_it():
    """A lecturer's own example (here X's first number 3, and a causal mask) was lost in the page's link: a fresh
    session opened the built-in one."""
    grids = hand_example_grids()
    grids["X"][0][0] = "3"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page(PAGE)
    at.session_state["hand_grids"] = grids
    at.session_state["hand_sizes"] = {**hand.DEFAULT_SIZES, "causal": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    link = at.query_params["hand"]
    assert link.startswith("3~2~2~2~1~3_0_"), link
    fresh = open_page(PAGE, {"hand": link})
    assert fresh.session_state["hand_grids"]["X"][0] == ["3", "0"]
    assert fresh.session_state["hand_sizes"]["causal"] is True
    q = matrix_of(page_charts(fresh)["Q = X·W_Q"])
    assert q[0] == [3.0, 0.0], "Q follows the linked X (the example's first row of X is 1, 0)"
    assert fresh.query_params["hand"] == link


def test_the_built_in_example_leaves_the_link_alone():
    at = open_page(PAGE)
    assert "hand" not in at.query_params


@pytest.mark.parametrize("raw", ["", "abc", "3~2~2~2~0~1_2", "9~2~2~2~0~" + "_".join(["1"] * 30),
                                 "3~2~2~2~2~" + "_".join(["1"] * 18), "3~2~2~2~0~" + "_".join(["1e9"] * 18),
                                 "3~2~2~2~0~" + "_".join(["nan"] * 18), "3~2~2~2~0~" + "_".join(["<b>"] * 18)])
def test_a_malformed_example_in_a_link_falls_back_to_the_built_in_one_with_a_note(raw):
    at = open_page(PAGE, {"hand": raw})
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["hand_grids"]["X"] == hand_example_grids()["X"]
    if raw:
        notes = [i.value for i in at.info]
        assert any("hand = “" in note and "Work it by hand" in note for note in notes), notes
    assert "hand" not in at.query_params


def test_the_example_link_reads_back_what_it_wrote():
    from attention_ui.url_state import decode_hand, encode_hand

    sizes = {"tokens": 2, "d_model": 1, "d_k": 1, "d_v": 2, "causal": False}
    values = {"X": [[1 / 3], [-2.5]], "W_Q": [[0.5]], "W_K": [[-1000.0]], "W_V": [[1e-7, 7.0]]}
    link = encode_hand(sizes, values)
    assert link == "2~1~1~2~0~0.3333333333_-2.5_0.5_-1000_1e-07_7"
    back_sizes, back = decode_hand(link)
    assert back_sizes == sizes
    assert back["X"][0][0] == pytest.approx(1 / 3, abs=1e-9) and back["W_V"] == [[1e-7, 7.0]]


def test_a_links_note_made_again_by_the_rerun_that_repeats_it_is_shown_once():
    """The browser's progress report reruns a freshly opened page with the link's notes repeated; its query string
    may still hold the bad value, which made the same note again ("hand = “abc” …; hand = “abc” …")."""
    from attention_ui.url_state import REPEAT_NOTES_KEY, SHOWN_NOTES_KEY

    at = open_page(PAGE, {"hand": "abc"})
    at.session_state[REPEAT_NOTES_KEY] = list(at.session_state[SHOWN_NOTES_KEY])
    at.query_params["hand"] = "abc"
    at.run()
    notes = [i.value for i in at.info if "hand = “abc”" in i.value]
    assert len(notes) == 1 and notes[0].count("hand = “abc”") == 1, notes


def test_a_grid_checked_as_it_is_filled_names_its_empty_cells_in_one_line():
    """Checking a grid as they filled it, a student got a line for every cell not typed yet ("Your answer, row 1·I,
    column 1·I is empty." seven times) under "1 of 9 cells right"; two or more empty cells are one line now, and a
    cell that is not a number is still named."""
    grids = typed_example() | {"answer_scaled": [["abc", "0", None], [None, None, None], [None, None, None]]}
    at = check(run_page(grids), "scaled")
    (warning,) = texts(at, "warning")
    lines = warning.splitlines()
    assert lines[0] == "- 7 cells are still empty (marked “… empty” below).", lines
    assert len(lines) == 2 and "row 1·I, column 1·I" in lines[1] and "not a number" in lines[1], lines
