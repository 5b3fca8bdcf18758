"""How the server sends: every message of a rerun leaves at once, not 40 ms later.

Streamlit binds its listening socket itself, as ``socket.socket(family)`` (protocol number 0), and
asyncio turns on TCP_NODELAY only for sockets whose protocol number says TCP. Without it, Nagle's
algorithm holds each small message of a rerun until the browser acknowledges the one before, and
browsers delay that acknowledgement (40 ms on Linux, up to 200 ms on Windows): every click waited
about 40 ms with the server idle. Connections accepted from a listening socket inherit its
TCP_NODELAY (Linux, macOS, the BSDs), so setting it on the listener once is enough.

``lifespan`` is given to the ``st.App`` of both entry points (app.py, and deploy/streamlit_app.py on
Community Cloud): it runs after the socket is bound and listening, before the first connection is accepted.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import socket
import stat

_log = logging.getLogger(__name__)
_FD_DIR = "/dev/fd"  # this process's open descriptors (Linux and macOS); absent on Windows


def _listening_tcp_socket(fd: int) -> socket.socket | None:
    """A duplicate of descriptor ``fd`` as a socket when it is a listening TCP socket, else None."""
    try:
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            return None
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:  # closed meanwhile, or not something a socket can wrap
        return None
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM and _listening(sock):
        return sock
    sock.close()
    return None


def _listening(sock: socket.socket) -> bool:
    if hasattr(socket, "SO_ACCEPTCONN"):
        return bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
    try:  # no SO_ACCEPTCONN: a stream socket without a peer (TCP_NODELAY does no harm on an idle one)
        sock.getpeername()
    except OSError:
        return True
    return False


def nodelay_on_listening_sockets() -> int:
    """Turn on TCP_NODELAY on every listening TCP socket of this process; returns how many.
    Where descriptors cannot be listed (Windows) it does nothing and returns 0."""
    try:
        fds = [int(name) for name in os.listdir(_FD_DIR)]
    except OSError:
        return 0
    count = 0
    for fd in fds:
        sock = _listening_tcp_socket(fd)
        if sock is None:
            continue
        with sock:  # closes the duplicate only; the server's own descriptor stays open
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        count += 1
    return count


@contextlib.asynccontextmanager
async def lifespan(_app):
    """The st.App lifespan: TCP_NODELAY on the server's socket before it accepts anyone. Never fatal."""
    try:
        _log.debug("TCP_NODELAY set on %d listening socket(s)", nodelay_on_listening_sockets())
    except Exception:  # noqa: BLE001  (a slower click is better than a server that does not start)
        _log.warning("could not set TCP_NODELAY; each click may wait for a delayed acknowledgement", exc_info=True)
    yield


@contextlib.contextmanager
def long_lived_objects():
    """For making what lives as long as the process (the warmed-up libraries, a loaded model): no garbage
    collection while it is made (imports make objects by the hundred thousand, each pass over them in vain),
    and afterwards every object alive is left out of later collections. Python's full collection walks every
    tracked object: with a model loaded that took about 0.2 s here, and every visitor's run waited for it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect()
        gc.freeze()


def prepare_server() -> None:
    """What both entry points do when `streamlit run` imports them (once, before the server answers its
    health check), next to making their ``st.App`` with ``lifespan``:

    - Streamlit would route the first visits as a legacy pages-folder app (because pages/ exists) until a
      run reaches ``st.navigation``, and answer their deep links with "Page not found"; this app always
      uses ``st.navigation``.
    - ``warm_up()``: no visitor meets a cold server; what it loads is left out of later garbage collections
      (``long_lived_objects``).

    The ``st.App`` itself must be made in the entry point's own source: `streamlit run` finds it by reading
    that file (an ``app = st.App(...)`` assignment), without running it."""
    from streamlit.runtime.pages_manager import PagesManager

    from .warm_up import warm_up

    PagesManager.uses_pages_directory = False
    with long_lived_objects():
        warm_up()
