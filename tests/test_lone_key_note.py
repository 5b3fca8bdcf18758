"""Under the causal mask the first token may attend to itself only: its weight is 1.000 and its worked numbers
show nothing being mixed. The page says so above the stage's charts and offers to follow the word that attends to
the most keys (the last token, often a full stop, only when no word attends to two keys or more)."""

from __future__ import annotations

import pytest

from apptest_support import open_page


def _in_order(node):
    """The elements under ``node``, in the order the page shows them."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from _in_order(child)


def lone_key_notes(at) -> list[str]:
    return [info.value for info in at.info if "one key" in info.value]


@pytest.mark.parametrize("step", ["masked", "softmax", "context"])
def test_a_followed_token_with_one_key_is_named_and_a_richer_one_offered(step):
    at = open_page("pages/step_through.py", {"mask": "causal", "step": step, "token": "1"})
    notes = lone_key_notes(at)
    assert len(notes) == 1 and "1·The may attend to only one key, 1·The:" in notes[0], notes
    assert "6·mat may attend to 6 keys" in notes[0], notes
    shown = [n.type for n in _in_order(at.main)]
    assert shown.index("info") < shown.index("vega_lite_chart"), f"the note comes before the charts: {shown}"
    offer = at.button(key=f"follow_richest_{step}")
    assert offer.label == "Follow 6·mat (6 keys)", "the sentence's last word, not its full stop"
    offer.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox(key="token").value == 5, "the sidebar follows 6·mat"
    assert "token" not in at.query_params, "6·mat is whom the causal mask's link follows when it names no token"
    assert "Worked numbers for 6·mat" in " ".join(m.value for m in at.markdown)
    assert not lone_key_notes(at), "6·mat mixes six keys: nothing to say"


def test_only_punctuation_or_lone_words_leave_the_offer_to_the_token_with_most_keys():
    from attention_ui.views import richest_word
    import torch

    assert richest_word(["1·The", "2·cat", "3·."], torch.tensor([1, 2, 3])) == 1
    assert richest_word(["1·!", "2·?", "3·."], torch.tensor([1, 2, 3])) == 2
    assert richest_word(["1·The", "2·!"], torch.tensor([1, 2])) == 1  # no word with two keys: the token with most


@pytest.mark.parametrize("query", [{"step": "softmax"}, {"mask": "causal", "step": "scores"},
                                   {"mask": "causal", "step": "softmax", "token": "3"}])
def test_no_note_where_the_followed_token_mixes_several_keys(query):
    assert not lone_key_notes(open_page("pages/step_through.py", query))


def slide_notes(at) -> list[str]:
    return [m.value for m in at.markdown if "may attend to" in m.value and "only" in m.value]


def test_the_note_is_on_the_slide_too():
    """On a slide it is one line under the stage's words (the worked numbers are screens down), and only there."""
    slide = open_page("pages/step_through.py", {"mask": "causal", "step": "softmax", "presenter": "true", "token": "1"})
    assert len(slide_notes(slide)) == 1 and "1·The may attend to 1·The only" in slide_notes(slide)[0]
    assert not lone_key_notes(slide), "not a second time with the worked numbers"
    slide.button(key="follow_richest_softmax").click().run()
    assert slide.session_state["token"] == 5 and "token" not in slide.query_params and not slide_notes(slide)


def test_under_the_causal_mask_a_link_that_names_no_token_follows_the_word_with_most_keys():
    """Token 1 may attend to itself only under the causal mask, so its worked numbers are "−∞ … weight 1": a
    lecturer opening a causal link with a clicker could not press "Follow 6·mat". With no token in the link the
    lesson follows the word that attends to the most keys; a link that names token 1 still follows it."""
    at = open_page("pages/step_through.py", {"mask": "causal", "step": "softmax"})
    assert at.session_state["token"] == 5 and not lone_key_notes(at)
    assert "Worked numbers for 6·mat" in " ".join(m.value for m in at.markdown)
    at.sidebar.selectbox(key="token").set_value(0).run()
    assert at.query_params["token"] == "1", "following 1·The under this mask is no longer the link's default"
    assert open_page("pages/step_through.py", {"mask": "causal", "token": "1"}).session_state["token"] == 0
    assert open_page("pages/step_through.py", {"step": "softmax"}).session_state["token"] == 0  # no mask: token 1


def test_a_change_to_the_causal_mask_moves_a_lone_follow_to_the_word_with_most_keys_and_says_so():
    at = open_page("pages/step_through.py", {"step": "softmax"})
    assert at.session_state["token"] == 0
    at.sidebar.radio(key="mask").set_value("causal").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["token"] == 5 and not lone_key_notes(at)
    said = " ".join(c.value for c in at.sidebar.caption)
    assert "1·The may attend to only one key" in said, said
    assert "6·mat is followed instead (it may attend to 6 keys)" in said, said
    toasts = [t.value for t in at.toast]  # also said where a student looks: the sidebar's line went unseen after
    assert toasts == ["Now following 6·mat: 1·The has one key under this mask (see Follow)."], toasts  # a button
    # (short: a toast shows three lines, and the whole note was cut mid-sentence over the chart)
    slide = open_page("pages/step_through.py", {"step": "softmax", "presenter": "true"})
    slide.radio(key="mask").set_value("causal").run()
    assert slide.session_state["token"] == 5 and not slide.toast, "on a slide a note over the top right hid Next"
    at.sidebar.selectbox(key="token").set_value(2).run()
    at.sidebar.radio(key="mask").set_value("none").run()
    at.sidebar.radio(key="mask").set_value("causal").run()
    assert at.session_state["token"] == 2, "3·sat has three keys under the causal mask: a chosen token stays"


def test_a_new_sentence_follows_its_own_default_unless_a_token_was_chosen():
    """After "Hello" under the causal mask (its one token followed, as no other was there), a new sentence kept
    following token 1, which sees only itself: no one had chosen it. A chosen token stays."""
    at = open_page("pages/multi_head.py", {"mask": "causal", "sentence": "Hello"})
    at.text_input(key="sentence").input("a dog ran across the big green field today").run()
    assert at.session_state["token"] == 8 and not lone_key_notes(at), "9·today, which sees the most keys"
    assert "token" not in at.query_params
    at.selectbox(key="token").set_value(2).run()
    at.text_input(key="sentence").input("one two three four five six").run()
    assert at.session_state["token"] == 2 and at.query_params["token"] == "3", "3·three: the token chosen stays"
