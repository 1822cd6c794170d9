"""ClusterCache: the stores of every kind, the informers that feed them, and read snapshots."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dashboard.kube import memory, trim
from dashboard.kube.client import KubeClient
from dashboard.kube.discovery import Discovery
from dashboard.kube.informer import Informer, InformerOptions
from dashboard.kube.kinds import ALL_KINDS, EVENTS, PODS, KindSpec, event_ref, pod_group_name
from dashboard.kube.snapshot import Snapshot
from dashboard.kube.store import EventStore, KindStore

log = logging.getLogger(__name__)

# Worst first: the state a kind fed by several informers (one pod watch per scheduler name) shows.
_STATE_RANK = ("forbidden", "not_installed", "unreachable", "stale", "syncing", "synced")

# Kinds whose events the cache keeps: the Volcano kinds (by API group) and pods it caches.
_VOLCANO_EVENT_KINDS = {
    "Job": "batch.volcano.sh/",
    "PodGroup": "scheduling.volcano.sh/",
    "Queue": "scheduling.volcano.sh/",
}


_COUNTER_KEYS = ("lists", "watches", "relists_410", "relists_too_large", "events", "bookmarks", "errors")


@dataclass(frozen=True)
class KindCounters:
    """Informer counters of one kind since the cache started (see ClusterCache.kind_counters)."""

    lists: int
    watches: int
    watch_restarts: int
    relists_410: int
    relists_too_large: int  # after 504 "Too large resource version" (informer.py)
    events: int
    bookmarks: int
    errors: int
    last_event_at: datetime | None


@dataclass
class CacheOptions:
    """How the cache watches. ``pod_watch``: "all" (one unfiltered pod watch, filtered here by
    schedulerName or the group-name annotation) or "selector" (one watch per scheduler name with a
    ``spec.schedulerName`` field selector; pods of other schedulers that only carry the
    group-name annotation are then not seen). See README "Cluster cache" for the measurement."""

    scheduler_names: tuple[str, ...] = ("volcano",)
    pod_watch: str = "all"
    events_per_object: int = 50
    events_total: int = 20000
    # Seconds between two published views of a changing kind (see store.KindStore); 0 = every read
    # sees every write (in-memory caches for unit tests).
    publish_interval: float = 0.05
    # Seconds between two releases of the C allocator's free memory while the informers run
    # (memory.MemoryReleaser; 0 = only after full lists).
    memory_release_interval: float = 10.0
    informer: InformerOptions = field(default_factory=InformerOptions)


class ClusterCache:
    """Process-wide watch-fed cache. ``ClusterCache(client=None)`` is a plain in-memory cache
    (fill it with ``cache.store("jobs").upsert(obj)``) for unit tests of pages and derivations."""

    def __init__(self, client: KubeClient | None = None, options: CacheOptions | None = None):
        self.client = client
        self.options = options or CacheOptions()
        self._changed = threading.Condition()
        # An in-memory cache publishes every write at once: tests upsert and read straight away.
        interval = self.options.publish_interval if client is not None else 0.0
        self._stores: dict[str, KindStore] = {}
        for spec in ALL_KINDS:
            if spec is EVENTS:
                store: KindStore = EventStore(
                    spec,
                    per_object=self.options.events_per_object,
                    total=self.options.events_total,
                    on_change=self._notify,
                    publish_interval=interval,
                )
            else:
                store = KindStore(spec, on_change=self._notify, publish_interval=interval)
            self._stores[spec.name] = store
        self.informers: list[Informer] = []
        self.memory_releaser = memory.MemoryReleaser(
            self.options.memory_release_interval, before=(trim.share.purge,), before_every=6
        )
        self._started = False
        self._lock = threading.Lock()
        self.discovery = Discovery(client) if client is not None else None

    # -- reading ---------------------------------------------------------------------------
    def store(self, name: str) -> KindStore:
        return self._stores[name]

    def snapshot(self, namespaces: frozenset[str] | None = None) -> Snapshot:
        """A consistent read view (see snapshot.py). ``namespaces`` restricts namespaced kinds."""
        if namespaces is not None and not isinstance(namespaces, frozenset):
            namespaces = frozenset(namespaces)
        return Snapshot({name: store.data() for name, store in self._stores.items()}, namespaces)

    def wait_for(self, predicate: Callable[[Snapshot], Any], timeout: float = 5.0) -> Any:
        """Block until ``predicate(snapshot)`` is truthy; return its value.

        Re-evaluated after every store change (no polling sleep). Raises TimeoutError, naming the
        kinds' states, when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = predicate(self.snapshot())
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    states = {n: s.state.name for n, s in self._stores.items()}
                    raise TimeoutError(f"condition not met within {timeout}s; kind states: {states}")
                # Short waits: a change may be published up to publish_interval after its notification.
                self._changed.wait(min(remaining, max(0.02, self.options.publish_interval)))

    def wait_synced(self, timeout: float = 10.0, kinds: Iterable[str] | None = None) -> Snapshot:
        names = tuple(kinds or self._stores)
        self.wait_for(lambda s: all(s.views()[n].state.name == "synced" for n in names), timeout)
        return self.snapshot()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    # -- informers -------------------------------------------------------------------------
    def _accept_pod(self, pod: dict) -> bool:
        spec = pod.get("spec") or {}
        return spec.get("schedulerName") in self.options.scheduler_names or pod_group_name(pod) is not None

    def _accept_event(self, event: dict) -> bool:
        kind, ns, name = event_ref(event)
        ref = event.get("involvedObject") or {}
        prefix = _VOLCANO_EVENT_KINDS.get(kind)
        if prefix is not None:
            return str(ref.get("apiVersion") or "").startswith(prefix)
        if kind == "Pod":
            # Events of pods the cache does not hold (not scheduled by Volcano) are not kept.
            return self._stores["pods"].data().objects.get((ns, name)) is not None
        return False

    def _wait_for_pods(self, stop: threading.Event, timeout: float = 60.0) -> None:
        """Hold the events informer until the pods are listed (or cannot be), at most ``timeout``:
        pod events are kept only for cached pods, so listing events first would drop them."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not stop.is_set() and time.monotonic() < deadline:
                # Any state but "syncing" means the pods informer got an answer (or none at all):
                # waiting longer would only hide the events informer's own state.
                if self._stores["pods"].state.name != "syncing":
                    return
                self._changed.wait(0.2)

    def _informer_specs(self) -> list[tuple[KindSpec, dict]]:
        specs: list[tuple[KindSpec, dict]] = []
        for spec in ALL_KINDS:
            if spec is PODS:
                if self.options.pod_watch == "selector":
                    for scheduler in self.options.scheduler_names:
                        specs.append(
                            (
                                spec,
                                {
                                    "field_selector": f"spec.schedulerName={scheduler}",
                                    "owns": _owned_by_scheduler(scheduler),
                                    "label": f"pods[{scheduler}]",
                                },
                            )
                        )
                else:
                    specs.append((spec, {"accept": self._accept_pod}))
            elif spec is EVENTS:
                specs.append((spec, {"accept": self._accept_event, "gate": self._wait_for_pods}))
            else:
                specs.append((spec, {}))
        return specs

    def start(self) -> ClusterCache:
        """Start one informer thread per kind (idempotent). Requires a client."""
        with self._lock:
            if self._started:
                return self
            if self.client is None or self.discovery is None:
                raise RuntimeError("an in-memory ClusterCache has no informers to start")
            # Before the informer threads exist: each thread that allocates concurrently would
            # otherwise get its own glibc heap holding freed list pages (memory.py).
            memory.limit_arenas()
            memory.tune_gc()
            for spec, kwargs in self._informer_specs():
                informer = Informer(
                    spec,
                    self.client,
                    self._stores[spec.name],
                    self.discovery,
                    self.options.informer,
                    state_sink=self._informer_state,
                    **kwargs,
                )
                self.informers.append(informer)
            self._started = True
            for informer in self.informers:
                informer.start()
            self.memory_releaser.start()
        return self

    def stop(self, join_timeout: float = 5.0) -> None:
        """Stop every informer and close the connections (idempotent)."""
        with self._lock:
            informers, self.informers = self.informers, []
            self._started = False
        for informer in informers:
            informer._stop.set()
        self.memory_releaser.stop(join_timeout)
        for informer in informers:
            informer.stop(join_timeout)
        if self.client is not None:
            self.client.close()

    @property
    def started(self) -> bool:
        return self._started

    def _informer_state(self, informer: Informer) -> None:
        store = self._stores[informer.spec.name]
        peers = [i for i in self.informers if i.spec.name == informer.spec.name] or [informer]
        worst = min(peers, key=lambda i: _STATE_RANK.index(i.state))
        store.set_state(
            worst.state, error=worst.last_error, detail=worst.detail, category=worst.error_category
        )

    def kind_counters(self, kind: str) -> KindCounters:
        """Counters of the informer(s) feeding ``kind`` (jobs, podgroups, ...), summed; for
        /metrics. ``watch_restarts`` counts watch requests after each list's first one."""
        peers = [i for i in self.informers if i.spec.name == kind]
        total = {key: sum(i.counters[key] for i in peers) for key in _COUNTER_KEYS}
        last = max((i.last_event_at for i in peers if i.last_event_at is not None), default=None)
        return KindCounters(
            lists=total["lists"],
            watches=total["watches"],
            watch_restarts=max(0, total["watches"] - total["lists"]),
            relists_410=total["relists_410"],
            relists_too_large=total["relists_too_large"],
            events=total["events"],
            bookmarks=total["bookmarks"],
            errors=total["errors"],
            last_event_at=last,
        )

    def stats(self) -> dict[str, dict[str, int]]:
        """Per-informer counters (lists, pages, watches, events, bookmarks, errors)."""
        return {i.label: dict(i.counters) for i in self.informers}


def _owned_by_scheduler(name: str) -> Callable[[dict], bool]:
    def owns(pod: dict) -> bool:
        return (pod.get("spec") or {}).get("schedulerName") == name

    return owns
