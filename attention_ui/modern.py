"""Charts and frames for the modern-attention and generation pages (Altair; no tensor math).

``sharing_diagram`` draws which query heads read which key/value head; ``cache_bars`` the KV-cache
size of published models; ``timing_chart`` one generation step with and without the cache;
``sharing_takeaway`` what g key/value heads save.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from . import charts, frames

QUERY_COLOR = "#4c78a8"
KV_COLOR = "#f58518"


def sharing_takeaway(num_heads: int, kv_heads: int) -> str:
    """One sentence on what g key/value heads for h query heads save in the KV cache, against multi-head."""
    h, g = int(num_heads), int(kv_heads)
    own = ("both heads still have their own queries and their own weights" if h == 2
           else f"every one of the {h} heads still has its own queries and its own weights")
    if g == h:
        return (f"Takeaway: with g = h = {h}, every query head has its own keys and values, so the cache stores as "
                "many keys and values as multi-head attention: nothing is shared.")
    size = h // g
    everyone = "both query heads" if h == 2 else f"all {h} query heads"
    shared = (f"{everyone} share one key/value head (multi-query)" if g == 1
              else f"each group of {size} query heads shares one key/value head")
    return (f"Takeaway: with g = {g}, {shared}, so the cache stores {size}× fewer keys and values than multi-head "
            f"attention ({g} key/value head{'s' if g > 1 else ''} instead of {h}), while {own}.")


def sharing_frames(num_heads: int, groups: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes (query heads on top, K/V heads below) and edges (query head i -> its group) for a diagram.

    ``groups[i]`` is the key/value head that query head i reads."""
    num_groups = max(groups) + 1
    span = max(num_heads - 1, 1)
    kv_x = [(g + 0.5) * span / num_groups if num_groups > 1 else span / 2 for g in range(num_groups)]
    nodes = pd.DataFrame(
        [{"x": float(i), "y": 1.0, "name": f"Q{i + 1}", "kind": "query head"} for i in range(num_heads)]
        + [{"x": kv_x[g], "y": 0.0, "name": f"KV{g + 1}", "kind": "key/value head"} for g in range(num_groups)])
    edges = pd.DataFrame([{"x": float(i), "y": 1.0, "x2": kv_x[g], "y2": 0.0, "query": f"Q{i + 1}",
                           "group": f"KV{g + 1}"} for i, g in enumerate(groups)])
    return nodes, edges


NAME_CHAR_EM = 0.68
"""Width of one character of a head's name (capitals and digits, bold) in ems, a little more than measured."""
NODE_PAD_PX = 8
"""Room left around a head's name inside its circle."""


def node_size(num_heads: int, num_groups: int, *, width: int, font_size: int) -> tuple[float, float]:
    """(circle diameter, name font size) in pixels for a sharing diagram: the circle is wide enough for the
    longest name ("KV12", "Q16") in the font, and at most 85 % of the gap between two query heads (then, and
    never below 9 px, the font shrinks to fit); never larger than 44 px."""
    chars = max(len(f"Q{num_heads}"), len(f"KV{num_groups}"))
    gap = width / (max(num_heads - 1, 1) + 1.2)  # the x scale runs from -0.6 to h - 1 + 0.6
    room = min(44.0, 0.85 * gap)
    name_size = float(max(9, font_size - 3))
    if chars * NAME_CHAR_EM * name_size + NODE_PAD_PX > room:
        name_size = max(9.0, (room - NODE_PAD_PX) / (chars * NAME_CHAR_EM))
    diameter = max(chars * NAME_CHAR_EM * name_size + NODE_PAD_PX, min(room, 30.0))
    return diameter, name_size


def sharing_diagram(num_heads: int, groups: list[int], *, title: str = "", width: int = 260, font_size: int = 13):
    """Query heads (blue, top) joined to the key/value head they read (orange, bottom)."""
    nodes, edges = sharing_frames(num_heads, groups)
    x_scale = alt.Scale(domain=[-0.6, max(num_heads - 1, 1) + 0.6])
    y_scale = alt.Scale(domain=[-0.45, 1.45])
    hidden = alt.Axis(labels=False, ticks=False, title=None, domain=False, grid=False)
    lines = alt.Chart(edges).mark_rule(color="#888", strokeWidth=1.5).encode(
        x=alt.X("x:Q", scale=x_scale, axis=hidden), y=alt.Y("y:Q", scale=y_scale, axis=hidden), x2=alt.X2("x2:Q"),
        y2=alt.Y2("y2:Q"),
        tooltip=[alt.Tooltip("query:N", title="query head"), alt.Tooltip("group:N", title="reads")])
    diameter, name_size = node_size(num_heads, max(groups) + 1, width=width, font_size=font_size)
    dots = alt.Chart(nodes).mark_circle(size=diameter ** 2, opacity=1).encode(
        x=alt.X("x:Q", scale=x_scale, axis=hidden), y=alt.Y("y:Q", scale=y_scale, axis=hidden),
        color=alt.Color("kind:N", scale=alt.Scale(domain=["query head", "key/value head"],
                                                  range=[QUERY_COLOR, KV_COLOR]),
                        legend=alt.Legend(orient="bottom", title=None, labelFontSize=font_size - 1)),
        tooltip=[alt.Tooltip("name:N", title="head"), alt.Tooltip("kind:N", title="kind")])
    # white on the blue query heads, dark on the orange key/value heads (white on that orange was 2.6 : 1)
    names = [alt.Chart(nodes).transform_filter(f"datum.kind == '{kind}'")
             .mark_text(fontSize=name_size, fontWeight="bold", color=colour).encode(
                 x=alt.X("x:Q", scale=x_scale, axis=hidden), y=alt.Y("y:Q", scale=y_scale, axis=hidden),
                 text=alt.Text("name:N"))
             for kind, colour in (("query head", "white"), ("key/value head", charts.DARK_TEXT))]
    return alt.layer(lines, dots, *names, width=width, height=150, title=charts.chart_title(title, font_size - 1),
                     config=alt.Config(view=alt.ViewConfig(stroke=None)))


GIB_PAST_MIB = 100 * 1024
"""Past this many MiB (100 GiB) in a row, the KV-cache table and chart count in GiB: at a million tokens the chart's
axis ran to "2,800,000" MiB."""
MIB_COLUMNS = ("cache MiB", "cache MiB if multi-head")
"""``kv_cache_table``'s columns of sizes in MiB."""


def cache_unit(rows: list[dict]) -> tuple[str, int]:
    """The unit the KV-cache table and chart count in for these rows, and how many MiB make one of it."""
    largest = max((r[column] for r in rows for column in MIB_COLUMNS), default=0)
    return ("GiB", 1024) if largest > GIB_PAST_MIB else ("MiB", 1)


def cache_table_frame(rows: list[dict]) -> pd.DataFrame:
    """The KV-cache table as shown: missing windows blank, sizes in ``cache_unit``'s unit ("cache GiB", …)."""
    df = pd.DataFrame(rows)
    df["window"] = [("" if pd.isna(w) else f"{int(w):,}") for w in df["window"]]
    unit, mib = cache_unit(rows)
    for column in MIB_COLUMNS:
        df[column] = df[column] / mib
    return df.rename(columns={column: column.replace("MiB", unit) for column in MIB_COLUMNS})


WHAT_IF = " (what-if)"
"""After a model's name in the cache bars when the context is longer than it can read: its bars are what its cache
would need, drawn pale (they looked like the caches of models that do read that far)."""


MULTI_HEAD_BAR_COLOR = "#949494"
"""The "if every head had its own K/V" bars: a grey at 3 : 1 on white, as a chart's shapes need."""
WHAT_IF_OUTLINE = "#555555"


def cache_bars(rows: list[dict], *, context: int, font_size: int = 13, width: int = 520):
    """Horizontal bars: each model's KV-cache size (in ``cache_unit``'s unit) for ``context`` tokens, beside what
    multi-head attention would need; a model whose longest context is shorter is named a what-if and drawn pale."""
    def name(r: dict) -> str:
        return r["model"] + (WHAT_IF if r["longest context"] and context > r["longest context"] else "")

    unit, mib = cache_unit(rows)
    long = pd.DataFrame(
        [{"model": name(r), "cache": "as published", unit: r["cache MiB"] / mib, "attention": r["attention"],
          "what_if": name(r) != r["model"]} for r in rows]
        + [{"model": name(r), "cache": "if every head had its own K/V", unit: r["cache MiB if multi-head"] / mib,
            "attention": "multi-head", "what_if": name(r) != r["model"]} for r in rows])
    order = [name(r) for r in rows]
    # (a projector washed out the what-ifs at 0.4 and the light grey bars: darker grey, and a what-if is half as strong
    # with a dashed outline)
    return alt.Chart(long).mark_bar(strokeWidth=1.5).encode(
        y=alt.Y("model:N", sort=order, title=None, axis=alt.Axis(labelFontSize=font_size, labelLimit=260)),
        yOffset=alt.YOffset("cache:N", sort=["as published", "if every head had its own K/V"]),
        x=alt.X(f"{unit}:Q", title=f"KV cache ({unit})",
                axis=alt.Axis(labelFontSize=font_size - 1, titleFontSize=font_size)),
        color=alt.Color("cache:N", scale=alt.Scale(domain=["as published", "if every head had its own K/V"],
                                                   range=[KV_COLOR, MULTI_HEAD_BAR_COLOR]),
                        legend=alt.Legend(orient="bottom", title=None, labelFontSize=font_size - 1, labelLimit=400)),
        opacity=alt.condition("datum.what_if", alt.value(0.5), alt.value(1.0)),
        stroke=alt.condition("datum.what_if", alt.value(WHAT_IF_OUTLINE), alt.value(None)),
        strokeDash=alt.condition("datum.what_if", alt.value([4, 2]), alt.value([1, 0])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("cache:N"), alt.Tooltip("attention:N"),
                 alt.Tooltip(f"{unit}:Q", format=",.1f")],
    ).properties(width=width, height=alt.Step(13))


def timing_frame(timings) -> pd.DataFrame:
    """One row per (length, method) from ``time_generation_step``'s StepTiming list."""
    return pd.DataFrame(
        [{"tokens so far": t.length, "method": "with the KV cache", "ms per step": t.cached_ms} for t in timings]
        + [{"tokens so far": t.length, "method": "recompute everything", "ms per step": t.recompute_ms}
           for t in timings])


TIMING_WIDTH_PX = 460
"""The timing chart's width on a page."""


def timing_chart(df: pd.DataFrame, *, font_size: int = 13, width: int = TIMING_WIDTH_PX):
    """Milliseconds per generation step against length, one line per method."""
    return alt.Chart(df).mark_line(point=True).encode(
        # (about eight labels, centred on their ticks: across a slide the last two ran together as "250260")
        x=alt.X("tokens so far:Q", axis=alt.Axis(labelFontSize=font_size - 1, titleFontSize=font_size, tickCount=8,
                                                 labelFlush=False)),
        y=alt.Y("ms per step:Q", axis=alt.Axis(labelFontSize=font_size - 1, titleFontSize=font_size)),
        color=alt.Color("method:N", scale=alt.Scale(domain=["with the KV cache", "recompute everything"],
                                                    range=[KV_COLOR, QUERY_COLOR]),
                        legend=alt.Legend(orient="bottom", title=None, labelFontSize=font_size - 1, labelLimit=300)),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("tokens so far:Q"), alt.Tooltip("ms per step:Q", format=".3f")],
    ).properties(width=width, height=220)


REACHES, OUT_OF_REACH = "can reach", "out of reach"


def reach_grid(reach, depth_labels: list[str], token_labels: list[str], *, title: str = "", cell_size: int = 30,
               font_size: int = 13):
    """Layers (rows) × tokens (columns): which tokens can reach one token after each layer."""
    df = frames.mask_frame(reach, frames.AxisLabels(depth_labels), frames.AxisLabels(token_labels),
                           row_name="depth", col_name="token")
    df["state"] = np.where(df["allowed"], REACHES, OUT_OF_REACH)
    axis = {"labelFontSize": font_size, "titleFontSize": font_size, "ticks": False, "domain": False,
            "labelLimit": 300}
    angle = charts.label_angle(list(token_labels), font_size=font_size, step=cell_size)
    chart = alt.Chart(df).mark_rect(stroke="white", strokeWidth=1).encode(
        x=alt.X("token:N", sort=list(token_labels),
                axis=alt.Axis(labelAngle=angle, labelOverlap="parity" if angle == -90 else False, **axis)),
        y=alt.Y("depth:N", sort=list(depth_labels), axis=alt.Axis(**axis)),
        color=alt.Color("state:N", scale=alt.Scale(domain=[REACHES, OUT_OF_REACH],
                                                   range=[charts.ALLOWED_COLOR, charts.BLOCKED_COLOR]),
                        legend=alt.Legend(title=None, labelFontSize=font_size)),
        tooltip=[alt.Tooltip("depth:N"), alt.Tooltip("token:N"), alt.Tooltip("state:N")],
    ).properties(width=cell_size * len(token_labels), height=cell_size * len(depth_labels),
                 title=charts.chart_title(title, font_size))
    return chart

