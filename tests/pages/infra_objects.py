"""Objects for the Nodes, HyperNodes, CronJob and JobFlow page tests, in the states a real cluster
produces (fields from ../shared/volcano/crds and its examples), loaded into a simulated cluster
with its controllers off."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.pages.helpers import kind

NS = "pipeline"


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def node(name, *, cpu="16", memory="64Gi", gpu=None, ready="True", cordoned=False, taints=(), labels=None):
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpu:
        alloc["nvidia.com/gpu"] = gpu
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": dict(alloc),
            "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady", "message": "ok"}],
        },
    }
    if cordoned:
        obj["spec"]["unschedulable"] = True
    if taints:
        obj["spec"]["taints"] = list(taints)
    return obj


def hypernode(name, tier, tier_name, members, node_count=None):
    obj = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }
    if node_count is not None:
        obj["status"] = {"nodeCount": node_count}
    return obj


def exact(type_, name):
    return {"type": type_, "selector": {"exactMatch": {"name": name}}}


def vcjob(name, phase, *, now, owner=None, labels=None, annotations=None, spec_extra=None, done_at=None):
    meta = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "creationTimestamp": iso(now - timedelta(minutes=30)),
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if owner:
        meta["ownerReferences"] = [owner]
    state = {"phase": phase}
    if done_at:
        state["lastTransitionTime"] = iso(done_at)
    spec = {
        "queue": "default",
        "minAvailable": 2,
        "schedulerName": "volcano",
        "tasks": [
            {
                "name": "worker",
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "4"}}}
                        ]
                    }
                },
            }
        ],
        **(spec_extra or {}),
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": meta,
        "spec": spec,
        "status": {"state": state},
    }


def podgroup(job, phase, conditions=()):
    uid = job["metadata"]["uid"]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": f"{job['metadata']['name']}-{uid}",
            "namespace": NS,
            "uid": f"pg-{uid}",
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "name": job["metadata"]["name"],
                    "uid": uid,
                    "controller": True,
                }
            ],
        },
        "spec": {"minMember": 2, "queue": "default"},
        "status": {"phase": phase, "conditions": list(conditions)},
    }


def pod(job, pg, index, node_name, phase="Running", cpu="4", gpu=None):
    req = {"cpu": cpu}
    if gpu:
        req["nvidia.com/gpu"] = gpu
    name = f"{job['metadata']['name']}-worker-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": {"volcano.sh/job-name": job["metadata"]["name"], "volcano.sh/task-spec": "worker"},
            "annotations": {"scheduling.k8s.io/group-name": pg["metadata"]["name"]},
        },
        "spec": {
            "schedulerName": "volcano",
            "nodeName": node_name,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": req}}],
        },
        "status": {"phase": phase},
    }


def template(name):
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "queue": "default",
            "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "plugins": {"svc": [], "env": []},
            "tasks": [
                {
                    "replicas": 1,
                    "name": "step",
                    "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.14.2"}]}},
                }
            ],
        },
    }


DRA_QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "dra-a"},
    "spec": {
        "reclaimable": True,
        "weight": 1,
        "priority": 7,
        "dequeueStrategy": "fifo",
        "type": "batch",
        "capability": {"deviceclass/gpu.nvidia.com": "6", "cpu": "64"},
        "deserved": {"deviceclass/gpu.nvidia.com": "3"},
        "guarantee": {"resource": {"deviceclass/gpu.nvidia.com": "1"}},
        "affinity": {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["group-a"]}},
    },
    "status": {"state": "Open"},
}


class _Recording:
    """The store, remembering what was created: (plural, namespace, name)."""

    def __init__(self, store):
        self._store = store
        self.created: list[tuple[str, str | None, str]] = []

    def create(self, k, obj, namespace=None, **kw):
        out = self._store.create(k, obj, namespace, **kw)
        meta = obj.get("metadata", {})
        self.created.append((k.plural, namespace or meta.get("namespace"), meta["name"]))
        return out


def load(cluster, cache):
    """Create every object; wait until the cache holds every one the dashboard watches (each kind has
    its own informer, so the last object of one kind says nothing of another). Returns the sim time."""
    now = cluster.clock.now()
    store = _Recording(cluster.store)
    store.create(kind("", "namespaces"), {"metadata": {"name": NS}})
    store.create(kind("scheduling.volcano.sh", "queues"), DRA_QUEUE, replay=True)
    nodes = [
        node("gpu-a", gpu="8", labels={"topology-rack": "rack-0"}),
        node("gpu-b", gpu="8", labels={"topology-rack": "rack-0"}),
        node("cpu-c", labels={"topology-rack": "rack-1"}, cordoned=True),
        node(
            "cpu-d",
            labels={"topology-rack": "rack-1"},
            taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}],
        ),
        node("cpu-e", ready="False"),
    ]
    for n in nodes:
        store.create(kind("", "nodes"), n, replay=True)
    hns = [
        hypernode(
            "spine-0",
            2,
            "spine",
            [
                exact("HyperNode", "leaf-0"),
                {"type": "HyperNode", "selector": {"regexMatch": {"pattern": "^leaf-1$"}}},
            ],
            4,
        ),
        hypernode(
            "leaf-0",
            1,
            "leaf",
            [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"topology-rack": "rack-0"}}}}],
            2,
        ),
        hypernode(
            "leaf-1",
            1,
            "leaf",
            [
                {"type": "Node", "selector": {"regexMatch": {"pattern": "^cpu-[cd]$"}}},
                exact("Node", "gone-node"),
                {"type": "Node", "selector": {"regexMatch": {"pattern": "cpu-(e"}}},  # RE2 cannot compile it
            ],
            3,
        ),
    ]
    for h in hns:
        store.create(kind("topology.volcano.sh", "hypernodes"), h, replay=True)
    # A running gang on leaf-0's two GPU nodes.
    train = vcjob("train", "Running", now=now)
    train_pg = podgroup(train, "Running")
    train_pg["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 2}
    train_pg["spec"]["subGroupPolicy"] = [
        {
            "name": "worker",
            "subGroupSize": 2,
            "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "worker"}},
            "matchLabelKeys": ["volcano.sh/partition-id"],
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        }
    ]
    store.create(kind("batch.volcano.sh", "jobs"), train, NS, replay=True)
    store.create(kind("scheduling.volcano.sh", "podgroups"), train_pg, NS, replay=True)
    for i, n in enumerate(("gpu-a", "gpu-b")):
        store.create(kind("", "pods"), pod(train, train_pg, i, n, gpu="4"), NS, replay=True)
    # A gang a hard topology constraint keeps Pending.
    tight = vcjob(
        "tight", "Pending", now=now, spec_extra={"networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    )
    cond = {
        "type": "Unschedulable",
        "status": "True",
        "reason": "NotEnoughResources",
        "message": "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; "
        "Pending: 1 Unschedulable, 0/5 nodes are unavailable: 3 Insufficient cpu, "
        "2 node(s) were unschedulable.",
        "lastTransitionTime": iso(now - timedelta(minutes=5)),
    }
    store.create(kind("batch.volcano.sh", "jobs"), tight, NS, replay=True)
    store.create(
        kind("scheduling.volcano.sh", "podgroups"), podgroup(tight, "Pending", [cond]), NS, replay=True
    )
    _cron(store, now)
    _flow(store, now)
    _components(store)

    def held(s):
        views = s.views()
        return all(views[p].get(ns, n) is not None for p, ns, n in store.created if p in views)

    cache.wait_for(held, timeout=10)
    return now


def _cron(store, now):
    last = now.replace(second=0, microsecond=0) - timedelta(minutes=(now.minute % 5) + 10)
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {
            "name": "nightly",
            "namespace": NS,
            "uid": "uid-nightly",
            "creationTimestamp": iso(now - timedelta(days=1)),
        },
        "spec": {
            "schedule": "*/5 * * * *",
            "timeZone": "Asia/Shanghai",
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 60,
            "jobTemplate": {"spec": {"minAvailable": 1, "tasks": [{"name": "task-1", "replicas": 1}]}},
        },
        "status": {
            "lastScheduleTime": iso(last),
            "active": [{"kind": "Job", "namespace": NS, "name": f"nightly-{int(last.timestamp()) // 60}"}],
        },
    }
    store.create(kind("batch.volcano.sh", "cronjobs"), cj, NS, replay=True)
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "name": "nightly",
        "uid": "uid-nightly",
        "controller": True,
    }
    for k, phase in ((0, "Running"), (1, "Completed"), (2, "Failed")):
        at = last - timedelta(minutes=5 * k)
        job = vcjob(
            f"nightly-{int(at.timestamp()) // 60}",
            phase,
            now=now,
            owner=owner,
            annotations={"volcano.sh/cronjob-scheduled-timestamp": iso(at)},
            done_at=at + timedelta(minutes=2) if phase != "Running" else None,
        )
        job["metadata"]["creationTimestamp"] = iso(at)
        store.create(kind("batch.volcano.sh", "jobs"), job, NS, replay=True)
    suspended = {**cj, "metadata": {"name": "paused", "namespace": NS, "uid": "uid-paused"}, "status": {}}
    suspended["spec"] = {**cj["spec"], "suspend": True, "schedule": "@hourly", "timeZone": "Mars/Olympus"}
    store.create(kind("batch.volcano.sh", "cronjobs"), suspended, NS, replay=True)


def _flow(store, now):
    for t in "abcde":
        store.create(kind("flow.volcano.sh", "jobtemplates"), template(t), NS, replay=True)
    jf = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "pipe", "namespace": NS, "uid": "uid-pipe"},
        "spec": {
            "jobRetainPolicy": "retain",
            "flows": [
                {"name": "a"},
                {"name": "b", "dependsOn": {"targets": ["a"]}},
                {"name": "c", "dependsOn": {"targets": ["b"]}},
                {"name": "d", "dependsOn": {"targets": ["b"]}},
                {"name": "e", "dependsOn": {"targets": ["c", "d", "ghost"]}},
            ],
        },
        "status": {
            "state": {"phase": "Running"},
            "completedJobs": ["pipe-a"],
            "runningJobs": ["pipe-b"],
            "jobStatusList": [
                {
                    "name": "pipe-a",
                    "state": "Completed",
                    "restartCount": 1,
                    "runningHistories": [
                        {
                            "state": "Running",
                            "startTimestamp": iso(now - timedelta(minutes=20)),
                            "endTimestamp": iso(now - timedelta(minutes=12)),
                        },
                        {"state": "Completed", "startTimestamp": iso(now - timedelta(minutes=12))},
                    ],
                },
                {
                    "name": "pipe-b",
                    "state": "Running",
                    "runningHistories": [
                        {"state": "Running", "startTimestamp": iso(now - timedelta(minutes=10))}
                    ],
                },
            ],
        },
    }
    store.create(kind("flow.volcano.sh", "jobflows"), jf, NS, replay=True)
    owner = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "name": "pipe",
        "uid": "uid-pipe",
        "controller": True,
    }
    for t, phase in (("a", "Completed"), ("b", "Running")):
        ref = {"volcano.sh/createdByJobFlow": f"{NS}.pipe", "volcano.sh/createdByJobTemplate": f"{NS}.{t}"}
        store.create(
            kind("batch.volcano.sh", "jobs"),
            vcjob(f"pipe-{t}", phase, now=now, owner=owner, labels=ref, annotations=ref),
            NS,
            replay=True,
        )


def deployment(name, replicas, ready, available):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "volcano-system"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": {"spec": {}}},
        "status": {
            "replicas": replicas,
            "readyReplicas": ready,
            "conditions": [
                {"type": "Available", "status": available, "message": f"{name}: <b>minimum</b> replicas"}
            ],
        },
    }


def _components(store):
    store.create(kind("", "namespaces"), {"metadata": {"name": "volcano-system"}})
    for d in (
        deployment("volcano-scheduler", 1, 1, "True"),
        deployment("volcano-controllers", 1, 0, "False"),
    ):
        store.create(kind("apps", "deployments"), d, "volcano-system", replay=True)
