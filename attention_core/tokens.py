"""The offline default: a word/punctuation tokenizer and seeded embeddings.

No model is needed: every token gets a vector drawn from N(0, 1) by a generator seeded
from (seed, lower-cased token), so the same word always has the same vector, on any
machine, and changing one word leaves the other rows of X unchanged.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import unicodedata

import torch

from .errors import AttentionInputError
from .limits import MAX_SENTENCE_CHARS, MAX_TOKENS

PAD_TOKEN = "[PAD]"


def _character_classes() -> tuple[str, str]:
    """Character-class bodies for every combining mark (Unicode category M*) and every invisible control or format
    character (Cc, Cf) but the zero-width joiner. Marks: the vowel signs of Devanagari, Arabic harakat, Hebrew
    niqqud, U+0301 and the emoji variation selectors; Python's ``\\w`` does not match them, so without this a word
    like "नमस्ते" would fall apart into letters and stray marks. Invisible: NUL, a zero-width space, a direction
    override, which would each be a token with an empty label. Both only exist below U+20000 and in the plane from
    U+E0000, so only those are scanned."""
    code_points = (*range(0x20000), *range(0xE0000, 0xE1000))
    categories = list(zip(code_points, map(unicodedata.category, map(chr, code_points))))  # map over C functions:
    # a Python loop here took 0.2 s of every server start
    marks = [cp for cp, category in categories if category[0] == "M"]
    invisible = [cp for cp, category in categories if category in ("Cc", "Cf") and cp != 0x200D]
    return _ranges(marks), _ranges(invisible)


def _ranges(code_points: list[int]) -> str:
    """A character-class body matching ``code_points`` (sorted): consecutive ones as one range."""
    runs = (list(group) for _, group in itertools.groupby(enumerate(code_points), lambda pair: pair[1] - pair[0]))
    ends = [(run[0][1], run[-1][1]) for run in runs]
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ends)


_MARK, _INVISIBLE = _character_classes()
# Chinese and Japanese write no spaces between words: each ideograph or kana is a token of its own.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_WORD = rf"(?:(?![{_CJK}])\w)(?:(?![{_CJK}])[\w{_MARK}])*"  # letters/digits with their combining marks
_EMOJI_TAIL = rf"[{_MARK}\U0001F3FB-\U0001F3FF]*"  # variation selectors, keycap, skin tones
_TOKEN = re.compile(
    rf"[{_CJK}]"  # one Chinese character or kana: 猫, 坐
    rf"|{_WORD}(?:['’]{_WORD})*"  # words, with inner apostrophes: don't, it's, नमस्ते
    r"|[\U0001F1E6-\U0001F1FF]{2}"  # a flag: two regional indicators, 🇫🇷
    rf"|(?![{_INVISIBLE}])[^\w\s]{_EMOJI_TAIL}"  # one symbol or emoji (with its modifiers), never an invisible one
    rf"(?:\u200d[^\w\s]{_EMOJI_TAIL})*"  # joined emoji: 👨‍👩‍👧
)


def tokenize(sentence: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Split a sentence into word and punctuation tokens, case kept.

    >>> tokenize("The cat sat.")
    ['The', 'cat', 'sat', '.']

    Raises ``ValueError`` for a non-string, an empty/blank sentence, or more than
    ``max_tokens`` tokens (the message gives the count and the limit).
    """
    if not isinstance(sentence, str):
        raise AttentionInputError(f"The sentence must be text, got {type(sentence).__name__}.")
    if len(sentence) > MAX_SENTENCE_CHARS:
        raise AttentionInputError(
            f"The sentence is {len(sentence):,} characters long; the limit is {MAX_SENTENCE_CHARS:,}. "
            f"Use a shorter sentence (at most {max_tokens} tokens)."
        )
    tokens = _TOKEN.findall(sentence)
    if not tokens:
        raise AttentionInputError("The sentence is empty: type a few words, e.g. “The cat sat on the mat.”")
    if len(tokens) > max_tokens:
        raise AttentionInputError(
            f"The sentence has {len(tokens)} tokens; the limit is {max_tokens}. "
            "Shorten it so every chart stays readable."
        )
    return tokens


def first_tokens(sentence: str, max_tokens: int = MAX_TOKENS) -> str:
    """The sentence cut after its ``max_tokens``-th token, with what stood before it kept as typed; the whole
    sentence when it has no more tokens than that. What a sentence over the limit can become.

    >>> first_tokens("The cat sat on the mat.", 3)
    'The cat sat'
    """
    ends = [match.end() for match in itertools.islice(_TOKEN.finditer(sentence), max_tokens + 1)]
    return sentence[:ends[max_tokens - 1]] if len(ends) > max_tokens else sentence


def token_seed(token: str, seed: int) -> int:
    """A stable 63-bit seed for one token (same on every machine and Python run)."""
    digest = hashlib.sha256(f"{seed}\x1f{token.lower()}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def embed_tokens(tokens: list[str], d_model: int, seed: int = 0, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """Seeded embeddings X (T, d_model): row t ~ N(0, I), keyed by (seed, lower-cased token).

    The padding token ``[PAD]`` gets a zero vector, as padding carries no content.
    """
    if d_model < 1:
        raise AttentionInputError(f"d_model must be at least 1, got {d_model}.")
    if not tokens:
        raise AttentionInputError("There are no tokens to embed.")
    rows = []
    for token in tokens:
        if token == PAD_TOKEN:
            rows.append(torch.zeros(d_model, dtype=torch.float64))
            continue
        generator = torch.Generator().manual_seed(token_seed(token, seed))
        rows.append(torch.randn(d_model, generator=generator, dtype=torch.float64))
    return torch.stack(rows).to(dtype=dtype, device=device)  # (T, d_model)
