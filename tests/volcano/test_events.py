"""dashboard.volcano.events: identity, times, counts and folding of core/v1 and events.k8s.io shapes."""

from __future__ import annotations

from datetime import UTC, datetime

from dashboard.volcano import events as ev

T1, T2, T3 = "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:03Z"


def _core(reason, message, first, last, count=1, name="pg"):
    return {
        "metadata": {"name": f"{name}.{reason}", "namespace": "ml"},
        "type": "Warning",
        "reason": reason,
        "message": message,
        "involvedObject": {"kind": "PodGroup", "name": name, "namespace": "ml", "uid": "u"},
        "firstTimestamp": first,
        "lastTimestamp": last,
        "count": count,
        "source": {"component": "volcano"},
    }


def test_identity():
    e = _core("Unschedulable", "m", T1, T2)
    assert ev.event_ref(e) == ("PodGroup", "ml", "pg")
    assert ev.event_ref({"involvedObject": {"kind": "Queue", "name": "q", "namespace": ""}}) == (
        "Queue",
        None,
        "q",
    )
    assert ev.event_involved_uid(e) == "u" and ev.is_warning(e)


def test_times_and_counts_of_both_shapes():
    core = _core("X", "m", T1, T2, count=4)
    assert ev.event_first(core) == datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert ev.event_last(core) == datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC)
    assert ev.event_count(core) == 4
    series = {"eventTime": T1, "series": {"lastObservedTime": T3, "count": 7}, "regarding": {"kind": "Pod"}}
    assert ev.event_last(series) == datetime(2026, 1, 1, 0, 0, 3, tzinfo=UTC)
    assert ev.event_first(series) == datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert ev.event_count(series) == 7
    assert ev.event_record(series).object_kind == "Pod"
    assert ev.event_count({"count": -3}) == 1 and ev.event_count({}) == 1  # at least once
    assert ev.event_last({"metadata": {"creationTimestamp": T2}}) == datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC)


def test_records_newest_first_and_folded_per_object():
    rows = ev.event_records(
        [
            _core("FailedScheduling", "insufficient cpu", T1, T1, 2),
            _core("FailedScheduling", "insufficient nvidia.com/gpu", T2, T3, 3),
            _core("Created", "ok", T2, T2, name="other"),
        ]
    )
    assert [r.message for r in rows] == ["insufficient nvidia.com/gpu", "ok", "insufficient cpu"]
    folded = ev.latest_per_object(rows, 10)
    first = folded[0]
    assert (first.message, first.count, first.first) == (
        "insufficient nvidia.com/gpu",
        5,
        datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC),
    )
    assert len(folded) == 2
    assert len(ev.latest_per_object(rows, 10, by_message=True)) == 3
    assert rows[0].count == 3  # folding copies, never changes the rows it is given
