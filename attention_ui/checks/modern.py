"""Check-yourself questions of the pages on cost and today's attention: What it costs, Shared keys and windows,
Generation. Each function returns the page's questions made from the numbers the page shows for its settings."""

from __future__ import annotations


from attention_core import weights_bytes
from attention_ui.questions import Question, choice, numeric
from attention_ui.text import quoted

COST, MODERN, GENERATION = "what-it-costs", "modern-attention", "generation"
"""The pages' url paths, which are their questions' ``stage``."""

MIB = 2**20


def cost_questions(longest: int, width: int) -> list[Question]:
    """What it costs, at its "Longest T" ``longest`` and "Width d" ``width``: how many times more multiply-adds
    attention does than a recurrent layer, the memory of one head's weights at twice the length, and why counts
    and measured times disagree."""
    ratio = longest / width
    doubled = 2 * longest
    return [
        numeric(COST, "ops-ratio", f"By the formulas of section 1, how many times as many multiply-adds does "
                f"self-attention's QKᵀ and AV do as a recurrent layer at T = {longest} and d = {width}?", ratio,
                f"Self-attention does T²·d and a recurrent layer T·d²: their ratio is T / d = "
                f"{longest} / {width} = {ratio:g}.",
                tolerance=0,
                hint="Divide the self-attention entry of the table by the recurrent one: one T and one d cancel. "
                     "Then put in this page's T and d.",
                slips=((width / longest, "d / T, the ratio upside down: divide attention's count by the recurrent "
                        "layer's, not the other way round"),)),
        numeric(COST, "memory-doubled", f"How many MiB do one head's T × T float32 weights take at T = {doubled}, "
                f"twice the page's longest T?", weights_bytes(doubled) / MIB,
                f"T² numbers of 4 bytes: {doubled}² × 4 B = {weights_bytes(doubled) / MIB:g} MiB, four times the "
                f"{weights_bytes(longest) / MIB:g} MiB at T = {longest}: twice the tokens, four times the memory.",
                tolerance=0,
                hint="Below the memory chart the page says how much one head's weights take at its longest T. What "
                     "happens to T × T when T doubles? (1024 KiB make a MiB.)"),
        choice(COST, "count-vs-clock", "Beyond T = d, the formulas say attention does more multiply-adds than a "
               "recurrent layer, yet measured on a CPU attention is often faster up to much longer sentences. Why?",
               ("The formulas count wrongly: attention really does fewer multiply-adds than a recurrent layer",
                "Attention skips the multiply-adds of keys whose weight ends up close to zero",
                "Attention's work is a few big matrix products run at full speed; the recurrent layer takes T "
                "small steps one after another, each with a fixed overhead",
                "The recurrent layer computes all T × T scores as well, and then its own steps"), 2,
               "Time is not a count of multiply-adds. One large matrix product keeps the processor busy (vectorised, "
               "and spread over many cores on a GPU); a recurrent layer cannot start step t before step t − 1 is "
               "done, and its small steps leave the hardware mostly idle. Only at large T does attention's T² "
               "catch up.",
               hint="Compare how the work is shaped: what can attention compute all at once, and what must a "
                    "recurrent layer wait for before each token?"),
    ]


def modern_questions(*, num_heads: int, kv_heads: int | None, d_k: int, d_v: int, window: int,
                     layers: int) -> list[Question]:
    """Shared keys and windows, at ``num_heads`` query heads sharing ``kv_heads`` key/value heads (None when the
    page shows no sharing: one head, or a g that does not divide h) of sizes ``d_k`` and ``d_v``, and a sliding
    window of ``window`` tokens over ``layers`` stacked layers: the numbers cached per token and layer (only with
    ``kv_heads``), the window's reach, and why heads share keys and values."""
    found = []
    if kv_heads is not None:
        cached = kv_heads * (d_k + d_v)
        found.append(numeric(
            MODERN, "cached-numbers", f"With h = {num_heads} query heads sharing g = {kv_heads} key/value "
            f"head{'s' * (kv_heads != 1)} (d_k = {d_k}, d_v = {d_v}), how many numbers does one layer cache for "
            "each token?", cached,
            f"Each key/value head keeps one key (d_k numbers) and one value (d_v numbers) per token: g × (d_k + "
            f"d_v) = {kv_heads} × ({d_k} + {d_v}) = {cached}. The query heads cache nothing.",
            tolerance=0,
            hint="Only the key/value heads are cached, not the query heads. Each of them keeps one key and one "
                 "value per token."))
    span = layers * (window - 1) + 1
    found.append(numeric(
        MODERN, "window-reach", f"With a window of w = {window} token{'s' * (window != 1)} and {layers} "
        f"layer{'s' * (layers != 1)} stacked, how many tokens can the last token draw on in a long enough sentence "
        "(itself included)?", span,
        f"Each layer adds w − 1 = {window - 1} tokens further back: L·(w − 1) + 1 = "
        f"{layers} × {window - 1} + 1 = {span}.",
        tolerance=0,
        hint="One layer sees the token itself and the tokens before it inside its window (one fewer than w); every "
             "further layer hops that many tokens further back."))
    found.append(choice(
        MODERN, "why-share", "Why do today's models let several query heads share one key/value head (g < h)?",
        ("It gives exactly the same attention weights as multi-head attention, computed faster",
         "It lets a token see past its sliding window, because the heads pool what they saw",
         "Shared keys and values make the causal mask unnecessary while generating",
         "The KV cache gets h / g times smaller, so long contexts fit in memory; each query head still asks its "
         "own question"), 3,
        "Only keys and values are cached while generating, so g key/value heads instead of h divide the cache by "
        "h / g. Each query head still has its own W_Q. Here the shared heads are the multi-head ones averaged, with "
        "no training after it, so the weights can change a lot (the table's last column); Ainslie et al. train the "
        "averaged model a little longer to win the quality back, and a model trained with g < h from the start "
        "learns to share.",
        hint="What does a model keep in memory for every earlier token while it generates, and which heads does "
             "that depend on?"))
    return found


def generation_questions(*, step: int, num_tokens: int, kv_heads: int, d_k: int, d_v: int) -> list[Question]:
    """Generation, at step ``step`` of ``num_tokens`` with ``kv_heads`` key/value heads of sizes ``d_k`` and
    ``d_v``: the numbers in one head's K cache now, in the layer's whole cache at the end of the sentence, and why
    cached keys and values never need recomputing."""
    now = step * d_k
    full = num_tokens * kv_heads * (d_k + d_v)
    return [
        numeric(GENERATION, "k-cache-now", f"At step {step}, how many numbers does the K cache of one key/value "
                f"head hold (d_k = {d_k})?", now,
                f"One row of d_k numbers per token so far: {step} × {d_k} = {now}.",
                tolerance=0,
                hint="The K cache has one row per token read so far, and each row is one key of d_k numbers."),
        numeric(GENERATION, "cache-at-end", f"Once all {num_tokens} tokens of the sentence are read, how many "
                f"numbers do this layer's K and V caches hold together, over all g = {kv_heads} key/value "
                f"head{'s' * (kv_heads != 1)} (d_k = {d_k}, d_v = {d_v})?", full,
                f"Per token and key/value head one key and one value: {num_tokens} × {kv_heads} × ({d_k} + {d_v}) "
                f"= {full}.",
                tolerance=0,
                hint="Count per token first (each key/value head adds one key and one value), then multiply by the "
                     "number of tokens."),
        choice(GENERATION, "why-cache", "Why may the keys and values of earlier tokens be kept instead of "
               "recomputed at every step?",
               ("Every token of a sentence gets the same key and value, so one row serves them all",
                "No token looks ahead (causal mask), so a new token never changes the earlier keys and values",
                "The cache keeps the attention weights, and a row of weights never changes",
                "Recomputing them would give different numbers each time, so the first ones are kept"), 1,
               "An earlier token's key and value come from that token and the tokens before it only; a new token "
               "adds a row and changes none of the old ones, so caching loses nothing (section 2 shows the "
               "difference from full causal attention is rounding only).",
               hint="What may a token look at under a causal mask, and can a token that comes later change that?"),
    ]


def tile_questions(run, head: int, query: int, labels) -> list[Question]:
    """What it costs, section 3 (``run``: ``attention_core.TiledAttention`` of the lesson, the followed ``query`` of
    head ``head``; ``labels`` the keys'): what the kernel does to ℓ and o at the first tile that raised the largest
    score; or, where no tile did, how many numbers it keeps for a query."""
    m = run.running_max[head, :, query].tolist()
    d_v = run.running_out.shape[-1]
    grew = [j for j in range(1, len(m)) if float("-inf") < m[j - 1] < m[j]]
    if not grew:  # (with the largest score in its first tile, e^(m_old − m_new) and its inverse are both 1)
        return [numeric(
            COST, "tile-memory", f"Between tiles, how many numbers does the kernel keep for one query, with "
            f"d_v = {d_v}?", d_v + 2, f"o (d_v = {d_v} numbers), m and ℓ: {d_v + 2}, whatever the number of keys.",
            tolerance=0, hint="Count the running things of the formula: m, ℓ and o. How long is o?",
            slips=((d_v, "o alone: m and ℓ are kept too"),
                   (len(labels), "a row of weights, one per key: that is what the kernel never keeps")))]
    j = grew[0]
    old, new = f"{m[j - 1]:.3f}", f"{m[j]:.3f}"
    keys = f"key {quoted(labels[run.starts[j]])}" if run.ends[j] - run.starts[j] == 1 else \
        f"keys {quoted(labels[run.starts[j]])} to {quoted(labels[run.ends[j] - 1])}"
    # (a choice, not the factor's number: the table under the chart prints every rescale, and a student read it off)
    return [choice(
        COST, "tile-rescale", f"At tile {j + 1} ({keys}) the largest score so far went from m = {old} to m = {new}. "
        "What does the kernel do to ℓ and o before adding the tile's own terms?",
        (f"Multiplies both by e^(m_old − m_new) = e^({old} − {new})",
         f"Multiplies both by e^(m_new − m_old) = e^({new} − {old})",
         "Subtracts m_new − m_old from both",
         "Starts both again from 0 with this tile, as the earlier keys no longer count"), 0,
        f"Every term summed so far is e^(s − {old}); it must become e^(s − {new}), as the tile's new terms are, and "
        f"e^(s − {old}) · e^({old} − {new}) = e^(s − {new}). The factor is below 1: what was summed shrinks, because "
        "the new largest score is larger.",
        hint="Each term summed so far is e^(s − m_old); the new terms are e^(s − m_new). What turns the one into "
             "the other?")]
