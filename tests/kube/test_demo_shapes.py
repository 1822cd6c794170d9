"""The cache and the domain layer (dashboard/volcano) over the demo scenario's objects, as the
simulated controllers write them (every phase exists after DEMO_SETTLE_SECONDS): nothing crashes,
links resolve, and pending work gets an explanation."""

from __future__ import annotations

import pytest

from dashboard.volcano import gang, pending, phases, pods, queues
from dashboard.volcano.objects import name as name_of


def _why_pending(snap, job):
    """The why-pending facts of a Job, read from a Snapshot as the Job's page reads them."""
    pg = snap.podgroup_for_job(job)
    qname = queues.queue_of(pg or job)
    queue = snap.queues.get(None, qname)
    ctx = pending.PendingContext(
        job=job,
        podgroup=pg,
        queue=queue,
        queue_name=qname,
        pods=snap.pods_for_job(job),
        queue_lookup=lambda n: snap.queues.get(None, n),
        queue_children=snap.child_queues,
        inqueue_podgroups=lambda n: snap.podgroups.lookup("queue_phase", (n, "Inqueue")),
    )
    return pending.why_pending(ctx)


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


def test_domain_runs_on_every_demo_object(demo_snapshot):
    statuses = set()
    for pod in demo_snapshot.pods.all():
        statuses.add(pods.pod_display_status(pod).status)
    assert "Running" in statuses
    for job in demo_snapshot.jobs.all():
        progress = gang.job_gang(job)
        assert progress.required >= 0 and progress.trusted
        _why_pending(demo_snapshot, job)
    for pg in demo_snapshot.podgroups.all():
        assert gang.podgroup_gang(pg).trusted
    for queue in demo_snapshot.queues.all():
        assert queues.queue_ancestry(queue, lambda n: demo_snapshot.queues.get(None, n))[-1] is not None


def test_demo_links_and_pending_explanations(demo_snapshot):
    seen = {phases.job_phase(j) for j in demo_snapshot.jobs.all()}
    assert {"Running", "Pending"} <= seen, seen
    for job in demo_snapshot.jobs.all():
        pg = demo_snapshot.podgroup_for_job(job)
        if pg is not None:
            assert demo_snapshot.job_for_podgroup(pg) is job
        for pod in demo_snapshot.pods_for_job(job):
            assert pod["metadata"]["namespace"] == job["metadata"]["namespace"]
        if phases.job_phase(job) == "Pending":
            assert _why_pending(demo_snapshot, job), f"no explanation for pending job {name_of(job)}"
    root_children = demo_snapshot.child_queues("root")
    assert any(q["metadata"]["name"] == "default" for q in root_children)
    with_events = [j for j in demo_snapshot.jobs.all() if demo_snapshot.events_for(j)]
    assert with_events
