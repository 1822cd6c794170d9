"""A Volcano Job restarting repeatedly: how many times it restarted within a recent window.

Volcano's job controller counts restarts in ``status.retryCount`` and keeps one entry per phase in
``status.conditions`` (``{status: <JobPhase>, lastTransitionTime}``): re-entering Restarting
replaces that entry, so a Job holds only the time of its latest restart. The earlier restart times
come from whoever watched the Job (the cache keeps the Restarting times it saw,
``Snapshot.job_restart_times``); a Job created within the window restarted ``retryCount`` times in
it whatever was watched.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from dashboard.volcano.objects import as_dict, as_list, as_str, count, status
from dashboard.volcano.phases import job_is_final, job_phase
from dashboard.volcano.time import created_at, parse_time

#: The window and the number of restarts in it that make a Job "restarting repeatedly".
RESTART_WINDOW = timedelta(minutes=10)
REPEATED_RESTARTS = 2


def last_restart(job: object) -> datetime | None:
    """When the Job last entered Restarting (its ``Restarting`` condition), None when it never did."""
    for cond in as_list(status(job).get("conditions")):
        cond = as_dict(cond)
        if as_str(cond.get("status")) == "Restarting":
            return parse_time(cond.get("lastTransitionTime"))
    return None


def restarts_within(
    job: object, seen: Iterable[datetime], now: datetime, window: timedelta = RESTART_WINDOW
) -> int:
    """Restarts of ``job`` known to lie in (now - window, now]: the distinct Restarting times
    ``seen`` (and the Job's own latest) in it, or ``status.retryCount`` when the Job itself was
    created in it, whichever is more."""
    start = now - window
    times = {t for t in (*seen, last_restart(job)) if t is not None and start < t <= now}
    n = len(times)
    born = created_at(job)
    if born is not None and born > start:
        n = max(n, count(status(job).get("retryCount")))
    return n


def restarting_repeatedly(
    job: object, seen: Iterable[datetime], now: datetime, window: timedelta = RESTART_WINDOW
) -> int | None:
    """The restarts within ``window`` of a Job that is not in a final phase, when there are at
    least REPEATED_RESTARTS; else None."""
    if job_is_final(job_phase(job)):
        return None
    n = restarts_within(job, seen, now, window)
    return n if n >= REPEATED_RESTARTS else None
