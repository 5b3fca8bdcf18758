"""Altair chart builders for the attention lessons.

Every builder takes a tidy DataFrame from :mod:`attention_ui.frames` and returns
an Altair chart object; nothing here draws or touches Streamlit. Axes are ordered
by position (the frame's index columns), never alphabetically.

Data stays a DataFrame, which ``st.altair_chart`` ships as Arrow without a row
limit. Outside Streamlit, ``to_dict()`` on a head grid above 5000 cells needs
``alt.data_transformers.disable_max_rows()``.

Masked cells (NaN ``value`` with ``masked`` True) are drawn in a neutral grey,
always carry the text "−∞" and say "masked" in their tooltip.
"""

from __future__ import annotations

import textwrap

import altair as alt
import numpy as np
import pandas as pd

from attention_ui.frames import ALLOWED, BLOCKED, format_value

MASKED_COLOR = "#a6a6a6"
ALLOWED_COLOR = "#2c6fbb"
BLOCKED_COLOR = "#e0e0e0"
POSITIVE_BAR_COLOR = "#4c78a8"
NEGATIVE_BAR_COLOR = "#6f6f6f"
"""A neutral grey: orange, which the bars had, is a high score in the heatmaps (the diverging scheme's positive end),
and a student read the two charts' orange as opposites."""
DARK_TEXT = "#1a1a1a"
LIGHT_TEXT = "white"
MAX_UPRIGHT_LABELS = 10
LEGEND_NUMBERS = ("−0.5",)
"""The widest numbers a colour bar writes beside it (its ticks of a chart's values)."""
LABEL_LIMIT_PX = 300
TOOLTIP_FORMAT = ".6~g"
DARK_LOW_SCHEMES = frozenset(
    {"viridis", "cividis", "magma", "inferno", "plasma", "turbo"}
    | {"darkblue", "darkgold", "darkgreen", "darkmulti", "darkred"}
)
VALID = "isValid(datum.value) && isFinite(datum.value)"
FOLLOW_COLOR = "#d6336c"
"""Outline of the followed query's row, in every chart of a stage: a magenta that no value is drawn in (orange is
the positive end of the diverging scheme; an orange outline vanished among a row's large scores)."""
PICK, PICK_BLOCKED, PICK_ASKED = "pick", "pick_blocked", "pick_asked"
"""Names of the click selections that follow the clicked row's token (on the coloured cells, the blocked ones and the
cell that shows ``ASKED_MARK``)."""


def _ordered(df: pd.DataFrame, field: str, index_field: str) -> list[str]:
    """The labels of ``field`` in the order of ``index_field`` (each label once)."""
    _, first = np.unique(df[index_field].to_numpy(), return_index=True)  # each index's first row, by index
    return list(dict.fromkeys(df[field].iloc[first].tolist()))


def label_px(labels, font_size: int) -> float:
    """About how wide the longest of ``labels`` is drawn at ``font_size`` pixels (a character is about 0.6 em)."""
    return 0.6 * font_size * max((len(label) for label in labels), default=0)


SLANT_MIN_STEP_EM = 1.35
"""Narrowest column, in ems of the label font, whose labels are slanted at −45°: slanted labels lie the column's
width × sin 45° apart, about one line of text. Narrower columns get labels at −90°, a column apart, which the
browser thins out (every other one left out) while they would still overlap."""


STEEP_LABEL_GAP_PX = 0
"""Least gap the browser leaves between labels at −90° (a line of text each, its glyphs narrower than the line)."""
SMALLEST_STEEP_LABEL_PX = 8
"""The smallest font of labels at −90° under columns no wider than the chart's font: such labels are set 1 px under
the column's width, so that each column keeps its name (at 13 px under 12-px columns the browser left out every other
one: 1·The, 3·brown, …)."""


def label_angle(labels: list[str], *, font_size: int = 14, step: float = 36) -> int:
    """0 (upright) for up to 10 labels that fit their column of ``step`` pixels; else -45, or -90 in a column
    narrower than SLANT_MIN_STEP_EM."""
    if len(labels) <= MAX_UPRIGHT_LABELS and label_px(labels, font_size) <= step * 1.25:
        return 0
    return -45 if step >= SLANT_MIN_STEP_EM * font_size else -90


def fitted_label_angle(labels: list[str], *, font_size: int, room_px: float,
                       width: str = "containerSize()[0]") -> str:
    """``label_angle`` as a Vega expression, for a chart that fills its container (whose width only the browser
    knows): each label's column is the container's width less ``room_px`` (what the chart draws beside its
    columns: row labels, axis title, legend), over the labels. ``width``: the container's width, a Vega expression
    (another chart's, worked out from this one's)."""
    step = f"({width} - {room_px:.0f}) / {max(len(labels), 1)}"
    upright = (f"{step} * 1.25 >= {label_px(labels, font_size):.0f}" if len(labels) <= MAX_UPRIGHT_LABELS
               else "false")
    slanted = f"{step} >= {SLANT_MIN_STEP_EM * font_size:g}"
    return f"isFinite({width}) ? ({upright} ? 0 : {slanted} ? -45 : -90) : -90"


def label_extent(labels: list[str], font_size: int, angle: int) -> float:
    """About how far below the cells an x axis's ``labels`` reach at ``angle`` (0, -45 or -90), their gap included."""
    if angle == 0:
        return font_size + 8
    if angle == -45:
        return 0.71 * (label_px(labels, font_size) + font_size) + 8
    return label_px(labels, font_size) + 8


def fitted_label_extent(labels: list[str], *, font_size: int, room_px: float,
                        width: str = "containerSize()[0]") -> str:
    """``label_extent`` at the angle ``fitted_label_angle`` picks (for a container ``width`` wide), as a Vega
    expression."""
    angle = fitted_label_angle(labels, font_size=font_size, room_px=room_px, width=width)
    upright, slanted, steep = (label_extent(labels, font_size, a) for a in (0, -45, -90))
    return f"({angle}) == 0 ? {upright:.0f} : ({angle}) == -45 ? {slanted:.0f} : {steep:.0f}"


def fitted_shared_angle(labels: list[str], *, font_size: int, room_px: float,
                        beside: tuple[tuple[str, float], ...]) -> str:
    """The angle of the column labels of a chart that fills its container and of the charts ``beside`` it with the
    same labels, as a Vega expression: the steepest of their ``fitted_label_angle``s, so that all of them draw their
    labels alike and start their cells at one height (a narrow mask beside the scores). ``beside``: each chart as
    (its container's width as a Vega expression of this one's, its ``room_px``)."""
    angles = [fitted_label_angle(labels, font_size=font_size, room_px=room_px)]
    angles += [fitted_label_angle(labels, font_size=font_size, room_px=room, width=width) for width, room in beside]
    return f"min({', '.join(f'({angle})' for angle in angles)})"


def steep_label_extent(labels: list[str], *, font_size: int, angle: str) -> str:
    """The least height, as a Vega expression, of column labels drawn at the Vega expression ``angle``: at −90° their
    ``label_extent`` (the browser leaves out every other label there, maybe the longest in one chart and not in the
    chart beside it), else none."""
    return f"({angle}) == -90 ? {label_extent(labels, font_size, -90):.0f} : 0"


def fit_room_px(rows: list[str], font_size: int, legend_labels: list[str] = ()) -> float:
    """About how wide a chart that fills its container draws what lies beside its columns: the ``rows``' labels,
    the row axis's title and, when it has a legend, the legend (its title and labels ``legend_labels``, a symbol
    or colour bar beside them). No ``rows``: a chart without row labels (the chart beside it names its rows). A
    little more than measured: a column thought narrower only steepens its labels."""
    legend = label_px(legend_labels, font_size) + font_size + 8 if legend_labels else 0
    return (label_px(rows, font_size) + font_size + 16 if rows else 0) + legend


def heatmap_fit_room(rows: list[str], font_size: int, value_title: str, *, by_row: bool = False,
                     legend: bool = True) -> float:
    """``fit_room_px`` of a ``heatmap`` of ``rows`` whose colour bar (``legend``) is titled after ``value_title``
    (and ``by_row``, as ``heatmap``'s ``color_field="row_scaled"``)."""
    return fit_room_px(rows, font_size, [*_legend_title(value_title, by_row), *LEGEND_NUMBERS] if legend else [])


def _legend_title(value_title: str, by_row: bool) -> list[str]:
    """The colour bar's title, one line per item: a ``by_row`` colour is the value less its row's smallest, over
    its row's range (see ``frames.row_scaled``)."""
    return [f"({value_title} − row min)", "÷ row range"] if by_row else [value_title]


def _axis(title: str, font_size: int, angle: int | str = 0, min_extent: int | str | None = None,
          thin: bool = False) -> alt.Axis:
    """``angle`` (and ``min_extent``): a number, or a Vega expression of it. Labels at −90°, and upright ones
    when ``thin``: the browser leaves out every other label until the rest do not overlap. An angle given as an
    expression also gets its labels' alignment as one (an x axis's, under the cells): Vega-Lite's own turns an
    upright label's "centred" into none, which draws it from its column's middle to the right."""
    align = baseline = alt.Undefined
    if isinstance(angle, str):
        overlap = alt.ExprRef(expr=f"({angle}) == -90 ? 'parity' : false")
        separation = STEEP_LABEL_GAP_PX
        align = alt.ExprRef(expr=f"({angle}) == 0 ? 'center' : 'right'")
        baseline = alt.ExprRef(expr=f"({angle}) == -90 ? 'middle' : 'top'")
        angle = alt.ExprRef(expr=angle)
    else:
        overlap = "parity" if thin or angle == -90 else False
        separation = 4 if thin else STEEP_LABEL_GAP_PX
    return alt.Axis(
        labelAlign=align,
        labelBaseline=baseline,
        title=title,
        labelAngle=angle,
        labelFontSize=font_size,
        titleFontSize=font_size,
        labelLimit=LABEL_LIMIT_PX,
        labelOverlap=overlap,
        labelSeparation=alt.Undefined if overlap is False else separation,
        ticks=False,
        domain=False,
        minExtent=(alt.Undefined if min_extent is None else
                   alt.ExprRef(expr=min_extent) if isinstance(min_extent, str) else min_extent),
    )


# Axis orders are given as tuples: Altair deep-copies a chart at every encode, mark, transform and layer, and
# walks a list item by item each time (a tuple it shares); the spec gets a list all the same.


def _x(field: str, order: list[str], font_size: int, step: int, *, thin: bool = False,
       min_extent: int | str | None = None, fit_room: float | None = None, angle: str | None = None) -> alt.X:
    """A band x axis with ``order``'s labels, slanted when they do not fit upright. ``thin``: upright, and the
    browser leaves out every other label until the rest do not overlap (for a chart that stretches to its
    container, whose cell width only the browser knows). ``fit_room``: the chart fills its container, which
    leaves its columns all but ``fit_room`` pixels (see ``fit_room_px``); the browser picks the labels' angle
    from that width. ``min_extent``: pixels (or a Vega expression of them) the labels take at least, so that
    charts side by side start their cells at the same height. ``angle``: the labels' angle as a Vega expression
    (``fitted_shared_angle``), in place of the one ``fit_room`` gives."""
    if thin:
        angle = 0
    elif angle is None and fit_room is not None:
        angle = fitted_label_angle(order, font_size=font_size, room_px=fit_room)
    elif angle is None:
        angle = label_angle(order, font_size=font_size, step=step)
    axis = _axis(field, font_size, angle, min_extent, thin)
    if angle == -90 and fit_room is None and step <= font_size:  # one line of text per column, as narrow as it
        axis.labelFontSize = max(step - 1, SMALLEST_STEEP_LABEL_PX)
    return alt.X(f"{field}:N", scale=_in_order(order), axis=axis)


def _y(field: str, order: list[str], font_size: int, labels: bool = True) -> alt.Y:
    """A band y axis with ``order``'s labels; without ``labels`` (nor title) for a chart whose rows the chart to
    its left names."""
    return alt.Y(f"{field}:N", scale=_in_order(order), axis=_axis(field, font_size) if labels else None)


def _in_order(order: list[str]) -> alt.Scale:
    """A band scale whose domain is ``order`` as given. (A ``sort`` list would do the same by a calculation in
    the browser that compares each row's label with every label in turn: for a real model's layer × head grid,
    millions of comparisons on every redraw.)"""
    return alt.Scale(domain=list(order))


MIN_LEGEND_LABEL_PX = 10
"""The smallest numbers on a colour bar (a real model's grids, drawn at an 11-px font, printed them at 9 px)."""


def _colour_when(test: str, then: str, otherwise: str) -> alt.ColorValue:
    """The colour ``then`` where the Vega expression ``test`` holds, else ``otherwise``. Given as Altair's channel
    class: a condition's dict would be resolved against the schema on every ``encode`` (a few milliseconds)."""
    return alt.ColorValue(**alt.when(test).then(alt.value(then)).otherwise(alt.value(otherwise)))


# A layered, faceted or concatenated chart is made in one call with all its properties (size, title, resolve,
# config): Altair re-makes such a chart, copying its layers, for each ``.properties()`` or other change after that,
# and ``.properties()`` also checks every property against the schema.


TITLE_CHAR_EM = 0.5
"""About how wide a character of a chart title's sans-serif font is, in ems (measured: 0.47 em, bold, 16 px)."""


def title_chars(width: float, font_size: int) -> int:
    """About how many characters of a chart title (drawn at ``font_size`` + 2) fit over ``width`` pixels."""
    return int(width / (TITLE_CHAR_EM * (font_size + 2)))


def chart_title(title: str, font_size: int, *, width: int | None = None, subtitle: str = ""):
    """A chart's title at ``font_size`` + 2, left-aligned; nothing (Altair's Undefined) for an empty title.
    With ``width`` (px), a title longer than the chart is broken into lines instead of being cut off with "…";
    ``subtitle`` is a line below it at ``font_size``."""
    if not title:
        return alt.Undefined
    text = title
    if width is not None:
        lines = textwrap.wrap(title, max(20, title_chars(width, font_size)))
        text = lines if len(lines) > 1 else title
    extra = {"subtitle": subtitle, "subtitleFontSize": font_size} if subtitle else {}
    return alt.TitleParams(text, fontSize=font_size + 2, anchor="start", **extra)


def _require(df: pd.DataFrame, required: list[str]) -> None:
    missing = [name for name in required if name not in df.columns]
    if missing:
        raise KeyError(f"frame lacks columns {missing}; it has {list(df.columns)}")


def _with_defaults(df: pd.DataFrame, required: list[str]) -> pd.DataFrame:
    _require(df, [*required, "value"])
    extra = {}
    if "label" not in df.columns:
        extra["label"] = [format_value(v) for v in df["value"].astype(float)]
    if "masked" not in df.columns:
        extra["masked"] = df["value"].isna()
    return df.assign(**extra) if extra else df


def color_domain(values: pd.Series, *, diverging: bool = False) -> tuple[float, float]:
    """The colour domain for ``values`` when none is given.

    Diverging: symmetric around 0. Sequential: min..max, widened to include 0
    when all values are equal. All-NaN data gives (0, 1).
    """
    finite = values[np.isfinite(values.astype(float))].astype(float)
    if finite.empty:
        return (-1.0, 1.0) if diverging else (0.0, 1.0)
    if diverging:
        extent = float(finite.abs().max()) or 1.0
        return (-extent, extent)
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:
        lo, hi = (min(lo, 0.0), max(hi, 0.0)) if lo != 0 else (0.0, 1.0)
    return (lo, hi)


LIGHT_TEXT_ENDS = {"viridis": (0.47, 1.0), "blueorange": (0.122, 0.915)}
"""Where on a scheme's ramp (0 at its low end, 1 at its high end) white printed numbers contrast more than
``DARK_TEXT``: below the first number and above the second. Found from the colours Vega draws each scheme with,
by WCAG contrast; at either end both texts are about 4.2 : 1 there, the best a cell of that colour allows."""


def _light_text_test(position: str, scheme: str) -> str:
    """A Vega expression, true where a cell at ``position`` (an expression from 0 to 1 along the scheme's ramp)
    is dark enough that white text reads better than dark text."""
    low, high = LIGHT_TEXT_ENDS.get(scheme, (0.5, 1.0) if scheme in DARK_LOW_SCHEMES else (0.0, 0.6))
    ends = [f"{position} < {low!r}" if low > 0 else "", f"{position} > {high!r}" if high < 1 else ""]
    return " || ".join(end for end in ends if end) or "false"


def _text_color_test(domain: tuple[float, float], scheme: str, diverging: bool) -> str:
    """A Vega expression that is true where the cell colour is dark (text must be light)."""
    lo, hi = domain
    if diverging:  # the scale's middle (0.5 on the ramp) is 0; lo and hi are its ends
        neg = f"datum.value < 0 && ({_light_text_test(f'0.5 - 0.5 * datum.value / {lo!r}', scheme)})" \
            if lo < 0 else "false"
        pos = f"datum.value > 0 && ({_light_text_test(f'0.5 + 0.5 * datum.value / {hi!r}', scheme)})" \
            if hi > 0 else "false"
        return f"{VALID} && (({neg}) || ({pos}))"
    span = (hi - lo) or 1.0
    return f"{VALID} && ({_light_text_test(f'(datum.value - {lo!r}) / {span!r}', scheme)})"


def _every_cell_shown(df: pd.DataFrame, color_field: str) -> bool:
    """Whether no cell of a matrix frame is masked or lacks a finite value (its colour field's included)."""
    values = df[["value", color_field]].to_numpy(dtype=np.float64)
    return bool(np.isfinite(values).all()) and not bool(df["masked"].to_numpy(dtype=bool).any())


def _columns_read(df: pd.DataFrame, fields: set[str]) -> pd.DataFrame:
    """``df`` with only the columns a chart reads, its text as categories (each distinct label sent once): the
    browser decodes every column sent, for every cell, and a real model's grid has tens of thousands."""
    df = df if fields.issuperset(df.columns) else df[[c for c in df.columns if c in fields]]
    return df.astype({c: "category" for c in df.columns if df[c].dtype == object or str(df[c].dtype) == "str"})


def legend_length(rows_px: float) -> float:
    """A heatmap's colour bar length beside ``rows_px`` pixels of rows: about as tall as they are, within 60–300."""
    return max(60, min(300, rows_px))


def _value_font_size(cell_size: int, font_size: int, chars: int = 6) -> int:
    """Font size of the numbers printed in cells ``cell_size`` px wide: ``chars`` characters at about 0.6 em each
    fill the cell (6 for a signed "−0.390", 5 for a weight "0.390"), within 8 px and ``font_size``."""
    return max(8, min(font_size, int(cell_size / (0.6 * chars))))


VALUE_CHAR_EM = 0.55
"""Width of a printed value's character (digit, point or sign) in ems, a little room on each side included: a
"−0.390" fills a cell 3.3 ems wide (measured on a slide: 52 px at 16 px)."""
MARK_CHAR_EM = 0.9
"""The same for a blocked cell's "×" or "−∞" (the ∞ is about an em wide)."""
TEXT_LINE_EM = 1.25
"""Height of a printed value's text box in ems, a little room above and below included: a fitted chart's rows may be
drawn shorter than its cells are wide (a slide of 12 tokens: 22-px rows under 57-px cells)."""
MIN_FITTED_VALUE_PX = 12
"""Smallest font of the numbers in the cells of a chart that fills its container (a slide's): read from the back of
a hall. Narrower cells (a 1024-px projector with 9–12 tokens) show their colours only; the value is in the tooltip."""
SHORTER_BELOW_PX = 16
"""A chart that fills its container (a slide's) prints its numbers rounded shorter (``short_labels``: "−30.8" for
"−30.825") where its cells would print them whole under this font and the shorter ones print larger: a real head's
scores were 13 px at 1280 px and colours only at 1024 px, read from the back of a hall."""


ASKED_MARK = "?"
"""Printed in the cell a Check yourself question asks for, until it is answered (``render.cached_matrix_chart``)."""


def short_labels(df: pd.DataFrame) -> np.ndarray:
    """Each cell's number rounded to fewer places, as ``format_value`` writes it: 2 decimals under 10, 1 under 100,
    none from 100 on ("0.39", "−3.65", "−30.8", "135"); a blocked or not-finite cell, or one that prints ASKED_MARK,
    keeps its ``label``."""
    values = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)
    labels = df["label"].astype(str).to_numpy(dtype=object).copy()
    masked = df["masked"].to_numpy(dtype=bool) if "masked" in df.columns else np.zeros(len(df), dtype=bool)
    for i in np.flatnonzero(np.isfinite(values) & ~masked & (labels != ASKED_MARK)):
        size = abs(values[i])
        text = f"{values[i]:.{2 if size < 9.995 else 1 if size < 99.95 else 0}f}"  # (9.996 is "10.0", not "10.00")
        labels[i] = (text.lstrip("-") if text.strip("-0.") == "" else text).replace("-", "−")  # (no "−0.00")
    return labels


def cell_value_font(cell_size: int, font_size: int, *, diverging: bool, fit: bool, chars: int = 0) -> int:
    """Font size of a heatmap's printed values: weights (not ``diverging``) are never negative, so a cell holds a
    larger "0.390" than "−0.390"; a slide's cells (``fit``) may be drawn narrower than their nominal ``cell_size``,
    so they keep the signed number's room. ``chars``: the longest value printed, when longer than that ("−15.518"
    at d_k = 64 ran into the next cell)."""
    return _value_font_size(cell_size, font_size, max(6 if diverging or fit else 5, chars))


def printed_chars(df: pd.DataFrame) -> int:
    """How many characters the longest value a matrix frame prints has (its blocked cells' marks left aside)."""
    shown = df["label"][~df["masked"].to_numpy(dtype=bool)] if "masked" in df.columns else df["label"]
    return max((len(str(label)) for label in shown), default=0)


def _click_selection(fields, *, name: str = PICK) -> alt.SelectionParameter:
    """A selection named ``name`` of the ``fields`` of the mark clicked last (kept until another click; none before
    the first), which ``views.on_pick`` reads."""
    return alt.selection_point(name=name, fields=list(fields), on="click", clear=False, empty=False)


def _outline(base: alt.Chart, test: str) -> alt.Chart:
    """A frame in the followed row's colour round the cells of ``base`` for which the Vega expression ``test`` holds."""
    return base.transform_filter(test).mark_rect(fill=None, stroke=FOLLOW_COLOR, strokeWidth=3)


BLOCKED_ONLY = "datum.masked"
"""The filter of a heatmap's text layer that prints only the blocked cells' marks (its values left out)."""


def _heatmap_layers(
    df: pd.DataFrame,
    *,
    row: str,
    col: str,
    scheme: str,
    domain,
    diverging: bool,
    show_values: bool,
    cell_size: int,
    font_size: int,
    value_title: str,
    color_field: str = "value",
    follow_row: int | None = None,
    pick: bool = False,
    fit: bool = False,
    outline: str | None = None,
    pick_fields: tuple[str, ...] = ("row_index",),
    panel_outline: str | None = None,
    title=alt.Undefined,
    aria: bool = True,
    panel_fields: tuple[str, ...] = (),
    thin_col_labels: bool = False,
    col_labels_px: int | str | None = None,
    legend: bool = True,
    value_font_px: int | None = None,
    row_labels: bool = True,
    col_label_angle: str | None = None,
    cell_height: int | None = None,
) -> alt.LayerChart:
    cell_height = cell_height or cell_size
    df = _with_defaults(df, [row, col, "value", "row_index", "col_index"])
    rows = _ordered(df, row, "row_index")
    cols = _ordered(df, col, "col_index")
    domain = tuple(float(v) for v in domain) if domain is not None else color_domain(df["value"], diverging=diverging)
    scale = alt.Scale(scheme=scheme, domain=list(domain), domainMid=0 if diverging else alt.Undefined)
    by_row = color_field != "value"
    fit_room = heatmap_fit_room(rows if row_labels else [], font_size, value_title, by_row=by_row,
                                legend=legend) if fit else None
    base = alt.Chart().encode(x=_x(col, cols, font_size, cell_size, thin=thin_col_labels, min_extent=col_labels_px,
                                   fit_room=fit_room, angle=col_label_angle),
                              y=_y(row, rows, font_size, row_labels))
    # An overview without axes (``aria`` False): no white lines between its small cells and no spoken
    # description of each cell; each costs the browser a pass over tens of thousands of cells.
    cell = {"stroke": "white", "strokeWidth": 0.5} if aria else {"aria": False}
    shown = f"{VALID} && !datum.masked"
    if by_row:
        scale = alt.Scale(scheme=scheme, domain=[0, 1])

    backdrop = (
        base.transform_calculate(status=f"datum.masked ? 'blocked by the mask' : ({VALID} ? 'shown' : 'not a number')")
        .mark_rect(color=MASKED_COLOR, **cell)
        .encode(
            tooltip=[
                alt.Tooltip(f"{row}:N", title=row),
                alt.Tooltip(f"{col}:N", title=col),
                alt.Tooltip("label:N", title=value_title),
                alt.Tooltip("status:N", title="status"),
            ]
        )
    )
    every_cell_shown = _every_cell_shown(df, color_field)
    colored = (
        (base if every_cell_shown else base.transform_filter(shown))
        .mark_rect(**cell)
        .encode(
            color=alt.Color(
                f"{color_field}:Q",
                scale=scale,
                legend=alt.Legend(
                    title=_legend_title(value_title, by_row) if by_row else value_title,
                    titleFontSize=font_size,
                    labelFontSize=max(font_size - 2, MIN_LEGEND_LABEL_PX),
                    gradientLength=legend_length(cell_height * len(rows)),
                ) if legend else None,
            ),
            tooltip=[
                alt.Tooltip(f"{row}:N", title=row),
                alt.Tooltip(f"{col}:N", title=col),
                alt.Tooltip("value:Q", title=value_title, format=TOOLTIP_FORMAT),
            ],
        )
    )
    dark = (f"{shown} && ({_light_text_test(f'datum.{color_field}', scheme)})" if by_row
            else f"!datum.masked && {_text_color_test(domain, scheme, diverging)}")
    value_font = value_font_px or min(cell_value_font(cell_size, font_size, diverging=diverging, fit=fit,
                                                      chars=printed_chars(df)),
                                      int(cell_height / TEXT_LINE_EM))
    mark_font = min(_value_font_size(cell_size, font_size, chars=3),  # a blocked cell's "×" or "−∞": 1–2 characters
                    int(cell_height / TEXT_LINE_EM))
    hint, shorter_sent = None, ()
    if fit and show_values:
        # Only the browser knows how wide a fitted chart's cells are drawn: the numbers fill them up to value_font,
        # and a cell too narrow for MIN_FITTED_VALUE_PX shows its colour only (its value stays in the tooltip; a
        # line over the cells says so)
        # (a number that would print whole under SHORTER_BELOW_PX prints rounded shorter where that is larger)
        blocked = df["masked"].to_numpy(dtype=bool)
        df = df.assign(short=short_labels(df))  # (sent only where shorter: ``shorter_sent``)
        em = VALUE_CHAR_EM * max((len(str(label)) for label in df["label"][~blocked]), default=1)
        short_em = VALUE_CHAR_EM * max((len(str(label)) for label in df["short"][~blocked]), default=1)
        mark_em = MARK_CHAR_EM * max((len(str(label)) for label in df["label"][blocked]), default=1)
        tall = f"floor(bandwidth('y') / {TEXT_LINE_EM})"
        whole_font = f"min({value_font}, floor(bandwidth('x') / {em:.3g}), {tall})"
        short_font = f"min({value_font}, floor(bandwidth('x') / {short_em:.3g}), {tall})"
        shorter = f"(({whole_font}) < {SHORTER_BELOW_PX} && ({short_font}) > ({whole_font}))"
        number_font = f"({shorter} ? {short_font} : {whole_font})"
        fitted = (f"datum.masked ? min({max(mark_font, value_font)}, floor(bandwidth('x') / {mark_em:.3g}), {tall}) : "
                  f"{number_font}")
        if short_em < em:  # the whole number where it prints large enough (or the shorter is no larger)
            printed, shorter_sent = f"!datum.masked && {shorter} ? datum.short : datum.label", ("short",)
            text = base.mark_text(fontSize=alt.ExprRef(expr=fitted), text=alt.ExprRef(
                expr=f"({fitted}) >= {MIN_FITTED_VALUE_PX} ? ({printed}) : ''"))
        else:
            text = base.mark_text(fontSize=alt.ExprRef(expr=fitted)).encode(
                text=alt.condition(f"({fitted}) >= {MIN_FITTED_VALUE_PX}", alt.Text("label:N"), alt.value("")))
        text = text.encode(color=_colour_when(dark, LIGHT_TEXT, DARK_TEXT))
        hint = _colours_only_hint(f"({number_font}) < {MIN_FITTED_VALUE_PX}", font_size)
    else:
        text = base.mark_text(fontSize=value_font).encode(
            text=alt.Text("label:N"),
            color=_colour_when(dark, LIGHT_TEXT, DARK_TEXT),
        )
        if fit:  # a slide's chart the server found too narrow for its numbers (22 tokens showed colours without a word)
            hint = _colours_only_hint("true", font_size)
    if not (fit and show_values) and not every_cell_shown and mark_font > value_font:
        # (a blocked "×" was printed at the numbers' 8 px)
        text = text.encode(size=alt.SizeValue(**alt.when("datum.masked").then(alt.value(mark_font))
                                              .otherwise(alt.value(value_font))))
    if not show_values:
        text = text.transform_filter(BLOCKED_ONLY)
    if pick:
        colored = colored.add_params(_click_selection(pick_fields))
        backdrop = backdrop.add_params(_click_selection(pick_fields, name=PICK_BLOCKED))
    if every_cell_shown:
        # Nothing masked or missing: no grey backdrop, no "×" marks, no filter. The browser evaluates every
        # layer's expressions once per cell, which for a real model's layer × head grid is most of a redraw.
        layers = [colored]
        if show_values:
            layers.append(text)
    else:
        layers = [backdrop, colored, text]
    df = _columns_read(df, {row, col, "value", color_field, "row_index", "col_index", *pick_fields, *panel_fields,
                            *(() if every_cell_shown and not show_values else ("label", "masked")),
                            *shorter_sent})
    if hint is not None:
        layers.append(hint)
    if "label" in df.columns and (df["label"] == ASKED_MARK).any():
        # over the asked cell, so that its tooltip too says "?" (the coloured cell's gave the number away)
        cover = (base.transform_filter(f"datum.label === '{ASKED_MARK}'").mark_rect(fill="white", fillOpacity=0)
                 .encode(tooltip=[alt.Tooltip(f"{row}:N", title=row), alt.Tooltip(f"{col}:N", title=col),
                                  alt.Tooltip("label:N", title=value_title)]))
        layers.append(cover.add_params(_click_selection(pick_fields, name=PICK_ASKED)) if pick else cover)
    if follow_row is not None:
        outline = f"datum.row_index == {int(follow_row)}"
    if outline is not None:
        layers.append(_outline(base, outline))
    if panel_outline is not None:  # one frame around the whole panel (a rect with no x/y spans the view)
        layers.append(alt.Chart().transform_filter(panel_outline)
                      .transform_aggregate(cells="count()", groupby=["head_index"])
                      .mark_rect(fill=None, stroke=FOLLOW_COLOR, strokeWidth=4, aria=False))  # (nothing to name)
    size = {"width": "container", "height": "container"} if fit else {
        "width": cell_size * len(cols), "height": cell_height * len(rows)}
    return alt.layer(*layers, data=df, title=title, **size)


COLOURS_ONLY_HINTS = ("hover a cell for its number", "hover for numbers")
"""Said over the cells of a fitted heatmap that the browser draws too narrow for their numbers (longest first: the
first that fits the chart's width)."""


def _colours_only_hint(narrow: str, font_size: int) -> alt.Chart:
    """A layer that, where the Vega expression ``narrow`` holds (a fitted chart's cells drawn too narrow for their
    numbers, which only the browser knows), says on a line over the cells, at their right, that a cell's number is in
    its tooltip; otherwise it draws nothing. (A slide of 14 tokens showed colours only without a word.) The chart
    keeps its size: the line takes its height from the cells'."""
    font = max(font_size - 2, MIN_FITTED_VALUE_PX)
    text = " : ".join(f"({narrow}) && width >= {len(hint) * VALUE_CHAR_EM * font:.0f} ? '{hint}'"
                      for hint in COLOURS_ONLY_HINTS) + " : ''"
    # (an empty text takes a line's height too: where it says nothing it lies among the cells)
    return alt.Chart(alt.Data(values=[{}])).mark_text(
        align="right", baseline="bottom", fontSize=font, fontStyle="italic", color=HINT_COLOR,
        text=alt.ExprRef(expr=text), x=alt.ExprRef(expr="width"), y=alt.ExprRef(expr=f"({narrow}) ? -6 : height"))


HINT_COLOR = "#555"


def colours_only(spec: dict) -> bool:
    """Whether ``spec`` is a heatmap (a layered ``heatmap`` spec) that prints none of its cells' values: with
    ``show_values=False`` it has no text layer, or only the blocked cells' marks ("×", "−∞")."""
    layers = [layer for layer in spec.get("layer", []) if "data" not in layer]  # (not ``_colours_only_hint``'s line)
    marks = [(layer.get("mark", {}).get("type") if isinstance(layer.get("mark"), dict) else layer.get("mark"),
              layer.get("transform", [])) for layer in layers]
    is_heatmap = any(mark == "rect" for mark, _ in marks)
    return is_heatmap and not any(mark == "text" and {"filter": BLOCKED_ONLY} not in transform
                                  for mark, transform in marks)


def heatmap(
    df: pd.DataFrame,
    *,
    row: str = "query",
    col: str = "key",
    title: str = "",
    scheme: str = "viridis",
    domain=None,
    diverging: bool = False,
    show_values: bool = True,
    cell_size: int = 36,
    font_size: int = 14,
    value_title: str = "value",
    color_field: str = "value",
    follow_row: int | None = None,
    pick: bool = False,
    fit: bool = False,
    thin_col_labels: bool = False,
    col_labels_px: int | str | None = None,
    legend: bool = True,
    value_font_px: int | None = None,
    row_labels: bool = True,
    col_label_angle: str | None = None,
) -> alt.LayerChart:
    """A heatmap of a matrix frame (columns ``row``, ``col``, ``value``, ``row_index``,
    ``col_index``; optional ``label`` and ``masked`` as made by ``matrix_frame``).

    ``domain=(lo, hi)`` fixes the colour scale (use it to compare charts);
    ``diverging=True`` centres the scale at 0 (pass scheme="blueorange" or
    "redblue" with it). ``show_values`` prints ``label`` in each cell.
    ``color_field="row_scaled"`` colours each row on its own 0..1 range (the tooltip keeps the value);
    ``follow_row`` outlines that row; ``pick`` adds a click selection on the row (named ``PICK``);
    ``fit`` sizes the chart to its container instead of ``cell_size`` per cell, and the browser picks the angle of
    the column labels from the width they get; ``thin_col_labels`` then draws them upright and leaves out every
    other one while they would overlap; ``col_labels_px`` is the least height the column labels take, in pixels
    or as a Vega expression (charts side by side given the same start their rows level);
    ``legend=False`` leaves out the colour bar (charts side by side on one colour scale need only one);
    ``value_font_px`` sets the printed numbers' font (default: as large as ``cell_size`` holds);
    ``row_labels=False`` leaves out the row labels and their title (a chart to its left names the same rows);
    ``col_label_angle``: the column labels' angle, a Vega expression (``fitted_shared_angle``).
    """
    return _heatmap_layers(
        df,
        row=row,
        col=col,
        scheme=scheme,
        domain=domain,
        diverging=diverging,
        show_values=show_values,
        cell_size=cell_size,
        font_size=font_size,
        value_title=value_title,
        color_field=color_field,
        follow_row=follow_row,
        pick=pick,
        fit=fit,
        thin_col_labels=thin_col_labels,
        col_labels_px=col_labels_px,
        legend=legend,
        value_font_px=value_font_px,
        row_labels=row_labels,
        col_label_angle=col_label_angle,
        title=chart_title(title, font_size),
    )


def matrix_heatmap(
    df: pd.DataFrame,
    *,
    row: str = "token",
    col: str = "feature",
    scheme: str = "blueorange",
    diverging: bool = True,
    **options,
) -> alt.LayerChart:
    """:func:`heatmap` with defaults for signed tokens × features matrices (Q, K, V, context);
    other keyword options as for :func:`heatmap`.

    Expects ``matrix_frame(q, tokens, None, row_name="token", col_name="feature")``. Stretched to its container
    (``fit``), its feature labels thin out rather than overlap (q1, q3, q5, … in a third of a slide).
    """
    options.setdefault("thin_col_labels", options.get("fit", False))
    return heatmap(df, row=row, col=col, scheme=scheme, diverging=diverging, **options)


EMPTY_ROW_DOMAIN = (-1.0, 1.0)
"""The value axis of a row of signed scores with no finite value (every key blocked)."""


LEVEL_LABEL_SHRINK_PX = 2
"""How much smaller than its usual size a bar's value label may be printed to stay level over its bar: turned
upright, a slide's 18-px "0.107" over Generation's 52-px bars read worse than the same label level at 17 px. (At
4 px, a slide's bars that the browser then shrinks to a 1024-px window printed 11-px labels.)"""
MIN_LEVEL_LABEL_PX = 10
BAR_LABEL_CHAR_EM = 0.56
"""A bar's value label's width per character: its digits, point and sign in the text marks' sans-serif font."""


def _bars(df: pd.DataFrame, *, name: str, domain, font_size: int, cell_size: int, height: int, value_title: str,
          title=alt.Undefined):
    df = _with_defaults(df, [name, "value", "index"])
    order = _ordered(df, name, "index")
    if domain is None and not np.isfinite(pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)).any():
        domain = EMPTY_ROW_DOMAIN  # every key blocked: an axis around 0 (on its own it had one tick, "0.000000")
    y_scale = alt.Scale(domain=list(domain)) if domain is not None else alt.Scale(zero=True, padding=font_size + 6)
    y_axis = alt.Axis(title=value_title, labelFontSize=font_size, titleFontSize=font_size)
    y = alt.Y("value:Q", scale=y_scale, axis=y_axis)
    tooltip = [alt.Tooltip(f"{name}:N", title=name), alt.Tooltip("label:N", title=value_title)]
    exact = alt.Tooltip("value:Q", title=value_title, format=TOOLTIP_FORMAT)
    bar_tooltip = [alt.Tooltip(f"{name}:N", title=name), exact]
    base = alt.Chart().encode(x=_x(name, order, font_size, cell_size))
    bars = (
        base.transform_filter(VALID)
        .mark_bar()
        .encode(
            y=y,
            color=_colour_when("datum.value < 0", NEGATIVE_BAR_COLOR, POSITIVE_BAR_COLOR),
            tooltip=bar_tooltip,
        )
    )
    text_y = alt.Y("text_y:Q", scale=y_scale, axis=y_axis)
    labels = base.transform_calculate(text_y=f"{VALID} ? datum.value : 0").encode(
        y=text_y, text=alt.Text("label:N"), tooltip=tooltip
    )
    text_size = max(font_size - 2, 8)
    # a blocked key's "−∞" is below every score: at the plot's bottom edge, level (turned, "∞" reads as "8"). At
    # zero it stood above every bar of a row of negative scores, where positive scores would be.
    blocked = labels.transform_filter(f"!({VALID})").encode(y=alt.YValue(height)).mark_text(
        baseline="bottom", dy=-3, fontSize=text_size)
    label_chars = max((len(str(label)) for label in df["label"]), default=0)
    label_px = label_chars * text_size * BAR_LABEL_CHAR_EM
    level_size = min(text_size, int((cell_size - 2) / (BAR_LABEL_CHAR_EM * max(label_chars, 1))))
    if level_size >= max(text_size - LEVEL_LABEL_SHRINK_PX, MIN_LEVEL_LABEL_PX):  # level above (or below) its bar
        above = labels.transform_filter(f"{VALID} && datum.value >= 0").mark_text(
            baseline="bottom", dy=-3, fontSize=level_size
        )
        below = labels.transform_filter(f"{VALID} && datum.value < 0").mark_text(
            baseline="top", dy=3, fontSize=level_size
        )
        return alt.layer(bars, blocked, above, below, data=df, width=alt.Step(cell_size), height=height,
                         title=title)
    # Narrow bars: a level label is wider than its bar and runs into its neighbours' ("0.0860.072"). Turned
    # upright, each takes one line of text across; it sits inside a bar long enough to hold it (light text),
    # else beyond the bar's end. The exact value stays in the bar's tooltip.
    if domain is not None:  # the value range the axis spans: its domain, or the finite values and 0
        span = float(domain[1] - domain[0]) or 1.0
    else:
        finite = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)
        finite = finite[np.isfinite(finite)]
        span = (float(max(finite.max(), 0.0) - min(finite.min(), 0.0)) or 1.0) if finite.size else 1.0
    long_enough = f"{VALID} && abs(datum.value) / {span!r} * {height} >= {label_px + 8:.0f}"
    upright = {"angle": 270, "baseline": "middle", "fontSize": text_size}
    outside_up = labels.transform_filter(f"{VALID} && datum.value >= 0 && !({long_enough})").mark_text(
        align="left", dx=3, **upright
    )
    outside_down = labels.transform_filter(f"{VALID} && datum.value < 0 && !({long_enough})").mark_text(
        align="right", dx=-3, **upright
    )
    inside_up = labels.transform_filter(f"{long_enough} && datum.value >= 0").mark_text(
        align="right", dx=-3, color=LIGHT_TEXT, **upright
    )
    inside_down = labels.transform_filter(f"{long_enough} && datum.value < 0").mark_text(
        align="left", dx=3, color=LIGHT_TEXT, **upright  # white on the grey bar is 5 : 1
    )
    return alt.layer(bars, blocked, outside_up, outside_down, inside_up, inside_down, data=df,
                     width=alt.Step(cell_size), height=height, title=title)


def row_bars(
    df: pd.DataFrame,
    *,
    name: str = "key",
    title: str = "",
    domain=(0, 1),
    font_size: int = 14,
    cell_size: int = 36,
    height: int = 220,
    value_title: str = "weight",
) -> alt.LayerChart:
    """Bars for one query's row (columns ``name``, ``value``, ``index``; optional
    ``label``, ``masked`` as made by ``row_frame``), with the value printed on each bar.

    ``domain=(0, 1)`` suits weights; pass ``None`` for signed scores. Non-finite
    entries get no bar, only their label ("−∞") at the bottom edge, below every score.
    """
    size = {"font_size": font_size, "cell_size": cell_size, "height": height}
    return _bars(df, name=name, domain=domain, value_title=value_title, title=chart_title(title, font_size), **size)


def weight_bars_across(
    df: pd.DataFrame,
    *,
    name: str = "key",
    font_size: int = 14,
    row_px: int = 30,
    width: int = 240,
    value_title: str = "weight",
    value_font_px: int | None = None,
    axis_title: bool = True,
) -> alt.LayerChart:
    """One query's weights (0..1) as bars lying across, one row per key (``row_frame`` columns), the value at
    each bar's end: the keys' names read level as row labels, as in the heatmaps beside it. A bar long enough
    holds its value inside (light text), a short one has it just past its end. Every value is finite (no mask).
    ``value_font_px``: the values' font (by default the font less 2, within the row); without ``axis_title`` the
    weight axis has its numbers only (a heading over the chart names the weights)."""
    df = _with_defaults(df, [name, "value", "index"])
    order = _ordered(df, name, "index")
    x_scale = alt.Scale(domain=[0, 1])
    x_axis = alt.Axis(title=value_title if axis_title else None, labelFontSize=font_size, titleFontSize=font_size,
                      values=[0, 0.5, 1], format="~g", grid=True)
    x = alt.X("value:Q", scale=x_scale, axis=x_axis)
    base = alt.Chart().encode(y=_y(name, order, font_size), x=x,
                              tooltip=[alt.Tooltip(f"{name}:N", title=name),
                                       alt.Tooltip("value:Q", title=value_title, format=TOOLTIP_FORMAT)])
    bars = base.mark_bar(color=POSITIVE_BAR_COLOR, height={"band": 0.8})
    text_size = value_font_px or min(max(font_size - 2, 8), max(row_px - 6, 8))
    label_chars = max((len(str(label)) for label in df["label"]), default=0)
    inside = f"datum.value * {width} >= {label_chars * text_size * BAR_LABEL_CHAR_EM + 8:.0f}"
    values = base.encode(text=alt.Text("label:N"))
    in_bar = values.transform_filter(inside).mark_text(align="right", dx=-4, baseline="middle", fontSize=text_size,
                                                       color=LIGHT_TEXT)
    past_bar = values.transform_filter(f"!({inside})").mark_text(align="left", dx=4, baseline="middle",
                                                                 fontSize=text_size)
    return alt.layer(bars, in_bar, past_bar, data=df, width=width, height=alt.Step(row_px))


def row_bars_by_head(
    df: pd.DataFrame,
    *,
    columns: int = 2,
    name: str = "key",
    title: str = "",
    font_size: int = 14,
    cell_size: int = 36,
    height: int = 180,
    value_title: str = "weight",
) -> alt.FacetChart:
    """One query's row of weights in every head: ``row_bars`` panels (0..1) side by side, one chart.
    Expects ``row_frame`` columns plus ``head`` and ``head_index``."""
    _require(df, [name, "value", "index", "head", "head_index"])
    heads = _ordered(df, "head", "head_index")
    panel = _bars(df, name=name, domain=(0, 1), value_title=value_title, font_size=font_size, cell_size=cell_size,
                  height=height)
    header = alt.Header(title=None, labelFontSize=font_size + 1)
    # every panel names its keys (a wrapped facet labelled only its bottom row: heads 1-6 of 8 had bars and no words)
    return panel.facet(facet=alt.Facet("head:N", sort=tuple(heads), header=header),
                       columns=max(1, min(columns, len(heads))), spacing=24, title=chart_title(title, font_size),
                       resolve=alt.Resolve(axis=alt.AxisResolveMap(x="independent")))


def before_after_softmax(
    scaled_row_df: pd.DataFrame,
    weights_row_df: pd.DataFrame,
    *,
    name: str = "key",
    title: str = "",
    font_size: int = 14,
    cell_size: int = 36,
    height: int = 220,
    before_title: str = "scaled scores",
    after_title: str = "softmax weights",
    stacked: bool = False,
) -> alt.HConcatChart | alt.VConcatChart:
    """Side-by-side bars (one above the other when ``stacked``): one query's scaled (possibly masked) scores,
    then its softmax weights on a fixed 0..1 axis. Both frames as made by ``row_frame``.
    """
    size = {"font_size": font_size, "cell_size": cell_size, "height": height}
    before = _bars(scaled_row_df, name=name, domain=None, value_title="score",
                   title=chart_title(before_title, font_size), **size)
    after = _bars(weights_row_df, name=name, domain=(0, 1), value_title="weight",
                  title=chart_title(after_title, font_size), **size)
    concat = alt.vconcat if stacked else alt.hconcat
    return concat(before, after, resolve=alt.Resolve(scale=alt.ScaleResolveMap(y="independent")),
                  title=chart_title(title, font_size))


HEAD_GRID_SPACING_PX = 20
"""The gap between a head grid's panels."""


def head_grid(
    heads_df: pd.DataFrame,
    *,
    columns: int = 4,
    domain=(0, 1),
    cell_size: int = 24,
    font_size: int = 12,
    row: str = "query",
    col: str = "key",
    head: str = "head",
    scheme: str = "viridis",
    diverging: bool = False,
    show_values: bool = False,
    value_title: str = "weight",
    title: str = "",
    axes: bool = True,
    spacing: int = HEAD_GRID_SPACING_PX,
    selected: int | None = None,
    pick: bool = False,
    fit: bool = False,
    cell_height: int | None = None,
) -> alt.FacetChart | alt.LayerChart:
    """Small multiples, one heatmap per head, all on ONE colour scale.

    Expects ``heads_frame`` columns (``head``, ``head_index`` and the matrix
    columns). ``domain=None`` takes the extent over all heads. ``axes=False``
    drops the token axes of every panel (the tooltips still name both tokens),
    for an overview of many heads; ``spacing`` is the gap between panels in px.
    ``selected`` (a head_index) outlines that panel; ``pick`` lets a click on a panel select its head
    (selection ``PICK`` on ``head_index``). ``fit``: an overview without axes drawn as one view that fills its
    container (see ``fitted_grid_size``; a facet cannot be sized to its container), so that it shrinks to a narrow
    window and a click still lands on the head under the pointer; ``cell_size``, ``axes``, ``spacing`` and
    ``show_values`` are then left aside. ``cell_height``: the cells' height, when not ``cell_size`` (a slide's panels
    are wider than tall, so that their numbers fit while the rows fit the window).
    """
    _require(heads_df, [head, "head_index", "value"])
    heads = _ordered(heads_df, head, "head_index")
    if domain is None:
        domain = color_domain(heads_df["value"], diverging=diverging)
    if fit:
        return _fitted_head_grid(heads_df, columns=max(1, min(columns, len(heads))), domain=domain, row=row,
                                 col=col, head=head, scheme=scheme, diverging=diverging, font_size=font_size,
                                 value_title=value_title, title=title, selected=selected, pick=pick)
    layers = _heatmap_layers(
        heads_df,
        row=row,
        col=col,
        scheme=scheme,
        domain=domain,
        diverging=diverging,
        show_values=show_values,
        cell_size=cell_size,
        font_size=font_size,
        value_title=value_title,
        pick=pick,
        pick_fields=("head_index",),
        panel_outline=None if selected is None else f"datum.head_index == {int(selected)}",
        aria=axes,
        panel_fields=(head, "head_index"),
        thin_col_labels=not axes,  # no labels drawn: one angle, so one spec, for every cell size
        cell_height=cell_height,
    )
    return layers.facet(
        # Ordered by head_index (a sort list would compare every row's head name with each name in turn)
        facet=alt.Facet(f"{head}:N", sort=alt.EncodingSortField(field="head_index", op="min"),
                        header=alt.Header(title=None, labelFontSize=font_size + 1,
                                          labelPadding=alt.Undefined if axes else 1)),
        columns=max(1, min(columns, len(heads))),
        # Without axes a panel's name is the only thing between two rows of panels: it sits on its own panel and the
        # rows are further apart than that ("L4 H1" read as the name of the L3 panel above it)
        spacing=spacing if axes else alt.RowColnumber(row=spacing + font_size, column=spacing),
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="shared", x="shared", y="shared")),
        config=alt.Undefined if axes else alt.Config(axis=alt.AxisConfig(labels=False, ticks=False, title=None,
                                                                          domain=False)),
        title=chart_title(title, font_size),
    )


FIT_GRID_GAP = 0.07
"""The gap between two heads side by side in a fitted head grid, as a share of a panel's step."""
FIT_GRID_ROW_GAP = 0.25
"""The room above each row of panels of a fitted head grid (for the heads' names), as a share of a row's step."""
FIT_GRID_LEGEND_PX = 90
"""About how wide a fitted head grid's colour bar is drawn, with its title and numbers and the gap before it."""


def fitted_grid_size(heads: int, columns: int, width: float, font_size: int) -> tuple[float, float]:
    """About how large (width, height in px) a fitted ``head_grid`` of ``heads`` panels, ``columns`` to a row, is
    drawn ``width`` px wide with square panels: the height its container needs for that."""
    rows = -(-heads // columns)
    panel = (width - FIT_GRID_LEGEND_PX) * (1 - FIT_GRID_GAP) / (columns - FIT_GRID_GAP)
    title_px = 1.5 * (font_size + 2) + 8
    return width, title_px + rows * panel / (1 - FIT_GRID_ROW_GAP)


def _fitted_head_grid(heads_df: pd.DataFrame, *, columns: int, domain, row: str, col: str, head: str, scheme: str,
                      diverging: bool, font_size: int, value_title: str, title: str, selected: int | None,
                      pick: bool) -> alt.LayerChart:
    """``head_grid(fit=True)``: the heads as one view, each a band of a panel row and column, its cells placed
    inside the band by row and column index."""
    df = _with_defaults(heads_df, [row, col, "value", "row_index", "col_index"])
    panel_x = alt.X("panel_column:O", axis=None, scale=alt.Scale(paddingInner=FIT_GRID_GAP, paddingOuter=0))
    panel_y = alt.Y("panel_row:O", axis=None, scale=alt.Scale(paddingInner=FIT_GRID_ROW_GAP,
                                                              paddingOuter=FIT_GRID_ROW_GAP / 2, align=1))
    scale = alt.Scale(scheme=scheme, domain=[float(v) for v in domain], domainMid=0 if diverging else alt.Undefined)
    cells = alt.Chart().mark_rect(aria=False).encode(
        x=panel_x, y=panel_y,
        xOffset=alt.XOffset("col_index:O", scale=alt.Scale(paddingInner=0, paddingOuter=0)),
        yOffset=alt.YOffset("row_index:O", scale=alt.Scale(paddingInner=0, paddingOuter=0)),
        color=alt.Color("value:Q", scale=scale,
                        legend=alt.Legend(title=value_title, titleFontSize=font_size,
                                          labelFontSize=max(font_size - 2, MIN_LEGEND_LABEL_PX), gradientLength=200)),
        tooltip=[alt.Tooltip(f"{head}:N", title=head), alt.Tooltip(f"{row}:N", title=row),
                 alt.Tooltip(f"{col}:N", title=col),
                 alt.Tooltip("value:Q", title=value_title, format=TOOLTIP_FORMAT)],
    )
    if pick:
        cells = cells.add_params(_click_selection(["head_index"]))
    first_cell = alt.Chart().transform_filter("datum.row_index == 0 && datum.col_index == 0")
    names = first_cell.mark_text(baseline="bottom", dy=-3, fontSize=font_size + 1, color=DARK_TEXT).encode(
        x=panel_x, y=alt.Y("panel_row:O", axis=None, bandPosition=0), text=alt.Text(f"{head}:N"))
    layers = [cells, names]
    if selected is not None:
        layers.append(first_cell.transform_filter(f"datum.head_index == {int(selected)}")
                      .mark_rect(fill=None, stroke=FOLLOW_COLOR, strokeWidth=4, aria=False)
                      .encode(x=panel_x, y=panel_y))
    df = _columns_read(df, {row, col, head, "value", "row_index", "col_index", "head_index"})
    panels = [alt.CalculateTransform(calculate=f"floor(datum.head_index / {columns})", **{"as": "panel_row"}),
              alt.CalculateTransform(calculate=f"datum.head_index % {columns}", **{"as": "panel_column"})]
    return alt.layer(*layers, data=df, transform=panels, title=chart_title(title, font_size), width="container",
                     height="container", view=alt.ViewBackground(stroke=None))


MASK_MARK_SHARE = 0.7
"""A fitted mask grid's ✓ or × font as a share of its cell's smaller side (a ✓ is about 0.8 em wide)."""


def _with_states(df: pd.DataFrame) -> pd.DataFrame:
    if "state" in df.columns:
        return df
    source = "allowed" if "allowed" in df.columns else "value"
    _require(df, [source])
    allowed = df[source].fillna(0).astype(bool)
    return df.assign(state=np.where(allowed, ALLOWED, BLOCKED))


def mask_grid(
    df_bool: pd.DataFrame,
    *,
    row: str = "query",
    col: str = "key",
    title: str = "",
    cell_size: int = 36,
    font_size: int = 14,
    fit: bool = False,
    legend: bool = True,
    col_label_angle: str | None = None,
    col_labels_px: int | str | None = None,
    follow_row: int | None = None,
    pick: bool = False,
) -> alt.LayerChart:
    """A T×S grid of which query may attend to which key.

    Takes ``mask_frame`` output (``allowed``/``state`` columns) or any matrix frame
    whose ``value`` column is truthy where attending is allowed. ``fit``: drawn to fill its container (see
    ``render.show_chart``), the browser picks the angle of the key labels from the width they get.
    ``legend=False``: no legend (a title that says what ✓ means can stand for it). ``col_label_angle``,
    ``col_labels_px``: as for ``heatmap``. Fitted, its ✓ and × are as large as the cells the browser draws hold, up
    to ``font_size`` + 2. ``follow_row`` outlines that query's row and ``pick`` adds a click selection on a row
    (named ``PICK``), as on the heatmaps beside it.
    """
    _require(df_bool, [row, col, "row_index", "col_index"])
    df = _with_states(df_bool)
    rows = _ordered(df, row, "row_index")
    cols = _ordered(df, col, "col_index")
    fit_room = fit_room_px(rows, font_size, ["mask", ALLOWED, BLOCKED] if legend else []) if fit else None
    base = alt.Chart().encode(x=_x(col, cols, font_size, cell_size, fit_room=fit_room, angle=col_label_angle,
                                   min_extent=col_labels_px),
                              y=_y(row, rows, font_size))
    cells = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color(
            "state:N",
            scale=alt.Scale(domain=[ALLOWED, BLOCKED], range=[ALLOWED_COLOR, BLOCKED_COLOR]),
            legend=alt.Legend(title="mask", titleFontSize=font_size, labelFontSize=font_size) if legend else None,
        ),
        tooltip=[
            alt.Tooltip(f"{row}:N", title=row),
            alt.Tooltip(f"{col}:N", title=col),
            alt.Tooltip("state:N", title="mask"),
        ],
    )
    mark_font = _value_font_size(cell_size, font_size, chars=2) + 2  # one character a cell (was 6 digits' room)
    if fit:
        mark_font = alt.ExprRef(expr=f"min({font_size + 2}, floor(min(bandwidth('x'), bandwidth('y')) * "
                                     f"{MASK_MARK_SHARE}))")
    marks = base.transform_calculate(mark=f"datum.state === '{ALLOWED}' ? '✓' : '×'").mark_text(
        fontSize=mark_font
    ).encode(
        text=alt.Text("mark:N"),
        color=_colour_when(f"datum.state === '{ALLOWED}'", LIGHT_TEXT, DARK_TEXT),
    )
    if pick:
        cells = cells.add_params(_click_selection(["row_index"]))
    layers = [cells, marks]
    if follow_row is not None:
        layers.append(_outline(base, f"datum.row_index == {int(follow_row)}"))
    return alt.layer(*layers, data=df, width=cell_size * len(cols), height=cell_size * len(rows),
                     title=chart_title(title, font_size))


LINE_LABEL_GAP_PX = 8
"""The gap between a word of the lines chart and the ends of its lines."""


def lines_label_room_px(labels: list[str], font_size: int) -> float:
    """The width the lines chart keeps on each side for the words ``labels`` and their gap to the lines."""
    return label_px(labels, font_size) + LINE_LABEL_GAP_PX


LINES_SOLID_AT_UNIFORM = 3
"""A line of the lines chart is fully opaque from this many times the uniform weight 1/S of its S keys."""


def lines_opacity_scale(keys: int) -> alt.Scale:
    """The lines' opacity by weight, relative to the uniform weight 1/``keys``: solid from ``LINES_SOLID_AT_UNIFORM``
    times it, faint at it, rising faster than the weight in between (a power scale). Linear in the weight from 0 to
    1, 7 keys' usual weights (0.1–0.3) were lines of opacity 0.1–0.3, too pale on a projector."""
    top = min(1.0, LINES_SOLID_AT_UNIFORM / max(keys, 1))
    return alt.Scale(type="pow", exponent=2, domain=[0, top], range=[0.03, 1], clamp=True)


def lines_view(
    df: pd.DataFrame,
    *,
    row: str = "query",
    col: str = "key",
    title: str = "",
    follow_row: int | None = None,
    font_size: int = 14,
    row_height: int = 26,
    width: int = 360,
    pick: bool = False,
) -> alt.LayerChart:
    """The weights of one head as lines: queries in a left column, keys in a right one, one line per pair
    with opacity and width growing with the weight (a matrix frame of weights, as for :func:`heatmap`).

    The followed query's lines are drawn in ``FOLLOW_COLOR``; ``pick`` lets a click on a query (its
    label or a line) select it (selection ``PICK`` on ``row_index``). Blocked pairs (``masked``) get no line.
    ``width`` (px) holds the words on both sides (``lines_label_room_px``) and the lines between them.
    """
    df = _with_defaults(df, [row, col, "value", "row_index", "col_index"])
    rows, cols = _ordered(df, row, "row_index"), _ordered(df, col, "col_index")
    height = row_height * max(len(rows), len(cols))
    positions = alt.Scale(domain=[-0.5, max(len(rows), len(cols)) - 0.5], reverse=True)
    room = lines_label_room_px(rows + cols, font_size)
    beside = room / max(width - 2 * room, 1)
    sides = alt.Scale(domain=[-beside, 1 + beside])
    no_axis = alt.Axis(labels=False, ticks=False, domain=False, grid=False, title=None)
    followed = "false" if follow_row is None else f"datum.row_index == {int(follow_row)}"
    line = (
        alt.Chart()
        .transform_filter(f"{VALID} && !datum.masked && datum.value > 0.005")
        .transform_calculate(left="0", right="1")
        .mark_rule()
        .encode(
            x=alt.X("left:Q", scale=sides, axis=no_axis),
            x2=alt.X2("right:Q"),
            y=alt.Y("row_index:Q", scale=positions, axis=no_axis),
            y2=alt.Y2("col_index:Q"),
            opacity=alt.Opacity("value:Q", scale=lines_opacity_scale(len(cols)), legend=None),
            strokeWidth=alt.StrokeWidth("value:Q", scale=alt.Scale(domain=[0, 1], range=[1, 7]), legend=None),
            color=_colour_when(followed, FOLLOW_COLOR, POSITIVE_BAR_COLOR),
            tooltip=[alt.Tooltip(f"{row}:N", title=row), alt.Tooltip(f"{col}:N", title=col),
                     alt.Tooltip("value:Q", title="weight", format=TOOLTIP_FORMAT)],
        )
    )
    left_labels = (
        alt.Chart()
        .transform_filter("datum.col_index == 0")
        .transform_calculate(at="0")
        .mark_text(align="right", dx=-LINE_LABEL_GAP_PX, fontSize=font_size)
        .encode(x=alt.X("at:Q", scale=sides, axis=no_axis),
                y=alt.Y("row_index:Q", scale=positions, axis=no_axis), text=alt.Text(f"{row}:N"),
                color=_colour_when(followed, FOLLOW_COLOR, DARK_TEXT))
    )
    right_labels = (
        alt.Chart()
        .transform_filter("datum.row_index == 0")
        .transform_calculate(at="1")
        .mark_text(align="left", dx=LINE_LABEL_GAP_PX, fontSize=font_size)
        .encode(x=alt.X("at:Q", scale=sides, axis=no_axis),
                y=alt.Y("col_index:Q", scale=positions, axis=no_axis), text=alt.Text(f"{col}:N"),
                color=alt.ColorValue(DARK_TEXT))
    )
    if pick:
        left_labels = left_labels.add_params(_click_selection(["row_index"]))
    title = chart_title(title, font_size, width=width,
                        subtitle="click a word on the left to follow it" if pick else "")
    return alt.layer(line, left_labels, right_labels, data=df, width=width, height=height,
                     view=alt.ViewBackground(stroke=None), title=title)
