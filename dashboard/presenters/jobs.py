"""Volcano Jobs in the pages: gang bars, task rows, policies, plugins, the phase timeline and the
short health hints of the lists."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.presenters.phases import JOB_PHASES, Phase, job_phase, phase_of_table
from dashboard.volcano import gang as vg
from dashboard.volcano import jobs as vjobs
from dashboard.volcano.objects import as_dict, as_list, as_str, count, spec, status
from dashboard.volcano.pending import unschedulable_condition
from dashboard.volcano.phases import job_phase as job_phase_name
from dashboard.volcano.phases import job_waiting, podgroup_awaits_admission
from dashboard.volcano.phases import podgroup_phase as podgroup_phase_name
from dashboard.volcano.pods import pod_display_status, pod_is_crashlooping
from dashboard.volcano.time import parse_time


@dataclass
class Gang:
    """Gang progress for the bar: ``running`` of ``min_available`` with ``ready`` the pods that
    count toward the gang (dashboard.volcano.gang); None is unknown (a negative counter or size, or
    none reported yet), shown as "—". ``fill``/``min_at`` are 0-100 for the bar."""

    running: int | None
    ready: int | None
    min_available: int | None
    total: int
    fill: int
    min_at: int
    met: bool
    # For a Job in a final phase: what happened ("4 succeeded, 1 failed"), shown instead of the bar;
    # running is 0 by then, so a "minAvailable reached" claim computed from it would be meaningless.
    outcome: str = ""
    # False: no pod counter reported yet (running and ready are None): shown as "—".
    known: bool = True
    # False: a counter or size is unknown (volcano.gang.GangCount.trusted): no claim about the gang.
    trusted: bool = True
    # Fewer pods count than the gang requires (volcano.gang.GangCount.short).
    short: bool = False
    # minAvailable / minMember 0: no gang constraint (volcano.gang.GangCount.gangless).
    gangless: bool = False
    # A Volcano Job without tasks (volcano.gang.job_has_no_tasks): nothing to schedule.
    no_tasks: bool = False


def gang_bar(gang: vg.GangCount) -> Gang:
    """The bar of a gang. An unknown counter or size stays None (the bar draws it as empty, the
    text as "—"); such a gang is never ``met``."""
    running, min_available, total = gang.running or 0, gang.required or 0, max(0, gang.total)
    scale = max(total, min_available, running, 1)
    return Gang(
        running=gang.running,
        ready=gang.ready,
        min_available=gang.required,
        total=total,
        fill=min(100, round(running * 100 / scale)),
        min_at=min(100, round(min_available * 100 / scale)),
        met=gang.met,
        known=gang.known,
        trusted=gang.trusted or not gang.known,
        short=gang.short,
        gangless=gang.gangless,
    )


def _finished(gang: Gang, succeeded: int, failed: int) -> None:
    """Mark ``gang`` (of a Job in a final phase) with its outcome instead of a progress claim."""
    parts = [_("%(n)d succeeded") % {"n": succeeded}]
    if failed:
        parts.append(_("%(n)d failed") % {"n": failed})
    gang.outcome = _("finished: %(counts)s") % {"counts": ", ".join(parts)}
    gang.met = gang.short = False


def job_gang(job: Mapping) -> Gang:
    gang = gang_bar(vg.job_gang(job))
    gang.no_tasks = vg.job_has_no_tasks(job)
    if job_phase(job).final and gang.known:
        st = status(job)
        _finished(gang, max(0, count(st.get("succeeded"))), max(0, count(st.get("failed"))))
    return gang


@dataclass
class TaskRow:
    """One task of a Job; ``count_list`` is (pod phase, count) pairs for templates."""

    name: str
    replicas: int
    min_available: int
    counts: dict[str, int]
    gang: Gang
    policies: list[str]
    image: str

    @property
    def count_list(self) -> list[tuple[str, int | None]]:
        """Pods per phase, a negative count unknown (None, shown "—")."""
        return sorted(vg.known_counts(self.counts).items())


def task_rows(job: Mapping) -> list[TaskRow]:
    final = job_phase(job).final
    rows = []
    for task in vg.job_tasks(job):
        name = as_str(task.get("name"))
        counts = vg.task_phase_counts(job, name)
        gang = gang_bar(vg.task_gang(task, counts, vg.task_counts_reported(job, name)))
        if final and gang.known:
            _finished(gang, max(0, counts.get("Succeeded", 0)), max(0, counts.get("Failed", 0)))
        containers = as_list(as_dict(as_dict(task.get("template")).get("spec")).get("containers"))
        rows.append(
            TaskRow(
                name,
                count(task.get("replicas")),
                vg.task_min_available(task),
                counts,
                gang,
                [policy_text(p) for p in as_list(task.get("policies"))],
                as_str(as_dict(containers[0]).get("image")) if containers else "",
            )
        )
    return rows


def policy_text(policy: Any) -> str:
    """One LifecyclePolicy (spec.policies, tasks[].policies) as "PodFailed → RestartJob (after 10m)"."""
    p = as_dict(policy)
    events = [as_str(e) for e in as_list(p.get("events"))] or (
        [as_str(p.get("event"))] if p.get("event") else []
    )
    when = ", ".join(events)
    if p.get("exitCode") is not None:
        when = (when + ", " if when else "") + _("exit code %(code)s") % {"code": as_str(p.get("exitCode"))}
    text = f"{when or '*'} → {as_str(p.get('action')) or '?'}"
    if p.get("timeout"):
        text += " " + _("(after %(timeout)s)") % {"timeout": as_str(p.get("timeout"))}
    return text


def max_retry_text(job: Mapping) -> str:
    """The Job's effective maxRetry: "5", "3 (default)" when unset, "—" when it is no integer."""
    value = vjobs.max_retry(job)
    if value is None:
        return "—"
    if vjobs.max_retry_is_default(job):
        return _("%(n)d (default)") % {"n": value}
    return str(value)


def ttl_text(job: Mapping) -> str:
    """spec.ttlSecondsAfterFinished: "600", "0 (deleted right after finishing)", "—" when unset."""
    value = vjobs.ttl_after_finished(job)
    if value is None:
        return "—"
    if value == 0:
        return _("0 (deleted right after finishing)")
    return str(value)


def job_plugins(job: Mapping) -> list[tuple[str, str]]:
    return [
        (as_str(k), " ".join(as_str(a) for a in as_list(v)))
        for k, v in sorted(as_dict(spec(job).get("plugins")).items(), key=lambda kv: as_str(kv[0]))
    ]


@dataclass
class TimelineEntry:
    phase: Phase
    at: datetime | None
    duration: float | None  # seconds until the next entry (or now for the last one)
    current: bool


def job_timeline(job: Mapping, now: datetime) -> list[TimelineEntry]:
    """Phase history from status.conditions (one entry per phase, oldest→newest)."""
    conds = [c for c in as_list(status(job).get("conditions")) if isinstance(c, dict)]
    entries = []
    for i, cond in enumerate(conds):
        at = parse_time(cond.get("lastTransitionTime"))
        nxt = parse_time(conds[i + 1].get("lastTransitionTime")) if i + 1 < len(conds) else now
        dur = (nxt - at).total_seconds() if at and nxt and nxt >= at else None
        entries.append(
            TimelineEntry(phase_of_table(JOB_PHASES, cond.get("status")), at, dur, i == len(conds) - 1)
        )
    return entries


def job_health_hint(
    job: Mapping, pods: list[Mapping] | None, podgroup: Mapping | None, queue_missing: bool = False
) -> list[str]:
    """Short hints shown beside a Job's phase in lists: crash-looping pods, pods that cannot pull
    their image, a Running gang below minAvailable, an unschedulable or not yet admitted PodGroup.
    ``queue_missing``: the Job's queue is known not to exist; for a waiting Job that is the reason
    and leads, and the scheduler's unschedulable reason (which is not about the queue) is left out."""
    hints = []
    phase = job_phase_name(job)
    if queue_missing and job_waiting(phase):
        queue = as_str(spec(job).get("queue"))
        hints.append(_("queue %(name)s does not exist") % {"name": queue})
    if pods:
        statuses = [pod_display_status(p).status for p in pods]
        crash = sum(1 for p in pods if pod_is_crashlooping(p))
        if crash:
            hints.append(
                ngettext("%(n)d pod CrashLoopBackOff", "%(n)d pods CrashLoopBackOff", crash) % {"n": crash}
            )
        pull = sum(1 for st in statuses if "ImagePull" in st or st == "ErrImagePull")
        if pull:
            hints.append(
                ngettext("%(n)d pod cannot pull its image", "%(n)d pods cannot pull their image", pull)
                % {"n": pull}
            )
    # Finished pods count toward a Job's gang (dashboard.volcano.gang): 2 Running + 2 Succeeded of
    # minAvailable 4 is not "below".
    if phase == "Running" and vg.job_below_min_available(job):
        hints.append(_("below minAvailable"))
    if job_waiting(phase) and podgroup is not None and not queue_missing:
        if cond := unschedulable_condition(podgroup):
            # The scheduler's reason (NotEnoughResources, NotEnoughTasks, ...) says which wait it is.
            reason = as_str(cond.get("reason"))
            hint = _("unschedulable: %(reason)s") % {"reason": reason} if reason else _("unschedulable")
            hints.append(hint)
        elif podgroup_awaits_admission(podgroup_phase_name(podgroup)):
            hints.append(_("waiting for queue admission"))
    return hints
