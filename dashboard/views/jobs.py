"""Volcano Job pages: the Jobs list and a Job's page (fragments ``status``, ``pods``, ``events``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.actions import job_actions_for
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.failure import deleted_pod_rows, failure_view
from dashboard.presenters.jobs import (
    job_gang,
    job_health_hint,
    job_plugins,
    job_timeline,
    max_retry_text,
    policy_text,
    task_rows,
    ttl_text,
)
from dashboard.presenters.jobspec import job_spec_view
from dashboard.presenters.pending import absent_hint, unreadable_reason
from dashboard.presenters.podgroups import podgroup_gang
from dashboard.presenters.resources import min_resources
from dashboard.presenters.states import counter_note, job_phase_note, replica_note, stuck_view, wait_heading
from dashboard.views import memo
from dashboard.views.errors import find_object
from dashboard.views.gang import GangReads
from dashboard.views.history import job_history
from dashboard.views.listing import NEWEST_FIRST, ListSpec, list_page
from dashboard.views.nodes import node_fit_ctx
from dashboard.views.notices import page_ctx
from dashboard.views.rows import job_row, related, spec_queue, why_pending, yaml_text
from dashboard.views.sharing import shared_page
from dashboard.volcano import objects, phases
from dashboard.volcano import states as vs
from dashboard.volcano.gang import job_counter, job_counters
from dashboard.volcano.objects import as_dict, as_list, as_str
from dashboard.volcano.objects import spec as spec_of
from dashboard.volcano.objects import status as status_of
from dashboard.volcano.pending import unschedulable_condition
from dashboard.volcano.phases import job_phase as job_phase_name
from dashboard.volcano.time import created_at


def _meta(o: dict) -> dict:
    m = o.get("metadata")
    return m if isinstance(m, dict) else {}


def _status(o: dict) -> dict:
    st = o.get("status")
    return st if isinstance(st, dict) else {}


def _ts(value: Any) -> str:
    # API server timestamps are RFC 3339 in UTC ("2026-11-29T10:00:00Z"), which sort as strings:
    # no parsing for 10,000 sort keys.
    return value if isinstance(value, str) else ""


def _in_phase_since(j: dict) -> str:
    state = _status(j).get("state")
    return _ts(state.get("lastTransitionTime")) if isinstance(state, dict) else ""


def _counter_key(j: dict, key: str) -> int:
    # A counter not reported yet sorts below every count, 0 included.
    value = job_counter(j, key)
    return -1 if value is None else value


_STOPPED_RANK = vs.attention_rank("failed")


def _attention_key(j: dict) -> tuple[int, str]:
    """Needs a look first (vs.job_attention), then the longest in its phase first; once stopped
    (failed, stopped, finished), the newest first. Undated Jobs ("~" sorts after digits) last
    within their class."""
    rank = vs.attention_rank(vs.job_attention(j))
    since = _in_phase_since(j) or _ts(_meta(j).get("creationTimestamp"))
    if not since:
        return (rank, "~")
    return (rank, since.translate(NEWEST_FIRST) if rank >= _STOPPED_RANK else since)


def job_row_shown(r: dict, now: datetime) -> tuple[tuple, tuple]:
    """What a Jobs list row (dashboard/_job_row.html) shows, for memo.list_rows_html: the Job
    (identity: its name, phase, gang, counters, tasks, times) and its PodGroup; the hints (they
    also read its pods and whether its queue exists), the queue's missing note and its ages' steps."""
    ages = (memo.ago_step(r["created"], now), memo.ago_step(r["since"], now))
    return ((r["job"], r["podgroup"]), (tuple(r["hints"]), r["queue_missing"], ages))


def job_rows_html(rows: list[dict], now: datetime) -> SafeString:
    return memo.list_rows_html("dashboard/_job_row.html", rows, now, job_row_shown)


JOB_LIST = ListSpec(
    kind="jobs",
    nav="jobs",
    template="dashboard/jobs.html",
    kinds=("jobs", "podgroups", "pods"),
    # A row's queue link depends on the Queue existing.
    depends=("jobs", "podgroups", "pods", "queues"),
    in_queue=Snapshot.jobs_in_queue,
    sorts={
        "attention": _attention_key,
        "name": lambda j: _meta(j).get("name") or "",
        "namespace": lambda j: _meta(j).get("namespace") or "",
        "phase": phases.job_phase,
        "queue": lambda j: as_str(objects.spec(j).get("queue")),
        "age": lambda j: _ts(_meta(j).get("creationTimestamp")),
        "inphase": _in_phase_since,
        "pending": lambda j: _counter_key(j, "pending"),
        "running": lambda j: _counter_key(j, "running"),
        "failed": lambda j: _counter_key(j, "failed"),
        "retries": lambda j: _counter_key(j, "retryCount"),
    },
    known_phases=frozenset(phases.JOB_PHASES),
    phase_order=phases.JOB_PHASES,
    phase_name=phases.job_phase,
    phase=badges.job_phase,
    queue_of=spec_queue,
    row=job_row,
    active_phases=phases.ACTIVE_JOB_PHASES,
    default_sort="attention",
    rows_html=job_rows_html,
)


@require_safe
@shared_page
def jobs(request: HttpRequest) -> HttpResponse:
    return list_page(request, JOB_LIST)


DETAIL_KINDS = ("jobs", "podgroups", "pods", "queues", "events")


def _reads(snap: Snapshot, job: dict) -> GangReads:
    pg = snap.podgroup_for_job(job)
    pending_like = vs.job_wait_question(job, pg) != ""
    return GangReads(
        snap,
        subject=(job, pg),
        job=job,
        pg=pg,
        pods=related(snap.pods_for_job, job),
        event_sources=(job, pg),
        qname=as_str(objects.spec(job).get("queue")),
        pending_like=pending_like,
    )


@require_safe
@shared_page
def job_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "jobs", _("Job"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, job = found
    now = reference_now(snap)
    r = _reads(snap, job)
    frags = r.fragments(request, now, DETAIL_KINDS)
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "jobs")
    phase = badges.job_phase(job)
    ctx.update({"job": job, "name": name, "namespace": namespace, "phase": phase, "live": not phase.final})
    if frags.want("status"):
        ctx.update(_status_ctx(request, r, job, now))
    ctx.update(r.lists_ctx(frags))
    if frags.want("pods"):
        ctx["deleted_pods"], ctx["deleted_more"] = deleted_pod_rows(snap.deleted_pods_of_job(job))
    if frags.asked is None:
        ctx.update(_spec_ctx(job))
        ctx["history"] = job_history(
            snap, job, snap.podgroup_for_job(job), now, never=r.never_starts, down=r.components_down
        )
    return frags.respond("dashboard/job_detail.html", ctx)


def _queue_gone(snap: Snapshot, qname: str, queue: dict | None) -> bool:
    """The Job names a queue that is known not to exist (Queues readable, this one absent)."""
    return bool(qname) and queue is None and snap.queues.state.is_usable


def _node_fit(snap: Snapshot, job: dict, pg: dict | None) -> dict[str, Any] | None:
    cond = unschedulable_condition(pg) if pg else None
    return node_fit_ctx(snap, job, as_str(cond.get("message")) if cond else "")


def _status_ctx(request: HttpRequest, r: GangReads, job: dict, now: datetime) -> dict[str, Any]:
    """The ``status`` fragment: phase, gang, pod counts, why pending, tasks, phase history."""
    pg, queue, snap = r.pg, r.queue, r.snap
    state = as_dict(status_of(job).get("state"))
    limit = settings.VOLCANO_UI_STUCK_SECONDS
    return {
        "reason": as_str(state.get("reason")),
        "message": as_str(state.get("message")),
        "since": phases.job_phase_since(job),
        "created": created_at(job),
        "gang": job_gang(job),
        "tasks": task_rows(job),
        "pg": pg,
        "pg_phase": badges.podgroup_phase(pg) if pg else None,
        "pg_gang": podgroup_gang(pg) if pg else None,
        "pg_condition": unschedulable_condition(pg) if pg else None,
        "queue_name": r.qname,
        "queue": queue,
        "queue_missing": absent_hint(queue, snap.queues.state),
        "pg_missing": absent_hint(pg, snap.podgroups.state),
        "pg_unreadable": unreadable_reason(snap.podgroups.state),
        # The same hints as the Job's row in the lists (crash-looping pods, image pulls, ...).
        "hints": job_health_hint(job, r.pods, pg, queue_missing=_queue_gone(snap, r.qname, queue)),
        "queue_state": badges.queue_state(queue) if queue else None,
        "headroom": r.room.rows,
        "pending_like": r.pending_like,
        "why_title": wait_heading(vs.job_wait_question(job, pg)),
        "findings": (
            findings := why_pending(snap, job, pg, queue, r.qname, r.pods, r.room) if r.pending_like else []
        ),
        "left_disputed": any(f.kind == "scheduler_differs" for f in findings),
        "failure": failure_view(
            job, r.pods, r.events, snap.deleted_pods_of_job(job), unreadable_reason(snap.pods.state)
        ),
        "warning_events": r.warning_events(),
        "earlier_warnings": r.earlier_warnings(),
        "placed_at": r.placed_at,
        "phase_note": job_phase_note(job_phase_name(job)),
        "stuck": stuck_view(vs.job_stuck(job, r.pods, now, limit), limit),
        "counter_note": counter_note(job, r.pods, snap.pods.state.is_usable),
        "replica_note": replica_note(job),
        "timeline": job_timeline(job, now),
        "spec": spec_of(job),
        "status": status_of(job),
        # Pod counters, None while the Job controller has not reported them (shown "—").
        "counts": job_counters(job),
        "max_retry": max_retry_text(job),
        "min_resources": min_resources(pg) if pg else [],
        # Nodes do not matter while the queue does not exist: no node can take a pod of it.
        "node_fit": _node_fit(snap, job, pg)
        if r.pending_like and not _queue_gone(snap, r.qname, queue)
        else None,
        # Checked here, not in the template: the tag only renders what the view allows.
        "actions": job_actions_for(request, job),
    }


def _spec_ctx(job: dict) -> dict[str, Any]:
    """The parts of a Job's page no fragment refreshes: policies, plugins, metadata, YAML."""
    return {
        "policies": [policy_text(x) for x in as_list(objects.spec(job).get("policies"))],
        "plugins": job_plugins(job),
        "max_retry": max_retry_text(job),
        "ttl_after_finished": ttl_text(job),
        "js": job_spec_view(objects.spec(job)),
        "labels": sorted(objects.labels(job).items()),
        "annotations": sorted(objects.annotations(job).items()),
        "yaml": yaml_text(job),
    }
