"""What the page of one gang reads: a Job's page and a PodGroup's page show the same gang (the
PodGroup, its pods, its queue and the queue's ancestors) from either side, with the same fragments
``status``, ``pods`` and ``events``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cached_property
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils.translation import gettext as _

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.clock import reference_now
from dashboard.presenters.paging import asked_page, page_note
from dashboard.presenters.pending import unreadable_reason
from dashboard.presenters.pods import pod_table
from dashboard.presenters.queues import GangRoom
from dashboard.presenters.states import no_pods_text
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.templatetags.volcano import clock_skew_seconds
from dashboard.views.fragments import Fragments, kind_states
from dashboard.views.rows import events_of, gang_room, pending_context
from dashboard.views.scheduler_health import components_not_ready
from dashboard.volcano import states as vs
from dashboard.volcano.events import event_records, fold_by_meaning, rows_ahead
from dashboard.volcano.failure import failure_applies
from dashboard.volcano.objects import status as status_of
from dashboard.volcano.pending import PendingContext, components_waited_on, never_start
from dashboard.volcano.queues import queue_ancestry


class GangReads:
    """One gang in one snapshot. ``subject``: the page's object and its counterpart (Job and
    PodGroup, in the page's order; either may be None); ``event_sources``: the objects besides
    the pods whose events the page lists; ``pending_like``: the page explains why it is not
    running (and reads the room in the queues for that). Events are read only when asked for."""

    def __init__(
        self,
        snap: Snapshot,
        *,
        subject: tuple[dict | None, dict | None],
        job: dict | None,
        pg: dict | None,
        pods: list[Mapping],
        event_sources: tuple[dict | None, ...],
        qname: str,
        pending_like: bool,
    ) -> None:
        self.snap, self.subject, self.job, self.pg, self.pods = snap, subject, job, pg, pods
        self.event_sources = event_sources
        self.qname = qname
        self.queue = snap.queue(qname) if qname else None
        # The queue's ancestors: their capability can make the gang impossible
        # (dashboard.volcano.pending.never_start).
        self.ancestors = queue_ancestry(self.queue, snap.queue)[1:]
        self.pending_like = pending_like
        # Which folded message is current depends on the time (volcano.events.current_member).
        self.now = reference_now(snap)
        self.room = gang_room(snap, self.queue, pg) if pending_like else GangRoom()

    @cached_property
    def _pending(self) -> PendingContext:
        return pending_context(self.snap, self.job, self.pg, self.queue, self.qname, self.pods)

    @cached_property
    def never_starts(self) -> bool:
        """The gang cannot start as it is: the "never" verdict of the why-pending card
        (dashboard.volcano.pending.never_start), asked only of a gang still waiting."""
        return self.pending_like and bool(never_start(self._pending)[0])

    @cached_property
    def components_down(self) -> list[str]:
        """The names of the Volcano components the gang waits on that are not running, as the
        why-pending card leads with them (dashboard.volcano.pending.components_waited_on); asked
        only of a gang still waiting."""
        if not self.pending_like:
            return []
        return [str(f.values["component"]) for f in components_waited_on(self._pending)]

    @cached_property
    def events(self) -> list[dict]:
        return events_of(self.snap, *self.event_sources, *self.pods)

    @cached_property
    def event_rows(self) -> list:
        """Every event of the gang, newest first (volcano.events.event_records)."""
        return event_records(self.events)

    @cached_property
    def folded_rows(self) -> list:
        """``event_rows`` folded by meaning (volcano.events.fold_by_meaning): the events table."""
        return fold_by_meaning(self.event_rows, self.now, clock_skew_seconds())

    def events_ahead(self) -> int:
        """How many events are stamped ahead of the clock beyond the skew allowance
        (volcano.events.rows_ahead): the folded rows change as they fall within it."""
        return rows_ahead(self.event_rows, self.now, clock_skew_seconds())

    @cached_property
    def placed_at(self) -> datetime | None:
        """When the gang last moved past waiting (vs.gang_placed_at)."""
        return vs.gang_placed_at(self.pg, self.job)

    def _warnings(self, history: bool) -> list:
        if not self.pending_like:
            return []
        placed = self.placed_at
        rows = (
            row
            for row in self.event_rows
            if row.warning and (placed is not None and row.last is not None and row.last < placed) == history
        )
        return fold_by_meaning(rows, self.now, clock_skew_seconds())

    def warning_events(self) -> list:
        """The Warnings the "why pending" panel shows as reasons, folded by meaning ([] when it is
        not shown): those last seen since the gang was last placed (all of them when it never was)."""
        return self._warnings(history=False)

    def earlier_warnings(self) -> list:
        """The Warnings, folded by meaning, last seen before the gang was last placed: history, listed
        apart with their ages ([] when the panel is not shown)."""
        return self._warnings(history=True)

    def no_pods_text(self) -> str:
        """Why the gang has no pods, in words (vs.why_no_pods for a Volcano Job)."""
        if self.job is None:
            return no_pods_text(vs.NoPods(""))
        job_events = events_of(self.snap, self.job)
        return no_pods_text(vs.why_no_pods(self.job, self.pg, job_events))

    def queue_shown(self) -> tuple:
        """What the status card shows of the queues: a gang that is not waiting shows its queue's
        name, existence and state only; a waiting one also explains the wait from the queue and its
        ancestors and shows the headroom (``room.room``: the numbers, not the other PodGroups they
        are read from, so another gang's change that leaves the headroom alone keeps the version)."""
        if not self.pending_like:
            return (self.queue is None, repr(status_of(self.queue).get("state")) if self.queue else "")
        return (resource_versions([self.queue, *self.ancestors]), repr(self.room.room))

    def events_shown(self) -> bool:
        """Whether the status card reads events: the waiting gang's warnings, a failed Job's
        controller actions (vf.failure_applies)."""
        return self.pending_like or (self.job is not None and failure_applies(self.job))

    def stuck(self, now: datetime) -> bool:
        """Whether the page's object is stuck at ``now`` (vs.job_stuck / vs.podgroup_stuck): a
        condition time alone flips, so it is part of the status version (its pods are not read)."""
        limit = settings.VOLCANO_UI_STUCK_SECONDS
        page_obj = self.subject[0]
        if page_obj is not None and page_obj is self.job:
            return vs.job_stuck(page_obj, (), now, limit) is not None
        return page_obj is not None and vs.podgroup_stuck(page_obj, (), now, limit) is not None

    def verdict_inputs(self) -> tuple:
        """What else a waiting gang's verdict and node fit read: the Volcano components not ready
        (views.scheduler_health.components_not_ready) and the nodes; () when it is not waiting."""
        if not self.pending_like:
            return ()
        down = tuple((r.name, r.ready, r.desired) for r in components_not_ready(self.snap))
        return (down, self.snap.nodes.version, self.snap.nodes.state.name)

    def fragments(self, request: HttpRequest, now: datetime, kinds: tuple[str, ...]) -> Fragments:
        """The page's fragments: ``status`` follows the gang's objects, its queues, the room read,
        the pods, whether the object is stuck and ``verdict_inputs``; ``pods`` the pods; ``events``
        the events (all with the kind states). No version holds the time: relative times tick in the browser
        (static/dashboard/reltime.js)."""
        states = kind_states(self.snap, *kinds)
        pods_v = resource_versions(self.pods)
        return Fragments(
            request,
            self.snap,
            now,
            kinds,
            status=lambda: version_key(
                resource_versions([*self.subject]),
                self.queue_shown(),
                pods_v,
                resource_versions(self.events) if self.events_shown() else (),
                self.events_ahead() if self.events_shown() else 0,
                states,
                self.stuck(now),
                self.verdict_inputs(),
            ),
            # With no pods, the card says why: from the Job, its PodGroup and the Job's events.
            pods=lambda: version_key(
                pods_v,
                resource_versions([*self.subject]) if not self.pods else (),
                resource_versions(self.events) if not self.pods else (),
                states,
            ),
            events=lambda: version_key(resource_versions(self.events), self.events_ahead(), states),
        )

    def lists_ctx(self, frags: Fragments) -> dict[str, Any]:
        """The ``pods`` and ``events`` fragments' context, for those the response shows: ``pods``
        one page of the pods table (``pod_table``: counts by status and task, the filter from
        ``?pod_status=``/``?pod_task=``, the page from ``?pod_page=``)."""
        ctx: dict[str, Any] = {}
        if frags.want("pods"):
            get = frags.request.GET
            page, _valid = asked_page(get.get("pod_page"))
            task = get.get("pod_task") or None
            table = pod_table(self.pods, status=get.get("pod_status", ""), task=task, page=page)
            ctx["pod_table"] = table
            ctx["pod_page_note"] = page_note(get.get("pod_page"), table.page, table.pages)
            ctx["pods"] = table.rows
            # Pods that cannot be read prove nothing about this gang: "unavailable", never "0".
            ctx["pods_unavailable"] = unreadable_reason(self.snap.pods.state)
            if not self.pods:
                ctx["no_pods"] = (
                    _("Pods are unavailable (%(why)s): whether this gang has pods cannot be told.")
                    % {"why": ctx["pods_unavailable"]}
                    if ctx["pods_unavailable"]
                    else self.no_pods_text()
                )
        if frags.want("events"):
            ctx["events"] = self.folded_rows[:100]
            ctx["events_total"] = len(self.folded_rows)
            ctx["events_blocked"] = bool(unreadable_reason(self.snap.events.state))
            # The "why pending" panel lists the warnings; the full table stays one click away.
            ctx["events_collapsed"] = self.pending_like
        return ctx
