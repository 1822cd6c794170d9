"""A Job restarting repeatedly: restarts in the window from the Restarting times seen and the Job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboard.volcano.restarts import last_restart, restarting_repeatedly, restarts_within

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def job(phase="Running", retry=0, restarted=None, created=NOW - timedelta(hours=2)):
    conditions = [{"status": "Pending", "lastTransitionTime": "2026-01-01T09:00:00Z"}]
    if restarted is not None:
        conditions.append({"status": "Restarting", "lastTransitionTime": restarted.isoformat()})
    return {
        "metadata": {"name": "j", "namespace": "ns", "creationTimestamp": created.isoformat()},
        "status": {"state": {"phase": phase}, "retryCount": retry, "conditions": conditions},
    }


def test_the_restarts_seen_in_the_window_count():
    last = NOW - timedelta(minutes=1)
    j = job(retry=5, restarted=last)
    assert last_restart(j) == last
    seen = (NOW - timedelta(minutes=30), NOW - timedelta(minutes=8), last)
    assert restarts_within(j, seen, NOW) == 2
    assert restarting_repeatedly(j, seen, NOW) == 2
    # Only the Job's own latest restart is known: one, not "repeatedly".
    assert restarting_repeatedly(j, (), NOW) is None
    assert restarting_repeatedly(j, seen, NOW + timedelta(minutes=9)) is None


def test_a_job_created_in_the_window_restarted_retry_count_times_in_it():
    j = job(retry=3, restarted=NOW - timedelta(minutes=1), created=NOW - timedelta(minutes=5))
    assert restarting_repeatedly(j, (), NOW) == 3


def test_a_job_in_a_final_phase_is_not_restarting():
    j = job(phase="Failed", retry=3, restarted=NOW - timedelta(minutes=1), created=NOW - timedelta(minutes=5))
    assert restarting_repeatedly(j, (), NOW) is None
    assert restarts_within(job(), (), NOW) == 0 and last_restart(job()) is None
