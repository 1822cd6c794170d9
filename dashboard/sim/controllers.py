"""Simulated Volcano behaviour: the facade that runs every controller over simulated time.

``Controllers(store, clock, rng)`` registers a store listener and, on ``advance(seconds)``, steps the
simulated clock in fixed ticks (1 s by default; a Volcano scheduler session is ~1 s). Each tick runs,
in order: timers (pod lifecycle, graceful deletions, TTL GC, scenario arrivals), bus Commands, the
workload controllers (Deployment/ReplicaSet, PodGroups for plain pods), Volcano's job controller for
the Jobs marked dirty, the queue controller, one scheduler session, and Event expiry.

Nothing rescans the store per tick. The listener records the latest version of every changed
object in an inbox; the tick folds the inbox into small in-memory indexes (pods by Job and by
PodGroup, PodGroups by queue, node and queue usage kept incrementally) and marks dependants dirty.
Writes made by the controllers themselves are folded in immediately ("write-through"), and their
listener echoes are recognised by resourceVersion and skipped.

Determinism: all randomness comes from the ``rng`` given (a ``random.Random``), or from per-object
generators seeded from it and the object's name, and all time from the simulated clock.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import resources as R
from .events import EventRecorder
from .kinds import Kind, kind_by_name
from .store import ApiError

log = logging.getLogger(__name__)


def _kind(name: str, group: str) -> Kind:
    kind = kind_by_name(name, group)
    if kind is None:
        raise LookupError(f"the simulated cluster serves no {name} in group {group!r}")
    return kind


JOB = _kind("Job", "batch.volcano.sh")
PODGROUP = _kind("PodGroup", "scheduling.volcano.sh")
QUEUE = _kind("Queue", "scheduling.volcano.sh")
COMMAND = _kind("Command", "bus.volcano.sh")
POD = _kind("Pod", "")
NODE = _kind("Node", "")
EVENT = _kind("Event", "")


def _optional_kind(name: str, group: str):
    try:
        return kind_by_name(name, group)
    except (KeyError, LookupError, ValueError):
        return None


DEPLOYMENT = _optional_kind("Deployment", "apps")
REPLICASET = _optional_kind("ReplicaSet", "apps")
NAMESPACE = _optional_kind("Namespace", "")
CRONJOB = _optional_kind("CronJob", "batch.volcano.sh")
JOBFLOW = _optional_kind("JobFlow", "flow.volcano.sh")
JOBTEMPLATE = _optional_kind("JobTemplate", "flow.volcano.sh")
HYPERNODE = _optional_kind("HyperNode", "topology.volcano.sh")

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
FINISHED = ("Succeeded", "Failed")

# Short keys for the kinds the controllers care about, by (group, kind).
_KIND_KEYS: dict[tuple[str | None, str | None], str] = {
    ("batch.volcano.sh", "Job"): "Job",
    ("scheduling.volcano.sh", "PodGroup"): "PodGroup",
    ("scheduling.volcano.sh", "Queue"): "Queue",
    ("bus.volcano.sh", "Command"): "Command",
    ("", "Pod"): "Pod",
    ("", "Node"): "Node",
    ("apps", "Deployment"): "Deployment",
    ("apps", "ReplicaSet"): "ReplicaSet",
    ("batch.volcano.sh", "CronJob"): "CronJob",
    ("flow.volcano.sh", "JobFlow"): "JobFlow",
    ("flow.volcano.sh", "JobTemplate"): "JobTemplate",
    ("topology.volcano.sh", "HyperNode"): "HyperNode",
}
KIND_OBJECTS = {
    "Job": JOB,
    "PodGroup": PODGROUP,
    "Queue": QUEUE,
    "Command": COMMAND,
    "Pod": POD,
    "Node": NODE,
    "Deployment": DEPLOYMENT,
    "ReplicaSet": REPLICASET,
    "CronJob": CRONJOB,
    "JobFlow": JOBFLOW,
    "JobTemplate": JOBTEMPLATE,
    "HyperNode": HYPERNODE,
}
# The Volcano components (Deployments in volcano-system, see components.py) the controllers stand for.
SCHEDULER_COMPONENT = "volcano-scheduler"
CONTROLLERS_COMPONENT = "volcano-controllers"


def kind_key(kind) -> str | None:
    if isinstance(kind, str):
        return kind if kind in KIND_OBJECTS else None
    return _KIND_KEYS.get((getattr(kind, "group", None), getattr(kind, "kind", None)))


def controller_ref(obj: dict) -> dict | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def owner_reference(obj: dict) -> dict:
    md = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


@dataclass
class PodInfo:
    """What the controllers need to know of one pod, refreshed on every change."""

    namespace: str
    name: str
    uid: str
    phase: str
    node: str
    deleting: bool
    owner_uid: str
    owner_kind: str
    group: str  # the PodGroup name from the group-name annotation
    task: str
    scheduler: str
    requests: R.Res
    exit_code: int | None
    created: str
    ready: bool = False
    node_selector: dict | None = None
    scheduled_condition: tuple[str, str, str] | None = None  # PodScheduled (status, reason, message)
    charged_queue: str = ""
    tolerations: list | None = None
    labels: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        """Whether the pod occupies node (and queue) resources."""
        return bool(self.node) and self.phase not in FINISHED

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


@dataclass
class PodGroupInfo:
    namespace: str
    name: str
    uid: str
    queue: str
    min_member: int
    min_resources: R.Res  # plain resource names, milli-units
    phase: str
    owner_uid: str
    created: str
    priority: int
    obj: dict
    charged_queue: str = ""

    @property
    def reserving(self) -> bool:
        """An Inqueue PodGroup reserves its minResources in its queue until its pods are bound."""
        return self.phase == "Inqueue"

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


@dataclass
class QueueInfo:
    name: str
    parent: str
    state: str
    capability: R.Res
    obj: dict
    allocated: R.Res = field(default_factory=dict)  # own pods' requests
    reserved: R.Res = field(default_factory=dict)  # own Inqueue PodGroups' minResources
    podgroups: dict[tuple[str, str], None] = field(default_factory=dict)


@dataclass
class NodeInfo:
    name: str
    allocatable: R.Res
    labels: dict
    schedulable: bool
    gpu: bool
    used: R.Res = field(default_factory=dict)
    taints: list = field(default_factory=list)  # NoSchedule/NoExecute taints only


def _pod_info(obj: dict) -> PodInfo:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    ref = controller_ref(obj) or {}
    annotations = md.get("annotations") or {}
    labels = md.get("labels") or {}
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    exit_code = None
    for cs in status.get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated")
        if term and term.get("exitCode"):
            exit_code = term.get("exitCode")
    return PodInfo(
        namespace=md.get("namespace", ""),
        name=md.get("name", ""),
        uid=md.get("uid", ""),
        phase=status.get("phase") or "Pending",
        node=spec.get("nodeName") or "",
        deleting=bool(md.get("deletionTimestamp")),
        owner_uid=ref.get("uid", ""),
        owner_kind=ref.get("kind", ""),
        group=annotations.get(GROUP_NAME_ANNOTATION, ""),
        task=annotations.get("volcano.sh/task-spec") or labels.get("volcano.sh/task-spec", ""),
        scheduler=spec.get("schedulerName") or "default-scheduler",
        requests=R.pod_requests(spec),
        exit_code=exit_code,
        created=md.get("creationTimestamp") or "",
        ready=any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions),
        node_selector=dict(spec.get("nodeSelector") or {}) or None,
        tolerations=[t for t in spec.get("tolerations") or [] if isinstance(t, dict)] or None,
        labels=labels,
        scheduled_condition=next(
            (
                (c.get("status", ""), c.get("reason", ""), c.get("message", ""))
                for c in conditions
                if c.get("type") == "PodScheduled"
            ),
            None,
        ),
    )


def _pg_info(obj: dict) -> PodGroupInfo:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    ref = controller_ref(obj) or {}
    return PodGroupInfo(
        namespace=md.get("namespace", ""),
        name=md.get("name", ""),
        uid=md.get("uid", ""),
        queue=spec.get("queue") or "default",
        min_member=int(spec.get("minMember") or 0),
        min_resources=R.strip_quota(R.parse_list(spec.get("minResources"))),
        phase=(obj.get("status") or {}).get("phase") or "",
        owner_uid=ref.get("uid", ""),
        created=md.get("creationTimestamp") or "",
        priority=0,
        obj=obj,
    )


def _queue_info(obj: dict) -> QueueInfo:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    name = md.get("name", "")
    parent = spec.get("parent") or ("" if name == "root" else "root")
    return QueueInfo(
        name=name,
        parent=parent,
        state=(obj.get("status") or {}).get("state") or "",
        capability=R.parse_list(spec.get("capability")),
        obj=obj,
    )


def _node_info(obj: dict) -> NodeInfo:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    alloc = R.parse_list(status.get("allocatable") or status.get("capacity"))
    ready = True
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            ready = cond.get("status") == "True"
    return NodeInfo(
        name=md.get("name", ""),
        allocatable=alloc,
        labels=md.get("labels") or {},
        schedulable=ready and not spec.get("unschedulable"),
        gpu=any(k.endswith("/gpu") and v > 0 for k, v in alloc.items()),
        taints=[
            t
            for t in spec.get("taints") or []
            if isinstance(t, dict) and t.get("effect") in ("NoSchedule", "NoExecute")
        ],
    )


class Controllers:
    """Runs Volcano's controllers and scheduler over a ``Store`` in simulated time.

    ``store``: the simulated API server's store; ``clock``: the ``SimClock`` it stamps with;
    ``rng``: a seeded ``random.Random``. ``tick``: seconds per step (one scheduler session).
    ``create_default_queues``: create ``root`` and ``default`` when missing, as the scheduler does.
    """

    def __init__(
        self,
        store,
        clock,
        rng: random.Random | None = None,
        *,
        tick: float = 1.0,
        create_default_queues: bool = True,
        event_repeat_interval: float = 30.0,
        event_ttl: float = 3600.0,
        scheduler_names: tuple[str, ...] = ("volcano",),
    ) -> None:
        from .cronjobs import CronJobController
        from .jobcontroller import JobController
        from .jobflows import JobFlowController
        from .podlifecycle import Kubelet
        from .queuecontroller import QueueController
        from .scheduler import Scheduler
        from .topology import HyperNodeController
        from .workloads import WorkloadControllers

        self.store = store
        self.clock = clock
        self.rng = rng or random.Random(0)
        self.base_seed = self.rng.getrandbits(64)
        self.tick = float(tick)
        self.scheduler_names = scheduler_names
        self._lock = threading.RLock()
        self._inbox_lock = threading.Lock()
        self._inbox: dict[tuple, tuple[str, dict]] = {}
        self._seen_rv: dict[tuple, int] = {}
        self._carry = 0.0
        self._timers: list[tuple[float, int, Callable, tuple]] = []
        self._seq = itertools.count()
        self.ticks = 0
        self.errors = 0

        # Indexes.
        self.pods: dict[tuple[str, str], PodInfo] = {}
        self.pods_by_owner: dict[str, dict[tuple[str, str], None]] = {}
        self.pods_by_group: dict[tuple[str, str], dict[str, None]] = {}
        self.queue_epoch = 0  # bumped when queues appear, vanish or change parent
        self.podgroups: dict[tuple[str, str], PodGroupInfo] = {}
        self.queues: dict[str, QueueInfo] = {}
        self.nodes: dict[str, NodeInfo] = {}
        self.jobs_by_uid: dict[str, tuple[str, str]] = {}
        self.jobs_by_owner: dict[str, dict[tuple[str, str], None]] = {}  # controller owner uid -> Jobs
        self._job_owner: dict[tuple[str, str], tuple[str, str, str]] = {}  # Job -> (owner kind, name, uid)
        # Volcano components whose Deployment is down (components.py): their controllers pause.
        self.components_down: set[str] = set()
        self.cluster_used: R.Res = {}
        self.cluster_reserved: R.Res = {}
        self.capacity_epoch = 0  # bumped whenever resources are released
        self.charge_epoch = 0  # bumped whenever any queue's allocated/reserved changes
        self._subtree_cache: dict[str, tuple[R.Res, R.Res]] = {}
        self._subtree_stamp: tuple = ()
        self._children_cache: dict[str, list[str]] = {}
        self._children_cache_epoch = -1

        # Dirty sets (dicts as ordered sets, so processing order is deterministic).
        self.dirty_jobs: dict[tuple[str, str], None] = {}
        self.dirty_podgroups: dict[tuple[str, str], None] = {}
        self.dirty_queues: dict[str, None] = {}
        self.dirty_commands: dict[tuple[str, str], None] = {}
        self.dirty_workloads: dict[tuple[str, str, str], None] = {}
        self.dirty_queue_alloc: dict[str, None] = {}

        self.events = EventRecorder(store, self.now, repeat_interval=event_repeat_interval, ttl=event_ttl)
        self.kubelet = Kubelet(self)
        self.jobs = JobController(self)
        self.queue_controller = QueueController(self)
        self.scheduler = Scheduler(self)
        self.workloads = WorkloadControllers(self)
        self.cronjobs = CronJobController(self)
        self.jobflows = JobFlowController(self)
        self.hypernodes = HyperNodeController(self)

        store.add_listener(self._on_change)
        self._bootstrap(create_default_queues)

    # ----------------------------------------------------------------- time and timers
    def now(self) -> float:
        """Simulated time as a POSIX timestamp (seconds)."""
        return self.clock.now().timestamp()

    def stamp(self) -> str:
        return self.clock.rfc3339()

    def at(self, due: float, fn: Callable, *args) -> None:
        """Run ``fn(*args)`` in the first tick at or after simulated time ``due``."""
        heapq.heappush(self._timers, (due, next(self._seq), fn, args))

    def after(self, delay: float, fn: Callable, *args) -> None:
        self.at(self.now() + delay, fn, *args)

    def pod_rng(self, namespace: str, name: str, salt: object = "") -> random.Random:
        """A generator for one object, independent of processing order."""
        return random.Random(f"{self.base_seed}/{namespace}/{name}/{salt}")

    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def advance(self, seconds: float) -> int:
        """Advance simulated time by ``seconds`` in whole ticks (a remainder carries over to the next
        call); returns the number of ticks run. Thread-safe; ticks never overlap.
        """
        if seconds < 0:
            raise ValueError("cannot advance by a negative number of seconds")
        with self._lock:
            self._carry += seconds
            ran = 0
            while self._carry >= self.tick - 1e-9:
                self._carry -= self.tick
                self.clock.advance(self.tick)
                self.run_tick()
                ran += 1
            return ran

    def run_tick(self) -> None:
        """One step of every controller at the current simulated time."""
        with self._lock:
            self.ticks += 1
            self.drain()
            now = self.now()
            while self._timers and self._timers[0][0] <= now:
                _, _, fn, args = heapq.heappop(self._timers)
                self.guard(getattr(fn, "__name__", "timer"), fn, *args)
            self.drain()
            manager_up = CONTROLLERS_COMPONENT not in self.components_down
            if manager_up:
                self._run_commands()
            self.workloads.sync()
            self.drain()
            if manager_up:
                self.cronjobs.sync()
                self.jobflows.sync()
                self.guard("hypernode status", self.hypernodes.sync)
                self.drain()
                self._sync_jobs()
                self.drain()
                self.queue_controller.sync()
            if SCHEDULER_COMPONENT not in self.components_down:
                self.scheduler.session()
                self.drain()
            self.guard("event expiry", self.events.expire)

    def guard(self, what: str, fn: Callable, *args, **kwargs):
        """Run one controller step for one object. An API error (a conflict, an object deleted
        meanwhile) skips it; any other error (an object no controller expected) is logged and
        counted, and never stops the tick for the other objects."""
        try:
            return fn(*args, **kwargs)
        except ApiError as exc:
            log.debug("%s: %s", what, exc.message)
        except Exception:  # noqa: BLE001 - one malformed object must not stop the simulation
            self.errors += 1
            if self.errors <= 20:
                log.warning("simulated controllers: %s failed", what, exc_info=True)
        return None

    def _sync_jobs(self) -> None:
        dirty, self.dirty_jobs = self.dirty_jobs, {}
        for key in dirty:
            self.guard(f"job {key[0]}/{key[1]}", self.jobs.sync, key)

    def _run_commands(self) -> None:
        dirty, self.dirty_commands = self.dirty_commands, {}
        for namespace, name in dirty:
            try:
                command = self.store.get(COMMAND, namespace, name)
            except ApiError:
                continue
            self.guard(f"command {namespace}/{name}", self.handle_command, command)

    def handle_command(self, command: dict) -> None:
        """bus.volcano.sh Command: delete it first, record CommandIssued, then act (volcano-sh/volcano
        pkg/controllers/job)."""
        md = command["metadata"]
        try:
            self.store.delete(COMMAND, md["namespace"], md["name"])
        except ApiError:
            return  # somebody else consumed it
        action = command.get("action") or ""
        target = command.get("target") or {}
        if target.get("kind") == "Queue" and action in ("OpenQueue", "CloseQueue"):
            self.queue_controller.command(target.get("name", ""), action)
        elif target.get("kind") == "Job" and target.get("apiVersion", JOB.api_version) == JOB.api_version:
            self.jobs.command(md["namespace"], target.get("name", ""), action)

    # ----------------------------------------------------------------- store access
    def _on_change(self, event_type: str, kind, obj: dict) -> None:
        key = kind_key(kind)
        if key is None:
            return
        md = obj.get("metadata") or {}
        with self._inbox_lock:
            self._inbox[(key, md.get("namespace") or "", md.get("name") or "")] = (event_type, obj)

    def drain(self) -> None:
        """Fold the listener's inbox into the indexes."""
        while True:
            with self._inbox_lock:
                inbox, self._inbox = self._inbox, {}
            if not inbox:
                return
            for (key, namespace, name), (event_type, obj) in inbox.items():
                if event_type != "DELETED":
                    rv = _rv(obj)
                    seen = self._seen_rv.get((key, namespace, name))
                    if seen is not None and rv is not None and rv <= seen:
                        continue
                self.guard(f"{key} {namespace}/{name}", self.observe, key, event_type, obj, own=False)

    def observe(self, key: str, event_type: str, obj: dict, *, own: bool) -> None:
        md = obj.get("metadata") or {}
        namespace, name = md.get("namespace") or "", md.get("name") or ""
        rv = _rv(obj)
        if event_type == "DELETED":
            self._seen_rv.pop((key, namespace, name), None)
        elif rv is not None:
            self._seen_rv[(key, namespace, name)] = rv
        handler = getattr(self, f"_observe_{key.lower()}")
        handler(event_type, obj, own)

    def write(self, key: str, namespace: str | None, name: str, fn: Callable[[dict], None]) -> dict:
        """``store.mutate`` plus write-through into the indexes. Returns the stored object
        (READ-ONLY: the callers only read it)."""
        obj = self.store.mutate_stored(KIND_OBJECTS[key], namespace, name, fn)
        self.observe(key, "MODIFIED", obj, own=True)
        return obj

    def create(self, key: str, obj: dict, namespace: str | None = None) -> dict:
        out = self.store.create(KIND_OBJECTS[key], obj, namespace)
        self.observe(key, "ADDED", out, own=True)
        return out

    def delete(
        self, key: str, namespace: str | None, name: str, propagation: str = "Background"
    ) -> dict | None:
        try:
            # The stored object (read-only): the callers only read it.
            out = self.store.delete(KIND_OBJECTS[key], namespace, name, propagation=propagation, copy=False)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise
        # Dependents cascaded by the store arrive through the listener.
        self.observe(
            key,
            "DELETED",
            out
            if isinstance(out, dict) and out.get("metadata")
            else {"metadata": {"namespace": namespace, "name": name}},
            own=True,
        )
        return out

    # ----------------------------------------------------------------- bootstrap
    def _bootstrap(self, create_default_queues: bool) -> None:
        for key in (
            "Node",
            "HyperNode",
            "Queue",
            "PodGroup",
            "Job",
            "Pod",
            "Command",
            "Deployment",
            "ReplicaSet",
            "CronJob",
            "JobFlow",
            "JobTemplate",
        ):
            kind = KIND_OBJECTS[key]
            if kind is None:
                continue
            items, _ = self.store.list(kind)
            for obj in items:
                self.observe(key, "ADDED", obj, own=False)
        with self._inbox_lock:
            self._inbox.clear()
        if create_default_queues:
            for name, reclaimable in (("root", False), ("default", True)):
                if name not in self.queues:
                    spec: dict[str, Any] = {"weight": 1, "reclaimable": reclaimable}
                    if name != "root":
                        spec["parent"] = "root"
                    with contextlib.suppress(ApiError):
                        self.create(
                            "Queue",
                            {
                                "apiVersion": QUEUE.api_version,
                                "kind": "Queue",
                                "metadata": {"name": name},
                                "spec": spec,
                            },
                        )

    # ----------------------------------------------------------------- index maintenance
    def _observe_pod(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        key = (md.get("namespace") or "", md.get("name") or "")
        old = self.pods.get(key)
        new = None if event_type == "DELETED" else _pod_info(obj)
        if old is not None and new is not None and old.uid != new.uid:
            self._observe_pod("DELETED", {"metadata": {"namespace": key[0], "name": key[1]}}, own)
            old = None
        if old is not None:
            self._charge_pod(old, -1)
            if new is None:
                owned = self.pods_by_owner.get(old.owner_uid)
                if owned is not None:
                    owned.pop(key, None)
                    if not owned:
                        del self.pods_by_owner[old.owner_uid]
                self._unindex_group(old)
                self.kubelet.forget(old)
                self.jobs.forget_pod(old.uid)
                self.scheduler.forget_pod(old)
        if new is not None:
            self.pods[key] = new
            if old is None or old.owner_uid != new.owner_uid:
                if old is not None:
                    self.pods_by_owner.get(old.owner_uid, {}).pop(key, None)
                if new.owner_uid:
                    self.pods_by_owner.setdefault(new.owner_uid, {})[key] = None
            if old is not None and old.group != new.group:
                self._unindex_group(old)
            if new.group:
                self.pods_by_group.setdefault((new.namespace, new.group), {})[new.name] = None
            self._charge_pod(new, +1)
            self.kubelet.observe(new, obj)
        else:
            self.pods.pop(key, None)
        info = new or old
        if info is None:
            return
        job_key = self.jobs_by_uid.get(info.owner_uid)
        if job_key is not None:
            self.dirty_jobs[job_key] = None
        if info.group:
            self.dirty_podgroups[(info.namespace, info.group)] = None
        elif info.scheduler in self.scheduler_names or info.scheduler == "default-scheduler":
            self.scheduler.note_ungrouped(info)
        if info.owner_kind == "ReplicaSet":
            self.dirty_workloads[("ReplicaSet", info.namespace, self._owner_name(obj))] = None
        if (
            new is not None
            and not new.group
            # (a Volcano Job's own pods are skipped by the handler, which checks the apiVersion: a
            # batch/v1 Job's pods need a PodGroup too, pkg/controllers/podgroup)
            and new.scheduler in self.scheduler_names
            and not new.deleting
        ):
            self.dirty_workloads[("Pod", new.namespace, new.name)] = None
        if old is not None and old.holds and (new is None or not new.holds):
            self.capacity_epoch += 1

    def _unindex_group(self, pod: PodInfo) -> None:
        if not pod.group:
            return
        members = self.pods_by_group.get((pod.namespace, pod.group))
        if members is not None:
            members.pop(pod.name, None)
            if not members:
                del self.pods_by_group[(pod.namespace, pod.group)]

    @staticmethod
    def _owner_name(obj: dict) -> str:
        ref = controller_ref(obj) or {}
        return ref.get("name", "")

    def _charge_pod(self, pod: PodInfo, sign: int) -> None:
        """Add (sign=+1) or remove (-1) a pod's requests from its node, the cluster and its queue."""
        if not pod.holds:
            return
        self.charge_epoch += 1
        node = self.nodes.get(pod.node)
        if node is not None:
            R.add(node.used, pod.requests, sign)
        R.add(self.cluster_used, pod.requests, sign)
        if sign > 0:
            pg = self.podgroups.get((pod.namespace, pod.group)) if pod.group else None
            pod.charged_queue = pg.queue if pg is not None else ""
        queue = self.queues.get(pod.charged_queue) if pod.charged_queue else None
        if queue is not None:
            R.add(queue.allocated, pod.requests, sign)
            self.dirty_queue_alloc[queue.name] = None

    def _charge_pg(self, pg: PodGroupInfo, sign: int) -> None:
        if not pg.reserving:
            return
        self.charge_epoch += 1
        R.add(self.cluster_reserved, pg.min_resources, sign)
        if sign > 0:
            pg.charged_queue = pg.queue
        queue = self.queues.get(pg.charged_queue)
        if queue is not None:
            R.add(queue.reserved, pg.min_resources, sign)

    def _observe_podgroup(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        key = (md.get("namespace") or "", md.get("name") or "")
        old = self.podgroups.get(key)
        if old is not None:
            self._charge_pg(old, -1)
            q = self.queues.get(old.queue)
            if q is not None:
                q.podgroups.pop(key, None)
        if event_type == "DELETED":
            self.podgroups.pop(key, None)
            self.scheduler.forget_podgroup(key)
            if old is not None:
                self.dirty_queues[old.queue] = None
                if old.reserving:
                    self.capacity_epoch += 1
            info = old
        else:
            info = _pg_info(obj)
            self.podgroups[key] = info
            q = self.queues.get(info.queue)
            if q is not None:
                q.podgroups[key] = None
            self._charge_pg(info, +1)
            if old is None or old.queue != info.queue:
                # Re-charge bound pods to the right queue.
                for pod_name in self.pods_by_group.get(key, ()):
                    pod = self.pods.get((key[0], pod_name))
                    if pod is not None and pod.holds and pod.charged_queue != info.queue:
                        self._charge_pod(pod, -1)
                        self._charge_pod(pod, +1)
            if old is None or old.queue != info.queue:
                self.dirty_queues[info.queue] = None
        if info is None:
            return
        job_key = self.jobs_by_uid.get(info.owner_uid)
        if job_key is not None:
            self.dirty_jobs[job_key] = None
        if event_type != "DELETED":
            # Including our own writes: the scheduler looks at every new or changed PodGroup once.
            self.dirty_podgroups[key] = None

    def _observe_job(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        key = (md.get("namespace") or "", md.get("name") or "")
        uid = md.get("uid") or ""
        if event_type == "DELETED":
            if self.jobs_by_uid.get(uid) == key:
                del self.jobs_by_uid[uid]
            self.jobs.forget(key, uid)
            self._note_job_owner(key, None)
            return
        self.jobs_by_uid[uid] = key
        if not own:
            self.dirty_jobs[key] = None
        self._note_job_owner(key, obj)

    def _note_job_owner(self, key: tuple[str, str], obj: dict | None) -> None:
        """Index Jobs by their controller owner and wake the CronJob or JobFlow that owns one."""
        old = self._job_owner.pop(key, None)
        if old is not None:
            owned = self.jobs_by_owner.get(old[2])
            if owned is not None:
                owned.pop(key, None)
                if not owned:
                    del self.jobs_by_owner[old[2]]
        ref = controller_ref(obj) if obj is not None else None
        if ref is not None and ref.get("uid"):
            self._job_owner[key] = (ref.get("kind", ""), ref.get("name", ""), ref["uid"])
            self.jobs_by_owner.setdefault(ref["uid"], {})[key] = None
        for owner in (old, self._job_owner.get(key)):
            if owner is None:
                continue
            if owner[0] == "CronJob":
                self.cronjobs.mark((key[0], owner[1]))
            elif owner[0] == "JobFlow":
                self.jobflows.dirty[(key[0], owner[1])] = None
        labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
        template = labels.get("volcano.sh/createdByJobTemplate", "")
        if template.startswith(key[0] + "."):
            self.jobflows.dirty_templates[(key[0], template[len(key[0]) + 1 :])] = None

    def _observe_queue(self, event_type: str, obj: dict, own: bool) -> None:
        name = (obj.get("metadata") or {}).get("name") or ""
        old = self.queues.get(name)
        if event_type == "DELETED":
            self.queues.pop(name, None)
            self.dirty_queue_alloc.pop(name, None)
            self.queue_epoch += 1
            return
        info = _queue_info(obj)
        if old is not None:
            info.allocated = old.allocated
            info.reserved = old.reserved
            info.podgroups = old.podgroups
            if old.capability != info.capability:
                self.capacity_epoch += 1
        else:
            # A queue created after its PodGroups (replays): adopt them.
            for pg in self.podgroups.values():
                if pg.queue == name:
                    info.podgroups[pg.key] = None
        self.queues[name] = info
        if not own or old is None:
            self.dirty_queues[name] = None
        if old is None or old.parent != info.parent:
            self.dirty_queue_alloc[name] = None
            self.queue_epoch += 1

    def _observe_command(self, event_type: str, obj: dict, own: bool) -> None:
        if event_type == "ADDED":
            md = obj.get("metadata") or {}
            self.dirty_commands[(md.get("namespace") or "", md.get("name") or "")] = None

    def _observe_node(self, event_type: str, obj: dict, own: bool) -> None:
        name = (obj.get("metadata") or {}).get("name") or ""
        old = self.nodes.pop(name, None)
        if event_type == "DELETED":
            self.capacity_epoch += 1
            self.scheduler.nodes_changed()
            self.hypernodes.changed()
            return
        info = _node_info(obj)
        if old is not None:
            info.used = old.used
        else:
            for pod in self.pods.values():
                if pod.node == name and pod.holds:
                    R.add(info.used, pod.requests)
        self.nodes[name] = info
        self.capacity_epoch += 1
        self.scheduler.nodes_changed()
        if old is None or old.labels != info.labels:
            self.hypernodes.changed()

    def _observe_deployment(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        if not own:
            self.dirty_workloads[("Deployment", md.get("namespace") or "", md.get("name") or "")] = None

    def _observe_replicaset(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        if not own or event_type != "MODIFIED":
            self.dirty_workloads[("ReplicaSet", md.get("namespace") or "", md.get("name") or "")] = None
        ref = controller_ref(obj)
        if ref is not None and ref.get("kind") == "Deployment":
            self.dirty_workloads[("Deployment", md.get("namespace") or "", ref.get("name", ""))] = None

    def _observe_cronjob(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        if event_type != "DELETED" and not own:
            self.cronjobs.mark((md.get("namespace") or "", md.get("name") or ""))

    def _observe_jobflow(self, event_type: str, obj: dict, own: bool) -> None:
        md = obj.get("metadata") or {}
        if event_type != "DELETED" and not own:
            self.jobflows.dirty[(md.get("namespace") or "", md.get("name") or "")] = None

    def _observe_jobtemplate(self, event_type: str, obj: dict, own: bool) -> None:
        # A JobFlow waiting for a missing template retries (Volcano requeues it with a rate limit).
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        if event_type == "ADDED" and JOBFLOW is not None:
            for flow in self.store.iter_objects(JOBFLOW, namespace):
                self.jobflows.dirty[(namespace, flow["metadata"]["name"])] = None

    def _observe_hypernode(self, event_type: str, obj: dict, own: bool) -> None:
        self.hypernodes.observe(event_type, obj)

    # ----------------------------------------------------------------- queries
    def owned_pods(self, owner_uid: str) -> list[PodInfo]:
        keys = self.pods_by_owner.get(owner_uid) or {}
        return [self.pods[k] for k in keys if k in self.pods]

    def pg_pods(self, pg: PodGroupInfo) -> list[PodInfo]:
        out = []
        for name in self.pods_by_group.get(pg.key, ()):
            pod = self.pods.get((pg.namespace, name))
            if pod is not None:
                out.append(pod)
        return out

    def queue_chain(self, name: str) -> list[QueueInfo]:
        """The queue and its ancestors, nearest first (cycles and missing parents end the walk)."""
        out: list[QueueInfo] = []
        seen: set[str] = set()
        while name and name not in seen:
            seen.add(name)
            queue = self.queues.get(name)
            if queue is None:
                break
            out.append(queue)
            name = queue.parent
        return out

    def queue_children(self, name: str) -> list[QueueInfo]:
        return [self.queues[n] for n in self._children_map().get(name, ()) if n in self.queues]

    def subtree_totals(self, name: str) -> tuple[R.Res, R.Res]:
        """(allocated, reserved) summed over the queue and its descendants (cached until the next
        charge or queue change; callers must not modify the result)."""
        stamp = (self.charge_epoch, self.queue_epoch)
        if self._subtree_stamp != stamp:
            self._subtree_cache = {}
            self._subtree_stamp = stamp
        cached = self._subtree_cache.get(name)
        if cached is None:
            cached = self._subtree_cache[name] = self._subtree_totals(name)
        return cached

    def _subtree_totals(self, name: str) -> tuple[R.Res, R.Res]:
        alloc: R.Res = {}
        reserved: R.Res = {}
        stack = [name]
        seen: set[str] = set()
        children = self._children_map()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            queue = self.queues.get(current)
            if queue is None:
                continue
            R.add(alloc, queue.allocated)
            R.add(reserved, queue.reserved)
            stack.extend(children.get(current, ()))
        return alloc, reserved

    def _children_map(self) -> dict[str, list[str]]:
        if self._children_cache_epoch != self.queue_epoch:
            mapping: dict[str, list[str]] = {}
            for q in self.queues.values():
                if q.parent and q.parent != q.name:
                    mapping.setdefault(q.parent, []).append(q.name)
            self._children_cache = mapping
            self._children_cache_epoch = self.queue_epoch
        return self._children_cache

    def stats(self) -> dict:
        return {
            "ticks": self.ticks,
            "pods": len(self.pods),
            "podgroups": len(self.podgroups),
            "queues": len(self.queues),
            "nodes": len(self.nodes),
            "timers": len(self._timers),
            "events_written": self.events.written,
            "events_dropped": self.events.dropped,
            "errors": self.errors,
        }


def _rv(obj: dict) -> int | None:
    value: Any = (obj.get("metadata") or {}).get("resourceVersion")  # any JSON value
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
