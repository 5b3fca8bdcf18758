"""Summaries of a real model's attention for the real-model page: mean over heads, attention rollout,
and a table of every head that lets a student find the "previous-token" and "sink" heads."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from attention_core import attention_rollout, head_roles, head_stats, mean_over_heads
from attention_core.summaries import ROLE_THRESHOLD

from . import charts, frames
from .text import plain
from .render import cached_head_grid, cached_spec
from .views import PRESENTER_COLUMN_PX, SLIDE_GRID_ROWS_PX, show_chart, slide_bar_px


def head_table(stats, roles) -> pd.DataFrame:
    """One row per (layer, head), 1-based, with the numbers of ``HeadStats`` and a role name."""
    L, h = stats.entropy.shape
    return pd.DataFrame({
        "layer": [layer + 1 for layer in range(L) for _ in range(h)],
        "head": [head + 1 for _ in range(L) for head in range(h)],
        "entropy (bits)": frames.to_numpy(stats.entropy).reshape(-1),
        "to previous token": frames.to_numpy(stats.previous).reshape(-1),
        "to first token": frames.to_numpy(stats.first).reshape(-1),
        "to special tokens": frames.to_numpy(stats.special).reshape(-1),
        "looks like": [roles[layer][head] for layer in range(L) for head in range(h)],
    })


TABLE_CHAR_PX = 7.5
"""Room for one character in the table's cells (a little wider than the widest in its 14 px font); 24 px of padding."""


def head_table_columns(table: pd.DataFrame) -> dict:
    """The per-head table's columns, each with a width in pixels: the numbers take what they need and "looks like"
    gets room for its longest name (Streamlit's default width clipped "special-token sink" at 1280 × 800, where
    the main column is about 820 px wide)."""
    # Shares to three decimals: the roles' threshold is 0.5, and at two a 0.497 with no role read "0.50".
    share = {"format": "%.3f", "min_value": 0.0, "max_value": 1.0, "width": 115}
    longest = max((len(str(name)) for name in [*table["looks like"], "looks like"]), default=0)
    return {"layer": st.column_config.NumberColumn(width=48),
            "head": st.column_config.NumberColumn(width=48),
            "entropy (bits)": st.column_config.NumberColumn(format="%.2f", width=92),
            "to previous token": st.column_config.ProgressColumn(**share),
            "to first token": st.column_config.ProgressColumn(**share),
            "to special tokens": st.column_config.ProgressColumn(**share),
            "looks like": st.column_config.TextColumn(width=math.ceil(TABLE_CHAR_PX * longest) + 24)}


def presenter_head_table(table: pd.DataFrame) -> pd.DataFrame:
    """The per-head table as text for ``st.table`` (presenter mode: HTML, which the slide's style enlarges), with the
    numbers as the dataframe shows them (whole layer and head numbers, entropy to two decimals and shares to three)
    and the names escaped (every cell is read as Markdown)."""
    out = table.copy()
    for column in out.columns:
        if column in ("layer", "head"):
            out[column] = out[column].map(str)
        elif column == "looks like":
            out[column] = out[column].map(lambda name: plain(str(name)))
        elif column == "entropy (bits)":
            out[column] = out[column].map(lambda v: f"{v:.2f}")
        else:
            out[column] = out[column].map(lambda v: f"{v:.3f}")
    return out


SHARE_COLUMNS = ["to previous token", "to first token", "to special tokens"]
"""The per-head table's shares of weight on one kind of token (``head_table``)."""
NAMED = 3
"""How many of the strongest previous-token heads and sinks the line under the per-head table names."""
PRESENTER_TABLE_PX = 460
"""Height of a long table in presenter mode: it scrolls under its header instead of running screens down."""

LAYER_COLUMNS = 3
LAYER_PANEL_TITLE_PX = 30
"""A layer grid's second row of panels starts this far under the first's cells: its "layer 4" titles."""
LAYER_GRID_ROOM = 140
"""Presenter mode: pixels of a layer grid besides its cells, at the slide's font: the token labels, the gaps between
panels and the colour bar."""


def _layer_grid(values, labels, *, title: str, cell: int, font_size: int, axes: bool) -> dict:
    """One panel per layer of ``values`` (L, T, T), as a cached spec (its frame is made only on a miss; a new
    sentence of a shape met before fills in that shape's spec); ``axes``: with the tokens' labels."""
    return cached_head_grid(values, labels, [f"layer {i + 1}" for i in range(values.shape[0])],
                            columns=min(LAYER_COLUMNS, values.shape[0]), domain=(0, 1), cell_size=cell,
                            font_size=font_size, axes=axes, spacing=10, title=title)


MIN_LAYER_LABEL_PX = 12
"""The smallest font a slide's layer grids print their token labels in, each within its row (13 tokens: 19-px rows,
15-px labels); below it they show none. (At the slide's 20-px font a sentence of 11 words and [CLS], [SEP] had no
labels at all, and a class could not find "it" or "animal".)"""


def strongest(table: pd.DataFrame, column: str, count: int = 3) -> str:
    """The ``count`` heads with the largest ``column``, as "L1H3 (1.00), …"."""
    top = table.nlargest(count, column)
    return ", ".join(f"L{layer}H{head} ({value:.2f})" for layer, head, value in
                     zip(top["layer"], top["head"], top[column]))


def strongest_in_words(table: pd.DataFrame, column: str, heads: str, share: str, count: int = NAMED) -> str:
    """The ``count`` heads with the largest ``column`` as a clause that says which reach ROLE_THRESHOLD, the share
    at which the table names a head's role: "the strongest previous-token heads are …" only of heads that do (heads
    of 0.41 and 0.34 were called that, while the table beside them named them sinks). ``heads``: what such heads are
    called ("previous-token heads"); ``share``: where their weight goes ("to the previous token")."""
    top = table.nlargest(count, column)
    reach = int((top[column] >= ROLE_THRESHOLD).sum())
    named, under = strongest(top.iloc[:reach], column, reach), strongest(top.iloc[reach:], column, count - reach)
    if reach == 0:
        return f"no head gives {ROLE_THRESHOLD:.0%} of its weight {share} (the largest shares: {under})"
    if under:
        return f"the strongest {heads} are {named}, then under {ROLE_THRESHOLD:.0%}: {under}"
    return f"the strongest {heads} are {named}"


def show_model_summaries(pick, settings, first_section: int) -> None:
    """Mean over heads, attention rollout and the per-head table for the picked model and sentence.

    ``pick`` is the real-model page's RealSelection (model, run, followed token); ``settings`` gives the sizes;
    ``first_section`` is the number of the first of its three numbered headings."""
    run, model = pick.run, pick.model
    attentions = run.attentions  # (L, h, T, T)
    keep = pick.shown
    all_labels = frames.token_labels(run.tokens)
    labels = frames.AxisLabels(all_labels[i] for i in keep)
    T = len(keep)
    if settings.presenter:  # the slide's font, and cells as large as fit the window's width beside it
        panel_rows = math.ceil(attentions.shape[0] / LAYER_COLUMNS)  # and tall enough to be seen whole on a slide
        tall = (SLIDE_GRID_ROWS_PX - LAYER_PANEL_TITLE_PX * (panel_rows - 1)) // (panel_rows * max(T, 1))
        axes = tall - 4 >= MIN_LAYER_LABEL_PX
        grid_font = min(settings.font_size, tall - 4) if axes else settings.font_size  # a label within its row
        room = LAYER_GRID_ROOM + (int(charts.label_px(labels, grid_font)) if axes else 0)
        cell = max(4, min(40, tall, (PRESENTER_COLUMN_PX - room) // (LAYER_COLUMNS * max(T, 1))))
    else:
        grid_font, axes = 11, T <= 12
        axes_room = 90 if axes else 0  # token labels beside each panel
        cell = max(4, min(26, (720 // LAYER_COLUMNS - axes_room) // max(T, 1)))
    n = first_section

    st.subheader(f"{n} · Mean over heads, layer by layer")
    st.markdown("Averaging a layer's heads gives a rough summary of where the layer looks (its output also "
                "depends on each head's values and W_O; the rows still add up to 1"
                + (" over all tokens; with the special tokens hidden, a row's shown cells add up to less)."
                   if len(keep) < run.num_tokens else ")."))
    st.latex(r"\bar A^{(l)} = \frac{1}{h} \sum_{i=1}^{h} A^{(l)}_i")
    mean = mean_over_heads(attentions)[:, keep][:, :, keep]  # (L, T', T'): the shown tokens only
    show_chart(_layer_grid(mean, labels, title="mean of the heads, one square per layer", cell=cell,
                           font_size=grid_font, axes=axes))

    st.subheader(f"{n + 1} · Attention rollout: where each token's information came from")
    st.markdown("Attention of attention: layer 2 mixes vectors that layer 1 already mixed. **Rollout** (Abnar & "
                "Zuidema, 2020) multiplies the layers' mean attention, adding the identity for the residual path (a "
                "layer adds attention's output to its input, so each token also keeps its own vector), to estimate "
                "how much of each input token ends up in each token.")
    st.latex(r"\hat A^{(l)} = \tfrac12 \bar A^{(l)} + \tfrac12 I,\qquad "
             r"R^{(l)} = \hat A^{(l)} R^{(l-1)},\quad R^{(0)} = I")
    rollout = attention_rollout(attentions)[:, keep][:, :, keep]  # (L, T', T'), computed over every token
    show_chart(_layer_grid(rollout, labels, title="rollout after each layer (rows sum to 1 over all tokens)",
                           cell=cell, font_size=grid_font, axes=axes))
    if pick.shown_follow in keep:
        shown = keep.index(pick.shown_follow)
        row = frames.row_frame(rollout[-1, shown], labels)
        show_chart(cached_spec(charts.row_bars, row, title=f"after the last layer, {labels[shown]} is made of…",
                               value_title="share",
                               cell_size=slide_bar_px(T) if settings.presenter else max(16, min(
                                   settings.cell_size, 700 // max(T, 1))),
                               font_size=settings.font_size))

    st.subheader(f"{n + 2} · Every head in numbers")
    spread = (f"log₂ {run.num_tokens} = {math.log2(run.num_tokens):.2f} bits = spread evenly" if not model.causal
              else f"token i may see i tokens, so spread evenly is log₂ i bits, at most log₂ {run.num_tokens} = "
                   f"{math.log2(run.num_tokens):.2f} for the last token. The first token sees only itself: its row is "
                   "always 0 bits, all on the first token, so the share to the first token averages the other rows")
    st.markdown("Per head, averaged over the query tokens: the **entropy** of its weights (0 bits = all on one token; "
                f"{spread}), and the share it "
                "gives to the **previous token**, to the **first token** and to **special tokens**. "
                + ("The heads named below the table come first, then the others by their largest share."
                   if settings.presenter else
                   "Sort a column to find the heads that do one thing."))
    stats = head_stats(attentions, run.is_special, causal=model.causal)
    table = head_table(stats, head_roles(stats))
    sinks = table.assign(sink=table[["to first token", "to special tokens"]].max(axis=1))
    if settings.presenter:  # a dataframe's canvas keeps the page's small text; HTML takes the slide's
        # The heads the line under the table names come first, then the others by their largest share: a clicker
        # cannot scroll the table, and in layer order it showed layer 1's heads and none of those named
        by_share = table.index[(-table[SHARE_COLUMNS].max(axis=1)).argsort(kind="stable")]
        order = dict.fromkeys([*table.nlargest(NAMED, "to previous token").index, *sinks.nlargest(NAMED, "sink").index,
                               *by_share])
        st.table(presenter_head_table(table.loc[list(order)]), hide_index=True,
                 height=PRESENTER_TABLE_PX if len(table) > 10 else "content")
    else:
        st.dataframe(table, hide_index=True, width="stretch", height=min(420, 36 + 35 * len(table)),
                     column_config=head_table_columns(table))
    previous = strongest_in_words(table, "to previous token", "previous-token heads", "to the previous token")
    parked = strongest_in_words(sinks, "sink", "sinks (weight parked on the first or a special token)",
                                "to the first token or to the special tokens")
    st.success(f"In {plain(model.name)}, for this sentence, {previous}; {parked}. A head is named in the last "
               f"column when {ROLE_THRESHOLD:.0%} or more of its weight goes to one of these: the previous token, the "
               "first token, or the special tokens taken together.")
    st.caption("Each share is a row's weight on those tokens, averaged over the rows (the previous token's from the "
               "second row on). The three overlap: the first token is often a special one ([CLS]), and it is the "
               "second row's previous token, so a head's shares can add up to more than 1. The rollout and these "
               "numbers use every token, special ones included; “Hide special tokens” only hides them from the "
               "charts.")
