"""Start a Streamlit server for a benchmark: loopback only, a fresh process, always stopped afterwards.

    with streamlit_server("app.py") as server:        # waits until /_stcore/health answers
        server.port, server.rss_mb(), server.started_s
"""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]


def app_lessons() -> tuple[dict, str]:
    """The app's ``LESSONS`` (section -> [(file, title, icon, url path)]) and ``HOME``, read from app.py
    without running it."""
    values = {}
    for node in ast.parse((ROOT / "app.py").read_text()).body:
        if isinstance(node, ast.Assign) and node.targets[0].id in ("LESSONS", "HOME"):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values["LESSONS"], values["HOME"]

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0


@dataclass
class Server:
    script: str
    port: int
    process: subprocess.Popen
    log_path: Path
    launched_at: float  # time.perf_counter() when the process was started
    started_s: float  # process start -> health check answers

    def rss_mb(self) -> float:
        """Resident memory of the server process (and any children), in MB."""
        try:
            proc = psutil.Process(self.process.pid)
            procs = [proc, *proc.children(recursive=True)]
            return sum(p.memory_info().rss for p in procs) / 1e6
        except psutil.Error:
            return float("nan")

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as reply:
            return reply.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def streamlit_server(script: str, *, env: dict[str, str] | None = None, timeout: float = START_TIMEOUT_S,
                     health_poll: float = 0.1):
    """Run ``streamlit run <script>`` (relative to the project root) on 127.0.0.1 and a free port.

    ``health_poll`` seconds between health checks (a cold-start measurement polls often)."""
    port = free_port()
    log = tempfile.NamedTemporaryFile("wb", prefix="streamlit-", suffix=".log", delete=False)
    command = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
               "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               env={**os.environ, **(env or {})})
    server = Server(script, port, process, Path(log.name), started, 0.0)
    try:
        while not _healthy(port):
            if process.poll() is not None:
                raise RuntimeError(f"{script}: the server exited with {process.returncode}\n{server.log_tail()}")
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"{script}: no health answer within {timeout:g} s\n{server.log_tail()}")
            time.sleep(health_poll)
        server.started_s = time.perf_counter() - started
        yield server
    finally:
        _stop(process)
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOP_TIMEOUT_S)
