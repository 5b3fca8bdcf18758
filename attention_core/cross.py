"""Cross-attention: queries from one sentence, keys and values from another.

In an encoder–decoder (e.g. translation) the decoder's tokens ask the questions (T queries) and the
encoded source sentence answers (S keys and values), so the weights are T × S, not square. Sources
of different lengths in one batch are padded; the padding keys are blocked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace, trace_attention
from .lesson import Lesson
from .limits import MAX_TOKENS
from .masks import padding_mask
from .tokens import PAD_TOKEN, embed_tokens, tokenize


@dataclass(frozen=True)
class CrossLesson:
    """The source side and the cross-attention trace: source_tokens (S,), x_kv (S, d_model),
    mask (T, S) or None (True = may attend), trace with weights (h, T, S)."""

    source_tokens: list[str]
    is_padding: list[bool]
    x_kv: torch.Tensor
    mask: torch.Tensor | None
    trace: AttentionTrace = field(repr=False)

    @property
    def row_sum_error(self) -> float:
        """max |Σ_j A_ij − 1| over every head and query row (each row must add up to 1)."""
        return (self.trace.weights.sum(dim=-1) - 1).abs().max().item()


def source_tokens(source: str, pad_to: int = 0) -> tuple[list[str], list[bool]]:
    """The source sentence's tokens, padded with ``[PAD]`` up to ``pad_to`` (0 = no padding)."""
    tokens = tokenize(source)
    if pad_to:
        if not 1 <= pad_to <= MAX_TOKENS:
            raise AttentionInputError(f"Pad the source to at most {MAX_TOKENS} tokens, not {pad_to}.")
        if pad_to < len(tokens):
            raise AttentionInputError(f"The source has {len(tokens)} tokens, more than the padded length {pad_to}: "
                             "pad to a longer length or shorten the source.")
    padding = max(pad_to - len(tokens), 0)
    return tokens + [PAD_TOKEN] * padding, [False] * len(tokens) + [True] * padding


def cross_attention(lesson: Lesson, source: str, *, pad_to: int = 0,
                    source_vectors: torch.Tensor | None = None) -> CrossLesson:
    """Attend from the lesson's tokens (queries, x (T, d_model)) to ``source`` (keys and values),
    with the lesson's own weights W_Q, W_K, W_V, W_O.

    The source is embedded like the lesson (seeded vectors, same seed) unless ``source_vectors``
    (S_real, d_model) gives its real word vectors; padding rows are zero and blocked.
    """
    tokens, is_padding = source_tokens(source, pad_to)
    real = is_padding.count(False)
    x = lesson.x  # (T, d_model)
    if source_vectors is None:
        x_kv = embed_tokens(tokens, x.shape[1], lesson.config.seed, dtype=x.dtype, device=x.device)  # (S, d_model)
    else:
        if tuple(source_vectors.shape) != (real, x.shape[1]):
            raise AttentionInputError(f"The source vectors have shape {tuple(source_vectors.shape)}; "
                             f"expected ({real}, {x.shape[1]}).")
        pads = torch.zeros(len(tokens) - real, x.shape[1], dtype=x.dtype, device=x.device)
        x_kv = torch.cat((source_vectors.to(dtype=x.dtype, device=x.device), pads))  # (S, d_model)
    mask = padding_mask(real, len(tokens), x.shape[0], device=x.device) if real < len(tokens) else None  # (T, S)
    trace = trace_attention(x, **lesson.projections.as_kwargs(), x_kv=x_kv, mask=mask)
    return CrossLesson(tokens, is_padding, x_kv, mask, trace)
