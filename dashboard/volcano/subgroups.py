"""A PodGroup's ``spec.subGroupPolicy``: sub-gangs placed together (network-topology-aware).

Each policy selects pods by ``labelSelector``; ``matchLabelKeys`` splits them into sub-gangs by the
values of those labels (Volcano Jobs label pods ``volcano.sh/partition-id``); a sub-gang is whole
with ``subGroupSize`` pods, and scheduling starts once ``minSubGroups`` sub-gangs fit. Source:
Volcano's PodGroup types (scheduling/v1beta1) and the network-topology design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dashboard.volcano.hypernodes import NetworkTopology, label_selector_matches, network_topology
from dashboard.volcano.objects import as_dict, as_list, as_str, labels, spec, status

_COUNTED = frozenset({"Running", "Succeeded"})


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class SubGang:
    """One sub-gang: ``key`` the matchLabelKeys values ("" for pods without them), its pods, the
    pods running or succeeded, and whether it is whole (``size`` None: unknown)."""

    key: str
    pods: int
    counted: int
    size: int | None

    @property
    def whole(self) -> bool | None:
        return None if self.size is None else self.counted >= self.size


@dataclass(frozen=True)
class SubGroupPolicy:
    name: str
    size: int | None
    min_groups: int | None
    match_keys: tuple[str, ...]
    nt: NetworkTopology | None
    gangs: tuple[SubGang, ...]

    @property
    def whole_gangs(self) -> int:
        return sum(1 for g in self.gangs if g.whole)


def subgroup_policies(pg: object, pods: Sequence[object]) -> list[SubGroupPolicy]:
    """Every ``subGroupPolicy`` entry with its sub-gangs among ``pods`` (the PodGroup's pods)."""
    out = []
    for raw in as_list(spec(pg).get("subGroupPolicy")):
        p = as_dict(raw)
        selector = as_dict(p.get("labelSelector"))
        keys = tuple(as_str(k) for k in as_list(p.get("matchLabelKeys")) if as_str(k))
        size = _int(p.get("subGroupSize"))
        groups: dict[str, list[int]] = {}
        for pod in pods:
            pod_labels = labels(pod)
            if selector and not label_selector_matches(selector, pod_labels):
                continue
            key = ",".join(f"{k}={pod_labels[k]}" for k in keys if k in pod_labels)
            entry = groups.setdefault(key, [0, 0])
            entry[0] += 1
            entry[1] += as_str(status(pod).get("phase")) in _COUNTED
        gangs = tuple(SubGang(k, n, c, size) for k, (n, c) in sorted(groups.items()))
        out.append(
            SubGroupPolicy(
                as_str(p.get("name")), size, _int(p.get("minSubGroups")), keys, network_topology(p), gangs
            )
        )
    return out


def podgroup_topology(pg: object) -> NetworkTopology | None:
    return network_topology(spec(pg))
