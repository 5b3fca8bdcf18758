"""Check-yourself questions: right answers are the trace's own numbers; grading; the step-through's block;
and the Start here path that shows what has been visited and answered."""

from __future__ import annotations

import math
import re

from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import chart_data, is_path_mark, open_page, switch_to
from attention_core import LessonConfig, run_lesson
from attention_ui.frames import token_labels
from attention_ui.questions import (ANSWERED_BEFORE, ANSWERS_KEY, CHECK_KEY, CHECK_LABEL, KEPT_RIGHT, PAGE_CHECK_LABEL,
                                   SAME_ANSWER, SCORE_RULE, _other_key, choice, grade, numeric, practice_query,
                                   questions_for, read_answer)
from attention_ui.charts import ASKED_MARK, PICK_ASKED
from attention_ui.text import LEARNING_PATH, STAGE_KEYS

DONE, STARTED, NOT_YET = (":green[:material/check_circle:]", ":orange[:material/clock_loader_40:]",
                          ":gray[:material/radio_button_unchecked:]")

CAUSAL = run_lesson(LessonConfig(mask="causal", seed=7))
DEFAULT = run_lesson(LessonConfig())
LABELS = token_labels(CAUSAL.tokens)


def by_slug(stage: str, slug: str, lesson=CAUSAL, follow: int = 2, head: int = 1):
    found = questions_for(lesson.trace, token_labels(lesson.tokens), stage, follow=follow, head=head, x=lesson.x)
    return next(q for q in found if f"-{slug}-" in q.id)


def default_question(stage: str, slug: str):
    """A question the step-through asks with the default settings (token 1, head 1)."""
    return next(q for q in questions_for(DEFAULT.trace, token_labels(DEFAULT.tokens), stage) if slug in q.id)


@pytest.mark.parametrize("stage", STAGE_KEYS)
def test_every_stage_has_one_to_three_questions_with_reasons(stage):
    found = questions_for(CAUSAL.trace, LABELS, stage, follow=2, head=1, x=CAUSAL.x)
    assert 1 <= len(found) <= 3
    assert len({q.id for q in found}) == len(found)
    for q in found:
        assert q.stage == stage and q.why and q.prompt
        assert q.is_choice == (q.answer is None)
        if q.is_choice:
            assert 0 <= q.correct < len(q.choices) and len(set(q.choices)) == len(q.choices)
        assert grade(q, q.choices[q.correct] if q.is_choice else q.right_answer).correct is True


def test_numeric_answers_are_the_traces_numbers():
    t, i, h = CAUSAL.trace, 3, 1  # following token 3, the questions ask the row after it
    j = 0  # the first key the causal row of token 4 may attend to after itself, wrapping around
    assert by_slug("scores", "score").answer == pytest.approx(float(t.scores[h, i, j]))
    assert by_slug("scaled", "scaled").answer == pytest.approx(float(t.scaled[h, i, j]))
    assert by_slug("scaled", "sqrt-dk").answer == pytest.approx(math.sqrt(t.d_k))
    assert by_slug("softmax", "weight").answer == pytest.approx(float(t.weights[h, i, j]))
    assert by_slug("context", "context").answer == pytest.approx(float(t.context[h, i, 0]))
    assert by_slug("qkv", "q-value").answer == pytest.approx(float(t.q[h, i, 0]))
    assert by_slug("masked", "blocked").answer == int((~t.mask[h]).sum()) == 21
    assert by_slug("concat", "width").answer == t.concat.shape[1]
    assert by_slug("embed", "x-size").answer == CAUSAL.x.numel()
    prompt = by_slug("softmax", "weight").prompt
    assert "from “4·on” to “1·The”" in prompt and "head 2" in prompt


def test_questions_change_with_the_seed_and_sentence():
    other_seed = run_lesson(LessonConfig(mask="causal", seed=8))
    other_sentence = run_lesson(LessonConfig(mask="causal", seed=7, sentence="Time flies like an arrow."))
    base = by_slug("softmax", "weight")
    assert by_slug("softmax", "weight", other_seed).answer != pytest.approx(base.answer)
    assert by_slug("softmax", "weight", other_seed).id != base.id
    assert "“3·like”" in by_slug("softmax", "weight", other_sentence).prompt


def test_the_asked_key_is_one_the_query_may_attend_to():
    for follow in range(len(LABELS)):
        q = by_slug("softmax", "weight", follow=follow)
        j = next(j for j, label in enumerate(LABELS) if f"to “{label}”" in q.prompt)
        assert bool(CAUSAL.trace.mask[1, practice_query(CAUSAL.trace, follow), j])


def test_a_fully_blocked_row_sums_to_zero():
    lesson = run_lesson(LessonConfig(mask="custom", custom_mask=((False, False), (True, True)), sentence="a b",
                                     num_heads=1))
    assert by_slug("softmax", "row-sum", lesson, follow=0, head=0).answer == 0
    assert by_slug("softmax", "row-sum", lesson, follow=1, head=0).answer == 1


@pytest.mark.parametrize("response", ["1e999", "abc", "", "nan", "inf", None, "<b>2</b>"])
def test_grading_explains_unreadable_answers(response):
    q = by_slug("scaled", "sqrt-dk")
    feedback = grade(q, response)
    assert feedback.correct is None and "Type a number" in feedback.message


def test_grading_uses_the_tolerance_and_gives_the_reason():
    q = by_slug("softmax", "weight")
    assert grade(q, f"{q.answer:.3f}").correct is True and grade(q, f"{q.answer + 0.0019:.6f}").correct is True
    # ±0.01 passed a neighbouring key's weight (0.119 for 0.127): with long sentences most weights are that close
    assert grade(q, f"{q.answer + 0.008:.6f}").correct is False
    wrong = grade(q, f"{q.answer + 0.05:.6f}", wrong_before=1)
    assert wrong.correct is False and wrong.shown and q.right_answer in wrong.message and q.why in wrong.message
    choice = by_slug("masked", "all-blocked")
    assert grade(choice, None).correct is None
    assert grade(choice, choice.choices[0]).correct is False
    assert "zero" in grade(choice, choice.choices[choice.correct]).message


@pytest.mark.parametrize(("typed", "value"), [("0,127", 0.127), ("12.7%", 0.127), (" 12,7 % ", 0.127),
                                               ("1/4", 0.25), ("−0.5", -0.5), ("50%", 0.5), ("3", 3)])
def test_answers_may_use_a_decimal_comma_or_a_percentage(typed, value):
    """A student wrote a weight as "0,127" or "12.7%" and was told it was not a number."""
    assert read_answer(typed) == pytest.approx(value)
    q = by_slug("softmax", "weight")
    assert grade(q, f"{q.answer:.3f}".replace(".", ",")).correct is True
    assert grade(q, f"{100 * q.answer:.1f}%").correct is True


def test_a_standard_deviation_may_be_typed_as_a_square_root():
    """Why √d_k asks for the standard deviation of q·k at d_k = 512; "sqrt(512)" was "not a number"."""
    from attention_ui.checks.why import scaling_questions
    (spread,) = [q for q in scaling_questions(512, None, [], None, follow=0, head=0) if "-spread-" in q.id]
    for typed in ("sqrt(512)", "√512", "22.627"):
        assert grade(spread, typed).correct is True, typed
    assert grade(spread, "512").correct is False


@pytest.mark.parametrize("typed", ["1,000.5", "1,2,3", "%", "12%%", "abc%"])
def test_what_is_still_not_a_number(typed):
    q = by_slug("softmax", "weight")
    assert grade(q, typed).correct is None and "Type a number" in grade(q, typed).message


PAGE_SCRIPT = """
import streamlit as st
from attention_ui.questions import choice, numeric, show_page_questions
show_page_questions("masks", [
    numeric("masks", "count", "How many keys?", 3, "Three are allowed.", tolerance=0, hint="Count the ticks."),
    choice("masks", "kind", "Which mask?", ("none", "causal"), 1, "It is causal.", hint="Look at the grid."),
])
"""


def _page_questions():
    return [numeric("masks", "count", "How many keys?", 3, "Three are allowed.", tolerance=0, hint="Count the ticks."),
            choice("masks", "kind", "Which mask?", ("none", "causal"), 1, "It is causal.", hint="Look at the grid.")]


def test_a_page_asks_its_questions_and_start_here_counts_them():
    """Start here had counted a page done once it was opened; a page with questions is done when they are
    answered."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(PAGE_SCRIPT, default_timeout=60).run()
    assert [e.label for e in at.expander] == [PAGE_CHECK_LABEL]
    assert not at.text_input, "drawn only while open"
    at.session_state["open_check_masks"] = True
    at.run()
    count, kind = _page_questions()
    assert count.id == _page_questions()[0].id, "ids stay the same from run to run"
    assert at.text_input[0].placeholder == "a whole number", "a count's box says so"
    _check(at, count, "3")
    assert any(s.value.startswith("Right.") for s in at.success)
    from attention_ui import questions

    with pytest.MonkeyPatch.context() as patch:  # page_progress reads the session state of this test's app
        patch.setattr(questions.st, "session_state", at.session_state)
        assert questions.page_progress("masks") == (1, 2)
        assert questions.page_progress("generation") is None
    _check(at, kind, "none")
    _check(at, kind, "none")
    assert any(SAME_ANSWER in i.value for i in at.info)
    assert not any("Enter in the box" in i.value for i in at.info), "a choice has no box"
    _check(at, kind, "causal")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(questions.st, "session_state", at.session_state)
        assert questions.page_progress("masks") == (2, 2)


def _gives_away(question, text: str) -> bool:
    """Whether ``text`` holds the question's right answer (a choice's text, or the number standing alone)."""
    if question.is_choice:
        return question.right_answer.lower() in text.lower()
    return re.search(rf"(?<![\d.]){re.escape(question.right_answer)}(?![\d]|\.\d)", text) is not None


@pytest.mark.parametrize("stage", STAGE_KEYS)
@pytest.mark.parametrize("lesson", [CAUSAL, DEFAULT], ids=["causal", "default"])
def test_a_first_wrong_try_gets_a_hint_not_the_answer(stage, lesson):
    for q in questions_for(lesson.trace, token_labels(lesson.tokens), stage, follow=1, head=0, x=lesson.x):
        assert q.hint and not _gives_away(q, q.hint), (q.id, q.hint)
        wrong = next(c for c in q.choices if c != q.right_answer) if q.is_choice else str(q.answer + 7)
        first = grade(q, wrong)
        assert first.correct is False and not first.shown
        assert q.hint in first.message and "Show the answer" in first.message
        assert not _gives_away(q, first.message) and q.why not in first.message, first.message
        second = grade(q, wrong, wrong_before=1)
        assert second.correct is False and second.shown and q.why in second.message
        assert _gives_away(q, second.message)
        assert grade(q, wrong, shown=True).shown, "after the answer was shown, a wrong try repeats it"


def test_a_right_answer_after_the_answer_was_shown_says_it_does_not_count():
    q = by_slug("scaled", "sqrt-dk")
    assert "does not add to your score" in grade(q, q.right_answer, shown=True).message
    assert "does not add" not in grade(q, q.right_answer, wrong_before=1).message


# ------------------------------------------------------------------------------------------- pages


@pytest.mark.parametrize(("stage", "slug", "title", "column"), [
    ("qkv", "q-value", "Q", 0), ("scores", "score", "QKᵀ", 2), ("scaled", "scaled", "after:", 2),
    ("softmax", "weight", "attention weights", 2), ("context", "context", "context", 0)])
def test_the_cell_an_open_question_asks_for_shows_a_mark_until_it_is_answered(stage, slug, title, column):
    """Each stage's number question asked for a number its chart printed (2·cat's weight on 3·sat, 0.112, typed off
    the heatmap was right). While Check yourself is open and the question unanswered, that cell shows "?"."""
    question = default_question(stage, f"{stage}-{slug}-")
    at = open_page("pages/step_through.py")
    at.selectbox(key="step").set_value(stage).run()

    def labels() -> list:  # the chart's printed labels in row 2 (2·cat, the question's query), column ``column``
        data = chart_data(at, title)
        cell = data[(data["row_index"] == 1) & (data["col_index"] == column)]
        return list(cell["label"]) + [list(data["label"]).count(ASKED_MARK)]

    def table_cell() -> str:  # the same cell in the stage's "All the numbers" (its first table, open)
        return at.dataframe[0].value.iloc[1, column]

    at.session_state[f"open_{stage}"] = True  # "All the numbers" held the number too
    at.run()
    assert labels()[0] != ASKED_MARK and table_cell() != ASKED_MARK, "closed questions hide nothing"
    at.session_state[CHECK_KEY] = True
    at.run()
    assert labels() == [ASKED_MARK, 1], "open and unanswered: that one cell shows the mark"
    assert table_cell() == ASKED_MARK
    cover = f"datum.label === '{ASKED_MARK}'"  # a layer over that cell, whose tooltip says the mark too
    covered = [c for c in at.get("vega_lite_chart") if cover in c.proto.spec]
    assert len(covered) == 1
    follows = stage in ("scores", "scaled", "softmax")  # a click on the other cells of these charts follows a row
    assert list(covered[0].proto.selection_mode) == (["pick", PICK_ASKED] if follows else []), \
        "a click on the asked cell follows its row like one on the cells around it"
    assert any(c.value.startswith("The chart above and its “All the numbers” show “?”") for c in at.caption)
    at.text_input(key=f"cy-{question.id}").input(f"{question.answer:.4f}")
    at.button(key=f"FormSubmitter:cy-form-{question.id}-Check").click().run()
    assert any(s.value.startswith("Right") for s in at.success)
    assert labels()[1] == 0 and labels()[0] == f"{question.answer:.3f}".replace("-", "−"), labels()
    assert float(table_cell().replace("−", "-")) == pytest.approx(question.answer, abs=1e-4)
    assert not any(cover in c.proto.spec for c in at.get("vega_lite_chart"))


def test_a_one_token_sentence_hides_no_cell_its_worked_numbers_print():
    """With one token the question asks about the followed token itself: its chart showed "?" while the bars and the
    worked numbers under it printed 1.000."""
    at = open_page("pages/step_through.py", {"sentence": "Hello", "step": "softmax"})
    at.session_state[CHECK_KEY] = True
    at.run()
    assert [q.label for q in at.text_input if q.key.startswith("cy-")], "the number question is asked"
    assert list(chart_data(at, "attention weights")["label"]) == ["1.000"]
    assert not any(c.value.startswith("The chart above") for c in at.caption)


@pytest.mark.parametrize("stage", ["scaled", "softmax"])
def test_on_a_slide_the_asked_cell_shows_the_mark_in_its_shorter_numbers_too(stage):
    """A slide's chart may print its numbers rounded shorter ("0.11"): the asked cell keeps the mark there too."""
    at = open_page("pages/step_through.py", {"presenter": "true", "step": stage})
    at.session_state[CHECK_KEY] = True
    at.run()
    data = chart_data(at, "after:" if stage == "scaled" else "attention weights")
    cell = data[(data["row_index"] == 1) & (data["col_index"] == 2)]
    printed = [column for column in ("label", "short") if column in data.columns]
    assert [cell[column].item() for column in printed] == [ASKED_MARK] * len(printed), cell.to_dict("records")


def test_step_through_asks_questions_and_keeps_the_score():
    at = open_page("pages/step_through.py")
    at.selectbox(key="step").set_value("scaled").run()
    assert [e.label for e in at.expander if e.label == CHECK_LABEL] and not at.get("form"), "closed: no forms sent"
    at.session_state[CHECK_KEY] = True  # the student opens it
    at.run()
    q = default_question("scaled", "sqrt-dk")
    at.text_input(key=f"cy-{q.id}").input("3")
    at.button(key=f"FormSubmitter:cy-form-{q.id}-Check").click().run()
    assert not at.error and [i.value for i in at.info if q.hint in i.value], "a first wrong try: the hint"
    assert not any("it is 2" in i.value for i in at.info)
    assert any("0 right of 0 answered, 1 still to try again" in c.value for c in at.caption), \
        "a first wrong try costs nothing, so the score does not count it as answered wrong"
    at.text_input(key=f"cy-{q.id}").input("2")
    at.button(key=f"FormSubmitter:cy-form-{q.id}-Check").click().run()
    assert any(s.value.startswith("Right") for s in at.success)
    assert any("1 right of 1 answered" in c.value for c in at.caption), "right after a hint counts as right"
    assert any(SCORE_RULE in c.value for c in at.caption)
    at.selectbox(key="step").set_value("softmax").run()  # it stays open on the next stage
    weight = default_question("softmax", "-weight-")
    at.text_input(key=f"cy-{weight.id}").input("not a number")
    at.button(key=f"FormSubmitter:cy-form-{weight.id}-Check").click().run()
    assert not at.exception and any("Type a number" in w.value for w in at.warning)
    assert any("1 right of 1 answered" in c.value for c in at.caption), "an unreadable answer is not scored"


def test_the_last_stage_leads_to_the_next_page_on_the_path():
    """Step through's last stage linked to Multi-head, skipping Work it by hand, which Start here puts next."""
    at = open_page("pages/step_through.py", {"step": "output"})
    path = [page for page, *_ in LEARNING_PATH]
    assert [link.proto.page for link in at.get("page_link")] == ["by-hand"]
    assert path.index("pages/by_hand.py") == path.index("pages/step_through.py") + 1


def test_start_here_on_a_slide_is_the_lectures_plan_on_one_screen():
    """On a projector Start here was a student's checklist two screens long: circles and counts of the lecturer's own
    visits while preparing ("Carry on with 5. Masking"), the score and "Start again". A slide lists the path's pages
    (what each teaches on hover) and starts at the first, whatever was opened before."""
    at = open_page("pages/start_here.py", {"presenter": "true"})
    at.session_state["pages_visited"] = {"start-here", "overview", "step-through", "by-hand", "multi-head"}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    links = at.get("page_link")
    assert [link.proto.label for link in links[:2]] == ["Start with 1. Overview", "1. Overview"], links
    listed = links[1:1 + len(LEARNING_PATH)]
    assert [link.proto.label for link in listed] == [f"{n}. {title}" for n, (_, _, title, _) in
                                                     enumerate(LEARNING_PATH, start=1)]
    assert [link.proto.help for link in listed] == [teaches for *_, teaches in LEARNING_PATH]
    assert [link.proto.page for link in listed] == [paths[0] for _, paths, *_ in LEARNING_PATH]
    assert not [m.value for m in at.markdown if is_path_mark(m.value)], "no marks of done pages"
    assert not at.progress and not at.get("button") and not at.get("popover"), "no progress bar, no Start again"
    assert not [c.value for c in at.caption if "score" in c.value or "looked at" in c.value], "no counts or score"
    assert len(open_page("pages/start_here.py").get("page_link")) > len(LEARNING_PATH), "the page's own list stays"


def test_start_here_lists_the_path_and_ticks_what_was_done():
    at = open_page("pages/start_here.py")
    assert [t.value for t in at.title] == ["Start here"]
    marks = [m.value for m in at.markdown if is_path_mark(m.value)]
    assert len(marks) == 13 and marks[0] == NOT_YET  # every lesson page but this one
    assert not [m.value for m in at.markdown if "are only started" in m.value], "a page script's bare string shown"
    links = {link.proto.page for link in at.get("page_link")}
    assert links == {paths[0] for _, paths, *_ in LEARNING_PATH}, "each link has the page's own address"
    assert {"overview", "generation", "why-scaling", "what-it-costs"} <= links, "the Overview's link had none (\"\")"
    at = switch_to(at, "pages/step_through.py")
    at.session_state[CHECK_KEY] = True
    at.selectbox(key="step").set_value("masked").run()
    q = default_question("masked", "all-blocked")
    at.radio(key=f"cy-{q.id}").set_value(q.choices[q.correct])
    at.button(key=f"FormSubmitter:cy-form-{q.id}-Check").click().run()
    at = switch_to(at, "pages/start_here.py")
    marks = [m.value for m in at.markdown if is_path_mark(m.value)]
    assert marks[1] == STARTED and marks[2] == NOT_YET, marks  # the step-through started, not the by-hand page
    captions = " ".join(c.value for c in at.caption)
    assert "2 of 9 stages looked at, questions answered on 1 of them" in captions
    assert "1 right of 1 answered" in captions
    assert at.progress[0].proto.text == "0 of 13 pages done", "the step-through is only started"
    at = switch_to(at, "pages/step_through.py")
    for stage in STAGE_KEYS:
        at.selectbox(key="step").set_value(stage).run()
    at = switch_to(at, "pages/start_here.py")
    marks = [m.value for m in at.markdown if is_path_mark(m.value)]
    assert marks[1] == DONE, "every stage looked at: done"


def test_start_here_keeps_the_by_hand_progress_after_a_reset():
    """A stage checked on Work it by hand stays counted after "Reset to the example" (which clears the marks)."""
    at = switch_to(open_page("pages/start_here.py"), "pages/by_hand.py")
    at.button(key="hand-check-scores").click().run()
    at.button(key="hand-reset").click().run()
    assert not at.session_state["hand_checked"], "the reset clears the marks of the old grids"
    at = switch_to(at, "pages/start_here.py")
    captions = " ".join(c.value for c in at.caption)
    assert "1 of 4 stages checked" in captions, captions


def _check(at, q, response):
    (at.radio if q.is_choice else at.text_input)(key=f"cy-{q.id}").set_value(response)
    at.button(key=f"FormSubmitter:cy-form-{q.id}-Check").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _open_questions(stage: str):
    at = open_page("pages/step_through.py")
    at.session_state[CHECK_KEY] = True
    at.selectbox(key="step").set_value(stage).run()
    return at


def test_the_answer_comes_after_a_second_wrong_try_and_then_a_right_one_does_not_count():
    at = _open_questions("scaled")
    q = default_question("scaled", "sqrt-dk")
    _check(at, q, "3")
    assert not any("it is 2" in e.value for e in [*at.error, *at.info])
    _check(at, q, "4")
    assert any(e.value.startswith("Not quite: it is 2.") and q.why in e.value for e in at.error)
    assert not [b for b in at.button if b.key == f"cy-show-{q.id}"], "the answer is shown: no button for it"
    _check(at, q, "2")
    assert any("does not add to your score" in s.value for s in at.success)
    assert any("0 right of 1 answered" in c.value for c in at.caption)


def test_a_right_answer_stays_right_when_another_is_tried():
    """Right at the first try, then another number "to see": the score had dropped to "0 right of 0 answered" and the
    first try's credit was gone for good once the right answer was given again."""
    at = _open_questions("scaled")
    q = default_question("scaled", "sqrt-dk")
    _check(at, q, "2")
    assert any("1 right of 1 answered" in c.value for c in at.caption)
    _check(at, q, "3")
    assert [i.value for i in at.info if i.value.startswith(KEPT_RIGHT) and q.hint in i.value], (
        "a wrong try on the side says the right answer is kept, with the hint")
    assert any("1 right of 1 answered." in c.value for c in at.caption)
    assert attempt_of(at, q)["wrong"] == 0 and attempt_of(at, q)["correct"] is True
    _check(at, q, "4")
    assert not any("it is 2" in e.value for e in [*at.error, *at.info]), "no answer given away: it was answered"
    _check(at, q, "2")
    assert any("1 right of 1 answered." in c.value for c in at.caption)


def test_the_same_answer_checked_twice_is_one_try():
    """Enter in the answer box, then Check: the one answer counted as two wrong tries and gave the answer away
    where a hint was promised."""
    at = _open_questions("scaled")
    q = default_question("scaled", "sqrt-dk")
    assert "3 decimals (within ±0.002)" in at.text_input(key=f"cy-{q.id}").placeholder, "0.70 for 0.703 was wrong"
    _check(at, q, "3")
    _check(at, q, "3")
    assert [i.value for i in at.info if q.hint in i.value], "still the hint of a first wrong try"
    assert [i.value for i in at.info if i.value.startswith("Not quite") and SAME_ANSWER in i.value
            and "Enter in the box" in i.value], \
        "the second Check had said nothing new"
    assert [i.value for i in at.info if i.value.endswith(
        "(This same answer was checked already: no try used; Enter in the box checks an answer too.)")], \
        "one bracket, read in one go (brackets inside brackets were hard to follow)"
    assert not any("it is 2" in e.value for e in [*at.error, *at.info])
    assert attempt_of(at, q)["wrong"] == 1
    _check(at, q, "4")
    assert any(e.value.startswith("Not quite: it is 2.") for e in at.error), "a second, different wrong answer"


def test_a_question_answered_in_an_earlier_visit_says_so():
    """After a reload a question answered right showed an empty box and a Check button, no mark, though the score
    counted it (the browser keeps whether it was right or shown, never the text typed)."""
    right, shown = default_question("scaled", "sqrt-dk"), default_question("softmax", "blocked-weight")
    at = open_page("pages/step_through.py")
    at.session_state[ANSWERS_KEY] = {  # as restore() leaves the browser's record: no response
        right.id: {"stage": "scaled", "correct": True, "wrong": 0, "shown": False},
        shown.id: {"stage": "softmax", "correct": False, "wrong": 0, "shown": True}}
    at.session_state[CHECK_KEY] = True
    at.selectbox(key="step").set_value("scaled").run()
    assert [s.value for s in at.success if s.value.startswith(ANSWERED_BEFORE) and right.why in s.value]
    at.selectbox(key="step").set_value("softmax").run()
    assert [i.value for i in at.info if i.value.startswith(f"The answer is “{shown.right_answer}”.")]


def attempt_of(at, question) -> dict:
    return at.session_state[ANSWERS_KEY][question.id]


def test_show_the_answer_gives_it_at_once_and_scores_the_question_as_not_right():
    at = _open_questions("softmax")
    q = default_question("softmax", "blocked-weight")
    at.button(key=f"cy-show-{q.id}").click().run()
    assert not at.exception
    assert any(i.value.startswith(f"The answer is “{q.right_answer}”.") and q.why in i.value for i in at.info)
    assert any("0 right of 0 answered, 1 answer shown before a try" in c.value for c in at.caption), (
        "revealed before any answer: not right, and not answered either (a student who only looked the answers up"
        " read '0 right of 21 answered')")
    _check(at, q, q.right_answer)
    assert any("0 right of 0 answered, 1 answer shown before a try" in c.value for c in at.caption)
    other = default_question("softmax", "-weight-")
    _check(at, other, f"{other.answer:.3f}")
    assert not [b for b in at.button if b.key == f"cy-show-{other.id}"]
    assert any("1 right of 1 answered, 1 answer shown before a try" in c.value for c in at.caption), (
        "answered right before it was shown")


FOOTER_SCRIPT = """
import streamlit as st
from attention_ui.controls import path_footer
st.session_state["presenter"] = {presenter}
path_footer("{url}")
"""


def test_start_heres_slide_keeps_its_foot_link_for_the_clicker_only():
    """Start here's slide showed "Start with 1. Overview", its list's "1. Overview" and, at its foot, "Start the path:
    Overview": three links to one place. The foot's is hidden (a 1-px box, as the link back), for the clicker."""
    from streamlit.testing.v1 import AppTest

    def foot(presenter: bool):
        at = AppTest.from_string(FOOTER_SCRIPT.format(url="start-here", presenter=presenter), default_timeout=60).run()
        box = next(child for child in at._tree[0].children.values() if type(child).__name__ == "Block")
        return box.proto.height_config, len(at.get("divider"))

    (slide_height, slide_rules), (page_height, page_rules) = foot(True), foot(False)
    assert slide_height.pixel_height == 1 and slide_rules == 0, slide_height
    assert page_height.pixel_height != 1 and page_rules == 1


@pytest.mark.parametrize(("url", "presenter", "links"), [
    ("masks", False, [("Next on the path: Why √d_k", "why-scaling")]),
    ("", False, [("Next on the path: Step through", "step-through")]),  # the Overview, the app's default page
    ("by-hand", False, [("Next on the path: Multi-head", "multi-head")]),
    ("inside-real-head", False, [("The end of the path: back to Start here", "start-here")]),
    ("step-through", False, []),  # its last stage links on by itself
    # a slide too: its clicker keys follow the link from the bottom, and a hidden one back from the top
    ("masks", True, [("Back on the path: Multi-head", "multi-head"), ("Next on the path: Why √d_k", "why-scaling")]),
    ("by-hand", True, [("Back on the path: Step through", "step-through"),
                       ("Next on the path: Multi-head", "multi-head")]),
    ("step-through", True, [("Back on the path: Overview", "overview")]),
    # the first page: back to Start here, whose foot leads to it (Page Up at the top of Overview did nothing)
    ("", True, [("Back on the path: Start here", "start-here"), ("Next on the path: Step through", "step-through")]),
    # the path's start: a clicker at its foot had nowhere to go
    ("start-here", False, [("Start the path: Overview", "overview")]),
    ("start-here", True, [("Start the path: Overview", "overview")]),
])
def test_a_lesson_page_ends_with_the_next_page_on_the_path(url, presenter, links):
    """Only Step through's last stage linked to the next page; the other pages ended at their takeaway, and Start
    here at its list of pages."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(FOOTER_SCRIPT.format(url=url, presenter=presenter), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [(p.proto.label, p.proto.page) for p in at.get("page_link")] == links


@pytest.mark.parametrize(("url", "presenter", "links"), [
    ("real-model", False, [("inside-real-head", "step=embed")]),
    ("", False, [("step-through", "step=embed")]),
    ("by-hand", True, [("step-through", "step=output"), ("multi-head", "")]),
    ("masks", True, [("multi-head", ""), ("why-scaling", "")]),
])
def test_the_paths_links_open_a_page_of_stages_at_its_first_stage_and_back_at_its_last(url, presenter, links):
    """A lecturer who had ended Step through at stage 9 came to Inside a real head on its last stage: both pages show
    the session's one stage, and the clicker went on past the first eight."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(FOOTER_SCRIPT.format(url=url, presenter=presenter), default_timeout=60).run()
    assert [(p.proto.page, p.proto.query_string) for p in at.get("page_link")] == links


LECTURE_LINK = {"sentence": "The animal did not cross the street", "heads": "4", "presenter": "true"}


def _carried(links: list[tuple[str, str]]) -> None:
    assert links, "no links on the page"
    for target, query in links:
        carried = parse_qs(query)
        assert carried.get("sentence") == [LECTURE_LINK["sentence"]] and carried.get("heads") == ["4"], (target, query)
        assert "presenter" not in carried, "the session keeps presenter mode: the switch holds it"


def test_a_page_without_the_lessons_settings_passes_its_links_settings_on():
    """A lecture's link opened on Start here or Work it by hand (pages without the sidebar's settings) kept the
    sentence and sizes in the address only: the next page on the path (the hidden one back on a slide too), and
    Start here's list of pages, opened on the default sentence, and the class's sentence was gone from then on."""
    from streamlit.testing.v1 import AppTest

    at = open_page("pages/start_here.py", LECTURE_LINK)
    _carried([(p.proto.page, p.proto.query_string) for p in at.get("page_link")])
    by_hand = AppTest.from_string(FOOTER_SCRIPT.format(url="by-hand", presenter=True), default_timeout=60)
    for key, value in LECTURE_LINK.items():
        by_hand.query_params[key] = value
    by_hand.run()
    links = [(p.proto.page, p.proto.query_string) for p in by_hand.get("page_link")]
    assert [page for page, _ in links] == ["step-through", "multi-head"]
    _carried(links)


def test_a_link_does_not_carry_a_setting_the_session_holds():
    """Once a page's widget holds a setting, the next page takes it from the session: a link carrying the address's
    value could undo a change made since."""
    at = open_page("app.py", LECTURE_LINK)
    at.text_input(key="sentence").input("A new sentence").run()
    queries = [p.proto.query_string for p in at.get("page_link")]
    assert queries and not [q for q in queries if "sentence" in parse_qs(q)], queries


STAGE_SCRIPT = """
import streamlit as st
from attention_ui.controls import ARRIVED_KEY, CURRENT_PAGE, stage_picker
page = st.session_state.get("page_for_test", "step-through")
st.session_state[ARRIVED_KEY] = st.session_state.get(CURRENT_PAGE) != page  # as app.py does
st.session_state[CURRENT_PAGE] = page
if page in ("step-through", "inside-real-head"):
    stage_picker()
"""


def test_a_page_of_stages_takes_the_stage_of_the_link_it_was_opened_with():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(STAGE_SCRIPT, default_timeout=60)

    def visit(page: str, step: str | None) -> str:
        at.session_state["page_for_test"] = page
        if step is None:
            at.query_params.pop("step", None)
        else:
            at.query_params["step"] = step
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at.selectbox(key="step").value if page != "overview" else ""

    assert visit("step-through", "output") == "output"
    assert visit("step-through", "softmax") == "output", "the same page: its own menu decides, not a stale address"
    assert visit("inside-real-head", "embed") == "embed", "the path's link: its first stage"
    assert visit("step-through", None) == "embed", "a menu: no stage in the address, the session's is kept"
    at.selectbox(key="step").set_value("masked").run()
    visit("overview", None)  # a page without stages in between (the last page with a stage menu is this one)
    assert visit("step-through", "embed") == "embed", "the Overview's path link, after another page"


def test_the_app_draws_the_path_link_under_its_page():
    at = open_page()
    assert [p.proto.page for p in at.get("page_link")][-1] == "step-through"


def test_a_page_stopped_by_its_settings_still_links_to_the_next_page():
    """A page that stopped on settings it could not use ended at the error box: no way on for a student alone."""
    at = open_page()
    at.text_input(key="sentence").input("   ").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("The sentence is empty" in e.value for e in at.error)
    assert [(p.proto.label, p.proto.page) for p in at.get("page_link")] == [
        ("Next on the path: Step through", "step-through")]


STOP_SCRIPT = """
import streamlit as st
from attention_ui.controls import CURRENT_PAGE, stop_page
{current}
stop_page()
st.markdown("not reached")
"""


@pytest.mark.parametrize(("current", "links"), [
    ('st.session_state[CURRENT_PAGE] = "why-scaling"',
     [("Next on the path: Order and position", "order-and-position")]),
    ("", []),  # a page file run on its own (no navigation): no page to link from
    # the step-through's own link is under its stages: stopped before them, it ended at the error box
    ('st.session_state[CURRENT_PAGE] = "step-through"', [("Next on the path: Work it by hand", "by-hand")]),
])
def test_stop_page_draws_the_path_link_then_stops(current, links):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(STOP_SCRIPT.format(current=current), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [(p.proto.label, p.proto.page) for p in at.get("page_link")] == links
    assert not [m for m in at.markdown if m.value == "not reached"]


def test_an_opened_check_yourself_is_open_again_after_another_page():
    """A student who opened a page's questions, looked at another page and came back found them closed."""
    at = open_page("pages/masking.py")
    at.session_state["open_check_masks"] = True
    at.run()
    assert any(t.label == "Your answer to question 1" for t in at.text_input)
    at = switch_to(at, "pages/overview.py")
    at = switch_to(at, "pages/masking.py")
    assert any(t.label == "Your answer to question 1" for t in at.text_input), "the questions are drawn: still open"


def test_a_question_asked_again_on_other_numbers_counts_once_towards_a_page():
    """Answering the K cache's size at three steps marked Generation's three questions answered."""
    from attention_ui import questions

    steps = [numeric("generation", "cache", f"How many numbers at step {t}?", 4 * t, "t rows of d_k.", tolerance=0,
                     hint="Count the rows.") for t in (1, 2, 3)]
    why = choice("generation", "why", "Why?", ("a", "b"), 0, "Because.", hint="Think.")
    state = {questions.PAGE_QUESTIONS_KEY: {"generation": 2},
             ANSWERS_KEY: {q.id: {"stage": "generation", "correct": True} for q in steps}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(questions.st, "session_state", state)
        assert len({q.id for q in steps}) == 3
        assert questions.page_progress("generation") == (1, 2)
        state[ANSWERS_KEY][why.id] = {"stage": "generation", "correct": False, "shown": True, "wrong": 2}
        assert questions.page_progress("generation") == (2, 2), "wrong until shown counts as answered"
        state[ANSWERS_KEY]["what-it-costs-cache-0123456789"] = {"stage": "what-it-costs", "correct": True}
        assert questions.page_progress("generation") == (2, 2)


def test_an_answer_rounded_too_far_is_told_so_and_costs_no_try():
    """0.13 for 0.134 got a plain "Not quite" and a hint to compute it all again; it is the right number, rounded."""
    from attention_ui.questions import grade, numeric

    question = numeric("softmax", "weight", "What weight?", 0.1342, "It is the softmax of the row.", hint="Look.")
    for typed in ("0.13", "0,13", "0.1"):
        feedback = grade(question, typed)
        assert feedback.correct is None and "rounded to" in feedback.message and "Give 3 decimals" in feedback.message
    assert grade(question, "0.134").correct is True
    assert grade(question, "0.12").correct is False  # not the answer rounded: a wrong try
    assert grade(numeric("masks", "count", "How many?", 3, "Three.", tolerance=0, hint="Count."), "2").correct is False


def test_a_count_answered_with_a_fraction_is_told_it_is_a_whole_number():
    """4.5 to a question whose box says "a whole number" got a plain "Not quite" and cost a try."""
    from attention_ui.questions import grade, numeric

    question = numeric("masks", "count", "How many?", 3, "Three.", tolerance=0, hint="Count.")
    feedback = grade(question, "4.5")
    assert feedback.correct is None and "whole number" in feedback.message, feedback
    assert grade(question, "3.0").correct is True and grade(question, "4").correct is False


def test_the_second_wrong_try_says_it_shows_the_answer_and_the_score_counts_first_tries():
    from attention_ui.questions import Score, grade, numeric

    question = numeric("softmax", "weight", "What weight?", 0.5, "Half.", hint="Look.")
    assert "shows the answer" not in grade(question, "0.9").message
    second = grade(question, "0.8", wrong_before=1)
    assert second.shown and "A second wrong try shows the answer" in second.message
    assert "second wrong try" in SCORE_RULE
    assert Score(8, 8, 0, 0, 5).in_words() == "8 right of 8 answered (5 at the first try)"
    assert Score(3, 3, 0, 0, 3).in_words() == "3 right of 3 answered"


def test_a_common_slip_is_named_in_the_feedback():
    """Typing K's number for Q's, or the raw score where the scaled one is asked, got the generic "Not quite" and a
    hint to compute it all again, where Work it by hand names such slips."""
    lesson = run_lesson(LessonConfig())
    trace, labels = lesson.trace, token_labels(lesson.tokens)

    def asked(stage: str, slug: str):
        return next(q for q in questions_for(trace, labels, stage, follow=0, head=0) if f"-{slug}-" in q.id)

    q_value, row = asked("qkv", "q-value"), practice_query(trace, 0)
    feedback = grade(q_value, f"{float(trace.k[0, row, 0]):.3f}")
    assert feedback.correct is False and "its key (K), not of its query" in feedback.message
    scaled, key = asked("scaled", "scaled"), _other_key(trace, 0, row)
    assert "not yet divided by √d_k" in grade(scaled, f"{float(trace.scores[0, row, key]):.3f}").message
    assert "divided by d_k, not by √d_k" in grade(scaled, f"{float(trace.scores[0, row, key]) / trace.d_k:.3f}").message
    assert "Not quite." in grade(q_value, "123").message  # any other wrong number: no slip named
    # the second wrong try shows the answer: a slip is named there too (a student's raw score went unnamed)
    raw = f"{float(trace.scores[0, row, key]):.3f}"
    assert "(that is the raw score, not yet divided by √d_k): it is" in grade(scaled, raw, wrong_before=1).message


def test_a_negative_number_in_the_feedback_has_a_true_minus_sign():
    """The feedback wrote "-0.226 / 2.000 = -0.113" with a hyphen where the charts and worked numbers print −."""
    def page():
        from attention_ui.questions import Feedback, _show_feedback

        _show_feedback(Feedback(False, "It is -0.113 = -0.226 / 2.000, not 1e-3 or x-1.", shown=True))

    at = AppTest.from_function(page).run()
    assert at.error[0].value == "It is −0.113 = −0.226 / 2.000, not 1e-3 or x-1."


def test_a_negative_number_in_a_question_has_a_true_minus_sign():
    """Inside a real head asked about "-10.367" with a hyphen, and its feedback answered with "−10.367"."""
    def page():
        from attention_ui.questions import numeric, _show_questions

        _show_questions([numeric("scaled", "odd", "What is -10.367 / 8 in a multi-head layer?", -1.296, "Divide.",
                                 hint="Divide.")])

    at = AppTest.from_function(page).run()
    assert at.markdown[0].value == "**1.** What is −10.367 / 8 in a multi-head layer?", at.markdown[0].value


def test_a_numeric_question_asks_a_row_the_worked_numbers_do_not_write_out():
    """Stage 3 asked the followed query's score, which the worked numbers right above it write out: the answer was
    copied, not worked. The numeric questions ask the next query's row, and say whose row the worked numbers are."""
    t, follow, head = CAUSAL.trace, 2, 1
    row = practice_query(t, follow)
    assert row == 3 and practice_query(t, len(LABELS) - 1) == 0
    key = _other_key(t, head, row)
    asked = {slug: by_slug(stage, slug, follow=follow, head=head) for stage, slug in (
        ("qkv", "q-value"), ("scores", "score"), ("scaled", "scaled"), ("softmax", "weight"), ("context", "context"))}
    assert asked["q-value"].answer == pytest.approx(float(t.q[head, row, 0]))
    assert asked["score"].answer == pytest.approx(float(t.scores[head, row, key]))
    assert asked["scaled"].answer == pytest.approx(float(t.scaled[head, row, key]))
    assert asked["weight"].answer == pytest.approx(float(t.weights[head, row, key]))
    assert asked["context"].answer == pytest.approx(float(t.context[head, row, 0]))
    for question in asked.values():
        assert question.prompt.startswith(f"The worked numbers do it for “{LABELS[follow]}”; do the same for "
                                          f"“{LABELS[row]}”."), question.prompt
    alone = run_lesson(LessonConfig(sentence="Hi", num_heads=1))
    lone = questions_for(alone.trace, token_labels(alone.tokens), "scores", follow=0, head=0)[0]
    assert lone.prompt.startswith("What is the raw score") and lone.answer == pytest.approx(
        float(alone.trace.scores[0, 0, 0])), "one token: its own row, nothing else to ask"


def test_a_questions_id_survives_the_last_bits_of_its_answer():
    """The same question on the same sentence, its answer computed another way (0.53482950 in the page, 0.53482956 in
    a test's own run), got another id, and a student's answer to it would have been lost."""
    from attention_ui.questions import numeric

    ids = {numeric("overview", "largest", "The largest weight?", answer, "why", hint="hint").id
           for answer in (0.5348294973373413, 0.5348295569419861)}
    assert len(ids) == 1, ids
    assert numeric("overview", "largest", "The largest weight?", 0.5349, "why", hint="hint").id not in ids


def test_start_again_asks_before_it_clears_the_marks_and_the_score():
    """One click on Start again cleared a student's 12 pages done and a score of 49 of 53, with no way back: the
    button opens a question, and only its answer clears them."""
    at = open_page("pages/start_here.py")
    at.session_state["pages_visited"] = {"start-here", "overview", "masks"}
    at.run()
    popover = next(p for p in at.get("popover") if p.proto.popover.label == "Start again")
    assert not popover.proto.popover.open
    assert any("cannot be undone" in m.value for m in popover.markdown), [m.value for m in popover.markdown]
    assert [b.label for b in popover.button] == ["Yes, clear them"]
    assert at.progress[0].proto.text == f"2 of {len(LEARNING_PATH)} pages done"
    popover.button[0].click().run()
    assert at.session_state["pages_visited"] == {"start-here"}
    assert at.progress[0].proto.text == f"0 of {len(LEARNING_PATH)} pages done"


def test_the_right_option_is_not_always_first_and_the_order_stays():
    """Written with the right option first in five of the nine stages, the step-through's questions taught a student
    to pick the first one. The options come in an order of their own, the same on every build (a reload, a rerun)."""
    def choices(lesson) -> list:
        return [q for stage in STAGE_KEYS for q in questions_for(lesson.trace, token_labels(lesson.tokens), stage)
                if q.is_choice]

    found = choices(DEFAULT)
    positions = [q.correct for q in found]
    assert len(found) >= 8 and sum(p == 0 for p in positions) <= len(found) // 3, positions
    assert [(q.id, q.choices, q.correct) for q in choices(DEFAULT)] == [(q.id, q.choices, q.correct) for q in found]
    order = next(q for q in found if q.id.startswith("embed-order"))
    assert order.right_answer == "They are identical: X does not yet say where a word stands"


@pytest.mark.parametrize("typed", ["1024", "4096", "1e6", "12345678"])
def test_a_large_wrong_answer_is_marked_wrong_with_its_hint_not_refused(typed):
    """What it costs asks for a ratio; a student who squared it typed 1024 and was told "your answer is too large: use
    numbers between −1000 and 1000", a rule no question states, and learned nothing about the cost."""
    q = by_slug("softmax", "weight")
    feedback = grade(q, typed)
    assert feedback.correct is False and "Hint" in feedback.message and "too large" not in feedback.message
    assert read_answer(typed) == float(typed)
    assert grade(q, "1e13").correct is None  # past any answer: still refused, with the reason
