"""Hourly means of the Queue samples (QueueHourly, QueuePhaseHourly), so windows of days read
one row per queue, resource and hour instead of every sample.

The recorder calls ``roll(using, start, end)`` for the closed hours in [start, end) after a
flush. An hour is rolled again when it is asked for again (an upsert): a history written into the
same hours by another recorder (the demo's fast-forward) ends with the means of all its samples.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models import Avg
from django.db.models.functions import TruncHour

from dashboard.history.models import QueueHourly, QueuePhaseHourly, QueuePhaseSample, QueueSample

HOUR = timedelta(hours=1)


def hour_of(at: datetime) -> datetime:
    """The start of the UTC hour holding ``at``."""
    return at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def first_unrolled(using: str, floor: datetime) -> datetime | None:
    """The first hour after the newest rolled one, else the hour of the oldest sample, never
    before ``floor``; None when there are no samples."""
    newest = QueueHourly.objects.using(using).order_by("-hour").values_list("hour", flat=True).first()
    if newest is not None:
        return max(newest + HOUR, hour_of(floor))
    oldest = QueueSample.objects.using(using).order_by("at").values_list("at", flat=True).first()
    return max(hour_of(oldest), hour_of(floor)) if oldest is not None else None


def roll(using: str, start: datetime, end: datetime) -> int:
    """Write the means of the samples in the hours [start, end) (UTC hour starts); returns the
    rows written."""
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
    return len(hourly) + len(phase_hourly)
