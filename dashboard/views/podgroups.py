"""PodGroup pages: the PodGroups list and a PodGroup's page (fragments ``status``, ``pods``,
``events``)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard import presenters as p
from dashboard.kube.snapshot import Snapshot
from dashboard.views.errors import or_404, unreadable
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.listing import ListSpec, list_page
from dashboard.views.notices import page_ctx
from dashboard.views.rows import (
    events_of,
    gang_room,
    pg_row,
    related,
    snapshot,
    spec_queue,
    why_pending,
    yaml_text,
)


def _meta(o: dict) -> dict:
    m = o.get("metadata")
    return m if isinstance(m, dict) else {}


def _created(o: dict) -> str:
    # RFC 3339 in UTC: sorts as a string, no parsing per sort key.
    value = _meta(o).get("creationTimestamp")
    return value if isinstance(value, str) else ""


def _running(g: dict) -> int:
    st = g.get("status")
    return p.to_int(st.get("running")) if isinstance(st, dict) else 0


PODGROUP_LIST = ListSpec(
    kind="podgroups",
    nav="podgroups",
    template="dashboard/podgroups.html",
    kinds=("podgroups", "jobs"),
    depends=("podgroups", "jobs", "queues"),
    in_queue=Snapshot.podgroups_in_queue,
    sorts={
        "name": lambda g: _meta(g).get("name") or "",
        "namespace": lambda g: _meta(g).get("namespace") or "",
        "phase": p.podgroup_phase_name,
        "queue": lambda g: p.as_str(p.spec_of(g).get("queue")),
        "age": _created,
        "minmember": lambda g: p.to_int(p.spec_of(g).get("minMember")),
        "running": _running,
    },
    known_phases=frozenset(p.PODGROUP_PHASES),
    phase_order=p.PODGROUP_PHASE_ORDER,
    phase_name=p.podgroup_phase_name,
    phase=p.podgroup_phase,
    queue_of=spec_queue,
    row=pg_row,
)


@require_safe
def podgroups(request: HttpRequest) -> HttpResponse:
    return list_page(request, PODGROUP_LIST)


DETAIL_KINDS = ("podgroups", "jobs", "pods", "queues", "events")


class _PodGroupReads:
    """What a PodGroup's page reads from one snapshot; the costly parts only when asked for."""

    def __init__(self, snap: Snapshot, pg: dict) -> None:
        self.snap, self.pg = snap, pg
        self.job = snap.job_for_podgroup(pg)
        self.pods = related(snap.pods_for_podgroup, pg)
        self.qname = p.as_str(p.spec_of(pg).get("queue"))
        self.queue = snap.queue(self.qname) if self.qname else None
        self.ancestors = p.queue_ancestors(self.queue, snap.queue)
        self.phase = p.podgroup_phase(pg)
        self.pending_like = self.phase.label in ("Pending", "Inqueue", "Unknown") or not self.phase.known
        self.room = gang_room(snap, self.queue, pg) if self.pending_like else p.GangRoom()

    @cached_property
    def events(self) -> list[dict]:
        return events_of(self.snap, self.pg, *self.pods)

    @cached_property
    def event_rows(self) -> list:
        return p.event_rows(self.events)


@require_safe
def podgroup_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    snap = snapshot(request)
    pg = snap.podgroups.get(namespace, name)
    if pg is None and (resp := unreadable(request, snap, "podgroups", namespace, name)):
        return resp
    pg = or_404(pg, _("PodGroup"), namespace, name)
    now = p.reference_now(snap)
    r = _PodGroupReads(snap, pg)
    states = kind_states(snap, *DETAIL_KINDS)
    b = bucket(now)
    pods_v = p.resource_versions(r.pods)
    frags = Fragments(
        request,
        snap,
        now,
        DETAIL_KINDS,
        status=lambda: p.version_key(
            p.resource_versions([pg, r.job, r.queue, *r.ancestors]),
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
    ctx = page_ctx(snap, now, DETAIL_KINDS, "podgroups")
    ctx.update({"pg": pg, "name": name, "namespace": namespace, "phase": r.phase, "live": not r.phase.final})
    if frags.want("status"):
        ctx.update(_status_ctx(r, now))
    if frags.want("pods"):
        ctx["pods"] = p.pod_rows(r.pods)
    if frags.want("events"):
        ctx["events"] = r.event_rows[:100]
        ctx["events_total"] = len(r.event_rows)
    if frags.asked is None:  # the metadata and YAML below the fragments
        ctx["labels"] = sorted(p.labels_of(pg).items())
        ctx["annotations"] = sorted(p.annotations_of(pg).items())
        ctx["yaml"] = yaml_text(pg)
    return frags.respond("dashboard/podgroup_detail.html", ctx)


def _status_ctx(r: _PodGroupReads, now: Any) -> dict[str, Any]:
    """The ``status`` fragment: phase, owner, gang, why not running, conditions, requirements."""
    pg, job, queue, snap = r.pg, r.job, r.queue, r.snap
    return {
        "gang": p.podgroup_gang(pg),
        "row": pg_row(snap, pg, now),
        "job": job,
        "owner": p.owner_of(pg),
        "conditions": p.podgroup_conditions(pg),
        "min_task_member": sorted(
            (p.as_str(k), p.to_int(v)) for k, v in p.as_dict(p.spec_of(pg).get("minTaskMember")).items()
        ),
        "min_resources": p.min_resources(pg),
        "queue_name": r.qname,
        "queue": queue,
        "queue_missing": p.absent_hint(queue, snap.queues.state),
        "queue_state": p.queue_state(queue) if queue else None,
        "headroom": r.room.rows,
        "findings": why_pending(snap, None, pg, queue, r.qname, r.pods, r.room, owner_job=job)
        if r.pending_like
        else [],
        "pending_like": r.pending_like,
        # Shown in the "why not running" panel only.
        "warning_events": p.latest_per_object(
            (row for row in r.event_rows if row.warning), limit=8, by_message=True
        )
        if r.pending_like
        else [],
        "created": p.created_at(pg),
        "priority_class": p.as_str(p.spec_of(pg).get("priorityClassName")),
    }
