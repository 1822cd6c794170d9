"""Queue summary rows (the Queues list, the overview, a Queue's children, the kiosk) in tree order.

A row is a dict: ``queue`` (the object), ``name``, the tree fields of ``presenters.queues.queue_tree``
(``depth``, ``indent``, ``deep``, ``tree_parent``, ``problem``, ``cycle``, ``tree_key``,
``has_children``), the derived fields (``state``, ``weight``, ``parent``, ``bars``, ``compact``,
``has_gpu``) and the PodGroup counts per phase (``counts``, ``count_list``, ``pg_total``), which
for a queue with children cover its whole subtree (``counts_incl_children``); with
``pgs_unavailable`` the reason when PodGroups cannot be read, and then no counts are shown.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from django.utils.translation import get_language

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import phases as badges
from dashboard.presenters.pending import unreadable_reason
from dashboard.presenters.queues import queue_tree
from dashboard.presenters.resources import compact_bars, queue_resource_bars
from dashboard.volcano import objects
from dashboard.volcano.objects import as_str
from dashboard.volcano.queues import declared_parent

# Per (queue name, language): (the Queue object, its derived fields). Queue objects are replaced,
# never mutated, on change, so an identical object means identical bars (parse_quantity over every
# resource is the costly part of a queue row). Bounded by the number of queues (cleared beyond).
QUEUE_FIELDS: dict[tuple[str, str], tuple[dict, dict]] = {}
QUEUE_FIELDS_MAX = 4096


def _queue_fields(q: dict, name: str) -> dict:
    # Keyed by language too: the state label of a Queue without status is translated text.
    key = (name, get_language() or "")
    hit = QUEUE_FIELDS.get(key)
    if hit is not None and hit[0] is q:
        return hit[1]
    bars = queue_resource_bars(q)
    fields = {
        "state": badges.queue_state(q),
        "weight": objects.count(objects.spec(q).get("weight")) or 1,
        "parent": declared_parent(q),
        "bars": bars,
        "compact": compact_bars(bars),
        "has_gpu": any(b.name == "nvidia.com/gpu" for b in bars),
    }
    QUEUE_FIELDS[key] = (q, fields)
    return fields


def _name(q: dict) -> object:
    meta = q.get("metadata")
    return meta.get("name") if isinstance(meta, dict) else None


# The last queue tree: (its Queues' (name, spec.parent) pairs, the tree rows). Allocations change
# the Queue objects several times a minute; the tree only when a queue is added, removed or moved.
_TREE: tuple[tuple, list] = ((), [])


def _queue_tree(queues: list[dict]) -> list:
    global _TREE
    structure = tuple((_name(q), objects.spec(q).get("parent")) for q in queues)
    last_structure, last_rows = _TREE
    if last_structure == structure and len(last_rows) == len(queues):
        by_name = {item[0]: q for item, q in zip(structure, queues, strict=True)}
        return [dataclasses.replace(r, queue=by_name[_name(r.queue)]) for r in last_rows]
    rows = queue_tree(queues)
    _TREE = (structure, rows)
    return rows


def _subtree_counts(tree: list, per_queue: dict[str, Counter]) -> dict[str, Counter]:
    """{queue: PodGroups by phase in the queue and every queue below it in ``tree`` (depth-first
    rows: a row's parent is the nearest row before it one level up)."""
    totals: dict[str, Counter] = {}
    stack: list[str] = []
    for row in tree:
        name = as_str(_name(row.queue))
        del stack[row.depth :]
        own = per_queue.get(name) or Counter()
        totals[name] = Counter(own)
        for ancestor in stack:
            totals[ancestor].update(own)
        stack.append(name)
    return totals


def queue_summaries(snap: Snapshot, queues: list[dict]) -> list[dict]:
    """Summary rows of ``queues`` in tree order. The tree (depth, and the hints for a missing
    parent or a parent cycle) is always that of every Queue in ``snap``: a subset (a queue's
    children, the kiosk's focus) must not read as orphans of parents left out of the list."""
    per_queue = snap.podgroup_counts_by_queue()
    # PodGroups that cannot be read have no counts: "unavailable", never a row of zeros.
    pgs_unavailable = unreadable_reason(snap.podgroups.state)
    everything = snap.queues.all()
    tree = _queue_tree(everything)
    subtree = _subtree_counts(tree, per_queue)
    if len(queues) != len(everything):
        wanted = {objects.name(q) for q in queues}
        tree = [r for r in tree if objects.name(r.queue) in wanted]
    rows = []
    for row in tree:
        q = row.queue
        name = as_str(_name(q))
        # A parent's PodGroups are those of its whole subtree (its own and its children's).
        counts = subtree.get(name) or Counter()
        rows.append(
            {
                "queue": q,
                "name": name,
                "depth": row.depth,
                "indent": row.indent,
                "deep": row.deep,
                "tree_parent": row.parent,
                "problem": row.problem,
                "cycle": row.cycle,
                "tree_key": row.problem_key,
                "has_children": row.has_children,
                **_queue_fields(q, name),
                "counts": counts,
                # A list, not the Counter: templates would resolve counts.items as counts["items"] == 0.
                "count_list": sorted(counts.items()),
                "pg_total": sum(counts.values()),
                "pgs_unavailable": pgs_unavailable,
                "counts_incl_children": row.has_children,
            }
        )
    if len(QUEUE_FIELDS) > QUEUE_FIELDS_MAX:  # queues come and go: start over rather than grow
        QUEUE_FIELDS.clear()
    return rows
