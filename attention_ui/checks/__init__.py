"""Each lesson page's check-yourself questions, made from the page's own numbers where it has them.

A function per page returns a list of ``attention_ui.questions.Question`` (made with ``numeric`` and ``choice``,
their stage the page's url path); the page passes it to ``show_page_questions``.
"""

from ..text import quoted

TIE_TOLERANCE = 0.0005
"""Weights this close count as tied: the charts print 3 decimals."""


def largest_weight(row, labels: list[str], me: str) -> tuple[float, str]:
    """The largest weight of the row ``row`` (S,) of the query ``me`` (quoted) over keys ``labels``, and why, in words:
    every key that has it (a word that appears twice has one vector, so one key and one weight), or that every key
    is blocked."""
    largest = float(row.max())
    tied = [quoted(labels[j]) for j in range(len(labels)) if abs(float(row[j]) - largest) < TIE_TOLERANCE]
    if largest <= 0:
        return largest, f"Every key of the row of {me} is blocked by the mask, so all its weights are 0."
    if len(tied) > 1:
        return largest, (f"The row of {me} gives its largest weight, {largest:.3f}, to each of {' and '.join(tied)} "
                         "(often one word twice: both have the same vector, so the same key and the same weight).")
    return largest, f"The row of {me} gives its largest weight, {largest:.3f}, to {tied[0]}."
