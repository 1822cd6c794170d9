"""Reading the simulated cluster's ``GET /_sim/stats``.

Kept in one place so that the benchmark, soak and fault scripts agree on what "an API call" is.
"""

from __future__ import annotations


def api_calls(stats: dict) -> dict[str, int]:
    """Request counts by verb (list, get, watch, create, ...) since the simulated server started."""
    requests = stats.get("requests") or stats.get("requests_by_verb") or {}
    if isinstance(requests, dict):
        by_verb = requests.get("by_verb", requests)
        return {str(k): int(v) for k, v in by_verb.items() if isinstance(v, int | float)}
    return {}


def open_watches(stats: dict) -> int | None:
    """Watches the simulated server is serving right now."""
    for key in ("open_watches", "watches_open", "active_watches"):
        if key in stats:
            value = stats[key]
            return int(value if not isinstance(value, dict) else sum(value.values()))
    watches = stats.get("watches")
    if isinstance(watches, dict):
        return int(watches.get("open", 0))
    return None


def per_minute(calls: dict[str, int], minutes: float) -> dict[str, float]:
    if minutes <= 0:
        return {}
    return {k: round(v / minutes, 1) for k, v in calls.items()}
