"""Events in the pages: the domain's records (``dashboard.volcano.events``) under the pages'
names."""

from __future__ import annotations

from dashboard.volcano.events import EventRecord as EventRow
from dashboard.volcano.events import event_count, event_first, event_last, latest_per_object
from dashboard.volcano.events import event_record as event_row
from dashboard.volcano.events import event_records as event_rows

__all__ = [
    "EventRow",
    "event_count",
    "event_first",
    "event_last",
    "event_row",
    "event_rows",
    "latest_per_object",
]
