"""CronJob rules as Volcano's controller applies them: the starting deadline in Go's int64
nanoseconds, a deadline that lets no run start, an unknown concurrencyPolicy, a schedule that
matches no date, the "Local" time zone; and the simulated controller reading them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.volcano import cronjobs as vc

NOW = datetime(2026, 11, 29, 10, 0, 30, tzinfo=UTC)
INT64_MAX = 9223372036854775807
INT64_MIN = -9223372036854775808


def _cj(**spec) -> dict:
    return {
        "metadata": {"creationTimestamp": "2026-11-29T08:00:00Z"},
        "spec": {"schedule": "*/10 * * * *", **spec},
        "status": {"lastScheduleTime": "2026-11-29T09:00:00Z"},
    }


@pytest.mark.parametrize(
    ("seconds", "lookback", "out_of_range", "no_run"),
    [
        (60, 60_000_000_000, False, False),
        (1, 1_000_000_000, False, False),
        (0, 0, False, True),
        (-30, -30_000_000_000, False, True),
        (9223372036, 9223372036_000_000_000, False, False),  # the largest that fits
        (9223372037, -9223372036_709_551_616, True, True),  # wraps to about -292 years
        (10_000_000_000_000, 1_864_712_049_423_024_128, True, False),  # wraps to about 59 years
        (INT64_MAX, -1_000_000_000, True, True),  # wraps to -1 s: a moment after now
        (INT64_MIN, 0, True, True),
        (18_446_744_074, 290_448_384, True, False),  # wraps to 0.29 s, over the 100 ms wake delay
    ],
)
def test_the_deadline_is_read_in_go_int64_nanoseconds(seconds, lookback, out_of_range, no_run):
    cj = _cj(startingDeadlineSeconds=seconds)
    assert vc.deadline_nanoseconds(cj) == lookback
    assert vc.deadline_out_of_range(cj) is out_of_range
    assert vc.deadline_starts_no_run(cj) is no_run
    assert vc.invalid_field(cj) == ("startingDeadlineSeconds" if no_run else "")
    assert vc.starts_runs(cj) is not no_run
    missed = vc.missed_runs(cj, NOW, [])  # never an OverflowError
    assert missed is not None


def test_no_deadline_has_no_lookback():
    assert vc.deadline_nanoseconds(_cj()) is None and not vc.deadline_out_of_range(_cj())
    assert not vc.deadline_starts_no_run(_cj()) and not vc.past_deadline(_cj(), NOW - timedelta(days=9), NOW)


def test_a_deadline_that_lets_no_run_start_misses_every_time():
    every = ["09:10", "09:20", "09:30", "09:40", "09:50", "10:00"]
    for seconds in (0, INT64_MAX, INT64_MIN):
        missed = vc.missed_runs(_cj(startingDeadlineSeconds=seconds), NOW, [])
        assert [t.astimezone(UTC).strftime("%H:%M") for t in missed or []] == every, seconds


def test_a_wrapped_deadline_is_compared_as_the_controller_compares_it():
    # About 59 years back: every time since the last scheduled one is within it.
    cj = _cj(startingDeadlineSeconds=10_000_000_000_000)
    assert vc.missed_runs(cj, NOW, []) == []
    assert not vc.past_deadline(cj, NOW - timedelta(days=365 * 58), NOW)
    assert vc.past_deadline(cj, NOW - timedelta(days=365 * 60), NOW)
    # Exactly the deadline late is not past it; a microsecond more is.
    cj = _cj(startingDeadlineSeconds=60)
    assert not vc.past_deadline(cj, NOW - timedelta(seconds=60), NOW)
    assert vc.past_deadline(cj, NOW - timedelta(seconds=60, microseconds=1), NOW)


def test_an_unknown_concurrency_policy_is_applied_as_allow():
    assert vc.applied_concurrency_policy(_cj()) == "Allow"
    for policy in ("Allow", "Forbid", "Replace"):
        assert vc.applied_concurrency_policy(_cj(concurrencyPolicy=policy)) == policy
    for policy in ("Sometimes", "forbid"):
        cj = _cj(concurrencyPolicy=policy)
        assert vc.concurrency_policy(cj) == policy and vc.applied_concurrency_policy(cj) == "Allow"


def test_a_schedule_that_matches_no_date():
    assert vc.matches_no_date(_cj(schedule="0 0 30 2 *"))
    assert vc.matches_no_date(_cj(schedule="0 0 31 4 *", timeZone="Asia/Tokyo"))
    assert not vc.matches_no_date(_cj(schedule="0 0 29 2 *"))  # a leap day comes
    assert not vc.matches_no_date(_cj())
    assert not vc.matches_no_date(_cj(schedule="not cron"))  # unreadable: invalid_field says so
    assert not vc.matches_no_date(_cj(timeZone="Nowhere/X"))


def test_the_local_time_zone_is_the_controllers_utc():
    for cj in (_cj(timeZone="Local"), _cj(schedule="CRON_TZ=Local 0 3 * * *")):
        assert vc.local_zone(cj) and vc.time_zone(cj) == UTC and vc.invalid_field(cj) == ""
        assert vc.next_runs(cj, NOW, 1)
    # Go's time.LoadLocation matches "Local" exactly.
    assert not vc.local_zone(_cj(timeZone="local")) and vc.time_zone(_cj(timeZone="local")) is None
    assert not vc.local_zone(_cj())


# The simulated controller reads these rules through the domain: its conversions must keep them.
@pytest.mark.parametrize("seconds", [60, 1, 0, -30, 9223372036, 9223372037, 10**13, INT64_MAX, INT64_MIN])
def test_the_simulator_reads_the_deadline_as_the_domain_does(seconds):
    sim = pytest.importorskip("dashboard.sim.cronjobs")
    lookback = sim.deadline_lookback(seconds)
    assert (
        lookback // timedelta(microseconds=1)
        == vc.deadline_nanoseconds(_cj(startingDeadlineSeconds=seconds)) // 1000
    )


def test_the_negative_history_limit_is_the_invalid_field_when_it_comes_first():
    for spec in (
        {},
        {"successfulJobsHistoryLimit": -1},
        {"failedJobsHistoryLimit": -2},
        {"successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": -1},
        {"successfulJobsHistoryLimit": -1, "failedJobsHistoryLimit": -1},
        {"successfulJobsHistoryLimit": True, "failedJobsHistoryLimit": "-1"},
    ):
        field = vc.invalid_field(_cj(**spec))
        assert vc.negative_history_limit(_cj(**spec)) == field, spec


def test_the_simulator_reads_zones_as_the_domain_does():
    sim = pytest.importorskip("dashboard.sim.cronjobs")
    for zone in ("", "Local", "UTC", "Asia/Tokyo"):
        assert sim.zone_for(zone) is not None and vc.time_zone(_cj(timeZone=zone)) is not None
        when = NOW.astimezone(sim.zone_for(zone))
        assert when.utcoffset() == NOW.astimezone(vc.time_zone(_cj(timeZone=zone))).utcoffset(), zone
    for zone in ("local", "Nowhere/X"):
        with pytest.raises(ValueError):
            sim.zone_for(zone)
        assert vc.time_zone(_cj(timeZone=zone)) is None


def test_every_under_a_minute_starts_one_job_a_minute():
    # Jobs are named by the scheduled minute: the second time in a minute finds the name taken.
    last = datetime(2026, 12, 8, 1, 39, 28, tzinfo=UTC)
    cj = _cj(schedule="@every 30s")
    cj["metadata"]["creationTimestamp"] = "2026-12-08T01:38:58Z"
    cj["status"] = {"lastScheduleTime": "2026-12-08T01:39:28Z"}
    runs = vc.next_runs(cj, last + timedelta(seconds=1), 3)
    assert [t.astimezone(UTC).strftime("%H:%M:%S") for t in runs] == ["01:40:28", "01:41:28", "01:42:28"]
    every_second = _cj(schedule="@every 1s")
    every_second["metadata"]["creationTimestamp"] = "2026-12-08T01:38:58Z"
    runs = vc.next_runs(every_second, datetime(2026, 12, 8, 1, 40, 0, 500000, tzinfo=UTC), 2)
    assert [t.astimezone(UTC).strftime("%H:%M:%S") for t in runs] == ["01:40:01", "01:41:00"]
