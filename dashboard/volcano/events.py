"""Kubernetes Events (core/v1 and events.k8s.io/v1 shapes): what they are about, when they were
seen, how often, and repeats folded into one."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from dashboard.volcano.objects import as_dict, as_str, count, meta, namespace
from dashboard.volcano.time import CLOCK_SKEW_SECONDS, EPOCH, elapsed, parse_time, time_unset


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


def _first_set(*values: object) -> object:
    """The first of ``values`` that holds a time as written (``time_unset``), else None."""
    return next((v for v in values if not time_unset(v)), None)


def _last_field(ev: dict[str, Any]) -> object:
    return _first_set(
        ev.get("lastTimestamp"),
        as_dict(ev.get("series")).get("lastObservedTime"),
        ev.get("eventTime"),
        ev.get("firstTimestamp"),
        meta(ev).get("creationTimestamp"),
    )


def _first_field(ev: dict[str, Any]) -> object:
    value = _first_set(ev.get("firstTimestamp"), ev.get("eventTime"))
    return _last_field(ev) if value is None else value


def _invalid_time(value: object) -> str:
    return "" if value is None or parse_time(value) is not None else as_str(value) or repr(value)


def event_last(event: object) -> datetime | None:
    """When an Event was last seen: the first of lastTimestamp, series.lastObservedTime,
    eventTime, firstTimestamp and metadata.creationTimestamp that is set (``time_unset``;
    events.k8s.io events carry only eventTime/series). None when none is set, or when the one set
    is no readable time (``event_last_invalid``): a later field is no stand-in for a wrong one."""
    return parse_time(_last_field(as_dict(event)))


def event_last_invalid(event: object) -> str:
    """The last-seen time as written when it is set but no readable time (epoch 0, garbage),
    else ""."""
    return _invalid_time(_last_field(as_dict(event)))


def event_first(event: object) -> datetime | None:
    """When an Event was first seen: firstTimestamp, eventTime, else the last-seen field, the first
    of them set (as ``event_last``: None when that one is no readable time)."""
    return parse_time(_first_field(as_dict(event)))


def event_first_invalid(event: object) -> str:
    """The first-seen time as written when it is set but no readable time, else ""."""
    return _invalid_time(_first_field(as_dict(event)))


def event_count(event: object) -> int:
    """How often the Event happened: count, else series.count (core/v1 writes no count, or 0, for
    events.k8s.io events); at least 1. A count written as no positive integer (``event_count_invalid``)
    reads 1, the Event itself, for sums and ordering; the pages show it as invalid."""
    ev = as_dict(event)
    value = _count_field(ev)
    return 1 if value is None else max(1, count(value))


def _count_field(ev: dict[str, Any]) -> object:
    for value in (ev.get("count"), as_dict(ev.get("series")).get("count")):
        if value is not None and value != 0:
            return value
    return None


def event_count_invalid(event: object) -> str:
    """The count as written when it is set but no positive integer ("-3", "1.5", "x"), else ""."""
    value = _count_field(as_dict(event))
    if value is None or (not isinstance(value, bool) and count(value) > 0):
        return ""
    return as_str(value) or repr(value)


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
    into this row, newest first, when there is more than one (``fold_by_meaning``), else ().
    ``count_invalid``, ``first_invalid``, ``last_invalid``: the value as written when it is no
    valid count or time (``event_count_invalid``, ``event_first_invalid``, ``event_last_invalid``;
    then ``count`` is 1 and ``first``/``last`` None), else ""."""

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
    count_invalid: str = ""
    first_invalid: str = ""
    last_invalid: str = ""

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
        count_invalid=event_count_invalid(ev),
        first_invalid=event_first_invalid(ev),
        last_invalid=event_last_invalid(ev),
    )


def event_records(events: Iterable[Mapping[str, Any]], limit: int | None = None) -> list[EventRecord]:
    """Records of ``events``, newest last-seen first (then newest first-seen), at most ``limit``."""
    rows = [event_record(e) for e in events]
    rows.sort(key=lambda r: (r.last or EPOCH, r.first or EPOCH), reverse=True)
    return rows[:limit] if limit else rows


def _ahead(last: datetime | None, now: datetime | None, skew: float) -> bool:
    return last is not None and now is not None and elapsed(last, now, skew) is None


def rows_ahead(rows: Iterable[EventRecord], now: datetime, skew: float = CLOCK_SKEW_SECONDS) -> int:
    """How many of ``rows`` were last seen ahead of ``now`` by more than ``skew`` seconds: part of
    the version of what folds them (which message is current changes as they fall within ``skew``)."""
    return sum(1 for r in rows if _ahead(r.last, now, skew))


def current_member(members: list[EventRecord], now: datetime | None, skew: float) -> EventRecord:
    """The member of a group of Events (newest last-seen first) whose message is the group's
    current one: the newest whose last-seen is not ahead of ``now`` by more than ``skew`` seconds
    (dashboard.volcano.time.elapsed), else the newest. An Event stamped in the future (a writer's
    clock ahead, a hand-written timestamp) would otherwise stay "newest" and hide every message
    written since for as long as the clock is ahead. ``now`` None: the newest."""
    return next((r for r in members if not _ahead(r.last, now, skew)), members[0])


def _newest_first(rows: Iterable[EventRecord]) -> list[EventRecord]:
    # By last-seen only, stable: a folded row keeps its newest member's last-seen (so a second fold
    # keeps the order) while its first-seen moves.
    return sorted(rows, key=lambda r: r.last or EPOCH, reverse=True)


def _folded(
    members: list[EventRecord], now: datetime | None, skew: float, variants: bool = True
) -> EventRecord:
    """One row for ``members`` (newest last-seen first): the current member's message, type and
    source (``current_member``), the latest last-seen, the earliest first-seen, the counts summed
    (invalid when one is) and, with ``variants``, the distinct messages."""
    newest = members[0]
    if len(members) == 1:
        return replace(newest)
    firsts = [r.first for r in members if r.first is not None]
    return replace(
        current_member(members, now, skew),
        count=sum(r.count for r in members),
        first=min(firsts) if firsts else None,
        last=newest.last,
        # One invalid count leaves the sum unknown; a valid first-seen outranks an invalid one.
        count_invalid=next((r.count_invalid for r in members if r.count_invalid), ""),
        first_invalid="" if firsts else next((r.first_invalid for r in members if r.first_invalid), ""),
        last_invalid=newest.last_invalid,
        variants=_merged_variants(members, now, skew) if variants else (),
    )


def latest_per_object(
    rows: Iterable[EventRecord],
    limit: int,
    *,
    by_message: bool = False,
    now: datetime | None = None,
    skew: float = CLOCK_SKEW_SECONDS,
) -> list[EventRecord]:
    """One record per (object, reason) with the current message (``current_member`` at ``now``)
    and the summed count, newest first; with ``by_message`` one per (object, reason, message), as
    ``kubectl describe`` lists them. The first-seen time is the earliest of those folded, the
    last-seen the latest."""
    groups: dict[tuple[str, ...], list[EventRecord]] = {}
    for r in _newest_first(rows):
        key: tuple[str, ...] = (r.object_kind, r.object_namespace, r.object_name, r.reason)
        if by_message:
            key += (r.message,)
        groups.setdefault(key, []).append(r)
    return [_folded(m, now, skew, variants=False) for m in list(groups.values())[:limit]]


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


def _merged_variants(rows: list[EventRecord], now: datetime | None, skew: float) -> tuple[Variant, ...]:
    """The distinct messages of ``rows``, newest last-seen first, those last seen ahead of ``now``
    beyond ``skew`` after the others (as ``current_member``: the first is the current one); ()
    when there is only one."""
    by_message: dict[str, Variant] = {}
    for row in rows:
        for v in _variants(row):
            seen = by_message.get(v.message)
            if seen is None:
                by_message[v.message] = v
            else:
                last = max((t for t in (seen.last, v.last) if t is not None), default=None)
                by_message[v.message] = Variant(v.message, seen.count + v.count, last)
    merged = sorted(
        by_message.values(),
        key=lambda v: (not _ahead(v.last, now, skew), v.last or EPOCH, v.message),
        reverse=True,
    )
    return tuple(merged) if len(merged) > 1 else ()


def fold_by_meaning(
    rows: Iterable[EventRecord], now: datetime | None = None, skew: float = CLOCK_SKEW_SECONDS
) -> list[EventRecord]:
    """``rows`` with those of the same ``fold_key`` folded into one, newest last-seen first: the
    counts summed, the earliest first-seen and the latest last-seen, the current message, type and
    source (``current_member`` at ``now``: not one stamped ahead of ``now`` beyond ``skew``
    seconds while an on-time one exists), and the distinct messages in ``variants`` (when more
    than one), the current one first.

    Pure (the rows given are not changed) and idempotent (folding folded rows gives them back);
    the sum of the counts is kept."""
    groups: dict[tuple[str, ...], list[EventRecord]] = {}
    for row in _newest_first(rows):
        groups.setdefault(fold_key(row), []).append(row)
    return [_folded(members, now, skew) for members in groups.values()]
