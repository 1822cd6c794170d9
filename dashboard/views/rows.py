"""Reads and rows the page families share: the request's snapshot, a Job's or PodGroup's table
row, phase count cards, a gang's room in its queues, event and YAML text.

Rows are plain dicts for the templates; every value comes from ``dashboard.presenters``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import yaml
from django.http import HttpRequest

from dashboard.access import visible_namespaces
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import phases as badges
from dashboard.presenters import queues as queue_presenter
from dashboard.presenters.jobs import job_gang, job_health_hint
from dashboard.presenters.pending import Finding, absent_hint, findings, unreadable_reason
from dashboard.presenters.phases import Phase
from dashboard.presenters.podgroups import owner_of, podgroup_gang
from dashboard.presenters.queues import GangRoom
from dashboard.views.memo import SizedMemo, cache_token, locale_key, row_still_valid
from dashboard.views.scheduler_health import components_not_ready
from dashboard.volcano import objects, pending, phases
from dashboard.volcano.gang import (
    job_counters,
    job_tasks,
    job_total_replicas,
    podgroup_counters,
    podgroup_min_member,
)
from dashboard.volcano.objects import as_dict, as_str, owner_references
from dashboard.volcano.pending import (
    PendingContext,
    owned_by_volcano_job,
    scheduler_says_queue_full,
    unschedulable_condition,
)
from dashboard.volcano.queues import Leftover, possible_leftovers
from dashboard.volcano.time import created_at, seconds_between


def get_cluster_cache() -> Any:
    # Imported lazily: the cache starts informers on first use in a serving process, never at import.
    from dashboard.kube import get_cluster_cache as _get

    return _get()


def snapshot(request: HttpRequest) -> Snapshot:
    """The cache restricted to the namespaces the request may see (access.visible_namespaces)."""
    return get_cluster_cache().snapshot(namespaces=visible_namespaces(request))


def memo_base(request: HttpRequest) -> tuple:
    """The part of a memo key every viewer of the same data shares: (cache token, visible
    namespaces, language, time zone)."""
    return (cache_token(get_cluster_cache()), visible_namespaces(request), *locale_key())


def related(fetch: Callable[[dict], list[dict]], obj: dict) -> list[Mapping]:
    """``fetch(obj)`` (a Snapshot cross-link such as ``pods_for_job``), [] when ``obj`` is
    malformed: one odd object must not turn a page into a 500."""
    try:
        found: list[Mapping] = list(fetch(obj))
        return found
    except Exception:  # noqa: BLE001
        return []


def events_of(snap: Snapshot, *objs: Mapping | None) -> list[dict]:
    """The events of every object in ``objs`` (None skipped), each object's newest first."""
    out: list[dict] = []
    for obj in objs:
        if obj:
            try:
                out.extend(snap.events_for(cast(dict, obj)))
            except Exception:  # noqa: BLE001
                continue
    return out


_EVENT_OBJECT_KINDS = {
    "Pod": "pods",
    "Job": "jobs",
    "PodGroup": "podgroups",
    "Queue": "queues",
    "CronJob": "cronjobs",
    "JobFlow": "jobflows",
    "JobTemplate": "jobtemplates",
    "HyperNode": "hypernodes",
}
_CLUSTER_SCOPED = frozenset({"queues", "hypernodes"})


def mark_missing(snap: Snapshot, rows: list) -> list:
    """Event rows whose involvedObject is not in the cache get ``object_missing`` (shown unlinked);
    done at render time because the objects change independently of the events."""
    out = []
    for row in rows:
        kind = _EVENT_OBJECT_KINDS.get(row.object_kind)
        if kind:
            view = getattr(snap, kind)
            obj = (
                view.get(None, row.object_name)
                if kind in _CLUSTER_SCOPED
                else view.get(row.object_namespace, row.object_name)
            )
            row = dataclasses.replace(row, object_missing=absent_hint(obj, view.state))
        out.append(row)
    return out


class _PlainDumper(yaml.SafeDumper):
    """A SafeDumper that never writes anchors and aliases (``&id001`` / ``*id001``).

    The cache stores equal sub-trees once and shares them (dashboard/kube/trim.py ``share``), so
    one object may hold the same dict twice (e.g. a container's requests and limits); PyYAML would
    print the second as an alias, which is not how kubectl or the API server shows the object.
    """

    def ignore_aliases(self, data: Any) -> bool:
        return True


# The YAML of an object per object (identity: the cache replaces an object on change): a detail
# page and its polls show the same text until the object changes, and dumping a Job costs ~5 ms.
_YAML = SizedMemo(4 * 1024 * 1024)


def yaml_text(obj: dict) -> str:
    """``obj`` (a cached, trimmed object) as YAML text without managedFields or aliases."""
    key = (id(obj),)
    hit = _YAML.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    text = _yaml_text(obj)
    _YAML.put(key, (obj, text), 2 * len(text) + 200)
    return text


def _yaml_text(obj: dict) -> str:
    clean = dict(obj)
    md = dict(as_dict(clean.get("metadata")))
    md.pop("managedFields", None)
    clean["metadata"] = md
    return yaml.dump(
        clean, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


def phase_cards(
    counter: Counter,
    order: Sequence[str],
    phase_fn: Callable[[dict], Phase],
    always: frozenset[str] | None = None,
) -> list[dict]:
    """Count cards ({"phase", "name", "count"}) in phase order, then unknown phases; phases not in
    ``always`` only when non-zero (``always`` None: every phase of ``order``)."""
    names = [ph for ph in order if always is None or ph in always or counter.get(ph)]
    names += sorted(k for k in counter if k not in order)
    return [
        {
            "phase": phase_fn({"status": {"phase": ph, "state": {"phase": ph}}}),
            "name": ph,
            "count": counter.get(ph, 0),
        }
        for ph in names
    ]


def spec_queue(obj: dict) -> str:
    """``spec.queue`` of a Job or PodGroup as text ("" when unset)."""
    spec = obj.get("spec")
    queue = spec.get("queue") if isinstance(spec, dict) else ""
    return queue if isinstance(queue, str) else as_str(queue)


def queue_missing(snap: Snapshot, name: str) -> str:
    """The hint shown beside a list row's queue name when that Queue is not in the cache ("" when
    it is, or when Queues cannot be read at all: then one notice says so, not every row)."""
    if not name or not snap.queues.state.is_usable:
        return ""
    return absent_hint(snap.queue(name), snap.queues.state)


def owner_job_missing(snap: Snapshot, owner: Mapping[str, str] | None, job: dict | None) -> str:
    """The hint shown beside a PodGroup's owner when its ownerReference names a Volcano Job the
    cache does not hold (presenters.pending.absent_hint); "" when the Job is found, when the owner
    is of another kind, or when Jobs cannot be read at all (one notice says so, not every row)."""
    if job is not None or not owner or not owner.get("volcano_job") or not snap.jobs.state.is_usable:
        return ""
    return absent_hint(None, snap.jobs.state)


# A Job's row per (namespace, name, language, time zone), reused while the Job, its PodGroup and
# its pods (each the very same cached dict) and its queue's missing note are the same: a page of
# 50 rows then re-reads only the Jobs that changed (the hints walk every pod of a Job). An entry
# holds references to cached objects plus the row dict, ~2 KB; least recently used first out.
JOB_ROWS = SizedMemo(4 * 1024 * 1024)


def job_row(snap: Snapshot, job: dict, now: datetime) -> dict:
    """A Job's row in the Jobs list and on its Queue's page (shared: never changed by a caller)."""
    pg = snap.podgroup_for_job(job)
    pods = related(snap.pods_for_job, job)
    queue = as_str(objects.spec(job).get("queue"))
    missing = queue_missing(snap, queue)
    key = (objects.namespace(job), objects.name(job), *locale_key())
    idents = (job, pg, *pods)
    hit = JOB_ROWS.get(key)
    if row_still_valid(hit, idents, (missing,)):
        assert hit is not None
        row: dict = hit[2]
        return row
    row = _job_row(job, pg, pods, queue, missing)
    JOB_ROWS.put(key, (idents, (missing,), row), 2000 + 8 * len(pods))
    return row


def _job_row(job: dict, pg: dict | None, pods: list[Mapping], queue: str, missing: str) -> dict:
    counters = job_counters(job)
    return {
        "job": job,
        "name": objects.name(job),
        "namespace": objects.namespace(job),
        "phase": badges.job_phase(job),
        "hints": job_health_hint(job, pods, pg, queue_missing=bool(missing)),
        "queue": queue,
        "queue_missing": missing,
        "gang": job_gang(job),
        # None (shown "—") while the Job controller has not reported them: unknown is not 0.
        "pending": counters["pending"],
        "running": counters["running"],
        "succeeded": counters["succeeded"],
        "failed": counters["failed"],
        "retries": counters["retryCount"],
        "tasks": len(job_tasks(job)),
        "replicas": job_total_replicas(job),
        "created": created_at(job),
        "since": phases.job_phase_since(job),
        "podgroup": pg,
    }


def pg_row(snap: Snapshot, pg: dict, now: datetime) -> dict:
    """A PodGroup's row in the PodGroups list, on its Queue's page and on its own page."""
    job = snap.job_for_podgroup(pg)
    phase = badges.podgroup_phase(pg)
    created = created_at(pg)
    return {
        "pg": pg,
        "name": objects.name(pg),
        "namespace": objects.namespace(pg),
        "phase": phase,
        "queue": (queue := as_str(objects.spec(pg).get("queue"))),
        "queue_missing": queue_missing(snap, queue),
        # None (shown "—"): minMember negative or no integer.
        "min_member": podgroup_min_member(pg),
        # None (shown "—") while the PodGroup has no status, or for a negative counter.
        **podgroup_counters(pg),
        "gang": podgroup_gang(pg),
        "job": job,
        "owner": (owner := owner_of(pg)),
        "owner_missing": owner_job_missing(snap, owner, job),
        "created": created,
        "wait": seconds_between(created, now) if phases.podgroup_queued(phases.podgroup_phase(pg)) else None,
        "unschedulable": unschedulable_condition(pg),
    }


def gang_room(snap: Snapshot, queue: dict | None, pg: dict | None) -> GangRoom:
    """The gang's room in its queue and the queue's ancestors (presenters.queues.gang_room), read
    from the snapshot: child queues by parent, Inqueue PodGroups by queue. A user limited to some
    namespaces sees only their PodGroups' reservations."""
    return queue_presenter.gang_room(
        queue,
        pg,
        queue_lookup=snap.queue,
        queue_children=snap.child_queues,
        inqueue_podgroups=snap.inqueue_podgroups,
    )


def pending_context(
    snap: Snapshot,
    job: dict | None,
    pg: dict | None,
    queue: dict | None,
    qname: str,
    pods: list[Mapping],
    owner_job: dict | None = None,
) -> PendingContext:
    """What dashboard.volcano.pending reads about a gang, with the snapshot's queue lookup and
    whether PodGroups and Queues can be read (``owner_job``: the Job owning ``pg`` on the
    PodGroup's page, where ``job`` is None)."""
    return PendingContext(
        job=job,
        podgroup=pg,
        queue=queue,
        queue_name=qname,
        pods=pods,
        owner_job=owner_job,
        queue_lookup=snap.queue,
        podgroups_unreadable=unreadable_reason(snap.podgroups.state),
        queues_unreadable=unreadable_reason(snap.queues.state),
        components_down=tuple(components_not_ready(snap)),
        nodes=snap.nodes.all() if snap.nodes.state.is_usable else None,
    )


def why_pending(
    snap: Snapshot,
    job: dict | None,
    pg: dict | None,
    queue: dict | None,
    qname: str,
    pods: list[Mapping],
    room: GangRoom,
    owner_job: dict | None = None,
) -> list[Finding]:
    """Why the gang does not run (dashboard.volcano.pending.why_pending over ``pending_context``
    and the gang's ``room``), in words. The queue's possible leftovers are read only when the
    scheduler says the queue has no room."""
    ctx = pending_context(snap, job, pg, queue, qname, pods, owner_job)
    if pg is not None and scheduler_says_queue_full(pg):
        ctx = dataclasses.replace(ctx, queue_leftovers=tuple(queue_leftovers(snap, qname)))
    return findings(pending.why_pending(ctx, room.room))


def _owner_found(snap: Snapshot, pg: dict) -> bool:
    """The PodGroup's owner is there: its Volcano Job is in the cache, or it is owned by
    something other than a Volcano Job (whose presence is not checked here)."""
    if snap.job_for_podgroup(pg) is not None:
        return True
    refs = owner_references(pg)
    return bool(refs) and not owned_by_volcano_job(pg)


def queue_leftovers(snap: Snapshot, qname: str, podgroups: list[dict] | None = None) -> list[Leftover]:
    """The possible leftovers (dashboard.volcano.queues.possible_leftovers) among the PodGroups
    whose spec.queue is ``qname`` (``podgroups``: snap.podgroups_in_queue(qname), when the caller
    holds it already)."""
    if podgroups is None:
        podgroups = snap.podgroups_in_queue(qname)
    return possible_leftovers(podgroups, snap.pods_for_podgroup, lambda g: _owner_found(snap, g))
