"""A short lecture hall against a fresh app server: 10 sessions open the step-through link, then click Next.

The hall runs in its own process (Locust patches the standard library for gevent) through
``bench/lecture_hall.py``, the same code as the full benchmark. Nothing here is timed: the test
checks that every session opened and clicked without an error, and that no session was told
"page not found". The browserless client and the report are checked on their own first.
"""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = 10
sys.path.insert(0, str(ROOT / "bench"))

from hall_report import HallRecord, format_table, percentile, pooled, round_ratios, summary  # noqa: E402
from servers import streamlit_server  # noqa: E402
from streamlit_ws import FRAGMENT_RUN, SessionError, StreamlitSession  # noqa: E402


def test_percentiles_are_nearest_rank():
    samples = [float(i) for i in range(1, 21)]  # 1 … 20
    assert (percentile(samples, 50), percentile(samples, 95), percentile(samples, 100)) == (10.0, 19.0, 20.0)
    assert percentile([3.0], 95) == 3.0 and percentile([], 50) != percentile([], 50)  # NaN when empty


def test_report_puts_app_over_lean():
    app = HallRecord(opens=[2.0, 4.0], clicks=[1.0, 3.0], errors=["next: lost"], page_not_found=1,
                     rss_samples=[500.0, 600.0])
    lean = HallRecord(opens=[1.0, 2.0], clicks=[0.5, 0.5], rss_samples=[150.0])
    assert summary(app)["errors"] == 1 and summary(app)["RSS peak MB"] == 600
    rows = {line.split("|")[1].strip(): line for line in format_table({"app": app, "lean": lean}).splitlines()}
    assert rows["open p95 s"].rstrip(" |").endswith("2.00×")  # 4.0 / 2.0
    assert rows["Next p50 s"].rstrip(" |").endswith("2.00×")  # 1.0 / 0.5
    assert rows["RSS end MB"].rstrip(" |").endswith("4.00×")  # 600 / 150


def test_rounds_are_pooled_and_their_ratios_shown_with_the_median():
    def hall(opens, clicks):
        return HallRecord(opens=opens, clicks=clicks, errors=[], page_not_found=1, sessions_done=2,
                          rss_samples=[100.0])
    rounds = [{"app": hall([0.02, 0.04], [0.01, 0.03]), "lean": hall([0.01, 0.02], [0.01, 0.01])},
              {"app": hall([0.03, 0.03], [0.02, 0.02]), "lean": hall([0.03, 0.03], [0.01, 0.02])},
              {"app": hall([0.05, 0.06], [0.01, 0.01]), "lean": hall([0.01, 0.02], [0.01, 0.01])}]
    app = pooled([r["app"] for r in rounds])
    assert sorted(app.opens) == [0.02, 0.03, 0.03, 0.04, 0.05, 0.06] and app.page_not_found == 3
    assert app.sessions_done == 6 and len(app.rss_samples) == 3
    lines = round_ratios(rounds).splitlines()
    assert lines[0].startswith("round 1: open p50 2.00×, open p95 2.00×, Next p50 1.00×, Next p95 3.00×")
    assert lines[1].startswith("round 2: open p50 1.00×, open p95 1.00×, Next p50 2.00×, Next p95 1.00×")
    assert lines[3] == "median of 3 rounds: open p50 2.00×, open p95 2.00×, Next p50 1.00×, Next p95 1.00×"
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in format_table({"app": app}).splitlines()}
    assert rows["open p95 s"] == "0.060" and rows["Next p50 s"] == "0.010"  # to the millisecond


def test_client_presses_next_until_the_last_stage_of_the_lean_page():
    with streamlit_server("bench/lean_page.py") as server, StreamlitSession(server.port, timeout=60) as session:
        opened = session.open("", "step=7")
        assert opened.ok and not opened.page_not_found and opened.count("vega_lite_chart") == 2
        assert session.has_enabled("button", "Next") and session.has_enabled("button", "◀ Back")
        clicks = [session.click("Next") for _ in range(2)]  # stages 8 and 9
        assert all(c.ok and c.status == FRAGMENT_RUN and c.count("vega_lite_chart") == 2 for c in clicks)
        assert not session.has_enabled("button", "Next")  # the ninth and last stage
        with pytest.raises(SessionError, match="disabled"):
            session.click("Next")
        assert session.click("◀ Back").ok and session.has_enabled("button", "Next")



def test_an_idle_session_answers_keep_alive_pings_and_stays_connected():
    """The server closes a websocket whose pings go unanswered (about two ping intervals); an open tab, and a
    hall student waiting between clicks, answers them."""
    env = {**os.environ, "STREAMLIT_SERVER_WEBSOCKET_PING_INTERVAL": "1"}
    with streamlit_server("bench/lean_page.py", env=env) as server:
        with StreamlitSession(server.port, timeout=30) as waiting:
            assert waiting.open("", "step=1").ok
            waiting.idle_until(time.perf_counter() + 4)
            assert waiting.click("Next").ok
        with StreamlitSession(server.port, timeout=30) as deaf:  # sleeps without reading: pings unanswered
            assert deaf.open("", "step=1").ok
            time.sleep(4)
            with pytest.raises(SessionError):
                deaf.click("Next")
@pytest.fixture(scope="module")
def hall(tmp_path_factory) -> dict:
    if importlib.util.find_spec("locust") is None:  # never import it here: it patches threading for gevent
        pytest.skip("locust is not installed (pip install -r requirements-dev.txt)")
    out = tmp_path_factory.mktemp("hall") / "hall.json"
    command = [sys.executable, str(ROOT / "bench" / "lecture_hall.py"), "--targets", "app",
               "--sessions", str(SESSIONS), "--open-window", "5", "--duration", "15", "--mean-gap", "4",
               "--model", "none", "--rounds", "1", "--json", str(out)]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-4000:]
    return json.loads(out.read_text())["app"]


def test_every_session_opens_and_clicks_without_error(hall):
    assert hall["error messages"] == []
    assert hall["errors"] == 0
    assert hall["opened"] == SESSIONS
    assert hall["clicks"] > 0 and hall["Next p50 s"] > 0


def test_no_session_is_told_page_not_found(hall):
    assert hall["page not found"] == 0


def test_the_bare_controls_page_draws_the_step_throughs_controls():
    """bench/controls_page.py builds the step-through's controls from the app's own functions: when their
    signatures changed, the page failed and the click benchmark had no Next to press."""
    from streamlit.testing.v1 import AppTest

    def bare_page():
        import sys
        from pathlib import Path

        bench = Path.cwd() / "bench"
        sys.path[:0] = [str(bench), str(bench.parent)]
        import controls_page

        controls_page.step_through()

    at = AppTest.from_function(bare_page, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [b.label for b in at.button]
    assert "Next ▶" in labels and any(label.startswith("Next: ") for label in labels), labels
    assert {"sentence", "token", "mask"} <= {w.key for kind in ("text_input", "selectbox", "radio")
                                            for w in getattr(at.sidebar, kind)}
