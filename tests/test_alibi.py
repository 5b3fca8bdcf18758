"""ALiBi (attention_core.positions): the paper's slopes, the distance penalty, and attention with it agreeing with
PyTorch's fused kernel given the same penalty as an additive mask."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import AttentionInputError, alibi_attention, alibi_bias, alibi_slopes, attend


def test_the_papers_slopes():
    """Press et al. (2022): 8 heads start at 2^−1 and halve; a count that is no power of two takes the power of two
    below, then every other slope of twice that."""
    assert alibi_slopes(8).tolist() == [2.0 ** -i for i in range(1, 9)]
    assert alibi_slopes(2).tolist() == [2.0 ** -4, 2.0 ** -8]
    assert alibi_slopes(1).tolist() == [2.0 ** -8]
    assert alibi_slopes(6).tolist() == [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8, 2.0 ** -1, 2.0 ** -3]


def test_the_bias_is_minus_the_slope_times_the_distance():
    bias = alibi_bias(4, [0.5, 0.25])
    assert bias.shape == (2, 4, 4)
    assert bias[0, 3].tolist() == [-1.5, -1.0, -0.5, 0.0]
    assert bias[1, 0].tolist() == [0.0, -0.25, -0.5, -0.75]
    assert alibi_bias(3, 1.0).shape == (1, 3, 3)


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_attention_is_the_fused_kernel_with_the_penalty_as_a_float_mask(causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(4, 6, 8, dtype=torch.float64) for _ in range(3))
    slopes = alibi_slopes(4)
    mask = torch.ones(6, 6, dtype=torch.bool).tril() if causal else None
    context, weights = alibi_attention(q, k, v, slopes, mask)
    bias = alibi_bias(6, slopes, dtype=torch.float64)
    if causal:
        bias = bias.masked_fill(~mask, float("-inf"))
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    torch.testing.assert_close(weights.sum(-1), torch.ones(4, 6, dtype=torch.float64))


def test_a_slope_of_zero_is_plain_attention_and_a_steeper_one_looks_closer():
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, 7, 4) for _ in range(3))
    plain_context, plain_weights = attend(q, k, v)
    torch.testing.assert_close(alibi_attention(q, k, v, 0.0)[1], plain_weights)
    near = [alibi_attention(q, k, v, slope)[1][0, 3, 2:5].sum().item() for slope in (0.0, 0.5, 2.0)]
    assert near[0] < near[1] < near[2], "the weight on the query and its neighbours grows with the slope"


def test_a_fully_blocked_row_gets_zero_weights():
    q = k = v = torch.randn(1, 3, 2)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    _, weights = alibi_attention(q, k, v, 0.5, mask)
    assert weights[0, 1].tolist() == [0.0, 0.0, 0.0] and not torch.isnan(weights).any()


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_a_head_count_that_is_no_whole_number_is_refused(bad):
    with pytest.raises(AttentionInputError):
        alibi_slopes(bad)


def test_cross_attention_shapes_are_refused():
    with pytest.raises(AttentionInputError, match="self-attention"):
        alibi_attention(torch.randn(1, 3, 2), torch.randn(1, 4, 2), torch.randn(1, 4, 2), 0.5)


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 16), length=st.integers(1, 9), shift=st.integers(0, 50))
def test_the_penalty_depends_on_distance_only(heads, length, shift):
    """Like RoPE's scores, the penalty of a pair depends on how far apart the tokens are: the last `length` rows and
    columns of a longer sequence's bias are the shorter one's."""
    slopes = alibi_slopes(heads)
    assert len(slopes) == heads and (slopes > 0).all() and (slopes < 1).all()
    torch.testing.assert_close(alibi_bias(length + shift, slopes)[:, shift:, shift:], alibi_bias(length, slopes))


# ------------------------------------------------------------------------------- Order and position, section 4

import math  # noqa: E402

from apptest_support import chart_data, open_page  # noqa: E402
from attention_core import LessonConfig, run_lesson  # noqa: E402

PAGE = "pages/positions.py"


def shown_weights(at, title_part: str) -> torch.Tensor:
    frame = chart_data(at, title_part)
    rows = frame.pivot(index="row_index", columns="col_index", values="value").fillna(0.0)
    return torch.tensor(rows.values, dtype=torch.float64)


@pytest.mark.parametrize("head, slope", [(1, "1/16"), (2, "1/256")])
def test_the_slope_starts_at_the_papers_for_the_followed_head(head, slope):
    """Two heads get the paper's 2^−4 and 2^−8."""
    at = open_page(PAGE, {"heads": "2", "head": str(head)})
    assert not at.exception
    assert at.select_slider(key="pos_alibi").value == int(slope.split("/")[1])
    assert "the slopes 1/16, 1/256" in at.select_slider(key="pos_alibi").help


def test_the_alibi_chart_is_softmax_of_the_scaled_scores_minus_the_distance_penalty():
    at = open_page(PAGE, {"pos_alibi": "1/2", "mask": "causal"})
    assert not at.exception, [e.value for e in at.exception]
    trace = run_lesson(LessonConfig(mask="causal")).trace
    T = trace.q.shape[1]
    distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs().double()
    expected = torch.softmax((trace.scaled[0].double() - 0.5 * distance).masked_fill(~trace.mask[0], -math.inf), -1)
    torch.testing.assert_close(shown_weights(at, "with ALiBi, m = 1/2"), expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(shown_weights(at, "weights without ALiBi"), trace.weights[0].double(), atol=1e-6,
                               rtol=0)
    said = " ".join(c.value for c in at.caption)
    assert "0.5 for a neighbour, 3 for tokens 6 apart" in said and "e^−3 = 0.0498" in said, said


def test_the_slope_is_kept_in_the_link_and_why_alibi_exists_is_asked():
    at = open_page(PAGE, {"token": "4"})
    at.select_slider(key="pos_alibi").set_value(4).run()
    assert at.query_params["pos_alibi"] in (["1/4"], "1/4")
    assert "0.25 for a neighbour" in " ".join(c.value for c in at.caption)
    at.session_state["open_check_order-and-position"] = True
    at.run()
    asked = [w for w in at.radio if w.key.startswith("cy-order-and-position-alibi-longer-")]
    assert len(asked) == 1
    asked[0].set_value(next(o for o in asked[0].options if o.startswith("ALiBi learns nothing per position")))
    at.button(key=f"FormSubmitter:cy-form-{asked[0].key[3:]}-Check").click().run()
    assert any(s.value.startswith("Right") for s in at.success)


def test_the_slope_follows_the_head_picked_afterwards():
    """With 8 heads, picking head 6 left the slider at head 1's 1/2 while its help said head 6's was 1/64."""
    at = open_page(PAGE, {"heads": "8"})
    assert at.select_slider(key="pos_alibi").value == 2
    at.selectbox(key="head").set_value(6).run()
    assert at.select_slider(key="pos_alibi").value == 64
    assert "head 6's is 1/64" in at.select_slider(key="pos_alibi").help


def test_a_one_token_sentence_has_no_distance_to_penalise():
    at = open_page(PAGE, {"sentence": "Hi"})
    assert not at.exception, [e.value for e in at.exception]
    assert any("With one token there is no distance" in c.value for c in at.caption)


def test_the_two_grids_sit_side_by_side_and_a_gentle_slope_says_how_little_it_changes():
    at = open_page(PAGE)
    charts = [c for c in at.get("vega_lite_chart") if "ALiBi" in c.proto.spec]
    assert len(charts) == 2
    said = " ".join(c.value for c in at.caption)
    assert "Slide m to the right, up to 1/2 or 1" in said and "pick “causal”" in said, said
    at = open_page(PAGE, {"pos_alibi": "1", "mask": "causal"})
    said = " ".join(c.value for c in at.caption)
    assert "Slide m to the right" not in said and "pick “causal”" not in said, said


def test_the_takeaway_names_alibi_and_the_formula_counts_heads_as_the_sidebar_does():
    at = open_page(PAGE)
    assert any("ALiBi" in m.value for m in at.markdown if m.value.startswith("**Takeaway:**"))
    assert any(r"m_k = 2^{-8k/h}" in x.value for x in at.latex)
