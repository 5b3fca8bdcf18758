"""What one click costs: the step-through page against the lean page, side by side in one run.

    python bench/bench_rerun.py                 # 16 clicks per round, server time and Chromium click → idle
    python bench/bench_rerun.py --clicks 32 --no-browser
    python bench/bench_rerun.py --pages app,controls  # only these (an A/B of one change: fewer servers to start)

Server time: a browserless session presses Next and Back (``bench/streamlit_ws.py``), timed from sending the
click to the run's ``script_finished``. The first round builds each stage's charts; the second finds them in
the shared spec cache, as every student after the first does in a lecture hall.

Click → idle: headless Chromium presses the Next/Back buttons; timed from the click to the app's script
state going back to "not running" and two animation frames later (the charts drawn). Two bare pages are
measured the same way, each in its own tab on its own server, the clicks taking turns (app, controls, lean,
app, …) so that a busy moment of the machine falls on every page alike: ``bench/controls_page.py`` (the app's
navigation, sidebar and stage picker with one chart and no lesson) and the lecture hall's lean page
``bench/lean_page.py`` (Back/Next, a formula and two Vega-Lite heatmaps, no sidebar). Prints medians, p95 and the
app/bare ratios; nothing passes or fails.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hall_report import percentile  # noqa: E402
from servers import streamlit_server  # noqa: E402
from streamlit_ws import StreamlitSession  # noqa: E402

TARGETS = {"app": ("app.py", "step-through"), "controls": ("bench/controls_page.py", "step-through"),
           "lean": ("bench/lean_page.py", "")}
CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]
WATCH_JS = """() => { window.__idle = new Promise(resolve => {
  const app = document.querySelector('[data-testid="stApp"]');
  const done = () => requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
  // Any change of the script state after the click means its run started; a quick run may already be over
  // when the observer is called (the changes arrive together), so "not running" then means finished.
  const observer = new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'notRunning') { observer.disconnect(); done(); }
  });
  observer.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  setTimeout(() => { observer.disconnect(); resolve(NaN); }, 20000);  // no run seen: not counted
}); window.__clickedAt = performance.now(); }"""
"""Before a click: a promise that resolves (to the time) when the run the click starts has finished and drawn."""


STAGES = 9  # the step-through's stages (the lean and controls pages have as many)


def forward_clicks(clicks: int) -> list[bool]:
    """Next from the first stage to the last, Back to the first, and again: True for each Next."""
    return [(i % (2 * (STAGES - 1))) < STAGES - 1 for i in range(clicks)]


def server_times(port: int, page: str, clicks: int) -> list[list[float]]:
    """Two rounds of ``clicks`` Next/Back clicks, in one session each: seconds per click."""
    rounds = []
    for _ in range(2):
        with StreamlitSession(port, timeout=120) as session:
            session.open(page, "")
            rounds.append([session.click("Next" if forward else "◀ Back").seconds
                           for forward in forward_clicks(clicks)])
    return rounds


def browser_times(ports: dict[str, tuple[int, str]], clicks: int) -> dict[str, list[float]]:
    """Chromium, one tab per page (name -> (port, url path)), the clicks taking turns between the tabs: seconds
    from a click on Next/Back to the page idle and drawn, per page."""
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {name: [] for name in ports}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        tabs = {}
        for name, (port, page) in ports.items():
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.goto(f"http://127.0.0.1:{port}/{page}")
            tab.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=120_000)
            tab.wait_for_selector('[data-testid="stVegaLiteChart"] :is(svg, canvas)', timeout=60_000)
            tabs[name] = tab
        for forward in forward_clicks(clicks):
            for name, tab in tabs.items():
                tab.bring_to_front()
                button = tab.locator("button", has_text="Next" if forward else "Back").first
                tab.evaluate(WATCH_JS)
                button.click()
                finished = tab.evaluate("() => window.__idle")
                if finished == finished:  # not NaN
                    times[name].append((finished - tab.evaluate("() => window.__clickedAt")) / 1000)
        browser.close()
    return times


def describe(times: list[float]) -> str:
    return f"median {statistics.median(times) * 1000:6.0f} ms   p95 {percentile(times, 95) * 1000:6.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=16)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--pages", default=",".join(TARGETS), help="which of app, controls, lean to measure")
    args = parser.parse_args()
    if "app" not in args.pages.split(","):
        parser.error("--pages must include app: every ratio is the app's time over another page's")
    results: dict[str, dict[str, list[float]]] = {}
    with contextlib.ExitStack() as servers:
        ports = {}
        for name, (script, page) in TARGETS.items():
            if name not in args.pages.split(","):
                continue
            server = servers.enter_context(streamlit_server(script))
            first, second = server_times(server.port, page, args.clicks)
            results[name] = {"server, first round": first, "server, charts cached": second}
            ports[name] = (server.port, page)
        if not args.no_browser and Path(CHROMIUM).exists():
            for name, times in browser_times(ports, args.clicks).items():
                results[name]["Chromium click → idle"] = times
    print(f"{args.clicks} clicks (Next to the last stage, Back to the first, …) per row; "
          "app = the step-through page at its defaults")
    for what in results["app"]:
        app = results["app"][what]
        print(f"{what:24s} app      {describe(app)}")
        for bare in ("controls", "lean"):
            times = results.get(bare, {}).get(what)
            if times:
                ratio = statistics.median(app) / statistics.median(times)
                print(f"{'':24s} {bare:8s} {describe(times)}   app/{bare} {ratio:.2f}× (medians)")


if __name__ == "__main__":
    main()
