""" "Why did this Job fail?" counts the restarts Volcano carried out: a Job that failed on its retry
limit was restarted retryCount - 1 times (the restart that reached maxRetry ended in Failed). On a
simulated cluster with its controllers on, the Job created as a user would create it."""

from __future__ import annotations

import pytest

from tests.pages.helpers import job_named, kind, phase, text

JOBS = kind("batch.volcano.sh", "jobs")


@pytest.fixture(scope="module")
def retry_cluster(tmp_path_factory):
    from dashboard.sim.kinds import NODE
    from tests.conftest import _new_cluster
    from tests.pages.conftest import installed_cache
    from tests.sim_behaviour.helpers import node

    cluster = _new_cluster(seed=22, controllers=True)
    cluster.store.create(NODE, node("node-0"))
    try:
        with installed_cache(cluster, tmp_path_factory.mktemp("retry")) as cache:
            yield cluster, cache
    finally:
        cluster.stop()


def test_a_job_failed_on_its_retry_limit_was_restarted_once_for_max_retry_2(retry_cluster, client):
    cluster, cache = retry_cluster
    fail = {
        "sim.volcano-ui/behaviour": "fail",
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
    body = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "flaky", "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": 1,
            "maxRetry": 2,
            "policies": [{"event": "PodFailed", "action": "RestartJob"}],
            "tasks": [task],
        },
    }
    cluster.store.create(JOBS, body, "default")
    seen = []
    for _ in range(240):
        now = phase(job_named(cluster, "default", "flaky"))
        if not seen or seen[-1] != now:
            seen.append(now)
        if now == "Failed":
            break
        cluster.advance(1.0)
    # Volcano: Running -RestartJob-> Restarting (retryCount 1) -> Pending -> Running -RestartJob->
    # Restarting (retryCount 2 >= maxRetry 2) -> Failed.
    # Restarting lasts less than a simulated second here; the two runs show as Pending -> Running.
    assert [p for p in seen if p in ("Running", "Failed")] == ["Running", "Running", "Failed"], seen
    job = job_named(cluster, "default", "flaky")
    assert job["status"]["retryCount"] == 2
    rv = job["metadata"]["resourceVersion"]
    cache.wait_for(
        lambda s: (s.jobs.get("default", "flaky") or {}).get("metadata", {}).get("resourceVersion") == rv
    )
    page = text(client.get("/jobs/default/flaky/").content.decode())
    assert "Volcano restarted it 1 time; restart number 2 reached maxRetry 2, so the Job is Failed." in page
    assert "restarted 2 times" not in page
