"""Check-yourself questions of the "why" pages: Why √d_k, Order and position, and Cross-attention.

Each function is pure: it returns the page's ``Question`` list, its numeric answers taken from the numbers the page
shows (its d_k, the sentence's weights, the encodings, the RoPE scores), so they change with the settings.
"""

from __future__ import annotations

import math

import torch

from attention_core import AttentionTrace, RopeShiftCheck

from ..questions import Question, choice, numeric
from ..text import quoted
from . import largest_weight

WHY_SCALING, POSITIONS, CROSS = "why-scaling", "order-and-position", "cross-attention"
"""The pages' url paths: the stage of their questions."""


def _in_head(num_heads: int, head: int) -> str:
    return f" in head {head + 1}" if num_heads > 1 else ""


def scaling_questions(d_k: int, trace: AttentionTrace | None, labels: list[str], unscaled: torch.Tensor | None, *,
                      follow: int, head: int) -> list[Question]:
    """Why √d_k's questions: the spread of q·k at the experiments' ``d_k`` (sections 1 and 2), the largest weight
    of query ``follow``'s row of the sentence without the scaling (section 3: ``unscaled`` (T, S) is head
    ``head``'s softmax(QKᵀ), trace the sentence's), and why a saturated softmax is bad. Returns three questions;
    two, without the sentence's, when the settings make no lesson (``trace`` None)."""
    spread = math.sqrt(d_k)
    found = [
        numeric(WHY_SCALING, "spread", f"The experiments draw q and k of d_k = {d_k} random numbers with variance 1. "
                "In theory, what is the standard deviation of q·k?", spread,
                f"Each product q_m·k_m has variance 1, so the sum of {d_k} of them has variance d_k = {d_k}. The "
                f"standard deviation is the square root of that: √{d_k} = {spread:.3f}. Divided by √d_k, the "
                "scores have standard deviation 1.",
                hint="The page gives the variance of q·k in theory at this d_k; a standard deviation is the square "
                     "root of a variance."),
    ]
    if trace is not None:
        found.append(_unscaled_largest(trace, labels, unscaled, follow=follow, head=head))
    found.append(
        choice(WHY_SCALING, "saturation", "Why is a softmax row with one weight near 1 (a saturated row) bad for "
               "training?",
               ("Its weights no longer add up to 1",
                "Its gradient is nearly zero, so the queries and keys barely learn",
                "It gives NaN for the other weights",
                "It makes all the weights equal"), 1,
               "With one weight a_i near 1, every entry a_i(δ_ij − a_j) of the softmax's derivative is near 0: "
               "a change in a score hardly moves the weights, so almost no gradient flows back to q and k.",
               hint="Look at section 2's third chart: what happens to the size of the softmax gradient as the "
                    "largest weight in a row goes to 1?"))
    return found


def _unscaled_largest(trace: AttentionTrace, labels: list[str], unscaled: torch.Tensor, *, follow: int,
                      head: int) -> Question:
    me = quoted(labels[follow])
    largest, scaled = float(unscaled[follow].max()), float(trace.weights[head, follow].max())
    return numeric(WHY_SCALING, "unscaled-largest", f"In section 3, what is the largest weight in the row of {me}"
                   f"{_in_head(trace.num_heads, head)} without the scaling, softmax(QKᵀ)? (Read it on the left "
                   "chart, or in “The numbers, row by row” under the two charts.)", largest,
                   f"Without dividing by √{trace.d_k} the row's largest weight is {largest:.3f}; with it, "
                   f"{scaled:.3f}. Dividing every score by √d_k shrinks the gaps between them, so the largest weight "
                   "can only fall (or stay the same).",
                   hint="Open “The numbers, row by row” under the two charts and read this token's row in the "
                        "column of the largest weight without the scaling (or hover over the left chart's row).")


def position_questions(encodings: torch.Tensor, rope: RopeShiftCheck | None, labels: list[str], *,
                       follow: int) -> list[Question]:
    """Order and position's questions: the sinusoidal encoding of query ``follow`` (the second token when it is the
    first, whose encodings are sin 0 and cos 0 on any settings) in column d1 (``encodings``
    (T, d_model) as the page draws them), its RoPE score to the next token after the page's shift (``rope`` as
    from ``rope_shift_check``; None: no RoPE question), and what shuffling does
    without positions. Returns three questions, or two without ``rope``."""
    me = quoted(labels[follow])
    # the followed token, unless it is the first: at p = 0 every sine is 0 whatever the settings
    asked = 1 if follow == 0 and encodings.shape[0] > 1 else follow
    value = float(encodings[asked, 0])
    found = [numeric(
        POSITIONS, "pe-d1", f"What is the sinusoidal encoding of {quoted(labels[asked])} in column d1 (the PE chart's "
        "first column)?", value,
        f"{quoted(labels[asked])} sits at position p = {asked} (counting from 0). Column d1 is 2i = 0, whose angle is "
        f"p / 10000⁰ = p radians: PE = sin({asked}) = {value:.3f}.",
        hint="Find this token's position p (the first token is at position zero) and work out the formula of the "
             "first column, whose i is zero, with the angle in radians; or hover over its cell in the PE chart.")]
    if rope is not None:
        j = (follow + 1) % encodings.shape[0]
        shifted, before = float(rope.shifted_scores[follow, j]), float(rope.scores[follow, j])
        found.append(numeric(
            POSITIONS, "rope-shift", f"In the RoPE grid with every position shifted by {rope.shift:g}, what is the "
            f"score ÷ √d_k from {me} to {quoted(labels[j])}?", shifted,
            f"It is {shifted:.3f}, the same as without the shift ({before:.3f}): a RoPE score depends on the positions "
            "only through how far apart the two tokens are, and a shift of every position does not change that.",
            hint="Find this cell in the right-hand grid; or think about what shifting every position does to the "
                 "distance between two tokens, and read the left-hand grid."))
    found.append(choice(
        POSITIONS, "shuffle", "With no position information and no mask, you shuffle the words of a sentence. "
        "What happens to attention's output?",
        ("Every row changes, because each word has new neighbours",
         "Only the rows of the words that moved change",
         "The same rows come out, only in the new order",
         "Nothing: the rows come out in the old order"), 2,
        "Each query is compared with every key wherever they stand, so shuffling the inputs only shuffles the "
        "outputs: Attn(PX) = P·Attn(X). “dog bites man” and “man bites dog” look alike, which is why positions "
        "must be added.",
        hint="Look at section 1's largest difference after reordering, and ask what in QKᵀ could tell which token "
             "came first."))
    return found


def cross_questions(weights: torch.Tensor, labels: list[str], source_labels: list[str], *, follow: int, head: int,
                    num_heads: int) -> list[Question]:
    """Cross-attention's questions on head ``head``'s weights (T, S) from the target's tokens (``labels``) to the
    source's (``source_labels``): how many there are, the largest weight of query ``follow``'s row, and where K and
    V come from. Returns three questions."""
    T, S = weights.shape
    me = quoted(labels[follow])
    largest, why_largest = largest_weight(weights[follow], source_labels, me)
    return [
        numeric(CROSS, "size", "How many cross-attention weights does one head compute for these two sentences?",
                T * S, f"One weight for each pair of a target query and a source key: T × S = {T} × {S} = {T * S}.",
                tolerance=0,
                hint="There is one weight per query–key pair: count the rows (target tokens) and the columns "
                     "(source tokens) of the cross-attention grid.",
                slips=((T * T, "that is the target's self-attention (T × T): the keys come from the source"),
                       (S * S, "that is the source's own self-attention (S × S): the queries come from the target"))),
        numeric(CROSS, "largest", f"What is the largest weight {me} gives to a source token"
                f"{_in_head(num_heads, head)}?", largest, why_largest,
                hint="Look at the bars of what this token reads from the source (or the numbers table under them) "
                     "and take the tallest."),
        choice(CROSS, "kv", "In cross-attention, where do the keys and the values come from?",
               ("From the target sentence, like the queries",
                "The keys from the source, the values from the target",
                "From the source, but only the best-matching token's key and value are used",
                "From the other sequence (the source); only the queries come from the target"), 3,
               "Q = X_target W_Q, while K = X_source W_K and V = X_source W_V: each target token builds its new "
               "vector from the source's values, and that is why the weights are T × S.",
               hint="Look at the formula at the top of the page: which X is each of Q, K and V made from?"),
    ]


def alibi_questions() -> list[Question]:
    """Order and position's ALiBi question: why a model with ALiBi reads texts longer than those it was trained on
    (the reason the method exists)."""
    return [choice(
        POSITIONS, "alibi-longer", "A model with ALiBi was trained on texts of up to 1,024 tokens. Why can it still "
        "read a text of 2,000 tokens, where one with learned position vectors (one per position) cannot?",
        ("ALiBi learns nothing per position: its penalty −m·|i − j| is worked out from the distance, at any distance",
         "ALiBi cuts every text into pieces of 1,024 tokens and reads them one by one",
         "ALiBi's slopes are learned during training and grow with the text",
         "It cannot: ALiBi stops at the longest text it was trained on, as learned vectors do"), 0,
        "Learned position vectors exist only for the positions seen in training, so position 1,500 has none. ALiBi "
        "learns nothing per position: −m·|i − j| can be worked out at any distance (the paper's models read texts "
        "longer than their training texts about as well). Being defined at any position is not all of it: "
        "sinusoidal and rotary encodings are too, yet their models read longer texts badly; the page credits "
        "ALiBi's steady pull toward nearby tokens for the rest.",
        hint="Ask what the model would need for position 1,500 in each case, and whether training had to produce it.")]
