"""The worked numbers are made once per distinct view and shared: what a page sends is what was made fresh."""

import pandas as pd
import pytest

from attention_core import LessonConfig, run_lesson
from attention_ui import frames, views, worked


@pytest.fixture(scope="module")
def lesson():
    return run_lesson(LessonConfig(sentence="a ** b $$ c d", num_heads=2, mask="causal"))


def _view(lesson, follow: int, head: int = 0) -> views.StageView:
    return views.lesson_view(lesson, frames.token_labels(lesson.tokens), follow, head, cell_size=34, font_size=13)


@pytest.mark.parametrize("key", [r.key for r in views.STAGE_RECORDS])
def test_the_sent_worked_numbers_are_the_ones_made_fresh(lesson, key):
    view, rec = _view(lesson, follow=2), views.record(key)
    fresh = rec.worked(view)
    shown = views._shown_worked(view, rec)
    assert shown.intro == fresh.intro and shown.latex == fresh.latex
    pd.testing.assert_frame_equal(shown.table.to_pandas(), views._literal_keys(fresh.table), check_dtype=False)
    if fresh.sums is None:
        assert shown.sums is None
    else:
        pd.testing.assert_frame_equal(shown.sums.to_pandas(), fresh.sums, check_dtype=False)


def test_the_same_view_is_made_once_and_another_token_or_head_is_made_again(lesson, monkeypatch):
    made = []
    original = worked.scores

    def counting(*args, **kwargs):
        made.append(args[2:4])  # (follow, head)
        return original(*args, **kwargs)

    monkeypatch.setattr(worked, "scores", counting)
    rec = views.record("scores")
    first = views._shown_worked(_view(lesson, follow=3, head=1), rec)
    again = views._shown_worked(_view(lesson, follow=3, head=1), rec)
    assert again is first and made == [(3, 1)]
    other_token = views._shown_worked(_view(lesson, follow=1, head=1), rec)
    other_head = views._shown_worked(_view(lesson, follow=3, head=0), rec)
    assert made == [(3, 1), (1, 1), (3, 0)]
    assert not other_token.table.equals(first.table) and not other_head.table.equals(first.table)


def test_another_lesson_with_the_same_shape_is_not_served_the_cached_numbers(lesson):
    rec = views.record("softmax")
    first = views._shown_worked(_view(lesson, follow=2), rec)
    reseeded = run_lesson(LessonConfig(sentence="a ** b $$ c d", num_heads=2, mask="causal", seed=7))
    second = views._shown_worked(_view(reseeded, follow=2), rec)
    assert not second.table.equals(first.table)
