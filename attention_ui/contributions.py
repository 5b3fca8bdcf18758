"""Real model's section "a weight is not what a token adds": a head's weights beside the share of what it adds, by
length (Kobayashi et al., 2020), and how much of what the attention adds comes from the tokens where heads park their
weight ([CLS] and [SEP], or GPT-2's first token)."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from attention_core import sink_shares, sink_shares_of, value_contributions

from . import charts, frames
from .models import cached_value_norms
from .render import cached_spec
from .text import plain
from .views import BARS_FRAME_PX, PAGE_WIDTH_PX, PRESENTER_COLUMN_PX, show_chart, slide_bar_px

WEIGHT_PANEL, SHARE_PANEL = "weight α (what the maps show)", "share of what the head adds (by length)"
"""The two panels of the followed token's bars."""
LITTLE_SINK_WEIGHT = 0.2
"""A head that gives the sinks less of the followed token's weight has too little there to compare: the section shows
the head where that weight most overstates what they add (and offers to pick it above)."""
GAP_WORTH_A_LOOK = 0.005
"""The button to the head where the weight most overstates what the sinks add shows only where some head does."""
PICKED_HERE_KEY = "sink_head_picked_here"
"""Session key: the (layer, head) the section's button just picked above, which the section then says once (the maps
it changed are 4000 px up the page, and the button went with nothing on the screen to show for it)."""
UNDERRATED_GAP = 0.05
"""A token whose share of what is added passes its weight by more than this is named beside the sinks."""
MIN_PAIRED_BAR_PX = 14
"""The narrowest bar of the section's charts."""
SIDE_BY_SIDE_BAR_PX = 32
"""The two panels stand side by side while their bars are this wide: wide enough for each value, "0.904", to stand
level over its bar. Narrower bars turn their numbers upright, hard to read across a room: the panels then stand one
above the other, each as wide as the page (to 21 tokens still this wide), the same token under the same token."""


ADDED_COLUMN = "share of the lengths added"


def underrated_words(token: str, weight: float, share: float, *, keys: int) -> str:
    """The sentence on the token that adds most beyond its weight (``share`` of what is added against ``weight``),
    "" when that gap is under UNDERRATED_GAP. "Only" where its weight is under an even share of the ``keys`` the
    row may see: the token adding most beyond its weight may be the one with the most weight (0.588 was called
    "only" beside the row's next largest, 0.234)."""
    if share - weight <= UNDERRATED_GAP:
        return ""
    if weight < 1 / keys:
        return (f" The other way round: {token} has only {weight:.3f} of the weight but makes up {share:.3f} of what "
                "is added.")
    return f" And {token} makes up more of what is added than its weight gives it: {share:.3f} against {weight:.3f}."


def sink_tokens(pieces: list[str], tokenizer) -> tuple[list[bool], str]:
    """Which tokens are the model's resting places, and their name: [CLS] and [SEP], the marker tokens a BERT-style
    tokenizer adds (not its other special pieces: [UNK] stands for a word, and a typed [MASK] is read as one), or the
    first token where there are none (GPT-2)."""
    markers = {getattr(tokenizer, "cls_token", None), getattr(tokenizer, "sep_token", None)} - {None}
    found = [piece in markers for piece in pieces]
    if any(found):
        return found, "[CLS] and [SEP]"
    return [i == 0 for i in range(len(pieces))], "the first token"


def head_name(layer: int, head: int) -> str:
    """A head as the section names it (0-based in): "head 3 of layer 5" (", head " names the close-up's title alone)."""
    return f"head {head + 1} of layer {layer + 1}"


def paired_bar_px(T: int, settings) -> tuple[int, bool]:
    """The followed token's bars: two panels side by side, each in half the column, or one above the other where
    their bars would be thinner than SIDE_BY_SIDE_BAR_PX. Returns the bar width and whether they stand side by side."""
    if settings.presenter:  # (a slide's bars span it, as its maps do)
        half, whole = slide_bar_px(T, PRESENTER_COLUMN_PX // 2), slide_bar_px(T)
    else:
        half = min(settings.cell_size, (PAGE_WIDTH_PX // 2 - BARS_FRAME_PX) // T)
        whole = min(settings.cell_size, (PAGE_WIDTH_PX - BARS_FRAME_PX) // T)
    return (half, True) if half >= SIDE_BY_SIDE_BAR_PX else (max(MIN_PAIRED_BAR_PX, whole), False)


def layer_table(weight: torch.Tensor, added: torch.Tensor, sinks: str) -> pd.DataFrame:
    """Per layer: the weight the heads give the sinks and the share of what they add that comes from them."""
    return pd.DataFrame({"layer": range(1, len(weight) + 1), f"weight on {sinks}": weight.numpy().round(2),
                         ADDED_COLUMN: added.numpy().round(2)}).astype({"layer": int})


def show_value_contributions(pick, settings, *, sentence: str, section: int) -> None:
    """Section ``section`` of the Real model page for the picked model, ``sentence``, layer, head and token."""
    run, model = pick.run, pick.model
    norms = torch.from_numpy(cached_value_norms(pick.name, sentence))  # (L, h, T)
    sinks, sink_words = sink_tokens(run.pieces, model.tokenizer)
    many = sum(sinks) > 1  # ([CLS] and [SEP], or one first token)

    st.subheader(f"{section} · A weight is not what a token adds")
    st.markdown(
        "The maps above show weights: how much of each token's vector a token takes. What it gets is the weight "
        "times that vector, as the head hands it on: the token's value v, through the head's part of the output "
        "projection W_O. A large weight on a short vector adds little, and a small weight on a long one can add "
        "much. Kobayashi et al. (2020) found that in BERT the large weight on [CLS] and [SEP] adds much less than it "
        "seems, because those tokens' vectors are short: a head with nothing to find parks its weight where it "
        "changes little (a “no-op”, as Clark et al., 2019, call it). "
        + ("The numbers below test this in this model." if many else
           "The numbers below test whether the same holds for GPT-2's first token."))
    st.latex(r"\text{added}_{ij} = \alpha_{ij}\,\lVert v^{(h)}_j W_O^{(h)} \rVert,\qquad "
             r"\text{share}_{ij} = \frac{\text{added}_{ij}}{\sum_{j'} \text{added}_{ij'}}")
    if model.causal and run.num_tokens == 1:
        st.info("One token can only look at itself: all its weight and all that is added are its own. Type a longer "
                "sentence to compare the two.")
        return
    # Every token, [CLS] and [SEP] too, whatever "Hide special tokens" says: they are what this section is about
    labels = frames.token_labels(run.tokens)
    T = len(labels)
    follow = pick.shown_follow
    layer, head = pick.layer, pick.head

    def pick_button(label: str, to: tuple[int, int]) -> None:  # the page's layer and head pickers go to ``to``
        st.button(label, key="strongest_sink", icon=":material/arrow_upward:", on_click=st.session_state.update,
                  args=({"layer": to[0] + 1, "model_head": to[1] + 1, PICKED_HERE_KEY: to},))

    if pick.hide_special:
        st.caption(f"This section shows {sink_words} although special tokens are hidden above: they are its subject.")
    if T > 1 and not all(sinks) and not (model.causal and follow == 0):
        me = labels[follow]
        parked, added = sink_shares_of(run.attentions, norms, sinks, follow)  # (L, h) each
        gap = parked - added  # how much the weight on the sinks overstates what they add, per head
        best = divmod(int(gap.argmax()), model.num_heads) if float(gap.max()) > GAP_WORTH_A_LOOK else None
        if float(parked[layer, head]) < LITTLE_SINK_WEIGHT and best is not None:
            # the page's head hardly uses the sinks for this token (a first visit opens on a previous-token head):
            # this section looks at the head where the weight on them most overstates what they add
            little = float(parked[layer, head])
            st.caption(f"The head picked above, {head_name(layer, head)}, gives {sink_words} "
                       + (f"almost none of {plain(me)}'s weight (under 0.01)" if little < 0.005 else
                          f"only {little:.2f} of {plain(me)}'s weight")
                       + f": too little to compare. This section shows {head_name(*best)}, where that weight most "
                       f"overstates what {'they add' if many else 'it adds'}.")
            pick_button(f"Show {head_name(*best)} in the maps above too", best)
            layer, head = best
        elif st.session_state.pop(PICKED_HERE_KEY, None) == (layer, head):  # the button's click: said where it is
            st.caption(f"{head_name(layer, head).capitalize()} is the head picked above now: the grid of heads and the "
                       "close-up at the top of the page show it too.")
        where = head_name(layer, head)
        row = run.attentions[layer, head, follow]  # (T,): the followed token's weights
        share = value_contributions(row.unsqueeze(0), norms[layer, head]).share[0]  # (T,)
        cell, side_by_side = paired_bar_px(T, settings)

        def paired_rows():
            parts = [frames.row_frame(values, labels).assign(head=panel, head_index=i)
                     for i, (panel, values) in enumerate(((WEIGHT_PANEL, row), (SHARE_PANEL, share)))]
            return pd.concat(parts, ignore_index=True)

        show_chart(cached_spec(charts.row_bars_by_head, paired_rows(), columns=2 if side_by_side else 1,
                               font_size=settings.font_size, cell_size=cell, value_title="weight, share",
                               title=f"{where}: what {me} takes, and what it gets"))
        sink_lengths = " and ".join(f"{float(norms[layer, head, i]):.1f} for {plain(labels[i])}"
                                    for i in range(T) if sinks[i])
        seen = [i for i in range(follow + 1 if model.causal else T) if not sinks[i]]  # (causal: those before it)
        words_seen = [float(norms[layer, head, i]) for i in seen]
        underrated = max(seen, key=lambda i: float(share[i] - row[i]))  # the token adding most beyond its weight
        st.success(f"In {where}, {plain(me)} gives {sink_words} {float(parked[layer, head]):.2f} of its weight, and "
                   f"{'they make' if many else 'it makes'} up {float(added[layer, head]):.2f} of what the head adds "
                   f"to it. In this head (the chart below) the length of v W_O is {sink_lengths}, and "
                   f"{sum(words_seen) / len(words_seen):.1f} on average for the other tokens"
                   + (" (those it may see)." if model.causal else ".")
                   + underrated_words(plain(labels[underrated]), float(row[underrated]), float(share[underrated]),
                                      keys=follow + 1 if model.causal else T))
        if best is not None and best != (layer, head):
            pick_button(f"Look at {head_name(*best)}, where {plain(me)}'s weight most overstates what "
                        f"{sink_words} {'add' if many else 'adds'}: {float(parked[best]):.2f} of its weight, "
                        f"{float(added[best]):.2f} of what is added", best)
    lengths = frames.row_frame(norms[layer, head], labels)
    bar = slide_bar_px(T) if settings.presenter else max(MIN_PAIRED_BAR_PX, min(
        max(settings.cell_size, 26), (PAGE_WIDTH_PX - BARS_FRAME_PX) // max(T, 1)))
    show_chart(cached_spec(charts.row_bars, lengths, title=f"‖v W_O‖, each token's length in {head_name(layer, head)}",
                           domain=(0, 1.15 * float(norms[layer, head].max()) or 1.0), value_title="‖v W_O‖",
                           cell_size=bar, font_size=settings.font_size))
    weight, added = sink_shares(run.attentions, norms, sinks, causal=model.causal)
    table = layer_table(weight, added, sink_words)
    st.markdown(f"Layer by layer, averaged over the {model.num_heads} heads and every token: the weight given to "
                f"{sink_words}, and {'their' if many else 'its'} share of what the heads add.")
    if settings.presenter:  # HTML, which the slide's style enlarges
        st.table(table.assign(**{name: table[name].map("{:.2f}".format) for name in table.columns[1:]}),
                 hide_index=True, width="content")
    else:
        st.dataframe(table, hide_index=True, width="content",
                     column_config={name: st.column_config.NumberColumn(format="%.2f") for name in table.columns[1:]})
    st.caption("The shares count lengths, not directions: vectors that point different ways partly cancel when "
               "added. What follows attention in the layer (the residual path and LayerNorm) is left out; Kobayashi "
               "et al. (2021) extend the measure to those. "
               + ("The first token's own row can only look at itself, so the table leaves it out."
                  if model.causal else ""))
