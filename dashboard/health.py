"""Liveness, readiness and Prometheus metrics: /healthz, /readyz, /metrics.

These are answered by ``dashboard.middleware.HealthEndpointsMiddleware`` before host validation,
the TLS redirect and access control, because kubelet probes and Prometheus address the pod IP over
plain HTTP and carry no user identity. None of them shows a Kubernetes object:

- ``/healthz``: 200 "ok" while the process can serve requests; touches no cluster state.
- ``/readyz``: 200 when every kind the cache watches is synced, known to be absent (CRD not
  installed) or forbidden by RBAC, or was synced once and is now stale or unreachable (its pages
  serve the last known objects under a "data as of" notice: an ops room's only replica must not
  drop out of its Service, and the kiosk go blank, while the API server is away); 503 while a kind
  has never completed a list. The JSON body names each kind's state, the kinds still waiting and
  the ones served stale: ``{"ready": false, "kinds": {"jobs": "syncing", "pods": "stale", ...},
  "waiting": ["jobs"], "stale": ["pods"]}``.
- ``/metrics``: Prometheus text format (prometheus-client). Values are per process: under gunicorn
  each worker has its own cache and its own counters (docs/deployment.md#health-and-metrics).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import time
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from dashboard import priority

#: Snapshot attributes of the watched kinds.
KINDS = ("jobs", "podgroups", "queues", "pods", "events")
#: Kind states in which the cache will not get any more complete by waiting.
READY_STATES = frozenset({"synced", "not_installed", "forbidden"})
ALL_STATES = ("syncing", "synced", "stale", "forbidden", "not_installed", "unreachable")

REQUEST_LATENCY = Histogram(
    "volcano_ui_request_duration_seconds",
    "Time from the request reaching Django to the response leaving it, by URL name.",
    ["view", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
REQUESTS = Counter(
    "volcano_ui_requests",
    "Requests answered, by URL name, method and HTTP status code.",
    ["view", "method", "code"],
)
ACCESS_REVIEWS = Counter(
    "volcano_ui_access_reviews",
    "SubjectAccessReviews and TokenReviews sent to the API server, by kind and outcome.",
    ["review", "outcome"],
)
ACTIONS = Counter(
    "volcano_ui_actions",
    "Write actions requested through the dashboard, by action and outcome.",
    ["action", "outcome"],
)


def _cache():
    """The process-wide cluster cache, or None when dashboard.kube cannot provide one."""
    try:
        from dashboard.kube import get_cluster_cache
    except ImportError:  # pragma: no cover - only before the cache package exists
        return None
    return get_cluster_cache()


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8")


def readiness() -> tuple[int, dict]:
    """(HTTP status, body) of /readyz: 200 or 503, and the JSON object described above."""
    cache = _cache()
    if cache is None:
        states, stale = dict.fromkeys(KINDS, "unavailable"), []
    else:
        # The stores' states, not a snapshot: this runs every beat (health_server.BEAT_S), and a
        # snapshot publishes each store it reads, which the next watch event then copies in part.
        kinds = {kind: cache.store(kind).state for kind in KINDS}
        states = {kind: state.name for kind, state in kinds.items()}
        stale = sorted(k for k, s in kinds.items() if s.name not in READY_STATES and s.synced_at is not None)
    waiting = sorted(k for k, state in states.items() if state not in READY_STATES and k not in stale)
    body = {"ready": not waiting, "kinds": states, "waiting": waiting, "stale": stale}
    return (200 if not waiting else 503), body


def readyz(request: HttpRequest) -> HttpResponse:
    status, body = readiness()
    return HttpResponse(json.dumps(body), status=status, content_type="application/json")


def scraper_allowed(request: HttpRequest) -> bool:
    """May this peer read /metrics? The numbers are cluster-wide totals, so in the authenticated
    modes they are for scrapers, not users. ``Authorization: Bearer <VOLCANO_UI_METRICS_TOKEN>``
    is always answered. Otherwise: VOLCANO_UI_METRICS_ALLOWED_CIDRS, when set, lists the only peers
    answered; in proxy mode a request that came through the trusted proxy (a user) is refused; in
    token mode, where any user reaches the pod's port, only a listed peer or the bearer token is."""
    expected = settings.VOLCANO_UI_METRICS_TOKEN
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    bearer = scheme.lower() == "bearer"
    if expected and bearer and hmac.compare_digest(given.strip().encode(), expected.encode()):
        return True
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    allowed = settings.VOLCANO_UI_METRICS_ALLOWED_CIDRS
    if allowed and not any(peer in net for net in allowed):
        return False
    if settings.VOLCANO_UI_ACCESS_MODE == "proxy":
        return not any(peer in net for net in settings.VOLCANO_UI_TRUSTED_PROXIES)
    if settings.VOLCANO_UI_ACCESS_MODE == "token":
        return bool(allowed)
    return True


def metrics(request: HttpRequest) -> HttpResponse:
    if not scraper_allowed(request):
        return HttpResponse(
            "403 Forbidden: /metrics is for scrapers.\n", status=403, content_type="text/plain"
        )
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


class ClusterCacheCollector(Collector):
    """Reads the cache's per-kind state at scrape time (nothing is counted twice or kept here).

    Exposes, labelled by kind: objects held, state (one series per state, 1 for the current one),
    watch restarts, re-lists after 410 and after 504 "Too large resource version" (counters kept by
    the informers in dashboard/kube), and the age in seconds of the last watch event received.
    """

    def describe(self) -> Iterator:
        """The metric names, for registration. Without describe() prometheus_client calls collect()
        when registering, which would start the informers at import time (dashboard/kube starts
        them lazily, in the serving process only)."""
        yield GaugeMetricFamily("volcano_ui_cache_objects", "", labels=["kind"])
        yield GaugeMetricFamily("volcano_ui_cache_state", "", labels=["kind", "state"])
        yield CounterMetricFamily("volcano_ui_watch_restarts", "", labels=["kind"])
        yield CounterMetricFamily("volcano_ui_watch_relists_410", "", labels=["kind"])
        yield CounterMetricFamily("volcano_ui_watch_relists_too_large", "", labels=["kind"])
        yield GaugeMetricFamily("volcano_ui_last_event_age_seconds", "", labels=["kind"])

    def collect(self) -> Iterator:
        objects = GaugeMetricFamily("volcano_ui_cache_objects", "Objects held by the cache.", labels=["kind"])
        state = GaugeMetricFamily(
            "volcano_ui_cache_state", "1 for the cache's current state of the kind.", labels=["kind", "state"]
        )
        restarts = CounterMetricFamily(
            "volcano_ui_watch_restarts", "Watch streams started again after ending.", labels=["kind"]
        )
        relists = CounterMetricFamily(
            "volcano_ui_watch_relists_410",
            "Full re-lists after 410 Gone (expired resourceVersion).",
            labels=["kind"],
        )
        relists_too_large = CounterMetricFamily(
            "volcano_ui_watch_relists_too_large",
            'Full re-lists after 504 "Too large resource version" (a resourceVersion from another '
            "history: the API server's storage was replaced).",
            labels=["kind"],
        )
        age = GaugeMetricFamily(
            "volcano_ui_last_event_age_seconds",
            "Seconds since the kind's last watch event (bookmarks included) or, before any, its last list.",
            labels=["kind"],
        )
        cache = None
        try:
            cache = _cache()
            snap = cache.snapshot() if cache is not None else None
        except Exception:  # a scrape must never fail because the cache is unhappy
            snap = None
        if snap is not None and cache is not None:
            now = time.time()
            for kind in KINDS:
                view = getattr(snap, kind)
                objects.add_metric([kind], len(view))
                for name in ALL_STATES:
                    state.add_metric([kind, name], 1.0 if view.state.name == name else 0.0)
                counts = cache.kind_counters(kind)
                restarts.add_metric([kind], counts.watch_restarts)
                relists.add_metric([kind], counts.relists_410)
                relists_too_large.add_metric([kind], counts.relists_too_large)
                # Before the first watch event the list itself is the newest news of the kind.
                latest = counts.last_event_at or view.state.synced_at
                if latest is not None:
                    age.add_metric([kind], max(0.0, now - latest.timestamp()))
        yield from (objects, state, restarts, relists, relists_too_large, age)


class RequestPriorityCollector(Collector):
    """The worker's requests in flight and the seconds background threads waited for them
    (dashboard/priority.py), read at scrape time."""

    def collect(self) -> Iterator:
        yield GaugeMetricFamily(
            "volcano_ui_requests_in_flight",
            "Requests handed to this worker's threads and not answered yet.",
            value=priority.REQUESTS.in_flight,
        )
        yield CounterMetricFamily(
            "volcano_ui_background_give_way_seconds",
            "Seconds the informers and the history recorder waited for requests in flight.",
            value=priority.REQUESTS.waited_seconds,
        )


_collector = ClusterCacheCollector()
# A second import (the autoreloader) must not register the collector twice.
with contextlib.suppress(ValueError):
    REGISTRY.register(_collector)
with contextlib.suppress(ValueError):
    REGISTRY.register(RequestPriorityCollector())
