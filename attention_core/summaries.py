"""Summaries of a real model's attention across heads and layers.

    mean_over_heads(attentions)        # (L, T, T)
    attention_rollout(attentions)      # (L, T, T): Abnar & Zuidema (2020), rows sum to 1
    head_stats(attentions, is_special) # per (layer, head): entropy, share to the previous/first/special tokens

``attentions`` is (L, h, T, T), the model's own softmax weights (rows sum to 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .errors import AttentionInputError

ROLE_THRESHOLD = 0.5
"""A head gets a role ("previous token", "sink") when on average at least this share of its weight goes there."""


def _check_attentions(attentions: torch.Tensor) -> None:
    if not isinstance(attentions, torch.Tensor) or attentions.dim() != 4:
        raise AttentionInputError("attentions must be a tensor (layers, heads, T, T).")
    if attentions.shape[-1] != attentions.shape[-2] or attentions.shape[-1] == 0:
        raise AttentionInputError(f"attentions must be square in its last two dims; got {tuple(attentions.shape)}.")


def mean_over_heads(attentions: torch.Tensor) -> torch.Tensor:
    """(L, h, T, T) -> (L, T, T): each layer's weights averaged over its heads (rows still sum to 1)."""
    _check_attentions(attentions)
    return attentions.mean(dim=1)


def attention_rollout(attentions: torch.Tensor, *, residual: bool = True) -> torch.Tensor:
    """Attention rollout (Abnar & Zuidema, 2020): how much each input token flows into each token.

    Per layer l: Â_l = normalise(0.5 · mean_heads(A_l) + 0.5 · I)  (the identity stands for the
    residual connection); rollout_l = Â_l · rollout_{l-1}, rollout_0 = I. Returns (L, T, T):
    [l, i, j] = share of input token j in token i's state after layer l + 1. Rows sum to 1.
    """
    mean = mean_over_heads(attentions)  # (L, T, T)
    eye = torch.eye(mean.shape[-1], dtype=mean.dtype, device=mean.device)
    rollout, layers = eye, []
    for layer in mean:
        mixed = 0.5 * layer + 0.5 * eye if residual else layer  # (T, T)
        mixed = mixed / mixed.sum(dim=-1, keepdim=True)  # rows sum to 1
        rollout = mixed @ rollout  # (T, T)
        layers.append(rollout)
    return torch.stack(layers)  # (L, T, T)


@dataclass(frozen=True)
class HeadStats:
    """Per (layer, head), each (L, h), averaged over query rows:

    entropy: bits of each row's distribution (0 = one key takes all; log2 T = uniform);
    previous: weight on the token just before (rows 2..T); first: weight on the first token (rows 2..T when the
    model is causal: the first row can only attend to itself, so it always gives weight 1 there);
    special: weight on special tokens ([CLS], [SEP], <|endoftext|>; 0 when there are none).
    """

    entropy: torch.Tensor
    previous: torch.Tensor
    first: torch.Tensor
    special: torch.Tensor


def head_stats(attentions: torch.Tensor, is_special: list[bool] | None = None, *, causal: bool = False) -> HeadStats:
    """The numbers that find "previous-token" heads and "sink" heads (see ``HeadStats``) from ``attentions``
    (L, h, T, T); ``causal``: the model's rows attend only to themselves and earlier tokens."""
    _check_attentions(attentions)
    T = attentions.shape[-1]
    entropy = -torch.special.xlogy(attentions, attentions).sum(-1) / math.log(2)  # (L, h, T)  bits per row
    previous = attentions.diagonal(offset=-1, dim1=-2, dim2=-1)  # (L, h, T-1)  weight of i on i-1
    previous = previous.mean(-1) if T > 1 else attentions.new_zeros(attentions.shape[:2])
    special = torch.zeros(attentions.shape[:2], dtype=attentions.dtype, device=attentions.device)
    if is_special is not None:
        if len(is_special) != T:
            raise AttentionInputError(f"is_special has {len(is_special)} entries for {T} tokens.")
        keys = torch.tensor(is_special, dtype=torch.bool, device=attentions.device)
        special = attentions[..., keys].sum(-1).mean(-1)  # (L, h)
    rows_with_a_choice = attentions[..., 1:, :] if causal and T > 1 else attentions  # (L, h, T or T-1, T)
    return HeadStats(entropy.mean(-1), previous, rows_with_a_choice[..., 0].mean(-1), special)


def head_roles(stats: HeadStats, threshold: float = ROLE_THRESHOLD) -> list[list[str]]:
    """A short name per (layer, head): "previous token", "first-token sink", "special-token sink", or ""."""
    roles = []
    for layer in range(stats.entropy.shape[0]):
        row = []
        for head in range(stats.entropy.shape[1]):
            names = []
            if stats.previous[layer, head] >= threshold:
                names.append("previous token")
            if stats.first[layer, head] >= threshold:
                names.append("first-token sink")
            elif stats.special[layer, head] >= threshold:
                names.append("special-token sink")
            row.append(", ".join(names))
        roles.append(row)
    return roles
