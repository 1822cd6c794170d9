"""Node pages: the Nodes list and a Node's page (fragment ``status``: resources, taints, pods)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import nodes as pn
from dashboard.presenters.clock import reference_now
from dashboard.presenters.pods import pod_row
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.listing import ListSpec, list_page
from dashboard.views.notices import page_ctx
from dashboard.views.rows import yaml_text
from dashboard.views.sharing import shared_page
from dashboard.views.topology import topology_of
from dashboard.volcano import hypernodes as vh
from dashboard.volcano import nodes as vn
from dashboard.volcano import objects
from dashboard.volcano.gang import pod_template_requests
from dashboard.volcano.quantities import format_quantity, resource_sort_key
from dashboard.volcano.time import created_at

LIST_KINDS = ("nodes", "pods")
DETAIL_KINDS = ("nodes", "pods", "hypernodes")


def _created(o: dict) -> str:
    value = objects.meta(o).get("creationTimestamp")
    return value if isinstance(value, str) else ""


# A node's row per (node name, language): valid while the Node and the pods on it are the same
# objects (the cache replaces an object on change). Under churn few nodes' pods change between
# two polls, and summing the requests of ~75 pods per node was most of the list's time.
_ROWS: OrderedDict[tuple[str, str], tuple[dict, tuple[dict, ...] | None, dict[str, Any]]] = OrderedDict()
_ROWS_MAX = 4096
_ROWS_LOCK = threading.Lock()


def pods_countable(snap: Snapshot) -> bool:
    """Whether the pods ``snap`` holds are all the watched pods, as what nodes have requested and
    free needs: not while the pods cannot be read (forbidden, not installed, never listed), nor for
    a viewer limited to some namespaces (the other namespaces' pods are not in the view). Then it
    is unknown, not what the visible pods alone request."""
    return snap.pods.state.is_usable and snap.namespaces_filter is None


def node_pods(snap: Snapshot, name: str) -> list[dict] | None:
    """The pods bound to node ``name`` for what the node has requested and free, or None when
    that is unknown (``pods_countable``)."""
    return snap.pods_on_node(name) if pods_countable(snap) else None


def _row(snap: Snapshot, node: dict, now: datetime) -> dict[str, Any]:
    name = objects.name(node)
    listed = node_pods(snap, name)
    pods = None if listed is None else tuple(listed)
    key = (name, get_language() or "")
    hit = _ROWS.get(key)
    if hit is not None and hit[0] is node and _same_pods(hit[1], pods):
        return hit[2]
    row = _node_row(node, pods)
    with _ROWS_LOCK:
        _ROWS[key] = (node, pods, row)
        _ROWS.move_to_end(key)
        while len(_ROWS) > _ROWS_MAX:
            _ROWS.popitem(last=False)
    return row


def _same_pods(a: tuple[dict, ...] | None, b: tuple[dict, ...] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _node_row(node: dict, pods: tuple[dict, ...] | None) -> dict[str, Any]:
    name = objects.name(node)
    usage = vn.node_usage(node, pods)
    return {
        "name": name,
        "state": pn.node_state_badge(vn.node_state(node)),
        "cordoned": vn.node_cordoned(node),
        "taints": [pn.taint_text(t) for t in vn.node_taints(node)],
        "pods": None if pods is None else sum(1 for p in pods if vn.pod_holds_resources(p)),
        "cpu": pn.short_usage(usage, "cpu"),
        "memory": pn.short_usage(usage, "memory"),
        "gpu": pn.short_usage(usage, vn.GPU),
        "created": created_at(node),
    }


def _free_sort(resource: str) -> Callable[[Snapshot], Callable[[dict], tuple[int, Decimal]]]:
    """The sort by what of ``resource`` a node has free (``vn.free_amount`` over the pods bound to
    it): an unknown amount below every known one, negative ones included."""

    def of_snapshot(snap: Snapshot) -> Callable[[dict], tuple[int, Decimal]]:
        def key(node: dict) -> tuple[int, Decimal]:
            free = vn.free_amount(vn.node_usage(node, node_pods(snap, objects.name(node))), resource)
            return (0, Decimal(0)) if free is None else (1, free)

        return key

    return of_snapshot


NODE_LIST = ListSpec(
    kind="nodes",
    nav="nodes",
    template="dashboard/nodes.html",
    kinds=LIST_KINDS,
    depends=("nodes", "pods"),
    in_queue=lambda snap, queue: [],
    sorts={
        "name": objects.name,
        "phase": vn.node_state,
        "age": _created,
    },
    snap_sorts={
        "free_cpu": _free_sort("cpu"),
        "free_memory": _free_sort("memory"),
        "free_gpu": _free_sort(vn.GPU),
    },
    known_phases=frozenset(vn.NODE_STATES),
    phase_order=vn.NODE_STATES,
    phase_name=vn.node_state,
    phase=pn.node_badge_of_card,
    queue_of=lambda node: "",
    row=_row,
)


@require_safe
@shared_page
def nodes(request: HttpRequest) -> HttpResponse:
    return list_page(request, NODE_LIST)


def node_hypernodes(snap: Snapshot, node_name: str) -> list[dict[str, Any]]:
    """The HyperNodes whose subtree holds the node, lowest tier first."""
    topo = topology_of(snap)
    found = [topo.hypernodes[h] for h in topo.above_node(node_name)]
    return sorted(found, key=lambda h: (vh.tier(h) if vh.tier(h) is not None else 1 << 30, objects.name(h)))


@require_safe
def node_detail(request: HttpRequest, name: str) -> HttpResponse:
    found = find_object(request, "nodes", _("Node"), None, name)
    if isinstance(found, HttpResponse):
        return found
    snap, node = found
    now = reference_now(snap)
    pods = snap.pods_on_node(name)
    states = kind_states(snap, *DETAIL_KINDS)
    frags = Fragments(
        request,
        snap,
        now,
        DETAIL_KINDS,
        status=lambda: version_key(
            resource_versions([node, *pods]), states, snap.hypernodes.version, bucket(now)
        ),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "nodes")
    ctx.update({"node": node, "name": name})
    if frags.want("status"):
        usage = vn.node_usage(node, pods if pods_countable(snap) else None)
        ctx.update(
            {
                "state": pn.node_state_badge(vn.node_state(node)),
                "ready": pn.ready_text(node),
                "cordoned": vn.node_cordoned(node),
                "usage": pn.usage_rows(node, usage),
                "taints": [pn.taint_text(t) for t in vn.node_taints(node)],
                "conditions": _conditions(node),
                "pods": [pod_row(p) for p in pods],
                "hypernodes": node_hypernodes(snap, name),
                "pods_blocked": snap.pods.state.name in ("forbidden", "not_installed"),
                "created": created_at(node),
            }
        )
    if frags.asked is None:
        ctx["labels"] = sorted(objects.labels(node).items())
        ctx["yaml"] = yaml_text(node)
    return frags.respond("dashboard/node_detail.html", ctx)


def _conditions(node: dict) -> list[dict[str, str]]:
    out = []
    for c in objects.as_list(objects.status(node).get("conditions")):
        c = objects.as_dict(c)
        out.append(
            {
                "type": objects.as_str(c.get("type")),
                "status": objects.as_str(c.get("status")),
                "reason": objects.as_str(c.get("reason")),
                "message": objects.as_str(c.get("message")),
            }
        )
    return sorted(out, key=lambda c: (c["type"] != "Ready", c["type"]))


# Nodes named per task as able to take one of its pods before "and N more".
FITTING_SHOWN = 10


def node_fit_ctx(snap: Snapshot, job: dict, message: str) -> dict[str, Any] | None:
    """The Job page's "what would fit": the node-fit reasons of the scheduler's ``message`` (each
    linked to the nodes list), the largest free slot per resource over the nodes the Job's pods may
    use (``slot_groups``: one per set of tolerations, naming its tasks when there are several), and
    per task the nodes that could take one of its pods. None when the nodes cannot be read and the
    message has no node-fit part."""
    parsed = vn.node_fit_reasons(message) if message else None
    readable = snap.nodes.state.is_usable
    if parsed is None and not readable:
        return None
    out: dict[str, Any] = {
        "readable": readable,
        "pods_readable": pods_countable(snap),
        "total": None,
        "reasons": [],
        "slot_groups": [],
        "tasks": [],
    }
    if parsed is not None:
        out["total"], reasons = parsed
        out["reasons"] = [{"count": r.count, "reason": r.reason, "resource": r.resource} for r in reasons]
    if not readable or not out["pods_readable"]:
        return out
    pairs = [(n, vn.node_usage(n, snap.pods_on_node(objects.name(n)))) for n in snap.nodes.all()]
    # The largest free slots per set of tolerations and nodeSelector: a pod may use only the nodes
    # it tolerates and its selector matches.
    groups: dict[str, dict[str, Any]] = {}
    for task in objects.as_list(objects.spec(job).get("tasks")):
        template = objects.as_dict(objects.as_dict(task).get("template"))
        request = pod_template_requests(template)
        tolerations = vn.pod_tolerations(template)
        selector = vn.pod_node_selector(template)
        group = groups.setdefault(
            repr((tolerations, selector)), {"tolerations": tolerations, "selector": selector, "tasks": []}
        )
        group["tasks"].append(objects.as_str(objects.as_dict(task).get("name")))
        fitting = vn.nodes_fitting(request, tolerations, selector, pairs)
        out["tasks"].append(
            {
                "name": objects.as_str(objects.as_dict(task).get("name")),
                "request": [
                    (res, format_quantity(res, v))
                    for res, v in sorted(request.items(), key=lambda kv: resource_sort_key(kv[0]))
                ],
                "fitting": fitting[:FITTING_SHOWN],
                "fitting_total": len(fitting),
            }
        )
    if not groups:
        groups[""] = {"tolerations": [], "selector": {}, "tasks": []}
    out["slot_groups"] = [
        {
            "tasks": g["tasks"] if len(groups) > 1 else [],
            "slots": [
                {"resource": s.resource, "free": format_quantity(s.resource, s.free), "node": s.node}
                for s in vn.largest_free(pairs, g["tolerations"], g["selector"])
            ],
        }
        for g in groups.values()
    ]
    out["nodes_total"] = len(pairs)
    return out
