"""Pure parts of the simulated behaviour: quantities, Go durations, events aggregation, gang messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.sim import resources as R
from dashboard.sim.clock import SimClock
from dashboard.sim.events import EventRecorder
from dashboard.sim.jobcontroller import go_duration, min_resources
from dashboard.sim.store import Store

from .helpers import EVENT, task


@pytest.mark.parametrize(
    ("name", "milli", "text"),
    [
        ("cpu", 2000, "2"),
        ("cpu", 1500, "1500m"),
        ("requests.cpu", 250, "250m"),
        ("memory", 4 * 1024**3 * 1000, "4Gi"),
        ("memory", 1536 * 1024**2 * 1000, "1536Mi"),
        ("memory", 1000 * 1000, "1000"),
        ("nvidia.com/gpu", 8000, "8"),
        ("count/pods", 3000, "3"),
        ("memory", 0, "0"),
    ],
)
def test_format_quantity(name, milli, text):
    assert R.format_quantity(name, milli) == text


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]))
def test_format_then_parse_round_trips(value, name):
    milli = value * 1000 if name != "cpu" else value
    assert R.milli(R.format_quantity(name, milli)) == milli


def test_pod_requests_use_limits_for_missing_requests_and_init_containers():
    spec = {
        "containers": [
            {"resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}}},
            {"resources": {"requests": {"cpu": "1"}}},
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
    }
    assert R.pod_requests(spec) == {"cpu": 4000, "memory": 1024**3 * 1000, "pods": 1000}


def test_min_resources_are_quota_style_over_the_first_min_available_pods():
    spec = {
        "minAvailable": 3,
        "tasks": [task("ps", 1, cpu="2", memory="4Gi"), task("worker", 4, cpu="1", memory="1Gi", gpus=1)],
    }
    assert min_resources(spec) == {
        "count/pods": "3",
        "pods": "3",
        "cpu": "4",
        "requests.cpu": "4",
        "memory": "6Gi",
        "requests.memory": "6Gi",
        "nvidia.com/gpu": "2",
        "requests.nvidia.com/gpu": "2",
    }


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (45, "45s"), (90.002, "1m30.002s"), (7205, "2h0m5s"), (0.5, "500ms"), (3600, "1h0m0s")],
)
def test_go_duration(seconds, text):
    assert go_duration(seconds) == text


def make_recorder(**kw):
    clock = SimClock()
    store = Store(clock)
    store.create("Namespace", {"metadata": {"name": "default"}})
    return clock, store, EventRecorder(store, lambda: clock.now().timestamp(), **kw)


POD_REF = {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "default", "uid": "u1"}


def test_repeated_events_are_aggregated_by_count():
    clock, store, rec = make_recorder(repeat_interval=10)
    for _ in range(5):
        rec.record(POD_REF, "Warning", "BackOff", "Back-off restarting", "kubelet", host="n1")
        clock.advance(3)
    items, _ = store.list(EVENT)
    assert len(items) == 1
    ev = items[0]
    assert ev["involvedObject"] == POD_REF
    assert ev["source"] == {"component": "kubelet", "host": "n1"}
    assert ev["count"] == 5  # written at t=0 (1) and t=12 (the 4 repeats folded in)
    assert ev["firstTimestamp"] < ev["lastTimestamp"]


def test_distinct_messages_are_capped_per_reason_but_a_new_reason_gets_through():
    clock, store, rec = make_recorder(per_reason_cap=3)
    for i in range(10):
        rec.record(POD_REF, "Warning", "Unschedulable", f"message {i}", "volcano")
    rec.record(POD_REF, "Normal", "Scheduled", "pod group is ready", "volcano")
    reasons = [e["reason"] for e in store.list(EVENT)[0]]
    assert reasons.count("Unschedulable") == 3 and "Scheduled" in reasons


def test_events_are_capped_per_object_and_expire():
    clock, store, rec = make_recorder(per_object_cap=3, ttl=100)
    for i in range(10):
        rec.record(POD_REF, "Normal", f"Reason{i}", "m", "kubelet")
    assert len(store.list(EVENT)[0]) == 3
    assert rec.dropped == 7
    clock.advance(101)
    assert rec.expire() == 3
    assert store.list(EVENT)[0] == []
    rec.record(POD_REF, "Normal", "Again", "m", "kubelet")
    assert len(store.list(EVENT)[0]) == 1


def test_adopted_events_expire_too():
    clock, store, rec = make_recorder(ttl=50)
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "old.1", "namespace": "default"},
        "involvedObject": POD_REF,
        "reason": "Pulled",
        "message": "m",
        "count": 1,
        "type": "Normal",
    }
    store.create(EVENT, ev, replay=True)
    rec.adopt(ev)
    clock.advance(51)
    assert rec.expire() == 1
    assert store.list(EVENT)[0] == []
