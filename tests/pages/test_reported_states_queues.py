"""Queue arithmetic and big objects on states users reported, loaded as written into a simulated
cluster with controllers off: a queue whose capability is below its deserved share, Running
PodGroups left behind with no pods and no owner Job, the scheduler refusing a gang our arithmetic
has room for, a parent queue whose PodGroups sit in its children, and a Job with 8,000 pods."""

from __future__ import annotations

import re
import time

import pytest

from tests.pages.helpers import kind, text

QUEUES = ("scheduling.volcano.sh", "queues")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
JOBS = ("batch.volcano.sh", "jobs")
PODS = ("", "pods")
BIG = 8000
JOB_API = "batch.volcano.sh/v1alpha1"
TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=14, name="states3") as (cluster, cache):
        _build(cluster)
        cache.wait_for(
            lambda s: (
                len(s.pods_for_job(s.jobs.get("big", "huge") or {"metadata": {}})) == BIG
                and s.podgroups.get("team", "waiting-pg") is not None
                and s.queues.get(None, "child-b") is not None
            ),
            timeout=60,
        )
        yield cluster, cache


def _create(cluster, plural: tuple[str, str], obj: dict, ns: str | None = None) -> None:
    if ns is not None and cluster.store.try_get(kind("", "namespaces"), None, ns) is None:
        cluster.store.create(kind("", "namespaces"), {"metadata": {"name": ns}})
    if cluster.store.try_get(kind(*plural), ns, obj["metadata"]["name"]) is None:
        cluster.store.create(kind(*plural), obj, ns, replay=True)


def _queue(name: str, parent: str = "", **spec) -> dict:
    status = spec.pop("status", {"state": "Open"})
    body = {"weight": 1, **spec}
    if parent:
        body["parent"] = parent
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": body,
        "status": status,
    }


def _pg(name: str, ns: str, queue: str, phase: str, cpu: str, min_member: int = 2, **extra) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns, **extra.pop("metadata", {})},
        "spec": {"minMember": min_member, "queue": queue, "minResources": {"cpu": cpu}},
        "status": {"phase": phase, **extra},
    }


def _build(cluster) -> None:
    _create(cluster, QUEUES, _queue("root", status={"state": "Open", "allocated": {"cpu": "0"}}))
    # capability < deserved (a user's report: deserved 40 cpu, capability 16).
    _create(
        cluster,
        QUEUES,
        _queue(
            "capped",
            deserved={"cpu": "40"},
            capability={"cpu": "16"},
            status={"state": "Open", "allocated": {"cpu": "12"}},
        ),
    )
    # Three Running PodGroups with no pods whose Job is gone, holding 2 cpu each; a gang needing
    # 4 cpu waits with the scheduler's "queue resource quota insufficient" although 8 − 0 = 8.
    _create(
        cluster,
        QUEUES,
        _queue("leaky", capability={"cpu": "8"}, status={"state": "Open", "allocated": {"cpu": "0"}}),
    )
    for i in range(3):
        owner = {
            "ownerReferences": [
                {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": f"gone-{i}", "uid": "u"}
            ]
        }
        _create(cluster, PODGROUPS, _pg(f"gone-{i}", "team", "leaky", "Running", "2", metadata=owner), "team")
    cond = {
        "type": "Unschedulable",
        "status": "True",
        "reason": "NotEnoughResources",
        "message": "queue resource quota insufficient: insufficient cpu",
        "lastTransitionTime": cluster.clock.rfc3339(),
    }
    _create(cluster, PODGROUPS, _pg("waiting-pg", "team", "leaky", "Pending", "4", conditions=[cond]), "team")
    # A parent whose PodGroups all sit in its children.
    _create(cluster, QUEUES, _queue("parent-q", status={"state": "Open", "allocated": {"cpu": "3"}}))
    for child in ("child-a", "child-b"):
        _create(cluster, QUEUES, _queue(child, "parent-q"))
        for i in range(2):
            _create(cluster, PODGROUPS, _pg(f"{child}-pg-{i}", "team", child, "Running", "1"), "team")
    # A busy queue: 120 PodGroups and 60 Jobs.
    _create(cluster, QUEUES, _queue("busy", status={"state": "Open", "allocated": {"cpu": "0"}}))
    for i in range(120):
        # Made by another workload controller (its owner is not checked): never a leftover.
        rs = {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs"}]}
        busy = _pg(f"busy-pg-{i:03d}", "team", "busy", "Running", "1", metadata=rs)
        _create(cluster, PODGROUPS, busy, "team")
    for i in range(60):
        job = {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": f"busy-job-{i:03d}", "namespace": "team"},
            "spec": {
                "queue": "busy",
                "minAvailable": 1,
                "tasks": [{"name": "t", "replicas": 1, "template": TEMPLATE}],
            },
            "status": {"state": {"phase": "Running"}, "running": 1},
        }
        _create(cluster, JOBS, job, "team")
    _big_job(cluster)


def _big_job(cluster) -> None:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "huge", "namespace": "big", "uid": "huge-uid"},
        "spec": {
            "queue": "default",
            "minAvailable": BIG,
            "tasks": [
                {"name": "worker", "replicas": BIG - 100, "template": TEMPLATE},
                {"name": "ps", "replicas": 100, "template": TEMPLATE},
            ],
        },
        "status": {"state": {"phase": "Running"}, "running": BIG - 10, "pending": 5, "failed": 5},
    }
    _create(cluster, JOBS, job, "big")
    _create(cluster, QUEUES, _queue("default"))
    pg_name = "huge-huge-uid"
    owner = {"ownerReferences": [{"apiVersion": JOB_API, "kind": "Job", "name": "huge", "uid": "huge-uid"}]}
    big_pg = _pg(pg_name, "big", "default", "Running", "1", min_member=BIG, running=BIG - 10, metadata=owner)
    _create(cluster, PODGROUPS, big_pg, "big")
    now = cluster.clock.rfc3339()
    for i in range(BIG):
        task = "ps" if i < 100 else "worker"
        index = i if i < 100 else i - 100
        phase = "Pending" if i in range(200, 205) else ("Failed" if i in range(300, 305) else "Running")
        name = f"huge-{task}-{index}"
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "big",
                "creationTimestamp": now,
                "labels": {"volcano.sh/job-name": "huge", "volcano.sh/task-spec": task},
                "annotations": {"scheduling.k8s.io/group-name": pg_name, "volcano.sh/task-index": str(index)},
            },
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox"}]},
            "status": {"phase": phase},
        }
        cluster.store.create(kind(*PODS), pod, "big", replay=True)


# --- rule 5: queue arithmetic as the scheduler does it --------------------------------------------


def _row(page: str, queue: str) -> str:
    m = re.search(rf'<tr data-queue="{queue}">.*?</tr>', page, re.S)
    assert m, queue
    return text(m.group(0))


def test_deserved_above_capability_warns_and_uses_the_capability(client, states):
    body = text(client.get("/queues/capped/").content.decode())
    assert "deserved exceeds capability" in body
    # 12 of the effective share 16 (not 30% of an unreachable 40), the reference stated.
    assert "75% of capability" in body and "30%" not in body
    assert "allocated ÷ capability 16, the effective share (deserved 40 exceeds the capability" in body
    row = _row(client.get("/queues/").content.decode(), "capped")
    assert "deserved exceeds capability" in row and "75% of capability" in row


def test_a_percentage_names_its_reference(client, states):
    body = text(client.get("/queues/").content.decode())
    assert re.search(r"\d+% of (deserved|capability)", body)
    assert not re.search(
        r"\d+%(?! of (deserved|capability))", _row(client.get("/queues/").content.decode(), "capped")
    )


def test_a_queue_without_parent_shows_root(client, states):
    body = text(client.get("/queues/capped/").content.decode())
    assert "Parent root" in body and "Parent none" not in body
    assert "Parent none" in text(client.get("/queues/root/").content.decode())


def test_a_parent_rolls_up_its_childrens_podgroups(client, states):
    row = _row(client.get("/queues/").content.decode(), "parent-q")
    assert "Running 4" in row and "incl. children" in row
    assert "incl. children" not in _row(client.get("/queues/").content.decode(), "child-a")
    body = text(client.get("/queues/parent-q/").content.decode())
    assert "PodGroups by phase incl. children" in body and "4 Running" in body


# --- rule 9: big objects stay fast ---------------------------------------------------------------


def test_a_job_with_8000_pods_pages_its_pods(client, states):
    started = time.perf_counter()
    resp = client.get("/jobs/big/huge/")
    took = time.perf_counter() - started
    page = resp.content.decode()
    print(f"\n/jobs/big/huge/: {len(page):,} bytes in {took:.2f}s")
    body = text(page)
    assert resp.status_code == 200
    assert len(re.findall(r'<tr id="pod-', page)) == 50
    assert "showing 1–50 of 8,000" in body
    assert re.search(r"Running\s+7,990", body) and re.search(r"Pending\s+5\b", body)
    assert len(page) < 400_000 and took < 5
    # A filter by status and by task, and the next page, keep the counts over all pods.
    body = text(client.get("/jobs/big/huge/?pod_status=Pending").content.decode())
    assert "huge-worker-100" in body and "huge-worker-104" in body and "huge-ps-0 " not in body
    assert "Running 7,990" in body
    page = client.get("/podgroups/big/huge-huge-uid/?pod_task=ps&pod_page=2").content.decode()
    body = text(page)
    assert "showing 51–100 of 100 (filtered from 8,000)" in body and "Page 2 of 2" in body
    assert 'id="pod-huge-ps-50"' in page and 'id="pod-huge-worker-0"' not in page


def test_the_queue_page_pages_its_jobs_and_podgroups(client, states):
    page = client.get("/queues/busy/").content.decode()
    body = text(page)
    assert "showing 1–50 of 60" in body and "showing 1–50 of 120" in body
    assert page.count('href="/jobs/team/busy-job-') == 50
    assert page.count('href="/podgroups/team/busy-pg-') == 50
    page = client.get("/queues/busy/?pgs_page=3").content.decode()
    body = text(page)
    assert "showing 101–120 of 120" in body and "Page 3 of 3" in body
    assert page.count('href="/podgroups/team/busy-pg-') == 20 and "busy-pg-119" in body
    # The lists say how much of the whole a page is.
    assert "showing 51–60 of 60" in text(client.get("/jobs/?queue=busy&page=2").content.decode())
    assert "showing 1–50 of 120" in text(client.get("/podgroups/?queue=busy").content.decode())


def test_leftover_running_podgroups_are_flagged_with_what_they_hold(client, states):
    page = client.get("/queues/leaky/").content.decode()
    body = text(page)
    assert "3 possible leftovers" in body and body.count("possible leftover ") >= 3
    assert "They hold minResources cpu 6" in body
    for i in range(3):
        assert f'href="/podgroups/team/gone-{i}/"' in page
    # The big Job's Running PodGroup has its pods and its Job: not flagged.
    assert "possible leftover" not in text(client.get("/queues/default/").content.decode())


def test_the_scheduler_refusing_a_queue_with_room_shows_both_views(client, states):
    page = client.get("/podgroups/team/waiting-pg/").content.decode()
    body = text(page)
    assert "The scheduler's view differs: it reports no room in queue “leaky”" in body
    assert "queue resource quota insufficient: insufficient cpu" in body
    assert "cpu in “leaky”: needs 4; capability 8 − allocated 0 − reserved 0 leaves 8" in body
    assert "3 Running PodGroups in this queue have fewer pods than their minMember" in body
    assert "they hold minResources cpu 6" in body
    # The headroom's "left" is never shown bare.
    assert "by these numbers; the scheduler says no room" in body
    assert "No room in queue" not in body
