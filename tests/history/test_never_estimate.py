"""The Job page's place in the queue gives no wait estimate for a gang that cannot start as it is
(the why-pending card's "never" verdict): here its GPUs exceed the queue's capability."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard.history.recorder import RecorderOptions
from dashboard.history.service import HistoryService, override_service
from dashboard.kube import override_cluster_cache
from dashboard.presenters.clock import set_time_source
from dashboard.sim.kinds import QUEUE
from dashboard.volcano.phases import job_phase, podgroup_phase, podgroup_queued
from tests.history.conftest import drop_alias, sqlite_alias
from tests.history.helpers import add_nodes, gpu_job, settle
from tests.pages.helpers import sim_faults, text


def _queued(snap, job_name):
    job = snap.jobs.get("default", job_name)
    pg = snap.podgroup_for_job(job) if job else None
    return pg is not None and podgroup_queued(podgroup_phase(pg))


@pytest.fixture
def recorded(sim_cluster, make_live_cache, tmp_path, django_db_blocker):
    """Job "train" (2 pods x 1 GPU) waited and ran in queue default, recorded into SQLite."""
    add_nodes(sim_cluster)
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "h.sqlite3")
        cache = make_live_cache(sim_cluster)
        service = HistoryService(
            cache, alias, RecorderOptions(flush_seconds=0, sample_seconds=60), clock=sim_cluster.clock.now
        )
        cache.add_listener(service.recorder.listener)
        service.recorder.step()
        gpu_job(sim_cluster, "train", replicas=2, seconds=None)

        def running(snap):
            job = snap.jobs.get("default", "train")
            return job is not None and job_phase(job) == "Running"

        settle(cache, sim_cluster, running, service.recorder)
        service.recorder.step(force_flush=True)
        previous = set_time_source(sim_cluster.clock.now)
        try:
            with override_cluster_cache(cache), override_service(service):
                yield sim_cluster, cache, service
        finally:
            set_time_source(previous)
            drop_alias(alias)


def test_a_gang_above_the_queue_capability_gets_no_wait_estimate(recorded):
    cluster, cache, service = recorded
    queue = cluster.store.get(QUEUE, "", "default")
    queue["spec"]["capability"] = {"nvidia.com/gpu": "3"}
    cluster.store.update(QUEUE, queue)
    gpu_job(cluster, "huge", replicas=4, seconds=None)  # 4 GPUs, capability 3: never admitted
    gpu_job(cluster, "fits", replicas=1, seconds=None)  # 1 GPU: waits for room, may start
    for _ in range(5):
        cluster.advance(1)
        service.recorder.step(force_flush=True)
    cache.wait_for(
        lambda s: (
            _queued(s, "huge")
            and ((s.queue("default") or {}).get("spec") or {}).get("capability") == {"nvidia.com/gpu": "3"}
        ),
        timeout=5,
    )
    page = Client().get("/jobs/default/huge/").content.decode()
    assert "This will never start" in page
    assert "data-queue-place" in page and "waiting gangs in queue default" in page
    assert "so no wait is estimated" in page and "Estimate:" not in page


def _components_settled(cache, down: set[str]):
    def settled(snap) -> bool:
        deps = snap.deployments.all()
        if not deps:
            return False
        for dep in deps:
            conds = (dep.get("status") or {}).get("conditions") or []
            ok = any(c.get("type") == "Available" and c.get("status") == "True" for c in conds)
            if ok == (dep["metadata"]["name"] in down):
                return False
        return True

    cache.wait_for(settled, timeout=5)


def _place(page: str) -> str:
    return text(page.split("data-queue-place")[1].split("</p>")[0])


def test_a_waiting_gang_is_told_how_long_it_has_waited_beside_the_estimate(recorded):
    cluster, cache, service = recorded
    gpu_job(cluster, "wide", replicas=3, seconds=None)  # 3 GPUs, 2 free of 4: waits for room
    cluster.advance(1)
    for _ in range(3):
        cluster.advance(60)
        service.recorder.step(force_flush=True)
    cache.wait_for(lambda s: _queued(s, "wide"), timeout=5)
    place = _place(Client().get("/jobs/default/wide/").content.decode())
    assert "Estimate: gangs of this queue typically waited " in place, place
    assert "(estimated median, last 7 days); this one has waited 3 min so far." in place, place


def test_no_wait_is_estimated_while_the_scheduler_is_down(recorded):
    from dashboard.sim import components

    cluster, cache, service = recorded
    gpu_job(cluster, "stalled", replicas=3, seconds=None)  # 3 GPUs, 2 free of 4: waits for room
    for _ in range(3):
        cluster.advance(1)
        service.recorder.step(force_flush=True)
    cache.wait_for(lambda s: _queued(s, "stalled"), timeout=5)
    components.install(cluster.store)
    sim_faults(cluster, components_down=["volcano-scheduler"])
    _components_settled(cache, {"volcano-scheduler"})
    place = _place(Client().get("/jobs/default/stalled/").content.decode())
    assert place.endswith("No estimate while the Volcano scheduler is not running."), place
    assert "Estimate:" not in place, place
