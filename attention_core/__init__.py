"""attention_core: the math of scaled dot-product and multi-head attention, in pure torch.

    context, weights = attend(q, k, v, mask=None)
    trace = trace_attention(x, w_q, w_k, w_v, num_heads=2, mask="causal")

No streamlit or altair here: the core computes, the UI draws.
"""

from .errors import AttentionInputError
from .attention import AttentionTrace, apply_mask, attend, masked_softmax, trace_attention
from .by_hand import (ANSWER_TOLERANCE, EXAMPLE, HAND_STAGES, AnswerCheck, CellProblem, Diagnosis, GridReading,
                      HandExample, Slip, check_answer, diagnose, format_cell, hand_trace, likely_slips, read_grid,
                      read_number, resize_grid, stage_truth)
from .explain import LinearTerms, RowArithmetic, linear_terms, row_arithmetic
from .device import DEVICE_CHOICES, available_devices, resolve_device
from .lesson import Lesson, LessonConfig, build_mask, check_config, lesson_tokens, run_lesson
from .limits import (MAX_CELL_MAGNITUDE, MAX_CONTEXT_LENGTH, MAX_COST_LENGTH, MAX_COST_SECONDS, MAX_COST_WIDTH,
                     MAX_D_K, MAX_D_MODEL, MAX_D_V, MAX_HAND_TOKENS, MAX_HAND_WIDTH, MAX_HEADS, MAX_LAYERS,
                     MAX_POSITION, MAX_REAL_MODEL_TOKENS, MAX_SCALING_D_K, MAX_SCALING_KEYS, MAX_SCALING_SAMPLES,
                     MAX_SEED, MAX_SENTENCE_CHARS, MAX_TOKENS, MAX_WINDOW, MIN_COST_LENGTH)
from .masks import MASK_KINDS, causal_mask, custom_mask, fully_masked_rows, padding_mask, padding_mask_batch
from .masks import sliding_window_mask
from .modern import (PUBLISHED_SHAPES, CacheCheck, KVCache, ModelShape, StepTiming, check_cache, compare_kv_sharing,
                     decode_step, decode_with_kv_cache, divisors, grouped_kwargs, kv_cache_table, reach_span,
                     sliding_window_reach, time_generation_step)
from .summaries import (HeadStats, ValueContributions, attention_rollout, head_roles, head_stats, mean_over_heads,
                        sink_shares, sink_shares_of, value_contributions, value_norms)
from .real_models import (MODEL_ALLOWLIST, MODEL_DIR_ENV, LoadedModel, ModelLoadError, ModelRun, ModelSpec,
                          Reproduction, SourceAttempt, hub_offline, layer_input, layer_projections, load_model,
                          model_value_norms, query_scale, reproduce_layer, run_model, word_embeddings)
from .tokens import PAD_TOKEN, embed_tokens, tokenize
from .weights import INIT_KINDS, Projections, identity_projections, projections_from_tensors, random_projections
from .positions import (EquivarianceCheck, RopeShiftCheck, alibi_attention, alibi_bias, alibi_slopes, apply_rope,
                        equivariance_check, rope_shift_check, shuffled_order, sinusoidal_positions)
from .scaling import (SoftmaxStats, VarianceSample,
                      dot_product_variance, row_entropy, softmax_jacobian_norm, softmax_saturation, unscaled_weights)
from .cross import CrossLesson, cross_attention, source_tokens
from .tiles import TiledAttention, tiled_attention
from .cost import (LAYER_KINDS, SLOPE_FROM_LENGTH, cost_lengths, fit_loglog_slope, fitted_slope, operation_counts,
                   time_layer, weights_bytes)

__all__ = [
    "AttentionInputError",
    "AttentionTrace", "apply_mask", "attend", "masked_softmax", "trace_attention",
    "TiledAttention", "tiled_attention",
    "ANSWER_TOLERANCE", "EXAMPLE", "HAND_STAGES", "MAX_CELL_MAGNITUDE", "MAX_HAND_TOKENS", "MAX_HAND_WIDTH",
    "AnswerCheck", "CellProblem", "Diagnosis", "GridReading", "HandExample", "Slip", "check_answer", "diagnose",
    "format_cell", "hand_trace", "likely_slips", "read_grid", "read_number", "resize_grid", "stage_truth",
    "LinearTerms", "RowArithmetic", "linear_terms", "row_arithmetic",
    "DEVICE_CHOICES", "available_devices", "resolve_device",
    "Lesson", "LessonConfig", "build_mask", "check_config", "lesson_tokens", "run_lesson",
    "MAX_D_K", "MAX_D_MODEL", "MAX_D_V", "MAX_HEADS", "MAX_REAL_MODEL_TOKENS", "MAX_SEED",
    "MAX_SENTENCE_CHARS", "MAX_TOKENS",
    "MASK_KINDS", "causal_mask", "custom_mask", "fully_masked_rows", "padding_mask", "padding_mask_batch",
    "MODEL_ALLOWLIST", "MODEL_DIR_ENV", "LoadedModel", "ModelLoadError", "ModelRun", "ModelSpec", "Reproduction",
    "SourceAttempt", "hub_offline", "layer_input", "layer_projections", "load_model", "query_scale",
    "reproduce_layer", "run_model", "word_embeddings",
    "PAD_TOKEN", "embed_tokens", "tokenize",
    "INIT_KINDS", "Projections", "identity_projections", "projections_from_tensors", "random_projections",
    "sliding_window_mask", "MAX_CONTEXT_LENGTH", "MAX_LAYERS", "MAX_WINDOW", "PUBLISHED_SHAPES", "CacheCheck",
    "KVCache", "ModelShape", "StepTiming", "check_cache", "compare_kv_sharing", "decode_step",
    "decode_with_kv_cache", "divisors", "grouped_kwargs", "kv_cache_table", "reach_span", "sliding_window_reach",
    "time_generation_step",
    "HeadStats", "attention_rollout", "head_roles", "head_stats", "mean_over_heads",
    "ValueContributions", "sink_shares", "sink_shares_of", "value_contributions", "value_norms", "model_value_norms",
    "MAX_POSITION", "EquivarianceCheck", "RopeShiftCheck", "alibi_attention", "alibi_bias", "alibi_slopes",
    "apply_rope", "equivariance_check", "rope_shift_check",
    "shuffled_order", "sinusoidal_positions",
    "MAX_SCALING_D_K", "MAX_SCALING_KEYS", "MAX_SCALING_SAMPLES", "SoftmaxStats", "VarianceSample",
    "dot_product_variance", "row_entropy", "softmax_jacobian_norm", "softmax_saturation", "unscaled_weights",
    "CrossLesson", "cross_attention", "source_tokens",
    "LAYER_KINDS", "MAX_COST_LENGTH", "MAX_COST_SECONDS", "MAX_COST_WIDTH", "MIN_COST_LENGTH", "SLOPE_FROM_LENGTH",
    "cost_lengths", "fit_loglog_slope", "fitted_slope", "operation_counts", "time_layer", "weights_bytes",
]
