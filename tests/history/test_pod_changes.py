"""How the recorder turns pod changes into rows, without a database: an update that changes no
column but ``last_seen`` adds no row, a pod changed twice before a write is one row of its
latest state, built at the write; and its passes over many objects give way to requests."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.history import recorder as recorder_module
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.kube.cache import CacheOptions, ClusterCache
from dashboard.priority import REQUESTS
from dashboard.volcano.history import pod_times

T0 = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _podgroup(name: str, queue: str = "q") -> dict:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "creationTimestamp": _stamp(T0)},
        "spec": {"queue": queue, "minMember": 1},
        "status": {"phase": "Running"},
    }


def _pod(name: str, group: str = "pg") -> dict:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "creationTimestamp": _stamp(T0),
            "annotations": {"scheduling.k8s.io/group-name": group},
            "labels": {"volcano.sh/job-name": "job"},
        },
        "spec": {
            "containers": [
                {"name": "main", "resources": {"requests": {"cpu": "500m", "nvidia.com/gpu": "1"}}}
            ]
        },
        "status": {"phase": "Pending"},
    }


def _changed(pod: dict, **status) -> dict:
    after = copy.deepcopy(pod)
    after["status"].update(status)
    return after


def _recorder(clock=lambda: T0) -> Recorder:
    cache = ClusterCache(options=CacheOptions(pod_record_seconds=0))
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        cache.store(kind).set_state("synced")
    return Recorder(cache, "unused", RecorderOptions(flush_seconds=0), clock=clock)


def _scheduled(pod: dict, node: str = "node-1") -> dict:
    after = _changed(
        pod,
        conditions=[
            {
                "type": "PodScheduled",
                "status": "True",
                "lastTransitionTime": _stamp(T0 + timedelta(seconds=1)),
            }
        ],
    )
    after["spec"]["nodeName"] = node
    return after


def test_an_update_that_changes_no_column_but_last_seen_adds_no_row():
    rec = _recorder()
    rec._record("podgroups", None, _podgroup("pg"), T0, None)
    added = _pod("a")
    rec._record("pods", None, added, T0, None)
    scheduled = _scheduled(added)
    rec._record("pods", added, scheduled, T0, None)
    assert rec._pods["uid-a"].pod is scheduled
    rec._pods.clear()  # written

    relabelled = copy.deepcopy(scheduled)
    relabelled["metadata"]["labels"]["team"] = "x"  # the status as it was
    rec._record("pods", scheduled, relabelled, T0, None)
    ready = _changed(
        relabelled, conditions=[*relabelled["status"]["conditions"], {"type": "Ready", "status": "False"}]
    )
    rec._record("pods", relabelled, ready, T0, None)  # another status, the same times
    assert rec._pods == {}

    started = _changed(ready, startTime=_stamp(T0 + timedelta(seconds=5)))  # a time changes
    rec._record("pods", ready, started, T0, None)
    assert rec._pods["uid-a"].times == pod_times(started)
    rec._pods.clear()
    moved = _scheduled(started, node="node-2")  # the node changes
    rec._record("pods", started, moved, T0, None)
    assert rec._pods["uid-a"].pod is moved
    running = _changed(moved, phase="Running")  # the phase changes
    rec._record("pods", moved, running, T0 + timedelta(seconds=9), None)
    assert rec._pods["uid-a"].pod is running


def test_a_count_written_as_true_is_no_count_though_python_equals_it_to_1():
    rec = _recorder()
    rec._record("podgroups", None, _podgroup("pg"), T0, None)
    added = _pod("a")
    rec._record("pods", None, added, T0, None)
    once = _changed(added, containerStatuses=[{"name": "main", "restartCount": 1}])
    rec._record("pods", added, once, T0, None)
    assert rec._pods["uid-a"].times.restarts == 1
    rec._pods.clear()
    odd = _changed(once, containerStatuses=[{"name": "main", "restartCount": True}])
    assert odd["status"] == once["status"]  # equal in Python
    rec._record("pods", once, odd, T0, None)
    assert rec._pods["uid-a"].times.restarts == 0


def test_a_pod_of_unknown_queue_is_written_again_when_its_queue_is_known():
    rec = _recorder()
    added = _pod("a", group="elsewhere")
    rec._record("pods", None, added, T0, None)
    assert rec._pods["uid-a"].queue == ""
    rec._pods.clear()
    rec._record("pods", added, copy.deepcopy(added), T0, None)  # nothing changed, the queue still unknown
    assert "uid-a" in rec._pods


def test_a_pod_changed_twice_before_a_write_is_one_row_of_its_latest_state():
    rec = _recorder()
    rec._record("podgroups", None, _podgroup("pg"), T0, None)
    added = _pod("a")
    rec._record("pods", None, added, T0, None)
    later = T0 + timedelta(seconds=3)
    gone = _scheduled(added)
    rec._record("pods", added, gone, T0 + timedelta(seconds=1), None)
    rec._record("pods", gone, None, later, None)
    (row,) = list(rec._pod_rows())
    assert (row.uid, row.queue, row.node, row.deleted, row.last_seen) == (
        "uid-a",
        "q",
        "node-1",
        later,
        later,
    )
    assert (row.scheduled, row.cpu, row.gpu, row.requests) == (
        T0 + timedelta(seconds=1),
        0.5,
        1.0,
        {"cpu": "0.5", "nvidia.com/gpu": "1"},
    )


def test_a_pod_whose_row_cannot_be_built_costs_its_own_row_only(monkeypatch):
    rec = _recorder()
    for name in ("a", "b", "c"):
        rec._record("pods", None, _pod(name), T0, None)
    real = recorder_module.pod_template_requests

    def requests(pod):
        if pod["metadata"]["name"] == "b":
            raise ValueError("odd")
        return real(pod)

    monkeypatch.setattr(recorder_module, "pod_template_requests", requests)
    assert [r.uid for r in list(rec._pod_rows())] == ["uid-a", "uid-c"]
    assert set(rec._pods) == {"uid-a", "uid-c"}


@pytest.fixture
def give_ways(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(REQUESTS, "give_way", lambda: calls.append(1) or 0.0)
    return calls


def test_the_pass_over_every_object_and_the_pod_rows_give_way(give_ways):
    rec = _recorder()
    store = rec.cache.store("pods")
    for i in range(100):
        store.upsert(_pod(f"p{i}"))
    rec._activate()
    assert len(give_ways) >= 100 // 32 and len(rec._pods) == 100
    give_ways.clear()
    assert len(list(rec._pod_rows())) == 100
    assert len(give_ways) >= 100 // 8


def test_a_sample_gives_way_between_queues(give_ways):
    rec = _recorder()
    for i in range(10):
        rec.cache.store("queues").upsert(
            {
                "metadata": {"name": f"q{i}", "uid": f"uid-q{i}"},
                "spec": {"capability": {"cpu": "4"}},
                "status": {"allocated": {"cpu": "1"}},
            }
        )
    rec._sample(T0)
    assert len(rec._samples) == 10 and len(give_ways) >= 5
