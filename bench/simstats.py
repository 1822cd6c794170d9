"""Reading the simulated cluster's ``GET /_sim/stats``.

Its shape (dashboard/sim/server.py ``SimServer.stats``): ``{"requests": {"<verb> <resource>": n},
"watches": {"<resource>": open watches}, "resourceVersion": str, "now": str}``, where verb is the
Kubernetes verb (list, watch, get, create, ...) and resource the plural ("jobs", "pods", with
a sub-resource as "jobs/status"). Kept in one place so the benchmark, soak and fault scripts agree
on what "an API call" is.
"""

from __future__ import annotations


def api_calls(stats: dict) -> dict[str, int]:
    """Request counts by verb (``{"list": n, "watch": n, ...}``) since the simulated server started."""
    out: dict[str, int] = {}
    for key, value in (stats.get("requests") or {}).items():
        verb = str(key).split(" ", 1)[0]
        out[verb] = out.get(verb, 0) + int(value)
    return out


def api_calls_by_resource(stats: dict) -> dict[str, int]:
    """The raw ``"<verb> <resource>"`` counters."""
    return {str(k): int(v) for k, v in (stats.get("requests") or {}).items()}


def open_watches(stats: dict) -> int | None:
    """Watches the simulated server is serving right now (all resources)."""
    watches = stats.get("watches")
    if isinstance(watches, dict):
        return int(sum(watches.values()))
    return None


def per_minute(calls: dict[str, int], minutes: float) -> dict[str, float]:
    if minutes <= 0:
        return {}
    return {k: round(v / minutes, 1) for k, v in calls.items()}
