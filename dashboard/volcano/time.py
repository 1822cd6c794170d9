"""Kubernetes timestamps (metav1.Time, metav1.MicroTime) and intervals between them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from dashboard.volcano.objects import meta

# Times before this are placeholders (Go's zero time, epoch 0), never real cluster events.
EARLIEST_TIME = datetime(1971, 1, 1, tzinfo=UTC)
# A sort key for "no time": older than every real time.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# How far ahead of "now" a timestamp may be and still mean "now": the API server's, the
# controllers' and this host's clocks drift apart by seconds, sometimes minutes (no NTP, a VM
# resumed). Default of the VOLCANO_UI_CLOCK_SKEW_SECONDS setting.
CLOCK_SKEW_SECONDS = 300.0

_TIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$"
)


def parse_time(value: object) -> datetime | None:
    """A Kubernetes Time or MicroTime as an aware UTC datetime, or None; never raises.

    Read: RFC 3339 date-times as the API server writes them ("2026-11-29T10:00:00Z",
    "2026-11-29T10:00:00.123456Z"), with any number of fraction digits (cut to microseconds),
    a "Z" or numeric offset ("+01:00", also "+0100"), "t" or a space as separator, and no offset
    read as UTC. An aware ``datetime`` is returned as is, a naive one read as UTC.

    None: null, "", non-strings, anything else (date only, garbage, impossible dates such as
    "2026-02-30", leap second ":60") and every time before 1971, since Go's zero time
    "0001-01-01T00:00:00Z" (what an unset metav1.Time marshals to without omitempty) and epoch 0
    mean "not set".
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    return _parse_remembered(value) if len(value) <= _REMEMBERED_CHARS else _parse_text(value)


def _parse_text(value: str) -> datetime | None:
    m = _TIME_RE.match(value.strip())
    if not m:
        return None
    try:
        year, month, day, hour, minute, second = (int(x) for x in m.groups()[:6])
        micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
        dt = datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
        off = m.group(8)
        if off and off not in ("Z", "z"):
            sign = 1 if off[0] == "+" else -1
            digits = off[1:].replace(":", "")
            hours, minutes = int(digits[:2]), int(digits[2:])
            if hours > 23 or minutes > 59:  # RFC 3339: time-numoffset is 00-23 ":" 00-59
                return None
            dt = dt - sign * timedelta(hours=hours, minutes=minutes)
    except (ValueError, OverflowError):
        return None
    return dt if dt >= EARLIEST_TIME else None


# The same timestamps are read again and again (a pod's at each of its changes, a page's at
# each poll, the pods of a Job created in the same second): a remembered one costs a tenth of a
# parse. Only strings as long as a time can be (nanoseconds and an offset: 35 characters).
_REMEMBERED_CHARS = 40
_parse_remembered = lru_cache(maxsize=8192)(_parse_text)


# Go's zero time as metav1.Time writes it when a struct field is set to time.Time{}.
_GO_ZERO_TIME = re.compile(r"^0001-01-01[Tt ]00:00:00(?:\.0+)?(?:[Zz]|[+-]00:?00)?$")


def time_unset(value: object) -> bool:
    """A time field that holds no time: absent or null, "", or Go's zero time
    ("0001-01-01T00:00:00Z"; metav1.Time.IsZero, which kubectl treats as unset). Any other value
    is a time as written, readable (``parse_time``) or not (garbage, epoch 0, a number)."""
    if value is None or value == "":
        return True
    return isinstance(value, str) and bool(_GO_ZERO_TIME.match(value.strip()))


def created_at(obj: object) -> datetime | None:
    """metadata.creationTimestamp (None when absent or unreadable)."""
    return parse_time(meta(obj).get("creationTimestamp"))


def seconds_between(start: datetime | None, end: datetime) -> float | None:
    """Seconds from ``start`` to ``end``, 0 when ``start`` is later; None without a start."""
    if start is None:
        return None
    return max(0.0, (end - start).total_seconds())


def elapsed(start: datetime, now: datetime, skew: float = CLOCK_SKEW_SECONDS) -> float | None:
    """Seconds from ``start`` to ``now``: 0 when ``start`` is ahead of ``now`` by at most ``skew``
    seconds (clock skew between the writer of the timestamp and the reader), None when it is
    further ahead (no time that has passed: a wrong clock or a hand-written timestamp)."""
    seconds = (now - start).total_seconds()
    if seconds >= 0:
        return seconds
    return 0.0 if -seconds <= skew else None


def latest(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later of two optional times."""
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)
