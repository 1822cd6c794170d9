"""CronJob schedules in words (cron-descriptor, in the page's language) and CronJob badges."""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from cron_descriptor import ExpressionDescriptor, Options
from django.utils.dates import MONTHS, WEEKDAYS
from django.utils.translation import get_language, gettext_noop, ngettext
from django.utils.translation import gettext as _

from dashboard.presenters.phases import Phase, phase_of_table
from dashboard.volcano import cronjobs as vc
from dashboard.volcano.cron_schedule import CronSchedule, EverySchedule
from dashboard.volcano.objects import as_str, spec, status
from dashboard.volcano.phases import FINAL_JOB_PHASES

# Django language codes -> cron-descriptor's locale names (it ships zh_CN among others).
_LOCALES = {"zh-hans": "zh_CN", "en": "en_US"}
# cron-descriptor's locales translate its sentences but take weekday and month names from the
# ``calendar`` module, i.e. the process's C locale (English): those names are replaced by Django's
# (django.utils.dates, translated in every language Django ships).
_NAMES = {
    **{calendar.day_name[i]: WEEKDAYS[i] for i in range(7)},
    **{calendar.month_name[i]: MONTHS[i] for i in range(1, 13)},
}
_NAME_RE = re.compile(r"(?<![A-Za-z])(" + "|".join(re.escape(n) for n in _NAMES) + r")(?![A-Za-z])")
CRONJOB_STATES = (
    gettext_noop("Active"),
    gettext_noop("Idle"),
    gettext_noop("Suspended"),
    gettext_noop("Invalid"),
)
_LOOK: dict[str, tuple[str, str, bool]] = {
    "Invalid": ("bad", "alert", False),
    "Active": ("ok", "play", False),
    "Idle": ("info", "clock", False),
    "Suspended": ("muted", "stop", False),
}

# A run not final yet, in the words of its Job's phase: the Duration column's "pending 3s".
_RUN_UNDER_WAY = {
    "Pending": gettext_noop("pending"),
    "Running": gettext_noop("running"),
    "Restarting": gettext_noop("restarting"),
    "Aborting": gettext_noop("aborting"),
    "Aborted": gettext_noop("aborted"),
    "Completing": gettext_noop("completing"),
    "Terminating": gettext_noop("terminating"),
}


def run_under_way(phase: str) -> str:
    """The word before the time a run has taken so far (since its Job was created): its Job's
    phase in lower case, translated ("pending"); "no phase yet" when the controller has written
    none; an unknown phase verbatim; "" for a final phase (its duration is shown instead)."""
    if phase in FINAL_JOB_PHASES:
        return ""
    if not phase:
        return _("no phase yet")
    word = _RUN_UNDER_WAY.get(phase)
    return _(word) if word else phase


def _every_words(seconds: int) -> str:
    """``@every``'s delay in words, in the largest unit that divides it ("Every 90 seconds")."""
    if seconds % 3600 == 0:
        count = seconds // 3600
        return ngettext("Every hour", "Every %(count)s hours", count) % {"count": count}
    if seconds % 60 == 0:
        count = seconds // 60
        return ngettext("Every minute", "Every %(count)s minutes", count) % {"count": count}
    return ngettext("Every second", "Every %(count)s seconds", seconds) % {"count": seconds}


def schedule_words(cj: Mapping[str, Any]) -> str:
    """The schedule as a sentence ("Every 5 minutes"); "" when it cannot be read."""
    reading = vc.schedule_reading(cj)
    if isinstance(reading, EverySchedule):
        return _every_words(reading.seconds)
    if not isinstance(reading, CronSchedule):
        return ""
    options = Options()
    options.locale_code = _LOCALES.get((get_language() or "en").lower(), "en_US")
    options.use_24hour_time_format = True
    try:
        text = str(ExpressionDescriptor(reading.expression, options).get_description())
    except Exception:  # noqa: BLE001  cron-descriptor rejects some syntax robfig accepts ("*-5")
        return ""
    return _NAME_RE.sub(lambda m: str(_NAMES[m.group(1)]), text)


def cronjob_state(cj: Mapping[str, Any]) -> str:
    """Invalid (a field keeps the controller from starting any Job: the schedule or time zone
    cannot be read, a history limit is negative, the deadline lets no run start; or the schedule
    matches no date), Suspended, Active (a Job is running) or Idle: the list's "phase"."""
    if vc.invalid_field(cj) or vc.matches_no_date(cj):
        return "Invalid"
    if vc.suspended(cj):
        return "Suspended"
    return "Active" if vc.active_refs(cj) else "Idle"


def cronjob_badge(state: str) -> Phase:
    """The badge of a CronJob state, its label translated (the state is this page's word, not
    the cluster's)."""
    badge = phase_of_table(_LOOK, state)
    return replace(badge, label=_(badge.label)) if badge.known else badge


def badge_of_card(obj: Mapping[str, Any]) -> Phase:
    return cronjob_badge(as_str(status(obj).get("phase")))


def zone_text(cj: Mapping[str, Any]) -> str:
    """The zone the schedule is read in, in words. Without one Volcano's controller reads the
    schedule in its process's local zone (robfig/cron's default, Go's ``time.Local``), which is UTC
    in Volcano's images (no zone database, no TZ): the page reads it in UTC."""
    zone = vc.time_zone_name(cj)
    if not zone:
        return _("not set: UTC (the controller's local time zone, UTC in Volcano's images)")
    if vc.local_zone(cj):
        return _("%(zone)s: UTC (the controller's local time zone, UTC in Volcano's images)") % {"zone": zone}
    if vc.time_zone(cj) is None:
        return _("%(zone)s (not a known time zone)") % {"zone": zone}
    if vc.zone_prefixed(cj):
        return _("%(zone)s (named in the schedule: CRON_TZ and TZ there are not officially supported)") % {
            "zone": zone
        }
    return zone


def problem_text(cj: Mapping[str, Any]) -> str:
    """Why the controller cannot run the CronJob ("schedule invalid: 61 * * * * (end of range (61)
    above maximum (59): 61)",
    "startingDeadlineSeconds invalid: -30"), "" when it can."""
    field = vc.invalid_field(cj)
    if field == "schedule":
        return _("schedule invalid: %(schedule)s (%(reason)s)") % {
            "schedule": vc.schedule(cj) or "—",
            "reason": vc.schedule_problem(cj),
        }
    if field == "timeZone":
        return _("time zone invalid: %(zone)s") % {"zone": vc.time_zone_name(cj)}
    if field == "startingDeadlineSeconds" and "startingDeadlineSeconds" not in vc.negative_fields(cj):
        return _("startingDeadlineSeconds %(value)s: no run can start") % {"value": vc.starting_deadline(cj)}
    if field:
        return _("%(field)s invalid: %(value)s") % {"field": field, "value": spec(cj).get(field)}
    return ""


# What the controller does with the CronJob, per field of vc.invalid_field.
_UNREADABLE = gettext_noop(
    "The schedule or its time zone cannot be read: the controller will not run this CronJob."
)
_CONSEQUENCES = {
    "schedule": _UNREADABLE,
    "timeZone": _UNREADABLE,
    "successfulJobsHistoryLimit": gettext_noop(
        "Below the CRD's minimum of 0: on every pass Volcano's controller deletes all successful Jobs "
        "of this CronJob, then crashes (vc-controller-manager restarts), so it starts no Job."
    ),
    "failedJobsHistoryLimit": gettext_noop(
        "Below the CRD's minimum of 0: on every pass Volcano's controller deletes all failed Jobs "
        "of this CronJob, then crashes (vc-controller-manager restarts), so it starts no Job."
    ),
    "startingDeadlineSeconds": gettext_noop(
        "Below the CRD's minimum of 0: the deadline of each scheduled time passes before the time "
        "comes, so the controller starts no Job."
    ),
}


def _seconds(nanoseconds: int) -> str:
    """Nanoseconds as seconds, exactly ("-1", "1864712049.423024128")."""
    whole, part = divmod(abs(nanoseconds), 1_000_000_000)
    sign = "-" if nanoseconds < 0 else ""
    return f"{sign}{whole}" + (f".{part:09d}".rstrip("0") if part else "")


def _wrapped(cj: Mapping[str, Any]) -> str:
    return _(
        "Out of range: Volcano's controller counts the deadline in int64 nanoseconds, which wrap "
        "around above 9223372036 seconds, and uses %(seconds)s seconds instead."
    ) % {"seconds": _seconds(vc.deadline_nanoseconds(cj) or 0)}


def problem_consequence(cj: Mapping[str, Any]) -> str:
    """What the controller does with a CronJob that ``problem_text`` names, in a sentence; ""
    when it can run it."""
    field = vc.invalid_field(cj)
    if field == "startingDeadlineSeconds" and "startingDeadlineSeconds" not in vc.negative_fields(cj):
        no_run = _(
            "The controller wakes about 100 ms after a scheduled time and starts a run only within "
            "the deadline: every run is too late, so it starts no Job."
        )
        return f"{_wrapped(cj)} {no_run}" if vc.deadline_out_of_range(cj) else no_run
    consequence = _CONSEQUENCES.get(field)
    return _(consequence) if consequence else ""


@dataclass(frozen=True)
class FieldNote:
    """A short note next to a field's value: ``text``, ``bad`` when it keeps runs from starting
    (else a warning)."""

    text: str
    bad: bool


def deadline_note(cj: Mapping[str, Any]) -> FieldNote | None:
    """The note next to ``startingDeadlineSeconds``: below 0, lets no run start, out of range (the
    controller uses another value); None for a deadline that works as written."""
    if "startingDeadlineSeconds" in vc.negative_fields(cj):
        return FieldNote(_("invalid: below 0"), bad=True)
    if vc.deadline_starts_no_run(cj):
        return FieldNote(_("no run can start"), bad=True)
    if vc.deadline_out_of_range(cj):
        return FieldNote(_wrapped(cj), bad=False)
    return None


def policy_note(cj: Mapping[str, Any]) -> str:
    """The note "treated as Allow" for a concurrencyPolicy the controller does not know; "" else."""
    if vc.concurrency_policy(cj) == vc.applied_concurrency_policy(cj):
        return ""
    return _("treated as %(policy)s") % {"policy": vc.applied_concurrency_policy(cj)}


@dataclass(frozen=True)
class NextRunsNote:
    """Why the scheduled times listed as the next runs start no Job: ``text``, and ``missed`` when
    the controller will miss them (else it skips them while the CronJob is suspended)."""

    text: str
    missed: bool


def next_runs_note(cj: Mapping[str, Any]) -> NextRunsNote | None:
    """The note over a CronJob's next scheduled times; None when the controller starts them."""
    field = vc.invalid_field(cj)
    if field in vc.NON_NEGATIVE_FIELDS:
        text = _("Each of these will be missed: %(field)s is %(value)s (see above).") % {
            "field": field,
            "value": spec(cj).get(field),
        }
        return NextRunsNote(text, missed=True)
    if vc.suspended(cj):
        return NextRunsNote(_("Suspended: these times are skipped until it is resumed."), missed=False)
    return None
