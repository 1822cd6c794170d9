"""Cluster access for volcano-ui: the only code that talks to Kubernetes.

Design
------
* **Connection** (client.py): the kubernetes client's own loaders build a ``Configuration``
  (kubeconfig + context, in-cluster service account, or the simulated cluster's kubeconfig), so
  exec/OIDC auth plugins and client certificates work. Requests reuse the client's transport and
  auth (``ApiClient.param_serialize`` + ``call_api``) but decode raw JSON: no generated model
  classes on the hot path.
* **Discovery** (discovery.py): which version of each Volcano group/kind is served; an absent CRD
  makes that kind "not_installed" while the others work.
* **Informers** (informer.py): one thread per kind (pods: one, or one per scheduler name) doing a
  paginated list, then a watch from the list's resourceVersion with bookmarks; 410 -> re-list with
  a diff; exponential backoff with jitter honouring Retry-After; an inactivity timeout. Each kind
  has a state: syncing, synced, stale (since T), forbidden, not_installed, unreachable, and an
  error category ("rejected": 401 or a TLS certificate that fails verification, i.e. credentials
  or trust rejected; "unreachable": no connection). Before each reconnect the client re-reads the
  kubeconfig if the file changed on disk (rotated token/CA, a restarted cluster).
* **Store** (store.py): per-kind, thread-safe, copy-on-write publication so a snapshot is O(1)
  even at 50,000 pods; incremental indexes (namespace, queue, owner uid, group-name annotation,
  job-name label, parent queue, involved object); change counters per object and per kind.
  Objects are plain dicts trimmed to what the pages show (trim.py). Events are capped per object
  and in total (oldest dropped).
* **Reads** (snapshot.py): ``Snapshot`` with one ``KindView`` per kind and the cross-link helpers
  (Job <-> PodGroup <-> Pods <-> Queue, events). Views never call the API.
* What the cached objects mean (gang progress, kubectl-style pod status, queue room, "why is it
  pending") is the domain layer's, ``dashboard/volcano/``; the cache's indexes use it too.

Process model
-------------
Informers start only in a serving process, lazily on the first ``get_cluster_cache()`` call (so
the runserver autoreloader's parent process and management commands that do not serve never
start them), or from gunicorn's ``post_fork`` hook via ``start()``. Never at import. One set per
process: the cache remembers the pid that built it, and a forked child builds its own (threads do
not survive fork). ``stop()`` stops the informers cleanly (gunicorn ``worker_exit``, atexit).

Public API
----------
``get_cluster_cache() -> ClusterCache``; ``cache.snapshot(namespaces=None) -> Snapshot``;
``Snapshot.jobs/.podgroups/.queues/.pods/.events`` (``KindView``: ``.state`` (KindState),
``.version``, ``.get(ns, name)``, ``.all()``, ``.in_namespace(ns)``, ``len()``,
``.object_version(ns, name)``, ``.lookup(index, value)``); the Snapshot helpers
``podgroup_for_job``, ``job_for_podgroup``, ``pods_for_job``, ``pods_for_podgroup``,
``podgroup_for_pod``, ``jobs_in_queue``, ``podgroups_in_queue``, ``child_queues``, ``events_for``,
``namespaces``; ``cache.wait_for(pred, timeout)`` / ``cache.wait_synced(timeout)`` for tests;
``cache.kind_counters(kind)`` and ``cache.stats()`` (informer counters, for /metrics);
``ClusterCache()`` without a client is an in-memory cache (``cache.store(kind).upsert(obj)``);
``start()``, ``stop()``, ``build_cluster_cache(...)``, ``set_cluster_cache(cache)`` /
``override_cluster_cache(cache)``. Test fixtures: tests/conftest.py.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dashboard.kube.cache import CacheOptions, ClusterCache
from dashboard.kube.informer import InformerOptions
from dashboard.kube.snapshot import KindView, Snapshot
from dashboard.kube.store import KindState

__all__ = [
    "CacheOptions",
    "ClusterCache",
    "InformerOptions",
    "KindState",
    "KindView",
    "Snapshot",
    "build_cluster_cache",
    "get_cluster_cache",
    "on_start",
    "override_cluster_cache",
    "set_cluster_cache",
    "start",
    "stop",
]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_cache: ClusterCache | None = None
_pid: int | None = None
_atexit_registered = False
# Called with the process's cache once its informers started, and at stop() (the history recorder
# registers itself here: dashboard/history/apps.py).
_start_hooks: list[Callable[[ClusterCache], None]] = []
_stop_hooks: list[Callable[[ClusterCache], None]] = []


def on_start(hook: Callable[[ClusterCache], None], stop: Callable[[ClusterCache], None]) -> None:
    """Run ``hook(cache)`` after the process-wide cache started, ``stop(cache)`` before it stops."""
    if hook not in _start_hooks:
        _start_hooks.append(hook)
        _stop_hooks.append(stop)


def options_from_settings() -> CacheOptions:
    """CacheOptions from volcano_ui/settings.py (docs/configuration.md)."""
    from django.conf import settings

    informer = InformerOptions(
        page_size=settings.VOLCANO_UI_LIST_PAGE_SIZE,
        watch_timeout=settings.VOLCANO_UI_WATCH_TIMEOUT,
        inactivity_timeout=float(settings.VOLCANO_UI_WATCH_INACTIVITY_TIMEOUT),
        backoff_max=float(settings.VOLCANO_UI_BACKOFF_MAX),
    )
    return CacheOptions(
        scheduler_names=tuple(settings.VOLCANO_UI_SCHEDULER_NAMES),
        pod_watch=settings.VOLCANO_UI_POD_WATCH,
        events_per_object=settings.VOLCANO_UI_EVENTS_PER_OBJECT,
        events_total=settings.VOLCANO_UI_EVENTS_TOTAL,
        pod_record_seconds=float(settings.VOLCANO_UI_POD_RECORD_SECONDS),
        volcano_namespace=settings.VOLCANO_UI_VOLCANO_NAMESPACE,
        informer=informer,
    )


def build_cluster_cache(
    kubeconfig: str | None = None,
    context: str | None = None,
    mode: str | None = None,
    options: CacheOptions | None = None,
) -> ClusterCache:
    """A new, not yet started ClusterCache for the configured cluster (settings by default).

    When the connection cannot be configured (no kubeconfig yet, bad context) the cache is returned
    anyway with every kind "unreachable" (category "unconfigured") and the loader's message as
    last_error, so pages can say what is wrong instead of failing; once started, its informers
    retry and connect as soon as the kubeconfig file appears or changes.
    """
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from dashboard.kube.client import ConfigSource, KubeClient, Timeouts

    options = options or options_from_settings()
    source = ConfigSource(
        mode or settings.VOLCANO_UI_CLUSTER,
        settings.VOLCANO_UI_KUBECONFIG if kubeconfig is None else kubeconfig,
        settings.VOLCANO_UI_KUBE_CONTEXT if context is None else context,
    )
    timeouts = Timeouts(connect=options.informer.connect_timeout, read=options.informer.request_timeout)
    try:
        configuration = source.load()
    except ImproperlyConfigured as exc:
        # Started before its kubeconfig exists (two terminals started together), or with a bad
        # one: the informers still run, every kind says why it is unreachable, and the client
        # loads the connection as soon as the kubeconfig file appears or changes.
        log.error("%s; retrying whenever the kubeconfig file changes", exc)
        cache = ClusterCache(KubeClient(None, timeouts, source=source, load_error=str(exc)), options)
        for store in cache.stores():
            store.set_state(
                "unreachable", error=f"No usable cluster connection: {exc}", category="unconfigured"
            )
        return cache
    # The client re-reads the kubeconfig when it changes on disk (see KubeClient.reload_if_changed).
    return ClusterCache(KubeClient(configuration, timeouts, source=source), options)


def get_cluster_cache() -> ClusterCache:
    """The process-wide ClusterCache, built and started on first use in this process."""
    global _cache, _pid
    cache = _cache
    if cache is not None and _pid == os.getpid():
        return cache
    with _lock:
        if _cache is None or _pid != os.getpid():
            # After fork the parent's informer threads do not exist here: build a fresh set.
            _cache, _pid = build_cluster_cache(), os.getpid()
            if _cache.client is not None:
                _cache.start()
                _register_atexit()
                for hook in _start_hooks:
                    try:
                        hook(_cache)
                    except Exception:  # a hook never keeps the pages from their cache
                        log.exception("start hook %r failed", hook)
        return _cache


def start() -> ClusterCache:
    """Start the informers now (gunicorn ``post_fork``); same as the first get_cluster_cache()."""
    return get_cluster_cache()


def stop() -> None:
    """Stop this process's informers (gunicorn ``worker_exit``, SIGTERM/atexit). Idempotent."""
    global _cache, _pid
    with _lock:
        cache, owner = _cache, _pid
        _cache, _pid = None, None
    if cache is not None and owner == os.getpid():
        for hook in _stop_hooks:
            try:
                hook(cache)
            except Exception:
                log.exception("stop hook %r failed", hook)
        cache.stop()


def set_cluster_cache(cache: ClusterCache | None) -> ClusterCache | None:
    """Install ``cache`` as this process's cache (tests); returns the previous one (not stopped)."""
    global _cache, _pid
    with _lock:
        previous = _cache
        _cache, _pid = cache, (os.getpid() if cache is not None else None)
    return previous


@contextmanager
def override_cluster_cache(cache: ClusterCache) -> Iterator[ClusterCache]:
    """``with override_cluster_cache(c):`` views calling get_cluster_cache() get ``c``."""
    previous = set_cluster_cache(cache)
    try:
        yield cache
    finally:
        set_cluster_cache(previous)


def _register_atexit() -> None:
    global _atexit_registered
    if not _atexit_registered:
        atexit.register(stop)
        _atexit_registered = True
