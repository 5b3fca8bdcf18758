"""Summaries of a real model's attention across heads and layers.

    mean_over_heads(attentions)        # (L, T, T)
    attention_rollout(attentions)      # (L, T, T): Abnar & Zuidema (2020), rows sum to 1
    head_stats(attentions, is_special) # per (layer, head): entropy, share to the previous/first/special tokens
    value_norms(v, w_o)                # (h, S): ‖v_j W_O^h‖, how long what key j can add is
    value_contributions(weights, norms)   # (h, T, S): α_ij ‖v_j W_O^h‖ and each row's shares of it
    sink_shares(attentions, norms, sinks) # per layer: weight on the sinks against their share of what is added

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


def value_norms(v: torch.Tensor, w_o: torch.Tensor | None = None) -> torch.Tensor:
    """‖f(x_j)‖ per head and key, f(x_j) = v_j W_O^h: the vector key j hands on through head h (Kobayashi et al.,
    2020). ``v`` (h, S, d_v), biases included; ``w_o`` (h·d_v, d_out), head h owning rows [h·d_v, (h+1)·d_v), or
    None for v_j itself. Returns (h, S)."""
    if not isinstance(v, torch.Tensor) or v.dim() != 3:
        raise AttentionInputError("v must be a tensor (heads, S, d_v).")
    h, _, d_v = v.shape
    if w_o is not None:
        if w_o.dim() != 2 or w_o.shape[0] != h * d_v:
            raise AttentionInputError(f"w_o must have {h} × {d_v} = {h * d_v} rows; got {tuple(w_o.shape)}.")
        v = v @ w_o.reshape(h, d_v, -1)  # (h, S, d_out): f(x_j) = v_j W_O^h
    return torch.linalg.vector_norm(v, dim=-1)  # (h, S)


@dataclass(frozen=True)
class ValueContributions:
    """What each key adds to each query's output, per head (Kobayashi et al., 2020):

    added (..., T, S): α_ij ‖f(x_j)‖, the length of α_ij f(x_j) (weights are never negative);
    share (..., T, S): added over its row's sum, the share of what the head adds to query i that comes from key j
    (0 in a row that adds nothing: all its weight on keys with zero vectors, or every key blocked).
    """

    added: torch.Tensor
    share: torch.Tensor


def value_contributions(weights: torch.Tensor, norms: torch.Tensor) -> ValueContributions:
    """``weights`` (..., T, S), rows of softmax weights; ``norms`` (..., S), ``value_norms`` of the same heads."""
    if weights.shape[:-2] + weights.shape[-1:] != norms.shape:
        raise AttentionInputError(f"norms {tuple(norms.shape)} do not match weights {tuple(weights.shape)}.")
    added = weights * norms.unsqueeze(-2)  # (..., T, S): α_ij ‖f(x_j)‖
    total = added.sum(dim=-1, keepdim=True)  # (..., T, 1)
    share = torch.where(total > 0, added / total.clamp_min(torch.finfo(added.dtype).tiny), torch.zeros_like(added))
    return ValueContributions(added, share)


def _on_sinks(attentions: torch.Tensor, norms: torch.Tensor, sinks: list[bool]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row: the weight on the ``sinks`` keys and their share of what is added, each (..., T)."""
    T = attentions.shape[-1]
    if len(sinks) != T:
        raise AttentionInputError(f"sinks has {len(sinks)} entries for {T} tokens.")
    keys = torch.tensor(sinks, dtype=torch.bool, device=attentions.device)
    share = value_contributions(attentions, norms).share  # (..., T, T)
    return attentions[..., keys].sum(-1), share[..., keys].sum(-1)  # (..., T) each


def sink_shares(attentions: torch.Tensor, norms: torch.Tensor, sinks: list[bool], *,
                causal: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Per layer, averaged over heads and query rows: the weight given to the ``sinks`` keys (T,) and the share of
    what the heads add that comes from them. ``attentions`` (L, h, T, T), ``norms`` (L, h, T) (``value_norms`` per
    layer); ``causal``: the first row, which can only look at itself, is left out. Returns two (L,) tensors."""
    _check_attentions(attentions)
    weight_on, added_by = _on_sinks(attentions, norms, sinks)  # (L, h, T) each
    rows = slice(1, None) if causal and attentions.shape[-1] > 1 else slice(None)
    return weight_on[..., rows].mean(dim=(-2, -1)), added_by[..., rows].mean(dim=(-2, -1))


def sink_shares_of(attentions: torch.Tensor, norms: torch.Tensor, sinks: list[bool],
                   query: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The same for one query token, in every head: the weight it gives the ``sinks`` and their share of what each
    head adds to it. Returns two (L, h) tensors."""
    _check_attentions(attentions)
    if not 0 <= query < attentions.shape[-1]:
        raise AttentionInputError(f"query {query} is not a token of {attentions.shape[-1]}.")
    weight_on, added_by = _on_sinks(attentions[..., query:query + 1, :], norms, sinks)  # (L, h, 1) each
    return weight_on[..., 0], added_by[..., 0]
