"""Read views over the cache: ``Snapshot`` (all kinds) and ``KindView`` (one kind).

A Snapshot holds one immutable ``KindData`` per kind, taken when the snapshot first reads that kind
(a request reads only the kinds it shows, and taking a changed kind publishes its store, which
makes the store's next write copy what it changes), so every read through it is consistent per
kind and never touches the API server.
``namespaces`` (a frozenset) restricts every namespaced kind to those namespaces: this is the access
layer for per-user RBAC, so a view cannot leak an object by forgetting a filter.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from dashboard.kube.kinds import obj_namespace
from dashboard.kube.store import KindData, KindState, event_sort_time, sort_key
from dashboard.volcano.cronjobs import Suspension
from dashboard.volcano.events import event_ref
from dashboard.volcano.objects import name as obj_name
from dashboard.volcano.objects import uid as obj_uid
from dashboard.volcano.podrecords import PodRecord, records_by_name
from dashboard.volcano.pods import pod_group_name
from dashboard.volcano.time import created_at

_UID_SUFFIX = re.compile(
    r"^(?P<job>.+)-(?P<uid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$"
)


class KindView:
    """Read-only access to one kind in a Snapshot.

    ``state``: KindState; ``version``: the kind's change counter (int, grows on every change);
    ``get(namespace, name)`` -> dict[str, Any] | None (cluster-scoped kinds: ``get(None, name)``);
    ``all()`` -> list sorted by (namespace, name) (O(n): the order is kept by the writer);
    ``values()`` -> iterator in no particular order (use it for aggregates); ``in_namespace(ns)``;
    ``len(view)``;
    ``object_version(namespace, name)`` -> int | None. Returned dicts are shared: do not mutate.
    """

    __slots__ = ("_data", "_namespaces")

    def __init__(self, data: KindData, namespaces: frozenset[str] | None):
        self._data = data
        # Restriction applies to namespaced kinds only (Queues are cluster-scoped).
        self._namespaces = namespaces if data.spec.namespaced else None

    @property
    def kind(self) -> str:
        return self._data.spec.kind

    @property
    def state(self) -> KindState:
        return self._data.state

    @property
    def version(self) -> int:
        return self._data.version

    @property
    def namespaced(self) -> bool:
        return self._data.spec.namespaced

    def _allowed(self, namespace: str | None) -> bool:
        return self._namespaces is None or namespace in self._namespaces

    def _key(self, namespace: str | None, name: str) -> tuple[str | None, str]:
        if not self._data.spec.namespaced:
            return (None, name)
        return (namespace or None, name)

    def get(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        key = self._key(namespace, name)
        if not self._allowed(key[0]):
            return None
        return self._data.objects.get(key)

    def object_version(self, namespace: str | None, name: str) -> int | None:
        key = self._key(namespace, name)
        if not self._allowed(key[0]):
            return None
        return self._data.versions.get(key)

    def all(self) -> list[dict[str, Any]]:
        if self._namespaces is None:
            return self._data.sorted_objects()  # a new list: callers may sort/append
        allowed = self._namespaces
        return [obj for key, obj in self._data.sorted_items() if key[0] in allowed]

    def values(self) -> Iterator[dict[str, Any]]:
        """Every (allowed) object in NO particular order: for aggregates (counts, sums, group-by)
        that do not need ``all()``'s (namespace, name) order. O(1) to start, no list is built.
        Iterates the published view, which never changes, so it is safe while the cache updates.
        """
        if self._namespaces is None:
            return self._data.iter_objects()
        allowed = self._namespaces
        return (obj for key, obj in self._data.sorted_items() if key[0] in allowed)

    def in_namespace(self, namespace: str) -> list[dict[str, Any]]:
        if not self._data.spec.namespaced or not self._allowed(namespace):
            return []
        objs = self._data.lookup("namespace", namespace)
        return sorted(objs, key=obj_name)

    def namespaces(self) -> set[str]:
        if not self._data.spec.namespaced:
            return set()
        present = {ns for ns in self._data.indexes.get("namespace", {}) if ns}
        return present if self._namespaces is None else present & self._namespaces

    def lookup(self, index: str, value: Any) -> list[dict[str, Any]]:
        """Objects whose index ``index`` (see kinds.py indexers) holds ``value``, restricted."""
        objs = self._data.lookup(index, value)
        if self._namespaces is None:
            return objs
        return [o for o in objs if obj_namespace(o) in self._namespaces]

    def lookup_sorted(self, index: str, value: Any) -> list[dict[str, Any]]:
        """``lookup(index, value)`` in (namespace, name) order, restricted (a new list)."""
        bucket = self._data.indexes.get(index, {}).get(value)
        if not bucket:
            return []
        keys, objs = _sorted_bucket(bucket, self._data.objects)
        if self._namespaces is None:
            return list(objs)
        allowed = self._namespaces
        return [o for k, o in zip(keys, objs, strict=True) if k[0] in allowed]

    def count_by(self, index: str) -> dict[Any, int]:
        """{index value: number of (allowed) objects} for index ``index`` (kinds.py indexers):
        O(buckets) unrestricted, O(indexed keys) with a namespace restriction (key checks only,
        no object is read). Aggregates (counts per phase, per queue) use it instead of a walk."""
        buckets = self._data.indexes.get(index, {})
        if self._namespaces is None:
            return {value: len(keys) for value, keys in buckets.items()}
        allowed = self._namespaces
        out = {}
        for value, keys in buckets.items():
            n = sum(1 for k in keys if k[0] in allowed)
            if n:
                out[value] = n
        return out

    def __len__(self) -> int:
        if self._namespaces is None:
            return len(self._data.objects)
        by_ns = self._data.indexes.get("namespace", {})
        return sum(len(by_ns.get(ns, ())) for ns in self._namespaces)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.all())

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        return f"<KindView {self.kind} state={self.state.name} n={len(self)} v={self.version}>"


# Sorted index buckets: {id(bucket): (bucket, (its keys sorted, their objects))}. A published bucket
# never changes (store.py copies a bucket a published view shares before writing it, or stores a
# new view of a ChunkedSet), and every write of an object, in or out of the bucket's value, writes
# the bucket: so while a view publishes the very same bucket, its keys map to the very same
# objects, and a Queue's page reads its ~1,000 Jobs and PodGroups in order without a sort or a
# lookup per object. The entry holds the bucket, so its id is not reused while it is remembered.
# Buckets below SORTED_BUCKET_MIN keys are sorted per call; SORTED_BUCKETS_MAX entries, least
# recently used out first.
_Sorted = tuple[tuple[tuple[str | None, str], ...], tuple[dict[str, Any], ...]]
_SORTED_BUCKETS: OrderedDict[int, tuple[Any, _Sorted]] = OrderedDict()
SORTED_BUCKET_MIN = 64
SORTED_BUCKETS_MAX = 512
_sorted_lock = threading.Lock()


def _sorted_bucket(bucket: Any, objects: Mapping[Any, dict[str, Any]]) -> _Sorted:
    """(the bucket's keys with an object, in (namespace, name) order; their objects)."""
    hit = _SORTED_BUCKETS.get(id(bucket)) if len(bucket) >= SORTED_BUCKET_MIN else None
    if hit is not None and hit[0] is bucket:
        with _sorted_lock:
            if id(bucket) in _SORTED_BUCKETS:
                _SORTED_BUCKETS.move_to_end(id(bucket))
        return hit[1]
    get = objects.get
    pairs = [(k, o) for k in sorted(bucket, key=sort_key) if (o := get(k)) is not None]
    found: _Sorted = (tuple(k for k, _o in pairs), tuple(o for _k, o in pairs))
    if len(bucket) >= SORTED_BUCKET_MIN:
        with _sorted_lock:
            _SORTED_BUCKETS[id(bucket)] = (bucket, found)
            _SORTED_BUCKETS.move_to_end(id(bucket))
            while len(_SORTED_BUCKETS) > SORTED_BUCKETS_MAX:
                _SORTED_BUCKETS.popitem(last=False)
    return found


def _owner_refs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


class Snapshot:
    """A consistent read view of every kind; see the module docstring.

    ``data`` gives each kind's ``KindData``: a mapping, or a function called with the kind's name
    the first time the snapshot reads that kind. ``deleted_pods`` is the mapping of the deleted
    pods' records, or a function returning it when first read. Threads sharing a snapshot share
    the views it took: the first view taken of a kind is the one every reader gets."""

    _KINDS = (
        "jobs",
        "podgroups",
        "queues",
        "pods",
        "events",
        "nodes",
        "hypernodes",
        "cronjobs",
        "jobflows",
        "jobtemplates",
        "deployments",
    )
    jobs: KindView
    podgroups: KindView
    queues: KindView
    pods: KindView
    events: KindView
    nodes: KindView
    hypernodes: KindView
    cronjobs: KindView
    jobflows: KindView
    jobtemplates: KindView
    deployments: KindView

    def __init__(
        self,
        data: Mapping[str, KindData] | Callable[[str], KindData],
        namespaces: frozenset[str] | None = None,
        deleted_pods: Mapping[tuple[str, str], tuple[PodRecord, ...]]
        | Callable[[], Mapping[tuple[str, str], tuple[PodRecord, ...]]]
        | None = None,
        restart_times: Mapping[tuple[str | None, str], tuple[datetime, ...]] | None = None,
        suspensions: Mapping[tuple[str | None, str], tuple[Suspension, ...]] | None = None,
    ):
        self.namespaces_filter = namespaces
        self._data = data.__getitem__ if isinstance(data, Mapping) else data
        self._deleted_source = deleted_pods
        self._restart_times = restart_times or {}
        self._suspensions = suspensions or {}

    def __getattr__(self, name: str) -> Any:
        # Called only while the attribute is not set: a kind's view, or the deleted pods' records,
        # on first read. setdefault keeps the first one taken when two threads race.
        if name in Snapshot._KINDS:
            return self.__dict__.setdefault(name, KindView(self._data(name), self.namespaces_filter))
        if name == "_deleted_pods":
            source = self._deleted_source
            return self.__dict__.setdefault(name, (source() if callable(source) else source) or {})
        raise AttributeError(name)

    def views(self) -> dict[str, KindView]:
        return {name: getattr(self, name) for name in Snapshot._KINDS}

    @property
    def version(self) -> tuple[int, ...]:
        """The tuple of every kind's change counter: equal tuples mean nothing changed."""
        return tuple(v.version for v in self.views().values())

    # -- cross-links (volcano-sh/volcano pkg/controllers/job) -----------------------------------------------
    def podgroup_for_job(self, job: dict[str, Any]) -> dict[str, Any] | None:
        """The Job's PodGroup: by controller ownerReference uid, then ``<job>-<uid>``, then ``<job>``
        (the pre-v1.6 legacy name). Finished jobs usually have none."""
        ns, name, uid = obj_namespace(job), obj_name(job), obj_uid(job)
        if uid:
            for pg in self.podgroups.lookup("owner_uid", uid):
                if obj_namespace(pg) == ns:
                    return pg
            by_uid_name = self.podgroups.get(ns, f"{name}-{uid}")
            if by_uid_name is not None:
                return by_uid_name
        return self.podgroups.get(ns, name) if name else None

    def job_for_podgroup(self, pg: dict[str, Any]) -> dict[str, Any] | None:
        """The Volcano Job that owns ``pg`` (ownerReference kind Job in batch.volcano.sh), else the
        Job whose name and uid make up the PodGroup's name, else the Job named like it (legacy)."""
        ns = obj_namespace(pg)
        for ref in _owner_refs(pg):
            api_version = str(ref.get("apiVersion") or "")
            if ref.get("kind") == "Job" and api_version.startswith("batch.volcano.sh/"):
                for job in self.jobs.lookup("uid", ref.get("uid")):
                    if obj_namespace(job) == ns:
                        return job
                named = self.jobs.get(ns, str(ref.get("name") or ""))
                if named is not None and (not ref.get("uid") or obj_uid(named) == ref.get("uid")):
                    return named
        name = obj_name(pg)
        match = _UID_SUFFIX.match(name)
        if match:
            owner = self.jobs.get(ns, match.group("job"))
            if owner is not None and obj_uid(owner) == match.group("uid"):
                return owner
        return self.jobs.get(ns, name) if name else None

    def pods_for_job(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        """Pods labelled/annotated ``volcano.sh/job-name: <job>`` in the Job's namespace, by name."""
        pods = self.pods.lookup("job", (obj_namespace(job), obj_name(job)))
        return sorted(pods, key=obj_name)

    def deleted_pods_of_job(self, job: dict[str, Any]) -> list[PodRecord]:
        """The records of the Job's pods the cache saw deleted (kube/podrecords.py), by name, newest
        deletion first per name; those of pods created before the Job (an earlier Job of the same
        name) are left out."""
        ns = obj_namespace(job) or ""
        if self.namespaces_filter is not None and ns not in self.namespaces_filter:
            return []
        records = self._deleted_pods.get((ns, obj_name(job)), ())
        born = created_at(job)
        if born is not None:
            records = tuple(r for r in records if r.created is None or r.created >= born)
        return records_by_name(records)

    def job_restart_times(self, job: dict[str, Any]) -> tuple[datetime, ...]:
        """The Restarting transition times of ``job`` the cache saw (cache.JobStore), oldest first."""
        return self._restart_times.get((obj_namespace(job) or None, obj_name(job)), ())

    def cronjob_suspensions(self, cj: dict[str, Any]) -> tuple[Suspension, ...]:
        """The stretches the cache saw ``cj`` suspended (kube.suspensions.CronJobStore), oldest first."""
        return self._suspensions.get((obj_namespace(cj) or None, obj_name(cj)), ())

    def restarted_jobs(self) -> list[tuple[dict[str, Any], tuple[datetime, ...]]]:
        """(Job, job_restart_times) of every readable Job the cache saw restart."""
        out = []
        for (ns, name), times in list(self._restart_times.items()):
            job = self.jobs.get(ns, name)
            if job is not None:
                out.append((job, times))
        return out

    def pods_for_podgroup(self, pg: dict[str, Any]) -> list[dict[str, Any]]:
        """Pods whose ``scheduling.k8s.io/group-name`` annotation names ``pg``, sorted by name."""
        pods = self.pods.lookup("group", (obj_namespace(pg), obj_name(pg)))
        return sorted(pods, key=obj_name)

    def podgroup_for_pod(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        group = pod_group_name(pod)
        return self.podgroups.get(obj_namespace(pod), group) if group else None

    def jobs_in_queue(self, name: str) -> list[dict[str, Any]]:
        """Jobs whose spec.queue is ``name``, by (namespace, name) (a new list)."""
        return self.jobs.lookup_sorted("queue", name)

    def podgroups_in_queue(self, name: str) -> list[dict[str, Any]]:
        """PodGroups whose spec.queue is ``name``, by (namespace, name) (a new list)."""
        return self.podgroups.lookup_sorted("queue", name)

    def child_queues(self, name: str) -> list[dict[str, Any]]:
        """Queues whose spec.parent is ``name`` (an empty parent counts as "root")."""
        return sorted(self.queues.lookup("parent", name), key=obj_name)

    def events_for(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """Events whose involvedObject is ``obj`` (by uid, or kind+namespace+name), newest first."""
        found: dict[tuple[str | None, str], dict[str, Any]] = {}
        uid = obj_uid(obj)
        if uid:
            for ev in self.events.lookup("involved_uid", uid):
                found[(obj_namespace(ev), obj_name(ev))] = ev
        kind = obj.get("kind")
        if isinstance(kind, str) and kind:
            ref = (kind, obj_namespace(obj), obj_name(obj))
            for ev in self.events.lookup("involved_ref", ref):
                ev_uid = (ev.get("involvedObject") or {}).get("uid")
                # A same-named object that was deleted and re-created has another uid: skip its events.
                if uid and ev_uid and ev_uid != uid:
                    continue
                found[(obj_namespace(ev), obj_name(ev))] = ev
        return sorted(found.values(), key=event_sort_time, reverse=True)

    # -- named queries over the indexes (kinds.py indexers) ------------------------------------
    # The pages ask for these facts by name; only this package knows which index answers them.
    def queue(self, name: str) -> dict[str, Any] | None:
        """The Queue named ``name`` (cluster-scoped), or None."""
        return self.queues.get(None, name)

    def jobs_in_phase(self, phase: str) -> list[dict[str, Any]]:
        """Jobs whose ``status.state.phase`` is ``phase`` as written (index "phase"), no order."""
        return self.jobs.lookup("phase", phase)

    def pending_jobs(self) -> list[dict[str, Any]]:
        return self.jobs_in_phase("Pending")

    def failed_jobs(self) -> list[dict[str, Any]]:
        return self.jobs_in_phase("Failed")

    def job_counts_by_phase(self) -> dict[str, int]:
        """{phase as written: number of Jobs}; O(phases), no walk over the Jobs."""
        return self.jobs.count_by("phase")

    def podgroup_counts_by_phase(self) -> dict[str, int]:
        """{phase as written: number of PodGroups}; O(phases), no walk over the PodGroups."""
        return self.podgroups.count_by("phase")

    def podgroup_counts_by_queue(self) -> dict[str, Counter[str]]:
        """{spec.queue: Counter(phase -> number of PodGroups)} from the (queue, phase) index."""
        out: dict[str, Counter[str]] = {}
        for (queue, phase), n in self.podgroups.count_by("queue_phase").items():
            out.setdefault(queue, Counter())[phase] += n
        return out

    def inqueue_podgroups(self, queue: str) -> list[dict[str, Any]]:
        """PodGroups of ``queue`` in phase Inqueue (admitted, their minResources reserved)."""
        return self.podgroups.lookup("queue_phase", (queue, "Inqueue"))

    def gangs_below_min(self) -> list[dict[str, Any]]:
        """Running/Unknown PodGroups with fewer ready pods than minMember (index "below_gang")."""
        return self.podgroups.lookup("below_gang", True)

    def crashlooping_pods(self) -> list[dict[str, Any]]:
        """Pods with a container waiting in CrashLoopBackOff (index "crashloop"), no order."""
        return self.pods.lookup("crashloop", True)

    def warning_events(self) -> list[dict[str, Any]]:
        """Events of type Warning (index "warning"), no order."""
        return self.events.lookup("warning", True)

    def pods_on_node(self, node: str) -> list[dict[str, Any]]:
        """Cached pods bound to ``node`` (spec.nodeName; index "node"), restricted, by namespace/name.
        Only the pods the cache keeps (Volcano's: see CacheOptions.scheduler_names)."""
        pods = self.pods.lookup("node", node)
        return sorted(pods, key=lambda o: (obj_namespace(o) or "", obj_name(o)))

    def pod_counts_by_node(self) -> dict[str, int]:
        """{node name: number of cached (restricted) pods bound to it}, from the index."""
        return self.pods.count_by("node")

    def holding_pods_on_node(self, node: str) -> list[dict[str, Any]]:
        """The cached (restricted) pods bound to ``node`` that hold resources there (not ended:
        volcano.nodes.pod_holds_resources; index "holding_node"), by namespace/name."""
        pods = self.pods.lookup("holding_node", node)
        return sorted(pods, key=lambda o: (obj_namespace(o) or "", obj_name(o)))

    def holding_pod_counts_by_node(self) -> dict[str, int]:
        """{node name: number of cached (restricted) pods holding resources on it}, from the index."""
        return self.pods.count_by("holding_node")

    def gang_pods_by_node(self) -> dict[tuple[str, str], dict[str, int]]:
        """{(namespace, PodGroup name): {node name: pods of the group holding resources on it}}
        for the cached (restricted) pods naming a PodGroup (index "gang_node"; O(groups x nodes),
        no pod is read)."""
        out: dict[tuple[str, str], dict[str, int]] = {}
        for (group, node), n in self.pods.count_by("gang_node").items():
            out.setdefault(group, {})[node] = n
        return out

    def jobs_owned_by(self, owner: dict[str, Any]) -> list[dict[str, Any]]:
        """Jobs in ``owner``'s namespace with an ownerReference to its uid (a CronJob's runs, a
        JobFlow's Jobs), by name."""
        uid = obj_uid(owner)
        if not uid:
            return []
        ns = obj_namespace(owner)
        found = [j for j in self.jobs.lookup("owner_uid", uid) if obj_namespace(j) == ns]
        return sorted(found, key=obj_name)

    def job(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.jobs.get(namespace, name)

    def jobtemplate(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.jobtemplates.get(namespace, name)

    def namespaces(self) -> list[str]:
        """Namespaces that hold at least one cached Job, PodGroup or Pod (restricted), sorted."""
        seen: set[str] = set()
        for view in (self.jobs, self.podgroups, self.pods):
            seen |= view.namespaces()
        return sorted(seen)


__all__ = ["KindView", "Snapshot", "event_ref"]
