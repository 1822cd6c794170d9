"""Container logs: a Pod's (one container, current or previous) and a Job's (its pods merged by time).

Logs are the one thing a page reads from the API server per request (dashboard/kube/logs.py);
before any read, ``logs_refusal`` asks whether the user may ``get pods/log`` in the namespace.
Query parameters (all optional): ``container`` (the first when absent; a name the pod does not
have is a 404 naming the pod's containers, never another one's log), ``previous=1``, ``tail``
(a number of lines from 1 to 5000, or ``all``; the form offers 100, 1000 and 5000; a larger number
is capped and anything else reads 1000, each with a note on the page), ``ts=0`` (hide timestamps),
``wrap=1``, ``q`` (highlight matches), ``task`` (a Job's task; one it does not have is a 404
naming its tasks), ``download=1`` (the shown lines as a text file) and ``after`` (an RFC 3339
timestamp: only newer lines, as a bare fragment; static/dashboard/logs.js polls it to follow a log).
The switches ``previous``, ``ts`` and ``wrap`` take 1 or 0 (or true/false, yes/no, on/off); another
word leaves the switch as it is by default, with a note.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_safe

from dashboard.access import UNCHECKED_RETRY_SECONDS, Decision, current_identity, decide
from dashboard.hidden import reveal_html
from dashboard.kube import get_cluster_cache
from dashboard.kube.client import UNREACHABLE, KubeError
from dashboard.kube.logs import LogLine, LogRead, LogsBusy, LogSlots, read_pod_log
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.clock import reference_now
from dashboard.presenters.paging import quoted, whole_number
from dashboard.views.downloads import download_header
from dashboard.views.errors import find_object
from dashboard.views.notices import page_ctx
from dashboard.volcano import objects
from dashboard.volcano.gang import job_tasks
from dashboard.volcano.objects import annotations as annotations_of
from dashboard.volcano.objects import as_dict, as_list, as_str
from dashboard.volcano.objects import labels as labels_of
from dashboard.volcano.pods import pod_not_started, pod_task

TAILS = ("100", "1000", "5000", "all")
# The most lines a number in ``?tail=`` reads; more is capped to it ("all" reads every line, up to
# VOLCANO_UI_LOGS_MAX_BYTES per container).
MAX_TAIL = 5000
# Lines of the failing container shown in a Job's "why did it fail" card (``fragment=tail``).
FAILURE_TAIL = 20
DEFAULT_TAIL = "1000"
# Parallel reads for one Job page (each still takes a process-wide slot).
_JOB_READERS = 4
# Seconds a log read may wait for the API server's answer before it counts as stalled on it: when
# every slot is held by such reads, "busy" is the API server not answering, not too many readers.
STALLED_READ_SECONDS = 3.0
_STAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")

_slots_lock = threading.Lock()
_slots: LogSlots | None = None


def slots() -> LogSlots:
    """The process's log-reading slots (VOLCANO_UI_LOGS_MAX_STREAMS; rebuilt when it changes)."""
    global _slots
    with _slots_lock:
        limit = settings.VOLCANO_UI_LOGS_MAX_STREAMS
        if _slots is None or _slots.limit != limit:
            _slots = LogSlots(limit)
        return _slots


def logs_refusal(request: HttpRequest, namespace: str) -> tuple[str, int] | None:
    """Why ``request``'s user may not read logs in ``namespace``, with the status to answer (None
    when they may): logs turned off (VOLCANO_UI_LOGS, 403), or, in proxy/token modes, a
    SubjectAccessReview for get pods/log that refused (403) or that the API server could not
    answer (503: the permission is unchecked, not refused)."""
    if not settings.VOLCANO_UI_LOGS:
        return _("Logs are turned off on this dashboard."), 403
    if settings.VOLCANO_UI_ACCESS_MODE == "none":
        return None
    decision = decide(current_identity(request), "get", "", "pods/log", namespace)
    if decision is Decision.ALLOWED:
        return None
    if decision is Decision.UNCHECKED:
        text = _(
            "Your permission to read pod logs in namespace %(ns)s could not be checked: the API server "
            "did not answer. Try again in a moment."
        )
        return text % {"ns": namespace}, 503
    return _("You may not read pod logs in namespace %(ns)s (Kubernetes RBAC: get pods/log).") % {
        "ns": namespace
    }, 403


@dataclass
class Options:
    container: str = ""
    previous: bool = False
    tail: str = DEFAULT_TAIL
    timestamps: bool = True
    wrap: bool = False
    query: str = ""
    task: str = ""
    after: str = ""
    # What the query string asked that was not used as given, in words (shown above the log).
    notes: list[str] = field(default_factory=list)

    @property
    def tail_lines(self) -> int | None:
        return None if self.tail == "all" else int(self.tail)


def chosen_tail(raw: str | None) -> tuple[str, str]:
    """``?tail=`` as (the tail read, a note): absent or empty is DEFAULT_TAIL; ``all`` (any case)
    and a whole number of lines from 1 to MAX_TAIL are used as given; a larger number is capped to
    MAX_TAIL; anything else (0, negative, not a number) gives DEFAULT_TAIL. The note ("" when the
    value was used as given) says what was read instead."""
    value = (raw or "").strip()
    if not value:
        return DEFAULT_TAIL, ""
    if value.lower() == "all":
        return "all", ""
    lines = whole_number(value) or 0
    if lines > MAX_TAIL:
        note = _(
            "?tail=%(value)s is more than %(max)d lines: showing the last %(max)d "
            "(choose “all” for every line)."
        )
        return str(MAX_TAIL), note % {"value": quoted(value), "max": MAX_TAIL}
    if lines < 1:
        note = _(
            "?tail=%(value)s ignored (give a number of lines from 1 to %(max)d, or all): "
            "showing the last %(default)s lines."
        )
        return DEFAULT_TAIL, note % {"value": quoted(value), "max": MAX_TAIL, "default": DEFAULT_TAIL}
    return str(lines), ""


def tail_choices(tail: str) -> list[str]:
    """The page's "Lines" choices: TAILS, with ``tail`` among the numbers when it is none of them."""
    if tail in TAILS or not tail.isdigit():
        return list(TAILS)
    numbers = sorted({int(t) for t in TAILS if t.isdigit()} | {int(tail)})
    return [*(str(n) for n in numbers), "all"]


# The words a switch (``previous``, ``ts``, ``wrap``) takes, in any case; the form sends 1 and 0.
_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})


def _switch(raw: str | None, default: bool, ignored: str) -> tuple[bool, str]:
    """A switch's query value as (on, a note): absent or empty is ``default``; a word of neither
    _ON nor _OFF is ``default`` too, with ``ignored`` (``%(value)s``: the value) as the note."""
    value = (raw or "").strip()
    if not value:
        return default, ""
    if value.lower() in _ON or value.lower() in _OFF:
        return value.lower() in _ON, ""
    return default, ignored % {"value": quoted(value)}


def _options(request: HttpRequest) -> Options:
    get = request.GET
    notes = []
    if get.get("fragment") == "tail":
        tail = str(FAILURE_TAIL)
    else:
        tail, note = chosen_tail(get.get("tail"))
        notes.append(note)
    previous, note = _switch(
        get.get("previous"),
        False,
        _("?previous=%(value)s ignored (give 1 or 0): showing the current container's log."),
    )
    notes.append(note)
    timestamps, note = _switch(
        get.get("ts"), True, _("?ts=%(value)s ignored (give 1 or 0): timestamps shown.")
    )
    notes.append(note)
    wrap, note = _switch(
        get.get("wrap"), False, _("?wrap=%(value)s ignored (give 1 or 0): lines not wrapped.")
    )
    notes.append(note)
    after = get.get("after", "")
    return Options(
        container=get.get("container", ""),
        previous=previous,
        tail=tail,
        timestamps=timestamps,
        wrap=wrap,
        query=get.get("q", "")[:200],
        task=get.get("task", ""),
        after=after if _STAMP_RE.match(after) else "",
        notes=[n for n in notes if n],
    )


@dataclass
class Result:
    lines: list[LogLine] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    busy: bool = False
    failed: bool = False  # some problem was the API server failing (not it refusing: no such log)
    # Pods whose log was asked for, and those of which at least one container's log was read.
    tried: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    busy_text: str = ""  # why no slot was free (busy_text()), when ``busy``

    @property
    def none_read(self) -> bool:
        """Logs were asked for and not one could be read (every read failed or found no slot)."""
        return bool(self.tried) and not self.read


def api_stalled(snap: Snapshot) -> bool:
    """Whether the API server looks stalled: every log slot is held by a read that has waited
    STALLED_READ_SECONDS or more for its answer, or the pods informer reports no answer (a
    request unanswered that long, or no connection while it reconnects: KindState)."""
    waiting = slots().waiting_seconds()
    if len(waiting) >= slots().limit and waiting[-1] >= STALLED_READ_SECONDS:
        return True
    state = snap.pods.state
    since = state.waiting_since
    if since is not None and (datetime.now(UTC) - since).total_seconds() >= STALLED_READ_SECONDS:
        return True
    return state.name in ("stale", "unreachable") and state.error_category == UNREACHABLE


def busy_text(snap: Snapshot) -> str:
    """Why a log could not be read for want of a free slot: the API server not answering (the
    reads holding the slots wait for it), else too many logs being read at once."""
    if api_stalled(snap):
        limit = slots().limit
        return ngettext(
            "The API server is not answering: the log read this dashboard makes at a time is "
            "waiting for it, so no other log can be read now. Try again in a moment.",
            "The API server is not answering: the %(n)d log reads this dashboard makes at a time "
            "are waiting for it, so no other log can be read now. Try again in a moment.",
            limit,
        ) % {"n": limit}
    return _("Too many logs are being read right now; some were not read. Try again in a moment.")


class _Failure(str):
    """A reason a log could not be read that is the API server failing (no connection, no answer,
    5xx), as opposed to it answering that there is no such log (a container waiting to start)."""


def _read(namespace: str, pod: str, container: str, opts: Options) -> LogRead | str:
    """One container's log, or the reason it could not be read (for a notice)."""
    kube = get_cluster_cache().client
    if kube is None:
        return _Failure(_("There is no cluster connection to read logs from."))
    try:
        with slots().take() as hold:
            return read_pod_log(
                kube,
                namespace,
                pod,
                container=container,
                previous=opts.previous,
                tail_lines=None if opts.after else opts.tail_lines,
                since_time=opts.after[:19] + "Z" if opts.after else "",
                max_bytes=settings.VOLCANO_UI_LOGS_MAX_BYTES,
                timeout=settings.VOLCANO_UI_LOGS_TIMEOUT_SECONDS,
                answered=hold.answered,
            )
    except LogsBusy:
        raise
    except KubeError as exc:
        if exc.status == 0 and "timeout" in exc.reason.lower():
            seconds = settings.VOLCANO_UI_LOGS_TIMEOUT_SECONDS
            return _Failure(
                ngettext(
                    "The API server did not answer within %(s)s second.",
                    "The API server did not answer within %(s)s seconds.",
                    seconds,
                )
                % {"s": seconds}
            )
        text = exc.message or exc.describe()
        return _Failure(text) if exc.status == 0 or exc.status >= 500 else text


def _collect(snap: Snapshot, namespace: str, targets: list[tuple[str, str]], opts: Options) -> Result:
    """Read every (pod, container) of ``targets``; lines merged by time (then by source). Of a
    Job's containers, the ones that could not be read for the same reason share one problem
    ("pod-0/main, pod-1/main: reason")."""
    result = Result(tried={pod for pod, _container in targets})

    def one(target: tuple[str, str]) -> tuple[tuple[str, str], LogRead | str | None]:
        try:
            return target, _read(namespace, target[0], target[1], opts)
        except LogsBusy:
            return target, None

    if len(targets) == 1:
        answers = [one(targets[0])]
    else:
        with ThreadPoolExecutor(max_workers=_JOB_READERS, thread_name_prefix="logs") as pool:
            answers = list(pool.map(one, targets))
    unread: dict[str, list[str]] = {}  # reason -> the sources not read for it, in order
    for (pod, container), answer in answers:
        source = f"{pod}/{container}"
        if answer is None:
            result.busy = True
        elif isinstance(answer, str):
            result.failed = result.failed or isinstance(answer, _Failure)
            unread.setdefault(str(answer), []).append(source)
        else:
            result.read.add(pod)
            if answer.truncated:
                result.truncated.append(source)
            result.lines.extend(answer.lines)
    for reason, sources in unread.items():
        result.problems.append(f"{', '.join(sources)}: {reason}" if len(targets) > 1 else reason)
    if result.busy:
        result.busy_text = busy_text(snap)
    if opts.after:
        result.lines = [ln for ln in result.lines if ln.at > opts.after]
    if len(targets) > 1:
        result.lines.sort(key=lambda ln: ln.sort_key)
        if not opts.after and opts.tail_lines is not None:
            result.lines = result.lines[-opts.tail_lines :] if opts.tail_lines else []
    return result


def render_line(line: LogLine, opts: Options, *, source: bool) -> SafeString:
    """One line as escaped HTML: hidden controls revealed, matches of ``opts.query`` in <mark>."""
    parts: list[Any] = []
    if opts.timestamps and line.at:
        parts.append(format_html('<span class="log-ts">{}</span> ', line.at))
    if source and line.source:
        parts.append(format_html('<span class="log-src">[{}]</span> ', reveal_html(line.source)))
    text = line.text
    if opts.query:
        pattern = re.compile(re.escape(opts.query), re.IGNORECASE)
        pos = 0
        for match in pattern.finditer(text):
            parts.append(reveal_html(text[pos : match.start()]))
            parts.append(format_html("<mark>{}</mark>", reveal_html(match.group(0))))
            pos = match.end()
        parts.append(reveal_html(text[pos:]))
    else:
        parts.append(reveal_html(text))
    return mark_safe('<span class="log-line">' + "".join(str(x) for x in parts) + "</span>\n")  # noqa: S308


def _text(lines: list[LogLine], opts: Options, *, source: bool) -> str:
    out = []
    for ln in lines:
        prefix = (f"{ln.at} " if opts.timestamps and ln.at else "") + (
            f"[{ln.source}] " if source and ln.source else ""
        )
        out.append(prefix + ln.text + "\n")
    return "".join(out)


def _running(pod: dict, container: str | None = None) -> bool:
    """Is ``container`` (any, when None) of ``pod`` running, per the cache?"""
    for cs in as_list(objects.status(pod).get("containerStatuses")):
        cs = as_dict(cs)
        if container is not None and as_str(cs.get("name")) != container:
            continue
        if "running" in as_dict(cs.get("state")):
            return True
    return False


def _respond(
    request: HttpRequest,
    ctx: dict[str, Any],
    result: Result,
    opts: Options,
    *,
    source: bool,
    live: bool,
    filename: str,
) -> HttpResponse:
    if request.GET.get("fragment") == "tail":
        ctx.update(
            {
                "log_html": mark_safe(
                    "".join(str(render_line(ln, opts, source=source)) for ln in result.lines)
                ),  # noqa: S308
                "line_count": len(result.lines),
                "problems": result.problems,
                "busy": result.busy,
                "busy_text": result.busy_text,
            }
        )
        return render(request, "dashboard/_log_tail.html", ctx)
    if request.GET.get("download") == "1":
        if not result.lines and (result.problems or result.busy):
            # Nothing could be read: an error, not an empty file that looks like an empty log.
            return _download_failed(result)
        text = _text(result.lines, opts, source=source)
        if result.problems:
            # Some of a Job's containers could not be read: the file says which, first.
            text = "".join(f"# {_('not read')}: {p}\n" for p in result.problems) + text
        resp = HttpResponse(text, content_type="text/plain; charset=utf-8")
        resp["Content-Disposition"] = download_header(filename)
        return resp
    html = [render_line(ln, opts, source=source) for ln in result.lines]
    last = result.lines[-1].at if result.lines else opts.after
    if opts.after:
        # A follow poll: only the new lines; the script appends them and keeps X-Log-After.
        resp = HttpResponse(mark_safe("".join(html)))  # noqa: S308 - every line is escaped above
        resp["X-Log-After"] = last or ""
        if not live:
            resp["X-Log-Ended"] = "1"
        if result.busy:
            resp["X-Log-Busy"] = "1"
        resp["Cache-Control"] = "no-store"
        return resp
    matches = 0
    if opts.query:
        needle = opts.query.lower()
        matches = sum(ln.text.lower().count(needle) for ln in result.lines)
    ctx.update(
        {
            "opts": opts,
            "tails": tail_choices(opts.tail),
            "log_html": mark_safe("".join(html)),  # noqa: S308 - every line is escaped above
            "line_count": len(result.lines),
            "problems": result.problems,
            "truncated": result.truncated,
            "busy": result.busy,
            "busy_text": result.busy_text,
            "none_read": result.none_read,
            "pod_read": len(result.read),
            "max_bytes": settings.VOLCANO_UI_LOGS_MAX_BYTES,
            "live": live,
            "after": last or "",
            "matches": matches,
            "follow_seconds": settings.VOLCANO_UI_LOGS_FOLLOW_SECONDS,
        }
    )
    unavailable = result.busy and not result.lines
    resp = render(request, "dashboard/logs.html", ctx, status=503 if unavailable else 200)
    if unavailable:
        resp["Retry-After"] = str(UNCHECKED_RETRY_SECONDS)
    resp["Cache-Control"] = "no-store"
    return resp


def _download_failed(result: Result) -> HttpResponse:
    """A log download of which nothing could be read: 502 when the API server failed to give it,
    404 when it answered there is none (containers waiting to start), 503 with Retry-After when
    every reader was busy; the reasons as text."""
    if result.problems:
        reasons = "\n".join(result.problems)
        resp = HttpResponse(
            _("The log could not be read:") + "\n" + reasons + "\n",
            status=502 if result.failed else 404,
            content_type="text/plain; charset=utf-8",
        )
    else:
        resp = HttpResponse(
            result.busy_text + "\n",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
        resp["Retry-After"] = str(UNCHECKED_RETRY_SECONDS)
    resp["Cache-Control"] = "no-store"
    return resp


def _denied(request: HttpRequest, ctx: dict[str, Any], refusal: tuple[str, int]) -> HttpResponse:
    why, status = refusal
    opts = _options(request)
    ctx.update({"denied": why, "opts": opts, "tails": tail_choices(opts.tail)})
    template = "dashboard/_log_tail.html" if request.GET.get("fragment") == "tail" else "dashboard/logs.html"
    resp = render(request, template, ctx, status=status)
    if status == 503:
        resp["Retry-After"] = str(UNCHECKED_RETRY_SECONDS)
    return resp


def _container_names(pod: dict, field_name: str) -> list[str]:
    """The names of ``pod``'s spec.containers or spec.initContainers (``field_name``), as listed."""
    names = (as_str(as_dict(c).get("name")) for c in as_list(objects.spec(pod).get(field_name)))
    return [c for c in names if c]


def unknown_container_text(asked: str, containers: list[str], init: list[str]) -> str:
    """What a ``?container=`` naming none of the pod's containers gets: the name asked for and
    the names the pod has (spec.containers, then spec.initContainers when it has any)."""
    text = _("This pod has no container “%(asked)s”.") % {"asked": asked}
    text += " " + _("Its containers: %(names)s.") % {"names": ", ".join(containers) or "—"}
    if init:
        text += " " + _("Its init containers: %(names)s.") % {"names": ", ".join(init)}
    return text


def unknown_task_text(asked: str, tasks: list[str]) -> str:
    """What a Job's ``?task=`` naming none of its tasks gets: the name asked for and the Job's tasks."""
    text = _("This Job has no task “%(asked)s”.") % {"asked": asked}
    return text + " " + _("Its tasks: %(names)s.") % {"names": ", ".join(tasks) or "—"}


def _unknown_name(request: HttpRequest, ctx: dict[str, Any], text: str) -> HttpResponse:
    """404 for a container the pod does not have (a task the Job does not have): as text for a
    download or a follow poll, else the page (or the failure card's tail) with ``text`` as its
    notice; never another container's (task's) log."""
    if request.GET.get("download") == "1" or request.GET.get("after"):
        return HttpResponse(text, status=404, content_type="text/plain; charset=utf-8")
    opts = _options(request)
    ctx.update({"name_error": text, "opts": opts, "tails": tail_choices(opts.tail)})
    if request.GET.get("fragment") == "tail":
        ctx["problems"] = [text]
        return render(request, "dashboard/_log_tail.html", ctx, status=404)
    return render(request, "dashboard/logs.html", ctx, status=404)


@require_safe
def pod_logs(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "pods", _("Pod"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, pod = found
    app = _container_names(pod, "containers")
    init = _container_names(pod, "initContainers")
    containers = app + init
    opts = _options(request)
    asked = opts.container
    if not asked:
        opts.container = containers[0] if containers else ""
    ctx = page_ctx(snap, reference_now(snap), ("pods",), "jobs")
    labels, ann = labels_of(pod), annotations_of(pod)
    ctx.update(
        {
            "mode": "pod",
            "namespace": namespace,
            "name": name,
            "pod": pod,
            "containers": containers,
            "job_name": labels.get("volcano.sh/job-name") or ann.get("volcano.sh/job-name", ""),
        }
    )
    if refusal := logs_refusal(request, namespace):
        return _denied(request, ctx, refusal)
    if asked and asked not in containers:
        return _unknown_name(request, ctx, unknown_container_text(asked, app, init))
    # A pod none of whose containers has run has no log to read yet: the page says so.
    ctx["not_started"] = pod_not_started(pod)
    readable = opts.container and not ctx["not_started"]
    result = _collect(snap, namespace, [(name, opts.container)], opts) if readable else Result()
    live = not opts.previous and _running(pod, opts.container)
    suffix = "-previous" if opts.previous else ""
    return _respond(
        request,
        ctx,
        result,
        opts,
        source=False,
        live=live,
        filename=f"{namespace}_{name}_{opts.container}{suffix}.log",
    )


@require_safe
def job_logs(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "jobs", _("Job"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, job = found
    opts = _options(request)
    pods = snap.pods_for_job(job)
    # The tasks of the spec (some may have no pod yet) and of the pods.
    spec_tasks = (as_str(t.get("name")) for t in job_tasks(job))
    tasks = sorted(({*spec_tasks} | {pod_task(x) for x in pods}) - {""})
    if opts.task:
        pods = [x for x in pods if pod_task(x) == opts.task]
    placed = [x for x in pods if as_str(objects.spec(x).get("nodeName"))]
    cap = settings.VOLCANO_UI_LOGS_JOB_MAX_PODS
    read = placed[:cap]
    ctx = page_ctx(snap, reference_now(snap), ("jobs", "pods"), "jobs")
    ctx.update(
        {
            "mode": "job",
            "namespace": namespace,
            "name": name,
            "tasks": tasks,
            "pod_total": len(pods),
            "pod_placed": len(placed),
            "pod_tried": len(read),
            "pod_cap": cap,
            "capped": len(placed) > cap,
        }
    )
    if refusal := logs_refusal(request, namespace):
        return _denied(request, ctx, refusal)
    if opts.task and opts.task not in tasks:
        return _unknown_name(request, ctx, unknown_task_text(opts.task, tasks))
    targets = [
        (_pod_name(x), as_str(as_dict(c).get("name")))
        for x in read
        for c in as_list(objects.spec(x).get("containers"))
    ]
    result = _collect(snap, namespace, targets, opts) if targets else Result()
    live = any(_running(x) for x in read)
    task = f"-{opts.task}" if opts.task else ""
    return _respond(
        request, ctx, result, opts, source=True, live=live, filename=f"{namespace}_{name}{task}.log"
    )


def _pod_name(pod: dict) -> str:
    return as_str(as_dict(pod.get("metadata")).get("name"))
