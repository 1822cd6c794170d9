"""Volcano's CronJob controller (vc-controller-manager), simulated on the simulated clock.

Facts from volcano-sh/volcano ``pkg/controllers/cronjob`` (v1.13+), which follows Kubernetes'
CronJob controller:
- a Job is created for the most recent unmet schedule time at or before now, never earlier than
  ``lastScheduleTime`` (or the CronJob's creation) nor than ``now - startingDeadlineSeconds``;
  more than 100 missed times give a Warning ``TooManyMissedTimes``;
- the Job is named ``<cronjob>-<scheduled time in Unix minutes>``, carries the jobTemplate's labels
  and annotations plus ``volcano.sh/cronjob-scheduled-timestamp`` (RFC 3339 in the CronJob's time
  zone) and one controller ownerReference to the CronJob;
- ``suspend`` stops creation (finished Jobs are still processed); ``concurrencyPolicy`` Forbid skips
  a run while a Job is active (Warning ``ForbidConcurrent``), Replace deletes the active Jobs first
  (Warning ``ReplaceConcurrent``, Normal ``SuccessfulDelete``);
- finished Jobs (Completed, Failed, Terminated) leave ``status.active`` (Normal ``SawCompletedJob``);
  ``lastSuccessfulTime`` is the newest Completed Job's ``status.state.lastTransitionTime``; Completed
  Jobs beyond ``successfulJobsHistoryLimit`` and Failed ones beyond ``failedJobsHistoryLimit`` are
  deleted, oldest first;
- ``status.active[]`` holds ObjectReferences, ``status.lastScheduleTime`` the scheduled time;
- events come from ``vc-controller-manager``: SuccessfulCreate ``Created job <job> for CronJob
  <ns>/<cronjob>``, SuccessfulDelete ``Deleted job "<job>"``, InvalidTimeZone, UnParseableCronJobSchedule,
  InvalidSchedule, UnsupportedSchedule, StaleReference.

Schedules are read as Volcano reads them (robfig/cron's ``ParseStandard``) by
``dashboard.volcano.cron_schedule``, and the deadline, history-limit and time-zone rules are
``dashboard.volcano.cronjobs``'s: the CronJob rules are the one part of ``dashboard`` outside
``dashboard/sim`` the simulator imports (they depend on the standard library and croniter only),
so the pages and the simulated controller cannot disagree. The schedule is read in the CronJob's
``timeZone`` (zoneinfo; UTC when unset or "Local", the time zone of a controller manager run in a
UTC container).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta, tzinfo

from dashboard.volcano import cron_schedule
from dashboard.volcano import cronjobs as vc
from dashboard.volcano.cron_schedule import Schedule, Unparseable

from .clock import rfc3339
from .controllers import JOB, _optional_kind, owner_reference
from .jobcontroller import COMPONENT, parse_time
from .store import ApiError, copy_json

CRONJOB = _optional_kind("CronJob", "batch.volcano.sh")
SCHEDULED_ANNOTATION = "volcano.sh/cronjob-scheduled-timestamp"
FINISHED = ("Completed", "Failed", "Terminated")
MANY_MISSED = 100


def zone_for(name: str | None) -> tzinfo:
    """The zone of ``name`` as the controller reads it (``vc.zone_named``); raises ValueError for a
    name that is no zone."""
    zone = vc.zone_named(name)
    if zone is None:
        raise ValueError(f"unknown time zone {name!r}")
    return zone


def deadline_lookback(seconds: int) -> timedelta:
    """How far before now the controller looks for scheduled times (``vc.lookback_nanoseconds``:
    Go's int64 nanoseconds, wrapped; negative: a moment after now)."""
    return timedelta(microseconds=vc.lookback_nanoseconds(seconds) // 1000)


def job_name(cronjob_name: str, scheduled: datetime) -> str:
    """``<cronjob>-<scheduled Unix minutes>`` (getJobName)."""
    return f"{cronjob_name}-{int(scheduled.timestamp()) // 60}"


def next_time(schedule: Schedule, zone, moment: datetime) -> datetime | None:
    """robfig's ``Schedule.Next``: the first schedule time after ``moment`` (an ``@every`` one is
    ``moment`` cut to the second plus the delay); None for a schedule that matches no date."""
    start = moment.astimezone(zone)
    return next(iter(schedule.times(start, start)), None)


# Volcano's mostRecentScheduleTime fails so when the schedule has no two times (robfig returns
# the zero time for a schedule that matches no date, "0 0 30 2 *").
NO_INTERVAL = "time difference between two schedules is less than 1 second"


def most_recent(
    schedule: Schedule, zone, earliest: datetime, now: datetime
) -> tuple[datetime | None, int, str]:
    """Volcano's ``mostRecentScheduleTime``: (the most recent schedule time in (earliest, now], or
    None; how many were due as its estimate counts them (the interval between the first two times
    into the time elapsed since the first); an error text, "" when none)."""
    t1 = next_time(schedule, zone, earliest)
    t2 = next_time(schedule, zone, t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return None, 0, ""
    if t1 is not None and t2 is not None and now < t2:
        return t1, 1, ""
    gap = round((t2 - t1).total_seconds()) if t1 is not None and t2 is not None else 0
    if gap < 1 or t1 is None:
        return None, 0, NO_INTERVAL
    due = int((now - t1).total_seconds()) // gap + 1
    last = None
    t = next_time(schedule, zone, t1 + timedelta(seconds=(due - 2) * gap))
    while t is not None and t <= now:
        last, t = t, next_time(schedule, zone, t)
    return last, due, ""


def _ref(job: dict) -> dict:
    md = job["metadata"]
    return {
        "apiVersion": JOB.api_version,
        "kind": "Job",
        "namespace": md["namespace"],
        "name": md["name"],
        "uid": md["uid"],
        "resourceVersion": md.get("resourceVersion", ""),
    }


class CronJobController:
    """Syncs the CronJobs marked dirty (changed, an owned Job changed, or a schedule time came)."""

    def __init__(self, controllers) -> None:
        self.c = controllers
        self.dirty: dict[tuple[str, str], None] = {}
        self._wake: dict[tuple[str, str], float] = {}

    def mark(self, key: tuple[str, str]) -> None:
        self.dirty[key] = None

    def sync(self) -> None:
        if CRONJOB is None:
            return
        dirty, self.dirty = self.dirty, {}
        for key in dirty:
            self.c.guard(f"cronjob {key[0]}/{key[1]}", self._sync, key)

    def _wake_at(self, key: tuple[str, str], due: float) -> None:
        known = self._wake.get(key)
        if known is not None and self.c.now() < known <= due:
            return
        self._wake[key] = due
        self.c.at(due, self._woken, key, due)

    def _woken(self, key: tuple[str, str], due: float) -> None:
        if self._wake.get(key) == due:
            del self._wake[key]
        self.dirty[key] = None

    def _owned_jobs(self, cronjob: dict) -> list[dict]:
        uid = cronjob["metadata"]["uid"]
        out = []
        for namespace, name in list(self.c.jobs_by_owner.get(uid, ())):
            job = self.c.store.peek(JOB, namespace, name)  # read-only, as is everything here
            if job is not None:
                out.append(job)
        return out

    def _event(self, cronjob: dict, type_: str, reason: str, message: str) -> None:
        self.c.events.record(cronjob, type_, reason, message, COMPONENT)

    # ------------------------------------------------------------------ one CronJob
    def _sync(self, key: tuple[str, str]) -> None:
        c = self.c
        cronjob = c.store.peek(CRONJOB, *key)  # read-only: the new status is a copy
        if cronjob is None or cronjob["metadata"].get("deletionTimestamp"):
            self._wake.pop(key, None)
            return
        spec = cronjob.get("spec") or {}
        old_status = cronjob.get("status") or {}
        status = copy_json(old_status)
        jobs = self._owned_jobs(cronjob)
        if not self._process_finished(cronjob, spec, status, jobs):
            return  # the controller crashed: no status written, no Job started
        self._drop_stale(cronjob, status, jobs)
        if not spec.get("suspend"):
            self._schedule(cronjob, spec, status, key)
        if status != old_status:
            c.store.mutate(CRONJOB, key[0], key[1], lambda obj: obj.__setitem__("status", status))

    def _process_finished(self, cronjob: dict, spec: dict, status: dict, jobs: list[dict]) -> bool:
        """Whether the sync goes on (False: a negative history limit crashed the controller)."""
        successful: list[dict] = []
        failed: list[dict] = []
        for job in jobs:
            state = (job.get("status") or {}).get("state") or {}
            phase = state.get("phase")
            if phase not in FINISHED:
                continue
            uid = job["metadata"]["uid"]
            if any(ref.get("uid") == uid for ref in status.get("active") or []):
                status["active"] = [ref for ref in status["active"] if ref.get("uid") != uid]
                if not status["active"]:
                    del status["active"]
                self._event(
                    cronjob,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {job['metadata']['name']} in active, remove",
                )
            if phase == "Completed":
                finished = state.get("lastTransitionTime")
                last = status.get("lastSuccessfulTime")
                if finished and (not last or (parse_time(finished) or 0) > (parse_time(last) or 0)):
                    status["lastSuccessfulTime"] = finished
                successful.append(job)
            elif phase == "Failed":
                failed.append(job)
        crashed = vc.negative_history_limit(cronjob)
        for jobs_of_kind, field in (
            (successful, "successfulJobsHistoryLimit"),
            (failed, "failedJobsHistoryLimit"),
        ):
            limit = spec.get(field)
            if limit is not None and len(jobs_of_kind) > int(limit):
                jobs_of_kind.sort(
                    key=lambda j: (j["metadata"].get("creationTimestamp") or "", j["metadata"]["name"])
                )
                for job in jobs_of_kind[: len(jobs_of_kind) - int(limit)]:
                    self._delete(cronjob, status, job)
            if field == crashed:
                return False
        return True

    def _delete(self, cronjob: dict, status: dict, job: dict) -> bool:
        md = job["metadata"]
        try:
            self.c.store.delete(JOB, md["namespace"], md["name"])
        except ApiError as exc:
            if exc.code != 404:
                self._event(
                    cronjob, "Warning", "FailedDelete", f'Error deleting job "{md["name"]}": {exc.message}'
                )
                return False
        if status.get("active"):
            status["active"] = [ref for ref in status["active"] if ref.get("uid") != md["uid"]]
            if not status["active"]:
                del status["active"]
        self._event(cronjob, "Normal", "SuccessfulDelete", f'Deleted job "{md["name"]}"')
        return True

    def _drop_stale(self, cronjob: dict, status: dict, jobs: list[dict]) -> None:
        owned = {j["metadata"]["uid"] for j in jobs}
        keep = []
        for ref in status.get("active") or []:
            if ref.get("uid") in owned:
                keep.append(ref)
                continue
            job = self.c.store.try_get(JOB, ref.get("namespace"), ref.get("name", ""))
            if job is None:
                self._event(
                    cronjob,
                    "Warning",
                    "StaleReference",
                    f'Active job "{ref.get("name", "")}" no longer exists (UID: {ref.get("uid", "")})',
                )
                continue
            keep.append(ref)
        if keep:
            status["active"] = keep
        else:
            status.pop("active", None)

    def _schedule(self, cronjob: dict, spec: dict, status: dict, key: tuple[str, str]) -> None:
        schedule = str(spec.get("schedule") or "")
        text, zone_name, _ = cron_schedule.split_zone(schedule, spec.get("timeZone"))
        if "TZ" in schedule:  # formatSchedule passes such a schedule as written
            self._event(
                cronjob,
                "Warning",
                "UnsupportedSchedule",
                f'CRON_TZ or TZ in the schedule "{schedule}" is not officially supported. '
                "If set, the TimeZone field will be ignored during execution.",
            )
        try:
            zone = zone_for(zone_name)
        except ValueError as exc:
            self._event(cronjob, "Warning", "InvalidTimeZone", f'Invalid time zone "{zone_name}": {exc}')
            return
        reading = cron_schedule.parse(text)
        if isinstance(reading, Unparseable):
            self._event(
                cronjob,
                "Warning",
                "UnParseableCronJobSchedule",
                f"unparseable schedule for cronjob: {schedule}",
            )
            return
        now = self.c.clock.now()
        since = datetime.fromtimestamp(
            parse_time(status.get("lastScheduleTime"))
            or parse_time(cronjob["metadata"].get("creationTimestamp"))
            or now.timestamp(),
            UTC,
        )
        earliest = since
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - deadline_lookback(int(deadline)))
        scheduled, due, error = most_recent(reading, zone, earliest, now)
        # nextScheduleTimeDuration: the time after the most recent one since the last (no deadline).
        latest, missed, failed = most_recent(reading, zone, since, now)
        wake = next_time(reading, zone, now if failed or (latest is None and missed) else latest or since)
        if wake is not None:
            self._wake_at(key, wake.timestamp() + 0.1)
        if error:
            self._event(cronjob, "Warning", "InvalidSchedule", f"Error getting schedule time: {error}")
            return
        if scheduled is None:
            return
        if due > MANY_MISSED:
            self._event(
                cronjob,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. "
                "Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )
        name = job_name(cronjob["metadata"]["name"], scheduled)
        if any(ref.get("name") == name for ref in status.get("active") or []) or status.get(
            "lastScheduleTime"
        ) == rfc3339(scheduled):
            return
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and status.get("active"):
            self._event(
                cronjob,
                "Warning",
                "ForbidConcurrent",
                "Skipping job creation because another job is already running",
            )
            return
        if policy == "Replace" and status.get("active"):
            self._event(cronjob, "Warning", "ReplaceConcurrent", "Replacing active job for CronJob")
            for ref in list(status.get("active") or []):
                job = self.c.store.try_get(JOB, ref.get("namespace"), ref.get("name", ""))
                if job is not None and not self._delete(cronjob, status, job):
                    return
        job = self._create(cronjob, spec, scheduled, zone, name)
        if job is None:
            return
        if not any(ref.get("uid") == job["metadata"]["uid"] for ref in status.get("active") or []):
            status.setdefault("active", []).append(_ref(job))
        status["lastScheduleTime"] = rfc3339(scheduled)

    def _create(self, cronjob: dict, spec: dict, scheduled: datetime, zone, name: str) -> dict | None:
        md = cronjob["metadata"]
        template = spec.get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[SCHEDULED_ANNOTATION] = (
            scheduled.astimezone(zone).isoformat(timespec="seconds").replace("+00:00", "Z")
        )
        meta: dict = {
            "name": name,
            "namespace": md["namespace"],
            "annotations": annotations,
            "ownerReferences": [owner_reference(cronjob)],
        }
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        body = {
            "apiVersion": JOB.api_version,
            "kind": "Job",
            "metadata": meta,
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        try:
            job = self.c.store.create(JOB, body, md["namespace"])
        except ApiError as exc:
            if exc.code != 409:
                self._event(cronjob, "Warning", "FailedCreate", f"Failed to create job: {exc.message}")
                return None
            existing = self.c.store.try_get(JOB, md["namespace"], name)
            if existing is None:
                return None
            owner = next(
                (r for r in existing["metadata"].get("ownerReferences") or [] if r.get("controller")), None
            )
            if owner is None or owner.get("uid") != md["uid"]:
                self._event(
                    cronjob,
                    "Warning",
                    "ForeignJob",
                    f"Job {name} exists but is not owned by this CronJob "
                    f"(current owner: {owner.get('name') if owner else 'none'})",
                )
                return None
            if ((existing.get("status") or {}).get("state") or {}).get("phase") in FINISHED:
                return None
            return existing
        self._event(
            cronjob,
            "Normal",
            "SuccessfulCreate",
            f"Created job {name} for CronJob {md['namespace']}/{md['name']}",
        )
        return job
