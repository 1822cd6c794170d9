"""Nodes: readiness, cordon, taints, allocatable against what bound pods request, and what fits.

A node's ``status.allocatable`` is what the scheduler may hand out; a bound pod that has not
finished holds its effective requests (``gang.pod_template_requests``: containers summed, init
containers as a floor) until it ends. Sources: the Kubernetes Node API (``spec.unschedulable``,
``spec.taints``, ``status.conditions[type=Ready]``) and the kube-scheduler's NodeResourcesFit and
TaintToleration filters, whose reasons ("Insufficient cpu") Volcano's predicates repeat.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dashboard.volcano.gang import pod_template_requests
from dashboard.volcano.objects import as_dict, as_list, as_str, labels, name, spec, status
from dashboard.volcano.quantities import resource_amount, resource_sort_key

GPU = "nvidia.com/gpu"
# kubectl's STATUS column: the Ready condition, then ",SchedulingDisabled" for a cordoned node.
NODE_STATES = (
    "Ready",
    "Ready,SchedulingDisabled",
    "NotReady",
    "NotReady,SchedulingDisabled",
    "Unknown",
    "Unknown,SchedulingDisabled",
)
_ENDED_POD_PHASES = frozenset({"Succeeded", "Failed"})
# Taint effects that keep a pod without a matching toleration off a node (NoExecute also evicts).
_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def node_ready(node: object) -> bool | None:
    """The Ready condition: True, False, or None when absent or "Unknown" (the node controller
    writes Unknown when the kubelet stops reporting)."""
    for cond in as_list(status(node).get("conditions")):
        c = as_dict(cond)
        if c.get("type") == "Ready":
            value = c.get("status")
            return True if value == "True" else False if value == "False" else None
    return None


def node_cordoned(node: object) -> bool:
    """``spec.unschedulable`` (``kubectl cordon``): no new pod is placed on the node."""
    return spec(node).get("unschedulable") is True


def node_state(node: object) -> str:
    """kubectl's STATUS of a node: "Ready", "NotReady" or "Unknown", plus ",SchedulingDisabled"."""
    ready = node_ready(node)
    state = "Ready" if ready else "NotReady" if ready is False else "Unknown"
    return f"{state},SchedulingDisabled" if node_cordoned(node) else state


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


def node_taints(node: object) -> list[Taint]:
    return [
        Taint(as_str(t.get("key")), as_str(t.get("value")), as_str(t.get("effect")))
        for t in (as_dict(x) for x in as_list(spec(node).get("taints")))
        if t
    ]


def tolerates(tolerations: Sequence[object], taint: Taint) -> bool:
    """Whether one of ``tolerations`` (a pod spec's) tolerates ``taint``: the Kubernetes rule (an
    empty key with operator Exists tolerates every taint; an empty effect matches every effect; the
    operator defaults to Equal, which compares the values; any other operator tolerates nothing)."""
    for raw in tolerations:
        t = as_dict(raw)
        effect, key = as_str(t.get("effect")), as_str(t.get("key"))
        if (effect and effect != taint.effect) or (key and key != taint.key):
            continue
        operator = as_str(t.get("operator")) or "Equal"
        if operator == "Exists" or (operator == "Equal" and as_str(t.get("value")) == taint.value):
            return True
    return False


def allocatable_reported(node: object) -> bool:
    """Whether ``node`` reports ``status.allocatable`` at all. One that does not (a kubelet that
    has not reported yet) is of unknown size, not of size 0."""
    return isinstance(status(node).get("allocatable"), dict)


def node_allocatable(node: object) -> dict[str, Decimal | None]:
    """``status.allocatable`` per resource; None for a value that is no amount (shown as written)."""
    return {as_str(k): resource_amount(v) for k, v in as_dict(status(node).get("allocatable")).items()}


def pod_holds_resources(pod: object) -> bool:
    """A bound pod that has not ended: its requests count against its node."""
    return (
        bool(as_str(spec(pod).get("nodeName"))) and as_str(status(pod).get("phase")) not in _ENDED_POD_PHASES
    )


def requested(pods: Iterable[object]) -> dict[str, Decimal]:
    """The summed effective requests of the pods that hold resources, per resource."""
    total: dict[str, Decimal] = {}
    for pod in pods:
        if pod_holds_resources(pod):
            for res, value in pod_template_requests(pod).items():
                total[res] = total.get(res, Decimal(0)) + value
    return total


@dataclass(frozen=True)
class Usage:
    """One resource of a node: ``allocatable`` (None: absent or unreadable), ``requested`` by the
    counted pods (None when the pods cannot be read), ``free`` (None when either is unknown; may be
    negative when the counted pods request more than is allocatable)."""

    resource: str
    allocatable: Decimal | None
    allocatable_known: bool
    requested: Decimal | None
    free: Decimal | None


def node_usage(node: object, pods: Iterable[object] | None) -> list[Usage]:
    """Allocatable against requested per resource (cpu, memory, GPUs, then by name); "pods" is
    counted as one per pod. Resources requested but not allocatable on the node are listed too
    (allocatable unknown). ``pods`` None: the pods cannot be read, so what is requested and free
    is unknown (never 0)."""
    alloc = node_allocatable(node)
    if pods is None:
        return [
            Usage(res, alloc[res], alloc[res] is not None, None, None)
            for res in sorted(alloc, key=resource_sort_key)
        ]
    pods = list(pods)
    req = requested(pods)
    req["pods"] = Decimal(sum(1 for p in pods if pod_holds_resources(p)))
    out = []
    for res in sorted({*alloc, *req}, key=resource_sort_key):
        a = alloc.get(res)
        r = req.get(res, Decimal(0))
        out.append(Usage(res, a, res in alloc and a is not None, r, None if a is None else a - r))
    return out


def free_of(usage: Sequence[Usage]) -> dict[str, Decimal | None]:
    return {u.resource: u.free for u in usage}


def free_amount(usage: Sequence[Usage], resource: str) -> Decimal | None:
    """What of ``resource`` a node has free (``node_usage``): 0 when it neither offers nor is
    asked for any, None when its allocatable or what its pods request is unknown."""
    for u in usage:
        if u.resource == resource:
            return u.free
    if any(u.requested is None for u in usage):
        return None
    return Decimal(0)


def schedulable(node: object) -> bool:
    """Ready and not cordoned: the scheduler may place a new pod there."""
    return node_ready(node) is True and not node_cordoned(node)


def fits(request: Mapping[str, Decimal], free: Mapping[str, Decimal | None]) -> bool | None:
    """Whether ``request`` fits into ``free``: False when a resource is short (a resource the node
    does not offer has 0 free), None when a needed free amount is unknown, else True."""
    unknown = False
    for res, amount in request.items():
        if amount <= 0:
            continue
        if res not in free:
            return False
        have = free[res]
        if have is None:
            unknown = True
        elif have < amount:
            return False
    return None if unknown else True


def taints_allow(node: object, tolerations: Sequence[object]) -> bool:
    return all(tolerates(tolerations, t) for t in node_taints(node) if t.effect in _BLOCKING_EFFECTS)


@dataclass(frozen=True)
class Slot:
    """The largest free amount of ``resource`` on one schedulable node (``node``)."""

    resource: str
    free: Decimal
    node: str


def selector_matches(node: object, selector: Mapping[str, str]) -> bool:
    """Whether ``node``'s labels carry every key=value of a pod's ``spec.nodeSelector`` (the
    kube-scheduler's NodeAffinity filter; an empty selector matches every node)."""
    have = labels(node)
    return all(key in have and have[key] == value for key, value in selector.items())


def usable(node: object, tolerations: Sequence[object], selector: Mapping[str, str]) -> bool:
    """A pod with ``tolerations`` and nodeSelector ``selector`` may be placed on ``node`` now:
    Ready, not cordoned, its labels matching ``selector`` and every NoSchedule/NoExecute taint
    tolerated (node affinity is not judged)."""
    return schedulable(node) and selector_matches(node, selector) and taints_allow(node, tolerations)


def largest_free(
    nodes: Iterable[tuple[object, Sequence[Usage]]],
    tolerations: Sequence[object],
    selector: Mapping[str, str],
) -> list[Slot]:
    """Per resource, the largest free amount on one node a pod with ``tolerations`` and
    nodeSelector ``selector`` may use (``usable``), in resource order."""
    best: dict[str, Slot] = {}
    for node, usage in nodes:
        if not usable(node, tolerations, selector):
            continue
        for u in usage:
            if u.free is not None and (u.resource not in best or u.free > best[u.resource].free):
                best[u.resource] = Slot(u.resource, u.free, name(node))
    return [best[r] for r in sorted(best, key=resource_sort_key)]


def nodes_fitting(
    request: Mapping[str, Decimal],
    tolerations: Sequence[object],
    selector: Mapping[str, str],
    nodes: Iterable[tuple[object, Sequence[Usage]]],
) -> list[str]:
    """Names of the schedulable nodes whose free resources take one pod requesting ``request``,
    whose labels match its nodeSelector ``selector`` and whose blocking taints ``tolerations``
    tolerate (node affinity and ports are not judged)."""
    request = {**request, "pods": Decimal(1)}
    return sorted(
        name(node)
        for node, usage in nodes
        if usable(node, tolerations, selector) and fits(request, free_of(usage)) is True
    )


def cluster_allocatable(nodes: Iterable[object]) -> dict[str, Decimal | None]:
    """Per resource, ``status.allocatable`` summed over ``nodes`` (every node, whatever its state:
    the most the cluster could ever hand out); None when a node's value is no amount."""
    total: dict[str, Decimal | None] = {}
    for node in nodes:
        for res, amount in node_allocatable(node).items():
            have = total.get(res, Decimal(0))
            total[res] = None if amount is None or have is None else have + amount
    return total


@dataclass(frozen=True)
class NodeBar:
    """Why ``nodes`` nodes (``example`` one of them) can never take a pod: ``kind`` "too_small"
    (``short``: (resource, the largest allocatable among them, the pod's request)), "selector"
    (labels not matching the pod's nodeSelector), "taint" (``taint``, not tolerated) or "cordoned"."""

    kind: str
    nodes: int
    example: str
    short: tuple[tuple[str, Decimal, Decimal], ...] = ()
    taint: Taint | None = None


def _bar_of(
    node: object, request: Mapping[str, Decimal], tolerations: Sequence[object], selector: Mapping[str, str]
) -> tuple[Any, ...]:
    """The reason ``node`` can never take the pod as a grouping key; () when it could (or may:
    an allocatable that is no amount or not reported at all, or a node that is only not Ready).
    A node the pod's nodeSelector excludes counts as that first: the pod's own choice, whatever
    else it lacks."""
    if not selector_matches(node, selector):
        return ("selector",)
    # No allocatable reported at all (a kubelet that has not reported yet): the node's size is
    # unknown, not 0, so it is never too small; its taints and cordon still count.
    reported = allocatable_reported(node)
    alloc = node_allocatable(node)
    short = []
    for res, need in request.items() if reported else ():
        have = alloc.get(res, Decimal(0))
        if have is None:
            return ()
        if need > 0 and have < need:
            short.append(res)
    if short:
        return ("too_small", tuple(sorted(short, key=resource_sort_key)))
    for t in node_taints(node):
        if t.effect in _BLOCKING_EFFECTS and not tolerates(tolerations, t):
            return ("taint", t)
    return ("cordoned",) if node_cordoned(node) else ()


def never_fits(
    request: Mapping[str, Decimal],
    tolerations: Sequence[object],
    selector: Mapping[str, str],
    nodes: Sequence[object],
) -> list[NodeBar]:
    """Why no node of ``nodes`` can ever take one pod requesting ``request`` with
    ``tolerations`` and nodeSelector ``selector``, one NodeBar per kind of node (nodeSelector not
    matched first, then too small, then taints, then cordoned,
    most nodes first); empty when some node could (even later: a node only not Ready may come
    back) or there are no nodes. The pod's allocatable need is judged as the kube-scheduler's
    NodeResourcesFit filter does (one pod slot included), taints as its TaintToleration filter,
    the nodeSelector as its NodeAffinity filter."""
    request = {**request, "pods": Decimal(1)}
    groups: dict[tuple[Any, ...], list[object]] = {}
    for node in nodes:
        key = _bar_of(node, request, tolerations, selector)
        if not key:
            return []
        groups.setdefault(key, []).append(node)
    bars = []
    for key, members in groups.items():
        example = min(name(n) for n in members)
        if key[0] == "too_small":
            short = tuple(
                (res, max(node_allocatable(n).get(res) or Decimal(0) for n in members), request[res])
                for res in key[1]
            )
            bars.append(NodeBar("too_small", len(members), example, short=short))
        elif key[0] == "selector":
            bars.append(NodeBar("selector", len(members), example))
        elif key[0] == "taint":
            bars.append(NodeBar("taint", len(members), example, taint=key[1]))
        else:
            bars.append(NodeBar("cordoned", len(members), example))
    order = {"selector": 0, "too_small": 1, "taint": 2, "cordoned": 3}
    return sorted(bars, key=lambda b: (order[b.kind], -b.nodes, b.example))


_FIT_REASON = re.compile(r"(?P<n>\d+) (?P<reason>Insufficient (?P<res>[A-Za-z0-9./_-]+)|[^,.]+)")
_FIT_HEAD = re.compile(r"(?P<avail>\d+)/(?P<total>\d+) nodes are (?:un)?available:? *(?P<rest>.*)", re.DOTALL)


@dataclass(frozen=True)
class FitReason:
    """One part of a node-fit message: ``count`` nodes for ``reason``; ``resource`` when the
    reason is "Insufficient <resource>"."""

    count: int
    reason: str
    resource: str


def node_fit_reasons(message: str) -> tuple[int, list[FitReason]] | None:
    """The scheduler's "0/10 nodes are unavailable: 9 Insufficient cpu, 1 node(s) were
    unschedulable." as (total nodes, reasons); None when the message has no such part."""
    m = _FIT_HEAD.search(message)
    if m is None:
        return None
    reasons = [
        FitReason(
            int(r.group("n")), r.group("reason").strip().rstrip("."), (r.group("res") or "").rstrip(".")
        )
        for r in _FIT_REASON.finditer(m.group("rest"))
    ]
    return int(m.group("total")), reasons


def pod_tolerations(template: object) -> list[Any]:
    return as_list(spec(template).get("tolerations"))


def pod_node_selector(template: object) -> dict[str, str]:
    """A pod template's ``spec.nodeSelector`` (label key to the value a node must carry)."""
    return {as_str(k): as_str(v) for k, v in as_dict(spec(template).get("nodeSelector")).items()}
