"""A browserless Streamlit client: one session over the app's websocket, in protobuf messages.

    session = StreamlitSession(port)
    opened = session.open(page_name="step-through", query_string="step=1")   # -> RunResult
    clicked = session.click("Next")                                          # press a button by label
    again = session.rerun()                                                  # the whole page, nothing changed
    session.set_number("Seed", 7)                                            # a number_input's new value
    session.close()

It speaks what the browser speaks: connect to ``ws://HOST:PORT/_stcore/stream`` with the
subprotocol ``streamlit``; each run is a ``BackMsg.rerun_script`` (a ``ClientState`` holding the
query string, the page and any changed widget states); the server answers with ``ForwardMsg``s
until ``script_finished``. A button inside an ``st.fragment`` is pressed as the browser presses it:
a rerun of that fragment only. Time per run is measured from sending the message to the run's
``script_finished``: server time, not drawing time.

Plain blocking sockets (websocket-client), so it runs as-is in a script and cooperatively
under gevent (Locust monkey-patches the socket module).
"""

from __future__ import annotations

import select
import time
from dataclasses import dataclass, field

import websocket
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED_EARLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
COMPILE_ERROR = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_WITH_COMPILE_ERROR")
FRAGMENT_RUN = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_FRAGMENT_RUN_SUCCESSFULLY")
WIDGET_TYPES = ("button", "number_input", "slider", "selectbox", "radio", "text_input", "checkbox")


class SessionError(RuntimeError):
    """The run could not be completed: connection lost, timed out, or the page is not as expected."""


@dataclass
class Widget:
    kind: str  # element type, e.g. "button"
    id: str
    label: str
    fragment_id: str  # "" outside a fragment
    disabled: bool


@dataclass
class RunResult:
    """What one run sent back. seconds: send -> script_finished."""

    seconds: float
    elements: list[str] = field(default_factory=list)  # element types in arrival order
    page_not_found: bool = False
    exceptions: list[str] = field(default_factory=list)
    status: int = 0

    def count(self, kind: str) -> int:
        return self.elements.count(kind)

    @property
    def ok(self) -> bool:
        return not self.exceptions and self.status != COMPILE_ERROR


class StreamlitSession:
    """One browser tab's worth of session, driven through the websocket protocol."""

    def __init__(self, port: int, host: str = "127.0.0.1", *, timeout: float = 120.0):
        self.url = f"ws://{host}:{port}/_stcore/stream"
        self.timeout = timeout
        self.ws: websocket.WebSocket | None = None
        self.page_name = ""
        self.query_string = ""
        self.page_script_hash = ""
        self.widgets: dict[str, Widget] = {}  # by widget id, from the latest runs

    # ------------------------------------------------------------ public

    def open(self, page_name: str = "", query_string: str = "") -> RunResult:
        """Connect and run the page as a pasted link would (``page_name`` is the page's url path)."""
        started = time.perf_counter()
        try:
            self.ws = websocket.create_connection(self.url, subprotocols=["streamlit"], timeout=self.timeout,
                                                  enable_multithread=False)
        except (OSError, websocket.WebSocketException) as error:
            raise SessionError(f"connect: {error}") from None
        self.page_name, self.query_string = page_name, query_string
        return self._run(self._client_state(), started)

    def click(self, label_prefix: str) -> RunResult:
        """Press the first enabled button whose label starts with ``label_prefix``."""
        button = self.find("button", label_prefix)
        if button.disabled:
            raise SessionError(f"the button {button.label!r} is disabled")
        return self._send(button, trigger_value=True)

    def set_number(self, label_prefix: str, value: float) -> RunResult:
        """Type a new value into a number input (a full rerun, as in the browser)."""
        return self._send(self.find("number_input", label_prefix), double_value=float(value))

    def set_text(self, label_prefix: str, value: str) -> RunResult:
        """Type into a text input and press Enter (a full rerun, as in the browser)."""
        return self._send(self.find("text_input", label_prefix), string_value=value)

    def rerun(self) -> RunResult:
        """Run the whole page again with nothing changed (what a browser's rerun does)."""
        return self._run(self._client_state())

    def idle_until(self, moment: float) -> None:
        """Wait until ``time.perf_counter()`` reaches ``moment`` the way an open browser tab waits: answering
        the server's keep-alive pings (it closes a websocket that leaves them unanswered for about a minute).
        Anything else that arrives meanwhile is dropped."""
        while self.ws is not None and (remaining := moment - time.perf_counter()) > 0:
            readable, _, _ = select.select([self.ws.sock], [], [], remaining)
            if readable:
                try:
                    self.ws.recv_data_frame(control_frame=True)  # one frame; a ping is answered inside
                except (OSError, websocket.WebSocketException) as error:
                    raise SessionError(f"connection while idle: {error}") from None

    def find(self, kind: str, label_prefix: str) -> Widget:
        for widget in self.widgets.values():
            if widget.kind == kind and widget.label.startswith(label_prefix):
                return widget
        raise SessionError(f"no {kind} labelled {label_prefix!r}… on the page")

    def has_enabled(self, kind: str, label_prefix: str) -> bool:
        try:
            return not self.find(kind, label_prefix).disabled
        except SessionError:
            return False

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except (OSError, websocket.WebSocketException):
                pass
            self.ws = None

    def __enter__(self) -> StreamlitSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ protocol

    def _send(self, widget: Widget, **value) -> RunResult:
        """Run the page (or the widget's fragment) with ``widget``'s new value, e.g. ``trigger_value=True``."""
        msg = self._client_state(fragment_id=widget.fragment_id)
        msg.rerun_script.widget_states.widgets.append(WidgetState(id=widget.id, **value))
        return self._run(msg)

    def _client_state(self, fragment_id: str = "") -> BackMsg:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_name = self.page_name
        state.page_script_hash = self.page_script_hash
        if fragment_id:
            state.fragment_id = fragment_id
        return msg

    def _run(self, msg: BackMsg, started: float | None = None) -> RunResult:
        if self.ws is None:
            raise SessionError("not connected")
        started = time.perf_counter() if started is None else started
        is_fragment_run = bool(msg.rerun_script.fragment_id)
        if not is_fragment_run:
            self.widgets = {}
        result = RunResult(seconds=0.0)
        try:
            self.ws.send_binary(msg.SerializeToString())
            while True:
                data = self.ws.recv()
                if not isinstance(data, bytes):
                    continue
                forward = ForwardMsg()
                forward.ParseFromString(data)
                if self._read(forward, result):
                    break
        except websocket.WebSocketTimeoutException:
            raise SessionError(f"no script_finished within {self.timeout:g} s") from None
        except (OSError, websocket.WebSocketException) as error:
            raise SessionError(f"connection: {error}") from None
        result.seconds = time.perf_counter() - started
        return result

    def _read(self, forward: ForwardMsg, result: RunResult) -> bool:
        """Take in one message; True when the run it belongs to has finished."""
        kind = forward.WhichOneof("type")
        if kind == "new_session":
            self.page_script_hash = forward.new_session.page_script_hash
        elif kind == "navigation":  # the page that actually runs (st.navigation): later reruns stay on it
            self.page_script_hash = forward.navigation.page_script_hash
        elif kind == "page_not_found":
            result.page_not_found = True
        elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
            element = forward.delta.new_element
            element_type = element.WhichOneof("type")
            result.elements.append(element_type)
            if element_type == "exception":
                result.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            elif element_type in WIDGET_TYPES:
                proto = getattr(element, element_type)
                self.widgets[proto.id] = Widget(element_type, proto.id, proto.label, forward.delta.fragment_id,
                                                bool(getattr(proto, "disabled", False)))
        elif kind == "script_finished" and forward.script_finished != FINISHED_EARLY:
            result.status = forward.script_finished
            return True
        return False
