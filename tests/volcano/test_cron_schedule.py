"""CronJob schedules read as robfig/cron v3's ``ParseStandard`` reads them (Volcano's controller
and webhook): what it accepts, what it rejects and its reason, and the times it gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.volcano import cron_schedule as cs
from dashboard.volcano import cronjobs as vc

NOW = datetime(2026, 11, 29, 10, 0, 30, tzinfo=UTC)  # a Sunday

REJECTED = [
    ("0 12 * * 7", "end of range (7) above maximum (6): 7"),
    ("* * * * 0-7", "end of range (7) above maximum (6): 0-7"),
    ("0 0 * * 5-1", "beginning of range (5) beyond end of range (1): 5-1"),
    ("0 0 L * *", 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'),
    ("0 9 * * 1#1", 'failed to parse int from 1#1: strconv.Atoi: parsing "1#1": invalid syntax'),
    ("0 0 * * 1W", 'failed to parse int from 1W: strconv.Atoi: parsing "1W": invalid syntax'),
    ("*/10 * * * * *", "expected exactly 5 fields, found 6: [*/10 * * * * *]"),
    ("0 0 * * * * *", "expected exactly 5 fields, found 7: [0 0 * * * * *]"),
    ("0 0 * *", "expected exactly 5 fields, found 4: [0 0 * *]"),
    ("", "empty spec string"),
    ("   ", "expected exactly 5 fields, found 0: []"),
    (" @daily", "expected exactly 5 fields, found 1: [@daily]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("0 24 * * *", "end of range (24) above maximum (23): 24"),
    ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("0 0 * 13 *", "end of range (13) above maximum (12): 13"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("0 0 * JANUARY *", 'failed to parse int from JANUARY: strconv.Atoi: parsing "JANUARY": invalid syntax'),
    ("@Daily", "unrecognized descriptor: @Daily"),
    ("@reboot", "unrecognized descriptor: @reboot"),
    ("@every 90", 'failed to parse duration @every 90: time: missing unit in duration "90"'),
    ("@every 5d", 'failed to parse duration @every 5d: time: unknown unit "d" in duration "5d"'),
    ("@every ", 'failed to parse duration @every : time: invalid duration ""'),
    ("@every", "unrecognized descriptor: @every"),
]


@pytest.mark.parametrize(("text", "reason"), REJECTED)
def test_robfig_rejects_with_its_reason(text, reason):
    assert cs.parse(text) == cs.Unparseable(reason)


ACCEPTED = [
    # (schedule, its first three times after NOW, "HH:MM" or "MM-DD HH:MM" in UTC)
    ("*/15 * * * *", ["10:15", "10:30", "10:45"]),
    ("5/15 * * * *", ["10:05", "10:20", "10:35"]),  # a/n is a-<max>/n
    ("1-10/3 * * * *", ["10:01", "10:04", "10:07"]),
    ("0 0 ? * MON-fri", ["11-30 00:00", "12-01 00:00", "12-02 00:00"]),
    ("0 0 1 jan,Jul ?", ["01-01 00:00", "07-01 00:00", "01-01 00:00"]),
    ("0 12 * * SUN", ["12:00", "12-06 12:00", "12-13 12:00"]),
    ("0 12 * * 0", ["12:00", "12-06 12:00", "12-13 12:00"]),
    ("  0   12 * *\t0  ", ["12:00", "12-06 12:00", "12-13 12:00"]),
    ("0,,30 10 * * *", ["10:30", "11-30 10:00", "11-30 10:30"]),
    ("*-5 10 * * *", ["10:01", "10:02", "10:03"]),  # robfig ignores what follows * in a range
    ("+5 10 * * *", ["10:05", "11-30 10:05", "12-01 10:05"]),
    ("@hourly", ["11:00", "12:00", "13:00"]),
    ("@daily", ["11-30 00:00", "12-01 00:00", "12-02 00:00"]),
    ("@midnight", ["11-30 00:00", "12-01 00:00", "12-02 00:00"]),
    ("@weekly", ["12-06 00:00", "12-13 00:00", "12-20 00:00"]),
    ("@monthly", ["12-01 00:00", "01-01 00:00", "02-01 00:00"]),
    ("@yearly", ["01-01 00:00", "01-01 00:00", "01-01 00:00"]),
    ("@annually", ["01-01 00:00", "01-01 00:00", "01-01 00:00"]),
    # Day of month and day of week: both must match when either is * or ?, else either may.
    ("0 0 */2 * 1", ["11-30 00:00", "12-01 00:00", "12-03 00:00"]),
    ("0 0 1-31 * 1", ["11-30 00:00", "12-01 00:00", "12-02 00:00"]),
    ("0 0 13 * FRI", ["12-04 00:00", "12-11 00:00", "12-13 00:00"]),
    ("0 0 * * */2", ["12-01 00:00", "12-03 00:00", "12-05 00:00"]),
]


def _fmt(t: datetime) -> str:
    t = t.astimezone(UTC)
    return t.strftime("%H:%M") if t.date() == NOW.date() else t.strftime("%m-%d %H:%M")


@pytest.mark.parametrize(("text", "times"), ACCEPTED)
def test_robfig_accepts_and_the_times_are_its_times(text, times):
    reading = cs.parse(text)
    assert isinstance(reading, cs.CronSchedule), reading
    got = reading.times(NOW)
    assert [_fmt(next(got)) for _ in range(3)] == times


def test_a_field_of_commas_only_is_accepted_and_never_runs():
    reading = cs.parse(", * * * *")
    assert isinstance(reading, cs.CronSchedule) and list(reading.times(NOW)) == []
    assert list(cs.parse("0 0 30 2 *").times(NOW)) == []  # 30 February


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("@every 90s", 90),
        ("@every 1h30m", 5400),
        ("@every 1.5h", 5400),
        ("@every 500ms", 1),  # below a second: a second
        ("@every 2500ms", 2),  # cut to whole seconds
        ("@every 0", 1),
        ("@every -5m", 1),
        ("@every 1m0.5s", 60),
        ("@every 3\u00b5s", 1),
    ],
)
def test_every_takes_a_go_duration(text, seconds):
    assert cs.parse(text) == cs.EverySchedule(seconds)


def test_every_runs_on_the_grid_of_its_anchor():
    every = cs.EverySchedule(90)
    anchor = NOW.replace(second=0) - timedelta(minutes=10)  # 09:50:00
    got = every.times(NOW, anchor)
    assert [next(got).strftime("%H:%M:%S") for _ in range(3)] == ["10:02:00", "10:03:30", "10:05:00"]
    got = every.times(NOW.replace(microsecond=400_000))
    assert next(got) == NOW + timedelta(seconds=90)  # robfig: t cut to the second, plus the delay


def test_zone_prefix_and_time_zone_as_the_controller_passes_them():
    assert cs.split_zone("CRON_TZ=Asia/Tokyo  0 9 * * * ", "Europe/Paris") == (
        "0 9 * * *",
        "Asia/Tokyo",
        True,
    )
    assert cs.split_zone("TZ=UTC @every 90s", None) == ("@every 90s", "UTC", True)
    # With spec.timeZone the controller prefixes TZ=<zone>, and robfig trims what follows it.
    assert cs.split_zone(" @daily ", "Asia/Tokyo") == ("@daily", "Asia/Tokyo", False)
    assert cs.split_zone(" @daily ", None) == (" @daily ", None, False)


def test_the_cronjob_reads_its_schedule_with_robfigs_rules():
    every = {"metadata": {"creationTimestamp": "2026-11-29T09:50:00Z"}, "spec": {"schedule": "@every 90s"}}
    assert vc.schedule_valid(every) and vc.invalid_field(every) == ""
    assert [t.strftime("%H:%M:%S") for t in vc.next_runs(every, NOW, 2)] == ["10:02:00", "10:03:30"]
    sunday7 = {"metadata": {"creationTimestamp": "2026-11-20T00:00:00Z"}, "spec": {"schedule": "0 12 * * 7"}}
    assert not vc.schedule_valid(sunday7) and vc.invalid_field(sunday7) == "schedule"
    assert vc.schedule_problem(sunday7) == "end of range (7) above maximum (6): 7"
    assert vc.next_runs(sunday7, NOW) is None and vc.missed_runs(sunday7, NOW, []) is None
    assert vc.schedule_problem({"spec": {"schedule": "*/5 * * * *"}}) == ""


def test_missed_every_runs_are_on_its_grid():
    cj = {
        "metadata": {"creationTimestamp": "2026-11-29T09:50:00Z"},
        "spec": {"schedule": "@every 90s", "startingDeadlineSeconds": 30},
        "status": {"lastScheduleTime": "2026-11-29T09:54:00Z"},
    }
    missed = vc.missed_runs(cj, NOW, [])
    assert [t.strftime("%H:%M:%S") for t in missed] == ["09:55:30", "09:57:00", "09:58:30"]
