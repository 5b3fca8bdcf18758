"""A causal real model generating text token by token with its own KV cache, attention recorded.

    gen = generate_with_attention(loaded, "The cat sat", num_new_tokens=6)
    gen.step_attentions[s]     # (L, h, P + s + 1): generated token s, read into the cache
    gen.max_abs_diff           # vs one full causal pass over every token: ~1e-6

Greedy decoding (always the most likely next token), so the same prompt gives the same text.
The next-token scores use the input embedding matrix (GPT-2 ties its output layer to it).
"""

from __future__ import annotations

import inspect

from dataclasses import dataclass

import torch

from .errors import AttentionInputError
from .limits import MAX_NEW_TOKENS, MAX_REAL_MODEL_TOKENS
from .real_models import LoadedModel, _check_sentence, _display_tokens


@dataclass(frozen=True, eq=False)
class GenerationRun:
    """Prompt plus generated tokens (T = P + N) and the attention of every generated token.

    tokens: display strings of all T tokens; prompt_length P; step_attentions[s] (L, h, P + s + 1):
    the attention of generated token s over the cache (itself included) as the model read it;
    full_attentions (L, h, T, T): one causal pass over all tokens; max_abs_diff: largest
    difference between each step's row and the same row of the full pass.
    """

    tokens: list[str]
    prompt_length: int
    step_attentions: list[torch.Tensor]
    full_attentions: torch.Tensor
    max_abs_diff: float
    truncated: bool

    @property
    def num_generated(self) -> int:
        return len(self.step_attentions)


def _cache_argument(model) -> str:
    """What the model's forward calls its KV cache, in its arguments and its output: ``cache`` in transformers
    from 5.x on (which warns that ``past_key_values`` will go), ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def generate_with_attention(loaded: LoadedModel, prompt: str, num_new_tokens: int = 6) -> GenerationRun:
    """Greedy generation with the model's KV cache (passed under the name its transformers uses, see
    ``_cache_argument``), attention per step.

    Raises ValueError for an encoder model, an empty prompt, or a bad number of new tokens;
    a long prompt keeps its last pieces so that prompt + new tokens fit MAX_REAL_MODEL_TOKENS.
    """
    if not loaded.causal:
        raise AttentionInputError(f"{loaded.name} is an encoder: it reads the whole sentence at once and does not "
                                  "generate. Choose a GPT-style (decoder) model.")
    whole = isinstance(num_new_tokens, int) and not isinstance(num_new_tokens, bool)
    if not whole or not 1 <= num_new_tokens <= MAX_NEW_TOKENS:
        raise AttentionInputError(f"The number of new tokens must be a whole number from 1 to {MAX_NEW_TOKENS}.")
    _check_sentence(prompt)
    ids = list(loaded.tokenizer(prompt, add_special_tokens=False)["input_ids"])
    if not ids:
        raise AttentionInputError("The model's tokenizer turns the prompt into no tokens: type a few words.")
    room = min(MAX_REAL_MODEL_TOKENS, loaded.max_positions) - num_new_tokens
    truncated = len(ids) > room
    ids = ids[-room:]
    model, device = loaded.model, loaded.device
    output_embeddings = model.get_input_embeddings().weight  # (vocab, hidden), tied to the output layer

    cache_name = _cache_argument(model)

    def forward(new_ids, cache):
        out = model(input_ids=torch.tensor([new_ids], device=device), **{cache_name: cache}, use_cache=True,
                    output_attentions=True)
        next_id = int((out.last_hidden_state[0, -1] @ output_embeddings.T).argmax())  # greedy
        return out, next_id

    steps = []
    with torch.no_grad():
        out, next_id = forward(ids, None)  # the prompt fills the cache
        for _ in range(num_new_tokens):
            ids.append(next_id)
            out, next_id = forward([next_id], out[cache_name])  # one token in, one row of K and V added
            steps.append(torch.stack([a[0, :, 0] for a in out.attentions]))  # (L, h, t+1)
        full = model(input_ids=torch.tensor([ids], device=device), output_attentions=True)
    full_attentions = torch.stack([a[0] for a in full.attentions])  # (L, h, T, T)
    prompt_length = len(ids) - num_new_tokens
    diff = max(float((row - full_attentions[:, :, prompt_length + s, :prompt_length + s + 1]).abs().max())
               for s, row in enumerate(steps))
    tokens = _display_tokens(loaded, loaded.tokenizer.convert_ids_to_tokens(ids))
    return GenerationRun(tokens, prompt_length, steps, full_attentions, diff, truncated)
