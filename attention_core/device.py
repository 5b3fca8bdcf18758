"""Pick the torch device: ``"auto" | "cpu" | "cuda" | "mps"``."""

from __future__ import annotations

import torch

from .errors import AttentionInputError

DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def available_devices() -> list[str]:
    """Device names that exist on this machine, ``"auto"`` first, e.g. ``["auto", "cpu"]``."""
    names = ["auto", "cpu"]
    if torch.cuda.is_available():
        names.append("cuda")
    if _mps_available():
        names.append("mps")
    return names


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """Turn a device name into a ``torch.device``; ``"auto"`` picks cuda, then mps, then cpu.

    Raises ``ValueError`` for an unknown name or one that does not exist here.
    """
    if isinstance(name, torch.device):
        return name
    if name not in DEVICE_CHOICES:
        raise AttentionInputError(f"Unknown device {name!r}: choose one of {', '.join(DEVICE_CHOICES)}.")
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name not in available_devices():
        raise AttentionInputError(
            f"Device {name!r} is not available on this machine; available: "
            f"{', '.join(available_devices())}."
        )
    return torch.device(name)
