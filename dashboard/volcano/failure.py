"""Why a Volcano Job failed (or was aborted, terminated, or completed with failures): the facts.

Read from what the cache holds: the Job's spec (policies of the Job and of each task, maxRetry,
Volcano's default 3), its status (state, retryCount, failed), the job controller's ExecuteAction
events ("Start to execute action RestartJob", "Job failed on action RestartJob for retry limit
reached"), the pods' container terminations (reason, exit code, signal, OOMKilled, message,
finishedAt; ``lastState`` too, for a container that restarted), image pull failures and the
scheduler's Unschedulable messages. Policies match as the job controller applies them: a task's
policies before the Job's, an ``exitCode`` policy for a container that exited with that code, an
``event``/``events`` policy for the event ("*" matches any). Facts carry names and numbers; the
presenters word them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.volcano.events import event_count, event_last, event_ref
from dashboard.volcano.jobs import DEFAULT_MAX_RETRY, hit_retry_limit, restarts_performed
from dashboard.volcano.objects import as_dict, as_list, as_str, count, name, spec, status
from dashboard.volcano.phases import job_phase
from dashboard.volcano.podrecords import ContainerEnd, PodRecord, container_ends
from dashboard.volcano.pods import pod_task
from dashboard.volcano.time import EPOCH

Obj = Mapping[str, Any]
FAILED_PHASES = ("Failed", "Aborted", "Terminated")
_PULL_REASONS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")


@dataclass(frozen=True)
class Termination:
    """A container that ended badly. ``previous``: read from lastState (the container restarted)."""

    pod: str
    container: str
    reason: str
    exit_code: str
    signal: str
    message: str
    finished: datetime | None
    previous: bool
    restarts: int
    deleted: bool = False  # read from the record of a deleted pod (kube/podrecords.py)

    @property
    def oom(self) -> bool:
        return self.reason == "OOMKilled"


@dataclass(frozen=True)
class Policy:
    """A lifecycle policy that matched a failure: ``trigger`` the event ("PodFailed") or
    "exitCode N"; ``scope`` "" for the Job's policies, else the task's name."""

    trigger: str
    action: str
    scope: str


@dataclass(frozen=True)
class Action:
    """An ExecuteAction event of the job controller, quoted as written, with its time and count."""

    message: str
    at: datetime | None
    count: int


@dataclass(frozen=True)
class Failure:
    phase: str
    retry_count: int
    max_retry: int
    max_retry_set: bool
    failed_pods: int
    min_available: int
    state_reason: str
    state_message: str
    policies: tuple[Policy, ...]
    actions: tuple[Action, ...]
    terminations: tuple[Termination, ...]
    image_pulls: tuple[str, ...]
    unschedulable: str  # the scheduler's last Unschedulable message, for a Job that never ran
    pods_present: bool
    deleted_pods: int = 0  # records of deleted pods the explanation read

    @property
    def retries_exhausted(self) -> bool:
        """Failed on the retry limit (jobs.hit_retry_limit) with a RestartJob policy matching."""
        limit = hit_retry_limit(self.retry_count, self.max_retry, self.phase)
        return limit and any(p.action == "RestartJob" for p in self.policies)

    @property
    def restarts(self) -> int:
        """The restarts Volcano carried out (jobs.restarts_performed)."""
        return restarts_performed(self.retry_count, self.max_retry, self.phase)


def failure_applies(job: Obj) -> bool:
    """Failed, Aborted or Terminated, or Completed with failed pods (status.failed > 0)."""
    phase = job_phase(job)
    return phase in FAILED_PHASES or (phase == "Completed" and count(status(job).get("failed")) > 0)


def _termination(pod: str, end: ContainerEnd, deleted: bool) -> Termination:
    return Termination(
        pod=pod,
        container=end.container,
        reason=end.reason,
        exit_code=end.exit_code,
        signal=end.signal,
        message=end.message,
        finished=end.finished,
        previous=end.previous,
        restarts=end.restarts,
        deleted=deleted,
    )


def terminations(pods: Sequence[Obj], deleted: Sequence[PodRecord] = ()) -> list[Termination]:
    """Every container (current state, or the last one after a restart) that ended with a non-zero
    exit code or a failure reason, of ``pods`` and of the records of ``deleted`` pods, oldest
    finish first."""
    found = [_termination(name(pod), end, False) for pod in pods for end in container_ends(pod) if end.failed]
    found += [_termination(r.name, end, True) for r in deleted for end in r.failed]
    return sorted(found, key=lambda t: (t.finished or EPOCH, t.pod))


def _policy_events(policy: Mapping[str, Any]) -> list[str]:
    events = [as_str(e) for e in as_list(policy.get("events"))]
    if policy.get("event"):
        events.append(as_str(policy.get("event")))
    return events


def matching_policies(
    job: Obj, failures: Sequence[Termination], pods: Sequence[Obj], deleted: Sequence[PodRecord] = ()
) -> list[Policy]:
    """The policies that the failures (PodFailed, and each exit code) trigger: the failed pod's
    task's policies first, then the Job's; one entry per (trigger, action, scope)."""
    task_of = {r.name: r.task for r in deleted}
    task_of.update({name(p): pod_task(p) for p in pods})
    tasks = {as_str(as_dict(t).get("name")): as_dict(t) for t in as_list(spec(job).get("tasks"))}
    scopes: list[tuple[str, list[Any]]] = []
    seen_tasks = {task_of.get(t.pod, "") for t in failures} or {""}
    if not failures:
        seen_tasks = set(tasks)  # pods are gone: any task's PodFailed policy may have fired
    for task in sorted(seen_tasks):
        scopes.append((task, as_list(tasks.get(task, {}).get("policies"))))
    scopes.append(("", as_list(spec(job).get("policies"))))
    codes = {t.exit_code for t in failures if t.exit_code}
    out: list[Policy] = []
    for scope, policies in scopes:
        for raw in policies:
            policy = as_dict(raw)
            action = as_str(policy.get("action"))
            code = policy.get("exitCode")
            if code is not None and as_str(code) in codes:
                out.append(Policy(f"exitCode {as_str(code)}", action, scope))
            events = _policy_events(policy)
            if "PodFailed" in events or "*" in events:
                out.append(Policy("PodFailed", action, scope))
    return list(dict.fromkeys(out))


def _actions(job: Obj, events: Sequence[Obj]) -> list[Action]:
    mine = [
        e
        for e in events
        if event_ref(e)[0] == "Job"
        and event_ref(e)[2] == name(job)
        and as_str(e.get("reason")) == "ExecuteAction"
    ]
    mine.sort(key=lambda e: event_last(e) or EPOCH)
    return [Action(as_str(e.get("message")).strip(), event_last(e), event_count(e)) for e in mine]


def _image_pulls(pods: Sequence[Obj]) -> list[str]:
    out = []
    for pod in pods:
        for cs in as_list(status(pod).get("containerStatuses")):
            waiting = as_dict(as_dict(as_dict(cs).get("state")).get("waiting"))
            if as_str(waiting.get("reason")) in _PULL_REASONS:
                out.append(f"{name(pod)}/{as_str(as_dict(cs).get('name'))}: {as_str(waiting.get('message'))}")
    return out


def _unschedulable(events: Sequence[Obj]) -> str:
    latest = [e for e in events if as_str(e.get("reason")) == "Unschedulable"]
    latest.sort(key=lambda e: event_last(e) or EPOCH)
    return as_str(latest[-1].get("message")) if latest else ""


def _ever_ran(job: Obj) -> bool:
    """Did the Job reach Running (a ``Running`` entry in status.conditions)?"""
    return any(as_str(as_dict(c).get("status")) == "Running" for c in as_list(status(job).get("conditions")))


def explain_failure(
    job: Obj, pods: Sequence[Obj], events: Sequence[Obj], deleted: Sequence[PodRecord] = ()
) -> Failure | None:
    """The facts of a failed Job (None when ``failure_applies`` is false). ``events``: those of the
    Job, its PodGroup and its pods, in any order; ``deleted``: records of its deleted pods
    (Snapshot.deleted_pods_of_job), read when no pod present explains the failure."""
    if not failure_applies(job):
        return None
    st = status(job)
    state = as_dict(st.get("state"))
    raw_max = spec(job).get("maxRetry")
    found = terminations(pods)
    used = [] if found else list(deleted)
    if used:
        found = terminations((), used)
    return Failure(
        phase=job_phase(job),
        retry_count=count(st.get("retryCount")),
        max_retry=count(raw_max) if raw_max is not None else DEFAULT_MAX_RETRY,
        max_retry_set=raw_max is not None,
        failed_pods=count(st.get("failed")),
        min_available=count(spec(job).get("minAvailable")),
        state_reason=as_str(state.get("reason")),
        state_message=as_str(state.get("message")),
        policies=tuple(matching_policies(job, found, pods, used)),
        actions=tuple(_actions(job, events)),
        terminations=tuple(found),
        image_pulls=tuple(_image_pulls(pods)),
        unschedulable=_unschedulable(events) if not found and not _ever_ran(job) else "",
        pods_present=bool(pods),
        deleted_pods=len(used),
    )
