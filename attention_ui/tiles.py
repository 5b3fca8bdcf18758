"""What it costs, section 3: one query's walk through its keys a tile at a time (``attention_core.tiled_attention``),
as a chart frame and a table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attention_core import TiledAttention

from .frames import AxisLabels, format_values, matrix_frame

TILE_ROW = "after tile"
"""The chart's and the table's name for a tile's row."""


def tile_names(run: TiledAttention, key_labels) -> list[str]:
    """Each tile's row name: "tile 1: 1·The–3·sat" (its first and last key; one key: "tile 1: 1·The")."""
    names = []
    for j, (start, end) in enumerate(zip(run.starts, run.ends), 1):
        first, last = key_labels[start], key_labels[end - 1]
        names.append(f"tile {j}: {first}" if end - start == 1 else f"tile {j}: {first}–{last}")
    return AxisLabels(names)


def weights_so_far_frame(run: TiledAttention, head: int, query: int, key_labels, allowed) -> pd.DataFrame:
    """A heatmap frame: row j is the followed query's weights if its keys ended with tile j (``weights_so_far``);
    a key not reached yet has no value (no colour, no number); a key the mask blocks (``allowed`` (S,) False),
    once reached, is drawn as blocked."""
    rows = np.stack([run.weights_so_far(j)[head, query].cpu().double().numpy()
                     for j in range(len(run.starts))])  # (J, S)
    reached = np.arange(rows.shape[1])[None, :] < np.asarray(run.ends)[:, None]  # (J, S)
    blocked = reached & ~np.asarray(allowed, dtype=bool)[None, :]
    frame = matrix_frame(np.where(reached, rows, np.nan), tile_names(run, key_labels), AxisLabels(key_labels),
                         row_name=TILE_ROW, col_name="key", blocked=blocked)
    frame.loc[~reached.reshape(-1), "label"] = ""
    return frame


def running_table(run: TiledAttention, head: int, query: int, key_labels, shown: int = 4) -> pd.DataFrame:
    """One row per tile: its keys, its largest score, the running max m, the rescale e^(m_old − m_new) ("—" where
    nothing was summed before), the running sum ℓ and the context so far o / ℓ (its first ``shown`` numbers), as
    text."""
    m = run.running_max[head, :, query].double()
    total = run.running_sum[head, :, query].double()
    out = run.running_out[head, :, query].double()  # (J, d_v)
    so_far = out / total.clamp_min(np.finfo(np.float64).tiny).unsqueeze(-1)
    d_v = out.shape[-1]
    context = [", ".join(format_values(row[:shown].numpy())) + (", …" if d_v > shown else "")
               if t > 0 else "nothing allowed yet" for row, t in zip(so_far, total.tolist())]
    return pd.DataFrame({
        TILE_ROW: tile_names(run, key_labels),
        "largest score in the tile": format_values(run.tile_max[head, :, query].double().numpy()),
        "m: largest so far": format_values(m.numpy()),
        "rescale e^(m_old − m_new)": [value if before else "—" for value, before in zip(
            format_values(run.rescale[head, :, query].double().numpy()), [False, *(t > 0 for t in total.tolist())])],
        "ℓ: sum so far": format_values(total.numpy()),
        "context so far o / ℓ": context,
    })
