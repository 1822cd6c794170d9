"""The queries pages ask of the history store. Each takes the database alias first (``using``)
and returns plain values; HistoryService.read turns a failure into a notice."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial as partial_fn
from typing import Any

from django.db.models import Avg, Count, Max, Q, QuerySet, Sum
from django.db.models.functions import TruncHour

from dashboard.history import rollup
from dashboard.history.models import (
    Admission,
    AdmissionDaily,
    HistoryFill,
    PodLifetime,
    QueueFiveMinute,
    QueueHourly,
    QueuePhaseFiveMinute,
    QueuePhaseHourly,
    QueuePhaseSample,
    QueueSample,
)
from dashboard.volcano.history import Interval, interpolate, percentile_ranks, resource_hours

Point = tuple[datetime, float | None]


@dataclass(frozen=True)
class ResourceSeries:
    """One resource of a Queue over time: (at, amount) per field."""

    resource: str
    allocated: list[Point]
    deserved: list[Point]
    capability: list[Point]


# Windows longer than this are read as hourly means (dashboard/history/rollup.py).
HOURLY_AFTER = timedelta(hours=25)
# Windows longer than this, up to HOURLY_AFTER, are read as five-minute means: a chart's bucket
# (line_chart: 96 to a window) is then at least five minutes, so each holds one mean or more.
FIVE_MINUTE_AFTER = timedelta(hours=8)


def _rolled_until(using: str, since: datetime, until: datetime) -> datetime:
    """Where the stored hourly means of [since, until) end: the hour after the newest rolled one,
    within the window (``since`` when none is rolled)."""
    newest = QueueHourly.objects.using(using).order_by("-hour").values_list("hour", flat=True).first()
    return since if newest is None else min(max(newest + timedelta(hours=1), since), until)


def _five_minutes_until(using: str, since: datetime, until: datetime) -> datetime:
    """Where the stored five-minute means of [since, until) end (``_rolled_until``'s rule)."""
    newest = QueueFiveMinute.objects.using(using).order_by("-at").values_list("at", flat=True).first()
    return since if newest is None else min(max(newest + rollup.FIVE_MINUTES, since), until)


def queue_usage(using: str, queue: str, since: datetime, until: datetime) -> list[ResourceSeries]:
    """The samples of ``queue`` in [since, until) per resource; over HOURLY_AFTER, hourly means,
    over FIVE_MINUTE_AFTER five-minute means, each at its start: the stored ones
    (dashboard/history/rollup.py), then those of the samples not rolled yet. A mean that starts
    before ``since`` is left out."""
    samples = QueueSample.objects.using(using).filter(queue=queue)
    rows: Iterable[tuple[str, datetime, float | None, float | None, float | None]]
    if FIVE_MINUTE_AFTER < until - since <= HOURLY_AFTER:
        split = _five_minutes_until(using, since, until)
        five = (
            QueueFiveMinute.objects.using(using)
            .filter(queue=queue, at__gte=since, at__lt=split)
            .order_by("at")
            .values_list("resource", "at", "allocated", "deserved", "capability")
        )
        tail = rollup.five_minute_usage(
            (queue, r, at, a, d, c, None)
            for r, at, a, d, c in samples.filter(at__gte=split, at__lt=until).values_list(
                "resource", "at", "allocated", "deserved", "capability"
            )
        )
        rows = [*five, *((r, at, a, d, c) for _q, r, at, a, d, c, _g in tail if at >= since)]
    elif until - since > HOURLY_AFTER:
        split = _rolled_until(using, since, until)
        stored = (
            QueueHourly.objects.using(using)
            .filter(queue=queue, hour__gte=since, hour__lt=split)
            .order_by("hour")
            .values_list("resource", "hour", "allocated", "deserved", "capability")
        )
        recent = (
            samples.filter(at__gte=split, at__lt=until)
            .annotate(hour=TruncHour("at", tzinfo=UTC))
            .values("resource", "hour")
            .annotate(a=Avg("allocated"), d=Avg("deserved"), c=Avg("capability"))
            .order_by("hour")
            .values_list("resource", "hour", "a", "d", "c")
        )
        rows = [*stored, *recent]
    else:
        rows = (
            samples.filter(at__gte=since, at__lt=until)
            .order_by("at")
            .values_list("resource", "at", "allocated", "deserved", "capability")
        )
    by_res: dict[str, ResourceSeries] = {}
    for res, at, allocated, deserved, capability in rows:
        series = by_res.get(res)
        if series is None:
            series = by_res[res] = ResourceSeries(res, [], [], [])
        series.allocated.append((at, allocated))
        series.deserved.append((at, deserved))
        series.capability.append((at, capability))
    return [by_res[k] for k in sorted(by_res)]


def queue_phase_counts(using: str, queue: str, since: datetime, until: datetime) -> dict[str, list[Point]]:
    """{phase: [(at, count)]}: at every sample, every phase sampled in the window (0 where a
    sample had none of that phase: the sample counted the queue's PodGroups)."""
    samples = QueuePhaseSample.objects.using(using).filter(queue=queue, at__gte=since, at__lt=until)
    if FIVE_MINUTE_AFTER < until - since <= HOURLY_AFTER:
        split = _five_minutes_until(using, since, until)
        stored5 = QueuePhaseFiveMinute.objects.using(using).filter(queue=queue, at__gte=since, at__lt=split)
        tail_phases = rollup.five_minute_phases(
            (queue, phase, at, n)
            for phase, at, n in samples.filter(at__gte=split).values_list("phase", "at", "count")
        )
        rows = [
            *stored5.values_list("at", "phase", "count"),
            *((at, phase, n) for _q, phase, at, n in tail_phases if at >= since),
        ]
    elif until - since > HOURLY_AFTER:
        split = _rolled_until(using, since, until)
        stored = QueuePhaseHourly.objects.using(using).filter(queue=queue, hour__gte=since, hour__lt=split)
        hourly = (
            samples.filter(at__gte=split)
            .annotate(hour=TruncHour("at", tzinfo=UTC))
            .values("hour", "phase")
            .annotate(n=Avg("count"))
            .values_list("hour", "phase", "n")
        )
        rows = [
            (at, phase, float(n)) for at, phase, n in [*stored.values_list("hour", "phase", "count"), *hourly]
        ]
    else:
        rows = [(at, phase, float(n)) for at, phase, n in samples.values_list("at", "phase", "count")]
    times = sorted({at for at, _p, _c in rows})
    counts = {(at, phase): n for at, phase, n in rows}
    phases = sorted({phase for _a, phase, _c in rows})
    return {phase: [(at, counts.get((at, phase), 0.0)) for at in times] for phase in phases}


def _known(using: str, queue: str) -> QuerySet[Admission]:
    return Admission.objects.using(using).filter(queue=queue, wait__isnull=False)


def _ranked(waits: QuerySet[Admission], n: int, q: float) -> float | None:
    """The ``q``-th percentile of the ``n`` waits of ``waits``: the database orders them and
    hands the (at most two) values at the percentile's ranks; None when there are none."""
    low, high, fraction = percentile_ranks(n, q)
    ranked = waits.order_by("wait").values_list("wait", flat=True)[low : high + 1]
    values = [v for v in ranked if v is not None]  # none is: ``waits`` has known waits only
    if not values:  # rows pruned between the count and this read
        return None
    return interpolate(values[0], values[-1], fraction)


#: (database, queue, what, the day or the window's start, a signature of the rows read) -> what
#: was computed from them: the ranked reads and the bucket counts step through up to a day (or,
#: unrolled, a week) of a queue's waits, while their signature is a rollup row's (n, total, top)
#: or the count, sum and highest id of the rows (one scan of an index). A new, pruned or
#: replaced row moves the signature, and with it the key; bounded, oldest out first.
_MEMO: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_MEMO_MAX = 4096
_memo_lock = threading.Lock()


def _memo(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    with _memo_lock:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    value = compute()
    with _memo_lock:
        _MEMO[key] = value
        while len(_MEMO) > _MEMO_MAX:
            _MEMO.popitem(last=False)
    return value


def _signature(rows: QuerySet[Admission]) -> tuple[int, float | None, int | None]:
    agg = rows.aggregate(n=Count("pk"), total=Sum("wait"), top=Max("pk"))
    return agg["n"], agg["total"], agg["top"]


def _rolled_signature(row: AdmissionDaily | None) -> tuple[Any, ...]:
    return ("rolled", None) if row is None else ("rolled", row.n, row.total, row.top)


def _buckets_since(
    in_day: QuerySet[Admission], row: AdmissionDaily | None, since: datetime
) -> dict[int, int]:
    """The wait buckets of the rows of ``in_day`` (``since``'s UTC day, rolled into ``row``)
    since ``since``: in the day's first half its rollup's buckets less those of the rows before
    ``since`` (the fewer), else those of the rows since."""
    if row is None or since - rollup.day_start(row.day) >= timedelta(hours=12):
        return rollup.add_waits({}, _wait_values(in_day.filter(running__gte=since)))
    buckets = rollup.add_buckets({}, row.buckets)
    for wait in _wait_values(in_day.filter(running__lt=since)):
        buckets[rollup.wait_bucket(wait)] -= 1
    return {b: n for b, n in buckets.items() if n}


def wait_percentile(using: str, queue: str, since: datetime, q: float) -> float | None:
    """The ``q``-th percentile (0-100, dashboard.volcano.history.percentile) of the seconds the
    queue's gangs waited for admission, of those that started Running since ``since``; None
    when none did. Exact while ``since``'s UTC day is not rolled (rollup.waits_rolled_until);
    else an estimate from the rolled days' wait buckets summed with those of the rows of
    ``since``'s day since ``since`` and of the days not rolled (rollup.estimate_percentile:
    within 2.2 % of the exact percentile + 0.5 s). Asked again with the same ``since`` (a window
    start rounded to the minute), it reads the rollups and one aggregate of the unrolled days'
    rows; a new ``since`` reads at most half of its day's rows once (``_buckets_since``)."""
    known = _known(using, queue)
    first = since.astimezone(UTC).date()
    rolled = rollup.waits_rolled_until(using)
    if rolled is None or rolled <= first:
        waits = known.filter(running__gte=since)
        n, total, top = _signature(waits)
        if not n:
            return None
        return _memo((using, queue, "rank", since, q, n, total, top), lambda: _ranked(waits, n, q))
    daily = AdmissionDaily.objects.using(using).filter(queue=queue, day__gte=first, day__lt=rolled)
    stored = {r.day: r for r in daily}
    buckets: dict[int, int] = dict(
        _memo(
            (using, queue, "buckets", since, _rolled_signature(row := stored.pop(first, None))),
            lambda: _buckets_since(known.filter(day=first), row, since),
        )
    )
    for row in stored.values():
        rollup.add_buckets(buckets, row.buckets)
    tail = known.filter(day__gte=rolled)
    rollup.add_buckets(
        buckets,
        _memo(
            (using, queue, "buckets", rolled, _signature(tail)),
            lambda: rollup.add_waits({}, _wait_values(tail)),
        ),
    )
    return rollup.estimate_percentile(buckets, q)


def _day_percentiles(in_day: QuerySet[Admission], n: int | None) -> tuple[float | None, float | None, int]:
    """(p50, p90, how many) of the ``n`` waits of ``in_day`` (counted when None)."""
    n = in_day.count() if n is None else n
    return (_ranked(in_day, n, 50), _ranked(in_day, n, 90), n) if n else (None, None, 0)


def _wait_values(rows: QuerySet[Admission]) -> list[float]:
    return [w for w in rows.values_list("wait", flat=True) if w is not None]  # known waits only


def daily_waits(
    using: str, queue: str, since: datetime, until: datetime
) -> list[tuple[date, float, float, int]]:
    """[(day, p50, p90, how many)] of the admission waits (seconds) of the queue's gangs that
    started Running since ``since``, per UTC calendar day from ``since``'s to ``until``'s,
    oldest first; days without one are left out; exact (dashboard.volcano.history.percentile).
    The days before rollup.waits_rolled_until are read from their rollups (AdmissionDaily), but
    ``since``'s own day when ``since`` is not its midnight: its rows since ``since``, read again
    only when the day's rollup changes. The days not rolled: the database counts each day's
    waits (one grouped read) and hands the values at the percentiles' ranks, read again only
    when a day's count, sum or highest id changes."""
    first, last = since.astimezone(UTC).date(), until.astimezone(UTC).date()
    known = _known(using, queue)
    partial = rollup.day_start(first) < since
    rolled = rollup.waits_rolled_until(using) or first
    out: list[tuple[date, float | None, float | None, int]] = []
    stored = AdmissionDaily.objects.using(using).filter(
        queue=queue, day__gte=first, day__lt=min(rolled, last + rollup.DAY)
    )
    for row in stored.order_by("day"):
        if not (partial and row.day == first):
            out.append((row.day, row.p50, row.p90, row.n))
        else:
            head = known.filter(day=first, running__gte=since)
            out.append(
                (
                    first,
                    *_memo(
                        (using, queue, "day", since, _rolled_signature(row)),
                        partial_fn(_day_percentiles, head, None),
                    ),
                )
            )
    days = (
        known.filter(day__gte=max(first, rolled), day__lte=last)
        .values("day")
        .annotate(n=Count("pk"), total=Sum("wait"), top=Max("pk"))
        .order_by("day")
        .values_list("day", "n", "total", "top")
    )
    for day, n, total, top in days:
        in_day = known.filter(day=day)
        if day == first and partial:
            in_day = in_day.filter(running__gte=since)
            key: tuple[Any, ...] = (using, queue, "day", since, n, total, top)
            out.append((day, *_memo(key, partial_fn(_day_percentiles, in_day, None))))
        else:
            key = (using, queue, "day", day, n, total, top)
            out.append((day, *_memo(key, partial_fn(_day_percentiles, in_day, n))))
    return [(day, p50, p90, n) for day, p50, p90, n in out if p50 is not None and p90 is not None and n]


@dataclass(frozen=True)
class UsageRow:
    key: str  # the queue or namespace ("" when unknown)
    gpu_hours: float
    cpu_hours: float
    pods: int


def usage_hours(
    using: str, since: datetime, until: datetime, by: str, namespaces: frozenset[str] | None = None
) -> list[UsageRow]:
    """GPU-hours and CPU-hours (requests x running time) of the pods that ran in [since, until),
    by ``by`` ("queue" or "namespace"), most GPU-hours first; only pods of ``namespaces`` when
    given (the namespaces the viewer may see). A pod runs from its start until it
    finished or was seen deleted; one still running counts until ``until``."""
    assert by in ("queue", "namespace")
    pods = PodLifetime.objects.using(using)
    if namespaces is not None:
        pods = pods.filter(namespace__in=sorted(namespaces))
    rows = (
        pods.filter(started__isnull=False, started__lt=until)
        .filter(Q(finished__isnull=True) | Q(finished__gt=since))
        .filter(Q(deleted__isnull=True) | Q(deleted__gt=since))
        .values_list(by, "started", "finished", "deleted", "gpu", "cpu")
    )
    gpu: dict[str, list[Interval]] = {}
    cpu: dict[str, list[Interval]] = {}
    for key, started, finished, deleted, gpus, cores in rows:
        end = finished or deleted
        gpu.setdefault(key, []).append(Interval(started, end, gpus or 0.0))
        cpu.setdefault(key, []).append(Interval(started, end, cores or 0.0))
    out = [
        UsageRow(
            key, resource_hours(gpu[key], since, until), resource_hours(cpu[key], since, until), len(gpu[key])
        )
        for key in gpu
    ]
    return sorted(out, key=lambda r: (-r.gpu_hours, -r.cpu_hours, r.key))


@dataclass(frozen=True)
class PodSpan:
    name: str
    task: str
    node: str
    phase: str
    created: datetime | None
    scheduled: datetime | None
    started: datetime | None
    finished: datetime | None
    deleted: datetime | None
    exit_code: int | None
    restarts: int
    vanished: bool = False  # ``deleted`` is when it was last known to exist: its end was not observed


def job_pods(using: str, namespace: str, job: str, since: datetime) -> list[PodSpan]:
    """Every recorded pod of the Job ``namespace/job`` created since ``since`` (deleted ones
    too), oldest first."""
    rows = (
        PodLifetime.objects.using(using)
        .filter(namespace=namespace, job=job)
        .filter(Q(created__isnull=True) | Q(created__gte=since))
        .order_by("created", "name")[:500]
    )
    return [
        PodSpan(
            r.name,
            r.task,
            r.node,
            r.phase,
            r.created,
            r.scheduled,
            r.started,
            r.finished,
            r.deleted,
            r.exit_code,
            r.restarts,
            r.vanished,
        )
        for r in rows
    ]


def podgroup_wait(using: str, uid: str) -> float | None:
    """Seconds the PodGroup ``uid`` waited from creation to its first Running, None until it
    ran or when its creation time is unknown."""
    return Admission.objects.using(using).filter(uid=uid).values_list("wait", flat=True).first()


def newest_sample(using: str) -> datetime | None:
    """When the newest Queue sample was taken, None before the first."""
    return QueueSample.objects.using(using).order_by("-at").values_list("at", flat=True).first()


def allocated_at(using: str, at: datetime) -> dict[tuple[str, str], float | None]:
    """{(queue, resource): allocated} of the samples taken at ``at`` (None: the queue stated none)."""
    rows = QueueSample.objects.using(using).filter(at=at).values_list("queue", "resource", "allocated")
    return {(queue, res): allocated for queue, res, allocated in rows}


def queue_usage_hourly(using: str, since: datetime, until: datetime) -> dict[str, dict[str, list[Point]]]:
    """{queue: {resource: [(hour, mean allocated)]}} of every Queue's cpu and ``*/gpu`` samples in
    [since, until), hourly means computed by the database."""
    rows = (
        QueueSample.objects.using(using)
        .filter(at__gte=since, at__lt=until)
        .filter(Q(resource="cpu") | Q(resource__endswith="/gpu"))
        .annotate(hour=TruncHour("at", tzinfo=UTC))
        .values("queue", "resource", "hour")
        .annotate(a=Avg("allocated"))
        .order_by("hour")
        .values_list("queue", "resource", "hour", "a")
    )
    out: dict[str, dict[str, list[Point]]] = {}
    for queue, res, hour, allocated in rows:
        out.setdefault(queue, {}).setdefault(res, []).append((hour, allocated))
    return out


def queue_allocated_max(using: str, since: datetime, until: datetime) -> dict[tuple[str, str], float]:
    """{(queue, resource): the highest allocated of any sample in [since, until)} of every Queue's cpu
    and ``*/gpu`` samples, one grouped query; a pair whose samples stated none is absent."""
    rows = (
        QueueSample.objects.using(using)
        .filter(at__gte=since, at__lt=until, allocated__isnull=False)
        .filter(Q(resource="cpu") | Q(resource__endswith="/gpu"))
        .values("queue", "resource")
        .annotate(m=Max("allocated"))
        .order_by()
        .values_list("queue", "resource", "m")
    )
    return {(queue, res): peak for queue, res, peak in rows}


def fill_progress(using: str) -> tuple[float, float] | None:
    """(hours written, hours in all) of the newest fast-forwarded history still being written,
    None when none is."""
    fill = HistoryFill.objects.using(using).filter(done=False).order_by("-id").first()
    if fill is None:
        return None
    return (fill.reached - fill.start).total_seconds() / 3600, (fill.end - fill.start).total_seconds() / 3600
