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
