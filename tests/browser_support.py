"""Helpers for driving the real Streamlit app in a headless Chromium.

Used by ``tests/test_browser.py`` and ``tools/screenshots.py``. Nothing here imports
Playwright at module level, so importing this file is always safe; the functions that
take a ``page`` expect a ``playwright.sync_api.Page``.

API
---
- ``REPO_ROOT``: the repository root (where ``app.py`` lives).
- ``find_chromium()``: path of a Chromium/Chrome executable, or ``None``.
- ``require_browser()``: Playwright's ``sync_api`` module, or a skip with the reason (module-level too).
- ``CHROMIUM_ARGS``: launch arguments that work in containers and offline machines.
- ``free_port()``: a free TCP port on 127.0.0.1.
- ``streamlit_server(app="app.py", port=None, timeout=60, cwd=None)``: context manager
  that runs ``streamlit run`` from the repo root and yields the base URL (a ``str``
  subclass, ``ServerURL``, whose ``.output()`` is the server's log tail) once
  ``/_stcore/health`` answers; stops the server (terminate, then kill) on exit.
- ``launch_chromium(playwright)``: launches the found Chromium with ``CHROMIUM_ARGS``.
- ``wait_for_app_idle(page)``: waits until the script run has finished and the page has
  rendered (no lazy-loading placeholders left).
- ``wait_for_charts(page)``: waits until at least one Vega-Lite chart has drawn; returns
  how many charts have drawn (0 on timeout).
- ``wait_for_all_charts(page)``: waits until every chart has drawn; ``(drawn, total)``.
- ``count_drawn_charts(page)``: how many charts have drawn right now.
- ``discover_pages(page)``: the navigation links as ``[(label, absolute_href), ...]``.
- ``page_slug(label, href)``: a file-name-safe slug for a page.
- ``with_query(url, query)``: ``url`` with a query string appended.

Presenter mode and the step-through page:

- ``watch_for_page_not_found(context)``: from now on, every page of the browser context records
  whether Streamlit's "Page not found" dialog ever appeared (even if it was closed again);
  ``page_not_found_seen(page)`` returns the recorded texts (``[]`` when none appeared).
- ``box(page, selector)``: the first visible element's bounding box (``dict`` with left, top,
  right, bottom, width, height) or ``None``.
- ``hit_by_a_click(page, selector)``: whether a click on the middle of that element reaches it (nothing
  such as a fixed header lies over it).
- ``chart_boxes(page, within="")``: the boxes of every chart, each widened to its drawn SVG/canvas.
- ``stage_title(page)``: the text the stage selector shows; ``stage_in_url(page)``: ``?step=``.
- ``press_key(page, key)`` / ``click_stage_button(page, "next" | "back")``: move one stage with a
  shortcut key (focus on the page body) or a click, and wait until the move has been drawn.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

REPO_ROOT = Path(__file__).resolve().parent.parent

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # A headless window still builds its address bar's suggestion popup, a web page of its own: about 0.9 CPU-seconds
    # for every page a test opens, a quarter of Chromium's work in the browser tests. A second --disable-features
    # replaces Playwright's, so its list comes first.
    "--disable-features=" + ",".join([
        "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
        "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
        "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect", "OptimizationHints",
        "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
    ]),
]

VIEWPORT = {"width": 1280, "height": 720}

# Selectors (Streamlit 1.67 test ids).
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
STATUS_WIDGET = '[data-testid="stStatusWidget"]'
EXCEPTION = '[data-testid="stException"]'
MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebar"]'
CHART = '[data-testid="stVegaLiteChart"]'
# Streamlit 1.67 puts the ``vega-embed`` class on the chart element itself; older releases
# nest a ``.vega-embed`` div inside it. Accept both.
DRAWN_CHART = ", ".join(
    f"{CHART}{embed} {mark}" for embed in (".vega-embed", " .vega-embed") for mark in ("svg", "canvas")
)
NAV_LINKS = (
    '[data-testid="stSidebarNav"] a, '
    'a[data-testid="stSidebarNavLink"], '
    'a[data-testid="stTopNavLink"], '
    'a[data-testid="stTopNavDropdownLink"]'
)
NAV_VIEW_MORE = '[data-testid="stSidebarNavViewButton"]'

_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """Return a Chromium executable: ``$CHROMIUM_PATH`` if it exists, else the first of
    chromium / chromium-browser / google-chrome on ``PATH``; ``None`` when there is none."""
    env = os.environ.get("CHROMIUM_PATH")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        found = shutil.which(env)
        if found:
            return found
    for name in _CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


NO_BROWSER = "needs Playwright and a Chromium (set CHROMIUM_PATH or put chromium on PATH)"
"""Why a browser test is skipped when ``browser_available()`` is False."""


def browser_available() -> bool:
    """Whether a browser test can run here: a Chromium and Playwright's Python package."""
    import importlib.util

    try:
        return find_chromium() is not None and importlib.util.find_spec("playwright.sync_api") is not None
    except ImportError:  # no playwright package at all
        return False


def require_browser():
    """Playwright's sync API; else skip, with the reason, the test that asks (or, called at import, its module)."""
    import pytest

    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install playwright; it drives the system "
                                          "Chromium)")
    if find_chromium() is None:
        pytest.skip("no Chromium found: set CHROMIUM_PATH or install chromium / chromium-browser / google-chrome on "
                    "PATH", allow_module_level=True)
    return sync_api


def launch_chromium(playwright, headless: bool = True):
    """Launch the system Chromium through Playwright (``playwright install`` is not needed)."""
    path = find_chromium()
    if path is None:
        raise RuntimeError("no Chromium found: set CHROMIUM_PATH or put chromium on PATH")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=headless)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Terminate ``proc``; kill it if it has not exited after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class ServerURL(str):
    """The base URL of a running app (a plain ``str``) that can also show the server's output.

    ``url.port`` is the port; ``url.output(max_chars)`` returns the tail of what the
    ``streamlit run`` process printed so far (tracebacks of app exceptions land there, which
    matters because the app hides error details from the browser).
    """

    port: int
    log_path: Path

    def __new__(cls, base_url: str, port: int, log_path: Path) -> "ServerURL":
        obj = super().__new__(cls, base_url)
        obj.port = port
        obj.log_path = log_path
        return obj

    def output(self, max_chars: int = 4000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        return _ANSI.sub("", data.decode("utf-8", "replace"))[-max_chars:]


@contextlib.contextmanager
def streamlit_server(
    app: str = "app.py", port: int | None = None, timeout: float = 60.0, cwd: str | os.PathLike | None = None
) -> Iterator[ServerURL]:
    """Run ``streamlit run <app>`` from ``cwd`` (default: the repository root) and yield its
    base URL, ``http://127.0.0.1:<port>`` (a :class:`ServerURL`), once ``/_stcore/health``
    answers (at most ``timeout`` seconds). The server is stopped (terminate, then kill) on exit.
    Raises ``RuntimeError`` with the server's output if it exits or never answers.
    """
    last_error: Exception | None = None
    for _attempt in range(3 if port is None else 1):  # retry if the free port got taken meanwhile
        chosen = port or free_port()
        fd, log_name = tempfile.mkstemp(prefix="streamlit-server-", suffix=".log")
        os.close(fd)
        url = ServerURL(f"http://127.0.0.1:{chosen}", chosen, Path(log_name))
        cmd = [
            sys.executable, "-m", "streamlit", "run", app,
            "--server.headless", "true",
            "--server.address", "127.0.0.1",
            "--server.port", str(chosen),
            "--browser.gatherUsageStats", "false",
            # No file watcher: a test server never reloads, and watching a clone with its virtual environment inside
            # overflowed inotify's queue while other tests wrote files, filling the log a failure message shows.
            "--server.fileWatcherType", "none",
        ]
        # Plain (not Rich) tracebacks keep the log readable in a test failure message.
        env = dict(os.environ, PYTHONUNBUFFERED="1", STREAMLIT_LOGGER_ENABLE_RICH="false")
        try:
            with open(log_name, "ab") as log:
                proc = subprocess.Popen(
                    cmd, cwd=cwd or REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env
                )
            try:
                deadline = time.monotonic() + timeout
                ready = False
                while time.monotonic() < deadline and proc.poll() is None:
                    if _healthy(url):
                        ready = True
                        break
                    time.sleep(0.25)
                if ready:
                    yield url
                    return
            finally:
                _stop(proc)
            output = url.output()
            state = f"exited with code {proc.returncode}" if proc.returncode not in (None, -15) else "did not answer"
            last_error = RuntimeError(
                f"streamlit server on port {chosen} {state} within {timeout:.0f}s; its output:\n{output}"
            )
            if "already in use" not in output.lower():
                break
        finally:
            with contextlib.suppress(OSError):
                os.unlink(log_name)
    assert last_error is not None
    raise last_error


def server_log(server) -> str:
    """The tail of a test server's output, to add to a failure message (the app hides tracebacks from the browser);
    "" when it printed nothing."""
    output = server.output(3000) if hasattr(server, "output") else ""
    return f"\n--- streamlit server output (tail) ---\n{output}" if output.strip() else ""


_IDLE_STATE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return {
        state: app ? app.getAttribute('data-test-script-state') : null,
        status: !!document.querySelector('[data-testid="stStatusWidget"]'),
        skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
        stale: document.querySelectorAll('[data-stale="true"]').length,
        progressUnread: !!document.querySelector('.st-key-progress_store') && window.__attentionProgressRead !== true,
    };
}"""

_IS_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stStatusWidget"]')
        && !document.querySelector('[data-testid="stSkeleton"]')
        && !document.querySelector('[data-stale="true"]')
        && (!document.querySelector('.st-key-progress_store') || window.__attentionProgressRead === true);
}"""


def wait_for_app_idle(page, timeout: float = 60_000, settle_ms: int = 300) -> None:
    """Wait until the app's script run has finished and the page has stopped changing.

    Idle means: ``stApp`` carries ``data-test-script-state="notRunning"``, no
    ``stStatusWidget`` is shown, no ``stSkeleton`` placeholder is left (Streamlit shows
    those while it lazy-loads an element's code, which on a first visit can take seconds
    *after* the run has finished), no element is marked stale, and the progress store, where the page has one,
    has read the browser's record (a stored record is reported once a page load, and that report reruns the
    page: a key pressed during that run was seen lost on a busy machine). The condition must hold again after
    ``settle_ms``, so a rerun requested just before (e.g. by a key press) is not mistaken for a finished one.
    ``timeout`` is in milliseconds; raises
    ``TimeoutError`` describing what was still pending.
    """
    deadline = time.monotonic() + timeout / 1000
    while True:
        remaining_ms = (deadline - time.monotonic()) * 1000
        try:
            page.wait_for_function(_IS_IDLE_JS, timeout=max(remaining_ms, 1))
        except Exception as exc:  # playwright's TimeoutError; not imported here on purpose
            if "timeout" not in str(exc).lower() and type(exc).__name__ != "TimeoutError":
                raise
            state = page.evaluate(_IDLE_STATE_JS)
            raise TimeoutError(
                f"app did not become idle within {timeout / 1000:.0f}s (script state {state['state']!r}, "
                f"status widget shown: {state['status']}, loading placeholders: {state['skeletons']}, "
                f"stale elements: {state['stale']}, progress store not read yet: {state['progressUnread']})"
            ) from None
        page.wait_for_timeout(settle_ms)
        if page.evaluate(_IS_IDLE_JS):
            return


def wait_for_charts(page, timeout: float = 15_000) -> int:
    """Wait (at most ``timeout`` ms) until a Vega-Lite chart has drawn its SVG or canvas.

    Returns the number of drawn charts; 0 if none appeared in time.
    """
    try:
        page.wait_for_selector(DRAWN_CHART, state="attached", timeout=timeout)
    except Exception:  # playwright's TimeoutError
        return 0
    return count_drawn_charts(page)


def wait_for_all_charts(page, timeout: float = 15_000) -> tuple[int, int]:
    """Wait (at most ``timeout`` ms) until every ``stVegaLiteChart`` has drawn.

    Returns ``(drawn, total)``; on timeout ``drawn < total``.
    """
    try:
        page.wait_for_function(
            """() => {
                const charts = Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'));
                return charts.every(c => c.querySelector('svg, canvas'));
            }""",
            timeout=timeout,
        )
    except Exception:  # playwright's TimeoutError
        pass
    return count_drawn_charts(page), page.locator(CHART).count()


def count_drawn_charts(page) -> int:
    """How many ``stVegaLiteChart`` elements contain a drawn SVG or canvas."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
              .filter(c => (c.matches('.vega-embed') && c.querySelector('svg, canvas'))
                           || c.querySelector('.vega-embed svg, .vega-embed canvas')).length"""
    )


def discover_pages(page) -> list[tuple[str, str]]:
    """The app's navigation links as ``[(label, absolute_href), ...]``, in nav order.

    Reads the sidebar navigation (``stSidebarNav`` / ``stSidebarNavLink``) and, if the app
    uses ``st.navigation(position="top")``, the top navigation links. Expands a collapsed
    "View N more" list first. Returns ``[]`` when the app has no navigation.
    """
    view_more = page.locator(NAV_VIEW_MORE)
    if view_more.count():
        text = (view_more.first.text_content() or "").lower()
        if "more" in text:
            view_more.first.click()
            page.wait_for_timeout(200)
    links = page.evaluate(
        """(sel) => Array.from(document.querySelectorAll(sel)).map(a => {
               // Streamlit 1.67 keeps the label in <span label="...">; otherwise skip icon
               // spans (emoji or Material icon ligatures) so only the label text remains.
               const labelled = a.querySelector('span[label]');
               if (labelled && labelled.getAttribute('label'))
                   return [labelled.getAttribute('label'), a.href];
               const spans = Array.from(a.querySelectorAll('span')).filter(
                   s => !s.closest('[data-testid="stIconMaterial"], [data-testid="stIconEmoji"]')
                        && !s.querySelector('span'));
               const text = spans.map(s => s.textContent).join(' ').trim();
               return [text || (a.innerText || a.textContent || '').trim(), a.href];
           })""",
        NAV_LINKS,
    )
    seen: set[str] = set()
    result: list[tuple[str, str]] = []
    for label, href in links:
        if not href or href in seen:
            continue
        seen.add(href)
        label = " ".join(label.split()) or href
        result.append((label, href))
    return result


def page_slug(label: str, href: str = "") -> str:
    """A lowercase, file-name-safe name for a page: the URL path if it has one, else the label."""
    path = urlsplit(href).path.strip("/") if href else ""
    base = path or label or "home"
    slug = re.sub(r"[^a-z0-9]+", "_", base.lower()).strip("_")
    return slug or "home"


def with_query(url: str, query: str | None) -> str:
    """Return ``url`` with ``query`` (``a=1&b=2``, a leading ``?`` is allowed) appended."""
    if not query:
        return url
    query = query.lstrip("?")
    parts = urlsplit(url)
    merged = f"{parts.query}&{query}" if parts.query else query
    return urlunsplit((parts.scheme, parts.netloc, parts.path, merged, parts.fragment))


# --- presenter mode and the step-through page ---------------------------------------------------

SLIDE = ".st-key-slide"
STAGE_SELECT = ".st-key-step input"
BACK_BUTTON = ".st-key-back button"
NEXT_BUTTON = ":is(.st-key-next, .st-key-next_page) button"  # on the last slide Next names the next page
DIALOG = '[role="dialog"], [data-testid="stDialog"]'
PAGE_NOT_FOUND = "Page not found"

# Runs in every document before the app's own code: records each time "Page not found" shows up.
_WATCH_NOT_FOUND_JS = """(() => {
    window.__pageNotFound = [];
    const check = () => {
        const body = document.body;
        if (body && body.textContent.includes('%s')) {
            const dialog = document.querySelector('[role="dialog"]');
            const text = (dialog ? dialog.innerText : body.innerText).slice(0, 300);
            if (!window.__pageNotFound.includes(text)) window.__pageNotFound.push(text);
        }
    };
    new MutationObserver(check).observe(document, {childList: true, subtree: true, characterData: true});
})();""" % PAGE_NOT_FOUND


def watch_for_page_not_found(context) -> None:
    """Make every page of the Playwright browser ``context`` record any "Page not found" dialog."""
    context.add_init_script(_WATCH_NOT_FOUND_JS)


def page_not_found_seen(page) -> list[str]:
    """Texts of the "Page not found" dialogs this page has shown so far, and of one shown right now."""
    seen = list(page.evaluate("() => window.__pageNotFound || []"))
    dialogs = page.locator(DIALOG).filter(has_text=PAGE_NOT_FOUND)
    seen += [dialogs.nth(i).inner_text() for i in range(dialogs.count())]
    return list(dict.fromkeys(" ".join(text.split()) for text in seen))


_BOX_JS = """(sel) => {
    const el = Array.from(document.querySelectorAll(sel)).find(e => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.height > 0;
    });
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height};
}"""

_CHART_BOXES_JS = """(sel) => Array.from(document.querySelectorAll(sel)).map(el => {
    // A chart's drawing may overflow its element: take the larger of the two.
    const boxes = [el, ...el.querySelectorAll('svg.marks, canvas.marks, .vega-embed > svg, .vega-embed > canvas')]
        .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
    if (!boxes.length) return null;
    const left = Math.min(...boxes.map(r => r.left)), right = Math.max(...boxes.map(r => r.right));
    const top = Math.min(...boxes.map(r => r.top)), bottom = Math.max(...boxes.map(r => r.bottom));
    return {left, top, right, bottom, width: right - left, height: bottom - top};
}).filter(b => b)"""


def box(page, selector: str) -> dict | None:
    """Bounding box (viewport coordinates) of the first visible element matching ``selector``."""
    return page.evaluate(_BOX_JS, selector)


def hit_by_a_click(page, selector: str) -> bool:
    """Whether the topmost element at the middle of the first visible ``selector`` match is inside it."""
    return page.evaluate(
        """(sel) => {
            const el = Array.from(document.querySelectorAll(sel)).find(e => e.getBoundingClientRect().width > 0);
            if (!el) return false;
            const r = el.getBoundingClientRect();
            const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return !!top && el.contains(top);
        }""",
        selector,
    )


def chart_boxes(page, within: str = "") -> list[dict]:
    """Boxes of every Vega-Lite chart (under ``within`` if given), each including its drawn SVG/canvas."""
    return page.evaluate(_CHART_BOXES_JS, f"{within} {CHART}".strip())


def stage_title(page) -> str:
    """The stage the selector shows, e.g. ``"6 · Softmax: attention weights"``."""
    return page.locator(STAGE_SELECT).first.input_value()


def stage_in_url(page) -> str | None:
    """The ``step`` query parameter of the page's current address (``None`` when absent)."""
    from urllib.parse import parse_qs

    values = parse_qs(urlsplit(page.url).query).get("step")
    return values[-1] if values else None


def _wait_for_stage_change(page, before: str, timeout: float) -> None:
    page.wait_for_function(
        "([sel, before]) => { const el = document.querySelector(sel); return el && el.value !== before; }",
        arg=[STAGE_SELECT, before], timeout=timeout,
    )
    wait_for_app_idle(page, timeout=timeout)
    wait_for_all_charts(page, timeout=timeout)


def press_key(page, key: str, timeout: float = 30_000) -> str:
    """Press ``key`` with the focus on the page body (not in an input); wait for the stage to change and the
    page to finish drawing. Returns the stage title now shown; raises a timeout if nothing changed."""
    before = stage_title(page)
    page.evaluate("() => { if (document.activeElement && document.activeElement !== document.body) "
                  "document.activeElement.blur(); }")
    page.keyboard.press(key)
    _wait_for_stage_change(page, before, timeout)
    return stage_title(page)


_VIEW_JS = f"""() => [location.href, document.querySelector({MAIN!r})?.scrollTop ?? null,
                       document.querySelector({STAGE_SELECT!r})?.value ?? null].join(" | ")"""


def press_and_wait_for_a_change(page, key: str, timeout: float = 15_000) -> bool:
    """Press ``key`` as the page has it (a clicker's key: the focus is left where it is); wait until the address, the
    main column's scroll or the stage shown changes, then until the app is idle. False when nothing changed within
    ``timeout`` ms (a key that did nothing: the caller's assertions say what was expected)."""
    before = page.evaluate(_VIEW_JS)
    page.keyboard.press(key)
    try:
        page.wait_for_function(f"(before) => ({_VIEW_JS})() !== before", arg=before, timeout=timeout)
    except Exception as exc:  # playwright's TimeoutError; not imported here on purpose
        if "timeout" not in str(exc).lower() and type(exc).__name__ != "TimeoutError":
            raise
        return False
    wait_for_app_idle(page)
    return True


def click_stage_button(page, which: str, timeout: float = 30_000) -> str:
    """Click the visible Back (``"back"``) or Next (``"next"``) button; wait as in ``press_key``."""
    before = stage_title(page)
    page.locator(BACK_BUTTON if which == "back" else NEXT_BUTTON).filter(visible=True).first.click()
    _wait_for_stage_change(page, before, timeout)
    return stage_title(page)
