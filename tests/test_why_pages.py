"""The why-lessons (√d_k, positions, cross-attention, cost) through AppTest, asserting on what is shown.

Each page is opened as a deep link (app.py runs its navigation) and as a page run on its own after a
switch; its own controls are moved and bad input is tried. Numbers are read from the metrics,
the markdown and the data inside the Altair charts.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import ROOT, chart_data, one_session_per_page, open_page, shown_number, spec_titles, switch_to
from attention_ui.why import AHEAD_SHARE

WHY_PAGES = {
    "pages/why_scaling.py": "Why divide by √d_k?",
    "pages/positions.py": "Order and position",
    "pages/cross_attention.py": "Cross-attention",
    "pages/cost.py": "What attention costs",
}


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(e.value) for e in at.get(kind)]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def metric(at: AppTest, label_part: str) -> float:
    found = [shown_number(v) for label, v in metrics(at).items() if label_part in label]
    assert found, f"no metric like {label_part!r}: {metrics(at)}"
    return found[0]


def matrix(data: pd.DataFrame) -> pd.DataFrame:
    return data.pivot_table(index="row_index", columns="col_index", values="value", dropna=False)


def set_widget(at: AppTest, kind: str, key: str, value) -> AppTest:
    getattr(at, kind)(key=key).set_value(value).run()
    assert_ok(at)
    return at


@pytest.fixture(scope="module")
def pages():
    """One session per page, shared by the tests of this module (each sets what it needs)."""
    return one_session_per_page()


@pytest.mark.parametrize("page", sorted(WHY_PAGES))
def test_page_renders_its_title_and_charts_as_a_deep_link_and_alone(page):
    at = open_page(page)
    assert texts(at, "title") == [WHY_PAGES[page]]
    assert not at.error, texts(at, "error")
    assert len(at.get("vega_lite_chart")) >= 2
    assert any(t.startswith("**Takeaway:**") for t in texts(at, "markdown")) or page == "pages/cost.py"
    alone = switch_to(open_page("pages/overview.py"), page)
    assert texts(alone, "title") == [WHY_PAGES[page]]
    assert len(alone.get("vega_lite_chart")) >= 2


def test_every_why_page_is_in_the_navigation_under_a_path_unlike_its_file_name():
    """A URL path equal to a file's name in pages/ would let a deep link on a fresh server run that file
    alone (the legacy pages-folder routing), skipping app.py and its navigation for every visitor."""
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    for page, url in zip(sorted(WHY_PAGES), ["what-it-costs", "cross-attention", "order-and-position", "why-scaling"]):
        assert re.search(rf'\("{page}",[^)]*"{url}"\)', source), page  # (file, title, icon, url path)
        assert url != page.removeprefix("pages/").removesuffix(".py"), page


# ------------------------------------------------------------------------------------------- √d_k


def shown_variance(at: AppTest) -> tuple[float, float, float]:
    """(sampled Var(q·k), the d_k it is for, the stated tolerance) as the page shows them."""
    d_k = int(next(re.search(r"d_k = (\d+)", label).group(1) for label in metrics(at) if "sampled" in label
                   and "√" not in label))
    sampled = metric(at, f"Var(q·k) at d_k = {d_k}")
    tolerance = float(re.search(r"tolerance of ±([\d.]+)", "\n".join(texts(at, "caption"))).group(1))
    return sampled, d_k, tolerance


@pytest.mark.parametrize("d_k, samples", [(64, 1000), (1, 2000), (300, 500), (512, 2000)])
def test_sampled_variance_is_within_the_stated_tolerance_of_d_k(pages, d_k, samples):
    at = pages("pages/why_scaling.py")
    set_widget(at, "slider", "why_dk", d_k)
    set_widget(at, "slider", "why_samples", samples)
    sampled, shown_d_k, tolerance = shown_variance(at)
    assert shown_d_k == d_k
    expected_se = d_k * math.sqrt(2 / (samples - 1) + 6 / (d_k * samples))
    assert math.isclose(tolerance, 4 * expected_se, rel_tol=0.01, abs_tol=0.01)
    assert abs(sampled - d_k) <= tolerance
    assert abs(metric(at, "Var(q·k / √d_k)") - 1) <= tolerance / d_k
    words = next(t for t in texts(at, "caption") if "standard errors" in t)
    (fold,) = [e for e in at.expander if e.label == "How close, in the statistics' terms"]
    assert [c.value for c in fold.caption] == [words], "the statistics in a fold, under the plain words"
    assert re.search(r"\d+\.\d standard errors (above|below) d_k = \d+, \*\*within\*\*", words), words
    assert "-" not in words.split("d_k =")[0] and ("% of d_k" in words) == (tolerance < d_k), words
    plain = next(t for t in texts(at, "markdown") if t.startswith("In short:"))
    assert f"at d_k = {d_k} the sampled variance of q·k is {sampled:.2f}, about d_k, as the theory says" in plain
    lines = chart_data(at, "variance of q·k").dropna(subset=["series"])
    theory = lines[lines["series"].str.startswith("theory")]
    assert (theory["value"] == theory["d_k"]).all() and d_k in set(theory["d_k"])


def test_unscaled_softmax_saturates_as_d_k_grows(pages):
    at = pages("pages/why_scaling.py")
    set_widget(at, "slider", "why_dk", 512)
    set_widget(at, "slider", "why_keys", 16)
    data = chart_data(at, "largest weight in a row").dropna(subset=["scores"])  # without the d_k marker
    raw = data[data["scores"].str.contains("unscaled")].set_index("d_k")["largest weight"]
    scaled = data[~data["scores"].str.contains("unscaled")].set_index("d_k")["largest weight"]
    assert raw[512] > 0.85 > scaled[512] and raw[512] > raw[1]
    gradient = chart_data(at, "size of the softmax gradient").dropna(subset=["scores"])
    raw_gradient = gradient[gradient["scores"].str.contains("unscaled")].set_index("d_k")["gradient size"]
    assert raw_gradient[512] < raw_gradient[1] / 2
    table = at.dataframe[0].value
    assert table.loc["largest weight", "q·k (unscaled)"] > table.loc["largest weight", "q·k / √d_k (scaled)"]


@pytest.mark.parametrize("keys", [2, 16, 64])
def test_the_gradients_words_say_what_its_chart_shows(pages, keys):
    """With 2 keys the page still said "from d_k ≈ 16 the unscaled rows fall behind … at small d_k the unscaled
    line is a little higher", where its chart had the unscaled gradient below from d_k = 2 on. The words are made
    from the chart's numbers."""
    at = pages("pages/why_scaling.py")
    set_widget(at, "slider", "why_keys", keys)
    gradient = chart_data(at, "size of the softmax gradient").dropna(subset=["scores"])
    unscaled = gradient[gradient["scores"].str.contains("unscaled")].set_index("d_k")["gradient size"]
    scaled = gradient[~gradient["scores"].str.contains("unscaled")].set_index("d_k")["gradient size"]
    behind = next(d for d in unscaled.index if all(unscaled[e] < scaled[e] for e in unscaled.index if e >= d))
    words = next(t for t in texts(at, "markdown") if "measures that signal" in t)
    assert f"from d_k = {behind} on the unscaled rows fall behind" in words, words
    assert f"{unscaled[512]:.2f} at d_k = 512, against {scaled[512]:.2f} scaled" in words, words
    higher = any(unscaled[d] >= AHEAD_SHARE * scaled[d] for d in unscaled.index if d < behind)
    assert ("the unscaled line is higher" in words) == higher, words
    assert higher == (keys > 2), "a softmax over 2 keys loses gradient at once; over many it peaks first"
    (fold,) = [e for e in at.expander if e.label.startswith("In symbols: the gradient's size")]
    assert "J_{ij}" in fold.latex[0].value and "‖J‖_F" in fold.caption[0].value, "the calculus in a fold"
    set_widget(at, "slider", "why_keys", 16)


def test_number_of_keys_sets_the_softmax_row(pages):
    at = pages("pages/why_scaling.py")

    def scaled_largest_weight(keys: int) -> float:
        set_widget(at, "slider", "why_keys", keys)
        data = chart_data(at, "largest weight in a row").dropna(subset=["scores"])
        return data[data["scores"].str.contains("(scaled)", regex=False)]["largest weight"].mean()

    with_16 = scaled_largest_weight(16)
    with_32 = scaled_largest_weight(32)
    assert any("against 32 random keys" in t and "1/32 = 0.03125" in t for t in texts(at, "markdown"))
    assert 1 / 32 < with_32 < with_16 < 0.5, "more keys share the weight: the largest one shrinks"
    set_widget(at, "slider", "why_keys", 16)
    # exact where it ends within four figures: "1/16 = 0.062" read as a wrong rounding of 0.0625
    assert any("1/16 = 0.0625 " in t for t in texts(at, "markdown"))


def test_page_settings_survive_a_page_switch():
    at = open_page("pages/why_scaling.py")
    set_widget(at, "slider", "why_dk", 128)
    switch_to(at, "pages/overview.py")
    switch_to(at, "pages/why_scaling.py")
    assert at.slider(key="why_dk").value == 128
    assert "Var(q·k) at d_k = 128, sampled" in metrics(at)


def test_sentence_weights_with_and_without_scaling(pages):
    at = pages("pages/why_scaling.py")
    set_widget(at, "slider", "d_k", 64)
    raw = matrix(chart_data(at, "no scaling"))
    scaled = matrix(chart_data(at, "softmax(QKᵀ / √d_k)"))
    assert raw.shape == scaled.shape == (7, 7)
    for weights in (raw, scaled):
        assert ((weights.sum(axis=1) - 1).abs() < 1e-6).all()
    assert raw.max(axis=1).mean() > scaled.max(axis=1).mean(), "unscaled rows must be sharper"
    set_widget(at, "slider", "d_k", 4)


ENTROPIES = ("entropy, unscaled", "entropy, scaled")


def row_table(at: AppTest) -> pd.DataFrame:
    """The "numbers, row by row" table as sent to the browser (a missing cell would be drawn as "None")."""
    table = at.dataframe[-1].value
    assert list(table.columns[-2:]) == list(ENTROPIES)
    return table


@pytest.mark.parametrize("mask", ["causal", "custom"])
def test_row_table_gives_every_row_an_entropy_under_a_mask(mask):
    grid = ".".join("1" * (i + 1) + "0" * (6 - i) for i in range(7))  # causal, typed as a custom grid
    at = open_page("pages/why_scaling.py", {"mask": mask} | ({"grid": grid} if mask == "custom" else {}))
    table = row_table(at)
    assert table.notna().all().all(), table
    for name in ENTROPIES:
        entropy = table[name].astype(float)
        assert table[name].iloc[0] == "0.0000"  # one allowed key, weight 1
        assert (entropy <= [math.log(i + 1) + 1e-4 for i in range(7)]).all()  # at most log(allowed keys)
        assert (entropy.iloc[1:] > 0).all()


def test_row_table_says_when_every_key_of_a_row_is_blocked():
    grid = ".".join(["0000000"] + ["1111110"] * 6)
    table = row_table(open_page("pages/why_scaling.py", {"mask": "custom", "grid": grid}))
    assert table.notna().all().all(), table
    for name in ENTROPIES:
        assert table[name].iloc[0] == "all keys blocked"
        assert (table[name].iloc[1:].astype(float) > 0).all()


# ---------------------------------------------------------------------------------------- positions


def test_equivariance_holds_without_positions_and_fails_with_them(pages):
    at = pages("pages/positions.py")
    for shuffle in (1, 7, 42):
        set_widget(at, "slider", "pos_shuffle", shuffle)
        assert metric(at, "no positions") < 1e-5
        assert metric(at, "with PE") > 1e-2
        original = chart_data(at, "output for the sentence")
        shuffled = chart_data(at, "output for the shuffled sentence")
        rows = {token: group.sort_values("col_index")["value"].tolist()
                for token, group in original.groupby(original["token"].str.split("·").str[1])}
        for token, group in shuffled.groupby(shuffled["token"].str.split("·").str[1]):
            assert group.sort_values("col_index")["value"].tolist() == pytest.approx(rows[token], abs=1e-5)


def test_the_shuffled_output_outlines_the_followed_token_where_it_moved():
    at = open_page("pages/positions.py", {"token": "2"})  # 2·cat
    for shuffle in (1, 7):
        set_widget(at, "slider", "pos_shuffle", shuffle)
        element = next(e for e in at.get("vega_lite_chart")
                       if "output for the shuffled sentence" in spec_titles(json.loads(e.proto.spec)))
        row = int(re.search(r"datum.row_index == (\d+)", element.proto.spec).group(1))
        data = chart_data(at, "output for the shuffled sentence")
        assert set(data[data["row_index"] == row]["token"].str.split("·").str[1]) == {"cat"}, (shuffle, row)


def test_sinusoidal_heatmap_shows_the_formula(pages):
    at = pages("pages/positions.py")
    data = chart_data(at, "PE for positions")
    pe = matrix(data)
    assert pe.shape == (7, 8)
    assert pe.iloc[1, 0] == pytest.approx(math.sin(1), abs=1e-6)
    assert pe.iloc[3, 3] == pytest.approx(math.cos(3 / 10000 ** (2 / 8)), abs=1e-6)
    lines = chart_data(at, "some sin columns")  # named as the heatmap's columns (d1 …), not from 0
    assert sorted(set(lines["column"]))[0] == "d1 (sin, i = 0)" and not lines["column"].str.startswith("column").any()


@pytest.mark.parametrize("shift", [0, 1, 100, 1000])
def test_rope_shift_leaves_the_scores_unchanged(pages, shift):
    at = pages("pages/positions.py")
    set_widget(at, "slider", "pos_shift", shift)
    assert metric(at, "score difference after the shift") <= 1e-6
    before = matrix(chart_data(at, "RoPE scores"))
    after = matrix(chart_data(at, f"positions {shift}…"))
    assert (before - after).abs().max().max() <= 1e-6


def test_rope_with_an_odd_d_k_leaves_the_last_feature_unturned(pages):
    at = pages("pages/positions.py")
    set_widget(at, "slider", "d_k", 5)
    assert any("odd d_k = 5" in i for i in texts(at, "info"))
    assert metric(at, "score difference after the shift") <= 1e-6
    set_widget(at, "slider", "d_k", 4)


def test_one_token_sentence_cannot_be_shuffled(pages):
    at = pages("pages/positions.py")
    set_widget(at, "text_input", "sentence", "Hello")
    assert any("at least two tokens" in i for i in texts(at, "info"))
    assert chart_data(at, "PE for position 0 (rows)").shape[0] == 8
    assert metric(at, "after the shift") <= 1e-6
    set_widget(at, "text_input", "sentence", "The cat sat on the mat.")


# ------------------------------------------------------------------------------------------- cross


def test_cross_attention_weights_are_t_by_s_with_rows_summing_to_one(pages):
    at = pages("pages/cross_attention.py")
    weights = matrix(chart_data(at, "cross-attention: 7 × 8"))
    assert weights.shape == (7, 8)
    assert ((weights.sum(axis=1) - 1).abs() < 1e-6).all()
    assert matrix(chart_data(at, "self-attention: 7 × 7")).shape == (7, 7)
    assert metric(at, "queries T") == 7 and metric(at, "keys S") == 8
    assert metric(at, "row sum") < 1e-6
    keys = chart_data(at, "cross-attention").drop_duplicates("key").sort_values("col_index")["key"].tolist()
    assert keys == ["1·Le", "2·chat", "3·s'est", "4·assis", "5·sur", "6·le", "7·tapis", "8·."]


def test_the_self_attention_chart_names_its_mask_and_the_decoders_causal_one(pages):
    """The encoder–decoder diagram says the decoder's self-attention is masked ("no peeking ahead") while the chart
    beside it used the settings' mask, none by default, with nothing said: a student read every target token
    attending to later ones as what a decoder does."""
    at = pages("pages/cross_attention.py")
    assert matrix(chart_data(at, "self-attention: 7 × 7, mask: none")).notna().all().all()
    assert any("A decoder's self-attention is causal (the diagram above" in c and "uses no mask" in c
               for c in texts(at, "caption"))
    slide = open_page("pages/cross_attention.py", {"presenter": "true"})  # its diagram follows the weights
    assert any("causal (the diagram below" in c for c in texts(slide, "caption")), texts(slide, "caption")
    set_widget(at, "radio", "mask", "causal")
    weights = matrix(chart_data(at, "self-attention: 7 × 7, mask: causal")).fillna(0).to_numpy()
    assert (weights[np.triu_indices(7, 1)] == 0).all() and weights[np.tril_indices(7)].min() > 0
    assert not any("A decoder's self-attention is causal" in c for c in texts(at, "caption"))
    set_widget(at, "radio", "mask", "none")


def _heatmap_sizes(at: AppTest) -> dict[str, tuple[float, float, bool]]:
    """Per self- or cross-attention heatmap: (cell width, cell height, whether its cells show numbers)."""
    sizes = {}
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        title = " ".join(spec_titles(spec))
        if "attention:" in title:
            rows, cols = (int(n) for n in re.findall(r"(\d+) × (\d+)", title)[0])
            texts = [layer for layer in spec.get("layer", []) if (layer.get("mark") or {}).get("type") == "text"]
            sizes[title.split(":")[0]] = (spec["width"] / cols, spec["height"] / rows, bool(texts))
    return sizes


@pytest.mark.parametrize("pad_to, apart", [(None, False), (12, True)])
def test_self_and_cross_attention_rows_are_as_tall_and_keep_their_numbers(pages, pad_to, apart):
    """Padded to 12 keys, the cross-attention heatmap beside the 7 × 7 one had cells too small for numbers and was
    half as tall, though its rows are the same queries. Both get one cell size; too small side by side, they go one
    above the other."""
    at = pages("pages/cross_attention.py")
    if pad_to:
        set_widget(at, "toggle", "cross_pad", True)
        set_widget(at, "slider", "cross_pad_to", pad_to)
    sizes = _heatmap_sizes(at)
    assert sizes["self-attention"] == sizes["cross-attention"], sizes
    assert sizes["cross-attention"][2], "the cells show their numbers"
    beside = [c for c in at.columns if any("attention:" in json.dumps(json.loads(e.proto.spec).get("title"))
                                           for e in c.get("vega_lite_chart"))]
    assert bool(beside) != apart
    set_widget(at, "toggle", "cross_pad", False)


def test_padding_a_source_that_is_long_enough_already_says_why_nothing_changed(pages):
    """Padding switched on and set to the source's own length showed the same chart and no word on why."""
    at = pages("pages/cross_attention.py")
    set_widget(at, "toggle", "cross_pad", True)
    set_widget(at, "slider", "cross_pad_to", 8)  # the default source has 8 tokens
    assert any("Padding adds nothing here: the source already has 8 tokens" in i for i in texts(at, "info"))
    set_widget(at, "slider", "cross_pad_to", 9)
    assert not any("Padding adds nothing" in i for i in texts(at, "info"))
    assert any("padded from 8 to 9" in i for i in texts(at, "info"))
    set_widget(at, "toggle", "cross_pad", False)
    assert not any("Padding adds nothing" in i for i in texts(at, "info"))


def test_padding_the_source_blocks_the_pad_keys(pages):
    at = pages("pages/cross_attention.py")
    set_widget(at, "toggle", "cross_pad", True)
    set_widget(at, "slider", "cross_pad_to", 11)
    weights = matrix(chart_data(at, "cross-attention: 7 × 11"))
    assert (weights.iloc[:, 8:] == 0).all().all()
    assert ((weights.sum(axis=1) - 1).abs() < 1e-6).all()
    assert any("padded from 8 to 11" in i for i in texts(at, "info"))
    set_widget(at, "toggle", "cross_pad", False)


def test_the_padded_length_starts_at_the_sources_own_length(pages):
    """The padded length went down to 1 for a source of 8 tokens; below 8 the page stopped with an error, its
    weights gone and nothing to press. The slider now starts at the source's length, and follows a longer source."""
    at = pages("pages/cross_attention.py")
    set_widget(at, "toggle", "cross_pad", True)
    assert at.slider(key="cross_pad_to").min == 8  # the default source has 8 tokens
    set_widget(at, "text_input", "cross_source", " ".join("abcdefghijklmn"))  # 14 tokens
    slider = at.slider(key="cross_pad_to")
    assert slider.min == 14 and slider.value >= 14, (slider.min, slider.value)
    assert not texts(at, "error")
    titles = [t for chart in at.get("vega_lite_chart") for t in spec_titles(json.loads(chart.proto.spec))]
    assert "cross-attention: 7 × 14" in titles, titles
    set_widget(at, "text_input", "cross_source", "Le chat s'est assis sur le tapis.")
    set_widget(at, "toggle", "cross_pad", False)


@pytest.mark.parametrize("source, message", [("", "empty"), ("x " * 40, "limit is 32"), ("ab " * 850, "limit")])
def test_bad_source_sentence_gives_a_message(pages, source, message):
    at = pages("pages/cross_attention.py")
    set_widget(at, "text_input", "cross_source", source)
    errors = texts(at, "error")
    assert errors and message in errors[0], errors
    set_widget(at, "text_input", "cross_source", "Le chat s'est assis sur le tapis.")


def test_markup_in_the_source_stays_text(pages):
    at = pages("pages/cross_attention.py")
    set_widget(at, "text_input", "cross_source", "<b>x</b> **bold** [link](u)")
    keys = chart_data(at, "cross-attention").drop_duplicates("key")["key"].tolist()
    assert "1·<" in keys and "bold" in " ".join(keys)
    for kind in ("markdown", "caption", "info", "error"):
        assert not any("<b>" in t or "**bold" in t for t in texts(at, kind))
    set_widget(at, "text_input", "cross_source", "Le chat s'est assis sur le tapis.")


def test_cross_page_link_restores_the_source_and_padding():
    at = open_page("pages/cross_attention.py", {"cross_source": "Hola mundo", "cross_pad": "true",
                                                "cross_pad_to": "5"})
    assert matrix(chart_data(at, "cross-attention: 7 × 5")).shape == (7, 5)


# ----------------------------------------------------------------------------------------------- cost


def test_cost_page_measures_nothing_until_the_button_is_pressed():
    at = open_page("pages/cost.py")
    assert not at.metric
    assert at.select_slider(key="cost_longest").options[-1] == "2048", "the CPU stops at T = 2048"
    assert any("Nothing measured yet" in i for i in texts(at, "info"))
    predicted = chart_data(at, "multiply-adds")
    attention = predicted[predicted["layer"] == "self-attention"].set_index("T")["operations"]
    assert attention[2048] == 4 * attention[1024]
    memory = chart_data(at, "memory of the attention weights").set_index("T")["bytes"]
    assert memory[2048] == 2048 * 2048 * 4


@pytest.mark.parametrize("sentence", ["", " ".join(["word"] * 40)])
def test_cost_page_works_with_a_sentence_that_makes_no_lesson(sentence):
    """The page never reads the sentence, so an empty or too long one must not replace it with an error."""
    at = open_page("pages/cost.py")
    set_widget(at, "text_input", "sentence", sentence)
    assert not at.error, texts(at, "error")
    assert any("carries on with what does not need one" in c for c in texts(at, "caption")), texts(at, "caption")
    assert chart_data(at, "multiply-adds").shape[0] > 0
    assert any("Nothing measured yet" in i for i in texts(at, "info"))


def test_cost_measurement_gives_a_quadratic_slope(monkeypatch):
    """The page times every layer at every length and fits the slope on log-log axes. The timings here follow
    T² for attention (plus a fixed call cost) and T for the recurrent layer, so the page's fit must find about 2:
    real timings, which a busy machine bends (a run once fitted 1.39), are the benchmarks' part."""
    from attention_ui import why

    def timing(kind, length, width, device="cpu"):
        return 2e-6 + (3e-11 * length * length * width if kind != "recurrent" else 1e-7 * length * width)

    why.measured_seconds.clear()
    monkeypatch.setattr(why, "time_layer", timing)
    try:
        _measure_and_check(open_page("pages/cost.py", {"cost_longest": "1024", "cost_width": "64"}))
    finally:
        why.measured_seconds.clear()  # no other test meets these timings


def _measure_and_check(at) -> None:
    at.button(key="cost_measure").click().run()
    assert_ok(at)
    assert not at.error, texts(at, "error")
    slope = metric(at, "attention: fitted slope")
    assert 1.8 <= slope <= 2.1, slope
    timed = chart_data(at, "time per forward pass")
    assert sorted(set(timed["T"])) == [64, 128, 256, 512, 1024]
    assert (timed["seconds"] > 0).all()
    table = at.dataframe[0].value
    assert table.loc[1024, "T×T weights"] == "4.0 MiB"
    assert metric(at, "weights memory: slope") == 2
    # a rerun keeps the result without measuring again; other settings are not measured yet
    set_widget(at, "select_slider", "cost_width", 32)
    assert not at.metric and any("Nothing measured yet" in i for i in texts(at, "info"))
    set_widget(at, "select_slider", "cost_width", 64)
    assert metric(at, "attention: fitted slope") == slope


def timings_frame(attend: list[float], fused: list[float], lengths=(64, 128, 256)) -> pd.DataFrame:
    return pd.DataFrame([{"T": n, "layer": kind, "seconds": value}
                         for n, a, f in zip(lengths, attend, fused)
                         for kind, value in (("attend", a), ("fused", f), ("recurrent", n * 1e-6))])


@pytest.mark.parametrize("fused, words", [
    ([2e-4, 8e-4, 3e-3], "fused kernel was **slower** than attention (attend) at every length (at T = 256: 3.00 ms "
                         "for fused against 1.60 ms for attend)"),
    ([5e-5, 2e-4, 8e-4], "fused kernel was **faster** than attention (attend) at every length (at T = 256: 800 µs "
                         "for fused against 1.60 ms for attend)"),
    ([2e-4, 4.001e-4, 8e-4], "fused kernel was **slower** at T = 64, **about as fast** at T = 128, **faster** at "
                             "T = 256 (at T = 256"),
    ([2e-4, 8e-4, 8e-4], "fused kernel was **slower** at T = 64 and 128, **faster** at T = 256 (at T = 256"),
    ([5e-5, 8e-4, 3e-3], "fused kernel was **faster** at T = 64, **slower** at T = 128 and 256 (at T = 256: 3.00 ms "
                         "for fused against 1.60 ms for attend): less memory traffic does not always mean less time"),
])
def test_fused_in_words_says_what_was_measured(fused, words):
    from attention_ui.why import fused_in_words
    assert words in fused_in_words(timings_frame([1e-4, 4e-4, 1.6e-3], fused))


def test_cost_page_does_not_call_the_fused_kernel_faster_when_it_measured_it_slower(monkeypatch):
    from attention_ui import why

    def fake(device, kind, length, width, attempt=0):  # fused twice as slow as attend at every length
        return {"attend": 1e-9, "fused": 2e-9, "recurrent": 1e-7 / length}[kind] * length**2

    monkeypatch.setattr(why, "measured_seconds", fake)
    at = open_page("pages/cost.py", {"cost_longest": "512", "cost_width": "16"})
    at.button(key="cost_measure").click().run()
    assert_ok(at)
    shown = "\n".join(texts(at, "markdown"))
    table = at.dataframe[0].value
    assert table.loc[512, "fused"] == "524 µs" and table.loc[512, "attend"] == "262 µs"
    assert "usually faster" not in shown
    assert ("fused kernel was **slower** than attention (attend) at every length (at T = 512: 524 µs for fused "
            "against 262 µs for attend)") in shown


def test_cost_page_shows_a_measurement_that_stopped_after_one_length(monkeypatch):
    """On a busy machine the 30-s budget let only T = 64 be timed; fitting a slope to one point raised an error and
    the page showed "This app has encountered an error"."""
    from attention_ui import why

    def first_length_only(device, lengths, width, on_progress, budget=None):
        rows = [{"T": lengths[0], "layer": kind, "seconds": seconds}
                for kind, seconds in (("attend", 2e-4), ("fused", 1e-4), ("recurrent", 5e-4))]
        return why.CostRun(pd.DataFrame(rows), lengths[1:], elapsed=26.4, next_seconds=7.2)

    monkeypatch.setattr(why, "measure_costs", first_length_only)
    at = open_page("pages/cost.py", {"cost_longest": "512", "cost_width": "16"})
    at.button(key="cost_measure").click().run()
    assert_ok(at)
    assert any("Measured T = 64 in 26 s. Timing T = 128 would take about 7 s more, past the 30 s the run may take, "
               "so T = 128, 256 and 512 were left out." in w for w in texts(at, "warning")), texts(at, "warning")
    assert any("Only T = 64 was timed, and a slope needs two lengths" in i for i in texts(at, "info"))
    assert not any("slope" in label for label in metrics(at)), metrics(at)
    assert at.dataframe[0].value.loc[64, "attend"] == "200 µs"
    assert set(chart_data(at, "time per forward pass")["T"]) == {64}


def test_cost_page_says_which_was_faster_in_its_own_measurement():
    at = open_page("pages/cost.py", {"cost_longest": "256", "cost_width": "16"})
    at.button(key="cost_measure").click().run()
    assert_ok(at)
    table = at.dataframe[0].value
    sentence = [t for t in texts(at, "markdown") if "In this measurement" in t or "in this measurement" in t]
    assert len(sentence) == 1, texts(at, "markdown")
    assert f"at T = 256: {table.loc[256, 'fused']} for fused against {table.loc[256, 'attend']} for attend" \
        in sentence[0]
    timed = chart_data(at, "time per forward pass")
    seconds = {kind: timed[timed["layer"].str.startswith(name) & (timed["T"] == 256)]["seconds"].iloc[0]
               for kind, name in (("attend", "attention"), ("fused", "fused"))}
    if table.loc[256, "fused"] != table.loc[256, "attend"]:
        faster = "**faster**" if seconds["fused"] < seconds["attend"] else "**slower**"
        assert faster in sentence[0]


@pytest.mark.parametrize("query", [{"cost_longest": "abc"}, {"cost_longest": "1e999", "cost_width": "-5"},
                                   {"why_dk": "²"}, {"why_dk": "99999", "why_samples": "inf"}])
def test_forged_links_fall_back_to_defaults(query):
    page = "pages/cost.py" if "cost_longest" in query else "pages/why_scaling.py"
    at = open_page(page, query)
    assert not at.error, texts(at, "error")
    assert len(at.get("vega_lite_chart")) >= 2


@pytest.mark.parametrize("query, side_by_side", [({"d_model": "4"}, True), ({}, False)],
                         ids=["4 features: side by side", "8 features: one above the other"])
def test_the_two_outputs_share_one_colour_scale_and_one_colour_bar(query, side_by_side):
    """The same numbers, reordered: one scale makes the same colour the same number in both, so one bar serves both
    side by side. Eight features twice in a row left 33-px cells with "−1.129" printed at 9 px: the two then go one
    above the other, at the page's cell size, each with its colour bar beside it."""
    at = open_page("pages/positions.py", query)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    outputs = [s for s in specs if any(t.startswith("output for the") for t in spec_titles(s))]
    assert len(outputs) == 2
    colours = [[layer["encoding"]["color"] for layer in s["layer"] if "scale" in layer["encoding"].get("color", {})]
               for s in outputs]
    legends = [sum(c.get("legend", {}) is not None for c in cs) for cs in colours]
    assert legends == ([0, 1] if side_by_side else [1, 1])
    assert colours[0][0]["scale"]["domain"] == colours[1][0]["scale"]["domain"]
    fonts = value_fonts(outputs)
    assert fonts and min(fonts) >= 11, fonts
    assert len(columns_with_chart(at, "output for the")) == (2 if side_by_side else 0)


@pytest.mark.parametrize("sentence, side_by_side", [("The cat sat.", True), ("The cat sat on the mat.", False)])
def test_the_rope_grids_print_their_scores_at_a_readable_size(sentence, side_by_side):
    """Seven tokens' RoPE scores side by side had 36-px cells and 10-px numbers: they go one above the other."""
    at = open_page("pages/positions.py", {"sentence": sentence})
    rope = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")
            if any(t.startswith(("RoPE scores", "positions 100")) for t in spec_titles(json.loads(c.proto.spec)))]
    assert len(rope) == 2
    fonts = value_fonts(rope)
    assert fonts and min(fonts) >= 11, fonts
    assert len(columns_with_chart(at, "RoPE scores")) == (1 if side_by_side else 0)


def value_fonts(specs: list[dict]) -> list[int]:
    """The font sizes of the numbers printed in these heatmaps' cells. A slide's chart, which fills its container,
    gives its font as an expression of its cells' width: there, the largest it prints them at."""
    fonts = [layer["mark"]["fontSize"] for spec in specs for layer in spec["layer"]
             if isinstance(layer.get("mark"), dict) and layer["mark"].get("type") == "text"
             and ("text" not in layer["mark"] or "datum.label" in str(layer["mark"]["text"]))]  # (not the hint)
    # (the numbers' font ends with their largest: whole, or rounded shorter where that prints larger)
    return [int(re.findall(r"min\((\d+),", font["expr"])[-1]) if isinstance(font, dict) else font for font in fonts]


def columns_with_chart(at: AppTest, title_start: str) -> list:
    """The page's columns that hold a chart whose title starts with ``title_start``."""
    return [column for column in at.columns if any(title.startswith(title_start)
                                                   for chart in column.get("vega_lite_chart")
                                                   for title in spec_titles(json.loads(chart.proto.spec)))]


THIRTEEN_TOKENS = "The quick brown fox jumps over the lazy dog while the cat sleeps"


@pytest.mark.parametrize("step, sentence, titles, printed", [
    ("qkv", "The cat sat on the mat.", ("Q —", "K —", "V —"), True),
    ("qkv", THIRTEEN_TOKENS, ("Q —", "K —", "V —"), False),
    ("scaled", "The cat sat on the mat.", ("before:", "after:"), True),
    ("scaled", "The cat sat on the mat because it", ("before:", "after:"), False),
], ids=["Q K V, 7 tokens", "Q K V, 13 tokens", "scaling, 7 tokens", "scaling, 8 tokens"])
def test_a_stage_prints_its_signed_numbers_at_10_px_or_not_at_all(step, sentence, titles, printed):
    """Q, K and V side by side with 13 tokens had 32-px cells and printed "−1.541" at 8 px, and stage 4's pair
    with 8 tokens at 9 px: a signed number needs a 36-px cell for 10 px. Narrower cells show colours only (their
    numbers are in "All the numbers" below and in the tooltips)."""
    at = open_page("pages/step_through.py", {"step": step, "sentence": sentence})
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    shown = [s for s in specs if any(t.startswith(titles) for t in spec_titles(s))]
    assert len(shown) == len(titles), [spec_titles(s) for s in specs]
    fonts = value_fonts(shown)
    assert all(font >= 10 for font in fonts), fonts
    assert len(fonts) == (len(titles) if printed else 0), fonts


TEN_WORDS = "The young student quickly read the long paper before class"


@pytest.mark.parametrize("step, sentence, titles", [
    ("qkv", "The cat sat on the mat.", ("Q —", "K —", "V —")),
    ("context", TEN_WORDS, ("context = A·V",)),
], ids=["Q K V, 7 tokens", "context beside A, 10 tokens"])
def test_a_slides_feature_charts_print_numbers_where_their_cells_hold_them(step, sentence, titles):
    """On a slide, Q, K and V (a third of the width each) and the context beside the weights printed no numbers
    whatever their cells: with d_k = 4 a cell is 60–110 px wide, and the check-yourself asks for Q's first number."""
    at = open_page("pages/step_through.py", {"step": step, "sentence": sentence, "mask": "causal",
                                              "presenter": "true"})
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    shown = [s for s in specs if any(t.startswith(titles) for t in spec_titles(s))]
    assert len(shown) == len(titles), [spec_titles(s) for s in specs]
    assert len(value_fonts(shown)) == len(titles) and min(value_fonts(shown)) >= 12, value_fonts(shown)


@pytest.mark.parametrize("sentence, fonts", [
    ("The cat sat on the mat.", {24}),
    (TEN_WORDS, {24}),
    ("a b c d e f g h i j k l", {24}),
    ("The quick brown fox jumps over the lazy dog while the cat sleeps", {24}),
    (" ".join(f"w{i}" for i in range(20)), {24}),
    (" ".join(f"w{i}" for i in range(26)), set()),
], ids=["7 tokens", "10 tokens", "12 short tokens", "13 tokens", "20 tokens", "26 tokens"])
def test_a_slides_pair_prints_its_numbers_as_large_as_its_cells_allow(sentence, fonts):
    """With 9 or more tokens stage 4's two charts on a slide showed colours only (their cells were under 52 px),
    so a lecturer with a ten-word sentence could not read the scaling out. A pair whose cells hold 12-px numbers on
    a projector's 1920-px window carries 24 px (a little more than the slide's labels) as the largest font, and the
    browser prints them as large as the cells it draws hold, or not under 12 px (``test_slide_numbers`` measures
    that); cells too
    narrow even there (26 tokens) carry no numbers. (20 tokens carried none while each chart drew its own row labels
    and colour bar; one set of each leaves them 42-px cells at 1920 px.)"""
    at = open_page("pages/step_through.py", {"step": "scaled", "sentence": sentence, "presenter": "true"})
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    shown = [s for s in specs if any(t.startswith(("before:", "after:")) for t in spec_titles(s))]
    assert len(shown) == 2
    assert set(value_fonts(shown)) == fonts and len(value_fonts(shown)) == (2 if fonts else 0), value_fonts(shown)


def test_why_scaling_keeps_its_experiments_when_the_sentence_makes_no_lesson():
    """An empty sentence replaced the whole page with an error, though sections 1 and 2 never read it."""
    at = open_page("pages/why_scaling.py")
    set_widget(at, "text_input", "sentence", "")
    assert not at.exception and not at.error, texts(at, "error")
    assert [s.value for s in at.subheader][:3] == ["1 · The spread of q·k grows with d_k",
                                                   "2 · Unscaled scores saturate the softmax",
                                                   "3 · Your sentence, with and without the scaling"]
    assert len(at.get("vega_lite_chart")) == 2, "the two experiments' charts, not the sentence's"
    assert any("This section runs on your sentence" in i for i in texts(at, "info"))
    at.session_state["open_check_why-scaling"] = True
    at.run()
    asked = " ".join(texts(at, "markdown"))
    assert "standard deviation of q·k" in asked and "saturated row" in asked and "In section 3" not in asked


def test_line_charts_keep_their_y_title_clear_of_the_labels():
    """On a slide the 20-px "‖J‖_F" touched the "0.20" beside it at Vega's 4-px title padding."""
    from attention_ui.why import Y_TITLE_PADDING_EM

    at = open_page("pages/why_scaling.py", {"presenter": "true"})
    spec = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart")
                if "size of the softmax gradient" in c.proto.spec)
    axes = [next(layer["encoding"]["y"]["axis"] for layer in panel["layer"] if "y" in layer.get("encoding", {}))
            for panel in spec["hconcat"]]
    assert [a["title"] for a in axes][-1] == "‖J‖_F"
    assert all(a["titlePadding"] == Y_TITLE_PADDING_EM * a["titleFontSize"] >= 8 for a in axes), axes


def test_with_d_k_1_the_lesson_says_the_two_softmaxes_are_the_same(pages):
    """At d_k = 1 the page called the difference of two identical charts "mild"."""
    at = pages("pages/why_scaling.py")
    set_widget(at, "slider", "d_k", 1)
    captions = texts(at, "caption")
    assert any("the two charts are the same" in c for c in captions)
    assert not any("the difference is mild" in c for c in captions)
    set_widget(at, "slider", "d_k", 4)
    assert any("the difference is mild" in c for c in texts(at, "caption"))


def _in_page_order(node) -> list:
    """Every element under ``node`` (an AppTest block), in the order the page shows them."""
    children = getattr(node, "children", None)
    if not children:
        return [node]
    return [leaf for _, child in sorted(children.items()) for leaf in _in_page_order(child)]


@pytest.mark.parametrize("presenter", [False, True], ids=["page", "slide"])
def test_why_scalings_saturation_charts_come_before_their_words_on_a_slide(presenter):
    """On a slide section 2's two paragraphs and formula pushed its three charts to the window's foot, and their key
    (which line is scaled) was a press away. On a slide the charts now follow the heading and the words follow
    them; the page keeps words first."""
    at = open_page("pages/why_scaling.py", {"presenter": "true"} if presenter else None)
    shown = _in_page_order(at.main)
    where = {kind: next(i for i, e in enumerate(shown) if test(e)) for kind, test in {
        "heading": lambda e: e.type == "subheader" and e.value.startswith("2 ·"),
        "charts": lambda e: e.type == "vega_lite_chart" and "largest weight in a row" in e.proto.spec,
        "words": lambda e: e.type == "markdown" and e.value.startswith("For each d_k"),
    }.items()}
    order = sorted(where, key=where.get)
    assert order == (["heading", "charts", "words"] if presenter else ["heading", "words", "charts"]), where


def test_the_experiments_d_k_is_told_apart_from_the_lessons():
    """The page's d_k slider (64) beside the sidebar's d_k (4): a student took the page's for the lesson's."""
    at = open_page("pages/why_scaling.py", {"d_k": "8"})
    said = [c.value for c in at.caption if "Sections 1 and 2 use random vectors" in c.value]
    assert said and "the lesson’s own d_k = 8 (set in the sidebar): section 3 uses it" in said[0], said
    assert at.slider(key="why_dk").value == 64
    slide = open_page("pages/why_scaling.py", {"presenter": "true"})
    assert not [c for c in slide.caption if "Sections 1 and 2 use random vectors" in c.value], "a slide keeps room"


@pytest.mark.parametrize("page, part", [("pages/masking.py", "weights with none mask"),
                                        ("pages/why_scaling.py", "softmax(QKᵀ / √d_k)"),
                                        ("pages/positions.py", "RoPE scores")])
def test_a_chart_of_one_head_of_several_names_the_head(page, part):
    """With head 2 picked, Masking, Why √d_k and Order and position drew head 2 under titles that named no head,
    where Step through and Overview name it: the numbers seemed to disagree from page to page."""
    at = open_page(page, {"heads": "4", "head": "2"})
    titles = [t for chart in at.get("vega_lite_chart") for t in spec_titles(json.loads(chart.proto.spec))]
    assert any(part in t and t.endswith(" — head 2") for t in titles), titles
    one = open_page(page, {"heads": "1"})
    titles = [t for chart in one.get("vega_lite_chart") for t in spec_titles(json.loads(chart.proto.spec))]
    assert any(part in t for t in titles) and not any("— head" in t for t in titles), titles


def _series_colours(spec: dict) -> dict[str, str]:
    """Each line's colour in a chart spec (its parts' too): series name -> colour."""
    found = {}
    for part in [spec, *spec.get("hconcat", []), *spec.get("vconcat", []), *spec.get("layer", [])]:
        scale = part.get("encoding", {}).get("color", {}).get("scale", {})
        found |= dict(zip(scale.get("domain", []), scale.get("range", [])))
        if part is not spec:
            found |= _series_colours(part)
    return found


def test_scaled_scores_keep_one_colour_from_chart_to_chart(pages):
    """Orange was the theory's line in the variance chart and the scaled scores' in the three charts under it."""
    at = pages("pages/why_scaling.py")
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    variance = next(_series_colours(s) for s in specs if any("variance of q·k" in t for t in spec_titles(s)))
    saturation = next(_series_colours(s) for s in specs if any("largest weight in a row" in t for t in spec_titles(s)))
    assert variance["Var(q·k / √d_k), sampled"] == saturation["q·k / √d_k (scaled)"], (variance, saturation)
    assert variance["Var(q·k), sampled"] == saturation["q·k (unscaled)"], (variance, saturation)
    assert variance["theory: Var = d_k"] not in saturation.values(), "the theory's colour means nothing else"
