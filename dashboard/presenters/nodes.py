"""Nodes and HyperNodes in words and rows: state badges, allocatable against requested, fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from dashboard.presenters.phases import Phase, phase_of_table
from dashboard.presenters.resources import amount_text
from dashboard.volcano import nodes as vn
from dashboard.volcano.objects import as_dict, as_str, status
from dashboard.volcano.quantities import format_quantity

_NODE_LOOK: dict[str, tuple[str, str, bool]] = {
    "Ready": ("ok", "play", False),
    "Ready,SchedulingDisabled": ("warn", "ban", False),
    "NotReady": ("bad", "cross", False),
    "NotReady,SchedulingDisabled": ("bad", "cross", False),
    "Unknown": ("muted", "question", False),
    "Unknown,SchedulingDisabled": ("muted", "question", False),
}


def node_state_badge(state: str) -> Phase:
    """The badge of a kubectl node STATUS ("Ready,SchedulingDisabled")."""
    return phase_of_table(_NODE_LOOK, state)


def node_badge_of_card(obj: Mapping[str, Any]) -> Phase:
    """The badge for a phase card (rows.phase_cards hands a stand-in with ``status.phase``)."""
    return node_state_badge(as_str(status(obj).get("phase")))


def usage_rows(node: Mapping[str, Any], usage: Sequence[vn.Usage]) -> list[dict[str, Any]]:
    """One row per resource: allocatable (as written when unreadable), requested, free, percent."""
    raw_alloc = as_dict(status(node).get("allocatable"))
    rows = []
    for u in usage:
        _value, alloc_text = amount_text(u.resource, raw_alloc.get(u.resource))
        pct = None
        if u.allocatable is not None and u.allocatable > 0 and u.requested is not None:
            pct = int(min(Decimal(100), u.requested * 100 / u.allocatable))
        rows.append(
            {
                "resource": u.resource,
                "gpu": u.resource == vn.GPU,
                "allocatable": alloc_text,
                "requested": format_quantity(u.resource, u.requested) if u.requested is not None else "—",
                "free": format_quantity(u.resource, u.free) if u.free is not None else "—",
                "over": u.free is not None and u.free < 0,
                "pct": pct,
            }
        )
    return rows


def short_usage(usage: Sequence[vn.Usage], resource: str) -> str:
    """ "requested / allocatable" of one resource for a list cell ("—" for an unknown request),
    "—" when the node has neither."""
    for u in usage:
        if u.resource == resource:
            alloc = format_quantity(resource, u.allocatable) if u.allocatable is not None else "?"
            req = format_quantity(resource, u.requested) if u.requested is not None else "—"
            return f"{req} / {alloc}"
    return "—"


def taint_text(t: vn.Taint) -> str:
    """kubectl's form: ``key=value:Effect`` (``key:Effect`` without a value)."""
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def ready_text(node: Mapping[str, Any]) -> str:
    ready = vn.node_ready(node)
    return _("yes") if ready else _("no") if ready is False else _("unknown")
