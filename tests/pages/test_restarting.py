""" "Needs attention" lists a Job restarting repeatedly (overview and kiosk): the restarts the cache
saw in the last ten minutes, on a simulated cluster with its controllers off."""

from __future__ import annotations

from html import unescape

import pytest

from dashboard.sim.clock import rfc3339
from tests.pages.helpers import kind

JOBS = kind("batch.volcano.sh", "jobs")


@pytest.fixture(scope="module")
def flap_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=13, name="flap") as pair:
        yield pair


def _restart(cluster, cache, retry: int) -> None:
    job = cluster.store.get(JOBS, "default", "flapper")
    now = rfc3339(cluster.clock.now())
    conditions = [c for c in job["status"].get("conditions", []) if c["status"] != "Restarting"]
    job["status"].update(
        state={"phase": "Running"},
        retryCount=retry,
        conditions=[*conditions, {"status": "Restarting", "lastTransitionTime": now}],
    )
    cluster.store.update(JOBS, job, status=True)
    cache.wait_for(
        lambda s: (s.jobs.get("default", "flapper") or {}).get("status", {}).get("retryCount") == retry
    )


def test_a_job_restarting_twice_in_ten_minutes_needs_attention(flap_cluster, client):
    cluster, cache = flap_cluster
    cluster.clock.advance(3600)
    started = rfc3339(cluster.clock.now())
    cluster.store.create(
        JOBS,
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {
                "name": "flapper",
                "namespace": "default",
                "creationTimestamp": "2020-01-01T00:00:00Z",
            },
            "spec": {"minAvailable": 1, "queue": "default", "tasks": []},
            "status": {
                "state": {"phase": "Running"},
                "conditions": [{"status": "Running", "lastTransitionTime": started}],
            },
        },
        "default",
        replay=True,
    )
    _restart(cluster, cache, 1)
    page = unescape(client.get("/").content.decode())
    assert "restarting repeatedly" not in page  # one restart is not repeated
    cluster.clock.advance(120)
    _restart(cluster, cache, 2)
    page = unescape(client.get("/").content.decode())
    assert "1 Job restarting repeatedly" in page and "2 restarts in 10 min" in page
    assert 'href="/jobs/default/flapper/"' in page
    kiosk = unescape(client.get("/kiosk/").content.decode())
    assert "1 Job restarting repeatedly" in kiosk and "flapper" in kiosk
    cluster.clock.advance(600)  # both restarts are now older than the window
    assert "restarting repeatedly" not in unescape(client.get("/").content.decode())
