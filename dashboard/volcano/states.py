"""What state a Volcano Job or PodGroup is in, read from every field that says so: the current
PodGroup condition and its history, the reported counters checked against the pods, why there are
no pods, and whether a transitional phase has lasted too long (stuck).

Sources: Volcano's scheduler writes PodGroup conditions with status "True" only, at most one per
type (Unschedulable with reason NotEnoughResources, Scheduled once the gang is placed), so the
newest True condition is the state and the older ones are history. The Job controller
(volcano-sh/volcano pkg/controllers/job) counts pods by phase into status.pending/running/
succeeded/failed and counts pods with a deletionTimestamp as terminating; it creates pods only once
the PodGroup is admitted (phase set and not Pending) and reports a failed creation as the Warning
event ``FailedCreate`` on the Job; Restarting, Aborting, Completing and Terminating wait for the
pods to go before moving on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from dashboard.volcano.gang import (
    job_counter,
    job_gang,
    job_min_available,
    job_tasks,
    job_total_replicas,
    podgroup_below_gang,
)
from dashboard.volcano.objects import as_dict, as_list, as_str, count, is_deleting, meta, name, status
from dashboard.volcano.phases import (
    FINAL_JOB_PHASES,
    FINAL_PODGROUP_PHASES,
    JOB_PHASES,
    QUEUED_PODGROUP_PHASES,
    RESUMABLE_JOB_PHASES,
    TRANSITIONAL_JOB_PHASES,
    WAITING_PODGROUP_PHASES,
    job_phase,
    job_phase_since,
    job_waiting,
    podgroup_phase,
    podgroup_waiting,
)
from dashboard.volcano.pods import pod_display_status
from dashboard.volcano.time import EPOCH, parse_time

# -- PodGroup conditions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """One entry of PodGroup.status.conditions as written; ``at`` is lastTransitionTime (None when
    absent or unreadable)."""

    type: str
    status: str
    reason: str
    message: str
    at: datetime | None


def conditions(pg: object) -> list[Condition]:
    """status.conditions in the order written (entries that are no object read as empty)."""
    return [_condition(as_dict(raw)) for raw in as_list(status(pg).get("conditions"))]


def _condition(c: dict[str, Any]) -> Condition:
    return Condition(
        type=as_str(c.get("type")),
        status=as_str(c.get("status")),
        reason=as_str(c.get("reason")),
        message=as_str(c.get("message")),
        at=parse_time(c.get("lastTransitionTime")),
    )


def current_condition_entry(pg: object) -> dict[str, Any] | None:
    """The PodGroup's state as written: its newest True condition by lastTransitionTime (of equal
    or missing times, the one listed last); None without a True condition."""
    best: dict[str, Any] | None = None
    best_at = EPOCH
    for raw in as_list(status(pg).get("conditions")):
        c = as_dict(raw)
        at = parse_time(c.get("lastTransitionTime")) or EPOCH
        if c.get("status") == "True" and (best is None or at >= best_at):
            best, best_at = c, at
    return best


def current_condition(pg: object) -> Condition | None:
    """``current_condition_entry`` as a Condition."""
    entry = current_condition_entry(pg)
    return _condition(entry) if entry is not None else None


def condition_history(pg: object) -> list[Condition]:
    """Every condition but the current one, newest first (no time: last)."""
    entry = current_condition_entry(pg)
    rest = [_condition(as_dict(c)) for c in as_list(status(pg).get("conditions")) if c is not entry]
    return sorted(rest, key=lambda c: c.at or EPOCH, reverse=True)


def gang_placed_at(pg: object | None, job: object | None = None) -> datetime | None:
    """When the gang last moved past waiting: the time of the PodGroup's True Scheduled condition
    (the scheduler writes it when it places the gang, phase Running), else the Job's newest
    Running entry of status.conditions; None when neither says. Warnings older than this are
    history: they were about the wait that ended then."""
    placed: datetime | None = None
    if pg is not None:
        for c in conditions(pg):
            if c.type == "Scheduled" and c.status == "True" and c.at and (placed is None or c.at > placed):
                placed = c.at
    if placed is None and job is not None:
        for raw in as_list(status(job).get("conditions")):
            entry = as_dict(raw)
            at = parse_time(entry.get("lastTransitionTime"))
            if entry.get("status") == "Running" and at and (placed is None or at > placed):
                placed = at
    return placed


# -- is the Job waiting? ---------------------------------------------------------------------------

WaitQuestion = Literal["pending", "incomplete", ""]


def job_wait_question(job: object, pg: object | None) -> WaitQuestion:
    """What the Job's page asks about its gang: "pending" when the Job waits for its gang (phase
    Pending or none yet, or Restarting while the PodGroup waits or the gang counters are below
    minAvailable), "incomplete" when a Running Job's PodGroup is still waiting (Inqueue, Unknown),
    "" otherwise (the phase explains itself: stopping, stopped or finished)."""
    phase = job_phase(job)
    pg_waiting = pg is not None and podgroup_waiting(podgroup_phase(pg))
    if phase in ("Pending", ""):
        return "pending"
    if phase == "Restarting":
        return "pending" if pg_waiting or job_gang(job).short else ""
    if phase == "Running" and pg_waiting:
        return "incomplete"
    if phase not in JOB_PHASES:
        # A phase string of no known meaning proves nothing: ask when the PodGroup waits.
        return "pending" if pg_waiting else ""
    return ""


# -- counters against pods -----------------------------------------------------------------------

COUNTERS = ("pending", "running", "succeeded", "failed", "terminating")


@dataclass(frozen=True)
class PodCounts:
    """The pods of a gang counted the way the Job controller counts them: a pod with a
    deletionTimestamp is ``terminating``; the others by status.phase (``unknown``: Unknown or no
    phase)."""

    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0

    def get(self, counter: str) -> int:
        return int(getattr(self, counter))


def pod_counts(pods: Iterable[object]) -> PodCounts:
    counts = dict.fromkeys((*COUNTERS, "unknown"), 0)
    for pod in pods:
        if is_deleting(pod):
            counts["terminating"] += 1
            continue
        key = as_str(status(pod).get("phase")).lower()
        counts[key if key in COUNTERS else "unknown"] += 1
    return PodCounts(**counts)


@dataclass(frozen=True)
class CounterCheck:
    """One Job counter as written (``reported``) and as counted from the pods (``observed``)."""

    counter: str
    reported: int
    observed: int


def counter_mismatches(job: object, pods: Sequence[object]) -> list[CounterCheck]:
    """The Job's status counters (COUNTERS) that disagree with its pods (``pod_counts``), in
    COUNTERS order; [] for a Job without status (nothing is reported to check)."""
    st = status(job)
    if not st:
        return []
    counted = pod_counts(pods)
    out = []
    for key in COUNTERS:
        reported = count(st.get(key))
        if reported != counted.get(key):
            out.append(CounterCheck(key, reported, counted.get(key)))
    return out


def terminating_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pods with a deletionTimestamp (Kubernetes is deleting them; finalizers may hold them)."""
    return [pod for pod in pods if is_deleting(pod)]


@dataclass(frozen=True)
class ReplicaShortfall:
    """minAvailable above every pod the Job can have (Σ tasks[].replicas, 0 with ``tasks: []``)."""

    min_available: int
    total: int


def replica_shortfall(job: object) -> ReplicaShortfall | None:
    """The Job's minAvailable when it exceeds its total replicas, else None."""
    min_av, total = job_min_available(job), job_total_replicas(job)
    return ReplicaShortfall(min_av, total) if min_av > total else None


# -- why there are no pods -------------------------------------------------------------------------

NoPodsCause = Literal[
    "deleted", "no_replicas", "finished", "stopped", "create_failed", "not_admitted", "no_podgroup", ""
]


@dataclass(frozen=True)
class NoPods:
    """Why a Job has no pods: ``cause`` (NoPodsCause; "" when nothing explains it), the Job's
    ``phase``, and ``message``: the newest FailedCreate event's message (cause "create_failed")."""

    cause: NoPodsCause
    phase: str = ""
    message: str = ""


def failed_create_message(events: Iterable[Mapping[str, Any]]) -> str:
    """The message of the newest Warning event with reason FailedCreate ("" when there is none)."""
    best: tuple[datetime, str] | None = None
    for ev in events:
        if ev.get("type") != "Warning" or ev.get("reason") != "FailedCreate":
            continue
        at = (
            parse_time(ev.get("lastTimestamp"))
            or parse_time(ev.get("eventTime"))
            or parse_time(ev.get("firstTimestamp"))
            or EPOCH
        )
        if best is None or at >= best[0]:
            best = (at, as_str(ev.get("message")))
    return best[1] if best else ""


def why_no_pods(job: object, pg: object | None, job_events: Iterable[Mapping[str, Any]]) -> NoPods:
    """Why the Job has no pods, the actual cause first: being deleted; no replicas to create;
    finished (Completed, Failed, Terminated: pods removed by the kill of a policy or by a cleanup)
    or stopped (Aborted: pods released); pod creation failing (a FailedCreate event on the Job,
    ``job_events``); the PodGroup not admitted (Pending, or no status yet); no PodGroup yet."""
    phase = job_phase(job)
    if is_deleting(job):
        return NoPods("deleted", phase)
    if job_tasks(job) == [] or job_total_replicas(job) == 0:
        return NoPods("no_replicas", phase)
    if phase in FINAL_JOB_PHASES:
        return NoPods("finished", phase)
    if phase in RESUMABLE_JOB_PHASES:
        return NoPods("stopped", phase)
    message = failed_create_message(job_events)
    if message:
        return NoPods("create_failed", phase, message)
    if pg is not None and podgroup_phase(pg) in ("Pending", ""):
        return NoPods("not_admitted", phase)
    if pg is None and phase in ("Pending", ""):
        return NoPods("no_podgroup", phase)
    return NoPods("", phase)


# -- stuck ------------------------------------------------------------------------------------------

# How long a Job may sit in a transitional phase (or an object in deletion) before it is flagged.
DEFAULT_STUCK_SECONDS = 600


@dataclass(frozen=True)
class Holder:
    """A pod that holds a stuck object: its kubectl STATUS, its finalizers, and since when it is
    being deleted (None when it is not)."""

    name: str
    status: str
    finalizers: tuple[str, ...]
    deleting_since: datetime | None


@dataclass(frozen=True)
class Stuck:
    """An object in ``phase`` (a transitional Job phase, or "Deleting": a deletionTimestamp set)
    since ``since``, for ``seconds``, longer than the threshold; ``holders``: the pods it waits for
    (being deleted first), ``finalizers``: the object's own finalizers."""

    phase: str
    since: datetime
    seconds: float
    holders: tuple[Holder, ...]
    finalizers: tuple[str, ...] = ()


def finalizers(obj: object) -> tuple[str, ...]:
    return tuple(as_str(f) for f in as_list(meta(obj).get("finalizers")))


def _holders(pods: Iterable[Mapping[str, Any]]) -> tuple[Holder, ...]:
    """Pods a stopping object waits for: those being deleted, then those not finished yet."""
    rows = []
    for pod in pods:
        deleting = parse_time(meta(pod).get("deletionTimestamp")) if is_deleting(pod) else None
        if not is_deleting(pod) and as_str(status(pod).get("phase")) in ("Succeeded", "Failed"):
            continue
        rows.append(Holder(name(pod), pod_display_status(pod).status, finalizers(pod), deleting))
    rows.sort(key=lambda h: (h.deleting_since is None, h.deleting_since or EPOCH, h.name))
    return tuple(rows)


def _stuck(
    phase: str,
    since: datetime | None,
    obj: object,
    pods: Iterable[Mapping[str, Any]],
    now: datetime,
    limit: int,
) -> Stuck | None:
    if since is None:
        return None
    seconds = (now - since).total_seconds()
    if seconds <= limit:
        return None
    return Stuck(phase, since, seconds, _holders(pods), finalizers(obj))


def job_stuck(job: object, pods: Iterable[Mapping[str, Any]], now: datetime, limit: int) -> Stuck | None:
    """A Job that has sat in a transitional phase (TRANSITIONAL_JOB_PHASES, since
    ``job_phase_since``) or in deletion (since its deletionTimestamp) longer than ``limit``
    seconds; None otherwise."""
    phase = job_phase(job)
    if phase in TRANSITIONAL_JOB_PHASES:
        return _stuck(phase, job_phase_since(job), job, pods, now, limit)
    if is_deleting(job):
        return _stuck("Deleting", parse_time(meta(job).get("deletionTimestamp")), job, pods, now, limit)
    return None


def podgroup_stuck(pg: object, pods: Iterable[Mapping[str, Any]], now: datetime, limit: int) -> Stuck | None:
    """A PodGroup in deletion (deletionTimestamp set: PodGroup phases have no transitional ones)
    longer than ``limit`` seconds; None otherwise."""
    if not is_deleting(pg):
        return None
    return _stuck("Deleting", parse_time(meta(pg).get("deletionTimestamp")), pg, pods, now, limit)


# -- what needs a look first -----------------------------------------------------------------------

# The classes of ``job_attention`` and ``podgroup_attention``, most in need of a look first.
ATTENTION_CLASSES: tuple[str, ...] = (
    "waiting",
    "failing",
    "in_transition",
    "running",
    "failed",
    "stopped",
    "finished",
)
_RANK = {name: rank for rank, name in enumerate(ATTENTION_CLASSES)}
# Final or stopped Job phases, by class.
_JOB_DONE = {"Failed": "failed", "Aborted": "stopped", "Terminated": "stopped", "Completed": "finished"}


def job_attention(job: object) -> str:
    """The class of ATTENTION_CLASSES a Volcano Job is in, from its own fields (no pods, no clock,
    so a list of thousands sorts by it): ``waiting`` (``job_waiting``: Pending or no phase yet);
    ``failing`` (Restarting, which the controller enters when pods failed, or a live Job with
    failed pods or below minAvailable); ``in_transition`` (Aborting, Completing, Terminating, in
    deletion, or a phase this table does not know; ``job_stuck`` when it lasts); ``running``;
    then the stopped phases: ``failed`` (Failed), ``stopped`` (Aborted, Terminated) and
    ``finished`` (Completed)."""
    phase = job_phase(job)
    if job_waiting(phase):
        return "waiting"
    if phase in _JOB_DONE:
        return _JOB_DONE[phase]
    failed = job_counter(job, "failed")
    if phase == "Restarting" or (failed is not None and failed > 0):
        return "failing"
    if phase != "Running" or is_deleting(job):
        return "in_transition"
    return "failing" if job_gang(job).short else "running"


def podgroup_attention(pg: object) -> str:
    """The class of ATTENTION_CLASSES a PodGroup is in: ``waiting`` (Pending, Inqueue, or no phase
    yet), ``failing`` (Unknown: some pods run but the gang became unschedulable, or Running below
    minMember), ``in_transition`` (in deletion, or a phase this table does not know), ``running``,
    ``finished`` (Completed)."""
    phase = podgroup_phase(pg)
    if phase in FINAL_PODGROUP_PHASES:
        return "finished"
    if phase in QUEUED_PODGROUP_PHASES or phase == "":
        return "waiting"
    if phase in WAITING_PODGROUP_PHASES or podgroup_below_gang(pg):
        return "failing"
    if phase != "Running" or is_deleting(pg):
        return "in_transition"
    return "running"


def attention_rank(attention_class: str) -> int:
    """The position of a class of ATTENTION_CLASSES (0: needs a look first)."""
    return _RANK.get(attention_class, len(ATTENTION_CLASSES))
