"""Gangs: how many pods a Volcano Job or PodGroup needs together, how many count as ready, and
what the gang's minimum resources are.

Readiness, as Volcano's scheduler decides it (the gang plugin, volcano-sh/volcano
pkg/scheduler/api/job_info.go ``ReadyTaskNum``): a task counts toward its gang when it is
allocated, binding, bound, running or succeeded. Of the counters written to a Volcano Job's or a
PodGroup's status that is ``running + succeeded``, against minAvailable (Job) or ``spec.minMember``
(PodGroup). Failed pods hold no place in the gang: the Job controller does count them when it moves
a Job from Pending to Running (pkg/controllers/job/state/pending.go), but an Aborted Job whose one
pod failed has not reached its minAvailable.

A gang of 0 (minAvailable or minMember 0) is no gang: the scheduler's ``JobReady`` holds at once,
so each pod is placed on its own; such a gang is ``gangless``, neither ``met`` nor ``short``.
(Volcano's admission webhook rejects a Job without tasks, ``No task specified in job spec``.)

A negative counter or size (the schemas admit them; no controller writes them) is unknown, as is a
minMember that is no integer: such a number is None in a GangCount, never 0, and the gang is
neither ``met`` nor ``short`` nor ``gangless``. Neither is a gang whose counters nobody has
reported yet (``known`` False: a Job without a status written by the Job controller, a PodGroup
without status): unknown is not zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dashboard.volcano.objects import as_dict, as_list, as_str, count, integer, reported_count, spec, status
from dashboard.volcano.phases import podgroup_phase
from dashboard.volcano.quantities import queue_resource, resource_amount


@dataclass(frozen=True)
class GangCount:
    """One gang's counters: ``running`` pods, ``ready`` (the pods that count toward the gang),
    ``required`` (minAvailable / minMember) and ``total`` (the pods the gang can have). None is
    unknown: ``running`` or ``ready`` when a counter they read is negative, or not reported yet
    (``known`` False); ``required`` when the gang size is negative or no integer."""

    running: int | None
    ready: int | None
    required: int | None
    total: int
    known: bool = True

    @property
    def trusted(self) -> bool:
        """The counters are reported and every counter and size is known (none is negative)."""
        return (
            self.known
            and self.running is not None
            and self.ready is not None
            and self.required is not None
            and self.total >= 0
        )

    @property
    def met(self) -> bool:
        """A gang of at least 1 pod has enough pods counting toward it (never claimed from unknown
        numbers, never for a gang of 0)."""
        ready, required = self.ready, self.required
        return self.trusted and ready is not None and required is not None and 1 <= required <= ready

    @property
    def gangless(self) -> bool:
        """The gang requires 0 pods (minAvailable / minMember 0): no gang constraint at all."""
        return self.trusted and self.required == 0

    @property
    def short(self) -> bool:
        """Fewer pods count toward the gang than it requires (never claimed from unknown numbers)."""
        ready, required = self.ready, self.required
        return self.trusted and ready is not None and required is not None and ready < required


def _known(value: int | None) -> int | None:
    """A counter or size; a negative one (the schemas admit it, no controller writes it) is
    unknown, None."""
    return value if value is not None and value >= 0 else None


def gang_count(running: int, counted: Iterable[int], required: int | None, total: int) -> GangCount:
    """A GangCount whose ``ready`` is the sum of ``counted``; a negative counter or ``required``
    is unknown (None), as is ``ready`` when one of the counters summed is negative."""
    parts = list(counted)
    ready = sum(parts) if not parts or min(parts) >= 0 else None
    return GangCount(running=_known(running), ready=ready, required=_known(required), total=total)


# -- Volcano Jobs --------------------------------------------------------------------------------


def job_tasks(job: object) -> list[dict[str, Any]]:
    """spec.tasks of a Volcano Job (entries that are no object are skipped)."""
    return [t for t in as_list(spec(job).get("tasks")) if isinstance(t, dict)]


def task_replicas(task: object) -> int:
    """A task's replicas; a negative or unreadable value counts as 0 (no pod)."""
    return max(0, count(as_dict(task).get("replicas")))


def job_total_replicas(job: object) -> int:
    """Σ spec.tasks[].replicas: every pod the Job can have."""
    return sum(task_replicas(t) for t in job_tasks(job))


def job_min_available(job: object) -> int:
    """The Job's gang size: status.minAvailable (the controller copies it from spec), else
    spec.minAvailable, else the sum of the tasks' minAvailable (each defaulting to its replicas,
    as Volcano's admission webhook defaults them)."""
    st, sp = status(job), spec(job)
    if "minAvailable" in st:
        return count(st.get("minAvailable"))
    if "minAvailable" in sp:
        return count(sp.get("minAvailable"))
    return sum(count(t.get("minAvailable", t.get("replicas"))) for t in job_tasks(job))


# The pod counters of a Volcano Job's status (JobStatus in volcano-sh/apis pkg/apis/batch/v1alpha1).
JOB_COUNTERS = ("pending", "running", "succeeded", "failed", "terminating", "unknown", "retryCount")


def job_status_reported(job: object) -> bool:
    """The Job's pod counters have been written: status.state is an object, or a counter of
    JOB_COUNTERS is present. The Job controller writes JobStatus whole; ``state`` is a struct,
    which Go's encoding/json writes even under ``omitempty``, and the counters are ``omitempty``
    ints, so a status with a state or with any counter writes a zero counter as nothing. Without
    either (no status yet, or a status holding only taskStatusCount) no counter is known."""
    st = status(job)
    return isinstance(st.get("state"), dict) or any(st.get(k) is not None for k in JOB_COUNTERS)


def job_counter(job: object, key: str) -> int | None:
    """A counter of JOB_COUNTERS (``status.<key>``), None while the Job controller has not
    reported it (``job_status_reported``)."""
    return reported_count(status(job), key, job_status_reported(job))


def job_counters(job: object) -> dict[str, int | None]:
    """Every counter of JOB_COUNTERS by name (``job_counter``), for display: a negative counter
    (the schema admits it, no controller writes it) is unknown, None, never a number."""
    reported = job_status_reported(job)
    st = status(job)
    return known_counts({key: reported_count(st, key, reported) for key in JOB_COUNTERS})


def job_gang(job: object) -> GangCount:
    """The Job's gang: running + succeeded against minAvailable (``known`` False while those
    counters are not reported)."""
    counters = [job_counter(job, k) for k in ("running", "succeeded")]
    if None in counters:
        return GangCount(None, None, _known(job_min_available(job)), job_total_replicas(job), known=False)
    known = [c for c in counters if c is not None]
    return gang_count(known[0], known, job_min_available(job), job_total_replicas(job))


def job_has_no_tasks(job: object) -> bool:
    """The Job has a spec without tasks (spec.tasks absent or empty: the same to Volcano's Go
    types). Volcano's admission webhook rejects such a Job (``No task specified in job spec``);
    one created while the webhook was off has nothing to schedule."""
    sp = spec(job)
    return bool(sp) and not job_tasks(job)


def task_min_available(task: object) -> int:
    """A task's minAvailable, defaulting to its replicas (as count() reads them)."""
    t = as_dict(task)
    if t.get("minAvailable") is not None:
        return count(t.get("minAvailable"))
    return count(t.get("replicas"))


def task_phase_counts(job: object, task_name: str) -> dict[str, int]:
    """status.taskStatusCount[task].phase: pods of one task per pod phase."""
    tsc = as_dict(status(job).get("taskStatusCount"))
    return {as_str(k): count(v) for k, v in as_dict(as_dict(tsc.get(task_name)).get("phase")).items()}


def known_counts(counts: Mapping[str, int | None]) -> dict[str, int | None]:
    """``counts`` for display (task_phase_counts, counters by phase): a negative one is unknown,
    None, never a number."""
    return {key: _known(v) for key, v in counts.items()}


def task_counts_reported(job: object, task_name: str) -> bool:
    """The pods of task ``task_name`` have been counted: the task is in status.taskStatusCount, or
    the Job controller has written the status (then a task without pods is left out of the map)."""
    return job_status_reported(job) or task_name in as_dict(status(job).get("taskStatusCount"))


def task_gang(task: object, phases: dict[str, int], known: bool = True) -> GangCount:
    """One task's gang: Running + Succeeded pods (from ``phases``, task_phase_counts) against the
    task's minAvailable; ``known`` False when the task's pods have not been counted
    (``task_counts_reported``)."""
    required, total = task_min_available(task), count(as_dict(task).get("replicas"))
    if not known:
        return GangCount(None, None, _known(required), total, known=False)
    counted = [phases.get(p, 0) for p in ("Running", "Succeeded")]
    return gang_count(counted[0], counted, required, total)


def job_below_min_available(job: object) -> bool:
    """A Job's gang counters are below minAvailable (``GangCount.short``)."""
    return job_gang(job).short


# -- PodGroups -----------------------------------------------------------------------------------


def podgroup_min_member(pg: object) -> int | None:
    """spec.minMember, the PodGroup's gang size: 0 when absent or null (Go ``omitempty``); None
    (unknown) when it is negative or no integer (true, 1.5, "x"): the schema admits a negative
    one, and neither reads as a gang of 0."""
    value = spec(pg).get("minMember")
    if value is None:
        return 0
    return _known(integer(value))


def podgroup_status_reported(pg: object) -> bool:
    """The scheduler has written the PodGroup's status (a non-empty status object; it writes the
    counters of PodGroupStatus with Go ``omitempty``, so then an absent counter is 0)."""
    return bool(status(pg))


def podgroup_counter(pg: object, key: str) -> int | None:
    """``status.<key>`` (running, succeeded, failed) of a PodGroup, None while it has no status."""
    return reported_count(status(pg), key, podgroup_status_reported(pg))


# The pod counters of a PodGroup's status (PodGroupStatus in volcano-sh/apis).
PODGROUP_COUNTERS = ("running", "succeeded", "failed")


def podgroup_counters(pg: object) -> dict[str, int | None]:
    """Every counter of PODGROUP_COUNTERS by name (``podgroup_counter``), for display: a negative
    counter is unknown, None, never a number (as ``job_counters``)."""
    return {key: _known(podgroup_counter(pg, key)) for key in PODGROUP_COUNTERS}


def podgroup_gang(pg: object) -> GangCount:
    """The scheduler's gang: running + succeeded against spec.minMember; ``total`` is the larger
    of minMember and Σ spec.minTaskMember; ``known`` False while the PodGroup has no status."""
    per_task = sum(max(0, count(v)) for v in as_dict(spec(pg).get("minTaskMember")).values())
    min_member = podgroup_min_member(pg)
    total = max(per_task, min_member or 0)
    running, succeeded = podgroup_counter(pg, "running"), podgroup_counter(pg, "succeeded")
    if running is None or succeeded is None:
        return GangCount(None, None, min_member, total, known=False)
    return gang_count(running, (running, succeeded), min_member, total)


def podgroup_below_gang(pg: object) -> bool:
    """A Running or Unknown PodGroup whose gang is ``short`` (fewer ready pods than minMember)."""
    return podgroup_phase(pg) in ("Running", "Unknown") and podgroup_gang(pg).short


# -- minimum resources ---------------------------------------------------------------------------


def podgroup_min_resources(pg: object) -> dict[str, Decimal]:
    """PodGroup.spec.minResources by Queue resource name (``queue_resource``: ``requests.cpu`` and
    ``cpu`` are the same amount and the larger is taken; ``limits.*``, ``count/*`` and pods are
    left out). Values that are no usable amount are left out; no minResources gives {}."""
    out: dict[str, Decimal] = {}
    for key, raw in as_dict(spec(pg).get("minResources")).items():
        res, value = queue_resource(as_str(key)), resource_amount(raw)
        if res is not None and value is not None:
            out[res] = max(out.get(res, Decimal(0)), value)
    return out


def _container_amounts(container: object) -> dict[str, Decimal]:
    """A container's requests per resource, a limit standing in for a missing request (Kubernetes
    defaults a request to its limit). Values that are no usable amount are skipped."""
    resources = as_dict(as_dict(container).get("resources"))
    requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
    out: dict[str, Decimal] = {}
    for res in {*limits, *requests}:
        value = resource_amount(requests[res] if res in requests else limits.get(res))
        if value is not None:
            out[as_str(res)] = value
    return out


def pod_template_requests(template: object) -> dict[str, Decimal]:
    """The effective requests of one pod of a PodTemplateSpec, as the scheduler counts them: the
    sum over ``containers``, and per resource at least the largest single init container."""
    sp = spec(template)
    total: dict[str, Decimal] = {}
    for container in as_list(sp.get("containers")):
        for res, value in _container_amounts(container).items():
            total[res] = total.get(res, Decimal(0)) + value
    for container in as_list(sp.get("initContainers")):
        for res, value in _container_amounts(container).items():
            total[res] = max(total.get(res, Decimal(0)), value)
    return total


def job_min_resources(job: object, min_available: int) -> dict[str, Decimal]:
    """What the first ``min_available`` pods of a Volcano Job request together, by resource name:
    what the Job controller writes to PodGroup.spec.minResources, for when the PodGroup is not
    there (yet). Volcano orders the tasks by priority class value, which needs the cluster's
    PriorityClasses; the tasks are taken in spec order (it only matters when tasks differ and
    minAvailable is below the total)."""
    total: dict[str, Decimal] = {}
    left = max(0, min_available)
    for task in job_tasks(job):
        if left <= 0:
            break
        n = min(left, task_replicas(task))
        left -= n
        for res, value in pod_template_requests(task.get("template")).items():
            total[res] = total.get(res, Decimal(0)) + value * n
    return total


def job_min_queue_resources(job: object, min_available: int) -> dict[str, Decimal]:
    """``job_min_resources`` by Queue resource name (``queue_resource``)."""
    out: dict[str, Decimal] = {}
    for key, value in job_min_resources(job, min_available).items():
        res = queue_resource(key)
        if res is not None:
            out[res] = value
    return out
