"""Masking: the padding panel always shows [PAD] keys and says what it padded to, and on a slide it stays beside its
mask.

- A lesson padded to no more tokens than the sentence has padded nothing: the padding panel was all ✓ like "none"
  while its words spoke of blocked [PAD] keys and its question asked about padding to 7 tokens. The page now says so
  where the student looks, pads the panel to a length that adds [PAD] tokens, and its words and question follow it.
- On a slide a mask stays beside its weights, also for the padded sentence's 10 tokens or a longer sentence: one
  under the other, each as wide as the slide, an 11-token pair was two grids each taller than the window.
"""

from __future__ import annotations

import json
import re

import pytest

from apptest_support import open_page

MASKING = "pages/masking.py"
TOKENS = 7  # "The cat sat on the mat."


def _spec(at, title: str) -> dict:
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if json.dumps(spec.get("title", ""), ensure_ascii=False).find(title) >= 0:
            return spec
    raise AssertionError(f"no chart titled {title!r}")


def _rows(at, title: str) -> list[str]:
    for chart in at.get("vega_lite_chart"):
        if title in json.dumps(json.loads(chart.proto.spec).get("title", ""), ensure_ascii=False):
            import pandas as pd
            import pyarrow as pa
            frame = pd.concat([pa.ipc.open_stream(d.data.data).read_pandas() for d in chart.proto.datasets])
            return list(dict.fromkeys(frame.sort_values("row_index")["query"]))
    raise AssertionError(f"no chart titled {title!r}")


def _texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [i.value for i in at.info]
                     + [str(getattr(w, "label", "")) for kind in ("number_input", "radio") for w in at.get(kind)])


def _question(at) -> str:
    """The padding question of Check yourself (drawn while the expander is open)."""
    at.session_state["open_check_masks"] = True
    at.run()
    return next(line for line in _texts(at).splitlines() if "padding mask pads the sentence" in line)


@pytest.mark.parametrize("pad_to", [3, TOKENS])
def test_padding_to_no_more_than_the_sentence_says_so_and_shows_pad_keys(pad_to):
    at = open_page(MASKING, {"mask": "padding", "pad_to": str(pad_to)})
    notes = [i.value for i in at.info if "already has" in i.value]
    assert len(notes) == 1, [i.value for i in at.info]
    assert f"Your sentence already has {TOKENS} tokens, so padding it to {pad_to} pads nothing" in notes[0]
    assert f"pad to {TOKENS + 1} or more (in the sidebar) to see [PAD] keys" in notes[0], notes[0]
    assert "pad it to 10" in notes[0], notes[0]
    rows = _rows(at, "mask: padding")
    assert len(rows) == 10 and rows[TOKENS:] == ["8·[PAD]", "9·[PAD]", "10·[PAD]"], rows
    assert "Here your 7 tokens are padded to 10: 3 [PAD] tokens." in _texts(at)
    assert "pads the sentence to 10 tokens" in _question(at), _question(at)


def test_padding_that_adds_pad_tokens_keeps_the_lessons_length_and_no_note():
    at = open_page(MASKING, {"mask": "padding", "pad_to": "12"})
    assert not [i.value for i in at.info if "already has" in i.value]
    assert len(_rows(at, "mask: padding")) == 12
    assert "Here your 7 tokens are padded to 12: 5 [PAD] tokens." in _texts(at)
    assert "pads the sentence to 12 tokens" in _question(at)


def test_another_lessons_mask_says_the_padding_panel_picks_its_length():
    at = open_page(MASKING, {"mask": "causal"})
    assert "Here your 7 tokens are padded to 10: 3 [PAD] tokens. (This example picks that length itself. To " \
           "choose it, pick the mask “padding” in the sidebar: “Pad the sentence to … tokens” appears under it.)" \
        in _texts(at)


def test_one_token_is_padded():
    """"Here your 1 token are padded to 10" read wrong."""
    at = open_page(MASKING, {"mask": "causal", "sentence": "Hello"})
    assert "Here your 1 token is padded to 10: 9 [PAD] tokens." in _texts(at)


def _prints_numbers(spec: dict) -> bool:
    """Whether a heatmap prints its numbers: a text layer not kept to the blocked cells' "×" marks."""
    return any(isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"
               and {"filter": "datum.masked"} not in layer.get("transform", []) for layer in spec.get("layer", []))


def _value_font(spec: dict) -> int:
    """The font of the numbers printed in a heatmap's cells (its text layer); of a chart that fills its container,
    the largest the browser may give them (it fits them to the cells it draws)."""
    def marks(node):
        if isinstance(node, dict):
            mark = node.get("mark")
            if isinstance(mark, dict) and mark.get("type") == "text" and "fontSize" in mark:
                size = mark["fontSize"]
                yield int(re.search(r": min\((\d+),", size["expr"]).group(1)) if isinstance(size, dict) else size
            for value in node.values():
                yield from marks(value)
        elif isinstance(node, list):
            for value in node:
                yield from marks(value)
    return min(marks(spec), default=None)


@pytest.mark.parametrize("sentence", [None, "The animal didn't cross the street because it was too tired"])
def test_a_slide_keeps_each_mask_beside_its_weights(sentence):
    """A mask and its weights are drawn to be compared: on a slide they stay side by side (the padded sentence's 10
    tokens, an 11-token sentence), their numbers printed at a slide's smallest size or more. Stacked, each as wide
    as the slide, an 11-token pair was two grids each taller than a 1280 × 800 window."""
    from attention_ui.views import MIN_SLIDE_VALUE_PX

    at = open_page(MASKING, {"presenter": "true", **({"sentence": sentence} if sentence else {})})
    in_columns = [json.loads(c.proto.spec)["title"]["text"] for column in at.columns
                  for c in column.get("vega_lite_chart")]
    for kind in ("none", "causal", "padding"):
        assert {f"mask: {kind}", f"weights with {kind} mask — head 1"} <= set(in_columns), (kind, in_columns)
        spec = _spec(at, f"weights with {kind} mask")
        if _prints_numbers(spec):  # else colours only, the values in the tooltips
            assert _value_font(spec) >= MIN_SLIDE_VALUE_PX, kind
    if sentence is None:  # seven tokens: the numbers printed
        assert _value_font(_spec(at, "weights with none mask")) >= 16


def test_the_page_keeps_the_padding_panel_beside_its_mask():
    at = open_page(MASKING)
    in_columns = [json.loads(c.proto.spec)["title"]["text"] for column in at.columns
                  for c in column.get("vega_lite_chart")]
    assert {"mask: padding", "weights with padding mask — head 1"} <= set(in_columns), in_columns


def test_a_weights_panel_too_narrow_for_its_numbers_says_so_and_has_them_all_at_hand():
    """The padded 10 × 10 weights beside their mask print colours only: a student could not check that the [PAD]
    keys get 0 and the real tokens share the rest. Under them, as under a step-through stage, the page says so and
    "All the numbers" holds the matrix; the 7-token panels print theirs and have neither."""
    at = open_page(MASKING)
    assert not _prints_numbers(_spec(at, "weights with padding mask"))
    assert _prints_numbers(_spec(at, "weights with causal mask"))
    assert sum("too narrow for their numbers" in c.value for c in at.caption) == 1, [c.value for c in at.caption]
    labels = [e.label for e in at.expander if e.label.startswith("All the numbers")]
    assert labels == ["All the numbers: weights with padding mask — head 1"], labels
    at.session_state["open_numbers_padding"] = True
    at.run()
    (table,) = [frame.value for frame in at.dataframe if "10·[PAD]" in frame.value.columns]
    numbers = table.astype(float)
    assert (numbers[["8·[PAD]", "9·[PAD]", "10·[PAD]"]] == 0).all().all()
    assert ((numbers.sum(axis=1) - 1).abs() < 2e-3).all()  # each row's weights, rounded as shown, add up to 1


@pytest.mark.parametrize("pad_to, rows", [(10, "rows 8–10** get"), (8, "row 8** gets")])
def test_step_through_says_why_the_pad_rows_have_even_weights(pad_to, rows):
    """Step through's softmax under the padding mask showed each [PAD] row at 1/7 on every real token, without a
    word, while the sidebar says the mask hides the [PAD] tokens. The stage now says why the rows have weights, why
    they are even, and that nothing reads them."""
    at = open_page("pages/step_through.py", {"mask": "padding", "pad_to": str(pad_to), "step": "softmax"})
    note = [m.value for m in at.markdown if m.value.startswith("**The [PAD]")]
    assert len(note) == 1 and rows in note[0], note
    assert f"1/{TOKENS} ≈ {1 / TOKENS:.3f} on every real token" in note[0] and "all zeros" in note[0], note
    at = open_page("pages/step_through.py", {"mask": "causal", "step": "softmax"})
    assert not [m.value for m in at.markdown if m.value.startswith("**The [PAD]")]


def test_masking_says_why_its_pad_rows_have_even_weights():
    """The Masking page's padding panel showed every [PAD] row at exactly 1/7, and only Step through said why."""
    at = open_page(MASKING)  # no mask in the sidebar: the panel pads to its own length
    note = [m.value for m in at.markdown if m.value.startswith("**The [PAD]")]
    assert len(note) == 1 and note[0].startswith("**The [PAD] rows 8–10** are each spread evenly, "), note
    assert f"1/{TOKENS} ≈ {1 / TOKENS:.3f} on every real token" in note[0] and "all zeros" in note[0], note
