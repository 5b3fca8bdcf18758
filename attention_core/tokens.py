"""The offline default: a word/punctuation tokenizer and seeded embeddings.

No model is needed: every token gets a vector drawn from N(0, 1) by a generator seeded
from (seed, lower-cased token), so the same word always has the same vector, on any
machine, and changing one word leaves the other rows of X unchanged.
"""

from __future__ import annotations

import hashlib
import re

import torch

from .limits import MAX_SENTENCE_CHARS, MAX_TOKENS

PAD_TOKEN = "[PAD]"

_TOKEN = re.compile(
    r"\w+(?:['’]\w+)*"  # words, with inner apostrophes: don't, it's
    r"|[^\w\s][\ufe0e\ufe0f\U0001F3FB-\U0001F3FF]*"  # one symbol or emoji (with its modifiers)
    r"(?:\u200d[^\w\s][\ufe0e\ufe0f\U0001F3FB-\U0001F3FF]*)*"  # joined emoji: 👨‍👩‍👧
)


def tokenize(sentence: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Split a sentence into word and punctuation tokens, case kept.

    >>> tokenize("The cat sat.")
    ['The', 'cat', 'sat', '.']

    Raises ``ValueError`` for a non-string, an empty/blank sentence, or more than
    ``max_tokens`` tokens (the message gives the count and the limit).
    """
    if not isinstance(sentence, str):
        raise ValueError(f"The sentence must be text, got {type(sentence).__name__}.")
    if len(sentence) > MAX_SENTENCE_CHARS:
        raise ValueError(
            f"The sentence is {len(sentence):,} characters long; the limit is {MAX_SENTENCE_CHARS:,}. "
            f"Use a shorter sentence (at most {max_tokens} tokens)."
        )
    tokens = _TOKEN.findall(sentence)
    if not tokens:
        raise ValueError("The sentence is empty: type a few words, e.g. “The cat sat on the mat.”")
    if len(tokens) > max_tokens:
        raise ValueError(
            f"The sentence has {len(tokens)} tokens; the limit is {max_tokens}. "
            "Shorten it so every chart stays readable."
        )
    return tokens


def token_seed(token: str, seed: int) -> int:
    """A stable 63-bit seed for one token (same on every machine and Python run)."""
    digest = hashlib.sha256(f"{seed}\x1f{token.lower()}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def embed_tokens(tokens: list[str], d_model: int, seed: int = 0, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """Seeded embeddings X (T, d_model): row t ~ N(0, I), keyed by (seed, lower-cased token).

    The padding token ``[PAD]`` gets a zero vector, as padding carries no content.
    """
    if d_model < 1:
        raise ValueError(f"d_model must be at least 1, got {d_model}.")
    if not tokens:
        raise ValueError("There are no tokens to embed.")
    rows = []
    for token in tokens:
        if token == PAD_TOKEN:
            rows.append(torch.zeros(d_model, dtype=torch.float64))
            continue
        generator = torch.Generator().manual_seed(token_seed(token, seed))
        rows.append(torch.randn(d_model, generator=generator, dtype=torch.float64))
    return torch.stack(rows).to(dtype=dtype, device=device)  # (T, d_model)
