"""The simulated cluster's object store: what etcd plus the API server's registry do.

Objects are plain JSON dicts. The store keeps one global resourceVersion counter (as a real API
server backed by one etcd does), per-kind sorted keys for paginated lists, a bounded per-kind event
history for watches (like the API server's watch cache), uid and ownerReference indexes for
cascading deletion, and the metadata rules of a real server (uid, creationTimestamp, generation,
resourceVersion, deletionTimestamp with finalizers).

Stored objects are never mutated after they are committed: every write builds a new dict. That lets
lists and watch fan-out hand out references and cache each object's JSON encoding. The public
methods deep-copy on the way in and out, so callers may edit what they get; the exceptions, for
the simulated controllers' hot paths, hand out the stored object itself, read-only: ``peek``,
``iter_objects``, ``mutate_stored``, ``delete(copy=False)``, listeners and ``get_entry``.

Thread-safety: one re-entrant lock guards everything. Listeners and admission hooks run under it.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import builtins
import contextlib
import json
import random
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import schema
from .clock import SimClock
from .kinds import KINDS, NAMESPACE, Kind, resolve
from .patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from .selectors import Matcher, SelectorError, combine, parse_field_selector, parse_label_selector

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """An error the API server answers as a Kubernetes Status object.

    ``code`` is the HTTP status; ``reason`` a metav1.StatusReason ("NotFound", "AlreadyExists",
    "Conflict", "Expired", "Invalid", ...; defaults from the code); ``details`` the optional
    Status.details ({name, group, kind, causes}).
    """

    def __init__(
        self, code: int, reason: str | None = None, message: str = "", details: dict[str, Any] | None = None
    ) -> None:
        self.code = code
        self.reason = reason or REASONS.get(code, "Unknown")
        self.message = message or self.reason
        self.details = details
        super().__init__(f"{code} {self.reason}: {self.message}")

    def status(self) -> dict[str, Any]:
        """The Kubernetes ``Status`` object for this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


# metav1.CauseTypeResourceVersionTooLarge: the StatusCause client-go's
# apierrors.IsTooLargeResourceVersion looks for.
CAUSE_RV_TOO_LARGE = "ResourceVersionTooLarge"


def too_large_rv(requested: int, current: int) -> ApiError:
    """The kube-apiserver watch cache's answer to a watch or list asking for a resourceVersion it
    has not reached (apimachinery errors.NewTooLargeResourceVersionError): 504, reason Timeout,
    a ResourceVersionTooLarge cause, retryAfterSeconds 1. The real server first waits ~3 s for
    its cache to catch up; the simulated store is authoritative, so it answers at once. A client
    holding such a resourceVersion learnt it from another server (or an earlier run of this one):
    client-go's reflector re-lists from scratch."""
    return ApiError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [{"reason": CAUSE_RV_TOO_LARGE, "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )


def _not_found(kind: Kind, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{kind.resource} "{name}" not found',
        {"name": name, "group": kind.group, "kind": kind.plural},
    )


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def copy_json(value: Any) -> Any:
    """Deep copy of JSON data (dicts, lists, scalars): much faster than copy.deepcopy."""
    # Leaves are copied inline, without a call each: most values of an object are leaves.
    t = type(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            tv = type(v)
            out[k] = copy_json(v) if tv is dict or tv is list else v
        return out
    if t is list:
        return [copy_json(v) if type(v) is dict or type(v) is list else v for v in value]
    return value


class _Entry:
    """A committed object plus its lazily cached JSON encoding."""

    __slots__ = ("obj", "_raw")

    def __init__(self, obj: Obj) -> None:
        self.obj = obj
        self._raw: bytes | None = None

    @property
    def raw(self) -> bytes:
        raw = self._raw
        if raw is None:
            raw = self._raw = _dumps(self.obj)
        return raw

    def clone(self) -> Obj:
        raw = self._raw
        return json.loads(raw) if raw is not None else copy_json(self.obj)


class _SortedKeys:
    """Keys in (namespace, name) order, kept sorted lazily: O(1) insert/remove, amortised O(n)
    re-sort (Timsort merges the sorted prefix with the unsorted tail) only when a list needs it."""

    __slots__ = ("keys", "dirty", "removed")

    def __init__(self) -> None:
        self.keys: list[Key] = []
        self.dirty = False
        self.removed: set[Key] = set()

    def add(self, key: Key) -> None:
        if key in self.removed:  # still present in self.keys at its sorted position
            self.removed.discard(key)
            return
        if self.keys and key < self.keys[-1]:
            self.dirty = True
        self.keys.append(key)

    def remove(self, key: Key) -> None:
        self.removed.add(key)

    def sorted(self) -> list[Key]:
        if self.removed and len(self.removed) * 4 > len(self.keys):
            removed = self.removed
            self.keys = [k for k in self.keys if k not in removed]
            self.removed = set()
        if self.dirty:
            self.keys.sort()
            self.dirty = False
        return self.keys


@dataclass
class _HistoryItem:
    rv: int
    type: str
    old: _Entry | None
    new: _Entry


class _KindState:
    __slots__ = ("kind", "objects", "index", "history", "compacted_rv", "watchers")

    def __init__(self, kind: Kind, history_size: int) -> None:
        self.kind = kind
        self.objects: dict[Key, _Entry] = {}
        self.index = _SortedKeys()
        self.history: deque[_HistoryItem] = deque(maxlen=max(1, history_size))
        # A watch from a resourceVersion below this may have missed events -> 410 Expired.
        self.compacted_rv = 0
        self.watchers: set[Watch] = set()


class Watch:
    """One watch on one kind. ``next(timeout)`` returns ``(type, object)`` with type ADDED,
    MODIFIED, DELETED (or ERROR with a Status object), or None on timeout or after ``close()``
    (check ``.closed``). Events arrive in resourceVersion order.
    """

    MAX_BACKLOG = 500_000

    def __init__(
        self, store: Store, state: _KindState, namespace: str | None, matcher: Matcher | None
    ) -> None:
        self._store = store
        self._state = state
        self.kind = state.kind
        self.namespace = namespace
        self._matcher = matcher
        self._queue: deque[tuple[str, _Entry]] = deque()
        self._wake = threading.Event()
        self.closed = False
        self.close_reason = ""

    # -- producer side (called under the store lock) --
    def _push(self, type_: str, entry: _Entry) -> None:
        if self.closed:
            return
        if len(self._queue) >= self.MAX_BACKLOG:
            # A consumer this far behind is dropped, as the API server drops slow watchers; the
            # client re-lists.
            self._close("backlog overflow")
            return
        self._queue.append((type_, entry))
        self._wake.set()

    def _offer(self, type_: str, old: _Entry | None, new: _Entry) -> None:
        if self.namespace is not None and new.obj["metadata"].get("namespace") != self.namespace:
            return
        m = self._matcher
        if m is None:
            self._push(type_, new)
            return
        if type_ == "MODIFIED":
            was, now = (old is not None and m(old.obj)), m(new.obj)
            if was and now:
                self._push("MODIFIED", new)
            elif now:
                self._push("ADDED", new)
            elif was:
                self._push("DELETED", new)
        elif type_ == "DELETED":
            if m(old.obj if old is not None else new.obj):
                self._push("DELETED", new)
        elif m(new.obj):
            self._push(type_, new)

    # -- consumer side --
    def next_entry(self, timeout: float | None = None) -> tuple[str, _Entry] | None:
        """Like ``next`` but returns the stored entry (no copy); for the HTTP server."""
        while True:
            try:
                return self._queue.popleft()
            except IndexError:
                pass
            if self.closed:
                return None
            self._wake.clear()
            if self._queue or self.closed:
                continue
            if not self._wake.wait(timeout):
                return None
            timeout = 0 if timeout is not None else None  # one wake-up per call is enough

    def next(self, timeout: float | None = None) -> tuple[str, Obj] | None:
        item = self.next_entry(timeout)
        if item is None:
            return None
        return item[0], item[1].clone()

    def pending(self) -> int:
        return len(self._queue)

    def bookmark_rv(self) -> str | None:
        """The resourceVersion a BOOKMARK may carry now: the store's current one when every event up
        to it has been delivered (queue empty), else None."""
        with self._store._lock:
            if self._queue:
                return None
            return str(self._store._rv)

    def _close(self, reason: str) -> None:
        self.closed = True
        self.close_reason = reason
        self._wake.set()

    def close(self) -> None:
        with self._store._lock:
            self._state.watchers.discard(self)
        self._close("closed")

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class ListPage:
    """One page of a list: stored entries (read-only), the list's resourceVersion, the continue
    token for the next page ("" when this is the last), and remainingItemCount when known."""

    entries: list[_Entry]
    resource_version: str
    continue_token: str
    remaining: int | None


Listener = Callable[[str, Kind, Obj], None]
Admission = Callable[[str, Kind, Obj, "Obj | None"], "Obj | None"]


def _compile(
    kind: Kind, label_selector: str | Matcher | None, field_selector: str | Matcher | None
) -> Matcher | None:
    try:
        lm = (
            parse_label_selector(label_selector)
            if isinstance(label_selector, str) or label_selector is None
            else label_selector
        )
        fm = (
            parse_field_selector(field_selector, kind.plural)
            if isinstance(field_selector, str) or field_selector is None
            else field_selector
        )
    except SelectorError as exc:
        raise ApiError(400, "BadRequest", str(exc)) from None
    return combine(lm, fm)


def _spec_part(kind: Kind, obj: Obj) -> Obj:
    """What counts as "spec" for metadata.generation: everything but metadata (and status when the
    kind has a status subresource), per upstream CRD and core strategies."""
    if kind.status_subresource or not kind.crd:
        return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
    return {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}


def _order_top(obj: Obj) -> None:
    """Put apiVersion, kind, metadata first (in place), as a real server's JSON has them."""
    if list(obj)[:3] == ["apiVersion", "kind", "metadata"]:
        return
    rest = [(k, obj.pop(k)) for k in list(obj) if k not in ("apiVersion", "kind", "metadata")]
    meta = obj.pop("metadata", None)
    api_version, kind = obj.pop("apiVersion", None), obj.pop("kind", None)
    obj["apiVersion"], obj["kind"] = api_version, kind
    if meta is not None:
        obj["metadata"] = meta
    obj.update(rest)


def _without_rv(obj: Obj) -> Obj:
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}


_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream's generateName alphabet (no vowels)
_TERMINAL_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")


class Store:
    """See the module docstring. ``history_size`` is the number of watch events retained per kind;
    ``seed`` makes uids and generated names deterministic. ``resource_version_base`` (>= 0): the
    first committed change gets base + 1, and every resourceVersion up to the base counts as
    compacted (a watch or continue token from below it gets 410 Expired). A simulator restarted
    with a higher base than any resourceVersion of its previous run (SimulatedCluster's state-file
    epoch) so never lets an old client's resourceVersion look valid: it is either compacted (410)
    or newer than the store (504 too large, see ``too_large_rv``); both make informers re-list."""

    def __init__(
        self,
        clock: SimClock,
        history_size: int = 10000,
        *,
        seed: int = 0,
        resource_version_base: int = 0,
        uid_salt: int = 0,
    ) -> None:
        """``uid_salt``: mixed into every uid (128 bits), so that two stores with the same seed give
        the same names but never the same uids (two clusters, like a real one and its recorded past)."""
        if resource_version_base < 0:
            raise ValueError("resource_version_base must be >= 0")
        self.clock = clock
        self.history_size = history_size
        self._lock = threading.RLock()
        self._rv = resource_version_base
        self._rng = random.Random(seed)
        self._uid_salt = uid_salt & ((1 << 128) - 1)
        # namespace (or cluster-scoped object name) -> the generator for uids and generated names
        # there; see create.
        self.uid_streams: dict[str, random.Random] = {}
        self._kinds: dict[Kind, _KindState] = {k: _KindState(k, history_size) for k in KINDS if not k.review}
        for st in self._kinds.values():
            st.compacted_rv = resource_version_base
        self._uids: dict[str, tuple[Kind, Key]] = {}
        self._dependents: dict[str, set[tuple[Kind, Key]]] = {}
        self._listeners: list[Listener] = []
        self._admission: list[Admission] = []
        # Lists' continue tokens expire only on an explicit compact() (etcd compaction), not when
        # a kind's watch history rolls over.
        self._list_compacted_rv = resource_version_base

    # ---------------------------------------------------------------- basics
    @property
    def resource_version(self) -> int:
        """The current global resourceVersion (the last committed change)."""
        return self._rv

    @property
    def lock(self) -> threading.RLock:
        """The store's lock, for callers that need several reads to be consistent."""
        return self._lock

    def add_listener(self, fn: Listener) -> None:
        """Call ``fn(event_type, kind, obj)`` after each committed change (ADDED, MODIFIED,
        DELETED), under the store lock, in resourceVersion order. ``obj`` is the stored object:
        read it, never modify it (copy first). ``fn`` may call the store (the lock is re-entrant)."""
        with self._lock:
            self._listeners.append(fn)

    def remove_listener(self, fn: Listener) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    def add_admission(self, fn: Admission) -> None:
        """Register an admission hook ``fn(operation, kind, new_obj, old_obj)``, run on API writes:
        "CREATE" / "UPDATE" (after defaults, before commit; not for replay, ``mutate`` or status
        writes), where it may edit ``new_obj`` in place (mutating webhook); and "DELETE" (both
        arguments are the stored object: read only). It may raise ApiError to deny (validating
        webhook, e.g. 400 / 403 / 422). See webhooks.py for Volcano's."""
        with self._lock:
            self._admission.append(fn)

    def _state(self, kind: Kind | str) -> _KindState:
        k = resolve(kind)
        try:
            return self._kinds[k]
        except KeyError:
            raise ApiError(405, "MethodNotAllowed", f"{k.resource} cannot be stored") from None

    def _new_uid(self, rng: random.Random | None = None) -> str:
        # Same value as str(uuid.UUID(int=bits, version=4)), without the object (hot path).
        bits = (rng or self._rng).getrandbits(128) ^ self._uid_salt
        bits = (bits & ~(0xC000 << 48) | (0x8000 << 48)) & ~(0xF000 << 64) | (4 << 76)
        h = f"{bits:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _key(self, kind: Kind, namespace: str | None, name: str) -> Key:
        return ((namespace or "") if kind.namespaced else "", name)

    # ---------------------------------------------------------------- commit
    def _commit(self, st: _KindState, type_: str, key: Key, old: _Entry | None, new_obj: Obj) -> _Entry:
        self._rv += 1
        rv = self._rv
        new_obj["metadata"]["resourceVersion"] = str(rv)
        entry = _Entry(new_obj)
        if type_ == "DELETED":
            st.objects.pop(key, None)
            st.index.remove(key)
        else:
            if old is None:
                st.index.add(key)
            st.objects[key] = entry
        self._reindex(st.kind, key, old.obj if old else None, None if type_ == "DELETED" else new_obj)
        if len(st.history) == st.history.maxlen:
            st.compacted_rv = st.history[0].rv
        st.history.append(_HistoryItem(rv, type_, old, entry))
        for w in list(st.watchers):
            w._offer(type_, old, entry)
            if w.closed:
                st.watchers.discard(w)
        for fn in list(self._listeners):
            fn(type_, st.kind, new_obj)
        return entry

    def _reindex(self, kind: Kind, key: Key, old: Obj | None, new: Obj | None) -> None:
        if old is not None:
            uid = old["metadata"].get("uid")
            if uid and (new is None or new["metadata"].get("uid") != uid):
                self._uids.pop(uid, None)
            for ref in old["metadata"].get("ownerReferences") or ():
                deps = self._dependents.get(ref.get("uid", ""))
                if deps is not None:
                    deps.discard((kind, key))
                    if not deps:
                        del self._dependents[ref["uid"]]
        if new is not None:
            uid = new["metadata"].get("uid")
            if uid:
                self._uids[uid] = (kind, key)
            for ref in new["metadata"].get("ownerReferences") or ():
                if isinstance(ref, dict) and ref.get("uid"):
                    self._dependents.setdefault(ref["uid"], set()).add((kind, key))

    # ---------------------------------------------------------------- create
    def create(
        self,
        kind: Kind | str,
        obj: Obj,
        namespace: str | None = None,
        *,
        replay: bool = False,
        dry_run: bool = False,
    ) -> Obj:
        """Create ``obj`` (POST semantics) and return the stored copy.

        ``namespace`` (from the URL) must agree with metadata.namespace when both are given.
        Errors: 400 (bad body / namespace mismatch), 404 (namespace missing), 409 AlreadyExists,
        422 Invalid (name), 403 (namespace terminating). ``replay=True`` keeps uid,
        creationTimestamp, deletionTimestamp, generation and status as written (no defaults, no
        admission) — for loading recorded clusters.
        """
        k = resolve(kind)
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body of the request was not a JSON object")
        new = schema.drop_nulls(obj)  # drop_nulls returns a fresh deep copy
        with self._lock:
            st = self._state(k)
            meta = new.get("metadata")
            if meta is None:
                meta = new["metadata"] = {}
            if not isinstance(meta, dict):
                raise ApiError(400, "BadRequest", "metadata must be an object")
            self._check_type(k, new)
            ns = self._namespace_for(k, meta, namespace)
            if ns is not None and not replay:
                self._check_namespace_open(ns)
            name = meta.get("name") or ""
            # A separate stream for some namespaces (or cluster-scoped names): objects added there
            # leave the uids and generated names of everything else unchanged.
            rng = self.uid_streams.get(ns if ns else name) or self._rng
            if not name:
                gen = meta.get("generateName") or ""
                if not gen:
                    raise self._invalid(
                        k, "", "metadata.name", "Required value", "name or generateName is required"
                    )
                for _ in range(16):
                    name = gen + "".join(rng.choice(_GENERATE_ALPHABET) for _ in range(5))
                    if self._key(k, ns, name) not in st.objects:
                        break
                meta["name"] = name
            problem = schema.name_problem(k, name)
            if problem:
                raise self._invalid(k, name, "metadata.name", f'Invalid value: "{name}"', problem)
            key = self._key(k, ns, name)
            if key in st.objects:
                raise ApiError(
                    409,
                    "AlreadyExists",
                    f'{k.resource} "{name}" already exists',
                    {"name": name, "group": k.group, "kind": k.plural},
                )
            now = self.clock.rfc3339()
            if replay:
                meta.setdefault("uid", self._new_uid(rng))
                meta.setdefault("creationTimestamp", now)
                meta.setdefault("generation", 1)
            else:
                for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "managedFields"):
                    meta.pop(field, None)
                meta["uid"] = self._new_uid(rng)
                meta["creationTimestamp"] = now
                meta["generation"] = 1
                schema.apply_schema(k, new)
                schema.initial_status(k, new)
                for hook in self._admission:
                    hook("CREATE", k, new, None)
            meta.pop("resourceVersion", None)
            if dry_run:
                new["metadata"]["resourceVersion"] = ""
                return new
            entry = self._commit(st, "ADDED", key, None, new)
            return entry.clone()

    def _check_type(self, k: Kind, obj: Obj) -> None:
        api_version, kind_name = obj.get("apiVersion"), obj.get("kind")
        if api_version not in (None, "", k.api_version) or kind_name not in (None, "", k.kind):
            raise ApiError(
                400,
                "BadRequest",
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({k.api_version}) or the kind ({kind_name}) is not {k.kind}",
            )
        obj["apiVersion"] = k.api_version
        obj["kind"] = k.kind
        _order_top(obj)

    def _namespace_for(self, k: Kind, meta: Obj, namespace: str | None) -> str | None:
        if not k.namespaced:
            meta.pop("namespace", None)
            return None
        given = meta.get("namespace")
        if namespace and given and given != namespace:
            raise ApiError(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        ns = namespace or given
        if not ns:
            raise ApiError(400, "BadRequest", f"a namespace is required to create {k.resource}")
        meta["namespace"] = ns
        return ns

    def _check_namespace_open(self, ns: str) -> None:
        entry = self._kinds[NAMESPACE].objects.get(("", ns))
        if entry is None:
            raise ApiError(
                404, "NotFound", f'namespaces "{ns}" not found', {"name": ns, "kind": "namespaces"}
            )
        if entry.obj["metadata"].get("deletionTimestamp"):
            raise ApiError(
                403,
                "Forbidden",
                f"unable to create new content in namespace {ns} because it is being terminated",
            )

    def _invalid(self, k: Kind, name: str, field: str, what: str, message: str) -> ApiError:
        return ApiError(
            422,
            "Invalid",
            f'{k.kind}.{k.group or "core"} "{name}" is invalid: {field}: {what}: {message}'
            if k.group
            else f'{k.kind} "{name}" is invalid: {field}: {what}: {message}',
            {
                "name": name,
                "group": k.group,
                "kind": k.kind,
                "causes": [{"reason": "FieldValueInvalid", "message": f"{what}: {message}", "field": field}],
            },
        )

    # ---------------------------------------------------------------- read
    def get(self, kind: Kind | str, namespace: str | None, name: str) -> Obj:
        """A copy of the object; ApiError 404 when absent."""
        k = resolve(kind)
        with self._lock:
            entry = self._state(k).objects.get(self._key(k, namespace, name))
        if entry is None:
            raise _not_found(k, name)
        return entry.clone()

    def get_entry(self, kind: Kind | str, namespace: str | None, name: str) -> _Entry:
        """The stored entry (read-only object + cached JSON); ApiError 404 when absent."""
        k = resolve(kind)
        with self._lock:
            entry = self._state(k).objects.get(self._key(k, namespace, name))
        if entry is None:
            raise _not_found(k, name)
        return entry

    def peek(self, kind: Kind | str, namespace: str | None, name: str) -> Obj | None:
        """The stored object itself (no copy; READ-ONLY, never modify it), or None when absent."""
        k = resolve(kind)
        with self._lock:
            entry = self._state(k).objects.get(self._key(k, namespace, name))
        return entry.obj if entry is not None else None

    def try_get(self, kind: Kind | str, namespace: str | None, name: str) -> Obj | None:
        """A copy of the object, or None when absent."""
        try:
            return self.get(kind, namespace, name)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def by_uid(self, uid: str) -> tuple[Kind, Obj] | None:
        """(kind, copy) of the live object with this uid, or None."""
        with self._lock:
            loc = self._uids.get(uid)
            if loc is None:
                return None
            entry = self._kinds[loc[0]].objects.get(loc[1])
            return (loc[0], entry.clone()) if entry else None

    def count(self, kind: Kind | str, namespace: str | None = None) -> int:
        k = resolve(kind)
        with self._lock:
            st = self._state(k)
            if namespace is None or not k.namespaced:
                return len(st.objects)
            return sum(1 for key in st.objects if key[0] == namespace)

    def list(
        self,
        kind: Kind | str,
        namespace: str | None = None,
        label_selector: str | Matcher | None = None,
        field_selector: str | Matcher | None = None,
    ) -> tuple[list[Obj], str]:
        """All matching objects (copies) in (namespace, name) order, and the list resourceVersion."""
        page = self.list_page(kind, namespace, label_selector, field_selector)
        return [e.clone() for e in page.entries], page.resource_version

    def iter_objects(self, kind: Kind | str, namespace: str | None = None) -> builtins.list[Obj]:
        """The stored objects themselves (no copies; READ-ONLY) in key order. For controllers that
        scan large collections: cheap, but never modify what this returns."""
        page = self.list_page(kind, namespace)
        return [e.obj for e in page.entries]

    def list_page(
        self,
        kind: Kind | str,
        namespace: str | None = None,
        label_selector: str | Matcher | None = None,
        field_selector: str | Matcher | None = None,
        *,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListPage:
        """One page of a list (entries are the stored, read-only objects).

        ``limit`` <= 0 or None means everything. ``continue_token`` comes from a previous page; it
        resumes after the last key returned and keeps that page's resourceVersion. A token whose
        resourceVersion has been compacted raises ApiError 410 Expired; a malformed one 400.
        """
        k = resolve(kind)
        matcher = _compile(k, label_selector, field_selector)
        with self._lock:
            st = self._state(k)
            list_rv = self._rv
            start: Key | None = None
            if continue_token:
                list_rv, start = self._decode_continue(continue_token)
                if list_rv < self._list_compacted_rv:
                    raise ApiError(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result. "
                        "You can start a new list without the continue parameter.",
                    )
            keys = st.index.sorted()
            if namespace is not None and k.namespaced:
                lo = bisect.bisect_left(keys, (namespace, ""))
                hi = bisect.bisect_left(keys, (namespace + "\x00", ""))
            else:
                lo, hi = 0, len(keys)
            if start is not None:
                lo = max(lo, bisect.bisect_right(keys, start))
            want = limit if limit and limit > 0 else None
            out: list[_Entry] = []
            objects = st.objects
            more = False
            i = lo
            while i < hi:
                entry = objects.get(keys[i])
                i += 1
                if entry is None or (matcher is not None and not matcher(entry.obj)):
                    continue
                if want is not None and len(out) == want:
                    more = True
                    break
                out.append(entry)
            token, remaining = "", None
            if more:
                last = out[-1].obj["metadata"]
                token = self._encode_continue(
                    list_rv, (last.get("namespace") or "" if k.namespaced else "", last["name"])
                )
                if matcher is None:
                    # Keys not yet after the cursor, counting lazily-removed ones: an estimate, as
                    # the API documents remainingItemCount to be under churn. O(1) per page.
                    remaining = hi - (i - 1)
            return ListPage(out, str(list_rv), token, remaining)

    @staticmethod
    def _encode_continue(rv: int, key: Key) -> str:
        raw = json.dumps({"v": "sim/v1", "rv": rv, "start": list(key)}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @staticmethod
    def _decode_continue(token: str) -> tuple[int, Key]:
        try:
            padded = token + "=" * (-len(token) % 4)
            data = json.loads(base64.urlsafe_b64decode(padded.encode()))
            rv, start = int(data["rv"]), data["start"]
            return rv, (str(start[0]), str(start[1]))
        except (ValueError, KeyError, TypeError, IndexError, binascii.Error):
            raise ApiError(400, "BadRequest", f"continue key is not valid: {token!r}") from None

    # ---------------------------------------------------------------- write
    def update(
        self,
        kind: Kind | str,
        obj: Obj,
        *,
        status: bool = False,
        namespace: str | None = None,
        name: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """PUT semantics. ``status=True`` is the /status subresource (only status changes; 404 for
        kinds without one). With a status subresource, a main-resource PUT keeps the old status.
        A stale metadata.resourceVersion gives 409 Conflict; custom resources require one (422).
        Generation is bumped when the spec changes. An update that changes nothing commits nothing.
        Removing the last finalizer of an object being deleted deletes it.
        """
        k = resolve(kind)
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
            raise ApiError(400, "BadRequest", "the body of the request was not a valid object")
        new = schema.drop_nulls(obj)  # drop_nulls returns a fresh deep copy
        meta = new.setdefault("metadata", {})
        name = name or meta.get("name") or ""
        if meta.get("name") and meta["name"] != name:
            raise ApiError(400, "BadRequest", "the name of the object does not match the name on the URL")
        with self._lock:
            st = self._state(k)
            if status and not k.status_subresource:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            ns = (namespace or meta.get("namespace")) if k.namespaced else None
            if k.namespaced and namespace and meta.get("namespace") and meta["namespace"] != namespace:
                raise ApiError(
                    400,
                    "BadRequest",
                    "the namespace of the provided object does not match the namespace sent on the request",
                )
            key = self._key(k, ns, name)
            old = st.objects.get(key)
            if old is None:
                raise _not_found(k, name)
            self._check_type(k, new)
            given_rv = meta.get("resourceVersion")
            if given_rv:
                if given_rv != old.obj["metadata"]["resourceVersion"]:
                    raise self._conflict(k, name)
            elif k.crd:
                raise self._invalid(
                    k,
                    name,
                    "metadata.resourceVersion",
                    "Invalid value: 0x0",
                    "must be specified for an update",
                )
            new = self._updated_object(k, old.obj, new, status=status)
            return self._write(st, k, key, old, new, dry_run=dry_run)

    def _updated_object(self, k: Kind, old: dict, new: dict, *, status: bool) -> dict:
        """The object an update or patch stores, under the status-subresource rules.

        A ``/status`` write keeps everything of ``old`` but its status; a main-resource write of a
        kind with a status subresource keeps ``old``'s status. Main-resource writes
        also get the CRD defaults and the admission hooks. Raises whatever an admission hook raises.
        """
        if status:
            merged = copy_json(old)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            return merged
        if k.status_subresource:
            if "status" in old:
                new["status"] = copy_json(old["status"])
            else:
                new.pop("status", None)
        schema.apply_schema(k, new)
        for hook in self._admission:
            hook("UPDATE", k, new, old)
        return new

    def _conflict(self, k: Kind, name: str) -> ApiError:
        return ApiError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {k.resource} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            {"name": name, "group": k.group, "kind": k.plural},
        )

    def _write(
        self,
        st: _KindState,
        k: Kind,
        key: Key,
        old: _Entry,
        new: Obj,
        *,
        dry_run: bool = False,
        copy: bool = True,
    ) -> Obj:
        """Common tail of update/patch/mutate: keep server-owned metadata, bump generation on spec
        change, skip no-op writes, finish deletion when the last finalizer goes. Returns a copy of
        the stored object, or with ``copy=False`` the stored object itself (read-only)."""
        old_meta, meta = old.obj["metadata"], new.setdefault("metadata", {})
        for field in _TERMINAL_META:
            if field in old_meta:
                meta[field] = old_meta[field]
            else:
                meta.pop(field, None)
        meta["name"] = old_meta["name"]
        if k.namespaced:
            meta["namespace"] = old_meta.get("namespace")
        else:
            meta.pop("namespace", None)
        new["apiVersion"], new["kind"] = k.api_version, k.kind
        _order_top(new)
        generation = old_meta.get("generation", 1)
        if _spec_part(k, new) != _spec_part(k, old.obj):
            generation += 1
        meta["generation"] = generation
        meta["resourceVersion"] = old_meta.get("resourceVersion", "")
        if new == old.obj:
            return old.clone() if copy else old.obj
        if dry_run:
            return new
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            meta.pop("finalizers", None)
            entry = self._commit(st, "MODIFIED", key, old, new)
            self._finish_delete(k, key, entry, "Background")
        else:
            entry = self._commit(st, "MODIFIED", key, old, new)
        return entry.clone() if copy else entry.obj

    def patch(
        self,
        kind: Kind | str,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: str,
        *,
        status: bool = False,
        dry_run: bool = False,
    ) -> Obj:
        """PATCH with ``patch_type`` "merge" (RFC 7386), "json" (RFC 6902), "strategic" (strategic
        merge for core kinds, merge for custom resources, as kubectl apply expects) or "apply"
        (server-side apply, approximated as a merge patch that may create). The result goes through
        the same rules as ``update``. Errors: 404, 409 (patch sets a stale resourceVersion),
        422 (failed JSON-patch test / invalid result), 400 (malformed patch)."""
        k = resolve(kind)
        with self._lock:
            st = self._state(k)
            if status and not k.status_subresource:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            key = self._key(k, namespace, name)
            old = st.objects.get(key)
            if old is None:
                if patch_type == "apply" and isinstance(patch, dict):
                    obj = dict(patch)
                    obj.setdefault("metadata", {})["name"] = name
                    return self.create(k, obj, namespace, dry_run=dry_run)
                raise _not_found(k, name)
            base = old.clone()
            try:
                if patch_type == "json":
                    new = json_patch(base, patch)
                elif patch_type == "strategic" and not k.crd:
                    new = strategic_merge_patch(base, patch)
                elif patch_type in ("merge", "strategic", "apply"):
                    if not isinstance(patch, dict):
                        raise PatchError("a merge patch must be a JSON object", 400)
                    new = merge_patch(base, patch)
                else:
                    raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type!r}")
            except PatchError as exc:
                raise ApiError(exc.code, REASONS[exc.code], str(exc)) from None
            if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
                raise ApiError(422, "Invalid", "the patch removes the object's metadata")
            new = schema.drop_nulls(new)
            given = new["metadata"].get("resourceVersion")
            if given and given != old.obj["metadata"]["resourceVersion"]:
                raise self._conflict(k, name)
            new = self._updated_object(k, old.obj, new, status=status)
            return self._write(st, k, key, old, new, dry_run=dry_run)

    def mutate(
        self, kind: Kind | str, namespace: str | None, name: str, fn: Callable[[Obj], Obj | None]
    ) -> Obj:
        """For controllers: ``fn(copy)`` edits the object in place (or returns a replacement); the
        result is committed atomically (no subresource rules, no admission), bumping
        resourceVersion and emitting MODIFIED — unless nothing changed. Returns the stored copy.
        404 when absent."""
        return self._mutate(kind, namespace, name, fn, copy=True)

    def mutate_stored(
        self, kind: Kind | str, namespace: str | None, name: str, fn: Callable[[Obj], Obj | None]
    ) -> Obj:
        """``mutate`` returning the stored object itself, not a copy: READ-ONLY, never modify it
        (for controllers that only read the result)."""
        return self._mutate(kind, namespace, name, fn, copy=False)

    def _mutate(
        self,
        kind: Kind | str,
        namespace: str | None,
        name: str,
        fn: Callable[[Obj], Obj | None],
        *,
        copy: bool,
    ) -> Obj:
        k = resolve(kind)
        with self._lock:
            st = self._state(k)
            key = self._key(k, namespace, name)
            old = st.objects.get(key)
            if old is None:
                raise _not_found(k, name)
            work = old.clone()
            result = fn(work)
            new = result if isinstance(result, dict) else work
            return self._write(st, k, key, old, schema.drop_nulls(new), copy=copy)

    # ---------------------------------------------------------------- delete
    def delete(
        self,
        kind: Kind | str,
        namespace: str | None,
        name: str,
        *,
        propagation: str = "Background",
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
        copy: bool = True,
    ) -> Obj:
        """DELETE. Returns the object as last seen (with deletionTimestamp set when finalizers keep
        it): a copy, or with ``copy=False`` the stored object itself (read-only). ``propagation``:
        "Background" (delete, then dependents), "Foreground" (dependents first), "Orphan" (remove
        this owner from dependents' ownerReferences). Dependents are the objects whose
        ownerReferences name the deleted uid and have no other live owner.
        ``uid``/``resource_version`` are preconditions (409 Conflict when they do not match)."""
        k = resolve(kind)
        if propagation not in ("Background", "Foreground", "Orphan"):
            raise ApiError(400, "BadRequest", f"unsupported propagationPolicy {propagation!r}")
        with self._lock:
            st = self._state(k)
            key = self._key(k, namespace, name)
            old = st.objects.get(key)
            if old is None:
                raise _not_found(k, name)
            meta = old.obj["metadata"]
            if (uid and uid != meta.get("uid")) or (
                resource_version and resource_version != meta.get("resourceVersion")
            ):
                raise ApiError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {k.resource} "{name}": '
                    "the precondition does not match",
                )
            for hook in self._admission:
                hook("DELETE", k, old.obj, old.obj)  # read-only here: validating only
            if dry_run:
                return old.clone() if copy else old.obj
            if propagation == "Orphan":
                self._orphan(meta.get("uid", ""))
                old = st.objects[key]
            if meta.get("finalizers"):
                if meta.get("deletionTimestamp"):
                    return old.clone() if copy else old.obj
                new = old.clone()
                new["metadata"]["deletionTimestamp"] = self.clock.rfc3339()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                entry = self._commit(st, "MODIFIED", key, old, new)
                return entry.clone() if copy else entry.obj
            if propagation == "Foreground":
                self._cascade(meta.get("uid", ""), "Foreground", exclude=(k, key))
            final = old.clone()
            if not final["metadata"].get("deletionTimestamp"):
                final["metadata"]["deletionTimestamp"] = self.clock.rfc3339()
                final["metadata"]["deletionGracePeriodSeconds"] = 0
            entry = self._commit(st, "DELETED", key, old, final)
            self._after_delete(k, entry, propagation)
            return entry.clone() if copy else entry.obj

    def _finish_delete(self, k: Kind, key: Key, entry: _Entry, propagation: str) -> None:
        st = self._kinds[k]
        final = json.loads(entry.raw)
        deleted = self._commit(st, "DELETED", key, entry, final)
        self._after_delete(k, deleted, propagation)

    def _after_delete(self, k: Kind, entry: _Entry, propagation: str) -> None:
        uid = entry.obj["metadata"].get("uid", "")
        if propagation != "Orphan":
            self._cascade(uid, "Background")
        if k is NAMESPACE:
            ns = entry.obj["metadata"]["name"]
            for st in self._kinds.values():
                if not st.kind.namespaced:
                    continue
                keys = st.index.sorted()
                lo = bisect.bisect_left(keys, (ns, ""))
                hi = bisect.bisect_left(keys, (ns + "\x00", ""))
                for key in list(keys[lo:hi]):
                    if key in st.objects:
                        self._force_delete(st, key)

    def _force_delete(self, st: _KindState, key: Key) -> None:
        old = st.objects.get(key)
        if old is None:
            return
        final = old.clone()
        final["metadata"].setdefault("deletionTimestamp", self.clock.rfc3339())
        entry = self._commit(st, "DELETED", key, old, final)
        self._cascade(entry.obj["metadata"].get("uid", ""), "Background")

    def _cascade(self, owner_uid: str, propagation: str, exclude: tuple[Kind, Key] | None = None) -> None:
        """Delete dependents of ``owner_uid`` that have no other live owner (the garbage collector)."""
        for dep_kind, dep_key in sorted(
            self._dependents.get(owner_uid, set()), key=lambda d: (d[0].key, d[1])
        ):
            if (dep_kind, dep_key) == exclude:
                continue
            st = self._kinds[dep_kind]
            entry = st.objects.get(dep_key)
            if entry is None:
                continue
            refs = entry.obj["metadata"].get("ownerReferences") or ()
            live = [r for r in refs if r.get("uid") != owner_uid and r.get("uid") in self._uids]
            if live:
                continue
            with contextlib.suppress(ApiError):  # already gone
                self.delete(dep_kind, dep_key[0] or None, dep_key[1], propagation=propagation, copy=False)

    def _orphan(self, owner_uid: str) -> None:
        for dep_kind, dep_key in list(self._dependents.get(owner_uid, set())):
            st = self._kinds[dep_kind]
            old = st.objects.get(dep_key)
            if old is None:
                continue
            new = old.clone()
            refs = [r for r in new["metadata"].get("ownerReferences") or () if r.get("uid") != owner_uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self._write(st, dep_kind, dep_key, old, new)

    def delete_collection(
        self,
        kind: Kind | str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        *,
        propagation: str = "Background",
    ) -> builtins.list[Obj]:
        """DELETE on a collection: delete every matching object; returns what was deleted."""
        k = resolve(kind)
        with self._lock:
            page = self.list_page(k, namespace, label_selector, field_selector)
            out = []
            for e in page.entries:
                m = e.obj["metadata"]
                try:
                    out.append(self.delete(k, m.get("namespace"), m["name"], propagation=propagation))
                except ApiError as exc:
                    if exc.code != 404:
                        raise
            return out

    # ---------------------------------------------------------------- watch
    def watch(
        self,
        kind: Kind | str,
        namespace: str | None = None,
        resource_version: str | int | None = None,
        label_selector: str | Matcher | None = None,
        field_selector: str | Matcher | None = None,
    ) -> Watch:
        """Start a watch. ``resource_version`` None, "" or "0": synthetic ADDED events for the
        current matching objects, then changes (as a real API server). Otherwise: every change
        after that resourceVersion; ApiError 410 Expired when it is older than the retained
        history (see ``history_size``, ``compact``), ApiError 504 "Too large resource version"
        when it is newer than the store's (``too_large_rv``). An object that stops matching the
        selectors yields DELETED; one that starts matching yields ADDED."""
        k = resolve(kind)
        matcher = _compile(k, label_selector, field_selector)
        ns = namespace if k.namespaced else None
        with self._lock:
            st = self._state(k)
            w = Watch(self, st, ns, matcher)
            if resource_version is None or resource_version in ("", "0", 0):
                for entry in self.list_page(k, ns, matcher).entries:
                    w._push("ADDED", entry)
            else:
                try:
                    rv = int(resource_version)
                except (TypeError, ValueError):
                    raise ApiError(
                        400, "BadRequest", f"invalid resourceVersion {resource_version!r}"
                    ) from None
                if rv < st.compacted_rv:
                    raise ApiError(410, "Expired", f"too old resource version: {rv} ({st.compacted_rv})")
                if rv > self._rv:
                    raise too_large_rv(rv, self._rv)
                hist = st.history
                # History is in rv order: skip to the first item after rv.
                start = len(hist)
                if hist and hist[-1].rv > rv:
                    lo, hi = 0, len(hist)
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if hist[mid].rv <= rv:
                            lo = mid + 1
                        else:
                            hi = mid
                    start = lo
                for i in range(start, len(hist)):
                    item = hist[i]
                    w._offer(item.type, item.old, item.new)
            st.watchers.add(w)
            return w

    def check_resource_version(self, resource_version: str | int | None) -> None:
        """For a list with ``resourceVersion`` (not "0": "not older than" semantics): ApiError 400
        when it is not an integer, 504 "Too large resource version" when the store has not
        reached it (``too_large_rv``)."""
        if resource_version is None or resource_version in ("", "0", 0):
            return
        try:
            rv = int(resource_version)
        except (TypeError, ValueError):
            raise ApiError(400, "BadRequest", f"invalid resourceVersion {resource_version!r}") from None
        with self._lock:
            if rv > self._rv:
                raise too_large_rv(rv, self._rv)

    def watcher_counts(self) -> dict[str, int]:
        """Open store watches per resource plural (for /_sim/stats)."""
        with self._lock:
            return {st.kind.key: len(st.watchers) for st in self._kinds.values() if st.watchers}

    def drop_watches(self, kinds: Iterable[Kind] | None = None) -> int:
        """Close every open watch (of ``kinds``, default all); returns how many."""
        n = 0
        with self._lock:
            for st in self._kinds.values():
                if kinds is not None and st.kind not in kinds:
                    continue
                for w in list(st.watchers):
                    w._close("dropped")
                    n += 1
                st.watchers.clear()
        return n

    def compact(self) -> int:
        """Forget all watch history (like etcd compaction): a later watch from any older
        resourceVersion, or a list continue token issued before now, gets 410 Expired.
        Returns the compaction resourceVersion."""
        with self._lock:
            for st in self._kinds.values():
                st.history.clear()
                st.compacted_rv = self._rv
            self._list_compacted_rv = self._rv
            return self._rv
