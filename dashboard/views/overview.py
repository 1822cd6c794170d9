"""The overview (fragments ``counts``, ``attention``, ``queues``, ``events``) and its sections,
which the kiosk shows too.

Every section is read from the cache's indexes through the Snapshot's named queries (counts per
phase, Pending/Failed Jobs, crash-looping pods, gangs below minMember, Warning events), not by a
walk over every object, and memoised per change counters (``memo.section``).
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.text import get_text_list
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.phases import job_phase, podgroup_phase
from dashboard.presenters.podgroups import podgroup_gang
from dashboard.presenters.pods import pod_row
from dashboard.presenters.states import stuck_view
from dashboard.presenters.versions import version_key
from dashboard.templatetags.volcano import clock_skew_seconds
from dashboard.views import memo
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.notices import ALL_KINDS, blocked, kind_label, page_ctx, unavailable
from dashboard.views.queues import all_queue_rows
from dashboard.views.rows import (
    gang_room,
    mark_missing,
    memo_base,
    phase_cards,
    related,
    snapshot,
    why_pending,
)
from dashboard.views.scheduler_health import components_not_ready, health_version, scheduler_health_ctx
from dashboard.views.sharing import shared_page
from dashboard.views.sparklines import queue_sparklines, spark_version, sparks_notice
from dashboard.volcano import objects, phases
from dashboard.volcano import states as vs
from dashboard.volcano.events import event_records, event_ref, is_warning, latest_per_object
from dashboard.volcano.objects import as_str
from dashboard.volcano.objects import name as name_of
from dashboard.volcano.objects import namespace as namespace_of
from dashboard.volcano.phases import TRANSITIONAL_JOB_PHASES
from dashboard.volcano.restarts import RESTART_WINDOW, last_restart, restarting_repeatedly
from dashboard.volcano.time import created_at

# Phases always shown on the overview (the transitional ones appear only while non-zero).
KEY_JOB_PHASES = frozenset({"Pending", "Running", "Completed", "Failed"})
# The kinds the "needs attention" lists are read from.
ATTENTION_KINDS = ("jobs", "podgroups", "pods", "queues")
# The overview lists the newest Warning of at most this many objects.
RECENT_WARNING_OBJECTS = 10
# Sorts a Failed Job without a phase time after every dated one; shown as no time.
_UNDATED = datetime(1970, 1, 1, tzinfo=UTC)


@require_safe
@shared_page
def overview(request: HttpRequest) -> HttpResponse:
    snap = snapshot(request)
    now = reference_now(snap)
    states = kind_states(snap, *ALL_KINDS)
    jv, gv, qv = snap.jobs.version, snap.podgroups.version, snap.queues.version
    spark = spark_version()
    frags = Fragments(
        request,
        snap,
        now,
        ALL_KINDS,
        counts=lambda: version_key(jv, gv, qv, states),
        attention=lambda: version_key(
            jv, gv, snap.pods.version, qv, snap.deployments.version, states, bucket(now)
        ),
        queues=lambda: version_key(qv, gv, states, spark),
        events=lambda: version_key(snap.events.version, states),
        health=lambda: version_key(*health_version(snap), states, bucket(now)),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, ALL_KINDS, "overview")
    ctx.update(sections(request, snap, now, ctx["notices"], frags.want, spark))
    if frags.want("health"):
        ctx["health"] = scheduler_health_ctx(snap, now, memo_base(request))
    return frags.respond("dashboard/overview.html", ctx)


def sections(
    request: HttpRequest,
    snap: Snapshot,
    now: datetime,
    notices: list[dict],
    want: Any = None,
    spark: Any = None,
) -> dict[str, Any]:
    """The overview's sections: ``counts`` (job_cards, pg_cards, totals), ``queues`` (queue_rows,
    queue_rows_html), ``attention`` (attention, attention_html), ``events`` (warnings), plus which
    kinds are blocked. ``want(name)`` limits the work to the fragment being refreshed (None: all);
    ``spark`` (views.sparklines.spark_version(), None: none) adds the queues' sparklines."""
    base = memo_base(request)
    ctx: dict[str, Any] = {
        "jobs_blocked": blocked(notices, "jobs"),
        "pgs_blocked": blocked(notices, "podgroups"),
        "queues_blocked": blocked(notices, "queues"),
        "events_blocked": blocked(notices, "events"),
    }
    if want is None or want("counts"):
        ctx.update(
            memo.section(
                ("counts", *base, snap.jobs.version, snap.podgroups.version, snap.queues.version),
                lambda: _counts(snap),
                stale_key=("counts", *base),
            )
        )
    if want is None or want("queues"):
        ctx["queue_rows"] = all_queue_rows(request, snap)
        sparks = queue_sparklines(spark) if spark is not None else None
        ctx["sparks_on"] = sparks is not None
        ctx["sparks_notice"] = sparks_notice(spark)
        ctx["queue_rows_html"] = memo.queue_rows_html(
            ctx["queue_rows"], "dashboard/_queue_mini_row.html", (), sparks
        )
    if want is None or want("attention"):
        versions = (
            snap.jobs.version,
            snap.podgroups.version,
            snap.pods.version,
            snap.queues.version,
            snap.deployments.version,
            snap.deployments.state.name,
            # The pending Jobs' verdicts read the nodes (what can never fit).
            snap.nodes.version,
            snap.nodes.state.name,
        )
        ctx["attention"] = memo.section(
            # The kinds' states too: what cannot be read is named in the section.
            ("attention", *base, *versions, bucket(now), kind_states(snap, *ATTENTION_KINDS)),
            lambda: attention(snap, now),
            stale_key=("attention", *base),
        )
        ctx["attention_html"] = memo.attention_html(ctx["attention"], now)
    if want is None or want("events"):
        warnings = memo.section(
            # The time: which folded message is current changes (volcano.events.current_member).
            ("events", *base, snap.events.version, bucket(now)),
            lambda: recent_warnings(snap, now),
            stale_key=("events", *base),
        )
        ctx["warnings"] = mark_missing(snap, warnings)
    return ctx


def _counts(snap: Snapshot) -> dict[str, Any]:
    # Counts per phase from the cache's phase indexes: O(buckets), no walk.
    return {
        "job_cards": phase_cards(
            Counter(snap.job_counts_by_phase()), phases.JOB_PHASES, badges.job_phase, KEY_JOB_PHASES
        ),
        "pg_cards": phase_cards(
            Counter(snap.podgroup_counts_by_phase()), phases.PODGROUP_PHASES, badges.podgroup_phase
        ),
        "job_total": len(snap.jobs),
        "pg_total": len(snap.podgroups),
        "queue_total": len(snap.queues),
    }


# {id(job): (job, when it entered its phase, namespace, name)} for the Pending and Failed Jobs of
# the last pass: parsing thousands of timestamps per overview recompute was its largest cost under
# churn. Objects are replaced on change, so identity means the same values; rebuilt per pass.
_SINCE: dict[int, tuple[dict, datetime | None, str, str]] = {}
_SINCE_NEXT: dict[int, tuple[dict, datetime | None, str, str]] = {}
_SINCE_MAX = 50_000
_SINCE_LOCK = threading.Lock()


def _job_since(job: dict) -> tuple[dict, datetime | None, str, str]:
    hit = _SINCE.get(id(job))
    if hit is None or hit[0] is not job:
        hit = (job, phases.job_phase_since(job) or created_at(job), objects.namespace(job), objects.name(job))
    if len(_SINCE_NEXT) < _SINCE_MAX:
        _SINCE_NEXT[id(job)] = hit
    return hit


def attention(snap: Snapshot, now: datetime, limit: int = 8) -> dict[str, Any]:
    """The overview's "needs attention" lists (``dashboard.volcano.phases`` for each phase):
    ``components`` (Volcano components not ready: volcano.scheduler.Readiness rows), ``pending``
    (longest wait first, with the first why-pending finding), ``failed`` (newest first), ``crash``
    (crash-looping pods, most restarts first), ``closed`` (Closed/Closing queues), ``below`` (gangs
    below minMember), ``stuck`` (Jobs stuck in a transitional phase, longest first), ``restarting``
    (Jobs restarting repeatedly, most restarts first, volcano.restarts), each at most ``limit``
    long, ``unknown`` (Jobs in a phase Volcano does not define), and ``<name>_total`` for each.
    Read from the Snapshot's indexed queries, not walks over every object."""
    global _SINCE, _SINCE_NEXT
    with _SINCE_LOCK:  # one pass at a time fills _SINCE_NEXT (the overview memo is single-flight too)
        _SINCE_NEXT = {}
        try:
            return _attention(snap, now, limit)
        finally:
            _SINCE, _SINCE_NEXT = _SINCE_NEXT, {}


def _attention(snap: Snapshot, now: datetime, limit: int) -> dict[str, Any]:
    pending, pending_total = _pending(snap, now, limit)
    failed = []
    for job in snap.failed_jobs():
        _job, since, ns, name = _job_since(job)
        failed.append((since or _UNDATED, ns, name, job))
    # Newest failure first; (namespace, name) keys are unique, so the comparison never reaches
    # the dicts. Only the first ``limit`` are shown: no full sort.
    newest = [(t[0] if t[0] is not _UNDATED else None, t[3]) for t in heapq.nlargest(limit, failed)]
    # The cache indexes crash-looping pods, so this is not a walk over all pods.
    crash = [pod_row(pod) for pod in snap.crashlooping_pods()]
    crash.sort(key=lambda r: (-r.restarts, r.namespace, r.name))
    closed = [q for q in snap.queues.all() if phases.queue_closed(phases.queue_state(q))]
    closed.sort(key=objects.name)
    below: list[dict[str, Any]] = []
    for pg in snap.gangs_below_min():
        gang = podgroup_gang(pg)
        # The index's own test, re-checked with the pages' code.
        if gang.short:
            below.append({"pg": pg, "gang": gang, "phase": podgroup_phase(pg)})
    below.sort(key=lambda r: (namespace_of(r["pg"]), name_of(r["pg"])))
    stuck = _stuck(snap, now)
    # From the phase index's buckets: O(phases), not a walk over the Jobs.
    unknown = [
        {"job": job, "phase": job_phase(job), "raw": ph}
        for ph in sorted(snap.job_counts_by_phase())
        if phases.job_phase_unknown(ph)
        for job in sorted(snap.jobs_in_phase(ph), key=lambda j: (namespace_of(j), name_of(j)))
    ]
    restarting = _restarting(snap, now)
    components = components_not_ready(snap)
    return {
        "components": components,
        "components_total": len(components),
        "pending": pending,
        "pending_total": pending_total,
        "failed": [{"job": j, "at": at} for at, j in newest],
        "failed_total": len(failed),
        "crash": crash[:limit],
        "crash_total": len(crash),
        "closed": [{"queue": q, "state": badges.queue_state(q)} for q in closed],
        "closed_total": len(closed),
        "below": below[:limit],
        "below_total": len(below),
        "restarting": restarting[:limit],
        "restarting_total": len(restarting),
        # What the lists cannot be checked against ("PodGroups (forbidden)"): an empty section
        # then means "nothing among what can be read", not "nothing".
        "unchecked": get_text_list(
            [f"{kind_label(k)} ({why})" for k, why in unavailable(snap, *ATTENTION_KINDS).items()], _("and")
        ),
        "stuck": stuck[:limit],
        "stuck_total": len(stuck),
        "unknown": unknown[:limit],
        "unknown_total": len(unknown),
    }


def _stuck(snap: Snapshot, now: datetime) -> list[dict[str, Any]]:
    """Jobs longer than VOLCANO_UI_STUCK_SECONDS in a transitional phase (from the phase index,
    not a walk), longest first, each with the pods that hold it."""
    limit = settings.VOLCANO_UI_STUCK_SECONDS
    rows: list[dict[str, Any]] = []
    for phase in sorted(TRANSITIONAL_JOB_PHASES):
        for job in snap.jobs_in_phase(phase):
            if vs.job_stuck(job, (), now, limit) is None:  # the pods are read only for stuck Jobs
                continue
            view = stuck_view(vs.job_stuck(job, related(snap.pods_for_job, job), now, limit), limit)
            if view is not None:
                rows.append({"job": job, "phase": job_phase(job), "stuck": view, "seconds": view.seconds})
    rows.sort(key=lambda r: (-r["seconds"], namespace_of(r["job"]), name_of(r["job"])))
    return rows


def _restarting(snap: Snapshot, now: datetime) -> list[dict[str, Any]]:
    """Jobs restarting repeatedly (volcano.restarts), most restarts first: {"job", "restarts",
    "at" (the latest restart)}. Only Jobs the cache saw restart are candidates."""
    found: list[tuple[int, str, str, dict[str, Any]]] = []
    for job, seen in snap.restarted_jobs():
        n = restarting_repeatedly(job, seen, now)
        if n is not None:
            found.append((-n, namespace_of(job), name_of(job), job))
    found.sort(key=lambda t: t[:3])
    minutes = int(RESTART_WINDOW.total_seconds() // 60)
    return [
        {"job": job, "restarts": -n, "at": last_restart(job), "minutes": minutes}
        for n, _ns, _name, job in found
    ]


def _pending(snap: Snapshot, now: datetime, limit: int) -> tuple[list[dict], int]:
    """The ``limit`` longest-waiting Pending Jobs as rows, and how many are Pending."""
    waits = []
    for job in snap.pending_jobs():
        _job, since, ns, name = _job_since(job)
        # Unclamped: a start in the future (a wrong clock) is negative and shows as "—", not "0s".
        waits.append((-((now - since).total_seconds() if since else 0.0), ns, name, job))
    rows = []
    for t in heapq.nsmallest(limit, waits):
        wait, job = -t[0], t[3]
        started = _job_since(job)[1]
        pg = snap.podgroup_for_job(job)
        qname = as_str(objects.spec(job).get("queue"))
        queue = snap.queue(qname) if qname else None
        # The same reading as the Job's page (ancestors, Inqueue reservations); the memo key of
        # this section follows the PodGroup and Queue collections, so it stays current.
        pods = related(snap.pods_for_job, job)
        findings = why_pending(snap, job, pg, queue, qname, pods, gang_room(snap, queue, pg))
        rows.append(
            {
                "job": job,
                "wait": wait,
                # What ``wait`` is measured from (the phase's start, else the Job's creation).
                "started": started,
                "finding": findings[0] if findings else None,
                "since": phases.job_phase_since(job),
            }
        )
    return rows, len(waits)


def event_sort_time(ev: dict) -> str:
    """The newest of an event's lastTimestamp / series.lastObservedTime / eventTime /
    firstTimestamp, as RFC 3339 text in UTC (which sorts as a string)."""
    series = ev.get("series")
    series_last = series.get("lastObservedTime") if isinstance(series, dict) else None
    best = ""
    for value in (ev.get("lastTimestamp"), series_last, ev.get("eventTime"), ev.get("firstTimestamp")):
        if isinstance(value, str) and value[:19] > best[:19]:
            best = value
    return best


class _Desc(str):
    """A string that sorts in reverse (for a descending tiebreak inside nlargest)."""

    __slots__ = ()

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:
        return str.__lt__(self, other)


def _warning_order(ev: dict) -> tuple:
    meta = ev.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return (event_sort_time(ev), _Desc(as_str(meta.get("namespace"))), _Desc(as_str(meta.get("name"))))


def recent_warnings(snap: Snapshot, now: datetime) -> list:
    """The newest Warning event row of at most RECENT_WARNING_OBJECTS objects, each with its
    current message at ``now`` (volcano.events.latest_per_object). The newest few hundred
    Warnings choose the objects (there may be tens of thousands); ties in time are broken by
    ascending (namespace, name). Each chosen object's row then folds all of its Warnings: one
    stamped ahead of the clock stays among the newest while the current one may have left them,
    and the row would show the skewed message alone."""
    warnings = heapq.nlargest(300, snap.warning_events(), key=_warning_order)
    refs: dict[tuple[str, str | None, str], None] = {}
    for ev in warnings:
        refs.setdefault(event_ref(ev), None)
        if len(refs) >= RECENT_WARNING_OBJECTS:
            break
    chosen = {id(ev): ev for ev in warnings}
    for ref in refs:
        for ev in snap.events.lookup("involved_ref", ref):
            if is_warning(ev):
                chosen.setdefault(id(ev), ev)
    return latest_per_object(
        event_records(chosen.values()), limit=RECENT_WARNING_OBJECTS, now=now, skew=clock_skew_seconds()
    )
