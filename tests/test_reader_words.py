"""Words a student reading alone found wrong or missing."""

from __future__ import annotations

import pytest

from apptest_support import chart_data, open_page


def test_d_k_1_says_the_scaled_scores_are_the_same():
    """With d_k = 1 the page said "so the shrink is visible" above two identical charts."""
    at = open_page("pages/step_through.py", {"step": "scaled", "d_k": "1"})
    words = " ".join(m.value for m in at.markdown)
    assert "the two charts are the same" in words and "shrink is visible" not in words
    assert "shrink is visible" in " ".join(m.value for m in open_page(
        "pages/step_through.py", {"step": "scaled"}).markdown)


def test_overview_points_a_newcomer_to_start_here():
    at = open_page("pages/overview.py")
    assert "start_here" in [link.proto.page for link in at.get("page_link")]


def test_an_empty_sentence_in_a_link_is_not_called_too_long():
    at = open_page("pages/step_through.py", {"sentence": ""})
    notes = [i.value for i in at.info if "could not be used" in i.value]
    assert notes and "1 to 32 tokens" in notes[0] and "at most" not in notes[0], notes


def test_generation_says_it_replays_the_sentence():
    at = open_page("pages/generation.py")
    assert "your sentence's own tokens one at a time" in " ".join(m.value for m in at.markdown)


def test_a_padding_mask_explains_the_pad_rows_weights():
    at = open_page("pages/masking.py")
    assert "The [PAD] rows still get weights" in " ".join(m.value for m in at.markdown)


def test_what_it_costs_keeps_one_colour_per_kind_of_layer():
    """Orange was the recurrent layer in the formulas' chart and the fused kernel in the timings' chart."""
    import json

    at = open_page("pages/cost.py")
    at.button(key="cost_measure").click().run()
    colours = {}
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        for layer in spec.get("layer", [spec]):
            scale = layer.get("encoding", {}).get("color", {}).get("scale", {})
            for name, colour in zip(scale.get("domain", []), scale.get("range", [])):
                kind = next((k for k in ("recurrent", "fused", "convolution", "attention") if k in name), None)
                if kind:  # (the memory chart's one line is the weights', not a kind of layer)
                    colours.setdefault(kind, set()).add(colour)
    assert {"recurrent", "fused", "attention"} <= set(colours), colours
    assert all(len(shades) == 1 for shades in colours.values()), colours
    assert len({next(iter(shades)) for shades in colours.values()}) == len(colours), "kinds differ in colour"


def test_stage_2_offers_all_the_numbers_of_k_and_v_too():
    """Stage 2 draws Q, K and V, but "All the numbers" held Q only."""
    from attention_core import LessonConfig, run_lesson

    at = open_page("pages/step_through.py", {"step": "qkv"})
    labels = [e.label for e in at.expander]
    assert {"All the numbers of Q", "All the numbers of K", "All the numbers of V"} <= set(labels), labels
    at.session_state["open_qkv_k"] = True
    at.session_state["open_qkv_v"] = True
    at.run()
    trace = run_lesson(LessonConfig()).trace
    k, v = (frame.value for frame in at.dataframe)
    assert list(k.columns) == ["k1", "k2", "k3", "k4"] and list(v.columns) == ["v1", "v2", "v3", "v4"]
    assert abs(float(k.iloc[1, 2].replace("−", "-")) - float(trace.k[0, 1, 2])) < 1e-3
    assert abs(float(v.iloc[3, 0].replace("−", "-")) - float(trace.v[0, 3, 0])) < 1e-3


def test_real_model_says_what_unk_is():
    at = open_page("pages/real_model.py", {"sentence": "I love 🍕 pizza"})
    if any("not available" in w.value for w in at.warning):
        pytest.skip("no packaged model here (the page says so; tested elsewhere)")
    unk = [c.value for c in at.caption if "[UNK]" in c.value]
    assert unk and "no entry" in unk[0], [c.value for c in at.caption]
    assert not [c.value for c in open_page("pages/real_model.py").caption if "no entry" in c.value]


def test_what_it_costs_says_what_big_o_log_axes_and_float32_mean():
    """A student met O(T²·d), two log-log charts, "float32", "MiB" and "recurrent layer (RNN)" with no word on any
    of them."""
    at = open_page("pages/cost.py")
    words = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "O(·) says how a cost grows" in words and "twice the tokens cost four times as much" in words
    assert "Both charts have log axes" in words and "float32 numbers (32-bit floating point), 4 bytes each" in words
    assert "1 MiB is 2²⁰ bytes" in words
    assert "an RNN, the layer attention replaced: it reads the tokens one at a time" in words


def test_shared_keys_says_what_a_rolling_buffer_and_a_what_if_are():
    at = open_page("pages/modern_attention.py", {"context_length": "1048576"})
    captions = " ".join(c.value for c in at.caption)
    assert "rolling buffer: each new token's keys and values overwrite the oldest" in captions
    assert "never holds that many tokens, so its row shows the cache it would have if it could read them" \
        in captions, captions


def test_stage_9_lists_what_a_real_layer_adds_one_item_at_a_time():
    """Stage 9 packed the residual connection, the feed-forward network and post-/pre-LayerNorm into one paragraph;
    a slide keeps its short words."""
    words = [m.value for m in open_page("pages/step_through.py", {"step": "output"}).markdown]
    listed = [w for w in words if "- **The residual connection**" in w]
    assert listed and "\n- **The feed-forward network**" in listed[0] and "\n- **Layer normalisation**" in listed[0]
    slide = [m.value for m in open_page("pages/step_through.py", {"step": "output", "presenter": "true"}).markdown]
    assert not [w for w in slide if "The residual connection**" in w]


def test_why_scaling_says_what_a_gradient_and_a_one_hot_row_are():
    """A first-year student met "the gradient that training needs vanishes" and "near one-hot rows" with no word
    on either."""
    at = open_page("pages/why_scaling.py")
    words = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "the gradient (how much a small change of q or k would move the weights" in words
    assert "near one-hot rows (one weight near 1, the rest near 0)" in words


def _words(at) -> str:
    return " ".join(e.value for kind in ("markdown", "caption", "success") for e in getattr(at, kind))


def test_the_followed_rows_outline_is_named_on_the_lesson_pages():
    """A magenta frame round one row of the charts on Modern attention, Why scaling and Order and position, and no
    word about it there (Step through says it under each stage)."""
    for page in ("pages/modern_attention.py", "pages/why_scaling.py"):
        assert "Outlined: the row of 1·The, the token followed (“Query token to follow” in the sidebar" in _words(
            open_page(page)), page
    shuffled = _words(open_page("pages/positions.py", {"token": "2"}))
    assert "Outlined: the row of 2·cat, " in shuffled and " in the shuffled sentence, the token followed" in shuffled


def test_the_sliding_window_says_it_uses_every_heads_own_keys_and_that_its_reach_passes_the_position_limit():
    """Section 3's weights stayed the same for every g of section 1 with no word why; the takeaway's 131,000 tokens
    read against the table's 32,768 with no word on how."""
    words = _words(open_page("pages/modern_attention.py", {"kv_heads": "1"}))
    assert "Here every head has its own keys and values (g = h), whatever g you chose in section 1." in words
    assert "the reach L·(w − 1) + 1 is about 131,000 tokens, more than the 32,768 it can read at all" in words


def test_alibis_slope_slider_runs_from_gentle_to_steep_and_its_question_credits_more_than_defined_at_any_distance():
    """The slider ran from 1 on the left to 1/256 on the right while the words said "slide m up to 1/2 or 1"; the
    question's right answer gave "defined at any distance" as the reason, which the page's own words say is not
    enough (sinusoidal and rotary encodings are too)."""
    at = open_page("pages/positions.py")
    slider = at.select_slider(key="pos_alibi")
    assert slider.options == ["1/256", "1/128", "1/64", "1/32", "1/16", "1/8", "1/4", "1/2", "1"]
    assert "from the gentlest slope on the left to 1, steeper than any of the paper's, on the right" in slider.help
    assert "Slide m to the right, up to 1/2 or 1, to see the near keys win here." in _words(at)
    at.session_state["open_check_order-and-position"] = True
    at.run()
    question = next(r for r in at.radio if r.key.startswith("cy-order-and-position-alibi-longer-"))
    assert any(o.startswith("ALiBi learns nothing per position: its penalty −m·|i − j| is worked out from the "
                            "distance") for o in question.options), question.options
    question.set_value(next(o for o in question.options if o.startswith("ALiBi learns nothing")))
    at.button(key=f"FormSubmitter:cy-form-{question.key[3:]}-Check").click().run()
    assert any("sinusoidal and rotary encodings are too, yet their models read longer texts badly" in s.value
               for s in at.success)


def test_what_it_costs_says_its_chart_plots_the_tables_orders_not_the_doubled_counts():
    """The words said "both lines double" under a chart that plots T²·d and T·d² as they are."""
    at = open_page("pages/cost.py")
    assert "The chart plots Vaswani et al.'s per-layer orders, T²·d and T·d², as their table gives them." in _words(at)
    assert "both exact counts are twice the plotted lines, so they too cross at T = d" in _words(at)
    assert "both lines double" not in _words(at)


def test_equal_rows_of_a_repeated_word_are_explained_next_to_the_charts():
    """Rows 1·The and 5·the were equal in every grid of Multi-head and Cross-attention (and columns 1·Le and 6·le),
    said only in a question's feedback: a student suspected a bug."""
    words = _words(open_page("pages/multi_head.py"))
    assert "1·The and 5·the: the same word (capital letters do not count), so the same vector in X, the same query, " \
           "key and value, and the same rows here." in words
    cross = _words(open_page("pages/cross_attention.py"))
    assert "1·Le and 6·le: the same word (capital letters do not count), so the same vector in X, the same key and " \
           "value, and the same columns of the cross-attention weights here." in cross
    assert cross.count("Nothing in this lesson tells them apart by position") == 1
    assert "1·The and 5·the: the same word" in _words(open_page("pages/modern_attention.py"))
    masks = _words(open_page("pages/masking.py"))  # (a student checked the none mask's rows and asked about a bug)
    assert "1·The and 5·the: the same word (capital letters do not count), so the same vector in X, the same query, " \
           "key and value, and so a row that may see both gives them the same weight (with no mask, their own rows " \
           "are the same too)." in masks
    assert masks.count("capital letters do not count") == 1
    assert "capital letters do not count" not in _words(open_page("pages/multi_head.py", {"sentence": "A cat sat."}))
    # a slide's charts fill it down to its words
    for page in ("pages/multi_head.py", "pages/cross_attention.py", "pages/masking.py"):
        assert "capital letters do not count" not in _words(open_page(page, {"presenter": "true"})), page


def test_cross_attention_names_cat_and_chat_only_beside_the_example_pair():
    """With a German source the note still said "“cat” need not look at “chat”", a word no longer on the page."""
    def untrained(at) -> str:
        return next(i.value for i in at.info if "An untrained layer" in i.value)
    assert "“cat” need not look at “chat”" in untrained(open_page("pages/cross_attention.py"))
    german = untrained(open_page("pages/cross_attention.py", {"cross_source": "Die Katze sitzt"}))
    assert "chat" not in german and "do not pair a word with its translation." in german


def test_the_worked_numbers_say_their_results_come_from_unrounded_numbers():
    """A student redid the context stage's 0.2891 × −1.5822 from the table, got −0.4574 against its −0.4575, and
    thought the slip was theirs."""
    at = open_page("pages/step_through.py", {"step": "context"})
    said = [c.value for c in at.caption if "each result is worked out from the exact numbers" in c.value]
    assert len(said) == 1 and "shown to 4 decimals" in said[0], said
    assert "redone by hand from the table, a result can differ in its last digit (a sum of many terms by a few " \
           "units there)" in said[0]
    assert "each result is worked out from the exact" not in _words(open_page(
        "pages/step_through.py", {"step": "context", "presenter": "true"}))  # (a slide keeps its room for numbers)


def test_one_of_a_kind_is_counted_in_the_singular():
    """"The sentence has 1 tokens now", "1 tokens × 8 features" and "Q's columns 1–1" for a head of d_k = 1."""
    from attention_ui.text import numbered

    assert [numbered(5, 8, "column"), numbered(2, 2, "column"), numbered(1, 4, prefix="q"), numbered(1, 1, prefix="q")
            ] == ["columns 5–8", "column 2", "q1–q4", "q1"]
    at = open_page("pages/multi_head.py", {"d_k": "1", "heads": "4"})
    assert sorted(chart_data(at, "Q of each head")["head"].unique()) == [
        f"head {i}: q1 = Q's column {i}" for i in range(1, 5)]
    at.selectbox(key="token").set_value(2).run()
    at.text_input(key="sentence").input("Hello").run()
    assert "The sentence has 1 token now: it is followed." in [c.value for c in at.sidebar.caption]
    words = " ".join(m.value for m in at.markdown)
    assert "1 token ×" in words and "1 tokens" not in words
    step = open_page("pages/step_through.py", {"step": "qkv", "d_k": "1", "heads": "2", "head": "2"})
    words = " ".join(m.value for m in step.markdown)
    assert "Head 2 uses column 2 of W_Q and W_K" in words and "W\\_Q's column 2 " in words, words


def test_cross_attention_at_the_most_tokens_asks_for_no_padding_past_them():
    """With a 32-token source and padding on, a box said "Pad it to more than 32 tokens", which the slider's 32 does
    not allow, under the switch's own "there is no room to pad it"."""
    source = " ".join(f"w{i}" for i in range(31)) + "."
    at = open_page("pages/cross_attention.py", {"cross_pad": "true", "cross_source": source})
    infos = " ".join(i.value for i in at.info)
    assert "no room to pad it" in " ".join(c.value for c in at.caption)
    assert "Shorten the source" in infos and "more than 32" not in infos, infos
