"""The kiosk: dark, without controls, refreshing itself, one queue in focus at a time. (How the board
fits a screen: test_kiosk_fit.py.)"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.presenters.kiosk import kiosk_warnings, overall_status
from dashboard.views import kiosk
from dashboard.volcano.events import EventRecord
from tests.pages.helpers import check_fragment, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_kiosk_is_dark_has_no_controls_and_refreshes_itself(client, demo_cluster):
    page = client.get("/kiosk/").content.decode()
    assert 'data-theme="dark"' in page
    assert "<form" not in page and 'class="mainnav"' not in page
    assert "kiosk.js" in page and 'data-poll="board"' in page
    assert "Needs attention" in text(page)
    check_fragment(client, page, "board")


def test_kiosk_rotation_focuses_one_queue_at_a_time(client, demo_cluster):
    page = client.get("/kiosk/?rotate=15").content.decode()
    assert "kiosk-focus-name" in page
    assert client.get("/kiosk/?rotate=abc").status_code == 200


def test_kiosk_status_line_counts_what_needs_attention(client, demo_cluster):
    page = client.get("/kiosk/").content.decode()
    m = re.search(r'class="kiosk-status tone-(\w+)" data-status="\w+" data-total="(\d+)"', page)
    assert m and m.group(1) == "bad" and int(m.group(2)) > 0
    assert f"{m.group(2)} need attention" in text(page) and "worst: crash-looping pod" in text(page)


def test_overall_status_never_reads_unreadable_as_all_clear():
    empty = {g: [] for g in kiosk.KIOSK_ATTENTION_GROUPS}
    assert overall_status(empty).headline == "All clear" and overall_status(empty).tone == "ok"
    blind = overall_status({**empty, "unchecked": "PodGroups (forbidden)"})
    assert blind.tone == "warn" and blind.headline == "Nothing needs attention among what can be read"
    one = overall_status({**empty, "closed": [{"queue": {"metadata": {"name": "old"}}}], "closed_total": 1})
    assert (one.headline, one.worst, one.tone) == ("1 needs attention", "closed queue old", "bad")


def _record(name: str, first_min: float, last_min: float, count: int) -> EventRecord:
    now = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    return EventRecord(
        type="Warning",
        reason="BackOff",
        message="m",
        object_kind="Job",
        object_name=name,
        object_namespace="ns",
        count=count,
        first=now - timedelta(minutes=first_min),
        last=now - timedelta(minutes=last_min),
        source="",
    )


def test_kiosk_warnings_put_new_first_and_chronic_last():
    now = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    rows = kiosk_warnings(
        [_record("chronic", 300, 0, 312), _record("ongoing", 30, 1, 3), _record("new", 2, 2, 1)], now
    )
    assert [(w.record.object_name, w.recurrence) for w in rows] == [
        ("new", "new"),
        ("ongoing", "ongoing"),
        ("chronic", "chronic"),
    ]
    assert rows[2].span == 300 * 60 and rows[0].span is None


def test_layout_puts_the_warnings_under_the_shorter_column_and_cuts_them():
    assert kiosk.kiosk_layout(40, 13) == "right" and kiosk.kiosk_layout(5, 13) == "left"
    cuts = kiosk.kiosk_warning_cuts(3, at_least=False)
    assert cuts == [
        [3, "+ 3 more objects with recent warnings"],
        [2, "+ 2 more objects with recent warnings"],
        [1, "+ 1 more object with recent warnings"],
        [0, ""],
    ]
    assert kiosk.kiosk_warning_cuts(10, at_least=True)[9] == [
        1,
        "+ at least 1 more object with recent warnings",
    ]
