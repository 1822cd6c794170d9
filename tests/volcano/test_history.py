"""dashboard/volcano/history.py: percentiles, hours, waits, queue order, pod times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from dashboard.volcano.history import (
    Interval,
    QueuedGang,
    admission_wait,
    daily_percentiles,
    downsample,
    gpu_amount,
    percentile,
    pod_times,
    position,
    queue_amounts,
    queue_resources,
    resource_hours,
)

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def test_percentile_interpolates_between_ranks():
    assert percentile([], 50) is None
    assert percentile([7.0], 90) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([10.0, 0.0, 20.0, 30.0, 40.0], 90) == 36.0


def test_resource_hours_clip_to_the_window_and_run_open_intervals_to_its_end():
    ivs = [
        Interval(T0 - timedelta(hours=1), T0 + timedelta(hours=1), 2.0),  # 1 h inside x 2
        Interval(T0 + timedelta(hours=2), None, 1.0),  # still running: 1 h to the end
        Interval(T0 - timedelta(hours=5), T0 - timedelta(hours=4), 8.0),  # before the window
    ]
    assert resource_hours(ivs, T0, T0 + timedelta(hours=3)) == 3.0


def test_admission_wait_and_daily_percentiles():
    assert admission_wait(T0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=3)) == timedelta(minutes=3)
    assert admission_wait(T0, None, None) is None
    assert admission_wait(T0, None, T0 - timedelta(seconds=5)) == timedelta(0)  # clock skew
    day2 = T0 + timedelta(days=1)
    rows = daily_percentiles([(T0, 60.0), (T0, 120.0), (day2, 30.0)])
    assert rows == [(T0.date(), 90.0, 114.0, 2), (day2.date(), 30.0, 30.0, 1)]


def test_queue_order_is_priority_then_age():
    gangs = [
        QueuedGang("a", "old-low", 0, T0),
        QueuedGang("a", "new-high", 100, T0 + timedelta(minutes=5)),
        QueuedGang("a", "new-low", 0, T0 + timedelta(minutes=1)),
        QueuedGang("a", "unknown-age", 0, None),
    ]
    assert position(gangs, "a", "new-high") == (1, 4)
    assert position(gangs, "a", "old-low") == (2, 4)
    assert position(gangs, "a", "unknown-age") == (4, 4)
    assert position(gangs, "a", "missing") is None


def test_downsample_leaves_gaps_as_none():
    pts = [(T0, 1.0), (T0 + timedelta(seconds=30), 3.0), (T0 + timedelta(minutes=3), None)]
    out = downsample(pts, T0, T0 + timedelta(minutes=4), 4)
    assert [v for _t, v in out] == [2.0, None, None, None]


def test_gpu_amount_and_queue_amounts_never_read_unknown_as_zero():
    assert gpu_amount({"nvidia.com/gpu": Decimal(2), "amd.com/gpu": Decimal(1), "cpu": Decimal(8)}) == 3
    queue = {
        "spec": {"capability": {"cpu": "bogus", "nvidia.com/gpu": "4"}},
        "status": {"allocated": {"cpu": "2"}},
    }
    amounts = queue_amounts(queue)
    assert amounts["cpu"] == {
        "allocated": Decimal(2),
        "deserved": None,
        "capability": None,
        "guarantee": None,
    }
    assert amounts["nvidia.com/gpu"]["capability"] == 4
    # The scheduler lists only what it placed: a GPU it left out of status.allocated is 0 (as
    # the pages read it), a value it wrote that is no amount stays unknown.
    assert amounts["nvidia.com/gpu"]["allocated"] == 0
    odd = queue_amounts({"spec": {"capability": {"cpu": "4"}}, "status": {"allocated": {"cpu": "x"}}})
    assert odd["cpu"]["allocated"] is None


def test_queue_resources_are_the_resources_of_its_amounts():
    queue = {
        "spec": {"capability": {"cpu": "4"}, "guarantee": {"resource": {"memory": "1Gi"}}, "deserved": "odd"},
        "status": {"allocated": {"nvidia.com/gpu": "x"}},
    }
    assert queue_resources(queue) == set(queue_amounts(queue)) == {"cpu", "memory", "nvidia.com/gpu"}
    assert queue_resources({"spec": None}) == set()


def test_pod_times_from_the_pod_status():
    pod = {
        "metadata": {"creationTimestamp": "2026-11-29T10:00:00Z"},
        "status": {
            "phase": "Failed",
            "startTime": "2026-11-29T10:00:05Z",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-29T10:00:02Z"}
            ],
            "containerStatuses": [
                {
                    "name": "m",
                    "restartCount": 1,
                    "state": {"terminated": {"exitCode": 3, "finishedAt": "2026-11-29T10:01:00Z"}},
                }
            ],
        },
    }
    t = pod_times(pod)
    assert (t.created, t.scheduled, t.started) == (T0, T0 + timedelta(seconds=2), T0 + timedelta(seconds=5))
    assert t.finished == T0 + timedelta(minutes=1) and t.exit_code == 3 and t.restarts == 1
    assert pod_times({}).created is None
