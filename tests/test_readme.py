"""The README's promises: its two commands, CI running the same test command, the core example."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_run_and_test_commands():
    run_app, run_tests = BLOCKS[0][1].strip(), BLOCKS[1][1].strip()
    assert run_app.startswith("pip install -r requirements.txt") and run_app.endswith("streamlit run app.py")
    assert "requirements-dev.txt" in run_tests and run_tests.endswith("python -m pytest")


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert BLOCKS[1][1].strip() in ci.splitlines()


def test_readme_core_example_prints_causal_weights():
    example = next(code for lang, code in BLOCKS if lang == "python")
    result = subprocess.run([sys.executable, "-c", example], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "['The', 'cat', 'sat', 'on', 'the', 'mat', '.']"
    assert lines[1].startswith("tensor([[1.0000, 0.0000, 0.0000")  # the first token sees only itself


def test_requirements_files_exist_with_bounds():
    for name in ("torch", "streamlit", "altair", "pandas", "transformers"):
        line = next(line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith(name))
        assert ">=" in line and "<" in line, f"{name} needs a lower bound and a tested upper bound: {line}"
