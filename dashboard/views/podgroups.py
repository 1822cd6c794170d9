"""PodGroup pages: the PodGroups list and a PodGroup's page (fragments ``status``, ``pods``,
``events``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.pending import absent_hint
from dashboard.presenters.podgroups import owner_of, podgroup_conditions, podgroup_gang
from dashboard.presenters.resources import min_resources
from dashboard.presenters.states import stuck_view
from dashboard.views import memo
from dashboard.views.errors import find_object
from dashboard.views.gang import GangReads
from dashboard.views.listing import NEWEST_FIRST, ListSpec, list_page
from dashboard.views.notices import page_ctx
from dashboard.views.rows import pg_row, related, spec_queue, why_pending, yaml_text
from dashboard.views.sharing import shared_page
from dashboard.volcano import objects, phases
from dashboard.volcano import states as vs
from dashboard.volcano.objects import as_dict, as_str
from dashboard.volcano.objects import spec as spec_of
from dashboard.volcano.subgroups import podgroup_topology, subgroup_policies
from dashboard.volcano.time import created_at


def _meta(o: dict) -> dict:
    m = o.get("metadata")
    return m if isinstance(m, dict) else {}


def _created(o: dict) -> str:
    # RFC 3339 in UTC: sorts as a string, no parsing per sort key.
    value = _meta(o).get("creationTimestamp")
    return value if isinstance(value, str) else ""


def _running(g: dict) -> int:
    st = g.get("status")
    return objects.count(st.get("running")) if isinstance(st, dict) else 0


_STOPPED_RANK = vs.attention_rank("failed")


def _attention_key(g: dict) -> tuple[int, str]:
    """Needs a look first (vs.podgroup_attention), then the oldest first; finished ones newest
    first. Undated PodGroups ("~" sorts after digits) last within their class."""
    rank = vs.attention_rank(vs.podgroup_attention(g))
    created = _created(g)
    if not created:
        return (rank, "~")
    return (rank, created.translate(NEWEST_FIRST) if rank >= _STOPPED_RANK else created)


def pg_row_shown(r: dict, now: datetime) -> tuple[tuple, tuple]:
    """What a PodGroups list row (dashboard/_podgroup_row.html) shows, for memo.list_rows_html: the
    PodGroup (identity: its name, phase, owner, counts, age) and its Job; the queue's and owner's
    missing notes and the step of its age (its wait is the same time, shown the same way)."""
    return ((r["pg"], r["job"]), (r["queue_missing"], r["owner_missing"], memo.ago_step(r["created"], now)))


def pg_rows_html(rows: list[dict], now: datetime) -> SafeString:
    return memo.list_rows_html("dashboard/_podgroup_row.html", rows, now, pg_row_shown)


PODGROUP_LIST = ListSpec(
    kind="podgroups",
    nav="podgroups",
    template="dashboard/podgroups.html",
    kinds=("podgroups", "jobs"),
    depends=("podgroups", "jobs", "queues"),
    in_queue=Snapshot.podgroups_in_queue,
    sorts={
        "attention": _attention_key,
        "name": lambda g: _meta(g).get("name") or "",
        "namespace": lambda g: _meta(g).get("namespace") or "",
        "phase": phases.podgroup_phase,
        "queue": lambda g: as_str(objects.spec(g).get("queue")),
        "age": _created,
        "minmember": lambda g: objects.count(objects.spec(g).get("minMember")),
        "running": _running,
    },
    known_phases=frozenset(phases.PODGROUP_PHASES),
    phase_order=phases.PODGROUP_PHASES,
    phase_name=phases.podgroup_phase,
    phase=badges.podgroup_phase,
    queue_of=spec_queue,
    row=pg_row,
    active_phases=phases.ACTIVE_PODGROUP_PHASES,
    default_sort="attention",
    rows_html=pg_rows_html,
)


@require_safe
@shared_page
def podgroups(request: HttpRequest) -> HttpResponse:
    return list_page(request, PODGROUP_LIST)


DETAIL_KINDS = ("podgroups", "jobs", "pods", "queues", "events")


def _reads(snap: Snapshot, pg: dict) -> GangReads:
    job = snap.job_for_podgroup(pg)
    return GangReads(
        snap,
        subject=(pg, job),
        job=job,
        pg=pg,
        pods=related(snap.pods_for_podgroup, pg),
        event_sources=(pg,),
        qname=as_str(objects.spec(pg).get("queue")),
        pending_like=phases.gang_waiting(None, phases.podgroup_phase(pg)),
    )


@require_safe
@shared_page
def podgroup_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "podgroups", _("PodGroup"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, pg = found
    now = reference_now(snap)
    r = _reads(snap, pg)
    frags = r.fragments(request, now, DETAIL_KINDS)
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "podgroups")
    phase = badges.podgroup_phase(pg)
    ctx.update({"pg": pg, "name": name, "namespace": namespace, "phase": phase, "live": not phase.final})
    if frags.want("status"):
        ctx.update(_status_ctx(r, pg, now))
    ctx.update(r.lists_ctx(frags))
    if frags.asked is None:  # the metadata and YAML below the fragments
        ctx["labels"] = sorted(objects.labels(pg).items())
        ctx["annotations"] = sorted(objects.annotations(pg).items())
        ctx["yaml"] = yaml_text(pg)
    return frags.respond("dashboard/podgroup_detail.html", ctx)


def _status_ctx(r: GangReads, pg: dict, now: datetime) -> dict[str, Any]:
    """The ``status`` fragment: phase, owner, gang, why not running, conditions, requirements."""
    job, queue, snap = r.job, r.queue, r.snap
    limit = settings.VOLCANO_UI_STUCK_SECONDS
    return {
        "gang": podgroup_gang(pg),
        "row": pg_row(snap, pg, now),
        "job": job,
        "owner": owner_of(pg),
        "conditions": podgroup_conditions(pg),
        "min_task_member": sorted(
            (as_str(k), objects.count(v)) for k, v in as_dict(objects.spec(pg).get("minTaskMember")).items()
        ),
        "min_resources": min_resources(pg),
        "queue_name": r.qname,
        "queue": queue,
        "queue_missing": absent_hint(queue, snap.queues.state),
        "queue_state": badges.queue_state(queue) if queue else None,
        "headroom": r.room.rows,
        "findings": (
            findings := why_pending(snap, None, pg, queue, r.qname, r.pods, r.room, owner_job=job)
            if r.pending_like
            else []
        ),
        "left_disputed": any(f.kind == "scheduler_differs" for f in findings),
        "pending_like": r.pending_like,
        "warning_events": r.warning_events(),
        "earlier_warnings": r.earlier_warnings(),
        "placed_at": r.placed_at,
        "current_condition": vs.current_condition(pg),
        "stuck": stuck_view(vs.podgroup_stuck(pg, r.pods, now, limit), limit),
        "created": created_at(pg),
        "priority_class": as_str(spec_of(pg).get("priorityClassName")),
        "pg_nt": podgroup_topology(pg),
        "subgroups": subgroup_policies(pg, r.pods),
    }
