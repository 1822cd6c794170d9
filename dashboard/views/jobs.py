"""Volcano Job pages: the Jobs list and a Job's page (fragments ``status``, ``pods``, ``events``)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard import presenters as p
from dashboard.actions import job_actions_for
from dashboard.kube.snapshot import Snapshot
from dashboard.views.errors import or_404, unreadable
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.listing import ListSpec, list_page
from dashboard.views.notices import page_ctx
from dashboard.views.rows import (
    events_of,
    gang_room,
    job_row,
    related,
    snapshot,
    spec_queue,
    why_pending,
    yaml_text,
)


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


JOB_LIST = ListSpec(
    kind="jobs",
    nav="jobs",
    template="dashboard/jobs.html",
    kinds=("jobs", "podgroups", "pods"),
    # A row's queue link depends on the Queue existing.
    depends=("jobs", "podgroups", "pods", "queues"),
    in_queue=Snapshot.jobs_in_queue,
    sorts={
        "name": lambda j: _meta(j).get("name") or "",
        "namespace": lambda j: _meta(j).get("namespace") or "",
        "phase": p.job_phase_name,
        "queue": lambda j: p.as_str(p.spec_of(j).get("queue")),
        "age": lambda j: _ts(_meta(j).get("creationTimestamp")),
        "inphase": _in_phase_since,
        "pending": lambda j: p.to_int(_status(j).get("pending")),
        "running": lambda j: p.to_int(_status(j).get("running")),
        "failed": lambda j: p.to_int(_status(j).get("failed")),
        "retries": lambda j: p.to_int(_status(j).get("retryCount")),
    },
    known_phases=frozenset(p.JOB_PHASES),
    phase_order=p.JOB_PHASE_ORDER,
    phase_name=p.job_phase_name,
    phase=p.job_phase,
    queue_of=spec_queue,
    row=job_row,
)


@require_safe
def jobs(request: HttpRequest) -> HttpResponse:
    return list_page(request, JOB_LIST)


DETAIL_KINDS = ("jobs", "podgroups", "pods", "queues", "events")


class _JobReads:
    """What a Job's page reads from one snapshot; the costly parts only when asked for."""

    def __init__(self, snap: Snapshot, job: dict) -> None:
        self.snap, self.job = snap, job
        self.pg = snap.podgroup_for_job(job)
        self.pods = related(snap.pods_for_job, job)
        self.qname = p.as_str(p.spec_of(job).get("queue"))
        self.queue = snap.queue(self.qname) if self.qname else None
        # The queue's ancestors: their capability can make the gang impossible (p.never_start).
        self.ancestors = p.queue_ancestors(self.queue, snap.queue)
        self.phase = p.job_phase(job)
        pg = self.pg
        self.pending_like = p.job_phase_name(job) in ("Pending", "") or (
            pg is not None
            and p.podgroup_phase_name(pg) in ("Pending", "Inqueue", "Unknown")
            and not self.phase.final
        )
        self.room = gang_room(snap, self.queue, pg) if self.pending_like else p.GangRoom()

    @cached_property
    def events(self) -> list[dict]:
        return events_of(self.snap, self.job, self.pg, *self.pods)

    @cached_property
    def event_rows(self) -> list:
        return p.event_rows(self.events)


@require_safe
def job_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    snap = snapshot(request)
    job = snap.jobs.get(namespace, name)
    if job is None and (resp := unreadable(request, snap, "jobs", namespace, name)):
        return resp
    job = or_404(job, _("Job"), namespace, name)
    now = p.reference_now(snap)
    r = _JobReads(snap, job)
    states = kind_states(snap, *DETAIL_KINDS)
    b = bucket(now)
    pods_v = p.resource_versions(r.pods)
    frags = Fragments(
        request,
        snap,
        now,
        DETAIL_KINDS,
        status=lambda: p.version_key(
            p.resource_versions([job, r.pg, r.queue, *r.ancestors]),
            p.resource_versions(r.room.read),
            pods_v,
            states,
            b,
        ),
        pods=lambda: p.version_key(pods_v, states, b),
        events=lambda: p.version_key(p.resource_versions(r.events), states, b),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "jobs")
    ctx.update(
        {"job": job, "name": name, "namespace": namespace, "phase": r.phase, "live": not r.phase.final}
    )
    if frags.want("status"):
        ctx.update(_status_ctx(request, r, now))
    if frags.want("pods"):
        ctx["pods"] = p.pod_rows(r.pods)
    if frags.want("events"):
        ctx["events"] = r.event_rows[:100]
        ctx["events_total"] = len(r.event_rows)
    if frags.asked is None:
        ctx.update(_spec_ctx(job))
    return frags.respond("dashboard/job_detail.html", ctx)


def _status_ctx(request: HttpRequest, r: _JobReads, now: Any) -> dict[str, Any]:
    """The ``status`` fragment: phase, gang, pod counts, why pending, tasks, phase history."""
    job, pg, queue, snap = r.job, r.pg, r.queue, r.snap
    state = p.as_dict(p.status_of(job).get("state"))
    return {
        "reason": p.as_str(state.get("reason")),
        "message": p.as_str(state.get("message")),
        "since": p.job_phase_since(job),
        "created": p.created_at(job),
        "gang": p.job_gang(job),
        "tasks": p.task_rows(job),
        "pg": pg,
        "pg_phase": p.podgroup_phase(pg) if pg else None,
        "pg_gang": p.podgroup_gang(pg) if pg else None,
        "pg_condition": p.unschedulable_condition(pg) if pg else None,
        "queue_name": r.qname,
        "queue": queue,
        "queue_missing": p.absent_hint(queue, snap.queues.state),
        "pg_missing": p.absent_hint(pg, snap.podgroups.state),
        "pg_unreadable": p.unreadable_reason(snap.podgroups.state),
        # The same hints as the Job's row in the lists (crash-looping pods, image pulls, ...).
        "hints": p.job_health_hint(job, r.pods, pg),
        "queue_state": p.queue_state(queue) if queue else None,
        "headroom": r.room.rows,
        "pending_like": r.pending_like,
        "findings": why_pending(snap, job, pg, queue, r.qname, r.pods, r.room) if r.pending_like else [],
        # Shown in the "why pending" panel only.
        "warning_events": p.latest_per_object(
            (row for row in r.event_rows if row.warning), limit=8, by_message=True
        )
        if r.pending_like
        else [],
        "timeline": p.job_timeline(job, now),
        "spec": p.spec_of(job),
        "status": p.status_of(job),
        "min_resources": p.min_resources(pg) if pg else [],
        "actions": job_actions_for(request, job),
    }


def _spec_ctx(job: dict) -> dict[str, Any]:
    """The parts of a Job's page no fragment refreshes: policies, plugins, metadata, YAML."""
    return {
        "policies": [p.policy_text(x) for x in p.as_list(p.spec_of(job).get("policies"))],
        "plugins": p.job_plugins(job),
        "labels": sorted(p.labels_of(job).items()),
        "annotations": sorted(p.annotations_of(job).items()),
        "yaml": yaml_text(job),
    }
