"""What it costs (/what-it-costs): how the measurement spends its time budget, what its charts put on their axes,
where the formulas' lines cross, and what a slide shows first.

The budget logic is tested with a fake clock and fake timings (no timed asserts); what the page shows through
AppTest, with the timings faked where their values matter; the slide's first screen in a real browser.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pyarrow as pa
import pytest

from apptest_support import chart_data, open_page
from attention_core import LAYER_KINDS, MAX_COST_SECONDS, LessonConfig, cost_lengths, operation_counts, run_lesson
from attention_core import cost as core  # (its names are looked up in the tests: each fails on its own)
from attention_ui import why

PAGE = "pages/cost.py"

# Seconds per forward pass at d = 64 on a 2-core machine (attend, fused, recurrent), as measured there.
PER_CALL = {64: (6e-5, 5e-5, 3.6e-4), 128: (1e-4, 1e-4, 7.5e-4), 256: (2.4e-4, 5e-4, 2.2e-3),
            512: (1.0e-3, 1.6e-3, 4.0e-3), 1024: (4.4e-3, 6.4e-3, 5.2e-3), 2048: (2.2e-2, 3.4e-2, 1.1e-2)}


class FakeMachine:
    """A clock and a ``measured_seconds`` that returns PER_CALL and advances the clock by what the timing would
    take on a machine ``load`` times slower than idle (the thread gets 1/load of a core), plus a warm-up the
    first time."""

    def __init__(self, load: float, warm_up: float = 0.5):
        self.now, self.load, self.warm_up, self.calls = 0.0, load, warm_up, []

    def clock(self) -> float:
        return self.now

    def cost(self, length: int) -> float:
        """What timing every layer at ``length`` takes on this machine."""
        return sum(self.load * core.timing_seconds(s) for s in PER_CALL[length])

    def measured_seconds(self, device, kind, length, width, attempt=0):
        per_call = PER_CALL[length][LAYER_KINDS.index(kind)]
        self.now += self.load * core.timing_seconds(per_call) + (self.warm_up if not self.calls else 0.0)
        self.calls.append((length, kind, attempt))
        return per_call * (1 + 0.1 * attempt)  # the second pass a little slower: the first one's time counts


def run_on(machine: FakeMachine, monkeypatch) -> why.CostRun:
    """``measure_costs`` at d = 64 up to T = 2048 on ``machine`` (its clock stands in for ``time.perf_counter``)."""
    monkeypatch.setattr(why, "measured_seconds", machine.measured_seconds)
    monkeypatch.setattr(why, "time", SimpleNamespace(perf_counter=machine.clock))
    return why.measure_costs("cpu", cost_lengths(2048), 64, lambda f, text: None)


# ------------------------------------------------------------------------------------------------ the budget


def test_a_timing_costs_its_minimum_run_whatever_a_pass_takes():
    assert core.timing_seconds(1e-5) == pytest.approx(core.MIN_RUN_TIME + 0.03)
    assert core.timing_seconds(0.05) == pytest.approx(core.MIN_RUN_TIME + 0.15)
    # attention's pass grows with T², but at these lengths the three timings cost about their minimum runs
    both = core.predicted_timing_seconds({"a": 1e-3, "b": 2e-3}, 512, 1024)
    assert both == pytest.approx(2 * core.MIN_RUN_TIME + 0.06)
    assert core.predicted_timing_seconds({"a": 4e-3}, 1024, 2048) == pytest.approx(core.MIN_RUN_TIME + 3 * 0.016)


@pytest.mark.parametrize("load", [1, 3, 6])
def test_the_default_run_reaches_t_2048_within_the_budget_on_a_busy_machine(monkeypatch, load):
    """At d = 64, up to T = 2048, a run stopped before T = 1024 after 12 s: it expected each length to take 4× the
    last one's time, though each timing's 0.1-s minimum run dominated it."""
    machine = FakeMachine(load)
    run = run_on(machine, monkeypatch)
    timings, skipped = run[0], run[1]
    assert skipped == [] and sorted(set(timings["T"])) == cost_lengths(2048), skipped
    assert run.next_seconds == 0
    assert run.elapsed == machine.now <= MAX_COST_SECONDS
    assert {a for _, _, a in machine.calls} == {0, 1}, "both passes ran"
    first = run.timings.set_index(["T", "layer"])["seconds"]
    assert first[2048, "attend"] == PER_CALL[2048][0], "the faster pass counts"


def test_a_run_that_cannot_fit_leaves_out_the_longest_lengths_and_says_what_the_next_would_take(monkeypatch):
    machine = FakeMachine(load=25)  # one length takes about 8 s
    run = run_on(machine, monkeypatch)
    timed = sorted(set(run.timings["T"]))
    assert timed == cost_lengths(2048)[:len(timed)] and run.skipped == cost_lengths(2048)[len(timed):]
    assert run.skipped, "a machine this slow cannot time all six lengths in 30 s"
    assert run.elapsed == machine.now <= MAX_COST_SECONDS
    nxt = run.skipped[0]
    assert machine.cost(nxt) / 2 <= run.next_seconds <= 2 * machine.cost(nxt), (run.next_seconds, machine.cost(nxt))
    # it stopped where the next length would have passed the budget, not earlier
    first_pass = sum(machine.cost(n) for n in timed) + machine.warm_up
    assert first_pass + machine.cost(nxt) > MAX_COST_SECONDS


def test_a_second_pass_short_of_time_keeps_the_first_passs_lengths(monkeypatch):
    """The second pass used to cut the list of lengths when it ran out of time, dropping what the first had timed."""
    machine = FakeMachine(load=9)  # the first pass takes about 22 s: room to time only the shortest again
    run = run_on(machine, monkeypatch)
    assert sorted(set(run.timings["T"])) == cost_lengths(2048) and run.skipped == []
    again = {n for n, _, attempt in machine.calls if attempt == 1}
    assert again == {64, 128}
    assert run.elapsed <= MAX_COST_SECONDS


# ---------------------------------------------------------------------------------------- helpers of the page


def test_one_two_five_ticks_cover_the_times():
    assert why.one_two_five(5.7e-5, 2.53e-2) == [5e-05, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2]
    assert why.one_two_five(1e-4, 1e-4) == [1e-4]


@pytest.mark.parametrize("longest", [256, 2048])
@pytest.mark.parametrize("width", [16, 32, 64, 128, 256])
def test_the_formulas_lengths_show_the_crossing_at_t_equals_d(longest, width):
    lengths = core.formula_lengths(longest, width)
    assert lengths[0] <= width / 4 and lengths[-1] >= max(longest, 2 * width) and width in lengths
    assert all(b == 2 * a for a, b in zip(lengths, lengths[1:]))


# -------------------------------------------------------------------------------------------- what is shown


def chart_spec(at, title_part: str) -> dict:
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        if title_part in json.dumps(spec.get("title", ""), ensure_ascii=False):
            return spec
    raise AssertionError(f"no chart titled like {title_part!r}")


def marker_rows(at, title_part: str) -> list[list[dict]]:
    """The rows of each dataset of the chart, as records."""
    for element in at.get("vega_lite_chart"):
        if title_part in json.dumps(json.loads(element.proto.spec).get("title", ""), ensure_ascii=False):
            return [pa.ipc.open_stream(d.data.data).read_pandas().to_dict("records") for d in element.proto.datasets]
    raise AssertionError(f"no chart titled like {title_part!r}")


def axis(spec: dict, channel: str) -> dict:
    return next(layer["encoding"][channel]["axis"] for layer in spec["layer"]
                if "axis" in layer.get("encoding", {}).get(channel, {}))


@pytest.mark.parametrize("width", [16, 32, 64])
def test_the_formulas_chart_shows_where_its_lines_cross(width):
    """The chart started at T = 64, so the crossing the text names (T = d = 16 or 32) was off it."""
    at = open_page(PAGE, {"cost_longest": "2048", "cost_width": str(width)})
    counts = chart_data(at, "multiply-adds")
    lengths = sorted(set(counts["T"]))
    assert lengths[0] <= width / 4, lengths
    attention = counts[counts["layer"] == "self-attention"].set_index("T")["operations"]
    recurrent = counts[counts["layer"] == "recurrent"].set_index("T")["operations"]
    assert (attention[lengths[0]] < recurrent[lengths[0]]) and (attention[lengths[-1]] > recurrent[lengths[-1]])
    assert attention[width] == recurrent[width] == operation_counts(width, width)["recurrent"]
    spec = chart_spec(at, "multiply-adds")
    assert axis(spec, "x")["values"] == lengths, "a tick at each length"
    assert [{"T": width, "text": "T = d"}] in marker_rows(at, "multiply-adds"), "a labelled rule at T = d"
    shown = " ".join(m.value for m in at.markdown)
    assert f"The self-attention and recurrent lines cross at T = d = {width} (the grey line marked T = d)" in shown


def fake_timings(attend_2048: float):
    """measured_seconds with attention faster than the recurrent layer up to T = 1024, and ``attend_2048`` at 2048."""
    def fake(device, kind, length, width, attempt=0):
        seconds = dict(zip(LAYER_KINDS, PER_CALL[length]))[kind]
        return attend_2048 if (kind, length) == ("attend", 2048) else seconds
    return fake


def test_the_timing_chart_ticks_at_the_measured_lengths_and_reads_in_ms_and_us(monkeypatch):
    """Its x ticks were 100, 150 … 500 (none at 64, 128, 256, 512), its y labels raw seconds (0.00001)."""
    monkeypatch.setattr(why, "measured_seconds", fake_timings(2.2e-2))
    at = open_page(PAGE, {"cost_longest": "512", "cost_width": "64"})
    at.button(key="cost_measure").click().run()
    assert not at.exception
    spec = chart_spec(at, "time per forward pass")
    assert axis(spec, "x")["values"] == [64, 128, 256, 512]
    y = axis(spec, "y")
    assert y["labelExpr"] == why.SECONDS_LABEL and "' µs'" in y["labelExpr"] and "' ms'" in y["labelExpr"]
    assert y["values"] == why.one_two_five(5e-5, 4e-3) and y["title"] == "time per forward pass"
    tooltips = [t["field"] for layer in spec["layer"] for t in layer["encoding"].get("tooltip", [])]
    assert "time" in tooltips and "seconds" not in tooltips
    data = chart_data(at, "time per forward pass")
    assert data.loc[(data["T"] == 512) & data["layer"].str.startswith("recurrent"), "time"].item() == "4.00 ms"


@pytest.mark.parametrize("attend_2048, caught_up", [(2.2e-2, True), (9e-3, False)])
def test_the_page_says_where_attention_caught_up_with_the_recurrent_layer(monkeypatch, attend_2048, caught_up):
    monkeypatch.setattr(why, "measured_seconds", fake_timings(attend_2048))
    at = open_page(PAGE, {"cost_longest": "2048", "cost_width": "64"})
    at.button(key="cost_measure").click().run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    why_text = [m.value for m in at.markdown if m.value.startswith("**Why the count and the clock disagree.**")]
    assert len(why_text) == 1
    listed = "128, 256, 512, 1024 and 2048" if not caught_up else "128, 256, 512 and 1024"
    assert f"attention ran faster at T = {listed}." in why_text[0]
    said = "Here it had caught up at T = 2048: there attention was the slower of the two."
    assert (said in why_text[0]) == caught_up


def test_a_run_that_left_lengths_out_says_its_own_numbers(monkeypatch):
    def slow_run(device, lengths, width, on_progress, budget=MAX_COST_SECONDS):
        rows = [{"T": n, "layer": kind, "seconds": s} for n in lengths[:4]
                for kind, s in zip(LAYER_KINDS, PER_CALL[n])]
        return why.CostRun(pd.DataFrame(rows), lengths[4:], elapsed=12.3, next_seconds=21.4)

    monkeypatch.setattr(why, "measure_costs", slow_run)
    at = open_page(PAGE, {"cost_longest": "2048", "cost_width": "64"})
    at.button(key="cost_measure").click().run()
    assert [w.value for w in at.warning] == [
        "Measured T = 64 to 512 in 12 s. Timing T = 1024 would take about 21 s more, past the 30 s the run may take, "
        "so T = 1024 and 2048 were left out. This machine is busy: press the button again later (the lengths already "
        "timed are reused, which leaves more time for the longer ones), or pick a smaller longest T."]


def test_a_slide_folds_the_background_away_and_puts_the_sliders_under_the_charts():
    at = open_page(PAGE, {"presenter": "true"})
    assert not at.exception
    background = [e for e in at.expander if e.label.startswith("Why T²")]
    assert len(background) == 1 and any("Vaswani" in c.value for c in background[0].caption)
    assert any("Every query is compared with every key" in m.value for m in background[0].markdown)
    # the page's elements in the order drawn: the two charts before the two sliders
    kinds = [n.type for n in _in_order(at.main) if n.type in ("vega_lite_chart", "select_slider")]
    assert kinds[:4] == ["vega_lite_chart"] * 2 + ["select_slider"] * 2, kinds
    at = open_page(PAGE)
    assert not [e for e in at.expander if e.label.startswith("Why T²")], "the lesson shows the background as it is"
    kinds = [n.type for n in _in_order(at.main) if n.type in ("vega_lite_chart", "select_slider")]
    assert kinds[:4] == ["select_slider"] * 2 + ["vega_lite_chart"] * 2, kinds


def test_a_slide_keeps_what_the_charts_say_and_folds_how_to_read_them_and_the_timing_details():
    """Under a slide's first charts stood two long paragraphs (log axes, the exact counts), and section 2 opened with
    another: a hall read walls of words. A slide keeps the crossing and the weights' memory; the rest is a click away.
    The page shows every word as it is."""
    at = open_page(PAGE, {"presenter": "true"})
    main = [m.value for m in at.main.markdown]
    shown = " ".join(m for m in main if "cross at T = d = 64" in m)
    assert "one head's weights take 16.0 MiB" in shown and "both exact counts" not in shown, shown
    counts = next(e for e in at.expander if e.label == "Reading the log axes, and the exact counts")
    folded = " ".join(m.value for m in counts.markdown)
    assert "Both charts have log axes" in folded and "both exact counts are twice the plotted lines" in folded
    timing = next(e for e in at.expander if e.label == "How the times are measured")
    assert "repeated for at least 0.1 s, in two passes" in " ".join(m.value for m in timing.markdown)
    assert any(m.startswith("Times one forward pass at T = 64") and "in two passes" not in m for m in main)
    page = open_page(PAGE)
    assert not [e for e in page.expander if e.label in ("Reading the log axes, and the exact counts",
                                                          "How the times are measured")]
    words = " ".join(m.value for m in page.markdown)
    assert "Both charts have log axes" in words and "both exact counts are twice the plotted lines" in words
    assert "The time is the CPU time of one thread" in words or "The time is wall time" in words


def test_a_quick_run_times_its_first_two_lengths_whatever_the_budget_and_leaves_out_the_third(monkeypatch):
    """A slide's quick run must give a slope (two lengths) even where the first length alone used up its budget."""
    machine = FakeMachine(load=20.0)  # every timing takes seconds: far past the quick budget
    monkeypatch.setattr(why, "time_layer", lambda kind, length, width, device, min_run_time: (
        machine.measured_seconds(device, kind, length, width)))
    run = why.measure_costs("cpu", why.quick_lengths(2048), 64, lambda f, text: None, budget=why.QUICK_SECONDS,
                            clock=machine.clock, passes=1, min_run_time=why.QUICK_RUN_TIME, always=2)
    assert sorted(set(run.timings["T"])) == [256, 512] and run.skipped == [1024]
    assert [length for length, _, _ in machine.calls] == [256] * 3 + [512] * 3


def test_a_slide_shows_a_quick_run_without_a_press_and_the_page_waits_for_the_button(monkeypatch):
    """A clicker cannot press Measure: the slide's section 2 stayed empty ("Nothing measured yet"). A slide times
    a few lengths quickly by itself and says so; the page still measures on a press only."""
    calls = []

    def fake_time_layer(kind, length, width, device="cpu", *, min_run_time=core.MIN_RUN_TIME, seed=0):
        calls.append((kind, length, width, min_run_time))
        return dict(zip(LAYER_KINDS, PER_CALL[length]))[kind]

    monkeypatch.setattr(why, "time_layer", fake_time_layer)
    why.quick_costs.clear()
    try:
        slide = open_page(PAGE, {"presenter": "true", "cost_longest": "2048", "cost_width": "64"})
        assert not slide.exception
        assert not [i for i in slide.info if "Nothing measured yet" in i.value]
        quick = [i.value for i in slide.info if i.value.startswith("**A quick run, measured without a press:**")]
        assert len(quick) == 1 and "T = 256, 512 and 1024 only" in quick[0], [i.value for i in slide.info]
        assert "**Measure on cpu** times every T from 64 to 2048" in quick[0]
        assert "quick run" in json.dumps(chart_spec(slide, "time per forward pass")["title"])
        assert sorted(set(chart_data(slide, "time per forward pass")["T"])) == [256, 512, 1024]
        assert len(calls) == 9 and {c[3] for c in calls} == {why.QUICK_RUN_TIME}
        page = open_page(PAGE, {"cost_longest": "2048", "cost_width": "64"})
        assert any("Nothing measured yet" in i.value for i in page.info)
        assert not [c for c in page.get("vega_lite_chart") if "time per forward pass" in c.proto.spec]
        assert len(calls) == 9
        # a press on the slide replaces the quick run with the full one
        slide.button(key="cost_measure").click().run()
        assert not [i for i in slide.info if i.value.startswith("**A quick run")]
        assert sorted(set(chart_data(slide, "time per forward pass")["T"])) == cost_lengths(2048)
    finally:
        why.quick_costs.clear()


def _in_order(node):
    """Every element under ``node``, depth first, in the order the page draws them."""
    children = getattr(node, "children", None)
    if not children:
        yield node
        return
    for key in sorted(children):
        yield from _in_order(children[key])


# ------------------------------------------------------------------------------------------------ a browser

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_presenter_layout as layout  # noqa: E402

server, slide = layout.server, layout.slide  # its fixtures: a server and a 1280x800 slide (Chromium: conftest)
needs_browser = layout.needs_browser


@needs_browser
def test_the_slides_first_chart_is_on_its_first_screen(slide):
    """At 1280 × 800 the first chart began at y ≈ 762, under the intro, the paper's table and the sliders."""
    page = slide("/what-it-costs")
    tops = page.evaluate("""() => Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stVegaLiteChart]')).map(e => e.getBoundingClientRect().top)""")
    assert len(tops) == 4 and max(tops[:2]) <= 450, tops  # section 2's quick run and section 3's chart far below
    sliders = page.evaluate("""() => Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stSlider]')).map(e => e.getBoundingClientRect().top)""")
    assert len(sliders) == 3 and min(sliders) > max(tops[:2]), (sliders, tops)


def test_the_memory_chart_speaks_the_words_binary_units():
    """The memory chart's hover box said "16.8M" at T = 2048 (SI prefixes of bytes) where the words under it say
    16.0 MiB: the same 2²⁴ bytes, two numbers for a learner. Its hover box and its axis now use the words' units."""
    at = open_page(PAGE, {"cost_longest": "2048"})
    rows = chart_data(at, "memory of the attention weights").set_index("T")
    assert rows.loc[2048, "memory"] == "16.0 MiB" == why.bytes_text(rows.loc[2048, "bytes"])
    assert any("16.0 MiB" in m.value for m in at.markdown)
    spec = chart_spec(at, "memory of the attention weights")
    tooltips = [t for layer in spec["layer"] for t in layer.get("encoding", {}).get("tooltip", [])]
    assert {"field": "memory", "type": "nominal"} in tooltips and all(t["field"] != "bytes" for t in tooltips)
    y = axis(spec, "y")
    assert y["labelExpr"] == why.BYTES_LABEL and y["title"] == "memory"
    assert y["values"] and all(v & (v - 1) == 0 for v in y["values"]), y["values"]
    assert min(y["values"]) <= rows["bytes"].min() and max(y["values"]) >= rows["bytes"].max()


@pytest.mark.parametrize("low, high", [(256, 2**24), (64, 2**30), (1000, 5000), (1, 1)])
def test_binary_ticks_are_whole_binary_units_spanning_the_range(low, high):
    ticks = why.binary_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high and len(ticks) <= 6 or len(ticks) <= 2, ticks
    assert all(b // a in (2, 4, 16, 1024) and b % a == 0 for a, b in zip(ticks, ticks[1:])), ticks
    assert all(t == 2 ** round(math.log2(t)) for t in ticks), ticks


# ------------------------------------------------------------------------ section 3: the fused kernel's tiles


def tile_rows(at) -> pd.DataFrame:
    """Section 3's chart as (after tile × key) weights, NaN where a key was not read yet."""
    frame = chart_data(at, "after each tile")
    return frame.pivot(index="row_index", columns="col_index", values="value")


def test_the_tiles_last_row_is_the_followed_tokens_weights_and_its_context_is_stage_7s():
    """Section 3 walks the followed token's query through its keys a tile at a time: the chart's last row is its
    weights row, each earlier row covers only the keys read so far and sums to 1, and the page says the context
    is the step-through's."""
    at = open_page(PAGE, {"cost_tile": "3", "token": "2", "heads": "2"})
    assert not at.exception, [e.value for e in at.exception]
    lesson = run_lesson(LessonConfig(num_heads=2))
    rows = tile_rows(at)
    assert rows.shape == (3, 7)  # 7 keys in tiles of 3: 3, 3, 1
    assert rows.iloc[-1].tolist() == pytest.approx(lesson.trace.weights[0, 1].tolist(), abs=1e-6)
    assert rows.iloc[0, 3:].isna().all() and rows.iloc[1, 6:].isna().all(), "a key not read yet has no weight"
    assert rows.sum(axis=1).tolist() == pytest.approx([1, 1, 1], abs=1e-6)
    table = at.table[-1].value if at.table else at.dataframe[-1].value
    assert list(table["after tile"]) == ["tile 1: 1·The–3·sat", "tile 2: 4·on–6·mat", "tile 3: 7·."]
    assert table["rescale e^(m_old − m_new)"].iloc[0] == "—", "nothing was summed before tile 1"
    said = " ".join(m.value for m in at.markdown)
    assert "query of **2·cat**" in said and "(the same numbers)" in said
    assert "kept 6 numbers for this query" in said  # d_v = 4, m and ℓ


@pytest.mark.parametrize("tile", [1, 2, 7])
def test_the_tile_slider_sets_the_number_of_rows(tile):
    at = open_page(PAGE)
    at.slider(key="cost_tile").set_value(tile).run()
    assert not at.exception
    assert len(tile_rows(at)) == math.ceil(7 / tile)
    assert at.slider(key="cost_tile").max == 7, "B runs up to the sentence's keys"


def test_a_causal_mask_marks_the_keys_it_blocks_once_they_are_read():
    at = open_page(PAGE, {"mask": "causal", "token": "3", "cost_tile": "2"})
    frame = chart_data(at, "after each tile")
    blocked = frame[frame["masked"]]
    assert sorted(set(blocked["col_index"])) == [3, 4, 5, 6], "token 3 may attend to keys 1–3 only"
    assert (blocked["row_index"] >= blocked["col_index"] // 2).all(), "a key is marked only once its tile is read"
    assert tile_rows(at).iloc[-1, :3].sum() == pytest.approx(1, abs=1e-6)


def test_a_sentence_that_makes_no_lesson_leaves_section_3_with_a_note():
    at = open_page(PAGE)
    at.text_input(key="sentence").set_value("").run()
    assert not at.exception
    assert any("This section runs on your sentence" in i.value for i in at.info)
    assert not [c for c in at.get("vega_lite_chart") if "after each tile" in c.proto.spec]


def test_a_one_token_sentence_has_one_tile_and_no_slider():
    """A slider from 1 to 1 raised StreamlitInvalidMinMaxError and the page ended under the formulas."""
    at = open_page(PAGE, {"sentence": "Hi"})
    assert not at.exception, [e.value for e in at.exception]
    assert not [s for s in at.slider if s.key == "cost_tile"]
    assert any("one key: one tile of B = 1" in c.value for c in at.caption)
    assert len(tile_rows(at)) == 1 and any(m.value.startswith("**Takeaway:**") for m in at.markdown)


def test_a_row_the_mask_blocks_entirely_says_there_is_no_context_to_take():
    at = open_page(PAGE, {"mask": "custom", "grid": "0000000.1111111.1111111.1111111.1111111.1111111.1111111",
                          "token": "1"})
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(m.value for m in at.markdown)
    assert "The mask blocks every key of **1·The**" in said and "(the same numbers)" not in said, said


def test_no_rescale_note_offers_a_smaller_b_only_where_it_could_show_one():
    """With a causal mask the first token sees only itself: "a smaller B shows a rescale" was impossible there."""
    at = open_page(PAGE, {"mask": "causal", "token": "1", "cost_tile": "2"})
    notes = [c.value for c in at.caption if c.value.startswith("Here tile 1 already held")]
    assert notes and "smaller B" not in notes[0], notes


def test_a_links_tile_larger_than_the_sentence_is_named_not_silently_dropped():
    at = open_page(PAGE, {"cost_tile": "10"})
    assert not at.exception
    notes = [i.value for i in at.info if "could not be used" in i.value]
    assert len(notes) == 1 and "cost_tile = “10” (the sentence has 7 keys" in notes[0], notes
    assert at.slider(key="cost_tile").value == 2
    whole = open_page(PAGE, {"cost_tile": "7"})
    assert whole.slider(key="cost_tile").value == 7 and not [i for i in whole.info if "could not be used" in i.value]


def test_step_throughs_context_stage_points_to_the_tiles_on_the_page_not_on_the_slide():
    said = " ".join(m.value for m in open_page("pages/step_through.py", {"step": "context"}).markdown)
    assert "What it costs, section 3" in said
    slide = open_page("pages/step_through.py", {"step": "context", "presenter": "true"})
    said = " ".join(m.value for m in slide.markdown)
    assert "What it costs, section 3" not in said, "a slide keeps its short words"


def test_a_links_length_or_width_the_sliders_do_not_offer_is_named_not_silently_dropped():
    """A lecturer's link with cost_longest=4096 (a GPU's page) opened on a CPU host, or with a width between the
    sliders' steps, showed 2,048 and 64 without a word."""
    at = open_page(PAGE, {"cost_longest": "4096", "cost_width": "100"})
    assert not at.exception
    notes = [i.value for i in at.info if "could not be used" in i.value]
    assert len(notes) == 1, notes
    assert "cost_longest = “4096” (Longest T is one of 256, 512, 1,024 or 2,048 on cpu)" in notes[0], notes
    assert "cost_width = “100” (Width d is one of 16, 32, 64, 128 or 256)" in notes[0], notes
    assert at.select_slider(key="cost_longest").value == 2048 and at.select_slider(key="cost_width").value == 64
    offered = open_page(PAGE, {"cost_longest": "512", "cost_width": "128"})
    assert offered.select_slider(key="cost_longest").value == 512 and offered.select_slider(key="cost_width").value \
        == 128 and not [i for i in offered.info if "could not be used" in i.value]
