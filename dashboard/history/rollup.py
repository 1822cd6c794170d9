"""Hourly and five-minute means of the Queue samples (QueueHourly, QueuePhaseHourly;
QueueFiveMinute, QueuePhaseFiveMinute), so windows of days read one row per queue, resource and
hour, and windows of hours one per five minutes, instead of every sample.

The recorder calls ``roll(using, start, end)`` for the closed hours in [start, end) after a
flush; the five-minute means are written for the last FIVE_MINUTE_KEEP of them (the windows that
read them are no longer) and pruned after that. An hour is rolled again when it is asked for
again (an upsert): a history written into the same hours by another recorder (the demo's
fast-forward) ends with the means of all its samples.

The admission waits of each closed UTC day are rolled per Queue (AdmissionDaily) by the same
call, for the days that closed in [start, end). Admissions are written when a gang is seen
Running, with the PodGroup's own transition time, so one can land on a closed day after it
was rolled: the recorder rolls again the rows of the Queues it writes an admission for on a
closed day (``roll_waits`` with ``queues``) in the same transaction, and the prune rolls again the
day its cutoff cuts.
A rolled day's row is therefore the day's rows as they are, and reads take days before
``waits_rolled_until`` from the rollups, the rest from the Admission rows.

The recorder runs beside the requests: the means are computed an hour at a time (hourly) and
five minutes at a time (each of its own samples alone), read in small chunks and written as
tuples in small batches (dashboard/history/inserts.py), giving way to requests in between.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta

from django.db import transaction
from django.db.models import Avg

from dashboard.history.inserts import TableInsert
from dashboard.history.models import (
    Admission,
    AdmissionDaily,
    QueueFiveMinute,
    QueueHourly,
    QueuePhaseFiveMinute,
    QueuePhaseHourly,
    QueuePhaseSample,
    QueueSample,
)
from dashboard.priority import REQUESTS
from dashboard.volcano.history import interpolate, percentile, percentile_ranks

HOUR = timedelta(hours=1)
FIVE_MINUTES = timedelta(minutes=5)
# How long five-minute means are kept: the longest window read from them (reads.HOURLY_AFTER).
FIVE_MINUTE_KEEP = timedelta(hours=25)

DAY = timedelta(days=1)
# Buckets of the admission waits: 0 holds [0, 1 s), i >= 1 holds [2**((i-1)/WAIT_STEPS),
# 2**(i/WAIT_STEPS)) seconds: a wait is known to within 2**(1/(2*WAIT_STEPS)) - 1 (2.2 %) of itself.
WAIT_STEPS = 16

UsageRow = tuple[str, str, datetime, float | None, float | None, float | None, float | None]
PhaseRow = tuple[str, str, datetime, float]

# Upserts of the means: an hour or five minutes rolled again is rewritten.
_USAGE_FIELDS = ("allocated", "deserved", "capability", "guarantee")
_HOURLY = TableInsert(
    QueueHourly, ("queue", "resource", "hour", *_USAGE_FIELDS), "update", ("queue", "resource", "hour")
)
_PHASE_HOURLY = TableInsert(
    QueuePhaseHourly, ("queue", "phase", "hour", "count"), "update", ("queue", "phase", "hour")
)
_FIVE = TableInsert(
    QueueFiveMinute, ("queue", "resource", "at", *_USAGE_FIELDS), "update", ("queue", "resource", "at")
)
_PHASE_FIVE = TableInsert(
    QueuePhaseFiveMinute, ("queue", "phase", "at", "count"), "update", ("queue", "phase", "at")
)
# Rows fetched at a time in a pass over stored rows; it gives way every _READ_STEP of them.
_READ_CHUNK = 500
_READ_STEP = 100


def hour_of(at: datetime) -> datetime:
    """The start of the UTC hour holding ``at``."""
    return at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def five_minutes_of(at: datetime) -> datetime:
    """The start of the UTC five minutes (on a multiple of 5 past the hour) holding ``at``."""
    at = at.astimezone(UTC)
    return at.replace(minute=at.minute - at.minute % 5, second=0, microsecond=0)


def five_minute_usage(samples: Iterable[UsageRow]) -> list[UsageRow]:
    """[(queue, resource, five-minute start, allocated, deserved, capability, guarantee)] of
    ``samples`` [(queue, resource, at, allocated, deserved, capability, guarantee)]: per field the
    mean of the samples that state it (None when none does), ordered by start."""
    sums: dict[tuple[str, str, datetime], list[float]] = {}
    blocks: dict[datetime, datetime] = {}  # a sample time's five minutes (many rows share one)
    for queue, resource, at, *values in samples:
        block = blocks.get(at)
        if block is None:
            block = blocks[at] = five_minutes_of(at)
        acc = sums.get(key := (queue, resource, block))
        if acc is None:
            acc = sums[key] = [0.0] * 8
        for i, value in enumerate(values):
            if value is not None:
                acc[i] += value
                acc[4 + i] += 1

    def mean(acc: list[float], i: int) -> float | None:
        return acc[i] / acc[4 + i] if acc[4 + i] else None

    rows: list[UsageRow] = [
        (q, r, at, mean(acc, 0), mean(acc, 1), mean(acc, 2), mean(acc, 3)) for (q, r, at), acc in sums.items()
    ]
    return sorted(rows, key=lambda row: row[2])


def five_minute_phases(samples: Iterable[tuple[str, str, datetime, int]]) -> list[PhaseRow]:
    """[(queue, phase, five-minute start, mean count)] of ``samples`` [(queue, phase, at, count)]:
    the sum of a phase's counts over the number of the queue's sample times in those minutes (a
    sample time without the phase counts 0), ordered by start."""
    times: dict[tuple[str, datetime], set[datetime]] = {}
    sums: dict[tuple[str, str, datetime], float] = {}
    blocks: dict[datetime, datetime] = {}
    for queue, phase, at, count in samples:
        block = blocks.get(at)
        if block is None:
            block = blocks[at] = five_minutes_of(at)
        times.setdefault((queue, block), set()).add(at)
        sums[(queue, phase, block)] = sums.get((queue, phase, block), 0.0) + count
    rows = [(q, p, at, total / len(times[(q, at)])) for (q, p, at), total in sums.items()]
    return sorted(rows, key=lambda row: row[2])


def first_unrolled(using: str, floor: datetime) -> datetime | None:
    """The first hour after the newest rolled one, else the hour of the oldest sample, never
    before ``floor``; None when there are no samples."""
    newest = QueueHourly.objects.using(using).order_by("-hour").values_list("hour", flat=True).first()
    if newest is not None:
        return max(newest + HOUR, hour_of(floor))
    oldest = QueueSample.objects.using(using).order_by("at").values_list("at", flat=True).first()
    return max(hour_of(oldest), hour_of(floor)) if oldest is not None else None


def roll(using: str, start: datetime, end: datetime, five_minutes_from: datetime | None = None) -> int:
    """Write the means of the samples in the hours [start, end) (UTC hour starts), the
    five-minute ones from ``five_minutes_from`` (default: FIVE_MINUTE_KEEP before ``end``);
    returns the rows written. Gives way to requests between its steps (dashboard/priority.py)."""
    if start >= end:
        return 0
    hourly: list[tuple[str, str, datetime, float | None, float | None, float | None, float | None]] = []
    phase_hourly: list[tuple[str, str, datetime, float]] = []
    # One hour at a time: its rows are found by ``at`` (an index) and grouped with no
    # truncation of the time (which SQLite runs as a Python function per row, holding the
    # interpreter for the whole statement).
    hour = hour_of(start)
    while hour < end:
        REQUESTS.give_way()
        since, until = max(hour, start), min(hour + HOUR, end)
        usage = (
            QueueSample.objects.using(using)
            .filter(at__gte=since, at__lt=until)
            .values("queue", "resource")
            .annotate(a=Avg("allocated"), d=Avg("deserved"), c=Avg("capability"), g=Avg("guarantee"))
            .values_list("queue", "resource", "a", "d", "c", "g")
        )
        hourly += [(q, r, hour, a, d, c, g) for q, r, a, d, c, g in usage]
        REQUESTS.give_way()
        phases = (
            QueuePhaseSample.objects.using(using)
            .filter(at__gte=since, at__lt=until)
            .values("queue", "phase")
            .annotate(n=Avg("count"))
            .values_list("queue", "phase", "n")
        )
        phase_hourly += [(q, p, hour, float(n)) for q, p, n in phases]
        hour += HOUR
    # The days that closed within [start, end): an hour start ends the days before its own.
    first = start.astimezone(UTC).date()
    closed = [first + DAY * i for i in range((end.astimezone(UTC).date() - first).days)]
    with transaction.atomic(using=using):
        written = roll_waits(using, closed)
        floor = end - FIVE_MINUTE_KEEP if five_minutes_from is None else five_minutes_from
        five = roll_five_minutes(using, max(start, floor), end)
        _HOURLY.write(using, hourly)
        _PHASE_HOURLY.write(using, phase_hourly)
    return len(hourly) + len(phase_hourly) + five + written


def roll_five_minutes(using: str, start: datetime, end: datetime) -> int:
    """Write the five-minute means of the samples in [start, end) (five-minute starts); returns
    the rows written. Five minutes at a time: the means of each are of its own samples alone,
    and its rows are few enough to build between two turns given to requests."""
    written = 0
    block = five_minutes_of(start)
    with transaction.atomic(using=using):
        while block < end:
            since, until = max(block, start), min(block + FIVE_MINUTES, end)
            usage = five_minute_usage(
                REQUESTS.pace(
                    QueueSample.objects.using(using)
                    .filter(at__gte=since, at__lt=until)
                    .values_list("queue", "resource", "at", *_USAGE_FIELDS)
                    .iterator(chunk_size=_READ_CHUNK),
                    every=_READ_STEP,
                )
            )
            phases = five_minute_phases(
                REQUESTS.pace(
                    QueuePhaseSample.objects.using(using)
                    .filter(at__gte=since, at__lt=until)
                    .values_list("queue", "phase", "at", "count")
                    .iterator(chunk_size=_READ_CHUNK),
                    every=_READ_STEP,
                )
            )
            written += _FIVE.write(using, usage) + _PHASE_FIVE.write(using, phases)
            block += FIVE_MINUTES
    return written


def wait_bucket(seconds: float) -> int:
    """The WAIT_STEPS log-spaced bucket of a wait of ``seconds`` (>= 0)."""
    return 0 if seconds < 1 else 1 + math.floor(WAIT_STEPS * math.log2(seconds))


def bucket_value(bucket: int) -> float:
    """The seconds a wait in ``bucket`` is taken for: its edges' geometric mean (0.5 s for bucket 0)."""
    return 0.5 if bucket == 0 else 2 ** ((bucket - 0.5) / WAIT_STEPS)


def add_waits(buckets: dict[int, int], waits: Iterable[float]) -> dict[int, int]:
    """``buckets`` {bucket: count} with ``waits`` (seconds) counted in; returns it."""
    for wait in waits:
        b = wait_bucket(wait)
        buckets[b] = buckets.get(b, 0) + 1
    return buckets


def add_buckets(into: dict[int, int], more: Mapping[str | int, int]) -> dict[int, int]:
    """``into`` with the counts of ``more`` (a stored row's JSON keys are strings) added; returns it."""
    for b, count in more.items():
        into[int(b)] = into.get(int(b), 0) + count
    return into


def estimate_percentile(buckets: Mapping[int, int], q: float) -> float | None:
    """An estimate of the ``q``-th percentile (0-100, dashboard.volcano.history.percentile) of
    the waits counted in ``buckets``: the percentile of the waits each taken for its bucket's
    ``bucket_value``; None when none is counted. Each wait is taken for a value within
    (2**(1/32) - 1) of itself (>= 1 s) or 0.5 s (under 1 s), and the percentile interpolates
    two of them with positive weights, so for waits >= 0 the estimate is within
    0.0219 x the exact percentile + 0.5 s of it."""
    n = sum(buckets.values())
    if n == 0:
        return None
    low, high, fraction = percentile_ranks(n, q)
    seen, at_low = 0, None
    for b in sorted(buckets):
        seen += buckets[b]
        if at_low is None and low < seen:
            at_low = bucket_value(b)
        if high < seen:
            assert at_low is not None
            return interpolate(at_low, bucket_value(b), fraction)
    raise AssertionError("ranks beyond the counted waits")


WaitDay = tuple[int, float, int, float, float, dict[int, int]]


def wait_days(rows: Iterable[tuple[str, float, int]]) -> dict[str, WaitDay]:
    """{queue: (n, total seconds, highest Admission id, p50, p90, buckets)} of one day's
    ``rows`` [(queue, wait seconds, Admission id)]; p50 and p90 exact."""
    waits: dict[str, list[float]] = {}
    tops: dict[str, int] = {}
    for queue, wait, pk in rows:
        waits.setdefault(queue, []).append(wait)
        tops[queue] = max(tops.get(queue, pk), pk)
    out: dict[str, WaitDay] = {}
    for queue, values in waits.items():
        values.sort()
        p50, p90 = percentile(values, 50), percentile(values, 90)
        assert p50 is not None and p90 is not None
        out[queue] = (len(values), math.fsum(values), tops[queue], p50, p90, add_waits({}, values))
    return out


def day_start(day: date) -> datetime:
    """The UTC midnight that starts ``day``."""
    return datetime.combine(day, time.min, UTC)


def roll_waits(using: str, days: Iterable[date], queues: Iterable[str] | None = None) -> int:
    """Write the AdmissionDaily rows of ``days`` (UTC days) from their Admission rows, replacing
    those stored; only the rows of ``queues`` when given (a Queue's row of a day reads that
    Queue's admissions alone); returns the rows written. Each day's rows are found by ``running``
    (its index), or by queue and ``day`` (history_adm_day_idx) for ``queues``: a day is the UTC
    date of ``running``."""
    names = None if queues is None else sorted(set(queues))
    if names == []:
        return 0
    written = 0
    for day in sorted(set(days)):
        rows = Admission.objects.using(using).filter(
            running__gte=day_start(day), running__lt=day_start(day + DAY), wait__isnull=False
        )
        stored = AdmissionDaily.objects.using(using).filter(day=day)
        if names is not None:
            rows = rows.filter(queue__in=names, day=day)
            stored = stored.filter(queue__in=names)
        REQUESTS.give_way()
        found = rows.values_list("queue", "wait", "pk").iterator(chunk_size=_READ_CHUNK)
        rolled = wait_days(REQUESTS.pace(found, every=_READ_STEP))  # type: ignore[arg-type]
        REQUESTS.give_way()
        with transaction.atomic(using=using):
            stored.delete()
            AdmissionDaily.objects.using(using).bulk_create(
                [
                    AdmissionDaily(
                        queue=queue, day=day, n=n, total=total, top=top, p50=p50, p90=p90, buckets=buckets
                    )
                    for queue, (n, total, top, p50, p90, buckets) in rolled.items()
                ]
            )
        written += len(rolled)
    return written


def waits_rolled_until(using: str) -> date | None:
    """The day after the newest rolled one (days before it read from AdmissionDaily), None
    before the first roll."""
    newest = AdmissionDaily.objects.using(using).order_by("-day").values_list("day", flat=True).first()
    return None if newest is None else newest + DAY
