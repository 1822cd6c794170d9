"""The scheduler-health card of the overview and the kiosk: the Volcano components' readiness and
the time since the scheduler last acted, with a warning when gangs wait on a silent scheduler."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.pending import unreadable_reason
from dashboard.volcano import scheduler as vs
from dashboard.volcano.phases import QUEUED_PODGROUP_PHASES


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


def scheduler_health_ctx(snap: Snapshot, now: datetime) -> dict[str, Any]:
    """``components`` (volcano.scheduler.Readiness rows), ``missing`` (known components without a
        Deployment), ``components_unreadable`` (why the Deployments cannot be read, "" when they can),
        ``last_action``, ``waiting`` (PodGroups Pending or Inqueue, None when PodGroups cannot be read),
        ``silent`` and ``threshold`` (seconds), ``fresh`` and ``as_of`` (health_as_of: when not fresh
    the card's facts are those as of ``as_of``, not now)."""
    namespace = settings.VOLCANO_UI_VOLCANO_NAMESPACE
    why = unreadable_reason(snap.deployments.state)
    deps = snap.deployments.in_namespace(namespace) if not why else []
    hidden = snap.namespaces_filter is not None and namespace not in snap.namespaces_filter
    counts = snap.podgroup_counts_by_phase()
    pgs_readable = not unreadable_reason(snap.podgroups.state)
    waiting = sum(counts.get(p, 0) for p in QUEUED_PODGROUP_PHASES) if pgs_readable else None
    last = vs.last_scheduler_action(
        snap.events.values(), snap.podgroups.values(), tuple(settings.VOLCANO_UI_SCHEDULER_NAMES)
    )
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
