"""A browserless Streamlit client: the websocket protocol the Streamlit frontend speaks.

A browser opening ``/Privacy_regions?eps0=0.2`` fetches the page's HTML and the script files
it names, calls ``/_stcore/health`` (which sets the ``_streamlit_xsrf`` cookie) and
``/_stcore/host-config``, then opens the websocket ``/_stcore/stream`` with the subprotocols
``["streamlit", <xsrf token>]``. Over it the frontend sends ``BackMsg`` protobufs and receives
``ForwardMsg`` protobufs (both shipped in ``streamlit.proto``):

- a run starts with ``BackMsg.rerun_script`` (a ``ClientState``: the query string, the page by
  name on the first run and by ``page_script_hash`` afterwards, every widget's current value, and
  the hashes of the large messages the client has cached, which the server then sends only as a
  ``ref_hash``);
- the server answers ``new_session``, ``navigation`` (the page's script hash), one ``delta`` per
  element (widgets carry their ``id``, default, and a ``value`` when the server sets one), and
  ends every run with ``script_finished`` (``FINISHED_SUCCESSFULLY``, or
  ``FINISHED_EARLY_FOR_RERUN`` when a newer rerun interrupted it).

A widget change is a new ``rerun_script`` with the changed value among all the others, as the
frontend's widget manager sends them; a URL-bound widget's new value also goes into the query
string, as the frontend writes it into the address bar. This module does exactly that over
``websocket-client``, with the page, health and host-config requests on a ``requests`` session
(so a cookie that a proxy in front of several servers sets for stickiness travels with the
websocket too).

The page's script and style files (61 of them with Streamlit 1.67) are fetched as a browser
fetches them: over up to six parallel connections, compressed as the server sends them, and
not decompressed: a browser spends its own CPU on that, while this generator runs every
session of a class in one process on the server's machine. Over ``requests`` (one file after
another, decompressed) these files cost the generator 1.2 ms of CPU each, 4.5 s for a class of
60, which is what made that class wait 7-9 s on an otherwise idle machine;
``geventhttpclient`` (Locust's own fast HTTP client) reads one for 0.1 ms. Not fetched: the
~36 further script chunks (7 MB, PlotlyChart.js alone 4.7 MB) that the frontend loads lazily
for the elements it draws; like the files above, they are static (nginx serves them). The files
a run names under ``/media/`` (the favicon, a download button's file), which the browser fetches
from the session's own server once it has drawn the page, are fetched after the run, untimed.

``ServerCPU`` reads a server process's own CPU time (user + system, with its children) before
and after an action, so the cost of one interaction is measured on the server, not guessed from
wall time.
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import gevent.pool
import psutil
import requests
import websocket
from geventhttpclient import HTTPClient
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from page_latency import nearby  # the same walk of inputs as the server-side latency script

XSRF_COOKIE = "_streamlit_xsrf"
BROWSER_CONNECTIONS = 6  # parallel HTTP/1.1 connections a browser opens to one host
ACCEPT_ENCODING = "gzip, deflate, br, zstd"  # what Chromium asks for
FIGURE = "plotly_chart"
SUCCESS = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
CHANGEABLE = ("text_input", "slider", "radio", "checkbox")
"""The widget kinds a load user changes (dpviz's inputs); others keep the frontend's default."""


class ProtocolError(RuntimeError):
    """The server broke off a run or answered outside the protocol."""


@dataclass
class Run:
    """One script run as the client saw it."""

    action: str
    seconds: float = 0.0  # from the click (an open: from loading the page's HTML) to script_finished
    first_figure_s: float | None = None
    http_s: float = 0.0  # of which loading the HTML and script files and connecting
    bytes: int = 0
    exceptions: list[str] = field(default_factory=list)
    server_cpu_s: float | None = None


@dataclass
class Widget:
    """A widget on the page and the value this client holds for it."""

    kind: str
    element: Any  # the widget's proto from the last delta that drew it
    state: WidgetState


def _initial_state(kind: str, el: Any) -> WidgetState:
    """The value the frontend registers when it first draws a widget."""
    state = WidgetState(id=el.id)
    if kind == "text_input":
        state.string_value = el.value if el.set_value else el.default
    elif kind == "checkbox":
        state.bool_value = el.value if el.set_value else el.default
    elif kind == "radio":
        state.string_value = el.raw_value if el.set_value else el.options[el.default]
    elif kind == "slider":  # select_slider: the options' labels
        indices = el.value if el.set_value else el.default
        labels = list(el.raw_value) or [el.options[int(i)] for i in indices]
        state.string_array_value.data.extend(labels)
    return state


def _url_text(w: Widget) -> str | None:
    """How the frontend writes a URL-bound widget's value into the query string; None for
    the default (which the frontend leaves out of the URL)."""
    el, s = w.element, w.state
    if w.kind == "text_input":
        return None if s.string_value == el.default else s.string_value
    if w.kind == "checkbox":
        return None if s.bool_value == el.default else str(s.bool_value).lower()
    if w.kind == "radio":
        return None if s.string_value == el.options[el.default] else s.string_value
    value = s.string_array_value.data[0]
    return None if value == el.options[int(el.default[0])] else value


class Session:
    """One browser tab: an HTTP session and one websocket, opened by ``open``."""

    def __init__(self, base: str, *, timeout: float = 180.0, assets: bool = True) -> None:
        self.base = base.rstrip("/")
        self.timeout = timeout
        self.assets = assets
        self.http = requests.Session()
        self.http.trust_env = False  # the server under test directly, never a proxy from the environment
        self.ws: websocket.WebSocket | None = None
        self.page_name = ""
        self.page_hash = ""
        self.query: dict[str, str] = {}
        self.widgets: dict[str, Widget] = {}
        self.cached: set[str] = set()
        self.media: dict[str, bool] = {}  # a /media/ URL the page named → fetched already

    # -- HTTP and the websocket ------------------------------------------------------------
    def _get(self, path: str) -> requests.Response:
        response = self.http.get(f"{self.base}/{path.lstrip('/')}", timeout=self.timeout)
        response.raise_for_status()
        return response

    def _fetch_assets(self, refs: Iterable[str]) -> int:
        """Fetch the page's script and style files as a browser does (see the module's
        docstring); the bytes that came over the wire."""
        prefix = urlsplit(self.base).path + "/"
        client = HTTPClient.from_url(self.base, concurrency=BROWSER_CONNECTIONS,
                                     connection_timeout=self.timeout, network_timeout=self.timeout)

        def fetch(ref: str) -> int:
            response = client.get(prefix + ref, headers={"Accept-Encoding": ACCEPT_ENCODING})
            try:
                if response.status_code != 200:
                    raise ProtocolError(f"{ref}: HTTP {response.status_code}")
                return len(response.read())
            finally:
                response.release()

        try:
            return sum(gevent.pool.Pool(BROWSER_CONNECTIONS).imap_unordered(fetch, refs))
        finally:
            client.close()

    def _connect(self, link: str) -> None:
        html = self._get(link).text
        if self.assets:  # the script and style files the page names (the browser caches them)
            self._fetch_assets(dict.fromkeys(re.findall(r'(?:src|href)="\./(static/[^"]+)"', html)))
        self._get("_stcore/health")
        self._get("_stcore/host-config")
        cookies = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())
        xsrf = self.http.cookies.get(XSRF_COOKIE, "")
        url = "ws" + self.base[len("http"):] + "/_stcore/stream"
        self.ws = websocket.create_connection(
            url, timeout=self.timeout, subprotocols=["streamlit", xsrf] if xsrf else ["streamlit"],
            cookie=cookies or None, origin=self.base)

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
            self.ws = None

    # -- what a person does ----------------------------------------------------------------
    def open(self, link: str) -> Run:
        """Open ``Page_name?query`` as a new tab would: a new connection and a new session."""
        parts = urlsplit(link)
        t0 = time.perf_counter()
        self.close()  # a link typed or clicked from outside loads the page anew: a new session
        self._connect(link)
        self.page_name, self.page_hash = parts.path.strip("/"), ""
        self.query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.widgets, self.cached = {}, set()  # a new page has no widgets and no cached messages
        self.media = {}
        return self._fetch_media(self._run(f"open {self.page_name or 'home'}", (), t0))

    def change(self, rng: random.Random) -> Run:
        """Change one input as a person would: a number to a nearby one, another option."""
        changeable = [w for w in self.widgets.values() if w.kind in CHANGEABLE]
        if not changeable:
            raise ProtocolError(f"no input to change on {self.page_name or 'home'}")
        w = rng.choice(changeable)
        el, s = w.element, w.state
        if w.kind == "text_input":
            s.string_value = nearby(s.string_value, rng)
        elif w.kind == "checkbox":
            s.bool_value = not s.bool_value
        elif w.kind == "radio":
            s.string_value = rng.choice(list(el.options))
        else:
            s.string_array_value.data[:] = [rng.choice(list(el.options))]
        if el.query_param_key:
            text = _url_text(w)
            if text is None:
                self.query.pop(el.query_param_key, None)
            else:
                self.query[el.query_param_key] = text
        return self._fetch_media(
            self._run(f"change {self.page_name or 'home'}", [x.state for x in self.widgets.values()]))

    def _fetch_media(self, run: Run) -> Run:
        """Fetch the files the run named that the browser loads by itself once it has drawn the page
        (the favicon, a download button's file), from the session's own server; not timed."""
        for url, fetched in self.media.items():
            if not fetched:
                self._get(url)
                self.media[url] = True
        return run

    # -- one run -----------------------------------------------------------------------------
    def _run(self, action: str, states: Iterable[WidgetState], t0: float | None = None) -> Run:
        if self.ws is None:
            raise ProtocolError("not connected: open a page first")
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string = urlencode(self.query)
        if self.page_hash:
            rerun.page_script_hash = self.page_hash
        else:
            rerun.page_name = self.page_name
        rerun.widget_states.widgets.extend(states)
        rerun.cached_message_hashes.extend(sorted(self.cached))
        run = Run(action)
        sent = time.perf_counter()
        t0 = sent if t0 is None else t0
        run.http_s = sent - t0
        self.ws.send_binary(msg.SerializeToString())
        seen: dict[str, Widget] = {}
        while True:
            data = self.ws.recv()
            if not isinstance(data, bytes) or not data:
                raise ProtocolError(f"{action}: the server closed the stream")
            run.bytes += len(data)
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            kind = fwd.WhichOneof("type")
            if fwd.metadata.cacheable and fwd.hash:
                self.cached.add(fwd.hash)
            if kind == "navigation":
                self.page_hash = fwd.navigation.page_script_hash
            elif kind == "page_not_found":
                raise ProtocolError(f"{action}: page not found")
            elif kind == "page_config_changed" and fwd.page_config_changed.favicon.startswith("/media/"):
                self.media.setdefault(fwd.page_config_changed.favicon, False)
            elif kind == "page_info_changed":
                self.query = dict(parse_qsl(fwd.page_info_changed.query_string, keep_blank_values=True))
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._element(fwd.delta.new_element, run, seen, t0)
            elif kind == "ref_hash" and run.first_figure_s is None:
                run.first_figure_s = time.perf_counter() - t0  # a cached element, likely a figure
            elif kind == "script_finished":
                if fwd.script_finished not in SUCCESS:
                    raise ProtocolError(f"{action}: script ended with status {fwd.script_finished}")
                run.seconds = time.perf_counter() - t0
                self.widgets = seen
                return run

    def _element(self, element: Any, run: Run, seen: dict[str, Widget], t0: float) -> None:
        kind = element.WhichOneof("type")
        el = getattr(element, kind)
        if kind == FIGURE and run.first_figure_s is None:
            run.first_figure_s = time.perf_counter() - t0
        if kind == "download_button" and el.url.startswith("/media/"):
            self.media.setdefault(el.url, False)
        if kind == "exception":
            run.exceptions.append(f"{el.type}: {el.message}"[:200])
        widget_id = getattr(el, "id", "") if kind in CHANGEABLE else ""
        if not widget_id:
            return
        old = self.widgets.get(widget_id)
        if old is None or getattr(el, "set_value", False):
            seen[widget_id] = Widget(kind, el, _initial_state(kind, el))
        else:
            seen[widget_id] = Widget(kind, el, old.state)


class ServerCPU:
    """CPU seconds (user + system) used so far by server processes and their children."""

    def __init__(self, pids: Iterable[int]) -> None:
        self.processes = [psutil.Process(pid) for pid in pids]

    def seconds(self) -> float:
        total = 0.0
        for p in self.processes:
            for q in (p, *p.children(recursive=True)):
                try:
                    t = q.cpu_times()
                except psutil.NoSuchProcess:
                    continue
                total += t.user + t.system
        return total

    def measure(self, action: Any) -> Run:
        """Run ``action()`` (returning a ``Run``) and charge it the server CPU it took.

        Exact only while no other client is using the server (``cpu_per_action.py``)."""
        before = self.seconds()
        run = action()
        run.server_cpu_s = self.seconds() - before
        return run
