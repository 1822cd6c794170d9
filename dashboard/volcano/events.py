"""Kubernetes Events (core/v1 and events.k8s.io/v1 shapes): what they are about, when they were
seen, how often, and repeats folded into one."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from dashboard.volcano.objects import as_dict, as_str, count, namespace
from dashboard.volcano.time import EPOCH, created_at, parse_time


def involved(event: object) -> dict[str, Any]:
    """The object an Event is about: involvedObject (core/v1), else regarding (events.k8s.io)."""
    ev = as_dict(event)
    return as_dict(ev.get("involvedObject")) or as_dict(ev.get("regarding"))


def event_ref(event: object) -> tuple[str, str | None, str]:
    """(kind, namespace, name) of the event's involvedObject; cluster-scoped objects get None."""
    ref = as_dict(as_dict(event).get("involvedObject"))
    ns = ref.get("namespace")
    return (as_str(ref.get("kind")), ns if isinstance(ns, str) and ns else None, as_str(ref.get("name")))


def event_involved_uid(event: object) -> str:
    """involvedObject.uid when it is a string, else ""."""
    uid = as_dict(as_dict(event).get("involvedObject")).get("uid")
    return uid if isinstance(uid, str) else ""


def is_warning(event: object) -> bool:
    return as_dict(event).get("type") == "Warning"


def event_last(event: object) -> datetime | None:
    """When an Event was last seen: lastTimestamp, series.lastObservedTime, eventTime,
    firstTimestamp, then metadata.creationTimestamp (events.k8s.io events carry only
    eventTime/series)."""
    ev = as_dict(event)
    return (
        parse_time(ev.get("lastTimestamp"))
        or parse_time(as_dict(ev.get("series")).get("lastObservedTime"))
        or parse_time(ev.get("eventTime"))
        or parse_time(ev.get("firstTimestamp"))
        or created_at(ev)
    )


def event_first(event: object) -> datetime | None:
    """When an Event was first seen: firstTimestamp, eventTime, else ``event_last``."""
    ev = as_dict(event)
    return parse_time(ev.get("firstTimestamp")) or parse_time(ev.get("eventTime")) or event_last(ev)


def event_count(event: object) -> int:
    """How often the Event happened: count, else series.count; at least 1."""
    ev = as_dict(event)
    return max(1, count(ev.get("count")) or count(as_dict(ev.get("series")).get("count")))


@dataclass(frozen=True)
class Variant:
    """One distinct message among Events folded by meaning (``fold_by_meaning``): how often it
    was seen and when it was last seen."""

    message: str
    count: int
    last: datetime | None


@dataclass
class EventRecord:
    """One Event as the pages list it; ``object_missing`` is set by the pages when the involved
    object is not in the cache (then shown unlinked). ``variants``: the distinct messages folded
    into this row, newest first, when there is more than one (``fold_by_meaning``), else ()."""

    type: str
    reason: str
    message: str
    object_kind: str
    object_name: str
    object_namespace: str
    count: int
    first: datetime | None
    last: datetime | None
    source: str
    object_missing: str = ""
    variants: tuple[Variant, ...] = field(default=())

    @property
    def warning(self) -> bool:
        return self.type == "Warning"


def event_record(event: Mapping[str, Any]) -> EventRecord:
    """An Event's record: type (default "Normal"), reason, message (or note), the involved object,
    count, first/last seen and the reporting component."""
    ev = as_dict(event)
    inv = involved(ev)
    src = as_dict(ev.get("source"))
    return EventRecord(
        type=as_str(ev.get("type")) or "Normal",
        reason=as_str(ev.get("reason")),
        message=as_str(ev.get("message")) or as_str(ev.get("note")),
        object_kind=as_str(inv.get("kind")),
        object_name=as_str(inv.get("name")),
        object_namespace=as_str(inv.get("namespace")) or namespace(ev),
        count=event_count(ev),
        first=event_first(ev),
        last=event_last(ev),
        source=as_str(src.get("component"))
        or as_str(ev.get("reportingComponent"))
        or as_str(ev.get("reportingController")),
    )


def event_records(events: Iterable[Mapping[str, Any]], limit: int | None = None) -> list[EventRecord]:
    """Records of ``events``, newest last-seen first (then newest first-seen), at most ``limit``."""
    rows = [event_record(e) for e in events]
    rows.sort(key=lambda r: (r.last or EPOCH, r.first or EPOCH), reverse=True)
    return rows[:limit] if limit else rows


def latest_per_object(
    rows: Iterable[EventRecord], limit: int, *, by_message: bool = False
) -> list[EventRecord]:
    """One record per (object, reason) with the newest message and the summed count, newest
    first; with ``by_message`` one per (object, reason, message), as ``kubectl describe`` lists
    them. The first-seen time is the earliest of those folded."""
    merged: dict[tuple[str, ...], EventRecord] = {}
    for r in sorted(rows, key=lambda r: r.last or EPOCH, reverse=True):
        key: tuple[str, ...] = (r.object_kind, r.object_namespace, r.object_name, r.reason)
        if by_message:
            key += (r.message,)
        m = merged.get(key)
        if m is None:
            merged[key] = replace(r)
        else:
            m.count += r.count
            if r.first and (m.first is None or r.first < m.first):
                m.first = r.first
    return list(merged.values())[:limit]


# A number as messages write it: digits with decimal points or thousands separators between them
# ("0/3", "1.5", "12,000"), with an optional unit suffix glued to it is kept as text.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_UID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def message_shape(message: str) -> str:
    """What a message says with its numbers and counts left out: every number written ``#``, every
    UID ``<uid>``, runs of white space one space. "0/3 nodes are available: 3 Insufficient cpu"
    and "0/5 nodes are available: 5 Insufficient cpu" have the same shape."""
    text = _UID.sub("<uid>", message)
    return _SPACE.sub(" ", _NUMBER.sub("#", text)).strip()


def fold_key(row: EventRecord) -> tuple[str, ...]:
    """Events with the same key say the same thing about the same object: type, involved object,
    reason and ``message_shape``."""
    return (
        row.type,
        row.object_kind,
        row.object_namespace,
        row.object_name,
        row.reason,
        message_shape(row.message),
    )


def _variants(row: EventRecord) -> tuple[Variant, ...]:
    return row.variants or (Variant(row.message, row.count, row.last),)


def _merged_variants(rows: list[EventRecord]) -> tuple[Variant, ...]:
    by_message: dict[str, Variant] = {}
    for row in rows:
        for v in _variants(row):
            seen = by_message.get(v.message)
            if seen is None:
                by_message[v.message] = v
            else:
                last = max((t for t in (seen.last, v.last) if t is not None), default=None)
                by_message[v.message] = Variant(v.message, seen.count + v.count, last)
    merged = sorted(by_message.values(), key=lambda v: (v.last or EPOCH, v.message), reverse=True)
    return tuple(merged) if len(merged) > 1 else ()


def fold_by_meaning(rows: Iterable[EventRecord]) -> list[EventRecord]:
    """``rows`` with those of the same ``fold_key`` folded into one, newest last-seen first: the
    counts summed, the earliest first-seen and the latest last-seen, the newest row's message,
    type and source, and the distinct messages in ``variants`` (when more than one).

    Pure (the rows given are not changed) and idempotent (folding folded rows gives them back);
    the sum of the counts is kept."""
    # By last-seen only, stable: a folded row keeps its newest member's last-seen (so a second fold
    # keeps the order) while its first-seen moves.
    ordered = sorted(rows, key=lambda r: r.last or EPOCH, reverse=True)
    groups: dict[tuple[str, ...], list[EventRecord]] = {}
    for row in ordered:
        groups.setdefault(fold_key(row), []).append(row)
    out: list[EventRecord] = []
    for members in groups.values():
        newest = members[0]
        if len(members) == 1:
            out.append(replace(newest))
            continue
        firsts = [r.first for r in members if r.first is not None]
        out.append(
            replace(
                newest,
                count=sum(r.count for r in members),
                first=min(firsts) if firsts else None,
                variants=_merged_variants(members),
            )
        )
    return out
