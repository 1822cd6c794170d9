"""Requests first: the background threads give way, briefly, to requests in flight.

One Python thread runs at a time. A worker's informers apply every watch event (thousands a
minute under churn) and the history recorder turns each change into rows, on the same interpreter
as the request threads. While a poll waits for a thread that is applying events, its latency is
theirs. So each background step first calls ``REQUESTS.give_way()``: when a request is in flight
it waits until none is (an event set by the last one to finish), at most ``max_wait_s``, and in
each ``window_s`` at most ``share`` of it. Background work is delayed, never starved: under a
steady stream of requests it still gets at least ``1 - share`` of every window (the informers fall
behind by at most that, and catch up as soon as the requests pause).

The gunicorn worker (dashboard/gunicorn_worker.py) counts a request from when it is handed to the
thread pool until its response is written. Outside it (the test client, management commands)
nothing is counted and ``give_way`` returns at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

# A background step waits this long at most for the requests in flight to finish: a fragment poll
# takes about 1 ms, a page tens of ms (a page is not waited out, only its next turn for the lock).
MAX_WAIT_S = 0.005
# Of each window, background threads spend at most this share waiting.
SHARE = 0.5
WINDOW_S = 1.0


class RequestPriority:
    """Requests in flight, and the waits of background threads that give way to them."""

    def __init__(
        self,
        max_wait_s: float = MAX_WAIT_S,
        share: float = SHARE,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_wait_s = max_wait_s
        self.share = share
        self.window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight = 0
        self._idle = threading.Event()
        self._idle.set()
        self._window_start = clock()
        self._waited = 0.0  # in the current window
        self.waited_seconds = 0.0  # in total (a counter for /metrics)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def started(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._idle.clear()

    def finished(self) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            if self._in_flight == 0:
                self._idle.set()

    def give_way(self) -> float:
        """Wait while requests are in flight, within the bounds above; returns the seconds waited."""
        if self._idle.is_set():
            return 0.0
        now = self._clock()
        with self._lock:
            if now - self._window_start >= self.window_s:
                self._window_start, self._waited = now, 0.0
            budget = self.share * self.window_s - self._waited
        if budget <= 0:
            return 0.0
        self._idle.wait(min(self.max_wait_s, budget))
        waited = max(0.0, self._clock() - now)
        with self._lock:
            self._waited += waited
            self.waited_seconds += waited
        return waited

    def pace(self, items: Iterable[T], every: int) -> Iterator[T]:
        """``items`` one by one, giving way before the first and then before every ``every``-th:
        a long pass of background work over many objects, cut into steps of about
        ``every`` items (choose it so that a step is about a millisecond)."""
        for i, item in enumerate(items):
            if i % every == 0:
                self.give_way()
            yield item


REQUESTS = RequestPriority()
