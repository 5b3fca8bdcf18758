"""Check-yourself questions computed from the current trace, and the block that asks them.

``questions_for(trace, labels, stage, follow=, head=)`` is pure: it returns one to three
``Question`` records whose right answers are the trace's own numbers, so they change with the
sentence, sizes and seed. ``grade`` marks a response. ``show_check_yourself(settings, stage)``
draws them and keeps every answer for the session under ``ANSWERS_KEY``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import streamlit as st

from attention_core import AttentionInputError, AttentionTrace, read_number

from .text import plain

NUMBER_TOLERANCE = 0.01
"""A numeric answer within this distance of the true value is right (the charts show 3 decimals)."""

ANSWERS_KEY = "check_yourself"
"""Session key: question id -> {"stage": key, "correct": bool, "response": str}."""


@dataclass(frozen=True)
class Question:
    """One question. Numeric: ``answer`` within ``tolerance``. Multiple choice: ``choices`` and the index
    ``correct``. ``why`` is the reason shown with the feedback. ``prompt`` and ``why`` are markdown with
    user text already escaped."""

    id: str
    stage: str
    prompt: str
    why: str
    answer: float | None = None
    tolerance: float = NUMBER_TOLERANCE
    choices: tuple[str, ...] = ()
    correct: int | None = None

    @property
    def is_choice(self) -> bool:
        return bool(self.choices)

    @property
    def right_answer(self) -> str:
        return self.choices[self.correct] if self.is_choice else _number(self.answer)


@dataclass(frozen=True)
class Feedback:
    """``correct`` is None when the response could not be read (nothing chosen, not a number)."""

    correct: bool | None
    message: str


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


def _id(stage: str, slug: str, *facts) -> str:
    """Stable for the same question on the same numbers; new when the numbers change."""
    digest = hashlib.sha1(repr(facts).encode()).hexdigest()[:10]
    return f"{stage}-{slug}-{digest}"


def _numeric(stage: str, slug: str, prompt: str, answer: float, why: str, tolerance: float = NUMBER_TOLERANCE):
    return Question(_id(stage, slug, prompt, round(float(answer), 6)), stage, prompt, why, answer=float(answer),
                    tolerance=tolerance)


def _choice(stage: str, slug: str, prompt: str, choices: tuple[str, ...], correct: int, why: str):
    return Question(_id(stage, slug, prompt, choices, correct), stage, prompt, why, choices=choices, correct=correct)


def _other_key(trace: AttentionTrace, head: int, follow: int) -> int:
    """A key for the followed query to ask about: the next one that it may attend to (else the next one)."""
    S = trace.k.shape[1]
    allowed = trace.mask[head, follow]
    for step in range(1, S + 1):
        j = (follow + step) % S
        if allowed[j]:
            return j
    return (follow + 1) % S


def questions_for(trace: AttentionTrace, labels: list[str], stage: str, *, follow: int = 0, head: int = 0,
                  key_labels: list[str] | None = None, x=None) -> list[Question]:
    """One to three questions on ``stage`` (a STAGE_KEYS name) for query ``follow`` in head ``head``.

    trace as from ``trace_attention``; labels (T,) display labels of the queries ("3·sat"), key_labels (S,)
    of the keys (default labels); x (T, d_model) the embeddings, if the stage-1 question may use them.
    """
    keys = labels if key_labels is None else key_labels
    h, i = head, follow
    j = _other_key(trace, h, i)
    me, other = f"“{plain(labels[i])}”", f"“{plain(keys[j])}”"
    head_words = f" in head {h + 1}" if trace.num_heads > 1 else ""
    T, S, d_k, d_v = trace.q.shape[1], trace.k.shape[1], trace.d_k, trace.d_v

    if stage == "embed":
        d_model = x.shape[1] if x is not None else None
        found = []
        if d_model is not None:
            found.append(_numeric(stage, "x-size", f"How many numbers does X hold for this sentence ({T} tokens, "
                                  f"d_model = {d_model})?", T * d_model, f"X has one row of d_model numbers per "
                                  f"token: {T} × {d_model} = {T * d_model}.", tolerance=0))
        found.append(_choice(stage, "order", "The same word appears twice in a sentence. Before attention, how do "
                             "its two rows of X compare?",
                             ("They are identical: X does not yet say where a word stands",
                              "They differ, because the second one comes later",
                              "The second one is all zeros"), 0,
                             "Each row depends only on the word, so nothing yet tells the positions apart "
                             "(that is what position encodings add)."))
        return found
    if stage == "qkv":
        return [
            _numeric(stage, "q-value", f"What is the first number of the query of {me}{head_words} "
                     f"(Q row {i + 1}, column 1)?", trace.q[h, i, 0],
                     "q = x · W_Q, using this head's columns of W_Q."),
            _numeric(stage, "q-width", "How many numbers does each query of one head have (its width)?", d_k,
                     f"A head's query and key vectors have d_k = {d_k} numbers.", tolerance=0),
            _choice(stage, "role", "Which vector decides what a token passes on when another token attends to it?",
                    ("its query", "its key", "its value"), 2,
                    "Queries and keys only decide the weights; the values are what get averaged."),
        ]
    if stage == "scores":
        return [
            _numeric(stage, "score", f"What is the raw score QKᵀ from {me} to {other}{head_words}?",
                     trace.scores[h, i, j], f"q · k = Σ_d q_d k_d over this head's d_k = {d_k} numbers."),
            _choice(stage, "meaning", "A query–key pair has a large positive score. What does that mean?",
                    ("The key matches what the query looks for, so it will get more weight",
                     "The two tokens are next to each other", "The key is blocked"), 0,
                    "The dot product is large when the two vectors point the same way."),
        ]
    if stage == "scaled":
        return [
            _numeric(stage, "sqrt-dk", "What is √d_k here (the number every score is divided by)?", math.sqrt(d_k),
                     f"d_k = {d_k}, so √d_k = {math.sqrt(d_k):.3f}."),
            _numeric(stage, "scaled", f"What is the scaled score from {me} to {other}{head_words}?",
                     trace.scaled[h, i, j], f"{float(trace.scores[h, i, j]):.3f} / {math.sqrt(d_k):.3f} = "
                     f"{float(trace.scaled[h, i, j]):.3f}."),
            _choice(stage, "why", "Why divide by √d_k?",
                    ("To make the scores add up to 1",
                     "Dot products grow with d_k; scaling keeps softmax from saturating on one key",
                     "To remove negative scores"), 1,
                    "With more features a dot product of random vectors spreads out more (variance ∝ d_k); "
                    "dividing by √d_k undoes that."),
        ]
    if stage == "masked":
        blocked = int((~trace.mask[h]).sum())
        return [
            _numeric(stage, "blocked", f"How many query–key pairs are blocked{head_words}?", blocked,
                     f"The mask blocks {blocked} of {T * S} pairs.", tolerance=0),
            _choice(stage, "all-blocked", "What happens to a row if every key is blocked?",
                    ("Its weights are spread evenly, 1/S each", "Its weights are all zero and its context is zero",
                     "It becomes NaN and the model breaks"), 1,
                    "Here a fully blocked row gets zero weights, so the token takes in nothing (never NaN)."),
        ]
    if stage == "softmax":
        row_total = float(trace.weights[h, i].sum())
        return [
            _numeric(stage, "weight", f"What is the attention weight from {me} to {other}{head_words}?",
                     trace.weights[h, i, j],
                     "Softmax: e^(its scaled score) divided by the sum of e^(·) over the whole row."),
            _numeric(stage, "row-sum", f"What do the weights in the row of {me} add up to?", round(row_total),
                     "Softmax rows add up to 1" + (", except a fully blocked row, which is all zero."
                                                   if round(row_total) == 0 else "."), tolerance=NUMBER_TOLERANCE),
            _choice(stage, "blocked-weight", "What weight does softmax give a blocked (−∞) score?",
                    ("Exactly 0", "A small positive number", "It depends on the other scores"), 0,
                    "e^(−∞) = 0, so a blocked key gets no weight at all."),
        ]
    if stage == "context":
        return [
            _numeric(stage, "context", f"What is the first number of the context vector of {me}{head_words}?",
                     trace.context[h, i, 0],
                     "c = Σ_j a_j v_j: the value rows weighted by this token's row of attention weights."),
            _choice(stage, "average", "A token's context vector is …",
                    ("the sum of all keys", "a weighted average of the value vectors",
                     "the query with the highest score"), 1,
                    "c_i = Σ_j A_ij v_j with weights that add up to 1: a weighted average of values."),
        ]
    if stage == "concat":
        return [
            _numeric(stage, "width", "How many columns does the concatenation of all heads have?",
                     trace.concat.shape[1], f"{trace.num_heads} heads × d_v = {d_v} → {trace.concat.shape[1]}.",
                     tolerance=0),
            _choice(stage, "order", "Where do head 1's context numbers go in the concatenation?",
                    ("In the first d_v columns", "In the last d_v columns", "Added to the other heads' numbers"), 0,
                    "The heads' columns are placed side by side, head 1 first: nothing is added up."),
        ]
    if stage == "output":
        return [
            _numeric(stage, "width", "How many numbers per token does the output have?", trace.output.shape[1],
                     f"Concat · W_O gives {trace.output.shape[1]} numbers per token.", tolerance=0),
            _choice(stage, "why-width", "Why does the output have the same width as X?",
                    ("So it can be added back to X and the next layer can take it",
                     "Because softmax keeps the width", "It is a coincidence of these settings"), 0,
                    "The output is added to X (the residual connection) and layers are stacked."),
        ]
    return []


def grade(question: Question, response) -> Feedback:
    """Mark a response: the chosen option (for multiple choice) or the typed text (for numbers)."""
    if question.is_choice:
        if response not in question.choices:
            return Feedback(None, "Pick one of the options first.")
        right = question.choices.index(response) == question.correct
        return Feedback(right, ("Right. " if right else f"Not quite: it is “{question.right_answer}”. ")
                        + question.why)
    try:
        value = read_number(response)
    except AttentionInputError as err:
        return Feedback(None, f"Type a number (like 0.25 or 1/2): your answer {plain(str(err))}.")
    right = abs(value - question.answer) <= question.tolerance
    tolerance = f" (within ±{question.tolerance:g})" if question.tolerance else ""
    return Feedback(right, (f"Right{tolerance}. " if right else f"Not quite: it is {question.right_answer}. ")
                    + question.why)


def record(question: Question, response, feedback: Feedback) -> None:
    """Keep the latest graded answer to ``question`` for the session (unreadable responses are not kept)."""
    if feedback.correct is None:
        return
    answers = st.session_state.setdefault(ANSWERS_KEY, {})
    answers[question.id] = {"stage": question.stage, "correct": feedback.correct, "response": str(response)}


def session_score() -> tuple[int, int]:
    """(right, answered) over every question answered in this session."""
    answers = st.session_state.get(ANSWERS_KEY, {})
    return sum(bool(a.get("correct")) for a in answers.values()), len(answers)


def answered_stages() -> set[str]:
    """The stages with at least one question answered in this session."""
    return {a.get("stage") for a in st.session_state.get(ANSWERS_KEY, {}).values()}


CHECK_LABEL = "Check yourself: questions on this stage, with the reasons"
CHECK_KEY = "open_check_yourself"
"""The questions' expander: its label stays the same on every stage, so once opened it stays open."""


def show_check_yourself(settings, stage_key: str) -> None:
    """The check-yourself questions for ``stage_key`` on the current settings, with feedback and the score."""
    lesson = settings.lesson
    found = questions_for(lesson.trace, settings.labels, stage_key, follow=settings.follow, head=settings.head,
                          x=lesson.x)
    if not found:
        return
    # Drawn only while open (it stays open from stage to stage once opened): its forms cost a click time.
    with st.expander(CHECK_LABEL, key=CHECK_KEY, on_change="rerun", icon=":material/quiz:") as box:
        if box.open:
            _show_questions(found)


def _show_questions(found: list) -> None:
    for number, question in enumerate(found, start=1):
        with st.form(f"cy-form-{question.id}", border=True):
            st.markdown(f"**{number}.** {question.prompt}")
            if question.is_choice:
                response = st.radio("Your answer", question.choices, index=None, key=f"cy-{question.id}",
                                    label_visibility="collapsed")
            else:
                response = st.text_input("Your answer", key=f"cy-{question.id}", placeholder="a number, e.g. 0.25")
            if st.form_submit_button("Check"):
                feedback = grade(question, response)
                record(question, response, feedback)
                st.session_state[f"cy-feedback-{question.id}"] = feedback
            feedback = st.session_state.get(f"cy-feedback-{question.id}")
            if feedback is not None:
                show = {True: st.success, False: st.error, None: st.warning}[feedback.correct]
                show(feedback.message)
    right, answered = session_score()
    st.caption(f"Your score this session: {right} right of {answered} answered.")
