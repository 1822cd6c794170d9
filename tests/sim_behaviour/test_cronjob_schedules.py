"""The simulated CronJob controller reads schedules as Volcano does (robfig/cron's
``ParseStandard``): it creates Jobs for ``@every 90s`` every 90 seconds and none for a schedule
robfig rejects (controllers on, simulated clock advanced; never slept)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.cronjobs import SCHEDULED_ANNOTATION

from .helpers import node
from .test_platform_kinds import cronjob, events_for, owned_jobs

START = datetime(2026, 11, 29, 10, 0, 30, tzinfo=UTC)  # a Sunday


@pytest.fixture
def cluster():
    c = SimulatedCluster(seed=5, start_time=START)
    c.store.create("nodes", node("cpu-0", cpu=64, memory="256Gi", gpus=0))
    yield c
    c.stop()


def _scheduled(c, name: str) -> list[str]:
    return sorted(j["metadata"]["annotations"][SCHEDULED_ANNOTATION] for j in owned_jobs(c, name))


def test_every_90s_creates_a_job_every_90_seconds(cluster):
    cluster.store.create("cronjobs", cronjob("every90", schedule="@every 90s", duration=5))
    cluster.advance(85)
    assert owned_jobs(cluster, "every90") == []  # created 10:00:30: the first run is at 10:02:00
    cluster.advance(10)
    assert _scheduled(cluster, "every90") == ["2026-11-29T10:02:00Z"]
    cluster.advance(90 * 3)
    assert _scheduled(cluster, "every90") == [
        "2026-11-29T10:02:00Z",
        "2026-11-29T10:03:30Z",
        "2026-11-29T10:05:00Z",
        "2026-11-29T10:06:30Z",
    ]
    first = datetime(2026, 11, 29, 10, 2, tzinfo=UTC)
    names = {j["metadata"]["name"] for j in owned_jobs(cluster, "every90")}
    assert f"every90-{int(first.timestamp()) // 60}" in names
    assert not any(r == "UnParseableCronJobSchedule" for _, r, _ in events_for(cluster, "CronJob", "every90"))


@pytest.mark.parametrize(
    "schedule", ["0 12 * * 7", "* * * * 0-7", "0 0 * * 5-1", "0 9 * * 1#1", "*/10 * * * * *", "0 0 * * * * *"]
)
def test_a_schedule_volcano_rejects_creates_no_job(cluster, schedule):
    cluster.store.create("cronjobs", cronjob("rejected", schedule=schedule))
    cluster.advance(60 * 3)
    assert owned_jobs(cluster, "rejected") == []
    assert (
        "Warning",
        "UnParseableCronJobSchedule",
        f"unparseable schedule for cronjob: {schedule}",
    ) in events_for(cluster, "CronJob", "rejected")
    if schedule == "0 12 * * 7":
        # Past Sunday noon, which croniter would read as "0 12 * * 0".
        cluster.advance((datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC) - cluster.clock.now()).total_seconds())
        assert owned_jobs(cluster, "rejected") == []


def test_a_schedule_matching_no_date_is_an_invalid_schedule_event(cluster):
    cluster.store.create("cronjobs", cronjob("feb30", schedule="0 0 30 2 *"))
    cluster.advance(5)
    assert owned_jobs(cluster, "feb30") == []
    assert (
        "Warning",
        "InvalidSchedule",
        "Error getting schedule time: time difference between two schedules is less than 1 second",
    ) in events_for(cluster, "CronJob", "feb30")


def test_syntax_robfig_accepts_runs_as_volcano_runs_it(cluster):
    # Empty list items are skipped, a sign is allowed, names and ? read in any case.
    cluster.store.create("cronjobs", cronjob("odd", schedule="+1,,3 10 ? NOV sun", duration=5))
    cluster.advance(60 * 4)
    assert _scheduled(cluster, "odd") == ["2026-11-29T10:01:00Z", "2026-11-29T10:03:00Z"]
    assert cluster.clock.now() - START == timedelta(minutes=4)
