"""One call from the lesson's settings to every tensor the pages draw.

``run_lesson(LessonConfig(...))`` tokenizes, embeds, builds the projections and the mask,
and runs ``trace_attention``. Every invalid setting raises ``ValueError`` with a sentence
a learner can act on; the UI shows that sentence instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace, trace_attention
from .device import resolve_device
from .limits import MAX_D_K, MAX_D_MODEL, MAX_D_V, MAX_HEADS, MAX_SEED, MAX_TOKENS
from .masks import MASK_KINDS, causal_mask, custom_mask, padding_mask
from .tokens import PAD_TOKEN, embed_tokens, tokenize
from .weights import INIT_KINDS, Projections, identity_projections, random_projections


@dataclass(frozen=True)
class LessonConfig:
    """Everything that decides the lesson's numbers.

    mask: "none" | "causal" | "padding" | "custom".  For "padding" the sentence is padded
    with ``[PAD]`` up to ``pad_to`` tokens and the pad keys are blocked. For "custom",
    ``custom_mask`` is a T×S grid of bools (True = may attend); None allows every pair, and a
    grid of another size is refused (``AttentionInputError``).
    init: "random" (seeded) | "identity" (Q = K = V = X, so d_k = d_v = d_model / heads).
    embeddings: "seeded" (random vectors keyed by word) or the name of a real model whose word
    vectors are passed to ``run_lesson`` as ``x``; then d_model is that model's width.
    """

    sentence: str = "The cat sat on the mat."
    d_model: int = 8
    d_k: int = 4
    d_v: int = 4
    num_heads: int = 2
    mask: str = "none"
    pad_to: int = 0
    custom_mask: tuple[tuple[bool, ...], ...] | None = None
    init: str = "random"
    seed: int = 42
    device: str = "cpu"
    embeddings: str = "seeded"

    @property
    def seeded_embeddings(self) -> bool:
        return self.embeddings == "seeded"

    def effective_d_k(self) -> int:
        return self.d_model // self.num_heads if self.init == "identity" else self.d_k

    def effective_d_v(self) -> int:
        return self.d_model // self.num_heads if self.init == "identity" else self.d_v


@dataclass(frozen=True)
class Lesson:
    """The lesson's tensors: tokens (T,), x (T, d_model), the projections, the mask (T, S) and the trace."""

    config: LessonConfig
    tokens: list[str]
    is_padding: list[bool]
    x: torch.Tensor
    projections: Projections
    mask: torch.Tensor | None
    trace: AttentionTrace = field(repr=False)


def check_config(config: LessonConfig) -> None:
    """Raise ``ValueError`` naming the first setting that is out of range or inconsistent."""
    _check_range("d_model", config.d_model, 1, MAX_D_MODEL if config.seeded_embeddings else 2**16)
    _check_range("Number of heads", config.num_heads, 1, MAX_HEADS)
    _check_range("Seed", config.seed, 0, MAX_SEED)
    if config.init not in INIT_KINDS:
        raise AttentionInputError(f"Unknown projection init {config.init!r}: choose {' or '.join(INIT_KINDS)}.")
    if config.mask not in MASK_KINDS:
        raise AttentionInputError(f"Unknown mask {config.mask!r}: choose one of {', '.join(MASK_KINDS)}.")
    if config.init == "identity":
        if config.d_model % config.num_heads:
            raise AttentionInputError(
                f"Identity projections give each head d_model / heads features, but d_model = {config.d_model} "
                f"does not split evenly into {config.num_heads} heads. Pick a number of heads that divides "
                f"{config.d_model}, or use seeded random projections."
            )
    else:
        _check_range("d_k", config.d_k, 1, MAX_D_K)
        _check_range("d_v", config.d_v, 1, MAX_D_V)


def lesson_tokens(config: LessonConfig) -> tuple[list[str], list[bool]]:
    """The tokens (with ``[PAD]`` appended for the padding mask) and which of them are padding."""
    tokens = tokenize(config.sentence)
    if config.mask == "padding":
        if config.pad_to > MAX_TOKENS:
            raise AttentionInputError(f"Pad-to length {config.pad_to} is over the limit of {MAX_TOKENS} tokens.")
        extra = max(config.pad_to - len(tokens), 0)
        return tokens + [PAD_TOKEN] * extra, [False] * len(tokens) + [True] * extra
    return tokens, [False] * len(tokens)


def build_mask(config: LessonConfig, is_padding: list[bool], device=None) -> torch.Tensor | None:
    """The (T, T) bool mask for the chosen kind, or None for "none"."""
    T = len(is_padding)
    if config.mask == "causal":
        return causal_mask(T, device=device)
    if config.mask == "padding":
        return padding_mask(is_padding.count(False), T, device=device)
    if config.mask == "custom":
        if config.custom_mask is None:
            return torch.ones(T, T, dtype=torch.bool, device=device)
        return custom_mask(config.custom_mask, T, T, device=device)
    return None


def run_lesson(config: LessonConfig, x: torch.Tensor | None = None) -> Lesson:
    """Tokenize, embed, project and attend. ``x`` (T, d_model) replaces the seeded embeddings
    (e.g. a real model's word vectors); then ``config.d_model`` must equal ``x.shape[1]``."""
    check_config(config)
    device = resolve_device(config.device)
    tokens, is_padding = lesson_tokens(config)
    if x is None:
        if not config.seeded_embeddings:
            raise AttentionInputError(f"Embeddings from {config.embeddings!r} need the model's word vectors as x.")
        x = embed_tokens(tokens, config.d_model, config.seed, device=device)  # (T, d_model)
    elif tuple(x.shape) != (len(tokens), config.d_model):
        raise AttentionInputError(f"Given embeddings have shape {tuple(x.shape)}; "
                                  f"expected ({len(tokens)}, {config.d_model}).")
    x = x.to(device)
    if config.init == "identity":
        projections = identity_projections(config.d_model, config.num_heads, dtype=x.dtype, device=device)
    else:
        projections = random_projections(config.d_model, config.d_k, config.d_v, config.num_heads,
                                         config.seed, dtype=x.dtype, device=device)
    mask = build_mask(config, is_padding, device=device)
    trace = trace_attention(x, **projections.as_kwargs(), mask=mask)
    return Lesson(config, tokens, is_padding, x, projections, mask, trace)


def _check_range(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AttentionInputError(f"{name} must be a whole number, got {value!r}.")
    if not low <= value <= high:
        raise AttentionInputError(f"{name} must be between {low} and {high}, got {value}.")
