"""Cached results hold tensors: TensorsAsArrays copies them through pickle as numpy arrays, unchanged."""

from __future__ import annotations

import pickle

import torch

from attention_core import LessonConfig, run_lesson
from attention_ui.pickling import TensorsAsArrays


def _copy(value):
    return pickle.loads(pickle.dumps(TensorsAsArrays(value))).value


def test_a_lesson_comes_back_equal_in_every_tensor_and_field():
    lesson = run_lesson(LessonConfig(mask="causal", num_heads=2))
    copy = _copy(lesson)
    assert copy.config == lesson.config and copy.tokens == lesson.tokens
    for stage in ("q", "k", "v", "scores", "scaled", "masked", "weights", "context", "concat", "output", "mask"):
        original, copied = getattr(lesson.trace, stage), getattr(copy.trace, stage)
        assert copied.dtype == original.dtype and copied.shape == original.shape, stage
        assert torch.equal(copied, original), stage
    assert torch.equal(copy.projections.w_q, lesson.projections.w_q)
    assert torch.isneginf(copy.trace.masked).any()  # −∞ survives


def test_a_copy_is_its_own_memory_and_shared_tensors_stay_shared():
    tensor = torch.arange(6.0).reshape(2, 3)
    broadcast = torch.ones((), dtype=torch.bool).expand(2, 3, 4)  # a view with zero strides
    first, again, view = _copy([tensor, tensor, broadcast])
    assert first is again  # one object before, one after
    first[0, 0] = 100.0
    assert tensor[0, 0] == 0.0  # the cached original is untouched
    assert view.shape == (2, 3, 4) and bool(view.all())


def test_the_copy_is_smaller_to_unpickle_than_torchs_own_format():
    lesson = run_lesson(LessonConfig())
    ours = pickle.dumps(TensorsAsArrays(lesson))
    assert b"torch._utils" not in ours and b"_rebuild_tensor" not in ours  # no torch storages inside
    assert len(ours) < len(pickle.dumps(lesson))
