"""HyperNode pages: the topology tree (fragment ``tree``) and a HyperNode's page (``status``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.access import visible_namespaces
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters import nodes as pn
from dashboard.presenters import phases as badges
from dashboard.presenters.clock import reference_now
from dashboard.presenters.pods import pod_row
from dashboard.presenters.versions import version_key
from dashboard.views import memo
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.notices import blocked, page_ctx
from dashboard.views.rows import get_cluster_cache, snapshot, yaml_text
from dashboard.views.sharing import shared_page
from dashboard.volcano import hypernodes as vh
from dashboard.volcano import nodes as vn
from dashboard.volcano import objects
from dashboard.volcano.pending import unschedulable_condition

KINDS = ("hypernodes", "nodes", "podgroups", "jobs", "pods")
# Node names shown per HyperNode in the tree before "and N more".
NODES_SHOWN = 12


# The last topology built: (cache token, HyperNodes version, Nodes version) -> Topology. Both kinds
# are cluster-scoped, so every viewer shares it; it is rebuilt when either kind changes.
_TOPOLOGY: dict[tuple[int, int, int], vh.Topology] = {}
# Running gangs named per HyperNode in the tree before "and N more".
GANGS_SHOWN = 10
# Pods listed on a HyperNode's page (a spine can hold tens of thousands).
PODS_SHOWN = 200
# Nodes and running gangs listed on a HyperNode's page (a spine can hold thousands of each).
NODE_ROWS_SHOWN = 200
DETAIL_GANGS_SHOWN = 100


def topology_of(snap: Snapshot) -> vh.Topology:
    """The HyperNode tree of ``snap``, reused while HyperNodes and Nodes are unchanged."""
    key = (memo.cache_token(get_cluster_cache()), snap.hypernodes.version, snap.nodes.version)
    topo = _TOPOLOGY.get(key)
    if topo is None:
        topo = vh.build_topology(snap.hypernodes.all(), snap.nodes.all())
        _TOPOLOGY.clear()
        _TOPOLOGY[key] = topo
    return topo


def _versions(snap: Snapshot) -> tuple[int, ...]:
    return tuple(getattr(snap, k).version for k in KINDS)


def gang_placements(
    request: HttpRequest, snap: Snapshot, topo: vh.Topology
) -> dict[str, list[tuple[dict[str, Any], int, int]]]:
    """{HyperNode: the running gangs whose pods all sit in its subtree and in no smaller one, by
    namespace/name}: each (PodGroup, pods holding resources, nodes they sit on).

    Shared by every viewer of the same namespaces while Pods, PodGroups, HyperNodes and Nodes are
    unchanged (placing every running gang reads where all their pods sit); under churn a result computed
    meanwhile may be reused for a bounded time (``memo.section``'s ``stale_key``)."""
    base = (memo.cache_token(get_cluster_cache()), visible_namespaces(request))
    versions = (snap.pods.version, snap.podgroups.version, snap.hypernodes.version, snap.nodes.version)
    return memo.section(
        ("gang_placements", *base, *versions),
        lambda: place_gangs(snap, topo),
        stale_key=("gang_placements", *base),
    )


def place_gangs(snap: Snapshot, topo: vh.Topology) -> dict[str, list[tuple[dict[str, Any], int, int]]]:
    """``gang_placements`` computed from the pods-per-(PodGroup, node) counts of the cache's index."""
    on_nodes = snap.gang_pods_by_node()
    found: dict[str, list[tuple[tuple[str, str], dict[str, Any], int, int]]] = {}
    for pg in snap.podgroups.lookup("phase", "Running"):
        key = (objects.namespace(pg), objects.name(pg))
        on = on_nodes.get(key)
        if on and (where := topo.smallest_containing(on)) is not None:
            found.setdefault(where, []).append((key, pg, sum(on.values()), len(on)))
    out: dict[str, list[tuple[dict[str, Any], int, int]]] = {}
    for where, gangs in found.items():
        gangs.sort(key=lambda g: g[0])
        out[where] = [(pg, n, m) for _, pg, n, m in gangs]
    return out


def gang_rows(snap: Snapshot, gangs: list[tuple[dict[str, Any], int, int]]) -> list[dict[str, Any]]:
    """The shown gangs with their Job: each {"pg", "job", "pods", "nodes"}."""
    return [{"pg": pg, "job": snap.job_for_podgroup(pg), "pods": n, "nodes": m} for pg, n, m in gangs]


def topology_constraint(job: dict[str, Any]) -> vh.NetworkTopology | None:
    """The Job's networkTopology, else the first task partitionPolicy's."""
    nt = vh.network_topology(objects.spec(job))
    if nt is not None:
        return nt
    for task in objects.as_list(objects.spec(job).get("tasks")):
        nt = vh.network_topology(objects.as_dict(objects.as_dict(task).get("partitionPolicy")))
        if nt is not None:
            return nt
    return None


def held_by_topology(snap: Snapshot) -> list[dict[str, Any]]:
    """Pending Jobs with a hard network-topology constraint, with the scheduler's current
    Unschedulable message (None when it has not given one)."""
    out = []
    for job in snap.pending_jobs():
        nt = topology_constraint(job)
        if nt is None or not nt.hard:
            continue
        pg = snap.podgroup_for_job(job)
        cond = unschedulable_condition(pg) if pg is not None else None
        out.append(
            {
                "job": job,
                "nt": nt,
                "message": objects.as_str(cond.get("message")) if cond else "",
                "phase": badges.job_phase(job),
            }
        )
    out.sort(key=lambda r: (objects.namespace(r["job"]), objects.name(r["job"])))
    return out


def _tree_rows(
    snap: Snapshot, topo: vh.Topology, placed: dict[str, list[tuple[dict[str, Any], int, int]]]
) -> list[dict[str, Any]]:
    """The rows of ``topo.tree()``: a full row (nodes, gangs) where a HyperNode's subtree is drawn,
    a one-line row elsewhere (``cycle``, or ``shared`` with ``shown_under``), each with ``depth``."""
    rows: list[dict[str, Any]] = []
    for line in topo.tree():
        name, depth = line.name, min(line.depth, 8)
        if line.repeat:
            shared = line.repeat == "elsewhere"
            rows.append(
                {
                    "name": name,
                    "depth": depth,
                    "cycle": not shared,
                    "shared": shared,
                    "shown_under": line.under if shared else "",
                }
            )
            continue
        hn = topo.hypernodes[name]
        direct = topo.direct_nodes.get(name, [])
        gangs = placed.get(name, [])
        rows.append(
            {
                "name": name,
                "hn": hn,
                "depth": depth,
                "tier": vh.tier(hn),
                "tier_name": vh.tier_name(hn),
                "reported": vh.reported_node_count(hn),
                "resolved": len(topo.nodes_under(name)),
                "nodes": direct[:NODES_SHOWN],
                "more_nodes": max(0, len(direct) - NODES_SHOWN),
                "members": vh.members(hn),
                "missing": topo.missing.get(name, []),
                "gangs": gang_rows(snap, gangs[:GANGS_SHOWN]),
                "more_gangs": max(0, len(gangs) - GANGS_SHOWN),
                "cycle": False,
                "shared": False,
            }
        )
    return rows


@require_safe
@shared_page
def hypernodes(request: HttpRequest) -> HttpResponse:
    snap = snapshot(request)
    now = reference_now(snap)
    states = kind_states(snap, *KINDS)
    frags = Fragments(
        request, snap, now, KINDS, tree=lambda: version_key(_versions(snap), states, bucket(now))
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, KINDS, "hypernodes")
    if frags.want("tree"):
        topo = topology_of(snap)
        placed = gang_placements(request, snap, topo)
        rows = _tree_rows(snap, topo, placed)
        # A node under some HyperNode is a direct member of one.
        in_tree: set[str] = set().union(*topo.direct_nodes.values())
        ctx.update(
            {
                "blocked": blocked(ctx["notices"], "hypernodes"),
                "rows": rows,
                "rows_html": memo.hypernode_rows_html(rows),
                "total": len(topo.hypernodes),
                "tiers": sorted(
                    Counter(vh.tier(h) for h in topo.hypernodes.values() if vh.tier(h) is not None).items()
                ),
                "outside": sorted(
                    objects.name(n) for n in snap.nodes.values() if objects.name(n) not in in_tree
                ),
                "held": held_by_topology(snap),
            }
        )
    return frags.respond("dashboard/hypernodes.html", ctx)


@require_safe
def hypernode_detail(request: HttpRequest, name: str) -> HttpResponse:
    found = find_object(request, "hypernodes", _("HyperNode"), None, name)
    if isinstance(found, HttpResponse):
        return found
    snap, hn = found
    now = reference_now(snap)
    states = kind_states(snap, *KINDS)
    frags = Fragments(
        request, snap, now, KINDS, status=lambda: version_key(_versions(snap), states, bucket(now))
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, KINDS, "hypernodes")
    ctx.update({"hn": hn, "name": name})
    if frags.want("status"):
        ctx.update(_detail_ctx(request, snap, hn, name))
    if frags.asked is None:
        ctx["labels"] = sorted(objects.labels(hn).items())
        ctx["yaml"] = yaml_text(hn)
    return frags.respond("dashboard/hypernode_detail.html", ctx)


def _detail_ctx(request: HttpRequest, snap: Snapshot, hn: dict[str, Any], name: str) -> dict[str, Any]:
    topo = topology_of(snap)
    under = sorted(topo.nodes_under(name))
    counts = snap.holding_pod_counts_by_node()
    node_rows = []
    pods: list[dict[str, Any]] = []
    for node_name in under[:NODE_ROWS_SHOWN]:
        node = snap.nodes.get(None, node_name)
        n = counts.get(node_name, 0)
        if n and len(pods) < PODS_SHOWN:
            pods.extend(snap.holding_pods_on_node(node_name)[: PODS_SHOWN - len(pods)])
        node_rows.append(
            {
                "name": node_name,
                "state": pn.node_state_badge(vn.node_state(node)) if node else None,
                "pods": n,
            }
        )
    for node_name in under[NODE_ROWS_SHOWN:]:
        if len(pods) >= PODS_SHOWN:
            break
        if counts.get(node_name):
            pods.extend(snap.holding_pods_on_node(node_name)[: PODS_SHOWN - len(pods)])
    gangs = gang_placements(request, snap, topo).get(name, [])
    return {
        "tier": vh.tier(hn),
        "tier_name": vh.tier_name(hn),
        "reported": vh.reported_node_count(hn),
        "resolved": len(under),
        "members": vh.members(hn),
        "missing": topo.missing.get(name, []),
        "cycle": topo.cycle_of(name),
        "parents": sorted(topo.parents.get(name, [])),
        "children": topo.children.get(name, []),
        "node_rows": node_rows,
        "nodes_total": len(under),
        "pods": [pod_row(p) for p in pods],
        "pods_total": sum(counts.get(n, 0) for n in under),
        "show_node": True,
        "pods_blocked": snap.pods.state.name in ("forbidden", "not_installed"),
        "gangs": gang_rows(snap, gangs[:DETAIL_GANGS_SHOWN]),
        "more_gangs": max(0, len(gangs) - DETAIL_GANGS_SHOWN),
        "conditions": [objects.as_dict(c) for c in objects.as_list(objects.status(hn).get("conditions"))],
    }
