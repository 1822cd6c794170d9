"""CronJob schedules read as Volcano's CronJob controller reads them.

Volcano (pkg/controllers/cronjob, and its admission webhook) parses ``spec.schedule`` with
robfig/cron v3's ``cron.ParseStandard``: exactly five fields (minute, hour, day of month, month,
day of week), the descriptors ``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``,
``@midnight``, ``@hourly`` and ``@every <Go duration>``, an optional ``CRON_TZ=``/``TZ=`` zone
prefix. In a field: ``*`` or ``?`` (both mean every value), numbers, ``a-b``, ``/n`` steps after any
of these (``a/n`` means ``a-<max>/n``), comma lists, and the names JAN-DEC and SUN-SAT in any case;
day of week 0-6 (no 7), no ``L``, ``W`` or ``#``. :func:`parse` accepts and rejects what robfig
does, with robfig's reason, and gives a schedule that computes the next times as robfig does:
croniter on the values robfig reads, or ``t + delay`` for ``@every``.

This module depends on the standard library and croniter only: the simulated cluster reads
schedules with it too, so the demo creates Jobs when Volcano would.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, croniter

ZONE_PREFIXES = ("CRON_TZ=", "TZ=")

# robfig/cron's descriptors as five fields (seconds are always 0); matched case-sensitively.
DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_EVERY = "@every "


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int]


_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DOW_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_FIELDS = (
    _Bounds(0, 59, {}),  # minute
    _Bounds(0, 23, {}),  # hour
    _Bounds(1, 31, {}),  # day of month
    _Bounds(1, 12, {n: i + 1 for i, n in enumerate(_MONTH_NAMES)}),  # month
    _Bounds(0, 6, {n: i for i, n in enumerate(_DOW_NAMES)}),  # day of week
)
_DOM, _DOW = 2, 4
_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class Unparseable:
    """A schedule robfig rejects; ``reason`` is robfig's error text."""

    reason: str


@dataclass(frozen=True)
class CronSchedule:
    """A five-field schedule or a descriptor other than ``@every``.

    ``expression`` is the schedule as written (a descriptor expanded to its five fields), for
    describing it in words; ``values`` the croniter expression of the values robfig reads, "" when
    a field holds no value (``,``): robfig accepts that and no time ever matches."""

    expression: str
    values: str

    def times(self, start: datetime, anchor: datetime | None = None) -> Iterator[datetime]:
        """The scheduled times after ``start`` (aware, in ``start``'s zone), in order; they end
        when none is left (``0 0 30 2 *``). ``anchor`` is unused: cron times do not depend on it."""
        if not self.values:
            return
        it = croniter(self.values, start)
        while True:
            try:
                yield it.get_next(datetime)
            except CroniterBadDateError:  # croniter looked years ahead and found no date
                return


@dataclass(frozen=True)
class EverySchedule:
    """``@every <duration>``: robfig's ConstantDelaySchedule, a run every ``seconds`` (the duration
    cut to whole seconds, at least 1)."""

    seconds: int

    def times(self, start: datetime, anchor: datetime | None = None) -> Iterator[datetime]:
        """The times after ``start``: robfig's ``Next(t)`` is ``t`` cut to the second plus the
        delay, and the controller asks it from the last scheduled time (else the CronJob's
        creation), so the times lie on that grid: ``anchor + k * delay`` (``start`` itself when
        ``anchor`` is None or later than ``start``)."""
        delay = timedelta(seconds=self.seconds)
        base = (anchor if anchor is not None and anchor <= start else start).replace(microsecond=0)
        steps = int((start - base).total_seconds() // self.seconds)
        t = base + delay * steps
        while t <= start:
            t += delay
        while True:
            yield t
            t += delay


Schedule = CronSchedule | EverySchedule


def split_zone(schedule: str, time_zone: str | None = None) -> tuple[str, str | None, bool]:
    """(the text robfig parses, the zone it is read in or None, whether the schedule names its own
    zone with a CRON_TZ=/TZ= prefix).

    Volcano's controller passes a schedule containing "TZ" to robfig as written (a prefix wins over
    ``spec.timeZone``, with an UnsupportedSchedule warning); else, with ``time_zone`` set, it
    prefixes ``TZ=<time_zone> ``. robfig takes the zone up to the first space and trims the rest;
    a schedule without a zone is parsed untrimmed (`` @daily`` is five fields short)."""
    if "TZ" in schedule:
        for prefix in ZONE_PREFIXES:
            if schedule.startswith(prefix):
                zone, space, rest = schedule[len(prefix) :].partition(" ")
                return (rest.strip() if space else ""), zone, True
        return schedule, None, False
    if time_zone:
        return schedule.strip(), time_zone, False
    return schedule, None, False


def zone_info(name: str | None) -> ZoneInfo | None:
    """The zone of a name Go's ``time.LoadLocation`` accepts: "" and "UTC" are UTC; None for a name
    no zone database here knows."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name no file system can hold
        return None


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _atoi(text: str) -> int | str:
    """Go's ``strconv.Atoi`` as robfig's ``mustParseInt`` uses it: the number, else robfig's
    reason."""
    if not _INT_RE.fullmatch(text):
        return f"failed to parse int from {text}: strconv.Atoi: parsing {_go_quote(text)}: invalid syntax"
    num = int(text)
    if not -_INT64_MAX - 1 <= num <= _INT64_MAX:
        return f"failed to parse int from {text}: strconv.Atoi: parsing {_go_quote(text)}: value out of range"
    if num < 0:
        return f"negative number ({num}) not allowed: {text}"
    return num


def _number(text: str, bounds: _Bounds) -> int | str:
    named = bounds.names.get(text.lower())
    return named if named is not None else _atoi(text)


def _range(expr: str, bounds: _Bounds) -> tuple[set[int], bool] | str:
    """robfig's ``getRange``: (the values, whether it counts as ``*``), else robfig's reason."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    star = False
    if low_and_high[0] in ("*", "?"):
        start, end, star = bounds.low, bounds.high, True
    else:
        first = _number(low_and_high[0], bounds)
        if isinstance(first, str):
            return first
        start = end = first
        if len(low_and_high) == 2:
            last = _number(low_and_high[1], bounds)
            if isinstance(last, str):
                return last
            end = last
        elif len(low_and_high) > 2:
            return f"too many hyphens: {expr}"
    step = 1
    if len(range_and_step) == 2:
        parsed = _atoi(range_and_step[1])
        if isinstance(parsed, str):
            return parsed
        step = parsed
        if len(low_and_high) == 1:
            end = bounds.high  # "a/n" is "a-<max>/n"
        if step > 1:
            star = False
    elif len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    if start < bounds.low:
        return f"beginning of range ({start}) below minimum ({bounds.low}): {expr}"
    if end > bounds.high:
        return f"end of range ({end}) above maximum ({bounds.high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return set(range(start, end + 1, step)), star


def _field(text: str, bounds: _Bounds) -> tuple[set[int], bool] | str:
    """robfig's ``getField``: the union of its comma-separated ranges (empty ones skipped)."""
    values: set[int] = set()
    star = False
    for expr in (part for part in text.split(",") if part):
        got = _range(expr, bounds)
        if isinstance(got, str):
            return got
        values |= got[0]
        star = star or got[1]
    return values, star


def _values(fields: list[tuple[set[int], bool]]) -> str:
    """The croniter expression matching the times robfig matches.

    robfig matches a day when day of month and day of week both match if either counts as ``*``
    (``*`` or ``?`` with no step above 1), else when either matches; croniter ORs them when neither
    is written ``*``. So a field counted as ``*`` is written ``*``, any other as its values, and a
    day that always matches (a full day-of-month or day-of-week list ORed) makes both ``*``."""
    if any(not values for values, _ in fields):
        return ""
    dom, dow = fields[_DOM], fields[_DOW]
    every_day = not dom[1] and not dow[1] and (len(dom[0]) == 31 or len(dow[0]) == 7)
    out = []
    for i, (values, star) in enumerate(fields):
        if star or (every_day and i in (_DOM, _DOW)):
            out.append("*")
        else:
            out.append(",".join(str(v) for v in sorted(values)))
    return " ".join(out)


_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")


def go_duration_ns(text: str) -> int | str:
    """Go's ``time.ParseDuration``: nanoseconds, else Go's error text."""
    invalid = f"time: invalid duration {_go_quote(text)}"
    rest = text
    negative = False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        return invalid
    total = 0
    while rest:
        match = _DURATION_PART.match(rest)
        assert match is not None  # every group may be empty
        whole, frac, unit = match.group(1), match.group(2), match.group(3)
        if not whole and not frac:
            return invalid
        if not unit:
            return f"time: missing unit in duration {_go_quote(text)}"
        if unit not in _UNITS_NS:
            # Go's unit runs up to the next digit or dot, as the pattern reads it.
            return f"time: unknown unit {_go_quote(unit)} in duration {_go_quote(text)}"
        scale = _UNITS_NS[unit]
        part = int(whole or "0") * scale
        if frac:
            part += int(frac) * scale // 10 ** len(frac)
        total += part
        if total > 1 << 63:
            return invalid
        rest = rest[match.end() :]
    if total > _INT64_MAX and not negative:
        return invalid
    return -total if negative else total


def _every(descriptor: str) -> Schedule | Unparseable:
    ns = go_duration_ns(descriptor[len(_EVERY) :])
    if isinstance(ns, str):
        return Unparseable(f"failed to parse duration {descriptor}: {ns}")
    return EverySchedule(max(ns, 1_000_000_000) // 1_000_000_000)


@functools.lru_cache(maxsize=4096)  # pages and the simulator read the same few schedules often
def parse(text: str) -> Schedule | Unparseable:
    """A schedule as robfig's ``ParseStandard`` reads the text after its zone prefix (``split_zone``
    gives it): the schedule, or robfig's reason for rejecting it."""
    if not text:
        return Unparseable("empty spec string")
    if text.startswith("@"):
        if text in DESCRIPTORS:
            expression = DESCRIPTORS[text]
            return CronSchedule(expression, expression)
        if text.startswith(_EVERY):
            return _every(text)
        return Unparseable(f"unrecognized descriptor: {text}")
    parts = text.split()
    if len(parts) != len(_FIELDS):
        return Unparseable(f"expected exactly 5 fields, found {len(parts)}: [{' '.join(parts)}]")
    fields = []
    for part, bounds in zip(parts, _FIELDS, strict=True):
        got = _field(part, bounds)
        if isinstance(got, str):
            return Unparseable(got)
        fields.append(got)
    return CronSchedule(" ".join(parts), _values(fields))
