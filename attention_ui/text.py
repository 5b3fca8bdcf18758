"""Words and formulas for the lessons, and safe display of user text."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from attention_core import PAD_TOKEN

EXAMPLE_SENTENCES = (
    "The cat sat on the mat.",
    "The chicken crossed the road because it wanted to get to the other side.",
    "The keys to the cabinet are on the table.",
    "Time flies like an arrow.",
    "The animal didn't cross the street because it was too tired.",
    "Necesito un sobre para poder enviar mis documentos.",
)

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")


def plain(text: str) -> str:
    """Escape user text for st.markdown/st.caption so it shows literally (no markup, links or LaTeX)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def quoted(label: str) -> str:
    """A token's label for running markdown: escaped (``plain``), in curly quotes ("“3·sat”")."""
    return f"“{plain(label)}”"


@dataclass(frozen=True)
class Stage:
    key: str
    title: str
    latex: str
    words: str
    more: str = ""
    """Words a page adds after ``words`` and a slide leaves to the lecturer (a slide has no room for them)."""


QKV_MORE_START = "A head is an attention of its own, run side by side with the others. "


def real_qkv_more(d_model: int, heads: int, d_k: int) -> str:
    """Stage 2's last words for a real model's layer, whose d_k is the model's own."""
    return (f"{QKV_MORE_START}This model has d_k = d_model / h = {d_model} / {heads} = {d_k}, so that all its heads "
            "together are as wide as X.")


def identity_qkv_more(d_model: int, heads: int, d_k: int) -> str:
    """Stage 2's last words when the projections are “Q = K = V = X”: d_k follows d_model and h."""
    return (f"{QKV_MORE_START}With Projection weights “Q = K = V = X”, W_Q, W_K and W_V are the identity, so d_k = "
            f"d_model / h = {d_model} / {heads} = {d_k}: each head takes its own {d_k} of X's features as its query, "
            "key and value.")


STAGES = (
    Stage("embed", "1 · Tokens and embeddings X",
          r"X = (x_1, \dots, x_T)^\top \in \mathbb{R}^{T \times d_{model}},\quad \text{row } i = \text{token } i",
          "The sentence is split into tokens and each token becomes a row vector of d_model numbers. "
          "Here every word gets a fixed random vector (the same word always gets the same vector), "
          "so nothing yet says where a word stands in the sentence."),
    Stage("qkv", "2 · Queries, keys and values",
          r"Q = X W_Q,\quad K = X W_K,\quad V = X W_V",
          "Three weight matrices turn each token's vector into a query (what this token is looking for), "
          "a key (what it offers to others) and a value (what it passes on if chosen). "
          "Each head gets its own block of d_k columns, so W_Q and W_K have h·d_k columns.",
          QKV_MORE_START + "Real models usually pick d_k = d_model / h, so that all the heads together are as wide "
          "as X; here d_k is set on its own, so you can try other widths."),
    Stage("scores", "3 · Raw scores QKᵀ",
          r"S = Q K^\top,\qquad S_{ij} = q_i \cdot k_j = \sum_{m=1}^{d_k} q_{i,m}\, k_{j,m}",
          "Every query is compared with every key by a dot product. A large score means the key "
          "matches what the query looks for. Row i holds token i's scores for all tokens."),
    Stage("scaled", "4 · Scaling by √d_k",
          r"\tilde S = \frac{Q K^\top}{\sqrt{d_k}}",
          "A dot product adds up d_k products, so it grows with d_k (for random numbers its variance is d_k "
          "times one product's). "
          "Dividing by √d_k keeps the scores in a range where softmax is not yet saturated, "
          "so no single key takes all the weight just because vectors are long.",
          "(Softmax, stage 6, turns each row of scores into weights that add up to 1; the larger the scores, the "
          "more of the weight goes to the largest one: it saturates.)"),
    Stage("masked", "5 · Masking",
          r"\tilde S_{ij} \leftarrow -\infty \quad \text{where token } i \text{ may not attend to token } j",
          "A mask blocks some query–key pairs: a causal mask hides the future, a padding mask hides "
          "padding tokens. Blocked scores become −∞ so that softmax gives them exactly zero weight.",
          "A row whose every key is blocked has no weight to give: this app gives it all-zero weights."),
    Stage("softmax", "6 · Softmax: attention weights",
          r"A_{ij} = \mathrm{softmax}_j(\tilde S_{ij}) = \frac{e^{\tilde S_{ij}}}{\sum_{l} e^{\tilde S_{il}}}",
          "Softmax turns each row of scores into weights between 0 and 1 that add up to 1: how much of "
          "each token the query takes. A row that is fully blocked gets all-zero weights.",
          "That is this app's rule: softmax itself is undefined for such a row (0 / 0), and the rule keeps the "
          "numbers finite."),
    Stage("context", "7 · Context vectors: weighted average of values",
          r"C = A V,\qquad c_i = \sum_j A_{ij}\, v_j",
          "Each token's new vector is the weighted average of the value vectors it may attend to, "
          "using its row of attention weights (a fully blocked row gives a zero vector).",
          "A fused kernel gets the same c_i without ever holding the row of weights: it reads the keys a tile at a "
          "time with a running maximum and sum (What it costs, section 3, walks your followed token through it)."),
    Stage("concat", "8 · Concatenate the heads",
          r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) \in \mathbb{R}^{T \times h d_v}",
          "Each head produced its own context vectors from its own slice of Q, K and V. "
          "Their columns are placed side by side, head 1 first."),
    Stage("output", "9 · Output projection W_O",
          r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O",
          "A last weight matrix mixes the heads' results back into d_model numbers per token. That is where the "
          "attention itself ends: a real transformer layer then adds this output to X (the residual connection) and "
          "passes it through a feed-forward network before the next layer.",
          "\n\n- **The residual connection**: attention adds a change to each token's vector instead of replacing "
          "it.\n- **The feed-forward network**: a small two-layer network applied to each token on its own, usually "
          "about four times wider than d_model.\n- **Layer normalisation**: around both steps, each token's vector "
          "is shifted and rescaled to mean 0 and variance 1 (then a learned scale and shift; many newer models use "
          "RMSNorm, which only rescales), in one of two places: after each addition (post-LayerNorm: the "
          "original Transformer, BERT) or at each block's input (pre-LayerNorm: GPT-2 and most newer models)."),
)

STAGE_KEYS = tuple(s.key for s in STAGES)

LEARNING_PATH = (
    ("pages/overview.py", ("overview", "", "home"), "Overview",
     "What attention is in one sentence, the pipeline, and your sentence's weights at a glance."),
    ("pages/step_through.py", ("step-through",), "Step through",
     "The nine stages one at a time: words, formula, chart and the worked numbers of one token. "
     "Each stage ends with check-yourself questions."),
    ("pages/by_hand.py", ("by-hand",), "Work it by hand",
     "Compute scores, scaled scores, weights and context for a tiny example yourself; every cell is checked."),
    ("pages/multi_head.py", ("multi-head",), "Multi-head",
     "How heads split the projection columns, look at different things, and are joined by W_O."),
    ("pages/masking.py", ("masks",), "Masking",
     "No mask, causal, padding and your own grid, side by side with the weights they give."),
    ("pages/why_scaling.py", ("why-scaling",), "Why √d_k",
     "Why the scores are divided by √d_k: the spread of q·k grows with d_k and a saturated softmax stops learning."),
    ("pages/positions.py", ("order-and-position",), "Order and position",
     "Attention alone ignores word order; sinusoidal encodings, RoPE and ALiBi put it back."),
    ("pages/cross_attention.py", ("cross-attention",), "Cross-attention",
     "Queries from one sentence, keys and values from another, as a translator's decoder reads its source."),
    ("pages/cost.py", ("what-it-costs",), "What it costs",
     "Time (measured on this machine) and memory against the sequence length T."),
    ("pages/modern_attention.py", ("modern-attention",), "Shared keys and windows",
     "Today's attention: grouped-query and multi-query heads, the KV cache's memory, sliding windows."),
    ("pages/generation.py", ("generation",), "Generation",
     "Writing one token at a time: the KV cache grows by a row and the new query attends to all of it."),
    ("pages/real_model.py", ("real-model",), "Real model",
     "A small pretrained model reads your sentence: all its layers and heads."),
    ("pages/inside_real_head.py", ("inside-real-head",), "Inside a real head",
     "The same stages on a real layer's own weights, matching the model to about 1e-7."),
)
"""The Start here page's order through the lessons: (page file, its url paths, title, what it teaches). A page's
first url path is its own address (the Overview is also the app's default page, at "/")."""


def next_on_path(page: str) -> tuple[str, str, str] | None:
    """The page after ``page`` (a page file) on ``LEARNING_PATH``: (its file, its url path, its title), or None
    after the last page."""
    return _on_path(page, 1)


def previous_on_path(page: str) -> tuple[str, str, str] | None:
    """The page before ``page`` (a page file) on ``LEARNING_PATH``, as ``next_on_path``; None for the first page."""
    return _on_path(page, -1)


def _on_path(page: str, step: int) -> tuple[str, str, str] | None:
    files = [entry[0] for entry in LEARNING_PATH]
    at = files.index(page) + step
    if not 0 <= at < len(files):
        return None
    file, paths, title, _ = LEARNING_PATH[at]
    return file, paths[0], title


def path_file(url_path: str) -> str | None:
    """The page file on ``LEARNING_PATH`` served at ``url_path`` (any of its url paths), or None."""
    return next((file for file, paths, *_ in LEARNING_PATH if url_path in paths), None)


def path_title(url_path: str) -> str | None:
    """The title on ``LEARNING_PATH`` of the page served at ``url_path``, as ``path_file``; or None."""
    return next((title for _, paths, title, _ in LEARNING_PATH if url_path in paths), None)


QKV_WITH_BIASES = r"Q = X W_Q + b_Q,\quad K = X W_K + b_K,\quad V = X W_V + b_V"
QKV_BIASES_WORDS = "A real model also adds a learned bias vector (b_Q, b_K, b_V) to every row."
OUTPUT_WITH_BIAS = r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O + b_O"
"""Stages 2 and 9 of a real model's layer, which has biases (the toy layer has none)."""

EMBED_WORDS_REAL = ("The sentence is split into tokens and each token becomes the real model's word vector (its "
                    "input embedding, averaged over a word's pieces): words with related meanings get similar "
                    "vectors. No position information is added, so the order of the words is still unknown.")


def counted(n: int, noun: str) -> str:
    """"1 row", "2 rows": a count with its noun in the singular or plural."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def numbered(first: int, last: int, noun: str = "", prefix: str = "") -> str:
    """A run of numbered things from ``first`` to ``last``: "columns 5–8" or, of one, "column 5" (``noun``); "q1–q4"
    or "q1" (``prefix``, no noun)."""
    if not noun:
        return f"{prefix}{first}" if first == last else f"{prefix}{first}–{prefix}{last}"
    return f"{noun} {prefix}{first}" if first == last else f"{noun}s {prefix}{first}–{prefix}{last}"


def layer_input_words(layer: int) -> tuple[str, str]:
    """What X is at a real model's layer ``layer`` (0-based), as the step-through's first stage's words and the more
    a page adds (``Stage.more``; a slide has room for the words only)."""
    if layer == 0:
        return ("Here X is what enters the first layer's attention: each token's embedding, its word vector plus a "
                "learned vector for its position, normalised by a LayerNorm. Unlike the toy lesson's vectors, these "
                "already carry position, but no context yet: no attention layer has run.",
                "A BERT-style model such as MiniLM also adds a segment vector before the LayerNorm; a GPT-style model "
                "normalises at the start of the attention block instead.")
    below = "the layer below" if layer == 1 else f"the {layer} layers below"
    return (f"Here X is what enters this layer's attention: each token's hidden state after {below}, normalised by "
            "a LayerNorm. Unlike the toy lesson's vectors, these already carry position and context: every token has "
            f"mixed in the others {counted(layer, 'time')}.",
            "The LayerNorm is at the end of the layer below in a BERT-style model such as MiniLM, at the start of the "
            "attention block in a GPT-style one.")


TOY_NOTE = ("**This is a toy layer.** Its W_Q, W_K and W_V are random numbers (from the seed), not trained, so "
            "which word attends to which means nothing yet: a word may put most of its weight on a word that has "
            "nothing to do with it. The same word always gets the same vector (capital letters do not count), so a "
            "word that appears twice gets two identical rows of X. The Real model page shows learned weights.")


def joined(items, last: str = "and") -> str:
    """Items as running words: ["a"] → "a", ["a", "b", "c"] → "a, b and c" (``last``: the word before the last)."""
    items = [str(item) for item in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def says_why_words_repeat(config, presenter: bool) -> bool:
    """Whether a page explains a repeated word's equal rows (``repeated_words_note``): with the lesson's seeded word
    vectors (one vector a word), and on the page only, since a slide's charts fill the window down to its words."""
    return config.seeded_embeddings and not presenter


def repeated_words_note(tokens, labels, lines: str = "rows", *, made: str = "the same query, key and value",
                        last: bool = True, ending: str = "") -> str:
    """Under a lesson's weights, when a word appears twice (capital letters do not count): why its ``lines`` ("rows",
    "columns") are the same (a student saw 1·The and 5·the with equal rows and suspected a bug); "" when none is.
    ``made``: what the same vector gives them; ``ending``: what follows from it, in place of "the same ``lines``
    here"; ``last``: end with the way to tell them apart (once a caption)."""
    seen: dict[str, list[str]] = {}
    for token, label in zip(tokens, labels):
        if token != PAD_TOKEN:  # (padding, blocked as a key, is no word)
            seen.setdefault(str(token).lower(), []).append(label)
    twins = [found for found in seen.values() if len(found) > 1]
    if not twins:
        return ""
    named = "; ".join(" and ".join(plain(label) for label in found) for found in twins)
    ending = ending or f"the same {lines} here"
    return (f"{named}: the same word (capital letters do not count), so the same vector in X, {made}, and {ending}."
            + (" Nothing in this lesson tells them apart by position: the Order and position page adds positions."
               if last else ""))


TOY_CAPTION = ("A toy layer: W_Q, W_K and W_V are random (from the seed), not trained, so who attends to whom "
               "means nothing yet. The Real model page shows learned weights.")


REAL_VECTORS_CAPTION = (
    "Real word vectors, untrained W_Q and W_K: {model}'s word vectors are about {length:.1f} long over {width} "
    "features (each feature near 0), so every score here is close to 0 and each token spreads its weight almost "
    "evenly over the keys it may attend to (about 1/T each without a mask). With Projection weights “Q = K = V = "
    "X”, words with similar vectors get the most weight, but only by a little. It is the model's trained W_Q and "
    "W_K that make attention sharp: see the Real model and Inside a real head pages.")
"""The step-through's note when the lesson uses a real model's word vectors: why its weights look flat."""


# With a real model's special tokens hidden, a followed row that gives them this much of its weight or more says so
# under its bars (a previous-token head's second token gave [CLS] all of it: every bar read 0.000)
HIDDEN_SHARE_NOTED = 0.5


def hidden_share_note(label: str, hidden: float) -> str | None:
    """What to say under a followed row's bars when the hidden special tokens take ``hidden`` of its weight in the
    head shown, or None when the bars show most of it."""
    if hidden < HIDDEN_SHARE_NOTED:
        return None
    return (f"{label} gives {hidden:.3f} of its weight in this head to the hidden special tokens, so its bars here "
            "are low: switch off “Hide special tokens” to see where it goes.")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def size_in_words(value: float) -> str:
    """A non-negative size as a person reads it: 0, 0.67, 0.0012, or 1.5 × 10⁻⁷ below 0.001 (never "6.7e-01")."""
    if value == 0:
        return "0"
    if 1e-3 <= value < 1e4:
        return f"{value:.3g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def agreement_in_words(difference: float) -> str:
    """1.5e-07 -> 'they agree to 6 decimal places (the largest difference is 0.00000015, written 1.5 × 10⁻⁷)'."""
    if difference == 0:
        return "they agree exactly"
    places = max(0, int(-math.floor(math.log10(difference))) - 1)
    return (f"they agree to {places} decimal places (the largest difference is {difference:.{places + 2}f}, "
            f"written {size_in_words(difference)})")
