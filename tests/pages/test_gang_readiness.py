"""The Job page's gang progress claims "minAvailable reached" only when running + succeeded pods
reach a minAvailable of at least 1: never for an Aborted Job whose pod failed, never for a Job
without tasks (whose pending text says there is nothing to schedule). On a simulated cluster with
its controllers on, the Jobs created as a user would create them."""

from __future__ import annotations

import pytest

from tests.pages.helpers import job_named, kind, phase, text

JOBS = kind("batch.volcano.sh", "jobs")


@pytest.fixture(scope="module")
def gang_cluster(tmp_path_factory):
    from dashboard.sim.kinds import NODE
    from tests.conftest import _new_cluster
    from tests.pages.conftest import installed_cache
    from tests.sim_behaviour.helpers import node

    cluster = _new_cluster(seed=21, controllers=True)
    for i in range(2):
        cluster.store.create(NODE, node(f"node-{i}"))
    try:
        with installed_cache(cluster, tmp_path_factory.mktemp("gang")) as cache:
            yield cluster, cache
    finally:
        cluster.stop()


def _create(cluster, name: str, spec: dict, annotations: dict | None = None) -> None:
    body = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": {"schedulerName": "volcano", "queue": "default", **spec},
    }
    cluster.store.create(JOBS, body, "default")


def _settle(cluster, cache, name: str, wanted: str) -> None:
    for _ in range(120):
        if phase(job_named(cluster, "default", name)) == wanted:
            break
        cluster.advance(1.0)
    assert phase(job_named(cluster, "default", name)) == wanted
    rv = job_named(cluster, "default", name)["metadata"]["resourceVersion"]
    cache.wait_for(
        lambda s: (s.jobs.get("default", name) or {}).get("metadata", {}).get("resourceVersion") == rv
    )


def test_an_aborted_job_with_a_failed_pod_has_not_reached_min_available(gang_cluster, client):
    cluster, cache = gang_cluster
    fail = {
        "sim.volcano-ui/behaviour": "fail",
        "sim.volcano-ui/exit-code": "137",
        "sim.volcano-ui/duration": "3",
        "sim.volcano-ui/pull-seconds": "1",
    }
    task = {
        "name": "w",
        "replicas": 1,
        "template": {
            "metadata": {"annotations": fail},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        },
    }
    spec = {"minAvailable": 1, "maxRetry": 1, "policies": [{"event": "PodFailed", "action": "AbortJob"}]}
    _create(cluster, "fail-fast", {**spec, "tasks": [task]}, fail)
    _settle(cluster, cache, "fail-fast", "Aborted")
    status = job_named(cluster, "default", "fail-fast")["status"]
    assert status.get("failed") == 1 and not status.get("running")
    page = text(client.get("/jobs/default/fail-fast/").content.decode())
    assert "minAvailable reached" not in page
    assert "needs 1 pod running or succeeded; 0 are" in page


def test_a_job_without_tasks_has_nothing_to_schedule(gang_cluster, client):
    cluster, cache = gang_cluster
    _create(cluster, "zero-tasks", {"minAvailable": 0})
    cluster.advance(3.0)
    rv = job_named(cluster, "default", "zero-tasks")["metadata"]["resourceVersion"]
    cache.wait_for(
        lambda s: (s.jobs.get("default", "zero-tasks") or {}).get("metadata", {}).get("resourceVersion") == rv
    )
    page = text(client.get("/jobs/default/zero-tasks/").content.decode())
    assert "minAvailable reached" not in page
    assert "This Job has no tasks: nothing to schedule." in page
    assert "gang of 0 pods" not in page
