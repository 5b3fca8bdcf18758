"""Take it with you: the trace as CSV and JSON reads back to the trace, charts as SVG/PNG, the handout."""

from __future__ import annotations

import builtins
import html
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from apptest_support import open_page
from attention_core import LessonConfig, run_lesson
from attention_ui import export
from attention_ui.frames import token_labels
from attention_ui.text import STAGE_KEYS, STAGES

LESSON = run_lesson(LessonConfig(mask="causal", num_heads=2, d_k=3, d_v=5, seed=11))
LABELS = token_labels(LESSON.tokens)
SVG_NS = "{http://www.w3.org/2000/svg}"


def assert_same_as_trace(stages: dict[str, np.ndarray]) -> None:
    expected = export.trace_stages(LESSON.trace)
    assert set(stages) == set(expected)
    for name, values in expected.items():
        got = stages[name]
        assert got.shape == values.shape, name
        assert np.array_equal(np.isneginf(got), np.isneginf(values)), name
        finite = np.isfinite(values)
        np.testing.assert_allclose(got[finite], values[finite], atol=1e-6, rtol=0, err_msg=name)


def test_csv_reads_back_to_the_trace():
    assert_same_as_trace(export.stages_from_csv(export.trace_csv(LESSON.trace, LABELS)))


def test_json_reads_back_to_the_trace_and_is_strict_json():
    text = export.trace_json(LESSON.trace, LABELS, settings={"seed": 11})
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert_same_as_trace(export.stages_from_json(text))


def test_csv_rows_are_labelled_by_stage_head_and_token():
    frame = pd.read_csv(pd.io.common.StringIO(export.trace_csv(LESSON.trace, LABELS)))
    assert list(frame.columns) == ["stage", "head", "row", "row_index", "column", "column_index", "value"]
    weights = frame[(frame["stage"] == "weights") & (frame["head"] == 2)]
    cell = weights[(weights.row == "3·sat") & (weights.column == "1·The")]
    assert cell.value.item() == pytest.approx(float(LESSON.trace.weights[1, 2, 0]), abs=1e-6)
    assert frame[frame.stage == "masked"].value.eq(-np.inf).sum() == 2 * 21  # causal, 7 tokens, 2 heads
    assert set(frame[frame.stage == "q"].column) == {"q1", "q2", "q3"}  # features counted from 1
    concat = frame[(frame.stage == "concat") & (frame.row_index == 0)]
    assert list(concat.column) == [f"h{h}·c{c}" for h in (1, 2) for c in range(1, 6)]  # as the concat chart names them
    assert frame[frame.stage == "output"]["head"].isna().all()


def test_downloads_carry_x_and_the_weights_so_q_can_be_redone_by_hand():
    """Q = X W_Q (head 2's columns) from the numbers of one file, CSV or JSON, equals the file's own q of head 2."""
    inputs = {"x": LESSON.x, "projections": LESSON.projections}
    for stages in (export.stages_from_csv(export.trace_csv(LESSON.trace, LABELS, **inputs)),
                   export.stages_from_json(export.trace_json(LESSON.trace, LABELS, **inputs))):
        assert list(stages)[:4] == ["x", "w_q", "w_k", "w_v"]
        d_k = LESSON.trace.d_k
        redone = stages["x"] @ stages["w_q"][:, d_k:2 * d_k]
        np.testing.assert_allclose(redone, stages["q"][1], atol=1e-5)
    frame = pd.read_csv(pd.io.common.StringIO(export.trace_csv(LESSON.trace, LABELS, **inputs)))
    w_q = frame[frame.stage == "w_q"]
    assert list(w_q[w_q.row_index == 0].column) == [f"h{h}·q{c}" for h in (1, 2) for c in (1, 2, 3)]
    assert set(w_q.row) == {f"x{d}" for d in range(1, LESSON.x.shape[1] + 1)} and w_q["head"].isna().all()
    x = frame[frame.stage == "x"]
    assert x[(x.row_index == 2) & (x.column_index == 0)].row.item() == LABELS[2]


def test_json_names_the_axes_and_tokens():
    document = json.loads(export.trace_json(LESSON.trace, LABELS))
    assert document["tokens"] == list(LABELS) and document["num_heads"] == 2
    assert document["stages"]["scores"]["axes"] == ["head", "query", "key"]
    assert document["stages"]["masked"]["values"][0][0][1] is None  # −∞: token 1 may not see token 2
    assert document["stages"]["concat"]["columns"][:2] == ["h1·c1", "h1·c2"]


@pytest.mark.parametrize("stage", STAGE_KEYS)
def test_every_stage_has_charts_as_valid_svg_with_its_marks(stage):
    found = export.stage_charts(LESSON.trace, LABELS, stage, head=1, follow=2, x=LESSON.x)
    assert tuple(found) == export.STAGE_CHART_NAMES[stage]
    for name, chart in found.items():
        root = ET.fromstring(export.chart_svg(chart))
        assert root.tag == f"{SVG_NS}svg"
        marks = [g for g in root.iter(f"{SVG_NS}g") if "mark-" in (g.get("class") or "")]
        assert marks, f"{stage}/{name}: no marks in the SVG"
        texts = {t.text for t in root.iter(f"{SVG_NS}text")}
        assert "3·sat" in texts, f"{stage}/{name}: token labels missing"


def test_weights_svg_has_one_cell_per_query_key_pair():
    chart = export.stage_charts(LESSON.trace, LABELS, "softmax", head=0)["weights"]
    root = ET.fromstring(export.chart_svg(chart))
    cells = [p for g in root.iter(f"{SVG_NS}g") if "mark-rect" in (g.get("class") or "")
             for p in g.iter(f"{SVG_NS}path")]
    assert len(cells) >= 7 * 7


def test_the_weights_svg_draws_blocked_cells_grey_with_a_cross_as_the_page_does():
    """The handout's causal weights printed "0.000" on dark purple where the page draws a grey cell with "×": a
    blocked key read as a small weight."""
    root = ET.fromstring(export.chart_svg(export.stage_charts(LESSON.trace, LABELS, "softmax", head=0)["weights"]))
    texts = [t.text for t in root.iter(f"{SVG_NS}text")]
    blocked = int((~LESSON.trace.mask[0]).sum())  # causal, 7 tokens: 21 blocked pairs
    assert texts.count("×") == blocked and texts.count("0.000") == 0, (texts.count("×"), texts.count("0.000"))


def test_png_is_a_png():
    png = export.chart_png(export.stage_charts(LESSON.trace, LABELS, "scores")["scores"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000


def test_handout_holds_every_stage_and_opens_offline():
    page = export.handout_html(LESSON.trace, LABELS, x=LESSON.x, head=1, follow=2, settings={"seed": 11})
    for stage in STAGES:
        assert f"<section id='{stage.key}'>" in page and stage.title in page
        assert export.HANDOUT_FORMULAS[stage.key] in page
    assert page.count("<svg") >= len(STAGES) + 3  # Q/K/V, mask + masked, weights + row
    assert "Worked numbers for 3·sat" in page
    embed = page[page.index("<section id='embed'>"):page.index("<section id='qkv'>")]
    assert ">x1<" in embed and ">d1<" not in embed, "X's columns are x1, x2, … as on the page"
    assert not re.search(r"<script|<link|src=[\"']?http|url\(http|@import", page), "must not load anything"
    ET.fromstring(page[page.index("<svg"):page.index("</svg>") + 6])


def test_the_handouts_raw_scores_are_written_out_term_by_term_as_on_the_page():
    """The page writes each score as its d_k products; the handout gave q·k alone."""
    from attention_core import row_arithmetic
    from attention_ui import worked

    page = export.handout_html(LESSON.trace, LABELS, x=LESSON.x, head=1, follow=2)
    scores = page[page.index("<section id='scores'>"):page.index("<section id='scaled'>")]
    r = row_arithmetic(LESSON.trace, 1, 2)
    for j in range(len(LABELS)):
        assert html.escape(worked.product_sum(r.q, r.k[j])) in scores


def test_handout_escapes_user_text():
    lesson = run_lesson(LessonConfig(sentence="<script>alert(1)</script> & co", num_heads=1))
    page = export.handout_html(lesson.trace, token_labels(lesson.tokens), x=lesson.x, with_charts=False,
                               settings={"sentence": lesson.config.sentence})
    assert "<script" not in page and "&lt;script&gt;" in page


def test_without_vl_convert_svg_and_png_say_why_and_the_handout_still_works(monkeypatch):
    real_import = builtins.__import__

    def no_vl_convert(name, *args, **kwargs):
        if name == "vl_convert":
            raise ImportError("No module named 'vl_convert'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_vl_convert)
    chart = export.stage_charts(LESSON.trace, LABELS, "scores")["scores"]
    assert not export.converter_available()
    with pytest.raises(export.ExportUnavailable, match="vl-convert-python"):
        export.chart_svg(chart)
    with pytest.raises(export.ExportUnavailable, match="vl-convert-python"):
        export.chart_png(chart)
    page = export.handout_html(LESSON.trace, LABELS, x=LESSON.x)
    assert "Charts are not included" in page and "<svg" not in page and "<section id='output'>" in page


def test_step_through_offers_the_downloads():
    at = open_page("pages/step_through.py")
    at.selectbox(key="step").set_value("softmax").run()
    assert not at.exception
    assert not at.get("download_button"), "the buttons are drawn only when asked for"
    at.toggle(key="show_downloads").set_value(True).run()
    labels = [e.proto.label for e in at.get("download_button")]
    assert labels[:3] == ["Trace (CSV)", "Trace (JSON)", "Handout (HTML)"]
    assert labels[3:] == ["SVG", "PNG", "SVG", "PNG"]  # the weights heatmap and the row's bars


def test_download_names_say_which_settings_and_stage_they_hold():
    """Two downloads on other settings both came as "attention-trace.csv" (the second "attention-trace (1).csv"), and
    stage 4's one chart as "scaled-scaled.svg"."""
    from types import SimpleNamespace

    def settings(sentence: str, heads: int, head: int = 0):
        config = LessonConfig(sentence=sentence, num_heads=heads, d_k=8, mask="causal", seed=7)
        return SimpleNamespace(config=config, lesson=run_lesson(config), head=head)

    one = settings("Ça va? 🙂 <b>The</b> dog barked loudly.", 4, head=2)
    stem = "attention_ca-va-b_h4-dk8-causal-seed7"
    assert export.file_stem(one) == stem
    assert export.chart_file_name(one, "scaled", "scaled", "svg") == f"{stem}_stage4-scaled-head3.svg"
    assert export.chart_file_name(one, "qkv", "q", "png").endswith("_stage2-qkv-q-head3.png")
    alone = settings("🙂 🙂", 1)
    assert export.file_stem(alone) == "attention_sentence_h1-dk8-causal-seed7"
    assert export.chart_file_name(alone, "softmax", "row", "svg").endswith("_stage6-softmax-row.svg"), "one head"
    sentence = "The cat sat on the mat."
    assert export.file_stem(settings(sentence, 2)) != export.file_stem(settings(sentence, 4))


def test_step_through_says_why_svg_and_png_are_missing_without_vl_convert(monkeypatch):
    monkeypatch.setattr(export, "converter_available", lambda: False)
    at = open_page("pages/step_through.py")
    at.toggle(key="show_downloads").set_value(True).run()
    assert not at.exception
    labels = [e.proto.label for e in at.get("download_button")]
    assert labels == ["Trace (CSV)", "Trace (JSON)", "Handout (HTML)"]
    assert any("vl-convert-python" in i.value for i in at.info)


def test_a_slide_leaves_the_downloads_to_the_page():
    """A lecturer paging down a slide's worked numbers met "Take it with you: downloads" at their foot, a switch
    the hall has no use for; the downloads stay on the page, where a student or a lecturer preparing finds them."""
    assert open_page("pages/step_through.py").toggle(key="show_downloads")
    with pytest.raises(KeyError):
        open_page("pages/step_through.py", {"presenter": "true"}).toggle(key="show_downloads")


def test_the_handout_writes_a_stages_list_as_a_list():
    """Stage 9's page words list the residual connection, the feed-forward network and layer normalisation (they
    were one dense paragraph); the handout shows that list as one, its Markdown not printed as asterisks."""
    page = export.handout_html(LESSON.trace, LABELS, x=LESSON.x, with_charts=False)
    output = page[page.index("<section id='output'>"):]
    assert "<li><strong>The residual connection</strong>:" in output and "**" not in page
    assert output.count("<li>") == 3
    assert export._prose_html("a <b> **c**\n\n- x & y") == \
        "<p>a &lt;b&gt; <strong>c</strong></p><ul><li>x &amp; y</li></ul>"
