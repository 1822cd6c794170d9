"""dashboard.volcano.quantities: parse_quantity that never raises, and one formatting rule."""

from __future__ import annotations

import re
from decimal import Context, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.volcano import quantities as q


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1Gi", Decimal(2**30)),
        ("1500m", Decimal("1.5")),
        ("1e3", Decimal(1000)),
        ("0.5", Decimal("0.5")),
        ("500M", Decimal(500_000_000)),
        ("16k", Decimal(16_000)),
        ("0", Decimal(0)),
        (" 4 ", Decimal(4)),
        (3, Decimal(3)),
        (0.5, Decimal("0.5")),
        ("-1Gi", Decimal(-(2**30))),  # the grammar admits a sign
        ("1e30", Decimal("1e30")),
        ("1n", Decimal("1e-9")),
    ],
)
def test_quantity_parses(raw, expected):
    assert q.quantity(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [None, True, "", "  ", "lots", "1.2.3", "1.2.3Gi", "Gi", ["1"], {"a": 1}, float("nan"), float("inf")]
    + ["1e1000000", "-9e999999", "1e-1000000", "1e31"],  # huge exponents: no amount of anything real
)
def test_quantity_unreadable_is_none(raw):
    assert q.quantity(raw) is None


def test_resource_amounts_are_not_negative():
    assert q.resource_amount("-1Gi") is None and q.resource_amount("1Gi") == 2**30
    assert q.invalid_amount_note("-1Gi") == "negative"
    assert q.invalid_amount_note("1e1000000") == "out of range"
    assert q.invalid_amount_note("abc") == "not a quantity"
    assert q.invalid_amount_note(None) == "not a quantity"
    assert q.invalid_amount_note("2") == ""


@pytest.mark.parametrize(
    ("resource", "raw", "shown"),
    [
        ("memory", "1Gi", "1Gi"),
        ("memory", "1536Mi", "1.5Gi"),
        ("memory", "1G", "953.7Mi"),  # bytes in binary units
        ("memory", "1500m", "1.5"),  # never rounded into another value
        ("memory", "0.5", "0.5"),
        ("ephemeral-storage", "10Gi", "10Gi"),
        ("hugepages-2Mi", "4Mi", "4Mi"),
        ("requests.memory", "2Gi", "2Gi"),
        ("cpu", "0.5", "500m"),
        ("cpu", "1500m", "1.5"),
        ("cpu", "1n", "0.000001m"),
        ("limits.cpu", "250m", "250m"),
        ("cpu", "2", "2"),
        ("pods", "110", "110"),
        ("nvidia.com/gpu", "0.5", "0.5"),
        ("nvidia.com/gpu", "16k", "16k"),  # decimal suffixes for the rest
        ("example.com/widgets", "2500000", "2.5M"),
        ("cpu", "1e20", "1e20"),  # beyond every suffix: exact, in base units, with an exponent
        ("cpu", "123456789012345678", "1.23456789012345678e17"),
        ("memory", "1e30", "1e30"),
        ("memory", "1000000000000000000000000001e3", "1.000000000000000000000000001e30"),  # 28 digits
        ("memory", "10000000000000000000000000000001e-1", "1e30"),  # 32 digits: rounded to 28
        ("memory", "1.0000001e30", "1.0000001e30"),
        ("nvidia.com/gpu", "1e30", "1e30"),
        ("nvidia.com/gpu", "1000E", "1e21"),
        ("memory", "-2000Ei", "-2.305843009213693952e21"),
        ("memory", "999Ei", "999Ei"),
        ("memory", "-1Gi", "-1Gi"),
    ],
)
def test_format_rule(resource, raw, shown):
    assert q.format_quantity(resource, q.quantity(raw), raw) == shown


def test_unreadable_values_are_shown_as_written():
    assert q.format_quantity("cpu", None) == q.MISSING
    assert q.format_quantity("cpu", None, "") == q.MISSING
    assert q.format_quantity("cpu", None, "abc") == "abc"
    long = "x" * 100
    assert q.format_quantity("cpu", None, long) == "x" * 39 + "…"


def test_resource_names():
    assert q.is_byte_resource("memory") and q.is_byte_resource("hugepages-1Gi")
    assert q.is_byte_resource("requests.ephemeral-storage") and not q.is_byte_resource("nvidia.com/gpu")
    assert q.is_cpu_resource("requests.cpu") and not q.is_cpu_resource("cpus")
    assert q.queue_resource("requests.cpu") == "cpu" and q.queue_resource("cpu") == "cpu"
    assert q.queue_resource("limits.cpu") is None and q.queue_resource("count/pods") is None
    assert q.queue_resource("pods") is None
    assert sorted(["pods", "zz", "memory", "nvidia.com/gpu", "cpu", "aa"], key=q.resource_sort_key) == [
        "cpu",
        "memory",
        "nvidia.com/gpu",
        "aa",
        "zz",
        "pods",
    ]


@given(st.decimals(min_value=Decimal("1e-6"), max_value=Decimal("1e14"), places=6))
def test_compact_number_keeps_three_significant_digits(value):
    shown = Decimal(q.compact_number(value))
    assert abs(shown - value) <= abs(value) / 100


@given(st.integers(min_value=0, max_value=2**62))
def test_plain_decimal_round_trips_through_parse_quantity(n):
    assert q.quantity(q.plain_decimal(Decimal(n))) == n
    millis = Decimal(n) / 1000
    assert q.quantity(q.plain_decimal(millis * 1000) + "m") == millis


@given(st.text(max_size=30))
def test_never_raises(text):
    value = q.quantity(text)
    for res in ("cpu", "memory", "nvidia.com/gpu", "requests.cpu", "pods"):
        assert len(q.format_quantity(res, value, text)) <= 40 or value is not None
    q.invalid_amount_note(text)


@given(
    st.decimals(min_value=1, max_value=Decimal("1e30"), allow_nan=False, allow_infinity=False),
    st.sampled_from(["memory", "ephemeral-storage", "nvidia.com/gpu", "pods"]),
)
def test_large_amounts_stay_short_and_true(value, resource):
    shown = q.format_quantity(resource, value)
    number = re.match(r"-?[0-9.]+(e[0-9]+)?", shown).group(0)
    unit = shown[len(number) :].strip()
    # At most 3 digits before the point or the exponent, never a dozen before a unit.
    assert len(number.split("e")[0].split(".")[0]) <= 3, shown
    back = Decimal(number) * (q.quantity("1" + unit) if unit else 1)
    assert abs(back - value) <= value / 100, shown


# Huge amounts: a Queue capability and a request that differ only far down their digits.
HUGE_PAIRS = [
    ("1e30", "1.0000001e30"),
    ("1e30", "1000000000000000000000000001e3"),
    ("2e21", "2.000000001e21"),
]


@pytest.mark.parametrize(("a", "b"), HUGE_PAIRS)
@pytest.mark.parametrize("resource", ["memory", "cpu", "nvidia.com/gpu", "example.com/widgets"])
def test_different_huge_amounts_look_different(resource, a, b):
    shown_a = q.format_quantity(resource, q.quantity(a), a)
    shown_b = q.format_quantity(resource, q.quantity(b), b)
    assert shown_a != shown_b
    assert q.quantity(shown_a) == q.quantity(a) and q.quantity(shown_b) == q.quantity(b)


_RESOURCES = st.sampled_from(["memory", "cpu", "nvidia.com/gpu", "pods", "ephemeral-storage"])
_AMOUNTS = st.decimals(
    min_value=Decimal("1e-3"), max_value=Decimal("1e30"), allow_nan=False, allow_infinity=False
)


def _value_of(shown: str) -> Decimal:
    """The amount a formatted text stands for: "1.5Gi" -> 1.5 * 2^30, "8e30" -> 8e30, "250m" -> 0.25."""
    value = q.quantity(shown.replace(" ", ""))
    assert value is not None, shown
    return value


@given(_AMOUNTS, _RESOURCES)
def test_huge_amounts_are_written_exactly(value, resource):
    """Beyond every suffix the text reads back as the value itself (so no two differ)."""
    shown = q.format_quantity(resource, value)
    beyond = value.adjusted() >= q.HUGE_CPU_EXPONENT if q.is_cpu_resource(resource) else "e" in shown
    if beyond:
        assert _value_of(shown) == Context(prec=q.EXACT_DIGITS).plus(value), shown
        assert len(shown) <= q.EXACT_DIGITS + 6, shown


@given(_AMOUNTS, _AMOUNTS, _RESOURCES)
def test_two_amounts_shown_alike_agree_at_the_precision_shown(a, b, resource):
    """The contract of format_quantity: equal texts mean equal values beyond the suffixes, and
    values within 1 % of each other (3 significant digits) within them."""
    if q.format_quantity(resource, a) == q.format_quantity(resource, b):
        shown = q.format_quantity(resource, a)
        if "e" in shown:
            digits = Context(prec=q.EXACT_DIGITS)
            assert digits.plus(a) == digits.plus(b), shown
        else:
            assert abs(a - b) <= max(a, b) / 100, (a, b, shown)


@given(_AMOUNTS, st.decimals(min_value=Decimal("-0.02"), max_value=Decimal("0.02"), places=9), _RESOURCES)
def test_close_amounts_shown_alike_agree_at_the_precision_shown(a, delta, resource):
    """Pairs a few per mille apart, which often format alike: the same contract."""
    b = a * (1 + delta)
    if q.format_quantity(resource, a) == q.format_quantity(resource, b):
        shown = q.format_quantity(resource, a)
        digits = Context(prec=q.EXACT_DIGITS)
        assert digits.plus(a) == digits.plus(b) if "e" in shown else abs(a - b) <= max(a, b) / 100, shown
