"""dashboard.volcano.attention: the overall status and whether a Warning is new or chronic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.volcano import attention as va

NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def test_all_clear_when_nothing_needs_attention():
    status = va.overall({})
    assert status.clear and status.total == 0 and status.worst is None
    assert va.overall({"pending": 0, "failed": -3}).clear  # negative counts count as none


def test_the_worst_concern_is_named_and_every_one_counted():
    status = va.overall({"pending": 12, "failed": 3, "crash": 2, "closed": 1})
    assert (status.total, status.worst, status.clear) == (18, "crash", False)
    assert va.overall({"pending": 1, "closed": 4}).worst == "pending"
    assert va.overall({"closed": 1}).worst == "closed"
    assert va.CONCERNS[0] == "components" and va.CONCERNS[-1] == "closed"
    # A Volcano component not ready outranks everything else.
    assert va.overall({"crash": 5, "components": 1}).worst == "components"


def _at(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("first", "last", "count", "expected"),
    [
        (_at(2), _at(1), 3, "new"),  # first seen 2 minutes ago
        (_at(9.9), _at(9.9), 1, "new"),
        (_at(10), _at(10), 1, "ongoing"),  # the window is 10 minutes
        (_at(300), _at(0), 312, "chronic"),  # repeating for 5 hours
        (_at(60), _at(0), 2, "chronic"),  # an hour is enough
        (_at(59), _at(0), 500, "ongoing"),  # not yet an hour
        (_at(300), _at(300), 1, "ongoing"),  # once, long ago: old, not repeating
        (_at(300), _at(0), 1, "ongoing"),  # a count of one is no repetition
        (NOW + timedelta(minutes=3), NOW + timedelta(minutes=3), 1, "new"),  # a clock ahead of ours
        (None, _at(0), 100, "ongoing"),  # an unknown start is neither new nor chronic
        (_at(300), None, 100, "ongoing"),
    ],
)
def test_warning_recurrence(first, last, count, expected):
    assert va.warning_recurrence(first, last, count, NOW) == expected
