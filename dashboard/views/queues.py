"""Queue pages: the Queues list (fragment ``results``) and a Queue's page (fragments ``status``,
``jobs``, ``events``)."""

from __future__ import annotations

import bisect
import operator
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.access import visible_namespaces
from dashboard.actions import queue_actions_for
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.pending import unreadable_reason
from dashboard.presenters.queues import queue_affinity
from dashboard.presenters.resources import queue_resource_bars, resource_columns
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.views import memo
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, kind_states
from dashboard.views.history import queue_history
from dashboard.views.notices import blocked, page_ctx
from dashboard.views.queue_summary import queue_summaries
from dashboard.views.rows import (
    events_of,
    get_cluster_cache,
    job_row,
    memo_base,
    pg_row,
    phase_cards,
    queue_leftovers,
    snapshot,
    yaml_text,
)
from dashboard.views.sharing import shared_page
from dashboard.views.sparklines import queue_sparklines, spark_version, sparks_notice
from dashboard.volcano import objects, phases
from dashboard.volcano.events import event_records
from dashboard.volcano.objects import as_str
from dashboard.volcano.quantities import format_quantity
from dashboard.volcano.queues import leftovers_hold
from dashboard.volcano.queues import parent_name as queue_parent_name
from dashboard.volcano.time import created_at

LIST_KINDS = ("queues", "podgroups")


def all_queue_rows(request: HttpRequest, snap: Snapshot) -> list[dict]:
    """Summary rows of every Queue (queue_summary), shared by every viewer of the same data.

    They read the Queues, the PodGroups' state and their counts per (queue, phase), not the
    PodGroups themselves: a PodGroup that changes within its queue and phase (most changes under
    churn) leaves them as they are, so they are kept per counts, not per PodGroup change."""
    base = memo_base(request)
    counts = frozenset(snap.podgroups.count_by("queue_phase").items())
    return memo.section(
        ("queues", *base, snap.queues.version, unreadable_reason(snap.podgroups.state), counts),
        lambda: queue_summaries(snap, snap.queues.all()),
        stale_key=("queues", *base),
    )


@require_safe
@shared_page
def queues(request: HttpRequest) -> HttpResponse:
    snap = snapshot(request)
    now = reference_now(snap)
    states = kind_states(snap, *LIST_KINDS)
    spark = spark_version()
    frags = Fragments(
        request,
        snap,
        now,
        LIST_KINDS,
        results=lambda: version_key(snap.queues.version, snap.podgroups.version, states, spark),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, LIST_KINDS, "queues")
    if frags.want("results"):
        rows = all_queue_rows(request, snap)
        ctx["rows"] = rows
        names, other = resource_columns(r["bars"] for r in rows)
        ctx["res_columns"], ctx["res_other"] = names, other
        sparks = queue_sparklines(spark)
        ctx["sparks_on"] = sparks is not None
        ctx["sparks_notice"] = sparks_notice(spark)
        ctx["rows_html"] = memo.queue_rows_html(
            rows, "dashboard/_queue_row.html", (tuple(names), other), sparks
        )
        # Bars with nothing to compare against carry a mark; the list explains it once.
        ctx["noref"] = any(not b.has_ref and not b.invalid for r in rows for b in r["bars"])
        ctx["incl_children"] = any(r["counts_incl_children"] for r in rows)
        ctx["blocked"] = blocked(ctx["notices"], "queues")
    return frags.respond("dashboard/queues.html", ctx)


DETAIL_KINDS = ("queues", "jobs", "podgroups", "events")


class _QueueReads:
    """What a Queue's page reads from one snapshot; each part only when asked for."""

    def __init__(self, request: HttpRequest, snap: Snapshot, queue: dict, name: str) -> None:
        self.request, self.snap, self.queue, self.name = request, snap, queue, name

    def summaries(self, queues: list[dict]) -> list[dict]:
        """queue_summaries of ``queues``: the rows the Queues list shares (all_queue_rows) while they
        hold these very Queue objects, else computed. The tree is computed over every Queue either
        way; at scale that costs more than the rest of the page's status."""
        # By identity: ``queues`` are alive, so an id among theirs is one of them. The shared rows are
        # in tree order, as queue_summaries gives a subset.
        wanted = {id(q) for q in queues}
        shared = [row for row in all_queue_rows(self.request, self.snap) if id(row["queue"]) in wanted]
        return shared if len(shared) == len(wanted) else queue_summaries(self.snap, queues)

    @cached_property
    def jobs(self) -> list[dict]:
        return list(self.snap.jobs_in_queue(self.name))

    @cached_property
    def podgroups(self) -> list[dict]:
        return list(self.snap.podgroups_in_queue(self.name))

    @cached_property
    def slot(self) -> tuple:
        """(cache, visible namespaces, queue): what the page's memos of this queue are kept per."""
        return (memo.cache_token(get_cluster_cache()), visible_namespaces(self.request), self.name)

    @cached_property
    def podgroup_versions(self) -> str:
        # Both the status and the jobs fragments' versions hold them.
        return _objects_version(("podgroups", *self.slot), self.podgroups)

    @cached_property
    def job_versions(self) -> str:
        return _objects_version(("jobs", *self.slot), self.jobs)

    @cached_property
    def podgroup_phases(self) -> _Phases:
        return _podgroup_phases(("phases", *self.slot), self.podgroups)

    @cached_property
    def children(self) -> list[dict]:
        # A queue that is its own parent is not its own child (presenters.queues.queue_tree).
        return [c for c in self.snap.child_queues(self.name) if objects.name(c) != self.name]

    @cached_property
    def tree(self) -> dict:
        # Its place in the tree: the missing-parent / parent-cycle hint depends on other Queues.
        return self.summaries([self.queue])[0]

    @cached_property
    def events(self) -> list[dict]:
        return events_of(self.snap, self.queue)


@require_safe
@shared_page
def queue_detail(request: HttpRequest, name: str) -> HttpResponse:
    found = find_object(request, "queues", _("Queue"), None, name)
    if isinstance(found, HttpResponse):
        return found
    snap, queue = found
    now = reference_now(snap)
    r = _QueueReads(request, snap, queue, name)
    states = kind_states(snap, *DETAIL_KINDS)
    frags = Fragments(
        request,
        snap,
        now,
        DETAIL_KINDS,
        status=lambda: version_key(
            resource_versions([queue, *r.children]),
            r.podgroup_versions,
            # A parent counts its subtree's PodGroups.
            snap.podgroups.version if r.tree["has_children"] else 0,
            r.tree["tree_key"],
            states,
        ),
        jobs=lambda: version_key(r.job_versions, r.podgroup_versions, states),
        events=lambda: version_key(resource_versions(r.events), states),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "queues")
    ctx.update({"queue": queue, "name": name})
    if frags.want("status"):
        ctx.update(_status_ctx(request, r))
    if frags.want("jobs"):
        ctx.update(_jobs_ctx(request, r, now))
    if frags.want("events"):
        rows = event_records(r.events)
        ctx["events"], ctx["events_total"] = rows[:100], len(rows)
        ctx["events_blocked"] = bool(unreadable_reason(snap.events.state))
    if frags.asked is None:  # the metadata and YAML below the fragments
        ctx["history"] = queue_history(request, name, now, r.tree["has_children"])
        ctx["yaml"] = yaml_text(queue)
        ctx["labels"] = sorted(objects.labels(queue).items())
        ctx["annotations"] = sorted(objects.annotations(queue).items())
    return frags.respond("dashboard/queue_detail.html", ctx)


def _status_ctx(request: HttpRequest, r: _QueueReads) -> dict[str, Any]:
    """The ``status`` fragment: state, resources, tree place, child queues, PodGroups by phase."""
    queue, snap = r.queue, r.snap
    spec = objects.spec(queue)
    parent = queue_parent_name(queue) or ""
    # possible_leftovers judges Running PodGroups only: the others need not be read again.
    leftovers = queue_leftovers(snap, r.name, r.podgroup_phases.running)
    return {
        "state": badges.queue_state(queue),
        "bars": queue_resource_bars(queue),
        "weight": objects.count(spec.get("weight")) or 1,
        "parent": parent,
        "tree": r.tree,
        # A queue without spec.parent hangs under "root" (Volcano's rule), as the tree shows it.
        "parent_missing": r.tree["problem"] == "missing_parent"
        or (parent == "root" and snap.queue("root") is None),
        "reclaimable": spec.get("reclaimable"),
        "priority": spec.get("priority"),
        "dequeue": as_str(spec.get("dequeueStrategy")),
        "queue_type": as_str(spec.get("type")),
        "affinity": queue_affinity(queue),
        "children": r.summaries(r.children) if r.children else [],
        # A parent's PodGroups are its subtree's (queue_summaries): "incl. children".
        "counts": phase_cards(
            r.tree["counts"] if r.tree["has_children"] else r.podgroup_phases.counts,
            phases.PODGROUP_PHASES,
            badges.podgroup_phase,
        ),
        "counts_incl_children": r.tree["has_children"],
        "actions": queue_actions_for(request, queue),
        "leftovers": [
            {
                "namespace": x.namespace,
                "name": x.name,
                "pods": x.pods,
                "min_member": x.min_member,
                "holds": ", ".join(f"{res} {format_quantity(res, n)}" for res, n in x.holds.items()),
            }
            for x in leftovers[:LEFTOVERS_SHOWN]
        ],
        "leftovers_total": len(leftovers),
        "leftovers_hold": [(res, format_quantity(res, n)) for res, n in leftovers_hold(leftovers).items()],
    }


# Possible leftovers listed on a Queue's page (the count and the sum cover them all).
LEFTOVERS_SHOWN = 20
# Rows per page of a Queue's Jobs and PodGroups tables.
QUEUE_TABLE_PAGE = 50


def _page_number(request: HttpRequest, key: str) -> int:
    try:
        return max(1, int(request.GET.get(key, "1")))
    except ValueError:
        return 1


def _cut(items: list, page: int) -> tuple[list, dict[str, int]]:
    """Page ``page`` (clamped) of ``items``: the items and {first, last, total, page, pages}
    (first/last 1-based, 0 when empty)."""
    total = len(items)
    pages = max(1, -(-total // QUEUE_TABLE_PAGE))
    page = min(page, pages)
    start = (page - 1) * QUEUE_TABLE_PAGE
    shown = items[start : start + QUEUE_TABLE_PAGE]
    first = start + 1 if shown else 0
    return shown, {"first": first, "last": start + len(shown), "total": total, "page": page, "pages": pages}


# Per (kind, cache, visible namespaces, queue): the last view's order of that queue's objects. The
# sort parts of an object are read once while the cache publishes the very same dict (an unchanged
# object is published by reference), and the objects are sorted again only when one of them is
# another dict: a poll of an unchanged queue reuses the order, one under churn re-reads the few
# objects that changed. The order does not depend on the request's time (see _Order.at).
# Bounded: the pages of QUEUE_SORT_MEMO_QUEUES queues, least recently viewed out first.
_SORT_ORDERS: OrderedDict[tuple, _Order] = OrderedDict()
QUEUE_SORT_MEMO_QUEUES = 32
_sort_lock = threading.Lock()


def _same_objects(a: tuple | list, b: tuple | list) -> bool:
    """The same objects (identity) in the same order."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def _job_parts(j: dict) -> tuple:
    """(in a final phase, entered its phase at, namespace, name)."""
    return (badges.job_phase(j).final, phases.job_phase_since(j), objects.namespace(j), objects.name(j))


def _pg_parts(g: dict) -> tuple:
    """(in a final phase, created at when it waits in the queue else None, namespace, name)."""
    waiting = phases.podgroup_queued(phases.podgroup_phase(g))
    since = created_at(g) if waiting else None
    return (badges.podgroup_phase(g).final, since, objects.namespace(g), objects.name(g))


class _Order:
    """``objs`` ordered by (final, no time, time, namespace, name) from their sort parts, and the
    ranges of equal ``final``: ``at(now)`` turns it into the waiting-longest-first order."""

    def __init__(self, objs: list[dict], parts_of: Callable[[dict], tuple], previous: _Order | None) -> None:
        old = previous.parts if previous is not None else {}
        self.objs = tuple(objs)
        self.parts: dict[int, tuple[dict, tuple]] = {}
        keyed = []
        for obj in objs:
            hit = old.get(id(obj))
            parts = hit[1] if hit is not None and hit[0] is obj else parts_of(obj)
            self.parts[id(obj)] = (obj, parts)
            final, since, ns, name = parts
            keyed.append(((final, since is None, since, ns, name), obj))
        keyed.sort(key=operator.itemgetter(0))
        self.keys = [k for k, _o in keyed]
        self.ordered = [o for _k, o in keyed]
        # (start, end, start of the objects without a time) of each run of equal ``final``.
        self.groups: list[tuple[int, int, int]] = []
        start = 0
        while start < len(self.keys):
            final = self.keys[start][0]
            end = bisect.bisect_right(self.keys, final, lo=start, key=operator.itemgetter(0))
            untimed = bisect.bisect_left(self.keys, True, lo=start, hi=end, key=operator.itemgetter(1))
            self.groups.append((start, end, untimed))
            start = end

    def at(self, now: datetime) -> list[dict]:
        """The objects non-final before final, then by the seconds from their time to ``now``
        (longest first; an unknown or later time counts 0), then namespace and name. A time before
        ``now`` waits longer the earlier it is, so only the times at or after ``now`` (clock skew:
        rare) leave the kept order: they wait 0, as the objects without a time, by name."""
        out: list[dict] = []
        keys, ordered = self.keys, self.ordered
        for start, end, untimed in self.groups:
            final = keys[start][0]
            cut = bisect.bisect_left(keys, (final, False, now), lo=start, hi=untimed)
            out.extend(ordered[start:cut])
            if cut == untimed:
                out.extend(ordered[untimed:end])
            else:
                rest = sorted(range(cut, end), key=lambda i: (keys[i][3], keys[i][4]))
                out.extend(ordered[i] for i in rest)
        return out


def _waiting_longest_first(
    slot: tuple, objs: list[dict], parts_of: Callable[[dict], tuple], now: datetime
) -> list[dict]:
    """``objs`` ordered non-final before final, then by the seconds from the parts' time to ``now``
    (longest first; an unknown or later time counts 0), then namespace and name."""
    with _sort_lock:
        previous = _SORT_ORDERS.get(slot)
    if previous is not None and _same_objects(previous.objs, objs):
        order = previous
    else:
        order = _Order(objs, parts_of, previous)
    with _sort_lock:
        _SORT_ORDERS[slot] = order
        _SORT_ORDERS.move_to_end(slot)
        while len(_SORT_ORDERS) > 2 * QUEUE_SORT_MEMO_QUEUES:  # a Jobs and a PodGroups slot a queue
            _SORT_ORDERS.popitem(last=False)
    return order.at(now)


# Per (kind, cache, visible namespaces, queue): (the objects, the digest of their resource_versions)
# of the last view: the page's fragment versions read a queue's ~1,000 PodGroups and Jobs on every
# poll; while they are the very same objects their versions are the same. Bounded as _SORT_ORDERS.
_VERSIONS: OrderedDict[tuple, tuple[tuple, str]] = OrderedDict()


class _Phases:
    """A queue's PodGroups by phase: ``counts`` (Counter of phases.podgroup_phase) and ``running``
    (the Running ones, in the queue's order), kept with ``objs`` while they are the same objects."""

    def __init__(self, objs: list[dict]) -> None:
        self.objs = tuple(objs)
        found = [phases.podgroup_phase(g) for g in objs]
        self.counts = Counter(found)
        self.running = [g for g, phase in zip(objs, found, strict=True) if phase == "Running"]


_PHASES: OrderedDict[tuple, _Phases] = OrderedDict()


def _podgroup_phases(slot: tuple, objs: list[dict]) -> _Phases:
    with _sort_lock:
        hit = _PHASES.get(slot)
    if hit is not None and _same_objects(hit.objs, objs):
        return hit
    found = _Phases(objs)
    with _sort_lock:
        _PHASES[slot] = found
        _PHASES.move_to_end(slot)
        while len(_PHASES) > QUEUE_SORT_MEMO_QUEUES:
            _PHASES.popitem(last=False)
    return found


def _objects_version(slot: tuple, objs: list[dict]) -> str:
    """version_key of ``objs``' resource_versions, remembered per ``slot`` while they are the same."""
    with _sort_lock:
        hit = _VERSIONS.get(slot)
    if hit is not None and _same_objects(hit[0], objs):
        return hit[1]
    digest = version_key(resource_versions(objs))
    with _sort_lock:
        _VERSIONS[slot] = (tuple(objs), digest)
        _VERSIONS.move_to_end(slot)
        while len(_VERSIONS) > 2 * QUEUE_SORT_MEMO_QUEUES:
            _VERSIONS.popitem(last=False)
    return digest


def _jobs_ctx(request: HttpRequest, r: _QueueReads, now: datetime) -> dict[str, Any]:
    """The ``jobs`` fragment: the queue's Jobs and PodGroups, waiting longest first, each paged
    (``?jobs_page=``, ``?pgs_page=``); rows are built for the shown page only."""
    jobs_sorted = _waiting_longest_first(("jobs", *r.slot), r.jobs, _job_parts, now)
    pgs_sorted = _waiting_longest_first(("podgroups", *r.slot), r.podgroups, _pg_parts, now)
    jobs, job_page = _cut(jobs_sorted, _page_number(request, "jobs_page"))
    pgs, pg_page = _cut(pgs_sorted, _page_number(request, "pgs_page"))
    return {
        "job_rows": queue_job_rows_html([job_row(r.snap, j, now) for j in jobs], now),
        "job_total": job_page["total"],
        "job_page": job_page,
        "pg_rows": queue_pg_rows_html([pg_row(r.snap, g, now) for g in pgs], now),
        "pg_total": pg_page["total"],
        "pg_page": pg_page,
    }


def queue_job_row_shown(r: dict, now: datetime) -> tuple[tuple, tuple]:
    """What a Job row of a Queue's page (dashboard/_queue_job_row.html) shows, for
    memo.list_rows_html: the Job (identity: its name, phase, gang, time in phase), its hints (they
    also read its pods and PodGroup and whether its queue exists) and the step of its time in phase."""
    return ((r["job"],), (tuple(r["hints"]), memo.ago_step(r["since"], now)))


def queue_pg_row_shown(r: dict, now: datetime) -> tuple[tuple, tuple]:
    """What a PodGroup row of a Queue's page (dashboard/_queue_podgroup_row.html) shows, for
    memo.list_rows_html: the PodGroup (identity: its name, phase, gang, whether it waits) and the step
    of its creation time while it waits (the wait runs from it, clamped at 0, shown as an age)."""
    return ((r["pg"],), (None if r["wait"] is None else memo.ago_step(r["created"], now),))


def queue_job_rows_html(rows: list[dict], now: datetime) -> SafeString:
    return memo.list_rows_html("dashboard/_queue_job_row.html", rows, now, queue_job_row_shown)


def queue_pg_rows_html(rows: list[dict], now: datetime) -> SafeString:
    return memo.list_rows_html("dashboard/_queue_podgroup_row.html", rows, now, queue_pg_row_shown)
