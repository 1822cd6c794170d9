"""HTTP load over loopback: closed-loop clients and fixed-interval pollers.

Every client is a thread that owns one ``http.client.HTTPConnection`` and keeps it alive, as a
browser tab polling the dashboard does. Every loop is bounded both in request count and in time.
Latency is client-observed wall time from sending the request to the end of the body; the server's
own time comes from the ``Server-Timing: app;dur=<ms>`` header when the dashboard sends one.
"""

from __future__ import annotations

import http.client
import http.cookies
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.common import LOOPBACK, percentile


def server_time_ms(headers: http.client.HTTPMessage | dict, metric: str = "app") -> float | None:
    """A metric (``app``: wall, ``cpu``: thread CPU) of a Server-Timing header in ms, or None."""
    value = headers.get("Server-Timing") if headers is not None else None
    if not value:
        return None
    match = re.search(r"(?:^|,)\s*" + re.escape(metric) + r"\s*;[^,]*?dur=([0-9.]+)", value)
    return float(match.group(1)) if match else None


@dataclass
class Target:
    """What one client requests.

    ``path`` is called for every request (so a target may walk a list of objects); ``expect`` is
    the set of statuses that count as success (anything else is an error, and so is a refused or
    broken connection).
    """

    name: str
    path: Callable[[], str]
    expect: frozenset[int] = frozenset({200})
    headers: dict[str, str] = field(default_factory=dict)
    # Called with (status, body, headers, path) after each answer, e.g. to follow a fragment's version.
    observe: Callable[[int, bytes, object, str], None] | None = None

    @classmethod
    def fixed(
        cls, name: str, path: str, expect: set[int] | None = None, headers: dict | None = None
    ) -> Target:
        return cls(name, lambda: path, frozenset(expect or {200}), dict(headers or {}))

    @classmethod
    def cycle(
        cls, name: str, paths: list[str], expect: set[int] | None = None, headers: dict | None = None
    ) -> Target:
        """Walk ``paths`` round-robin. A path that answers 404 (its object was deleted by churn
        meanwhile) leaves the rotation; such 404s are counted in ``statuses``, not as errors."""
        lock = threading.Lock()
        state = {"i": 0}
        live = list(paths)

        def next_path() -> str:
            with lock:
                state["i"] = (state["i"] + 1) % len(live)
                return live[state["i"]]

        def observe(status: int, body: bytes, headers: object, path: str) -> None:
            if status == 404:
                with lock:
                    if path in live and len(live) > 1:
                        live.remove(path)

        return cls(name, next_path, frozenset(expect or {200}) | {404}, dict(headers or {}), observe)


@dataclass
class Result:
    """Samples of one phase. Latencies and server times in milliseconds."""

    name: str
    concurrency: int
    latencies_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    wall_s: float = 0.0
    nbytes: int = 0
    retries: int = 0  # GETs resent after a keep-alive race (see _Client.get)
    # (monotonic time at the end, status, error name, latency ms) of every request; status 0 and the
    # exception's name for a failed connection or a timeout: lets the fault run attribute errors
    # and latency to the fault that was active when they happened.
    timeline: list[tuple[float, int, str, float]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.latencies_ms)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def throughput(self) -> float:
        return self.count / self.wall_s if self.wall_s > 0 else 0.0

    def p(self, pct: float) -> float | None:
        return percentile(self.latencies_ms, pct)

    def server_p(self, pct: float) -> float | None:
        return percentile(self.server_ms, pct)

    def merge(self, other: Result) -> None:
        self.latencies_ms += other.latencies_ms
        self.server_ms += other.server_ms
        self.cpu_ms += other.cpu_ms
        self.statuses.update(other.statuses)
        self.errors.update(other.errors)
        self.nbytes += other.nbytes
        self.retries += other.retries
        self.timeline += other.timeline

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "concurrency": self.concurrency,
            "count": self.count,
            "errors": dict(self.errors),
            "statuses": {str(k): v for k, v in self.statuses.items()},
            "wall_s": round(self.wall_s, 3),
            "throughput_rps": round(self.throughput, 2),
            "p50_ms": self.p(50),
            "p95_ms": self.p(95),
            "p99_ms": self.p(99),
            "server_p50_ms": self.server_p(50),
            "server_p95_ms": self.server_p(95),
            "cpu_p50_ms": percentile(self.cpu_ms, 50),
            "keepalive_retries": self.retries,
            "mean_bytes": round(self.nbytes / self.count) if self.count else 0,
        }


class _Client:
    """One keep-alive connection and its samples (each thread owns one; no locking on the hot path).
    It keeps the cookies the dashboard sets (the CSRF cookie) and sends them back, as a tab does."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.conn: http.client.HTTPConnection | None = None
        self.result = Result("", 0)
        self.cookies: dict[str, str] = {}

    def _keep_cookies(self, headers: http.client.HTTPMessage) -> None:
        for value in headers.get_all("Set-Cookie") or ():
            jar = http.cookies.SimpleCookie()
            jar.load(value)
            for name, morsel in jar.items():
                self.cookies[name] = morsel.value

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def get(self, path: str, headers: dict[str, str], expect: frozenset[int]) -> tuple[int, bytes, object]:
        """One GET. Returns (status, body, headers); status 0 means the connection failed.

        A reused keep-alive connection that the server closed as idle just as the request went out
        fails with a reset or an empty answer; like browsers and urllib3, the GET is then sent once
        more on a fresh connection (counted in ``Result.retries``; the latency includes both).
        """
        reused = self.conn is not None
        conn = self._connection()
        if self.cookies:
            headers = {**headers, "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        start = time.perf_counter()
        try:
            try:
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                if not reused:
                    raise
                self.close()
                self.result.retries += 1
                conn = self._connection()
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            self.result.errors[f"{type(exc).__name__}"] += 1
            self.result.timeline.append(
                (time.monotonic(), 0, type(exc).__name__, (time.perf_counter() - start) * 1000.0)
            )
            return 0, b"", {}
        elapsed = (time.perf_counter() - start) * 1000.0
        self._keep_cookies(resp.headers)
        self.result.timeline.append((time.monotonic(), resp.status, "", elapsed))
        self.result.latencies_ms.append(elapsed)
        self.result.statuses[resp.status] += 1
        self.result.nbytes += len(body)
        server = server_time_ms(resp.headers)
        if server is not None:
            self.result.server_ms.append(server)
        cpu = server_time_ms(resp.headers, "cpu")
        if cpu is not None:
            self.result.cpu_ms.append(cpu)
        if resp.status not in expect:
            self.result.errors[f"HTTP {resp.status}"] += 1
        if resp.will_close:
            self.close()
        return resp.status, body, resp.headers


def closed_loop(
    target: Target,
    *,
    port: int,
    concurrency: int,
    max_requests: int,
    max_seconds: float,
    host: str = LOOPBACK,
    timeout: float = 30.0,
) -> Result:
    """``concurrency`` clients, each sending its next request as soon as the previous one ended.

    Stops after ``max_requests`` in total or ``max_seconds``, whichever comes first.
    """
    if host not in (LOOPBACK, "localhost", "::1"):
        raise ValueError("load is sent to loopback only")
    lock = threading.Lock()
    issued = {"n": 0}
    barrier = threading.Barrier(concurrency + 1)
    clients = [_Client(host, port, timeout) for _ in range(concurrency)]
    stop_at: list[float] = []

    def work(client: _Client) -> None:
        barrier.wait()
        deadline = stop_at[0]
        while time.monotonic() < deadline:
            with lock:
                if issued["n"] >= max_requests:
                    break
                issued["n"] += 1
            path = target.path()
            status, body, headers = client.get(path, target.headers, target.expect)
            if target.observe is not None and status:
                target.observe(status, body, headers, path)
        client.close()

    threads = [threading.Thread(target=work, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    stop_at.append(time.monotonic() + max_seconds)
    start = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join(max_seconds + timeout + 5)
    result = Result(target.name, concurrency, wall_s=time.perf_counter() - start)
    for client in clients:
        result.merge(client.result)
    return result


@dataclass
class PollState:
    """Per-poller memory: e.g. the fragment version it last saw."""

    index: int
    data: dict = field(default_factory=dict)


def pollers(
    *,
    port: int,
    count: int,
    interval_s: float,
    duration_s: float,
    request: Callable[[PollState], tuple[str, dict[str, str], frozenset[int]]],
    observe: Callable[[PollState, int, bytes, object], None] | None = None,
    host: str = LOOPBACK,
    timeout: float = 30.0,
    name: str = "pollers",
    on_tick: Callable[[float], None] | None = None,
    tick_s: float = 10.0,
    stop: threading.Event | None = None,
) -> Result:
    """``count`` pollers, each sending one request every ``interval_s`` for ``duration_s``.

    Starts are spread evenly over the first interval, as independent browser tabs would be. A
    poller whose request takes longer than the interval sends the next one right away (it never
    piles up more than one request). ``on_tick(elapsed_s)`` is called from the calling thread
    every ``tick_s`` so a caller can sample memory or the simulated server's stats meanwhile.
    Setting ``stop`` ends the run early.
    """
    if host not in (LOOPBACK, "localhost", "::1"):
        raise ValueError("load is sent to loopback only")
    max_per_poller = int(duration_s / interval_s) + 2
    stop = stop or threading.Event()
    start = time.monotonic()
    end = start + duration_s
    clients = [_Client(host, port, timeout) for _ in range(count)]
    rng = random.Random(0)
    offsets = [interval_s * i / count for i in range(count)]
    rng.shuffle(offsets)

    def work(i: int, client: _Client) -> None:
        state = PollState(i)
        next_at = start + offsets[i]
        for _ in range(max_per_poller):
            now = time.monotonic()
            if next_at > now and stop.wait(min(next_at - now, max(0.0, end - now))):
                break
            if time.monotonic() >= end or stop.is_set():
                break
            path, headers, expect = request(state)
            status, body, resp_headers = client.get(path, headers, expect)
            if observe is not None and status:
                observe(state, status, body, resp_headers)
            next_at += interval_s
        client.close()

    threads = [threading.Thread(target=work, args=(i, c), daemon=True) for i, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    if on_tick is not None:
        while time.monotonic() < end and not stop.is_set():
            stop.wait(min(tick_s, max(0.0, end - time.monotonic())))
            on_tick(time.monotonic() - start)
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()) + timeout + 5)
    result = Result(name, count, wall_s=time.monotonic() - start)
    for client in clients:
        result.merge(client.result)
    return result
