"""History on the pages: a Queue's charts, /usage/ (table, chart, CSV), and a store that is down."""

from __future__ import annotations

import csv
import io

import pytest
from django.conf import settings
from django.test import Client

from dashboard.history.models import PodLifetime
from dashboard.history.recorder import RecorderOptions
from dashboard.history.service import HistoryService, override_service
from dashboard.kube import override_cluster_cache
from dashboard.presenters.clock import set_time_source
from dashboard.sim.kinds import JOB, POD
from dashboard.volcano.phases import job_phase, podgroup_phase, podgroup_queued
from dashboard.volcano.time import parse_time
from tests.history.conftest import add_alias, drop_alias, sqlite_alias
from tests.history.helpers import add_nodes, gpu_job, settle


def _running(name):
    def check(snap):
        job = snap.jobs.get("default", name)
        return job is not None and job_phase(job) == "Running"

    return check


@pytest.fixture
def recorded(sim_cluster, make_live_cache, tmp_path, django_db_blocker):
    """A cluster where Job "train" (2 pods x 1 GPU) has run for an hour, recorded into SQLite."""
    add_nodes(sim_cluster)
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "h.sqlite3")
        cache = make_live_cache(sim_cluster)
        opts = RecorderOptions(flush_seconds=0, sample_seconds=60)
        service = HistoryService(cache, alias, opts, clock=sim_cluster.clock.now)
        rec = service.recorder
        cache.add_listener(rec.listener)
        rec.step()
        gpu_job(sim_cluster, "train", replicas=2, seconds=None)
        settle(cache, sim_cluster, _running("train"), rec)
        for _ in range(60):
            sim_cluster.advance(60)
            rec.step()
        rec.step(force_flush=True)
        previous = set_time_source(sim_cluster.clock.now)
        try:
            with override_cluster_cache(cache), override_service(service):
                yield sim_cluster, cache, service
        finally:
            set_time_source(previous)
            drop_alias(alias)


def test_queue_page_charts_usage_and_podgroups(recorded):
    client = Client()
    html = client.get("/queues/default/?window=24h").content.decode()
    assert "data-history" in html and 'data-chart="nvidia.com/gpu"' in html
    assert "<polyline" in html and "PodGroups by phase" in html
    assert "data-history-notice" not in html
    assert client.get("/queues/default/?window=1h").status_code == 200


def test_usage_page_gpu_hours_match_the_pods(recorded):
    cluster, _cache, _service = recorded
    now = cluster.clock.now()
    pods = [p for p in cluster.store.list(POD, "default")[0] if p["metadata"]["name"].startswith("train-")]
    expected = sum((now - parse_time(p["status"]["startTime"])).total_seconds() / 3600 for p in pods)
    assert len(pods) == 2 and expected > 1.9
    client = Client()
    resp = client.get("/usage/?window=24h&by=queue")
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "data-usage" in html and "data-bars" in html
    rows = list(
        csv.reader(io.StringIO(client.get("/usage/?window=24h&by=queue&format=csv").content.decode()))
    )
    assert rows[0] == ["queue", "gpu_hours", "cpu_hours", "pods"]
    default = next(r for r in rows if r[0] == "default")
    assert float(default[1]) == pytest.approx(expected, abs=0.002)
    assert float(default[2]) == pytest.approx(expected, abs=0.002)  # 1 core per pod
    by_ns = list(csv.reader(io.StringIO(client.get("/usage/?by=namespace&format=csv").content.decode())))
    assert by_ns[1][0] == "default"


def test_a_store_that_is_down_is_a_notice_and_the_recorder_survives(recorded, django_db_blocker):
    cluster, cache, good = recorded
    with django_db_blocker.unblock():
        # Nothing listens on port 9: the database is down.
        alias = add_alias(
            "hist_down",
            {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": "history",
                "USER": "x",
                "HOST": "127.0.0.1",
                "PORT": "9",
                "OPTIONS": {"connect_timeout": 1},
                # As the dashboard keeps its history connections (volcano_ui/settings.py).
                **settings.HISTORY_CONNECTION,
            },
        )
        try:
            down = HistoryService(cache, alias, RecorderOptions(flush_seconds=0), clock=cluster.clock.now)
            cache.add_listener(down.recorder.listener)
            down.recorder.step()
            assert down.status().state == "degraded" and down.status().error
            with override_service(down):
                client = Client()
                for url in ("/queues/default/", "/usage/", "/queues/", "/jobs/default/train/", "/"):
                    resp = client.get(url)
                    assert resp.status_code == 200, url
                html = client.get("/queues/default/").content.decode()
                assert "data-history-notice" in html and "History cannot be read" in html
                assert "data-history-notice" in client.get("/usage/").content.decode()
            # The informers go on: a change after the outage reaches the cache.
            gpu_job(cluster, "after", replicas=1, seconds=None)
            cluster.advance(1)
            cache.wait_for(lambda s: s.jobs.get("default", "after") is not None, timeout=5)
            cache.remove_listener(down.recorder.listener)
        finally:
            drop_alias(alias)


def test_job_page_timeline_wait_and_place_in_queue(recorded):
    cluster, cache, service = recorded
    client = Client()
    html = client.get("/jobs/default/train/").content.decode()
    assert "data-job-history" in html and html.count('<rect class="gantt-') >= 4  # 2 pods x pending..running
    waited = html.split("<p data-waited")[1].split("</p>")[0]
    assert "typical for queue default is ≈ " in waited and "(estimated median, last 7 days)" in waited
    # How it is estimated: a tooltip, and the same words for a screen reader.
    note = "estimated from the recorded waits counted in log-spaced ranges"
    assert note in waited.split(">")[0] and note in waited.split("data-typical-note>")[1]
    # Two more gangs that cannot be placed (4 GPUs, 2 in use): they wait, in creation order.
    gpu_job(cluster, "big-a", replicas=3, seconds=None)
    cluster.advance(1)
    gpu_job(cluster, "big-b", replicas=3, seconds=None)
    for _ in range(5):
        cluster.advance(1)
        service.recorder.step(force_flush=True)
    cache.wait_for(lambda s: _queued(s, "big-a") and _queued(s, "big-b"), timeout=5)
    page = client.get("/jobs/default/big-b/").content.decode()
    assert "data-queue-place" in page and "Number 2 of 2 waiting gangs in queue default" in page
    assert "Estimate:" in page


def _queued(snap, job_name):
    """The Job's PodGroup is in the cache, in a phase that waits for admission."""
    job = snap.jobs.get("default", job_name)
    pg = snap.podgroup_for_job(job) if job else None
    return pg is not None and podgroup_queued(podgroup_phase(pg))


def test_history_pages_are_well_formed(recorded):
    from tests.test_templates import markup_errors

    client = Client()
    for url in (
        "/queues/default/?window=7d",
        "/jobs/default/train/",
        "/usage/",
        "/usage/?by=namespace&window=14d",
    ):
        resp = client.get(url)
        assert resp.status_code == 200, url
        assert markup_errors(resp.content.decode()) == [], url


def _sparkline(html, queue):
    row = html.split(f'data-queue="{queue}"', 1)[1].split("</tr>", 1)[0]
    return row.split('<svg class="sparkline"', 1)[1].split("</svg>", 1)[0] if "data-sparkline" in row else ""


def test_queues_and_overview_show_a_sparkline_of_the_last_day(recorded):
    cluster, _cache, service = recorded
    client = Client()
    html = client.get("/queues/").content.decode()
    assert "Last 24 h" in html
    spark = _sparkline(html, "default")
    # Two pods of 1 GPU each: 2 GPUs allocated the whole hour.
    assert 'aria-label="nvidia.com/gpu allocated over the last 24 h: now 2, peak 2"' in spark
    assert "<title>nvidia.com/gpu allocated over the last 24 h: now 2, peak 2</title>" in spark
    assert "<polyline points=" in spark
    overview = client.get("/").content.decode()
    assert "data-sparkline" in overview and "now 2, peak 2" in overview
    # An hour later the row shows the newer window, though the Queue itself did not change.
    for _ in range(60):
        cluster.advance(60)
        service.recorder.step()
    service.recorder.step(force_flush=True)
    later = _sparkline(client.get("/queues/").content.decode(), "default")
    assert later and later != spark


def test_without_history_the_queue_tables_have_no_sparkline_column(recorded):
    with override_service(None):
        client = Client()
        for url in ("/queues/", "/"):
            html = client.get(url).content.decode()
            assert "data-sparkline" not in html and "Last 24 h" not in html, url


def test_a_history_being_filled_says_how_far_it_is(recorded, django_db_blocker):
    from datetime import timedelta

    from dashboard.history.models import HistoryFill

    cluster, _cache, service = recorded
    end = cluster.clock.now()
    with django_db_blocker.unblock():
        fill = HistoryFill.objects.using(service.using).create(
            start=end - timedelta(hours=24), end=end, reached=end - timedelta(hours=21)
        )
        client = Client()
        text = "History is being filled: 3 of 24 h"
        for url in ("/queues/", "/", "/queues/default/", "/usage/"):
            assert text in client.get(url).content.decode(), url
        fill.reached, fill.done = end, True
        fill.save()
        for url in ("/queues/", "/queues/default/"):
            assert "History is being filled" not in client.get(url).content.decode(), url


def test_long_windows_read_the_hourly_means_the_recorder_stored(recorded, django_db_blocker):
    from datetime import UTC, timedelta

    from django.db.models import Avg
    from django.db.models.functions import TruncHour

    from dashboard.history import reads
    from dashboard.history.models import QueueHourly, QueuePhaseHourly, QueueSample

    cluster, _cache, service = recorded
    for _ in range(90):  # into a second closed hour
        cluster.advance(60)
        service.recorder.step()
    service.recorder.step(force_flush=True)
    now = cluster.clock.now()
    with django_db_blocker.unblock():
        using = service.using
        stored = QueueHourly.objects.using(using).filter(queue="default", resource="nvidia.com/gpu")
        assert stored.count() >= 2 and QueuePhaseHourly.objects.using(using).filter(queue="default").exists()
        # Every hour before the current one is stored; the week reads as the samples' hourly means.
        assert max(stored.values_list("hour", flat=True)) == now.replace(minute=0, second=0) - timedelta(
            hours=1
        )
        expected = dict(
            QueueSample.objects.using(using)
            .filter(queue="default", resource="nvidia.com/gpu")
            .annotate(hour=TruncHour("at", tzinfo=UTC))
            .values("hour")
            .annotate(a=Avg("allocated"))
            .values_list("hour", "a")
        )
        series = next(
            s
            for s in reads.queue_usage(using, "default", now - timedelta(days=7), now)
            if s.resource == "nvidia.com/gpu"
        )
        assert dict(series.allocated) == pytest.approx(expected)
        assert "data-history" in Client().get("/queues/default/?window=7d").content.decode()


def test_a_recreated_job_shows_only_its_own_pods(recorded):
    """A Job deleted and created again under its name: the timeline holds the new Job's pods, not
    the pods of the earlier Job of that name (pods are created after their Job, on the same API
    server clock)."""
    cluster, cache, service = recorded
    gpu_job(cluster, "again", replicas=1, seconds=5)

    def completed(snap):
        job = snap.jobs.get("default", "again")
        return job is not None and job_phase(job) == "Completed"

    # The cache (and so the recorder) must have seen the first Job's pod finish before it goes.
    settle(cache, cluster, completed, service.recorder)
    service.recorder.step(force_flush=True)
    cluster.store.delete(JOB, "default", "again")
    cache.wait_for(lambda s: s.jobs.get("default", "again") is None, timeout=10)
    cluster.advance(60)
    gpu_job(cluster, "again", replicas=1, seconds=None)
    settle(cache, cluster, _running("again"), service.recorder)
    service.recorder.step(force_flush=True)
    assert PodLifetime.objects.using(service.using).filter(job="again").count() == 2
    html = Client().get("/jobs/default/again/").content.decode()
    assert html.count("data-gantt-row") == 1


def test_a_queues_charts_are_read_and_drawn_once_per_sample(recorded, monkeypatch):
    from dashboard.history import reads
    from dashboard.views import history as history_views

    cluster, _cache, service = recorded
    calls = []
    real = reads.queue_usage

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(reads, "queue_usage", counted)
    monkeypatch.setattr(history_views, "QUEUE_CHARTS", type(history_views.QUEUE_CHARTS)(1 << 20))
    client = Client()

    def charts(path="/queues/default/?window=1h", **headers):
        html = client.get(path, **headers).content.decode()
        start = html.index("data-history")
        return html[start : html.index("<h3>", start)]

    first = charts()
    assert charts() == first and len(calls) == 1  # a reload: no read, the same drawing
    assert charts("/queues/default/?window=24h") != first and len(calls) == 2  # another window
    zh = charts(HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert zh != first and len(calls) == 3  # another language
    # A new sample: read and drawn again.
    cluster.advance(30)
    service.recorder.step(force_flush=True)
    cluster.advance(31)
    service.recorder.step(force_flush=True)
    after = charts()
    assert len(calls) == 4 and after != first
    # No new sample, but the clock moved on by more than CHART_REUSE_SECONDS: drawn again.
    cluster.advance(history_views.CHART_REUSE_SECONDS + 1)
    charts()
    assert len(calls) == 5
