"""Volcano's admission webhooks, as store admission hooks (opt-in: ``SimulatedCluster(webhooks=True)``).

A real Volcano installation runs mutating and validating webhooks in front of the API server
(``pkg/webhooks/admission/{jobs,podgroups,queues}``); this module implements the
documented subset of their rules:

Mutating (CREATE):
- Job: ``schedulerName`` "volcano"; ``tasks[i].name`` "default<i>"; ``tasks[i].minAvailable`` =
  replicas (or minPartitions x partitionSize); ``tasks[i].maxRetry`` 3; ``minAvailable`` = the sum of
  the tasks' minAvailable; plugins: ``svc`` added for tensorflow/mpi/pytorch/ray, ``ssh`` for mpi.
- PodGroup: queue "default" replaced by the namespace annotation ``scheduling.volcano.sh/queue-name``.
- Queue: ``reclaimable`` true.

Validating:
- Job CREATE: at least one task; task names unique DNS labels; replicas >= 0; a task's minAvailable
  <= its replicas; minAvailable <= total replicas; no event mapped twice in one policy list; the
  queue exists, is Open, is not ``root`` and has no child queues.
- Job UPDATE: only ``minAvailable``, ``tasks[*].replicas`` and ``priorityClassName`` may change;
  tasks cannot be added or removed.
- PodGroup CREATE: the queue exists and is Open.
- Queue CREATE/UPDATE: weight within 1..65535; guarantee <= deserved <= capability per resource.
- Queue DELETE: not ``root`` or ``default``; no child queues.

A queue with no ``status.state`` yet counts as Open (the queue controller opens new queues on
its first sync; without controllers nothing would). Denials are 400 with the upstream message
shape ``admission webhook "<name>" denied the request: <why>``. Hierarchical quota sums are not
checked.
"""

from __future__ import annotations

import re
from typing import Any

from .kinds import JOB, NAMESPACE, PODGROUP, QUEUE, Kind
from .store import ApiError, Store

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


def _deny(webhook: str, why: str) -> ApiError:
    return ApiError(400, "BadRequest", f'admission webhook "{webhook}" denied the request: {why}')


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class VolcanoAdmission:
    """The admission hook; ``install(store)`` registers it."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, operation: str, kind: Kind, new: dict, old: dict | None) -> None:
        if kind is JOB:
            if operation == "CREATE":
                self._mutate_job(new)
                self._validate_job(new)
            elif operation == "UPDATE" and old is not None:
                self._validate_job_update(new, old)
        elif kind is PODGROUP and operation == "CREATE":
            self._mutate_podgroup(new)
            self._check_queue(
                "validatepodgroup.volcano.sh",
                (new.get("spec") or {}).get("queue") or "default",
                for_job=False,
            )
        elif kind is QUEUE:
            if operation == "CREATE":
                new.setdefault("spec", {}).setdefault("reclaimable", True)
            if operation in ("CREATE", "UPDATE"):
                self._validate_queue(new)
            elif operation == "DELETE":
                self._validate_queue_delete(new)

    # ---------------------------------------------------------------- Job
    @staticmethod
    def _mutate_job(job: dict) -> None:
        spec = job.setdefault("spec", {})
        if not spec.get("schedulerName"):
            spec["schedulerName"] = "volcano"
        total_min = 0
        for i, task in enumerate(spec.get("tasks") or ()):
            if not isinstance(task, dict):
                continue
            if not task.get("name"):
                task["name"] = f"default{i}"
            if task.get("minAvailable") is None:
                partition = task.get("partitionPolicy")
                if isinstance(partition, dict) and partition.get("partitionSize"):
                    task["minAvailable"] = _int(partition.get("minPartitions")) * _int(
                        partition["partitionSize"]
                    )
                else:
                    task["minAvailable"] = _int(task.get("replicas"))
            task.setdefault("maxRetry", 3)
            total_min += _int(task.get("minAvailable"))
        if spec.get("minAvailable") is None:
            spec["minAvailable"] = total_min
        plugins = spec.get("plugins")
        if isinstance(plugins, dict):
            if any(p in plugins for p in ("tensorflow", "mpi", "pytorch", "ray")):
                plugins.setdefault("svc", [])
            if "mpi" in plugins:
                plugins.setdefault("ssh", [])

    def _validate_job(self, job: dict) -> None:
        hook = "validatejob.volcano.sh"
        spec = job.get("spec") or {}
        tasks = [t for t in spec.get("tasks") or () if isinstance(t, dict)]
        if not tasks:
            raise _deny(hook, "No task specified in job spec")
        names: set[str] = set()
        total = 0
        for task in tasks:
            name = str(task.get("name") or "")
            if name in names:
                raise _deny(hook, f"duplicated task name {name}")
            names.add(name)
            if not _DNS_LABEL.match(name) or len(name) > 63:
                raise _deny(hook, f"task name {name!r} must be a lowercase RFC 1123 label")
            replicas = _int(task.get("replicas"))
            if replicas < 0:
                raise _deny(hook, f"'replicas' < 0 in task: {name}")
            if _int(task.get("minAvailable")) > replicas:
                raise _deny(hook, f"'minAvailable' is greater than 'replicas' in task: {name}")
            total += replicas
            self._check_policies(hook, task.get("policies"), f"task {name}")
        min_available = _int(spec.get("minAvailable"))
        if min_available < 0:
            raise _deny(hook, "job 'minAvailable' must be >= 0")
        if min_available > total:
            raise _deny(hook, "job 'minAvailable' should not be greater than total replicas in tasks")
        self._check_policies(hook, spec.get("policies"), "job")
        self._check_queue(hook, spec.get("queue") or "default", for_job=True)

    @staticmethod
    def _check_policies(hook: str, policies: Any, where: str) -> None:
        seen: set[str] = set()
        for policy in policies or ():
            if not isinstance(policy, dict):
                continue
            events = list(policy.get("events") or ()) + ([policy["event"]] if policy.get("event") else [])
            for event in events:
                if event in seen:
                    raise _deny(hook, f"duplicate event {event} in the {where} policies")
                seen.add(event)

    def _validate_job_update(self, new: dict, old: dict) -> None:
        hook = "validatejob.volcano.sh"
        new_spec, old_spec = dict(new.get("spec") or {}), dict(old.get("spec") or {})
        new_tasks, old_tasks = list(new_spec.get("tasks") or ()), list(old_spec.get("tasks") or ())
        if len(new_tasks) != len(old_tasks):
            raise _deny(hook, "job updates may not add or remove tasks")
        for spec in (new_spec, old_spec):
            spec.pop("minAvailable", None)
            spec.pop("priorityClassName", None)
            spec["tasks"] = [
                {k: v for k, v in t.items() if k != "replicas"} if isinstance(t, dict) else t
                for t in spec.get("tasks") or ()
            ]
        if new_spec != old_spec:
            raise _deny(
                hook, "job updates may only change minAvailable, tasks[*].replicas and priorityClassName"
            )
        total = sum(_int(t.get("replicas")) for t in new_tasks if isinstance(t, dict))
        if _int((new.get("spec") or {}).get("minAvailable")) > total:
            raise _deny(hook, "job 'minAvailable' should not be greater than total replicas in tasks")

    # ---------------------------------------------------------------- PodGroup
    def _mutate_podgroup(self, pg: dict) -> None:
        spec = pg.setdefault("spec", {})
        if spec.get("queue", "default") != "default":
            return
        ns = self.store.try_get(NAMESPACE, None, (pg.get("metadata") or {}).get("namespace") or "")
        queue = ((ns or {}).get("metadata", {}).get("annotations") or {}).get(QUEUE_ANNOTATION)
        if queue:
            spec["queue"] = queue

    def _check_queue(self, hook: str, name: str, *, for_job: bool) -> None:
        queue = self.store.try_get(QUEUE, None, name)
        if queue is None:
            raise _deny(hook, f'unable to find job queue: queues.scheduling.volcano.sh "{name}" not found')
        state = (queue.get("status") or {}).get("state") or "Open"
        if state != "Open":
            raise _deny(
                hook, f"can only submit job to queue with state `Open`, queue `{name}` status is `{state}`"
            )
        if for_job:
            if name == "root":
                raise _deny(hook, "can not submit job to root queue")
            if any((q.get("spec") or {}).get("parent") == name for q in self.store.iter_objects(QUEUE)):
                raise _deny(hook, f"can only submit job to leaf queue, queue `{name}` has child queues")

    # ---------------------------------------------------------------- Queue
    @staticmethod
    def _validate_queue(queue: dict) -> None:
        from kubernetes.utils import parse_quantity

        hook = "validatequeue.volcano.sh"
        spec = queue.get("spec") or {}
        weight = _int(spec.get("weight"), 1)
        if not 1 <= weight <= 65535:
            raise _deny(hook, f"queue weight must be within [1, 65535], got {weight}")
        levels = (
            ("guarantee", ((spec.get("guarantee") or {}).get("resource") or {})),
            ("deserved", spec.get("deserved") or {}),
            ("capability", spec.get("capability") or {}),
        )
        for (low_name, low), (high_name, high) in zip(levels, levels[1:], strict=False):
            for resource, value in low.items():
                if resource not in high:
                    continue
                try:
                    if parse_quantity(value) > parse_quantity(high[resource]):
                        raise _deny(
                            hook, f"{low_name} {resource}={value} exceeds {high_name} {high[resource]}"
                        )
                except ValueError:
                    raise _deny(hook, f"invalid quantity for {resource}: {value!r}") from None

    def _validate_queue_delete(self, queue: dict) -> None:
        hook = "validatequeue.volcano.sh"
        name = (queue.get("metadata") or {}).get("name")
        if name in ("root", "default"):
            raise _deny(hook, f"`{name}` queue can not be deleted")
        if any((q.get("spec") or {}).get("parent") == name for q in self.store.iter_objects(QUEUE)):
            raise _deny(hook, f"queue `{name}` has child queues and can not be deleted")


def install(store: Store) -> VolcanoAdmission:
    """Register Volcano's webhooks on ``store``; returns the hook."""
    hook = VolcanoAdmission(store)
    store.add_admission(hook)
    return hook
