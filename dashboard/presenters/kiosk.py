"""The kiosk's words: the overall status line and the Warnings list marked new or chronic
(dashboard.volcano.attention decides which is which)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.volcano import attention as va
from dashboard.volcano.events import EventRecord
from dashboard.volcano.objects import name as name_of
from dashboard.volcano.objects import namespace as namespace_of
from dashboard.volcano.time import EPOCH

# Where the object of a "needs attention" item is (the overview's attention dict, one list per
# concern): the item's key, or None for a pod row (its own name and namespace) or a component row
# (volcano.scheduler.Readiness: its name, ready and desired replicas).
_ITEM_OBJECT = {
    "components": None,
    "crash": None,
    "stuck": "job",
    "unknown": "job",
    "below": "pg",
    "restarting": "job",
    "failed": "job",
    "pending": "job",
    "closed": "queue",
}


def _worst_text(concern: str, item: Any) -> str:
    key = _ITEM_OBJECT[concern]
    if concern == "components":
        return _("Volcano component %(name)s not ready (%(ready)s/%(desired)s)") % {
            "name": getattr(item, "name", ""),
            "ready": getattr(item, "ready", "?"),
            "desired": getattr(item, "desired", "?"),
        }
    if key is None:  # a pod row (presenters.pods.PodRow)
        name, ns = getattr(item, "name", ""), getattr(item, "namespace", "")
    else:
        obj = item.get(key) if isinstance(item, dict) else None
        name, ns = name_of(obj), namespace_of(obj)
    words = {
        "crash": _("crash-looping pod %(name)s in %(namespace)s"),
        "stuck": _("stuck Job %(name)s in %(namespace)s"),
        "unknown": _("Job %(name)s in %(namespace)s in an unknown phase"),
        "below": _("gang %(name)s in %(namespace)s below minMember"),
        "restarting": _("Job %(name)s in %(namespace)s restarting repeatedly"),
        "failed": _("failed Job %(name)s in %(namespace)s"),
        "pending": _("pending Job %(name)s in %(namespace)s"),
        "closed": _("closed queue %(name)s"),
    }
    return words[concern] % {"name": name, "namespace": ns}


@dataclass(frozen=True)
class OverallStatus:
    """The line at the top of the kiosk: ``tone`` ok/warn/bad, ``headline`` ("All clear", "5 need
    attention"), ``worst`` (the worst item named, "" when clear), ``total``, ``unchecked`` (the
    kinds that could not be read, from the attention dict)."""

    tone: str
    headline: str
    worst: str
    total: int
    unchecked: str


def overall_status(attention: dict[str, Any]) -> OverallStatus:
    """The overall status of the overview's attention dict (views.overview.attention: per group a
    list, worst first, and ``<group>_total``; ``unchecked``). What cannot be read is never all clear."""
    totals = {c: int(attention.get(f"{c}_total", len(attention.get(c) or ())) or 0) for c in va.CONCERNS}
    status = va.overall(totals)
    unchecked = str(attention.get("unchecked") or "")
    if status.worst is None:
        if unchecked:
            headline = _("Nothing needs attention among what can be read")
            return OverallStatus("warn", headline, "", 0, unchecked)
        return OverallStatus("ok", _("All clear"), "", 0, "")
    items = attention.get(status.worst) or []
    worst = _worst_text(status.worst, items[0]) if items else ""
    headline = ngettext("%(n)s needs attention", "%(n)s need attention", status.total) % {"n": status.total}
    return OverallStatus("bad", headline, worst, status.total, unchecked)


@dataclass(frozen=True)
class KioskWarning:
    """One row of the kiosk's Warnings: the folded ``record``, its ``recurrence`` (new, chronic,
    ongoing) and, for a chronic one, how long it has repeated (``span``, seconds)."""

    record: EventRecord
    recurrence: str
    span: float | None

    @property
    def new(self) -> bool:
        return self.recurrence == "new"

    @property
    def chronic(self) -> bool:
        return self.recurrence == "chronic"


_ORDER = {"new": 0, "ongoing": 1, "chronic": 2}


def kiosk_warnings(records: list[EventRecord], now: datetime) -> list[KioskWarning]:
    """``records`` (one per object and reason, views.overview.recent_warnings) marked and ordered
    for a wall display: new ones first, then the ongoing, chronic ones last (each newest first),
    so a new problem is never below one that has repeated for hours."""
    rows = []
    for r in records:
        # A count written as no number proves no repetition (volcano.events.event_count_invalid); a
        # last-seen ahead of now (clock skew) stretches no span beyond now.
        last = min(r.last, now) if r.last else None
        rec = va.warning_recurrence(r.first, last, 0 if r.count_invalid else r.count, now)
        span = (last - r.first).total_seconds() if rec == "chronic" and r.first and last else None
        rows.append(KioskWarning(r, rec, span))
    rows.sort(key=lambda w: w.record.last or EPOCH, reverse=True)
    rows.sort(key=lambda w: _ORDER[w.recurrence])
    return rows
