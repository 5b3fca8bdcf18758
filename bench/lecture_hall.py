"""A lecture hall on one server: many students open a shared step-through link, then press Next.

    python bench/lecture_hall.py                          # 3 rounds of app and lean: 100 sessions, 10 s, 60 s
    python bench/lecture_hall.py --sessions 10 --duration 15 --targets app --rounds 1

For each target (the app's step-through page, then the lean reference page ``bench/lean_page.py``)
it starts a fresh server on 127.0.0.1, runs the same hall against it with Locust, stops the server,
and prints one table: p50/p95 open (connect -> first script finished), p50/p95 Next (click -> script
finished), errors, "page not found" count, server RSS, and the app/lean ratios. The absolute
numbers depend on the machine; the ratios are what to compare. One hall's ratio varies from run to run
(its times are tens of milliseconds, and the load client shares the machine), so by default the halls run in
three rounds, app and lean alternating (app first in odd rounds, lean first in even ones); the table pools
every round's samples, and each round's ratios are printed below it with their median.

A student is a Locust user speaking Streamlit's websocket protocol (``bench/streamlit_ws.py``): it
opens the link at a random moment within ``--open-window`` seconds, then presses Next (Back at the
last stage) at random moments, exponentially spaced with mean ``--mean-gap`` seconds, until
``--open-window + --duration`` seconds after the hall began. A click under way then still counts.
One extra session opens the real-model page, so all-MiniLM-L6-v2 is loaded and the RSS includes it:
``--model before`` (the default) opens it before the hall, as a lecturer who tried the pages before the
class has; ``--model during`` opens it as the hall begins, so the model loads while the students open
and click (transformers' import is seconds of single-threaded Python, and every run meeting it waits
for it); ``--model none`` leaves it out. Its open time is printed below the table.
"""

from __future__ import annotations

import locust  # noqa: F401  (first: it monkey-patches the standard library for gevent)

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import gevent
from locust import User, events, task
from locust.env import Environment

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hall_report import HallRecord, format_table, pooled, round_ratios, summary  # noqa: E402
from servers import streamlit_server  # noqa: E402
from streamlit_ws import SessionError, StreamlitSession  # noqa: E402


@dataclass(frozen=True)
class Target:
    """What the hall opens: a server script and the shared link (page url path + query string)."""

    name: str
    script: str
    page_name: str
    query_string: str


TARGETS = {
    "app": Target("app", "app.py", "step-through", "step=1"),
    "lean": Target("lean", "bench/lean_page.py", "", "step=1"),
}
MODEL_PAGE = ("real-model", "")
RUN_TIMEOUT_S = 180.0
GRACE_S = 240.0  # after the hall's end, how long clicks under way may still finish


@dataclass
class HallPlan:
    port: int
    target: Target
    start: float  # perf_counter when the hall began
    open_window: float
    end: float  # no new click after this moment
    mean_gap: float


class HallStudent(User):
    """One student's tab: open the shared link, then press Next now and then.

    ``plan`` and ``record`` are set on the class by whoever runs the hall (``run_hall`` below, or
    ``bench/locustfile.py`` for Locust's own command line).
    """

    abstract = True
    plan: HallPlan
    record: HallRecord
    wait_time = staticmethod(lambda: 1.0)

    @task
    def attend(self) -> None:
        plan, record = self.plan, self.record
        rng = random.Random()
        gevent.sleep(max(0.0, plan.start + rng.uniform(0, plan.open_window) - time.perf_counter()))
        session = StreamlitSession(plan.port, timeout=RUN_TIMEOUT_S)
        try:
            self._timed("open", record.opens, lambda: session.open(plan.target.page_name, plan.target.query_string))
            while True:
                moment = time.perf_counter() + rng.expovariate(1.0 / plan.mean_gap)
                if moment > plan.end:
                    break
                try:
                    session.idle_until(moment)  # as an open tab: keep-alive pings answered
                except SessionError as lost:
                    record.errors.append(f"idle: {lost}")
                    break
                label = "Next" if session.has_enabled("button", "Next") else "◀ Back"
                self._timed("next", record.clicks, lambda: session.click(label))
        except _Abandon:
            pass  # already counted as an error; this student leaves the hall
        finally:
            session.close()
            record.sessions_done += 1
        while True:  # done: stay idle until the runner ends the hall
            gevent.sleep(3600)

    def _timed(self, name: str, samples: list[float], action) -> None:
        started = time.perf_counter()
        error = None
        try:
            result = action()
        except SessionError as failure:
            error = failure
        else:
            self.record.page_not_found += int(result.page_not_found)  # its own column, not an error
            if result.ok:
                samples.append(result.seconds)
            else:
                error = SessionError("; ".join(result.exceptions) or f"status {result.status}")
        if error is not None:
            self.record.errors.append(f"{name}: {error}")
        events.request.fire(request_type="WS", name=name, response_time=(time.perf_counter() - started) * 1000,
                            response_length=0, exception=error, context={})
        if error is not None:
            raise _Abandon(str(error))


class _Abandon(Exception):
    """A session whose run failed (no page, a lost connection, an exception shown) leaves the hall."""


def _student_class(plan: HallPlan, record: HallRecord) -> type[HallStudent]:
    return type("Student", (HallStudent,), {"abstract": False, "plan": plan, "record": record})


def _model_visitor(port: int, record: HallRecord) -> None:
    session = StreamlitSession(port, timeout=RUN_TIMEOUT_S)
    try:
        result = session.open(*MODEL_PAGE)
        record.model_open = result.seconds
        if not result.ok:
            record.errors.append("model page: " + "; ".join(result.exceptions))
    except SessionError as error:
        record.errors.append(f"model page: {error}")
    finally:
        session.close()


def run_hall(target: Target, *, sessions: int, open_window: float, duration: float, mean_gap: float,
             model: str = "none") -> HallRecord:
    """Start a fresh server for ``target``, run one hall against it, stop the server; the raw samples.
    ``model``: when an extra session opens the real-model page ("before" the hall, "during" it, or "none")."""
    record = HallRecord()
    with streamlit_server(target.script) as server:
        if model == "before":
            _model_visitor(server.port, record)
            record.model_when = "before"
        start = time.perf_counter() + 0.5
        plan = HallPlan(server.port, target, start, open_window, start + open_window + duration, mean_gap)
        environment = Environment(user_classes=[_student_class(plan, record)], events=events)
        runner = environment.create_local_runner()
        sampler = gevent.spawn(_sample_rss, server, record)
        if model == "during":
            gevent.spawn(_model_visitor, plan.port, record)
            record.model_when = "during"
        runner.start(sessions, spawn_rate=max(sessions / 2.0, 1.0))  # all users exist within ~2 s
        deadline = plan.end + GRACE_S
        while record.sessions_done < sessions and time.perf_counter() < deadline:
            gevent.sleep(0.5)
        if record.sessions_done < sessions:
            record.errors.append(f"{sessions - record.sessions_done} sessions still busy {GRACE_S:g} s after the end")
        runner.quit()
        record.rss_samples.append(server.rss_mb())
        sampler.kill()
    return record


def _sample_rss(server, record: HallRecord) -> None:
    while True:
        record.rss_samples.append(server.rss_mb())
        gevent.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--open-window", type=float, default=10.0, help="seconds in which every session opens")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of clicking after the open window")
    parser.add_argument("--mean-gap", type=float, default=10.0, help="mean seconds between one student's clicks")
    parser.add_argument("--targets", default="app,lean", help="comma-separated: app, lean")
    parser.add_argument("--model", choices=("before", "during", "none"), default="before",
                        help="when one extra session opens the real-model page, so all-MiniLM-L6-v2 is loaded: "
                        "before the hall (default), as it begins (the model loads while the hall clicks), or never "
                        "(app only)")
    parser.add_argument("--rounds", type=int, default=3, help="halls per target, the targets alternating")
    parser.add_argument("--show-errors", type=int, default=5, help="print at most this many error messages")
    parser.add_argument("--json", type=Path, help="also write each target's summary and errors to this file")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= 200 or not 0 < args.duration <= 300 or not 1 <= args.rounds <= 5:
        parser.error("keep it bounded: 1-200 sessions, at most 300 s, 1-5 rounds")
    names = [name.strip() for name in args.targets.split(",")]
    rounds: list[dict[str, HallRecord]] = []
    for number in range(args.rounds):
        rounds.append({})
        for name in names if number % 2 == 0 else names[::-1]:
            target = TARGETS[name]
            print(f"round {number + 1}, {target.name}: {args.sessions} sessions, {target.script} "
                  f"?{target.query_string} …", flush=True)
            record = run_hall(target, sessions=args.sessions, open_window=args.open_window, duration=args.duration,
                              mean_gap=args.mean_gap, model=args.model if target.name == "app" else "none")
            rounds[-1][name] = record
            for message in record.errors[: args.show_errors]:
                print(f"  error: {message}")
    results = {name: pooled([r[name] for r in rounds]) for name in names}
    print()
    print(f"Lecture hall: {args.sessions} sessions open within {args.open_window:g} s, then Next every "
          f"~{args.mean_gap:g} s each for {args.duration:g} s; {args.rounds} round(s), samples pooled")
    print(format_table(results))
    if "app" in names and "lean" in names:
        print()
        print(round_ratios(rounds))
    if args.json:
        args.json.write_text(json.dumps({name: {**summary(record), "error messages": record.errors}
                                         for name, record in results.items()}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
