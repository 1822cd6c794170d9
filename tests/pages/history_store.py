"""A history store for page tests: a SQLite file with the history tables, behind a HistoryService
(not recording) installed process-wide, with the pages' clock at a fixed time. Tests write the
recorded rows (dashboard.history.models) themselves."""

from __future__ import annotations

import contextlib
from datetime import datetime

from django.core.management import call_command

from dashboard.history.service import HistoryService, override_service
from dashboard.presenters.clock import set_time_source
from tests.history.conftest import drop_alias, sqlite_alias


@contextlib.contextmanager
def history_store(cache, path, now: datetime):
    """Yields the database alias of the store at ``path`` (a SQLite file), read by the pages
    through a service on ``cache``; the pages' clock reads ``now``."""
    alias = sqlite_alias(path)
    call_command("migrate", "history", database=alias, verbosity=0, interactive=False)
    previous = set_time_source(lambda: now)
    try:
        with override_service(HistoryService(cache, alias, clock=lambda: now, record=False)):
            yield alias
    finally:
        set_time_source(previous)
        drop_alias(alias)
