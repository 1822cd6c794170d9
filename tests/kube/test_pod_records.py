"""The cache keeps the final state of the deleted pods of Volcano Jobs: seen deleted by the watch or
missing from a re-list, bounded by age, count and bytes, read through Snapshot.deleted_pods_of_job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.kube import ClusterCache
from dashboard.kube.podrecords import DeletedPods
from dashboard.sim.kinds import resolve
from dashboard.volcano.podrecords import MESSAGE_CHARS
from tests.pages.helpers import sim_faults

POD = resolve("pods")
JOB = {
    "kind": "Job",
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "metadata": {"name": "train", "namespace": "default"},
}


def job_pod(name: str, *, job: str = "train", reason: str = "OOMKilled", code: int = 137, message: str = ""):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": {"volcano.sh/job-name": job, "volcano.sh/task-spec": "worker"},
            "annotations": {"scheduling.k8s.io/group-name": job},
        },
        "spec": {
            "schedulerName": "volcano",
            "nodeName": "node-1",
            "containers": [
                {"name": "main", "image": "x", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
            ],
        },
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "main",
                    "restartCount": 0,
                    "state": {
                        "terminated": {
                            "reason": reason,
                            "exitCode": code,
                            "message": message,
                            "startedAt": "2026-01-01T00:00:00Z",
                            "finishedAt": "2026-01-01T00:01:00Z",
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture
def own_sim():
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=3, controllers=False)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_a_pod_deleted_through_the_api_leaves_its_final_state(own_sim, make_live_cache):
    pod = job_pod("train-worker-0")
    own_sim.store.create(POD, pod, "default", replay=True)
    cache = make_live_cache(own_sim)
    cache.wait_for(lambda s: s.pods.get("default", "train-worker-0") is not None, timeout=10)
    own_sim.store.delete(POD, "default", "train-worker-0")
    records = cache.wait_for(lambda s: s.deleted_pods_of_job(JOB), timeout=10)
    (r,) = records
    assert (r.name, r.task, r.phase, r.node) == ("train-worker-0", "worker", "Failed", "node-1")
    assert dict(r.requests) == {"cpu": "2", "memory": "1073741824"}
    (c,) = r.containers
    assert (c.container, c.reason, c.exit_code, c.failed) == ("main", "OOMKilled", "137", True)
    assert c.finished == datetime(2026, 1, 1, 0, 1, tzinfo=UTC)
    # Another Job, or a namespace the reader may not see, gets none of them.
    assert (
        cache.snapshot().deleted_pods_of_job({**JOB, "metadata": {"name": "other", "namespace": "default"}})
        == []
    )
    assert cache.snapshot(frozenset({"team"})).deleted_pods_of_job(JOB) == []


def running_pod(name: str):
    pod = job_pod(name)
    pod["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {"name": "main", "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}
        ],
    }
    return pod


@pytest.mark.parametrize("fault", ["forbidden", "not_installed"])
def test_pods_that_can_no_longer_be_read_are_not_recorded_as_deleted(own_sim, make_live_cache, fault):
    for name in ["train-worker-0", "train-worker-1", "train-worker-2"]:
        own_sim.store.create(POD, running_pod(name), "default", replay=True)
    cache = make_live_cache(own_sim)
    cache.wait_for(lambda s: len(s.pods_for_job(JOB)) == 3, timeout=10)
    sim_faults(own_sim, **{fault: ["pods"]}, drop_watches=True)
    snap = cache.wait_for(lambda s: s.pods.state.name == fault and s, timeout=10)
    assert len(snap.pods) == 0  # cleared: not shown while they may not be read
    assert snap.deleted_pods_of_job(JOB) == []
    sim_faults(own_sim, reset=True)
    snap = cache.wait_for(
        lambda s: s.pods.state.name == "synced" and len(s.pods_for_job(JOB)) == 3 and s, timeout=10
    )
    assert snap.deleted_pods_of_job(JOB) == []
    assert len(cache.deleted_pods) == 0
    # A deletion after that is recorded as usual.
    own_sim.store.delete(POD, "default", "train-worker-1")
    (record,) = cache.wait_for(lambda s: s.deleted_pods_of_job(JOB), timeout=10)
    assert (record.name, record.phase) == ("train-worker-1", "Running")


def test_a_pod_missing_from_a_re_list_is_recorded_too():
    cache = ClusterCache()
    pods = cache.store("pods")
    pods.upsert(job_pod("train-worker-0"))
    pods.upsert(job_pod("train-worker-1", reason="Error", code=1))
    pods.upsert({"kind": "Pod", "metadata": {"name": "plain", "namespace": "default"}})
    pods.replace([job_pod("train-worker-1", reason="Error", code=1)])
    assert [r.name for r in cache.snapshot().deleted_pods_of_job(JOB)] == ["train-worker-0"]
    pods.replace([])
    assert [r.name for r in cache.snapshot().deleted_pods_of_job(JOB)] == ["train-worker-0", "train-worker-1"]
    assert len(cache.deleted_pods) == 2  # the pod of no Volcano Job left no record


def test_clearing_the_pods_records_none_of_them():
    cache = ClusterCache()
    pods = cache.store("pods")
    pods.upsert(job_pod("train-worker-0"))
    pods.upsert(job_pod("train-worker-1"))
    assert pods.clear() == 2 and len(pods) == 0
    assert cache.snapshot().deleted_pods_of_job(JOB) == [] and len(cache.deleted_pods) == 0


def test_records_of_an_earlier_job_of_the_same_name_are_not_shown():
    cache = ClusterCache()
    old = job_pod("train-worker-0")
    old["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    cache.store("pods").upsert(old)
    cache.store("pods").delete(old)
    recreated = {**JOB, "metadata": {**JOB["metadata"], "creationTimestamp": "2026-01-02T00:00:00Z"}}
    assert cache.snapshot().deleted_pods_of_job(recreated) == []
    assert len(cache.snapshot().deleted_pods_of_job(JOB)) == 1


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_records_expire_after_the_retention_and_are_bounded_in_count_and_bytes():
    clock = Clock()
    kept = DeletedPods(retention=3600, max_records=3, clock=clock)
    for i in range(5):
        kept.add(job_pod(f"p{i}"))
        clock.now += timedelta(minutes=1)
    assert [r.name for r in kept.view()[("default", "train")]] == ["p2", "p3", "p4"] and kept.dropped == 2
    clock.now += timedelta(minutes=57, seconds=30)  # p2 deleted 60.5 minutes ago
    assert [r.name for r in kept.view()[("default", "train")]] == ["p3", "p4"]
    clock.now += timedelta(hours=1)
    assert kept.view() == {} and kept.bytes == 0

    small = DeletedPods(retention=3600, max_records=100, max_bytes=3000, clock=clock)
    for i in range(10):
        small.add(job_pod(f"p{i}", message="x" * 5000))
    assert 0 < len(small) < 10 and small.bytes <= 3000
    (c,) = small.view()[("default", "train")][-1].containers
    assert len(c.message) == MESSAGE_CHARS

    assert not DeletedPods(retention=0).add(job_pod("p"))  # 0 keeps none
