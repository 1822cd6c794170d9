"""The process's history: its recorder (when this process records) and the pages' reads.

``attach(cache)`` runs when the process's cluster cache starts (dashboard.kube.on_start, from
dashboard/history/apps.py) and builds the service from settings; ``get_service()`` is what views
ask, None when history is off. ``read(fn)`` runs one query function and turns any failure into a
notice: a database that is down, locked or missing its tables never breaks a page.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from dashboard.history.recorder import Elector, Recorder, RecorderOptions, RecorderStatus, utcnow
from dashboard.kube.cache import ClusterCache

log = logging.getLogger(__name__)
T = TypeVar("T")

# After a failed read, pages skip the database this long (seconds) instead of waiting on it again.
READ_RETRY_SECONDS = 10.0


@dataclass(frozen=True)
class Read:
    """A read's ``value`` (None when it failed) and ``error`` ("" when it worked)."""

    value: Any
    error: str = ""


class HistoryService:
    def __init__(
        self,
        cache: ClusterCache,
        using: str = "default",
        options: RecorderOptions | None = None,
        clock: Callable[[], datetime] = utcnow,
        elector: Elector | None = None,
        record: bool = True,
    ):
        self.using = using
        self.clock = clock
        self.options = options or RecorderOptions()
        self.recorder = Recorder(cache, using, self.options, clock, elector) if record else None
        self._read_error = ""
        self._read_failed_at = 0.0
        self._lock = threading.Lock()

    def start(self) -> HistoryService:
        if self.recorder is not None:
            self.recorder.start()
        return self

    def stop(self) -> None:
        if self.recorder is not None:
            self.recorder.stop()

    def status(self) -> RecorderStatus | None:
        return self.recorder.status() if self.recorder is not None else None

    def read(self, fn: Callable[[str], T]) -> Read:
        """``fn(using)``, or the error that kept it from answering."""
        with self._lock:
            if self._read_error and time.monotonic() - self._read_failed_at < READ_RETRY_SECONDS:
                return Read(None, self._read_error)
        try:
            value = fn(self.using)
        except Exception as exc:  # any failure of the store is a notice on the page, never a 500
            error = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
            log.warning("history read failed: %s", error)
            from django.db import connections

            try:
                connections[self.using].close()
            except Exception:
                log.debug("closing the failed history connection", exc_info=True)
            with self._lock:
                self._read_error, self._read_failed_at = error, time.monotonic()
            return Read(None, error)
        with self._lock:
            self._read_error = ""
        return Read(value)


_service: HistoryService | None = None
_service_lock = threading.Lock()


def get_service() -> HistoryService | None:
    return _service


def set_service(service: HistoryService | None) -> HistoryService | None:
    global _service
    with _service_lock:
        previous, _service = _service, service
    return previous


@contextmanager
def override_service(service: HistoryService) -> Iterator[HistoryService]:
    previous = set_service(service)
    try:
        yield service
    finally:
        set_service(previous)


def options_from_settings() -> RecorderOptions:
    from django.conf import settings

    return RecorderOptions(
        sample_seconds=float(settings.VOLCANO_UI_HISTORY_SAMPLE_SECONDS),
        retention_days=float(settings.VOLCANO_UI_HISTORY_RETENTION_DAYS),
        queue_size=settings.VOLCANO_UI_HISTORY_QUEUE_SIZE,
    )


def attach(cache: ClusterCache) -> None:
    """Build and start this process's history from settings (the cluster cache just started)."""
    from django.conf import settings

    if not settings.VOLCANO_UI_HISTORY or get_service() is not None:
        return
    from dashboard.history.lease import elector_from_settings
    from dashboard.presenters.clock import reference_now

    # The pages' clock (the simulated cluster's in the demo), so samples line up with object times.
    service = HistoryService(
        cache, options=options_from_settings(), clock=reference_now, elector=elector_from_settings(cache)
    )
    set_service(service)
    service.start()


def detach(cache: ClusterCache) -> None:
    service = set_service(None)
    if service is not None:
        service.stop()
