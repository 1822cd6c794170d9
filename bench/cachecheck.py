"""Is the dashboard's cache right? Object by object against a fresh list from the API server.

The dashboard side comes from ``GET /_bench/cache`` (dashboard/bench_views.py), which exists only
when the setting VOLCANO_UI_BENCH_ENDPOINTS is on: every cached object's ``namespace/name`` and
``metadata.resourceVersion`` per kind, from the worker that answered. Each gunicorn worker has its
own cache, so the check asks over fresh connections until every worker has answered.

Two views agree when they hold the same keys with the same resourceVersions. The comparison is
only meaningful while nothing changes: the fault run pauses the churn first.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from bench.common import http_get

# (group, version, plural, namespaced) of each cached kind, as the cache contract names them.
KINDS = {
    "jobs": ("batch.volcano.sh", "v1alpha1", "jobs", True),
    "podgroups": ("scheduling.volcano.sh", "v1beta1", "podgroups", True),
    "queues": ("scheduling.volcano.sh", "v1beta1", "queues", False),
    "pods": ("", "v1", "pods", True),
    "events": ("", "v1", "events", True),
}


def fresh_lists(kubeconfig: str) -> dict[str, dict[str, str]]:
    """``{kind: {"namespace/name": resourceVersion}}`` from one list per kind (raw JSON, no models)."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    out: dict[str, dict[str, str]] = {}
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    try:
        for name, (group, version, plural, _) in KINDS.items():
            if group:
                resp = custom.list_cluster_custom_object(group, version, plural, _preload_content=False)
            elif plural == "pods":
                resp = core.list_pod_for_all_namespaces(_preload_content=False)
            else:
                resp = core.list_event_for_all_namespaces(_preload_content=False)
            data = json.loads(resp.data)
            out[name] = {_key(item): item["metadata"].get("resourceVersion", "") for item in data["items"]}
    finally:
        api.close()
    return out


def _key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name')}"


def dashboard_views(base: str, workers: int, attempts: int = 60) -> dict[int, dict]:
    """``{pid: {kind: {"state", "version", "objects": {key: rv}}}}`` for every worker that answered."""
    seen: dict[int, dict] = {}
    for _ in range(attempts):
        status, body, _ = http_get(f"{base}/_bench/cache", timeout=60)
        if status == 404:
            raise RuntimeError(
                "/_bench/cache answered 404: start the dashboard with VOLCANO_UI_BENCH_ENDPOINTS=true"
            )
        if status == 200:
            data = json.loads(body)
            seen[data["pid"]] = data["kinds"]
        if len(seen) >= workers:
            break
    return seen


@dataclass
class Diff:
    missing: dict[str, list[str]] = field(default_factory=dict)  # in the API, not in the cache
    extra: dict[str, list[str]] = field(default_factory=dict)  # in the cache, gone from the API
    stale: dict[str, list[str]] = field(default_factory=dict)  # both, different resourceVersion

    @property
    def ok(self) -> bool:
        return not (any(self.missing.values()) or any(self.extra.values()) or any(self.stale.values()))

    def summary(self) -> str:
        parts = []
        for label, table in (("missing", self.missing), ("extra", self.extra), ("stale", self.stale)):
            for kind, keys in table.items():
                if keys:
                    parts.append(f"{len(keys)} {label} {kind} (e.g. {keys[0]})")
        return "; ".join(parts) or "identical"


def compare(fresh: dict[str, dict[str, str]], cached: dict) -> Diff:
    diff = Diff()
    for kind, api_objects in fresh.items():
        mine = (cached.get(kind) or {}).get("objects") or {}
        diff.missing[kind] = sorted(set(api_objects) - set(mine))
        diff.extra[kind] = sorted(set(mine) - set(api_objects))
        diff.stale[kind] = sorted(
            k for k in set(api_objects) & set(mine) if str(api_objects[k]) != str(mine[k])
        )
    return diff


def wait_converged(
    base: str, kubeconfig: str, workers: int, timeout: float
) -> tuple[bool, float, dict[int, str]]:
    """Compare until every worker's cache equals a fresh list, or ``timeout`` s pass.

    Returns (converged, seconds taken, {pid: last diff summary}).
    """
    start = time.monotonic()
    last: dict[int, str] = {}
    while True:
        fresh = fresh_lists(kubeconfig)
        views = dashboard_views(base, workers)
        last = {pid: compare(fresh, view).summary() for pid, view in views.items()}
        if len(views) >= workers and all(s == "identical" for s in last.values()):
            return True, time.monotonic() - start, last
        if time.monotonic() - start > timeout:
            return False, time.monotonic() - start, last
        time.sleep(3)
