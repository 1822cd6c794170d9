"""Phase tables of Volcano Jobs, PodGroups, Queues and pods, and the classes of their phases.

Sources: Volcano's API types (volcano.sh/apis ``batch/v1alpha1`` JobPhase, ``scheduling/v1beta1``
PodGroupPhase and QueueState) and the Job controller's state machine
(volcano-sh/volcano pkg/controllers/job/state); pods: Kubernetes core/v1 PodPhase.

A phase read from an object is its string as written ("" when absent); a string that is in no
table is an unknown phase, shown verbatim and never guessed at.
"""

from __future__ import annotations

from datetime import datetime

from dashboard.volcano.objects import as_dict, as_list, as_str, status
from dashboard.volcano.time import parse_time

# Volcano Job phases (status.state.phase), in lifecycle order.
JOB_PHASES: tuple[str, ...] = (
    "Pending",
    "Running",
    "Restarting",
    "Aborting",
    "Aborted",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
)
# Phases the controller never leaves.
FINAL_JOB_PHASES = frozenset({"Completed", "Terminated", "Failed"})
# Phases on the way to another one (the controller kills pods, then moves on).
TRANSITIONAL_JOB_PHASES = frozenset({"Restarting", "Aborting", "Completing", "Terminating"})
# Stopped, but a ResumeJob command brings the Job back (Aborted -> Restarting -> Pending).
RESUMABLE_JOB_PHASES = frozenset({"Aborted"})
# Every phase that is not final, in lifecycle order (the lists' "Active" filter).
ACTIVE_JOB_PHASES: tuple[str, ...] = tuple(p for p in JOB_PHASES if p not in FINAL_JOB_PHASES)

# PodGroup phases (status.phase): Pending until the queue admits it, Inqueue until the gang is
# placed, Running, Unknown when some pods run but the gang became unschedulable, Completed.
PODGROUP_PHASES: tuple[str, ...] = ("Pending", "Inqueue", "Running", "Unknown", "Completed")
FINAL_PODGROUP_PHASES = frozenset({"Completed"})
ACTIVE_PODGROUP_PHASES: tuple[str, ...] = tuple(p for p in PODGROUP_PHASES if p not in FINAL_PODGROUP_PHASES)
# The gang waits in its queue: not admitted yet (Pending), or admitted and not placed (Inqueue).
QUEUED_PODGROUP_PHASES = frozenset({"Pending", "Inqueue"})
# The gang is not (fully) placed yet: why-pending applies.
WAITING_PODGROUP_PHASES = QUEUED_PODGROUP_PHASES | {"Unknown"}

# Queue states (status.state); only an Open queue admits new work.
QUEUE_STATES: tuple[str, ...] = ("Open", "Closing", "Closed", "Unknown")
ADMITTING_QUEUE_STATES = frozenset({"Open"})
# Closing (PodGroups still in the queue) or Closed: the queue admits no new work for good.
CLOSED_QUEUE_STATES = frozenset({"Closing", "Closed"})

# Kubernetes pod phases (status.phase).
POD_PHASES: tuple[str, ...] = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
FINAL_POD_PHASES = frozenset({"Succeeded", "Failed"})


def job_phase(job: object) -> str:
    """status.state.phase of a Volcano Job, "" when absent (inlined: list pages call it for every
    Job of a cluster)."""
    if isinstance(job, dict):
        st = job.get("status")
        if isinstance(st, dict):
            state = st.get("state")
            if isinstance(state, dict):
                phase = state.get("phase")
                return phase if isinstance(phase, str) else as_str(phase)
    return ""


def podgroup_phase(pg: object) -> str:
    """status.phase of a PodGroup, "" when absent (the scheduler has not looked at it yet)."""
    if isinstance(pg, dict):
        st = pg.get("status")
        if isinstance(st, dict):
            phase = st.get("phase")
            return phase if isinstance(phase, str) else as_str(phase)
    return ""


def queue_state(queue: object) -> str:
    """status.state of a Queue, "" when absent."""
    return as_str(status(queue).get("state"))


def pod_phase(pod: object) -> str:
    """status.phase of a pod, "" when absent."""
    return as_str(status(pod).get("phase"))


def job_is_final(phase: str) -> bool:
    return phase in FINAL_JOB_PHASES


def job_waiting(phase: str) -> bool:
    """The Job has not started: Pending, or no phase yet (the controller has not processed it)."""
    return phase in ("Pending", "")


def podgroup_awaits_admission(phase: str) -> bool:
    """The PodGroup is Pending: its queue has not admitted it (enqueue) yet."""
    return phase == "Pending"


def podgroup_queued(phase: str) -> bool:
    """The PodGroup waits in its queue (Pending or Inqueue): the pages show how long it waits.
    Unlike ``podgroup_waiting``, an Unknown PodGroup (some pods run) or one without a phase is
    not queued."""
    return phase in QUEUED_PODGROUP_PHASES


def podgroup_waiting(phase: str) -> bool:
    """The PodGroup's gang is not placed: Pending, Inqueue, Unknown, no phase yet, or a phase
    string of no known meaning (it proves no placement)."""
    return phase in WAITING_PODGROUP_PHASES or phase not in PODGROUP_PHASES


def gang_waiting(job_phase_name: str | None, podgroup_phase_name: str | None) -> bool:
    """The one "waiting" rule of the Job and PodGroup pages: the Job (``job_phase_name``, None when
    there is no Job) is Pending or has no phase yet, or its PodGroup (None when there is none) is
    waiting (``podgroup_waiting``) while the Job is not in a final phase."""
    if job_phase_name is not None and job_waiting(job_phase_name):
        return True
    if podgroup_phase_name is None:
        return False
    if job_phase_name is not None and job_is_final(job_phase_name):
        return False
    return podgroup_waiting(podgroup_phase_name)


def queue_admits(state: str) -> bool:
    """Volcano admits new PodGroups only into an Open queue; a queue without a state is taken as
    not yet reported, not as closed."""
    return not state or state in ADMITTING_QUEUE_STATES


def queue_closed(state: str) -> bool:
    """The queue is Closing or Closed (an operator closed it); no state, Open or an unknown state
    is not closed."""
    return state in CLOSED_QUEUE_STATES


def pod_is_final(phase: str) -> bool:
    """The pod phase is Succeeded or Failed: its containers run no more."""
    return phase in FINAL_POD_PHASES


def job_phase_since(job: object) -> datetime | None:
    """When the Job entered its current phase: status.state.lastTransitionTime, else the newest
    status.conditions entry (the controller appends one per phase)."""
    st = status(job)
    since = parse_time(as_dict(st.get("state")).get("lastTransitionTime"))
    if since is None:
        conds = [c for c in as_list(st.get("conditions")) if isinstance(c, dict)]
        if conds:
            since = parse_time(conds[-1].get("lastTransitionTime"))
    return since


def job_phase_unknown(phase: str) -> bool:
    """A Job phase as written that is not one of JOB_PHASES (a newer Volcano's, or nonsense); ""
    (no status yet) is not unknown. The pages sort such a Job with the stuck ones."""
    return phase != "" and phase not in JOB_PHASES
