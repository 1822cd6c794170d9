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


def scheduler_health_ctx(snap: Snapshot, now: datetime) -> dict[str, Any]:
    """``components`` (volcano.scheduler.Readiness rows), ``missing`` (known components without a
    Deployment), ``components_unreadable`` (why the Deployments cannot be read, "" when they can),
    ``last_action``, ``waiting`` (PodGroups Pending or Inqueue, None when PodGroups cannot be read),
    ``silent`` and ``threshold`` (seconds)."""
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
    return {
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
