"""Cheap copies of cached results that hold tensors.

``st.cache_data`` gives every run its own copy of a cached value by unpickling it, and torch pickles each
tensor in its own serialisation format: unpickling a lesson (about 20 tensors) takes ~0.5 ms, most of a
sidebar's cached read. Wrapped in ``TensorsAsArrays``, the same value pickles its tensors as numpy arrays
and unpickles in ~0.04 ms, each tensor rebuilt on its device and dtype without a copy of its numbers.
"""

from __future__ import annotations

import io
import pickle
from typing import Generic, TypeVar

import numpy as np
import torch

T = TypeVar("T")


def _tensor(array: np.ndarray, device: str) -> torch.Tensor:
    tensor = torch.from_numpy(array)
    return tensor if device == "cpu" else tensor.to(device)


class _ArrayPickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, torch.Tensor):
            return _tensor, (obj.detach().cpu().resolve_conj().resolve_neg().numpy(), str(obj.device))
        return NotImplemented


def _unpickled(data: bytes) -> TensorsAsArrays:
    return TensorsAsArrays(pickle.loads(data))


class TensorsAsArrays(Generic[T]):
    """``value`` (any picklable object, tensors anywhere inside it), pickled with its tensors as numpy arrays.
    Tensors that were one object stay one object; views of one tensor become separate tensors."""

    def __init__(self, value: T):
        self.value = value

    def __reduce__(self):
        buffer = io.BytesIO()
        _ArrayPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(self.value)
        return _unpickled, (buffer.getvalue(),)
