"""Resource arithmetic for the simulated scheduler and job controller.

Quantities are parsed with ``kubernetes.utils.parse_quantity`` and held as integers in *milli-units*
(1 cpu = 1000, 1 byte of memory = 1000, 1 GPU = 1000) so that fit checks are plain integer
comparisons. ``Res`` is a ``dict[str, int]`` of resource name -> milli-units.

Formatting follows Kubernetes' canonical quantity strings closely enough for display: whole cpus
as ``"2"``, fractions as ``"1500m"``; memory in the largest binary suffix that divides it exactly
(``"4Gi"``), else plain bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from kubernetes.utils import parse_quantity

Res = dict[str, int]

# Resource names whose quota keys get no "requests." twin besides the plain name (core ones do).
_CORE = ("cpu", "memory", "ephemeral-storage")
_BINARY = (("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024))


@lru_cache(maxsize=4096)
def milli(value: str | int | float) -> int:
    """Parse one Kubernetes quantity (``"500m"``, ``"4Gi"``, ``2``) into milli-units.

    Raises ``ValueError`` for a string that is not a quantity.
    """
    return int(parse_quantity(value) * 1000)


def parse_list(resources: Mapping[str, object] | None) -> Res:
    """A ResourceList (``{"cpu": "2", "memory": "4Gi"}``) as milli-units; unparsable values are skipped."""
    out: Res = {}
    for name, value in (resources or {}).items():
        try:
            out[name] = milli(value if isinstance(value, str | int | float) else str(value))
        except (ValueError, TypeError):
            continue
    return out


def add(into: Res, other: Mapping[str, int], sign: int = 1) -> Res:
    """Add (or with ``sign=-1`` subtract) ``other`` into ``into`` in place; returns ``into``."""
    for name, value in other.items():
        into[name] = into.get(name, 0) + sign * value
    return into


def total(items: Iterable[Mapping[str, int]]) -> Res:
    out: Res = {}
    for item in items:
        add(out, item)
    return out


def insufficient(request: Mapping[str, int], free: Mapping[str, int]) -> list[str]:
    """Names of the resources in ``request`` (non-zero) that exceed ``free``; sorted."""
    return sorted(name for name, value in request.items() if value > 0 and value > free.get(name, 0))


def fits(request: Mapping[str, int], free: Mapping[str, int]) -> bool:
    return all(not (value > 0 and value > free.get(name, 0)) for name, value in request.items())


def pod_requests(spec: Mapping | None) -> Res:
    """Effective requests of a pod spec: the sum over containers (a limit stands in for a missing
    request, as the API server defaults it), at least the largest init container's; plus ``pods: 1``.
    """
    spec = spec or {}
    out: Res = {}
    for container in spec.get("containers") or []:
        res = container.get("resources") or {}
        req = parse_list(res.get("requests"))
        for name, value in parse_list(res.get("limits")).items():
            req.setdefault(name, value)
        add(out, req)
    for container in spec.get("initContainers") or []:
        res = container.get("resources") or {}
        req = parse_list(res.get("requests"))
        for name, value in parse_list(res.get("limits")).items():
            req.setdefault(name, value)
        for name, value in req.items():
            if value > out.get(name, 0):
                out[name] = value
    out["pods"] = 1000
    return out


def pod_limits(spec: Mapping | None) -> Res:
    out: Res = {}
    for container in (spec or {}).get("containers") or []:
        add(out, parse_list((container.get("resources") or {}).get("limits")))
    return out


def quota_usage(requests: Mapping[str, int], limits: Mapping[str, int] | None = None) -> Res:
    """Quota-style usage keys for pod requests, as Kubernetes quota accounting names them and as
    Volcano writes them into ``PodGroup.spec.minResources`` (volcano-sh/volcano pkg/controllers/job):
    ``count/pods``, ``pods``, ``cpu``/``requests.cpu``, ``memory``/``requests.memory``, extended
    resources as ``<name>`` and ``requests.<name>``, and ``limits.*`` when limits are set.
    """
    pods = requests.get("pods", 1000)
    out: Res = {"count/pods": pods, "pods": pods}
    for name, value in requests.items():
        if name == "pods":
            continue
        out[name] = out.get(name, 0) + value
        out[f"requests.{name}"] = out.get(f"requests.{name}", 0) + value
    for name, value in (limits or {}).items():
        if name in _CORE:
            out[f"limits.{name}"] = out.get(f"limits.{name}", 0) + value
    return out


def strip_quota(res: Mapping[str, int]) -> Res:
    """The plain resource names of a quota-style list (drops ``requests.``/``limits.``/``count/``)."""
    return {
        name: value for name, value in res.items() if not name.startswith(("requests.", "limits.", "count/"))
    }


def format_quantity(name: str, value: int) -> str:
    """Format milli-units of resource ``name`` as a Kubernetes quantity string."""
    base = name.rsplit(".", 1)[-1] if name.startswith(("requests.", "limits.")) else name
    if base in ("memory", "ephemeral-storage", "storage") or base.startswith("hugepages-"):
        whole = value // 1000
        if whole and value % 1000 == 0:
            for suffix, factor in _BINARY:
                if whole % factor == 0:
                    return f"{whole // factor}{suffix}"
            return str(whole)
        if value % 1000 == 0:
            return "0"
        return f"{value}m"
    if value % 1000 == 0:
        return str(value // 1000)
    return f"{value}m"


def format_list(res: Mapping[str, int], *, drop_zero: bool = False) -> dict[str, str]:
    """A ResourceList of quantity strings, keys sorted for stable output."""
    return {
        name: format_quantity(name, res[name]) for name in sorted(res) if not (drop_zero and res[name] == 0)
    }
