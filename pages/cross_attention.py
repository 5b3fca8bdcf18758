"""Cross-attention: queries from one sentence, keys and values from another (T × S weights)."""

from dataclasses import replace

import streamlit as st

from attention_core import (AttentionInputError, MAX_SENTENCE_CHARS, MAX_TOKENS, cross_attention, source_tokens)
from attention_ui import charts, frames
from attention_ui.checks.why import cross_questions
from attention_ui.controls import (BOUND, DEFAULTS, keep_page_settings, lesson_settings, offer_first_tokens,
                                   show_slide_row, stop_page)
from attention_ui.questions import show_page_questions
from attention_ui.render import cached_spec
from attention_ui.text import counted, plain, repeated_words_note, says_why_words_repeat, size_in_words
from attention_ui.views import (StageView, in_the_sidebar, numbers_table, prints_values, show_chart,
                                slide_bar_px, slide_token_pair, token_heatmap)
from attention_ui.why import half_share, page_slider, source_word_vectors

KEYS = ("cross_source", "cross_pad", "cross_pad_to")
# On a slide, what a window's height keeps besides the weights: the menu bar, the page's title, the section's heading
# and its line of words, so that they fill the first screen
SLIDE_ROOM_PX = 330
DEFAULT_SOURCE = "Le chat s'est assis sur le tapis."

settings = lesson_settings("Cross-attention")
half = half_share(settings.presenter)
keep_page_settings(KEYS)
lesson, config, head = settings.lesson, settings.config, settings.head
presenter = settings.presenter
# On a slide the weights come first, under the title, so that the hall has a chart to look at: the two sentences,
# the introduction and the encoder–decoder diagram follow them (on a page they lead up to the weights).
weights_box = st.container() if presenter else None


def shown_number(section: int) -> int:
    """Section ``section``'s number (of 3) in the order shown: a slide shows the sections in the opposite order, the
    weights first."""
    return 4 - section if presenter else section


def numbered(section: int, title: str) -> str:
    """Section ``section``'s heading, numbered in the order shown."""
    return f"{shown_number(section)} · {title}"


def introduce() -> None:
    """The page's introduction, its formula and where cross-attention sits in an encoder–decoder."""
    st.markdown(
        "In self-attention a sentence looks at itself. In **cross-attention** the queries come from one "
        "sequence and the keys and values from another. A translation model's decoder, writing the English "
        "sentence, asks questions with its own tokens and reads the answers from the encoded source sentence. "
        "T queries meet S keys, so the weights form a T × S grid that need not be square. (Here S counts the "
        "source's tokens, as in PyTorch's shapes; it is not the score matrix S = QKᵀ of Step through.)"
    )
    st.latex(r"Q = X_{\text{target}} W_Q,\quad K = X_{\text{source}} W_K,\quad V = X_{\text{source}} W_V,\qquad "
             r"A = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) \in \mathbb{R}^{T \times S}")

    st.subheader(numbered(1, "Where each attention sits in an encoder–decoder"))
    st.graphviz_chart(
        """
        digraph {
          rankdir=LR; bgcolor="transparent"; compound=true;
          node [shape=box, style="rounded,filled", fillcolor="#eef2ff", color="#3b5bdb", fontname="sans-serif",
                fontsize=13];
          edge [color="#555555", fontname="sans-serif", fontsize=11];
          subgraph cluster_enc { label="encoder (reads the source)"; fontname="sans-serif"; color="#adb5bd";
            src [label="source tokens"]; es [label="self-attention\\n(every source token\\nsees every other)"];
            src -> es; }
          subgraph cluster_dec { label="decoder (writes the target)"; labelloc="b"; fontname="sans-serif";
            color="#adb5bd";
            tgt [label="target tokens"]; ds [label="masked self-attention\\n(no peeking ahead)"];
            ca [label="cross-attention\\nQ from the decoder,\\nK and V from the encoder", fillcolor="#fff3bf",
                color="#f08c00"];
            out [label="next word"]; tgt -> ds -> ca -> out; }
          es -> ca [label="K, V"];
        }
        """,
        # its labels as large as the page allows (the decoder's title sits below, clear of the arrow)
        width="stretch",
    )


if not presenter:
    introduce()

st.subheader(numbered(2, "Two sentences"))
left, right = st.columns(2)
padded = lesson.is_padding.count(True)  # the sidebar's padding mask adds [PAD] tokens, and they ask too
left.markdown(f"**Queries (the target):** your sentence, {counted(len(lesson.tokens) - padded, 'token')}"
              + (f", and {padded} [PAD] after it (the padding mask {in_the_sidebar()}), whose queries read the "
                 "source too." if padded else "."))
with right:
    source = st.text_input("Keys and values (the source)", DEFAULT_SOURCE, key="cross_source",
                           max_chars=MAX_SENTENCE_CHARS, help=f"At most {MAX_TOKENS} tokens.", **BOUND)
if source.strip() == DEFAULT_SOURCE and config.sentence.strip() != DEFAULTS.sentence:
    # a student's own sentence attended to the example's translation of another one, without a word on it
    right.caption("This source is the example's, a translation of “The cat sat on the mat.”, not of your sentence. "
                  "In a translator the source is the sentence being translated: type a translation of yours here to "
                  "keep the picture true (this layer is untrained, so its weights do not pick matching words yet).")
pad = st.toggle("Pad the source, as in a batch of sentences of different lengths", key="cross_pad", **BOUND)
pad_to = 0
if pad:
    try:
        source_length = len(source_tokens(source)[0])
    except AttentionInputError:
        source_length = 1  # (the source's own message comes below)
    if source_length < MAX_TOKENS:  # a padded length shorter than the source is no choice: the slider starts there
        pad_to = page_slider("Pad the source to … tokens", source_length, MAX_TOKENS, max(12, source_length),
                             "cross_pad_to", help=f"From the source's own {counted(source_length, 'token')} "
                             f"up to {MAX_TOKENS}.")
    else:
        st.caption(f"The source already has {MAX_TOKENS} tokens, the most a sentence may have: there is no room "
                   "to pad it.")

try:
    words, is_padding = source_tokens(source, pad_to)
    vectors = source_word_vectors(config, [w for w, p in zip(words, is_padding) if not p])
    cross = cross_attention(lesson, source, pad_to=pad_to, source_vectors=vectors)
except AttentionInputError as err:
    # the core's own words for an empty text suggest the lesson's English example, not the source's
    problem = "It is empty: type a few words in its box, or use the example below." if not source.strip() else err
    st.error(f"**Please adjust the source sentence.** {problem}", icon=":material/warning:")
    offer_first_tokens(source, "cross_source", DEFAULT_SOURCE)
    stop_page()
if presenter:
    introduce()

T, S = len(settings.labels), len(cross.source_tokens)
source_labels = frames.token_labels(cross.source_tokens)
weights = cross.trace.weights[head]  # (T, S)
weights_box = weights_box or st.container()
weights_box.subheader(numbered(3, f"Cross-attention weights: T × S = {T} × {S}"))
if presenter:  # the slide's weights come before the sentences' section: name the source where its keys are seen
    weights_box.markdown(f"Queries from your sentence; keys and values from the source “{plain(source)}” "
                         f"(section {shown_number(2)} below changes it).")
cross_view = StageView(cross.trace, settings.labels, settings.follow, head, settings.cell_size, settings.font_size,
                       key_labels=source_labels)
self_view = StageView(lesson.trace, settings.labels, settings.follow, head, settings.cell_size, settings.font_size)
self_title, cross_title = f"self-attention: {T} × {T}, mask: {config.mask}", f"cross-attention: {T} × {S}"
with weights_box:
    if presenter:  # one set of row labels and one colour bar: cells wide enough for slide-sized numbers
        slide_self, slide_cross = replace(self_view, fit=True), replace(cross_view, fit=True)
        show_slide_row("cross_pair", slide_self, slide_token_pair(
            slide_self, (lesson.trace.weights[head], self_title), (weights, cross_title), right_view=slide_cross,
            weights=True), SLIDE_ROOM_PX, first_screen=True)
    else:
        # One cell size for both, so that their rows (the same queries) are as tall; side by side unless that leaves
        # cells too small for their numbers (a padded source of 12 keys beside 7), then one above the other.
        cell = min(self_view.fit_cell(T + 3, half), cross_view.fit_cell(S + 3, half))
        if prints_values(cell, settings.font_size, signed=False):
            left, right = st.columns(2)
        else:
            cell = min(self_view.fit_cell(T + 3), cross_view.fit_cell(S + 3))
            left, right = st.container(), st.container()
        with left:
            show_chart(token_heatmap(self_view, lesson.trace.weights[head], self_title, weights=True, cell=cell))
        with right:
            show_chart(token_heatmap(cross_view, weights, cross_title, weights=True, cell=cell))
    cols = st.columns(3)
    cols[0].metric("queries T (rows)", T)
    cols[1].metric("keys S (columns)", S)
    cols[2].metric("largest |row sum − 1|", size_in_words(cross.row_sum_error))
    st.markdown("Left, the target sentence attends to itself (T × T, with the mask picked "
                f"{in_the_sidebar()}). Right, the same queries attend to the source (T × S): every row is still a set "
                "of weights that adds up to 1, now spread over the other sentence. The same weights W_Q, W_K, W_V "
                "are used for both here; a real model learns separate ones for its cross-attention.")
    if says_why_words_repeat(config, presenter):  # (equal rows, or equal columns, looked like a bug)
        twins = [repeated_words_note(cross.source_tokens, source_labels, "columns of the cross-attention weights",
                                     made="the same key and value", last=False),
                 repeated_words_note(settings.lesson.tokens, settings.labels, "rows")]
        if any(twins):
            st.caption(" ".join(filter(None, twins)))
    if config.init == "random":  # a translation beside its sentence made a student expect cat → chat
        example = source.strip() == DEFAULT_SOURCE and config.sentence.strip() == DEFAULTS.sentence
        st.info("**An untrained layer.** W_Q, W_K and W_V are random numbers (from the seed), so these weights do "
                "not pair a word with its translation" + (": “cat” need not look at “chat”" if example else "")
                + ". A trained translator learns weights that mostly do; the Real model page shows learned weights.",
                icon=":material/casino:")
    if config.mask != "causal":  # the diagram's decoder masks its self-attention: say why the chart does not
        diagram = "the diagram below" if presenter else "the diagram above"  # a slide shows the weights first
        used = "no mask" if config.mask == "none" else f"the {config.mask} mask"  # ("the none mask" read oddly)
        st.caption(f"A decoder's self-attention is causal ({diagram}: “no peeking ahead”); the left chart uses "
                   f"{used}, as picked {in_the_sidebar()}. Pick “causal” there to see the decoder's. "
                   "Cross-attention has no such mask: the whole source is there, encoded, before the decoder starts.")
    if cross.mask is not None:
        real = is_padding.count(False)
        st.info(f"The source is padded from {real} to {S} tokens. The [PAD] keys are blocked in every row, so they "
                "get zero weight and the real source tokens share all of it.")
    elif pad and S < MAX_TOKENS:  # switched on, and nothing to see: say why
        st.info(f"Padding adds nothing here: the source already has {S} tokens, so no [PAD] token was added. Pad it "
                f"to more than {S} tokens to see the [PAD] keys blocked.")
    elif pad:  # (the slider stops at MAX_TOKENS: "pad it to more" could not be done)
        st.info(f"Padding adds nothing here: the source has {MAX_TOKENS} tokens, the most a sentence may have, so "
                "there is no room for a [PAD] token. Shorten the source to see the [PAD] keys blocked.")

    # the followed token's row and the numbers belong to the weights (on a slide, before the next section)
    st.markdown(f"**What {plain(settings.labels[settings.follow])} reads from the source** (head {head + 1}):")
    show_chart(cached_spec(charts.row_bars, frames.row_frame(weights[settings.follow], source_labels),
                           cell_size=slide_bar_px(S) if presenter else max(min(settings.cell_size, 700 // S), 24),
                           font_size=settings.font_size,
                           title=f"row of {settings.labels[settings.follow]}"))
    numbers_table(weights, settings.labels, source_labels, key="cross",
                  caption="The numbers: cross-attention weights")

show_page_questions("cross-attention", cross_questions(weights, settings.labels, source_labels,
                                                      follow=settings.follow, head=head,
                                                      num_heads=cross.trace.num_heads))
st.markdown("**Takeaway:** cross-attention is the same formula with K and V taken from another sequence, so the "
            "weights are T × S and each target token builds its vector from the source.")
