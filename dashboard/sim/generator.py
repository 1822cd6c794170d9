"""A generator of large simulated clusters for benchmarks (``--scenario large``).

``generate_large(cluster, jobs=10000, pods=50000, queues=200, events=100000, podgroups=None, seed=None,
churn=0.0)`` creates, directly in the store (replay mode: statuses written as given), a consistent cluster:

- namespaces ``team-000``.., a queue tree (root -> ``dept-NN`` -> ``dept-NN-qMM`` leaves) with
  capability/deserved/guarantee, and enough nodes (64 cpu, 256Gi, 110 pods; every 8th with 8 GPUs)
  for the bound pods;
- Jobs in a realistic mix of phases — Running (PodGroup Running, pods Running on nodes), Completed
  (pods Succeeded, no PodGroup, as Volcano leaves them), Failed, Pending (PodGroup Pending with an
  Unschedulable condition, no pods), Inqueue (pods Pending, unbound) and Aborted — with status
  counters, taskStatusCount, conditions, version and minAvailable as the job controller writes them;
- workloads that are not Volcano Jobs but are scheduled by Volcano (Volcano's PodGroup
  controller, pkg/controllers/podgroup): inference Deployments (with their ReplicaSet),
  StatefulSets, batch/v1 Jobs and bare
  pods, each with the PodGroup vc-controller-manager creates for it (``podgroup-<owner uid>``, or
  ``podgroup-<pod uid>`` for a bare pod; ownerReferences = the pods'; queue from the pod annotation
  ``scheduling.volcano.sh/queue-name``; minMember from the owner annotation
  ``scheduling.volcano.sh/group-min-member``) and pods annotated with its group-name. There are as
  many of them as it takes to make ``podgroups`` PodGroups in all (default: as many as ``jobs``,
  the issue's 10,000), since Volcano deletes the PodGroups of finished Jobs (§1);
- exactly ``pods`` pods overall (the other workloads' pods included);
- ``events`` core/v1 Events on those pods, PodGroups and Jobs.

With the controllers on, the cluster then keeps changing: running pods finish after their
``sim.volcano-ui/duration`` (annotation on the pod templates), finished Jobs are garbage-collected
by ``ttlSecondsAfterFinished``, and ``churn`` new Jobs per simulated second arrive (default 0:
callers such as the benchmark add their own arrivals; ``simcluster --scenario large`` uses 2).
Returns counts of the objects created per kind.
"""

from __future__ import annotations

import contextlib
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .controllers import owner_reference
from .kinds import kind_by_name
from .store import ApiError

NAMESPACE = kind_by_name("Namespace", "")
NODE = kind_by_name("Node", "")
QUEUE = kind_by_name("Queue", "scheduling.volcano.sh")
JOB = kind_by_name("Job", "batch.volcano.sh")
PODGROUP = kind_by_name("PodGroup", "scheduling.volcano.sh")
POD = kind_by_name("Pod", "")
EVENT = kind_by_name("Event", "")
DEPLOYMENT = kind_by_name("Deployment", "apps")
REPLICASET = kind_by_name("ReplicaSet", "apps")
STATEFULSET = kind_by_name("StatefulSet", "apps")
BATCH_JOB = kind_by_name("Job", "batch")
HYPERNODE = kind_by_name("HyperNode", "topology.volcano.sh")
_WORKLOAD_KINDS = {
    "Deployment": DEPLOYMENT,
    "ReplicaSet": REPLICASET,
    "StatefulSet": STATEFULSET,
    "Job": BATCH_JOB,
}

GPU = "nvidia.com/gpu"
IMAGES = (
    "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    "volcanosh/example-mpi:0.0.3",
    "tensorflow/tensorflow:2.18.0-gpu",
    "busybox:1.36",
    "python:3.12-slim",
)
# (phase, weight) of generated Jobs.
PHASES = (("Running", 55), ("Completed", 20), ("Pending", 8), ("Inqueue", 5), ("Failed", 7), ("Aborted", 5))
# Job phases whose PodGroup still exists (Volcano deletes a finished Job's PodGroup).
PG_PHASES = ("Running", "Pending", "Inqueue")
# (kind, weight, (min, max) pods) of the other workloads with ``schedulerName: volcano``.
WORKLOADS = (
    ("Deployment", 40, (2, 4)),
    ("StatefulSet", 20, (2, 3)),
    ("BatchJob", 25, (1, 3)),
    ("Pod", 15, (1, 1)),
)
# (PodGroup phase, weight) of the other workloads.
WORKLOAD_PHASES = (("Running", 80), ("Pending", 10), ("Inqueue", 10))
GROUP_NAME = "scheduling.k8s.io/group-name"
_ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # the pod-name suffix alphabet (as workloads.py)
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
MIN_MEMBER = "scheduling.volcano.sh/group-min-member"


def _ts(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


@dataclass
class LargePlan:
    """The sizes of a generated cluster, decided before any object is made (so that a test can check
    the full-size arithmetic without generating it).

    ``job_phases[i]``/``sizes[i]``: phase (one of ``PHASES``) and pod count of Volcano Job i;
    ``workloads``: ``(kind, PodGroup phase, pods, minMember)`` per other workload, kind one of
    ``WORKLOADS``.
    """

    job_phases: list[str]
    sizes: list[int]
    workloads: list[tuple[str, str, int, int]] = field(default_factory=list)

    @property
    def podgroups(self) -> int:
        return sum(1 for p in self.job_phases if p in PG_PHASES) + len(self.workloads)

    @property
    def pods(self) -> int:
        return sum(self.sizes) + sum(w[2] for w in self.workloads)


def plan_large(*, jobs: int, pods: int, podgroups: int | None = None, seed: int = 0) -> LargePlan:
    """Decide phases and sizes for ``generate_large`` (deterministic per ``seed``).

    The Volcano Jobs' PodGroups are those of the Jobs in ``PG_PHASES``; the rest of ``podgroups``
    (default: ``jobs``) are other workloads, whose pods come out of ``pods`` but never more than a
    quarter of them (the Volcano Jobs keep realistic sizes). When even one pod each would exceed that
    share, fewer workloads are made and the PodGroup total falls short of ``podgroups``.
    """
    rng = random.Random(f"large-plan/{seed}")
    jobs = max(0, jobs)
    pods = max(0, pods)
    wanted = jobs if podgroups is None else max(0, podgroups)
    phases = [p for p, w in PHASES for _ in range(w)]
    job_phases = [phases[rng.randrange(len(phases))] for _ in range(jobs)]
    n_other = max(0, wanted - sum(1 for p in job_phases if p in PG_PHASES))
    budget = pods // 4
    n_other = min(n_other, budget)
    kinds = [(k, lo, hi) for k, w, (lo, hi) in WORKLOADS for _ in range(w)]
    wl_phases = [p for p, w in WORKLOAD_PHASES for _ in range(w)]
    workloads: list[tuple[str, str, int, int]] = []
    for _ in range(n_other):
        kind, lo, hi = kinds[rng.randrange(len(kinds))]
        replicas = rng.randint(lo, hi)
        phase = wl_phases[rng.randrange(len(wl_phases))]
        # Serving gangs (StatefulSets, half the Deployments) ask for all replicas at once; batch/v1
        # Jobs and bare pods keep Volcano's default minMember 1.
        gang = kind == "StatefulSet" or (kind == "Deployment" and rng.random() < 0.5)
        workloads.append((kind, phase, replicas, replicas if gang else 1))
    if sum(w[2] for w in workloads) > budget:
        workloads = [(k, p, 1, 1) for k, p, _, _ in workloads]
    rest = pods - sum(w[2] for w in workloads)

    # Pods of Volcano Jobs only for phases that have them.
    with_pods = [i for i, p in enumerate(job_phases) if p not in ("Pending", "Aborted")]
    sizes = [0] * jobs
    if with_pods:
        base, extra = divmod(rest, len(with_pods))
        for k, i in enumerate(with_pods):
            sizes[i] = base + (1 if k < extra else 0)
    elif rest and jobs:
        job_phases = ["Running"] * jobs
        base, extra = divmod(rest, jobs)
        sizes = [base + (1 if i < extra else 0) for i in range(jobs)]
    return LargePlan(job_phases, sizes, workloads)


def generate_large(
    cluster,
    *,
    jobs: int = 10000,
    pods: int = 50000,
    queues: int = 200,
    events: int = 100000,
    podgroups: int | None = None,
    seed: int | None = None,
    churn: float = 0.0,
    namespaces: int | None = None,
    nodes: int | None = None,
    hypernodes: int = 0,
) -> dict[str, int]:
    store = cluster.store
    controllers = getattr(cluster, "controllers", None)
    seed_value = getattr(cluster, "seed", 0) if seed is None else seed
    rng = random.Random(f"large/{seed_value}")
    now = cluster.clock.now().timestamp()
    counts: dict[str, int] = {}

    def put(kind, obj, namespace=None) -> None:
        store.create(kind, obj, namespace, replay=True)
        # "Job" counts Volcano Jobs; batch/v1 Jobs count as "Job.batch".
        key = "Job.batch" if kind is BATCH_JOB else kind.kind
        counts[key] = counts.get(key, 0) + 1

    jobs = max(0, jobs)
    pods = max(0, pods)
    n_ns = namespaces or max(1, min(50, jobs // 200 or 1))
    ns_names = [f"team-{i:03d}" for i in range(n_ns)]
    for ns in ns_names:
        put(
            NAMESPACE,
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns, "uid": _uid(rng), "creationTimestamp": _ts(now - 86400 * 30)},
                "status": {"phase": "Active"},
            },
        )

    # Queues (exactly ``queues`` with the bootstrap's root and default): dept-NN under root, leaves
    # dept-NN-qMM under them (the naming bench/scale.py uses, so its arrivals find their queues).
    # The last leaf is tiny: generated Pending Jobs wait there (a real "why pending").
    rest = max(1, queues - 2)
    n_parents = max(1, round(rest / 11)) if rest > 1 else 1
    n_leaves = max(1, rest - n_parents)
    parents = [f"dept-{d:02d}" for d in range(n_parents)]
    all_leaves = [f"dept-{i % n_parents:02d}-q{i // n_parents:02d}" for i in range(n_leaves)]
    starved = all_leaves[-1]
    leaves = all_leaves[:-1] or all_leaves
    n_leaves = len(leaves)
    for name in parents:
        put(QUEUE, _queue(rng, name, "root", now, cpu=4000, gpu=256))
    for i, name in enumerate(all_leaves):
        parent = parents[i % n_parents]
        if name == starved and len(all_leaves) > 1:
            put(QUEUE, _queue(rng, name, parent, now, cpu=2, gpu=0))
        else:
            put(QUEUE, _queue(rng, name, parent, now, cpu=1000, gpu=64))

    plan = plan_large(jobs=jobs, pods=pods, podgroups=podgroups, seed=seed_value)
    job_phases, sizes = plan.job_phases, plan.sizes

    # Nodes for every bound, unfinished pod (1 cpu each; 50 per node leaves headroom for churn).
    bound = sum(sizes[i] for i in range(jobs) if job_phases[i] == "Running")
    bound += sum(w[2] for w in plan.workloads if w[1] == "Running")
    n_nodes = max(4, bound // 50 + 8, nodes or 0)
    node_names = [f"node-{i:05d}" for i in range(n_nodes)]
    leaf_of = _leaf_assignment(node_names, hypernodes)
    for i, name in enumerate(node_names):
        node_obj = _node(rng, name, now, gpus=8 if i % 8 == 7 else 0)
        if name in leaf_of:
            node_obj["metadata"]["labels"][LEAF_LABEL] = leaf_of[name]
        put(NODE, node_obj)
    for hypernode in _hypernodes(node_names, leaf_of, hypernodes, now, rng):
        put(HYPERNODE, hypernode)
    if hypernodes:
        from .components import deployments

        put(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}})
        for dep in deployments():
            put(DEPLOYMENT, dep)
    cpu_nodes = [n for i, n in enumerate(node_names) if i % 8 != 7]
    node_cursor = 0
    node_fill = 0

    def place() -> str:
        """The next node for a running pod (50 per CPU node)."""
        nonlocal node_cursor, node_fill
        node = cpu_nodes[node_cursor % len(cpu_nodes)]
        node_fill += 1
        if node_fill >= 50:
            node_fill = 0
            node_cursor += 1
        return node

    event_targets: list[tuple[dict, str]] = []
    for i in range(jobs):
        phase = job_phases[i]
        ns = ns_names[i % n_ns]
        queue = starved if phase == "Pending" else leaves[rng.randrange(n_leaves)]
        size = sizes[i]
        # Inqueue Jobs ask for 16 GPUs per pod (no node has more than 8), so they stay Inqueue with
        # unbound pods while reserving only GPUs.
        gpus = 16 if phase == "Inqueue" else 0
        name = f"job-{i:05d}"
        uid = _uid(rng)
        created = now - rng.uniform(600, 6 * 3600)
        kind = rng.randrange(3)
        if size >= 2 and kind == 0:
            tasks = [("master", 1), ("worker", size - 1)]
        elif size >= 2 and kind == 1:
            tasks = [("mpimaster", 1), ("mpiworker", size - 1)]
        else:
            tasks = [("main", max(size, 1))]
        min_available = max(1, size if size else rng.randint(3, 8))
        if not size:
            tasks = [("main", min_available)]
        duration = rng.uniform(600, 7200)
        job = _job(
            name, ns, uid, queue, tasks, min_available, created, duration, rng, IMAGES[i % len(IMAGES)], gpus
        )
        status, pod_phase = _job_status(phase, tasks, min_available, created, now, rng)
        job["status"] = status
        put(JOB, job, ns)
        event_targets.append((job, "job"))
        pg_name = f"{name}-{uid}"
        if phase in ("Running", "Pending", "Inqueue"):
            pg = _podgroup(job, pg_name, phase, tasks, min_available, created, now, rng, size)
            put(PODGROUP, pg, ns)
            event_targets.append((pg, _pg_tag(phase)))
        for task, replicas in tasks if size else []:
            for idx in range(replicas):
                node = ""
                if pod_phase == "Running":
                    node = place()
                elif pod_phase in ("Succeeded", "Failed"):
                    node = cpu_nodes[node_cursor % len(cpu_nodes)]
                pod = _pod(job, task, idx, pod_phase, node, created, now, rng, duration)
                put(POD, pod, ns)
                event_targets.append((pod, "pod" if node else "pod-wait"))

    # Deployments, StatefulSets, batch/v1 Jobs and bare pods with schedulerName volcano, each with
    # the PodGroup Volcano's PodGroup controller made for it (pkg/controllers/podgroup).
    for i, (wl_kind, phase, replicas, min_member) in enumerate(plan.workloads):
        ns = ns_names[i % n_ns]
        queue = starved if phase == "Pending" else leaves[rng.randrange(n_leaves)]
        owners, pg, wl_pods = _workload(
            wl_kind, i, ns, queue, phase, replicas, min_member, now, rng, place, len(node_names)
        )
        for owner in owners:
            put(_WORKLOAD_KINDS[owner["kind"]], owner, ns)
        put(PODGROUP, pg, ns)
        event_targets.append((pg, _pg_tag(phase)))
        for pod in wl_pods:
            put(POD, pod, ns)
            event_targets.append((pod, "pod" if pod["spec"].get("nodeName") else "pod-wait"))

    # Events spread over the objects, as the controllers, scheduler and kubelet word them.
    if event_targets and events:
        per_kind = {
            "pod": (
                ("Normal", "Scheduled", "volcano"),
                ("Normal", "Pulled", "kubelet"),
                ("Normal", "Created", "kubelet"),
                ("Normal", "Started", "kubelet"),
            ),
            "pod-wait": (("Warning", "FailedScheduling", "volcano"),),
            "pg": (("Normal", "Scheduled", "volcano"),),
            # The scheduler's gang message every cycle while Pending/Inqueue, and for a
            # PodGroup the enqueue action rejected, the queue's reason.
            "pg-inqueue": (("Warning", "Unschedulable", "volcano"),),
            "pg-pending": (("Warning", "Unschedulable", "volcano"), ("Normal", "Unschedulable", "volcano")),
            "job": (
                ("Normal", "ExecuteAction", "vc-controller-manager"),
                ("Warning", "PodGroupPending", "vc-controller-manager"),
            ),
        }
        for e in range(events):
            obj, what = event_targets[e % len(event_targets)]
            round_ = e // len(event_targets)
            type_, reason, component = per_kind[what][round_ % len(per_kind[what])]
            md = obj["metadata"]
            t = now - rng.uniform(0, 3000)
            ev = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{md['name']}.{int(t * 1e9) + e:x}",
                    "namespace": md["namespace"],
                    "uid": _uid(rng),
                    "creationTimestamp": _ts(t),
                },
                "involvedObject": {
                    "apiVersion": obj["apiVersion"],
                    "kind": obj["kind"],
                    "name": md["name"],
                    "namespace": md["namespace"],
                    "uid": md["uid"],
                },
                "reason": reason,
                "message": _event_message(reason, obj, type_),
                "source": {"component": component},
                "firstTimestamp": _ts(t),
                "lastTimestamp": _ts(t),
                "count": 1 + (e % 3),
                "type": type_,
            }
            put(EVENT, ev, md["namespace"])
            if controllers is not None:
                controllers.events.adopt(ev)

    if controllers is not None and churn > 0:
        _start_churn(cluster, rng, ns_names, leaves, churn)
    return counts


def _pg_tag(phase: str) -> str:
    return {"Running": "pg", "Pending": "pg-pending"}.get(phase, "pg-inqueue")


def _event_message(reason: str, obj: dict, type_: str = "Normal") -> str:
    md = obj["metadata"]
    if reason == "FailedScheduling":
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled":
                return cond.get("message", "")
        return "pod group is not ready"
    if reason == "Scheduled" and obj["kind"] == "Pod":
        node = (obj.get("spec") or {}).get("nodeName", "")
        return f"Successfully assigned {md['namespace']}/{md['name']} to {node}"
    if reason == "Scheduled":
        return "pod group is ready"
    if reason == "Pulled":
        return 'Container image "busybox:1.36" already present on machine'
    if reason == "Created":
        return "Created container: main"
    if reason == "Started":
        return "Started container main"
    if reason == "Unschedulable" and type_ == "Normal":
        return "queue resource quota insufficient: insufficient cpu"
    if reason == "Unschedulable":
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Unschedulable":
                return cond.get("message", "")
        return "pod group is not ready"
    if reason == "ExecuteAction":
        return "Start to execute action SyncJob "
    return f"PodGroup {md['namespace']}:{md['name']} unschedulable, reason: pod group is not ready"


def _queue(rng, name, parent, now, *, cpu, gpu) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "uid": _uid(rng), "creationTimestamp": _ts(now - 86400 * 20)},
        "spec": {
            "weight": rng.randint(1, 8),
            "parent": parent,
            "reclaimable": True,
            "capability": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", GPU: str(gpu)},
            "deserved": {"cpu": str(cpu // 2), "memory": f"{cpu * 2}Gi", GPU: str(gpu // 2)},
            "guarantee": {"resource": {"cpu": str(cpu // 10), "memory": f"{cpu // 10 * 4}Gi"}},
        },
        "status": {"state": "Open", "reservation": {}},
    }


LEAF_LABEL = "topology.volcano-ui.sim/leaf"


def _leaf_assignment(node_names: list[str], hypernodes: int) -> dict[str, str]:
    """node -> its leaf HyperNode, for a tree of ``hypernodes`` HyperNodes: about ten leaves per
    spine and one core (tiers 1, 2, 3); none for fewer than 3."""
    if hypernodes < 3:
        return {}
    leaves = max(1, round((hypernodes - 1) * 10 / 11))
    per = -(-len(node_names) // leaves)
    return {name: f"leaf-{i // per:04d}" for i, name in enumerate(node_names)}


def _hypernodes(node_names, leaf_of, hypernodes, now, rng) -> list[dict]:
    """Leaves selecting their nodes by exactMatch, regexMatch or labelMatch in turn, spines over ten
    leaves each, one core; ``status.nodeCount`` as Volcano's controller counts it."""
    if not leaf_of:
        return []
    by_leaf: dict[str, list[str]] = {}
    for name in node_names:
        by_leaf.setdefault(leaf_of[name], []).append(name)
    leaves = sorted(by_leaf)
    spines = max(1, hypernodes - 1 - len(leaves))
    out: list[dict] = []

    def hn(name: str, tier: int, tier_name: str, members: list[dict], count: int) -> dict:
        return {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": name, "uid": _uid(rng), "creationTimestamp": _ts(now - 86400 * 40)},
            "spec": {"tier": tier, "tierName": tier_name, "members": members},
            "status": {"nodeCount": count},
        }

    for i, leaf in enumerate(leaves):
        names = by_leaf[leaf]
        if i % 3 == 0:
            members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in names]
        elif i % 3 == 1:
            pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
            members = [{"type": "Node", "selector": {"regexMatch": {"pattern": pattern}}}]
        else:
            members = [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {LEAF_LABEL: leaf}}}}]
        out.append(hn(leaf, 1, "leaf", members, len(names)))
    spine_names = [f"spine-{j:03d}" for j in range(spines)]
    for j, spine in enumerate(spine_names):
        kids = [leaf for i, leaf in enumerate(leaves) if i % spines == j]
        members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": k}}} for k in kids]
        out.append(hn(spine, 2, "spine", members, len(kids)))
    core = [{"type": "HyperNode", "selector": {"exactMatch": {"name": s}}} for s in spine_names]
    out.append(hn("core", 3, "core", core, len(spine_names)))
    return out


def _node(rng, name, now, *, gpus) -> dict:
    cap = {"cpu": "64", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    if gpus:
        cap[GPU] = str(gpus)
        labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": _uid(rng),
            "creationTimestamp": _ts(now - 86400 * 40),
            "labels": labels,
        },
        "spec": {},
        "status": {
            "capacity": cap,
            "allocatable": dict(cap),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def _job(name, ns, uid, queue, tasks, min_available, created, duration, rng, image, gpus=0) -> dict:
    requests = {"cpu": "1", "memory": "2Gi"}
    if gpus:
        requests[GPU] = str(gpus)
    spec_tasks = []
    for task, replicas in tasks:
        spec_tasks.append(
            {
                "name": task,
                "replicas": replicas,
                "template": {
                    "metadata": {
                        "annotations": {
                            "sim.volcano-ui/behaviour": "succeed",
                            "sim.volcano-ui/duration": str(int(duration)),
                        }
                    },
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [
                            {"name": "main", "image": image, "resources": {"requests": dict(requests)}}
                        ],
                    },
                },
            }
        )
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid,
            "creationTimestamp": _ts(created),
            "generation": 1,
            "labels": {"volcano-ui.bench/generated": "true"},
        },
        "spec": {
            "schedulerName": "volcano",
            "queue": queue,
            "minAvailable": min_available,
            "maxRetry": 3,
            "ttlSecondsAfterFinished": 43200,
            "tasks": spec_tasks,
        },
    }


def _job_status(phase, tasks, min_available, created, now, rng) -> tuple[dict, str]:
    """(status, pod phase) for a generated Job in ``phase``."""
    t1 = created + rng.uniform(1, 30)
    t2 = t1 + rng.uniform(5, 300)
    pod_phase = {
        "Running": "Running",
        "Completed": "Succeeded",
        "Failed": "Failed",
        "Inqueue": "Pending",
    }.get(phase, "")
    job_phase = "Pending" if phase == "Inqueue" else phase
    history = {
        "Pending": ["Pending"],
        "Running": ["Pending", "Running"],
        "Completed": ["Pending", "Running", "Completed"],
        "Failed": ["Pending", "Running", "Failed"],
        "Aborted": ["Pending", "Running", "Aborting", "Aborted"],
    }[job_phase]
    stamps = [created + 1, t1, t2, t2 + 3][: len(history)]
    status: dict = {
        "state": {"phase": job_phase, "lastTransitionTime": _ts(stamps[-1])},
        "minAvailable": min_available,
        "conditions": [
            {"status": p, "lastTransitionTime": _ts(s)} for p, s in zip(history, stamps, strict=True)
        ],
    }
    total = sum(r for _, r in tasks)
    key = {"Running": "running", "Succeeded": "succeeded", "Failed": "failed", "Pending": "pending"}.get(
        pod_phase
    )
    if key and pod_phase:
        status[key] = total
        status["taskStatusCount"] = {task: {"phase": {pod_phase: replicas}} for task, replicas in tasks}
    if job_phase in ("Completed", "Failed", "Aborted"):
        status["version"] = 1
        status["runningDuration"] = f"{int(stamps[-1] - created)}s"
    return status, pod_phase


def _podgroup(job, name, phase, tasks, min_available, created, now, rng, size) -> dict:
    md = job["metadata"]
    gpus = int(
        job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"]["requests"].get(GPU, 0)
    )
    pg_phase = {"Running": "Running", "Pending": "Pending", "Inqueue": "Inqueue"}[phase]
    stamp = _ts(created + 2)
    status: dict = {"phase": pg_phase}
    if phase == "Running":
        status["running"] = size
        status["conditions"] = [
            {
                "type": "Scheduled",
                "status": "True",
                "transitionID": _uid(rng),
                "lastTransitionTime": stamp,
                "reason": "tasks in gang are ready to be scheduled",
                "message": "",
            }
        ]
    else:
        status["conditions"] = [
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": _uid(rng),
                "lastTransitionTime": stamp,
                "reason": "NotEnoughResources",
                "message": f"{min_available}/{size} tasks in gang unschedulable: pod group is not "
                f"ready, {min_available} minAvailable",
            }
        ]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": md["namespace"],
            "uid": _uid(rng),
            "creationTimestamp": stamp,
            "generation": 1,
            "labels": dict(md.get("labels") or {}),
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "name": md["name"],
                    "uid": md["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "minMember": min_available,
            "minTaskMember": dict(tasks),
            "queue": job["spec"]["queue"],
            "minResources": {
                "count/pods": str(min_available),
                "pods": str(min_available),
                "cpu": str(min_available),
                "requests.cpu": str(min_available),
                "memory": f"{2 * min_available}Gi",
                "requests.memory": f"{2 * min_available}Gi",
                **(
                    {GPU: str(gpus * min_available), f"requests.{GPU}": str(gpus * min_available)}
                    if gpus
                    else {}
                ),
            },
        },
        "status": status,
    }


def _pod(job, task, idx, phase, node, created, now, rng, duration) -> dict:
    md = job["metadata"]
    name = f"{md['name']}-{task}-{idx}"
    started = max(created + 10, now - rng.uniform(0, duration * 0.8))
    container = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    status: dict = {"phase": phase, "qosClass": "Burstable"}
    if phase == "Running":
        status.update(
            {
                "hostIP": "10.0.0.1",
                "podIP": f"10.244.{idx % 250}.{(idx * 7) % 250 + 2}",
                "startTime": _ts(started),
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": _ts(started)},
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": _ts(started - 5)},
                ],
                "containerStatuses": [
                    {
                        "name": "main",
                        "image": container["image"],
                        "ready": True,
                        "restartCount": 0,
                        "started": True,
                        "state": {"running": {"startedAt": _ts(started)}},
                    }
                ],
            }
        )
    elif phase in ("Succeeded", "Failed"):
        code = 0 if phase == "Succeeded" else 1
        status.update(
            {
                "startTime": _ts(started),
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "False",
                        "reason": "PodCompleted" if code == 0 else "PodFailed",
                        "lastTransitionTime": _ts(started + 60),
                    }
                ],
                "containerStatuses": [
                    {
                        "name": "main",
                        "image": container["image"],
                        "ready": False,
                        "restartCount": 0,
                        "started": False,
                        "state": {
                            "terminated": {
                                "exitCode": code,
                                "reason": "Completed" if code == 0 else "Error",
                                "startedAt": _ts(started),
                                "finishedAt": _ts(started + 60),
                            }
                        },
                    }
                ],
            }
        )
    else:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are unavailable: 1 Insufficient "
                + (GPU if GPU in container["resources"]["requests"] else "cpu")
                + ".",
                "lastTransitionTime": _ts(created + 3),
            }
        ]
    tmpl_ann = job["spec"]["tasks"][0]["template"]["metadata"]["annotations"]
    spec: dict = {
        "schedulerName": "volcano",
        "restartPolicy": "OnFailure",
        "containers": [{"name": "main", "image": container["image"], "resources": container["resources"]}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": md["namespace"],
            "uid": _uid(rng),
            "creationTimestamp": _ts(created + 3),
            "labels": {
                "volcano.sh/job-name": md["name"],
                "volcano.sh/job-namespace": md["namespace"],
                "volcano.sh/task-spec": task,
                "volcano.sh/task-index": str(idx),
                "volcano.sh/queue-name": job["spec"]["queue"],
            },
            "annotations": {
                "scheduling.k8s.io/group-name": f"{md['name']}-{md['uid']}",
                "volcano.sh/job-name": md["name"],
                "volcano.sh/task-spec": task,
                "volcano.sh/task-index": str(idx),
                "volcano.sh/queue-name": job["spec"]["queue"],
                "volcano.sh/job-version": "0",
                "volcano.sh/job-retry-count": "0",
                "volcano.sh/template-uid": f"{md['name']}-{task}",
                **tmpl_ann,
            },
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "name": md["name"],
                    "uid": md["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def _start_churn(cluster, rng: random.Random, ns_names: list[str], leaves: list[str], rate: float) -> None:
    """New Jobs arrive at ``rate`` per simulated second, through the controllers' timers."""
    controllers = cluster.controllers
    state: dict[str, Any] = {"n": 0, "carry": 0.0}

    def arrive() -> None:
        state["carry"] += rate
        while state["carry"] >= 1.0:
            state["carry"] -= 1.0
            state["n"] += 1
            n = state["n"]
            ns = ns_names[n % len(ns_names)]
            replicas = rng.randint(1, 8)
            job = {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "metadata": {
                    "name": f"churn-{n:06d}",
                    "namespace": ns,
                    "labels": {"volcano-ui.bench/churn": "true"},
                },
                "spec": {
                    "schedulerName": "volcano",
                    "queue": leaves[rng.randrange(len(leaves))],
                    "minAvailable": replicas,
                    "ttlSecondsAfterFinished": 120,
                    "tasks": [
                        {
                            "name": "worker",
                            "replicas": replicas,
                            "template": {
                                "metadata": {
                                    "annotations": {"sim.volcano-ui/duration": str(rng.randint(30, 600))}
                                },
                                "spec": {
                                    "restartPolicy": "OnFailure",
                                    "containers": [
                                        {
                                            "name": "main",
                                            "image": "busybox:1.36",
                                            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                                        }
                                    ],
                                },
                            },
                        }
                    ],
                },
            }
            # A name clash with a user's object must not stop the churn.
            with contextlib.suppress(ApiError):
                cluster.store.create(JOB, job, ns)
        controllers.after(1.0, arrive)

    controllers.after(1.0, arrive)


def _workload(kind, i, ns, queue, phase, replicas, min_member, now, rng, place, n_nodes):
    """(owner objects, PodGroup, pods) of one non-Volcano workload scheduled by Volcano.

    The objects are those the workload's controller and Volcano's PodGroup controller leave behind
    (pkg/controllers/podgroup): pods with ``schedulerName: volcano``, the queue in the pod
    annotation ``scheduling.volcano.sh/queue-name``, ``scheduling.k8s.io/group-name`` patched in, and
    ``podgroup-<controller owner uid>`` (``podgroup-<pod uid>`` for a bare pod) owned like the pods.
    A Pending PodGroup waits in the starved queue; an Inqueue one asks for 16 GPUs per pod (no node
    has more than 8) so its pods stay unbound, as the Volcano Jobs do.
    """
    from .workloads import template_hash  # deferred: workloads imports the controllers

    created = now - rng.uniform(600, 6 * 3600)
    stamp = _ts(created)
    gpus = 16 if phase == "Inqueue" else 0
    if kind == "Deployment":
        name, image, cpu, mem = f"infer-{i:05d}", "vllm/vllm-openai:v0.6.4", 2, 8
    elif kind == "StatefulSet":
        name, image, cpu, mem = f"serve-{i:05d}", "nvcr.io/nvidia/tritonserver:24.10-py3", 2, 8
    elif kind == "BatchJob":
        name, image, cpu, mem = f"etl-{i:05d}", "python:3.12-slim", 1, 2
    else:
        name, image, cpu, mem = f"notebook-{i:05d}", "jupyter/scipy-notebook:2024-10-07", 1, 4
    if phase == "Pending":
        cpu = 4  # more than the starved queue's whole capability (2 cpu): it stays Pending
    requests = {"cpu": str(cpu), "memory": f"{mem}Gi"}
    if gpus:
        requests[GPU] = str(gpus)
    batch = kind == "BatchJob"
    pod_ann = {
        QUEUE_NAME: queue,
        "sim.volcano-ui/behaviour": "succeed" if batch else "run",
    }
    duration = rng.uniform(600, 7200)
    if batch:
        pod_ann["sim.volcano-ui/duration"] = str(int(duration))
    labels = {"app.kubernetes.io/name": name}
    pod_spec = {
        "schedulerName": "volcano",
        "restartPolicy": "Never" if batch else "Always",
        "containers": [{"name": "main", "image": image, "resources": {"requests": requests}}],
    }
    template = {"metadata": {"labels": dict(labels), "annotations": dict(pod_ann)}, "spec": pod_spec}
    owner_ann = {MIN_MEMBER: str(min_member)} if min_member > 1 else {}
    running = phase == "Running"
    owners: list[dict] = []
    ready = {"readyReplicas": replicas, "availableReplicas": replicas} if running else {}

    def meta(obj_name: str, **extra) -> dict:
        return {"name": obj_name, "namespace": ns, "uid": _uid(rng), "creationTimestamp": stamp, **extra}

    def suffix() -> str:
        return "".join(_ALNUM[rng.randrange(len(_ALNUM))] for _ in range(5))

    pod_labels = dict(labels)
    if kind == "Deployment":
        pth = template_hash(template)
        dep: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(
                name, generation=1, labels=dict(labels), **({"annotations": owner_ann} if owner_ann else {})
            ),
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "template": template},
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas, **ready},
        }
        if not running:
            dep["status"]["unavailableReplicas"] = replicas
        rs_name = f"{name}-{pth}"
        # The conditions the Deployment controller writes (as sim/workloads.py words them).
        available = "True" if running else "False"
        dep["status"]["conditions"] = [
            {
                "type": "Available",
                "status": available,
                "reason": "MinimumReplicasAvailable" if running else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if running
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable" if running else "ReplicaSetUpdated",
                "message": f'ReplicaSet "{rs_name}" has successfully progressed.'
                if running
                else f'ReplicaSet "{rs_name}" is progressing.',
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
            },
        ]
        pod_labels["pod-template-hash"] = pth
        rs_template = {
            "metadata": {"labels": dict(pod_labels), "annotations": dict(pod_ann)},
            "spec": pod_spec,
        }
        rs: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta(
                rs_name, generation=1, labels=dict(pod_labels), ownerReferences=[owner_reference(dep)]
            ),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": dict(pod_labels)},
                "template": rs_template,
            },
            "status": {
                "replicas": replicas,
                "fullyLabeledReplicas": replicas,
                "observedGeneration": 1,
                **ready,
            },
        }
        if owner_ann:
            rs["metadata"]["annotations"] = dict(owner_ann)  # the Deployment controller copies them
        owners = [dep, rs]
        controller = rs
        pod_names = [f"{rs_name}-{suffix()}" for _ in range(replicas)]
    elif kind == "StatefulSet":
        revision = f"{name}-{template_hash(template)}"
        sts: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(
                name, generation=1, labels=dict(labels), **({"annotations": owner_ann} if owner_ann else {})
            ),
            "spec": {
                "replicas": replicas,
                "serviceName": name,
                "selector": {"matchLabels": dict(labels)},
                "template": template,
            },
            "status": {
                "observedGeneration": 1,
                "replicas": replicas,
                "currentReplicas": replicas,
                "updatedReplicas": replicas,
                "currentRevision": revision,
                "updateRevision": revision,
                **ready,
            },
        }
        owners = [sts]
        controller = sts
        pod_labels["controller-revision-hash"] = revision
        pod_names = [f"{name}-{k}" for k in range(replicas)]
    elif kind == "BatchJob":
        job_uid = _uid(rng)
        pod_labels.update(
            {
                "batch.kubernetes.io/controller-uid": job_uid,
                "batch.kubernetes.io/job-name": name,
                "controller-uid": job_uid,
                "job-name": name,
            }
        )
        job: dict[str, Any] = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {**meta(name, generation=1, labels=dict(labels)), "uid": job_uid},
            "spec": {
                "parallelism": replicas,
                "completions": replicas,
                "backoffLimit": 6,
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": job_uid}},
                "template": {
                    "metadata": {"labels": dict(pod_labels), "annotations": dict(pod_ann)},
                    "spec": pod_spec,
                },
            },
            "status": {
                "startTime": _ts(created + 1),
                "active": replicas,
                **({"ready": replicas} if running else {}),
            },
        }
        if owner_ann:
            job["metadata"]["annotations"] = dict(owner_ann)
        owners = [job]
        controller = job
        pod_names = [f"{name}-{suffix()}" for _ in range(replicas)]
    else:
        controller = None
        pod_names = [name]

    pods: list[dict[str, Any]] = []
    for k, pod_name in enumerate(pod_names):
        md = meta(pod_name, labels=dict(pod_labels), annotations=dict(pod_ann))
        if controller is not None:
            md["ownerReferences"] = [owner_reference(controller)]
        if kind == "StatefulSet":
            md["labels"]["statefulset.kubernetes.io/pod-name"] = pod_name
            md["labels"]["apps.kubernetes.io/pod-index"] = str(k)
        if kind == "BatchJob":
            md["labels"]["batch.kubernetes.io/job-completion-index"] = str(k)
        spec = dict(pod_spec)
        if kind == "StatefulSet":
            spec["hostname"] = pod_name
            spec["subdomain"] = name
        # Running pods are part-way through their run (the kubelet sim counts from startTime).
        started = max(created + 5, now - rng.uniform(0, duration * 0.8))
        if running:
            spec["nodeName"] = place()
            status: dict[str, Any] = {
                "phase": "Running",
                "qosClass": "Burstable",
                "hostIP": "10.0.0.1",
                "podIP": f"10.245.{i % 250}.{(k * 7) % 250 + 2}",
                "startTime": _ts(started),
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": _ts(started)},
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": _ts(started - 5)},
                ],
                "containerStatuses": [
                    {
                        "name": "main",
                        "image": image,
                        "ready": True,
                        "restartCount": 0,
                        "started": True,
                        "state": {"running": {"startedAt": _ts(started)}},
                    }
                ],
            }
        else:
            why = (
                f"0/{n_nodes} nodes are unavailable: {n_nodes} Insufficient {GPU}."
                if gpus
                else "queue resource quota insufficient: insufficient cpu"
            )
            status = {
                "phase": "Pending",
                "qosClass": "Burstable",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": why,
                        "lastTransitionTime": _ts(created + 3),
                    }
                ],
            }
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status})

    first = pods[0]["metadata"]
    owner_uid = controller["metadata"]["uid"] if controller is not None else first["uid"]
    pg_name = f"podgroup-{owner_uid}"
    for pod in pods:
        pod["metadata"]["annotations"][GROUP_NAME] = pg_name
    pg_refs = (
        [owner_reference(controller)]
        if controller is not None
        else [{**owner_reference(pods[0]), "apiVersion": "v1", "kind": "Pod"}]
    )
    min_res = {
        "count/pods": str(min_member),
        "pods": str(min_member),
        "cpu": str(cpu * min_member),
        "requests.cpu": str(cpu * min_member),
        "memory": f"{mem * min_member}Gi",
        "requests.memory": f"{mem * min_member}Gi",
    }
    if gpus:
        min_res[GPU] = min_res[f"requests.{GPU}"] = str(gpus * min_member)
    pg_stamp = _ts(created + 1)
    status = {"phase": phase}
    if running:
        status["running"] = replicas
        status["conditions"] = [
            {
                "type": "Scheduled",
                "status": "True",
                "transitionID": _uid(rng),
                "lastTransitionTime": pg_stamp,
                "reason": "tasks in gang are ready to be scheduled",
                "message": "",
            }
        ]
    else:
        # Worded as the scheduler's gang message (sim/scheduler.py, gang.go): histogram sorted.
        hist = ", ".join(sorted([f"{replicas} Pending", f"{min_member} minAvailable"]))
        origin = (
            ": queue resource quota insufficient: insufficient cpu"
            if phase == "Pending"
            else f" {pods[0]['metadata']['name']}: 0/{n_nodes} nodes are unavailable: "
            f"{n_nodes} Insufficient {GPU}."
        )
        status["conditions"] = [
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": _uid(rng),
                "lastTransitionTime": pg_stamp,
                "reason": "NotEnoughResources",
                "message": f"{min_member}/{replicas} tasks in gang unschedulable: pod group is not ready, "
                f"{hist}; Pending: {replicas} Unschedulable. Origin reason is{origin}",
            }
        ]
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": pg_name,
            "namespace": ns,
            "uid": _uid(rng),
            "creationTimestamp": pg_stamp,
            "generation": 1,
            "ownerReferences": pg_refs,
        },
        "spec": {"minMember": min_member, "queue": queue, "minResources": min_res},
        "status": status,
    }
    return owners, pg, pods
