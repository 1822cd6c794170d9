"""Hourly and five-minute means of the Queue samples (QueueHourly, QueuePhaseHourly;
QueueFiveMinute, QueuePhaseFiveMinute), so windows of days read one row per queue, resource and
hour, and windows of hours one per five minutes, instead of every sample.

The recorder calls ``roll(using, start, end)`` for the closed hours in [start, end) after a
flush; the five-minute means are written for the last FIVE_MINUTE_KEEP of them (the windows that
read them are no longer) and pruned after that. An hour is rolled again when it is asked for
again (an upsert): a history written into the same hours by another recorder (the demo's
fast-forward) ends with the means of all its samples.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models import Avg
from django.db.models.functions import TruncHour

from dashboard.history.models import (
    QueueFiveMinute,
    QueueHourly,
    QueuePhaseFiveMinute,
    QueuePhaseHourly,
    QueuePhaseSample,
    QueueSample,
)

HOUR = timedelta(hours=1)
FIVE_MINUTES = timedelta(minutes=5)
# How long five-minute means are kept: the longest window read from them (reads.HOURLY_AFTER).
FIVE_MINUTE_KEEP = timedelta(hours=25)

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
    with transaction.atomic(using=using):
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
    return len(hourly) + len(phase_hourly) + five


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
