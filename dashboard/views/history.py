"""History on the pages: a Queue's usage, PodGroups and waits over time (its page's ``history``
section) and /usage/ (GPU-hours and CPU-hours by queue or namespace, as a table, a chart and CSV).

Every read goes through HistoryService.read: a store that fails gives a notice, never an error
page; with history off (no service) the sections are absent and /usage/ says so.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import get_text_list
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_safe

from dashboard.access import visible_namespaces
from dashboard.history import reads
from dashboard.history.service import HistoryService, get_service
from dashboard.presenters.charts import bars, line_chart
from dashboard.presenters.clock import reference_now
from dashboard.views.downloads import download_header
from dashboard.views.memo import SizedMemo, locale_key
from dashboard.views.notices import page_ctx
from dashboard.views.rows import snapshot
from dashboard.volcano.pending import CONTROLLERS, SCHEDULER
from dashboard.volcano.quantities import format_quantity, resource_sort_key

# The ?window= choices, shortest first (the chooser's order), and the one shown without a choice.
QUEUE_WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(hours=24), "7d": timedelta(days=7)}
QUEUE_WINDOW_DEFAULT = "24h"
USAGE_WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "14d": timedelta(days=14)}
USAGE_WINDOW_DEFAULT = "7d"
# Phase colours of the PodGroup chart (stylesheet: chart-line-<css>).
_PHASE_CSS = {"Pending": "c", "Inqueue": "b", "Running": "a", "Unknown": "d", "Completed": "e"}


def fill_notice(service: HistoryService) -> str:
    """ "History is being filled: N of M h" while a fast-forwarded history is written, else ""."""
    progress = service.read(reads.fill_progress).value
    if progress is None:
        return ""
    done, total = progress
    return _("History is being filled: %(done)s of %(total)s h; the charts are incomplete until then.") % {
        "done": int(done),
        "total": f"{total:g}",
    }


def history_notice(service: HistoryService, errors: list[str]) -> str:
    """One sentence on why history is missing or incomplete, "" when it is whole."""
    if errors:
        return _("History cannot be read: %(error)s") % {"error": errors[0]}
    if filling := fill_notice(service):
        return filling
    status = service.status()
    if status is None:
        return ""
    if status.state == "degraded":
        return _("History is not being recorded since %(since)s: %(error)s") % {
            "since": status.since.strftime("%Y-%m-%d %H:%M"),
            "error": status.error,
        }
    if status.dropped or status.lost:
        return _("History is incomplete: %(n)s changes were not recorded.") % {
            "n": status.dropped + status.lost
        }
    return ""


def _span_words(span: timedelta) -> str:
    """A window's length in words as its name counts it: "24 hours" (24h), "7 days" (7d)."""
    seconds = int(span.total_seconds())
    if seconds % 86400 == 0 and seconds > 86400:
        return ngettext("%(n)d day", "%(n)d days", seconds // 86400) % {"n": seconds // 86400}
    return ngettext("%(n)d hour", "%(n)d hours", seconds // 3600) % {"n": seconds // 3600}


def chosen_window(request: HttpRequest, windows: dict[str, timedelta], default: str) -> tuple[str, str]:
    """(the ``?window=`` asked for, a notice): the default when none is asked for (or an empty
    one), and for a window not in ``windows`` the default with a notice naming what was asked
    ("Unknown window “abc”: showing 7 days. Choose 24h, 7d or 14d."); the notice is "" otherwise."""
    asked = request.GET.get("window", "")
    if not asked or asked in windows:
        return asked or default, ""
    notice = _("Unknown window “%(asked)s”: showing %(default)s. Choose %(choices)s.") % {
        "asked": asked,
        "default": _span_words(windows[default]),
        "choices": get_text_list(list(windows)),
    }
    return default, notice


def window_ctx(window: str, windows: dict[str, timedelta], default: str, notice: str) -> dict[str, Any]:
    """The chooser's context: the window shown, the choices in order, which is the default, and the
    unknown-window notice."""
    return {"window": window, "windows": list(windows), "window_default": default, "window_notice": notice}


def amount_text(resource: str) -> Any:
    """A writer of ``resource``'s amounts for the charts' axes and tables."""
    return functools.partial(_amount, resource)


@functools.lru_cache(maxsize=8192)
def _amount(resource: str, value: float) -> str:
    # Remembered: a page's chart tables write hundreds of amounts, mostly the same few
    # (deserved and capability seldom change), at 10-25 us each.
    return format_quantity(resource, Decimal(str(round(value, 6))))


def queue_history(
    request: HttpRequest, name: str, now: datetime, has_children: bool = False
) -> dict[str, Any] | None:
    """The ``history`` section of a Queue's page, None when history is off. ``has_children``: the
    queue has child queues (queue_summaries), so each chart and table says whose it counts."""
    service = get_service()
    if service is None:
        return None
    window, window_notice = chosen_window(request, QUEUE_WINDOWS, QUEUE_WINDOW_DEFAULT)
    since = now - QUEUE_WINDOWS[window]
    errors: list[str] = []

    def read(fn: Any) -> Any:
        result = service.read(fn)
        if result.error:
            errors.append(result.error)
        return result.value

    charts, podgroups = _queue_charts(service.using, read, errors, name, window, since, now)
    days = read(lambda using: reads.daily_waits(using, name, now - timedelta(days=7), now)) or []
    return {
        **window_ctx(window, QUEUE_WINDOWS, QUEUE_WINDOW_DEFAULT, window_notice),
        "charts": charts,
        "podgroups_chart": podgroups,
        "has_children": has_children,
        "wait_days": [(day, _duration(p50), _duration(p90), n) for day, p50, p90, n in days],
        "notice": history_notice(service, errors),
    }


# Rendered charts of a Queue's page per (history database, queue, window, language, time zone):
# reused while no Queue sample newer than those they show was written and for at most
# CHART_REUSE_SECONDS (the sample interval's order; the table labels spans by the minute), so the
# page's viewers and reloads cost one read and one rendering per sample. Each entry: (newest
# sample, computed at, the charts' HTML, the PodGroups chart's HTML or None). Bounded in bytes.
QUEUE_CHARTS = SizedMemo(4 * 1024 * 1024)
CHART_REUSE_SECONDS = 60.0


def _queue_charts(
    using: str, read: Any, errors: list[str], name: str, window: str, since: datetime, now: datetime
) -> tuple[list[SafeString], SafeString | None]:
    """The usage charts (one per resource) and the PodGroups-by-phase chart of a Queue's
    ``window``, rendered (``dashboard/_chart.html``); ``read`` runs a history read on the
    database ``using`` and appends its error to ``errors`` (a rendering that met one is not kept)."""
    newest = read(reads.newest_sample)
    key = (using, str(connections[using].settings_dict.get("NAME")), name, window, *locale_key())
    hit = QUEUE_CHARTS.get(key)
    if (
        hit is not None
        and newest is not None
        and hit[0] == newest
        and 0 <= (now - hit[1]).total_seconds() < CHART_REUSE_SECONDS
    ):
        return hit[2], hit[3]
    errors_before = len(errors)
    usage = read(lambda using: reads.queue_usage(using, name, since, now)) or []
    chart = get_template("dashboard/_chart.html")
    charts = []
    for series in sorted(usage, key=lambda s: resource_sort_key(s.resource)):
        lines = [
            (_("allocated"), "a", series.allocated, False),
            (_("deserved"), "b", series.deserved, True),
            (_("capability"), "c", series.capability, True),
        ]
        drawn = line_chart(series.resource, lines, since, now, amount_text(series.resource))
        charts.append(mark_safe(chart.render({"chart": drawn})))  # noqa: S308 - template output
    phase_counts = read(lambda using: reads.queue_phase_counts(using, name, since, now)) or {}
    podgroups = None
    if phase_counts:
        lines = [(phase, _PHASE_CSS.get(phase, "d"), pts, False) for phase, pts in phase_counts.items()]
        drawn = line_chart(_("PodGroups by phase"), lines, since, now, lambda v: f"{v:.0f}")
        podgroups = mark_safe(chart.render({"chart": drawn}))  # noqa: S308 - template output
    if newest is not None and len(errors) == errors_before:
        size = sum(len(c) for c in charts) + len(podgroups or "") + 200
        QUEUE_CHARTS.put(key, (newest, now, charts, podgroups), 2 * size)
    return charts, podgroups


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    if minutes < 1:
        return _("%(n)s s") % {"n": round(seconds)}
    if minutes < 120:
        return _("%(n)s min") % {"n": round(minutes)}
    return _("%(n)s h") % {"n": round(minutes / 60, 1)}


def unknown_key_label(by: str) -> str:
    """The name of the /usage/ row of pods whose queue (``by`` "queue") or namespace is not known
    (reads.UsageRow.key ""), the same in its table, its charts and its CSV."""
    return _("no known queue") if by == "queue" else _("no known namespace")


@require_safe
def usage(request: HttpRequest) -> HttpResponse:
    snap = snapshot(request)
    now = reference_now(snap)
    window, window_notice = chosen_window(request, USAGE_WINDOWS, USAGE_WINDOW_DEFAULT)
    by = request.GET.get("by", "queue")
    if by not in ("queue", "namespace"):
        by = "queue"
    since = now - USAGE_WINDOWS[window]
    service = get_service()
    ctx = page_ctx(snap, now, (), "usage")
    ctx.update(window_ctx(window, USAGE_WINDOWS, USAGE_WINDOW_DEFAULT, window_notice))
    ctx.update({"by": by, "since": since, "until": now})
    if service is None:
        ctx["off"] = True
        return render(request, "dashboard/usage.html", ctx)
    namespaces = visible_namespaces(request)
    result = service.read(lambda using: reads.usage_hours(using, since, now, by, namespaces))
    rows: list[reads.UsageRow] = result.value or []
    unknown = unknown_key_label(by)
    if request.GET.get("format") == "csv" and not result.error:
        return _csv(rows, by, window, unknown)
    ctx.update(
        {
            "rows": rows,
            "unknown_label": unknown,
            "gpu_bars": bars(
                [(r.key or unknown, r.gpu_hours, f"{r.gpu_hours:.1f}") for r in rows if r.gpu_hours]
            ),
            "cpu_bars": bars(
                [(r.key or unknown, r.cpu_hours, f"{r.cpu_hours:.1f}") for r in rows if r.cpu_hours]
            ),
            "total_gpu": sum(r.gpu_hours for r in rows),
            "total_cpu": sum(r.cpu_hours for r in rows),
            "notice": history_notice(service, [result.error] if result.error else []),
        }
    )
    return render(request, "dashboard/usage.html", ctx)


def _csv(rows: list[reads.UsageRow], by: str, window: str, unknown: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = download_header(f"usage-{by}-{window}.csv")
    writer = csv.writer(response)
    writer.writerow([by, "gpu_hours", "cpu_hours", "pods"])
    for r in rows:
        writer.writerow([r.key or unknown, f"{r.gpu_hours:.3f}", f"{r.cpu_hours:.3f}", r.pods])
    return response


def _gantt_rows(pods: list[reads.PodSpan]) -> list[tuple[str, str, list[Any]]]:
    rows = []
    for p in pods:
        end = p.finished or p.deleted
        final = "failed" if (p.exit_code or 0) != 0 or p.phase == "Failed" else "ok"
        parts = [
            (p.created, p.scheduled or p.started or end, "pending", _("pending")),
            (p.scheduled, p.started or end, "scheduled", _("scheduled")),
            (p.started, end, "running" if end is None else final, _("running")),
        ]
        notes = [p.node or _("no node")]
        if p.exit_code is not None:
            notes.append(_("exit %(code)s") % {"code": p.exit_code})
        if p.restarts:
            notes.append(ngettext("%(n)s restart", "%(n)s restarts", p.restarts) % {"n": p.restarts})
        if p.deleted:
            notes.append(_("deleted"))
        rows.append((p.name, " · ".join(notes), parts))
    return rows


def job_history(
    snap: Any,
    job: dict[str, Any],
    pg: dict[str, Any] | None,
    now: datetime,
    never: bool = False,
    down: Sequence[str] = (),
) -> dict[str, Any] | None:
    """The Job page's ``history`` section: a timeline of its pods (deleted ones too), its wait
    against the queue's typical wait, and, while it waits, its place in the queue with how long
    it has waited so far. No wait is estimated while ``never`` (the gang cannot start as it is:
    dashboard.volcano.pending.never_start) or ``down`` names a Volcano component it waits on that
    is not running (dashboard.volcano.pending.components_waited_on)."""
    from dashboard.presenters.charts import gantt
    from dashboard.volcano import objects
    from dashboard.volcano.history import position, wait_so_far
    from dashboard.volcano.phases import podgroup_phase, podgroup_queued
    from dashboard.volcano.time import parse_time

    service = get_service()
    if service is None:
        return None
    ns, name = objects.namespace(job), objects.name(job)
    queue = objects.as_str(objects.spec(job).get("queue"))
    created = parse_time(objects.meta(job).get("creationTimestamp")) or now - timedelta(days=1)
    errors: list[str] = []

    def read(fn: Any) -> Any:
        result = service.read(fn)
        if result.error:
            errors.append(result.error)
        return result.value

    # Its pods are created after it, stamped by the same API server: an earlier Job of this name
    # (deleted, then created again) had pods created before this one was.
    pods = read(lambda using: reads.job_pods(using, ns, name, created)) or []
    timeline = gantt(_gantt_rows(pods), created, now)
    week = (now - timedelta(days=7)).replace(second=0, microsecond=0)  # one window a minute
    typical = read(lambda using: reads.wait_percentile(using, queue, week, 50))
    waited = read(lambda using: reads.podgroup_wait(using, objects.uid(pg))) if pg else None
    place, so_far = None, None
    if pg is not None and podgroup_queued(podgroup_phase(pg)):
        place = position(queued_gangs(snap, queue), objects.namespace(pg), objects.name(pg))
        so_far = wait_so_far(parse_time(objects.meta(pg).get("creationTimestamp")), None, now)
    return {
        "rows": timeline.rows,
        "ticks": timeline.ticks,
        # The times of each row: the starts of _gantt_rows' parts, then the pod's end.
        "time_headers": [_("Created"), _("Scheduled"), _("Started"), _("Finished")],
        "wait_text": _wait_text(waited, typical, queue),
        "place_text": _place_text(place, typical, queue, _no_estimate(never, down), so_far),
        "typical_note": TYPICAL_NOTE if typical is not None else "",
        "notice": history_notice(service, errors),
    }


# How the typical wait is estimated: rollup.estimate_percentile over the AdmissionDaily buckets.
TYPICAL_NOTE = gettext_lazy(
    "The median is estimated from the recorded waits counted in log-spaced ranges per day: "
    "within 2.2 percent plus 0.5 s of the exact median."
)


def _wait_text(waited: float | None, typical: float | None, queue: str) -> str:
    if waited is None:
        return ""
    if typical is None:
        return _("Waited %(waited)s before running.") % {"waited": _duration(waited)}
    return _(
        "Waited %(waited)s before running; typical for queue %(queue)s is ≈ %(typical)s "
        "(estimated median, last 7 days)."
    ) % {
        "waited": _duration(waited),
        "queue": queue,
        "typical": _duration(typical),
    }


def _no_estimate(never: bool, down: Sequence[str]) -> str:
    """Why a waiting gang gets no wait estimate ("" when it may get one): a Volcano component it
    waits on is not running (nothing moves until it is back), or it cannot start as it is."""
    if SCHEDULER in down:
        return _("No estimate while the Volcano scheduler is not running.")
    if CONTROLLERS in down:
        return _("No estimate while the Volcano controllers are not running.")
    if never:
        return _("It cannot start as it is (see why above), so no wait is estimated.")
    return ""


def _place_text(
    place: tuple[int, int] | None,
    typical: float | None,
    queue: str,
    no_estimate: str = "",
    so_far: timedelta | None = None,
) -> str:
    """The place among the queue's waiting gangs, then ``no_estimate`` (``_no_estimate``) or the
    queue's median wait as an estimate with the wait ``so_far``."""
    if place is None:
        return ""
    text = _(
        "Number %(n)s of %(total)s waiting gangs in queue %(queue)s, in the order the scheduler considers "
        "them (priority, then age)."
    ) % {"n": place[0], "total": place[1], "queue": queue}
    if no_estimate:
        return text + " " + no_estimate
    if typical is not None and so_far is not None:
        text += " " + _(
            "Estimate: gangs of this queue typically waited ≈ %(typical)s (estimated median, last 7 days); "
            "this one has waited %(so_far)s so far."
        ) % {"typical": _duration(typical), "so_far": _duration(so_far.total_seconds())}
    elif typical is not None:
        text += " " + _(
            "Estimate: gangs of this queue typically waited ≈ %(typical)s (estimated median, last 7 days)."
        ) % {"typical": _duration(typical)}
    return text


def queued_gangs(snap: Any, queue: str) -> list[Any]:
    """The queue's waiting PodGroups with their priority: the highest ``spec.priority`` of their
    pods (the API server sets it from the PriorityClass), 0 without one."""
    from dashboard.volcano import objects
    from dashboard.volcano.history import QueuedGang
    from dashboard.volcano.phases import podgroup_phase, podgroup_queued
    from dashboard.volcano.time import parse_time

    out = []
    for pg in snap.podgroups_in_queue(queue):
        if not podgroup_queued(podgroup_phase(pg)):
            continue
        prios = [objects.spec(p).get("priority") for p in snap.pods_for_podgroup(pg)]
        known = [p for p in prios if isinstance(p, int) and not isinstance(p, bool)]
        out.append(
            QueuedGang(
                objects.namespace(pg),
                objects.name(pg),
                max(known, default=0),
                parse_time(objects.meta(pg).get("creationTimestamp")),
            )
        )
    return out
