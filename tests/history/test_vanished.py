"""Pods that went while no recorder watched: their rows end at the last time they were known to
exist, so GPU-hours never count a pod that is gone as running."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from dashboard.history import reads
from dashboard.history.fastforward import fast_forward, mirrored_cache
from dashboard.history.models import PodLifetime, QueueSample
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.history.service import HistoryService, override_service
from dashboard.kube import override_cluster_cache
from dashboard.presenters.clock import set_time_source
from dashboard.sim.kinds import JOB
from dashboard.volcano.phases import job_phase
from tests.history.conftest import drop_alias, sqlite_alias
from tests.history.helpers import add_nodes, gpu_job, recorder, settle

GPU = "nvidia.com/gpu"


def _running(snap, *names):
    jobs = [snap.jobs.get("default", n) for n in names]
    return all(job is not None and job_phase(job) == "Running" for job in jobs)


def _recording_jobs(cluster, make_live_cache, history_db, *names):
    """A live cache and a recorder on ``cluster``, with one running single-GPU-pod Job per name."""
    add_nodes(cluster)
    cache = make_live_cache(cluster)
    rec = recorder(cache, cluster, history_db, sample_seconds=10)
    rec.step()
    for job in names:
        gpu_job(cluster, job, replicas=1, seconds=None)
    settle(cache, cluster, lambda s: _running(s, *names), rec)
    return cache, rec


def test_a_pod_deleted_while_no_recorder_watched_ends_when_last_known(
    sim_cluster, make_live_cache, history_db
):
    cluster = sim_cluster
    cache, rec = _recording_jobs(cluster, make_live_cache, history_db, "kept", "gone")
    for _ in range(60):  # a minute of running without a change of the pods
        cluster.advance(1)
        rec.step()
    rec.step(force_flush=True)
    known = cluster.clock.now()
    cache.remove_listener(rec.listener)
    cache.stop()

    # While no recorder watches, the Job "gone" and its pod are deleted; ten minutes pass.
    cluster.store.delete(JOB, "default", "gone")
    cluster.advance(600)
    assert not [p for p in cluster.store.list("pods")[0] if p["metadata"]["name"].startswith("gone-")]

    cache2 = make_live_cache(cluster)
    rec2 = recorder(cache2, cluster, history_db, sample_seconds=10)
    rec2.step(force_flush=True)
    gone = PodLifetime.objects.using(history_db).get(job="gone")
    kept = PodLifetime.objects.using(history_db).get(job="kept")
    assert gone.vanished and gone.deleted is not None
    # The last time the recorder knew it existed: at most one sampling interval before it stopped.
    assert known - timedelta(seconds=10) <= gone.deleted <= known
    assert kept.deleted is None and not kept.vanished
    spans = reads.job_pods(history_db, "default", "gone", known - timedelta(hours=1))
    assert [p.vanished for p in spans] == [True]

    now = cluster.clock.now()
    (row,) = reads.usage_hours(history_db, now - timedelta(hours=1), now, "queue")
    expected = ((gone.deleted - gone.started) + (now - kept.started)).total_seconds() / 3600
    assert row.gpu_hours == pytest.approx(expected, abs=1e-6)


END = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
LIVE_MINUTES = 20


@pytest.fixture(scope="module")
def demo_then_live(tmp_path_factory, django_db_blocker):
    """Two hours of the demo fast-forwarded to END, then the live demo's cluster (same scenario
    and seed, other uids) recorded from END for LIVE_MINUTES: what `make demo` serves."""
    from dashboard.sim.cluster import SimulatedCluster

    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path_factory.mktemp("demo-live") / "history.sqlite3")
        try:
            from django.core.management import call_command

            call_command("migrate", "history", database=alias, verbosity=0)
            fast_forward(alias, END, hours=2)
            past_open = PodLifetime.objects.using(alias).filter(deleted=None).count()
            live = SimulatedCluster(seed=0, scenario="demo", controllers=True, start_time=END)
            cache, _mirror = mirrored_cache(live)
            rec = Recorder(cache, alias, RecorderOptions(flush_seconds=0), clock=live.clock.now)
            cache.add_listener(rec.listener)
            rec.step()
            for _ in range(LIVE_MINUTES):
                live.advance(60)
                rec.step()
            cache.remove_listener(rec.listener)
            previous = set_time_source(live.clock.now)
            try:
                service = HistoryService(cache, alias, record=False)
                with override_cluster_cache(cache), override_service(service):
                    yield live, alias, past_open
            finally:
                set_time_source(previous)
        finally:
            drop_alias(alias)


def test_the_fast_forward_ends_with_its_pods_closed(demo_then_live):
    _live, alias, past_open = demo_then_live
    assert past_open == 0
    closed = PodLifetime.objects.using(alias).filter(vanished=True)
    assert closed.exists() and set(closed.values_list("deleted", flat=True)) == {END}


def test_demo_usage_gpu_hours_are_the_queues_allocated_gpu_hours(demo_then_live):
    live, alias, _past_open = demo_then_live
    now = live.clock.now()
    rows = list(
        csv.reader(io.StringIO(Client().get("/usage/?window=24h&by=queue&format=csv").content.decode()))
    )
    usage = {r[0]: float(r[1]) for r in rows[1:]}
    allocated: dict[str, float] = {}
    samples = QueueSample.objects.using(alias).filter(resource=GPU, at__gte=now - timedelta(hours=24))
    for queue, amount in samples.values_list("queue", "allocated"):
        allocated[queue] = allocated.get(queue, 0.0) + (amount or 0.0) / 60  # a sample per minute
    # A parent queue's allocation is its children's: leaf queues only.
    parents = {(q.get("spec") or {}).get("parent") for q in live.store.list("queues")[0]}
    busy = [q for q, hours in allocated.items() if hours > 1 and q not in parents]
    assert "hpc-training" in busy
    for queue in busy:
        # Allocation begins at binding, running time at the kubelet's start (a few seconds later).
        assert usage.get(queue, 0.0) == pytest.approx(allocated[queue], rel=0.01), queue


def test_the_sparklines_now_is_the_newest_sample_not_the_hours_mean(demo_then_live):
    """20 minutes into the live demo the last hour has 21 samples: "now" is the newest one, and the
    peak the highest sample of the 24 h, never below "now"."""
    import statistics

    from dashboard.views.history import amount_text

    live, alias, _past_open = demo_then_live
    newest = QueueSample.objects.using(alias).order_by("-at").values_list("at", flat=True).first()
    page = Client().get("/queues/").content.decode()
    differs = 0
    queues = QueueSample.objects.using(alias).filter(at=newest, resource=GPU).values_list("queue", flat=True)
    for queue in sorted(queues):
        samples = QueueSample.objects.using(alias).filter(queue=queue, resource=GPU)
        now = samples.get(at=newest).allocated
        hour = samples.filter(at__gte=newest.replace(minute=0, second=0, microsecond=0))
        mean = statistics.fmean(a or 0.0 for a in hour.values_list("allocated", flat=True))
        fmt = amount_text(GPU)
        row = page.split(f'data-queue="{queue}"', 1)[1].split("</tr>", 1)[0]
        if f"{GPU} allocated over" not in row:  # a queue without GPUs shows its cpu
            continue
        day = samples.filter(at__gte=newest - timedelta(hours=24), allocated__isnull=False)
        peak = max(day.values_list("allocated", flat=True))
        assert peak >= (now or 0.0)
        assert f"{GPU} allocated over the last 24 h: now {fmt(now)}, peak {fmt(peak)}" in row, queue
        differs += fmt(now) != fmt(mean)
    assert differs


def test_a_parent_queues_history_says_whose_counts_each_part_shows(demo_then_live):
    """A parent's usage is its status.allocated (children included); its PodGroups chart and wait
    table count only its own PodGroups: each says so. A leaf queue's say nothing."""
    live, _alias, _past_open = demo_then_live
    queues = live.store.list("queues")[0]
    parents = {(q.get("spec") or {}).get("parent") for q in queues} - {None}
    names = {q["metadata"]["name"] for q in queues}
    parent = next(p for p in sorted(parents) if p in names and p != "root")
    leaf = next(n for n in sorted(names) if n not in parents)
    page = Client().get(f"/queues/{parent}/").content.decode()
    history = page.split("data-history>", 1)[1].split("</section>", 1)[0]
    assert 'data-scope="usage">Allocated as the queue reports it, children included.' in history
    assert 'data-chart="' in history.split('data-scope="usage"', 1)[1]
    assert """data-scope="waits">This queue's own PodGroups, not its children's.""" in history
    if "PodGroups by phase" in history:
        assert 'data-scope="podgroups"' in history
    leaf_page = Client().get(f"/queues/{leaf}/").content.decode()
    assert "data-history>" in leaf_page and "data-scope=" not in leaf_page


def test_pods_that_turn_forbidden_are_not_recorded_as_deleted(sim_cluster, make_live_cache, history_db):
    from tests.kube.test_informers import faults

    cluster = sim_cluster
    cache, rec = _recording_jobs(cluster, make_live_cache, history_db, "kept")
    rec.step(force_flush=True)
    assert PodLifetime.objects.using(history_db).get(job="kept").deleted is None

    faults(cluster, forbidden=["pods"], drop_watches=True)
    cache.wait_for(lambda s: s.pods.state.name == "forbidden", timeout=10)
    rec.step(force_flush=True)
    assert PodLifetime.objects.using(history_db).get(job="kept").deleted is None
    faults(cluster, reset=True)
    cache.wait_for(lambda s: s.pods.state.name == "synced" and len(s.pods) > 0, timeout=15)
    rec.step(force_flush=True)
    assert PodLifetime.objects.using(history_db).get(job="kept").deleted is None
