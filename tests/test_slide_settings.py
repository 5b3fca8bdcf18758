"""Presenter mode hides the sidebar; its controls move to a Settings menu at the top of the slide.

A lecturer could not change the followed token, the head, the mask or the sentence without leaving presenter
mode. The menu holds the very same widgets (same keys), so a value set on a slide stays when presenter mode is
switched off, and the other way round.
"""

from __future__ import annotations

import json

import pytest

from apptest_support import open_page
from test_generation_why_fixes import spec_title

SETTINGS_KEYS = {"sentence", "token", "head", "mask", "heads", "d_model", "d_k", "d_v", "seed", "colour"}


def popovers(block) -> list:
    """The popovers in ``block``, at any depth (a page's top is one block: ``controls.page_top``)."""
    found = []
    for child in getattr(block, "children", {}).values():
        found += [child] if getattr(child, "type", None) == "popover" else popovers(child)
    return found


def settings_menu(at):
    menus = popovers(at.main)
    assert len(menus) == 1, "one Settings menu on a slide"
    assert menus[0].proto.popover.label == "Settings"
    return menus[0]


def keys_in(block) -> set[str]:
    kinds = ("selectbox", "radio", "slider", "text_input", "number_input", "toggle")
    return {widget.key for kind in kinds for widget in getattr(block, kind)}


def chart_titles(at) -> list[str]:
    return [spec_title(json.loads(chart.proto.spec)) for chart in at.get("vega_lite_chart")]


def test_a_slide_has_the_sidebars_controls_in_its_settings_menu():
    slide = open_page("pages/step_through.py", {"presenter": "true", "heads": "3"})
    assert SETTINGS_KEYS <= keys_in(settings_menu(slide))
    assert not keys_in(slide.sidebar), "nothing is drawn in the hidden sidebar"
    page = open_page("pages/step_through.py", {"heads": "3"})
    assert SETTINGS_KEYS <= keys_in(page.sidebar)
    assert not popovers(page.main), \
        "with the sidebar shown there is no Settings menu"


def test_the_head_and_the_mask_picked_on_a_slide_change_the_slide():
    slide = open_page("pages/step_through.py", {"presenter": "true", "heads": "3", "step": "softmax"})
    assert any(title.endswith("head 1") for title in chart_titles(slide)), chart_titles(slide)
    menu = settings_menu(slide)
    menu.selectbox(key="head").set_value(3)
    menu.radio(key="mask").set_value("causal")
    slide.run()
    assert not slide.exception, [e.value for e in slide.exception]
    assert any(title.endswith("head 3") for title in chart_titles(slide)), chart_titles(slide)
    assert (slide.query_params["head"], slide.query_params["mask"]) == ("3", "causal"), "the link keeps them"
    blocked = [info.value for info in open_page("pages/step_through.py", {
        "presenter": "true", "step": "masked"}).info if "No mask is set" in info.value]
    slide.selectbox(key="step").set_value("masked").run()
    assert blocked and not [info.value for info in slide.info if "No mask is set" in info.value], \
        "with the causal mask picked on the slide, stage 5 has something blocked to show"


@pytest.mark.parametrize("presenter", ["true", "false"])
def test_stage_5_without_a_mask_shows_the_causal_mask_in_one_click(presenter):
    """With the default mask ("none") stage 5 showed an all-✓ grid and sent the lecturer to a menu."""
    at = open_page("pages/step_through.py", {"presenter": presenter, "step": "masked"})
    assert not [m for m in at.markdown if "query–key pairs are blocked" in m.value]
    at.button(key="try_causal_mask").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["mask"] == "causal" and at.query_params["mask"] == "causal", "the link keeps it"
    assert at.selectbox(key="step").value == "masked", "still on stage 5"
    tokens = len(at.session_state["sentence"].split()) + 1  # the default sentence ends in "."
    assert any(f"{tokens * (tokens - 1) // 2} of {tokens * tokens} query–key pairs are blocked" in m.value
               for m in at.markdown), [m.value for m in at.markdown]
    assert not [b for b in at.button if b.key == "try_causal_mask"], "nothing left to offer"
    assert at.session_state["token"] != 0, "1·The, alone with itself under the causal mask, is followed no more"
    at.button(key="back_to_no_mask").click().run()  # it changed the lesson on every page: one click undoes it
    assert not at.exception and at.session_state["mask"] == "none", [e.value for e in at.exception]
    assert at.session_state["token"] == 0 and "token" not in at.query_params, "1·The is followed again"
    assert at.selectbox(key="step").value == "masked" and [b for b in at.button if b.key == "try_causal_mask"]
    assert not [b for b in at.button if b.key == "back_to_no_mask"]


def test_a_slide_offers_the_mask_beside_its_formula():
    """Under the slide's words the button was below a 1280×800 screen; beside the formula it is above the charts."""
    slide = open_page("pages/step_through.py", {"presenter": "true", "step": "masked"})
    formula = slide.main.get_by_key("slide_formula")
    assert [b.key for b in formula.button] == ["try_causal_mask"] and formula.latex, "the button by the formula"
    assert [b.key for b in slide.button if b.key == "try_causal_mask"] == ["try_causal_mask"], "and only there"
    assert any("button beside the formula" in info.value for info in slide.info), [i.value for i in slide.info]
    formula.button[0].click().run()
    formula = slide.main.get_by_key("slide_formula")
    assert [b.key for b in formula.button] == ["back_to_no_mask"], "undone from the same place"
    slide.selectbox(key="step").set_value("scores").run()
    assert not slide.main.get_by_key("slide_formula").button, "only stage 5 has a button there"


def test_the_slides_mask_button_says_when_it_moves_the_followed_row():
    """The outlined row jumped from 1·The to 6·mat with no word on the slide (the page's toast covered Next there,
    and the sidebar's note is inside the closed Settings)."""
    slide = open_page("pages/step_through.py", {"presenter": "true", "step": "masked"})

    def said() -> list[str]:
        return [c.value for c in slide.main.get_by_key("slide_formula").caption]

    assert said() == []
    slide.button(key="try_causal_mask").click().run()
    assert said() == ["Now following 6·mat: 1·The has one key under this mask."], said()
    slide.button(key="back_to_no_mask").click().run()
    assert said() == ["Back to this mask, 1·The is followed again."], said()
    slide.selectbox(key="step").set_value("scores").run()
    slide.selectbox(key="step").set_value("masked").run()
    assert said() == [], "said once, when it moved"


def test_a_value_set_on_a_slide_stays_when_presenter_mode_is_switched_off():
    slide = open_page("pages/step_through.py", {"presenter": "true", "heads": "3"})
    settings_menu(slide).selectbox(key="head").set_value(2)
    settings_menu(slide).text_input(key="sentence").input("Dogs chase cats")
    slide.run()
    slide.toggle(key="presenter").set_value(False).run()
    assert not slide.exception, [e.value for e in slide.exception]
    assert slide.sidebar.selectbox(key="head").value == 2
    assert slide.sidebar.text_input(key="sentence").value == "Dogs chase cats"
    assert [o for o in slide.sidebar.selectbox(key="token").options] == ["1·Dogs", "2·chase", "3·cats"]


@pytest.mark.parametrize("page", ["pages/real_model.py", "pages/inside_real_head.py"])
def test_a_real_model_slide_offers_its_sentence(page):
    slide = open_page(page, {"presenter": "true"})
    assert {"sentence", "colour"} <= keys_in(settings_menu(slide))
    assert not keys_in(slide.sidebar)


def test_the_slide_names_the_settings_menu_where_the_sidebar_is_hidden():
    slide = open_page("pages/step_through.py", {"presenter": "true", "step": "masked"})
    pointers = [info.value for info in slide.info if "No mask is set" in info.value]
    assert pointers and all("under Settings at the top" in text for text in pointers), pointers
