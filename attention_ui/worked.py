"""The worked numbers of every stage for the followed query token, as tables a person can check by hand.

Every sum is written out term by term: in a table of many long sums (d_model, d_k or the sentence past
LONG_SUM), the first WHOLE_ROWS rows are written whole and later rows shortened. Operands are shown with
``DIGITS`` decimals and each result with the same, so the shown terms add up to the shown result up to the
rounding of what is shown (at most half a unit in the last place per term). Tokens, features and heads are
counted from 1, as on the charts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch

from attention_core import AttentionTrace, Projections, linear_terms, row_arithmetic

from .frames import MINUS
from .text import numbered

DIGITS = 4
MAX_TERMS = 64
"""Sums of up to this many products are written out whole (every toy lesson's); a longer sum (a real model's)
shows its first SHORT_TERMS products and one more term holding the sum of the rest."""
SHORT_TERMS = 8

LONG_SUM = 16
WHOLE_ROWS = 2
"""In a table of sums of more than LONG_SUM products (d_k = 64: 64 rows of 64 products, tens of thousands of
pixels tall), only the first WHOLE_ROWS rows are written whole; later rows show their first SHORT_TERMS products
and the rest as one term. Vectors in such rows list their first LONG_SUM numbers."""

MAX_ROWS = 32
"""Longest list of a vector's numbers in a worked table (a real model's X row has hundreds)."""
KEEP_TOGETHER = "\u2060"
"""A word joiner between the two factors of a product: a browser may break a line between ")" and "(", which
left a lone factor at the start of a line in a long sum."""


@dataclass(frozen=True)
class Worked:
    """The followed token's numbers at one stage: a sentence, an optional formula with the numbers filled
    in, and a table with one row per term group (a key, a feature or a head)."""

    intro: str
    table: pd.DataFrame
    latex: str | None = None
    sums: pd.DataFrame | None = None  # a second table when the rows of the first are not the result's terms


def number(value: float, digits: int = DIGITS) -> str:
    """A number as the tables show it: fixed decimals, a true minus sign, −∞ for a blocked score."""
    value = float(value)
    if value == float("-inf"):
        return f"{MINUS}∞"
    text = f"{value:.{digits}f}"
    if text[0] == "-" and not text.strip("-0."):  # "-0.000": a negative number that rounds to zero
        text = text[1:]
    return text.replace("-", MINUS)


def small_number(value: float, figures: int = DIGITS) -> str:
    """``number``, but a value under 0.01 (not zero) with ``figures`` significant digits: a softmax row's small
    e^(s − max) and weights shown as 0.0020 and 0.0019 did not divide by the shown Σe (0.0020 ÷ 1.0141 is 0.0020);
    0.001967 and 0.001940 do. One that would need more than 8 decimals (under 10⁻⁵) in scientific notation."""
    value = float(value)
    if value == 0 or not math.isfinite(value) or abs(value) >= 0.01:
        return number(value)
    decimals = figures - 1 - math.floor(math.log10(abs(value)))
    if decimals > 8:
        return f"{value:.{figures - 1}e}".replace("-", MINUS)
    return number(value, decimals)


def product_sum(left, right, *, longest: int = MAX_TERMS) -> str:
    """'(a₁)(b₁) + (a₂)(b₂) + …' for two equal-length 1-D tensors; past ``longest`` products, the first
    SHORT_TERMS products and the rest as one term."""
    shown = len(left) if len(left) <= longest else SHORT_TERMS
    pairs = [f"({number(a)}){KEEP_TOGETHER}({number(b)})"
             for a, b in zip(left[:shown].tolist(), right[:shown].tolist())]
    if len(left) > shown:
        rest = float((left[shown:] * right[shown:]).sum())
        pairs.append(f"[the other {len(left) - shown} products: {number(rest)}]")
    return " + ".join(pairs)


def longest_in_row(row: int) -> int:
    """How many products row ``row`` (from 0) of a worked table writes out whole (see WHOLE_ROWS)."""
    return MAX_TERMS if row < WHOLE_ROWS else LONG_SUM


SHORTENED = (f"Rows after the first {WHOLE_ROWS} are shortened: a sum of more than {LONG_SUM} products shows its "
             f"first {SHORT_TERMS} and one term for the rest, a vector its first {LONG_SUM} numbers.")
"""Said under a worked table whose later rows are shortened."""


def vector(values, limit: int = 16) -> str:
    shown = ", ".join(number(v) for v in values[:limit].tolist())
    return f"({shown}{', …' if len(values) > limit else ''})"


def embed(x: torch.Tensor, labels: list[str], follow: int, seeded: bool) -> Worked:
    """Stage 1: the followed token's row of X."""
    row = x[follow]
    intro = f"Token {labels[follow]} is row {follow + 1} of X: {row.shape[0]} numbers."
    if seeded:
        intro += (" They are drawn by a generator seeded with the seed and the lower-cased word, so the same "
                  "word always gets the same vector (“The” and “the” too) — no learning is involved.")
    shown = row[:MAX_ROWS]
    if row.shape[0] > MAX_ROWS:
        intro += f" The first {MAX_ROWS} are in the table below; all {row.shape[0]} are in “All the numbers”."
    table = pd.DataFrame({"feature": [f"x{d}" for d in range(1, shown.shape[0] + 1)],
                          "value": [number(v) for v in shown.tolist()]})
    return Worked(intro, table)


def projection(x: torch.Tensor, projections: Projections, labels: list[str], follow: int, head: int,
               d_k: int) -> Worked:
    """Stage 2: q_i = x_i W_Q (+ b_Q), this head's columns, every product written out."""
    columns = slice(head * d_k, (head + 1) * d_k)
    b = None if projections.b_q is None else projections.b_q[columns]
    terms = linear_terms(x[follow], projections.w_q[:, columns], b)
    rows = []
    for c in range(terms.result.shape[0]):
        text = product_sum(x[follow], projections.w_q[:, head * d_k + c], longest=longest_in_row(c))
        if b is not None:
            text += f" + bias b{c + 1} ({number(b[c])})"
        rows.append({"feature of q": f"q{c + 1}", "x · column of W_Q (x_m · W_Q[m, c])": text,
                     "= q": number(terms.result[c])})
    intro = (f"q for {labels[follow]} is its row x times W_Q's {numbered(head * d_k + 1, (head + 1) * d_k, 'column')} "
             "(this head's slice): each feature of q is a sum over x's features. k and v are made the same way "
             "with W_K and W_V." + _shortening(len(rows), x.shape[1]))
    return Worked(intro, pd.DataFrame(rows), r"q_c = \sum_{m=1}^{d_{model}} x_m\, W_Q[m, c]"
                  + (r" + b_c" if b is not None else ""))


def scores(trace: AttentionTrace, keys: list[str], follow: int, head: int) -> Worked:
    """Stage 3: q · k_j for every key, all d_k products."""
    r = row_arithmetic(trace, head, follow)
    table = pd.DataFrame({"key": keys,
                          "q · k = Σ q_m k_m": [product_sum(r.q, r.k[j], longest=longest_in_row(j))
                                                for j in range(len(keys))],
                          "= score": [number(s) for s in r.scores.tolist()]})
    return Worked(f"Each score is a dot product of d_k = {trace.d_k} pairs.{_shortening(len(keys), trace.d_k)}", table,
                  rf"q \cdot k_j = \sum_{{m=1}}^{{{trace.d_k}}} q_m\,k_{{j,m}}")


def scaled(trace: AttentionTrace, keys: list[str], follow: int, head: int) -> Worked:
    """Stage 4: score ÷ √d_k."""
    r = row_arithmetic(trace, head, follow)
    table = pd.DataFrame({"key": keys, "score": [number(s) for s in r.scores.tolist()],
                          f"÷ √{trace.d_k}": [number(r.sqrt_d_k)] * len(keys),
                          "= scaled": [number(s) for s in r.scaled.tolist()]})
    return Worked(f"Every score is divided by √d_k = √{trace.d_k} = {number(r.sqrt_d_k)}.", table)


def masked(trace: AttentionTrace, keys: list[str], follow: int, head: int) -> Worked:
    """Stage 5: blocked keys become −∞."""
    r = row_arithmetic(trace, head, follow)
    allowed = r.allowed.tolist()
    table = pd.DataFrame({"key": keys, "scaled": [number(s) for s in r.scaled.tolist()],
                          "may attend?": ["yes" if a else "no → −∞" for a in allowed],
                          "= masked": [number(s) if a else number(float("-inf")) for s, a in
                                       zip(r.scaled.tolist(), allowed)]})
    blocked = allowed.count(False)
    verb = "is" if blocked == 1 else "are"
    return Worked(f"{blocked} of {len(keys)} keys {verb} blocked for this token." if blocked else
                  "No key is blocked for this token: the scores pass through unchanged.", table)


def softmax(trace: AttentionTrace, keys: list[str], follow: int, head: int) -> Worked:
    """Stage 6: e^(s − max), their sum, and each weight."""
    r = row_arithmetic(trace, head, follow)
    allowed = r.allowed.tolist()
    peak = float(r.scaled[r.allowed].max()) if any(allowed) else float("nan")
    table = pd.DataFrame({
        "key": keys,
        "scaled s": [number(s) if a else number(float("-inf")) for s, a in zip(r.scaled.tolist(), allowed)],
        "s − max": [number(s) for s in r.shifted.tolist()],
        "e^(s − max)": [small_number(e) for e in r.exps.tolist()],
        "= weight (e ÷ Σe)": [small_number(w) for w in r.weights.tolist()],
    })
    if r.total == 0:
        table["s − max"] = table["e^(s − max)"] = "undefined"  # −∞ − (−∞): the row has no largest score
        return Worked("Every key is blocked for this token, so softmax would divide 0 by 0 (PyTorch's softmax gives "
                      "NaN here, “not a number”). This app's convention: such a row gets all-zero weights, so the "
                      "token takes in nothing and its context vector is zero.", table)
    intro = (f"The row's largest scaled score is {number(peak)}; subtracting it before e^(·) leaves the weights "
             "unchanged (it cancels in the fraction) and keeps e^(·) from overflowing.")
    return Worked(intro, table, rf"\Sigma e = {number(r.total)},\qquad a_j = e^{{s_j - \max}} \div {number(r.total)}"
                  rf",\qquad \Sigma_j a_j = {number(float(r.weights.sum()))}")


def context(trace: AttentionTrace, keys: list[str], follow: int, head: int) -> Worked:
    """Stage 7: c = Σ_j a_j v_j, with every v_j shown."""
    r = row_arithmetic(trace, head, follow)
    d_v = r.v.shape[1]
    table = pd.DataFrame({"key": keys, "weight a_j": [number(w) for w in r.weights.tolist()],
                          "v_j": [vector(r.v[j], longest_in_row(j)) for j in range(len(keys))],
                          "a_j · v_j": [vector(r.weighted_values[j], longest_in_row(j)) for j in range(len(keys))]})
    sums = pd.DataFrame({"feature of c": [f"c{c + 1}" for c in range(d_v)],
                         "Σ_j a_j v_j,c": [product_sum(r.weights, r.v[:, c], longest=longest_in_row(c))
                                           for c in range(d_v)],
                         "= c": [number(v) for v in r.context.tolist()]})
    shortened = _shortening(len(keys), d_v) or _shortening(d_v, len(keys))
    return Worked("The context vector is the weighted sum of the value vectors: each key's value vector is "
                  "scaled by its weight (first table), then each feature of c adds those up over the keys (second "
                  "table)." + shortened, table, r"c = \sum_j a_j\, v_j = " + vector(r.context, d_v).replace("−", "-"),
                  sums)


def concat(trace: AttentionTrace, labels: list[str], follow: int) -> Worked:
    """Stage 8: the heads' context rows side by side."""
    d_v = trace.d_v
    rows = [{"head": f"head {h + 1}", "columns": f"{h * d_v + 1}–{(h + 1) * d_v}",
             "context of this head": vector(trace.context[h, follow], d_v)} for h in range(trace.num_heads)]
    rows.append({"head": "concat", "columns": f"1–{trace.num_heads * d_v}",
                 "context of this head": vector(trace.concat[follow], trace.num_heads * d_v)})
    return Worked(f"The row of {labels[follow]}: each head's context vector, placed one after the other.",
                  pd.DataFrame(rows))


def output(trace: AttentionTrace, projections: Projections | None, labels: list[str], follow: int) -> Worked:
    """Stage 9: o_c = Σ_m concat_m W_O[m, c] (+ b_O)."""
    if projections is None or projections.w_o is None:
        return Worked("There is no W_O here, so the output row equals the concatenated row.",
                      pd.DataFrame({"feature": [f"o{c + 1}" for c in range(trace.output.shape[1])],
                                    "= output": [number(v) for v in trace.output[follow].tolist()]}))
    row, w_o, b = trace.concat[follow], projections.w_o, projections.b_o
    terms = linear_terms(row, w_o, b)
    rows = []
    for c in range(terms.result.shape[0]):
        text = product_sum(row, w_o[:, c], longest=longest_in_row(c))
        if b is not None:
            text += f" + bias b{c + 1} ({number(b[c])})"
        rows.append({"feature of the output": f"o{c + 1}", "concat · column of W_O": text,
                     "= output": number(terms.result[c])})
    return Worked(f"The output row of {labels[follow]} is its concatenated row times W_O: every head's numbers "
                  f"mix into every output feature.{_shortening(len(rows), row.shape[0])}", pd.DataFrame(rows),
                  r"o_c = \sum_{m=1}^{h\,d_v} \mathrm{concat}_m\, W_O[m, c]" + (r" + b_c" if b is not None else ""))


def _shortening(rows: int, terms: int) -> str:
    """What to say (with a leading space) about a table of ``rows`` sums (or vectors) of ``terms`` numbers each
    that ``longest_in_row`` shortens; "" when every row is whole."""
    if terms > MAX_TERMS:  # a real model's width: every row is shortened
        return f" Each sum of {terms} products shows its first {SHORT_TERMS} and one term for the rest."
    return f" {SHORTENED}" if rows > WHOLE_ROWS and terms > LONG_SUM else ""
