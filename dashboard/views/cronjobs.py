"""CronJob pages: the CronJobs list and a CronJob's page (fragment ``status``)."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_safe

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import cronjobs as pc
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.jobspec import job_spec_view
from dashboard.presenters.pending import unreadable_reason
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.listing import ListSpec, list_page
from dashboard.views.notices import page_ctx
from dashboard.views.rows import events_of, yaml_text
from dashboard.volcano import cronjobs as vc
from dashboard.volcano import objects
from dashboard.volcano.events import event_records
from dashboard.volcano.time import created_at

LIST_KINDS = ("cronjobs",)
DETAIL_KINDS = ("cronjobs", "jobs", "events")
NEXT_RUNS = 5
HISTORY_SHOWN = 20


def _created(o: dict) -> str:
    value = objects.meta(o).get("creationTimestamp")
    return value if isinstance(value, str) else ""


def _last(o: dict) -> str:
    value = objects.status(o).get("lastScheduleTime")
    return value if isinstance(value, str) else ""


def _row(snap: Snapshot, cj: dict, now: datetime) -> dict[str, Any]:
    upcoming = vc.next_runs(cj, now, 1)
    return {
        "name": objects.name(cj),
        "namespace": objects.namespace(cj),
        "state": pc.cronjob_badge(pc.cronjob_state(cj)),
        "schedule": vc.schedule(cj),
        "words": pc.schedule_words(cj),
        "problem": pc.problem_text(cj),
        "zone": vc.time_zone_name(cj),
        "policy": vc.concurrency_policy(cj),
        "policy_note": pc.policy_note(cj),
        "active": len(vc.active_refs(cj)),
        "last": vc.last_schedule_time(cj),
        "next": upcoming[0] if upcoming and vc.starts_runs(cj) else None,
        "never": upcoming == [],
        "created": created_at(cj),
    }


CRONJOB_LIST = ListSpec(
    kind="cronjobs",
    nav="cronjobs",
    template="dashboard/cronjobs.html",
    kinds=LIST_KINDS,
    depends=("cronjobs",),
    in_queue=lambda snap, queue: [],
    sorts={
        "name": objects.name,
        "namespace": objects.namespace,
        "phase": pc.cronjob_state,
        "last": _last,
        "age": _created,
    },
    known_phases=frozenset(pc.CRONJOB_STATES),
    phase_order=pc.CRONJOB_STATES,
    sort_columns={"phase": gettext_noop("State"), "last": gettext_noop("Last scheduled")},
    phase_name=pc.cronjob_state,
    phase=pc.badge_of_card,
    queue_of=lambda cj: "",
    row=_row,
)


@require_safe
def cronjobs(request: HttpRequest) -> HttpResponse:
    return list_page(request, CRONJOB_LIST)


@require_safe
def cronjob_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "cronjobs", _("CronJob"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, cj = found
    now = reference_now(snap)
    jobs = snap.jobs_owned_by(cj)
    events = cache(lambda: events_of(snap, cj))
    states = kind_states(snap, *DETAIL_KINDS)
    frags = Fragments(
        request,
        snap,
        now,
        DETAIL_KINDS,
        status=lambda: version_key(resource_versions([cj, *jobs]), states, bucket(now)),
        events=lambda: version_key(resource_versions(events()), states),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "cronjobs")
    ctx.update({"cj": cj, "name": name, "namespace": namespace})
    if frags.want("status"):
        ctx.update(_status_ctx(snap, cj, jobs, now))
    if frags.want("events"):
        ctx["events"] = event_records(events(), 100)
        ctx["events_blocked"] = bool(unreadable_reason(snap.events.state))
    if frags.asked is None:
        ctx["labels"] = sorted(objects.labels(cj).items())
        ctx["yaml"] = yaml_text(cj)
    return frags.respond("dashboard/cronjob_detail.html", ctx)


def _status_ctx(snap: Snapshot, cj: dict, jobs: list[dict], now: datetime) -> dict[str, Any]:
    runs = vc.runs(jobs)
    ok_limit, failed_limit = vc.history_limits(cj)
    active = []
    for ref in vc.active_refs(cj):
        ref_name = objects.as_str(ref.get("name"))
        job = snap.jobs.get(objects.as_str(ref.get("namespace")) or objects.namespace(cj), ref_name)
        active.append({"name": ref_name, "job": job, "phase": badges.job_phase(job) if job else None})
    found = vc.not_started(cj, now, jobs, snap.cronjob_suspensions(cj))
    missed = found.missed if found is not None else None
    upcoming = vc.next_runs(cj, now, NEXT_RUNS)
    return {
        "state": pc.cronjob_badge(pc.cronjob_state(cj)),
        "schedule": vc.schedule(cj),
        "problem": pc.problem_text(cj),
        "consequence": pc.problem_consequence(cj),
        "negative": vc.negative_fields(cj),
        "words": pc.schedule_words(cj),
        "zone": pc.zone_text(cj),
        "zone_set": bool(vc.time_zone_name(cj)),
        "suspended": vc.suspended(cj),
        "policy": vc.concurrency_policy(cj),
        "policy_default": not objects.spec(cj).get("concurrencyPolicy"),
        "policy_note": pc.policy_note(cj),
        "deadline": vc.starting_deadline(cj),
        "deadline_note": pc.deadline_note(cj),
        "ok_limit": ok_limit,
        "failed_limit": failed_limit,
        "last_schedule": vc.last_schedule_time(cj),
        "last_success": vc.last_successful_time(cj),
        "next_runs": upcoming or [],
        "next_note": pc.next_runs_note(cj),
        "never_runs": upcoming == [],
        "active": active,
        "runs": [
            {
                "run": r,
                "phase": badges.job_phase(r.job),
                "name": objects.name(r.job),
                "under_way": pc.run_under_way(r.phase),
            }
            for r in runs[:HISTORY_SHOWN]
        ],
        "runs_total": len(runs),
        "missed": (missed or [])[-HISTORY_SHOWN:],
        "missed_total": len(missed or []),
        "missed_capped": missed is not None and len(missed) >= vc.MISSED_LIMIT,
        "skipped": found.skipped[-HISTORY_SHOWN:] if found else [],
        "skipped_total": len(found.skipped) if found else 0,
        "unsure": found.unsure[-HISTORY_SHOWN:] if found else [],
        "unsure_total": len(found.unsure) if found else 0,
        "suspended_since": found.suspended_since if found else None,
        "jobs_blocked": snap.jobs.state.name in ("forbidden", "not_installed"),
        "template_spec_view": job_spec_view(objects.as_dict(objects.spec(cj).get("jobTemplate")).get("spec")),
    }
