"""A short lecture hall against a fresh app server: 10 sessions open the step-through link, then click Next.

The hall runs in its own process (Locust patches the standard library for gevent) through
``bench/lecture_hall.py``, the same code as the full benchmark. Nothing here is timed: the test
checks that every session opened and clicked without an error, and that no session was told
"page not found".
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = 10

pytest.importorskip("locust")


@pytest.fixture(scope="module")
def hall(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("hall") / "hall.json"
    command = [sys.executable, str(ROOT / "bench" / "lecture_hall.py"), "--targets", "app",
               "--sessions", str(SESSIONS), "--open-window", "5", "--duration", "15", "--mean-gap", "4",
               "--no-model-visitor", "--json", str(out)]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-4000:]
    return json.loads(out.read_text())["app"]


def test_every_session_opens_and_clicks_without_error(hall):
    assert hall["error messages"] == []
    assert hall["errors"] == 0
    assert hall["opened"] == SESSIONS
    assert hall["clicks"] > 0 and hall["Next p50 s"] > 0


@pytest.mark.xfail(strict=False, reason="cold start: a deep link opened while the server's first run has not reached "
                   "st.navigation is told 'page not found' (the legacy pages-folder routing)")
def test_no_session_is_told_page_not_found(hall):
    assert hall["page not found"] == 0
