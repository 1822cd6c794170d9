"""A CronJob's runs list over the simulated cluster: the Duration of a run not final yet is named
by its Job's phase, a final run keeps its duration."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import text

NS = io.NS


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=7, name="cron-runs") as (cluster, cache):
        yield cluster, cache


def _duration_cells(page: str) -> dict[str, str]:
    rows = page.split("data-runs")[1].split("</tbody>")[0].split('<tr data-run="')[1:]
    return {row.split('"')[0]: text(row.split("<td")[-1].split(">", 1)[1]).strip() for row in rows}


def test_the_duration_of_a_run_names_its_phase(own, client):
    cluster, cache = own
    now = cluster.clock.now().replace(microsecond=0)
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {
            "name": "refresh",
            "namespace": NS,
            "uid": "uid-refresh",
            "creationTimestamp": io.iso(now),
        },
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"tasks": []}}},
        "status": {"lastScheduleTime": io.iso(now)},
    }
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "name": "refresh",
        "uid": "uid-refresh",
    }
    cluster.store.create(io.kind("batch.volcano.sh", "cronjobs"), cj, NS, replay=True)
    phases = ("Pending", "Running", "Restarting", "Aborted", "", "Brewing", "Completed")
    for i, phase in enumerate(phases):
        at = now - timedelta(minutes=i + 1)
        job = io.vcjob(f"refresh-{int(at.timestamp()) // 60}", phase, now=now, owner=owner)
        job["metadata"]["creationTimestamp"] = io.iso(now - timedelta(seconds=3))
        if phase == "Completed":
            job["status"]["state"]["lastTransitionTime"] = io.iso(now + timedelta(minutes=2))
        if not phase:
            del job["status"]["state"]
        cluster.store.create(io.kind("batch.volcano.sh", "jobs"), job, NS, replay=True)
    cache.wait_for(
        lambda s: len(s.jobs.all()) == len(phases) and s.cronjobs.get(NS, "refresh") is not None,
        timeout=10,
    )
    resp = client.get(f"/cronjobs/{NS}/refresh/")
    assert resp.status_code == 200
    cells = list(_duration_cells(resp.content.decode()).values())
    assert cells == [
        "pending 3s",
        "running 3s",
        "restarting 3s",
        "aborted 3s",
        "no phase yet 3s",
        "Brewing 3s",
        "2m3s",
    ], cells
