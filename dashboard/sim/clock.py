"""The simulated cluster's clock.

Everything in the simulated cluster that a real cluster would stamp with wall time
(creationTimestamp, lastTransitionTime, event times, ages in kubectl tables) reads this clock, so tests
advance time deterministically instead of sleeping.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

# A fixed, recognisable start so that seeded runs produce identical timestamps.
DEFAULT_START = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)


def rfc3339(moment: datetime) -> str:
    """Format an aware datetime the way the Kubernetes API does (metav1.Time: seconds, "Z")."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(moment: datetime) -> str:
    """Format like metav1.MicroTime (events' eventTime): microseconds, "Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SimClock:
    """A thread-safe simulated clock.

    ``now()`` returns a tz-aware UTC datetime; ``advance(seconds)`` moves it forward (never back).
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = start or DEFAULT_START
        if start.tzinfo is None:
            raise ValueError("SimClock needs a timezone-aware start time")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()
        self._stamp: tuple[int, str] = (-1, "")  # (whole seconds, rfc3339) cache: stamped on every write

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        """Move the clock forward by ``seconds`` (>= 0) and return the new time.

        Raises ValueError for a negative amount: Kubernetes time never runs backwards.
        """
        if seconds < 0:
            raise ValueError(f"cannot move the clock backwards ({seconds} s)")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now

    def rfc3339(self) -> str:
        """The current time as "2026-11-29T10:00:00Z"."""
        now = self.now()
        second = int(now.timestamp())
        cached = self._stamp
        if cached[0] != second:
            cached = self._stamp = (second, rfc3339(now))
        return cached[1]

    def timestamp(self) -> float:
        """The current time as POSIX seconds."""
        return self.now().timestamp()
