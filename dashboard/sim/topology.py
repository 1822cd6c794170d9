"""HyperNodes (topology.volcano.sh/v1alpha1), simulated: the hypernode controller's
``status.nodeCount`` and the scheduler's view of the tree.

Facts from volcano-sh/volcano:
- ``status.nodeCount`` (pkg/controllers/hypernode/hypernode_handler.go ``actualNodeCnt`` with
  pkg/util/hypernode/member_selector.go ``GetMembers``) is the size of the union, over every member
  whatever its ``type``, of: the ``exactMatch`` name as written; the nodes whose name matches
  ``regexMatch.pattern`` (Go's regexp: RE2 syntax, linear time; here RE2 itself, and a pattern
  it cannot compile selects nothing); the nodes matching ``labelMatch`` (an empty selector matches
  nothing).
  A HyperNode whose members are HyperNodes selected by exactMatch therefore counts its children,
  not the nodes below them;
- the scheduler (pkg/scheduler/api/hyper_node_info.go) resolves a HyperNode to real nodes: Node
  members by exactMatch (existing nodes), regexMatch or labelMatch; HyperNode members by exactMatch
  only, recursively; ``spec.tier`` orders the tree and ``spec.tierName`` names a tier
  (``highestTierName`` is translated to the tier that carries that name).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import re2

from .store import ApiError

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # no stderr line per rejected pattern


def label_selector_matches(selector: dict, labels: dict) -> bool:
    """metav1.LabelSelector semantics (matchLabels AND matchExpressions In/NotIn/Exists/DoesNotExist)."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _regex(pattern: str) -> Any:
    try:
        return re2.compile(pattern.encode("utf-8", "surrogatepass"), _RE2_OPTIONS)
    except re2.error:
        return None


def member_names(selector: dict, nodes: dict[str, dict]) -> set[str]:
    """GetMembers: the names one member selector stands for (``nodes``: name -> labels)."""
    out: set[str] = set()
    exact = selector.get("exactMatch")
    if isinstance(exact, dict):
        if not exact.get("name"):
            return out
        out.add(exact["name"])
    regex = selector.get("regexMatch")
    if isinstance(regex, dict):
        compiled = _regex(str(regex.get("pattern") or ""))
        if compiled is None:
            return set()
        out.update(n for n in nodes if compiled.search(n.encode("utf-8", "surrogatepass")) is not None)
    label = selector.get("labelMatch")
    if isinstance(label, dict):
        if not label.get("matchLabels") and not label.get("matchExpressions"):
            return out
        out.update(n for n, labels in nodes.items() if label_selector_matches(label, labels))
    return out


def node_count(hypernode: dict, nodes: dict[str, dict]) -> int:
    """The hypernode controller's ``status.nodeCount`` for ``hypernode``."""
    names: set[str] = set()
    for member in (hypernode.get("spec") or {}).get("members") or []:
        if isinstance(member, dict):
            names |= member_names(member.get("selector") or {}, nodes)
    return len(names)


class TopologyView:
    """The scheduler's tree: tier, children, real nodes per HyperNode; tier names to tiers."""

    def __init__(self, hypernodes: Iterable[dict], nodes: dict[str, dict]) -> None:
        self.tier: dict[str, int] = {}
        self.tier_names: dict[str, int] = {}
        self.children: dict[str, list[str]] = {}
        self.direct: dict[str, set[str]] = {}
        specs = {}
        for hn in hypernodes:
            name = (hn.get("metadata") or {}).get("name") or ""
            spec = hn.get("spec") or {}
            specs[name] = spec
            try:
                self.tier[name] = int(spec.get("tier") or 0)
            except (TypeError, ValueError):
                self.tier[name] = 0
            if spec.get("tierName"):
                self.tier_names.setdefault(str(spec["tierName"]), self.tier[name])
        for name, spec in specs.items():
            kids: list[str] = []
            real: set[str] = set()
            for member in spec.get("members") or []:
                if not isinstance(member, dict):
                    continue
                selector = member.get("selector") or {}
                if member.get("type") == "HyperNode":
                    exact = selector.get("exactMatch") or {}
                    if exact.get("name") in specs and exact["name"] != name:
                        kids.append(exact["name"])
                else:
                    real |= {n for n in member_names(selector, nodes) if n in nodes}
            self.children[name] = sorted(kids)
            self.direct[name] = real
        self._leaves: dict[str, frozenset[str]] = {}

    def nodes_of(self, name: str) -> frozenset[str]:
        """The real nodes below ``name`` (cycles cut)."""
        cached = self._leaves.get(name)
        if cached is not None:
            return cached
        out: set[str] = set()
        stack, seen = [name], set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            out |= self.direct.get(current, set())
            stack.extend(self.children.get(current, ()))
        result = self._leaves[name] = frozenset(out)
        return result

    def allowed_tier(self, network_topology: dict) -> int | None:
        """highestTierAllowed, else the tier named by highestTierName; None when neither resolves."""
        value = network_topology.get("highestTierAllowed")
        if value is not None:
            try:
                return int(value)
            except (TypeError, ValueError):
                return None
        name = network_topology.get("highestTierName")
        if name:
            return self.tier_names.get(str(name))
        return None

    def gradients(self, highest_tier: int, within: frozenset[str] | None = None) -> list[list[str]]:
        """HyperNodes of tier <= highest_tier (inside ``within`` nodes when given), grouped by tier
        ascending, names sorted: the order the network-topology-aware plugin tries them in."""
        by_tier: dict[int, list[str]] = {}
        for name, tier in self.tier.items():
            if tier > highest_tier:
                continue
            members = self.nodes_of(name)
            if not members or (within is not None and not members <= within):
                continue
            by_tier.setdefault(tier, []).append(name)
        return [sorted(by_tier[t]) for t in sorted(by_tier)]


class HyperNodeController:
    """Keeps every HyperNode's ``status.nodeCount`` current; rebuilds the scheduler's view lazily."""

    def __init__(self, controllers) -> None:
        self.c = controllers
        self.hypernodes: dict[str, dict] = {}
        self.dirty = False
        self._view: TopologyView | None = None

    def observe(self, event_type: str, obj: dict) -> None:
        name = (obj.get("metadata") or {}).get("name") or ""
        old = self.hypernodes.get(name)
        if event_type == "DELETED":
            self.hypernodes.pop(name, None)
        else:
            self.hypernodes[name] = obj
        if old is None or event_type == "DELETED" or old.get("spec") != obj.get("spec"):
            self.changed()

    def changed(self) -> None:
        self.dirty = True
        self._view = None

    def _node_labels(self) -> dict[str, dict]:
        return {name: info.labels for name, info in self.c.nodes.items()}

    def view(self) -> TopologyView:
        if self._view is None:
            self._view = TopologyView(self.hypernodes.values(), self._node_labels())
        return self._view

    def sync(self) -> None:
        if not self.dirty or not self.hypernodes:
            self.dirty = False
            return
        self.dirty = False
        from .controllers import HYPERNODE

        nodes = self._node_labels()
        for name, hn in list(self.hypernodes.items()):
            count = node_count(hn, nodes)
            if ((hn.get("status") or {}).get("nodeCount") or 0) == count:
                continue

            def fn(obj: dict, value: int = count) -> None:
                status = obj.setdefault("status", {})
                if value:
                    status["nodeCount"] = value
                else:  # int64 omitempty: zero is absent
                    status.pop("nodeCount", None)

            try:
                self.hypernodes[name] = self.c.store.mutate(HYPERNODE, None, name, fn)
            except ApiError:
                continue
