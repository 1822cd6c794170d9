"""Rows written as tuples (dashboard/history/inserts.py) are stored exactly as bulk_create stores
the same rows: the same values in the same form (SQLite keeps times as text), the same
conflicts skipped or rows updated; on SQLite and on a real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connections, transaction

from dashboard.history.inserts import TableInsert
from dashboard.history.models import (
    Admission,
    PhaseTransition,
    PodLifetime,
    QueueHourly,
    QueuePhaseSample,
    QueueSample,
)
from dashboard.history.recorder import AdmissionRow, PhaseSampleRow, PodRow, SampleRow, TransitionRow

T0 = datetime(2026, 11, 20, 22, 0, 7, 125000, tzinfo=UTC)


def _stored(using: str, model) -> list[tuple]:
    """Every row of ``model``'s table but its id: on SQLite each value's storage class and text
    as stored (times are text there), on PostgreSQL the values as the driver returns them."""
    columns = [f.column for f in model._meta.concrete_fields if not f.primary_key]
    qn = connections[using].ops.quote_name
    if connections[using].vendor == "sqlite":
        values = [f"typeof({qn(c)}) || ':' || CAST({qn(c)} AS TEXT)" for c in columns]
    else:
        values = [qn(c) for c in columns]
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(values)} FROM {qn(model._meta.db_table)} "
            f"ORDER BY {', '.join(qn(c) for c in columns[:3])}"
        )
        return [tuple(row) for row in cursor.fetchall()]


def _both_ways(using: str, model, rows: list[tuple], fields: tuple[str, ...], orm_write, insert: TableInsert):
    """The table's rows after ``orm_write`` of the rows as model instances, and after
    ``insert`` of the same rows as tuples (each into an emptied table)."""
    with transaction.atomic(using=using):
        orm_write([model(**dict(zip(fields, row, strict=True))) for row in rows])
    by_orm = _stored(using, model)
    model.objects.using(using).all().delete()
    with transaction.atomic(using=using):
        assert insert.write(using, rows, batch=2) == len(rows)
    return by_orm, _stored(using, model)


def _pod(i: int, **changes) -> PodRow:
    row = PodRow(
        uid=f"uid-{i}",
        namespace="ns",
        name=f"pod-{i}",
        job="job",
        task="main",
        podgroup="pg",
        queue="q",
        node="node-1",
        phase="Running",
        created=T0,
        scheduled=T0 + timedelta(seconds=1),
        started=T0 + timedelta(seconds=2, microseconds=5),
        finished=None,
        deleted=None,
        vanished=False,
        last_seen=T0 + timedelta(seconds=9),
        exit_code=None,
        restarts=i,
        cpu=0.25 * i,
        memory=None,
        gpu=1.0,
        requests={"cpu": "250m", "nvidia.com/gpu": "1"},
    )
    return row._replace(**changes)


@pytest.fixture
def db(history_db):
    call_command("migrate", "history", database=history_db, verbosity=0)
    return history_db


def test_the_row_tuples_hold_every_column_of_their_tables():
    for row, model in (
        (TransitionRow, PhaseTransition),
        (AdmissionRow, Admission),
        (PodRow, PodLifetime),
        (SampleRow, QueueSample),
        (PhaseSampleRow, QueuePhaseSample),
    ):
        assert set(row._fields) == {f.name for f in model._meta.concrete_fields if not f.primary_key}


def test_pod_rows_upsert_as_bulk_create_upserts_them(db):
    pods = PodLifetime.objects.using(db)
    fields = PodRow._fields
    update = [f for f in fields if f != "uid"]
    insert = TableInsert(PodLifetime, fields, "update", ("uid",))
    first = [_pod(i) for i in range(5)]
    by_orm, by_insert = _both_ways(
        db,
        PodLifetime,
        first,
        fields,
        lambda objs: pods.bulk_create(
            objs, update_conflicts=True, unique_fields=["uid"], update_fields=update
        ),
        insert,
    )
    assert by_insert == by_orm and len(by_orm) == 5
    # Written again over stored rows (one closed as vanished meanwhile): every column is rewritten.
    pods.filter(uid="uid-1").update(vanished=True, deleted=T0)
    again = [_pod(i, phase="Succeeded", finished=T0 + timedelta(minutes=i), requests={}) for i in (0, 1, 7)]
    with transaction.atomic(using=db):
        insert.write(db, again)
    by_insert = _stored(db, PodLifetime)
    pods.all().delete()
    with transaction.atomic(using=db):
        pods.bulk_create(
            [PodLifetime(**r._asdict()) for r in first],
            update_conflicts=True,
            unique_fields=["uid"],
            update_fields=update,
        )
        pods.filter(uid="uid-1").update(vanished=True, deleted=T0)
        pods.bulk_create(
            [PodLifetime(**r._asdict()) for r in again],
            update_conflicts=True,
            unique_fields=["uid"],
            update_fields=update,
        )
    assert by_insert == _stored(db, PodLifetime)
    assert pods.get(uid="uid-1").vanished is False and pods.count() == 6


def test_transitions_and_admissions_skip_conflicts_as_bulk_create_does(db):
    transitions = [
        TransitionRow(
            "PodGroup",
            f"PodGroup|u{i}|Running|",
            f"u{i}",
            "ns",
            f"pg-{i}",
            "q",
            "Running",
            "Inqueue",
            T0,
            T0 - timedelta(seconds=i) if i % 2 else None,
            T0 - timedelta(hours=1),
        )
        for i in range(4)
    ]
    insert = TableInsert(PhaseTransition, TransitionRow._fields, "ignore")
    orm = PhaseTransition.objects.using(db)
    by_orm, by_insert = _both_ways(
        db,
        PhaseTransition,
        transitions,
        TransitionRow._fields,
        lambda objs: orm.bulk_create(objs, ignore_conflicts=True),
        insert,
    )
    assert by_insert == by_orm and len(by_orm) == 4
    with transaction.atomic(using=db):  # the same keys seen again: kept as first written
        insert.write(db, [t._replace(seen_at=T0 + timedelta(days=1), queue="other") for t in transitions])
    assert _stored(db, PhaseTransition) == by_orm

    admissions = [
        AdmissionRow(f"u{i}", "q", "ns", f"pg-{i}", T0, date(2026, 11, 20), None if i else 3.5)
        for i in range(3)
    ]
    by_orm, by_insert = _both_ways(
        db,
        Admission,
        admissions,
        AdmissionRow._fields,
        lambda objs: Admission.objects.using(db).bulk_create(objs, ignore_conflicts=True),
        TableInsert(Admission, AdmissionRow._fields, "ignore"),
    )
    assert by_insert == by_orm and len(by_orm) == 3


def test_samples_and_hourly_means_are_stored_as_bulk_create_stores_them(db):
    samples = [SampleRow(T0, f"q{i}", "cpu", None if i else 1.5, 2.0, 4.0, None) for i in range(3)]
    by_orm, by_insert = _both_ways(
        db,
        QueueSample,
        samples,
        SampleRow._fields,
        QueueSample.objects.using(db).bulk_create,
        TableInsert(QueueSample, SampleRow._fields),
    )
    assert by_insert == by_orm and len(by_orm) == 3
    counts = [PhaseSampleRow(T0, "q", phase, n) for n, phase in enumerate(("Pending", "Running"))]
    by_orm, by_insert = _both_ways(
        db,
        QueuePhaseSample,
        counts,
        PhaseSampleRow._fields,
        QueuePhaseSample.objects.using(db).bulk_create,
        TableInsert(QueuePhaseSample, PhaseSampleRow._fields),
    )
    assert by_insert == by_orm and len(by_orm) == 2

    fields = ("queue", "resource", "hour", "allocated", "deserved", "capability", "guarantee")
    hour = T0.replace(minute=0, second=0, microsecond=0)
    means = [("q", "cpu", hour, 1.0, 2.0, None, 0.5), ("q", "memory", hour, None, 1e9, 2e9, None)]
    upsert = TableInsert(QueueHourly, fields, "update", ("queue", "resource", "hour"))
    by_orm, by_insert = _both_ways(
        db,
        QueueHourly,
        means,
        fields,
        lambda objs: QueueHourly.objects.using(db).bulk_create(
            objs,
            update_conflicts=True,
            unique_fields=["queue", "resource", "hour"],
            update_fields=["allocated", "deserved", "capability", "guarantee"],
        ),
        upsert,
    )
    assert by_insert == by_orm and len(by_orm) == 2
    with transaction.atomic(using=db):  # an hour rolled again is rewritten
        upsert.write(db, [("q", "cpu", hour, 3.0, 2.0, 1.0, None)])
    assert QueueHourly.objects.using(db).get(resource="cpu").allocated == 3.0
    assert QueueHourly.objects.using(db).count() == 2


def test_a_write_gives_way_to_requests_between_its_batches(db, monkeypatch):
    from dashboard.priority import REQUESTS

    calls = []
    monkeypatch.setattr(REQUESTS, "give_way", lambda: calls.append(1) or 0.0)
    with transaction.atomic(using=db):
        TableInsert(QueueSample, SampleRow._fields).write(
            db, [SampleRow(T0, "q", "cpu", 1, 1, 1, 1)] * 7, batch=3
        )
    assert len(calls) >= 3 and QueueSample.objects.using(db).count() == 7


def test_a_conflict_needs_its_unique_fields():
    with pytest.raises(ValueError):
        TableInsert(PodLifetime, PodRow._fields, "update")
    with pytest.raises(ValueError):
        TableInsert(PodLifetime, PodRow._fields, "replace", ("uid",))
