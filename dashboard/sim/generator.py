"""A generator of large simulated clusters for benchmarks (``--scenario large``).

``generate_large(cluster, jobs=10000, pods=50000, queues=200, events=100000, seed=None, churn=0.0)``
creates, directly in the store (replay mode: statuses written as given), a consistent cluster:

- namespaces ``team-000``.., a queue tree (root -> ``dept-NN`` -> ``dept-NN-qMM`` leaves) with
  capability/deserved/guarantee, and enough nodes (64 cpu, 256Gi, 110 pods; every 8th with 8 GPUs)
  for the bound pods;
- Jobs in a realistic mix of phases — Running (PodGroup Running, pods Running on nodes), Completed
  (pods Succeeded, no PodGroup, as Volcano leaves them), Failed, Pending (PodGroup Pending with an
  Unschedulable condition, no pods), Inqueue (pods Pending, unbound) and Aborted — with status
  counters, taskStatusCount, conditions, version and minAvailable as the job controller writes them;
  exactly ``pods`` pods overall;
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
from datetime import UTC, datetime

from .kinds import kind_by_name
from .store import ApiError

NAMESPACE = kind_by_name("Namespace", "")
NODE = kind_by_name("Node", "")
QUEUE = kind_by_name("Queue", "scheduling.volcano.sh")
JOB = kind_by_name("Job", "batch.volcano.sh")
PODGROUP = kind_by_name("PodGroup", "scheduling.volcano.sh")
POD = kind_by_name("Pod", "")
EVENT = kind_by_name("Event", "")

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


def _ts(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def generate_large(
    cluster,
    *,
    jobs: int = 10000,
    pods: int = 50000,
    queues: int = 200,
    events: int = 100000,
    seed: int | None = None,
    churn: float = 0.0,
    namespaces: int | None = None,
) -> dict[str, int]:
    store = cluster.store
    controllers = getattr(cluster, "controllers", None)
    rng = random.Random(f"large/{getattr(cluster, 'seed', 0) if seed is None else seed}")
    now = cluster.clock.now().timestamp()
    counts: dict[str, int] = {}

    def put(kind, obj, namespace=None) -> None:
        store.create(kind, obj, namespace, replay=True)
        counts[kind.kind] = counts.get(kind.kind, 0) + 1

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

    # Phases and pod counts per job: pods only for phases that have them.
    phases = [p for p, w in PHASES for _ in range(w)]
    job_phases = [phases[rng.randrange(len(phases))] for _ in range(jobs)]
    with_pods = [i for i, p in enumerate(job_phases) if p not in ("Pending", "Aborted")]
    sizes = [0] * jobs
    if with_pods:
        base, extra = divmod(pods, len(with_pods))
        for k, i in enumerate(with_pods):
            sizes[i] = base + (1 if k < extra else 0)
    elif pods:
        job_phases = ["Running"] * jobs if jobs else []
        if jobs:
            base, extra = divmod(pods, jobs)
            sizes = [base + (1 if i < extra else 0) for i in range(jobs)]

    # Nodes for every bound, unfinished pod (1 cpu each; 50 per node leaves headroom for churn).
    bound = sum(sizes[i] for i in range(jobs) if job_phases[i] == "Running")
    n_nodes = max(4, bound // 50 + 8)
    node_names = [f"node-{i:05d}" for i in range(n_nodes)]
    for i, name in enumerate(node_names):
        put(NODE, _node(rng, name, now, gpus=8 if i % 8 == 7 else 0))
    cpu_nodes = [n for i, n in enumerate(node_names) if i % 8 != 7]
    node_cursor = 0
    node_fill = 0

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
            event_targets.append((pg, "pg"))
        index_base = 0
        for task, replicas in tasks if size else []:
            for idx in range(replicas):
                node = ""
                if pod_phase in ("Running", "Succeeded", "Failed"):
                    node = cpu_nodes[node_cursor % len(cpu_nodes)]
                    if pod_phase == "Running":
                        node_fill += 1
                        if node_fill >= 50:
                            node_fill = 0
                            node_cursor += 1
                pod = _pod(job, task, idx, pod_phase, node, created, now, rng, duration)
                put(POD, pod, ns)
                event_targets.append((pod, "pod"))
                index_base += 1

    # Events spread over the objects, as the controllers, scheduler and kubelet word them.
    if event_targets and events:
        per_kind = {
            "pod": (
                ("Normal", "Scheduled", "volcano"),
                ("Normal", "Pulled", "kubelet"),
                ("Normal", "Created", "kubelet"),
                ("Normal", "Started", "kubelet"),
            ),
            "pg": (("Normal", "Scheduled", "volcano"), ("Warning", "Unschedulable", "volcano")),
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
                "message": _event_message(reason, obj),
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


def _event_message(reason: str, obj: dict) -> str:
    md = obj["metadata"]
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
    if reason == "Unschedulable":
        return "1/0 tasks in gang unschedulable: pod group is not ready, 1 minAvailable"
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
                "message": "0/1 nodes are unavailable: 1 Insufficient cpu.",
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
    state = {"n": 0, "carry": 0.0}

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
