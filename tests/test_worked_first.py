"""Presenter mode's "Page Down: worked numbers, then the next stage" (AppTest; its keys in a real browser are in
``test_presenter_keys.py``).

A clicker sends only Page Down and Page Up, which went from slide to slide: a lecturer holding one could not show
a stage's worked numbers. The switch is in a slide's Settings menu on the pages of stages, kept in the link, and
puts a slide's worked numbers in the box the clicker's keys scroll to.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from apptest_support import open_page  # noqa: E402
from attention_ui.views import WORKED_FIRST_KEY  # noqa: E402

STEP_THROUGH = "pages/step_through.py"


def _switch(at):
    return next((t for t in at.toggle if t.key == WORKED_FIRST_KEY), None)


def _numbers_box(at):
    """The block keyed for the clicker's keys, or None."""
    try:
        return at.main.get_by_key(f"{WORKED_FIRST_KEY}_numbers")
    except KeyError:
        return None


def test_the_switch_is_in_a_slides_settings_and_off_by_default():
    at = open_page(STEP_THROUGH, {"presenter": "true", "step": "softmax"})
    switch = _switch(at)
    assert switch is not None and switch.value is False
    assert "Page Down" in switch.label and "worked numbers" in switch.label
    assert _numbers_box(at) is None, "off: the slide is drawn as before"
    assert _switch(open_page(STEP_THROUGH, {"step": "softmax"})) is None, "a page without slides has no clicker"


def test_on_from_a_link_the_slides_worked_numbers_are_in_the_clickers_box():
    at = open_page(STEP_THROUGH, {"presenter": "true", "step": "context", "worked_first": "true"})
    assert _switch(at).value is True
    box = _numbers_box(at)
    assert box is not None
    texts = [m.value for m in box.markdown]
    assert texts[0].startswith("#### Worked numbers for"), texts
    assert any("weighted sum of the value vectors" in text for text in texts), texts
    assert len(box.table) == 2, "stage 7's two tables: a_j·v_j per key, then each feature's sum"
    assert not any("Check yourself" in text for text in texts), "the box holds the worked numbers only"


def test_switching_it_on_keeps_it_in_the_link_and_across_stages():
    at = open_page(STEP_THROUGH, {"presenter": "true", "step": "scores"})
    _switch(at).set_value(True).run()
    assert at.query_params.get(WORKED_FIRST_KEY) in ("true", ["true"]), dict(at.query_params)
    assert _numbers_box(at) is not None
    next(b for b in at.button if b.key == "next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["step"] == "scaled"
    assert _switch(at).value is True and _numbers_box(at) is not None


def test_the_switch_stays_on_across_the_other_pages_of_a_lecture():
    """Set once before a lecture: a page without it (Multi-head) and the way back keep it on."""
    from apptest_support import switch_to

    at = open_page(STEP_THROUGH, {"presenter": "true", "worked_first": "true"})
    switch_to(at, "pages/multi_head.py")
    assert _switch(at) is None
    switch_to(at, STEP_THROUGH)
    assert _switch(at).value is True and _numbers_box(at) is not None


def test_a_slide_does_not_show_the_lecturers_own_progress():
    """A lecturer's rehearsal had looked at every stage: the slide told the hall "You have looked at 9 of 9 stages"."""
    said = "You have looked at"
    assert not [c for c in open_page("pages/step_through.py", {"presenter": "true"}).caption if said in c.value]
    assert [c for c in open_page("pages/step_through.py").caption if said in c.value], "a student's page keeps it"


def test_a_page_of_stages_says_its_stage_was_left_on_the_other_page():
    """A student came to Inside a real head from Step through's stage 6 and read its stage 6 as a first stage gone
    missing: the two pages share one stage."""
    at = open_page("pages/step_through.py", {"step": "softmax"})
    assert at.session_state["step"] == "softmax"
    at.session_state["current_page"] = "step-through"  # what app.py sets for the page it draws
    at.run()
    assert "Stage 6 of 9" == progress_text(at), progress_text(at)
    at.switch_page("pages/masking.py").run()  # a page without stages in between does not count
    at.session_state["current_page"] = "inside-real-head"
    at.switch_page("pages/inside_real_head.py").run()
    if at.exception or not at.get("progress"):
        pytest.skip("no real model on this machine")
    assert progress_text(at) == "Stage 6 of 9, where you left Step through: the two pages share their stage"
    at.run()  # the next run on the same page: said once
    assert progress_text(at) == "Stage 6 of 9"


def progress_text(at) -> str:
    return at.get("progress")[0].proto.text
