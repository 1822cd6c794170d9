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
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta

from django.db import transaction
from django.db.models import Avg
from django.db.models.functions import TruncHour

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
    for queue, resource, at, *values in samples:
        acc = sums.get(key := (queue, resource, five_minutes_of(at)))
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
    for queue, phase, at, count in samples:
        block = five_minutes_of(at)
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
    returns the rows written."""
    if start >= end:
        return 0
    usage = (
        QueueSample.objects.using(using)
        .filter(at__gte=start, at__lt=end)
        .annotate(hour=TruncHour("at", tzinfo=UTC))
        .values("queue", "resource", "hour")
        .annotate(a=Avg("allocated"), d=Avg("deserved"), c=Avg("capability"), g=Avg("guarantee"))
        .values_list("queue", "resource", "hour", "a", "d", "c", "g")
    )
    phases = (
        QueuePhaseSample.objects.using(using)
        .filter(at__gte=start, at__lt=end)
        .annotate(hour=TruncHour("at", tzinfo=UTC))
        .values("queue", "phase", "hour")
        .annotate(n=Avg("count"))
        .values_list("queue", "phase", "hour", "n")
    )
    hourly = [
        QueueHourly(hour=h, queue=q, resource=r, allocated=a, deserved=d, capability=c, guarantee=g)
        for q, r, h, a, d, c, g in usage
    ]
    phase_hourly = [QueuePhaseHourly(hour=h, queue=q, phase=p, count=float(n)) for q, p, h, n in phases]
    # The days that closed within [start, end): an hour start ends the days before its own.
    first = start.astimezone(UTC).date()
    closed = [first + DAY * i for i in range((end.astimezone(UTC).date() - first).days)]
    with transaction.atomic(using=using):
        written = roll_waits(using, closed)
        floor = end - FIVE_MINUTE_KEEP if five_minutes_from is None else five_minutes_from
        five = roll_five_minutes(using, max(start, floor), end)
        QueueHourly.objects.using(using).bulk_create(
            hourly,
            update_conflicts=True,
            unique_fields=["queue", "resource", "hour"],
            update_fields=["allocated", "deserved", "capability", "guarantee"],
        )
        QueuePhaseHourly.objects.using(using).bulk_create(
            phase_hourly,
            update_conflicts=True,
            unique_fields=["queue", "phase", "hour"],
            update_fields=["count"],
        )
    return len(hourly) + len(phase_hourly) + five + written


def roll_five_minutes(using: str, start: datetime, end: datetime) -> int:
    """Write the five-minute means of the samples in [start, end) (five-minute starts); returns
    the rows written."""
    if start >= end:
        return 0
    usage = five_minute_usage(
        QueueSample.objects.using(using)
        .filter(at__gte=start, at__lt=end)
        .values_list("queue", "resource", "at", "allocated", "deserved", "capability", "guarantee")
        .iterator(chunk_size=20_000)
    )
    phases = five_minute_phases(
        QueuePhaseSample.objects.using(using)
        .filter(at__gte=start, at__lt=end)
        .values_list("queue", "phase", "at", "count")
        .iterator(chunk_size=20_000)
    )
    with transaction.atomic(using=using):
        QueueFiveMinute.objects.using(using).bulk_create(
            [
                QueueFiveMinute(
                    at=at, queue=q, resource=r, allocated=a, deserved=d, capability=c, guarantee=g
                )
                for q, r, at, a, d, c, g in usage
            ],
            batch_size=5000,
            update_conflicts=True,
            unique_fields=["queue", "resource", "at"],
            update_fields=["allocated", "deserved", "capability", "guarantee"],
        )
        QueuePhaseFiveMinute.objects.using(using).bulk_create(
            [QueuePhaseFiveMinute(at=at, queue=q, phase=p, count=n) for q, p, at, n in phases],
            batch_size=5000,
            update_conflicts=True,
            unique_fields=["queue", "phase", "at"],
            update_fields=["count"],
        )
    return len(usage) + len(phases)


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
        found = rows.values_list("queue", "wait", "pk").iterator(chunk_size=20_000)
        rolled = wait_days(found)  # type: ignore[arg-type]
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
