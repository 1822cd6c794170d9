"""A Jobs list row is built once and reused while its Job, PodGroup and pods are the same dicts
(rows.JOB_ROWS); a changed pod, a changed Job or another language builds it again."""

from __future__ import annotations

import copy

import pytest
from django.utils import translation

from dashboard.kube import get_cluster_cache
from dashboard.presenters.clock import reference_now
from dashboard.views import rows
from tests.pages.helpers import create_seen, kind

PODS = kind("", "pods")
JOBS = kind("batch.volcano.sh", "jobs")


@pytest.fixture(scope="module")
def jr_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=11, name="jr") as pair:
        yield pair


def _job_with_pods(cluster, cache):
    """A Job in the sim with two pods labelled as its own (created once per module)."""
    ns, name = "rows", "memo-job"
    snap = get_cluster_cache().snapshot()
    if (job := snap.jobs.get(ns, name)) is not None:
        return job
    create_seen(
        cluster,
        cache,
        ("batch.volcano.sh", "jobs"),
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"minAvailable": 2, "queue": "default", "tasks": [{"name": "w", "replicas": 2}]},
            "status": {"state": {"phase": "Running"}, "running": 2},
        },
    )
    for i in range(2):
        create_seen(
            cluster,
            cache,
            ("", "pods"),
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-w-{i}",
                    "namespace": ns,
                    "labels": {"volcano.sh/job-name": name},
                },
                "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]},
                "status": {"phase": "Running"},
            },
        )
    cache.wait_for(lambda s: len(s.pods_for_job(s.jobs.get(ns, name))) == 2, timeout=10)
    return get_cluster_cache().snapshot().jobs.get(ns, name)


def test_a_row_is_reused_until_one_of_its_pods_changes(jr_cluster):
    cluster, cache = jr_cluster
    snap = get_cluster_cache().snapshot()
    job = _job_with_pods(cluster, cache)
    snap = get_cluster_cache().snapshot()
    now = reference_now(snap)
    first = rows.job_row(snap, job, now)
    assert rows.job_row(snap, job, now) is first
    # Another language gets its own row (the hints and phase label are text).
    with translation.override("zh-hans"):
        assert rows.job_row(snap, job, now) is not first
    pod = copy.deepcopy(snap.pods_for_job(job)[0])
    old = pod["metadata"]["resourceVersion"]
    pod["metadata"].setdefault("labels", {})["touched"] = "1"
    cluster.store.update(PODS, pod)
    cache.wait_for(
        lambda s: any(
            p["metadata"]["resourceVersion"] != old and p["metadata"].get("labels", {}).get("touched")
            for p in s.pods_for_job(job)
        ),
        timeout=10,
    )
    snap2 = get_cluster_cache().snapshot()
    again = rows.job_row(snap2, snap2.jobs.get(job["metadata"]["namespace"], job["metadata"]["name"]), now)
    assert again is not first
    assert again == rows._job_row(
        again["job"],
        again["podgroup"],
        rows.related(snap2.pods_for_job, again["job"]),
        again["queue"],
        again["queue_missing"],
    )


def test_a_changed_job_builds_its_row_again_with_the_new_counters(jr_cluster):
    cluster, cache = jr_cluster
    snap = get_cluster_cache().snapshot()
    job = _job_with_pods(cluster, cache)
    snap = get_cluster_cache().snapshot()
    now = reference_now(snap)
    first = rows.job_row(snap, job, now)
    changed = copy.deepcopy(job)
    changed.setdefault("status", {})["failed"] = 7
    cluster.store.update(JOBS, changed, status=True)
    ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
    cache.wait_for(lambda s: (s.jobs.get(ns, name) or {}).get("status", {}).get("failed") == 7, timeout=10)
    snap2 = get_cluster_cache().snapshot()
    row = rows.job_row(snap2, snap2.jobs.get(ns, name), now)
    assert row is not first and row["failed"] == 7
