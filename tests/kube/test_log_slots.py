"""The process's log-reading slots (dashboard/kube/logs.py): the limit, and how long the reads
holding them have waited for the API server's answer."""

from __future__ import annotations

import pytest

from dashboard.kube.logs import LogsBusy, LogSlots


def test_a_read_waits_until_answered_and_frees_its_slot():
    slots = LogSlots(2)
    with slots.take() as first, slots.take():
        assert len(slots.waiting_seconds()) == 2
        first.answered()
        assert len(slots.waiting_seconds()) == 1
        with pytest.raises(LogsBusy), slots.take(wait=0.01):
            pass
    assert slots.waiting_seconds() == []
    with slots.take():
        pass


def test_waiting_seconds_are_longest_first():
    slots = LogSlots(2)
    with slots.take() as older, slots.take() as newer:
        older.taken -= 10
        newer.taken -= 1
        waited = slots.waiting_seconds()
    assert waited[0] >= 10 > waited[1] >= 1
