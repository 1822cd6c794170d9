"""The cache and derive.py over the demo scenario's objects, as the simulated controllers write
them (every phase exists after DEMO_SETTLE_SECONDS): nothing crashes, links resolve, and pending
work gets an explanation."""

from __future__ import annotations

import pytest

from dashboard.kube import derive


@pytest.fixture
def demo_snapshot(demo_cluster, live_cache):
    return live_cache.snapshot()


def test_demo_is_cached_completely(demo_cluster, demo_snapshot):
    from dashboard.sim.kinds import kind_by_name

    for name, (kind, group) in {
        "jobs": ("Job", "batch.volcano.sh"),
        "podgroups": ("PodGroup", "scheduling.volcano.sh"),
        "queues": ("Queue", "scheduling.volcano.sh"),
    }.items():
        items, _ = demo_cluster.store.list(kind_by_name(kind, group))
        assert len(getattr(demo_snapshot, name)) == len(items), name
    assert len(demo_snapshot.jobs) > 0 and len(demo_snapshot.pods) > 0 and len(demo_snapshot.events) > 0


def test_derive_runs_on_every_demo_object(demo_snapshot):
    statuses = set()
    for pod in demo_snapshot.pods.all():
        statuses.add(derive.pod_display_status(pod).status)
    assert "Running" in statuses
    for job in demo_snapshot.jobs.all():
        progress = derive.job_gang_progress(job)
        assert progress.required >= 0
        derive.explain_pending_from_snapshot(demo_snapshot, job)
    for pg in demo_snapshot.podgroups.all():
        derive.podgroup_gang_progress(pg, demo_snapshot.pods_for_podgroup(pg))
    for queue in demo_snapshot.queues.all():
        for usage in derive.queue_usage(queue):
            assert not usage.errors, usage
    counts = derive.podgroup_counts_per_queue(demo_snapshot.podgroups.all())
    assert sum(sum(c.values()) for c in counts.values()) == len(demo_snapshot.podgroups)


def test_demo_links_and_pending_explanations(demo_snapshot):
    phases = {derive.phase_of(j) for j in demo_snapshot.jobs.all()}
    assert {"Running", "Pending"} <= phases, phases
    for job in demo_snapshot.jobs.all():
        pg = demo_snapshot.podgroup_for_job(job)
        if pg is not None:
            assert demo_snapshot.job_for_podgroup(pg) is job
        for pod in demo_snapshot.pods_for_job(job):
            assert pod["metadata"]["namespace"] == job["metadata"]["namespace"]
        if derive.phase_of(job) == "Pending":
            reasons = derive.explain_pending_from_snapshot(demo_snapshot, job)
            assert reasons, f"no explanation for pending job {job['metadata']['name']}"
    root_children = demo_snapshot.child_queues("root")
    assert any(q["metadata"]["name"] == "default" for q in root_children)
    with_events = [j for j in demo_snapshot.jobs.all() if demo_snapshot.events_for(j)]
    assert with_events
