"""``GET /_bench/cache``: what this worker's cache holds, for the fault run's correctness check.

Routed only by the benchmark's URLconf (bench/urls.py, under bench/settings.py), so no deployment
exposes it. The answer lists, per kind, every cached object's ``namespace/name`` and
``metadata.resourceVersion`` (no other field), the kind's state and collection version, and the
worker's pid: each gunicorn worker has its own cache, and bench/cachecheck.py compares each one
with a fresh list from the API server.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.http import HttpRequest, JsonResponse

KINDS = ("jobs", "podgroups", "queues", "pods", "events")


def cache_dump(request: HttpRequest) -> JsonResponse:
    """``{"pid": int, "kinds": {kind: {"state", "version", "objects": {"ns/name": rv}}}, "limits": {...}}``.

    ``limits`` carries the cache's retention settings (scheduler names, event caps) so the checker
    knows which differences from a fresh list are by design.
    """
    from dashboard.kube import get_cluster_cache

    snapshot = get_cluster_cache().snapshot()
    kinds = {}
    for name in KINDS:
        view = getattr(snapshot, name)
        objects = {}
        for obj in view.all():
            meta = obj.get("metadata") or {}
            objects[f"{meta.get('namespace') or ''}/{meta.get('name')}"] = meta.get("resourceVersion")
        kinds[name] = {"state": view.state.name, "version": view.version, "objects": objects}
    limits = {
        "scheduler_names": list(getattr(settings, "VOLCANO_UI_SCHEDULER_NAMES", ["volcano"])),
        "events_total": getattr(settings, "VOLCANO_UI_EVENTS_TOTAL", None),
        "events_per_object": getattr(settings, "VOLCANO_UI_EVENTS_PER_OBJECT", None),
    }
    return JsonResponse({"pid": os.getpid(), "kinds": kinds, "limits": limits})
