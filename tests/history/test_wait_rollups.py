"""Daily rollups of the admission waits (AdmissionDaily): the Queue page's wait table and its
typical wait read closed days from them. They hold what the Admission rows hold, follow a late
admission and the prune, migration 0007 writes them for an existing store, and the window's
percentile estimated from their buckets stays within its stated bound (SQLite and PostgreSQL)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from django.core.management import call_command
from django.db import connections
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.history import reads, rollup
from dashboard.history.models import Admission, AdmissionDaily
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.volcano.history import daily_percentiles, percentile
from tests.history.conftest import drop_alias, sqlite_alias
from tests.history.test_admissions import _admission, _cache, _podgroup

START = datetime(2026, 11, 12, 0, 0, tzinfo=UTC)
NOW = START + timedelta(days=9, hours=7, minutes=13)  # rolled: the 9 closed days before NOW's


def within_bound(estimate: float | None, exact: float | None) -> bool:
    """rollup.estimate_percentile's stated bound (a hair over it for floating point)."""
    if estimate is None or exact is None:
        return estimate is exact
    return abs(estimate - exact) <= 0.0219 * exact + 0.5 + 1e-9


waits = st.one_of(
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.integers(min_value=0, max_value=3600).map(float),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(waits, min_size=1, max_size=300), st.floats(min_value=0, max_value=100))
def test_a_percentile_estimated_from_wait_buckets_is_within_its_bound(values, q):
    estimate = rollup.estimate_percentile(rollup.add_waits({}, values), q)
    assert within_bound(estimate, percentile(values, q))


def _random_rows(rng: random.Random) -> list[Admission]:
    rows = []
    for i in range(9 * 60):
        running = START + timedelta(seconds=rng.uniform(0, (NOW - START).total_seconds()))
        wait = rng.choice([float(rng.randint(0, 30)), rng.expovariate(1 / 600), None])
        rows.append(_admission(f"u{i}", running, wait, "q" if rng.random() < 0.8 else "other"))
    return rows


def _known(rows, queue="q", since=START):
    return [
        (a.running, a.wait) for a in rows if a.queue == queue and a.wait is not None and a.running >= since
    ]


def _assert_reads_match(using, rows):
    for since in (NOW - timedelta(days=7), NOW - timedelta(days=6, hours=13, minutes=7), START):
        known = _known(rows, since=since)
        assert reads.daily_waits(using, "q", since, NOW) == daily_percentiles(known)
        for q in (0, 10, 50, 90, 100):
            assert within_bound(
                reads.wait_percentile(using, "q", since, q), percentile([w for _a, w in known], q)
            )


def _roll(using):
    call_command("migrate", "history", database=using, verbosity=0)


def test_the_rollups_of_closed_days_hold_what_the_admission_rows_hold(history_db):
    _roll(history_db)
    rows = _random_rows(random.Random(11))
    Admission.objects.using(history_db).bulk_create(rows)
    rollup.roll(history_db, START, rollup.hour_of(NOW))  # as the recorder rolls the closed hours
    assert rollup.waits_rolled_until(history_db) == NOW.date()
    stored = AdmissionDaily.objects.using(history_db).filter(queue="q").order_by("day")
    expected = [e for e in daily_percentiles(_known(rows)) if e[0] < NOW.date()]
    assert [(r.day, r.p50, r.p90, r.n) for r in stored] == expected
    for r in stored:
        assert sum(r.buckets.values()) == r.n
    _assert_reads_match(history_db, rows)
    assert reads.daily_waits(history_db, "none", START, NOW) == []
    assert reads.wait_percentile(history_db, "none", START, 50) is None


def test_a_late_admission_for_a_closed_day_is_in_its_rollup(history_db):
    cache = _cache()
    now = [NOW]
    rec = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: now[0])
    cache.add_listener(rec.listener)
    rec.step()
    rows = _random_rows(random.Random(12))
    Admission.objects.using(history_db).bulk_create(rows)
    rollup.roll(history_db, START, rollup.hour_of(NOW))
    day = NOW.date() - timedelta(days=2)
    before = AdmissionDaily.objects.using(history_db).get(queue="q", day=day)
    # Seen Running now, with its own transition time two days ago (a re-list after a restart).
    running = rollup.day_start(day) + timedelta(hours=3)
    pg = _podgroup("late", "Running", running)
    pg["metadata"]["creationTimestamp"] = (running - timedelta(seconds=40000)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cache.store("podgroups").upsert(pg)
    rec.step(force_flush=True)
    late = Admission.objects.using(history_db).get(uid="uid-late")
    assert (late.day, late.wait) == (day, 40000.0)
    after = AdmissionDaily.objects.using(history_db).get(queue="q", day=day)
    assert after.n == before.n + 1 and after.top == late.pk
    rows.append(late)
    assert [
        (r.day, r.p50, r.p90, r.n)
        for r in AdmissionDaily.objects.using(history_db).filter(queue="q").order_by("day")
    ] == [e for e in daily_percentiles(_known(rows)) if e[0] < NOW.date()]
    _assert_reads_match(history_db, rows)
    cache.remove_listener(rec.listener)


def _rollup_writes(using, flush) -> list[str]:
    """The statements ``flush()`` sends that write AdmissionDaily."""
    with CaptureQueriesContext(connections[using]) as queries:
        flush()
    return [
        q["sql"]
        for q in queries.captured_queries
        if "history_admissiondaily" in q["sql"] and not q["sql"].lstrip().upper().startswith("SELECT")
    ]


def test_admissions_seen_again_roll_no_closed_day_again(history_db):
    cache = _cache()
    rec = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: NOW)
    cache.add_listener(rec.listener)
    rec.step()
    running = rollup.day_start(NOW.date() - timedelta(days=2)) + timedelta(hours=3)
    for i in range(5):
        cache.store("podgroups").upsert(_podgroup(f"old{i}", "Running", running))
    assert _rollup_writes(history_db, lambda: rec.step(force_flush=True))
    cache.remove_listener(rec.listener)
    # A restart: the next recorder lists the same Running PodGroups again.
    again = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: NOW)
    again._next_prune = NOW + timedelta(hours=1)  # the prune's own roll is not this flush's
    assert _rollup_writes(history_db, lambda: again.step(force_flush=True)) == []
    assert Admission.objects.using(history_db).count() == 5


def test_a_late_admission_rolls_only_its_queues_row_of_the_day_again(history_db):
    cache = _cache()
    rec = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: NOW)
    cache.add_listener(rec.listener)
    rec.step()
    rows = _random_rows(random.Random(15))
    Admission.objects.using(history_db).bulk_create(rows)
    rollup.roll(history_db, START, rollup.hour_of(NOW))
    day = NOW.date() - timedelta(days=3)
    other = AdmissionDaily.objects.using(history_db).get(queue="other", day=day)
    pg = _podgroup("late", "Running", rollup.day_start(day) + timedelta(hours=5))
    cache.store("podgroups").upsert(pg)
    assert _rollup_writes(history_db, lambda: rec.step(force_flush=True))
    assert AdmissionDaily.objects.using(history_db).get(queue="other", day=day).pk == other.pk
    rows.append(Admission.objects.using(history_db).get(uid="uid-late"))
    assert [
        (r.day, r.p50, r.p90, r.n)
        for r in AdmissionDaily.objects.using(history_db).filter(queue="q").order_by("day")
    ] == [e for e in daily_percentiles(_known(rows)) if e[0] < NOW.date()]
    cache.remove_listener(rec.listener)


def test_the_prune_drops_the_rollups_of_days_past_the_retention(history_db):
    _roll(history_db)
    rows = _random_rows(random.Random(13))
    Admission.objects.using(history_db).bulk_create(rows)
    rollup.roll(history_db, START, rollup.hour_of(NOW))
    rec = Recorder(_cache(), history_db, RecorderOptions(retention_days=5.5), clock=lambda: NOW)
    rec._prune(NOW)
    cutoff = NOW - timedelta(days=5.5)
    assert (
        AdmissionDaily.objects.using(history_db).order_by("day").values_list("day", flat=True).first()
        == cutoff.date()
    )
    kept = [a for a in rows if a.running >= cutoff]
    # The day the cutoff cuts holds its remaining rows.
    assert [
        (r.day, r.p50, r.p90, r.n)
        for r in AdmissionDaily.objects.using(history_db).filter(queue="q").order_by("day")
    ] == [e for e in daily_percentiles(_known(kept)) if e[0] < NOW.date()]
    _assert_reads_match(history_db, kept)


def test_migration_0007_fills_the_rollups_of_an_existing_store(tmp_path, django_db_blocker):
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "old.sqlite3")
        try:
            executor = MigrationExecutor(connections[alias])
            executor.migrate([("history", "0006_five_minute_means")])
            old = executor.loader.project_state([("history", "0006_five_minute_means")]).apps
            admission = old.get_model("history", "Admission")
            rng = random.Random(14)
            rows = []
            for i in range(400):  # four closed days and today so far
                running = today - timedelta(days=4) + timedelta(seconds=rng.uniform(0, 4.5 * 86400))
                running = min(running, datetime.now(UTC))
                wait = rng.choice([rng.expovariate(1 / 300), None])
                day = running.date()
                rows.append(
                    admission(
                        uid=f"m{i}",
                        queue="q",
                        namespace="ns",
                        name=f"m{i}",
                        running=running,
                        day=day,
                        wait=wait,
                    )
                )
            admission.objects.using(alias).bulk_create(rows)
            executor = MigrationExecutor(connections[alias])
            executor.migrate([("history", "0007_admission_daily")])
            got = AdmissionDaily.objects.using(alias).order_by("day")
            expected = [
                e
                for e in daily_percentiles(_known(rows, since=today - timedelta(days=4)))
                if e[0] < today.date()
            ]
            assert [(r.day, r.p50, r.p90, r.n) for r in got] == expected
            assert len(expected) == 4
        finally:
            drop_alias(alias)
