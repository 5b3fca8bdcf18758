"""Every page through Streamlit's AppTest: what it shows, what each sidebar control changes, bad input.

The assertions are on what a person would see: page titles, subheaders, messages and the
data inside the Altair charts (AppTest reports them as ``vega_lite_chart`` elements; their
inline data arrives as Arrow tables in ``proto.datasets``).

AppTest facts that shape these tests (see FACTS.md, "Streamlit 1.67"):
- ``open_page`` calls ``switch_page`` before the first run: app.py runs and its navigation picks
  the page, as a deep link does in a browser.
- ``switch_page`` after a run executes the page file on its own, without ``app.py``; its first run
  can draw the default settings (tests/test_url_state.py records the user-visible side of this),
  so ``switch_to`` runs the page twice.
- Widgets are found by their keys (the sidebar gives every control a key).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import APP, ROOT, TIMEOUT, one_session_per_page, open_page, shown_number, switch_to  # noqa: F401
from attention_ui import views


# page file -> (words in its title, fewest charts it shows with the default settings)
LESSON_PAGES = {
    "pages/overview.py": ("Attention, step by step", 1),
    "pages/step_through.py": ("Step through attention", 1),
    "pages/multi_head.py": ("Multi-head attention", 6),  # Q by head, head grid, lines, rows by head, concat, output
    "pages/masking.py": ("Masking", 8),  # mask grid + weights for each of the four masks
}
# Pages about a real pretrained model: they may show charts, or say plainly that the model is missing.
REAL_PAGES = {
    "pages/real_model.py": "real model",
    "pages/inside_real_head.py": "real head",
}
SENTENCE_FREE_PAGES = {"pages/cost.py", "pages/why_scaling.py"}  # their charts need no sentence
ALL_PAGES = sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py") if not p.name.startswith("_"))
SELF_CONTAINED_PAGES = {"pages/by_hand.py", "pages/start_here.py"}  # no lesson sidebar: see their own test files
ALL_PAGES = [p for p in ALL_PAGES if p not in SELF_CONTAINED_PAGES]
OTHER_PAGES = [p for p in ALL_PAGES if p not in LESSON_PAGES]

DEFAULT_TOKENS = ["1·The", "2·cat", "3·sat", "4·on", "5·the", "6·mat", "7·."]
STAGE_WORDS = [  # the subheader of stage i+1 on the step-through page contains these words
    "Tokens and embeddings", "Queries, keys and values", "Raw scores", "Scaling", "Masking", "Softmax",
    "Context vectors", "Concatenate the heads", "Output projection",
]
UNAVAILABLE = re.compile(r"could not be loaded|not available|unavailable|not installed|install", re.I)


# ----------------------------------------------------------------------------------------- helpers


@dataclass
class Chart:
    title: str
    spec: dict
    data: pd.DataFrame  # every dataset of the chart, stacked

    def matrix(self) -> pd.DataFrame:
        """The heatmap's values as a (rows × columns) table in position order."""
        return self.data.pivot_table(index="row_index", columns="col_index", values="value", dropna=False)

    def labels(self, column: str) -> list[str]:
        index = {"query": "row_index", "token": "row_index", "key": "col_index", "feature": "col_index"}[column]
        return self.data.drop_duplicates(column).sort_values(index)[column].tolist()


def _title_text(spec: dict) -> str:
    title = spec.get("title")
    if isinstance(title, dict):
        return str(title.get("text", ""))
    if title:
        return str(title)
    parts = [_title_text(child) for key in ("hconcat", "vconcat", "concat") for child in spec.get(key, [])]
    return " | ".join(p for p in parts if p)


def charts(at: AppTest) -> list[Chart]:
    out = []
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        frames = [pa.ipc.open_stream(d.data.data).read_pandas() for d in element.proto.datasets]
        data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        out.append(Chart(_title_text(spec), spec, data))
    return out


def chart(at: AppTest, title_part: str) -> Chart:
    found = [c for c in charts(at) if title_part in c.title]
    assert found, f"no chart titled like {title_part!r}; charts: {[c.title for c in charts(at)]}"
    return found[0]


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(e.value) for e in at.get(kind)]


def shown_text(at: AppTest) -> str:
    """Everything written on the page as text (titles, markdown, captions, messages)."""
    kinds = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success")
    return "\n".join(t for kind in kinds for t in texts(at, kind))


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def set_widget(at: AppTest, kind: str, key: str, value) -> AppTest:
    getattr(at, kind)(key=key).set_value(value).run()
    assert_ok(at)
    return at


def go_to_stage(at: AppTest, key: str) -> AppTest:
    """Pick a stage in the step selector by its key ("embed", "qkv", ..., "output")."""
    at.selectbox(key="step").set_value(key).run()
    assert_ok(at)
    return at


def widget_keys(at: AppTest, kind: str) -> set[str]:
    return {w.key for w in getattr(at, kind)}


# ------------------------------------------------------------------------------------------ pages


def test_app_entry_shows_the_overview_with_the_default_sentence():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert_ok(at)
    assert texts(at, "title") == ["Attention, step by step"]
    weights = chart(at, "attention weights")
    assert weights.labels("query") == DEFAULT_TOKENS
    assert weights.labels("key") == DEFAULT_TOKENS


@pytest.mark.parametrize("sentence", [None, "A dog barked at me.", "It didn't cross because it was tired."])
def test_toy_layer_note_names_no_word_that_is_not_in_the_sentence(sentence):
    at = open_page("pages/overview.py", {"sentence": sentence} if sentence else None)
    assert at.text_input(key="sentence").value == (sentence or "The cat sat on the mat.")
    notes = [t for t in texts(at, "info") if "toy layer" in t]
    assert len(notes) == 1, texts(at, "info")
    words = {w.lower() for w in re.findall(r"[\w']+", sentence or " ".join(DEFAULT_TOKENS))}
    quoted = re.findall(r"[“\"]([^”\"]+)[”\"]", notes[0])
    assert all(q.lower() in words for q in quoted), (quoted, words)


def _bare_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string written as a statement that is not a module, class or function docstring."""
    import ast

    tree = ast.parse(source)
    docstrings = {id(body[0]) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  for body in [node.body] if body}
    return [(node.lineno, node.value.value[:60]) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("script", ["app.py", *sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))])
def test_no_page_script_has_a_bare_string_that_streamlit_would_draw(script):
    """Streamlit's "magic" draws a page script's bare expressions: a note meant for the reader of the code
    (a docstring under a constant) would appear on the page as text."""
    assert _bare_strings((ROOT / script).read_text()) == []


def test_the_bare_string_check_finds_a_note_under_a_constant():
    assert _bare_strings('"""Module."""\nX = 1\n"""A note."""\ndef f():\n    """Doc."""\n') == [(3, "A note.")]


def test_multi_head_page_shows_no_note_meant_for_the_code():
    at = open_page("pages/multi_head.py")
    assert not [text for text in texts(at, "markdown") if "GRID_CELL" in text]


@pytest.mark.parametrize("page", sorted(LESSON_PAGES))
def test_lesson_page_renders_title_and_charts(page):
    title, min_charts = LESSON_PAGES[page]
    at = open_page(page)
    assert_ok(at)
    assert not at.error, texts(at, "error")
    assert any(title in t for t in texts(at, "title")), texts(at, "title")
    shown = charts(at)
    assert len(shown) >= min_charts, [c.title for c in shown]
    for c in shown:
        assert not c.data.empty, f"chart {c.title!r} has no data"


@pytest.mark.parametrize("page", OTHER_PAGES)
def test_real_model_page_renders_charts_or_says_the_model_is_missing(page):
    at = open_page(page)
    assert_ok(at)
    assert at.title, "the page has no title"
    words = REAL_PAGES.get(page)
    if words:
        assert words in texts(at, "title")[0].lower()
    if at.get("vega_lite_chart"):
        assert not at.error, texts(at, "error")
    else:
        assert UNAVAILABLE.search(shown_text(at)), shown_text(at)


@pytest.mark.skipif("pages/inside_real_head.py" not in ALL_PAGES, reason="no inside_real_head page")
def test_inside_real_head_reproduces_the_model_and_steps_through_every_stage():
    at = open_page("pages/inside_real_head.py")
    assert_ok(at)
    if not at.get("vega_lite_chart"):
        assert UNAVAILABLE.search(shown_text(at)), shown_text(at)
        pytest.skip("the real model is not available here; the page says so")
    difference = shown_number(at.get("metric")[0].value)
    assert difference < 1e-4
    assert any("reproduces" in s for s in texts(at, "success"))
    for index, words in enumerate(STAGE_WORDS):
        assert words in texts(at, "subheader")[-1], (index, texts(at, "subheader"))
        assert at.get("vega_lite_chart"), f"stage {index + 1} shows no chart"
        if index < len(STAGE_WORDS) - 1:
            at.button(key="next").click().run()
            assert_ok(at)


@pytest.mark.parametrize("layer, says, never", [
    ("1", "no context yet: no attention layer has run", "after the layer"),
    ("3", "after the 2 layers below", "no context yet"),
])
def test_inside_real_head_says_what_x_carries_at_this_layer(layer, says, never):
    """Layer 1's X was said to carry "context from the earlier layers": there are none below it."""
    at = open_page("pages/inside_real_head.py", {"layer": layer})
    if not at.get("vega_lite_chart"):
        pytest.skip("the real model is not available here; the page says so")
    shown = " ".join(texts(at, "markdown"))
    assert says in shown and never not in shown


# ---------------------------------------------------------------------------------------- controls


def test_sentence_changes_the_tokens_in_the_chart():
    at = open_page("pages/overview.py")
    set_widget(at, "text_input", "sentence", "Hello brave new world")
    weights = chart(at, "attention weights")
    assert weights.labels("query") == ["1·Hello", "2·brave", "3·new", "4·world"]
    assert weights.labels("key") == ["1·Hello", "2·brave", "3·new", "4·world"]
    set_widget(at, "text_input", "sentence", "Dogs chase cats")
    assert chart(at, "attention weights").labels("query") == ["1·Dogs", "2·chase", "3·cats"]


def test_example_sentence_replaces_the_sentence():
    at = open_page("pages/overview.py")
    example = at.selectbox(key="example")
    choice = next(o for o in example.options if o.startswith("Time flies"))
    example.set_value(choice).run()
    assert_ok(at)
    assert at.text_input(key="sentence").value == choice
    assert chart(at, "attention weights").labels("query")[:2] == ["1·Time", "2·flies"]


def test_d_model_changes_the_width_of_x():
    at = open_page("pages/step_through.py")
    assert len(chart(at, "X:").labels("feature")) == 8
    set_widget(at, "slider", "d_model", 12)
    assert len(chart(at, "X:").labels("feature")) == 12
    set_widget(at, "slider", "d_model", 40)  # wider than the drawn cap: the caption says so
    assert len(chart(at, "X:").labels("feature")) == 32
    assert any("32 of 40" in c for c in texts(at, "caption")), texts(at, "caption")


def test_d_k_and_d_v_change_the_width_of_q_k_and_v():
    at = open_page("pages/step_through.py")
    go_to_stage(at, "qkv")
    set_widget(at, "slider", "d_k", 6)
    set_widget(at, "slider", "d_v", 3)
    titles = [c.title for c in charts(at)]
    q, k, v = (next(c for c in charts(at) if c.title.startswith(name)) for name in ("Q", "K", "V"))
    assert len(q.labels("feature")) == 6, titles
    assert len(k.labels("feature")) == 6
    assert len(v.labels("feature")) == 3
    assert any("d_k = 6, d_v = 3" in m for m in texts(at, "markdown"))


def _colour_domain(spec: dict) -> list:
    for layer in spec.get("layer", [spec]):
        scale = layer.get("encoding", {}).get("color", {}).get("scale", {})
        if "domain" in scale:
            return scale["domain"]
    raise AssertionError("no colour scale with a domain")


def test_q_k_and_v_share_one_colour_scale():
    """Each had its own scale, so one colour meant different numbers in the three charts side by side."""
    at = go_to_stage(open_page("pages/step_through.py"), "qkv")
    q, k, v = (next(c for c in charts(at) if c.title.startswith(name)) for name in ("Q", "K", "V"))
    domains = [_colour_domain(c.spec) for c in (q, k, v)]
    assert domains[0] == domains[1] == domains[2], domains
    largest = max(abs(float(x)) for c in (q, k, v) for x in c.matrix().to_numpy().ravel())
    assert domains[0] == pytest.approx([-largest, largest], rel=1e-5)


@pytest.mark.parametrize("mask", ["causal", "none"])
def test_stage_5_draws_the_scores_on_stage_4s_colour_scale(mask):
    """Stage 4's "after" and stage 5's scores are the same numbers, drawn on ±(largest raw score) and on their own
    ±(largest scaled score): the same number had two colours on consecutive stages."""
    at = go_to_stage(open_page("pages/step_through.py", {"mask": mask, "d_k": "16"}), "scaled")
    before, after = chart(at, "before: QKᵀ"), chart(at, "after: QKᵀ / √d_k")
    largest = max(abs(float(x)) for x in before.matrix().to_numpy().ravel())
    assert _colour_domain(before.spec) == _colour_domain(after.spec) == pytest.approx([-largest, largest], rel=1e-5)
    at = go_to_stage(at, "masked")
    assert _colour_domain(chart(at, "scores, −∞ where blocked").spec) == _colour_domain(after.spec)


@pytest.mark.parametrize("stage, expected", [
    ("embed", "the first 32 of 64 features of X"),
    ("qkv", "the first 32 of 64 features of Q and K and the first 32 of 40 features of V"),
    ("context", "the first 32 of 40 features of the context"),
    ("output", "the first 32 of 64 features of the output"),
    ("concat", "the first 16 of each head's 40 columns (32 of 80), head by head"),
])
def test_every_stage_says_when_its_charts_leave_features_out(stage, expected):
    """Q/K/V, the context and the output stopped at 32 features while the words said d_k = 64, with no note;
    X and the concat said it in other words."""
    at = open_page("pages/step_through.py", {"d_model": "64", "d_k": "64", "d_v": "40", "heads": "2", "step": stage})
    assert any(expected in c for c in texts(at, "caption")), texts(at, "caption")


def test_no_note_on_left_out_features_when_every_feature_is_drawn():
    at = open_page("pages/step_through.py", {"step": "qkv"})
    assert not any("features of" in c for c in texts(at, "caption")), texts(at, "caption")


def test_heads_change_the_number_of_head_panels_and_head_choices():
    at = open_page("pages/multi_head.py")
    set_widget(at, "slider", "heads", 4)
    by_title = {c.title: c for c in charts(at)}
    q = next(c for t, c in by_title.items() if t.startswith("Q of each head"))
    assert sorted(q.data["head"].unique()) == [
        f"head {i}: q1–q4 = Q's columns {4 * i - 3}–{4 * i}" for i in range(1, 5)], (
        "each panel's axis reads q1…q4: its title says which columns of Q they are")
    rows = next(c for t, c in by_title.items() if t.startswith("the row of"))
    assert sorted(rows.data["head"].unique()) == ["head 1", "head 2", "head 3", "head 4"]
    assert len(rows.data) == 4 * 7, "one bar per key in each head"
    grid = next(c for c in charts(at) if "query" in c.data.columns and "head_index" in c.data.columns)
    assert sorted(grid.data["head"].unique()) == ["head 1", "head 2", "head 3", "head 4"]
    assert list(at.selectbox(key="head").options) == ["1", "2", "3", "4"]

    set_widget(at, "slider", "heads", 1)
    assert chart(at, "Q of each head").data["head"].unique().tolist() == ["head 1: q1–q4 = Q's columns 1–4"]
    assert any("only one head" in i for i in texts(at, "info")), texts(at, "info")
    assert "head" not in widget_keys(at, "selectbox")


def test_causal_mask_zeroes_the_weights_above_the_diagonal():
    at = open_page("pages/overview.py")
    weights = chart(at, "attention weights").matrix().to_numpy()
    assert (weights > 0).all()
    set_widget(at, "radio", "mask", "causal")
    weights = chart(at, "attention weights").matrix().to_numpy()
    n = weights.shape[0]
    for i in range(n):
        for j in range(n):
            if j > i:
                assert weights[i, j] == 0, (i, j)
            else:
                assert weights[i, j] > 0, (i, j)
        assert abs(weights[i].sum() - 1) < 1e-6


def test_masked_stage_counts_the_blocked_pairs():
    at = open_page("pages/step_through.py")
    go_to_stage(at, "masked")
    assert any("nothing is blocked" in i for i in texts(at, "info")), texts(at, "info")
    set_widget(at, "radio", "mask", "causal")
    assert any("21 of 49 query–key pairs are blocked" in m for m in texts(at, "markdown")), texts(at, "markdown")
    scores = chart(at, "blocked").data
    above = scores[scores.col_index > scores.row_index]
    assert above["masked"].all() and (above["label"] == "−∞").all()


@pytest.mark.parametrize("page, query, title", [
    ("pages/masking.py", {}, "weights with causal mask"),
    ("pages/why_scaling.py", {"mask": "causal"}, "softmax(QKᵀ / √d_k)"),
    ("pages/cross_attention.py", {}, "cross-attention:"),
], ids=["masking", "why-scaling", "cross-attention-padded"])
def test_blocked_weights_look_blocked_on_every_page(page, query, title):
    """A blocked key's weight (0) is drawn grey with × on every page, as on Step through, not as a small weight."""
    at = open_page(page, query)
    if page == "pages/cross_attention.py":
        set_widget(at, "toggle", "cross_pad", True)  # [PAD] keys of the source are blocked
    data = chart(at, title).data
    assert "masked" in data.columns and data["masked"].any(), list(data.columns)
    assert (data[data["masked"]]["label"] == "×").all()


@pytest.mark.parametrize("link, expected", [
    ({"mask": "padding", "pad_to": "5"}, "the sentence already has 7 tokens, so no [PAD] token was added"),
    ({"mask": "causal", "sentence": "Hello"}, "a single token may attend to itself"),
    ({"mask": "custom"}, "The custom mask allows every pair"),
], ids=["padding-shorter-than-the-sentence", "causal-one-token", "custom-all-allowed"])
def test_a_mask_that_blocks_nothing_says_why(link, expected):
    """A chosen mask can block nothing; the stage says why instead of claiming no mask is set."""
    at = open_page("pages/step_through.py", {**link, "step": "masked"})
    notes = texts(at, "info")
    assert any(expected in n for n in notes), notes
    assert not any("No mask is set" in n for n in notes), notes


def test_padding_mask_adds_pad_tokens_that_get_no_weight():
    at = open_page("pages/overview.py")
    set_widget(at, "radio", "mask", "padding")
    weights = chart(at, "attention weights")
    assert weights.labels("query") == DEFAULT_TOKENS + ["8·[PAD]", "9·[PAD]", "10·[PAD]"]
    matrix = weights.matrix().to_numpy()
    assert (matrix[:7, 7:] == 0).all(), "real tokens must not attend to [PAD] keys"
    assert (matrix[:7, :7] > 0).all()
    set_widget(at, "slider", "pad_to", 12)
    assert sum("[PAD]" in t for t in chart(at, "attention weights").labels("query")) == 5


def test_custom_grid_in_the_session_decides_the_weights():
    grid = tuple(tuple(bool((i + j) % 3) for j in range(7)) for i in range(7))
    grid = grid[:2] + (tuple(False for _ in range(7)),) + grid[3:]  # row 3 fully blocked
    at = open_page("pages/overview.py")
    at.session_state["custom_grid"] = grid
    set_widget(at, "radio", "mask", "custom")
    matrix = chart(at, "attention weights").matrix().to_numpy()
    for i in range(7):
        for j in range(7):
            assert (matrix[i, j] > 0) == grid[i][j], (i, j, matrix[i, j])
    assert (matrix[2] == 0).all()

    switch_to(at, "pages/masking.py")
    assert any("1 row is fully blocked (3·sat)" in w for w in texts(at, "warning")), texts(at, "warning")
    assert any("such a row is all grey “×” cells" in w for w in texts(at, "warning")), \
        "a student saw a row of blocked cells and could not tell that its weights are all 0"
    mine = chart(at, "weights with your mask").matrix().to_numpy()
    assert (mine == matrix).all()


@pytest.mark.parametrize("stage", ["masked", "softmax"])
def test_a_custom_mask_that_blocks_nothing_says_so_and_links_to_its_grid(stage):
    """Picking "custom" with the untouched grid gave the same weights as no mask, and at the softmax stage nothing
    said why or where the grid is edited."""
    at = go_to_stage(open_page("pages/step_through.py", {"mask": "custom"}), stage)
    assert any("allows every pair" in i for i in texts(at, "info")), texts(at, "info")
    assert [link.proto.page for link in at.get("page_link")] == ["masking"]
    grid = tuple(tuple(j <= i for j in range(7)) for i in range(7))
    at.session_state["custom_grid"] = grid
    at.run()
    assert not any("allows every pair" in i for i in texts(at, "info")) and not at.get("page_link")


def test_the_custom_mask_says_it_allows_everything_until_changed_and_can_start_from_a_window():
    """On a slide the custom mask and its weights looked exactly like "none", with nothing said: its words say so
    until a cell is changed, and "Start from a window" gives it a pattern of its own (itself and the two before)."""
    at = open_page("pages/masking.py")
    custom = next(m for m in texts(at, "markdown") if m.startswith("**Custom**"))
    assert "Until a cell is changed it allows everything" in custom, custom
    next(b for b in at.button if b.label == "Start from a window").click().run()
    assert_ok(at)
    assert at.session_state["custom_grid"][3] == (False, True, True, True, False, False, False)
    weights = chart(at, "weights with custom mask").matrix().to_numpy()
    assert (weights[3, [1, 2, 3]] > 0).all() and (weights[3, [0, 4, 5, 6]] == 0).all(), weights[3]
    assert not any("Until a cell is changed" in m for m in texts(at, "markdown"))
    # what the button did is drawn under the grid too (the "custom" pair is a screen above it)
    assert (chart(at, "weights with your grid").matrix().to_numpy() == weights).all()
    charts_in_order = [json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")]
    assert "weights with your grid" in json.dumps(charts_in_order[-1]), charts_in_order


def test_a_slide_leaves_out_an_untouched_custom_masks_pair_which_repeats_none():
    """A clicker went from "none" to a "custom" pair with the same ticks and the same weights: a press that showed
    nothing new. A slide draws the custom pair once a cell is changed."""
    def titles(at) -> str:
        return json.dumps([json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")])

    slide = open_page("pages/masking.py", {"presenter": "true"})
    custom = next(m for m in texts(slide, "markdown") if m.startswith("**Custom**"))
    assert "as “none” does, so its pair would repeat the one above" in custom, custom
    assert "mask: none" in titles(slide) and "mask: custom" not in titles(slide)
    next(b for b in slide.button if b.label == "Start from a window").click().run()
    assert_ok(slide)
    assert "mask: custom" in titles(slide) and "weights with custom mask" in titles(slide)
    assert "mask: custom" in titles(open_page("pages/masking.py")), "the page shows every pair"


def test_a_slides_mask_editor_has_its_weights_beside_it_where_they_fit():
    """On a slide the zoomed editor of a 7-token sentence was 800 px wide, and the weights it changes a screen below:
    a tick in front of a class showed nothing. Where its numbered columns leave room, the weights stand beside it."""
    def beside(query: dict) -> bool:
        at = open_page("pages/masking.py", {"mask": "custom", **query})
        return any("weights with your mask" in json.dumps(json.loads(c.proto.spec).get("title"))
                   for column in at.columns for c in column.get("vega_lite_chart"))

    assert beside({"presenter": "true"})
    assert not beside({}), "a page keeps the grid's worded columns and its weights under it"
    assert not beside({"presenter": "true", "sentence": "a b c d e f g h i j k l"}), "too wide to share the slide"


def test_masking_buttons_edit_the_kept_grid_while_the_sidebar_mask_is_none():
    at = open_page("pages/masking.py")
    assert at.radio(key="mask").value == "none"
    next(b for b in at.button if b.label == "Start from causal").click().run()
    assert_ok(at)
    matrix = chart(at, "weights with custom mask").matrix().to_numpy()
    assert (matrix[0, 1:] == 0).all() and (matrix[-1] > 0).all(), "the custom panel must show the kept grid"
    assert at.session_state["custom_grid"][0] == (True,) + (False,) * 6
    at.run()  # no edit is pending: a further run keeps the grid (no rerun loop, no reset)
    assert at.session_state["custom_grid"][0] == (True,) + (False,) * 6
    # The grid's effect is one click away: the charts under the grid appeared only with the sidebar's mask "custom"
    assert not [c for c in charts(at) if "weights with your mask" in c.title]
    next(b for b in at.button if b.label == "Use my grid as the mask").click().run()
    assert_ok(at)
    assert at.radio(key="mask").value == "custom" and at.query_params.get("mask") == "custom"
    mine = chart(at, "weights with your mask").matrix().to_numpy()
    assert (mine[0, 1:] == 0).all() and (mine[-1] > 0).all()


@pytest.mark.parametrize("kind", ["none", "causal", "padding", "custom"])
def test_masking_panels_outline_the_followed_token(kind):
    """The four panels outline the followed token's row (?token=5 is row index 4), as the rest of the page does."""
    at = open_page("pages/masking.py", {"token": "5"})
    spec = json.dumps(chart(at, f"weights with {kind} mask").spec)
    assert "datum.row_index == 4" in spec
    assert "datum.row_index == 0" not in spec


def test_masking_page_buttons_edit_the_grid():
    at = open_page("pages/masking.py")
    assert not any("not “custom”" in i for i in texts(at, "info")), "no grid yet: nothing to say about keeping it"
    set_widget(at, "radio", "mask", "custom")
    assert not at.warning
    next(b for b in at.button if b.label == "Start from causal").click().run()
    assert_ok(at)
    matrix = chart(at, "weights with your mask").matrix().to_numpy()
    for i in range(7):
        assert (matrix[i, i + 1:] == 0).all() and (matrix[i, : i + 1] > 0).all(), i
    assert not at.warning

    set_widget(at, "selectbox", "token", 3)
    next(b for b in at.button if "Block" in b.label).click().run()
    assert_ok(at)
    assert any("1 row is fully blocked" in w and "takes in nothing" in w for w in texts(at, "warning")), \
        texts(at, "warning")
    matrix = chart(at, "weights with your mask").matrix().to_numpy()
    assert (matrix[3] == 0).all()
    assert (matrix[4, :5] > 0).all()

    next(b for b in at.button if b.label == "Allow everything").click().run()
    assert_ok(at)
    assert (chart(at, "weights with your mask").matrix().to_numpy() > 0).all()
    assert not at.warning

    set_widget(at, "radio", "mask", "causal")
    assert any("the other pages do not use your grid yet" in i for i in texts(at, "info")), \
        "the grid is kept while another mask is chosen"
    assert not any("no chart uses" in i for i in texts(at, "info")), "the page's custom chart does use it"


def test_identity_init_replaces_d_k_and_d_v_and_makes_q_equal_x():
    at = open_page("pages/step_through.py")
    assert not at.slider(key="d_k").disabled
    set_widget(at, "radio", "init", "identity")
    shown = [s.key for s in at.slider]
    assert "d_k" not in shown and "d_v" not in shown, "no slider may show a d_k/d_v that is not in use"
    assert any("d_k = d_v = d_model / h = 4" in c for c in texts(at, "caption")), texts(at, "caption")
    x = chart(at, "X:").matrix().to_numpy()
    go_to_stage(at, "qkv")
    q = next(c for c in charts(at) if c.title.startswith("Q")).matrix().to_numpy()
    assert q.shape == (7, 4)
    assert abs(q - x[:, :4]).max() < 1e-5, "head 1's queries must be X's first d_model/h columns"


def test_identity_with_heads_not_dividing_d_model_explains_the_problem():
    at = open_page("pages/step_through.py")
    set_widget(at, "radio", "init", "identity")
    set_widget(at, "slider", "heads", 3)
    errors = texts(at, "error")
    assert errors and "does not split evenly" in errors[0] and "d_model = 8" in errors[0], errors
    assert not at.get("vega_lite_chart")
    set_widget(at, "slider", "heads", 4)
    assert not at.error and at.get("vega_lite_chart")


def test_seed_changes_the_numbers_and_the_same_seed_gives_the_same_numbers():
    at = open_page("pages/step_through.py")
    first = chart(at, "X:").matrix()
    set_widget(at, "number_input", "seed", 7)
    other = chart(at, "X:").matrix()
    assert (first - other).abs().to_numpy().max() > 0.1
    set_widget(at, "number_input", "seed", 42)
    pd.testing.assert_frame_equal(chart(at, "X:").matrix(), first)
    again = open_page("pages/step_through.py")
    pd.testing.assert_frame_equal(chart(again, "X:").matrix(), first)


def test_device_lists_only_devices_that_exist():
    import torch

    expected = ["auto", "cpu"]
    if torch.cuda.is_available():
        expected.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        expected.append("mps")
    at = open_page("pages/overview.py")
    device = at.selectbox(key="device")
    assert list(device.options) == expected
    before = chart(at, "attention weights").matrix()
    set_widget(at, "selectbox", "device", "cpu")
    after = chart(at, "attention weights").matrix()
    assert (before - after).abs().to_numpy().max() < 1e-5


def test_followed_token_is_named_in_the_worked_numbers():
    at = open_page("pages/step_through.py")
    go_to_stage(at, "scores")
    assert "#### Worked numbers for 1·The" in texts(at, "markdown")
    set_widget(at, "selectbox", "token", 2)
    assert "#### Worked numbers for 3·sat" in texts(at, "markdown"), texts(at, "markdown")
    assert any("“3·sat”" in c for c in texts(at, "caption"))
    go_to_stage(at, "softmax")
    assert any(m.startswith("**Row of 3·sat**") for m in texts(at, "markdown"))
    bars = chart(at, "softmax weights")
    assert bars.data["key"].iloc[0] == "1·The"

    switch_to(at, "pages/multi_head.py")
    assert any("What 3·sat attends to" in s for s in texts(at, "subheader")), texts(at, "subheader")


def test_head_choice_changes_the_head_shown():
    at = open_page("pages/step_through.py")
    go_to_stage(at, "scores")
    head1 = chart(at, "QKᵀ")
    assert head1.title == "QKᵀ — head 1"
    set_widget(at, "selectbox", "head", 2)
    head2 = chart(at, "QKᵀ")
    assert head2.title == "QKᵀ — head 2"
    assert (head1.matrix() - head2.matrix()).abs().to_numpy().max() > 1e-3


def test_next_and_back_walk_through_all_nine_stages():
    at = open_page("pages/step_through.py")
    assert at.button(key="back").disabled
    for index, words in enumerate(STAGE_WORDS):
        subheaders = texts(at, "subheader")
        assert subheaders and subheaders[0].startswith(f"{index + 1} ·") and words in subheaders[0], subheaders
        assert at.get("vega_lite_chart"), f"stage {index + 1} shows no chart"
        assert f"Stage {index + 1} of 9" in at.get("progress")[0].proto.text
        if index < 8:
            at.button(key="next").click().run()
            assert_ok(at)
    assert at.button(key="next").disabled
    assert any("9 of 9 stages" in c for c in texts(at, "caption")), texts(at, "caption")
    for index in reversed(range(8)):
        at.button(key="back").click().run()
        assert_ok(at)
        assert STAGE_WORDS[index] in texts(at, "subheader")[0]
    assert at.button(key="back").disabled


def test_stage_selector_jumps_to_a_stage():
    at = open_page("pages/step_through.py")
    go_to_stage(at, "context")
    assert texts(at, "subheader")[0].startswith("7 · Context")
    titles = [c.title for c in charts(at)]
    # both charts name the head they show (the default lesson has two)
    assert "weights A — head 1" in titles and "context = A·V — head 1" in titles, titles


SIDEBAR_HIDDEN = "[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'] {display: none;}"


def test_presenter_mode_makes_the_stage_a_slide_sized_to_the_window():
    at = open_page("pages/step_through.py")
    go_to_stage(at, "scaled")
    small = [(c.spec["width"], c.spec["height"]) for c in charts(at)]
    assert all(isinstance(w, int) and isinstance(h, int) for w, h in small), small
    assert not any(SIDEBAR_HIDDEN in e.proto.body for e in at.get("html")), "the page keeps its sidebar"
    set_widget(at, "toggle", "presenter", True)
    assert [(c.spec["width"], c.spec["height"]) for c in charts(at)][:2] == [("container", "container")] * 2
    styles = " ".join(e.proto.body for e in at.get("html"))
    assert SIDEBAR_HIDDEN in styles
    assert "calc(100vh" in styles, "the slide's charts take their height from the window"
    assert not at.title, "a slide has no page title: the stage title is the heading"
    assert at.button(key="next") and at.button(key="back")
    assert not at.button(key="next").help, "a tooltip left open by a click would cover the presenter switch"
    assert at.button(key="next_page_key") and at.button(key="back_page_key"), "a clicker's Page Down / Page Up"
    set_widget(at, "toggle", "presenter", False)
    assert [(c.spec["width"], c.spec["height"]) for c in charts(at)] == small
    assert not at.button(key="next").help, "the button shows its key; a tooltip left open by a click covered text"
    assert not [b for b in at.button if b.key and b.key.endswith("_page_key")], "a reader's Page Down scrolls"


def test_real_word_vectors_fix_d_model_or_explain_why_not():
    at = open_page("pages/step_through.py")
    radio = at.radio(key="embeddings")
    real = next(o for o in radio.options if o != "seeded")
    set_widget(at, "radio", "embeddings", real)
    captions = texts(at, "caption")
    if any("not available" in w for w in texts(at, "warning")):
        assert not at.slider(key="d_model").disabled
        return
    assert "d_model" not in [s.key for s in at.slider]
    width = next(int(m.group(1)) for c in captions if (m := re.search(r"d_model = (\d+)", c)))
    assert width > 64
    assert any(f"first 32 of {width} features" in c for c in captions), captions
    assert len(chart(at, "X:").labels("feature")) == 32
    note = next(c for c in captions if c.startswith("Real word vectors"))  # why the weights look even
    assert f"over {width} features" in note and "about 1/T each without a mask" in note and "Real model" in note, note
    assert not any(c.startswith("A toy layer") for c in captions), captions


# --------------------------------------------------------------------------------------- bad input

LONG_WORDS = " ".join(["word"] * 600)
# name -> (sentence, what must happen, words that must appear: in the error, or among the chart's tokens)
BAD_INPUTS = {
    "empty": ("", "error", ["empty"]),
    "whitespace only": ("   \t  ", "error", ["empty"]),
    "600 words": (LONG_WORDS, "error", ["limit", "at most 32 tokens"]),
    "2500 chars of words": ("ab " * 850, "error", ["limit"]),
    "2500 chars, one word": ("a" * 2500, "either", ["limit"]),
    "emoji, CJK and RTL": ("I ❤️ my 🐈‍⬛ in 🇫🇷 我爱你 שלום مرحبا", "render", ["🇫🇷", "·我", "·爱", "שלום", "مرحبا"]),
    "HTML and markdown": ("<b>x</b><script>alert(1)</script> **bold** [link](u)", "render",
                          ["script", "bold", "link"]),
}
# Text that renders as markdown/HTML in the page. User text in it must be escaped.
MARKDOWN_KINDS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success")
# Raw markup, or a token label ("1·<", "12·*") whose special character is not backslash-escaped.
RAW_MARKUP = re.compile(r"(?<!\\)<\s*/?\s*(script|b)\b|(?<!\\)\[link(?<!\\)\]\(|(?<!\\)\*\*bold"
                        r"|\d·[<>*\[\]()_`$#|~]")


@pytest.fixture(scope="module")
def sessions():
    """One session per page, reused by the bad-input tests (each test sets its own sentence)."""
    return one_session_per_page()


def assert_no_raw_markup(at: AppTest) -> None:
    for kind in MARKDOWN_KINDS:
        for text in texts(at, kind):
            assert not RAW_MARKUP.search(text), f"user text rendered as markup in a {kind}: {text!r}"
    for element in at.get("html"):
        body = element.proto.body
        assert "alert" not in body and "<b>" not in body, body


def test_worked_table_shows_tokens_literally():
    """st.table reads each cell as Markdown: a token's label in the worked table must be escaped, or a token
    such as "$$" or "**" (one token in a GPT-2 vocabulary) would be drawn as math or emphasis."""
    at = open_page("pages/step_through.py", {"step": "scores", "sentence": "Pay $ now * ok"})
    keys = list(at.table[0].value["key"])
    assert keys == ["1·Pay", "2·\\$", "3·now", "4·\\*", "5·ok"], keys
    assert views._literal_keys(pd.DataFrame({"key": ["3·$$", "4·**"], "= score": ["1", "2"]}))["key"].tolist() == [
        "3·\\$\\$", "4·\\*\\*"]


def test_a_long_worked_table_shows_its_first_rows_and_the_rest_on_a_click():
    """18 keys (or a real head's 32 features) made a worked table two screens tall before the next heading."""
    at = open_page("pages/step_through.py", {"step": "scores", "sentence": "a b c d e f g h i j k l m n o $$ q"})
    first = at.table[0].value
    assert first["key"].tolist() == [f"{i}·{w}" for i, w in enumerate("abcdefgh", 1)]
    rest = next(e for e in at.expander if e.label.startswith("The other"))
    assert rest.label == "The other 10 rows (9·i … 18·q)" and not rest.table, "drawn only when opened"
    at.session_state["open_worked_rest_scores"] = True
    at.run()
    shown = pd.concat([at.table[0].value, at.table[1].value])
    assert shown["key"].tolist()[8:] == ["9·i", "10·j", "11·k", "12·l", "13·m", "14·n", "15·o", "16·\\$", "17·\\$",
                                         "18·q"]
    short = open_page("pages/step_through.py", {"step": "scores", "sentence": "a b c d e f g h i j k l"})
    assert len(short.table[0].value) == 12 and not [e for e in short.expander if e.label.startswith("The other")]


def all_chart_labels(at: AppTest) -> str:
    found = []
    for c in charts(at):
        for column in ("query", "key", "token"):
            if column in c.data.columns:
                found.extend(c.data[column].astype(str))
    return " ".join(found)


@pytest.mark.parametrize("name", list(BAD_INPUTS))
@pytest.mark.parametrize("page", ALL_PAGES)
def test_bad_sentence_gives_a_message_or_renders_never_a_traceback(sessions, page, name):
    sentence, outcome, words = BAD_INPUTS[name]
    at = sessions(page)
    at.text_input(key="sentence").set_value(sentence).run()
    assert_ok(at)
    assert_no_raw_markup(at)
    errors = texts(at, "error")
    if page in SENTENCE_FREE_PAGES and outcome != "render":  # it carries on, naming what the other pages will say
        captions = texts(at, "caption")
        refused = [c for c in captions if "carries on with what does not need one" in c]
        assert not errors and (refused or outcome == "either"), (errors, captions)
        if refused:  # ("either": a sentence some pages take, with no refusal to read)
            assert all(w in refused[0] for w in words), refused
        assert at.get("vega_lite_chart"), "the page's own charts are drawn"
        return
    if page not in LESSON_PAGES:
        # A real-model page: the model's own message (e.g. "no words" for a 400-letter word that its tokenizer
        # turns into [UNK]), a notice that a long input was cut to the model's limit, or charts. Never a traceback.
        if outcome == "error":
            assert errors or any("cut" in w or "first" in w for w in texts(at, "warning")), shown_text(at)
        else:
            assert at.get("vega_lite_chart") or errors, shown_text(at)
        return
    if outcome == "error" or (outcome == "either" and errors):
        assert errors, f"no message for {name!r}"
        assert all(w in errors[0] for w in words), errors
        assert not at.get("vega_lite_chart"), "charts drawn for a sentence that was refused"
        return
    assert not errors, errors
    title, min_charts = LESSON_PAGES[page]
    assert any(title in t for t in texts(at, "title"))
    assert len(at.get("vega_lite_chart")) >= min_charts
    if outcome == "render":
        labels = all_chart_labels(at)
        assert all(w in labels for w in words), labels[:300]


def test_markup_sentence_is_escaped_at_every_stage():
    at = open_page("pages/step_through.py")
    set_widget(at, "text_input", "sentence", "<b>x</b><script>alert(1)</script>")
    tokens = chart(at, "X:").labels("token")
    assert tokens[:3] == ["1·<", "2·b", "3·>"]
    for index in range(len(STAGE_WORDS)):
        assert_no_raw_markup(at)
        if index < len(STAGE_WORDS) - 1:
            at.button(key="next").click().run()
            assert_ok(at)
    go_to_stage(at, "scores")
    assert "#### Worked numbers for 1·\\<" in texts(at, "markdown")


# ------------------------------------------------------------------------- confusions, recorded


def test_page_keeps_its_title_when_the_settings_are_invalid():
    # 6 features do not split into 4 heads
    at = open_page("pages/multi_head.py", {"init": "identity", "d_model": "6", "heads": "4"})
    assert at.error
    assert any("Multi-head" in t for t in texts(at, "title")), texts(at, "title")


def test_an_empty_sentence_in_a_link_falls_back_with_a_note():
    at = open_page("pages/multi_head.py", {"sentence": ""})
    assert not at.error
    notes = texts(at, "info")
    assert any("sentence" in n and "could not be used" in n for n in notes), notes
    assert at.text_input(key="sentence").value == "The cat sat on the mat."


def test_a_sentence_over_the_token_limit_can_become_its_first_tokens_in_one_click():
    words = [f"w{i}" for i in range(60)]
    at = open_page("pages/step_through.py")
    set_widget(at, "text_input", "sentence", " ".join(words) + ".")
    assert "has 61 tokens; the limit is 32" in texts(at, "error")[0] and not at.get("vega_lite_chart")
    offer = at.button(key="first_tokens_sentence")
    assert offer.label == "Use its first 32 tokens: “w0 w1 w2 w3 … w28 w29 w30 w31”"
    offer.click().run()
    assert_ok(at)
    assert not at.error and at.text_input(key="sentence").value == " ".join(words[:32])
    assert chart(at, "X:").labels("token")[-1] == "32·w31" and at.query_params["sentence"] == " ".join(words[:32])
    set_widget(at, "text_input", "sentence", "a" * 2001 + " b" * 40)  # its first tokens are refused too: no offer
    assert "characters long" in texts(at, "error")[0] and not [b for b in at.button if b.key == "first_tokens_sentence"]
    cross = open_page("pages/cross_attention.py")
    set_widget(cross, "text_input", "cross_source", "<b>" + " ".join(words))
    cross.button(key="first_tokens_cross_source").click().run()
    assert not cross.error and cross.text_input(key="cross_source").value == "<b>" + " ".join(words[:29])


@pytest.mark.parametrize("page, key, example, message", [
    ("pages/step_through.py", "sentence", "The cat sat on the mat.", "The sentence is empty"),
    ("pages/real_model.py", "sentence", "The cat sat on the mat.", "The sentence is empty"),
    ("pages/cross_attention.py", "cross_source", "Le chat s'est assis sur le tapis.", "source sentence.** It is empty"),
])
def test_an_emptied_sentence_box_offers_the_example_back_in_one_click(page, key, example, message):
    """A cleared box left the page with nothing but the message (and a lesson page with no chart at all). The
    message suggests no other example than the button's (an empty source was told "e.g. “The cat sat on the mat.”"
    above a button offering the French one)."""
    at = open_page(page)
    set_widget(at, "text_input", key, "   ")
    error = texts(at, "error")[0]
    assert message in error
    assert "e.g." not in error or example in error, error
    offer = at.button(key=f"example_for_{key}")
    assert example.rstrip(".") in offer.label.replace("\\", "")
    offer.click().run()
    assert_ok(at)
    assert not at.error and at.text_input(key=key).value == example and at.get("vega_lite_chart")


def test_multi_head_sections_are_numbered_in_order():
    at = open_page("pages/multi_head.py")
    numbers = [int(m.group(1)) for s in texts(at, "subheader") if (m := re.match(r"(\d+) ·", s))]
    assert numbers == list(range(1, len(numbers) + 1)), texts(at, "subheader")


def test_d_model_slider_gives_way_to_the_width_in_use_with_real_word_vectors():
    at = open_page("pages/step_through.py")
    real = next(o for o in at.radio(key="embeddings").options if o != "seeded")
    set_widget(at, "radio", "embeddings", real)
    if any("not available" in w for w in texts(at, "warning")):
        pytest.skip("the real model is not available here")
    width = next(int(m.group(1)) for c in texts(at, "caption") if (m := re.search(r"d_model = (\d+)", c)))
    assert width == 384
    assert "d_model" not in [s.key for s in at.slider], "no slider may show a d_model that is not in use"


def test_real_model_message_for_one_very_long_word_is_accurate():
    if "pages/real_model.py" not in ALL_PAGES:
        pytest.skip("no real model page")
    at = open_page("pages/real_model.py", {"sentence": "a" * 400})
    if UNAVAILABLE.search(shown_text(at)) and not at.get("vega_lite_chart"):
        pytest.skip("the real model is not available here")
    assert not any("found no words" in e for e in texts(at, "error")), texts(at, "error")


@pytest.mark.parametrize("stage", ["qkv", "scaled", "context"])
def test_charts_too_narrow_side_by_side_are_drawn_one_under_another(stage):
    """At the defaults a stage's charts sit side by side; with many tokens or features their cells would be too
    small for the row labels, so they are drawn one under another, each as wide as the page."""
    def charts_in_columns(at) -> int:
        return sum(len(column.get("vega_lite_chart")) for column in at.columns)

    at = open_page("pages/step_through.py", {"step": stage})
    assert charts_in_columns(at) >= 2
    big = open_page("pages/step_through.py", {"step": stage, "d_model": "64", "heads": "8", "d_k": "64",
                                              "d_v": "64", "sentence": " ".join(["word"] * 24)})
    charts = big.get("vega_lite_chart")
    assert len(charts) >= 2 and charts_in_columns(big) == 0
    widths = [json.loads(c.proto.spec)["width"] for c in charts[:2]]
    assert min(widths) >= 24 * 18, widths  # cells of at least MIN_SIDE_BY_SIDE_CELL for every token or feature


def test_wide_head_panels_wrap_and_many_tokens_shrink_the_mask_cells():
    """Multi-head: with 32 features per head the Q panels wrap two to a row (four at once were shrunk to under
    half their size); Masking: with 18 tokens each half-width chart fits its column instead of being shrunk."""
    big = {"d_model": "64", "heads": "8", "d_k": "64", "d_v": "64", "sentence": " ".join(["word"] * 18)}
    grid = chart(open_page("pages/multi_head.py", big), "Q of each head").spec
    assert grid["columns"] == 2, grid["columns"]
    assert chart(open_page("pages/multi_head.py"), "Q of each head").spec["columns"] == 2  # the 2 default heads
    masks = open_page("pages/masking.py", big)
    for title in ("mask: causal", "weights with causal mask"):
        spec = chart(masks, title).spec
        assert spec["width"] <= 18 * 18, (title, spec["width"])  # 18 cells in a half column, not 18 × 28 px


def test_generation_stacks_the_cache_charts_of_wide_heads():
    def q_k_v_in_columns(at) -> int:
        return sum(1 for column in at.columns for c in column.get("vega_lite_chart")
                   if any(t in c.proto.spec for t in ("new query q_t", "K cache", "V cache")))

    assert q_k_v_in_columns(open_page("pages/generation.py")) == 3
    assert q_k_v_in_columns(open_page("pages/generation.py", {"d_model": "64", "heads": "2", "d_k": "32",
                                                              "d_v": "32"})) == 0


def test_the_positional_encoding_rows_are_named_by_the_position_in_the_formula():
    """Row p of the sinusoidal table holds PE(p): the first row is p = 0 (sin 0 = 0, cos 0 = 1)."""
    pe = chart(open_page("pages/positions.py"), "PE for positions")
    first = pe.data[pe.data.row_index == 0]
    assert set(first["position"]) == {"p = 0"}
    assert first.sort_values("col_index")["value"].tolist()[:2] == [0.0, 1.0]
    assert set(pe.data[pe.data.row_index == 1]["position"]) == {"p = 1"}


def _colour_legends(spec: dict) -> list:
    """The colour bars a heatmap spec draws (a colour encoding with a scale whose legend is not switched off)."""
    return [layer["encoding"]["color"].get("legend", {}) for layer in spec.get("layer", [spec])
            if "scale" in layer.get("encoding", {}).get("color", {})
            and layer["encoding"]["color"].get("legend", {}) is not None]


def test_q_k_and_v_share_one_colour_bar_and_one_cell_size_on_the_page():
    """Side by side in a third of the column each, Q, K and V printed their numbers at about 8 px; with one colour
    bar (beside V: the three share its scale) and one cell size that fills the row, they are larger."""
    at = go_to_stage(open_page("pages/step_through.py"), "qkv")
    q, k, v = (chart(at, f"{name} — head 1") for name in "QKV")
    assert [len(_colour_legends(c.spec)) for c in (q, k, v)] == [0, 0, 1]
    cells = {c.spec["width"] / len(c.labels("feature")) for c in (q, k, v)}
    assert len(cells) == 1 and cells.pop() >= 38, "one cell size, numbers at 10 px or more"
    domains = {json.dumps(layer["encoding"]["color"]["scale"]["domain"]) for c in (q, k, v)
               for layer in c.spec["layer"] if "scale" in layer["encoding"].get("color", {})}
    assert len(domains) == 1, "one colour scale for the three, so the one colour bar is true for each"



def _scales(spec) -> list:
    """Every scale of a (layered, concatenated) spec's y encodings, in order."""
    found = []
    if isinstance(spec, dict):
        y = spec.get("encoding", {}).get("y")
        if isinstance(y, dict) and "scale" in y:
            found.append(y["scale"])
        for value in spec.values():
            found += _scales(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _scales(value)
    return found


def test_a_fully_blocked_row_at_the_softmax_says_why_it_has_no_bars():
    """With every key of the followed row blocked, the "scaled scores" bars had one axis tick, "0.000000", and
    the words spoke of comparing scores that were not there."""
    grid = tuple(tuple(i != 0 for _ in range(7)) for i in range(7))  # the first token's row fully blocked
    at = open_page("pages/step_through.py", {"mask": "custom"})
    at.session_state["custom_grid"] = grid
    at = go_to_stage(at, "softmax")
    assert any("Every key of this row is blocked" in m for m in texts(at, "markdown"))
    bars = chart(at, "scaled scores")
    assert {"domain": [-1.0, 1.0]} in _scales(bars.spec), _scales(bars.spec)
    at.selectbox(key="token").set_value(at.selectbox(key="token").options[1]).run()
    assert not any("Every key of this row is blocked" in m for m in texts(at, "markdown"))
    assert {"domain": [-1.0, 1.0]} not in _scales(chart(at, "scaled scores").spec), "a row with scores: own axis"


def test_stage_5_grid_has_no_legend_so_its_rows_stay_level_with_the_scores():
    """With 13 tokens the grid and its legend were wider than half the row: the browser shrank it (rows of 21 px
    beside the scores' 23). Its title says what ✓ means."""
    sentence = " ".join("abcdefghijklm")
    at = go_to_stage(open_page("pages/step_through.py", {"mask": "causal", "sentence": sentence}), "masked")
    grid, scores = chart(at, "mask (✓ may attend)"), chart(at, "scores, −∞ where blocked")
    fields = [layer["encoding"]["color"] for layer in grid.spec["layer"]
              if "field" in layer.get("encoding", {}).get("color", {})]
    assert fields and all(colour.get("legend", "drawn") is None for colour in fields), fields
    assert grid.spec["height"] == scores.spec["height"], "one cell size for the two"


def test_the_overview_says_which_head_its_chart_shows():
    at = open_page("pages/overview.py", {"heads": "2", "head": "2"})
    assert chart(at, "attention weights (head 2)")
    assert any("this is head 2 of 2" in c for c in texts(at, "caption")), texts(at, "caption")


def test_what_it_costs_runs_to_its_end_before_anything_is_measured():
    """The page stopped at "Nothing measured yet": its takeaway, and the link to the next page on the path that
    follows a page's end, were left out until the student pressed Measure."""
    at = open_page("pages/cost.py")
    assert any("Nothing measured yet" in i for i in texts(at, "info"))
    assert any(m.startswith("**Takeaway:**") for m in texts(at, "markdown"))


@pytest.mark.parametrize("page", ALL_PAGES)
def test_presenter_mode_never_sends_the_lecturer_to_a_sidebar(page):
    """Presenter mode hides the sidebar (its controls are under Settings at the top), yet Cross-attention, Why √d_k
    and Generation spoke of "the sidebar's sentence", "set in the sidebar" and "the sidebar picks the head"."""
    at = open_page(page, {"presenter": "true", "heads": "2"})
    helps = [str(getattr(w, "help", "") or "") for kind in ("slider", "selectbox", "toggle", "button")
             for w in at.get(kind)]
    said = [t for t in [*shown_text(at).split("\n"), *helps] if "sidebar" in t.lower()]
    assert not said, said


def test_order_and_position_names_the_first_token_at_p_0():
    at = open_page("pages/positions.py")
    assert any("(the first token, 1·The, sits at p = 0)" in c for c in texts(at, "caption")), texts(at, "caption")


def test_eight_heads_on_a_slide_have_cells_a_hall_can_see():
    """Eight heads' panels on a slide had 16-px cells (colour stamps from the back of a hall) beside an empty
    half of the screen: the page's words now follow the panels, which take their room (21 px at 7 tokens)."""
    at = open_page("pages/multi_head.py", {"presenter": "true", "heads": "8", "d_model": "32"})
    grid = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert grid["spec"]["width"] / 7 >= 20, grid["spec"]["width"]


@pytest.mark.parametrize("presenter", ["true", "false"])
def test_multi_heads_last_section_keeps_a_slides_words_short(presenter):
    """Multi-head's section 5 on a slide read six lines on the residual connection, the feed-forward network and
    layer normalisation, a screen of prose the step-through's slide of the same stage leaves to the lecturer."""
    from attention_ui.text import STAGES

    output = next(stage for stage in STAGES if stage.key == "output")
    words = [m.value for m in open_page("pages/multi_head.py", {"presenter": presenter}).markdown]
    assert any(w.startswith(output.words) for w in words), words
    assert any(output.more in w for w in words) == (presenter == "false"), words


def test_a_wide_concat_shows_the_first_columns_of_every_head():
    """A concat wider than the charts show (a real model's 12 heads × 32 columns) showed its first 32 columns, all of
    head 1's: no concatenation to be seen. It shows the first few of every head's columns, head by head, with their
    true names and numbers."""
    from attention_core import LessonConfig, run_lesson

    at = open_page("pages/step_through.py", {"step": "concat", "heads": "8", "d_k": "8", "d_v": "8"})
    drawn = chart(at, "Concat")
    assert "the first 4 of each head's 8 columns" in drawn.title, drawn.title
    first_row = drawn.data[drawn.data["row_index"] == 0].sort_values("col_index")
    assert list(first_row["feature"]) == [f"h{h}·c{c}" for h in range(1, 9) for c in range(1, 5)]
    concat = run_lesson(LessonConfig(num_heads=8, d_k=8, d_v=8)).trace.concat[0]  # (h·d_v,)
    expected = [float(concat[h * 8 + c]) for h in range(8) for c in range(4)]  # h2·c1 is column 9
    assert list(first_row["value"]) == pytest.approx(expected, abs=1e-6)
    assert any("the first 4 of each head's 8 columns (32 of 64), head by head" in c for c in texts(at, "caption"))
    small = chart(open_page("pages/step_through.py", {"step": "concat"}), "Concat")
    assert small.title == "Concat(head_1 … head_h)", "a concat that fits is drawn whole"


@pytest.mark.parametrize("page", ["pages/step_through.py", "pages/multi_head.py", "pages/masking.py"])
def test_a_screen_reader_names_every_chart_by_its_title(page):
    """Every chart was read as "Vega visualization" (Vega's name for a chart without a description), whatever it
    showed: a chart's description, its SVG's aria-label, now says its title."""
    drawn = charts(open_page(page))
    assert drawn, page
    for chart_ in drawn:
        said = chart_.spec.get("description", "")
        assert said == f"Chart: {chart_.title}" if chart_.title else said.startswith("Chart: each head's"), said


def test_overview_draws_a_long_sentence_across_the_width():
    """A 27-token sentence's chart was squeezed into half the column: rows 8 px tall, labels running together."""
    words = ("the old lighthouse keeper watched the grey storm roll over the quiet harbour while small boats pulled "
             "at their ropes and gulls cried above the dark water").split()
    for count, least_cell in ((7, 25), (27, 18)):
        at = open_page("pages/overview.py", {"sentence": " ".join(words[:count])})
        cell = json.loads(at.get("vega_lite_chart")[0].proto.spec)["width"] / count
        assert cell >= least_cell, (count, cell)
    slide = open_page("pages/overview.py", {"sentence": " ".join(words[:18]), "presenter": "true"})
    height = json.loads(slide.get("vega_lite_chart")[0].proto.spec)["height"]
    assert height <= 540, f"a slide's 18 rows are {height} px: taller than a screen"


def _text_layers(node) -> int:
    """How many layers of a spec print text (a heatmap's numbers)."""
    if isinstance(node, dict):
        mark = node.get("mark")
        own = int(mark == "text" or isinstance(mark, dict) and mark.get("type") == "text")
        return own + sum(_text_layers(value) for key, value in node.items() if key != "datasets")
    if isinstance(node, list):
        return sum(_text_layers(value) for value in node)
    return 0


@pytest.mark.parametrize("presenter, heads, printed", [("true", "2", True), ("false", "2", True),
                                                       ("true", "8", False), ("false", "8", False)])
def test_multi_head_panels_print_their_weights_when_the_cells_hold_them(presenter, heads, printed):
    """Two heads' panels on a slide have 51-px cells: their weights are printed (they were colours only); eight
    heads' small panels stay colours only (their numbers are in the tooltips and the stages below)."""
    at = open_page("pages/multi_head.py", {"presenter": presenter, "heads": heads})
    (grid,) = [c for c in charts(at) if {"head_index", "query", "key"} <= set(c.data.columns)]
    assert (_text_layers(grid.spec) > 0) == printed, grid.spec.get("spec", grid.spec)


@pytest.mark.parametrize("presenter, heads, printed", [("true", "2", True), ("false", "2", True),
                                                       ("false", "8", False)])
def test_modern_attentions_head_panels_print_their_weights_as_multi_heads_do(presenter, heads, printed):
    """Shared keys and windows drew its grouped heads' panels in colours only, in cells as large as those Multi-head's
    panels print their weights in."""
    at = open_page("pages/modern_attention.py", {"presenter": presenter, "heads": heads})
    (grid,) = [c for c in charts(at) if {"head_index", "query", "key"} <= set(c.data.columns)]
    assert (_text_layers(grid.spec) > 0) == printed, grid.spec.get("spec", grid.spec)


def test_the_sidebar_shows_every_limit_the_seed_too():
    """A seed of −5 left a red box and the old charts, its range only in a tooltip on hover: the range is in the
    seed's help and with the other limits under the sidebar."""
    from attention_core import MAX_D_K, MAX_HEADS, MAX_SEED, MAX_TOKENS

    at = open_page("pages/step_through.py")
    limits = next(c.value for c in at.sidebar.caption if c.value.startswith("Limits:"))
    for shown in (f"{MAX_TOKENS} tokens", f"d_k ≤ {MAX_D_K}", f"{MAX_HEADS} heads", f"seed 0 to {MAX_SEED:,}"):
        assert shown in limits, (shown, limits)
    assert f"0 to {MAX_SEED:,}" in at.number_input(key="seed").help


def test_cross_attention_says_its_s_is_the_number_of_keys_not_the_score_matrix():
    """Step through names the score matrix S = QKᵀ; Cross-attention's T × S counts the source's tokens. A student met
    both without a word on which is which."""
    at = open_page("pages/cross_attention.py")
    intro = " ".join(m.value for m in at.markdown)
    assert "S counts the source's tokens" in intro and "not the score matrix S = QKᵀ" in intro, intro


def test_cross_attention_says_its_untrained_weights_pair_no_word_with_its_translation():
    """The default source is the example's translation, and "cat" put its second-smallest weight on "chat": with no
    word on the weights being random, a student took it for a misunderstanding of cross-attention."""
    at = open_page("pages/cross_attention.py")
    notes = [i.value for i in at.info if "An untrained layer" in i.value]
    assert len(notes) == 1 and "“cat” need not look at “chat”" in notes[0], [i.value for i in at.info]
    at = open_page("pages/cross_attention.py", {"init": "identity"})
    assert not [i for i in at.info if "An untrained layer" in i.value], "Q = K = V = X: no random weights to warn of"


def test_per_row_colours_say_how_far_apart_the_outlined_rows_weights_are():
    """Under "Colour: row" a row of 0.080 and 0.104 spans the whole colour scale, and a student read it as a strong
    preference: the page says the outlined row's real spread, and when it is small, how to see it at its size."""
    def notes(query: dict) -> list[str]:
        at = open_page("pages/step_through.py", query)
        return [c.value for c in at.caption if c.value.startswith("Colour per row")]

    near_even = notes({"step": "softmax", "colour": "row", "sentence": "cat cat cat cat dog"})
    assert len(near_even) == 1 and "a spread of 0.041" in near_even[0] and "“fixed”" in near_even[0], near_even
    spread = notes({"step": "context", "colour": "row"})
    assert len(spread) == 1 and "(the colour bar's 0) to" in spread[0] and "“fixed”" not in spread[0], spread
    assert not notes({"step": "softmax"}) and not notes({"step": "scores", "colour": "row"})
