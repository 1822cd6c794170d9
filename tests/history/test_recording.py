"""The recorder against the simulated cluster, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dashboard.history import reads
from dashboard.history.models import Admission, PhaseTransition, PodLifetime, QueuePhaseSample, QueueSample
from dashboard.volcano.history import admission_wait, percentile
from dashboard.volcano.phases import job_phase
from tests.history.helpers import add_nodes, gpu_job, recorder, settle


def _phase(snap, name):
    job = snap.jobs.get("default", name)
    return job_phase(job) if job else ""


def _pods_finished(snap, name, count):
    """``count`` pods of Job ``name`` seen Succeeded: the pod watch is its own stream and may
    deliver the pods' last update after the Job's."""
    pods = [
        p
        for p in snap.pods.all()
        if (p["metadata"].get("labels") or {}).get("volcano.sh/job-name") == name
        and (p.get("status") or {}).get("phase") == "Succeeded"
    ]
    return len(pods) == count


@pytest.fixture
def cluster(sim_cluster):
    add_nodes(sim_cluster)
    return sim_cluster


def test_records_transitions_pods_and_samples_from_the_watch(cluster, make_live_cache, history_db):
    cache = make_live_cache(cluster)
    rec = recorder(cache, cluster, history_db, sample_seconds=10)
    rec.step()
    assert rec.status().state == "recording", rec.status()
    gpu_job(cluster, "train", replicas=2, seconds=30)
    settle(cache, cluster, lambda s: _phase(s, "train") == "Running", rec)
    settle(cache, cluster, lambda s: _phase(s, "train") == "Completed", rec, limit=120)
    cache.wait_for(lambda s: _pods_finished(s, "train", 2), timeout=10)
    rec.step(force_flush=True)

    jobs = PhaseTransition.objects.using(history_db).filter(kind="Job", name="train").order_by("seen_at")
    phases = [t.phase for t in jobs]
    assert phases[0] == "Pending" and "Running" in phases and phases[-1] == "Completed"
    assert all(t.queue == "default" and t.object_time is not None for t in jobs)
    groups = PhaseTransition.objects.using(history_db).filter(kind="PodGroup", namespace="default")
    assert {"Inqueue", "Running"} <= {t.phase for t in groups}

    pods = list(PodLifetime.objects.using(history_db).filter(job="train"))
    assert len(pods) == 2
    for pod in pods:
        assert pod.gpu == 1 and pod.cpu == 1 and pod.queue == "default" and pod.node
        assert pod.created <= pod.scheduled <= pod.started < pod.finished
        assert pod.exit_code == 0 and pod.phase == "Succeeded"
        # startTime is when the kubelet accepted the pod; the image pull comes before the 30 s run.
        assert 30 <= (pod.finished - pod.started).total_seconds() <= 40

    samples = QueueSample.objects.using(history_db).filter(queue="default", resource="nvidia.com/gpu")
    assert samples.count() >= 3
    assert max(s.allocated or 0 for s in samples) == 2
    assert QueuePhaseSample.objects.using(history_db).filter(queue="default", phase="Running").exists()
    assert rec.status().dropped == 0 and rec.status().written > 0
    admissions = Admission.objects.using(history_db).filter(queue="default")
    assert sorted(admissions.values_list("running", "wait")) == _waits(groups)
    assert admissions.count() == len({t.uid for t in groups if t.phase == "Running"})
    week = cluster.clock.now() - timedelta(days=7)
    assert reads.wait_percentile(history_db, "default", week, 50) == percentile(
        [w for _at, w in _waits(groups)], 50
    )


def _waits(transitions):
    """(Running, seconds waited) per PodGroup from its transitions, computed here row by row."""
    firsts, created = {}, {}
    for t in transitions:
        at = t.object_time or t.seen_at
        firsts[t.uid, t.phase] = min(at, firsts.get((t.uid, t.phase), at))
        created[t.uid] = t.created
    out = []
    for uid, made in created.items():
        running = firsts.get((uid, "Running"))
        wait = admission_wait(made, firsts.get((uid, "Inqueue")), running)
        if running is not None and wait is not None:
            out.append((running, wait.total_seconds()))
    assert out
    return sorted(out)


def test_a_restart_keeps_history_and_adds_no_duplicates(cluster, make_live_cache, history_db):
    cache = make_live_cache(cluster)
    rec = recorder(cache, cluster, history_db)
    rec.step()
    gpu_job(cluster, "long", replicas=1, seconds=None)
    settle(cache, cluster, lambda s: _phase(s, "long") == "Running", rec)
    rec.step(force_flush=True)
    cache.remove_listener(rec.listener)
    before = sorted(PhaseTransition.objects.using(history_db).values_list("key", flat=True))
    cache.stop()

    # A new dashboard process: a new cache lists everything again, a new recorder starts.
    cache2 = make_live_cache(cluster)
    rec2 = recorder(cache2, cluster, history_db)
    rec2.step(force_flush=True)
    after = sorted(PhaseTransition.objects.using(history_db).values_list("key", flat=True))
    assert after == before
    assert PodLifetime.objects.using(history_db).filter(job="long").count() == 1


def test_retention_prunes_old_rows(cluster, make_live_cache, history_db):
    cache = make_live_cache(cluster)
    rec = recorder(cache, cluster, history_db, retention_days=1, sample_seconds=3)
    rec.step()
    gpu_job(cluster, "short", replicas=1, seconds=5)
    settle(cache, cluster, lambda s: _phase(s, "short") == "Completed", rec, limit=60)
    rec.step(force_flush=True)
    assert PhaseTransition.objects.using(history_db).filter(name="short").exists()
    assert Admission.objects.using(history_db).filter(namespace="default").exists()
    assert QueueSample.objects.using(history_db).exists()
    cluster.advance(2 * 86400)
    rec._next_prune = None
    rec.step(force_flush=True)
    assert not PhaseTransition.objects.using(history_db).filter(name="short").exists()
    assert not Admission.objects.using(history_db).exists()
    assert not PodLifetime.objects.using(history_db).filter(job="short", finished__isnull=False).exists()
    # The sample of this step is new; every older one is gone.
    assert all(s.at == cluster.clock.now() for s in QueueSample.objects.using(history_db))


def test_pod_changes_are_recorded_without_a_snapshot_per_step(cluster, make_live_cache, history_db):
    """A pod's queue comes from the PodGroup changes the recorder was handed: steps that record
    pod changes take no cache snapshot (each one publishes every store, and the next watch
    event then copies the store whole)."""
    cache = make_live_cache(cluster)
    rec = recorder(cache, cluster, history_db, sample_seconds=3600)
    rec.step()
    gpu_job(cluster, "train", replicas=2, seconds=30)
    settle(cache, cluster, lambda s: _phase(s, "train") == "Running", rec)
    rec.step(force_flush=True)
    in_step, taken = [False], []
    real_snapshot, real_step = cache.snapshot, rec.step

    def snapshot(*args, **kwargs):
        taken.extend([1] if in_step[0] else [])
        return real_snapshot(*args, **kwargs)

    def step(*args, **kwargs):
        in_step[0] = True
        try:
            real_step(*args, **kwargs)
        finally:
            in_step[0] = False

    cache.snapshot, rec.step = snapshot, step
    written = rec.status().written
    settle(cache, cluster, lambda s: _pods_finished(s, "train", 2), rec, limit=120)
    rec.step(force_flush=True)
    assert rec.status().dropped == 0 and rec.status().written > written
    assert taken == []
    pods = list(PodLifetime.objects.using(history_db).filter(job="train"))
    assert len(pods) == 2 and all(p.queue == "default" and p.phase == "Succeeded" for p in pods)
