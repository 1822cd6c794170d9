"""ClusterCache: the stores of every kind, the informers that feed them, and read snapshots."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any

from dashboard.kube import memory, trim
from dashboard.kube.client import KubeClient
from dashboard.kube.discovery import Discovery
from dashboard.kube.informer import Informer, InformerOptions
from dashboard.kube.kinds import ALL_KINDS, CRONJOBS, DEPLOYMENTS, EVENTS, JOBS, PODS, KindSpec, obj_key
from dashboard.kube.podrecords import DeletedPods
from dashboard.kube.snapshot import Snapshot
from dashboard.kube.store import EventStore, Key, KindStore, event_sort_time
from dashboard.kube.suspensions import CronJobStore
from dashboard.priority import REQUESTS
from dashboard.volcano.events import event_ref
from dashboard.volcano.pods import pod_group_name
from dashboard.volcano.restarts import last_restart

log = logging.getLogger(__name__)

# Worst first: the state a kind fed by several informers (one pod watch per scheduler name) shows.
_STATE_RANK = ("forbidden", "not_installed", "unreachable", "stale", "syncing", "synced")

# Kinds whose events the cache keeps: the Volcano kinds (by API group) and pods it caches.
_VOLCANO_EVENT_KINDS = {
    "Job": "batch.volcano.sh/",
    "CronJob": "batch.volcano.sh/",
    "PodGroup": "scheduling.volcano.sh/",
    "Queue": "scheduling.volcano.sh/",
    "JobFlow": "flow.volcano.sh/",
    "JobTemplate": "flow.volcano.sh/",
    "HyperNode": "topology.volcano.sh/",
}


# A store change as ``listener(kind, before, after)``; see ClusterCache.add_listener.
Listener = Callable[[str, dict[str, Any] | None, dict[str, Any] | None], None]

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
    group-name annotation are then not seen). See docs/cache.md for the measurement."""

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
    # Kinds whose informers start one after the other: each waits (at most 60 s) until every kind
    # before it got an answer to its first list. Pods before events keeps few events waiting for
    # their pod (PodEventStore); any order loses none.
    start_order: tuple[str, ...] = ("pods", "events")
    # Seconds an event of a pod the cache does not hold waits for that pod while the pod watch is
    # live (the watch may deliver a new pod after its first event); then it is discarded.
    held_pod_event_seconds: float = 60.0
    # Deleted pods of Volcano Jobs: their final state is kept this many seconds (0: not kept), at
    # most this many records and about this many bytes (kube/podrecords.py; docs/cache.md).
    pod_record_seconds: float = 86400.0
    pod_records_max: int = 10000
    pod_records_max_bytes: int = 16 * 1024 * 1024
    informer: InformerOptions = field(default_factory=InformerOptions)
    # The namespace of the Volcano components' Deployments (kinds.DEPLOYMENTS).
    volcano_namespace: str = "volcano-system"


class ClusterCache:
    """Process-wide watch-fed cache. ``ClusterCache(client=None)`` is a plain in-memory cache
    (fill it with ``cache.store("jobs").upsert(obj)``) for unit tests of pages and derivations."""

    def __init__(self, client: KubeClient | None = None, options: CacheOptions | None = None):
        self.client = client
        self.options = options or CacheOptions()
        self._changed = threading.Condition()
        self._changes = 0  # notifications so far (under _changed): wait_for sees changes it missed
        # An in-memory cache publishes every write at once: tests upsert and read straight away.
        interval = self.options.publish_interval if client is not None else 0.0
        self._stores: dict[str, KindStore] = {}
        # Completed lists per pods informer (its counters["lists"] when it last became synced)
        # and since when (time.monotonic()) every pod watch is live; None: not all live.
        self._pods_listed: dict[str, int] = {}
        self._pods_live_since: float | None = None
        o = self.options
        self.deleted_pods = DeletedPods(o.pod_record_seconds, o.pod_records_max, o.pod_records_max_bytes)
        pods = PodStore(PODS, on_change=self._notify, publish_interval=interval, records=self.deleted_pods)
        events = self._events_store(pods, interval)
        for spec in ALL_KINDS:
            if spec is PODS:
                self._stores[spec.name] = pods
            elif spec is EVENTS:
                self._stores[spec.name] = events
            elif spec is JOBS:
                self._stores[spec.name] = JobStore(spec, on_change=self._notify, publish_interval=interval)
            elif spec is CRONJOBS:
                cronjobs = CronJobStore(spec, on_change=self._notify, publish_interval=interval)
                self._stores[spec.name] = cronjobs
            else:
                self._stores[spec.name] = KindStore(spec, on_change=self._notify, publish_interval=interval)
        self.informers: list[Informer] = []
        self.memory_releaser = memory.MemoryReleaser(
            self.options.memory_release_interval,
            before=(partial(trim.share.purge, pause=REQUESTS.give_way),),
            before_every=6,
        )
        self._started = False
        self._lock = threading.Lock()
        self.discovery = Discovery(client) if client is not None else None

    def _events_store(self, pods: PodStore, interval: float) -> EventStore:
        o = self.options
        if self.client is None:
            # An in-memory cache keeps every event it is given: there is no pod watch to wait for.
            return EventStore(
                EVENTS,
                per_object=o.events_per_object,
                total=o.events_total,
                on_change=self._notify,
                publish_interval=interval,
            )
        events = PodEventStore(
            EVENTS,
            pods=pods,
            pod_lists=self._pod_lists,
            pods_live_since=lambda: self._pods_live_since,
            wait_seconds=o.held_pod_event_seconds,
            per_object=o.events_per_object,
            total=o.events_total,
            on_change=self._notify,
            publish_interval=interval,
        )
        pods.on_arrival = events.pod_arrived
        return events

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(kind, before, after)`` on every change of every store, from the writing
        thread with the store's lock held (``after`` None: deleted; objects dropped because their
        kind became unreadable are not deleted and are not told). It must only hand off."""
        for store in self._stores.values():
            store.listeners = (*store.listeners, listener)

    def remove_listener(self, listener: Listener) -> None:
        for store in self._stores.values():
            store.listeners = tuple(fn for fn in store.listeners if fn is not listener)

    # -- reading ---------------------------------------------------------------------------
    def store(self, name: str) -> KindStore:
        return self._stores[name]

    def stores(self) -> list[KindStore]:
        """Every kind's store, in the cache's kind order."""
        return list(self._stores.values())

    def snapshot(self, namespaces: frozenset[str] | None = None) -> Snapshot:
        """A consistent read view (see snapshot.py). ``namespaces`` restricts namespaced kinds."""
        if namespaces is not None and not isinstance(namespaces, frozenset):
            namespaces = frozenset(namespaces)
        stores = self._stores
        jobs = self._stores[JOBS.name]
        restarts = jobs.restart_times if isinstance(jobs, JobStore) else None
        cronjobs = self._stores[CRONJOBS.name]
        stops = cronjobs.suspensions if isinstance(cronjobs, CronJobStore) else None
        return Snapshot(
            lambda name: stores[name].data(),
            namespaces,
            deleted_pods=self.deleted_pods.view,
            restart_times=restarts,
            suspensions=stops,
        )

    def wait_for(self, predicate: Callable[[Snapshot], Any], timeout: float = 5.0) -> Any:
        """Block until ``predicate(snapshot)`` is truthy; return its value.

        Re-evaluated after store changes (no polling while nothing changes). Raises TimeoutError,
        naming the kinds' states and sizes, when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        while True:
            with self._changed:
                seen = self._changes
            # Outside the lock: the informers notify under it, and a predicate reading thousands
            # of objects must not hold up their writes (one evaluation per change, each blocking
            # the next change, would make a burst of events arrive at the predicate's pace).
            started = time.monotonic()
            value = predicate(self.snapshot())
            if value:
                return value
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                states = {n: f"{s.state.name}, {len(s)} objects" for n, s in self._stores.items()}
                raise TimeoutError(f"condition not met within {timeout}s; kind states: {states}")
            with self._changed:
                if self._changes == seen:
                    # Short waits: a change may be published up to publish_interval after its
                    # notification.
                    self._changed.wait(min(remaining, max(0.02, self.options.publish_interval)))
                    continue
            # Changes came during the evaluation: evaluate again once the writers had as long as
            # the evaluation took (the predicate uses at most half the interpreter meanwhile).
            time.sleep(min(remaining, now - started))

    def wait_synced(self, timeout: float = 10.0, kinds: Iterable[str] | None = None) -> Snapshot:
        names = tuple(kinds or self._stores)
        self.wait_for(lambda s: all(s.views()[n].state.name == "synced" for n in names), timeout)
        return self.snapshot()

    def _notify(self) -> None:
        with self._changed:
            self._changes += 1
            self._changed.notify_all()

    # -- informers -------------------------------------------------------------------------
    def _accept_pod(self, pod: dict[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        return spec.get("schedulerName") in self.options.scheduler_names or pod_group_name(pod) is not None

    def _accept_event(self, event: dict[str, Any]) -> bool:
        """Events of the Volcano kinds (by API group) and of pods. Whether a pod event's pod is
        watched is decided by the events store (PodEventStore): its pod may not be listed yet."""
        kind = event_ref(event)[0]
        prefix = _VOLCANO_EVENT_KINDS.get(kind)
        if prefix is not None:
            ref = event.get("involvedObject") or {}
            return str(ref.get("apiVersion") or "").startswith(prefix)
        return kind == "Pod"

    def _pod_lists(self) -> tuple[int, ...]:
        """Lists begun so far by each pods informer (Informer counters["lists"] counts a list
        when it starts), in ``self.informers`` order."""
        return tuple(i.counters["lists"] for i in self.informers if i.spec is PODS)

    def _pods_listed_after(self, begun: tuple[int, ...]) -> bool:
        """Whether every pods informer completed a list it began after ``_pod_lists()`` was
        ``begun``: any pod that existed then and is watched is in the pods store (or deleted)."""
        peers = [i for i in self.informers if i.spec is PODS]
        if len(peers) != len(begun):
            return False
        return all(self._pods_listed.get(i.label, 0) > n for i, n in zip(peers, begun, strict=True))

    def _gate(self, kind: str) -> Callable[[threading.Event], None] | None:
        order = self.options.start_order
        if kind not in order or order.index(kind) == 0:
            return None
        before = order[: order.index(kind)]

        def gate(stop: threading.Event) -> None:
            self._wait_for_kinds(before, stop)

        return gate

    def _wait_for_kinds(self, kinds: Iterable[str], stop: threading.Event, timeout: float = 60.0) -> None:
        """Hold an informer until every kind of ``kinds`` answered its first list (or could not),
        at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not stop.is_set() and time.monotonic() < deadline:
                # Any state but "syncing" means that informer got an answer (or none at all):
                # waiting longer would only hide this informer's own state.
                if all(self._stores[k].state.name != "syncing" for k in kinds):
                    return
                self._changed.wait(0.2)

    def _informer_specs(self) -> list[tuple[KindSpec, dict[str, Any]]]:
        specs: list[tuple[KindSpec, dict[str, Any]]] = []
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
                specs.append((spec, {"accept": self._accept_event}))
            elif spec is DEPLOYMENTS:
                specs.append((replace(spec, watch_namespace=self.options.volcano_namespace), {}))
            else:
                specs.append((spec, {}))
        for kind_spec, kwargs in specs:
            kwargs["gate"] = self._gate(kind_spec.name)
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
        if informer.spec is PODS:
            # Before the pods store says "synced": whoever waits for that sees the events settled.
            self._pods_settled(informer, worst.state == "synced")
        # A request of any of them that the API server has not answered yet: the earliest.
        waiting = [w for i in peers if (w := i.waiting_since) is not None]
        store.set_state(
            worst.state,
            error=worst.last_error,
            detail=worst.detail,
            category=worst.error_category,
            waiting_since=min(waiting, default=None),
        )

    def _pods_settled(self, informer: Informer, all_synced: bool) -> None:
        if all_synced:
            if self._pods_live_since is None:
                self._pods_live_since = time.monotonic()
        else:
            self._pods_live_since = None
        if informer.state != "synced":
            return
        # A list ends with "synced" (so does a watch resumed after a failure, when the counter
        # still names the last completed list: a failed list is always retried before a watch).
        self._pods_listed[informer.label] = informer.counters["lists"]
        events = self._stores[EVENTS.name]
        if isinstance(events, PodEventStore):
            events.recheck(self._pods_listed_after)

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


class JobStore(KindStore):
    """The Jobs store; remembers the Restarting transition times it saw per Job (a Job keeps only
    its latest, see volcano/restarts.py), the newest RESTART_TIMES_KEPT, until the Job goes.

    ``restart_times`` {(namespace, name): tuple of datetimes, oldest first} is read without a lock:
    the writer replaces a Job's tuple, never changes one."""

    RESTART_TIMES_KEPT = 8

    def __init__(self, spec: KindSpec, **kw: Any):
        super().__init__(spec, **kw)
        self.restart_times: dict[Key, tuple[datetime, ...]] = {}

    def _put(self, key: Key, obj: dict[str, Any]) -> bool:
        changed = super()._put(key, obj)
        if changed:
            at = last_restart(obj)
            times = self.restart_times.get(key, ())
            if at is not None and at not in times:
                self.restart_times[key] = tuple(sorted((*times, at)))[-self.RESTART_TIMES_KEPT :]
        return changed

    def _remove(self, key: Key, final: dict[str, Any] | None = None, deleted: bool = True) -> bool:
        removed = super()._remove(key, final, deleted)
        if removed:
            self.restart_times.pop(key, None)
        return removed


class PodStore(KindStore):
    """The pods store; tells ``on_arrival(key)`` after every pod a watch delivers, so events that
    arrived before their pod are shown (PodEventStore.pod_arrived). A list settles them instead:
    ClusterCache rechecks them when a pods informer becomes synced."""

    on_arrival: Callable[[Key], None] | None = None

    def __init__(self, spec: KindSpec, records: DeletedPods | None = None, **kw: Any):
        super().__init__(spec, **kw)
        self.records = records

    def _remove(self, key: Key, final: dict[str, Any] | None = None, deleted: bool = True) -> bool:
        """As KindStore._remove; a deleted pod of a Volcano Job is recorded (``final``: its state
        as the watch's DELETED event delivered it, else the last one stored). A pod only dropped
        from the cache (``deleted`` False: ``clear``) is not."""
        old = self._objects.get(key)
        removed = super()._remove(key, final, deleted)
        if removed and deleted and self.records is not None and old is not None:
            self.records.add(final if final is not None else old)
        return removed

    def delete(self, obj_or_key: dict[str, Any] | Key) -> bool:
        if not isinstance(obj_or_key, dict):
            return super().delete(obj_or_key)
        with self._lock:
            changed = self._remove(obj_key(obj_or_key), final=obj_or_key)
        if changed:
            self._changed()
        return changed

    def holds(self, key: Key) -> bool:
        """Whether the pod ``key`` is in the store now (the writer's state, not a published view,
        which may be up to ``publish_interval`` old)."""
        return key in self._objects

    def upsert(self, obj: dict[str, Any]) -> bool:
        changed = super().upsert(obj)
        if self.on_arrival is not None:
            self.on_arrival(obj_key(obj))
        return changed


@dataclass(slots=True)
class _Held:
    event: dict[str, Any]
    pod: Key
    since: float  # time.monotonic() when first held
    pod_lists: tuple[int, ...]  # ClusterCache._pod_lists() then


class PodEventStore(EventStore):
    """The events store of a watching cache: an event of a pod the pods store does not hold is
    held aside (not shown, not counted) until that pod arrives, then stored; it is discarded once
    the pods are known not to include it.

    An event can precede its pod: the events informer may list before the pods informer, or the
    pod watch delivers a new pod after the events watch delivered its first event. Pods of other
    schedulers have events too, so a held event is discarded when either
    - every pods informer completed a list begun after the event was held, without the pod; or
    - it waited ``wait_seconds`` while every pod watch was live (checked on later writes).
    At most ``per_object`` events per pod and ``total`` in all are held (newest kept), the bounds
    of the store itself, so holding drops no event the store would keep.

    Locking: ``_hold_lock`` is taken before the store's lock, never after, and change
    notifications wait until it is released (a ``ClusterCache.wait_for`` predicate may read the
    held counts). The pods store calls ``pod_arrived`` after its write, so a pod is either seen by
    a hold or settles it.
    """

    def __init__(
        self,
        spec: KindSpec,
        *,
        pods: PodStore,
        pod_lists: Callable[[], tuple[int, ...]],
        pods_live_since: Callable[[], float | None],
        wait_seconds: float,
        **kw: Any,
    ):
        super().__init__(spec, **kw)
        self._pods = pods
        self._pod_lists = pod_lists
        self._pods_live_since = pods_live_since
        self.wait_seconds = wait_seconds
        self._hold_lock = threading.Lock()
        self._holder: int | None = None  # thread holding _hold_lock: it notifies on release
        self._notify_due = False
        self._held: dict[Key, _Held] = {}  # event key -> held event, in order of first hold
        self._held_by_pod: dict[Key, dict[Key, None]] = {}
        self._next_expiry = 0.0
        self._counts = {"moved": 0, "discarded": 0, "overflow": 0}
        self._list_floor = 0  # events bound_listed kept at its last prune of the running list

    # -- reading (lock-free: one dict[str, Any] read each) --------------------------------------------
    def held_counts(self) -> dict[str, int]:
        """{"held": waiting now, "moved": stored when their pod arrived, "discarded": no such
        watched pod, "overflow": dropped by the bounds} (counts since start)."""
        return {"held": len(self._held), **self._counts}

    def held_event(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        held = self._held.get((namespace, name))
        return held.event if held is not None else None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._hold_lock:
            self._holder = threading.get_ident()
            try:
                yield
            finally:
                self._holder = None
        if self._notify_due:
            self._notify_due = False
            super()._changed()

    def _changed(self) -> None:
        if self._holder == threading.get_ident():
            self._notify_due = True
        else:
            super()._changed()

    # -- the informer's writes -----------------------------------------------------------
    def _waits(self, event: dict[str, Any]) -> Key | None:
        """The pod key ``event`` waits for, or None when it can be stored now."""
        kind, ns, name = event_ref(event)
        if kind != "Pod" or self._pods.holds((ns, name)):
            return None
        return (ns, name)

    def upsert(self, obj: dict[str, Any]) -> bool:
        with self._locked():
            pod = self._waits(obj)
            if pod is None:
                self._unhold(obj_key(obj))
                changed = super().upsert(obj)
            else:
                self._hold(obj, pod, time.monotonic(), self._pod_lists())
                # A stored version of it (its pod left the store since) is not shown either.
                changed = super().delete(obj_key(obj))
        self._expire_due()
        return changed

    def delete(self, obj_or_key: dict[str, Any] | Key) -> bool:
        key = obj_key(obj_or_key) if isinstance(obj_or_key, dict) else obj_or_key
        with self._locked():
            self._unhold(key)
            return super().delete(key)

    def bound_listed(self, objs: list[dict[str, Any]], final: bool = False) -> list[dict[str, Any]]:
        """As EventStore.bound_listed, with the events that would be held bounded apart: events
        of pods not listed yet do not push out the ones to store. Pruned when the list holds
        ``list_slack`` more than it kept at the last prune (at least the cap)."""
        if not final and len(objs) <= max(self.total, self._list_floor) + self.list_slack:
            return objs
        stored: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []
        for obj in objs:
            (stored if self._waits(obj) is None else waiting).append(obj)
        kept = super().bound_listed(stored, final=True) + super().bound_listed(waiting, final=True)
        kept.sort(key=event_sort_time)
        self._list_floor = 0 if final else len(kept)
        return kept

    def replace(
        self,
        objs: Iterable[dict[str, Any]],
        owns: Callable[[dict[str, Any]], bool] | None = None,
        *,
        deleted: bool = True,
    ) -> tuple[int, int]:
        """A full list: the stored events and the held ones become exactly the listed ones."""
        with self._locked():
            now, lists = time.monotonic(), self._pod_lists()
            previous, self._held, self._held_by_pod = self._held, {}, {}
            stored: list[dict[str, Any]] = []
            for obj in objs:
                pod = self._waits(obj)
                if pod is None:
                    stored.append(obj)
                    continue
                before = previous.get(obj_key(obj))
                if before is not None:
                    self._hold(obj, pod, before.since, before.pod_lists)
                else:
                    self._hold(obj, pod, now, lists)
            return super().replace(stored, owns=owns, deleted=deleted)

    # -- settling ----------------------------------------------------------------------------
    def pod_arrived(self, pod: Key) -> None:
        """Store the events held for ``pod`` (called by the pods store after writing it)."""
        with self._locked():
            keys = self._held_by_pod.pop(pod, None)
            if keys:
                for key in keys:
                    held = self._held.pop(key)
                    self._counts["moved"] += 1
                    super().upsert(held.event)
        self._expire_due()

    def recheck(self, listed_after: Callable[[tuple[int, ...]], bool]) -> None:
        """After a pods list: store the held events whose pod is now in the store, discard those
        whose pod ``listed_after(pod_lists)`` says a later list would have included."""
        with self._locked():
            for key, held in list(self._held.items()):
                if self._pods.holds(held.pod):
                    self._unhold(key)
                    self._counts["moved"] += 1
                    super().upsert(held.event)
                elif listed_after(held.pod_lists):
                    self._unhold(key)
                    self._counts["discarded"] += 1

    def expire_held(self, now: float) -> None:
        """Discard the events held for ``wait_seconds`` (time.monotonic() seconds at ``now``)
        while every pod watch was live; nothing while one is not (its pods may still come)."""
        live_since = self._pods_live_since()
        limit = now - self.wait_seconds
        if live_since is None or live_since > limit:
            return
        with self._locked():
            while self._held:
                key, held = next(iter(self._held.items()))
                if held.since > limit:
                    break
                self._unhold(key)
                self._counts["discarded"] += 1

    def _expire_due(self) -> None:
        # At most once a second: the held events are in order of first hold, so this is O(expired).
        now = time.monotonic()
        if now >= self._next_expiry:
            self._next_expiry = now + 1.0
            self.expire_held(now)

    # -- the held events (call with _hold_lock held) ------------------------------------------
    def _hold(self, event: dict[str, Any], pod: Key, since: float, pod_lists: tuple[int, ...]) -> None:
        key = obj_key(event)
        held = self._held.get(key)
        if held is not None:
            # A newer version keeps its place and age: the pod was not seen since the first one.
            held.event = event
            return
        self._held[key] = _Held(event, pod, since, pod_lists)
        of_pod = self._held_by_pod.setdefault(pod, {})
        of_pod[key] = None
        if len(of_pod) > self.per_object:
            oldest = min(of_pod, key=lambda k: event_sort_time(self._held[k].event))
            self._unhold(oldest)
            self._counts["overflow"] += 1
        while len(self._held) > self.total:
            self._unhold(next(iter(self._held)))
            self._counts["overflow"] += 1

    def _unhold(self, key: Key) -> None:
        held = self._held.pop(key, None)
        if held is None:
            return
        of_pod = self._held_by_pod.get(held.pod)
        if of_pod is not None:
            of_pod.pop(key, None)
            if not of_pod:
                del self._held_by_pod[held.pod]


def _owned_by_scheduler(name: str) -> Callable[[dict[str, Any]], bool]:
    def owns(pod: dict[str, Any]) -> bool:
        return (pod.get("spec") or {}).get("schedulerName") == name

    return owns
