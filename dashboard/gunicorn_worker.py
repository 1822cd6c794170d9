"""The gunicorn worker class: gthread, with slow clients bounded and a fast 503 when saturated.

``worker_class = "dashboard.gunicorn_worker.GuardedThreadWorker"`` (deploy/gunicorn.conf.py). Three
changes to gunicorn's ThreadWorker, so that no client can hold the page threads hostage:

- The worker's main loop reads each request's line and headers itself, from non-blocking sockets
  (new and kept-alive connections alike), and hands a connection to the thread pool only once
  its headers are complete: a client trickling one header line every few seconds costs a buffer,
  not a page thread. An idle connection is closed after the keep-alive timeout; one whose
  headers are not complete ``VOLCANO_UI_HEADER_TIMEOUT`` seconds after its first byte is closed
  too. (With TLS the bytes cannot be read before the handshake: a thread reads them, and a
  watchdog cuts the connection at the same deadline.)
- When every thread is busy and ``VOLCANO_UI_MAX_QUEUED`` requests already wait for one, a further
  request is answered at once by the worker's main loop: ``503 Service Unavailable`` with
  ``Retry-After: 1``, instead of waiting seconds in the queue (static/dashboard/app.js backs off).
- With ``VOLCANO_UI_RENDER_SLOTS`` > 0, at most that many whole-page requests are in the thread pool at once
  (``PageGate``); more wait on the main loop, in arrival order, and count towards
  ``VOLCANO_UI_MAX_QUEUED``. A page costs tens of ms of interpreter time, a fragment poll about
  one: with every thread rendering a page, the informer threads and the polls each wait their
  turn for the interpreter lock among all of them. Fragment polls, static files and methods
  other than GET and HEAD pass the gate; so does a page whose request head is the same as one
  being rendered, since it waits for that rendering (dashboard/views/sharing.py) rather than
  rendering itself.
- A request carrying an identity header twice is refused (400).
- Once the cache is synced, and every ``GC_FREEZE_S`` seconds after, the objects alive (the
  cache's, mostly) move to the cyclic GC's permanent generation (``gc.freeze``, which costs no
  walk); every ``GC_FULL_EVERY``-th time everything is unfrozen and collected first, so that
  cycles frozen meanwhile (garbage since the last young collection, or in use then) are freed
  within the hour. The cache is millions of GC-tracked objects (50,000 pods, 100,000 Events):
  without this every collection of the oldest generation walks all of them, holding the
  interpreter lock for one to two seconds (measured in the benchmark's worker), which stalls
  every poll and informer. A collection before each freeze walked what the informers had kept
  in the five minutes since the last: 0.5 s, every five minutes, for every request in flight.

The number of connections a worker holds open is gunicorn's ``worker_connections``
(``VOLCANO_UI_WORKER_CONNECTIONS``). Probes never queue here: they have their own listener
(dashboard/health_server.py). These hooks use gunicorn's ThreadWorker internals (``enqueue_req``,
``accept``, ``on_client_socket_readable``, ``murder_pending``, ``handle``, ``handle_request``,
``TConn``); with a gunicorn that lacks them the worker logs a warning and behaves as the plain
gthread worker.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import selectors
import socket
import sys
import threading
import time
from collections import Counter, deque
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

from gunicorn import util  # type: ignore[import-untyped]
from gunicorn.workers import gthread  # type: ignore[import-untyped]

from dashboard.priority import REQUESTS
from volcano_ui.env import env_float, env_int

_BUSY_BODY = b"503: the dashboard is busy; retry soon.\n"
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 1\r\n"
    b"Cache-Control: no-store\r\n"
    b"Connection: close\r\n"
    b"Content-Length: %d\r\n"
    b"\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


def _duplicated_identity_header(headers: list[tuple[str, str]]) -> str:
    """The name of an identity header (VOLCANO_UI_PROXY_USER_HEADER, ..._GROUPS_HEADER) that
    ``headers`` (gunicorn's parsed (name, value) pairs) carry more than once, else ""."""
    from django.conf import settings

    if settings.VOLCANO_UI_ACCESS_MODE != "proxy":
        return ""
    watched = {
        settings.VOLCANO_UI_PROXY_USER_HEADER.upper().replace("_", "-"),
        settings.VOLCANO_UI_PROXY_GROUPS_HEADER.upper().replace("_", "-"),
    }
    seen: set[str] = set()
    for name, _ in headers:
        key = name.upper().replace("_", "-")
        if key in watched:
            if key in seen:
                return name
            seen.add(key)
    return ""


def limits_from_env() -> tuple[float, int]:
    """(header timeout in seconds, requests that may wait for a thread), from the environment.

    Raises ImproperlyConfigured for a bad value (deploy/gunicorn.conf.py checks them in the master).
    """
    header_timeout = env_float("VOLCANO_UI_HEADER_TIMEOUT", 5.0, minimum=0.5, maximum=300)
    max_queued = env_int("VOLCANO_UI_MAX_QUEUED", 128, minimum=0, maximum=10_000)
    return header_timeout, max_queued


# Request headers that differ between otherwise identical requests and that no page depends on.
_PER_REQUEST_HEADERS = frozenset(
    {b"x-request-id", b"x-correlation-id", b"traceparent", b"tracestate", b"x-amzn-trace-id", b"connection"}
)


def page_head_key(head: bytes, static_prefix: str = "/static/", fragment_param: str = "f") -> bytes | None:
    """The key of a whole-page request from its raw line and headers (``head``, as the client sent
    them), or None for a request that passes the gate: a fragment poll (an htmx GET naming
    ``?<fragment_param>=``), a static file, a method other than GET or HEAD, or a head that does
    not parse. Two requests with the same key are for the same page as the same viewer: the key is
    the head without the headers that vary per request (``_PER_REQUEST_HEADERS``)."""
    end = head.find(b"\r\n\r\n")
    lines = (head[:end] if end >= 0 else head).replace(b"\r\n", b"\n").split(b"\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[0] not in (b"GET", b"HEAD"):
        return None
    path, _, query = parts[1].decode("latin-1").partition("?")
    if path.startswith(static_prefix):
        return None
    kept = [lines[0]]
    htmx = False
    for line in lines[1:]:
        name = line.partition(b":")[0].strip().lower()
        if name == b"hx-request":
            htmx = True
        if name and name not in _PER_REQUEST_HEADERS:
            kept.append(line)
    if htmx and any(k == fragment_param for k, _ in parse_qsl(query, keep_blank_values=True)):
        return None
    return b"\n".join(kept)


class PageGate:
    """At most ``slots`` whole-page requests rendering at once (0: no bound); the others wait, in
    arrival order. Items are whatever the caller hands in (gunicorn's connections); used from
    the worker's main loop only, so it takes no lock.

    ``admit(key, item)`` says whether ``item`` goes now and whether it holds a slot: a request
    whose key is being rendered goes at once without one (it waits for that rendering). A slot
    holder's end is ``release(key)``, which returns the ``(item, key of its slot or None)`` pairs
    that go now."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.rendering: Counter[bytes] = Counter()  # key -> slots it holds
        self.waiting: deque[tuple[bytes, Any]] = deque()

    def admit(self, key: bytes, item: Any) -> tuple[bool, bool]:
        """(goes now, holds a slot)."""
        if self.slots <= 0 or key in self.rendering:
            return True, False
        if self.rendering.total() < self.slots:
            self.rendering[key] += 1
            return True, True
        self.waiting.append((key, item))
        return False, False

    def release(self, key: bytes) -> list[tuple[Any, bytes | None]]:
        self.rendering[key] -= 1
        if self.rendering[key] <= 0:
            del self.rendering[key]
        going: list[tuple[Any, bytes | None]] = []
        while self.waiting and self.rendering.total() < self.slots:
            key, item = self.waiting.popleft()
            self.rendering[key] += 1
            going.append((item, key))
            if any(entry[0] == key for entry in self.waiting):
                going.extend((rider, None) for k, rider in self.waiting if k == key)
                self.waiting = deque(entry for entry in self.waiting if entry[0] != key)
        return going


_SUPPORTED = all(
    hasattr(gthread.ThreadWorker, name)
    for name in (
        "enqueue_req",
        "accept",
        "on_client_socket_readable",
        "murder_pending",
        "handle",
        "handle_request",
    )
) and hasattr(gthread, "TConn")
#: The interpreter's thread switch interval in a worker, seconds (sys.setswitchinterval).
SWITCH_INTERVAL_S = 0.001
#: Seconds between two freezes of the cyclic GC's survivors (see the module docstring).
GC_FREEZE_S = 300.0
#: Every this many freezes, all is unfrozen and collected first (one full collection an hour).
GC_FULL_EVERY = 12
# The most a worker's main loop buffers of one request's line and headers; a longer head goes to
# a thread as it is, and gunicorn's parser applies its own limits (limit_request_line, ...).
_HEAD_LIMIT = 64 * 1024


def _cache_synced() -> bool:
    from dashboard.kube import get_cluster_cache

    stores = get_cluster_cache().stores()
    return bool(stores) and all(store.state.name == "synced" for store in stores)


def _freeze_survivors() -> None:
    """The worker's GC thread (module docstring): freeze once the cache is synced, then every
    ``GC_FREEZE_S`` seconds."""
    try:
        while gc.isenabled() and not _cache_synced():
            time.sleep(1.0)
    except Exception:  # no cluster cache in this process: nothing large to freeze
        return
    done = 0
    while gc.isenabled():
        freeze_survivors(full=done % GC_FULL_EVERY == 0)
        done += 1
        time.sleep(GC_FREEZE_S)


def freeze_survivors(full: bool) -> int:
    """Freeze every object the collector tracks; when ``full``, unfreeze and collect everything
    first. Returns how many objects are frozen."""
    if full:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class GuardedThreadWorker(gthread.ThreadWorker):
    """gunicorn's gthread worker with the bounds described in the module docstring."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout, self.max_queued = limits_from_env()
        self._guard_lock = threading.Lock()
        self._busy = 0
        self._reading: dict[Any, float] = {}  # gthread.TConn -> header deadline, in a thread
        self._guarded = _SUPPORTED
        # Plain HTTP/1.x only: TLS needs its handshake first, h2c prior knowledge reads a preface.
        self._read_early = self._guarded and not self.cfg.is_ssl and self.cfg.http2_cleartext == "off"
        self._unread: dict[Any, float] = {}  # gthread.TConn -> deadline, on the main loop only
        self._gate = PageGate(0)  # its slots are a Django setting, read in init_process
        self._static_prefix = "/static/"

    def init_process(self) -> None:
        # The main loop (and the health listener) do a little work between socket calls, and
        # every call gives up the interpreter lock; getting it back waits for the running thread
        # to yield it, up to a switch interval. CPython's 5 ms, times the threads rendering pages
        # and re-listing, made each accept or recv cost tens of ms under load; 1 ms keeps them
        # prompt for a few percent of CPU throughput.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        if not self._guarded:
            self.log.warning("this gunicorn's gthread worker lacks the hooks GuardedThreadWorker needs")
        else:
            from django.conf import settings

            self._gate = PageGate(settings.VOLCANO_UI_RENDER_SLOTS)
            self._static_prefix = "/" + settings.STATIC_URL.strip("/") + "/"

            threading.Thread(target=self._watchdog, name="header-watchdog", daemon=True).start()
            threading.Thread(target=_freeze_survivors, name="gc-freeze", daemon=True).start()
        super().init_process()

    # -- the main loop reads each request's headers; a thread gets the connection once they are in
    def accept(self, listener) -> None:  # noqa: ANN001 - gunicorn's listener socket
        if not self._read_early:
            super().accept(listener)
            return
        try:
            client_sock, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = gthread.TConn(self.cfg, client_sock, client_addr, listener.getsockname())  # non-blocking
        self._await_headers(conn, time.monotonic() + (self.cfg.keepalive or self.header_timeout))

    def on_client_socket_readable(self, conn, client) -> None:  # noqa: ANN001 - gthread.TConn, socket
        if not self._read_early:
            super().on_client_socket_readable(conn, client)
            return
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._await_headers(conn, time.monotonic() + self.header_timeout)

    def _await_headers(self, conn, deadline: float) -> None:  # noqa: ANN001
        conn.early = bytearray()
        self._unread[conn] = deadline
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_header_bytes, conn))

    def _on_header_bytes(self, conn, client) -> None:  # noqa: ANN001
        """The poller says ``client`` is readable: buffer what it sent; a complete head (or more
        than gunicorn's parser would take in one piece) goes to the thread pool."""
        try:
            data = client.recv(_HEAD_LIMIT)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop_unread(conn)
            return
        if not conn.early:  # the first byte starts the header clock
            self._unread[conn] = time.monotonic() + self.header_timeout
        searched_from = max(0, len(conn.early) - 3)
        conn.early += data
        head_done = any(conn.early.find(end, searched_from) >= 0 for end in (b"\r\n\r\n", b"\n\n"))
        if not head_done and len(conn.early) < _HEAD_LIMIT:
            return
        self.poller.unregister(client)
        del self._unread[conn]
        conn.data_ready = True
        key = page_head_key(bytes(conn.early), self._static_prefix) if self._gate.slots else None
        if key is None:
            self.enqueue_req(conn)
            return
        with self._guard_lock:
            saturated = self._busy + len(self._gate.waiting) >= self.cfg.threads + self.max_queued
        if saturated:
            self._refuse(conn)
            return
        goes, holds = self._gate.admit(key, conn)
        if goes:
            self._submit_page(conn, key if holds else None)

    def _submit_page(self, conn, slot: bytes | None) -> None:  # noqa: ANN001
        """``conn``'s page to the thread pool; ``slot``: the key of the gate slot it holds."""
        fs = self._submit(conn)
        if slot is None:
            return
        if fs is None:
            self._page_done(slot)
        else:
            fs.add_done_callback(lambda _fut: self.method_queue.defer(self._page_done, slot))

    def _page_done(self, slot: bytes) -> None:
        """On the main loop: a page holding a slot is answered; the next waiting pages go."""
        for conn, key in self._gate.release(slot):
            self._submit_page(conn, key)

    def _drop_unread(self, conn) -> None:  # noqa: ANN001
        with contextlib.suppress(OSError, KeyError, ValueError):
            self.poller.unregister(conn.sock)
        self._unread.pop(conn, None)
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        """Every turn of the main loop: close the connections past their idle or header deadline."""
        super().murder_pending()
        if self._unread:
            now = time.monotonic()
            for conn in [conn for conn, deadline in self._unread.items() if deadline < now]:
                self._drop_unread(conn)

    # -- a saturated worker answers 503 at once
    def enqueue_req(self, conn) -> None:  # noqa: ANN001 - gthread.TConn
        if not self._guarded:
            super().enqueue_req(conn)
            return
        self._submit(conn)

    def _submit(self, conn):  # noqa: ANN001, ANN202 - gthread.TConn; its Future, None if refused
        with self._guard_lock:
            saturated = self._busy >= self.cfg.threads + self.max_queued
            if not saturated:
                self._busy += 1
        if saturated and not self.cfg.is_ssl:
            self._refuse(conn)
            return None
        if saturated:
            with self._guard_lock:
                self._busy += 1
        # In flight from now until answered: the background threads give way to it meanwhile.
        REQUESTS.started()
        fs = self.tpool.submit(self.handle, conn)
        fs.add_done_callback(self._done)
        fs.add_done_callback(lambda fut: self.method_queue.defer(self.finish_request, conn, fut))
        return fs

    def _done(self, _future) -> None:  # noqa: ANN001
        with self._guard_lock:
            self._busy -= 1
        REQUESTS.finished()

    def _refuse(self, conn) -> None:  # noqa: ANN001
        """Answer 503 from the main loop without blocking it, then close."""
        sock = conn.sock
        try:
            sock.setblocking(False)
            # Read what the client sent, so closing does not reset the connection before it reads
            # the answer.
            with contextlib.suppress(OSError):
                sock.recv(65536)
            sock.send(BUSY_RESPONSE)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            self.nr_conns -= 1
            with contextlib.suppress(OSError):
                sock.close()

    # -- the request line and headers within header_timeout
    def handle(self, conn):  # noqa: ANN001, ANN201 - gthread's signature
        if not self._guarded:
            return super().handle(conn)
        early = getattr(conn, "early", None)
        if early:
            # The head the main loop read goes back in front of the socket, for gunicorn's parser.
            conn.early = bytearray()
            conn.init()
            conn.parser.unreader.unread(bytes(early))
        with self._guard_lock:
            self._reading[conn] = time.monotonic() + self.header_timeout
        try:
            return super().handle(conn)
        finally:
            with self._guard_lock:
                self._reading.pop(conn, None)

    def handle_request(self, req, conn):  # noqa: ANN001, ANN201
        with self._guard_lock:
            self._reading.pop(conn, None)  # the headers are in
        duplicated = _duplicated_identity_header(req.headers)
        if duplicated:
            # WSGI would join the copies with a comma: a client's own X-Forwarded-Groups next to
            # the proxy's would add groups. Such a request is refused, not guessed at.
            util.write_error(conn.sock, 400, "Bad Request", f"{duplicated} appears more than once.")
            return False
        return super().handle_request(req, conn)

    def _watchdog(self) -> None:
        while True:
            time.sleep(0.25)
            now = time.monotonic()
            with self._guard_lock:
                late = [conn for conn, deadline in self._reading.items() if deadline < now]
                for conn in late:
                    del self._reading[conn]
            for conn in late:
                # The thread's blocked read returns end-of-stream; gunicorn closes the connection.
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)
                self.log.debug("closed a connection whose headers took over %ss", self.header_timeout)
