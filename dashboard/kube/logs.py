"""Reading container logs: the one per-request API read of the dashboard.

Pages never call the API, except to read logs: they are too large and too many to cache. Every read
goes through the process's ``KubeClient`` (its connection and credentials) with ``timestamps=true``
(so a Job's pods can be merged by time), a byte limit (``limitBytes``) and a read timeout, and holds
one of a fixed number of slots (``LogSlots``): a burst of log pages cannot open unbounded
connections to the API server.

Shapes: ``read_pod_log(...) -> LogRead`` (lines oldest first; ``truncated`` when the byte limit
cut the answer); errors: ``KubeError`` (the API server's answer, e.g. 400 for a container waiting
to start, 403, 404), ``LogsBusy`` (no slot free within the wait). ``LogSlots.waiting_seconds()``
says how long the reads holding the slots have waited for the API server's answer.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import urllib3

from dashboard.kube.client import KubeClient, KubeError

# ANSI escape sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL/ST", and two-byte escapes):
# programs colour their output; the page shows the text, never the escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# The kubelet's timestamp prefix (RFC 3339 with nanoseconds) when timestamps=true.
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) ")


class LogsBusy(Exception):
    """Every log-reading slot of this process is taken."""


@dataclass(frozen=True)
class LogLine:
    """One line: ``at`` the kubelet's RFC 3339 timestamp ("" when the line has none), ``text``
    without ANSI escapes or the newline, ``source`` "pod/container" for merged Job logs."""

    at: str
    text: str
    source: str = ""

    @property
    def sort_key(self) -> tuple[str, str]:
        # RFC 3339 in UTC with a fixed number of fraction digits sorts as text.
        return (self.at, self.source)


@dataclass(frozen=True)
class LogRead:
    lines: list[LogLine]
    truncated: bool


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def parse_lines(data: bytes, source: str = "") -> list[LogLine]:
    """Split a log answer into lines, separating the timestamp and removing ANSI escapes. Bytes that
    are not UTF-8 become U+FFFD."""
    out = []
    for raw in data.decode("utf-8", "replace").split("\n"):
        if not raw:
            continue
        raw = raw.removesuffix("\r")
        match = _STAMP.match(raw)
        at, text = (match.group(1), raw[match.end() :]) if match else ("", raw)
        out.append(LogLine(at, strip_ansi(text), source))
    return out


class LogHold:
    """One slot in use: ``answered()`` records that the API server has answered the read (its
    response headers arrived), so the read is no longer waiting for it."""

    def __init__(self) -> None:
        self.taken = time.monotonic()
        self.waiting = True

    def answered(self) -> None:
        self.waiting = False


class LogSlots:
    """At most ``limit`` log reads at once in this process; ``take(wait)`` raises LogsBusy after
    ``wait`` seconds without a free slot, else yields the slot's LogHold."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._sem = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._holds: set[LogHold] = set()

    @contextmanager
    def take(self, wait: float = 0.5) -> Iterator[LogHold]:
        if not self._sem.acquire(timeout=wait):
            raise LogsBusy(f"all {self.limit} log reads of this process are in use")
        hold = LogHold()
        with self._lock:
            self._holds.add(hold)
        try:
            yield hold
        finally:
            with self._lock:
                self._holds.discard(hold)
            self._sem.release()

    def waiting_seconds(self) -> list[float]:
        """Seconds each slot in use has waited for the API server's answer, longest first; slots
        whose read was answered are left out."""
        now = time.monotonic()
        with self._lock:
            return sorted((now - h.taken for h in self._holds if h.waiting), reverse=True)


def read_pod_log(
    client: KubeClient,
    namespace: str,
    pod: str,
    *,
    container: str,
    previous: bool = False,
    tail_lines: int | None = None,
    since_time: str = "",
    max_bytes: int,
    timeout: float,
    answered: Callable[[], None] | None = None,
) -> LogRead:
    """GET /api/v1/namespaces/{namespace}/pods/{pod}/log for one container, at most ``max_bytes``
    (the API server cuts at ``limitBytes``; a cut line is dropped). ``since_time`` is RFC 3339
    (whole seconds are what the API honours). ``timeout``: seconds for connecting and for each read.
    ``answered()`` is called once the API server's response headers arrive (e.g. LogHold.answered)."""
    query: list[tuple[str, Any]] = [("container", container), ("timestamps", "true")]
    if previous:
        query.append(("previous", "true"))
    if tail_lines is not None:
        query.append(("tailLines", str(tail_lines)))
    if since_time:
        query.append(("sinceTime", since_time))
    query.append(("limitBytes", str(max_bytes + 1)))
    path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
    raw = client._request(path, query, (timeout, timeout))
    if answered is not None:
        answered()
    try:
        data = raw.read(max_bytes + 1)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise KubeError(0, type(exc).__name__, str(exc) or "log read failed") from exc
    finally:
        raw.release_conn()
    truncated = len(data) > max_bytes
    if truncated:
        data = data[:max_bytes]
        data = data[: data.rfind(b"\n") + 1]
    return LogRead(parse_lines(data, f"{pod}/{container}"), truncated)
