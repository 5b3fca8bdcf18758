"""Check-yourself questions of the real-model pages: Real model and Inside a real head. Each function returns the
page's questions made from the model, layer, head and sentence the page shows; a page without a model asks none."""

from __future__ import annotations

import math

from attention_ui.questions import Question, choice, numeric
from attention_ui.text import plain, quoted

REAL_MODEL, INSIDE_REAL_HEAD = "real-model", "inside-real-head"
"""The pages' url paths, which are their questions' ``stage``."""

SINK_WEIGHT, SINK_LENGTH, OTHER_LENGTH = 0.6, 1.0, 4.0
"""The numbers of the question on what a sink adds: its weight, its vector's length, and every other token's."""
SINK_SHARE = SINK_WEIGHT * SINK_LENGTH / (SINK_WEIGHT * SINK_LENGTH + (1 - SINK_WEIGHT) * OTHER_LENGTH)
"""Its answer: 0.6 / (0.6 + 1.6) = 3/11."""

REPRODUCED = 1e-4
"""Largest difference from the model's own attention that the Inside a real head page calls a reproduction."""


def other_token(shown: list[int], follow: int, causal: bool) -> int:
    """The token to ask about with ``follow``: the shown one (``shown``, token indices in order) just before it; for
    the first one the next (a ``causal`` model's token may look only back: itself)."""
    earlier, later = [i for i in shown if i < follow], [i for i in shown if i > follow]
    if earlier:
        return earlier[-1]
    return later[0] if later and not causal else follow


def _pair(labels, follow: int, other: int) -> tuple[str, str]:
    """The followed token in “curly quotes”, and the other one (or "itself")."""
    return quoted(labels[follow]), ("itself" if other == follow else quoted(labels[other]))


def real_model_questions(*, num_tokens: int, labels, weights, layer: int, head: int, follow: int | None,
                         causal: bool) -> list[Question]:
    """Real model, for a sentence the model reads as ``num_tokens`` tokens; ``labels`` (T',) and ``weights`` (T', T')
    are the tokens and the attention of layer ``layer``, head ``head`` (0-based) as the close-up shows them, and
    ``follow`` the row of the followed token among them (None when it is hidden), ``causal`` whether the model looks
    only back: how many tokens the model reads, the weight the followed token gives the one before it (after it, for
    the first token; only when it is shown), what attention sinks are and how little a sink adds."""
    found = [numeric(
        REAL_MODEL, "tokens", "How many tokens does the model read for your sentence, special tokens included?",
        num_tokens,
        f"The tokenizer splits the sentence into {num_tokens} pieces, special tokens included: each is one row and "
        "one column of every head's weights.",
        tolerance=0,
        hint="Look at the table of the sentence as the tokenizer sees it: count its pieces, with the special "
             "tokens (a rare word may be split into several pieces).")]
    if follow is not None:
        other = other_token(list(range(len(labels))), follow, causal)
        me, them = _pair(labels, follow, other)
        weight = float(weights[follow][other])
        found.append(numeric(
            REAL_MODEL, "weight", f"In layer {layer + 1}, head {head + 1}, what weight does {me} give to {them}?",
            weight,
            f"It is the number in {me}'s row and {them}'s column of the close-up: {weight:.3f}. A row's weights "
            f"are a softmax over "
            f"{'the tokens it may see (itself and those before it)' if causal else 'all the tokens'} "
            "(special ones included), so they add up to 1.",
            hint="In the close-up of this head, find the row of the token the question starts from and the column "
                 "of the token it goes to (the bar chart below it shows the same row)."))
    found.append(choice(
        REAL_MODEL, "sink", "Many heads put most of a token's weight on the first token or on a special token "
        "such as [CLS] or [SEP], whatever the word. What is the usual reading of that?",
        ("The special tokens hold the meaning of the whole sentence, so every head must read them first",
         "A resting place: the head has nothing to take for this token and parks its weight there (a “sink”)",
         "The tokenizer copied every word into the special tokens, so they stand in for the words",
         "The model is broken for this sentence and spreads its weight at random"), 1,
        "Softmax weights must add up to 1, so a head with nothing to pick up still has to put its weight somewhere; "
        "trained models learn to park it on a token that changes little. The table “Every head in numbers” names "
        "the strongest such heads.",
        hint="A row's weights always add up to 1. What can a head do with that weight when no other token is "
             "useful to it?"))
    others = 1 - SINK_WEIGHT
    found.append(numeric(
        REAL_MODEL, "sink-adds", f"A head gives [CLS] a weight of {SINK_WEIGHT:g} and the other tokens {others:g} in "
        f"all. [CLS]'s vector v W_O is {SINK_LENGTH:g} long, every other token's {OTHER_LENGTH:g} long. What share "
        "of what the head adds comes from [CLS], by length? (What each token adds is as long as its weight × its "
        "vector's length; its share is that over the sum.)",
        SINK_SHARE,
        f"[CLS] adds {SINK_WEIGHT:g} × {SINK_LENGTH:g} = {SINK_WEIGHT * SINK_LENGTH:g}, and the others "
        f"{others:g} × {OTHER_LENGTH:g} = {others * OTHER_LENGTH:g} together, so [CLS]'s share is "
        f"{SINK_WEIGHT * SINK_LENGTH:g} / ({SINK_WEIGHT * SINK_LENGTH:g} + {others * OTHER_LENGTH:g}) = 3/11 ≈ "
        f"{SINK_SHARE:.3f}: most of the weight, about a quarter of what is added. Section 6 (“A weight is not what "
        "a token adds”) measures this in the model.",
        hint="The others' weights add up to the rest of the row, and each of their vectors is as long: together "
             "they add that weight times that length.",
        slips=((SINK_WEIGHT, "that is its weight, not its share of what is added"),)))
    return found


def inside_head_questions(*, model_name: str, hidden_size: int, num_heads: int, causal: bool, trace, labels,
                          shown: list[int], follow: int, layer: int, head: int, max_abs_diff: float) -> list[Question]:
    """Inside a real head, for ``model_name`` (``hidden_size`` split over ``num_heads`` heads) and the lesson's
    ``trace`` of layer ``layer``, head ``head`` (0-based) over the tokens ``labels``, of which ``shown`` are drawn and
    ``follow`` is followed (``causal``: the model looks only back): d_k, the scaled score from the followed token to
    the one before it (after it, for the first token), and (when the page reports a reproduction, ``max_abs_diff``
    under REPRODUCED) where the tiny difference from the model comes from."""
    d_k = int(trace.d_k)
    other = other_token(shown, follow, causal)
    me, them = _pair(labels, follow, other)
    raw, scaled = float(trace.scores[head, follow, other]), float(trace.scaled[head, follow, other])
    found = [] if hidden_size != num_heads * d_k else [
        numeric(INSIDE_REAL_HEAD, "d-k", f"{plain(model_name)} has hidden size {hidden_size}, split evenly over "
                f"{num_heads} heads. What is d_k, the width of one head's queries and keys?", d_k,
                f"Each head gets its own slice of the hidden size: {hidden_size} / {num_heads} = {d_k}.",
                tolerance=0,
                hint="The heads share the hidden size equally: divide it by the number of heads.")]
    found.append(
        numeric(INSIDE_REAL_HEAD, "scaled", f"In layer {layer + 1}, head {head + 1}, the raw score QKᵀ from {me} to "
                f"{them} is {raw:.3f}. What is its scaled score (stage 4)?", scaled,
                f"Scaled = raw / √d_k = {raw:.3f} / √{d_k} = {raw:.3f} / {math.sqrt(d_k):.3f} = {scaled:.3f}.",
                hint="The lesson divides every raw score by the square root of d_k, the width of this head's keys.",
                slips=((raw, "that is the raw score, not yet divided by √d_k"),
                       (raw / d_k, "that is the raw score divided by d_k, not by √d_k"))))
    if 0 < max_abs_diff < REPRODUCED:
        found.append(choice(
            INSIDE_REAL_HEAD, "rounding", "The lesson's weights and the model's own differ by a tiny amount (the "
            "page's “Largest |our weights − model's|”), not exactly 0. Why?",
            ("The lesson uses a simpler softmax than the model, which is off by a little",
             "The model adds a little random noise to its attention each time it reads a sentence",
             "Rounding: both use 32-bit floating-point numbers and add them up in another order",
             "The lesson averages the layer's heads, which blurs each head a little"), 2,
            "Same formula, same weights and biases; 32-bit numbers keep about 7 significant digits, and sums done "
            "in another order round differently. A difference this small is that rounding, nothing more.",
            hint="How many digits does a 32-bit floating-point number keep? Does the order of an addition change "
                 "a rounded result?"))
    return found
