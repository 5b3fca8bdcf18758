"""Masking: the padding panel always shows [PAD] keys and says what it padded to, and on a slide its numbers are
as large as the other panels'.

- A lesson padded to no more tokens than the sentence has padded nothing: the padding panel was all ✓ like "none"
  while its words spoke of blocked [PAD] keys and its question asked about padding to 7 tokens. The page now says so
  where the student looks, pads the panel to a length that adds [PAD] tokens, and its words and question follow it.
- On a slide the padded sentence's 10 tokens printed the padding panel's weights at 12 px (19 px on the others):
  the two charts go one under the other there, each as wide as the slide, and print them at the others' size.
"""

from __future__ import annotations

import json

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
    assert "Here your 7 tokens are padded to 10: 3 [PAD] tokens. (The lesson's mask is “causal”" in _texts(at)


def _value_font(spec: dict) -> int:
    """The font of the numbers printed in a heatmap's cells (its text layer)."""
    def marks(node):
        if isinstance(node, dict):
            mark = node.get("mark")
            if isinstance(mark, dict) and mark.get("type") == "text" and "fontSize" in mark:
                yield mark["fontSize"]
            for value in node.values():
                yield from marks(value)
        elif isinstance(node, list):
            for value in node:
                yield from marks(value)
    return min(marks(spec))


def test_a_slide_prints_the_padding_panels_weights_as_large_as_the_others():
    at = open_page(MASKING, {"presenter": "true"})
    fonts = {kind: _value_font(_spec(at, f"weights with {kind} mask")) for kind in ("none", "causal", "padding")}
    assert fonts["padding"] >= 16 and fonts["padding"] >= fonts["none"] - 1, fonts
    in_columns = [json.loads(c.proto.spec)["title"]["text"] for column in at.columns
                  for c in column.get("vega_lite_chart")]
    assert "weights with none mask" in in_columns, "seven tokens stay side by side with their mask"
    assert "weights with padding mask" not in in_columns, "ten tokens go under their mask, as wide as the slide"


def test_the_page_keeps_the_padding_panel_beside_its_mask():
    at = open_page(MASKING)
    in_columns = [json.loads(c.proto.spec)["title"]["text"] for column in at.columns
                  for c in column.get("vega_lite_chart")]
    assert {"mask: padding", "weights with padding mask"} <= set(in_columns), in_columns
