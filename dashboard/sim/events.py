"""core/v1 Event recording for the simulated controllers, with aggregation and bounds.

Events are written into the store as ``v1 Event`` objects the way client-go's recorder and the API
server leave them: ``involvedObject`` (apiVersion, kind, name, namespace, uid), ``source.component``
(and ``host`` for the kubelet), ``firstTimestamp``/``lastTimestamp``, ``count``, ``type``,
``reason``, ``message`` (core/v1 Event).

Volume is bounded three ways, as the real event correlator bounds it:
- a repeat of the same (object, type, reason, message, source) updates the existing Event's
  ``count`` and ``lastTimestamp`` instead of creating a new one, and at most once per
  ``repeat_interval`` simulated seconds (repeats in between are folded into the next update);
- at most ``per_reason_cap`` distinct Events per involved object and reason, and ``per_object_cap``
  per involved object; later distinct ones are dropped (a new reason still gets through the first
  cap, so e.g. "pod group is ready" is recorded after many different Unschedulable messages);
- Events expire ``ttl`` simulated seconds after their ``lastTimestamp`` (the API server's 1 h).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from .kinds import kind_by_name
from .store import ApiError

EVENT = kind_by_name("Event", "")


def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_ref(obj: dict) -> dict:
    """The ``involvedObject`` reference for ``obj`` (a full object dict)."""
    md = obj.get("metadata") or {}
    ref = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""), "name": md.get("name", "")}
    if md.get("namespace"):
        ref["namespace"] = md["namespace"]
    if md.get("uid"):
        ref["uid"] = md["uid"]
    if md.get("resourceVersion"):
        ref["resourceVersion"] = md["resourceVersion"]
    return ref


@dataclass
class _Entry:
    namespace: str
    name: str
    count: int
    folded: int  # repeats seen since the last write
    last_write: float
    last_seen: float


class EventRecorder:
    """Records Events into ``store``; ``now`` returns the simulated time as a POSIX timestamp."""

    def __init__(
        self,
        store,
        now: Callable[[], float],
        *,
        repeat_interval: float = 30.0,
        per_object_cap: int = 60,
        per_reason_cap: int = 10,
        ttl: float = 3600.0,
    ) -> None:
        self.store = store
        self.now = now
        self.repeat_interval = repeat_interval
        self.per_object_cap = per_object_cap
        self.per_reason_cap = per_reason_cap
        self.ttl = ttl
        self._entries: dict[tuple, _Entry] = {}
        self._per_object: collections.Counter[str] = collections.Counter()
        self._per_reason: collections.Counter[tuple[str, str]] = collections.Counter()
        self._expiry: collections.deque[tuple[float, tuple]] = collections.deque()
        self._seq = 0
        self.written = 0
        self.dropped = 0

    def record(
        self,
        obj_or_ref: dict,
        type_: str,
        reason: str,
        message: str,
        component: str,
        *,
        host: str | None = None,
        field_path: str | None = None,
    ) -> None:
        """Record one occurrence. ``obj_or_ref`` is the involved object or its reference dict."""
        ref = object_ref(obj_or_ref) if "metadata" in obj_or_ref else dict(obj_or_ref)
        if field_path:
            ref["fieldPath"] = field_path
        uid = ref.get("uid") or f"{ref.get('kind')}/{ref.get('namespace')}/{ref.get('name')}"
        key = (uid, field_path, type_, reason, message, component)
        now = self.now()
        entry = self._entries.get(key)
        if entry is not None:
            entry.folded += 1
            entry.last_seen = now
            if now - entry.last_write < self.repeat_interval:
                return
            count = entry.count + entry.folded
            stamp = rfc3339(now)

            def bump(ev: dict) -> None:
                ev["count"] = count
                ev["lastTimestamp"] = stamp

            try:
                self.store.mutate(EVENT, entry.namespace, entry.name, bump)
            except ApiError:
                # Deleted behind our back (TTL, or a user): start a fresh Event.
                self._forget(key)
                entry = None
            else:
                entry.count = count
                entry.folded = 0
                entry.last_write = now
                self._expiry.append((now + self.ttl, key))
                self.written += 1
                return
        if (
            self._per_object[uid] >= self.per_object_cap
            or self._per_reason[(uid, reason)] >= self.per_reason_cap
        ):
            self.dropped += 1
            return
        namespace = ref.get("namespace") or "default"
        self._seq += 1
        name = f"{ref.get('name', 'unknown')}.{int(now * 1e9) + self._seq:x}"
        stamp = rfc3339(now)
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": {"component": component, **({"host": host} if host else {})},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": type_,
            "reportingComponent": component,
            "reportingInstance": host or "",
        }
        try:
            self.store.create(EVENT, event, namespace)
        except ApiError:
            self.dropped += 1
            return
        self._entries[key] = _Entry(namespace, name, 1, 0, now, now)
        self._per_object[uid] += 1
        self._per_reason[(uid, reason)] += 1
        self._expiry.append((now + self.ttl, key))
        self.written += 1

    def _forget(self, key: tuple) -> None:
        if self._entries.pop(key, None) is None or key[0] == "adopted":
            return
        uid, reason = key[0], key[3]
        self._per_object[uid] -= 1
        if self._per_object[uid] <= 0:
            del self._per_object[uid]
        self._per_reason[(uid, reason)] -= 1
        if self._per_reason[(uid, reason)] <= 0:
            del self._per_reason[(uid, reason)]

    def adopt(self, event: dict) -> None:
        """Take an Event created outside the recorder (a scenario) under TTL management."""
        md = event.get("metadata") or {}
        key = ("adopted", md.get("namespace"), md.get("name"))
        self._entries[key] = _Entry(md.get("namespace") or "default", md.get("name", ""), 0, 0, 0, 0)
        self._expiry.append((self.now() + self.ttl, key))

    def expire(self) -> int:
        """Delete Events whose TTL has passed; returns how many were deleted."""
        now = self.now()
        deleted = 0
        while self._expiry and self._expiry[0][0] <= now:
            _, key = self._expiry.popleft()
            entry = self._entries.get(key)
            if entry is None:
                continue
            if entry.last_write + self.ttl > now and key[0] != "adopted":
                continue  # refreshed since; a later expiry record exists
            self._forget(key)
            try:
                self.store.delete(EVENT, entry.namespace, entry.name)
                deleted += 1
            except ApiError:
                pass
        return deleted
