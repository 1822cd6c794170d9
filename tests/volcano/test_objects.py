"""dashboard.volcano.objects: accessors that never raise, and the one counter reader."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.volcano import objects as o

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 0),  # omitempty: absent is zero
        (3, 3),
        (-1, -1),  # kept: gang judgements distrust negative counters
        (True, 0),  # JSON true is no integer
        (False, 0),
        (1.5, 0),  # not a count; truncating would invent one
        (2.0, 2),  # JSON does not distinguish 2 from 2.0
        (float("nan"), 0),
        (float("inf"), 0),
        ("3", 3),
        (" -2 ", -2),
        ("1.5", 0),
        ("1_000", 0),  # Python's digit separator is no Kubernetes integer
        ("x", 0),
        ("9" * 5000, 0),  # more digits than int() converts
        ([1], 0),
        ({"a": 1}, 0),
    ],
)
def test_count_rule(value, expected):
    assert o.count(value) == expected


@given(st.integers())
def test_count_round_trips_integers_and_their_text(n):
    assert o.count(n) == n
    assert o.count(str(n)) == n


@given(JSON)
def test_accessors_never_raise(value):
    for fn in (o.meta, o.spec, o.status, o.labels, o.annotations):
        assert isinstance(fn(value), dict)
    for fn in (o.name, o.namespace, o.uid, o.resource_version):
        assert isinstance(fn(value), str)
    assert isinstance(o.count(value), int)
    assert isinstance(o.is_deleting(value), bool)
    o.controller_owner(value)
    o.owner_uids(value)


def test_accessors_on_a_job():
    job = {
        "metadata": {
            "name": "j",
            "namespace": "ml",
            "uid": 7,
            "labels": {"a": 1, "volcano.sh/task-spec": "w"},
            "annotations": {"volcano.sh/task-spec": "ignored"},
            "ownerReferences": [
                {"kind": "A", "uid": "u1"},
                {"kind": "B", "uid": "u2", "controller": True},
                "junk",
                {"kind": "C", "uid": 3},
            ],
        },
        "spec": None,
    }
    assert (o.name(job), o.namespace(job), o.uid(job)) == ("j", "ml", "")
    assert o.labels(job)["a"] == "1"
    assert o.label_or_annotation(job, "volcano.sh/task-spec") == "w"
    assert o.spec(job) == {} and o.status(job) == {}
    assert o.controller_owner(job)["kind"] == "B"
    assert o.owner_uids(job) == ("u1", "u2")
    assert not o.is_deleting(job)
    assert o.is_deleting({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})


def test_first_owner_without_a_controller():
    assert o.controller_owner({"metadata": {"ownerReferences": [{"kind": "A"}]}}) == {"kind": "A"}
    assert o.controller_owner({"metadata": {"ownerReferences": []}}) is None
