"""What the pages claim, checked against what they show: sentences a lecturer found incomplete or misleading."""

from __future__ import annotations

import pytest
import torch

from apptest_support import chart_data, open_page
from attention_core import LessonConfig, run_lesson
from attention_ui.checks.layer import multi_head_questions
from attention_ui.checks.real import real_model_questions
from attention_ui.controls import PATH_NEXT_UP_KEY
from attention_ui.text import STAGES


def words(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_why_scaling_does_not_say_the_gradient_only_falls_when_its_chart_shows_it_rising():
    """At small d_k the unscaled rows are sharper and their softmax gradient is larger than the scaled rows'; the
    text said it only shrinks as a row sharpens, which the chart beside it contradicted."""
    at = open_page("pages/why_scaling.py")
    gradient = chart_data(at, "size of the softmax gradient").dropna(subset=["scores"])
    by_scaling = gradient.pivot_table(index="d_k", columns="scores", values="gradient size")
    unscaled = by_scaling[[c for c in by_scaling.columns if "unscaled" in c][0]]
    scaled = by_scaling[[c for c in by_scaling.columns if "unscaled" not in c][0]]
    assert unscaled[4] > scaled[4] and unscaled[64] < scaled[64]  # what the chart shows
    text = words(at)
    assert "not largest for a perfectly even row" in text and "peaks at a moderate spread" in text


def test_a_fully_blocked_row_is_called_this_pages_rule_not_what_softmax_does():
    text = words(open_page("pages/step_through.py", {"step": "softmax"}))
    assert "softmax itself is undefined for such a row" in text


def test_the_output_stage_says_where_models_normalise():
    text = words(open_page("pages/step_through.py", {"step": "output"}))
    assert "after each addition (post-LayerNorm: the original Transformer, BERT)" in text
    assert "at each block's input (pre-LayerNorm: GPT-2" in text


def test_the_overview_averages_only_the_values_a_token_may_see():
    text = words(open_page("pages/overview.py"))
    assert "the average of the values it may see" in text and "average of all values" not in text


def test_a_causal_real_models_weights_are_a_softmax_over_the_tokens_it_may_see():
    weights = torch.tril(torch.ones(4, 4)) / torch.arange(1, 5)[:, None]  # (T, T), rows add up to 1
    labels = ["a", "b", "c", "d"]

    def feedback(causal: bool) -> str:
        questions = real_model_questions(num_tokens=4, labels=labels, weights=weights, layer=0, head=0, follow=2,
                                         causal=causal)
        return next(q.why for q in questions if "-weight-" in q.id)

    assert "the tokens it may see" in feedback(True) and "over all the tokens" in feedback(False)


def test_multi_heads_count_of_weights_names_both_axes():
    trace = run_lesson(LessonConfig()).trace
    why = next(q.why for q in multi_head_questions(trace, head=0) if "-all-weights-" in q.id)
    assert "one row per query token and one column per key token" in why


def test_a_g_at_either_end_is_not_called_grouped_query():
    """Grouped-query means 1 < g < h; at the default two heads the chosen g = 1 is multi-query, and the diagram,
    the grid's words and the table said "grouped-query" for it."""
    at = open_page("pages/modern_attention.py")
    summary = at.dataframe[0].value
    assert list(summary["attention"]) == ["multi-head", "multi-query (your g)"]  # drawn once, not twice
    assert "head by head (g = 1: multi-query)" in words(at)
    at = open_page("pages/modern_attention.py", {"heads": "4"})
    assert list(at.dataframe[0].value["attention"]) == ["multi-head", "grouped-query", "multi-query"]


def test_stages_explain_what_their_questions_and_words_need_before_they_are_needed():
    """Stage 5 asked what happens to a fully blocked row while only stage 6 said it; stage 4 explained scaling by a
    softmax that saturates before softmax was taught; stage 2 never said how d_k relates to d_model and h."""
    assert "this app gives it all-zero weights" in words(open_page("pages/step_through.py", {"step": "masked"}))
    assert "(Softmax, stage 6, turns each row" in words(open_page("pages/step_through.py", {"step": "scaled"}))
    assert "d_k = d_model / h" in words(open_page("pages/step_through.py", {"step": "qkv"}))


def test_stage_4_asks_to_raise_d_k_only_below_its_limit():
    at = open_page("pages/step_through.py", {"step": "scaled", "unscaled": "true", "d_k": "64"})
    assert "saturates" in words(at) and "Raise d_k" not in words(at)
    assert "Raise d_k" in words(open_page("pages/step_through.py", {"step": "scaled", "unscaled": "true"}))


def test_with_identity_projections_d_k_is_said_to_follow_d_model_and_the_heads():
    """With “Q = K = V = X” there is no d_k to set: stage 2 said "here d_k is set on its own" and stage 4 and Why
    √d_k said "raise d_k in the sidebar", where no such setting was."""
    identity = {"init": "identity", "d_model": "8", "heads": "2"}
    qkv = words(open_page("pages/step_through.py", identity | {"step": "qkv"}))
    assert "d_k = d_model / h = 8 / 2 = 4" in qkv and "set on its own" not in qkv
    scaled = words(open_page("pages/step_through.py", identity | {"step": "scaled", "unscaled": "true"}))
    assert "Raise d_model or use fewer heads" in scaled and "Raise d_k" not in scaled
    why = open_page("pages/why_scaling.py", identity)
    captions = " ".join(c.value for c in why.caption)
    assert "d_k = 4, d_model / h with" in words(why) and "Raise d_model or use fewer heads" in captions
    assert "raise d_k" not in (words(why) + captions).lower()
    assert "Raise d_k" in " ".join(c.value for c in open_page("pages/why_scaling.py", {}).caption)


def test_stage_4_gives_the_rows_largest_weights_with_and_without_the_scaling():
    at = open_page("pages/step_through.py", {"step": "scaled", "unscaled": "true", "d_k": "16"})
    trace = run_lesson(LessonConfig(d_k=16)).trace
    unscaled = torch.softmax(trace.scores[0], dim=-1).amax(dim=-1).mean()
    scaled = trace.weights[0].amax(dim=-1).mean()
    said = f"largest weight is {float(unscaled):.2f} on average without the scaling and {float(scaled):.2f}"
    assert said in words(at)
    assert float(unscaled) > float(scaled) + 0.1  # seeded vectors: the unscaled rows are sharper
    blocked = {"step": "scaled", "unscaled": "true", "mask": "custom", "grid": ".".join(["0000000"] * 7)}
    said = words(open_page("pages/step_through.py", blocked))
    assert "Without ÷√d_k" in said and "nan" not in said.lower() and "largest weight is" not in said


def test_a_fully_blocked_row_is_not_said_to_add_up_to_1():
    blocked_first_row = {"mask": "custom", "grid": ".".join(["0000000"] + ["1111111"] * 6)}
    caption = " ".join(c.value for c in open_page("pages/overview.py", blocked_first_row).caption)
    assert "Each row adds up to 1, except a row whose every key is blocked, which is all zero." in caption, caption
    caption = " ".join(c.value for c in open_page("pages/overview.py", {}).caption)
    assert "Each row adds up to 1. A layer" in caption, caption


def test_cross_attention_counts_the_padding_masks_pad_queries_apart_from_the_sentence():
    """With the sidebar's padding mask the target was called "your sentence, 10 tokens": 7 words and 3 [PAD]."""
    assert "your sentence, 7 tokens, and 3 [PAD] after it" in words(
        open_page("pages/cross_attention.py", {"mask": "padding", "pad_to": "10"}))
    assert "your sentence, 7 tokens." in words(open_page("pages/cross_attention.py", {}))


def test_multi_head_gives_each_head_its_value_columns_in_d_v():
    said = words(open_page("pages/multi_head.py", {"d_k": "5", "d_v": "2", "heads": "3"}))
    assert "(i−1)·d_v + 1 to i·d_v of W_V" in said and "W_V has h·d_v = 6" in said


def test_multi_head_says_when_the_followed_token_has_one_key_and_offers_another():
    """Under the causal mask token 1 may attend to itself only: every head's bars read 1 on it, the one chart meant
    to show the heads differ showed identical bars without a word."""
    at = open_page("pages/multi_head.py", {"mask": "causal", "token": "1"})
    assert any("1·The may attend to only one key" in i.value for i in at.info)
    at.button(key="follow_richest_multi_head").click().run()
    assert at.session_state["token"] == 5 and not at.exception, "the last word, 6·mat (the full stop is 7·.)"
    assert not any("one key" in i.value for i in at.info)
    assert not any("one key" in i.value for i in open_page("pages/multi_head.py").info)  # no mask: not said


def test_start_here_links_to_the_first_page_not_done():
    """A student coming back had to find the first unmarked card; Start here now opens with a link to it."""
    def next_up(at) -> str:
        return next(link.proto.label for link in at.get("page_link") if link.proto.icon == ":material/play_circle:")

    at = open_page("pages/start_here.py")
    assert next_up(at) == "Start with 1. Overview"
    at.session_state["pages_visited"] = {"start-here", "home"}  # the Overview opened (app.py notes each page)
    at.run()
    assert next_up(at) == "Next on the path: 2. Step through"  # an opened page without questions is done
    at.session_state["stages_seen"] = {"embed", "qkv"}
    at.run()
    assert next_up(at) == "Carry on with 2. Step through"  # 2 of its 9 stages looked at


def test_start_heres_foot_leads_where_its_top_does():
    """A student with progress read "Carry on with 2. Step through" at the top and "Start the path: Overview" at the
    foot (``path_footer``, drawn under the page by app.py)."""
    from streamlit.testing.v1 import AppTest

    def top(at) -> tuple[str, str]:
        return next((link.proto.label, link.proto.page) for link in at.get("page_link")
                    if link.proto.icon == ":material/play_circle:")

    def foot(at) -> list[tuple[str, str]]:
        script = AppTest.from_string("import streamlit as st\nfrom attention_ui.controls import path_footer\n"
                                     "path_footer('start-here')\n", default_timeout=60)
        script.session_state[PATH_NEXT_UP_KEY] = at.session_state[PATH_NEXT_UP_KEY]
        return [(link.proto.label, link.proto.page) for link in script.run().get("page_link")]

    at = open_page("pages/start_here.py")
    assert top(at) == ("Start with 1. Overview", "overview") and foot(at) == [("Start the path: Overview", "overview")]
    at.session_state["pages_visited"] = {"start-here", "home"}
    at.session_state["stages_seen"] = {"embed", "qkv"}
    at.run()
    assert [top(at)] == foot(at) == [("Carry on with 2. Step through", "step-through")]
    at.session_state["stages_seen"] = {s.key for s in STAGES}
    at.run()
    assert [top(at)] == foot(at) and top(at)[0].startswith("Next on the path: 3."), (top(at), foot(at))


def test_the_mask_editor_fits_an_eleven_token_sentence():
    """With the tokens' words as its column headers the editor of an 11-token sentence was wider than the page, its
    last keys behind a scroll bar; the columns are headed by the key's number now, and every row is shown."""
    import json

    sentence = "The animal did not cross the street because it was tired"
    at = open_page("pages/masking.py", {"mask": "custom", "sentence": sentence})
    editor = next(d for d in at.dataframe if d.proto.editing_mode)
    columns = json.loads(editor.proto.columns)
    assert [columns[key]["label"] for key in columns if key != "_index"][:3] == ["1", "2", "3"]
    assert sum(columns[key]["width"] for key in columns if key != "_index") <= 11 * 46


@pytest.mark.parametrize("presenter", ["false", "true"])
def test_the_mask_editor_heads_its_columns_with_their_tokens_where_they_fit(presenter):
    """Headed by numbers only, the keys of the default sentence could not be told apart from the back of a room
    ("hover a column's number for its token"): where the words fit the page, they head the columns. On a slide the
    grid's weights stand beside it instead (a tick showed nothing on the screen): numbered columns make the room,
    and the weights beside name the keys."""
    import json

    at = open_page("pages/masking.py", {"mask": "custom", "presenter": presenter})
    editor = next(d for d in at.dataframe if d.proto.editing_mode)
    columns = json.loads(editor.proto.columns)
    words = ["1·The", "2·cat", "3·sat", "4·on", "5·the", "6·mat", "7·."]
    labels = [columns[key]["label"] for key in columns if key != "_index"]
    assert labels == (["1", "2", "3", "4", "5", "6", "7"] if presenter == "true" else words), labels
    assert not any("hover a column" in c.value for c in at.caption)
    if presenter == "true":
        assert any(c.value.endswith("numbered as the rows: the weights beside name them.") for c in at.caption)
        keys = chart_data(at, "weights with your mask")["key"].unique().tolist()
        assert keys == words, keys


@pytest.mark.parametrize("page, query, dark", [
    ("pages/masking.py", {"mask": "custom"}, True),
    ("pages/masking.py", {"mask": "custom", "presenter": "true"}, True),
    ("pages/masking.py", {"mask": "custom", "sentence": " ".join(f"w{i}" for i in range(32))}, False),
    ("pages/by_hand.py", {}, True),
    ("pages/by_hand.py", {"presenter": "true"}, True)],
    ids=["mask editor", "mask editor on a slide", "mask editor too wide for the page", "by hand", "by hand on a slide"])
def test_the_editable_grids_draw_their_row_names_in_the_texts_colour(page, query, dark):
    """Streamlit draws the index, a pinned column, in a faded grey (about 2.6 : 1): Work it by hand's token names and
    the mask editor's rows washed out on a projector while the column names were dark. Unpinned, they are drawn as
    the cells are; a mask editor wider than the page keeps them pinned, so that they stay in view."""
    import json

    at = open_page(page, query)
    editors = [json.loads(d.proto.columns) for d in at.dataframe if d.proto.editing_mode]
    assert editors
    assert all((columns.get("_index", {}).get("pinned") is False) == dark for columns in editors), editors


def test_a_slide_leaves_the_pages_further_words_to_the_lecturer():
    """The words added for a student alone made three stages' slides taller than a 1024 × 768 window."""
    at = open_page("pages/step_through.py", {"step": "qkv", "presenter": "true"})
    assert "d_k = d_model / h" not in words(at) and "h·d_k columns" in words(at)



def test_multi_heads_panels_label_every_key_of_an_eleven_token_sentence():
    """Vega leaves out every other label at −90° when a label and its gap are taller than a cell: "2·animal" had
    no label, so the classic "it → animal" could not be read."""
    import json

    at = open_page("pages/multi_head.py", {"sentence": "The animal did not cross the street because it was tired",
                                           "heads": "4"})
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    axis = spec["spec"]["layer"][0]["encoding"]["x"]["axis"]
    cell = spec["spec"]["width"] / 11
    assert axis["labelFontSize"] + axis.get("labelSeparation", 0) < cell, (axis, cell)


def test_work_it_by_hands_answer_grids_say_what_their_rows_and_columns_are():
    at = open_page("pages/by_hand.py")
    assert len(at.tabs) == 4, [t.label for t in at.tabs]
    for tab, columns in zip(at.tabs, ("the key tokens", "the key tokens", "the key tokens", "the context's numbers")):
        captions = [c.value for c in tab.caption]
        assert any(c.startswith("Rows: the query tokens. Columns: " + columns) for c in captions), captions


@pytest.mark.parametrize(("heads", "said"), [("2", "with d_model = 8 and 2 heads that would be d_k = 4"),
                                             ("3", "d_model = 8 does not split into 3 equal heads")])
def test_multi_head_says_its_heads_are_not_slices_of_a_fixed_width(heads, said):
    """The page said the projections "are cut into h slices"; a student raised h from 2 to 4, saw W_Q grow from 8 to 16
    columns and heads 1–2 stay as they were, and expected the heads to get narrower."""
    at = open_page("pages/multi_head.py", {"heads": heads})
    assert "cut into" not in words(at) and "each with its own block of columns" in words(at)
    captions = " ".join(c.value for c in at.caption)
    assert "another head adds d_k columns" in captions and said in captions, captions


def test_cross_attention_says_when_the_source_is_not_a_translation_of_the_students_sentence():
    """A student typed "I love my dog" and it attended to the example's French cat sentence without a word on it."""
    said = "not of your sentence"
    assert not [c for c in open_page("pages/cross_attention.py").caption if said in c.value]
    at = open_page("pages/cross_attention.py", {"sentence": "I love my dog"})
    assert [c for c in at.caption if said in c.value]
    at.text_input(key="cross_source").input("J'aime mon chien").run()
    assert not at.exception and not [c for c in at.caption if said in c.value], "a source of its own: nothing to say"
