"""Five-minute means: windows of hours (the Queue page's 24 h) read them instead of every sample,
and show what the samples they cover show. Migration 0006 writes them for an existing store."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from dashboard.history import reads, rollup
from dashboard.history.models import (
    QueueFiveMinute,
    QueueHourly,
    QueuePhaseFiveMinute,
    QueuePhaseHourly,
    QueuePhaseSample,
    QueueSample,
)
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.kube.cache import CacheOptions, ClusterCache
from dashboard.presenters.charts import line_chart
from tests.history.conftest import drop_alias, sqlite_alias

START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
NOW = START + timedelta(hours=26, minutes=47, seconds=31)  # an hour and more not rolled yet
MINUTE = timedelta(minutes=1)
PHASES = ("Pending", "Inqueue", "Running")


def _samples(model_sample, model_phase, rng: random.Random, gaps: bool) -> tuple[list, list]:
    """Samples of queue "q" (and "other") every minute from START to NOW; with ``gaps`` some
    unknown allocations and phases absent from some samples."""
    usage, counts = [], []
    at = START
    while at < NOW:
        for queue in ("q", "other"):
            for res in ("cpu", "memory"):
                allocated = None if gaps and rng.random() < 0.1 else rng.uniform(0, 64)
                usage.append(
                    model_sample(
                        at=at, queue=queue, resource=res, allocated=allocated, deserved=32.0, capability=64.0
                    )
                )
            for phase in PHASES:
                if not gaps or rng.random() < 0.7:
                    counts.append(model_phase(at=at, queue=queue, phase=phase, count=rng.randint(1, 40)))
        at += MINUTE
    return usage, counts


def _blocks(since: datetime, until: datetime):
    block = rollup.five_minutes_of(since)
    if block < since:
        block += rollup.FIVE_MINUTES
    while block < until:
        yield block, min(block + rollup.FIVE_MINUTES, until)
        block += rollup.FIVE_MINUTES


def _expected_usage(usage, since, until, field):
    """[(block start, mean of the block's known samples)] of queue "q"'s cpu: the raw computation."""
    out = []
    for start, end in _blocks(since, until):
        values = [
            getattr(s, field)
            for s in usage
            if s.queue == "q"
            and s.resource == "cpu"
            and start <= s.at < end
            and getattr(s, field) is not None
        ]
        out.append((start, sum(values) / len(values) if values else None))
    return out


def _expected_phases(counts, since, until):
    """{phase: [(block start, mean count)]} of queue "q": a sample time without the phase counts 0."""
    out: dict[str, list] = {p: [] for p in PHASES}
    for start, end in _blocks(since, until):
        rows = [c for c in counts if c.queue == "q" and start <= c.at < end]
        times = {c.at for c in rows}
        if not times:
            continue
        for phase in PHASES:
            out[phase].append((start, sum(c.count for c in rows if c.phase == phase) / len(times)))
    return out


def _approx(points):
    return [(at, None if v is None else pytest.approx(v, rel=1e-9)) for at, v in points]


def _write_and_roll(history_db, gaps: bool) -> tuple[list, list]:
    call_command("migrate", "history", database=history_db, verbosity=0)
    usage, counts = _samples(QueueSample, QueuePhaseSample, random.Random(3), gaps)
    QueueSample.objects.using(history_db).bulk_create(usage, batch_size=5000)
    QueuePhaseSample.objects.using(history_db).bulk_create(counts, batch_size=5000)
    rollup.roll(history_db, START, rollup.hour_of(NOW))  # as the recorder rolls the closed hours
    return usage, counts


def test_the_24h_window_reads_the_means_of_the_samples_it_covers(history_db):
    usage, counts = _write_and_roll(history_db, gaps=True)
    # Stored for the closed hours of the last FIVE_MINUTE_KEEP only.
    oldest = QueueFiveMinute.objects.using(history_db).order_by("at").values_list("at", flat=True).first()
    assert oldest == rollup.hour_of(NOW) - rollup.FIVE_MINUTE_KEEP
    assert QueuePhaseFiveMinute.objects.using(history_db).filter(at__lt=oldest).count() == 0
    since = NOW - timedelta(hours=24)
    (cpu,) = [s for s in reads.queue_usage(history_db, "q", since, NOW) if s.resource == "cpu"]
    for field in ("allocated", "deserved", "capability"):
        expected = [(at, v) for at, v in _expected_usage(usage, since, NOW, field) if v is not None]
        got = [(at, v) for at, v in getattr(cpu, field) if v is not None]
        assert got == _approx(expected)
    # The unrolled tail, the last block (partial) included, is averaged the same way.
    assert cpu.allocated[-1][0] == rollup.five_minutes_of(NOW)
    got_phases = reads.queue_phase_counts(history_db, "q", since, NOW)
    expected_phases = _expected_phases(counts, since, NOW)
    assert set(got_phases) == set(PHASES)
    for phase in PHASES:
        assert got_phases[phase] == _approx(expected_phases[phase])
    # The 1 h window stays raw; 7 days read the hourly means.
    hour = reads.queue_phase_counts(history_db, "q", NOW - timedelta(hours=1), NOW)
    hour_since = NOW - timedelta(hours=1)
    assert [at for at, _n in hour["Running"]] == sorted(
        {c.at for c in counts if c.queue == "q" and hour_since <= c.at < NOW}
    )
    week = reads.queue_usage(history_db, "q", NOW - timedelta(days=7), NOW)
    assert all(at.minute == 0 for s in week for at, _v in s.allocated)


def test_a_five_minute_chart_shows_the_mean_of_the_raw_samples_each_bucket_covers(history_db):
    usage, counts = _write_and_roll(history_db, gaps=False)
    since = NOW - timedelta(hours=24)
    (cpu,) = [s for s in reads.queue_usage(history_db, "q", since, NOW) if s.resource == "cpu"]

    def fmt(v: float) -> str:
        return f"{v:.6f}"

    chart = line_chart("cpu", [("allocated", "a", cpu.allocated, False)], since, NOW, fmt)
    # Each of the 96 buckets (15 min from ``since``): the mean of the samples whose five minutes
    # start in it (a sample counts in its block; every block but the newest holds five samples).
    span = (NOW - since) / 96
    expected = []
    for i in range(96):
        lo, hi = since + span * i, since + span * (i + 1)
        blocks: dict[datetime, list[float]] = {}
        for s in usage:
            block = rollup.five_minutes_of(s.at)
            if s.queue == "q" and s.resource == "cpu" and lo <= block < hi and block >= since:
                blocks.setdefault(block, []).append(s.allocated)
        values = [v for vs in blocks.values() for v in vs]
        if i < 95:
            assert all(len(vs) == 5 for vs in blocks.values())
            expected.append(fmt(sum(values) / len(values)))
        else:  # the newest block is partial: each block counts as one mean
            expected.append(fmt(sum(sum(vs) / len(vs) for vs in blocks.values()) / len(blocks)))
    assert [row[1] for row in chart.rows] == expected


def test_migration_0006_fills_the_five_minute_means_of_an_existing_store(tmp_path, django_db_blocker):
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "old.sqlite3")
        try:
            executor = MigrationExecutor(connections[alias])
            executor.migrate([("history", "0005_podlifetime_vanished")])
            old = executor.loader.project_state([("history", "0005_podlifetime_vanished")]).apps
            sample, phase = (
                old.get_model("history", "QueueSample"),
                old.get_model("history", "QueuePhaseSample"),
            )
            usage, counts = _samples(sample, phase, random.Random(5), gaps=True)
            sample.objects.using(alias).bulk_create(usage, batch_size=5000)
            phase.objects.using(alias).bulk_create(counts, batch_size=5000)
            newest = rollup.hour_of(NOW) - rollup.HOUR  # the hours rolled so far end with this one
            old.get_model("history", "QueueHourly").objects.using(alias).create(
                hour=newest, queue="q", resource="cpu", allocated=1.0
            )
            executor = MigrationExecutor(connections[alias])
            executor.migrate([("history", "0006_five_minute_means")])
            end = newest + rollup.HOUR
            start = end - rollup.FIVE_MINUTE_KEEP
            got = QueueFiveMinute.objects.using(alias).filter(queue="q", resource="cpu").order_by("at")
            expected = _expected_usage(usage, start, end, "allocated")
            assert list(got.values_list("at", "allocated")) == _approx(expected)
            got_phases = QueuePhaseFiveMinute.objects.using(alias).filter(queue="q", phase="Running")
            expected_phases = _expected_phases(counts, start, end)["Running"]
            assert list(got_phases.order_by("at").values_list("at", "count")) == _approx(expected_phases)
        finally:
            drop_alias(alias)


def test_the_recorder_prunes_five_minute_means_older_than_the_windows_that_read_them(history_db):
    _write_and_roll(history_db, gaps=False)
    cache = ClusterCache(options=CacheOptions(pod_record_seconds=0))
    rec = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: NOW)
    rec._prune(NOW)
    oldest = QueueFiveMinute.objects.using(history_db).order_by("at").values_list("at", flat=True).first()
    assert oldest is not None and oldest >= NOW - rollup.FIVE_MINUTE_KEEP
    assert not QueuePhaseFiveMinute.objects.using(history_db).filter(at__lt=NOW - rollup.FIVE_MINUTE_KEEP)
    assert QueueSample.objects.using(history_db).filter(at__lt=NOW - rollup.FIVE_MINUTE_KEEP).exists()


def test_each_hours_means_are_those_of_its_own_samples(history_db):
    usage, counts = _write_and_roll(history_db, gaps=True)
    end = rollup.hour_of(NOW)
    hours = [START + rollup.HOUR * i for i in range(int((end - START) / rollup.HOUR))]
    stored = {
        (r.hour, r.queue, r.resource): r
        for r in QueueHourly.objects.using(history_db).filter(hour__lt=end)  # a roll of [START, end)
    }
    assert len(stored) == len(hours) * 4  # 2 queues x 2 resources
    for hour in hours:
        for queue in ("q", "other"):
            known = [
                s.allocated
                for s in usage
                if (s.queue, s.resource) == (queue, "cpu") and hour <= s.at < hour + rollup.HOUR
                if s.allocated is not None
            ]
            assert stored[(hour, queue, "cpu")].allocated == pytest.approx(sum(known) / len(known), rel=1e-12)
            assert stored[(hour, queue, "cpu")].deserved == 32.0
            rows = [
                c.count
                for c in counts
                if (c.queue, c.phase) == (queue, "Running") and hour <= c.at < hour + rollup.HOUR
            ]
            phase = QueuePhaseHourly.objects.using(history_db).get(hour=hour, queue=queue, phase="Running")
            assert phase.count == pytest.approx(sum(rows) / len(rows), rel=1e-12)


def test_a_roll_gives_way_to_requests_hour_by_hour_and_five_minutes_by_five(history_db, monkeypatch):
    from dashboard.priority import REQUESTS

    call_command("migrate", "history", database=history_db, verbosity=0)
    calls = []
    monkeypatch.setattr(REQUESTS, "give_way", lambda: calls.append(1) or 0.0)
    rollup.roll(history_db, START, START + 3 * rollup.HOUR)
    assert len(calls) >= 3 * 2 + 3 * 12  # the hourly reads, then each five minutes' reads
