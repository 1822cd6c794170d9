"""Thread-safe per-kind object stores with copy-on-write publication and incremental indexes.

One ``KindStore`` per watched kind. One writer (the kind's informer thread(s)) applies watch events;
any number of readers call ``data()`` and get an immutable ``KindData``.

Why copy-on-write at publication: readers must never see a half-applied change and must never
block the writer for long, and a snapshot must be cheap at 50,000 pods. ``data()`` returns the
current structures by reference and marks them shared; the *next write* copies the part it
changes first. The structures are built to be copied in parts (cowmap.py): objects, versions and
each index are ShardedMaps (about sqrt(n) dicts by key hash: 256 of ~200 entries at 50,000 pods)
and the sorted order is a SortedChunks (chunks of at most 256 entries), so a write after a
publication copies one shard per mapping and one chunk, never the whole store (a whole copy:
~15 ms at 50,000 pods, ``python -m bench.bench_publish``). A publication costs microseconds (it
shares the shards and chunks), an unchanged kind costs nothing, and the copy cost is paid at most
once per read-after-write pair, never per reader. Index buckets are copy-on-write too: a write
copies only the buckets it touches, and of a bucket above cowmap.SET_CHUNK keys one or two chunks
(cowmap.ChunkedSet).

Objects are plain dicts that are never mutated after they enter the store (writers replace them),
so sharing them between snapshots is safe. Readers must treat them as read-only.

Change counters: ``KindData.version`` increments on every applied change of the kind;
``object_version(key)`` is the kind version at the object's last change, so a polled fragment can
compare integers to tell "unchanged" without rendering. A re-list that returns an object with the
same resourceVersion does not count as a change.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from dashboard.kube import cowmap
from dashboard.kube.cowmap import ChunkedSet, ChunkedSetView, ShardedMap, SortedChunks, SortedView
from dashboard.kube.kinds import KindSpec, obj_key
from dashboard.volcano.events import event_ref

Key = tuple[str | None, str]
# An index bucket (the keys of the objects under one index value, in the order of their last
# write, which is the order of their change counters) is a tuple while it holds at most
# SMALL_BUCKET keys, a dict used as an ordered set up to cowmap.SET_CHUNK keys, then a
# cowmap.ChunkedSet, published as a ChunkedSetView. Most buckets hold one key (the uid, owner,
# PodGroup, Job and involved-object indexes: ~84,000 buckets at the large scale): a 1-tuple takes
# 48 bytes, a dict 224 (bench/bench_memory.py, docs/cache.md). Tuples are immutable, so a
# published bucket needs no copy-on-write; a write replaces it. A dict is copied whole by the
# first write after a publication, a ChunkedSet one or two chunks of it: a bucket of thousands
# of keys (a phase, a namespace) costs a write no more than one of SET_CHUNK keys.
SMALL_BUCKET = 8
Bucket = tuple[Key, ...] | dict[Key, None] | ChunkedSetView[Key]


def sort_key(key: Key) -> tuple[str, str]:
    """(namespace, name) order of ``KindView.all()``; cluster-scoped keys have namespace None."""
    return (key[0] or "", key[1])


STATES = ("syncing", "synced", "stale", "forbidden", "not_installed", "unreachable")


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class KindState:
    """The sync state of one kind, as the pages show it.

    ``name`` is one of STATES. ``since`` is when this state began (for "stale since T");
    ``synced_at`` when the kind last completed a full list (None: never); ``last_error`` the last
    error's text ("" when none); ``detail`` extra words (e.g. the served version when unsupported);
    ``error_category`` of the last error (client.KubeError.category: "rejected" = credentials or
    TLS trust rejected, "unreachable" = no connection, "" = other or none).
    ``live_until`` is the last moment the cached objects were known current: while "synced" the
    watch keeps them current (the field is then the moment the kind last left "synced", or None);
    once the kind leaves "synced" (watch broken, re-list failing) it stays at that moment, which
    is later than ``synced_at`` whenever watch events were applied after the last full list.
    ``waiting_since``: when the kind's informer sent the list or watch request the API server has
    not answered yet (no response headers), while the kind is not "synced"; None when no request
    waits. ``last_error`` is then the cause of the previous attempt's end, not the current one.
    """

    name: str = "syncing"
    since: datetime | None = None
    last_error: str = ""
    synced_at: datetime | None = None
    detail: str = ""
    error_category: str = ""
    live_until: datetime | None = None
    waiting_since: datetime | None = None

    @property
    def current_at(self) -> datetime | None:
        """When the cached objects were last known current, for a kind that is not "synced":
        ``live_until`` (left "synced" then), else the last full list (``synced_at``), else None."""
        return self.live_until or self.synced_at

    @property
    def is_usable(self) -> bool:
        """True when the cached objects can be shown (possibly stale)."""
        return self.name in ("synced", "stale")


class KindData:
    """An immutable published view of one kind (shared by all readers of that version).

    ``objects``: {(namespace|None, name): obj}; ``versions``: {(ns, name): int};
    ``indexes``: {index_name: {index_key: bucket}}, a bucket being the keys of the objects under
    that index key in the order of their last write, a tuple, a dict used as an ordered set or a
    ChunkedSetView (SMALL_BUCKET; read it with ``len``, ``in`` and iteration only);
    ``order``: the keys of ``objects`` and their objects in ``sort_key`` order, kept by the writer
    incrementally (``sorted_keys()``, ``sorted_objects()``, ``sorted_items()``).
    """

    __slots__ = ("spec", "objects", "versions", "indexes", "version", "state", "_order")

    def __init__(
        self,
        spec: KindSpec,
        objects: Mapping[Key, dict[str, Any]],
        versions: Mapping[Key, int],
        indexes: dict[str, Mapping[Any, Bucket]],
        version: int,
        state: KindState,
        order: SortedView[Key, dict[str, Any]],
    ) -> None:
        self.spec: KindSpec = spec
        self.objects: Mapping[Key, dict[str, Any]] = objects
        self.versions: Mapping[Key, int] = versions
        self.indexes: dict[str, Mapping[Any, Bucket]] = indexes
        self.version: int = version
        self.state: KindState = state
        self._order = order

    def sorted_keys(self) -> list[Key]:
        """Keys sorted by (namespace, name), a new list: O(n), the writer maintains the order.

        The writer inserts and removes with bisect: re-sorting per published version would cost
        44 % of overview time at 50,000 churning pods (py-spy, docs/benchmarks.md).
        """
        return self._order.keys()

    def sorted_objects(self) -> list[dict[str, Any]]:
        """The objects in ``sorted_keys()`` order (a new list, the caller's to change)."""
        return self._order.values()

    def sorted_items(self) -> Iterator[tuple[Key, dict[str, Any]]]:
        """(key, object) pairs in ``sorted_keys()`` order."""
        return self._order.items()

    def iter_objects(self) -> Iterator[dict[str, Any]]:
        """The objects in ``sorted_keys()`` order without building a list. A walk of every
        object goes this way rather than through ``objects``: a list is stored in this order,
        so its objects lie in memory in it, where the shards' order is random."""
        return self._order.iter_values()

    def lookup(self, index: str, value: Any) -> list[dict[str, Any]]:
        bucket = self.indexes.get(index, {}).get(value)
        if not bucket:
            return []
        get = self.objects.get
        return [obj for obj in map(get, bucket) if obj is not None]


class KindStore:
    """The writer side of one kind. All mutating methods are safe to call from several threads."""

    def __init__(
        self, spec: KindSpec, on_change: Callable[[], None] | None = None, publish_interval: float = 0.0
    ):
        self.spec = spec
        # With publish_interval > 0 a new view is published at most that often (seconds): readers
        # may see data up to that old, and the copy-on-write copies are bounded to 1/interval per
        # second however many readers poll a kind that changes continuously (README numbers).
        self.publish_interval = publish_interval
        self._last: KindData | None = None
        self._last_at = 0.0
        self.copies = 0  # copy-on-write copies made so far (benchmark figure)
        self.bucket_copied = 0  # index bucket entries copied by copy-on-write (benchmark figure)
        self._lock = threading.Lock()
        # Sharded (cowmap.py): the first write after a publication copies one shard, not all.
        self._objects: ShardedMap[Key, dict[str, Any]] = ShardedMap()
        self._versions: ShardedMap[Key, int] = ShardedMap()
        # Keys in sort_key order with their objects, in chunks (cowmap.SortedChunks): an insertion
        # or removal per change is cheaper than an O(n log n) sort per published version.
        # replace() re-sorts once instead (bulk).
        self._order: SortedChunks[Key, dict[str, Any]] = SortedChunks(sort_key)
        self._bulk = self._bulk_dirty = False
        self._indexes: dict[str, ShardedMap[Any, Bucket]] = {name: ShardedMap() for name in spec.indexers}
        self._indexers = spec.indexers
        # The writer's side of the buckets above SET_CHUNK keys; the indexes hold their views.
        self._chunked: dict[str, dict[Any, ChunkedSet[Key]]] = {name: {} for name in spec.indexers}
        # Copy-on-write bookkeeping: which mappings the last published KindData shares with us.
        self._shared = False
        # Per index, the values whose bucket was written since the last publication: a dict
        # bucket is then the writer's own copy, a ChunkedSet knows which chunks it shares.
        self._owned_buckets: dict[str, set[Any]] = {name: set() for name in spec.indexers}
        self._version = 0
        self._state = KindState(name="syncing", since=utcnow())
        self._published: KindData | None = None
        self._on_change = on_change
        # Called as listener(kind, before, after) for every change, with the lock held: ``after``
        # None is a deletion (``before``: the last state). Listeners must only hand off (a queue).
        self.listeners: tuple[Callable[[str, dict[str, Any] | None, dict[str, Any] | None], None], ...] = ()

    # -- readers -------------------------------------------------------------------------
    def data(self) -> KindData:
        """Return the current immutable view; O(1) when nothing changed since the last call."""
        published = self._published
        if published is not None:
            return published
        last = self._last
        if last is not None and self.publish_interval:
            if time.monotonic() - self._last_at < self.publish_interval:
                return last
            # A reader never waits for a write in progress: the view it gets may be up to that
            # write older, and the next reader publishes. (Waiting, a request gave up the
            # interpreter lock and then queued for it again behind the writer.)
            if not self._lock.acquire(blocking=False):
                return last
        else:
            self._lock.acquire()
        try:
            if self._published is None:
                self._shared = True
                for owned in self._owned_buckets.values():
                    owned.clear()
                self._published = KindData(
                    self.spec,
                    self._objects.publish(),
                    self._versions.publish(),
                    {name: idx.publish() for name, idx in self._indexes.items()},
                    self._version,
                    self._state,
                    self._order.publish(),
                )
                self._last, self._last_at = self._published, time.monotonic()
            return self._published
        finally:
            self._lock.release()

    @property
    def state(self) -> KindState:
        return self._state

    @property
    def version(self) -> int:
        return self._version

    def __len__(self) -> int:
        return len(self._objects)

    def copied(self) -> int:
        """Entries copied by copy-on-write so far in every structure (benchmark figure): shards
        of the objects, change counters and indexes, chunks of the order, index buckets."""
        maps: list[ShardedMap[Any, Any]] = [self._objects, self._versions, *self._indexes.values()]
        return sum(m.copied for m in maps) + self._order.copied + self.copied_buckets()

    def copied_buckets(self) -> int:
        """Entries of index buckets copied by copy-on-write so far (benchmark figure)."""
        return self.bucket_copied + sum(cs.copied for sets in self._chunked.values() for cs in sets.values())

    # -- writer helpers (call with self._lock held) ---------------------------------------
    def _unshare(self) -> None:
        # The structures copy the parts they write themselves (cowmap.py).
        if self._shared:
            self.copies += 1
            self._shared = False
        self._published = None

    def _bucket(self, index: str, value: Any) -> dict[Key, None]:
        """The dict bucket under ``value`` (present), copied first when a published view shares it."""
        idx = self._indexes[index]
        owned = self._owned_buckets[index]
        bucket = idx[value]
        assert isinstance(bucket, dict)
        if value not in owned:
            self.bucket_copied += len(bucket)
            bucket = idx[value] = bucket.copy()  # a clone of the table (cowmap.ShardedMap._writable)
            owned.add(value)
        return bucket

    def _chunked_set(self, index: str, value: Any) -> ChunkedSet[Key]:
        """The ChunkedSet under ``value`` (present), its chunks marked shared first when a
        published view may share them."""
        chunked = self._chunked[index][value]
        owned = self._owned_buckets[index]
        if value not in owned:
            chunked.share()
            owned.add(value)
        return chunked

    def _index_remove(self, key: Key, obj: dict[str, Any], position: int | None) -> None:
        """Remove ``key`` (``obj``'s, stored at change counter ``position``) from its buckets."""
        for name, fn in self._indexers.items():
            idx = self._indexes[name]
            for value in fn(obj):
                bucket = idx.get(value)
                if bucket is None:
                    continue
                if type(bucket) is tuple:
                    if key not in bucket:
                        continue
                    rest = tuple(k for k in bucket if k != key)
                    if rest:
                        idx[value] = rest
                    else:
                        del idx[value]
                elif type(bucket) is dict:
                    if key not in bucket:
                        continue
                    bucket = self._bucket(name, value)
                    del bucket[key]
                    if not bucket:
                        del idx[value]
                        self._owned_buckets[name].discard(value)
                else:
                    chunked = self._chunked_set(name, value)
                    if not chunked.discard(key, position):
                        continue
                    single = chunked.single()
                    if single is None:
                        idx[value] = chunked.view()
                        continue
                    # Down to one chunk: a dict bucket again (the writer's own, or shared).
                    del self._chunked[name][value]
                    self.bucket_copied += chunked.copied
                    idx[value] = single[0]
                    if not single[1]:
                        self._owned_buckets[name].discard(value)

    def _index_add(self, key: Key, obj: dict[str, Any], position: int) -> None:
        """Add ``key`` (``obj``'s, about to get change counter ``position``) to its buckets."""
        for name, fn in self._indexers.items():
            idx = self._indexes[name]
            for value in fn(obj):
                bucket = idx.get(value)
                if bucket is None:
                    idx[value] = (key,)
                elif type(bucket) is tuple:
                    if key in bucket:
                        continue
                    if len(bucket) < SMALL_BUCKET:
                        idx[value] = (*bucket, key)
                    else:
                        grown = dict.fromkeys(bucket)
                        grown[key] = None
                        idx[value] = grown
                        self._owned_buckets[name].add(value)
                elif type(bucket) is dict:
                    if key in bucket:
                        continue
                    if len(bucket) < cowmap.SET_CHUNK:
                        self._bucket(name, value)[key] = None
                        continue
                    # The dict, the writer's own or shared, becomes the first chunk.
                    owned = self._owned_buckets[name]
                    chunked = ChunkedSet(bucket, owned=value in owned)
                    owned.add(value)
                    chunked.add(key, position)
                    self._chunked[name][value] = chunked
                    idx[value] = chunked.view()
                else:
                    chunked = self._chunked_set(name, value)
                    if chunked.add(key, position):
                        idx[value] = chunked.view()

    def _put(self, key: Key, obj: dict[str, Any]) -> bool:
        old = self._objects.get(key)
        if old is not None and _rv(obj) and _rv(old) == _rv(obj):
            return False
        self._unshare()
        if old is not None:
            self._index_remove(key, old, self._versions.get(key))
        if self._bulk:
            self._bulk_dirty = True
        else:
            self._order.set(key, obj)
        self._objects[key] = obj
        self._version += 1
        self._index_add(key, obj, self._version)
        self._versions[key] = self._version
        for listener in self.listeners:
            listener(self.spec.name, old, obj)
        return True

    def _remove(self, key: Key, final: dict[str, Any] | None = None, deleted: bool = True) -> bool:
        """Remove ``key``; ``deleted`` False: the object was only dropped from the cache (clear),
        not deleted in the cluster (subclasses that remember deletions skip it)."""
        old = self._objects.get(key)
        if old is None:
            return False
        if deleted:
            # Listeners hear of deletions only: an object dropped by clear() still exists.
            for listener in self.listeners:
                listener(self.spec.name, final if final is not None else old, None)
        self._unshare()
        del self._objects[key]
        if self._bulk:
            self._bulk_dirty = True
        else:
            self._order.remove(key)
        self._index_remove(key, old, self._versions.pop(key, None))
        self._version += 1
        return True

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    # -- writer API -----------------------------------------------------------------------
    def upsert(self, obj: dict[str, Any]) -> bool:
        """Insert or replace ``obj`` (already trimmed). Returns True when the store changed."""
        with self._lock:
            changed = self._put(obj_key(obj), obj)
        if changed:
            self._changed()
        return changed

    def delete(self, obj_or_key: dict[str, Any] | Key) -> bool:
        key = obj_key(obj_or_key) if isinstance(obj_or_key, dict) else obj_or_key
        with self._lock:
            changed = self._remove(key)
        if changed:
            self._changed()
        return changed

    def replace(
        self,
        objs: Iterable[dict[str, Any]],
        owns: Callable[[dict[str, Any]], bool] | None = None,
        *,
        deleted: bool = True,
    ) -> tuple[int, int]:
        """Make the store equal the result of a full list (the re-list after 410 or a reconnect).

        Objects absent from ``objs`` are removed, but only those for which ``owns(obj)`` is true
        (several informers may feed one store, e.g. one pod watch per scheduler name). Unchanged
        objects (same resourceVersion) keep their object_version. Returns (upserted, removed).
        ``deleted`` False: the removed objects are not known to be deleted (see ``clear``).
        """
        new: dict[Key, dict[str, Any]] = {obj_key(o): o for o in objs}
        upserted = removed = 0
        with self._lock:
            # Many keys may come and go: one sort at the end beats an O(n) insort per key.
            self._bulk, self._bulk_dirty = True, False
            try:
                for key, old in list(self._objects.items()):
                    if key not in new and (owns is None or owns(old)) and self._remove(key, deleted=deleted):
                        removed += 1
                for key, obj in new.items():
                    if self._put(key, obj):
                        upserted += 1
            finally:
                self._bulk = False
                if self._bulk_dirty:
                    self._unshare()
                    keys = sorted(self._objects, key=sort_key)
                    self._order.rebuild(keys, [self._objects[k] for k in keys])
        if upserted or removed:
            self._changed()
        return upserted, removed

    def clear(self, owns: Callable[[dict[str, Any]], bool] | None = None) -> int:
        """Drop the objects ``owns`` accepts (all when None) because the kind can no longer be read
        (forbidden, not installed). As ``replace([])``, except that the objects were not deleted:
        no store records them as deleted (PodStore). Returns how many were removed."""
        return self.replace([], owns=owns, deleted=False)[1]

    def bound_listed(self, objs: list[dict[str, Any]], final: bool = False) -> list[dict[str, Any]]:
        """Called by the informer while a full list accumulates (``final``: before ``replace``):
        the objects of ``objs`` this store would keep. A plain store keeps them all."""
        return objs

    def set_state(
        self,
        name: str,
        *,
        error: str | None = None,
        detail: str | None = None,
        category: str | None = None,
        waiting_since: datetime | None = None,
    ) -> KindState:
        """Move to state ``name``; ``since`` changes only when the state name changes. ``category``
        (None: unchanged, except "synced" clears it) is the error category shown with the error.
        ``waiting_since``: the request the API server has not answered yet (KindState), None when
        none waits; never kept in "synced"."""
        assert name in STATES, name
        with self._lock:
            old = self._state
            now = utcnow()
            new = replace(
                old,
                name=name,
                since=old.since if old.name == name else now,
                last_error=old.last_error if error is None else error,
                detail=old.detail if detail is None else detail,
                error_category=(
                    category if category is not None else ("" if name == "synced" else old.error_category)
                ),
                waiting_since=None if name == "synced" else waiting_since,
            )
            if name == "synced" and old.name != "synced":
                new = replace(new, synced_at=now)
            if old.name == "synced" and name != "synced":
                # Until now the watch kept the objects current (events applied, bookmarks): the
                # data is as of this moment, not of the last full list.
                new = replace(new, live_until=now)
            if new != old:
                self._state = new
                self._published = None
        if new != old:
            self._changed()
        return new

    def mark_synced(self) -> None:
        """A full list completed: synced now (synced_at moves even if already synced)."""
        with self._lock:
            now = utcnow()
            old = self._state
            self._state = KindState(
                name="synced",
                since=old.since if old.name == "synced" else now,
                last_error=old.last_error,
                synced_at=now,
                detail=old.detail,
                live_until=old.live_until,
            )
            self._published = None
        self._changed()


def _rv(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        rv = meta.get("resourceVersion")
        if isinstance(rv, str):
            return rv
    return ""


def event_sort_time(event: dict[str, Any]) -> str:
    """The newest timestamp of a core/v1 Event as an RFC 3339 string ("" when none)."""
    series = event.get("series")
    if not isinstance(series, dict):
        series = {}
    meta = event.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    candidates = (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        meta.get("creationTimestamp"),
    )
    best = ""
    for value in candidates:
        if isinstance(value, str) and value > best:
            best = value
    return best


class EventStore(KindStore):
    """A KindStore with bounded memory: at most ``per_object`` events per involved object and
    ``total`` overall; the oldest (by last-seen time, then arrival) are dropped first.

    Events are the only kind that grows without bound in a busy cluster (the API server keeps
    them ~1 h), and the pages show the latest few per object, so older ones are not worth memory.
    """

    def __init__(self, spec: KindSpec, per_object: int = 50, total: int = 20000, **kw: Any):
        super().__init__(spec, **kw)
        self.per_object = per_object
        self.total = total
        self.dropped = 0
        # The stored keys in arrival order (the sharded objects are not), oldest first: the total
        # cap drops from the front. The writer's own: never published.
        self._arrival: dict[Key, None] = {}

    @property
    def list_slack(self) -> int:
        """Events a full list may hold beyond the cap before ``bound_listed`` prunes it."""
        return max(1, self.total // 10)

    def bound_listed(self, objs: list[dict[str, Any]], final: bool = False) -> list[dict[str, Any]]:
        """Of listed events, the newest ``per_object`` per involved object, then the newest
        ``total`` overall, oldest first (so the total cap later drops the oldest first).

        A list of 100,000 Events kept all of them until the end, ~130 MB of trimmed events of
        which 80,000 were then dropped: RSS kept that peak as fragmented allocator memory
        (bench/bench_memory.py). Pruned whenever the list holds ``list_slack`` more than the
        cap: each event dropped mid-list leaves its memory between events that stay, so a peak
        of 1.5 x the cap left ~50 MB of pymalloc's pools free but unreturnable at 100,000 listed
        Events (bench/bench_memory.py: 353 MB synced, 305 MB when only 20,000 are listed); a tenth
        costs a prune every 2,000 events (docs/cache.md)."""
        if not final and len(objs) <= self.total + self.list_slack:
            return objs
        by_ref: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for obj in objs:
            by_ref.setdefault(event_ref(obj), []).append(obj)
        kept: list[dict[str, Any]] = []
        for events in by_ref.values():
            if len(events) > self.per_object:
                events = sorted(events, key=event_sort_time)[-self.per_object :]
            kept.extend(events)
        kept.sort(key=event_sort_time)  # stable: list order among equal times
        return kept[-self.total :] if self.total else []

    def _put(self, key: Key, obj: dict[str, Any]) -> bool:
        old = self._objects.get(key)
        if old is not None and _rv(old) != _rv(obj):
            # Re-insert at the end so arrival order tracks recency for the total cap.
            self._unshare()
            self._remove(key)
        changed = super()._put(key, obj)
        if not changed:
            return False
        self._arrival[key] = None
        ref = event_ref(obj)
        bucket = self._indexes["involved_ref"].get(ref)
        if bucket is not None and len(bucket) > self.per_object:
            oldest = sorted(bucket, key=lambda k: event_sort_time(self._objects[k]))
            for k in oldest[: len(bucket) - self.per_object]:
                self._remove(k)
                self.dropped += 1
        while len(self._objects) > self.total:
            first = next(iter(self._arrival))
            self._remove(first)
            self.dropped += 1
        return key in self._objects

    def _remove(self, key: Key, final: dict[str, Any] | None = None, deleted: bool = True) -> bool:
        removed = super()._remove(key, final, deleted)
        if removed:
            self._arrival.pop(key, None)
        return removed
