"""Each lesson page's check-yourself questions, made from the page's own numbers where it has them.

A function per page returns a list of ``attention_ui.questions.Question`` (made with ``numeric`` and ``choice``,
their stage the page's url path); the page passes it to ``show_page_questions``.
"""

from ..text import plain

TIE_TOLERANCE = 0.0005
"""Weights this close count as tied: the charts print 3 decimals."""


def top_keys(row, labels: list[str]) -> tuple[float, str, int]:
    """The largest weight of ``row`` (S,), the keys that have it, quoted ("“1·Le” and “3·le”": a word that appears
    twice has one vector, so one key and one weight), and how many they are."""
    largest = float(row.max())
    tied = [j for j in range(len(labels)) if abs(float(row[j]) - largest) < TIE_TOLERANCE]
    return largest, " and ".join(f"“{plain(labels[j])}”" for j in tied), len(tied)
