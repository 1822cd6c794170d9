"""Volcano CronJobs (batch.volcano.sh/v1alpha1 ``CronJob``): schedule, runs, missed runs.

The controller follows the Kubernetes CronJob controller: a Job per scheduled time, named
``<cronjob>-<scheduled time in Unix minutes>`` and annotated ``volcano.sh/cronjob-scheduled-timestamp``
(RFC 3339), owned by the CronJob; ``concurrencyPolicy`` Allow (default) / Forbid / Replace;
``startingDeadlineSeconds`` bounds how late a run may start (``deadline_nanoseconds``); history
limits default to 3 successful and 1 failed Job (none of the three may be negative:
``invalid_field``). ``spec.timeZone`` is an IANA zone or "Local"; without one, and for "Local",
the controller's local zone applies (robfig/cron reads the schedule in Go's ``time.Local``: UTC in
Volcano's images, which set no TZ and ship no zone database), and this module reads it in UTC.
Schedules are read as the controller's parser (robfig/cron's ``ParseStandard``) reads them:
``cron_schedule``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dashboard.volcano import cron_schedule, objects
from dashboard.volcano.cron_schedule import Schedule, Unparseable
from dashboard.volcano.objects import as_dict, as_list, as_str, name, spec, status
from dashboard.volcano.phases import FINAL_JOB_PHASES, job_phase
from dashboard.volcano.time import created_at, parse_time

SCHEDULED_TIMESTAMP_ANNOTATION = "volcano.sh/cronjob-scheduled-timestamp"
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
DEFAULT_CONCURRENCY_POLICY = "Allow"
DEFAULT_SUCCESSFUL_HISTORY = 3
DEFAULT_FAILED_HISTORY = 1
# The Kubernetes CronJob controller gives up counting missed start times beyond 100.
MISSED_LIMIT = 100


def schedule(cj: object) -> str:
    return as_str(spec(cj).get("schedule")).strip()


# A schedule may start with its own zone, "CRON_TZ=Asia/Tokyo 0 9 * * *": the controller's cron
# parser (robfig/cron) reads it and Volcano's controller, like Kubernetes', runs the CronJob with
# an UnsupportedSchedule warning ("not officially supported").
def _split(cj: object) -> tuple[str, str | None]:
    """(the text the controller's parser reads, the zone of a CRON_TZ=/TZ= prefix or None)."""
    sp = spec(cj)
    text, zone, prefixed = cron_schedule.split_zone(as_str(sp.get("schedule")), as_str(sp.get("timeZone")))
    return text, zone if prefixed else None


def zone_prefixed(cj: object) -> bool:
    """The schedule names its own zone (CRON_TZ=/TZ=): it runs, with Volcano's warning."""
    return _split(cj)[1] is not None


def schedule_reading(cj: object) -> Schedule | Unparseable:
    """The schedule as Volcano's controller reads it (``cron_schedule.parse``): a schedule, or
    the parser's reason for rejecting it."""
    return cron_schedule.parse(_split(cj)[0])


def time_zone_name(cj: object) -> str:
    """The zone the schedule names: a CRON_TZ=/TZ= prefix (it wins), else ``spec.timeZone`` as
    written; "" when neither is set."""
    prefixed = _split(cj)[1]
    return prefixed if prefixed is not None else as_str(spec(cj).get("timeZone")).strip()


# Go's time.LoadLocation("Local") is the process's local zone, which the controller accepts.
LOCAL_ZONE = "Local"


def local_zone(cj: object) -> bool:
    """The schedule names "Local" (exactly, as Go's time.LoadLocation does): the controller's own
    zone, UTC in Volcano's images."""
    return time_zone_name(cj) == LOCAL_ZONE


def zone_named(name: str | None) -> tzinfo | None:
    """The zone a name means to the controller: UTC for none and for "Local" (its own zone), the
    IANA zone of that name, None when the name is no IANA zone known here (the controller rejects
    such a CronJob)."""
    if not name or name == LOCAL_ZONE:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name no file system can hold
        return None


def time_zone(cj: object) -> tzinfo | None:
    """The zone the schedule is read in (``zone_named`` of ``time_zone_name``)."""
    return zone_named(time_zone_name(cj))


def schedule_valid(cj: object) -> bool:
    return not isinstance(schedule_reading(cj), Unparseable)


def schedule_problem(cj: object) -> str:
    """Why the controller's parser rejects the schedule, in its words ("end of range (7) above
    maximum (6): 7"); "" when it reads it."""
    reading = schedule_reading(cj)
    return reading.reason if isinstance(reading, Unparseable) else ""


# The spec fields whose minimum is 0 in Volcano's CronJob CRD (config/crd/volcano/bases, since
# v1.13). The CRDs it generates with CRD_VERSION=v1beta1 leave the minimum out, so a negative value
# can be stored, and the controller never checks one.
NON_NEGATIVE_FIELDS = ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds")


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def negative_fields(cj: object) -> list[str]:
    """The NON_NEGATIVE_FIELDS set to a negative integer, in that order."""
    sp = spec(cj)
    return [f for f in NON_NEGATIVE_FIELDS if (value := _integer(sp.get(f))) is not None and value < 0]


def negative_history_limit(cj: object) -> str:
    """The first history limit (successful, then failed: the order of pruning) that is negative, ""
    when none is: ``removeOldestJobs`` deletes every finished Job of that outcome, then indexes
    past the end of the list and panics, so the sync goes no further (``invalid_field``)."""
    return next((f for f in negative_fields(cj) if f != "startingDeadlineSeconds"), "")


def invalid_field(cj: object) -> str:
    """The spec field that keeps Volcano's controller from starting any Job of the CronJob, in the
    order its sync meets them (pkg/controllers/cronjob), "" when none does:

    - "successfulJobsHistoryLimit", "failedJobsHistoryLimit" when negative: pruning finished Jobs
      comes first on every pass, suspended or not; ``removeOldestJobs`` deletes ``len(jobs) -
      limit`` Jobs, i.e. every Job of that outcome and then an index past the end of the list: a
      panic, which apimachinery's HandleCrash re-raises, so vc-controller-manager exits;
    - "schedule" (not a cron schedule; its event UnParseableCronJobSchedule), "timeZone" (not an
      IANA zone; InvalidTimeZone);
    - "startingDeadlineSeconds" when no run can start (``deadline_starts_no_run``: negative, 0, or
      out of range and wrapped to a lookback no longer than the controller's wake delay)."""
    negative = negative_fields(cj)
    if negative and negative[0] != "startingDeadlineSeconds":
        return negative[0]
    if not schedule_valid(cj):
        return "schedule"
    if time_zone(cj) is None:
        return "timeZone"
    return "startingDeadlineSeconds" if deadline_starts_no_run(cj) else ""


def suspended(cj: object) -> bool:
    return spec(cj).get("suspend") is True


def starts_runs(cj: object) -> bool:
    """Volcano's controller starts a Job at the CronJob's scheduled times: it is not suspended and
    no field keeps it from starting any (``invalid_field``)."""
    return not suspended(cj) and not invalid_field(cj)


def concurrency_policy(cj: object) -> str:
    """``spec.concurrencyPolicy`` as written, else the default "Allow"."""
    return as_str(spec(cj).get("concurrencyPolicy")) or DEFAULT_CONCURRENCY_POLICY


def applied_concurrency_policy(cj: object) -> str:
    """The policy the controller applies: Forbid and Replace as written (case included), anything
    else Allow (``processConcurrencyPolicy`` compares with those two only and otherwise starts the
    Job)."""
    policy = concurrency_policy(cj)
    return policy if policy in CONCURRENCY_POLICIES else DEFAULT_CONCURRENCY_POLICY


def starting_deadline(cj: object) -> int | None:
    """``spec.startingDeadlineSeconds`` as written, a negative one included (None: no deadline)."""
    return _integer(spec(cj).get("startingDeadlineSeconds"))


# Go's time.Duration is an int64 count of nanoseconds; products of Durations wrap around.
_INT64_SPAN = 1 << 64
_NANOSECONDS = 1_000_000_000
# The controller requeues a CronJob 100 ms after its next scheduled time (``nextScheduleDelta``):
# a sync looks at a scheduled time that late.
WAKE_DELAY_NANOSECONDS = 100_000_000


def _go_int64(value: int) -> int:
    """``value`` wrapped into int64 as Go's arithmetic wraps it."""
    return (value + _INT64_SPAN // 2) % _INT64_SPAN - _INT64_SPAN // 2


def deadline_nanoseconds(cj: object) -> int | None:
    """How far before now the controller looks for scheduled times to start, in nanoseconds (None:
    no deadline): ``mostRecentScheduleTime`` takes ``now.Add(-time.Second *
    time.Duration(startingDeadlineSeconds))``, a product in int64 nanoseconds that wraps around
    from 9223372037 s on (9223372036854775807 s gives -1 s). Negative: that moment lies after now.
    A plain int: comparing durations with it never overflows."""
    seconds = starting_deadline(cj)
    return None if seconds is None else lookback_nanoseconds(seconds)


def lookback_nanoseconds(seconds: int) -> int:
    """``-time.Second * time.Duration(seconds)`` negated: the lookback of a deadline of ``seconds``
    in Go's int64 nanoseconds, wrapped as Go wraps it (``deadline_nanoseconds``)."""
    return -_go_int64(-_NANOSECONDS * seconds)


def deadline_out_of_range(cj: object) -> bool:
    """``startingDeadlineSeconds`` (the CRD admits any int64) is too large, or too small, for Go's
    nanosecond Duration: the controller uses ``deadline_nanoseconds``, not the value written."""
    seconds = starting_deadline(cj)
    return seconds is not None and _go_int64(-_NANOSECONDS * seconds) != -_NANOSECONDS * seconds


def deadline_starts_no_run(cj: object) -> bool:
    """Whatever the schedule, the controller starts no run: the lookback (``deadline_nanoseconds``)
    is no longer than the 100 ms after a scheduled time at which the controller wakes for it, so
    the time already lies before the earliest one it looks at. True for 0 and negative values and
    for out-of-range ones that wrap to such a lookback."""
    lookback = deadline_nanoseconds(cj)
    return lookback is not None and lookback <= WAKE_DELAY_NANOSECONDS


def past_deadline(cj: object, scheduled: datetime, now: datetime) -> bool:
    """At ``now`` the controller no longer starts a run ``scheduled`` then: it is older than the
    deadline's lookback (False without a deadline). Compares durations in nanoseconds."""
    lookback = deadline_nanoseconds(cj)
    if lookback is None:
        return False
    return (now - scheduled) // timedelta(microseconds=1) * 1000 > lookback


def history_limits(cj: object) -> tuple[int, int]:
    """(successfulJobsHistoryLimit, failedJobsHistoryLimit) as written, a negative one included,
    with the defaults 3 and 1."""
    sp = spec(cj)
    ok, bad = _integer(sp.get("successfulJobsHistoryLimit")), _integer(sp.get("failedJobsHistoryLimit"))
    return (
        ok if ok is not None else DEFAULT_SUCCESSFUL_HISTORY,
        bad if bad is not None else DEFAULT_FAILED_HISTORY,
    )


def last_schedule_time(cj: object) -> datetime | None:
    return parse_time(status(cj).get("lastScheduleTime"))


def last_successful_time(cj: object) -> datetime | None:
    return parse_time(status(cj).get("lastSuccessfulTime"))


def active_refs(cj: object) -> list[dict[str, Any]]:
    """``status.active[]``: references to the Jobs the controller counts as running."""
    return [r for r in (as_dict(x) for x in as_list(status(cj).get("active"))) if r]


def _times(cj: object, start: datetime) -> Iterator[datetime] | None:
    """The scheduled times after ``start`` in the CronJob's zone (``@every`` ones on the grid of
    the last scheduled time, else of the creation); None when the schedule or zone cannot be read."""
    zone = time_zone(cj)
    reading = schedule_reading(cj)
    if zone is None or isinstance(reading, Unparseable):
        return None
    anchor = last_schedule_time(cj) or created_at(cj)
    return reading.times(start.astimezone(zone), anchor.astimezone(zone) if anchor else None)


def next_runs(cj: object, now: datetime, n: int = 5) -> list[datetime] | None:
    """The next ``n`` scheduled times after ``now`` that start a Job (aware, in the CronJob's
    zone); fewer, or [], when the schedule matches no later date (``0 0 30 2 *``: it never runs);
    None when the schedule or the zone cannot be read. A suspended CronJob still has them (they are
    skipped). Jobs are named ``<cronjob>-<scheduled Unix minutes>``: of several times in one
    minute (``@every 30s``) only the first starts one, and none in the minute of the last
    scheduled time; the controller's create of the others finds the name taken and does nothing."""
    it = _times(cj, now)
    if it is None:
        return None
    last = last_schedule_time(cj)
    taken = {_unix_minute(last)} if last is not None else set()
    return list(itertools.islice(_first_of_each_minute(it, taken), n))


def _unix_minute(t: datetime) -> int:
    return int(t.timestamp()) // 60


def _first_of_each_minute(times: Iterator[datetime], taken: set[int]) -> Iterator[datetime]:
    for t in times:
        minute = _unix_minute(t)
        if minute not in taken:
            taken.add(minute)
            yield t


# Any moment serves: a five-field schedule that matches no date after one matches none after any.
_SOME_MOMENT = datetime(2000, 1, 1, tzinfo=UTC)


@functools.lru_cache(maxsize=1024)  # list pages ask for every CronJob; searching years is slow
def _matches_no_date(text: str, zone: str) -> bool:
    return next_runs({"spec": {"schedule": text, "timeZone": zone}}, _SOME_MOMENT, 1) == []


def matches_no_date(cj: object) -> bool:
    """The schedule can be read but matches no date (``0 0 30 2 *``: ``next_runs`` finds none):
    Volcano's controller fails every sync with an InvalidSchedule warning ("time difference
    between two schedules is less than 1 second") and never starts a Job."""
    return _matches_no_date(schedule(cj), as_str(spec(cj).get("timeZone")).strip())


def scheduled_time(job: object) -> datetime | None:
    """The scheduled time a CronJob's Job ran for: its annotation, else the Unix minutes suffix of
    its name."""
    at = parse_time(objects.annotations(job).get(SCHEDULED_TIMESTAMP_ANNOTATION))
    if at is not None:
        return at
    tail = name(job).rsplit("-", 1)[-1]
    if tail.isdigit() and len(tail) <= 10:
        return datetime.fromtimestamp(int(tail) * 60, tz=UTC)
    return None


@dataclass(frozen=True)
class Run:
    """One Job of a CronJob: when it was scheduled, its phase, when it finished (the phase's
    transition time once final) and how long it took (None while running or when unknown)."""

    job: dict[str, Any]
    scheduled: datetime | None
    phase: str
    started: datetime | None
    finished: datetime | None
    seconds: float | None


def run_of(job: dict[str, Any]) -> Run:
    phase = job_phase(job)
    started = created_at(job)
    finished = None
    if phase in FINAL_JOB_PHASES:
        finished = parse_time(as_dict(status(job).get("state")).get("lastTransitionTime"))
    seconds = (finished - started).total_seconds() if finished and started and finished >= started else None
    return Run(job, scheduled_time(job), phase, started, finished, seconds)


def runs(jobs: list[dict[str, Any]]) -> list[Run]:
    """The runs of a CronJob's Jobs, newest scheduled first."""
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted((run_of(j) for j in jobs), key=lambda r: r.scheduled or r.started or epoch, reverse=True)


@dataclass(frozen=True)
class Suspension:
    """A stretch of time the CronJob was seen suspended (``spec.suspend: true``) by whoever watched
    it: ``start`` when it was first seen suspended after being seen running (None: it was already
    suspended when first seen, at ``seen``), ``end`` when it was first seen resumed (None: still
    suspended). The object keeps no such times, only its current ``spec.suspend``."""

    start: datetime | None
    end: datetime | None
    seen: datetime

    def covers(self, t: datetime) -> bool:
        """``t`` lies in the stretch (a start not known counts from ``seen``)."""
        return (self.start or self.seen) <= t and (self.end is None or t < self.end)


@dataclass(frozen=True)
class NotStarted:
    """Scheduled times with no Job that can no longer start, oldest first, each list at most
    MISSED_LIMIT long: ``missed`` (the controller should have started them), ``skipped`` (they fell
    in a Suspension: not started on purpose, as the controller does not start a suspended
    CronJob), ``unsure`` (before the CronJob was first seen, already suspended then: skipped or
    missed is not known); ``suspended_since`` the first time it was seen suspended when that is
    not its real start (None otherwise)."""

    missed: list[datetime]
    skipped: list[datetime]
    unsure: list[datetime]
    suspended_since: datetime | None


def not_started(
    cj: object, now: datetime, jobs: list[dict[str, Any]], suspensions: Sequence[Suspension] = ()
) -> NotStarted | None:
    """Scheduled times after ``status.lastScheduleTime`` (else the CronJob's creation) up to ``now``
    for which no Job exists and that can no longer start: every one while ``invalid_field`` names a
    field; else past ``startingDeadlineSeconds`` when set; without a deadline, every such time but
    the newest while the CronJob runs (the controller starts only the newest unmet time). Sorted
    by ``suspensions`` (the ones seen, oldest first; a CronJob suspended now with none seen counts
    as suspended since ``now``); the times skipped in a suspension stay listed after the
    controller has scheduled a later run.
    None when the schedule cannot be read."""
    last = last_schedule_time(cj) or created_at(cj)
    if last is None:
        return NotStarted([], [], [], None)
    stretches = list(suspensions)
    if suspended(cj) and not any(s.end is None for s in stretches):
        stretches.append(Suspension(None, None, now))
    # The times skipped in a stretch stay listed once the controller has moved past them.
    begin = min([last, *(s.start or s.seen for s in stretches)])
    born = created_at(cj)
    it = _times(cj, max(begin, born) if born else begin)
    if it is None:
        return None
    have = {
        t.astimezone(UTC).replace(second=0, microsecond=0) for t in (scheduled_time(j) for j in jobs) if t
    }
    before: list[datetime] = []
    due: list[datetime] = []
    for t in it:
        if len(due) > MISSED_LIMIT or len(before) > MISSED_LIMIT or t > now:
            break
        if t.astimezone(UTC).replace(second=0, microsecond=0) not in have:
            (due if t > last else before).append(t)
    deadline = starting_deadline(cj)
    if invalid_field(cj):
        pass  # the controller starts none of them: every one is missed
    elif deadline is not None:
        due = [t for t in due if past_deadline(cj, t, now)]
    elif not suspended(cj):
        due = due[:-1]
    first = next((s for s in stretches if s.start is None), None)
    out = NotStarted([], [], [], first.seen if first is not None else None)
    out.skipped.extend(t for t in before if any(s.covers(t) for s in stretches))
    for t in due:
        if any(s.covers(t) for s in stretches):
            out.skipped.append(t)
        elif first is not None and t < first.seen:
            out.unsure.append(t)
        else:
            out.missed.append(t)
    del out.missed[MISSED_LIMIT:], out.skipped[MISSED_LIMIT:], out.unsure[MISSED_LIMIT:]
    return out


def missed_runs(
    cj: object, now: datetime, jobs: list[dict[str, Any]], suspensions: Sequence[Suspension] = ()
) -> list[datetime] | None:
    """``not_started(...).missed``: None when the schedule cannot be read."""
    found = not_started(cj, now, jobs, suspensions)
    return None if found is None else found.missed
