"""An open detail page whose object is deleted: every poll of its fragments answers 404 with the
X-Volcano-Gone header and a notice (static/dashboard/app.js shows it and stops polling), instead
of the page silently showing the last state as live."""

from __future__ import annotations

import pytest

from tests.pages.helpers import fragment_url, kind, text

ALL = ("jobs", "podgroups", "queues", "pods", "events")
HX = {"HX-Request": "true"}


def _objects() -> dict[str, dict]:
    meta = {"namespace": "ml", "resourceVersion": "3", "creationTimestamp": "2026-11-29T10:00:00Z"}
    return {
        "jobs": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "train", "uid": "u-job", **meta},
            "spec": {"queue": "default", "minAvailable": 1, "tasks": [{"name": "w", "replicas": 1}]},
            "status": {"state": {"phase": "Running"}, "running": 1},
        },
        "podgroups": {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "train-pg", "uid": "u-pg", **meta},
            "spec": {"queue": "default", "minMember": 1},
            "status": {"phase": "Running", "running": 1},
        },
        "queues": {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "team", "uid": "u-q", "resourceVersion": "2"},
            "spec": {"weight": 1},
            "status": {"state": "Open"},
        },
        "pods": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "train-w-0", "uid": "u-pod", **meta},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": "Running"},
        },
    }


URLS = {
    "jobs": "/jobs/ml/train/",
    "podgroups": "/podgroups/ml/train-pg/",
    "queues": "/queues/team/",
    "pods": "/pods/ml/train-w-0/",
}
LABELS = {"jobs": "Job", "podgroups": "PodGroup", "queues": "Queue", "pods": "Pod"}


@pytest.fixture
def cache(memory_cache):
    for k in ALL:
        memory_cache.store(k).mark_synced()
    for k, obj in _objects().items():
        memory_cache.store(k).upsert(obj)
    return memory_cache


@pytest.mark.parametrize("k", list(URLS))
def test_polls_of_a_deleted_objects_page_say_it_no_longer_exists(client, cache, k):
    page = client.get(URLS[k]).content.decode()
    assert 'id="gone-notice" hidden' in page
    polled = [f for f in ("status", "pods", "events", "jobs", "notices") if f'id="frag-{f}" hx-get=' in page]
    assert "notices" in polled and len(polled) >= 2
    cache.store(k).delete(_objects()[k])
    for frag in polled:
        resp = client.get(fragment_url(page, frag), headers=HX)
        assert resp.status_code == 404, frag
        assert resp["X-Volcano-Gone"] == "1"
        body = resp.content.decode()
        assert "<html" not in body and "data-gone" in body and "<script" not in body
        expected = f"This {LABELS[k]} no longer exists (deleted or renamed); the page shows its last known"
        assert expected in text(body)
    # Opened afresh (no htmx), the page is the ordinary 404 page, without the header.
    resp = client.get(URLS[k])
    assert resp.status_code == 404 and "X-Volcano-Gone" not in resp
    assert "Not found" in text(resp.content.decode())


def test_the_gone_notice_is_translated(client, cache):
    page = client.get(URLS["jobs"]).content.decode()
    cache.store("jobs").delete(_objects()["jobs"])
    client.cookies["django_language"] = "zh-hans"
    resp = client.get(fragment_url(page, "status"), headers=HX)
    assert resp.status_code == 404 and resp["X-Volcano-Gone"] == "1"
    assert "已不存在" in text(resp.content.decode())


def test_an_unrelated_404_poll_carries_no_gone_header(client, cache):
    resp = client.get("/no/such/page/?f=status&v=1", headers=HX)
    assert resp.status_code == 404 and "X-Volcano-Gone" not in resp


def test_a_job_deleted_in_the_simulated_cluster(client, sim_cluster, installed_cache):
    queue = _objects()["queues"]
    sim_cluster.store.create(kind("scheduling.volcano.sh", "queues"), queue, None)
    job = _objects()["jobs"]
    job["spec"]["queue"] = "team"
    job["metadata"] = {"name": "train", "namespace": "default"}
    sim_cluster.store.create(kind("batch.volcano.sh", "jobs"), job, "default")
    installed_cache.wait_for(lambda s: s.jobs.get("default", "train") is not None, timeout=10)
    page = client.get("/jobs/default/train/").content.decode()
    sim_cluster.store.delete(kind("batch.volcano.sh", "jobs"), "default", "train")
    installed_cache.wait_for(lambda s: s.jobs.get("default", "train") is None, timeout=10)
    resp = client.get(fragment_url(page, "status"), headers=HX)
    assert resp.status_code == 404 and resp["X-Volcano-Gone"] == "1"
    assert "This Job no longer exists" in text(resp.content.decode())
