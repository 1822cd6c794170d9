"""Volcano's job controller (vc-controller-manager), simulated.

Facts from Volcano's job controller (volcano-sh/volcano ``pkg/controllers/job``):
- a Job gets a PodGroup ``<job>-<uid>`` (controller ownerRef to the Job, the Job's labels and
  annotations, ``minMember = spec.minAvailable``, ``minTaskMember``, quota-style ``minResources``
  from the first minAvailable pods);
- pods ``<job>-<task>-<index>`` are created only once the PodGroup's phase is set and not Pending;
- status counters are pod counts by phase (zero counters omitted), ``taskStatusCount``,
  one condition per phase (re-entering moves it to the end), ``version`` bumped by every whole-job
  kill, ``retryCount`` by every restart; every whole-job kill deletes the PodGroup;
- phases and transitions: Pending, Running, Restarting, Aborting/Aborted, Completing/Completed,
  Terminating/Terminated, Failed, with lifecycle policies and maxRetry;
- ``ttlSecondsAfterFinished`` garbage collection of finished Jobs.
"""

from __future__ import annotations

import copy
import functools
from datetime import UTC, datetime

from . import resources as R
from .controllers import GROUP_NAME_ANNOTATION, JOB, PodInfo, owner_reference
from .store import ApiError, copy_json

COMPONENT = "vc-controller-manager"
TERMINAL = ("Completed", "Failed", "Terminated")
KILLING = ("Aborting", "Restarting", "Completing", "Terminating")
# Which pods a kill keeps: "soft" keeps finished pods, "none" keeps nothing (Restarting).
RETAIN = {"Aborting": "soft", "Completing": "soft", "Terminating": "soft", "Restarting": "none"}
RESTART_ACTIONS = ("RestartJob", "RestartTask", "RestartPod", "RestartPartition")


@functools.lru_cache(maxsize=8192)  # the same stamps are parsed on every sync; strptime is slow
def parse_time(value: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 timestamp, or None when empty or unparseable."""
    if not value:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None


def go_duration(seconds: float) -> str:
    """Format like Go's ``time.Duration.String()``: ``"1m30.002s"``, ``"2h0m5s"``, ``"0s"``."""
    nanos = int(round(seconds * 1e9))
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        # Sub-second values use ms/µs/ns units in Go; whole milliseconds are all we produce.
        if nanos % 1_000_000 == 0:
            return f"{sign}{nanos // 1_000_000}ms"
        return f"{sign}{nanos / 1e6:g}ms"
    hours, rem = divmod(nanos, 3600 * 10**9)
    minutes, rem = divmod(rem, 60 * 10**9)
    secs, frac = divmod(rem, 10**9)
    sec_text = str(secs) + (("." + f"{frac:09d}".rstrip("0")) if frac else "") + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{sec_text}"
    if minutes:
        return f"{sign}{minutes}m{sec_text}"
    return sign + sec_text


def task_min_available(task: dict) -> int:
    value = task.get("minAvailable")
    return int(task.get("replicas") or 0) if value is None else int(value)


def job_min_available(spec: dict) -> int:
    value = spec.get("minAvailable")
    if value is not None:
        return int(value)
    return sum(task_min_available(t) for t in spec.get("tasks") or [])


def total_replicas(spec: dict) -> int:
    return sum(int(t.get("replicas") or 0) for t in spec.get("tasks") or [])


def podgroup_name(job: dict) -> str:
    md = job["metadata"]
    return f"{md['name']}-{md['uid']}"


def min_resources(spec: dict) -> dict[str, str]:
    """Quota-style minResources of the first ``minAvailable`` pods, task order (pkg/controllers/job)."""
    remaining = job_min_available(spec)
    usage: R.Res = {}
    for task in spec.get("tasks") or []:
        if remaining <= 0:
            break
        tspec = (task.get("template") or {}).get("spec") or {}
        req = R.pod_requests(tspec)
        lim = R.pod_limits(tspec)
        n = min(remaining, int(task.get("replicas") or 0))
        for _ in range(n):
            R.add(usage, R.quota_usage(req, lim))
        remaining -= n
    return R.format_list(usage)


def _sub_group_policy(task: dict) -> dict:
    """The PodGroup subGroupPolicy entry for a partitioned task (pkg/controllers/job getSubGroupPolicy)."""
    partition = task.get("partitionPolicy") or {}
    out: dict = {
        "name": task.get("name", ""),
        "subGroupSize": partition.get("partitionSize"),
        "minSubGroups": partition.get("minPartitions") or 0,
        "labelSelector": {"matchLabels": {"volcano.sh/task-spec": task.get("name", "")}},
        "matchLabelKeys": ["volcano.sh/partition-id"],
    }
    network = partition.get("networkTopology")
    if isinstance(network, dict):
        out["networkTopology"] = {
            k: v for k, v in network.items() if k in ("mode", "highestTierAllowed", "highestTierName")
        }
    return {k: v for k, v in out.items() if v is not None}


def build_podgroup(job: dict) -> dict:
    md = job["metadata"]
    spec = job.get("spec") or {}
    pg_spec: dict = {
        "minMember": job_min_available(spec),
        "minTaskMember": {
            t.get("name", f"default{i}"): task_min_available(t) for i, t in enumerate(spec.get("tasks") or [])
        },
        "queue": spec.get("queue") or "default",
        "minResources": min_resources(spec),
    }
    if spec.get("priorityClassName"):
        pg_spec["priorityClassName"] = spec["priorityClassName"]
    network = spec.get("networkTopology")
    if isinstance(network, dict):
        nt: dict = {"mode": network.get("mode") or "hard"}
        if network.get("highestTierAllowed") is not None:
            nt["highestTierAllowed"] = network["highestTierAllowed"]
        elif network.get("highestTierName"):
            nt["highestTierName"] = network["highestTierName"]
        pg_spec["networkTopology"] = nt
    sub_groups = [_sub_group_policy(t) for t in spec.get("tasks") or [] if t.get("partitionPolicy")]
    if sub_groups:
        pg_spec["subGroupPolicy"] = sub_groups
    meta: dict = {
        "name": podgroup_name(job),
        "namespace": md["namespace"],
        "ownerReferences": [owner_reference(job)],
    }
    if md.get("labels"):
        meta["labels"] = dict(md["labels"])
    if md.get("annotations"):
        meta["annotations"] = dict(md["annotations"])
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": pg_spec,
    }


def build_pod(job: dict, task: dict, index: int) -> dict:
    """The pod ``<job>-<task>-<index>`` with Volcano's labels and annotations."""
    md = job["metadata"]
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    task_name = task.get("name", "")
    template = task.get("template") or {}
    tmeta = template.get("metadata") or {}
    pod_spec = copy.deepcopy(template.get("spec") or {})
    queue = spec.get("queue") or "default"
    name = f"{md['name']}-{task_name}-{index}"
    annotations = dict(tmeta.get("annotations") or {})
    annotations.update(
        {
            GROUP_NAME_ANNOTATION: podgroup_name(job),
            "volcano.sh/job-name": md["name"],
            "volcano.sh/task-spec": task_name,
            "volcano.sh/task-index": str(index),
            "volcano.sh/queue-name": queue,
            "volcano.sh/job-version": str(status.get("version") or 0),
            "volcano.sh/job-retry-count": str(status.get("retryCount") or 0),
            "volcano.sh/template-uid": f"{md['name']}-{task_name}",
        }
    )
    for key in (
        "volcano.sh/preemptable",
        "volcano.sh/revocable-zone",
        "volcano.sh/cooldown-time",
        "volcano.sh/jdb-min-available",
        "volcano.sh/jdb-max-unavailable",
    ):
        if key in (md.get("annotations") or {}):
            annotations[key] = md["annotations"][key]
    labels = dict(tmeta.get("labels") or {})
    labels.update(
        {
            "volcano.sh/job-name": md["name"],
            "volcano.sh/job-namespace": md["namespace"],
            "volcano.sh/task-spec": task_name,
            "volcano.sh/task-index": str(index),
            "volcano.sh/queue-name": queue,
        }
    )
    partition = task.get("partitionPolicy") or {}
    if partition.get("partitionSize"):
        labels["volcano.sh/partition-id"] = str(index // int(partition["partitionSize"]))
    if not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = spec.get("schedulerName") or "volcano"
    if spec.get("priorityClassName") and not pod_spec.get("priorityClassName"):
        pod_spec["priorityClassName"] = spec["priorityClassName"]
    pod_spec.setdefault("restartPolicy", "Always")
    if "svc" in (spec.get("plugins") or {}):
        pod_spec.setdefault("hostname", name)
        pod_spec.setdefault("subdomain", md["name"])
    if "env" in (spec.get("plugins") or {}):
        # The env plugin exposes the task index (pkg/controllers/job/plugins/env).
        for container in pod_spec.get("containers") or []:
            container.setdefault("env", []).extend(
                [
                    {"name": "VK_TASK_INDEX", "value": str(index)},
                    {"name": "VC_TASK_INDEX", "value": str(index)},
                ]
            )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": md["namespace"],
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(job)],
        },
        "spec": pod_spec,
        "status": {"phase": "Pending", "qosClass": _qos_class(pod_spec)},
    }


def _qos_class(spec: dict) -> str:
    requests_seen = limits_seen = False
    guaranteed = True
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests_seen |= bool(req)
        limits_seen |= bool(lim)
        for name in ("cpu", "memory"):
            if name not in lim or (name in req and str(req[name]) != str(lim[name])):
                guaranteed = False
    if guaranteed and limits_seen:
        return "Guaranteed"
    if requests_seen or limits_seen:
        return "Burstable"
    return "BestEffort"


def _set_phase(status: dict, phase: str, stamp: str) -> None:
    """Enter ``phase``: state.phase/lastTransitionTime, and the one-per-phase condition list."""
    state = status.setdefault("state", {})
    state["phase"] = phase
    state["lastTransitionTime"] = stamp
    conditions = [c for c in status.get("conditions") or [] if c.get("status") != phase]
    conditions.append({"status": phase, "lastTransitionTime": stamp})
    status["conditions"] = conditions


class JobController:
    def __init__(self, controllers) -> None:
        self.c = controllers
        self._actions: dict[str, list[tuple[str, str]]] = {}  # job uid -> [(action, target)]
        self._handled_failures: set[str] = set()  # pod uids whose PodFailed was handled
        self._task_done: dict[str, set[tuple[int, str]]] = {}  # job uid -> {(version, task)} fired
        self._ttl_scheduled: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ entry points
    def forget(self, key: tuple[str, str], uid: str) -> None:
        self._actions.pop(uid, None)
        self._task_done.pop(uid, None)
        self._ttl_scheduled.discard(key)

    def forget_pod(self, uid: str) -> None:
        self._handled_failures.discard(uid)

    def command(self, namespace: str, name: str, action: str) -> None:
        try:
            job = self.c.store.get(JOB, namespace, name)
        except ApiError:
            return
        self.c.events.record(
            job,
            "Normal",
            "CommandIssued",
            f"Start to execute command {action}, and clean it up to make sure executed not more than once.",
            COMPONENT,
        )
        self._actions.setdefault(job["metadata"]["uid"], []).append((action, ""))
        self.c.dirty_jobs[(namespace, name)] = None

    def sync(self, key: tuple[str, str]) -> None:
        job = self.c.store.peek(JOB, *key)  # read-only: the new status is a copy
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        self._sync(job)

    # ------------------------------------------------------------------ the state machine
    def _sync(self, job: dict) -> None:
        c = self.c
        md = job["metadata"]
        uid = md["uid"]
        spec = job.get("spec") or {}
        old_status = job.get("status") or {}
        status = copy_json(old_status)
        stamp = c.stamp()
        phase = (status.get("state") or {}).get("phase") or ""
        if not phase:
            phase = "Pending"
            _set_phase(status, phase, stamp)
            status["minAvailable"] = job_min_available(spec)
        min_available = job_min_available(spec)
        total = total_replicas(spec)

        # Requested actions (Commands) first, then lifecycle policies.
        for action, target in self._actions.pop(uid, []):
            phase = self._apply_action(job, status, phase, action, target, stamp)
        if phase in ("Pending", "Running"):
            for action, target in self._policy_actions(job, status):
                self.c.events.record(
                    job, "Normal", "ExecuteAction", f"Start to execute action {action} ", COMPONENT
                )
                phase = self._apply_action(job, status, phase, action, target, stamp)
                if phase not in ("Pending", "Running"):
                    break

        pods = c.owned_pods(uid)
        if phase in ("Pending", "Running"):
            pg = self._ensure_podgroup(job)
            if pg is not None and pg.phase and pg.phase != "Pending":
                self._create_pods(job, status, pods)
                pods = c.owned_pods(uid)
            counts = _count(pods)
            running_like = counts["running"] + counts["succeeded"] + counts["failed"]
            if phase == "Pending" and min_available <= running_like and running_like > 0:
                phase = self._enter(status, "Running", stamp)
            if phase == "Running":
                next_phase = _running_next(spec, counts, total, min_available, pods)
                if next_phase:
                    phase = self._enter(status, next_phase, stamp)
            if phase in TERMINAL:
                self._kill(job, status, "soft", stamp)
                pods = c.owned_pods(uid)
            elif pg is not None:
                self._podgroup_pending_event(job, pg)

        if phase in KILLING:
            retain = RETAIN[phase]
            self._kill(job, status, retain, stamp)
            pods = c.owned_pods(uid)
            counts = _count(pods)
            live = counts["pending"] + counts["running"] + counts["terminating"]
            if phase == "Aborting" and live == 0:
                phase = self._enter(status, "Aborted", stamp)
            elif phase == "Completing" and live == 0:
                phase = self._enter(status, "Completed", stamp)
            elif phase == "Terminating" and live == 0:
                phase = self._enter(status, "Terminated", stamp)
            elif phase == "Restarting":
                max_retry = spec.get("maxRetry")
                max_retry = int(max_retry if max_retry is not None else 3)
                if int(status.get("retryCount") or 0) >= max_retry:
                    self.c.events.record(
                        job,
                        "Normal",
                        "ExecuteAction",
                        "Job failed on action RestartJob for retry limit reached",
                        COMPONENT,
                    )
                    phase = self._enter(status, "Failed", stamp)
                    self._kill(job, status, "soft", stamp, bump=False)
                elif (
                    total - counts["terminating"] >= min_available
                    and counts["pending"] + counts["running"] == 0
                ):
                    phase = self._enter(status, "Pending", stamp)

        if phase in TERMINAL:
            self._schedule_ttl(job, status)

        pods = c.owned_pods(uid)
        self._fill_counters(status, pods, job)
        if status.get("minAvailable") != min_available and min_available:
            status["minAvailable"] = min_available
        if status != old_status:
            c.write(
                "Job",
                md["namespace"],
                md["name"],
                lambda obj: obj.__setitem__("status", status),  # mutate stores a copy
            )
        if phase in ("Pending", "Running") and (md["namespace"], podgroup_name(job)) not in c.podgroups:
            # Entered Pending in this sync (after a restart): create the PodGroup next tick.
            c.dirty_jobs[(md["namespace"], md["name"])] = None

    def _enter(self, status: dict, phase: str, stamp: str) -> str:
        _set_phase(status, phase, stamp)
        return phase

    def _apply_action(self, job: dict, status: dict, phase: str, action: str, target: str, stamp: str) -> str:
        """Apply a bus/lifecycle action to the phase (Volcano ``pkg/controllers/job/state``)."""
        if action == "AbortJob" and phase in ("Pending", "Running", "Restarting"):
            return self._begin_kill(job, status, "Aborting", stamp)
        if action == "TerminateJob" and phase in ("Pending", "Running", "Restarting", "Aborting", "Aborted"):
            return self._begin_kill(job, status, "Terminating", stamp)
        if action == "CompleteJob" and phase in ("Pending", "Running"):
            return self._begin_kill(job, status, "Completing", stamp)
        if action == "RestartJob" and phase in ("Pending", "Running"):
            status["retryCount"] = int(status.get("retryCount") or 0) + 1
            return self._begin_kill(job, status, "Restarting", stamp)
        if action == "ResumeJob" and phase in ("Aborting", "Aborted"):
            status["retryCount"] = int(status.get("retryCount") or 0) + 1
            return self._begin_kill(job, status, "Restarting", stamp)
        if action in ("RestartTask", "RestartPod") and phase in ("Pending", "Running"):
            # Partial restarts keep the PodGroup: delete the pods and let them be recreated.
            status["retryCount"] = int(status.get("retryCount") or 0) + 1
            for pod in self.c.owned_pods(job["metadata"]["uid"]):
                if (action == "RestartTask" and pod.task == target) or (
                    action == "RestartPod" and pod.name == target
                ):
                    self.c.kubelet.terminate(pod)
            return phase
        return phase

    def _begin_kill(self, job: dict, status: dict, phase: str, stamp: str) -> str:
        _set_phase(status, phase, stamp)
        status["version"] = int(status.get("version") or 0) + 1
        self._running_duration(job, status)
        return phase

    def _running_duration(self, job: dict, status: dict) -> None:
        created = parse_time(job["metadata"].get("creationTimestamp"))
        changed = parse_time((status.get("state") or {}).get("lastTransitionTime"))
        if created is not None and changed is not None:
            status["runningDuration"] = go_duration(max(0.0, changed - created))

    def _kill(self, job: dict, status: dict, retain: str, stamp: str, *, bump: bool | None = None) -> None:
        """Delete the Job's pods (keeping finished ones when ``retain == "soft"``) and its PodGroup."""
        c = self.c
        for pod in c.owned_pods(job["metadata"]["uid"]):
            if pod.deleting:
                continue
            if retain == "soft" and pod.phase in ("Succeeded", "Failed"):
                continue
            c.kubelet.terminate(pod)
        pg_key = (job["metadata"]["namespace"], podgroup_name(job))
        if pg_key in c.podgroups:
            c.delete("PodGroup", *pg_key)
        phase = (status.get("state") or {}).get("phase")
        if phase in TERMINAL and bump is None:
            # Entering a terminal phase is itself a whole-job kill.
            status["version"] = int(status.get("version") or 0) + 1
            self._running_duration(job, status)

    def _policy_actions(self, job: dict, status: dict) -> list[tuple[str, str]]:
        """Lifecycle policies triggered by new pod failures and task completions (task level first)."""
        spec = job.get("spec") or {}
        uid = job["metadata"]["uid"]
        version = int(status.get("version") or 0)
        pods = self.c.owned_pods(uid)
        tasks = {t.get("name", ""): t for t in spec.get("tasks") or []}
        out: list[tuple[str, str]] = []
        for pod in pods:
            if pod.phase != "Failed" or pod.uid in self._handled_failures or pod.deleting:
                continue
            self._handled_failures.add(pod.uid)
            action = _match_policy(
                tasks.get(pod.task, {}).get("policies"), "PodFailed", pod.exit_code
            ) or _match_policy(spec.get("policies"), "PodFailed", pod.exit_code)
            if action:
                out.append((action, pod.task if action == "RestartTask" else pod.name))
        by_task: dict[str, list[PodInfo]] = {}
        for pod in pods:
            by_task.setdefault(pod.task, []).append(pod)
        for name, task in tasks.items():
            members = by_task.get(name, [])
            replicas = int(task.get("replicas") or 0)
            if replicas and len(members) == replicas and all(p.phase == "Succeeded" for p in members):
                fired = self._task_done.setdefault(uid, set())
                if (version, name) in fired:
                    continue
                fired.add((version, name))
                action = _match_policy(task.get("policies"), "TaskCompleted", None) or _match_policy(
                    spec.get("policies"), "TaskCompleted", None
                )
                if action:
                    out.append((action, name))
        return out

    def _ensure_podgroup(self, job: dict):
        c = self.c
        key = (job["metadata"]["namespace"], podgroup_name(job))
        pg = c.podgroups.get(key)
        if pg is None:
            try:
                c.create("PodGroup", build_podgroup(job), key[0])
            except ApiError as exc:
                if exc.code != 409:
                    c.events.record(job, "Warning", "PodGroupError", exc.message, COMPONENT)
                    return None
            pg = c.podgroups.get(key)
        return pg

    def _create_pods(self, job: dict, status: dict, pods: list[PodInfo]) -> None:
        c = self.c
        existing = {p.name for p in pods}
        spec = job.get("spec") or {}
        job_for_pods = dict(job)
        job_for_pods["status"] = status
        errors = []
        for task in spec.get("tasks") or []:
            for index in range(int(task.get("replicas") or 0)):
                name = f"{job['metadata']['name']}-{task.get('name', '')}-{index}"
                if name in existing:
                    continue
                try:
                    c.create("Pod", build_pod(job_for_pods, task, index), job["metadata"]["namespace"])
                except ApiError as exc:
                    if exc.code != 409:
                        errors.append(exc.message)
        if errors:
            c.events.record(job, "Warning", "FailedCreate", f"Error creating pods: {errors}", COMPONENT)

    def _podgroup_pending_event(self, job: dict, pg) -> None:
        conditions = [
            c for c in (pg.obj.get("status") or {}).get("conditions") or [] if c.get("status") == "True"
        ]
        if not conditions:
            return
        newest = max(conditions, key=lambda c: c.get("lastTransitionTime") or "")
        if newest.get("type") == "Scheduled":
            return
        md = job["metadata"]
        self.c.events.record(
            job,
            "Warning",
            "PodGroupPending",
            f"PodGroup {md['namespace']}:{md['name']} unschedulable, reason: {newest.get('message', '')}",
            COMPONENT,
        )

    def _fill_counters(self, status: dict, pods: list[PodInfo], job: dict) -> None:
        counts = _count(pods)
        for name in ("pending", "running", "succeeded", "failed", "terminating", "unknown"):
            if counts[name]:
                status[name] = counts[name]
            else:
                status.pop(name, None)  # Go omitempty: zero counters are absent
        task_counts: dict[str, dict] = {}
        for pod in pods:
            if pod.deleting:
                continue
            phases = task_counts.setdefault(pod.task, {"phase": {}})["phase"]
            phases[pod.phase] = phases.get(pod.phase, 0) + 1
        if task_counts:
            status["taskStatusCount"] = task_counts
        else:
            status.pop("taskStatusCount", None)
        plugins = (job.get("spec") or {}).get("plugins") or {}
        if plugins:
            status["controlledResources"] = {f"plugin-{name}": name for name in sorted(plugins)}

    def _schedule_ttl(self, job: dict, status: dict) -> None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        key = (job["metadata"]["namespace"], job["metadata"]["name"])
        if key in self._ttl_scheduled:
            return
        self._ttl_scheduled.add(key)
        since = parse_time((status.get("state") or {}).get("lastTransitionTime")) or self.c.now()
        self.c.at(since + float(ttl), self._gc, key, job["metadata"]["uid"])

    def _gc(self, key: tuple[str, str], uid: str) -> None:
        self._ttl_scheduled.discard(key)
        if self.c.jobs_by_uid.get(uid) != key:
            return
        self.c.delete("Job", key[0], key[1], propagation="Foreground")


def _count(pods: list[PodInfo]) -> dict[str, int]:
    counts = dict.fromkeys(("pending", "running", "succeeded", "failed", "terminating", "unknown"), 0)
    for pod in pods:
        if pod.deleting:
            counts["terminating"] += 1
        elif pod.phase == "Pending":
            counts["pending"] += 1
        elif pod.phase == "Running":
            counts["running"] += 1
        elif pod.phase == "Succeeded":
            counts["succeeded"] += 1
        elif pod.phase == "Failed":
            counts["failed"] += 1
        else:
            counts["unknown"] += 1
    return counts


def _running_next(
    spec: dict, counts: dict, total: int, min_available: int, pods: list[PodInfo]
) -> str | None:
    """Running -> Completed/Failed/Pending rules (Volcano ``pkg/controllers/job/state/running.go``)."""
    min_success = spec.get("minSuccess")
    if min_success is not None and counts["succeeded"] >= int(min_success):
        return "Completed"
    if total and counts["succeeded"] + counts["failed"] == total:
        tasks = spec.get("tasks") or []
        task_min_total = sum(task_min_available(t) for t in tasks)
        if min_available >= task_min_total:
            # Every task with its own minAvailable must reach it in Succeeded pods.
            for task in tasks:
                if task.get("minAvailable") is None:
                    continue
                done = sum(
                    1
                    for p in pods
                    if p.task == task.get("name") and p.phase == "Succeeded" and not p.deleting
                )
                if done < int(task["minAvailable"]):
                    return "Failed"
        if min_success is not None and counts["succeeded"] < int(min_success):
            return "Failed"
        if counts["succeeded"] >= min_available:
            return "Completed"
        return "Failed"
    if counts["pending"] > total - min_available:
        return "Pending"
    return None


def _match_policy(policies: list | None, event: str, exit_code: int | None) -> str | None:
    for policy in policies or []:
        events = policy.get("events") or ([policy["event"]] if policy.get("event") else [])
        if event in events or "*" in events:
            return policy.get("action")
        if (
            event == "PodFailed"
            and policy.get("exitCode") is not None
            and exit_code == policy.get("exitCode")
        ):
            return policy.get("action")
    return None
