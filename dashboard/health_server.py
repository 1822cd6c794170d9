"""The health listener: /healthz, /readyz and /metrics on a port of their own, in every worker.

Page requests are served by a bounded pool of threads; a probe queued behind them would time out
under load and the kubelet would restart a pod that is merely busy (dropping its cache, and any
permission answers it held). Each gunicorn worker therefore starts this small listener in a thread
of its own (deploy/gunicorn.conf.py ``post_fork``): its answers say that *this worker* is running
and what its cache holds, whatever the page threads are doing. The workers share the port
(SO_REUSEPORT), so the kernel spreads probes and scrapes over them.

One thread serves every connection from a selector, with non-blocking sockets: no thread is
started per probe, and the thread runs little Python per answer. That matters because it shares
the interpreter lock with the page threads and the informers: each time it blocks on a socket it
must win the lock back, which under load (a re-list of 100,000 Events next to eight rendering
threads) costs up to a switch interval per competing thread. A thread started per connection and a
buffered reader need many such turns per probe (over a second at that load, docs/benchmarks.md);
a probe here needs a handful.

Slow or idle clients cannot hold it: every connection gets ``_TIMEOUT`` seconds in total to send
its request line and headers and read the answer, and at most ``_MAX_CONNECTIONS`` are open at
once (more are closed at once). The answers are the same functions as the page port's
(dashboard/health.py).
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus

log = logging.getLogger("volcano_ui.health")

_TIMEOUT = 2.0
_MAX_CONNECTIONS = 32
_MAX_HEADERS = 32
_MAX_HEAD = 8192  # request line and headers, bytes
_POLL_S = 0.25


@dataclass
class _Conn:
    sock: socket.socket
    peer: str
    deadline: float
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytes = b""


def _response(status: int, body: bytes, content_type: str, headers: dict[str, str], head_only: bool) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]] | None:
    """(method, path without query, headers with lower-case names) of a request head, or None
    when it is not an HTTP/1.x request or carries more than ``_MAX_HEADERS`` headers."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None
    fields = [line for line in lines[1:] if line]
    if len(fields) > _MAX_HEADERS:
        return None
    headers: dict[str, str] = {}
    for line in fields:
        name, sep, value = line.partition(":")
        if not sep:
            return None
        headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1].split("?", 1)[0], headers


def _quick_answer(method: str, path: str) -> bytes | None:
    """The answer that needs nothing but the request line (/healthz, 404, 405), else None."""
    head_only = method == "HEAD"
    if method not in ("GET", "HEAD"):
        return _response(405, b"405 Method Not Allowed\n", "text/plain", {"Allow": "GET, HEAD"}, head_only)
    if path == "/healthz":
        # What dashboard.health.healthz answers, without building a request for it.
        return _response(200, b"ok\n", "text/plain; charset=utf-8", {}, head_only)
    if path not in _VIEWS:
        return _response(404, b"404 Not Found\n", "text/plain", {}, head_only)
    return None


_VIEWS = ("/readyz", "/metrics")


def _view_answer(method: str, path: str, headers: dict[str, str], peer: str) -> bytes:
    """The answer of dashboard.health's view for ``path`` (one of ``_VIEWS``)."""
    from django.http import HttpRequest

    from dashboard import health

    head_only = method == "HEAD"
    view = health.readyz if path == "/readyz" else health.metrics

    request = HttpRequest()
    request.method = method
    request.path = request.path_info = path
    request.META = {"REMOTE_ADDR": peer, "REQUEST_METHOD": method}
    if headers.get("authorization"):
        request.META["HTTP_AUTHORIZATION"] = headers["authorization"]
    try:
        response = view(request)
    except Exception:  # an answer of 500 says more to a probe than a dropped connection
        log.exception("health listener: %s failed", path)
        return _response(500, b"500 Internal Server Error\n", "text/plain", {}, head_only)
    extra = {k: v for k, v in response.items() if k.lower() not in ("content-type", "content-length")}
    return _response(response.status_code, response.content, response["Content-Type"], extra, head_only)


class HealthServer:
    """The listener; ``start()`` serves it from a daemon thread, ``stop()`` ends it."""

    def __init__(self, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if hasattr(socket, "SO_REUSEPORT"):
                # Every worker of the pod binds the same port.
                self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            self.socket.bind((host, port))
            self.socket.listen(64)
            self.socket.setblocking(False)
        except OSError:
            self.socket.close()
            raise
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.socket, selectors.EVENT_READ)
        self._conns: dict[socket.socket, _Conn] = {}
        self._in_threads = 0  # connections answered by a thread of their own
        self._count_lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.socket.getsockname()[1]

    def serve(self) -> None:
        while not self._stopping.is_set():
            for key, events in self._selector.select(_POLL_S):
                if key.fileobj is self.socket:
                    self._accept()
                else:
                    conn = self._conns.get(key.fileobj)  # type: ignore[call-overload]
                    if conn is not None:
                        self._step(conn, events)
            self._cut_late()

    def _accept(self) -> None:
        try:
            sock, peer = self.socket.accept()
        except OSError:  # gone before it was accepted, or another worker took it
            return
        if len(self._conns) + self._in_threads >= _MAX_CONNECTIONS:
            sock.close()
            return
        sock.setblocking(False)
        self._conns[sock] = _Conn(sock, peer[0], time.monotonic() + _TIMEOUT)
        self._selector.register(sock, selectors.EVENT_READ)

    def _step(self, conn: _Conn, events: int) -> None:
        try:
            if events & selectors.EVENT_READ and not conn.outbox:
                data = conn.sock.recv(_MAX_HEAD)
                conn.inbox += data
                end = conn.inbox.find(b"\r\n\r\n")
                if not data or (end < 0 and len(conn.inbox) >= _MAX_HEAD):
                    self._close(conn)
                    return
                if end < 0:
                    return
                parsed = _parse_head(bytes(conn.inbox[:end]))
                if parsed is None:
                    self._close(conn)
                    return
                # One request per connection: the kubelet and Prometheus open one per probe or scrape.
                quick = _quick_answer(parsed[0], parsed[1])
                if quick is None:
                    self._answer_in_thread(conn, parsed)
                    return
                conn.outbox = quick
            if conn.outbox:
                sent = conn.sock.send(conn.outbox)
                conn.outbox = conn.outbox[sent:]
                if conn.outbox:
                    self._selector.modify(conn.sock, selectors.EVENT_WRITE)
                else:
                    self._close(conn)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)

    def _answer_in_thread(self, conn: _Conn, parsed: tuple[str, str, dict[str, str]]) -> None:
        """/readyz and /metrics read the cache, whose stores a re-list may lock for a moment:
        answered from a thread of their own, so that /healthz never waits behind them."""
        self._conns.pop(conn.sock, None)
        self._selector.unregister(conn.sock)
        with self._count_lock:
            self._in_threads += 1

        def answer() -> None:
            try:
                data = _view_answer(*parsed, conn.peer)
                conn.sock.settimeout(max(0.1, conn.deadline - time.monotonic()))
                conn.sock.sendall(data)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    conn.sock.close()
                with self._count_lock:
                    self._in_threads -= 1

        threading.Thread(target=answer, name="health-answer", daemon=True).start()

    def _cut_late(self) -> None:
        """Close connections past their deadline, so a client trickling its headers byte by byte
        (or not reading its answer) cannot keep a slot."""
        now = time.monotonic()
        for conn in [c for c in self._conns.values() if c.deadline < now]:
            self._close(conn)

    def _close(self, conn: _Conn) -> None:
        self._conns.pop(conn.sock, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn.sock)
        with contextlib.suppress(OSError):
            conn.sock.close()

    def start(self) -> HealthServer:
        self._thread = threading.Thread(target=self._serve_then_close, name="health-listener", daemon=True)
        self._thread.start()
        return self

    def _serve_then_close(self) -> None:
        try:
            self.serve()
        finally:
            for conn in list(self._conns.values()):
                self._close(conn)
            self._selector.close()
            self.socket.close()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
        else:
            self._selector.close()
            self.socket.close()


def parse_bind(value: str) -> tuple[str, int]:
    """``"host:port"`` (``[v6]:port`` for IPv6) -> (host, port). Raises ValueError."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{value!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


def start(bind: str) -> HealthServer:
    """Bind and serve the listener at ``bind`` (host:port) from a daemon thread."""
    host, port = parse_bind(bind)
    return HealthServer(host, port).start()
