"""dashboard.volcano.time: the one RFC 3339 reader."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.volcano.time import EARLIEST_TIME, created_at, latest, parse_time, seconds_between


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T00:00:00Z", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-01-01T00:00:00.123456Z", datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),  # MicroTime
        ("2026-01-01T00:00:00.123456789Z", datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),  # cut
        ("2026-01-01T00:00:00.5Z", datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)),
        ("2026-01-01T01:00:00+01:00", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-01-01T01:00:00+0100", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2025-12-31T23:30:00-00:30", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-01-01t00:00:00z", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-01-01 00:00:00", datetime(2026, 1, 1, tzinfo=UTC)),  # no offset: UTC
        (" 2026-01-01T00:00:00Z ", datetime(2026, 1, 1, tzinfo=UTC)),
    ],
)
def test_rfc3339_shapes(text, expected):
    assert parse_time(text) == expected
    assert parse_time(text).tzinfo is not None


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "garbage",
        "2026-01-01",  # a date is no time
        "2026-02-30T00:00:00Z",  # impossible date
        "2026-01-01T23:59:60Z",  # leap second
        "2026-01-01T00:00:00+25:00",
        "0001-01-01T00:00:00Z",  # Go's zero time: not set
        "1970-01-01T00:00:00Z",  # epoch 0: not set
        "1970-06-01T00:00:00Z",
        12345,
        ["2026-01-01T00:00:00Z"],
    ],
)
def test_unreadable_or_unset_is_none(text):
    assert parse_time(text) is None


def test_1971_is_the_earliest_real_time():
    assert parse_time("1971-01-01T00:00:00Z") == EARLIEST_TIME


def test_datetimes_pass_through():
    aware = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_time(aware) is aware
    assert parse_time(datetime(2026, 1, 1)) == aware


@given(st.datetimes(min_value=datetime(1971, 1, 2), max_value=datetime(9998, 1, 1)))
def test_round_trip_through_the_api_servers_formats(dt):
    dt = dt.replace(tzinfo=UTC)
    assert parse_time(dt.strftime("%Y-%m-%dT%H:%M:%SZ")) == dt.replace(microsecond=0)
    assert parse_time(dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")) == dt
    shifted = dt.astimezone(__import__("datetime").timezone(timedelta(hours=5, minutes=30)))
    assert parse_time(shifted.isoformat()) == dt


def test_intervals():
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    assert seconds_between(t0, t0 + timedelta(seconds=90)) == 90
    assert seconds_between(t0 + timedelta(seconds=5), t0) == 0  # a start in the future is no elapsed time
    assert seconds_between(None, t0) is None
    assert latest(None, t0) == t0 and latest(t0, None) == t0 and latest(None, None) is None
    assert created_at({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}}) == t0
    assert created_at({}) is None


def test_a_time_read_again_is_the_same_time():
    for text in (
        "2026-11-29T10:00:00Z",
        "2026-11-29T10:00:00.123456789+01:00",
        "garbage",
        "0001-01-01T00:00:00Z",
    ):
        assert parse_time(text) == parse_time(text) == parse_time(f" {text}")
    long = "2026-11-29T10:00:00Z" + " " * 100  # beyond what is remembered: parsed each time
    assert parse_time(long) == parse_time("2026-11-29T10:00:00Z")
