"""Named limits for everything a person can set. The UI shows these numbers."""

MAX_TOKENS = 32
"""Longest sentence (in tokens) the toy lesson accepts; charts stay readable up to here."""

MAX_SENTENCE_CHARS = 2000
"""Longest sentence (in characters) accepted before tokenizing."""

MAX_D_MODEL = 64
"""Largest embedding width d_model."""

MAX_D_K = 64
"""Largest query/key width per head, d_k."""

MAX_D_V = 64
"""Largest value width per head, d_v."""

MAX_HEADS = 8
"""Most attention heads."""

MAX_SEED = 2**31 - 1
"""Largest seed accepted."""

MAX_REAL_MODEL_TOKENS = 40
"""Longest input (in real-tokenizer pieces, special tokens included) sent to a real model."""


# Why √d_k

MAX_SCALING_D_K = 512
"""Largest d_k in the scaling experiments."""

MAX_SCALING_KEYS = 64
"""Most keys per softmax row in the scaling experiments."""

MAX_SCALING_SAMPLES = 2000
"""Most random samples per d_k in the scaling experiments."""


# What it costs

MAX_COST_LENGTH = 4096
"""Longest sequence the cost page times (its T × T float32 weights take 64 MiB)."""

MIN_COST_LENGTH = 32
"""Shortest sequence the cost page times."""

MAX_COST_WIDTH = 256
"""Widest d (d_k = d_v = the recurrent layer's hidden size) the cost page times."""

MAX_COST_SECONDS = 30.0
"""Time budget of one measurement run on the cost page; longer lengths are skipped beyond it."""


# Work it by hand

MAX_HAND_TOKENS = 5
"""Most tokens in the worked-by-hand example (each is a row someone computes with pen and paper)."""

MAX_HAND_WIDTH = 4
"""Widest d_model or d_k in the worked-by-hand example."""

MAX_CELL_MAGNITUDE = 1000.0
"""Largest |number| accepted in a typed cell: larger ones overflow e^(score) and teach nothing."""


# Modern attention

MAX_WINDOW = 32
"""Largest sliding window offered on the toy sentence (its longest sentence is 32 tokens)."""

MAX_LAYERS = 12
"""Most stacked layers drawn when showing how a window's reach grows with depth."""

MAX_CONTEXT_LENGTH = 1_048_576
"""Longest context (in tokens) the KV-cache memory table accepts."""


# Generation

MAX_NEW_TOKENS = 10
"""Most tokens the generation page lets a real model produce."""


# Order and position

MAX_POSITION = 100_000
"""Largest position (and shift) the lessons accept; angles stay exact in float64 far beyond it."""
