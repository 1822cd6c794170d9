"""Trim API objects to what the pages show, before they enter the cache.

The cache keeps tens of thousands of pods; a full pod spec with managedFields is 5-20 KiB of Python
objects, most of which no page displays. Each function takes the plain JSON dict decoded from the
API server (never a generated model class) and returns a new, smaller plain dict. Functions never
raise on odd shapes: a field of the wrong type is dropped, not trusted.

What is kept (the issue's list): metadata minus managedFields and the
``kubectl.kubernetes.io/last-applied-configuration`` annotation; for pods only the displayed spec
fields (containers' name/image/resources requests+limits/ports, every env entry by name with
references kept and literal values replaced by HIDDEN_VALUE, envFrom references, nodeName,
schedulerName, priorityClassName, restartPolicy) and the status fields kubectl uses for its
STATUS/READY/RESTARTS columns. Free text (event messages and reasons, status/condition messages)
longer than MESSAGE_LIMIT is cut with a visible marker.

Memory: equal sub-trees that repeat across objects (a pod's spec — the same for every pod of a
task template on one node —, ownerReferences naming the same Job, conditions, container statuses
of a gang started in the same second, a Job task's pod spec, a PodGroup's spec, an event's source)
are stored once and shared between the cached objects (``share``, hash-consing). Cached objects are
read-only (dashboard/kube/store.py), so sharing is invisible to readers; it cut the trimmed pods
from 3.9 to 1.9 KiB each (deep size) at 50,000 pods (bench/bench_memory.py,
docs/cache.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_META_KEYS = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "ownerReferences",
    "finalizers",
    "generateName",
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _i(value: Any) -> Any:
    """Intern a short string that repeats across objects (namespace, label values, images, phases).

    At 50,000 pods the same few hundred values would otherwise be held once per pod; interning
    them cut the cache's memory (docs/cache.md). Unique values (names, uids,
    resourceVersions, timestamps) are never passed here: they would only grow the intern table.
    """
    return sys.intern(value) if isinstance(value, str) and len(value) <= 256 else value


# Free text written by controllers and users (event messages, condition and state messages) has no
# length limit in the schemas: three 500,000-character event messages made a 3 MB Job page and held
# 1.5 MB in the cache. Longer strings are cut here, before they enter the cache (bounded memory), with
# a visible marker; the YAML view shows the cached object, so it shows the cut text too.
MESSAGE_LIMIT = 4096
TRUNCATED_MARKER = "…(truncated by volcano-ui: {total:,} characters in all)"


def cap_text(value: Any, limit: int = MESSAGE_LIMIT) -> Any:
    """``value`` cut to ``limit`` characters plus TRUNCATED_MARKER when it is a string longer than
    ``limit`` + 100; anything else unchanged. The 100 characters of slack make it idempotent: a cut
    string (limit + marker) is not cut again when an object is trimmed twice."""
    if isinstance(value, str) and len(value) > limit + 100:
        return value[:limit] + TRUNCATED_MARKER.format(total=len(value))
    return value


def _intern_map(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {_i(k): _i(v) for k, v in value.items()}


def _intern_tree(value: Any) -> Any:
    """Intern every key and short string of a small structure (conditions, resources, refs, status);
    strings longer than MESSAGE_LIMIT are cut (cap_text)."""
    if isinstance(value, dict):
        return {_i(k): _intern_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_intern_tree(v) for v in value]
    return _i(cap_text(value))


_TRUE, _FALSE = object(), object()


def _leaf_key(value: Any) -> Any:
    """The part of a sharing hash that stands for ``value``: a string or int itself, a shared
    container by identity, and a bool or float tagged, so True, 1 and 1.0 (equal in Python) hash
    apart (``_same`` tells them apart on a hash collision)."""
    t = type(value)
    if t is str or t is int or value is None:
        return value
    if t is dict or t is list:
        return id(value)
    if t is bool:
        return _TRUE if value else _FALSE
    return (t, value)


def _same(a: Any, b: Any) -> bool:
    """Whether two children of candidates for sharing are interchangeable: the same object, or
    equal leaves of one type (containers are shared bottom-up, so equal ones are the same object)."""
    return a is b or (type(a) is type(b) and type(a) is not dict and type(a) is not list and a == b)


def _dict_matches(found: Any, items: list[tuple[str, Any]]) -> bool:
    return (
        type(found) is dict
        and len(found) == len(items)
        and all(fk == k and _same(fv, v) for (fk, fv), (k, v) in zip(found.items(), items, strict=True))
    )


def _list_matches(found: Any, values: list[Any]) -> bool:
    return type(found) is list and len(found) == len(values) and all(map(_same, found, values))


class SharedTrees:
    """Hash-consing of JSON sub-trees: ``shared(value)`` returns a value equal to ``value`` (dicts
    and lists rebuilt, short strings interned, long free text cut by ``cap_text``) in which every
    dict and list equal to one returned before is that same object.

    The table maps the hash of a container's shape (its keys, its leaves, the identity of its
    already shared children) to the container: a hit is checked item by item (``_same``), so a hash
    collision only misses a chance to share. Keeping the hash, not a tuple of the shape, as the key
    holds one int per entry instead of a second copy of every container's items (docs/cache.md).
    The table is bounded: two generations of at most ``limit`` entries each; when the newer is full
    the older is dropped (entries still in use are re-added on their next hit). ``purge()`` drops the
    entries whose value nothing but the table holds any more (the objects that used it were replaced
    or deleted); the cache calls it every few seconds (memory.MemoryReleaser), so under churn the
    table holds what the cached objects share, not up to 2 × ``limit`` dead sub-trees
    (bench/memory_growth.py). Safe to call from several threads: a race can only miss a chance to
    share, never share unequal values (a hit is compared with the candidate before it is used).
    """

    def __init__(self, limit: int = 1 << 16):
        self.limit = limit
        self._new: dict[int, Any] = {}
        self._old: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._new) + len(self._old)

    def clear(self) -> None:
        self._new, self._old = {}, {}

    def purge(self, pause: Callable[[], object] | None = None, every: int = 2000) -> int:
        """Drop every entry whose value only this table references; returns how many were dropped.
        ``pause`` is called every ``every`` entries (the cache passes ``REQUESTS.give_way``: a
        purge of the whole table takes a tenth of a second or more, which requests in flight
        should not wait through).

        Reference counts are CPython's (``sys.getrefcount``): a value held by the table's
        generations, this frame's variable and the call's argument only is garbage but for the
        table. Newest entries are visited first: a tree's entry is added after its children's, so
        dropping a dead parent leaves its children unreferenced in time for the same pass (a child
        re-added to the newer generation after its parent went into the older one waits for the
        next purge). An entry
        another thread takes meanwhile stays valid for it (values are never mutated); only a chance
        to share it later is lost. Costs ~0.3 µs per entry, without blocking the table's users.
        """
        dropped = 0
        for gen in (self._new, self._old):
            for n, key in enumerate(reversed(list(gen)), 1):
                if pause is not None and n % every == 0:
                    pause()
                value = gen.get(key)
                if value is None:
                    continue
                holders = 2 + (self._new.get(key) is value) + (self._old.get(key) is value)
                if sys.getrefcount(value) <= holders and gen.get(key) is value:
                    gen.pop(key, None)
                    dropped += 1
                del value
        return dropped

    def _lookup(self, key: int, fresh: Any, matches: Callable[[Any], bool]) -> Any:
        found = self._new.get(key)
        if found is not None:
            return found if matches(found) else fresh
        found = self._old.get(key)
        if found is None or not matches(found):
            found = fresh
        if len(self._new) >= self.limit:
            self._old, self._new = self._new, {}
        self._new.setdefault(key, found)
        return found

    def __call__(self, value: Any) -> Any:
        t = type(value)
        if t is dict or isinstance(value, dict):
            items = [(_i(k), self(v)) for k, v in value.items()]
            key = hash(("d", *[x for k, v in items for x in (k, _leaf_key(v))]))
            found = self._new.get(key)
            if found is not None and _dict_matches(found, items):
                return found  # the common hit, without building a candidate
            return self._lookup(key, dict(items), lambda f: _dict_matches(f, items))
        if t is list or isinstance(value, list):
            values = [self(v) for v in value]
            return self._lookup(
                hash(("l", *map(_leaf_key, values))), values, lambda f: _list_matches(f, values)
            )
        if t is str:
            return _i(cap_text(value))
        return value


# One table for every kind: a pod and its PodGroup name the same Job in their ownerReferences.
share = SharedTrees()


def trim_metadata(meta: Any) -> dict[str, Any]:
    """Return the metadata fields the pages use; annotations lose last-applied-configuration."""
    meta = _dict(meta)
    out = {k: meta[k] for k in _META_KEYS if k in meta}
    for key in ("namespace", "creationTimestamp"):
        # Timestamps have one-second resolution: the pods of a gang share theirs.
        if key in out:
            out[key] = _i(out[key])
    if "labels" in out:
        out["labels"] = _intern_map(out["labels"])
    if isinstance(out.get("ownerReferences"), list):
        # Every pod of a Job and its PodGroup name the same owner: one shared list.
        out["ownerReferences"] = share(out["ownerReferences"])
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        out["annotations"] = {_i(k): _i(v) for k, v in annotations.items() if k != LAST_APPLIED}
    return out


def trim_object(obj: dict[str, Any]) -> dict[str, Any]:
    """Generic trim for custom resources (Job, PodGroup, Queue, Command): drop managedFields only.

    Volcano objects are small and the pages show most of their spec (tasks, policies, plugins), so
    only the metadata is trimmed. Job task pod templates are kept: the Job detail page shows them.
    """
    out = {_i(k): v for k, v in obj.items()}
    out["metadata"] = trim_metadata(obj.get("metadata"))
    for key in ("apiVersion", "kind"):
        if key in out:
            out[key] = _i(out[key])
    if isinstance(out.get("spec"), dict):
        spec = dict(out["spec"])
        for key in ("queue", "schedulerName", "priorityClassName", "parent"):
            if key in spec:
                spec[key] = _i(spec[key])
        out["spec"] = spec
    if isinstance(out.get("status"), dict):
        # Whole status: condition/state messages are capped, repeated values interned.
        out["status"] = _intern_tree(out["status"])
    return out


_TEMPLATE_SPEC_KEYS = (
    "schedulerName",
    "priorityClassName",
    "restartPolicy",
    "nodeSelector",
    "tolerations",
    "serviceAccountName",
)


def _trim_task(task: Any) -> Any:
    """A Job task keeps everything but its pod template shrinks to what a pod row keeps."""
    if not isinstance(task, dict):
        return task
    out = {_i(k): v for k, v in task.items()}
    for key in ("name", "topologyPolicy"):
        if key in out:
            out[key] = _i(out[key])
    template = task.get("template")
    if isinstance(template, dict):
        tspec = _dict(template.get("spec"))
        new_spec: dict[str, Any] = {k: _intern_tree(tspec[k]) for k in _TEMPLATE_SPEC_KEYS if k in tspec}
        for key in ("containers", "initContainers"):
            if isinstance(tspec.get(key), list):
                new_spec[key] = [t for t in map(_trim_container, tspec[key]) if t is not None]
        tmeta = _dict(template.get("metadata"))
        out["template"] = {
            "metadata": {
                k: _intern_map(tmeta[k]) for k in ("labels", "annotations") if isinstance(tmeta.get(k), dict)
            },
            # Jobs made from one manifest have equal task pod specs: one shared copy.
            "spec": share(new_spec),
        }
    if isinstance(out.get("policies"), list):
        out["policies"] = _intern_tree(out["policies"])
    return out


def trim_job(job: dict[str, Any]) -> dict[str, Any]:
    """A Volcano Job: generic trim, and each task's pod template reduced to the
    containers' name/image/resources/env references plus scheduling fields (the Job page shows
    task images and resources, never whole pod specs). Status counters and conditions are kept."""
    out = trim_object(job)
    spec = out.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("tasks"), list):
        out["spec"] = {**spec, "tasks": [_trim_task(t) for t in spec["tasks"]]}
    status = out.get("status")
    if isinstance(status, dict):
        status = _intern_tree(status)
        if isinstance(status.get("taskStatusCount"), dict):
            # {task: {phase: {Running: n}}}: the same few shapes across thousands of Jobs.
            status["taskStatusCount"] = share(status["taskStatusCount"])
        out["status"] = status
    return out


def trim_podgroup(pg: dict[str, Any]) -> dict[str, Any]:
    """A PodGroup: small; spec and status interned (queue names, quantities,
    phases and condition reasons repeat across PodGroups)."""
    out = trim_object(pg)  # status already interned and capped there
    if isinstance(out.get("spec"), dict):
        # minMember/minResources/minTaskMember/queue: equal across PodGroups of one manifest.
        out["spec"] = share(out["spec"])
    return out


# Shown in place of a literal env value: the entry stays visible (nothing silently omitted) but a
# value pasted into a manifest may be a secret, so it never enters the cache.
HIDDEN_VALUE = "(hidden by volcano-ui)"


def _trim_env(env: Any) -> list[Any]:
    """Every env entry by name: a literal ``value`` replaced by HIDDEN_VALUE; ``valueFrom`` kept,
    being a reference (secretKeyRef/configMapKeyRef name and key, fieldRef, resourceFieldRef) that
    says where the value comes from, never the value itself."""
    if not isinstance(env, list):
        return []
    out = []
    for e in env:
        if not isinstance(e, dict):
            continue
        entry: dict[str, Any] = {"name": _i(e.get("name"))}
        if isinstance(e.get("valueFrom"), dict):
            entry["valueFrom"] = _intern_tree(e["valueFrom"])
        elif e.get("value") not in (None, ""):
            entry["value"] = HIDDEN_VALUE
        out.append(entry)
    return out


_ENV_FROM_REFS = ("configMapRef", "secretRef")


def _trim_env_from(env_from: Any) -> list[Any]:
    """``envFrom`` sources: the ConfigMap/Secret names (and ``optional``) and the ``prefix``; these
    are references, the values stay in the cluster."""
    if not isinstance(env_from, list):
        return []
    out = []
    for source in env_from:
        if not isinstance(source, dict):
            continue
        entry: dict[str, Any] = {}
        if isinstance(source.get("prefix"), str):
            entry["prefix"] = _i(source["prefix"])
        for key in _ENV_FROM_REFS:
            ref = source.get(key)
            if isinstance(ref, dict):
                entry[key] = {k: _i(ref[k]) for k in ("name", "optional") if k in ref}
        if entry:
            out.append(entry)
    return out


def _trim_container(c: Any) -> dict[str, Any] | None:
    if not isinstance(c, dict):
        return None
    out: dict[str, Any] = {"name": _i(c.get("name")), "image": _i(c.get("image"))}
    resources = _dict(c.get("resources"))
    kept = {
        k: _intern_map(resources[k]) for k in ("requests", "limits") if isinstance(resources.get(k), dict)
    }
    if kept:
        out["resources"] = kept
    env = _trim_env(c.get("env"))
    if env:
        out["env"] = env
    env_from = _trim_env_from(c.get("envFrom"))
    if env_from:
        out["envFrom"] = env_from
    if isinstance(c.get("ports"), list):
        out["ports"] = c["ports"]
    if isinstance(c.get("restartPolicy"), str):  # native sidecars (init containers with Always)
        out["restartPolicy"] = c["restartPolicy"]
    return out


_POD_SPEC_KEYS = ("nodeName", "schedulerName", "priorityClassName", "priority", "restartPolicy")
_POD_STATUS_KEYS = (
    "phase",
    "reason",
    "message",
    "conditions",
    "containerStatuses",
    "initContainerStatuses",
    "hostIP",
    "podIP",
    "startTime",
    "nominatedNodeName",
    "qosClass",
)


def _trim_container_status(cs: Any) -> Any:
    # containerID/imageID are long unique digests no page shows; the rest feeds kubectl's columns.
    if not isinstance(cs, dict):
        return cs
    return {k: v for k, v in cs.items() if k not in ("containerID", "imageID")}


def trim_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """Keep what the pod rows and the "why pending" explanation read (see module docstring)."""
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    out_spec: dict[str, Any] = {k: _i(spec[k]) for k in _POD_SPEC_KEYS if k in spec}
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if isinstance(items, list):
            out_spec[key] = [t for t in map(_trim_container, items) if t is not None]
    out_status = {k: status[k] for k in _POD_STATUS_KEYS if k in status}
    for key in ("containerStatuses", "initContainerStatuses"):
        if isinstance(out_status.get(key), list):
            # Pods of a gang started in the same second have equal statuses: shared.
            out_status[key] = share([_trim_container_status(cs) for cs in out_status[key]])
    for key in ("phase", "reason", "qosClass", "hostIP", "startTime"):
        if key in out_status:
            out_status[key] = _i(cap_text(out_status[key]))
    if "message" in out_status:
        out_status["message"] = cap_text(out_status["message"])
    if isinstance(out_status.get("conditions"), list):
        # Conditions repeat whole across pods (same types/reasons, often the same second): shared.
        out_status["conditions"] = share(out_status["conditions"])
    out: dict[str, Any] = {
        "apiVersion": _i(pod.get("apiVersion", "v1")),
        "kind": _i(pod.get("kind", "Pod")),
        "metadata": trim_metadata(pod.get("metadata")),
        # The same for every pod of one task template on one node: shared.
        "spec": share(out_spec),
        "status": out_status,
    }
    return out


_EVENT_KEYS = (
    "involvedObject",
    "reason",
    "message",
    "type",
    "count",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
    "series",
    "source",
    "reportingComponent",
    "reportingController",
    "action",
)


def trim_event(event: dict[str, Any]) -> dict[str, Any]:
    """Keep the fields of a core/v1 Event that the event lists show."""
    meta = _dict(event.get("metadata"))
    out = {k: event[k] for k in _EVENT_KEYS if k in event}
    for key in ("reason", "type", "action", "firstTimestamp", "lastTimestamp", "reportingComponent"):
        if key in out:
            out[key] = _i(cap_text(out[key]))
    if "message" in out:
        out["message"] = cap_text(out["message"])
    if isinstance(out.get("source"), dict):
        out["source"] = share(out["source"])
    if isinstance(out.get("involvedObject"), dict):
        out["involvedObject"] = {
            _i(k): (v if k in ("uid", "resourceVersion") else _i(v)) for k, v in out["involvedObject"].items()
        }
    out["apiVersion"] = _i(event.get("apiVersion", "v1"))
    out["kind"] = _i(event.get("kind", "Event"))
    out["metadata"] = {
        k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
    }
    for key in ("namespace", "creationTimestamp"):
        if key in out["metadata"]:
            out["metadata"][key] = _i(out["metadata"][key])
    return out


_NODE_STATUS_KEYS = ("capacity", "allocatable", "conditions", "nodeInfo")


def trim_node(node: dict[str, Any]) -> dict[str, Any]:
    """A Node as the nodes pages read it: metadata, ``spec.unschedulable``/``taints``, and
    ``status`` capacity, allocatable, conditions and nodeInfo (images, addresses and volume lists,
    the bulk of a Node, are dropped)."""
    out: dict[str, Any] = {"metadata": trim_metadata(node.get("metadata"))}
    for key in ("apiVersion", "kind"):
        if key in node:
            out[key] = _i(node[key])
    spec = _dict(node.get("spec"))
    out["spec"] = {k: spec[k] for k in ("unschedulable", "taints", "providerID") if k in spec}
    status = _dict(node.get("status"))
    kept = {k: status[k] for k in _NODE_STATUS_KEYS if k in status}
    out["status"] = _intern_tree(kept)
    return out


def trim_deployment(dep: dict[str, Any]) -> dict[str, Any]:
    """A Deployment as the scheduler-health card reads it: metadata, ``spec.replicas`` and the
    whole (small) status; the pod template is dropped."""
    out: dict[str, Any] = {"metadata": trim_metadata(dep.get("metadata"))}
    for key in ("apiVersion", "kind"):
        if key in dep:
            out[key] = _i(dep[key])
    spec = _dict(dep.get("spec"))
    out["spec"] = {k: spec[k] for k in ("replicas", "paused") if k in spec}
    out["status"] = _intern_tree(_dict(dep.get("status")))
    return out


def _compact(value: Any) -> Any:
    t = type(value)
    if t is dict:
        out: dict[str, Any] = {}
        for key in value:
            child = value[key]
            out[key] = child if sys.getrefcount(child) > _OWN_REFS else _compact(child)
        return out
    if t is list:
        items: list[Any] = []
        for child in value:
            items.append(child if sys.getrefcount(child) > _OWN_REFS else _compact(child))
        return items
    if t is str and len(value) > 1:
        return value[:1] + value[1:]
    return value


def _own_refs() -> int:
    """The reference count ``_compact`` sees for a child only its container holds (CPython's
    count, with the loop's variable and the call's argument)."""
    probe = {"child": ["x"]}
    for key in probe:
        child = probe[key]
        return sys.getrefcount(child)
    raise AssertionError


_OWN_REFS = _own_refs()


def compact(obj: dict[str, Any]) -> dict[str, Any]:
    """An equal copy of a trimmed object in which every dict, list and string only this object
    holds is new; sub-trees it shares (``share``, interned strings held elsewhere) stay the same.

    The informer calls it for a list page's objects once the page's decoded JSON is freed, so the
    copies fill the holes that JSON (and events a capped list dropped) left between cached
    objects, and the pools the first trimmed objects took empty out whole. Without it the
    fragmentation stayed: at 50,000 pods and 100,000 listed events pymalloc held ~55 MB free in
    pools it could not return (bench/bench_memory.py ``--mallocstats``, docs/cache.md).
    """
    out: dict[str, Any] = _compact(obj)
    return out
