"""Check-yourself questions computed from the current trace, and the block that asks them.

``questions_for(trace, labels, stage, follow=, head=)`` is pure: it returns one to three
``Question`` records whose right answers are the trace's own numbers, so they change with the
sentence, sizes and seed. ``grade`` marks a response. ``show_check_yourself(settings, stage)``
draws them and keeps every answer for the session under ``ANSWERS_KEY``. Other pages ask their own questions
(made with ``numeric`` and ``choice``, their ``stage`` the page's url path) with ``show_page_questions``; Start
here counts a page done when ``page_progress`` says all its questions are answered.

Tries: a first wrong answer gets the question's ``hint`` (what to look at, never the number); the right
answer and its reason (``why``) come after a second, different wrong try (the same answer checked again is not
a new try), or at once when the student presses "Show the answer". The score is fair to that: a question counts
as right only when it is answered right before its answer was shown (the hint is free); once the answer is
shown, or once it was answered right, later answers do not change it.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass
from typing import NamedTuple

import streamlit as st

from attention_core import AttentionInputError, AttentionTrace, read_number

from .frames import MINUS
from .text import counted, plain, quoted

NUMBER_TOLERANCE = 0.002
"""A numeric answer within this distance of the true value is right (the charts show 3 decimals)."""

ANSWERS_KEY = "check_yourself"
"""Session key: question id -> {"stage": key, "correct": bool, "response": str, "wrong": int, "shown": bool}.
``correct`` is what the score counts (the latest answer given before the answer was shown, or a right one),
``wrong`` the number of wrong tries, ``shown`` whether the right answer has been shown (after two wrong tries or on
request)."""

WRONG_TRIES_BEFORE_ANSWER = 2
"""The right answer is shown with the feedback on this wrong try (the tries before it get a hint)."""


@dataclass(frozen=True)
class Question:
    """One question. Numeric: ``answer`` within ``tolerance``. Multiple choice: ``choices`` and the index
    ``correct``. ``why`` is the reason shown with the right answer; ``hint`` what to look at after a first
    wrong try (it never gives the answer away). ``prompt``, ``why`` and ``hint`` are markdown with user text
    already escaped."""

    id: str
    stage: str
    prompt: str
    why: str
    answer: float | None = None
    tolerance: float = NUMBER_TOLERANCE
    choices: tuple[str, ...] = ()
    correct: int | None = None
    hint: str = ""
    slips: tuple[tuple[float, str], ...] = ()
    """Numeric: wrong numbers a common slip gives, each with what it is ("the key's number, not the query's")."""
    cell: tuple[int, int] | None = None
    """Numeric: the (row, column) of the stage's main chart that prints the answer, if one does (``asked_cell``)."""

    @property
    def is_choice(self) -> bool:
        return bool(self.choices)

    @property
    def right_answer(self) -> str:
        return self.choices[self.correct] if self.is_choice else _number(self.answer)


@dataclass(frozen=True)
class Feedback:
    """``correct`` is None when the response could not be read (nothing chosen, not a number) or when no
    response was graded (the answer shown on request); ``shown`` is True when ``message`` gives the right answer."""

    correct: bool | None
    message: str
    shown: bool = False


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


ID_DECIMALS = 4
"""A question's numbers count to this many decimals in its id (one more than the page shows): the same sentence
and settings computed another way (another batch shape, thread count or torch version) differ in their last bits,
and a student's answer must not be lost to that."""


def _id(stage: str, slug: str, *facts) -> str:
    """Stable for the same question on the same numbers; new when the numbers change."""
    digest = hashlib.sha1(repr(_rounded(facts)).encode()).hexdigest()[:10]
    return f"{stage}-{slug}-{digest}"


def _rounded(fact):
    """``fact`` with every float in it (also inside tuples and lists) to ``ID_DECIMALS`` decimals."""
    if isinstance(fact, (tuple, list)):
        return tuple(_rounded(f) for f in fact)
    if isinstance(fact, float) or type(fact).__name__ in ("float32", "float64"):
        return round(float(fact), ID_DECIMALS) + 0.0  # + 0.0: −0.0 and 0.0 alike
    return fact


def numeric(stage: str, slug: str, prompt: str, answer: float, why: str, tolerance: float = NUMBER_TOLERANCE, *,
            hint: str, slips: tuple[tuple[float, str], ...] = (), cell: tuple[int, int] | None = None) -> Question:
    """A question answered by a number: right within ``tolerance`` of ``answer``; ``slips`` name the wrong numbers
    of common slips (one that is also the right answer is left out); ``cell``: where the stage's chart prints it."""
    named = tuple((float(value), what) for value, what in slips if abs(float(value) - float(answer)) > tolerance)
    return Question(_id(stage, slug, prompt, round(float(answer), 6)), stage, prompt, why, answer=float(answer),
                    tolerance=tolerance, hint=hint, slips=named, cell=cell)


def choice(stage: str, slug: str, prompt: str, choices: tuple[str, ...], correct: int, why: str, *,
           hint: str) -> Question:
    """A multiple-choice question: ``choices[correct]`` is right. The options are shown in an order of their own,
    the same on every visit (written first, the right one was the first option of five of the nine stages'
    questions, and a student saw the pattern); the id is the written order's, so an answer kept in a browser stays."""
    question_id = _id(stage, slug, prompt, choices, correct)
    order = list(range(len(choices)))
    random.Random(f"{stage}-{slug}").shuffle(order)
    return Question(question_id, stage, prompt, why, choices=tuple(choices[i] for i in order),
                    correct=order.index(correct), hint=hint)


def _other_key(trace: AttentionTrace, head: int, follow: int) -> int:
    """A key for the followed query to ask about: the next one that it may attend to (else the next one)."""
    S = trace.k.shape[1]
    allowed = trace.mask[head, follow]
    for step in range(1, S + 1):
        j = (follow + step) % S
        if allowed[j]:
            return j
    return (follow + 1) % S


def practice_query(trace: AttentionTrace, follow: int) -> int:
    """The query a numeric question asks about: the one after the followed query (whose numbers the worked
    numbers above the questions already write out, so asking them was copying), or it when it is alone."""
    return (follow + 1) % trace.q.shape[1]


def questions_for(trace: AttentionTrace, labels: list[str], stage: str, *, follow: int = 0, head: int = 0,
                  key_labels: list[str] | None = None, x=None) -> list[Question]:
    """One to three questions on ``stage`` (a STAGE_KEYS name) for query ``follow`` in head ``head``.

    trace as from ``trace_attention``; labels (T,) display labels of the queries ("3·sat"), key_labels (S,)
    of the keys (default labels); x (T, d_model) the embeddings, if the stage-1 question may use them.
    """
    keys = labels if key_labels is None else key_labels
    h, i = head, practice_query(trace, follow)
    j = _other_key(trace, h, i)
    me, other, followed = quoted(labels[i]), quoted(keys[j]), quoted(labels[follow])
    # the worked numbers write out the followed query's row: a numeric question asks for another row, done alike
    alike = "" if i == follow else f"The worked numbers do it for {followed}; do the same for {me}. "
    head_words = f" in head {h + 1}" if trace.num_heads > 1 else ""
    T, S, d_k, d_v = trace.q.shape[1], trace.k.shape[1], trace.d_k, trace.d_v

    if stage == "embed":
        d_model = x.shape[1] if x is not None else None
        found = []
        if d_model is not None:
            found.append(numeric(stage, "x-size", "How many numbers does X hold for this sentence "
                                 f"({counted(T, 'token')}, d_model = {d_model})?", T * d_model,
                                 f"X has one row of d_model numbers per token: {T} × {d_model} = {T * d_model}.",
                                 tolerance=0,
                                 hint="X has one row per token and d_model numbers in each row: multiply the "
                                      "two sizes given in the question."))
        found.append(choice(stage, "order", "The same word appears twice in a sentence. In this lesson's X (word "
                            "vectors only, no position encoding added), how do its two rows compare?",
                            ("They are identical: X does not yet say where a word stands",
                             "They differ, because the second one comes later",
                             "The second one is all zeros"), 0,
                            "Each row depends only on the word, so nothing yet tells the positions apart "
                            "(that is what position encodings add).",
                            hint="A row of X is looked up from the word alone. Does that lookup know at which "
                                 "position the word is?"))
        return found
    if stage == "qkv":
        return [
            numeric(stage, "q-value", alike + f"What is the first number of the query of {me}{head_words} "
                    f"(Q row {i + 1}, column 1)?", trace.q[h, i, 0],
                    "q = x · W_Q, using this head's columns of W_Q.",
                    hint="Multiply this token's row of X by the first of this head's columns of W_Q, number by "
                         "number, and add the products.",
                    slips=((trace.k[h, i, 0], "that is the first number of its key (K), not of its query"),
                           (trace.v[h, i, 0], "that is the first number of its value (V), not of its query")),
                    cell=(i, 0)),
            numeric(stage, "q-width", "How many numbers does each query of one head have (its width)?", d_k,
                    f"A head's query and key vectors have d_k = {d_k} numbers.", tolerance=0,
                    hint="Count the columns of one head's Q in the chart: that width has a name in the formula, "
                         "and the lesson's settings set it."),
            choice(stage, "role", "Which vector decides what a token passes on when another token attends to it?",
                   ("its query", "its key", "its value"), 2,
                   "Queries and keys only decide the weights; the values are what get averaged.",
                   hint="Queries and keys are only compared with each other to make the weights. Which vectors "
                        "are then averaged with those weights?"),
        ]
    if stage == "scores":
        return [
            numeric(stage, "score", alike + f"What is the raw score QKᵀ from {me} to {other}{head_words}?",
                    trace.scores[h, i, j], f"q · k = Σ_m q_m k_m over this head's d_k = {d_k} numbers.",
                    hint="Take the query row of the token the question starts from and the key row of the token it "
                         "goes to, multiply them number by number and add up: a raw score is not divided by "
                         "anything yet.",
                    slips=(*(((trace.scores[h, j, i], f"that is the score the other way round, from {other} to "
                                                      f"{me}: the row is the query's"),) if j < T and i < S else ()),
                           (trace.scaled[h, i, j], "that score is already divided by √d_k (stage 4)")),
                    cell=(i, j)),
            choice(stage, "meaning", "A query–key pair has a large positive score. What does that mean?",
                   ("The key matches what the query looks for, so it will get more weight",
                    "The two tokens are next to each other", "The key is blocked"), 0,
                   "The dot product is large when the two vectors point the same way.",
                   hint="When is a dot product large? And what does softmax later do with a larger score?"),
        ]
    if stage == "scaled":
        return [
            numeric(stage, "sqrt-dk", "What is √d_k here (the number every score is divided by)?", math.sqrt(d_k),
                    f"d_k = {d_k}, so √d_k = {math.sqrt(d_k):.3f}.",
                    hint="d_k is the width of one head's query (the columns of its Q): take its square root."),
            numeric(stage, "scaled", alike + f"What is the scaled score from {me} to {other}{head_words}?",
                    trace.scaled[h, i, j], f"{float(trace.scores[h, i, j]):.3f} / {math.sqrt(d_k):.3f} = "
                    f"{float(trace.scaled[h, i, j]):.3f}.",
                    hint="Take this pair's raw score QKᵀ from the stage before and divide it by √d_k.",
                    slips=((trace.scores[h, i, j], "that is the raw score, not yet divided by √d_k"),
                           (trace.scores[h, i, j] / d_k, "that is the raw score divided by d_k, not by √d_k")),
                    cell=(i, j)),
            choice(stage, "why", "Why divide by √d_k?",
                   ("To make the scores add up to 1",
                    "Dot products grow with d_k; scaling keeps softmax from saturating on one key",
                    "To remove negative scores"), 1,
                   "With more features a dot product of random vectors spreads out more (variance ∝ d_k); "
                   "dividing by √d_k undoes that.",
                   hint="Think of what happens to a dot product as vectors get more numbers, and of what softmax "
                        "does when one score is far above the others."),
        ]
    if stage == "masked":
        blocked = int((~trace.mask[h]).sum())
        return [
            numeric(stage, "blocked", f"How many query–key pairs are blocked{head_words}?", blocked,
                    f"The mask blocks {blocked} of {T * S} pairs.", tolerance=0,
                    hint="Count the grey cells marked −∞ in this head's chart: each one is a blocked query–key "
                         "pair."),
            choice(stage, "all-blocked", "In this app, what happens to a row if every key is blocked?",
                   ("Its weights are spread evenly, 1/(number of keys) each",
                    "Its weights are all zero and its context is zero",
                    "It becomes NaN and the rest of the page breaks"), 1,
                   "This app gives a fully blocked row zero weights, so the token takes in nothing. Softmax itself "
                   "would divide 0 by 0 there: PyTorch's softmax returns NaN (“not a number”) for such a row, so "
                   "real code must avoid it (or clean it up) by a rule of its own, as this app does.",
                   hint="A blocked score is −∞ and e^(−∞) is nothing at all. What is left in such a row to "
                        "share out, and what does this lesson do then?"),
        ]
    if stage == "softmax":
        row_total = float(trace.weights[h, follow].sum())
        return [
            numeric(stage, "weight", alike + f"What is the attention weight from {me} to {other}{head_words}?",
                    trace.weights[h, i, j],
                    "Softmax: e^(its scaled score) divided by the sum of e^(·) over the whole row.",
                    hint="Take e to the power of every scaled score in this token's row (a blocked key adds "
                         "nothing), then divide this key's term by the row's sum.", cell=(i, j)),
            numeric(stage, "row-sum", f"What do the weights in the row of {followed} add up to?", round(row_total),
                    "Softmax rows add up to 1" + (", except a fully blocked row, which is all zero."
                                                  if round(row_total) == 0 else "."), tolerance=NUMBER_TOLERANCE,
                    hint="Softmax divides every term by the row's own sum: what do all the shares of a whole add "
                         "up to? Mind a row whose keys are all blocked."),
            choice(stage, "blocked-weight", "What weight does softmax give a blocked (−∞) score?",
                   ("Exactly 0", "A small positive number", "It depends on the other scores"), 0,
                   "e^(−∞) = 0, so a blocked key gets no weight at all.",
                   hint="A blocked score is −∞ before softmax. What is e to the power of −∞?"),
        ]
    if stage == "context":
        return [
            numeric(stage, "context", alike + f"What is the first number of the context vector of {me}{head_words}?",
                    trace.context[h, i, 0],
                    "c = Σ_j a_j v_j: the value rows weighted by this token's row of attention weights.",
                    hint="Multiply the first number of each value row by this token's weight for that key, and "
                         "add the products.", cell=(i, 0)),
            choice(stage, "average", "A token's context vector is …",
                   ("the sum of all keys", "a weighted average of the value vectors",
                    "the query with the highest score"), 1,
                   "c_i = Σ_j A_ij v_j with weights that add up to 1: a weighted average of values.",
                   hint="Look at the formula c_i = Σ_j A_ij v_j, and at what one row's weights add up to."),
        ]
    if stage == "concat":
        return [
            numeric(stage, "width", "How many columns does the concatenation of all heads have?",
                    trace.concat.shape[1], f"{trace.num_heads} heads × d_v = {d_v} → {trace.concat.shape[1]}.",
                    tolerance=0, hint="Each head gives d_v numbers per token, and the heads are placed side by "
                                      "side."),
            choice(stage, "order", "Where do head 1's context numbers go in the concatenation?",
                   ("In the first d_v columns", "In the last d_v columns", "Added to the other heads' numbers"), 0,
                   "The heads' columns are placed side by side, head 1 first: nothing is added up.",
                   hint="Concatenating means placing the heads' columns next to each other. In which order do "
                        "the heads come?"),
        ]
    if stage == "output":
        return [
            numeric(stage, "width", "How many numbers per token does the output have?", trace.output.shape[1],
                    f"Concat · W_O gives {trace.output.shape[1]} numbers per token.", tolerance=0,
                    hint="Concat · W_O has as many numbers per token as W_O has columns: look at W_O's shape."),
            choice(stage, "why-width", "Why does the output have the same width as X?",
                   ("So it can be added back to X and the next layer can take it",
                    "Because softmax keeps the width", "It is a coincidence of these settings"), 0,
                   "The output is added to X (the residual connection) and layers are stacked.",
                   hint="What happens to the output next? Think of what it is added to, and of the layer that "
                        "follows."),
        ]
    return []


MAX_ANSWER_MAGNITUDE = 1e12
"""The largest number an answer box takes: far beyond every answer (a cache's bytes, a cost's ratio), so that a wrong
answer such as 1024 is marked wrong, with its hint, instead of refused (Work it by hand's cells stop at 1000)."""


def read_answer(text) -> float:
    """A typed answer as a number: what ``read_number`` reads, as in Work it by hand's grids (a decimal comma too:
    "0,127", and a percentage: "12.7%" is 0.127), up to ±MAX_ANSWER_MAGNITUDE. ``AttentionInputError`` when it is
    none of these."""
    return read_number(str(text if text is not None else ""), limit=MAX_ANSWER_MAGNITUDE)


ANSWER_DECIMALS = 3
"""Decimals a numeric answer should give (the charts and tables show 3)."""


def _decimals_typed(response) -> int | None:
    """How many decimals a typed plain decimal number has ("0.13" → 2, "1" → 0); None for any other form."""
    text = str(response if response is not None else "").strip().replace(",", ".")
    if not text or text.count(".") > 1 or not text.lstrip("-").replace(".", "").isdigit():
        return None
    return len(text.split(".")[1]) if "." in text else 0


def grade(question: Question, response, *, wrong_before: int = 0, shown: bool = False) -> Feedback:
    """Mark a response: the chosen option (for multiple choice) or the typed text (for numbers).

    ``wrong_before`` is the number of wrong tries already made and ``shown`` whether the answer was already
    shown: a wrong try before the ``WRONG_TRIES_BEFORE_ANSWER``-th gets the hint and not the answer."""
    if question.is_choice:
        if response not in question.choices:
            return Feedback(None, "Pick one of the options first.")
        right = question.choices.index(response) == question.correct
        tolerance, slip = "", ""
    else:
        try:
            value = read_answer(response)
        except AttentionInputError as err:
            return Feedback(None, f"Type a number (like 0.25, 1/2 or √2): your answer {plain(str(err))}.")
        if question.tolerance == 0 and not float(value).is_integer():  # its box says "a whole number"
            # (a fraction a slip gives, typed to a few decimals, is named: 0.03125 for T / d = 32 is d / T)
            slip = _slip(question, value, relative=0.01)
            return Feedback(None, f"This answer is a whole number (a count), and {plain(str(response).strip())} is "
                                  f"not one{f': it looks like {slip}' if slip else ''}. Not counted as a try.")
        right = abs(value - question.answer) <= question.tolerance
        tolerance = f" (within ±{question.tolerance:g})" if question.tolerance else ""
        decimals = _decimals_typed(response)
        if not right and decimals is not None and decimals < ANSWER_DECIMALS and question.tolerance < 10 ** -decimals \
                and abs(value - round(question.answer, decimals)) < 1e-9:  # rounded too far: not a wrong try
            return Feedback(None, f"Close: that is the answer rounded to {decimals} decimal"
                                  f"{'s' * (decimals != 1)}. Give {ANSWER_DECIMALS} decimals, as the answer box asks.")
        slip = _slip(question, value)
    if right:
        late = " The answer had been shown, so this one does not add to your score." if shown else ""
        return Feedback(True, f"Right{tolerance}.{late} " + question.why, shown=True)
    if not shown and wrong_before + 1 < WRONG_TRIES_BEFORE_ANSWER:
        return Feedback(False, f"Not quite{f': {slip}' if slip else ''}. **Hint:** "
                               f"{question.hint or 'look at the formula of this stage.'} Try again, or press "
                               "“Show the answer”.")
    return Feedback(False, f"Not quite{f' ({slip})' if slip else ''}: it is {_answer_text(question)}. A second "
                           "wrong try shows the answer, so this question counts as not right. " + question.why,
                    shown=True)


def _slip(question: Question, value: float, *, relative: float = 0.0) -> str:
    """What the number ``value`` is when a common slip gives it (``Question.slips``), else "": within the question's
    tolerance of the slip's number, or ``relative`` of it (a fraction typed to a few decimals)."""
    return next((what for slip, what in question.slips
                 if abs(value - slip) <= max(question.tolerance, 1e-9, relative * abs(slip))), "")


def _answer_text(question: Question) -> str:
    return f"“{question.right_answer}”" if question.is_choice else question.right_answer


def answer_feedback(question: Question) -> Feedback:
    """The right answer and its reason, shown when the student asks for it."""
    return Feedback(None, f"The answer is {_answer_text(question)}. " + question.why, shown=True)


def attempt(question: Question) -> dict:
    """What this session has done with ``question`` so far (its ``ANSWERS_KEY`` entry, or {})."""
    return st.session_state.get(ANSWERS_KEY, {}).get(question.id, {})


def record(question: Question, response, feedback: Feedback) -> None:
    """Keep a graded answer to ``question`` for the session (unreadable responses are not kept).

    Until the answer has been shown or given right the latest answer is what counts; once it has been shown (after
    two wrong tries or on request) or given right, later answers are kept as the response but do not change the
    score: a student who tries another number on a question they have right is exploring, not losing it."""
    if feedback.correct is None:
        return
    answers = st.session_state.setdefault(ANSWERS_KEY, {})
    entry = answers.get(question.id)
    if entry is not None and (entry.get("shown") or entry.get("correct")):
        entry["response"] = str(response)
        return
    wrong = (entry or {}).get("wrong", 0) + (not feedback.correct)
    answers[question.id] = {"stage": question.stage, "correct": feedback.correct, "response": str(response),
                            "wrong": wrong, "shown": feedback.shown and not feedback.correct}


def reveal(question: Question) -> None:
    """The student asked for the answer: from now on the question's score stays as it is (not right if it was
    not answered right before; a question revealed before any answer is counted as looked up, not answered)."""
    answers = st.session_state.setdefault(ANSWERS_KEY, {})
    entry = answers.setdefault(question.id, {"stage": question.stage, "correct": False, "response": "",
                                             "wrong": 0})
    entry["shown"] = True


class Score(NamedTuple):
    """This session's questions: ``right`` of ``answered`` (right, or wrong until the answer was shown),
    ``trying`` (one wrong try so far, which costs nothing), ``looked_up`` (the answer shown before any try) and
    ``first_try`` (right without a wrong try before: how ready a student is for an exam)."""

    right: int
    answered: int
    trying: int
    looked_up: int
    first_try: int = 0

    def in_words(self) -> str:
        """"2 right of 3 answered", how many of them at the first try when not all, then how many are still
        being tried and looked up, if any."""
        first = f" ({self.first_try} at the first try)" if self.first_try < self.right else ""
        extra = [f"{self.trying} still to try again" if self.trying else "",
                 f"{self.looked_up} answer{'s' * (self.looked_up != 1)} shown before a try" if self.looked_up else ""]
        return f"{self.right} right of {self.answered} answered{first}" + "".join(f", {e}" for e in extra if e)


def _settled(entry: dict) -> bool:
    """An ``ANSWERS_KEY`` entry that counts as answered: right, or wrong until the answer was shown."""
    return bool(entry.get("correct") or (entry.get("shown") and entry.get("wrong")))


def session_score() -> Score:
    """The ``Score`` of this session's questions."""
    answers = list(st.session_state.get(ANSWERS_KEY, {}).values())
    looked_up = [a for a in answers if a.get("shown") and not a.get("correct") and not a.get("wrong")]
    settled = [a for a in answers if _settled(a)]
    return Score(sum(bool(a.get("correct")) for a in settled), len(settled),
                 len(answers) - len(settled) - len(looked_up), len(looked_up),
                 sum(bool(a.get("correct")) and not a.get("wrong") for a in settled))


def answered_stages() -> set[str]:
    """The stages with at least one question answered in this session."""
    return {a.get("stage") for a in st.session_state.get(ANSWERS_KEY, {}).values()}


CHECK_LABEL = "Check yourself: questions on this stage, with the reasons"
OPEN_CHECK_PREFIX = "open_check"
"""The start of the session keys of the Check yourself expanders (the step-through's and each page's)."""
CHECK_KEY = f"{OPEN_CHECK_PREFIX}_yourself"
"""The questions' expander: its label stays the same on every stage, so once opened it stays open."""


def show_check_yourself(settings, stage_key: str, *, asked: tuple[int, int] | None = None) -> None:
    """The check-yourself questions for ``stage_key`` on the current settings, with feedback and the score.
    ``asked``: the chart's cell drawn with ``charts.ASKED_MARK`` (``asked_cell``), which the panel then explains."""
    lesson = settings.lesson
    found = questions_for(lesson.trace, settings.labels, stage_key, follow=settings.follow, head=settings.head,
                          x=lesson.x)
    if not found:
        return
    # Drawn only while open (it stays open from stage to stage once opened): its forms cost a click time.
    with st.expander(CHECK_LABEL, key=CHECK_KEY, on_change="rerun", icon=":material/quiz:") as box:
        if box.open:
            number = next((n for n, q in enumerate(found, start=1) if asked is not None and q.cell == asked), None)
            if number is not None:
                st.caption(ASKED_NOTE.format(number=number))
            _show_questions(found)


ASKED_NOTE = ("The chart above and its “All the numbers” show “?” in the cell question {number} asks for, until you "
              "answer it right or show its answer: work it out from the stage before, as the worked numbers do.")
"""Said at the top of the step-through's open Check yourself while a chart's cell waits for an answer."""


def asked_cell(settings, stage_key: str) -> tuple[int, int] | None:
    """The (row, column) of ``stage_key``'s main chart that its numeric question asks for, while the step-through's
    Check yourself is open and that question is neither answered right nor shown: the chart then prints a mark there
    instead of the number (a student copied the answer from the chart above, where it was printed). None otherwise,
    and when the question asks about the followed token itself (a sentence of one token): its worked numbers and
    bars print the answer anyway, so a "?" in the chart would only disagree with them."""
    if not st.session_state.get(CHECK_KEY):
        return None
    found = questions_for(settings.lesson.trace, settings.labels, stage_key, follow=settings.follow,
                          head=settings.head)
    return next((q.cell for q in found if q.cell is not None and q.cell[0] != settings.follow
                 and not _settled_or_shown(attempt(q))), None)


def _settled_or_shown(entry: dict) -> bool:
    """An ``ANSWERS_KEY`` entry whose question no longer hides its chart's cell: answered right, or its answer shown."""
    return bool(entry.get("correct") or entry.get("shown"))


PAGE_CHECK_LABEL = "Check yourself: questions on this page, with the reasons"
PAGE_QUESTIONS_KEY = "page_questions_asked"
"""Session key: a page's url path -> how many questions it asked on its last run (Start here's progress)."""


def show_page_questions(page: str, found: list[Question]) -> None:
    """A page's check-yourself questions (``Question.stage`` is ``page``, its url path) in an expander that stays
    open once opened, with feedback and the session's score. Drawn only while open, like the step-through's."""
    st.session_state.setdefault(PAGE_QUESTIONS_KEY, {})[page] = len(found)
    if not found:
        return
    with st.expander(PAGE_CHECK_LABEL, key=f"{OPEN_CHECK_PREFIX}_{page}", on_change="rerun",
                     icon=":material/quiz:") as box:
        if box.open:
            _show_questions(found)


QUESTIONS_DONE = "check-yourself questions done (answered right, or the answer shown)"
"""Start here's words for ``page_progress``'s count, after "2 of 3": "answered" alone read as "tried" to a student
whose wrong first try (a hint, not yet its answer) was not counted."""


def page_progress(page: str) -> tuple[int, int] | None:
    """(questions answered, questions asked) on the page with url path ``page`` in this session, or None if it
    has not asked any yet. Answered: right, or wrong until the answer was shown, on any settings; a question asked
    again on other numbers counts once (three answers to the K cache's size at three steps are one question)."""
    asked = st.session_state.get(PAGE_QUESTIONS_KEY, {}).get(page)
    if not asked:
        return None
    answers = st.session_state.get(ANSWERS_KEY, {})
    answered = {_slug(question_id, page) for question_id, entry in answers.items()
                if entry.get("stage") == page and _settled(entry)}
    return min(len(answered), asked), asked


def _slug(question_id: str, stage: str) -> str:
    """The slug of a question id made by ``_id`` ("<stage>-<slug>-<digest>"): the same on any numbers."""
    return question_id[len(stage) + 1:].rsplit("-", 1)[0]


SCORE_RULE = ("A question counts as right when you answer it right before its answer is shown (a second wrong try "
              "shows it), and stays right whatever you try after; a first wrong try gets a hint and costs nothing.")


SAME_ANSWER = "This same answer was checked already"
"""Put after a wrong answer's feedback when the same answer is checked again (it is not a new try), in brackets: the
verdict comes first. It says why, without blame: a student who pressed Enter and then Check had read "You checked
this answer already: choose or type another one" as a second mistake, "That answer is checked already … Not quite."
as Check doing nothing, "Already checked, so not counted as a second try" as a try lost, and "The same answer as
before: no try used. … Its feedback: Not quite." as not knowing whether it was graded."""
ENTER_CHECKS = "; Enter in the box checks an answer too"
"""Added to SAME_ANSWER for a typed answer: a choice has no box (a student who clicked Check twice on one was told
about Enter in a box there was not)."""


ANSWERED_BEFORE = "You answered this one right before (kept in this browser)."
KEPT_RIGHT = "You have this one right already, and it stays right: this answer would not be."
"""Put before the feedback on a wrong answer to a question answered right before: the score keeps the right answer
(a student trying "what if I take the second largest?" lost the credit, and its first try's, for good)."""


def _feedback_key(question: Question) -> str:
    return f"cy-feedback-{question.id}"


def _on_check(question: Question) -> None:
    """The Check button: grade the response (read from its widget) against the tries made so far."""
    response = st.session_state.get(f"cy-{question.id}")
    before = attempt(question)
    if before and not before.get("shown") and before.get("response") == str(response):
        # the same answer checked again (Enter, then Check): not a new try; its feedback stays, with a word on it
        earlier = st.session_state.get(_feedback_key(question))
        if earlier is not None and earlier.correct is False and SAME_ANSWER not in earlier.message:
            said = f"{SAME_ANSWER}: no try used" + ("" if question.is_choice else ENTER_CHECKS)
            st.session_state[_feedback_key(question)] = Feedback(False, f"{earlier.message} ({said}.)")
        return
    if before.get("correct") and not before.get("shown"):  # right already: another answer is a try on the side
        feedback = grade(question, response)
        if feedback.correct is False:
            feedback = Feedback(False, f"{KEPT_RIGHT} {feedback.message}")
    else:
        feedback = grade(question, response, wrong_before=before.get("wrong", 0), shown=bool(before.get("shown")))
    record(question, response, feedback)
    st.session_state[_feedback_key(question)] = feedback


def _on_show(question: Question) -> None:
    """The "Show the answer" button."""
    reveal(question)
    st.session_state[_feedback_key(question)] = answer_feedback(question)


def _earlier_feedback(question: Question, done: dict) -> Feedback | None:
    """What a question answered in an earlier visit says (the browser keeps whether it was right or shown, never
    the text typed): after a reload it showed an empty box and no mark, though the score counted it."""
    if done.get("correct"):
        return Feedback(True, f"{ANSWERED_BEFORE} {question.why}")
    if done.get("shown"):
        return answer_feedback(question)
    return None


_HYPHEN_MINUS = re.compile(r"(?<![\w.])-(?=\d)")
"""A hyphen written as the sign of a number ("-0.113"; not the one in "1e-3")."""


def _show_feedback(feedback: Feedback) -> None:
    message = _HYPHEN_MINUS.sub(MINUS, feedback.message)  # the sign the charts and worked numbers print
    if feedback.correct is True:
        st.success(message, icon=":material/check_circle:")
    elif feedback.correct is False:
        if feedback.shown:
            st.error(message, icon=":material/cancel:")
        else:
            st.info(message, icon=":material/lightbulb:")
    elif feedback.shown:
        st.info(message, icon=":material/visibility:")
    else:
        st.warning(message)


def _placeholder(question: Question) -> str:
    """What a number's answer box says it takes: a whole number, or a number, whole or to the charts' 3 decimals."""
    if question.tolerance == 0:
        return "a whole number"
    return f"a number, whole or to 3 decimals (within ±{question.tolerance:g}), e.g. 0.125, 1/8 or 12.5%"


def _show_questions(found: list) -> None:
    # The buttons act in callbacks, before the run: the run then draws the state after the click (for
    # instance no "Show the answer" button once the answer is shown).
    for number, question in enumerate(found, start=1):
        with st.form(f"cy-form-{question.id}", border=True):
            st.markdown(f"**{number}.** {_HYPHEN_MINUS.sub(MINUS, question.prompt)}")
            if question.is_choice:
                st.radio(f"Your answer to question {number}", question.choices, index=None, key=f"cy-{question.id}",
                         label_visibility="collapsed")
            else:
                st.text_input(f"Your answer to question {number}", key=f"cy-{question.id}",  # a reader names each
                              placeholder=_placeholder(question))
            with st.container(horizontal=True, vertical_alignment="center"):
                st.form_submit_button("Check", on_click=_on_check, args=(question,))
                done = attempt(question)
                if not (done.get("shown") or done.get("correct")):
                    st.form_submit_button("Show the answer", key=f"cy-show-{question.id}", type="tertiary",
                                          on_click=_on_show, args=(question,), icon=":material/visibility:")
            feedback = st.session_state.get(_feedback_key(question)) or _earlier_feedback(question, done)
            if feedback is not None:
                _show_feedback(feedback)
    st.caption(f"Your score on every page's questions (kept in this browser): {session_score().in_words()}. "
               f"{SCORE_RULE}")
