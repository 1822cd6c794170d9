"""A Queue's allocated amounts as sampled: 0 for a resource its status.allocated leaves out,
unknown (NULL, a gap in the chart) when its status has no allocated map at all."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from dashboard.history.models import QueueSample
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.kube.cache import CacheOptions, ClusterCache
from dashboard.volcano.history import queue_amounts

T0 = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)


def _queue(name: str, status: dict) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {"capability": {"cpu": "8", "nvidia.com/gpu": "4"}},
        "status": status,
    }


STATED = _queue("stated", {"state": "Open", "allocated": {"cpu": "2"}})
UNSTATED = _queue("unstated", {"state": "Open"})


def test_queue_amounts_tell_an_absent_resource_from_an_absent_allocation():
    stated = queue_amounts(STATED)
    assert stated["cpu"]["allocated"] == 2 and stated["nvidia.com/gpu"]["allocated"] == 0
    assert queue_amounts(_queue("empty", {"allocated": {}}))["cpu"]["allocated"] == 0
    unstated = queue_amounts(UNSTATED, ["memory"])
    assert {res: a["allocated"] for res, a in unstated.items()} == {
        "cpu": None,
        "nvidia.com/gpu": None,
        "memory": None,
    }
    assert unstated["cpu"]["capability"] == Decimal(8)


def test_a_queue_without_status_allocated_is_sampled_as_unknown(history_db):
    cache = ClusterCache(options=CacheOptions(pod_record_seconds=0))
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        cache.store(kind).set_state("synced")
    cache.store("queues").upsert(STATED)
    cache.store("queues").upsert(UNSTATED)
    rec = Recorder(cache, history_db, RecorderOptions(flush_seconds=0), clock=lambda: T0)
    rec.step(force_flush=True)
    rows = QueueSample.objects.using(history_db).values_list("queue", "resource", "allocated", "capability")
    assert sorted(rows) == [
        ("stated", "cpu", 2.0, 8.0),
        ("stated", "nvidia.com/gpu", 0.0, 4.0),
        ("unstated", "cpu", None, 8.0),
        ("unstated", "nvidia.com/gpu", None, 4.0),
    ]
