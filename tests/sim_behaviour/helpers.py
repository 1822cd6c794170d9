"""Builders for objects used by the simulated-behaviour tests (plain dicts, as clients send them)."""

from __future__ import annotations

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.kinds import COMMAND, EVENT, JOB, NODE, POD, PODGROUP, QUEUE


def node(name: str, cpu: int = 8, memory: str = "32Gi", gpus: int = 0) -> dict:
    cap = {"cpu": str(cpu), "memory": memory, "pods": "110"}
    if gpus:
        cap["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "capacity": cap,
            "allocatable": dict(cap),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def queue(name: str, parent: str = "root", capability: dict | None = None) -> dict:
    spec: dict = {"weight": 1, "parent": parent}
    if capability:
        spec["capability"] = capability
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def task(
    name: str,
    replicas: int,
    *,
    cpu: str = "1",
    memory: str = "1Gi",
    gpus: int = 0,
    restart: str = "Never",
    annotations: dict | None = None,
    policies: list | None = None,
    min_available: int | None = None,
) -> dict:
    requests = {"cpu": cpu, "memory": memory}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    t: dict = {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"labels": {"role": name}, "annotations": dict(annotations or {})},
            "spec": {
                "restartPolicy": restart,
                "containers": [{"name": name, "image": "busybox:1.36", "resources": {"requests": requests}}],
            },
        },
    }
    if policies:
        t["policies"] = policies
    if min_available is not None:
        t["minAvailable"] = min_available
    return t


def job(
    name: str,
    tasks: list[dict],
    *,
    namespace: str = "default",
    queue_name: str = "default",
    min_available: int | None = None,
    annotations: dict | None = None,
    labels: dict | None = None,
    **spec_extra,
) -> dict:
    spec = {
        "schedulerName": "volcano",
        "queue": queue_name,
        "tasks": tasks,
        "minAvailable": min_available if min_available is not None else sum(t["replicas"] for t in tasks),
    }
    spec.update(spec_extra)
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": dict(annotations or {}),
            "labels": dict(labels or {}),
        },
        "spec": spec,
    }


def command(namespace: str, action: str, target: dict) -> dict:
    """A bus.volcano.sh Command as vcctl writes it (REFERENCE.md §6)."""
    ref = {
        "apiVersion": target["apiVersion"],
        "kind": target["kind"],
        "name": target["metadata"]["name"],
        "uid": target["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta = {"generateName": f"{ref['name']}-{action.lower()}-", "namespace": namespace}
    if ref["kind"] == "Job":
        meta["ownerReferences"] = [dict(ref)]
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": meta,
        "action": action,
        "target": ref,
    }


def new_cluster(
    *, nodes: int = 2, cpu: int = 8, gpus: int = 0, seed: int = 1, controllers: bool = True
) -> SimulatedCluster:
    cluster = SimulatedCluster(seed=seed, controllers=controllers)
    for i in range(nodes):
        cluster.store.create(NODE, node(f"node-{i}", cpu=cpu, gpus=gpus))
    return cluster


def phase(cluster: SimulatedCluster, name: str, namespace: str = "default") -> str:
    obj = cluster.store.get(JOB, namespace, name)
    return ((obj.get("status") or {}).get("state") or {}).get("phase", "")


def run_until(cluster: SimulatedCluster, predicate, limit: int = 300) -> int:
    """Advance one simulated second at a time until ``predicate()``; returns the seconds taken."""
    for second in range(1, limit + 1):
        cluster.advance(1)
        if predicate():
            return second
    raise AssertionError(f"condition not reached within {limit} simulated seconds")


def events_for(cluster: SimulatedCluster, obj: dict) -> list[dict]:
    uid = obj["metadata"]["uid"]
    items, _ = cluster.store.list(EVENT)
    return [e for e in items if (e.get("involvedObject") or {}).get("uid") == uid]


def pods_of(cluster: SimulatedCluster, job_name: str, namespace: str = "default") -> list[dict]:
    items, _ = cluster.store.list(POD, namespace)
    return sorted(
        (p for p in items if (p["metadata"].get("labels") or {}).get("volcano.sh/job-name") == job_name),
        key=lambda p: p["metadata"]["name"],
    )


__all__ = ["COMMAND", "EVENT", "JOB", "NODE", "POD", "PODGROUP", "QUEUE"]
