"""The scheduler-health card of the overview and the kiosk: the Volcano components' readiness and
the time since the scheduler last acted, with a warning when gangs wait on a silent scheduler."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.pending import unreadable_reason
from dashboard.views import memo
from dashboard.volcano import scheduler as vs
from dashboard.volcano.phases import QUEUED_PODGROUP_PHASES
from dashboard.volcano.time import latest


def health_version(snap: Snapshot) -> tuple[Any, ...]:
    """What the card reads: part of the version of the fragment that shows it."""
    return (
        snap.deployments.version,
        snap.deployments.state.name,
        snap.events.version,
        snap.podgroups.version,
    )


# The kinds the card reads: while one of them is not "synced" (the watch broken, the re-list
# failing), what it says is only as current as that kind's last known state.
HEALTH_KINDS = ("deployments", "events", "podgroups")


def health_as_of(snap: Snapshot) -> tuple[bool, datetime | None]:
    """(fresh, as of): ``fresh`` when every HEALTH_KINDS kind is "synced"; otherwise ``as of`` is
    the oldest moment those kinds were last known current (KindState.current_at; None: never)."""
    states = [getattr(snap, k).state for k in HEALTH_KINDS]
    stale = [st for st in states if st is not None and st.name != "synced"]
    if not stale:
        return True, None
    moments = [st.current_at for st in stale]
    known = [m for m in moments if m is not None]
    return False, (min(known) if len(known) == len(moments) else None)


def components_not_ready(snap: Snapshot) -> list[vs.Readiness]:
    """The Volcano components whose Deployment is not ready (volcano.scheduler.not_ready), for the
    "needs attention" lists; empty when the Deployments cannot be read or their namespace is not
    among those the user may see (the card says so)."""
    namespace = settings.VOLCANO_UI_VOLCANO_NAMESPACE
    if unreadable_reason(snap.deployments.state):
        return []
    return vs.not_ready(snap.deployments.in_namespace(namespace))


# When each cached Event was recorded by a scheduler (per tuple of scheduler names) and each
# PodGroup's newest condition transition: a walk re-derives only the objects that changed.
_EVENT_TIMES: dict[tuple[str, ...], memo.PerObject] = {}
_PODGROUP_TIMES = memo.PerObject(vs.podgroup_last_transition)


def _event_times(names: tuple[str, ...]) -> memo.PerObject:
    found = _EVENT_TIMES.get(names)
    if found is None:
        if len(_EVENT_TIMES) > 4:  # the names come from settings: more than one only in tests
            _EVENT_TIMES.clear()
        found = _EVENT_TIMES.setdefault(names, memo.PerObject(lambda ev: vs.scheduler_event_time(ev, names)))
    return found


def last_action(snap: Snapshot, base: tuple | None = None) -> datetime | None:
    """volcano.scheduler.last_scheduler_action over the snapshot's Events and PodGroups
    (VOLCANO_UI_SCHEDULER_NAMES). With ``base`` (rows.memo_base: the cache and the viewer's
    namespaces) computed once per change of each kind: many tabs poll the overview and the kiosk,
    and at 20,000 Events and 10,000 PodGroups a full reading takes hundreds of milliseconds."""
    names = tuple(settings.VOLCANO_UI_SCHEDULER_NAMES)
    if base is None:
        return vs.last_scheduler_action(snap.events.values(), snap.podgroups.values(), names)
    events = memo.section(
        ("scheduler-events", *base, names, snap.events.version),
        lambda: _event_times(names).newest(snap.events.values()),
    )
    podgroups = memo.section(
        ("scheduler-podgroups", *base, snap.podgroups.version),
        lambda: _PODGROUP_TIMES.newest(snap.podgroups.values()),
    )
    return latest(events, podgroups)


def scheduler_health_ctx(snap: Snapshot, now: datetime, base: tuple | None = None) -> dict[str, Any]:
    """``components`` (volcano.scheduler.Readiness rows), ``missing`` (known components without
    a Deployment), ``components_unreadable`` (why the Deployments cannot be read, "" when they
    can), ``last_action`` (``last_action(snap, base)``), ``waiting`` (PodGroups Pending or Inqueue,
    None when PodGroups cannot be read), ``silent`` and ``threshold`` (seconds), ``fresh`` and
    ``as_of`` (health_as_of: when not fresh the card's facts are those as of ``as_of``, not now)."""
    namespace = settings.VOLCANO_UI_VOLCANO_NAMESPACE
    why = unreadable_reason(snap.deployments.state)
    deps = snap.deployments.in_namespace(namespace) if not why else []
    hidden = snap.namespaces_filter is not None and namespace not in snap.namespaces_filter
    counts = snap.podgroup_counts_by_phase()
    pgs_readable = not unreadable_reason(snap.podgroups.state)
    waiting = sum(counts.get(p, 0) for p in QUEUED_PODGROUP_PHASES) if pgs_readable else None
    last = last_action(snap, base)
    threshold = settings.VOLCANO_UI_SCHEDULER_SILENT_SECONDS
    components = vs.components(deps)
    fresh, as_of = health_as_of(snap)
    return {
        "fresh": fresh,
        "as_of": as_of,
        "namespace": namespace,
        "components": components,
        "components_ok": bool(components) and all(c.ok for c in components),
        "missing": vs.missing_components(deps) if not why and not hidden else [],
        "components_unreadable": why,
        "components_hidden": hidden,
        "last_action": last,
        "waiting": waiting,
        "silent": vs.scheduler_silent(last, now, threshold, waiting or 0),
        "threshold": threshold,
    }
