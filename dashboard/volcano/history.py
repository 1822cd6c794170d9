"""Facts over time: a pod's lifetime, admission waits, percentiles, resource-hours, queue order.

Pure functions over cached objects and recorded values (dashboard/history records them).

Sources: Kubernetes core/v1 Pod (``status.conditions`` PodScheduled, ``status.startTime``,
``containerStatuses[].state.terminated``); Volcano's PodGroup phases (Pending -> Inqueue -> Running)
and the scheduler's job order (volcano-sh/volcano pkg/scheduler/plugins/priority: higher
``spec.priorityClassName`` priority first, then the older ``creationTimestamp``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal

from dashboard.volcano.objects import as_dict, as_list, meta, spec, status
from dashboard.volcano.podrecords import container_ends
from dashboard.volcano.pods import restart_count
from dashboard.volcano.quantities import resource_amount
from dashboard.volcano.queues import subtree_allocated
from dashboard.volcano.time import parse_time


def is_gpu_resource(resource: str) -> bool:
    """Whether a resource name counts GPUs: the device plugins' ``<vendor>/gpu`` names
    (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915 is not a whole GPU and does not count)."""
    return resource.rsplit("/", 1)[-1] == "gpu"


def gpu_amount(requests: Mapping[str, Decimal]) -> Decimal:
    """GPUs requested: the sum over the ``*/gpu`` resources of ``requests`` (0 when none)."""
    return sum((v for k, v in requests.items() if is_gpu_resource(k)), Decimal(0))


@dataclass(frozen=True)
class PodTimes:
    """When a pod was created, bound to a node, started and finished (None: not yet or unknown)."""

    created: datetime | None
    scheduled: datetime | None
    started: datetime | None
    finished: datetime | None
    exit_code: int | None  # the highest exit code of its terminated containers
    restarts: int


def pod_times(pod: object) -> PodTimes:
    """A pod's lifetime from its own status: ``scheduled`` is the PodScheduled condition's
    lastTransitionTime when True; ``started`` is ``status.startTime`` (the kubelet accepted it);
    ``finished`` the latest container termination once the pod phase is Succeeded or Failed."""
    st = status(pod)
    scheduled = None
    for cond in as_list(st.get("conditions")):
        c = as_dict(cond)
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            scheduled = parse_time(c.get("lastTransitionTime"))
    ends = container_ends(pod, message_chars=0)
    finished = None
    if st.get("phase") in ("Succeeded", "Failed"):
        times = [e.finished for e in ends if e.finished is not None]
        finished = max(times) if times else None
    codes = [int(e.exit_code) for e in ends if e.exit_code.lstrip("-").isdigit()]
    restarts = sum(restart_count(cs) for cs in as_list(st.get("containerStatuses")))
    return PodTimes(
        created=parse_time(meta(pod).get("creationTimestamp")),
        scheduled=scheduled,
        started=parse_time(st.get("startTime")),
        finished=finished,
        exit_code=max(codes) if codes else None,
        restarts=restarts,
    )


def admission_wait(
    created: datetime | None, inqueue: datetime | None, running: datetime | None
) -> timedelta | None:
    """How long a gang waited: created -> Running (through Inqueue), or None when it has not run
    or a time is unknown. A Running before its creation (clock skew) reads as no wait."""
    return None if running is None else wait_so_far(created, inqueue, running)


def wait_so_far(created: datetime | None, inqueue: datetime | None, now: datetime) -> timedelta | None:
    """How long a gang has waited by ``now``: from its creation (or an earlier Inqueue) as
    ``admission_wait`` counts it; None when the creation is unknown, no wait before it."""
    if created is None:
        return None
    start = min(created, inqueue) if inqueue is not None else created
    return max(now - start, timedelta(0))


def percentile_ranks(n: int, q: float) -> tuple[int, int, float]:
    """Where the ``q``-th percentile (0-100) of ``n`` ordered values (n >= 1) lies: (low rank,
    high rank, fraction of the way from the one to the other), ranks 0-based; ``interpolate``
    the two values found there."""
    rank = (n - 1) * q / 100
    low = math.floor(rank)
    return low, math.ceil(rank), rank - low


def interpolate(low: float, high: float, fraction: float) -> float:
    """The value ``fraction`` of the way from ``low`` to ``high`` (``percentile_ranks``)."""
    return low + (high - low) * fraction


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values`` by linear interpolation between closest
    ranks (numpy's default); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    low, high, fraction = percentile_ranks(len(ordered), q)
    return interpolate(ordered[low], ordered[high], fraction)


@dataclass(frozen=True)
class Interval:
    """A pod's use of ``amount`` of a resource from ``start`` until ``end`` (None: still running)."""

    start: datetime
    end: datetime | None
    amount: float


def resource_hours(intervals: Iterable[Interval], since: datetime, until: datetime) -> float:
    """Amount x hours of ``intervals`` within [since, until); an open interval runs until ``until``."""
    total = 0.0
    for iv in intervals:
        start = max(iv.start, since)
        end = min(iv.end or until, until)
        if end > start:
            total += iv.amount * (end - start).total_seconds() / 3600
    return total


@dataclass(frozen=True)
class QueuedGang:
    """A pending PodGroup as the scheduler orders it."""

    namespace: str
    name: str
    priority: int
    created: datetime | None


def queue_order(gangs: Iterable[QueuedGang]) -> list[QueuedGang]:
    """Pending gangs in the order the scheduler considers them: higher priority first, then the
    older creation time, then namespace/name (the scheduler's tie-break is its own map order)."""
    far = datetime.max.replace(tzinfo=None)
    return sorted(
        gangs,
        key=lambda g: (
            -g.priority,
            g.created.replace(tzinfo=None) if g.created else far,
            g.namespace,
            g.name,
        ),
    )


def position(gangs: Iterable[QueuedGang], namespace: str, name: str) -> tuple[int, int] | None:
    """(1-based position, how many) of the gang ``namespace/name`` in ``queue_order``; None when
    it is not among them."""
    ordered = queue_order(gangs)
    for i, gang in enumerate(ordered):
        if (gang.namespace, gang.name) == (namespace, name):
            return i + 1, len(ordered)
    return None


QUEUE_FIELDS = ("allocated", "deserved", "capability", "guarantee")


def _queue_lists(queue: object) -> dict[str, dict[str, object]]:
    """A Queue's resource lists by ``QUEUE_FIELDS`` name ({} where it states none)."""
    sp = spec(queue)
    return {
        "allocated": as_dict(status(queue).get("allocated")),
        "deserved": as_dict(sp.get("deserved")),
        "capability": as_dict(sp.get("capability")),
        "guarantee": as_dict(as_dict(sp.get("guarantee")).get("resource")),
    }


def queue_resources(queue: object) -> set[str]:
    """The resources a Queue names in any of its ``QUEUE_FIELDS`` lists: the keys of its
    ``queue_amounts``."""
    return {str(res) for values in _queue_lists(queue).values() for res in values}


def queue_amounts(queue: object, resources: Iterable[str] = ()) -> dict[str, dict[str, Decimal | None]]:
    """A Queue's amounts per resource: {resource: {field: amount or None}} for the fields of
    ``QUEUE_FIELDS`` (status.allocated, spec.deserved, spec.capability,
    spec.guarantee.resource); a value that is no usable amount reads None, never 0. A resource
    that a present status.allocated leaves out is allocated 0 (the scheduler lists only what it
    placed: ``queues.subtree_allocated``, the rule the pages use); without a status.allocated at
    all (the scheduler has not written the Queue's status) every allocated is None. ``resources``:
    more resources to give (e.g. every one some Queue names), so that a series stays continuous
    while none is allocated."""
    st = status(queue)
    lists = _queue_lists(queue)
    out: dict[str, dict[str, Decimal | None]] = {}
    for field_name, values in lists.items():
        for res, raw in values.items():
            out.setdefault(str(res), dict.fromkeys(QUEUE_FIELDS))[field_name] = resource_amount(raw)
    for res in resources:
        out.setdefault(str(res), dict.fromkeys(QUEUE_FIELDS))
    stated = isinstance(st.get("allocated"), dict)
    for res, amounts in out.items():
        if res not in lists["allocated"]:
            whole = queue if isinstance(queue, dict) else {}
            amounts["allocated"] = subtree_allocated(whole, res, None) if stated else None
    return out


def daily_percentiles(
    waits: Iterable[tuple[datetime, float]], tz: tzinfo | None = None
) -> list[tuple[date, float, float, int]]:
    """Waits (when the wait ended, seconds) per calendar day in ``tz`` (UTC when None):
    [(day, p50, p90, how many)], oldest day first; days without a wait are left out."""
    by_day: dict[date, list[float]] = {}
    for at, seconds in waits:
        day = (at.astimezone(tz) if tz else at).date()
        by_day.setdefault(day, []).append(seconds)
    out = []
    for day in sorted(by_day):
        values = by_day[day]
        p50, p90 = percentile(values, 50), percentile(values, 90)
        assert p50 is not None and p90 is not None
        out.append((day, p50, p90, len(values)))
    return out


def downsample(
    points: Sequence[tuple[datetime, float | None]], since: datetime, until: datetime, buckets: int
) -> list[tuple[datetime, float | None]]:
    """``points`` in [since, until) averaged into ``buckets`` equal spans, each at its start; a
    span without a known value is None (a gap, never 0)."""
    span = (until - since) / buckets
    sums = [0.0] * buckets
    counts = [0] * buckets
    for at, value in points:
        if value is None or at < since or at >= until:
            continue
        i = min(buckets - 1, int((at - since) / span))
        sums[i] += value
        counts[i] += 1
    return [(since + span * i, (sums[i] / counts[i]) if counts[i] else None) for i in range(buckets)]
