"""API discovery: which version of each Volcano group the cluster serves.

One ``GET /apis/<group>`` per Volcano group (an APIGroup: ``versions[]`` and ``preferredVersion``)
and one ``GET /apis/<group>/<version>`` (an APIResourceList) to confirm the resource itself exists.
Core kinds (pods, events) are always served. Results are cached until ``invalidate()`` (called
when a list returns 404, e.g. after the CRD was deleted or installed).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from dashboard.kube.client import KubeClient, KubeError
from dashboard.kube.kinds import KindSpec


@dataclass(frozen=True)
class Resolved:
    """``version`` to use (None: not usable); ``detail`` explains a fallback or an absence."""

    version: str | None
    detail: str = ""
    fallback: bool = False


class Discovery:
    def __init__(self, client: KubeClient):
        self.client = client
        self._lock = threading.Lock()
        self._groups: dict[str, dict[str, Any] | None] = {}
        self._resources: dict[tuple[str, str], set[str] | None] = {}

    def invalidate(self, group: str | None = None) -> None:
        with self._lock:
            if group is None:
                self._groups.clear()
                self._resources.clear()
            else:
                self._groups.pop(group, None)
                for key in [k for k in self._resources if k[0] == group]:
                    del self._resources[key]

    def _group(self, group: str) -> dict[str, Any] | None:
        with self._lock:
            if group in self._groups:
                return self._groups[group]
        try:
            body = self.client.get_json(f"/apis/{group}")
        except KubeError as exc:
            if exc.status != 404:
                raise
            body = None
        with self._lock:
            self._groups[group] = body
        return body

    def _resource_names(self, group: str, version: str) -> set[str] | None:
        key = (group, version)
        with self._lock:
            if key in self._resources:
                return self._resources[key]
        try:
            body = self.client.get_json(f"/apis/{group}/{version}")
            names: set[str] | None = {
                r["name"] for r in body.get("resources") or [] if isinstance(r, dict) and r.get("name")
            }
        except KubeError as exc:
            if exc.status != 404:
                raise
            names = None
        with self._lock:
            self._resources[key] = names
        return names

    def resolve(self, spec: KindSpec) -> Resolved:
        """Pick the version to watch for ``spec``. Raises KubeError when discovery itself fails
        (unreachable, 401/403 on discovery): the caller treats that like any other API error."""
        if not spec.group:
            return Resolved(spec.version)
        body = self._group(spec.group)
        if body is None:
            return Resolved(
                None, f"API group {spec.group} is not served: the {spec.kind} CRD is not installed"
            )
        served: list[str] = [
            v["version"] for v in body.get("versions") or [] if isinstance(v, dict) and v.get("version")
        ]
        preferred = (body.get("preferredVersion") or {}).get("version")
        candidates = []
        if spec.version in served:
            candidates.append(spec.version)
        candidates += [v for v in spec.accepted_versions if v in served and v not in candidates]
        if preferred and preferred not in candidates:
            candidates.append(preferred)
        candidates += [v for v in served if v not in candidates]
        for version in candidates:
            names = self._resource_names(spec.group, version)
            if names is not None and spec.plural in names:
                if version == spec.version:
                    return Resolved(version)
                return Resolved(
                    version,
                    f"{spec.group} serves {spec.plural} in {version}, not the expected {spec.version}; "
                    f"read as {spec.version} where the shape allows",
                    fallback=True,
                )
        return Resolved(
            None,
            f"{spec.plural}.{spec.group} is not served (group versions: {', '.join(served) or 'none'}): "
            f"the {spec.kind} CRD is not installed",
        )
