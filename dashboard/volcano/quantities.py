"""Kubernetes quantities ("500m", "4Gi", "1e3") and resource names.

Parsing is ``kubernetes.utils.parse_quantity`` (the Kubernetes client's own reading of the
``resource.Quantity`` grammar) made total: garbage reads as None instead of raising. Formatting
follows one rule: byte resources in binary units, cpu in cores or millicores, everything else with
decimal suffixes, 3 significant digits within the suffixes and every digit beyond them
(``format_quantity`` says what two equal texts can hide).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import ROUND_DOWN, Context, Decimal, InvalidOperation

from kubernetes.utils import parse_quantity

from dashboard.volcano.objects import as_str

# Real quantities lie between 1n (10^-9, Kubernetes' smallest suffix) and a few Ei (~1.2 * 10^18);
# the CRD pattern also admits "1e1000000", whose arithmetic overflows Decimal's default context and
# whose plain rendering is a million digits. Beyond 10^±QUANTITY_EXPONENT_LIMIT a value is no amount
# of anything real: it reads as unreadable (None).
QUANTITY_EXPONENT_LIMIT = 30

# The client ships no type hints; its parse_quantity(str) returns a Decimal or raises.
_parse_quantity: Callable[[str], Decimal] = parse_quantity

_PARSE_ERRORS = (ValueError, TypeError, InvalidOperation, ArithmeticError)


@functools.lru_cache(maxsize=4096)
def _text_quantity(text: str) -> Decimal | None:
    # A cluster writes few distinct quantity strings ("4", "16Gi", "500m") on thousands of pods
    # and nodes, and the pages read them on every request: each is parsed once (a Decimal is
    # immutable, so the result is shared safely).
    try:
        return _parse_quantity(text)
    except _PARSE_ERRORS:
        return None


def quantity(value: object) -> Decimal | None:
    """A quantity as a Decimal in base units, or None when unreadable; never raises.

    "500M" -> 500000000, "16k" -> 16000, "1500m" -> 1.5, "0" -> 0, "4Gi" -> 4294967296,
    "1e3" -> 1000; JSON numbers (3, 0.5) as their value. None: null, bool, "", NaN/infinity,
    garbage ("lots", "1.2.3", lists) and non-zero magnitudes outside 10^-30 .. 10^30.
    Negative quantities parse (the grammar admits a sign); see ``resource_amount``.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return None
        parsed = Decimal(str(value))
    elif not isinstance(value, str) or not value.strip():
        return None
    else:
        text = _text_quantity(value.strip())
        if text is None:
            return None
        parsed = text
    if not parsed.is_finite():
        return None
    if parsed and abs(parsed.adjusted()) > QUANTITY_EXPONENT_LIMIT:
        return None
    return parsed


def resource_amount(value: object) -> Decimal | None:
    """An amount in a ResourceList (Queue capability/deserved/guarantee/allocated, PodGroup
    minResources, container requests): ``quantity`` that is also not negative, else None. A
    ResourceList holds amounts of a resource, so "-1Gi" is as invalid there as "abc"."""
    parsed = quantity(value)
    return parsed if parsed is not None and parsed >= 0 else None


def invalid_amount_note(value: object) -> str:
    """Why ``value`` is no usable amount: "negative", "out of range" (a quantity beyond
    10^±QUANTITY_EXPONENT_LIMIT) or "not a quantity"; "" when it is a usable amount."""
    parsed = quantity(value)
    if parsed is not None:
        return "negative" if parsed < 0 else ""
    if isinstance(value, str) and value.strip():
        try:
            _parse_quantity(value.strip())
        except _PARSE_ERRORS:
            return "not a quantity"
        return "out of range"
    return "not a quantity"


def compact_number(value: Decimal, places: int = 2) -> str:
    """``value`` as short plain text that does not lie: at least ``places`` decimals and enough for
    3 significant digits (1.5 -> "1.5" even with places=0, 0.5 -> "0.5"), trailing zeros dropped;
    magnitudes from 10^15 up or below 10^-6 in scientific notation ("1.23e+20"). Never raises on
    a finite Decimal; a non-finite one is shown as Decimal writes it."""
    if not value.is_finite():
        return str(value)
    if not value:
        return "0"
    adjusted = value.adjusted()
    if adjusted >= 15 or adjusted < -6:
        return f"{value:.3g}"
    decimals = max(places, 2 - adjusted)
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def plain_decimal(value: Decimal) -> str:
    """``value`` unrounded in positional notation, trailing fraction zeros dropped ("1000.5")."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


_BINARY = [
    (Decimal(2) ** 60, "Ei"),
    (Decimal(2) ** 50, "Pi"),
    (Decimal(2) ** 40, "Ti"),
    (Decimal(2) ** 30, "Gi"),
    (Decimal(2) ** 20, "Mi"),
    (Decimal(2) ** 10, "Ki"),
]
_DECIMAL = [
    (Decimal(10) ** 18, "E"),
    (Decimal(10) ** 15, "P"),
    (Decimal(10) ** 12, "T"),
    (Decimal(10) ** 9, "G"),
    (Decimal(10) ** 6, "M"),
    (Decimal(10) ** 3, "k"),
]

# From this many of the largest unit (Ei, E) up, and for cpu from 10^HUGE_CPU_EXPONENT cores up
# (where compact_number turns scientific), an amount is beyond every suffix: it is written exactly,
# in base units with an exponent ("1e30", "1.0000001e30"), which is a Kubernetes quantity that
# reads back as the same value. A rounded mantissa before a unit ("8.67e11 Ei") would show two
# different huge amounts (a capability and a request) as equal.
LARGEST_UNIT_LIMIT = 1000
HUGE_CPU_EXPONENT = 15


# The significant digits an amount beyond every suffix keeps: Decimal's default precision, the
# precision every sum and comparison of amounts here is made at.
EXACT_DIGITS = 28


def exact_scientific(value: Decimal) -> str:
    """``value`` with its significant digits (up to EXACT_DIGITS, rounded half-even beyond) and
    an exponent, trailing mantissa zeros dropped: 10^30 -> "1e30", 1.0000001 * 10^30 ->
    "1.0000001e30", -2.5 * 10^21 -> "-2.5e21". The text is a quantity that ``quantity`` reads back
    as ``value`` (rounded to EXACT_DIGITS); at most EXACT_DIGITS + 6 characters."""
    mantissa, exponent = format(Context(prec=EXACT_DIGITS).plus(value), "e").split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


# Shown in place of a quantity that is absent.
MISSING = "—"
# A value shown as written is cut to this many characters.
RAW_LIMIT = 40


def base_resource(resource: str) -> str:
    """The resource a quota-style key names: "requests.cpu" and "limits.cpu" -> "cpu"."""
    if resource.startswith(("requests.", "limits.")):
        return resource.split(".", 1)[1]
    return resource


def is_cpu_resource(resource: str) -> bool:
    """cpu, counted in cores (``requests.cpu``/``limits.cpu`` too)."""
    return base_resource(resource) == "cpu"


def is_byte_resource(resource: str) -> bool:
    """A resource counted in bytes: memory, storage, ephemeral-storage, hugepages-<size>."""
    base = base_resource(resource)
    return base in ("memory", "ephemeral-storage", "storage") or base.startswith("hugepages-")


def format_quantity(resource: str, value: Decimal | None, raw: object = None) -> str:
    """The short form of an amount of ``resource``: cpu in cores, or millicores below 1 core
    ("1.5", "250m"); byte resources in binary units ("4Gi", "953.7Mi"); everything else with a
    decimal suffix ("16k", "2").

    Precision: within the suffixes the value is rounded to 3 significant digits, with at least one
    decimal before a suffix (``compact_number``: "1500m" bytes -> "1.5"), so two amounts shown
    alike differ by less than 1 % of either. Beyond every suffix (LARGEST_UNIT_LIMIT of Ei or E,
    10^HUGE_CPU_EXPONENT cores) the value is written exactly in base units (``exact_scientific``:
    "1e30" bytes -> "1e30"), so two different huge amounts never look equal (up to EXACT_DIGITS
    significant digits). ``value`` None
    (unreadable) shows ``raw`` as written, cut to RAW_LIMIT characters, or MISSING when there is
    none."""
    if value is None:
        if raw is None or raw == "":
            return MISSING
        text = as_str(raw)
        return text if len(text) <= RAW_LIMIT else text[: RAW_LIMIT - 1] + "…"
    if is_cpu_resource(resource):
        if value and value.adjusted() >= HUGE_CPU_EXPONENT:
            return exact_scientific(value)
        if value != 0 and abs(value) < 1:
            return f"{compact_number(value * 1000, 0)}m"
        return compact_number(value)
    units = _BINARY if is_byte_resource(resource) else _DECIMAL
    for size, unit in units:
        if abs(value) >= size:
            scaled = value / size
            if size is units[0][0] and abs(scaled) >= LARGEST_UNIT_LIMIT:
                return exact_scientific(value)
            return f"{compact_number(scaled, 1)}{unit}"
    return compact_number(value, 0) if units is _BINARY else compact_number(value)


RESOURCE_ORDER = {"cpu": 0, "memory": 1, "nvidia.com/gpu": 2}


def resource_sort_key(name: str) -> tuple[int, str]:
    """cpu, memory, nvidia.com/gpu first, then other resources by name, pods last."""
    if name in RESOURCE_ORDER:
        return (RESOURCE_ORDER[name], name)
    if name == "pods":
        return (9, name)
    return (5, name)


def queue_resource(key: str) -> str | None:
    """The Queue resource a PodGroup.spec.minResources key stands for: the keys are quota-style, so
    "requests.cpu" and "cpu" are the same need; ``limits.*``, ``count/*`` and pods are no queue
    resource (None)."""
    if key in ("pods", "count/pods") or key.startswith(("limits.", "count/")):
        return None
    return key[len("requests.") :] if key.startswith("requests.") else key


def over_share(amount: Decimal, share: Decimal) -> bool:
    """Whether ``amount`` is above ``share`` (a Queue's deserved or capability), compared exactly: 56250m
    of cpu is over a deserved 56 however a percentage of it rounds."""
    return amount > share


def percent_over_text(amount: Decimal, share: Decimal) -> str:
    """``amount`` as a percentage of ``share`` for an amount over it (``over_share``), never shown as
    100 or less: one decimal rounded down ("100.4"), or ">100" when even that reads 100.0 (or the
    amount is 101 % or more, where a whole percent is exact enough). "" when
    ``amount`` is not over a positive ``share``."""
    if share <= 0 or not over_share(amount, share):
        return ""
    ratio = amount * 100 / share
    if ratio >= 101:  # far over (a whole percent says so itself); no digits to quantize
        return ">100"
    tenth = ratio.quantize(Decimal("0.1"), rounding=ROUND_DOWN)
    return str(tenth) if tenth > 100 else ">100"
