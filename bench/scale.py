"""A bulk loader and a churn driver for the scale benchmark, written straight against the Store.

The simulated cluster's own large-cluster generator (``dashboard/sim/scenarios.py``) is preferred;
this module is the fallback for when that generator is absent or too slow at
10,000 Jobs, and the churn driver for runs with the controllers off. Objects follow the shapes Volcano
writes: Job status, PodGroup (named ``<job>-<uid>``, owned by the Job),
Queue hierarchy through ``spec.parent``, pod naming ``<job>-<task>-<index>`` with the
``scheduling.k8s.io/group-name`` annotation, events with ``involvedObject``.

Everything is deterministic for a given seed, except the wall-clock timing of churn.
"""

from __future__ import annotations

import contextlib
import random
import uuid
from collections import deque
from dataclasses import dataclass, field

VC_JOB = ("batch.volcano.sh", "Job")
PODGROUP = ("scheduling.volcano.sh", "PodGroup")
QUEUE = ("scheduling.volcano.sh", "Queue")
POD = ("", "Pod")
EVENT = ("", "Event")
NAMESPACE = ("", "Namespace")

JOB_API = "batch.volcano.sh/v1alpha1"
PG_API = "scheduling.volcano.sh/v1beta1"


@dataclass
class ScaleSpec:
    """Sizes of the generated cluster (defaults: the benchmark scale)."""

    jobs: int = 10_000
    pods: int = 50_000
    queues: int = 200
    events: int = 100_000
    namespaces: int = 50
    # PodGroups (None: as many as Jobs). The simulator's generator makes up the PodGroups Volcano
    # deleted for finished Jobs with other workloads'; bulk_load keeps one PodGroup per Job.
    podgroups: int | None = None
    # Nodes and HyperNodes (None: the simulator's generator decides: as many nodes as the pods need,
    # no HyperNodes); bulk_load makes neither.
    nodes: int | None = None
    hypernodes: int | None = None
    seed: int = 0

    @classmethod
    def tiny(cls) -> ScaleSpec:
        return cls(jobs=40, pods=200, queues=12, events=400, namespaces=4)


def _kinds():
    from dashboard.sim.kinds import kind_by_name

    return {
        name: kind_by_name(kind, group)
        for name, (group, kind) in {
            "job": VC_JOB,
            "pg": PODGROUP,
            "queue": QUEUE,
            "pod": POD,
            "event": EVENT,
            "ns": NAMESPACE,
        }.items()
    }


def queue_tree(count: int) -> list[tuple[str, str | None]]:
    """(name, parent) pairs: root, default, departments under root, leaves under departments.

    Exactly ``count`` queues (at least 3). Jobs go only to leaves and ``default`` (Volcano
    admits jobs only to open leaf queues).
    """
    count = max(3, count)
    rest = count - 2
    departments = max(1, round(rest / 11))
    leaves = rest - departments
    tree: list[tuple[str, str | None]] = [("root", None), ("default", "root")]
    tree += [(f"dept-{d:02d}", "root") for d in range(departments)]
    tree += [
        (f"dept-{i % departments:02d}-q{i // departments:02d}", f"dept-{i % departments:02d}")
        for i in range(leaves)
    ]
    return tree


@dataclass
class Builder:
    """Builds consistent Job/PodGroup/Pod/Event dicts at a given simulated time."""

    rng: random.Random
    leaf_queues: list[str]
    namespaces: list[str]
    serial: int = 0

    def rfc(self, clock) -> str:  # noqa: ANN001
        return clock.rfc3339()

    def job_name(self) -> str:
        self.serial += 1
        return f"job-{self.serial:06d}"

    def job(
        self, ns: str, name: str, queue: str, replicas: tuple[int, int], now: str, *, arrival: bool = False
    ) -> dict:
        master, workers = replicas
        tasks = []
        for task, count in (("master", master), ("worker", workers)):
            if count:
                tasks.append(
                    {
                        "name": task,
                        "replicas": count,
                        "minAvailable": count,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": task,
                                        "image": "busybox:1.36",
                                        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}},
                                    }
                                ],
                                "restartPolicy": "Never",
                            }
                        },
                    }
                )
        return {
            "apiVersion": JOB_API,
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": str(uuid.UUID(int=self.rng.getrandbits(128))),
                "creationTimestamp": now,
                # Arrivals (created by churn, deleted when finished) are labelled so the benchmark
                # measures only loaded Jobs, which live through the run.
                "labels": {"bench.volcano-ui/arrival": "true"} if arrival else {},
            },
            "spec": {
                "schedulerName": "volcano",
                "minAvailable": master + workers,
                "queue": queue,
                "maxRetry": 3,
                "tasks": tasks,
            },
            "status": {
                "state": {"phase": "Pending", "lastTransitionTime": now},
                "minAvailable": master + workers,
                "conditions": [{"status": "Pending", "lastTransitionTime": now}],
            },
        }

    @staticmethod
    def owner(job: dict) -> dict:
        return {
            "apiVersion": JOB_API,
            "kind": "Job",
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def podgroup(self, job: dict, now: str, phase: str | None) -> dict:
        meta = job["metadata"]
        total = job["spec"]["minAvailable"]
        pg = {
            "apiVersion": PG_API,
            "kind": "PodGroup",
            "metadata": {
                "name": f"{meta['name']}-{meta['uid']}",
                "namespace": meta["namespace"],
                "uid": str(uuid.UUID(int=self.rng.getrandbits(128))),
                "creationTimestamp": now,
                "ownerReferences": [self.owner(job)],
            },
            "spec": {
                "minMember": total,
                "queue": job["spec"]["queue"],
                "minTaskMember": {t["name"]: t["replicas"] for t in job["spec"]["tasks"]},
                "minResources": {
                    "count/pods": str(total),
                    "cpu": f"{total * 500}m",
                    "memory": f"{total * 512}Mi",
                    "pods": str(total),
                },
            },
        }
        if phase:
            pg["status"] = {"phase": phase}
        return pg

    def pods(self, job: dict, now: str) -> list[dict]:
        meta = job["metadata"]
        out = []
        for task in job["spec"]["tasks"]:
            for index in range(task["replicas"]):
                name = f"{meta['name']}-{task['name']}-{index}"
                out.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": name,
                            "namespace": meta["namespace"],
                            "creationTimestamp": now,
                            "uid": str(uuid.UUID(int=self.rng.getrandbits(128))),
                            "ownerReferences": [self.owner(job)],
                            "labels": {
                                "volcano.sh/job-name": meta["name"],
                                "volcano.sh/job-namespace": meta["namespace"],
                                "volcano.sh/task-spec": task["name"],
                                "volcano.sh/task-index": str(index),
                                "volcano.sh/queue-name": job["spec"]["queue"],
                            },
                            "annotations": {
                                "scheduling.k8s.io/group-name": f"{meta['name']}-{meta['uid']}",
                                "volcano.sh/job-name": meta["name"],
                                "volcano.sh/task-spec": task["name"],
                                "volcano.sh/task-index": str(index),
                                "volcano.sh/job-version": "0",
                                "volcano.sh/queue-name": job["spec"]["queue"],
                            },
                        },
                        "spec": {
                            "schedulerName": "volcano",
                            "restartPolicy": "Never",
                            "containers": task["template"]["spec"]["containers"],
                        },
                        "status": {"phase": "Pending"},
                    }
                )
        return out

    def event(
        self, obj: dict, reason: str, message: str, now: str, type_: str = "Normal", source: str = "volcano"
    ) -> dict:
        meta = obj["metadata"]
        self.serial += 1
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{self.serial:x}",
                "namespace": meta["namespace"],
                "creationTimestamp": now,
            },
            "involvedObject": {
                "apiVersion": obj["apiVersion"],
                "kind": obj["kind"],
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta.get("uid", ""),
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "count": 1,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": {"component": source},
        }


def set_job_phase(job: dict, phase: str, now: str, pod_phase_counts: dict[str, int]) -> None:
    """Job status as the job controller writes it (pkg/controllers/job): counters omitted when zero."""
    status = job.setdefault("status", {})
    status["state"] = {"phase": phase, "lastTransitionTime": now}
    for key in ("pending", "running", "succeeded", "failed"):
        status.pop(key, None)
    for pod_phase, n in pod_phase_counts.items():
        if n:
            status[pod_phase.lower()] = n
    conditions = [c for c in status.get("conditions", []) if c.get("status") != phase]
    conditions.append({"status": phase, "lastTransitionTime": now})
    status["conditions"] = conditions


# --- bulk load -----------------------------------------------------------------------------------


def bulk_load(cluster, spec: ScaleSpec) -> dict[str, int]:  # noqa: ANN001
    """Create the scale scenario directly in ``cluster.store`` (replayed, statuses as written).

    Phase mix of the Jobs: 55% Running, 15% Pending (PodGroup Inqueue, pods Pending), 25%
    Completed, 5% Failed; each Job has 1 master + (pods/jobs - 1) workers, one PodGroup, and its
    events (``events/jobs`` each) on the Job, the PodGroup and its pods. Returns counts per kind.
    """
    store, clock = cluster.store, cluster.clock
    kinds = _kinds()
    rng = random.Random(spec.seed)
    now = clock.rfc3339()
    tree = queue_tree(spec.queues)
    parents = {parent for _, parent in tree if parent}
    leaves = [name for name, _ in tree if name not in parents and name != "root"]
    namespaces = [f"team-{i:02d}" for i in range(spec.namespaces)]
    builder = Builder(rng, leaves, namespaces)

    def create(kind: str, obj: dict) -> None:
        store.create(kinds[kind], obj, obj["metadata"].get("namespace"), replay=True)

    for ns in namespaces:
        _create_if_absent(
            store,
            kinds["ns"],
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns},
                "status": {"phase": "Active"},
            },
        )
    for name, parent in tree:
        queue = {
            "apiVersion": PG_API,
            "kind": "Queue",
            "metadata": {
                "name": name,
                "uid": str(uuid.UUID(int=rng.getrandbits(128))),
                "creationTimestamp": now,
            },
            "spec": {
                "weight": 1 + rng.randrange(8),
                "reclaimable": name != "root",
                "capability": {"cpu": "2000", "memory": "8000Gi"},
            },
            "status": {"state": "Open", "allocated": {"cpu": "0", "memory": "0"}},
        }
        if parent:
            queue["spec"]["parent"] = parent
        _create_if_absent(store, kinds["queue"], queue, replay=True)

    per_job = max(1, spec.pods // max(1, spec.jobs))
    extra_pods = spec.pods - per_job * spec.jobs
    events_per_job = spec.events // max(1, spec.jobs)
    extra_events = spec.events - events_per_job * spec.jobs
    counts = {"jobs": 0, "podgroups": 0, "pods": 0, "events": 0, "queues": len(tree)}
    for j in range(spec.jobs):
        replicas = per_job + (1 if j < extra_pods else 0)
        ns = namespaces[j % len(namespaces)]
        job = builder.job(
            ns, builder.job_name(), leaves[j % len(leaves)] if j % 50 else "default", (1, replicas - 1), now
        )
        roll = rng.random()
        phase, pg_phase, pod_phase = (
            ("Running", "Running", "Running")
            if roll < 0.55
            else ("Pending", "Inqueue", "Pending")
            if roll < 0.70
            else ("Completed", "Completed", "Succeeded")
            if roll < 0.95
            else ("Failed", "Running", "Failed")
        )
        pods = builder.pods(job, now)
        for pod in pods:
            pod["status"]["phase"] = pod_phase
            if pod_phase != "Pending":
                pod["spec"]["nodeName"] = f"node-{rng.randrange(500):03d}"
        set_job_phase(job, phase, now, {pod_phase: len(pods)})
        create("job", job)
        pg = builder.podgroup(job, now, pg_phase)
        if pg_phase in ("Running", "Completed"):
            pg["status"][{"Running": "running", "Completed": "succeeded"}[pg_phase]] = len(pods)
        create("pg", pg)
        for pod in pods:
            create("pod", pod)
        n_events = events_per_job + (1 if j < extra_events else 0)
        targets = [job, pg] + pods
        for e in range(n_events):
            obj = targets[e % len(targets)]
            reason, message = (
                ("Scheduled", f"Successfully assigned {ns}/{obj['metadata']['name']} to node-001")
                if obj["kind"] == "Pod"
                else ("Scheduled", "pod group is ready")
                if obj["kind"] == "PodGroup"
                else ("ExecuteAction", "Start to execute action SyncJob ")
            )
            create("event", builder.event(obj, reason, message, now))
        counts["jobs"] += 1
        counts["podgroups"] += 1
        counts["pods"] += len(pods)
        counts["events"] += n_events
    return counts


def _create_if_absent(store, kind, obj: dict, replay: bool = False) -> None:  # noqa: ANN001
    from dashboard.sim.store import ApiError

    try:
        store.create(kind, obj, obj["metadata"].get("namespace"), replay=replay)
    except ApiError as exc:
        if exc.code != 409:
            raise


# --- churn ---------------------------------------------------------------------------------------


def leaf_queues(store) -> list[str]:  # noqa: ANN001
    """Open leaf queues of whatever cluster is loaded (jobs go only to leaves)."""
    queues, _ = store.list(_kinds()["queue"])
    parents = {(q.get("spec") or {}).get("parent") for q in queues}
    leaves = [
        q["metadata"]["name"]
        for q in queues
        if q["metadata"]["name"] not in parents
        and q["metadata"]["name"] != "root"
        and (q.get("status") or {}).get("state", "Open") == "Open"
    ]
    return sorted(leaves) or ["default"]


def job_namespaces(jobs: list[dict]) -> list[str]:
    """The namespaces the loaded Jobs live in (so arrivals land where the cluster's teams are)."""
    return sorted({j["metadata"]["namespace"] for j in jobs}) or ["default"]


@dataclass
class _Tracked:
    job: dict
    stage: str  # "pending" -> "inqueue" -> "running" -> "finished"
    ticks: int = 0


@dataclass
class ChurnDriver:
    """Jobs arriving, running, finishing and being deleted, written directly to the store.

    For runs with the controllers off (or when they are too slow at scale). Each ``tick()``:
    ``arrivals`` new Jobs (Pending, PodGroup without status, no pods), tracked
    Jobs step Pending -> Inqueue (pods created Pending) -> Running (pods bound and Running) ->
    Completed (pods Succeeded) -> deleted (cascade to PodGroup and pods) after a few ticks each;
    one event per transition; and the oldest untracked Jobs are deleted so the total stays level;
    events beyond the target are deleted oldest first.
    """

    cluster: object
    spec: ScaleSpec
    arrivals_per_tick: float = 2.0
    run_ticks: int = 20
    keep_finished_ticks: int = 10
    rng: random.Random = field(default_factory=lambda: random.Random(1))
    tracked: deque = field(default_factory=deque)
    created_events: deque = field(default_factory=deque)
    _carry: float = 0.0
    stats: dict = field(default_factory=lambda: {"created": 0, "deleted": 0, "transitions": 0})

    def __post_init__(self) -> None:
        self.kinds = _kinds()
        store = self.cluster.store
        jobs, _ = store.list(self.kinds["job"])
        self.builder = Builder(self.rng, leaf_queues(store), job_namespaces(jobs))
        self.builder.serial = 10_000_000
        jobs.sort(key=lambda j: (j["metadata"].get("creationTimestamp") or "", j["metadata"]["name"]))
        self.old_jobs = deque((j["metadata"]["namespace"], j["metadata"]["name"]) for j in jobs)
        self.total = self.target_jobs = len(jobs)
        events, _ = store.list(self.kinds["event"])
        self.old_events = deque((e["metadata"]["namespace"], e["metadata"]["name"]) for e in events)
        self.target_events = len(events)

    def tick(self) -> None:
        store, now = self.cluster.store, self.cluster.clock.rfc3339()
        from dashboard.sim.store import ApiError

        self._carry += self.arrivals_per_tick
        arrivals, self._carry = int(self._carry), self._carry - int(self._carry)
        for _ in range(arrivals):
            ns = self.rng.choice(self.builder.namespaces)
            job = self.builder.job(
                ns,
                self.builder.job_name(),
                self.rng.choice(self.builder.leaf_queues),
                (1, self.rng.randrange(1, 8)),
                now,
                arrival=True,
            )
            job = store.create(self.kinds["job"], job, ns, replay=True)
            store.create(self.kinds["pg"], self.builder.podgroup(job, now, None), ns, replay=True)
            self.tracked.append(_Tracked(job, "pending"))
            self.stats["created"] += 1
            self.total += 1
        # Keep the total level: retire the oldest loaded Jobs (the delete cascades to pods/PodGroup).
        while self.total > self.target_jobs and self.old_jobs:
            old_ns, old_name = self.old_jobs.popleft()
            try:
                store.delete(self.kinds["job"], old_ns, old_name)
                self.stats["deleted"] += 1
                self.total -= 1
            except ApiError:
                continue
        still = deque()
        for item in self.tracked:
            item.ticks += 1
            try:
                keep = self._step(item, now)
            except ApiError:
                keep = False
            if keep:
                still.append(item)
        self.tracked = still
        while len(self.old_events) + len(self.created_events) > self.target_events and self.old_events:
            ev_ns, ev_name = self.old_events.popleft()
            with contextlib.suppress(ApiError):
                store.delete(self.kinds["event"], ev_ns, ev_name)
        while len(self.created_events) > self.target_events:
            ev_ns, ev_name = self.created_events.popleft()
            with contextlib.suppress(ApiError):
                store.delete(self.kinds["event"], ev_ns, ev_name)

    def _event(self, obj: dict, reason: str, message: str, now: str) -> None:
        event = self.builder.event(obj, reason, message, now)
        self.cluster.store.create(self.kinds["event"], event, event["metadata"]["namespace"], replay=True)
        self.created_events.append((event["metadata"]["namespace"], event["metadata"]["name"]))

    def _set_pods(self, job: dict, phase: str) -> None:
        store = self.cluster.store
        meta = job["metadata"]
        node = f"node-{self.rng.randrange(500):03d}"

        def edit(pod: dict) -> None:
            pod.setdefault("status", {})["phase"] = phase
            pod["spec"].setdefault("nodeName", node)

        for pod in self.builder.pods(job, ""):
            store.mutate(self.kinds["pod"], meta["namespace"], pod["metadata"]["name"], edit)

    def _step(self, item: _Tracked, now: str) -> bool:
        store = self.cluster.store
        job, meta = item.job, item.job["metadata"]
        ns, name = meta["namespace"], meta["name"]
        pg_name = f"{name}-{meta['uid']}"
        total = job["spec"]["minAvailable"]
        if item.stage == "pending" and item.ticks >= 2:
            store.mutate(
                self.kinds["pg"], ns, pg_name, lambda pg: pg.__setitem__("status", {"phase": "Inqueue"})
            )
            for pod in self.builder.pods(job, now):
                store.create(self.kinds["pod"], pod, ns)
            self._event(job, "Scheduled", "pod group is ready", now)
            item.stage, item.ticks = "inqueue", 0
        elif item.stage == "inqueue" and item.ticks >= 2:
            self._set_pods(job, "Running")
            store.mutate(
                self.kinds["pg"],
                ns,
                pg_name,
                lambda pg: pg.__setitem__("status", {"phase": "Running", "running": total}),
            )
            store.mutate(
                self.kinds["job"], ns, name, lambda j: set_job_phase(j, "Running", now, {"Running": total})
            )
            self._event(job, "ExecuteAction", "Start to execute action SyncJob ", now)
            item.stage, item.ticks = "running", 0
        elif item.stage == "running" and item.ticks >= self.run_ticks:
            self._set_pods(job, "Succeeded")
            store.mutate(
                self.kinds["pg"],
                ns,
                pg_name,
                lambda pg: pg.__setitem__("status", {"phase": "Completed", "succeeded": total}),
            )
            store.mutate(
                self.kinds["job"],
                ns,
                name,
                lambda j: set_job_phase(j, "Completed", now, {"Succeeded": total}),
            )
            self._event(job, "ExecuteAction", "Start to execute action CompleteJob ", now)
            item.stage, item.ticks = "finished", 0
        elif item.stage == "finished" and item.ticks >= self.keep_finished_ticks:
            store.delete(self.kinds["job"], ns, name)
            self.stats["deleted"] += 1
            self.total -= 1
            return False
        else:
            return True
        self.stats["transitions"] += 1
        return True
