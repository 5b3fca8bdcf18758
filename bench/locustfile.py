"""The lecture-hall student for Locust's own command line, against a server you started.

    streamlit run app.py --server.address 127.0.0.1 --server.port 8501 &
    locust -f bench/locustfile.py --headless -u 20 -r 10 -t 40s --port-under-test 8501 \
        --page step-through --query "step=1" --open-window 10 --duration 25 --mean-gap 10

Each user opens the page within --open-window seconds, then presses Next at random moments (mean
--mean-gap seconds apart) until --open-window + --duration seconds after the start; Locust's table
shows "open" and "next" (ms, connect/click -> script finished). ``bench/lecture_hall.py`` runs the
whole comparison (fresh servers for the app and the lean page, one table with ratios).
"""

import sys
import time
from pathlib import Path

from locust import events

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lecture_hall import HallPlan, HallRecord, HallStudent, Target  # noqa: E402


@events.init_command_line_parser.add_listener
def _options(parser) -> None:
    parser.add_argument("--port-under-test", type=int, default=8501, help="the Streamlit server's port (127.0.0.1)")
    parser.add_argument("--page", default="step-through", help="the page's url path ('' for the main page)")
    parser.add_argument("--query", default="step=1", help="the shared link's query string")
    parser.add_argument("--open-window", type=float, default=10.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--mean-gap", type=float, default=10.0)


class Student(HallStudent):
    abstract = False


@events.test_start.add_listener
def _plan(environment, **_) -> None:
    options = environment.parsed_options
    start = time.perf_counter()
    Student.plan = HallPlan(options.port_under_test, Target("cli", "", options.page, options.query), start,
                            options.open_window, start + options.open_window + options.duration, options.mean_gap)
    Student.record = HallRecord()
