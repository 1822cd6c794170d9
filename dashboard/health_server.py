"""The health listener: /healthz, /readyz and /metrics on a port of their own, in every worker.

Page requests are served by a bounded pool of threads; a probe queued behind them would time out
under load and the kubelet would restart a pod that is merely busy (dropping its cache, and any
permission answers it held). Each gunicorn worker therefore starts this small listener in a thread
of its own (deploy/gunicorn.conf.py ``post_fork``): its answers say that *this worker* is running
and what its cache holds, whatever the page threads are doing. The workers share the port
(SO_REUSEPORT), so the kernel spreads probes and scrapes over them.

Slow or idle clients cannot hold it: every connection gets ``_TIMEOUT`` seconds in total to send
its request line and headers, and at most ``_MAX_CONNECTIONS`` are served at once (more are
closed at once). The answers are the same functions as the page port's (dashboard/health.py).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger("volcano_ui.health")

_TIMEOUT = 2.0
_MAX_CONNECTIONS = 32
_MAX_HEADERS = 32


class _Handler(BaseHTTPRequestHandler):
    server: HealthServer
    protocol_version = "HTTP/1.1"
    server_version = "volcano-ui-health"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(_TIMEOUT)
        self._deadline = time.monotonic() + _TIMEOUT
        self.server.watch(self.connection, self._deadline)

    def finish(self) -> None:
        self.server.unwatch(self.connection)
        super().finish()

    def handle_one_request(self) -> None:
        # One request per connection: the kubelet and Prometheus open one per probe or scrape.
        self.close_connection = True
        try:
            self.raw_requestline = self.rfile.readline(4097)
            if not self.raw_requestline or len(self.raw_requestline) > 4096:
                return
            if not self.parse_request():
                return
            if time.monotonic() > self._deadline or len(self.headers) > _MAX_HEADERS:
                return
            if self.command not in ("GET", "HEAD"):
                self._send(405, b"405 Method Not Allowed\n", "text/plain", {"Allow": "GET, HEAD"})
                return
            self._answer()
        except (TimeoutError, OSError):
            return

    def _answer(self) -> None:
        from django.http import HttpRequest

        from dashboard import health

        views = {"/healthz": health.healthz, "/readyz": health.readyz, "/metrics": health.metrics}
        path = self.path.split("?", 1)[0]
        view = views.get(path)
        if view is None:
            self._send(404, b"404 Not Found\n", "text/plain")
            return
        request = HttpRequest()
        request.method = self.command
        request.path = request.path_info = path
        request.META = {"REMOTE_ADDR": self.client_address[0], "REQUEST_METHOD": self.command}
        if self.headers.get("Authorization"):
            request.META["HTTP_AUTHORIZATION"] = self.headers["Authorization"]
        try:
            response = view(request)
        except Exception:  # an answer of 500 says more to a probe than a dropped connection
            log.exception("health listener: %s failed", path)
            self._send(500, b"500 Internal Server Error\n", "text/plain")
            return
        headers = {k: v for k, v in response.items() if k.lower() != "content-type"}
        self._send(response.status_code, response.content, response["Content-Type"], headers)

    def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # probes every few seconds would drown the request log


class HealthServer(ThreadingHTTPServer):
    """The listener; ``start()`` serves it from a daemon thread, ``stop()`` ends it."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, host: str, port: int) -> None:
        self._slots = threading.BoundedSemaphore(_MAX_CONNECTIONS)
        self._lock = threading.Lock()
        self._deadlines: dict[socket.socket, float] = {}
        super().__init__((host, port), _Handler, bind_and_activate=False)
        if hasattr(socket, "SO_REUSEPORT"):
            # Every worker of the pod binds the same port.
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            self.server_bind()
            self.server_activate()
        except OSError:
            self.server_close()
            raise
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.server_address[1]

    def watch(self, conn: socket.socket, deadline: float) -> None:
        with self._lock:
            self._deadlines[conn] = deadline

    def unwatch(self, conn: socket.socket) -> None:
        with self._lock:
            self._deadlines.pop(conn, None)

    def service_actions(self) -> None:
        """Between accepts (at least every poll interval): cut connections past their deadline, so
        a client trickling its headers byte by byte cannot keep a slot."""
        now = time.monotonic()
        with self._lock:
            late = [conn for conn, deadline in self._deadlines.items() if deadline < now]
            for conn in late:
                del self._deadlines[conn]
        for conn in late:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def process_request(self, request, client_address) -> None:  # noqa: ANN001 - socketserver's
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:  # noqa: ANN001
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def start(self) -> HealthServer:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.25}, name="health-listener", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(5)


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
