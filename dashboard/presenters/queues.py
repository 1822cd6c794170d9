"""Queues in the pages: the tree with its indent levels, and the gang's room as table rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dashboard.presenters.resources import amount_text, exact_quantity
from dashboard.volcano import queues as vq
from dashboard.volcano.objects import as_dict, as_list, as_str, spec
from dashboard.volcano.quantities import format_quantity

# Indentation classes exist for depths 0..TREE_INDENT_MAX (static/dashboard/app.css ".depth-N"; the
# CSP forbids inline styles, so an indent cannot be computed per row). Rows at or below the cap
# show their depth as a number instead, so a 60-deep chain still reads in order.
TREE_INDENT_MAX = 8


@dataclass
class TreeRow(vq.TreeNode):
    """One queue in the tree (dashboard.volcano.queues.TreeNode) with its indent."""

    @property
    def indent(self) -> int:
        """The CSS indent level, 0..TREE_INDENT_MAX."""
        return min(self.depth, TREE_INDENT_MAX)

    @property
    def deep(self) -> bool:
        """True when the indent alone cannot show the depth (the row shows it as a number)."""
        return self.depth >= TREE_INDENT_MAX

    @property
    def problem_key(self) -> tuple[str, str, tuple[str, ...]]:
        """What the row's hint depends on, for render caches."""
        return (self.problem, self.parent, self.cycle)


def queue_tree(queues: list[dict]) -> list[TreeRow]:
    """Queues in depth-first order by parent (dashboard.volcano.queues.queue_tree)."""
    return [
        TreeRow(n.queue, n.depth, n.has_children, n.parent, n.problem, n.cycle) for n in vq.queue_tree(queues)
    ]


@dataclass
class GangRoom:
    """The gang's room in its queue and the queue's ancestors, as table rows.

    ``rows``: one per resource the PodGroup needs (spec.minResources) for its own queue, then one
    per ancestor that sets a capability on it; display strings ``need``, ``allocated``,
    ``reserved``, ``deserved`` (own queue only), ``capability``, ``left`` ("?" when a value is no
    usable amount, "" without a capability), plus ``resource``, ``queue``, ``depth`` (0 own, 1
    parent, ...), ``reservers`` [(namespace, name)] of the Inqueue PodGroups holding
    ``reserved``, ``short`` (the need exceeds what is left there), ``binding`` (the row that limits
    the resource most) and ``over_deserved``. ``read``: the Queues and PodGroups the numbers come
    from beyond the queue and its ancestors, for the pages' version keys. ``room``: the domain's
    reading the rows show."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    read: list[Mapping] = field(default_factory=list)
    room: vq.Room = field(default_factory=lambda: vq.Room([], []))


def room_row(row: vq.RoomRow) -> dict[str, Any]:
    """One RoomRow as display strings (see GangRoom)."""
    res, need = row.resource, row.need
    if row.allocated_raw is not None:
        a_text = amount_text(res, row.allocated_raw)[1]
    else:
        a_text = format_quantity(res, row.allocated if row.allocated is not None else Decimal(0))
    left = row.left
    if row.unknown:
        left_text = "?"
    else:
        left_text = format_quantity(res, max(left, Decimal(0))) if left is not None else ""
    need_text = format_quantity(res, need)
    if left is not None and need > left and left_text == need_text:
        # Rounded alike although the gang needs more ("needs 512Mi, 512Mi left"): both exactly.
        need_text, left_text = exact_quantity(res, need), exact_quantity(res, max(left, Decimal(0)))
    return {
        "resource": res,
        "queue": row.queue,
        "depth": row.depth,
        "need": need_text,
        "allocated": a_text,
        "reserved": format_quantity(res, row.reserved) if row.reservers else "",
        "reservers": list(row.reservers),
        "capability": amount_text(res, row.capability_raw)[1] if row.limited else "",
        "left": left_text,
        "short": row.short,
        "binding": row.binding,
        "deserved": amount_text(res, row.deserved_raw)[1] if row.deserved_set else "",
        "over_deserved": row.over_deserved,
        "deserved_over_cap": row.deserved_over_cap,
    }


def gang_room(
    queue: Mapping | None,
    pg: Mapping | None,
    *,
    queue_lookup: vq.QueueLookup | None = None,
    queue_children: Callable[[str], Iterable[Mapping]] | None = None,
    inqueue_podgroups: Callable[[str], Iterable[Mapping]] | None = None,
) -> GangRoom:
    """What is left for the gang under the capability of its queue and of each ancestor
    (dashboard.volcano.queues.gang_room), as rows. ``queue_lookup`` finds the ancestors (none
    without it), ``queue_children(name)`` a queue's child queues, ``inqueue_podgroups(name)`` the
    Inqueue PodGroups of a queue (nothing reserved without it). A capability or allocated value
    that is no usable amount is shown verbatim as invalid, with "?" left and never ``short``."""
    room = vq.gang_room(
        queue,
        pg,
        queue_lookup=queue_lookup,
        queue_children=queue_children,
        inqueue_podgroups=inqueue_podgroups,
    )
    return GangRoom(rows=[room_row(r) for r in room.rows], read=room.read, room=room)


def queue_affinity(queue: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``spec.affinity`` as (rule, node groups) pairs, e.g. ("nodeGroupAffinity required",
    "group-a, group-b"), in the CRD's order; [] when there is none."""
    out = []
    affinity = as_dict(spec(queue).get("affinity"))
    for kind in ("nodeGroupAffinity", "nodeGroupAntiAffinity"):
        rules = as_dict(affinity.get(kind))
        for when, label in (
            ("requiredDuringSchedulingIgnoredDuringExecution", "required"),
            ("preferredDuringSchedulingIgnoredDuringExecution", "preferred"),
        ):
            groups = [as_str(g) for g in as_list(rules.get(when)) if as_str(g)]
            if groups:
                out.append((f"{kind} {label}", ", ".join(groups)))
    return out
