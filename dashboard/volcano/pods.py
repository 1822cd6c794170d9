"""Pods as ``kubectl get pods`` shows them, and how Volcano links pods to Jobs, tasks and gangs.

The STATUS/READY/RESTARTS columns follow kubectl's printer (``printPod`` in k8s.io/kubernetes
pkg/printers/internalversion/printers.go). The keys are Volcano's: the scheduler finds a pod's
PodGroup by the ``scheduling.k8s.io/group-name`` annotation; the Job controller labels (and
annotates) its pods with ``volcano.sh/job-name``, ``volcano.sh/task-spec`` and
``volcano.sh/task-index``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.volcano.objects import as_dict, as_list, as_str, count, label_or_annotation, meta, status
from dashboard.volcano.time import latest, parse_time

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
JOB_NAME_KEY = "volcano.sh/job-name"
TASK_SPEC_KEY = "volcano.sh/task-spec"
TASK_INDEX_KEY = "volcano.sh/task-index"


def pod_group_name(pod: object) -> str | None:
    """The PodGroup the scheduler places the pod with (annotation scheduling.k8s.io/group-name)."""
    value = as_dict(meta(pod).get("annotations")).get(GROUP_NAME_ANNOTATION)
    return value if isinstance(value, str) and value else None


def pod_job_name(pod: object) -> str | None:
    """The Volcano Job of a vcjob pod (label, else annotation volcano.sh/job-name)."""
    m = meta(pod)
    for source in (m.get("labels"), m.get("annotations")):
        value = as_dict(source).get(JOB_NAME_KEY)
        if isinstance(value, str) and value:
            return value
    return None


def pod_task(pod: object) -> str:
    """The Volcano task of a vcjob pod (label, else annotation volcano.sh/task-spec), "" if none."""
    return label_or_annotation(pod, TASK_SPEC_KEY)


def pod_task_index(pod: object) -> int | None:
    """The pod's index in its task (volcano.sh/task-index), None when absent or not a number."""
    index = label_or_annotation(pod, TASK_INDEX_KEY)
    return int(index) if index.isdigit() and index.isascii() else None


def _statuses(pod: object, key: str) -> list[dict[str, Any]]:
    return [as_dict(cs) for cs in as_list(status(pod).get(key))]


def pod_is_crashlooping(pod: object) -> bool:
    """A container or init container waits with reason CrashLoopBackOff."""
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in _statuses(pod, key):
            if as_dict(as_dict(cs.get("state")).get("waiting")).get("reason") == "CrashLoopBackOff":
                return True
    return False


@dataclass(frozen=True)
class PodDisplay:
    """What ``kubectl get pods`` shows: ``status`` (STATUS), ``ready``/``total`` (READY n/m),
    ``restarts`` (RESTARTS), ``last_restart`` (the "(2m ago)" part; None when unknown);
    ``restarts_invalid``: a container's restartCount as written when it is no count
    (``restart_count_invalid``; then ``restarts`` is no total), else ""."""

    status: str
    ready: int
    total: int
    restarts: int
    last_restart: datetime | None = None
    restarts_invalid: str = ""

    @property
    def ready_text(self) -> str:
        return f"{self.ready}/{self.total}"


def _conditions(pod: object) -> list[dict[str, Any]]:
    return [as_dict(c) for c in as_list(status(pod).get("conditions"))]


def _condition_true(pod: object, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in _conditions(pod))


def _has_condition(pod: object, ctype: str) -> bool:
    return any(c.get("type") == ctype for c in _conditions(pod))


def _terminated_reason(term: dict[str, Any]) -> str:
    if term.get("reason"):
        return as_str(term["reason"])
    signal = max(0, count(term.get("signal")))
    if signal:
        return f"Signal:{signal}"
    return f"ExitCode:{term.get('exitCode', 0)}"


def restart_count(container_status: object) -> int:
    """A ContainerStatus's restartCount as a count: 0 when absent or no count (negative, fractional,
    text); ``restart_count_invalid`` says when it was written as no count."""
    return max(0, count(as_dict(container_status).get("restartCount")))


# A zero as a JSON number or string may write it ("0", "0.0", "-0").
_ZERO = re.compile(r"[+-]?0+(?:\.0*)?")


def restart_count_invalid(container_status: object) -> str:
    """ContainerStatus.restartCount (int32, >= 0) as written when it is set but no count: negative,
    fractional, a bool or text ("-1", "1.5", "x"); "" when absent or valid. The kubelet never writes
    one; the pages show it as written, marked, never as a count."""
    value = as_dict(container_status).get("restartCount")
    if value is None:
        return ""
    n = count(value)
    valid = not isinstance(value, bool) and (
        n > 0 or (n == 0 and bool(_ZERO.fullmatch(as_str(value).strip())))
    )
    return "" if valid else as_str(value)


def _finished_at(cs: dict[str, Any]) -> datetime | None:
    return parse_time(as_dict(as_dict(cs.get("lastState")).get("terminated")).get("finishedAt"))


def pod_display_status(pod: object) -> PodDisplay:
    """The STATUS/READY/RESTARTS columns of ``kubectl get pods``: status.reason over phase;
    ``SchedulingGated``; init containers give ``Init:<reason>``, ``Init:Signal:n``,
    ``Init:ExitCode:n`` or ``Init:i/n`` (native sidecars that started are skipped and count in
    READY); container waiting/terminated reasons (CrashLoopBackOff, ImagePullBackOff, Completed,
    Error, ...) with the *first* container's reason winning; ``Completed`` with a running container
    shows Running (NotReady when the pod's Ready condition is False); a deletionTimestamp shows
    ``Terminating`` (``Unknown`` when the node is lost). A restart count that is no count adds 0
    and is kept in ``restarts_invalid``."""
    sp, st = as_dict(as_dict(pod).get("spec")), status(pod)
    init_specs = as_list(sp.get("initContainers"))
    total = len(as_list(sp.get("containers")))
    ready = 0
    restarts = 0
    last_restart: datetime | None = None
    reason = st.get("phase") if isinstance(st.get("phase"), str) else ""
    if isinstance(st.get("reason"), str) and st.get("reason"):
        reason = st["reason"]
    reason = reason or "Unknown"

    for cond in _conditions(pod):
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    sidecars = {as_dict(c).get("name") for c in init_specs if as_dict(c).get("restartPolicy") == "Always"}
    total += len(sidecars)

    initializing = False
    sidecar_restarts = 0
    init_statuses = _statuses(pod, "initContainerStatuses")
    for i, cs in enumerate(init_statuses):
        restarts += restart_count(cs)
        last_restart = latest(last_restart, _finished_at(cs))
        if cs.get("name") in sidecars:
            sidecar_restarts += restart_count(cs)
            if cs.get("started") is True:
                if cs.get("ready") is True:
                    ready += 1
                continue
        state = as_dict(cs.get("state"))
        term, waiting = as_dict(state.get("terminated")), as_dict(state.get("waiting"))
        if term and term.get("exitCode", 0) == 0:
            continue
        initializing = True
        if term:
            reason = "Init:" + _terminated_reason(term)
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(init_specs) or len(init_statuses)}"
        break

    if not initializing or _condition_true(pod, "Initialized"):
        restarts = sidecar_restarts
        has_running = False
        for cs in reversed(_statuses(pod, "containerStatuses")):
            restarts += restart_count(cs)
            last_restart = latest(last_restart, _finished_at(cs))
            state = as_dict(cs.get("state"))
            waiting, term = as_dict(state.get("waiting")), as_dict(state.get("terminated"))
            if waiting.get("reason"):
                reason = as_str(waiting["reason"])
            elif term:
                reason = _terminated_reason(term)
            elif cs.get("ready") is True and "running" in state:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            not_ready = _has_condition(pod, "Ready") and not _condition_true(pod, "Ready")
            reason = "NotReady" if not_ready else "Running"

    m = meta(pod)
    if m.get("deletionTimestamp") and st.get("reason") == "NodeLost":
        reason = "Unknown"
    elif m.get("deletionTimestamp"):
        reason = "Terminating"
    invalid = next(
        (
            bad
            for cs in init_statuses + _statuses(pod, "containerStatuses")
            if (bad := restart_count_invalid(cs))
        ),
        "",
    )
    return PodDisplay(reason, ready, total, restarts, last_restart, restarts_invalid=invalid)


# Waiting reasons that are a container's normal way to start, not a problem.
_STARTING_REASONS = ("ContainerCreating", "PodInitializing")


def pod_blockers(pod: object) -> list[str]:
    """Why a pod does not run, as the cluster wrote it: the PodScheduled=False message (else its
    reason), and "<container>: <waiting reason> — <message>" per container or init container that
    waits for another reason than starting."""
    out = []
    for cond in _conditions(pod):
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            text = as_str(cond.get("message")) or as_str(cond.get("reason"))
            if text:
                out.append(text)
    for cs in _statuses(pod, "initContainerStatuses") + _statuses(pod, "containerStatuses"):
        wait = as_dict(as_dict(cs.get("state")).get("waiting"))
        if wait.get("reason") and wait.get("reason") not in _STARTING_REASONS:
            msg = as_str(wait.get("message"))
            line = f"{as_str(cs.get('name'))}: {as_str(wait.get('reason'))}"
            out.append(line + (f" — {msg}" if msg else ""))
    return out


def exit_status(terminated: object) -> tuple[str, str] | None:
    """(exit code, signal) of a container's ``state.terminated`` as written (ContainerStateTerminated:
    exitCode int32 required, signal optional; signal "" when unset or 0); None without an exit code."""
    term = as_dict(terminated)
    code = term.get("exitCode")
    if code is None or isinstance(code, bool):
        return None
    signal = term.get("signal")
    shown = "" if signal in (None, 0, "") or isinstance(signal, bool) else as_str(signal)
    return as_str(code), shown


def pod_not_started(pod: object) -> bool:
    """No container of the pod has run yet, so it has no logs: status.phase is Pending (or not
    written yet) and no container status, init or app, has a ``running`` or ``terminated`` state,
    now or as its ``lastState`` (Kubernetes ContainerStatus). A pod without a node is such a pod."""
    if as_str(status(pod).get("phase")) not in ("", "Pending"):
        return False
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for cs in _statuses(pod, key):
            for state in (as_dict(cs.get("state")), as_dict(cs.get("lastState"))):
                if "running" in state or "terminated" in state:
                    return False
    return True
