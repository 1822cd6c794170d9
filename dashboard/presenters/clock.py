"""The "now" of the pages: ages and wait times are computed against the cluster's clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone

TimeSource = Callable[[], datetime]

_time_source: TimeSource | None = None


def set_time_source(fn: TimeSource | None) -> TimeSource | None:
    """Use ``fn() -> aware datetime`` as "now" for ages and wait times (None: this host's clock).

    The demo and the tests point it at the simulated cluster's clock, which does not run at wall
    time; against a real cluster the host clock is right. Returns the previous source.
    """
    global _time_source
    previous, _time_source = _time_source, fn
    return previous


def reference_now(snapshot: Any = None) -> datetime:
    """The "now" against which ages and wait times are computed: the cache's notion of the API
    server's clock when the snapshot offers one (``snapshot.now()``), else the configured time
    source, else this host's clock."""
    for fn in (getattr(snapshot, "now", None), _time_source):
        if callable(fn):
            try:
                value = fn()
            except Exception:  # noqa: BLE001 - a display helper must not fail the page
                continue
            if isinstance(value, datetime):
                return value if value.tzinfo else value.replace(tzinfo=UTC)
    return timezone.now()
