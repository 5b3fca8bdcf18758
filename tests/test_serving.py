"""The server sends each message of a rerun at once: TCP_NODELAY on the socket Streamlit listens on."""

import asyncio
import os
import runpy
import socket
from pathlib import Path

import pytest

from attention_ui import serving

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="descriptors cannot be listed here (Windows)")


def nodelay(sock: socket.socket) -> bool:
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


def listening_like_streamlit() -> socket.socket:
    """A listening socket made as Streamlit makes its own: protocol number 0, so asyncio leaves Nagle on."""
    sock = socket.socket(family=socket.AF_INET)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_listening_socket_gets_nodelay_and_the_connections_it_accepts_inherit_it():
    with listening_like_streamlit() as server, socket.create_connection(server.getsockname()):
        before, _ = server.accept()
        with before:
            assert not nodelay(server) and not nodelay(before), "the defect: Nagle is on"
        assert serving.nodelay_on_listening_sockets() >= 1
        assert nodelay(server)
        with socket.create_connection(server.getsockname()) as second:
            accepted, _ = server.accept()
            with accepted:
                assert nodelay(accepted), "a connection accepted after the call has TCP_NODELAY"
                second.sendall(b"x")
                assert accepted.recv(1) == b"x", "the server's own descriptors stay open (only duplicates closed)"


def test_connected_sockets_are_left_alone():
    with listening_like_streamlit() as server, socket.create_connection(server.getsockname()) as client, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        serving.nodelay_on_listening_sockets()
        assert not nodelay(client) and nodelay(server)


def test_without_so_acceptconn_a_socket_with_no_peer_counts_as_listening(monkeypatch):
    """Platforms without SO_ACCEPTCONN: the listener (no peer) gets TCP_NODELAY, a connection does not."""
    monkeypatch.delattr(socket, "SO_ACCEPTCONN", raising=False)
    with listening_like_streamlit() as server, socket.create_connection(server.getsockname()) as client:
        assert serving.nodelay_on_listening_sockets() >= 1
        assert nodelay(server) and not nodelay(client)


def test_the_lifespan_sets_it_before_serving_and_never_stops_the_server(monkeypatch, caplog):
    async def serve_once():
        async with serving.lifespan(None):
            return "served"

    with listening_like_streamlit() as server:
        assert asyncio.run(serve_once()) == "served" and nodelay(server)

    def broken():
        raise OSError("no descriptors today")

    monkeypatch.setattr(serving, "nodelay_on_listening_sockets", broken)
    with caplog.at_level("WARNING"):
        assert asyncio.run(serve_once()) == "served"
    assert "TCP_NODELAY" in caplog.text


@pytest.mark.parametrize("entry", ["app.py", "deploy/streamlit_app.py"])
def test_both_entry_points_serve_the_app_made_for_streamlit_run(entry, monkeypatch):
    """`streamlit run` reads each entry point's source for an ``st.App`` (without running it); imported as it then
    imports them (not as __main__), both give it an st.App with serving.lifespan, turn off pages-folder routing
    and warm up once."""
    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web.server.app_discovery import discover_asgi_app

    from attention_ui import warm_up

    found = discover_asgi_app(ROOT / entry)
    assert found.is_asgi_app and found.app_name == "app", "streamlit run would run it as a plain script"
    warm_ups = []
    monkeypatch.setattr(warm_up, "warm_up", lambda: warm_ups.append(1) or 0.0)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)  # restored after the test
    namespace = runpy.run_path(str(ROOT / entry), run_name="entry_point")
    app = namespace["app"]
    assert isinstance(app, st.App)
    assert app._script_path == ROOT / entry and app._user_lifespan is serving.lifespan
    assert PagesManager.uses_pages_directory is False
    assert warm_ups == [1]
