"""Today's attention: heads that share keys and values, the KV cache's memory, sliding windows through depth."""

from dataclasses import replace

import pandas as pd
import streamlit as st

from attention_core import (MAX_CONTEXT_LENGTH, MAX_HEADS, MAX_LAYERS, MAX_WINDOW, AttentionInputError,
                            compare_kv_sharing, divisors, kv_cache_table, reach_span, sliding_window_mask,
                            sliding_window_reach, trace_attention)
from attention_ui import charts, frames
from attention_ui.checks.modern import modern_questions
from attention_ui.controls import BOUND, lesson_settings, show_slide_row, stop_page
from attention_ui.modern import cache_bars, cache_table_frame, cache_unit, reach_grid, sharing_diagram, sharing_takeaway
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_chart
from attention_ui.text import counted, repeated_words_note, says_why_words_repeat
from attention_ui.url_state import check_linked_choice, show_link_notes
from attention_ui.views import (StageView, in_the_sidebar, mask_chart, outline_note, panel_prints_values, show_chart,
                                show_table, slide_mask_pair, slide_panel_width, token_heatmap)

BYTES = {"16-bit (fp16 / bf16)": 2, "8-bit": 1, "32-bit (fp32)": 4}
CONTEXT_LENGTHS = [2**n for n in range(8, MAX_CONTEXT_LENGTH.bit_length())]  # 256 … 1,048,576 tokens

INTRO = ("Today's language models keep the attention you stepped through. Many let several query heads **share one "
         "key/value head**; some (Mistral 7B, some of Gemma 2's layers) let a token look only a **window** back; all "
         "generate text one token at a time from a **cache** of keys and values (see the Generation page), which "
         "sharing and windows make smaller.")
MORE_HEADS_KEY = "more_heads_undo"  # what "Use 4 heads on every page" changed, so that a click can undo it
KV_HEADS_FOR_KEY = "kv_heads_for"  # the number of heads the chosen g was drawn for


def use_more_heads(more: int, before: int, g_before: int) -> None:
    """Set the lesson's number of heads (every page uses it) and g, and remember what they were."""
    st.session_state.update(heads=more, kv_heads=more // 2)
    st.session_state[MORE_HEADS_KEY] = {"to": more, "from": before, "g": g_before}


def back_to_fewer_heads() -> None:
    undo = st.session_state.pop(MORE_HEADS_KEY, None)
    if undo:
        st.session_state.update(heads=undo["from"], kv_heads=undo["g"])


def explain_sharing() -> None:
    st.markdown("With **g** key/value heads for **h** query heads, query head i reads key/value head ⌈i / (h/g)⌉ "
                "(heads counted from 1, as in the diagram: each run of h/g query heads shares one key/value head): "
                "g = h is the original multi-head attention, g = 1 is multi-query attention, anything between is "
                "grouped-query attention (Llama 2 70B, Llama 3, Mistral).")
    st.latex(r"\mathrm{head}_i = \mathrm{Attention}\big(X W_Q^{(i)},\; X W_K^{(\lceil i/(h/g) \rceil)},\; "
             r"X W_V^{(\lceil i/(h/g) \rceil)}\big),\qquad i = 1,\dots,h")


settings = lesson_settings("Modern attention: shared keys and values, sliding windows")
config, lesson = settings.config, settings.lesson
h = config.num_heads
labels = frames.AxisLabels(settings.labels)
presenter = settings.presenter
if presenter:  # a slide opens on the diagrams; the introduction is one click away
    with st.expander("What today's models change"):
        st.markdown(INTRO)
else:
    st.markdown(INTRO)

# ---------------------------------------------------------------- 1. sharing keys and values
st.subheader("1 · Multi-head, grouped-query, multi-query")
if not presenter:
    explain_sharing()
shared = None  # the key/value heads g of section 1, when it shows them
if h == 1:
    st.info(f"There is only one head, so there is nothing to share. Raise “Number of heads” {in_the_sidebar()} "
            "(4 or 8 show it best).")
    if presenter:
        explain_sharing()
else:
    diagrams = st.container() if presenter else None  # on a slide the diagrams come first, their controls under them
    def grouped_default(n: int) -> int:  # the largest g below n heads that divides them
        return max(d for d in divisors(n) if d < n)

    default_g = grouped_default(h)
    # More heads set elsewhere take g to their own grouped-query default when g was the old one's: a lecturer who
    # went from 2 heads to 4 kept g = 1 (multi-query) where grouped-query was wanted.
    before = st.session_state.get(KV_HEADS_FOR_KEY)
    if (before is not None and before != h and before > 1
            and st.session_state.get("kv_heads") == grouped_default(before)):
        st.session_state["kv_heads"] = default_g
    st.session_state[KV_HEADS_FOR_KEY] = h
    check_linked_choice("kv_heads", range(1, h + 1), f"there are {h} heads")
    show_link_notes(key="kv_heads_link_notes")
    g = st.columns(3)[0].selectbox(  # any g up to h may be tried; one that does not divide h gets a message
        "Key/value heads g", range(1, h + 1), index=default_g - 1, key="kv_heads",
        help=f"Must divide the number of heads h = {h}: {', '.join(map(str, divisors(h)))}.", **BOUND)
    if len(divisors(h)) == 2:
        where = "above" if presenter else "below"
        st.info(f"With h = {h} heads the only groupings are g = 1 (the same as multi-query) and g = {h} (the same "
                f"as multi-head), so the diagrams {where} show only those two. Set “Number of heads” "
                f"{in_the_sidebar()} to 4 or 8 to see grouped-query attention between them.")
        more = next((n for n in (4, 8) if n > h and n <= MAX_HEADS
                     and (config.init != "identity" or config.d_model % n == 0)), None)
        if more is not None:  # one click instead of a trip to the settings; it says that every page changes
            st.button(f"Use {more} heads on every page", key="use_more_heads", on_click=use_more_heads,
                      args=(more, h, int(g)), icon=":material/view_module:",
                      help=f"Sets “Number of heads” to {more} for the whole lesson, not only this page: Multi-head, "
                           "Step through, Generation and the other pages use it too. A button then takes you back.")
    undo = st.session_state.get(MORE_HEADS_KEY)
    if undo and undo["to"] == h:
        st.info(f"The lesson now uses **{h} heads on every page** (before: {undo['from']}): Multi-head, Step "
                f"through, Generation and the other pages show {h} too.", icon=":material/view_module:")
        st.button(f"Back to {undo['from']} heads", key="back_to_fewer_heads", on_click=back_to_fewer_heads,
                  icon=":material/undo:")
    elif undo:  # the number of heads was changed some other way since: nothing to undo here
        del st.session_state[MORE_HEADS_KEY]
    if presenter:  # under the diagrams and their controls
        explain_sharing()
    try:
        traces = compare_kv_sharing(lesson.x, lesson.projections, int(g), mask=lesson.mask)
    except AttentionInputError as err:
        st.warning(f"**Please choose another number of key/value heads.** {err}", icon=":material/warning:")
        traces = None
    if traces is not None:
        shared = int(g)
        # grouped-query means 1 < g < h; a g at either end is that end, and its diagram is drawn once, as "your g"
        chosen = "grouped-query" if 1 < shared < h else "multi-query" if shared == 1 else "multi-head"
        drawn = {kind: trace for kind, trace in traces.items() if kind == chosen or kind != "grouped-query"}
        yours = "" if chosen == "grouped-query" else " (your g)"
        side_by_side = h <= 4  # more heads need a full row each to stay readable
        with diagrams or st.container():
            cols = st.columns(len(drawn)) if side_by_side else [st.container() for _ in drawn]
        for col, (kind, trace) in zip(cols, drawn.items()):
            groups = [trace.kv_group(i) for i in range(h)]
            title = f"{kind}: g = {trace.kv_groups}" + (yours if kind == chosen else "")
            with col:
                options = {"title": title,
                           "width": 260 if side_by_side else 70 * h,
                           "font_size": settings.font_size}
                show_chart(cached_chart(("sharing", h, tuple(groups), options),
                                        lambda: sharing_diagram(h, groups, **options)))
        st.markdown(f"The grouped variants here are made from the multi-head weights by **averaging the W_K and W_V "
                    "columns of each group**. Ainslie et al. (2023) start converting a trained model that way and "
                    "then train it a little longer. This page skips that training, so its grouped heads' attention "
                    "weights differ from the multi-head ones more than a trained model's would. The grouped heads' "
                    f"weights for your sentence, head by head (g = {shared}: {chosen}):")
        grouped = traces["grouped-query"]
        per_row = min(h, 4)
        # On a slide as wide as the slide allows (900 px in all left 2 heads of 11 tokens 13-px numbers)
        across = slide_panel_width(labels, settings.font_size, per_row) if settings.presenter else 680 // (
            per_row * len(labels))
        cell = max(10, min(settings.cell_size - 8, across))

        values = panel_prints_values(cell, settings.font_size, signed=False)  # as Multi-head's panels print them

        def grouped_grid():
            names = [f"head {i + 1} · reads KV{grouped.kv_group(i) + 1}" for i in range(h)]
            grid = frames.heads_frame(grouped.weights, labels, labels, head_labels=names)
            return charts.head_grid(grid, columns=per_row, domain=(0, 1), cell_size=cell, font_size=settings.font_size,
                                    show_values=values)

        show_chart(cached_chart(("grouped grid", grouped.weights, tuple(labels), grouped.kv_groups, per_row, cell,
                                 settings.font_size, values), grouped_grid))
        if says_why_words_repeat(settings.config, settings.presenter):
            twins = repeated_words_note(lesson.tokens, labels)
            if twins:
                st.caption(twins)
        base = traces["multi-head"]
        d_k, d_v = base.d_k, base.d_v
        summary = pd.DataFrame({
            "attention": [kind + (yours if kind == chosen else "") for kind in drawn],
            "key/value heads g": [t.kv_groups for t in drawn.values()],
            "numbers cached per token and layer": [t.kv_groups * (d_k + d_v) for t in drawn.values()],
            "largest weight change vs multi-head": [
                f"{float((t.weights - base.weights).abs().max()):.3f}" for t in drawn.values()],
        })
        show_table(summary, width="content")
        st.success(sharing_takeaway(h, int(g)))

# ---------------------------------------------------------------- 2. KV-cache memory
st.subheader("2 · How big the KV cache gets")
st.markdown("While generating, every layer keeps the key and value of every earlier token. Per token that is")
st.latex(r"\text{bytes per token} = 2_{(K,V)} \times \text{layers} \times g \times d_{head} \times "
         r"\text{bytes per number}")
st.caption("d_head is each head's d_k, which equals its d_v in these models: 2 × d_head is the d_k + d_v of a key "
           "and a value.")
check_linked_choice("context_length", [f"{n:,}" for n in CONTEXT_LENGTHS],
                    f"a power of 2 from {CONTEXT_LENGTHS[0]:,} to {CONTEXT_LENGTHS[-1]:,}")
show_link_notes(key="context_link_notes")
UNIT_FORMAT = {"MiB": "%,.0f", "GiB": "%,.1f"}  # (a rolling buffer's 512 MiB is 0.5 GiB)
UNIT_HELP = {"MiB": "1 MiB = 1,024 KiB, about a million bytes", "GiB": "1 GiB = 1,024 MiB, about a billion bytes"}
left, right, _ = st.columns(3)
context = left.select_slider("Context length (tokens)", CONTEXT_LENGTHS, value=8192, format_func="{:,}".format,
                            key="context_length", **BOUND)
precision = right.selectbox("Numbers stored as", list(BYTES), key="cache_precision",
                            help="How many bytes each cached number takes. fp16 and bf16 are the two 16-bit "
                                 "floating-point formats most models run in (bf16 keeps fp32's range with fewer "
                                 "digits); fp32 is the 32-bit float this app computes in; 8-bit caches round each "
                                 "number to one byte.", **BOUND)
try:
    rows = kv_cache_table(int(context), BYTES[precision])
except (AttentionInputError, OverflowError) as err:
    st.warning(f"**Please choose another context length.** {err}", icon=":material/warning:")
    rows = None
if rows is not None:
    table = cache_table_frame(rows)
    unit = cache_unit(rows)[0]
    number = st.column_config.NumberColumn
    # on a slide the bars and their key come first, under the controls: after the table they were cut at the
    # window's foot, their key out of sight
    first, second = st.container(), st.container()
    table_box, bars_box = (second, first) if settings.presenter else (first, second)
    with table_box:
        show_table(table, width="stretch",
                   column_config={"attention": None, "model": st.column_config.TextColumn("model", width=112),
                                  "layers": number("L", width=40), "heads": number("h", width=40),
                                  "kv heads": number("g", width=40), "head size": number("d_head", width=62),
                                  "window": st.column_config.TextColumn("window", width=62),
                                  "longest context": number("max context", format="%,d", width=94,
                                                            help="the most positions its configuration allows "
                                                                 "(its position limit); it may have been trained "
                                                                 "on shorter texts"),
                                  "KiB per token": number("KiB / token", format="%.0f", width=86,
                                                          help="1 KiB = 1,024 bytes"),
                                  "cached tokens": number("cached", format="%,d", width=64,
                                                          help="tokens in the cache"),
                                  f"cache {unit}": number(f"cache {unit}", format=UNIT_FORMAT[unit], width=84,
                                                          help=UNIT_HELP[unit]),
                                  f"cache {unit} if multi-head": number(
                                      f"{unit} if g = h", format=UNIT_FORMAT[unit], width=96,
                                      help="the cache if every query head had its own key and value head (g = h)")})
    with bars_box:
        bars_width = 760 if settings.presenter else 560
        show_chart(cached_chart(("cache bars", int(context), BYTES[precision], settings.font_size, bars_width),
                                lambda: cache_bars(rows, context=int(context), font_size=settings.font_size,
                                                   width=bars_width)))
    st.caption("Shapes from each model's published configuration. Mistral 7B keeps only its last 4,096 tokens "
               "(a rolling buffer: each new token's keys and values overwrite the oldest), so its cache stops growing.")
    beyond = [r["model"] for r in rows if r["longest context"] and int(context) > r["longest context"]]
    if beyond:
        st.caption(f"{int(context):,} tokens is more than {', '.join(beyond)} can read (its position limit): "
                   "such a model never holds that many tokens, so its row shows the cache it would have if it could "
                   "read them, and the chart draws it pale and marks it “what-if”.")
    st.success("Takeaway: sharing key/value heads (g < h) divides the cache by h / g, one main reason long "
               "contexts fit in memory.")

# ---------------------------------------------------------------- 3. sliding windows
# On a slide, what a window's height keeps besides the window's mask and weights: the menu bar, the section's heading,
# words, formula and controls, so that they fill one screen once a clicker's press brings the heading up (in a third
# of the slide each, an 11-token sentence's weights printed 13 px)
WINDOW_ROOM_PX = 330
st.subheader("3 · Sliding-window attention")
st.markdown("Each token may attend only to itself and the **w − 1** tokens before it. One layer sees w tokens; "
            "but layer 2 reads outputs that already mixed w tokens each, so the reach grows with depth. Here every "
            "head has its own keys and values (g = h), whatever g you chose in section 1.")
# On a slide the controls sit beside the formula, so that the mask and weights under them fit the same screen
formula, controls = st.columns([3, 2], vertical_alignment="center") if presenter else (st.container(), None)
formula.latex(r"M_{ij} = \begin{cases} 0 & 0 \le i - j < w \\ -\infty & \text{otherwise} \end{cases}"
              r"\qquad \text{reach after } L \text{ layers} = L\,(w - 1) + 1")
T = len(labels)
left, right = controls.columns([3, 2]) if presenter else st.columns(3)[:2]
window = left.number_input(f"Window w (tokens, up to {MAX_WINDOW})", min_value=None, max_value=None, value=3, step=1,
                           key="window", **BOUND)
layers = right.slider("Layers stacked", 1, MAX_LAYERS, 3, key="window_layers", **BOUND)
if not 1 <= int(window) <= MAX_WINDOW:  # (the rest of the section stays, with the nearest window allowed)
    typed, window = int(window), min(max(int(window), 1), MAX_WINDOW)
    st.warning(f"**Please choose another window.** The window must be a whole number from 1 to {MAX_WINDOW} tokens, "
               f"got {typed}. The charts below show w = {window}, the nearest allowed.", icon=":material/warning:")
try:
    mask = sliding_window_mask(T, int(window))
    windowed = trace_attention(lesson.x, **lesson.projections.as_kwargs(), mask=mask)
    reach = sliding_window_reach(T, int(window), int(layers))
except AttentionInputError as err:
    st.warning(f"**Please choose another window.** {err}", icon=":material/warning:")
    stop_page()

cell = max(8, min(settings.cell_size - 6, (640 if settings.presenter else 330) // T))  # two charts side by side
# The weights are drawn as on every other page (token_heatmap): keys outside the window grey with ×, not a dark 0.
view = StageView(windowed, list(labels), settings.follow, settings.head, cell, settings.font_size,
                 colour=settings.colour)
window_titles = (f"window w = {int(window)}", f"weights of head {settings.head + 1}")
if settings.presenter:  # as Masking's slide draws a mask beside its weights: one set of row labels, the screen's size
    slide_view = replace(view, fit=True)
    show_slide_row("window_pair", slide_view, slide_mask_pair(slide_view, window_titles[0],
                                                              windowed.weights[settings.head], window_titles[1],
                                                              weights=True), WINDOW_ROOM_PX)
else:
    left, right = st.columns(2)
    with left:
        show_chart(mask_chart(mask, labels, labels, title=window_titles[0], cell_size=view.fit_cell(T + 3, 0.5),
                              font_size=settings.font_size))
    with right:
        show_chart(token_heatmap(view, windowed.weights[settings.head], window_titles[1], weights=True, share=0.5))
    st.caption(outline_note(labels[settings.follow]))
layer_labels = [f"after layer {i + 1}" for i in range(int(layers))]
reach_cell = max(8, min(settings.cell_size - 6, (1000 if settings.presenter else 640) // T))  # one chart, full width
reach_title = f"which tokens can reach the last token, {labels[-1]}"
show_chart(cached_chart(("reach", reach, tuple(labels), reach_cell, settings.font_size, reach_title),
                        lambda: reach_grid(reach[:, -1], layer_labels, labels, cell_size=reach_cell,
                                           font_size=settings.font_size, title=reach_title)))
span = reach_span(int(window), int(layers))
reach_words = f"L·(w − 1) + 1 = {span}" + (f", more than the sentence's {T}: it reaches them all" if span > T else "")
st.markdown(f"After {counted(int(layers), 'layer')} the last token can draw on **{min(span, T)} of {T}** tokens "
            f"({reach_words}).")
show_page_questions("modern-attention", modern_questions(
    num_heads=h, kv_heads=shared, d_k=lesson.trace.d_k, d_v=lesson.trace.d_v, window=int(window), layers=int(layers)))
st.success("Takeaway: a window keeps each token's cost and the cache's size fixed (a layer's cost grows as T·w, "
           "not T²), and stacking layers still lets "
           "information travel far: with Mistral 7B's 32 layers and w = 4,096, the reach L·(w − 1) + 1 is about "
           "131,000 tokens, more than the 32,768 it can read at all (the table above).")
