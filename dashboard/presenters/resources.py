"""Quantities in words and the resource bars of Queues."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.volcano.objects import as_dict, as_str, spec, status
from dashboard.volcano.quantities import (
    format_quantity,
    invalid_amount_note,
    is_byte_resource,
    is_cpu_resource,
    over_share,
    percent_over_text,
    plain_decimal,
    quantity,
    resource_amount,
    resource_sort_key,
)


def invalid_amount_text(raw: Any) -> str:
    """A ResourceList value that is no usable amount, shown as written plus why:
    "abc (not a quantity)", "-1Gi (negative)", "1e99 (out of range)"."""
    shown = format_quantity("", None, raw)
    note = invalid_amount_note(raw)
    if note == "negative":
        return _("%(value)s (negative)") % {"value": shown}
    if note == "out of range":
        return _("%(value)s (out of range)") % {"value": shown}
    return _("%(value)s (not a quantity)") % {"value": shown}


def amount_text(resource: str, raw: Any) -> tuple[Decimal | None, str]:
    """(the amount, its display text) of one ResourceList value: (None, "—") when absent, (None,
    "abc (not a quantity)") when invalid (unparsable or negative), else the value and its
    format_quantity text."""
    if raw is None:
        return None, "—"
    value = resource_amount(raw)
    if value is None:
        return None, invalid_amount_text(raw)
    return value, format_quantity(resource, value, raw)


def exact_quantity(resource: str, value: Decimal) -> str:
    """``value`` unrounded, for when format_quantity's rounding would hide a difference: cpu in
    millicores ("499m", "1000.5m"), byte resources in bytes ("536,869,912 bytes"), others as the
    plain decimal number."""
    if is_cpu_resource(resource):
        return f"{plain_decimal(value * 1000)}m"
    if is_byte_resource(resource):
        return ngettext("%(n)s byte", "%(n)s bytes", int(value)) % {"n": intcomma(plain_decimal(value))}
    return plain_decimal(value)


def min_resources(pg: Mapping) -> list[tuple[str, str]]:
    """PodGroup.spec.minResources as (resource, text) in resource order."""
    res = as_dict(spec(pg).get("minResources"))
    return [
        (as_str(k), format_quantity(as_str(k), quantity(v), v))
        for k, v in sorted(res.items(), key=lambda kv: resource_sort_key(as_str(kv[0])))
    ]


# Percentages are capped for display ("≥9999%"): quantities are bounded (dashboard.volcano
# .quantities), but 1m deserved against 10^30 allocated would still print a 33-digit percentage.
PCT_CAP = 9999


@dataclass
class ResourceBar:
    """One resource of a Queue: allocated against deserved, guarantee and capability.

    Percentages are integers for CSS width classes: ``fill`` is allocated on a scale that fits every
    value (so more than 100% of deserved is drawn past the deserved marker, honestly); ``pct`` is
    allocated / the effective share (deserved, or capability when it is lower or there is no
    deserved; ``pct_of`` names which) and may exceed 100.
    """

    name: str
    allocated: str
    deserved: str
    guarantee: str
    capability: str
    fill: int
    deserved_at: int | None
    guarantee_at: int | None
    capability_at: int | None
    pct: int | None
    pct_of: str
    over: bool
    tone: str
    has_ref: bool = True  # False: nothing to compare with (no deserved/guarantee/capability)
    invalid: bool = False  # a value is no usable amount (shown verbatim): no bar, no percentage
    # The invalid values as "capability abc (not a quantity)", for the note drawn instead of a bar.
    invalid_text: str = ""
    # spec.deserved is above spec.capability: ``pct`` is of the capability (the effective share).
    deserved_over_cap: bool = False
    # For an allocation over its share whose whole percentage would read 100 or less: the exact
    # reading ("100.4", ">100"; quantities.percent_over_text), shown in place of ``pct``.
    over_text: str = ""
    # status.allocated is above spec.capability (a capability of 0 included, which has no
    # percentage): said in words next to the numbers, not by colour alone.
    over_cap: bool = False

    @property
    def pct_text(self) -> str:
        """``pct`` for display: "≥9999" when capped at PCT_CAP, the exact reading when over but a
        whole percent would say 100 or less (``over_text``), "" when there is none."""
        if self.pct is None:
            return ""
        if self.over_text and self.pct <= 100:
            return self.over_text
        return f"≥{PCT_CAP}" if self.pct >= PCT_CAP else str(self.pct)


def _pct(part: Decimal, whole: Decimal) -> int:
    """part / whole in whole percent, 0..PCT_CAP; 0 for a zero or negative whole (callers show no
    percentage of such a whole at all)."""
    if whole <= 0:
        return 0
    ratio = part * 100 / whole
    if ratio >= PCT_CAP:
        return PCT_CAP
    return max(0, int(ratio.to_integral_value()))


# The four ResourceList fields of a Queue in words (lazily translated: called at render time).
FIELD_WORDS = {
    "allocated": lambda: _("allocated"),
    "deserved": lambda: _("deserved"),
    "guarantee": lambda: _("guarantee"),
    "capability": lambda: _("capability"),
}


def _bar(res: str, raw: dict[str, Any], reported: bool) -> ResourceBar:
    shown = {k: amount_text(res, v) for k, v in raw.items()}
    val = {k: q for k, (q, _t) in shown.items() if q is not None}
    invalid = any(raw[k] is not None and k not in val for k in raw)
    alloc = val.get("allocated") or Decimal(0)
    scale = max([*val.values(), Decimal(0)])

    def at(key: str) -> int | None:
        v = val.get(key)
        if v is None or scale <= 0 or invalid:
            return None
        return min(100, _pct(v, scale))

    ref_key = (
        "deserved"
        if val.get("deserved") is not None
        else ("capability" if val.get("capability") is not None else "")
    )
    cap = val.get("capability")
    # Deserved above capability: the queue can never hold its deserved share, so the share that
    # counts is the capability (the effective share, min of the two).
    deserved_over_cap = not invalid and ref_key == "deserved" and cap is not None and val["deserved"] > cap
    if deserved_over_cap:
        ref_key = "capability"
    ref = val.get(ref_key) if ref_key else None
    # A zero deserved/capability has no percentage: "100%" of 0 would be a lie.
    pct = _pct(alloc, ref) if reported and ref is not None and ref > 0 and not invalid else None
    over_cap = not invalid and cap is not None and alloc > cap
    # Exact quantities, not the rounded percentage: 56250m of a deserved 56 is over at "100%".
    over = pct is not None and ref is not None and over_share(alloc, ref)
    return ResourceBar(
        name=res,
        allocated=shown["allocated"][1]
        if raw["allocated"] is not None
        else (format_quantity(res, Decimal(0)) if reported else "—"),
        deserved=shown["deserved"][1],
        guarantee=shown["guarantee"][1],
        capability=shown["capability"][1],
        fill=min(100, _pct(alloc, scale)) if scale > 0 and not invalid else 0,
        deserved_at=at("deserved"),
        guarantee_at=at("guarantee"),
        capability_at=at("capability"),
        pct=pct,
        pct_of=ref_key,
        over=over or over_cap,
        tone="bad" if over_cap else ("warn" if over or invalid or deserved_over_cap else "ok"),
        has_ref=any(raw.get(k) is not None for k in ("deserved", "guarantee", "capability")),
        invalid=invalid,
        deserved_over_cap=deserved_over_cap,
        over_cap=over_cap,
        over_text=percent_over_text(alloc, ref) if over and ref is not None else "",
        invalid_text="; ".join(
            f"{FIELD_WORDS[k]()} {shown[k][1]}" for k in raw if raw[k] is not None and k not in val
        ),
    )


def queue_resource_bars(queue: Mapping) -> list[ResourceBar]:
    """Per-resource usage bars for a Queue (spec.capability, spec.deserved,
    spec.guarantee.resource, status.allocated). A value that is no usable amount (unparsable or
    negative) is shown verbatim as invalid, and that resource gets no percentage and no bar: any
    scale or ratio drawn from the others would be a guess."""
    sp = spec(queue)
    # The scheduler writes status.allocated for every queue; without it (no scheduler yet, an
    # older Volcano) usage is unknown, not zero: "—" and no percentage.
    reported = isinstance(status(queue).get("allocated"), Mapping)
    maps = {
        "allocated": as_dict(status(queue).get("allocated")),
        "deserved": as_dict(sp.get("deserved")),
        "guarantee": as_dict(as_dict(sp.get("guarantee")).get("resource")),
        "capability": as_dict(sp.get("capability")),
    }
    names = sorted({as_str(k) for m in maps.values() for k in m}, key=resource_sort_key)
    return [_bar(res, {k: m.get(res) for k, m in maps.items()}, reported) for res in names]


def compact_bars(
    bars: list[ResourceBar], names: tuple[str, ...] = ("cpu", "memory", "nvidia.com/gpu")
) -> list[ResourceBar | None]:
    """The bars for ``names`` in that order, None where the queue has no such resource (table cells)."""
    by_name = {b.name: b for b in bars}
    return [by_name.get(n) for n in names]


# The Queues list gives this many resources a column of their own; the rest share one more column.
RESOURCE_COLUMNS_MAX = 4


def resource_columns(bar_lists: Iterable[list[ResourceBar]]) -> tuple[list[str], bool]:
    """(the resource names that get a column in the Queues list, in resource order, at most
    RESOURCE_COLUMNS_MAX; whether some bar is left for the shared "other" column)."""
    names = sorted({b.name for bars in bar_lists for b in bars}, key=resource_sort_key)
    return names[:RESOURCE_COLUMNS_MAX], len(names) > RESOURCE_COLUMNS_MAX
