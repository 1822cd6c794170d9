"""PodGroups in the pages: gang bar, conditions, owner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.presenters.jobs import Gang, gang_bar
from dashboard.volcano import gang as vg
from dashboard.volcano.objects import as_str, controller_owner
from dashboard.volcano.states import condition_history, current_condition


def podgroup_gang(pg: Mapping) -> Gang:
    return gang_bar(vg.podgroup_gang(pg))


def podgroup_conditions(pg: Mapping) -> list[dict[str, Any]]:
    """The PodGroup's conditions, the current one (``states.current_condition``: the newest True)
    first with ``current`` set, then the history newest first."""
    current = current_condition(pg)
    rows = [current] if current is not None else []
    rows += condition_history(pg)
    return [
        {
            "type": c.type,
            "status": c.status,
            "reason": c.reason,
            "message": c.message,
            "at": c.at,
            "current": i == 0 and current is not None,
        }
        for i, c in enumerate(rows)
    ]


# Kinds that would read as a Volcano kind when written bare.
_VOLCANO_KIND_NAMES = ("Job", "PodGroup", "Queue", "Command")


def owner_of(obj: Mapping) -> dict[str, str] | None:
    """The controller ownerReference (or the first one) as {kind, name, apiVersion, kind_label,
    volcano_job} (``volcano_job`` "1" when it names a Volcano Job (batch.volcano.sh), else "").

    ``kind_label`` is the kind, qualified by its apiVersion when the bare kind would read as a
    Volcano one: "Job (batch/v1)" owns the PodGroup of a Kubernetes Job scheduled by Volcano."""
    ref = controller_owner(obj)
    if ref is None:
        return None
    kind, api_version = as_str(ref.get("kind")), as_str(ref.get("apiVersion"))
    volcano = api_version.startswith(("batch.volcano.sh/", "scheduling.volcano.sh/"))
    qualify = kind in _VOLCANO_KIND_NAMES and api_version and not volcano
    return {
        "kind": kind,
        "name": as_str(ref.get("name")),
        "apiVersion": api_version,
        "kind_label": f"{kind} ({api_version})" if qualify else kind,
        "volcano_job": "1" if kind == "Job" and api_version.startswith("batch.volcano.sh/") else "",
    }
