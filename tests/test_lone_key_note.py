"""Under the causal mask the first token may attend to itself only: its weight is 1.000 and its worked numbers
show nothing being mixed. The page says so and offers to follow the token that attends to the most keys."""

from __future__ import annotations

import pytest

from apptest_support import open_page


def lone_key_notes(at) -> list[str]:
    return [info.value for info in at.info if "one key" in info.value]


@pytest.mark.parametrize("step", ["masked", "softmax", "context"])
def test_a_followed_token_with_one_key_is_named_and_a_richer_one_offered(step):
    at = open_page("pages/step_through.py", {"mask": "causal", "step": step})
    notes = lone_key_notes(at)
    assert len(notes) == 1 and "1·The one key, 1·The" in notes[0] and "7 keys" in notes[0], notes
    at.button(key=f"follow_richest_{step}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox(key="token").value == 6, "the sidebar follows the last token"
    assert at.query_params["token"] == "7"
    assert "Worked numbers for 7·" in " ".join(m.value for m in at.markdown)
    assert not lone_key_notes(at), "the last token attends to every key: nothing to say"


@pytest.mark.parametrize("query", [{"step": "softmax"}, {"mask": "causal", "step": "scores"},
                                   {"mask": "causal", "step": "softmax", "token": "3"}])
def test_no_note_where_the_followed_token_mixes_several_keys(query):
    assert not lone_key_notes(open_page("pages/step_through.py", query))


def slide_notes(at) -> list[str]:
    return [m.value for m in at.markdown if "may attend to" in m.value and "only" in m.value]


def test_the_note_is_on_the_slide_too():
    """On a slide it is one line under the stage's words (the worked numbers are screens down), and only there."""
    slide = open_page("pages/step_through.py", {"mask": "causal", "step": "softmax", "presenter": "true"})
    assert len(slide_notes(slide)) == 1 and "1·The may attend to 1·The only" in slide_notes(slide)[0]
    assert not lone_key_notes(slide), "not a second time with the worked numbers"
    slide.button(key="follow_richest_softmax").click().run()
    assert slide.query_params["token"] == "7" and not slide_notes(slide)
