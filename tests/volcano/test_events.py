"""dashboard.volcano.events: identity, times, counts and folding of core/v1 and events.k8s.io shapes."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_message_shape_leaves_out_numbers_uids_and_spacing():
    a = "0/3 nodes are available: 3 Insufficient cpu."
    b = "0/5 nodes are available:  5 Insufficient cpu."
    assert ev.message_shape(a) == ev.message_shape(b) == "#/# nodes are available: # Insufficient cpu."
    assert ev.message_shape("1.5Gi of 12,000 used") == "#Gi of # used"
    assert ev.message_shape("pod 1775336d-71ea-4d05-89a3-e80e966e1277 gone") == "pod <uid> gone"
    assert ev.message_shape(a) != ev.message_shape("0/3 nodes are available: 3 Insufficient memory.")


def test_fold_by_meaning_keeps_the_newest_message_and_lists_the_variants():
    rows = ev.event_records(
        [
            _core("FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.", T1, T1, 2),
            _core("FailedScheduling", "0/5 nodes are available: 5 Insufficient cpu.", T2, T3, 4),
            _core("FailedScheduling", "0/5 nodes are available: 5 Insufficient memory.", T2, T2),
            _core("FailedScheduling", "0/4 nodes are available: 4 Insufficient cpu.", T1, T1, name="other"),
        ]
    )
    folded = ev.fold_by_meaning(rows)
    assert len(folded) == 3
    cpu = folded[0]
    assert (cpu.message, cpu.count, cpu.first, cpu.last) == (
        "0/5 nodes are available: 5 Insufficient cpu.",
        6,
        datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC),
        datetime(2026, 1, 1, 0, 0, 3, tzinfo=UTC),
    )
    assert [(v.message[:3], v.count) for v in cpu.variants] == [("0/5", 4), ("0/3", 2)]
    assert folded[1].variants == () and folded[2].object_name == "other"
    assert rows[0].variants == () and rows[0].count == 4  # the rows given are not changed


_MESSAGES = st.sampled_from(
    [
        "0/{n} nodes are available: {n} Insufficient cpu.",
        "0/{n} nodes are available: {n} Insufficient memory.",
        "Back-off restarting failed container {n} times",
        "pod group is not ready, {n} minAvailable",
        "no numbers here",
    ]
)
_TIMES = st.sampled_from([None, T1, T2, T3])


@st.composite
def _event(draw):
    message = draw(_MESSAGES).format(n=draw(st.integers(0, 12)))
    first, last = draw(_TIMES), draw(_TIMES)
    event = _core(
        draw(st.sampled_from(["FailedScheduling", "BackOff"])),
        message,
        first,
        last,
        count=draw(st.integers(1, 50)),
        name=draw(st.sampled_from(["pg", "other"])),
    )
    event["type"] = draw(st.sampled_from(["Warning", "Normal"]))
    return event


# No deadline: the machine is shared, and a slow example is not a wrong one.
@settings(deadline=None)
@given(st.lists(_event(), max_size=25))
def test_folding_is_idempotent_and_keeps_every_count(events):
    rows = ev.event_records(events)
    folded = ev.fold_by_meaning(rows)
    assert ev.fold_by_meaning(folded) == folded
    assert sum(r.count for r in folded) == sum(r.count for r in rows)
    # One row per meaning, and every variant's count adds up to its row's.
    keys = [ev.fold_key(r) for r in folded]
    assert len(keys) == len(set(keys)) == len({ev.fold_key(r) for r in rows})
    for r in folded:
        assert not r.variants or sum(v.count for v in r.variants) == r.count
        assert not r.variants or len(r.variants) == len({v.message for v in r.variants}) > 1
    # Folding in any order gives the same rows (by meaning) with the same counts.
    again = {ev.fold_key(r): r.count for r in ev.fold_by_meaning(list(reversed(rows)))}
    assert again == {ev.fold_key(r): r.count for r in folded}


NOW = datetime(2026, 1, 1, 1, 0, 0, tzinfo=UTC)
AHEAD, LATER = "2026-01-01T02:00:00Z", "2026-01-01T03:00:00Z"  # beyond the skew allowance of NOW


def test_a_message_from_the_future_does_not_outrank_the_current_one():
    rows = ev.event_records(
        [
            _core("FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.", T1, T1, 40),
            _core("FailedScheduling", "0/5 nodes are available: 5 Insufficient cpu.", T2, T2, 6),
            _core("FailedScheduling", "0/9 nodes are available: 9 Insufficient cpu.", AHEAD, AHEAD),
        ]
    )
    for folded in (ev.fold_by_meaning(rows, NOW), ev.latest_per_object(rows, 10, now=NOW)):
        (row,) = folded
        assert row.message.startswith("0/5") and row.count == 47
        assert row.last == datetime(2026, 1, 1, 2, tzinfo=UTC)  # the skewed time stays, to be marked
    (row,) = ev.fold_by_meaning(rows, NOW)
    assert [v.message[:3] for v in row.variants] == ["0/5", "0/3", "0/9"]  # those ahead last
    # Within the allowance, or at a later now, the newest is the current one; without now as well.
    assert ev.fold_by_meaning(rows, NOW, skew=7200)[0].message.startswith("0/9")
    assert ev.fold_by_meaning(rows, datetime(2026, 1, 1, 2, tzinfo=UTC))[0].message.startswith("0/9")
    assert ev.fold_by_meaning(rows)[0].message.startswith("0/9")
    assert ev.rows_ahead(rows, NOW) == 1 and ev.rows_ahead(rows, NOW, 7200) == 0
    # All of them ahead: the newest of them.
    ahead = ev.event_records(
        [_core("R", "a 1", AHEAD, AHEAD), _core("R", "a 2", LATER, LATER), _core("R", "a 3", None, None)]
    )
    assert ev.fold_by_meaning(ahead[:2], NOW)[0].message == "a 2"
    assert ev.current_member(ahead[:2], NOW, 300).message == "a 2"


def test_times_and_counts_written_as_no_valid_value_are_kept_as_written():
    epoch = _core("R", "m", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", count=-3)
    epoch["metadata"]["creationTimestamp"] = T3
    # Not the creation time in place of the wrong one, not 1 in place of -3.
    assert ev.event_last(epoch) is None and ev.event_first(epoch) is None
    assert ev.event_last_invalid(epoch) == ev.event_first_invalid(epoch) == "1970-01-01T00:00:00Z"
    assert ev.event_count_invalid(epoch) == "-3"
    record = ev.event_record(epoch)
    assert (record.count_invalid, record.last_invalid, record.last) == ("-3", "1970-01-01T00:00:00Z", None)
    # Unset fields fall back as kubectl does (null, "", Go's zero time); a count of 0 is unset.
    unset = _core("R", "m", None, "0001-01-01T00:00:00Z", count=0)
    unset["eventTime"] = T2
    assert ev.event_last(unset) == datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC)
    assert ev.event_last_invalid(unset) == "" and ev.event_count_invalid(unset) == ""
    assert ev.event_count(unset) == 1
    for bad in ("x", 1.5, True, "-1"):
        assert ev.event_count_invalid({"count": bad}), bad
    for good in (2, "3", 2.0):
        assert ev.event_count_invalid({"count": good}) == "", good
    assert ev.event_last_invalid({"lastTimestamp": "yesterday"}) == "yesterday"
    # Folded with valid ones: a valid time is kept, the invalid count makes the sum invalid.
    ok = _core("R", "m", T1, T2, count=2)
    (row,) = ev.fold_by_meaning(ev.event_records([epoch, ok]))
    assert (row.last_invalid, row.first_invalid, row.count_invalid) == ("", "", "-3")
