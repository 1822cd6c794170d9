"""Why a Volcano Job or PodGroup does not run: the facts, most decisive first.

The diagnosis reads what Volcano reads: a Job whose PodGroup is Pending has no pods yet; a
PodGroup is Pending until its queue admits it (enqueue) and Inqueue until the whole gang is placed
(allocate); only an Open queue admits work; a queue's capability bounds the gang for ever, its
room (capability − allocated − reserved, see ``dashboard.volcano.queues``) for now; the
scheduler's Unschedulable condition message is quoted as written. Nothing is admitted or placed
while the scheduler's Deployment is not ready, and no Volcano Job gets its PodGroup or pods while
the controller manager's is not. The nodes bound a gang as the cluster stands: its minimum
resources against every node's allocatable summed, and each pod against one node's allocatable,
taints (the kube-scheduler's TaintToleration filter) and cordon. Facts carry numbers and names,
never words: the presenters word them (and translate them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from dashboard.volcano.gang import (
    job_has_no_tasks,
    job_min_available,
    job_min_queue_resources,
    job_tasks,
    job_total_replicas,
    pod_template_requests,
    podgroup_min_member,
    podgroup_min_resources,
    task_replicas,
)
from dashboard.volcano.nodes import (
    NodeBar,
    allocatable_reported,
    cluster_allocatable,
    never_fits,
    pod_node_selector,
    pod_tolerations,
)
from dashboard.volcano.objects import as_dict, as_str, count, name, owner_references, spec, status
from dashboard.volcano.phases import podgroup_phase
from dashboard.volcano.pods import pod_blockers
from dashboard.volcano.quantities import resource_sort_key
from dashboard.volcano.queues import (
    CapabilityLimit,
    InqueuePodGroups,
    Leftover,
    QueueChildren,
    QueueLookup,
    Room,
    RoomRow,
    capability_limits,
    gang_room,
    leftovers_hold,
    queue_ancestry,
)
from dashboard.volcano.scheduler import Readiness
from dashboard.volcano.states import current_condition_entry, replica_shortfall
from dashboard.volcano.time import parse_time

Obj = Mapping[str, Any]
Level = Literal["info", "warn", "bad"]


@dataclass(frozen=True)
class Fact:
    """One reason. ``kind`` names it (see FACT_KINDS); ``level`` is info/warn/bad; ``values`` the
    numbers and names it is about; ``verbatim`` a message as the cluster wrote it; ``limits`` the
    resources above a capability (kind "capability"); ``rows`` the resources without room at one
    queue (kind "no_room"); ``blockers`` pod problems "<pod>: <problem>" (kind "pod_problems")."""

    kind: str
    level: Level
    values: Mapping[str, Any] = field(default_factory=dict)
    verbatim: str = ""
    limits: tuple[CapabilityLimit, ...] = ()
    rows: tuple[RoomRow, ...] = ()
    blockers: tuple[str, ...] = ()
    # When the condition quoted in ``verbatim`` became current (its lastTransitionTime).
    verbatim_at: datetime | None = None
    # (resource, the gang's need, the cluster's total allocatable), kind "cluster_too_small".
    short: tuple[tuple[str, Decimal, Decimal], ...] = ()
    # Why each kind of node can never take a pod of the task, kind "no_node_for_task".
    bars: tuple[NodeBar, ...] = ()


FACT_KINDS = (
    # a Volcano component the gang waits on is not running
    "component_down",  # values: component, ready, desired
    # never: the gang can never be complete as it is
    "job_no_tasks",
    "min_available_above_replicas",  # values: min, total
    "min_member_above_replicas",  # values: min, total
    "min_member_above_pods",  # values: min, n
    "capability",  # values: queue; limits
    "cluster_too_small",  # values: nodes; short
    "no_node_for_task",  # values: task, request ({res: amount}); bars
    # now
    "job_no_status",
    "podgroups_unreadable",  # values: why
    "podgroup_missing",
    "podgroup_no_status",
    "podgroup_pending",  # values: queue, pods_exist (bool)
    "podgroup_inqueue",  # values: min (None: minMember invalid), never (bool)
    "podgroup_unknown",
    "podgroup_unschedulable",
    "queues_unreadable",  # values: queue, why
    "queue_missing",  # values: queue
    "queue_not_open",  # values: queue, state
    "no_room",  # values: queue, depth, own; rows
    "scheduler_differs",  # values: queue, leftovers (list of Leftover), hold ({res: amount}); rows; verbatim
    "pod_problems",  # blockers
)


@dataclass(frozen=True)
class PendingContext:
    """What the diagnosis reads. ``job`` is the Volcano Job (None on a PodGroup's page, where
    ``owner_job`` is the Volcano Job owning ``podgroup``, if any); ``queue`` the gang's queue (None
    when absent), named ``queue_name``; ``pods`` the gang's pods. ``queue_lookup(name)`` finds
    ancestors, ``queue_children(name)`` child queues, ``inqueue_podgroups(name)`` a queue's Inqueue
    PodGroups. ``podgroups_unreadable``/``queues_unreadable``: why that kind cannot be read ("" when
    it can): an object missing from an unreadable kind is reported as unreadable, never as absent.
    ``queue_leftovers``: the possible leftovers in the gang's queue (queues.possible_leftovers).
    ``nodes``: every Node, None when Nodes cannot be read.
    ``components_down``: the Volcano components not ready (scheduler.not_ready; empty when their
    Deployments cannot be read: unknown is not down)."""

    job: Obj | None
    podgroup: Obj | None
    queue: Obj | None
    queue_name: str
    pods: Sequence[Obj] = ()
    owner_job: Obj | None = None
    queue_lookup: QueueLookup | None = None
    queue_children: QueueChildren | None = None
    inqueue_podgroups: InqueuePodGroups | None = None
    podgroups_unreadable: str = ""
    queues_unreadable: str = ""
    queue_leftovers: Sequence[Leftover] = ()
    components_down: Sequence[Readiness] = ()
    # The cluster's nodes; None when they cannot be read (then nothing is said about them).
    nodes: Sequence[Obj] | None = None


def unschedulable_condition(pg: object) -> dict[str, Any] | None:
    """The PodGroup's current condition (``states.current_condition_entry``) when it is
    Unschedulable, as written; None when the gang was placed since (a newer True Scheduled) or
    there is none."""
    current = current_condition_entry(pg)
    return current if current is not None and current.get("type") == "Unschedulable" else None


# The scheduler's words for a queue without room: the capacity/proportion plugins' enqueue event
# ("queue resource quota insufficient") and a queue reported overused.
_QUEUE_FULL = re.compile(r"queue resource quota insufficient|queue\b.*\boverused", re.IGNORECASE)


def scheduler_says_queue_full(pg: object) -> str:
    """The PodGroup's current Unschedulable message when it says the queue has no room, else ""."""
    cond = unschedulable_condition(pg)
    message = as_str(cond.get("message")) if cond else ""
    return message if _QUEUE_FULL.search(message) else ""


def owned_by_volcano_job(pg: object) -> bool:
    """An ownerReference of ``pg`` is a Volcano Job (batch.volcano.sh)."""
    return any(
        r.get("kind") == "Job" and as_str(r.get("apiVersion")).startswith("batch.volcano.sh/")
        for r in owner_references(pg)
    )


def never_start(ctx: PendingContext) -> tuple[list[Fact], set[str]]:
    """Facts for a gang that can never be satisfied as it is, and the resources whose need exceeds
    a capability (the room facts leave them out):

    - a Volcano Job without tasks (``gang.job_has_no_tasks``): nothing to schedule;
    - a Volcano Job's minAvailable above Σ tasks[].replicas (Volcano's admission webhook rejects
      this, so such a Job exists only when the webhook was off);
    - a PodGroup's minMember above the pods that can exist: the Job's replicas for a Volcano Job;
      for other workloads the pods that exist, since their owner's replicas are not known here;
    - the gang's minimum resources (PodGroup.spec.minResources, or the sum over the Job's first
      minAvailable pods when there is no PodGroup) above the capability of the queue or of an
      ancestor, or above the whole cluster's allocatable (``cluster_short``);
    - a task of the Job whose pods no node can ever take (``tasks_never_placed``).
    """
    out: list[Fact] = []
    pg = ctx.podgroup
    vcjob = ctx.job if ctx.job is not None else ctx.owner_job
    min_av = job_min_available(vcjob) if vcjob is not None else 0
    if vcjob is not None and job_has_no_tasks(vcjob):
        out.append(Fact("job_no_tasks", "bad"))
    # ``tasks: []`` is a Job of 0 replicas; a Job without spec.tasks says nothing about them.
    if vcjob is not None and isinstance(spec(vcjob).get("tasks"), list):
        total = job_total_replicas(vcjob)
        if shortfall := replica_shortfall(vcjob):
            out.append(
                Fact("min_available_above_replicas", "bad", {"min": shortfall.min_available, "total": total})
            )
        min_member = podgroup_min_member(pg) if pg is not None else 0
        if pg is not None and min_member is not None and min_member > total and min_member != min_av:
            out.append(Fact("min_member_above_replicas", "bad", {"min": min_member, "total": total}))
    elif pg is not None and vcjob is None and ctx.pods and not owned_by_volcano_job(pg):
        min_member = podgroup_min_member(pg)
        if min_member is not None and min_member > len(ctx.pods):
            out.append(Fact("min_member_above_pods", "bad", {"min": min_member, "n": len(ctx.pods)}))
    needs = podgroup_min_resources(pg) if pg else {}
    if not needs and vcjob is not None:
        needs = job_min_queue_resources(vcjob, min_av)
    limits = capability_limits(needs, queue_ancestry(ctx.queue, ctx.queue_lookup)) if ctx.queue else []
    if limits:
        ordered = tuple(sorted(limits, key=lambda x: resource_sort_key(x.resource)))
        out.append(Fact("capability", "bad", {"queue": name(ctx.queue)}, limits=ordered))
    short = cluster_short(needs, ctx.nodes)
    if short:
        out.append(Fact("cluster_too_small", "bad", {"nodes": len(ctx.nodes or ())}, short=short))
    if vcjob is not None and ctx.nodes:
        out.extend(tasks_never_placed(vcjob, min_av, ctx.nodes))
    return out, {lim.resource for lim in limits} | {res for res, _need, _total in short}


def tasks_never_placed(vcjob: Obj, min_available: int, nodes: Sequence[Obj]) -> list[Fact]:
    """A "no_node_for_task" fact per task of ``vcjob`` whose pods no node of ``nodes`` can ever
    take (``nodes.never_fits``), when the gang needs them: the task's own minAvailable (Volcano
    defaults it to its replicas) is above 0, or the other tasks' replicas are fewer than the
    gang's ``min_available``."""
    out = []
    tasks = [as_dict(t) for t in job_tasks(vcjob)]
    never: list[tuple[dict[str, Any], dict[str, Decimal], list[NodeBar]]] = []
    for task in tasks:
        template = as_dict(task.get("template"))
        request = pod_template_requests(template)
        tolerations, selector = pod_tolerations(template), pod_node_selector(template)
        if task_replicas(task) > 0 and (bars := never_fits(request, tolerations, selector, nodes)):
            never.append((task, request, bars))
    placeable = sum(task_replicas(t) for t in tasks) - sum(task_replicas(t) for t, _r, _b in never)
    for task, request, bars in never:
        own_min = count(task["minAvailable"]) if "minAvailable" in task else task_replicas(task)
        if own_min > 0 or placeable < min_available:
            values = {"task": as_str(task.get("name")), "request": request}
            out.append(Fact("no_node_for_task", "bad", values, bars=tuple(bars)))
    return out


def cluster_short(
    needs: Mapping[str, Decimal], nodes: Sequence[Obj] | None
) -> tuple[tuple[str, Decimal, Decimal], ...]:
    """(resource, need, the cluster's total allocatable) for each resource of ``needs`` above
    the sum of every node's allocatable (``nodes.cluster_allocatable``; a resource no node offers
    totals 0), in resource order. Empty when the nodes cannot be read (None) or there are none
    (a cluster without nodes is still being built) or some node reports no allocatable (the sum
    is then only a lower bound), and for a resource whose total is unknown."""
    if not nodes or not all(allocatable_reported(n) for n in nodes):
        return ()
    total = cluster_allocatable(nodes)
    out = []
    for res in sorted(needs, key=resource_sort_key):
        have = total.get(res, Decimal(0))
        if have is not None and needs[res] > have:
            out.append((res, needs[res], have))
    return tuple(out)


def no_room(room: Room, queue_name: str, impossible: set[str]) -> list[Fact]:
    """One "no_room" fact per queue that limits most (``RoomRow.binding``) at least one resource
    the gang lacks room for, the own queue first, then its ancestors; resources in ``impossible``
    (above a capability: a "never" fact) are left out."""
    by_queue: dict[tuple[int, str], list[RoomRow]] = {}
    for row in room.rows:
        if row.binding and row.short and row.resource not in impossible:
            by_queue.setdefault((row.depth, row.queue), []).append(row)
    return [
        Fact("no_room", "bad", {"queue": qname, "depth": depth, "own": queue_name}, rows=tuple(rows))
        for (depth, qname), rows in sorted(by_queue.items())
    ]


def _podgroup_facts(ctx: PendingContext, pg: Obj, never: bool) -> list[Fact]:
    phase = podgroup_phase(pg)
    cond = unschedulable_condition(pg)
    verbatim = as_str(cond.get("message")) if cond else ""
    at = parse_time(cond.get("lastTransitionTime")) if cond else None
    if not phase:
        return [Fact("podgroup_no_status", "info")]
    if phase == "Pending":
        # Other workloads (Deployments, batch/v1 Jobs, bare pods) create their pods themselves; a
        # Volcano Job's pods exist only once the PodGroup is admitted.
        exist = bool(ctx.pods) and ctx.job is None
        return [
            Fact(
                "podgroup_pending",
                "warn",
                {"queue": ctx.queue_name, "pods_exist": exist},
                verbatim,
                verbatim_at=at,
            )
        ]
    if phase == "Inqueue":
        size = podgroup_min_member(pg)  # None: an invalid minMember, the gang's size is unknown
        vcjob = ctx.job if ctx.job is not None else ctx.owner_job
        if vcjob is not None and job_has_no_tasks(vcjob):
            return []  # the "job_no_tasks" fact says it all: there is no gang to place
        return [Fact("podgroup_inqueue", "warn", {"min": size, "never": never}, verbatim, verbatim_at=at)]
    if phase == "Unknown":
        return [Fact("podgroup_unknown", "bad", {}, verbatim, verbatim_at=at)]
    if verbatim:
        return [Fact("podgroup_unschedulable", "warn", {}, verbatim, verbatim_at=at)]
    return []


def _queue_facts(ctx: PendingContext, room: Room | None, impossible: set[str]) -> list[Fact]:
    qname, queue = ctx.queue_name, ctx.queue
    if queue is None and ctx.queues_unreadable:
        return [Fact("queues_unreadable", "info", {"queue": qname, "why": ctx.queues_unreadable})]
    if queue is None:
        return [Fact("queue_missing", "bad", {"queue": qname})]
    out = []
    state = as_str(status(queue).get("state"))
    if state and state != "Open":
        out.append(Fact("queue_not_open", "bad", {"queue": qname, "state": state}))
    if room is None:
        room = gang_room(
            queue,
            ctx.podgroup,
            queue_lookup=ctx.queue_lookup,
            queue_children=ctx.queue_children,
            inqueue_podgroups=ctx.inqueue_podgroups,
        )
    facts = no_room(room, qname, impossible)
    message = scheduler_says_queue_full(ctx.podgroup) if ctx.podgroup is not None else ""
    rows = tuple(r for r in room.rows if r.binding and r.left is not None and r.resource not in impossible)
    if message and not facts and not impossible and rows:
        # Our arithmetic leaves room where the scheduler found none: both are shown.
        values = {
            "queue": qname,
            "leftovers": list(ctx.queue_leftovers),
            "hold": leftovers_hold(ctx.queue_leftovers),
        }
        cond = unschedulable_condition(ctx.podgroup)
        at = parse_time(cond.get("lastTransitionTime")) if cond else None
        facts.append(Fact("scheduler_differs", "warn", values, message, rows=rows, verbatim_at=at))
    return out + facts


def _pod_problems(pods: Sequence[Obj]) -> list[Fact]:
    blockers: list[str] = []
    seen: set[str] = set()
    for pod in pods:
        for text in pod_blockers(pod):
            # The same problem on many pods is listed once, with the first pod that has it.
            if text not in seen:
                seen.add(text)
                blockers.append(f"{name(pod)}: {text}")
    return [Fact("pod_problems", "warn", blockers=tuple(blockers))] if blockers else []


# The components a waiting gang depends on: the scheduler admits (enqueue) and places (allocate)
# every gang; the controller manager's job controller creates a Volcano Job's PodGroup and pods
# and writes its status (its podgroup controller makes PodGroups for other workloads, which this
# gang already has).
SCHEDULER = "volcano-scheduler"
CONTROLLERS = "volcano-controllers"


def components_waited_on(ctx: PendingContext) -> list[Fact]:
    """A "component_down" fact per component of ``ctx.components_down`` the gang waits on: the
    scheduler always; the controllers for a Volcano Job's gang (``job`` or ``owner_job``)."""
    vcjob = ctx.job if ctx.job is not None else ctx.owner_job
    wanted = {SCHEDULER} | ({CONTROLLERS} if vcjob is not None else set())
    return [
        Fact("component_down", "bad", {"component": r.name, "ready": r.ready, "desired": r.desired})
        for r in ctx.components_down
        if r.name in wanted
    ]


def why_pending(ctx: PendingContext, room: Room | None = None) -> list[Fact]:
    """Why the gang does not run, most decisive first: a Volcano component it waits on that is
    not running (``components_waited_on``: nothing moves until it is back), the "never" facts
    (``never_start``), then
    what blocks outright (level "bad": a closed or missing queue, no room), then the rest (the
    phase a block leaves the PodGroup in is the symptom, the closed queue the cause); stable
    otherwise. ``room`` is the gang's room when the caller has it (``gang_room``)."""
    never, impossible = never_start(ctx)
    facts: list[Fact] = list(never)
    job, pg = ctx.job, ctx.podgroup
    if job is not None and not status(job):
        facts.append(Fact("job_no_status", "info"))
    if pg is None and job is not None and ctx.podgroups_unreadable:
        facts.append(Fact("podgroups_unreadable", "info", {"why": ctx.podgroups_unreadable}))
    elif pg is None and job is not None:
        facts.append(Fact("podgroup_missing", "warn"))
    elif pg is not None:
        facts.extend(_podgroup_facts(ctx, pg, bool(never)))
    if ctx.queue_name:
        facts.extend(_queue_facts(ctx, room, impossible))
    facts.extend(_pod_problems(ctx.pods))
    rest = facts[len(never) :]
    down = components_waited_on(ctx)
    return down + never + [f for f in rest if f.level == "bad"] + [f for f in rest if f.level != "bad"]
