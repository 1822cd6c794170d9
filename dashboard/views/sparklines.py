"""A sparkline per Queue of its last 24 h of allocation, for /queues/ and the overview.

``spark_version()`` names the history's newest sample (None with history off): it joins the
fragments' versions, so a table refreshes when a sample lands. ``queue_sparklines(version)`` gives
{queue: Spark} (None with history off, {} when nothing can be read); the points are computed once
per sample for every viewer (memo.section), the labels per request in the viewer's language.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils.translation import gettext as _

from dashboard.history import reads
from dashboard.history.service import get_service
from dashboard.presenters.charts import sparkline
from dashboard.views import memo
from dashboard.views.history import amount_text, fill_notice

WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class Spark:
    points: str  # the SVG polyline in the 80x20 box of templates/dashboard/_sparkline.html
    label: str  # the same values in words: the resource, the newest sample and the highest sample


@dataclass(frozen=True)
class _Line:
    resource: str
    points: str
    latest: float | None
    peak: float


def spark_version() -> Any:
    """(the newest sample's time, the hours a fast-forwarded history has written), "" when there
    is no sample or it cannot be read, None with history off."""
    service = get_service()
    if service is None:
        return None
    newest = service.read(reads.newest_sample).value
    if newest is None:
        return ""
    progress = service.read(reads.fill_progress).value
    return newest, progress[0] if progress else None


def _lines(using: str, newest: datetime) -> dict[str, _Line]:
    since, until = newest - WINDOW, newest + timedelta(seconds=1)
    # "now" is the newest sample, not the mean of the hour it falls in.
    latest = reads.allocated_at(using, newest)
    # The peak is the highest sample, not the highest hourly mean the line draws: a mean can fall
    # below the newest sample of its hour.
    peaks = reads.queue_allocated_max(using, since, until)
    out = {}
    for queue, by_res in reads.queue_usage_hourly(using, since, until).items():
        # A queue's GPUs when it had any allocated in the window, else its cpu.
        gpus = [r for r in sorted(by_res) if r != "cpu" and any(v for _t, v in by_res[r])]
        resource = gpus[0] if gpus else "cpu" if "cpu" in by_res else None
        if resource is None:
            continue
        points = by_res[resource]
        known = [v for _t, v in points if v is not None]
        line = sparkline(points, since, until)
        if line and known:
            peak = peaks.get((queue, resource), max(known))
            out[queue] = _Line(resource, line, latest.get((queue, resource)), peak)
    return out


def queue_sparklines(version: Any) -> dict[str, Spark] | None:
    service = get_service()
    if service is None:
        return None
    if not version:
        return {}
    # A failed read is not memoised: the next request asks again (after READ_RETRY_SECONDS).
    newest = version[0]
    result = service.read(
        lambda using: memo.section(("sparklines", using, version), lambda: _lines(using, newest))
    )
    if result.error:
        return {}
    sparks = {}
    for queue, line in result.value.items():
        fmt = amount_text(line.resource)
        latest = fmt(line.latest) if line.latest is not None else _("unknown")
        label = _("%(resource)s allocated over the last 24 h: now %(now)s, peak %(peak)s") % {
            "resource": line.resource,
            "now": latest,
            "peak": fmt(line.peak),
        }
        sparks[queue] = Spark(line.points, label)
    return sparks


def sparks_notice(version: Any) -> str:
    """What the sparklines lack: "History is being filled: …" while a fast-forward writes, else ""."""
    service = get_service()
    if service is None or not version or version[1] is None:
        return ""
    return fill_notice(service)
