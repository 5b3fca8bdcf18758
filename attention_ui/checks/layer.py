"""Check-yourself questions of the pages on one layer: the Overview, Multi-head and Masking.

Each function is pure: it returns the page's ``Question`` list, its numeric answers taken from the numbers the page
shows (the trace, the followed token and head, the masks drawn), so they change with the settings.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from attention_core import AttentionTrace

from ..questions import Question, choice, numeric
from ..text import quoted
from . import largest_weight

OVERVIEW, MULTI_HEAD, MASKS = "overview", "multi-head", "masks"
"""The pages' url paths: the stage of their questions."""


def _in_head(trace: AttentionTrace, head: int) -> str:
    return f" (head {head + 1})" if trace.num_heads > 1 else ""


def overview_questions(trace: AttentionTrace, labels: list[str], *, follow: int, head: int) -> list[Question]:
    """The Overview's questions on its chart of head ``head``'s weights, whose outlined row is query ``follow``.

    trace as from ``trace_attention``; labels (T,) the display labels of its tokens. Returns three questions: the
    largest weight in the outlined row, what a row means, and which vectors decide a weight."""
    me = quoted(labels[follow])
    largest, why_largest = largest_weight(trace.weights[head, follow], labels, me)
    return [
        numeric(OVERVIEW, "largest", f"In the chart “Your sentence right now” at the top of this page"
                f"{_in_head(trace, head)}, what is the largest weight in the outlined row, the row of {me}?", largest,
                why_largest,
                hint="Scroll back up to the chart beside the formula. Find its outlined row, hover over its cells (or "
                     "read their numbers) and take the biggest one."),
        choice(OVERVIEW, "row", "What does one row of the chart show?",
               ("How much each of the other tokens takes from the row's token",
                "How much the row's token (the query) takes from each token (the keys)",
                "How similar the row's word is in meaning to each word",
                "The order in which the model reads the tokens"), 1,
               "Row i holds the weights softmax(q_i · k_j / √d_k) over the keys j: the shares of each token's value "
               "in token i's new vector. They add up to 1 along the row. A column shows how much every query takes "
               "from one token.",
               hint="Read the caption under the chart: which token does a row stand for, and which does a column? "
                    "Then think of what a weight is used for."),
        choice(OVERVIEW, "pair", "Which two vectors decide how much weight token i gives to token j?",
               ("The value of i and the value of j", "The key of i and the query of j",
                "The query of i and the key of j", "The values of every token, averaged"), 2,
               "The weight comes from q_i · k_j (divided by √d_k, then the softmax over the row): the query of "
               "the token that is looking against the key of the token it looks at. The values are only averaged "
               "afterwards, with these weights.",
               hint="Look at the formula: which two matrices are multiplied inside the softmax, and which of them "
                    "belongs to the token that is looking?"),
    ]


def multi_head_questions(trace: AttentionTrace, *, head: int) -> list[Question]:
    """Multi-head's questions: the columns head ``head`` owns (its d_k), the weights of all the heads together
    (h × T × S), and why a layer has several heads. trace as from ``trace_attention``; returns three questions."""
    h, T, S, d_k = trace.num_heads, trace.q.shape[1], trace.k.shape[1], trace.d_k
    blocked = bool((~trace.mask).any())  # a student answered with the unblocked cells only, and was marked wrong
    n = head + 1
    return [
        numeric(MULTI_HEAD, "last-column", f"Head {n} takes a block of W_Q's columns. Counting from 1, what is the "
                f"number of the last column it takes?", n * d_k,
                f"Head i takes columns (i − 1)·d_k + 1 to i·d_k. With d_k = {d_k}, head {n} takes columns "
                f"{(n - 1) * d_k + 1} to {n * d_k}.", tolerance=0,
                hint="Each head owns a block of d_k columns, the heads in order, head one first: count the columns "
                     "of the blocks up to and including this head's."),
        numeric(MULTI_HEAD, "all-weights", "How many attention weights does this layer compute for your sentence, "
                "counting every head?" + (" Count the pairs the mask blocks too (×): each still has a weight, 0."
                                          if blocked else ""), h * T * S,
                f"Every head has its own grid of weights, one row per query token and one column per key token: "
                f"{h} heads × {T} × {S} = {h * T * S}." + (" A blocked pair's weight is computed too: it is 0."
                                                           if blocked else ""), tolerance=0,
                hint="Each head has a grid of its own with one weight per query–key pair: count the panels in "
                     "section 1, and the cells of one panel.",
                slips=((T * S, "that is one head's weights: every head has a grid of its own"),)),
        choice(MULTI_HEAD, "why-heads", "Why does a layer run several heads instead of one attention over all the "
               "features?",
               ("So that each row of weights can add up to more than 1",
                "So that the heads' results can be averaged into one smoother result",
                "Because one attention can only compare tokens that are next to each other",
                "Each head computes its own weights, so different heads can attend to different relations at once"),
               3,
               "One row of weights can spread its attention in only one way. Each head has its own slices of W_Q, "
               "W_K and W_V, so it computes its own weights (compare the rows in section 3); the heads' results are "
               "then put side by side and mixed by W_O, not averaged.",
               hint="Compare the followed token's row head by head in section 3: what can several heads do that one "
                    "row of weights cannot?"),
    ]


class ShownMask(NamedTuple):
    """One mask as the Masking page draws it: its token labels (T,), the (T, S) bool mask of the page's head
    (True = may attend) and the followed row."""

    labels: list[str]
    mask: torch.Tensor
    follow: int


def masking_questions(shown: dict[str, ShownMask]) -> list[Question]:
    """Masking's questions on the masks it draws (``shown``: mask kind -> ``ShownMask``): the keys the followed
    token may use under the causal mask, the pairs the padding mask blocks, and why a decoder masks the future.
    A kind the page could not draw gets no question; returns one to three questions."""
    found = []
    causal = shown.get("causal")
    if causal is not None:
        i = causal.follow
        allowed = int(causal.mask[i].sum())
        me = quoted(causal.labels[i])
        found.append(numeric(
            MASKS, "causal-keys", f"Under the causal mask, how many keys may {me} attend to?", allowed,
            f"{me} is token {i + 1}. The causal mask lets token i see tokens 1 … i, itself included: "
            f"{allowed} key{'s' * (allowed != 1)}.", tolerance=0,
            hint="Find this token's row in the causal mask's chart and count the cells that may attend. May a "
                 "token look at itself?"))
    padding = shown.get("padding")
    if padding is not None:
        rows, keys = padding.mask.shape
        pads = int((~padding.mask).any(dim=0).sum())
        blocked = int((~padding.mask).sum())
        found.append(numeric(
            MASKS, "padding-blocked", f"The padding mask pads the sentence to {keys} tokens. How many query–key "
            "pairs does it block in all (the blocked cells of its chart)?", blocked,
            f"It blocks the {pads} [PAD] key{'s' * (pads != 1)} in every one of the {rows} rows, the [PAD] rows "
            f"too: {rows} × {pads} = {blocked}.", tolerance=0,
            hint="Count the [PAD] columns of the padding mask's chart, and check in which rows they are blocked."))
    found.append(choice(
        MASKS, "why-causal", "Why does a decoder such as GPT use the causal mask?",
        ("It makes the weights in each row add up to 1",
         "A token must not attend to itself",
         "It writes one token at a time, so a token must not use the tokens after it",
         "It blocks the [PAD] tokens of a batch"), 2,
        "When a decoder writes, the later tokens do not exist yet. Trained with the causal mask, each token learns "
        "to work from the tokens before it (and itself) only, just as it must when it generates.",
        hint="Look at which cells the causal mask blocks: those of tokens before the row's token, or after it? "
             "Then think of a model that writes a sentence word by word."))
    return found
