"""The health listener: /healthz, /readyz and /metrics on a port of their own, in every worker.

Page requests are served by a bounded pool of threads; a probe queued behind them would time out
under load and the kubelet would restart a pod that is merely busy (dropping its cache, and any
permission answers it held). Each gunicorn worker therefore has a listener of its own
(deploy/gunicorn.conf.py ``post_fork``), whose answers say that *this worker* is running and what
its cache holds, whatever the page threads are doing. The workers share the port (SO_REUSEPORT),
so the kernel spreads probes and scrapes over them.

Under gunicorn (``start_process``) the listener is a small process forked from the worker before
its threads start. A thread of the worker would share the interpreter lock with eight rendering
threads and the informers, and a re-list of 100,000 Events next to them can keep it from the lock
for over a second (docs/benchmarks.md); a process has its own. The worker writes a *beacon* every
``BEAT_S`` into shared memory (the time and its /readyz answer); the process answers /healthz and
/readyz from it, and /healthz fails (503) once the beacon is older than ``stale_after`` seconds: a
worker that cannot run even that thread is not serving. /metrics needs the worker's registry: the
process relays it to a listener thread of the worker on an abstract Unix socket. The process ends
with its worker (PR_SET_PDEATHSIG, and a check of its parent every poll). ``start`` runs the same
listener as a thread of the calling process (tests, and where forking is not wanted).

One thread serves every connection from a selector, with non-blocking sockets: no thread is
started per probe. Slow or idle clients cannot hold it: every connection gets ``_TIMEOUT`` seconds
in total to send its request line and headers and read the answer, and at most
``_MAX_CONNECTIONS`` are open at once (more are closed at once). The answers are the same functions
as the page port's (dashboard/health.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import logging
import mmap
import os
import selectors
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus

log = logging.getLogger("volcano_ui.health")

_TIMEOUT = 2.0
_MAX_CONNECTIONS = 32
_MAX_HEADERS = 32
_MAX_HEAD = 8192  # request line and headers, bytes
_POLL_S = 0.25
# How often the worker writes its beacon, and how long a relayed /metrics may take (Prometheus'
# default scrape timeout is 10 s).
BEAT_S = 0.5
# /readyz turns 503 once the beacon is this old (or ``stale_after``, if shorter): a worker that has
# not run its beacon thread for 10 s is not answering pages either, and its Service should stop
# sending it users long before the liveness probe's allowance ends.
READY_STALE_S = 10.0
_RELAY_TIMEOUT = 10.0
# The header by which the health process tells the worker's relay listener the scraper's address.
_PEER_HEADER = "x-volcano-health-peer"


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


class Beacon:
    """Shared memory (an anonymous shared mapping, made before the fork) in which the worker
    writes (time.monotonic(), /readyz status, /readyz body) and its health process reads them.

    CLOCK_MONOTONIC is one clock for every process of the machine. A sequence number, odd while
    a write is under way, lets the reader retry a copy taken halfway through a write."""

    SIZE = 65536
    _SEQ = struct.Struct("<Q")
    _HEAD = struct.Struct("<dHI")  # time, status, body length

    def __init__(self) -> None:
        self._map = mmap.mmap(-1, self.SIZE)
        self._seq = 0

    def write(self, status: int, body: bytes, at: float | None = None) -> None:
        body = body[: self.SIZE - self._SEQ.size - self._HEAD.size]
        self._seq += 1
        self._SEQ.pack_into(self._map, 0, self._seq)
        self._HEAD.pack_into(
            self._map, self._SEQ.size, time.monotonic() if at is None else at, status, len(body)
        )
        start = self._SEQ.size + self._HEAD.size
        self._map[start : start + len(body)] = body
        self._seq += 1
        self._SEQ.pack_into(self._map, 0, self._seq)

    def read(self) -> tuple[float, int, bytes] | None:
        """(time written, status, body) of the last complete write; None before the first."""
        for _ in range(100):
            (before,) = self._SEQ.unpack_from(self._map, 0)
            if before == 0:
                return None
            if before % 2:
                continue
            at, status, length = self._HEAD.unpack_from(self._map, self._SEQ.size)
            start = self._SEQ.size + self._HEAD.size
            body = bytes(self._map[start : start + min(length, self.SIZE - start)])
            if self._SEQ.unpack_from(self._map, 0)[0] == before:
                return at, status, body
        return None


@dataclass
class _BeaconAnswers:
    """How the health process answers /healthz and /readyz from the worker's beacon."""

    beacon: Beacon
    stale_after: float
    started: float = field(default_factory=time.monotonic)

    def silent_for(self) -> float:
        """Seconds since the worker's last beat (since this process started, before the first)."""
        last = self.beacon.read()
        return time.monotonic() - (last[0] if last else self.started)

    def healthz(self, head_only: bool) -> bytes:
        silent = self.silent_for()
        if silent > self.stale_after:
            body = f"worker not responding for {silent:.0f} s\n".encode()
            return _response(503, body, "text/plain; charset=utf-8", {}, head_only)
        return _response(200, b"ok\n", "text/plain; charset=utf-8", {}, head_only)

    def readyz(self, head_only: bool) -> bytes:
        last = self.beacon.read()
        if last is None or time.monotonic() - last[0] > min(self.stale_after, READY_STALE_S):
            body = json.dumps({"ready": False, "waiting": ["worker"], "kinds": {}, "stale": []}).encode()
            return _response(503, body, "application/json", {}, head_only)
        return _response(last[1], last[2], "application/json", {}, head_only)


def _quick_answer(method: str, path: str, answers: _BeaconAnswers | None = None) -> bytes | None:
    """The answer that needs nothing but the request line (/healthz, 404, 405; /readyz from a
    beacon), else None."""
    head_only = method == "HEAD"
    if method not in ("GET", "HEAD"):
        return _response(405, b"405 Method Not Allowed\n", "text/plain", {"Allow": "GET, HEAD"}, head_only)
    if path == "/healthz":
        if answers is not None:
            return answers.healthz(head_only)
        # What dashboard.health.healthz answers, without building a request for it.
        return _response(200, b"ok\n", "text/plain; charset=utf-8", {}, head_only)
    if path == "/readyz" and answers is not None:
        return answers.readyz(head_only)
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


def _relay(address: str, method: str, path: str, headers: dict[str, str], peer: str) -> bytes:
    """Ask the worker's relay listener at ``address`` (abstract Unix socket) for ``path``; its
    answer as bytes, or a 503 when the worker does not answer within ``_RELAY_TIMEOUT``."""
    lines = [f"{method} {path} HTTP/1.1", f"{_PEER_HEADER}: {peer}"]
    if headers.get("authorization"):
        lines.append(f"authorization: {headers['authorization']}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    chunks = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(_RELAY_TIMEOUT)
            sock.connect(address)
            sock.sendall(request)
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    except OSError:
        return _response(
            503, b"503 Service Unavailable: the worker did not answer\n", "text/plain", {}, False
        )
    return b"".join(chunks)


def _tcp_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            # Every worker of the pod binds the same port.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(64)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _unix_socket(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address)
        sock.listen(16)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class HealthServer:
    """The listener on ``sock``; ``start()`` serves it from a daemon thread, ``serve()`` in the
    calling thread, ``stop()`` ends it.

    ``answers``: /healthz and /readyz from a worker's beacon (the health process); ``relay``: the
    address to which /metrics is relayed (idem); ``trust_peer_header``: the peer is the one the
    health process names (the worker's relay listener); ``alive``: serving ends when it says False.
    """

    def __init__(
        self,
        sock: socket.socket,
        *,
        answers: _BeaconAnswers | None = None,
        relay: str | None = None,
        trust_peer_header: bool = False,
        alive: Callable[[], bool] | None = None,
    ) -> None:
        self.socket = sock
        self.answers = answers
        self.relay = relay
        self.trust_peer_header = trust_peer_header
        self.alive = alive
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
            if self.alive is not None and not self.alive():
                return

    def _accept(self) -> None:
        try:
            sock, peer = self.socket.accept()
        except OSError:  # gone before it was accepted, or another worker took it
            return
        if len(self._conns) + self._in_threads >= _MAX_CONNECTIONS:
            sock.close()
            return
        sock.setblocking(False)
        address = peer[0] if isinstance(peer, tuple) else ""
        self._conns[sock] = _Conn(sock, address, time.monotonic() + _TIMEOUT)
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
                quick = _quick_answer(parsed[0], parsed[1], self.answers)
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

    def _slow_answer(self, method: str, path: str, headers: dict[str, str], peer: str) -> bytes:
        if self.relay is not None:
            return _relay(self.relay, method, path, headers, peer)
        if self.trust_peer_header:
            peer = headers.get(_PEER_HEADER, "")
        return _view_answer(method, path, headers, peer)

    def _answer_in_thread(self, conn: _Conn, parsed: tuple[str, str, dict[str, str]]) -> None:
        """/readyz and /metrics read the cache, whose stores a re-list may lock for a moment (or,
        relayed, wait for the worker): answered from a thread of their own, so that /healthz
        never waits behind them."""
        self._conns.pop(conn.sock, None)
        self._selector.unregister(conn.sock)
        with self._count_lock:
            self._in_threads += 1
        budget = _RELAY_TIMEOUT + _TIMEOUT if self.relay is not None else _TIMEOUT

        def answer() -> None:
            try:
                data = self._slow_answer(*parsed, conn.peer)
                conn.sock.settimeout(max(0.1, conn.deadline - _TIMEOUT + budget - time.monotonic()))
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
        self._thread = threading.Thread(target=self.serve_then_close, name="health-listener", daemon=True)
        self._thread.start()
        return self

    def serve_then_close(self) -> None:
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
    """Bind and serve the listener at ``bind`` (host:port) from a daemon thread of this process."""
    host, port = parse_bind(bind)
    return HealthServer(_tcp_socket(host, port)).start()


def _beat(beacon: Beacon, stopping: threading.Event) -> None:
    """The worker's beacon thread: its /readyz answer every BEAT_S."""
    from dashboard import health

    while True:
        try:
            status, body = health.readiness()
            beacon.write(status, json.dumps(body).encode())
        except Exception:  # a beat must go out even when the cache cannot be read
            log.exception("health beacon: readiness failed")
            beacon.write(500, b'{"ready": false, "waiting": ["readiness"], "kinds": {}, "stale": []}')
        if stopping.wait(BEAT_S):
            return


def _die_with_parent() -> None:
    """Ask Linux to send SIGTERM to this process when its parent exits (prctl PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)


def _health_process(server: HealthServer, parent: int, close_fds: list[int]) -> None:
    """The forked child: its own signal dispositions, none of the worker's listening sockets, and
    the listener until its parent is gone."""
    for fd in close_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    for name in (
        "SIGTERM",
        "SIGINT",
        "SIGQUIT",
        "SIGHUP",
        "SIGUSR1",
        "SIGUSR2",
        "SIGWINCH",
        "SIGCHLD",
        "SIGABRT",
    ):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    _die_with_parent()
    server.alive = lambda: os.getppid() == parent
    server.serve_then_close()


class HealthProcess:
    """The worker's side of ``start_process``: the child's pid and the port it serves;
    ``start_beacon()`` starts the beacon and relay threads, ``stop()`` ends all of them."""

    def __init__(self, pid: int, port: int, beacon: Beacon, relay_address: str) -> None:
        self.pid = pid
        self.port = port
        self._beacon = beacon
        self._relay_address = relay_address
        self._relay: HealthServer | None = None
        self._stopping = threading.Event()
        self.exit_status: int | None = None
        self._reaper = threading.Thread(target=self._reap, name="health-reaper", daemon=True)
        self._reaper.start()

    def start_beacon(self) -> HealthProcess:
        """Start writing the beacon and relaying /metrics (once the worker's cache is started:
        the first beat reads it). Until then /readyz answers 503 and /healthz 200 for
        ``stale_after`` seconds."""
        if self._relay is None:
            self._relay = HealthServer(_unix_socket(self._relay_address), trust_peer_header=True).start()
            threading.Thread(
                target=_beat, args=(self._beacon, self._stopping), name="health-beacon", daemon=True
            ).start()
        return self

    def _reap(self) -> None:
        with contextlib.suppress(ChildProcessError):
            _, status = os.waitpid(self.pid, 0)
            self.exit_status = status
            if not self._stopping.is_set():
                log.error(
                    "health listener process %d ended (status %d): probes of this worker fail",
                    self.pid,
                    status,
                )

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        self._reaper.join(5)
        if self._relay is not None:
            self._relay.stop()


def start_process(bind: str, stale_after: float, close_fds: Sequence[int] = ()) -> HealthProcess:
    """Fork the health listener process for ``bind`` (host:port); then call ``start_beacon()``
    on the result. Call it while this process has no other thread (a fork copies only the calling
    one), and as early as possible (the child shares the memory the worker has at that moment and
    needs none of Django). ``stale_after``: seconds without a beat after which /healthz answers
    503. ``close_fds``: descriptors the child closes (the page listeners)."""
    host, port = parse_bind(bind)
    listener = _tcp_socket(host, port)
    relay_address = f"\0volcano-ui-health-{os.getpid()}"
    beacon = Beacon()
    server = HealthServer(listener, answers=_BeaconAnswers(beacon, stale_after), relay=relay_address)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which never returns
        code = 0
        try:
            _health_process(server, parent, list(close_fds))
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    bound_port = listener.getsockname()[1]
    server._selector.close()
    listener.close()
    return HealthProcess(pid, bound_port, beacon, relay_address)
