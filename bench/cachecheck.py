"""Is the dashboard's cache right? Object by object against a fresh list from the API server.

The dashboard side comes from ``GET /_bench/cache`` (bench/views.py), which only the benchmark's
settings route (bench/settings.py): every cached object's ``namespace/name`` and
``metadata.resourceVersion`` per kind, the worker's pid and the cache's retention settings. Each
gunicorn worker has its own cache, so the check asks over fresh connections until every worker
has answered.

What "right" means follows the cache's documented retention (dashboard/kube/cache.py):
- Jobs, PodGroups, Queues: exactly the API's objects, each at the API's resourceVersion.
- Pods: exactly the API's pods scheduled by a configured scheduler name or carrying the
  ``scheduling.k8s.io/group-name`` annotation.
- Events: the cache keeps events of Volcano kinds and of pods it holds when the event arrives,
  at most ``events_per_object`` per object and ``events_total`` overall (oldest dropped). So:
  no cached event may be absent from the API or at another resourceVersion; an event the API
  has, that the rule keeps today, and that the cache lacks is an error unless the cache is at its
  total cap or that object is at its per-object cap. Events of pods deleted meanwhile may stay.

The comparison is meaningful only while nothing changes: the fault run pauses the churn first.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field

from bench.common import http_get

# (group, version, plural) of each cached kind, as the cache contract names them.
KINDS = {
    "jobs": ("batch.volcano.sh", "v1alpha1", "jobs"),
    "podgroups": ("scheduling.volcano.sh", "v1beta1", "podgroups"),
    "queues": ("scheduling.volcano.sh", "v1beta1", "queues"),
    "pods": ("", "v1", "pods"),
    "events": ("", "v1", "events"),
}
GROUP_NAME = "scheduling.k8s.io/group-name"
VOLCANO_EVENT_KINDS = {
    "Job": "batch.volcano.sh/",
    "PodGroup": "scheduling.volcano.sh/",
    "Queue": "scheduling.volcano.sh/",
}


def _key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name')}"


def fresh_lists(kubeconfig: str) -> dict[str, dict[str, dict]]:
    """``{kind: {"namespace/name": item}}`` from one list per kind (raw JSON, no models)."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    out: dict[str, dict[str, dict]] = {}
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    try:
        for name, (group, version, plural) in KINDS.items():
            if group:
                resp = custom.list_cluster_custom_object(group, version, plural, _preload_content=False)
            elif plural == "pods":
                resp = core.list_pod_for_all_namespaces(_preload_content=False)
            else:
                resp = core.list_event_for_all_namespaces(_preload_content=False)
            out[name] = {_key(item): item for item in json.loads(resp.data)["items"]}
    finally:
        api.close()
    return out


def dashboard_views(
    base: str, workers: int, attempts: int = 60, headers: dict[str, str] | None = None
) -> dict[int, dict]:
    """``{pid: answer of /_bench/cache}`` for every worker that answered. ``headers``: an identity
    (the trusted proxy's user header) when the dashboard runs in an authenticated access mode."""
    seen: dict[int, dict] = {}
    for _ in range(attempts):
        status, body, _ = http_get(f"{base}/_bench/cache", timeout=60, headers=headers)
        if status == 404:
            raise RuntimeError(
                "/_bench/cache answered 404: start the dashboard with DJANGO_SETTINGS_MODULE=bench.settings"
            )
        if status == 200:
            data = json.loads(body)
            seen[data["pid"]] = data
        if len(seen) >= workers:
            break
    return seen


@dataclass
class Diff:
    missing: dict[str, list[str]] = field(default_factory=dict)  # the API has it, the cache should
    extra: dict[str, list[str]] = field(default_factory=dict)  # cached, gone from the API
    stale: dict[str, list[str]] = field(default_factory=dict)  # both, different resourceVersion
    notes: list[str] = field(default_factory=list)  # tolerated differences, by the retention rules

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


def _rv(item: dict) -> str:
    return str((item.get("metadata") or {}).get("resourceVersion", ""))


def compare(fresh: dict[str, dict[str, dict]], answer: dict) -> Diff:
    """Compare one worker's ``/_bench/cache`` answer with the fresh lists (rules in the module doc)."""
    diff = Diff()
    cached_kinds = answer["kinds"]
    limits = answer.get("limits") or {}
    schedulers = set(limits.get("scheduler_names") or ["volcano"])
    for kind, api_items in fresh.items():
        mine: dict[str, str] = (cached_kinds.get(kind) or {}).get("objects") or {}
        if kind == "pods":
            api_items = {
                k: v
                for k, v in api_items.items()
                if (v.get("spec") or {}).get("schedulerName") in schedulers
                or GROUP_NAME in ((v.get("metadata") or {}).get("annotations") or {})
            }
        diff.extra[kind] = sorted(set(mine) - set(api_items))
        diff.stale[kind] = sorted(k for k in set(api_items) & set(mine) if _rv(api_items[k]) != str(mine[k]))
        if kind != "events":
            diff.missing[kind] = sorted(set(api_items) - set(mine))
            continue
        pods = fresh.get("pods", {})
        expected = {k for k, ev in api_items.items() if _event_kept(ev, pods)}
        lacking = expected - set(mine)
        total_cap, per_object = limits.get("events_total"), limits.get("events_per_object")
        if lacking and total_cap and len(mine) >= total_cap:
            diff.notes.append(f"{len(lacking)} events not kept: the cache is at its cap of {total_cap}")
            lacking = set()
        if lacking and per_object:
            per_obj = Counter(_involved_key(api_items[k]) for k in expected)
            capped = {k for k in lacking if per_obj[_involved_key(api_items[k])] > per_object}
            if capped:
                diff.notes.append(f"{len(capped)} events over the per-object cap of {per_object}")
            lacking -= capped
        diff.missing[kind] = sorted(lacking)
        not_kept = len(api_items) - len(expected)
        if not_kept:
            diff.notes.append(f"{not_kept} events of objects the cache does not keep events for")
    return diff


def _involved_key(event: dict) -> tuple:
    ref = event.get("involvedObject") or {}
    return (ref.get("kind"), ref.get("namespace"), ref.get("name"))


def _event_kept(event: dict, pods: dict[str, dict]) -> bool:
    ref = event.get("involvedObject") or {}
    kind = ref.get("kind")
    prefix = VOLCANO_EVENT_KINDS.get(kind)
    if prefix is not None:
        return str(ref.get("apiVersion") or "").startswith(prefix)
    if kind == "Pod":
        return f"{ref.get('namespace') or ''}/{ref.get('name')}" in pods
    return False


def wait_converged(
    base: str, kubeconfig: str, workers: int, timeout: float, headers: dict[str, str] | None = None
) -> tuple[bool, float, dict[int, str]]:
    """Compare until every worker's cache matches a fresh list, or ``timeout`` s pass.

    Returns (converged, seconds taken, {pid: last diff summary and tolerated notes}).
    """
    start = time.monotonic()
    while True:
        fresh = fresh_lists(kubeconfig)
        views = dashboard_views(base, workers, headers=headers)
        diffs = {pid: compare(fresh, answer) for pid, answer in views.items()}
        if len(views) >= workers and all(d.ok for d in diffs.values()):
            return True, time.monotonic() - start, {p: _describe(d) for p, d in diffs.items()}
        if time.monotonic() - start > timeout:
            return False, time.monotonic() - start, {p: _describe(d) for p, d in diffs.items()}
        time.sleep(3)


def _describe(diff: Diff) -> str:
    return diff.summary() + (f" ({'; '.join(diff.notes)})" if diff.notes else "")
