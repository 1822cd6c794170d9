"""Gang admissions: the recorder's one row per PodGroup, migration 0004's fill of an existing
store, and the percentile reads computed by the database (SQLite and a real PostgreSQL)."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

from django.core.management import call_command
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from dashboard.history import reads
from dashboard.history.models import Admission
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.kube.cache import CacheOptions, ClusterCache
from dashboard.volcano.history import admission_wait, daily_percentiles, percentile
from tests.history.conftest import drop_alias, sqlite_alias

T0 = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)
_VERSIONS = itertools.count(1)


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _podgroup(name: str, phase: str, changed: datetime | None, queue: str = "q") -> dict:
    status: dict = {"phase": phase}
    if changed is not None:
        status["conditions"] = [
            {"type": "Scheduled", "status": "True", "lastTransitionTime": _stamp(changed)}
        ]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": str(next(_VERSIONS)),
            "creationTimestamp": _stamp(T0),
        },
        "spec": {"queue": queue, "minMember": 1},
        "status": status,
    }


def _cache() -> ClusterCache:
    cache = ClusterCache(options=CacheOptions(pod_record_seconds=0))
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        cache.store(kind).set_state("synced")
    return cache


def test_a_gang_that_runs_again_keeps_its_first_admission(history_db):
    cache = _cache()
    now = [T0]
    rec = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: now[0])
    cache.add_listener(rec.listener)
    rec.step()
    store = cache.store("podgroups")
    steps = [
        ("Pending", None),
        ("Inqueue", T0 + timedelta(seconds=10)),
        ("Running", T0 + timedelta(seconds=30)),
        ("Pending", T0 + timedelta(seconds=40)),
        ("Inqueue", T0 + timedelta(seconds=50)),
        ("Running", T0 + timedelta(seconds=100)),
    ]
    for phase, changed in steps:
        now[0] += timedelta(seconds=20)
        store.upsert(_podgroup("a", phase, changed))
        rec.step(force_flush=True)
    # Seen Running only (the dashboard started after it was admitted): from creation, no own time.
    now[0] += timedelta(seconds=5)
    store.upsert(_podgroup("b", "Running", None))
    rec.step(force_flush=True)
    rows = {a.name: a for a in Admission.objects.using(history_db).all()}
    assert set(rows) == {"a", "b"}
    assert rows["a"].running == T0 + timedelta(seconds=30) and rows["a"].wait == 30
    assert (rows["a"].queue, rows["a"].namespace, rows["a"].uid) == ("q", "ns", "uid-a")
    assert rows["b"].running == now[0] and rows["b"].wait == (now[0] - T0).total_seconds()
    assert reads.podgroup_wait(history_db, "uid-a") == 30
    assert reads.podgroup_wait(history_db, "uid-none") is None
    cache.remove_listener(rec.listener)


def _admission(uid: str, running: datetime, wait: float | None, queue: str = "q") -> Admission:
    day = running.astimezone(UTC).date()
    return Admission(uid=uid, queue=queue, namespace="ns", name=uid, running=running, day=day, wait=wait)


def _random_admissions(rng: random.Random, start: datetime, days: int) -> list[Admission]:
    rows = []
    for i in range(days * 40):
        running = start + timedelta(seconds=rng.uniform(0, days * 86400))
        # Whole seconds repeat (ties), fractions do not; a few unknown.
        wait = rng.choice([float(rng.randint(0, 30)), rng.expovariate(1 / 600), None])
        rows.append(_admission(f"u{i}", running, wait, "q" if rng.random() < 0.8 else "other"))
    return rows


def test_percentile_reads_are_percentile_of_the_same_waits(history_db):
    call_command("migrate", "history", database=history_db, verbosity=0)
    rng = random.Random(7)
    rows = _random_admissions(rng, T0 - timedelta(days=8), 9)
    # One day with a single wait and one with two: the ranks' edges.
    rows += [
        _admission("one", T0 + timedelta(days=3), 5.5),
        _admission("two", T0 + timedelta(days=4), 1.0),
        _admission("tw2", T0 + timedelta(days=4, hours=1), 4.0),
    ]
    Admission.objects.using(history_db).bulk_create(rows)
    until = T0 + timedelta(days=4, hours=2)
    for since in (T0 - timedelta(days=7), T0 - timedelta(days=6, hours=13, minutes=7), until):
        waits = [
            (a.running, a.wait) for a in rows if a.queue == "q" and a.wait is not None and a.running >= since
        ]
        assert reads.daily_waits(history_db, "q", since, until) == daily_percentiles(waits)
        for q in (0, 10, 37.5, 50, 90, 100):
            assert reads.wait_percentile(history_db, "q", since, q) == percentile([w for _a, w in waits], q)
    assert reads.daily_waits(history_db, "none", T0, until) == []
    assert reads.wait_percentile(history_db, "none", T0, 50) is None


def _transition(model, uid, phase, seen, own=None, created=T0, kind="PodGroup", queue="q"):
    stamp = own.isoformat() if own else "@" + seen.isoformat()
    return model(
        kind=kind,
        key=f"{kind}|{uid}|{phase}|{stamp}",
        uid=uid,
        namespace="ns",
        name=f"pg-{uid}",
        queue=queue,
        phase=phase,
        previous="",
        seen_at=seen,
        object_time=own,
        created=created,
    )


def test_migration_0004_fills_the_admissions_of_an_existing_store(tmp_path, django_db_blocker):
    s = timedelta(seconds=1)
    with django_db_blocker.unblock():
        alias = sqlite_alias(tmp_path / "old.sqlite3")
        try:
            executor = MigrationExecutor(connections[alias])
            executor.migrate([("history", "0003_hourly_rollups")])
            old = executor.loader.project_state([("history", "0003_hourly_rollups")]).apps
            transition = old.get_model("history", "PhaseTransition")
            rows = [
                # Pending, Inqueue, Running, Pending, Running again: the first Running counts.
                _transition(transition, "a", "Pending", T0 + 1 * s),
                _transition(transition, "a", "Inqueue", T0 + 9 * s, own=T0 + 8 * s),
                _transition(transition, "a", "Running", T0 + 31 * s, own=T0 + 30 * s),
                _transition(transition, "a", "Pending", T0 + 41 * s, own=T0 + 40 * s),
                _transition(transition, "a", "Running", T0 + 99 * s, own=T0 + 90 * s),
                # Seen Running only, without an own time: when seen.
                _transition(transition, "b", "Running", T0 + 70 * s, queue="other"),
                # Its creation unknown: a row without a wait.
                _transition(transition, "c", "Running", T0 + 80 * s, created=None),
                # Not admitted yet; and a Job, not a gang.
                _transition(transition, "d", "Inqueue", T0 + 5 * s),
                _transition(transition, "j", "Running", T0 + 5 * s, kind="Job"),
            ]
            transition.objects.using(alias).bulk_create(rows)
            executor = MigrationExecutor(connections[alias])
            executor.migrate([("history", "0004_admissions")])
            got = {a.uid: (a.queue, a.name, a.running, a.wait) for a in Admission.objects.using(alias).all()}
            assert all(a.day == a.running.date() for a in Admission.objects.using(alias).all())
            wait_a = admission_wait(T0, T0 + 8 * s, T0 + 30 * s)
            assert wait_a is not None
            assert got == {
                "a": ("q", "pg-a", T0 + 30 * s, wait_a.total_seconds()),
                "b": ("other", "pg-b", T0 + 70 * s, 70.0),
                "c": ("q", "pg-c", T0 + 80 * s, None),
            }
        finally:
            drop_alias(alias)


def test_percentile_reads_follow_rows_added_to_or_pruned_from_a_past_day(history_db):
    call_command("migrate", "history", database=history_db, verbosity=0)
    day = T0 - timedelta(days=3)
    rows = [_admission(f"p{i}", day + timedelta(minutes=i), float(i)) for i in range(11)]
    Admission.objects.using(history_db).bulk_create(rows)
    since, until = T0 - timedelta(days=7), T0
    waits = [(a.running, a.wait) for a in rows]
    assert reads.daily_waits(history_db, "q", since, until) == daily_percentiles(waits)
    assert reads.wait_percentile(history_db, "q", since, 50) == 5.0
    # A late write on that day, then a prune of its first row: each answer is the new day's.
    late = _admission("late", day + timedelta(hours=5), 1000.0)
    late.save(using=history_db)
    waits.append((late.running, late.wait))
    assert reads.daily_waits(history_db, "q", since, until) == daily_percentiles(waits)
    assert reads.wait_percentile(history_db, "q", since, 50) == 5.5
    Admission.objects.using(history_db).filter(uid="p0").delete()
    waits = waits[1:]
    assert reads.daily_waits(history_db, "q", since, until) == daily_percentiles(waits)
    assert reads.wait_percentile(history_db, "q", since, 50) == 6.0
