""" "Why is it pending?" says plainly when a gang can never be satisfied, first in the list:
minAvailable above the Job's replicas, a PodGroup's minMember above the pods that can exist, and
minimum resources above the capability of the queue or of a tighter ancestor (REFERENCE.md §1-§4).
Uses the in-memory ClusterCache filled with objects shaped as Volcano writes them."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import text

NS = "ml"


def _queue(name: str, capability: dict | None = None, parent: str = "") -> dict:
    spec: dict = {"weight": 1}
    if capability is not None:
        spec["capability"] = capability
    if parent:
        spec["parent"] = parent
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "uid": f"q-{name}", "resourceVersion": "1"},
        "spec": spec,
        "status": {"state": "Open"},
    }


def _job(name: str, queue: str, min_available: int, tasks: list[dict]) -> dict:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "2",
            "creationTimestamp": "2026-11-29T10:00:00Z",
        },
        "spec": {"queue": queue, "minAvailable": min_available, "tasks": tasks},
        "status": {"state": {"phase": "Pending"}, "minAvailable": min_available, "pending": 1},
    }


def _task(name: str, replicas: int, gpus: int = 0, memory: str = "1Gi") -> dict:
    requests = {"cpu": "1", "memory": memory}
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "resources": {"requests": requests, "limits": limits},
                    }
                ]
            }
        },
    }


def _podgroup(
    name: str,
    queue: str,
    min_member: int,
    phase: str,
    owner: dict | None = None,
    min_resources: dict | None = None,
    message: str = "",
) -> dict:
    status: dict = {"phase": phase}
    if message:
        status["conditions"] = [
            {
                "type": "Unschedulable",
                "status": "True",
                "reason": "NotEnoughResources",
                "message": message,
                "lastTransitionTime": "2026-11-29T10:01:00Z",
            }
        ]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "3",
            "ownerReferences": [owner] if owner else [],
        },
        "spec": {"minMember": min_member, "queue": queue, "minResources": min_resources or {}},
        "status": status,
    }


def _job_owner(name: str) -> dict:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": name,
        "uid": f"uid-{name}",
        "controller": True,
    }


def _pod(name: str, group: str, owner: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "4",
            "annotations": {"scheduling.k8s.io/group-name": group},
            "ownerReferences": [owner],
        },
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Pending"},
    }


@pytest.fixture
def cache(memory_cache):
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(kind).mark_synced()
    queues = memory_cache.store("queues")
    queues.upsert(_queue("root"))
    queues.upsert(_queue("default", {"cpu": "1000", "memory": "4Ti"}))
    queues.upsert(_queue("eng", {"cpu": "1000", "nvidia.com/gpu": "8"}))
    # The webhook would refuse a child capability above its parent's; the tighter ancestor rules.
    queues.upsert(_queue("eng-train", {"nvidia.com/gpu": "100"}, parent="eng"))
    queues.upsert(_queue("small", {"nvidia.com/gpu": "8"}))
    return memory_cache


def _findings(client, url: str) -> list[str]:
    page = client.get(url)
    assert page.status_code == 200, url
    items = re.findall(
        r'<li class="finding finding-(\w+)">(.*?)</li>\s*(?=<li class="finding|</ol>)',
        page.content.decode(),
        re.S,
    )
    return [f"{level}: {text(body).strip()}" for level, body in items]


def test_min_available_above_all_replicas_never_starts(client, cache):
    cache.store("jobs").upsert(_job("big", "default", 100, [_task("ps", 1), _task("worker", 2)]))
    cache.store("podgroups").upsert(
        _podgroup(
            "big-uid-big",
            "default",
            100,
            "Inqueue",
            _job_owner("big"),
            {"cpu": "100", "requests.memory": "100Gi"},
            "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 100 minAvailable; "
            "Pending: 3 Unschedulable. Origin reason is Insufficient memory",
        )
    )
    for url in ("/jobs/ml/big/", "/podgroups/ml/big-uid-big/"):
        found = _findings(client, url)
        assert found[0].startswith(
            "bad: This will never start: minAvailable (100) is more than "
            "the Job's 3 replicas in all tasks, so the gang can never be complete"
        ), found
        assert "admission webhook" in found[0]
        # The scheduler's own words still follow, without the misleading "yet".
        assert any("Insufficient memory" in f for f in found[1:])
        assert not any("cannot yet place" in f for f in found), found
    # A Job that fits its replicas gets no such claim.
    cache.store("jobs").upsert(_job("fits", "default", 3, [_task("worker", 3)]))
    assert not any("never" in f for f in _findings(client, "/jobs/ml/fits/"))


def test_podgroup_min_member_above_its_jobs_replicas(client, cache):
    cache.store("jobs").upsert(_job("mm", "default", 2, [_task("worker", 2)]))
    cache.store("podgroups").upsert(_podgroup("mm-uid-mm", "default", 5, "Inqueue", _job_owner("mm")))
    for url in ("/jobs/ml/mm/", "/podgroups/ml/mm-uid-mm/"):
        found = _findings(client, url)
        assert found[0].startswith(
            "bad: This will never start: the PodGroup's minMember (5) is more than "
            "the Job's 2 replicas in all tasks"
        ), (url, found)


def test_other_workloads_podgroup_min_member_above_existing_pods(client, cache):
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web-5d8",
        "uid": "rs-uid",
        "controller": True,
    }
    cache.store("podgroups").upsert(_podgroup("podgroup-rs-uid", "default", 5, "Inqueue", owner))
    for i in range(2):
        cache.store("pods").upsert(_pod(f"web-5d8-{i}", "podgroup-rs-uid", owner))
    found = _findings(client, "/podgroups/ml/podgroup-rs-uid/")
    assert found[0].startswith(
        "bad: This will never start as it is: the PodGroup's minMember (5) is more "
        "than the 2 pods that exist for it"
    ), found
    assert "unless its owner creates more pods" in found[0]
    # Enough pods: no claim.
    for i in range(2, 5):
        cache.store("pods").upsert(_pod(f"web-5d8-{i}", "podgroup-rs-uid", owner))
    assert not any("never" in f for f in _findings(client, "/podgroups/ml/podgroup-rs-uid/"))


def test_gpus_above_the_queue_capability_never_fit(client, cache):
    # 8 workers x 8 GPUs, minAvailable 8: the PodGroup's minResources say 64 GPUs.
    cache.store("jobs").upsert(_job("gpu", "small", 8, [_task("worker", 8, gpus=8)]))
    cache.store("podgroups").upsert(
        _podgroup(
            "gpu-uid-gpu",
            "small",
            8,
            "Pending",
            _job_owner("gpu"),
            {"cpu": "8", "requests.nvidia.com/gpu": "64", "count/pods": "8"},
        )
    )
    for url in ("/jobs/ml/gpu/", "/podgroups/ml/gpu-uid-gpu/"):
        found = _findings(client, url)
        assert found[0].startswith(
            "bad: This will never start: the gang's minimum resources exceed the capability of queue “small”"
        ), found
        assert "nvidia.com/gpu: needs 64, capability 8" in found[0]
        assert not any("8 left" in f for f in found), found


def test_capability_of_a_tighter_ancestor_and_no_podgroup_yet(client, cache):
    # No PodGroup: the need is the sum over the Job's first minAvailable pods (4 of 6 x 16 GPUs).
    cache.store("jobs").upsert(_job("deep", "eng-train", 4, [_task("worker", 6, gpus=16)]))
    found = _findings(client, "/jobs/ml/deep/")
    assert found[0].startswith(
        "bad: This will never start: the gang's minimum resources exceed the capability of queue “eng-train”"
    ), found
    assert "nvidia.com/gpu: needs 64, capability 8 (set on ancestor queue “eng”)" in found[0]
    # Under both capabilities: nothing "never".
    cache.store("jobs").upsert(_job("ok", "eng-train", 1, [_task("worker", 6, gpus=8)]))
    assert not any("never" in f for f in _findings(client, "/jobs/ml/ok/"))


def test_domain_gang_and_queue_helpers():
    from decimal import Decimal

    from dashboard.volcano import gang, queues

    job = _job("x", "q", 3, [_task("a", 1, gpus=2), _task("b", 5, gpus=4, memory="2Gi")])
    assert gang.job_total_replicas(job) == 6
    need = gang.job_min_resources(job, 3)
    assert need["nvidia.com/gpu"] == 10 and need["cpu"] == 3 and need["memory"] == 5 * 2**30
    # Ancestry stops at cycles and missing queues.
    loop = {"a": _queue("a", parent="b"), "b": _queue("b", parent="a")}
    assert [q["metadata"]["name"] for q in queues.queue_ancestry(loop["a"], loop.get)] == ["a", "b"]
    chain = queues.queue_ancestry(_queue("c", {"cpu": "abc"}, parent="gone"), {}.get)
    assert queues.capability_limits({"cpu": Decimal(5)}, chain) == []


def test_findings_are_translated(client, cache):
    cache.store("jobs").upsert(_job("big", "small", 100, [_task("worker", 3, gpus=8)]))
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    found = _findings(client, "/jobs/ml/big/")
    assert found[0].startswith("bad: 它永远不会启动：minAvailable（100）大于该 Job 所有任务的副本总数 3"), (
        found
    )
    assert "nvidia.com/gpu：需要 24，capability 为 8" in found[1], found


def test_domain_why_pending_puts_gang_never_first():
    from dashboard.volcano.pending import PendingContext, why_pending

    queues = {"eng": _queue("eng", {"nvidia.com/gpu": "8"}), "leaf": _queue("leaf", parent="eng")}
    job = _job("j", "leaf", 100, [_task("w", 3, gpus=8)])
    pg = _podgroup("j-uid-j", "leaf", 100, "Pending", _job_owner("j"), {"requests.nvidia.com/gpu": "24"})
    facts = why_pending(PendingContext(job, pg, queues["leaf"], "leaf", queue_lookup=queues.get))
    assert [f.kind for f in facts[:2]] == ["min_available_above_replicas", "capability"]
    assert facts[0].values == {"min": 100, "total": 3}
    (limit,) = facts[1].limits
    assert (limit.resource, limit.need, limit.capability, limit.queue) == ("nvidia.com/gpu", 24, 8, "eng")
    fits = _job("k", "leaf", 1, [_task("w", 1, gpus=8)])
    never = {"min_available_above_replicas", "min_member_above_replicas", "capability"}
    facts = why_pending(PendingContext(fits, None, queues["leaf"], "leaf", queue_lookup=queues.get))
    assert not [f for f in facts if f.kind in never]


def test_status_fragment_follows_an_ancestors_capability(client, cache):
    from tests.pages.helpers import fragment_url

    cache.store("jobs").upsert(_job("deep", "eng-train", 4, [_task("worker", 6, gpus=16)]))
    htmx = {"HX-Request": "true"}
    page = client.get("/jobs/ml/deep/").content.decode()
    assert "needs 64, capability 8" in text(page)
    frag = fragment_url(page, "status")
    assert client.get(frag, headers=htmx).status_code == 204
    # The ancestor's capability is raised: the page's poll must re-render, and the claim goes.
    raised = _queue("eng", {"cpu": "1000", "nvidia.com/gpu": "64"})
    raised["metadata"]["resourceVersion"] = "9"
    cache.store("queues").upsert(raised)
    resp = client.get(frag, headers=htmx)
    assert resp.status_code == 200 and "never" not in text(resp.content.decode())
