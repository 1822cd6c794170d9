"""View models for the pages: small pure functions from plain Kubernetes/Volcano dicts to display values.

Everything here takes the JSON dicts the cluster cache holds (see the "Cluster cache" contract) and
never assumes a field is present or well-typed: any object the CRD schemas admit must render
(missing status, unknown phase strings, null timestamps, odd quantities). Field names and phase
semantics follow shared/volcano/REFERENCE.md (§1 Job, §2 PodGroup, §3 Queue, §4 linking, §5 events).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from dashboard.kube import derive
from dashboard.kube.kinds import pod_is_crashlooping as _kube_crashlooping
from dashboard.kube.kinds import to_int

# --- safe access ------------------------------------------------------------------------------


def as_dict(value: Any) -> dict:
    """``value`` when it is a dict, else an empty dict (objects from the wire may hold nulls)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def meta(obj: Mapping) -> dict:
    return as_dict(as_dict(obj).get("metadata"))


def name_of(obj: Mapping) -> str:
    return as_str(meta(obj).get("name"))


def namespace_of(obj: Mapping) -> str:
    return as_str(meta(obj).get("namespace"))


def labels_of(obj: Mapping) -> dict[str, str]:
    return {as_str(k): as_str(v) for k, v in as_dict(meta(obj).get("labels")).items()}


def annotations_of(obj: Mapping) -> dict[str, str]:
    return {as_str(k): as_str(v) for k, v in as_dict(meta(obj).get("annotations")).items()}


def spec_of(obj: Mapping) -> dict:
    return as_dict(as_dict(obj).get("spec"))


def status_of(obj: Mapping) -> dict:
    return as_dict(as_dict(obj).get("status"))


# --- time -------------------------------------------------------------------------------------

_TIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$"
)


def parse_time(value: Any) -> datetime | None:
    """Parse a Kubernetes Time/MicroTime (RFC 3339, e.g. "2026-11-29T10:00:00Z" or with microseconds).

    Returns an aware UTC datetime, or None for null, empty or unreadable values and for times
    before 1971 such as Go's zero time "0001-01-01T00:00:00Z" (never raises).
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    m = _TIME_RE.match(value.strip())
    if not m:
        return None
    try:
        year, month, day, hour, minute, second = (int(x) for x in m.groups()[:6])
        micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
        dt = datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
        off = m.group(8)
        if off and off not in ("Z", "z"):
            sign = 1 if off[0] == "+" else -1
            digits = off[1:].replace(":", "")
            dt = dt - sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    except (ValueError, OverflowError):
        return None
    # Go's zero time ("0001-01-01T00:00:00Z", what a zero metav1.Time marshals to when a client
    # forgets omitempty) and anything before 1971 means "not set": it would read "in phase 739948d".
    return dt if dt >= EARLIEST_TIME else None


# Times before this are placeholders (Go zero time, epoch 0), never real cluster events.
EARLIEST_TIME = datetime(1971, 1, 1, tzinfo=UTC)


_time_source: Any = None


def set_time_source(fn: Any) -> Any:
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


def created_at(obj: Mapping) -> datetime | None:
    return parse_time(meta(obj).get("creationTimestamp"))


def seconds_between(start: datetime | None, end: datetime) -> float | None:
    if start is None:
        return None
    return max(0.0, (end - start).total_seconds())


# --- phases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    """A phase ready for display: ``label`` is the wire value (or a placeholder), ``tone`` one of
    ok/warn/bad/info/done/muted (colour), ``icon`` an icon name; status is always text + icon."""

    label: str
    tone: str
    icon: str
    final: bool = False
    known: bool = True
    deleting: bool = False  # metadata.deletionTimestamp is set (finalizers still hold the object)


# Job phases: REFERENCE.md §1 "Phases"; Completed, Failed and Terminated are terminal.
JOB_PHASES: dict[str, tuple[str, str, bool]] = {
    "Pending": ("warn", "clock", False),
    "Running": ("ok", "play", False),
    "Restarting": ("warn", "refresh", False),
    "Aborting": ("warn", "stop", False),
    "Aborted": ("muted", "stop", False),
    "Completing": ("info", "check", False),
    "Completed": ("done", "check", True),
    "Terminating": ("warn", "ban", False),
    "Terminated": ("muted", "ban", True),
    "Failed": ("bad", "cross", True),
}
JOB_PHASE_ORDER = list(JOB_PHASES)
FINAL_JOB_PHASES = frozenset(p for p, (_t, _i, final) in JOB_PHASES.items() if final)

# PodGroup phases: REFERENCE.md §2; Completed is the only phase the scheduler never leaves.
PODGROUP_PHASES: dict[str, tuple[str, str, bool]] = {
    "Pending": ("warn", "clock", False),
    "Inqueue": ("info", "enter", False),
    "Running": ("ok", "play", False),
    "Unknown": ("bad", "question", False),
    "Completed": ("done", "check", True),
}
PODGROUP_PHASE_ORDER = list(PODGROUP_PHASES)

QUEUE_STATES: dict[str, tuple[str, str, bool]] = {
    "Open": ("ok", "unlock", False),
    "Closing": ("warn", "lock", False),
    "Closed": ("bad", "lock", False),
    "Unknown": ("muted", "question", False),
}

POD_TONES = {
    "Running": "ok",
    "Succeeded": "done",
    "Completed": "done",
    "Pending": "warn",
    "ContainerCreating": "info",
    "PodInitializing": "info",
    "Terminating": "warn",
    "Failed": "bad",
    "Error": "bad",
    "CrashLoopBackOff": "bad",
    "ImagePullBackOff": "bad",
    "ErrImagePull": "bad",
    "OOMKilled": "bad",
    "Unknown": "muted",
}
TONE_ICONS = {
    "ok": "play",
    "warn": "clock",
    "bad": "cross",
    "info": "info",
    "done": "check",
    "muted": "question",
}


def _phase(table: dict[str, tuple[str, str, bool]], value: Any) -> Phase:
    label = as_str(value)
    if not label:
        return Phase(_("No status"), "muted", "question", known=False)
    if label in table:
        tone, icon, final = table[label]
        return Phase(label, tone, icon, final)
    # An unknown phase string is shown verbatim, never guessed at.
    return Phase(label, "muted", "question", known=False)


def is_deleting(obj: Mapping) -> bool:
    """metadata.deletionTimestamp is set: Kubernetes is deleting the object (finalizers pending)."""
    return bool(meta(obj).get("deletionTimestamp"))


def _marked(phase: Phase, obj: Mapping) -> Phase:
    return replace(phase, deleting=True) if is_deleting(obj) else phase


def job_phase(job: Mapping) -> Phase:
    return _marked(_phase(JOB_PHASES, as_dict(status_of(job).get("state")).get("phase")), job)


def podgroup_phase(pg: Mapping) -> Phase:
    return _marked(_phase(PODGROUP_PHASES, status_of(pg).get("phase")), pg)


def queue_state(queue: Mapping) -> Phase:
    return _marked(_phase(QUEUE_STATES, status_of(queue).get("state")), queue)


def pod_phase(status_text: str) -> Phase:
    tone = POD_TONES.get(status_text)
    if tone is None:
        if status_text.startswith("Init:"):
            tone = "bad" if ("Error" in status_text or "BackOff" in status_text) else "info"
        elif (
            "BackOff" in status_text or "Err" in status_text or status_text.startswith(("Signal", "ExitCode"))
        ):
            tone = "bad"
        else:
            tone = "muted"
    return Phase(status_text or _("Unknown"), tone, TONE_ICONS[tone])


def job_phase_name(job: Mapping) -> str:
    """status.state.phase, "" when absent (inlined: list pages call it for every Job)."""
    status = job.get("status")
    if isinstance(status, dict):
        state = status.get("state")
        if isinstance(state, dict):
            phase = state.get("phase")
            return phase if isinstance(phase, str) else as_str(phase)
    return ""


def job_phase_since(job: Mapping) -> datetime | None:
    """When the Job entered its current phase: state.lastTransitionTime, else the newest condition."""
    status = status_of(job)
    since = parse_time(as_dict(status.get("state")).get("lastTransitionTime"))
    if since is None:
        conds = [c for c in as_list(status.get("conditions")) if isinstance(c, dict)]
        if conds:
            since = parse_time(conds[-1].get("lastTransitionTime"))
    return since


# --- quantities -------------------------------------------------------------------------------


def quantity(value: Any) -> Decimal | None:
    """A Kubernetes quantity ("500M", "16k", "1500m", "0", "4Gi") as a Decimal, or None if unreadable
    (dashboard.kube.derive.quantity: parse_quantity that never raises)."""
    return derive.quantity(value)


_BINARY = [
    (Decimal(2) ** 60, "Ei"),
    (Decimal(2) ** 50, "Pi"),
    (Decimal(2) ** 40, "Ti"),
    (Decimal(2) ** 30, "Gi"),
    (Decimal(2) ** 20, "Mi"),
    (Decimal(2) ** 10, "Ki"),
]
_DECIMAL = [
    (Decimal(10) ** 18, "E"),
    (Decimal(10) ** 15, "P"),
    (Decimal(10) ** 12, "T"),
    (Decimal(10) ** 9, "G"),
    (Decimal(10) ** 6, "M"),
    (Decimal(10) ** 3, "k"),
]


def format_quantity(resource: str, value: Decimal | None, raw: Any = None) -> str:
    """Human form of a quantity: cpu in cores (or millicores below 1), byte-like resources in binary
    units, everything else as a plain number with a decimal suffix. Numbers keep at least 3
    significant digits ("1500m" bytes -> "1.5", never "2") and absurd magnitudes turn scientific
    (derive.compact_number). ``value`` None (unreadable, including magnitudes beyond 10^±30, see
    derive.quantity) shows ``raw`` as written, cut to 40 characters."""
    if value is None:
        if raw in (None, ""):
            return "—"
        text = as_str(raw)
        return text if len(text) <= 40 else text[:39] + "…"
    base = resource.split(".", 1)[-1] if resource.startswith(("requests.", "limits.")) else resource
    if base == "cpu":
        if value != 0 and abs(value) < 1:
            return f"{derive.compact_number(value * 1000, 0)}m"
        return derive.compact_number(value)
    if base in ("memory", "ephemeral-storage", "storage") or base.startswith("hugepages-"):
        for size, unit in _BINARY:
            if abs(value) >= size:
                return f"{derive.compact_number(value / size, 1)}{unit}"
        return derive.compact_number(value, 0)
    for size, unit in _DECIMAL:
        if abs(value) >= size:
            return f"{derive.compact_number(value / size, 1)}{unit}"
    return derive.compact_number(value)


RESOURCE_ORDER = {"cpu": 0, "memory": 1, "nvidia.com/gpu": 2}


def resource_sort_key(name: str) -> tuple[int, str]:
    if name in RESOURCE_ORDER:
        return (RESOURCE_ORDER[name], name)
    if name == "pods":
        return (9, name)
    return (5, name)


@dataclass
class ResourceBar:
    """One resource of a Queue: allocated against deserved, guarantee and capability.

    Percentages are integers for CSS width classes: ``fill`` is allocated on a scale that fits every
    value (so more than 100% of deserved is drawn past the deserved marker, honestly); ``pct`` is
    allocated / deserved (or / capability when no deserved) and may exceed 100.
    """

    name: str
    allocated: str
    deserved: str
    guarantee: str
    capability: str
    fill: int
    deserved_at: int | None
    guarantee_at: int | None
    capability_at: int | None
    pct: int | None
    pct_of: str
    over: bool
    tone: str
    has_ref: bool = True  # False: nothing to compare with (no deserved/guarantee/capability)
    invalid: bool = False  # a value is no usable amount (shown verbatim): no bar, no percentage
    # The invalid values as "capability abc (not a quantity)", for the note drawn instead of a bar.
    invalid_text: str = ""

    @property
    def pct_text(self) -> str:
        """``pct`` for display: "≥9999" when capped at PCT_CAP, "" when there is none."""
        if self.pct is None:
            return ""
        return f"≥{PCT_CAP}" if self.pct >= PCT_CAP else str(self.pct)


# Percentages are capped for display ("≥9999%"): quantities are bounded (derive.quantity), but 1m
# deserved against 10^30 allocated would still print a 33-digit percentage.
PCT_CAP = 9999


def _pct(part: Decimal, whole: Decimal) -> int:
    """part / whole in whole percent, 0..PCT_CAP; 0 for a zero or negative whole (callers show no
    percentage of such a whole at all)."""
    if whole <= 0:
        return 0
    ratio = part * 100 / whole
    if ratio >= PCT_CAP:
        return PCT_CAP
    return max(0, int(ratio.to_integral_value()))


def invalid_amount_text(raw: Any) -> str:
    """A ResourceList value that is no usable amount, shown as written plus why:
    "abc (not a quantity)", "-1Gi (negative)" (derive.resource_amount)."""
    shown = format_quantity("", None, raw)
    note = derive.invalid_amount_note(raw)
    if note == "negative":
        return _("%(value)s (negative)") % {"value": shown}
    if note == "out of range":
        return _("%(value)s (out of range)") % {"value": shown}
    return _("%(value)s (not a quantity)") % {"value": shown}


def amount_text(resource: str, raw: Any) -> tuple[Decimal | None, str]:
    """(the amount, its display text) of one ResourceList value: (None, "—") when absent, (None,
    "abc (not a quantity)") when invalid (unparsable or negative), else the value and its
    format_quantity text."""
    if raw is None:
        return None, "—"
    value = derive.resource_amount(raw)
    if value is None:
        return None, invalid_amount_text(raw)
    return value, format_quantity(resource, value, raw)


# The four ResourceList fields of a Queue in words (lazily translated: called at render time).
FIELD_WORDS = {
    "allocated": lambda: _("allocated"),
    "deserved": lambda: _("deserved"),
    "guarantee": lambda: _("guarantee"),
    "capability": lambda: _("capability"),
}


def queue_resource_bars(queue: Mapping) -> list[ResourceBar]:
    """Per-resource usage bars for a Queue (REFERENCE.md §3: spec.capability, spec.deserved,
    spec.guarantee.resource, status.allocated). A value that is no usable amount (unparsable or
    negative, derive.resource_amount) is shown verbatim as invalid, and that resource gets no
    percentage and no bar: any scale or ratio drawn from the others would be a guess."""
    spec = spec_of(queue)
    # The scheduler writes status.allocated for every queue (REFERENCE.md §3); without it (no
    # scheduler yet, an older Volcano) usage is unknown, not zero: "—" and no percentage.
    reported = isinstance(status_of(queue).get("allocated"), Mapping)
    maps = {
        "allocated": as_dict(status_of(queue).get("allocated")),
        "deserved": as_dict(spec.get("deserved")),
        "guarantee": as_dict(as_dict(spec.get("guarantee")).get("resource")),
        "capability": as_dict(spec.get("capability")),
    }
    names = sorted({as_str(k) for m in maps.values() for k in m}, key=resource_sort_key)
    bars = []
    for res in names:
        raw = {k: m.get(res) for k, m in maps.items()}
        shown = {k: amount_text(res, v) for k, v in raw.items()}
        val = {k: q for k, (q, _t) in shown.items() if q is not None}
        invalid = any(raw[k] is not None and k not in val for k in raw)
        alloc = val.get("allocated") or Decimal(0)
        scale = max([*val.values(), Decimal(0)])

        def at(key: str, _val: dict = val, _scale: Decimal = scale, _invalid: bool = invalid) -> int | None:
            v = _val.get(key)
            if v is None or _scale <= 0 or _invalid:
                return None
            return min(100, _pct(v, _scale))

        ref_key = (
            "deserved"
            if val.get("deserved") is not None
            else ("capability" if val.get("capability") is not None else "")
        )
        ref = val.get(ref_key) if ref_key else None
        # A zero deserved/capability has no percentage: "100%" of 0 would be a lie.
        pct = _pct(alloc, ref) if reported and ref is not None and ref > 0 and not invalid else None
        cap = val.get("capability")
        over_cap = not invalid and cap is not None and alloc > cap
        over = pct is not None and pct > 100
        tone = "bad" if over_cap else ("warn" if over or invalid else "ok")
        bars.append(
            ResourceBar(
                name=res,
                allocated=shown["allocated"][1]
                if raw["allocated"] is not None
                else (format_quantity(res, Decimal(0)) if reported else "—"),
                deserved=shown["deserved"][1],
                guarantee=shown["guarantee"][1],
                capability=shown["capability"][1],
                fill=min(100, _pct(alloc, scale)) if scale > 0 and not invalid else 0,
                deserved_at=at("deserved"),
                guarantee_at=at("guarantee"),
                capability_at=at("capability"),
                pct=pct,
                pct_of=ref_key,
                over=over or over_cap,
                tone=tone,
                has_ref=any(raw.get(k) is not None for k in ("deserved", "guarantee", "capability")),
                invalid=invalid,
                invalid_text="; ".join(
                    f"{FIELD_WORDS[k]()} {shown[k][1]}" for k in raw if raw[k] is not None and k not in val
                ),
            )
        )
    return bars


# --- pods (kubectl's STATUS column) -----------------------------------------------------------


def pod_display_status(pod: Mapping) -> str:
    """The STATUS column of ``kubectl get pods`` (dashboard.kube.derive.pod_display_status)."""
    return derive.pod_display_status(pod).status


def pod_ready(pod: Mapping) -> str:
    """READY as kubectl shows it, "ready/total"."""
    return derive.pod_display_status(pod).ready_text


def pod_restarts(pod: Mapping) -> int:
    return derive.pod_display_status(pod).restarts


def pod_is_crashlooping(pod: Mapping) -> bool:
    """A container or init container waits in CrashLoopBackOff (the same test the cache's
    "crashloop" pod index uses, dashboard/kube/kinds.py)."""
    return _kube_crashlooping(pod) if isinstance(pod, dict) else False


def exit_text(terminated: Mapping) -> str:
    """ "exit code 137, signal 9" for a container's ``state.terminated`` (Kubernetes
    ContainerStateTerminated: exitCode int32 required, signal optional), as ``kubectl describe``
    prints them; "" when the exit code is missing."""
    code = terminated.get("exitCode")
    if code is None or isinstance(code, bool):
        return ""
    text = _("exit code %(code)s") % {"code": as_str(code)}
    signal = terminated.get("signal")
    if signal not in (None, 0, "") and not isinstance(signal, bool):
        text += ", " + _("signal %(sig)s") % {"sig": as_str(signal)}
    return text


def pod_task(pod: Mapping) -> str:
    """The Volcano task of a vcjob pod (label/annotation volcano.sh/task-spec, REFERENCE.md §4)."""
    return labels_of(pod).get("volcano.sh/task-spec") or annotations_of(pod).get("volcano.sh/task-spec", "")


def pod_blockers(pod: Mapping) -> list[str]:
    """Plain reasons a pod is not running: the PodScheduled=False message, waiting container reasons."""
    out = []
    status = status_of(pod)
    for cond in as_list(status.get("conditions")):
        cond = as_dict(cond)
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            text = as_str(cond.get("message")) or as_str(cond.get("reason"))
            if text:
                out.append(text)
    for cs in as_list(status.get("initContainerStatuses")) + as_list(status.get("containerStatuses")):
        wait = as_dict(as_dict(as_dict(cs).get("state")).get("waiting"))
        if wait.get("reason") and wait.get("reason") not in ("ContainerCreating", "PodInitializing"):
            msg = as_str(wait.get("message"))
            out.append(
                f"{as_str(as_dict(cs).get('name'))}: {as_str(wait.get('reason'))}"
                + (f" — {msg}" if msg else "")
            )
    return out


@dataclass
class PodRow:
    name: str
    namespace: str
    task: str
    status: Phase
    ready: str
    restarts: int
    node: str
    created: datetime | None
    crashlooping: bool
    blockers: list[str]
    index: int


def pod_row(pod: Mapping) -> PodRow:
    index = labels_of(pod).get("volcano.sh/task-index") or annotations_of(pod).get(
        "volcano.sh/task-index", ""
    )
    return PodRow(
        name=name_of(pod),
        namespace=namespace_of(pod),
        task=pod_task(pod),
        status=pod_phase(pod_display_status(pod)),
        ready=pod_ready(pod),
        restarts=pod_restarts(pod),
        node=as_str(spec_of(pod).get("nodeName")),
        created=created_at(pod),
        crashlooping=pod_is_crashlooping(pod),
        blockers=pod_blockers(pod),
        index=to_int(index) if index.isdigit() else 1 << 30,
    )


def pod_rows(pods: Iterable[Mapping]) -> list[PodRow]:
    rows = [pod_row(p) for p in pods]
    rows.sort(key=lambda r: (r.task, r.index, r.name))
    return rows


# --- Jobs ---------------------------------------------------------------------------------------


def job_tasks(job: Mapping) -> list[dict]:
    return [t for t in as_list(spec_of(job).get("tasks")) if isinstance(t, dict)]


def job_replicas(job: Mapping) -> int:
    return sum(to_int(t.get("replicas")) for t in job_tasks(job))


def job_min_available(job: Mapping) -> int:
    status = status_of(job)
    if "minAvailable" in status:
        return to_int(status.get("minAvailable"))
    if "minAvailable" in spec_of(job):
        return to_int(spec_of(job).get("minAvailable"))
    return sum(to_int(t.get("minAvailable", t.get("replicas"))) for t in job_tasks(job))


@dataclass
class Gang:
    """Gang progress: ``running`` of ``min_available`` (REFERENCE.md §1: Pending→Running when
    minAvailable ≤ running+succeeded+failed). ``fill``/``min_at`` are 0-100 for the bar."""

    running: int
    ready: int
    min_available: int
    total: int
    fill: int
    min_at: int
    met: bool
    # For a Job in a final phase: what happened ("4 succeeded, 1 failed"), shown instead of the bar;
    # running is 0 by then, so a "minAvailable reached" claim computed from it would be meaningless.
    outcome: str = ""


def make_gang(running: int, ready: int, min_available: int, total: int) -> Gang:
    """Counters below 0 (the schemas admit them; no controller writes them) are shown as 0 and make
    the gang not ``met``: reaching minAvailable is never claimed from negative numbers."""
    trusted = min(running, ready, min_available, total) >= 0
    running, ready, min_available, total = (max(0, v) for v in (running, ready, min_available, total))
    scale = max(total, min_available, running, 1)
    return Gang(
        running=running,
        ready=ready,
        min_available=min_available,
        total=total,
        fill=min(100, round(running * 100 / scale)),
        min_at=min(100, round(min_available * 100 / scale)),
        met=trusted and ready >= min_available,
    )


def job_gang(job: Mapping) -> Gang:
    status = status_of(job)
    counters = [to_int(status.get(k)) for k in ("running", "succeeded", "failed")]
    running, succeeded, failed = counters
    # A negative counter poisons the sum: keep it negative so make_gang distrusts the gang.
    ready = sum(counters) if min(counters) >= 0 else -1
    gang = make_gang(running, ready, job_min_available(job), job_replicas(job))
    if job_phase(job).final:
        _finished(gang, max(0, succeeded), max(0, failed))
    return gang


def _finished(gang: Gang, succeeded: int, failed: int) -> None:
    """Mark ``gang`` (of a Job in a final phase) with its outcome instead of a progress claim."""
    parts = [_("%(n)d succeeded") % {"n": succeeded}]
    if failed:
        parts.append(_("%(n)d failed") % {"n": failed})
    gang.outcome = _("finished: %(counts)s") % {"counts": ", ".join(parts)}
    gang.met = False


@dataclass
class TaskRow:
    """One task of a Job; ``count_list`` is (pod phase, count) pairs for templates."""

    name: str
    replicas: int
    min_available: int
    counts: dict[str, int]
    gang: Gang
    policies: list[str]
    image: str

    @property
    def count_list(self) -> list[tuple[str, int]]:
        return sorted(self.counts.items())


def task_rows(job: Mapping) -> list[TaskRow]:
    tsc = as_dict(status_of(job).get("taskStatusCount"))
    final = job_phase(job).final
    rows = []
    for task in job_tasks(job):
        name = as_str(task.get("name"))
        counts = {as_str(k): to_int(v) for k, v in as_dict(as_dict(tsc.get(name)).get("phase")).items()}
        replicas = to_int(task.get("replicas"))
        min_av = to_int(task.get("minAvailable")) if task.get("minAvailable") is not None else replicas
        running = counts.get("Running", 0)
        parts = [running, counts.get("Succeeded", 0), counts.get("Failed", 0)]
        ready = sum(parts) if min(parts) >= 0 else -1  # see job_gang
        containers = as_list(as_dict(as_dict(task.get("template")).get("spec")).get("containers"))
        image = as_str(as_dict(containers[0]).get("image")) if containers else ""
        gang = make_gang(running, ready, min_av, replicas)
        if final:
            _finished(gang, max(0, counts.get("Succeeded", 0)), max(0, counts.get("Failed", 0)))
        rows.append(
            TaskRow(
                name,
                replicas,
                min_av,
                counts,
                gang,
                [policy_text(p) for p in as_list(task.get("policies"))],
                image,
            )
        )
    return rows


def policy_text(policy: Any) -> str:
    """One LifecyclePolicy (REFERENCE.md §1 spec.policies) as "PodFailed → RestartJob (after 10m)"."""
    p = as_dict(policy)
    events = [as_str(e) for e in as_list(p.get("events"))] or (
        [as_str(p.get("event"))] if p.get("event") else []
    )
    when = ", ".join(events)
    if p.get("exitCode") is not None:
        when = (when + ", " if when else "") + _("exit code %(code)s") % {"code": as_str(p.get("exitCode"))}
    text = f"{when or '*'} → {as_str(p.get('action')) or '?'}"
    if p.get("timeout"):
        text += " " + _("(after %(timeout)s)") % {"timeout": as_str(p.get("timeout"))}
    return text


def job_plugins(job: Mapping) -> list[tuple[str, str]]:
    return [
        (as_str(k), " ".join(as_str(a) for a in as_list(v)))
        for k, v in sorted(as_dict(spec_of(job).get("plugins")).items(), key=lambda kv: as_str(kv[0]))
    ]


@dataclass
class TimelineEntry:
    phase: Phase
    at: datetime | None
    duration: float | None  # seconds until the next entry (or now for the last one)
    current: bool


def job_timeline(job: Mapping, now: datetime) -> list[TimelineEntry]:
    """Phase history from status.conditions (one entry per phase, oldest→newest, REFERENCE.md §1)."""
    conds = [c for c in as_list(status_of(job).get("conditions")) if isinstance(c, dict)]
    entries = []
    for i, cond in enumerate(conds):
        at = parse_time(cond.get("lastTransitionTime"))
        nxt = parse_time(conds[i + 1].get("lastTransitionTime")) if i + 1 < len(conds) else now
        dur = (nxt - at).total_seconds() if at and nxt and nxt >= at else None
        entries.append(TimelineEntry(_phase(JOB_PHASES, cond.get("status")), at, dur, i == len(conds) - 1))
    return entries


def job_health_hint(job: Mapping, pods: list[Mapping] | None, podgroup: Mapping | None) -> list[str]:
    """Short hints shown beside a Job's phase in lists: crash-looping pods, gang below minAvailable,
    unschedulable PodGroup."""
    hints = []
    phase = job_phase_name(job)
    if pods:
        statuses = [pod_display_status(p) for p in pods]
        crash = sum(1 for p in pods if pod_is_crashlooping(p))
        if crash:
            hints.append(
                ngettext("%(n)d pod CrashLoopBackOff", "%(n)d pods CrashLoopBackOff", crash) % {"n": crash}
            )
        pull = sum(1 for st in statuses if "ImagePull" in st or st == "ErrImagePull")
        if pull:
            hints.append(
                ngettext("%(n)d pod cannot pull its image", "%(n)d pods cannot pull their image", pull)
                % {"n": pull}
            )
    if phase == "Running":
        # Volcano counts finished pods toward the gang: a Job is Running while minAvailable ≤
        # running + succeeded + failed (REFERENCE.md §1, Pending→Running), so 2 Running + 2 Succeeded
        # of minAvailable 4 is not "below". Negative counters prove nothing: no hint from them.
        status = status_of(job)
        counters = [to_int(status.get(k)) for k in ("running", "succeeded", "failed")]
        if min(counters) >= 0 and sum(counters) < job_min_available(job):
            hints.append(_("below minAvailable"))
    if phase in ("Pending", "") and podgroup is not None:
        if unschedulable_condition(podgroup):
            hints.append(_("unschedulable"))
        elif as_str(status_of(podgroup).get("phase")) == "Pending":
            hints.append(_("waiting for queue admission"))
    return hints


# --- PodGroups ----------------------------------------------------------------------------------


def podgroup_gang(pg: Mapping) -> Gang:
    status = status_of(pg)
    running, succeeded = to_int(status.get("running")), to_int(status.get("succeeded"))
    ready = running + succeeded if min(running, succeeded) >= 0 else -1  # see job_gang
    total = sum(max(0, to_int(v)) for v in as_dict(spec_of(pg).get("minTaskMember")).values())
    min_member = to_int(spec_of(pg).get("minMember"))
    return make_gang(running, ready, min_member, max(total, min_member))


def unschedulable_condition(pg: Mapping) -> dict | None:
    """The PodGroup's ``Unschedulable`` condition (status True) while it still applies: a newer
    True ``Scheduled`` condition means the gang was placed since (REFERENCE.md §2)."""
    true_conds = [
        c for c in (as_dict(c) for c in as_list(status_of(pg).get("conditions"))) if c.get("status") == "True"
    ]
    unsched = [c for c in true_conds if c.get("type") == "Unschedulable"]
    if not unsched:
        return None
    newest = max(true_conds, key=lambda c: parse_time(c.get("lastTransitionTime")) or _EPOCH)
    if newest.get("type") == "Unschedulable":
        return newest
    if all(parse_time(c.get("lastTransitionTime")) is None for c in true_conds):
        return unsched[-1]
    return None


def podgroup_conditions(pg: Mapping) -> list[dict]:
    out = []
    for cond in as_list(status_of(pg).get("conditions")):
        cond = as_dict(cond)
        out.append(
            {
                "type": as_str(cond.get("type")),
                "status": as_str(cond.get("status")),
                "reason": as_str(cond.get("reason")),
                "message": as_str(cond.get("message")),
                "at": parse_time(cond.get("lastTransitionTime")),
            }
        )
    return out


def owner_of(obj: Mapping) -> dict | None:
    """The controller ownerReference (or the first one) as {kind, name, apiVersion, kind_label}.

    ``kind_label`` is the kind, qualified by its apiVersion when the bare kind would read as a Volcano
    one: "Job (batch/v1)" owns the PodGroup of a Kubernetes Job scheduled by Volcano (REFERENCE.md §0,
    §4 "Other workloads")."""
    refs = [as_dict(r) for r in as_list(meta(obj).get("ownerReferences"))]
    if not refs:
        return None
    ref = next((r for r in refs if r.get("controller") is True), refs[0])
    kind, api_version = as_str(ref.get("kind")), as_str(ref.get("apiVersion"))
    volcano = api_version.startswith(("batch.volcano.sh/", "scheduling.volcano.sh/"))
    qualify = kind in ("Job", "PodGroup", "Queue", "Command") and api_version and not volcano
    return {
        "kind": kind,
        "name": as_str(ref.get("name")),
        "apiVersion": api_version,
        "kind_label": f"{kind} ({api_version})" if qualify else kind,
    }


def min_resources(pg: Mapping) -> list[tuple[str, str]]:
    res = as_dict(spec_of(pg).get("minResources"))
    return [
        (as_str(k), format_quantity(as_str(k), quantity(v), v))
        for k, v in sorted(res.items(), key=lambda kv: resource_sort_key(as_str(kv[0])))
    ]


# --- Queues -----------------------------------------------------------------------------------


def queue_parent(queue: Mapping) -> str:
    return as_str(spec_of(queue).get("parent"))


def phase_counts(objs: Iterable[Mapping], phase_fn) -> Counter:
    return Counter(phase_fn(o) for o in objs)


def podgroup_phase_name(pg: Mapping) -> str:
    status = pg.get("status")
    if isinstance(status, dict):
        phase = status.get("phase")
        return phase if isinstance(phase, str) else as_str(phase)
    return ""


# Indentation classes exist for depths 0..TREE_INDENT_MAX (static/dashboard/app.css ".depth-N"; the
# CSP forbids inline styles, so an indent cannot be computed per row). Rows at or below the cap
# show their depth as a number instead, so a 60-deep chain still reads in order.
TREE_INDENT_MAX = 8


@dataclass
class TreeRow:
    """One queue in the tree. ``parent`` is the effective parent: spec.parent, or "root" when empty
    and a root Queue exists (the queue controller patches it so, REFERENCE.md §3). ``problem`` is
    "" or why the queue hangs outside the real tree: "missing_parent" (spec.parent names no Queue),
    "self_parent" or "cycle" (``cycle``: the parent chain from this queue back to it, e.g.
    ("cyc-a", "cyc-b", "cyc-a")). Volcano's webhook rejects all three; the API may still hold them."""

    queue: dict
    depth: int
    has_children: bool
    parent: str = ""
    problem: str = ""
    cycle: tuple[str, ...] = ()

    @property
    def indent(self) -> int:
        """The CSS indent level, 0..TREE_INDENT_MAX."""
        return min(self.depth, TREE_INDENT_MAX)

    @property
    def deep(self) -> bool:
        """True when the indent alone cannot show the depth (the row shows it as a number)."""
        return self.depth >= TREE_INDENT_MAX

    @property
    def problem_key(self) -> tuple:
        """What the row's hint depends on, for render caches."""
        return (self.problem, self.parent, self.cycle)


def effective_parent(queue: Mapping, names: Container[str]) -> str:
    """spec.parent; an empty parent means "root" when a root Queue exists (REFERENCE.md §3)."""
    parent = queue_parent(queue)
    if not parent and name_of(queue) != "root" and "root" in names:
        return "root"
    return parent


def queue_tree(queues: list[dict]) -> list[TreeRow]:
    """Queues in depth-first order by spec.parent (REFERENCE.md §3), siblings by name.

    The real tree (queues with no parent, normally just ``root``) comes first; then, each as a
    top-level row of its own and in name order, the queues that cannot hang in it: a missing parent,
    their own parent, or the first (by name) member of a parent cycle, each with its descendants.
    Every queue appears exactly once."""
    by_name = {name_of(q): q for q in queues}
    parent_of = {n: effective_parent(q, by_name) for n, q in by_name.items()}
    children: dict[str, list[dict]] = {}
    roots: list[dict] = []
    problems: dict[str, tuple[str, tuple[str, ...]]] = {}
    for n, q in by_name.items():
        parent = parent_of[n]
        if not parent:
            roots.append(q)
        elif parent == n:
            problems[n] = ("self_parent", ())
        elif parent not in by_name:
            problems[n] = ("missing_parent", ())
        else:
            children.setdefault(parent, []).append(q)

    # Parent cycles: follow each queue's parent chain until it ends (no parent, missing, itself) or
    # reaches a queue already resolved; reaching a queue on the current chain closes a cycle.
    resolved: set[str] = set()
    for start in sorted(by_name):
        chain: list[str] = []
        on_chain: dict[str, int] = {}
        n = start
        while n in by_name and n not in resolved and n not in on_chain and n not in problems:
            on_chain[n] = len(chain)
            chain.append(n)
            parent = parent_of[n]
            if not parent or parent == n:
                break
            n = parent
        if n in on_chain and parent_of[n] != n and parent_of[n]:
            members = chain[on_chain[n] :]
            for i, m in enumerate(members):
                loop = members[i:] + members[:i]
                problems[m] = ("cycle", (*loop, m))
        resolved.update(chain)

    detached = [by_name[n] for n, (kind, _c) in problems.items() if kind != "cycle"]
    cycles: dict[tuple[str, ...], str] = {}
    for n, (kind, loop) in problems.items():
        if kind == "cycle":
            key = tuple(sorted(loop[:-1]))
            cycles[key] = min(cycles.get(key, n), n)
    detached += [by_name[n] for n in cycles.values()]

    rows: list[TreeRow] = []
    seen: set[str] = set()

    def walk(top: dict) -> None:
        # An explicit stack, not recursion: a chain of queues may be deeper than Python's
        # recursion limit (spec.parent admits any depth). Children are pushed in reverse name
        # order so they pop in name order, giving the same depth-first order as recursion.
        stack = [(top, 0)]
        while stack:
            q, depth = stack.pop()
            n = name_of(q)
            if n in seen:
                continue
            seen.add(n)
            kids = sorted((k for k in children.get(n, []) if name_of(k) not in seen), key=name_of)
            kind, loop = problems.get(n, ("", ()))
            rows.append(TreeRow(q, depth, bool(kids), parent_of[n], kind, loop))
            stack.extend((kid, depth + 1) for kid in reversed(kids))

    for q in sorted(roots, key=name_of):
        walk(q)
    for q in sorted(detached, key=name_of):
        walk(q)
    for q in sorted(queues, key=name_of):  # defensive: nothing should be left
        if name_of(q) not in seen:
            walk(q)
    return rows


# --- events -------------------------------------------------------------------------------------


def event_last(ev: Mapping) -> datetime | None:
    """When an Event was last seen: lastTimestamp, series.lastObservedTime, eventTime, firstTimestamp,
    then metadata.creationTimestamp (events.k8s.io-style events carry only eventTime/series)."""
    return (
        parse_time(ev.get("lastTimestamp"))
        or parse_time(as_dict(ev.get("series")).get("lastObservedTime"))
        or parse_time(ev.get("eventTime"))
        or parse_time(ev.get("firstTimestamp"))
        or created_at(ev)
    )


def event_first(ev: Mapping) -> datetime | None:
    return parse_time(ev.get("firstTimestamp")) or parse_time(ev.get("eventTime")) or event_last(ev)


def event_count(ev: Mapping) -> int:
    return max(1, to_int(ev.get("count")) or to_int(as_dict(ev.get("series")).get("count")))


@dataclass
class EventRow:
    type: str
    reason: str
    message: str
    object_kind: str
    object_name: str
    object_namespace: str
    count: int
    first: datetime | None
    last: datetime | None
    source: str
    # Set by views (``absent_hint``) when the involved object is not in the cache: shown unlinked.
    object_missing: str = ""

    @property
    def warning(self) -> bool:
        return self.type == "Warning"


def event_row(ev: Mapping) -> EventRow:
    inv = as_dict(ev.get("involvedObject")) or as_dict(ev.get("regarding"))
    src = as_dict(ev.get("source"))
    return EventRow(
        type=as_str(ev.get("type")) or "Normal",
        reason=as_str(ev.get("reason")),
        message=as_str(ev.get("message")) or as_str(ev.get("note")),
        object_kind=as_str(inv.get("kind")),
        object_name=as_str(inv.get("name")),
        object_namespace=as_str(inv.get("namespace")) or namespace_of(ev),
        count=event_count(ev),
        first=event_first(ev),
        last=event_last(ev),
        source=as_str(src.get("component"))
        or as_str(ev.get("reportingComponent"))
        or as_str(ev.get("reportingController")),
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def event_rows(events: Iterable[Mapping], limit: int | None = None) -> list[EventRow]:
    rows = [event_row(e) for e in events]
    rows.sort(key=lambda r: (r.last or _EPOCH, r.first or _EPOCH), reverse=True)
    return rows[:limit] if limit else rows


def latest_per_object(rows: Iterable[EventRow], limit: int, *, by_message: bool = False) -> list[EventRow]:
    """One row per (object, reason) with the newest message and the summed count, newest first:
    the overview's "recent warnings" without the scheduler's every-session repeats. With
    ``by_message`` one row per (object, reason, message), as ``kubectl describe`` lists them: a
    detail page must not hide "insufficient cpu" behind a newer "insufficient nvidia.com/gpu"."""
    merged: dict[tuple[str, ...], EventRow] = {}
    for r in sorted(rows, key=lambda r: r.last or _EPOCH, reverse=True):
        key = (r.object_kind, r.object_namespace, r.object_name, r.reason)
        if by_message:
            key += (r.message,)
        m = merged.get(key)
        if m is None:
            merged[key] = EventRow(**{**r.__dict__})
        else:
            m.count += r.count
            if r.first and (m.first is None or r.first < m.first):
                m.first = r.first
    return list(merged.values())[:limit]


def compact_bars(
    bars: list[ResourceBar], names: tuple[str, ...] = ("cpu", "memory", "nvidia.com/gpu")
) -> list:
    """The bars for ``names`` in that order, None where the queue has no such resource (table cells)."""
    by_name = {b.name: b for b in bars}
    return [by_name.get(n) for n in names]


# --- why is it pending ----------------------------------------------------------------------


@dataclass
class Finding:
    """One plain-words reason, ``level`` in info/warn/bad; ``verbatim`` is a message quoted as the
    cluster wrote it; ``link`` an optional (url name, args) pair."""

    level: str
    text: str
    verbatim: str = ""
    items: list[str] = field(default_factory=list)
    # PodGroups (namespace, name) the finding names as links under ``podgroups_label``, and how
    # many more there are beyond them.
    podgroups: list[tuple[str, str]] = field(default_factory=list)
    podgroups_label: str = ""
    podgroups_more: int = 0


# Quota-style keys of PodGroup.spec.minResources (REFERENCE.md §4) mapped to Queue resource names.
def _queue_resource(key: str) -> str | None:
    if key in ("pods", "count/pods") or key.startswith(("limits.", "count/")):
        return None
    return key[len("requests.") :] if key.startswith("requests.") else key


def min_resource_needs(pg: Mapping | None) -> dict[str, Decimal]:
    """The PodGroup's spec.minResources by Queue resource name (derive.podgroup_min_resources:
    quota keys mapped, REFERENCE.md §4: ``requests.cpu`` and ``cpu`` are the same need;
    ``limits.*``/``count/*``/``pods`` skipped). Values that are no usable amount are left out."""
    return derive.podgroup_min_resources(pg) if pg else {}


def exact_quantity(resource: str, value: Decimal) -> str:
    """``value`` unrounded, for when format_quantity's rounding would hide a difference: cpu in
    millicores ("499m", "1000.5m"), memory and storage in bytes ("536,869,912 bytes"), others as the
    plain decimal number."""
    if resource == "cpu" or resource.endswith(".cpu"):
        return f"{_plain_decimal(value * 1000)}m"
    if "memory" in resource or "storage" in resource:
        return ngettext("%(n)s byte", "%(n)s bytes", int(value)) % {"n": intcomma(_plain_decimal(value))}
    return _plain_decimal(value)


def _plain_decimal(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass
class GangRoom:
    """The gang's room in its queue and the queue's ancestors (derive.queue_room).

    ``rows``: one per resource the PodGroup needs (spec.minResources) for its own queue, then one per
    ancestor that sets a capability on it; display strings ``need``, ``allocated``, ``reserved``,
    ``deserved`` (own queue only), ``capability``, ``left`` ("?" when a value is no usable amount,
    "" without a capability), plus ``resource``, ``queue``, ``depth`` (0 own, 1 parent, ...),
    ``reservers`` [(namespace, name)] of the Inqueue PodGroups holding ``reserved``, ``short`` (the
    need exceeds what is left there), ``binding`` (the row that limits the resource most) and
    ``over_deserved``. ``read``: the Queues and PodGroups the numbers come from beyond the queue and
    its ancestors (child queues, Inqueue PodGroups), for the pages' version keys."""

    rows: list[dict] = field(default_factory=list)
    read: list[Mapping] = field(default_factory=list)


def gang_room(
    queue: Mapping | None,
    pg: Mapping | None,
    *,
    queue_lookup: Callable[[str], Mapping | None] | None = None,
    queue_children: Callable[[str], Iterable[Mapping]] | None = None,
    inqueue_podgroups: Callable[[str], Iterable[Mapping]] | None = None,
) -> GangRoom:
    """What is left for the gang under the capability of its queue and of each ancestor, as the
    scheduler's enqueue decides it (derive.queue_room: capability − allocated − minResources
    reserved by other Inqueue PodGroups; REFERENCE.md §2, §3). ``queue_lookup`` finds the
    ancestors (none without it), ``queue_children(name)`` a queue's child queues,
    ``inqueue_podgroups(name)`` the Inqueue PodGroups of a queue (nothing reserved without it).
    A capability or allocated value that is no usable amount is shown verbatim as invalid, with
    "?" left and never ``short``."""
    if not queue or not pg:
        return GangRoom()
    read: list[Mapping] = []

    def children(name: str) -> list[Mapping]:
        found = list(queue_children(name)) if queue_children is not None else []
        read.extend(found)
        return found

    def inqueue(name: str) -> list[Mapping]:
        found = list(inqueue_podgroups(name)) if inqueue_podgroups is not None else []
        read.extend(found)
        return found

    chain = derive.queue_ancestry(queue, queue_lookup)
    needs = min_resource_needs(pg)
    own_key = (namespace_of(pg), name_of(pg))
    rooms = derive.queue_room(
        needs,
        chain,
        children=children if queue_children is not None else None,
        inqueue=inqueue if inqueue_podgroups is not None else None,
        exclude=own_key,
    )
    spec = spec_of(queue)
    alloc = as_dict(status_of(queue).get("allocated"))
    des = as_dict(spec.get("deserved"))
    rows: list[dict] = []
    for res in sorted(needs, key=resource_sort_key):
        need = needs[res]
        d = amount_text(res, des.get(res))[0] if res in des else None
        by_queue = {r.depth: r for r in rooms[res]}
        binding = derive.binding_room(rooms[res])
        own_alloc = alloc.get(res) if res in alloc else None
        levels = [by_queue.get(0)] + [r for r in rooms[res] if r.depth > 0]
        for room in levels:
            if room is None:  # the own queue sets no capability on it: "no limit" there
                if res in alloc:
                    a, a_text = amount_text(res, own_alloc)
                else:
                    a, a_text = Decimal(0), format_quantity(res, Decimal(0))
                row = _room_row(res, need, name_of(queue), 0, None, "", a, a_text, Decimal(0), ())
            else:
                raw_cap = as_dict(spec_of(chain[room.depth]).get("capability")).get(res)
                raw_alloc = as_dict(status_of(chain[room.depth]).get("allocated")).get(res)
                a_text = (
                    amount_text(res, raw_alloc)[1]
                    if raw_alloc is not None
                    else format_quantity(res, room.allocated if room.allocated is not None else Decimal(0))
                )
                c_text = amount_text(res, raw_cap)[1]
                row = _room_row(
                    res,
                    need,
                    room.queue,
                    room.depth,
                    room.capability,
                    c_text,
                    room.allocated,
                    a_text,
                    room.reserved,
                    room.reservers,
                )
                row["binding"] = room is binding
            if row["depth"] == 0:
                row["deserved"] = amount_text(res, des.get(res))[1] if res in des else ""
                a = row.pop("_alloc")
                row["over_deserved"] = d is not None and a is not None and a + need > d
            else:
                row.pop("_alloc")
                row["deserved"] = ""
                row["over_deserved"] = False
            rows.append(row)
    return GangRoom(rows=rows, read=read)


def _room_row(
    res: str,
    need: Decimal,
    queue: str,
    depth: int,
    c: Decimal | None,
    c_text: str,
    a: Decimal | None,
    a_text: str,
    reserved: Decimal,
    reservers: tuple[tuple[str, str], ...],
) -> dict:
    unknown = (bool(c_text) and c is None) or a is None
    left = (c - a - reserved) if c is not None and a is not None else None
    if unknown:
        left_text = "?"
    else:
        left_text = format_quantity(res, max(left, Decimal(0))) if left is not None else ""
    need_text = format_quantity(res, need)
    if left is not None and need > left and left_text == need_text:
        # Rounded alike although the gang needs more ("needs 512Mi, 512Mi left"): both exactly.
        need_text, left_text = exact_quantity(res, need), exact_quantity(res, max(left, Decimal(0)))
    return {
        "resource": res,
        "queue": queue,
        "depth": depth,
        "need": need_text,
        "allocated": a_text,
        "reserved": format_quantity(res, reserved) if reservers else "",
        "reservers": list(reservers),
        "capability": c_text,
        "left": left_text,
        "short": left is not None and need > left,
        "binding": False,
        "_alloc": a,
    }


# --- "does not exist" claims ----------------------------------------------------------------------


def unreadable_reason(state: Any) -> str:
    """Why the cache cannot say whether an object of a kind exists: "" when it can (the kind is
    synced, or stale with data), else a short reason ("forbidden", "not installed", "still loading",
    "cluster unreachable"). ``state`` is a cache ``KindState`` (or None). Every "does not exist" /
    "none" claim about an object checks its kind here first: absence from a kind the cache cannot
    read proves nothing."""
    name = getattr(state, "name", "synced") if state is not None else "synced"
    has_data = getattr(state, "synced_at", None) is not None
    if name == "forbidden":
        return _("forbidden")
    if name == "not_installed":
        return _("not installed")
    if name == "syncing" and not has_data:
        return _("still loading")
    if name == "unreachable" and not has_data:
        return _("cluster unreachable")
    return ""


def absent_hint(obj: Mapping | None, state: Any) -> str:
    """ "" when ``obj`` is in the cache (link to it); else the hint shown beside its unlinked name:
    "(not found)" when the kind is readable, "(cannot be read: <reason>)" when it is not
    (``unreadable_reason``). A link to an object the cache does not hold would lead to a 404."""
    if obj is not None:
        return ""
    why = unreadable_reason(state)
    if why:
        return _("(cannot be read: %(why)s)") % {"why": why}
    return _("(not found)")


def queue_ancestors(queue: Mapping | None, lookup: Callable[[str], Mapping | None]) -> list[dict]:
    """The ancestors of ``queue`` (parent first) that ``lookup`` finds (derive.queue_ancestry):
    their capability bounds the queue's, so pages that judge a gang against it follow them."""
    return derive.queue_ancestry(queue, lookup)[1:] if queue else []


def _owned_by_volcano_job(pg: Mapping) -> bool:
    refs = [as_dict(r) for r in as_list(meta(pg).get("ownerReferences"))]
    return any(
        r.get("kind") == "Job" and as_str(r.get("apiVersion")).startswith("batch.volcano.sh/") for r in refs
    )


def never_start(
    job: Mapping | None,
    pg: Mapping | None,
    queue: Mapping | None,
    pods: list[Mapping],
    *,
    owner_job: Mapping | None = None,
    queue_lookup: Callable[[str], Mapping | None] | None = None,
) -> tuple[list[Finding], set[str]]:
    """Findings for a gang that can never be satisfied as it is, and the resources whose need
    exceeds a capability (so the headroom finding leaves them out).

    - a Volcano Job's minAvailable above Σ tasks[].replicas (REFERENCE.md §1: the admission webhook
      rejects this, so such a Job exists only when the webhook was off);
    - a PodGroup's minMember above the pods that can exist: the Job's replicas for a Volcano Job;
      for other workloads (§4) the pods that exist, since their owner's replicas are not cached;
    - the gang's minimum resources (PodGroup.spec.minResources, or the sum over the Job's first
      minAvailable pods when there is no PodGroup) above the capability of the queue or of an
      ancestor (§3: capability is a hard limit, children's ≤ ancestors').
    """
    out: list[Finding] = []
    vcjob = job if job is not None else owner_job
    min_av = job_min_available(vcjob) if vcjob is not None else 0
    if vcjob is not None and job_tasks(vcjob):
        total = derive.job_total_replicas(vcjob)
        if min_av > total:
            out.append(
                Finding(
                    "bad",
                    ngettext(
                        "This will never start: minAvailable (%(min)d) is more than the Job's "
                        "%(total)d replica in all tasks, so the gang can never be complete. "
                        "(Volcano's admission webhook rejects such a Job; it exists only if the "
                        "webhook was off.)",
                        "This will never start: minAvailable (%(min)d) is more than the Job's "
                        "%(total)d replicas in all tasks, so the gang can never be complete. "
                        "(Volcano's admission webhook rejects such a Job; it exists only if the "
                        "webhook was off.)",
                        total,
                    )
                    % {"min": min_av, "total": total},
                )
            )
        min_member = to_int(spec_of(pg).get("minMember")) if pg is not None else 0
        if pg is not None and min_member > total and min_member != min_av:
            out.append(
                Finding(
                    "bad",
                    ngettext(
                        "This will never start: the PodGroup's minMember (%(min)d) is more than the "
                        "Job's %(total)d replica in all tasks, so the gang can never be complete.",
                        "This will never start: the PodGroup's minMember (%(min)d) is more than the "
                        "Job's %(total)d replicas in all tasks, so the gang can never be complete.",
                        total,
                    )
                    % {"min": min_member, "total": total},
                )
            )
    elif pg is not None and vcjob is None and pods and not _owned_by_volcano_job(pg):
        min_member = to_int(spec_of(pg).get("minMember"))
        if min_member > len(pods):
            out.append(
                Finding(
                    "bad",
                    ngettext(
                        "This will never start as it is: the PodGroup's minMember (%(min)d) is more "
                        "than the %(n)d pod that exists for it, so the gang can never be complete "
                        "unless its owner creates more pods.",
                        "This will never start as it is: the PodGroup's minMember (%(min)d) is more "
                        "than the %(n)d pods that exist for it, so the gang can never be complete "
                        "unless its owner creates more pods.",
                        len(pods),
                    )
                    % {"min": min_member, "n": len(pods)},
                )
            )
    needs = min_resource_needs(pg)
    if not needs and vcjob is not None:
        needs = {
            res: q
            for key, q in derive.job_min_resources(vcjob, min_av).items()
            if (res := _queue_resource(key)) is not None
        }
    limits = derive.capability_limits(needs, derive.queue_ancestry(queue, queue_lookup)) if queue else []
    if limits:
        qname = name_of(queue)
        items = []
        for lim in sorted(limits, key=lambda x: resource_sort_key(x.resource)):
            values = {
                "res": lim.resource,
                "need": format_quantity(lim.resource, lim.need),
                "cap": format_quantity(lim.resource, lim.capability),
                "queue": lim.queue,
            }
            if lim.queue == qname:
                items.append(_("%(res)s: needs %(need)s, capability %(cap)s") % values)
            else:
                items.append(
                    _("%(res)s: needs %(need)s, capability %(cap)s (set on ancestor queue “%(queue)s”)")
                    % values
                )
        out.append(
            Finding(
                "bad",
                _(
                    "This will never start: the gang's minimum resources exceed the capability of "
                    "queue “%(queue)s” (a hard limit), so it can never be admitted unless the "
                    "capability is raised:"
                )
                % {"queue": qname},
                items=items,
            )
        )
    return out, {lim.resource for lim in limits}


# PodGroups a "no room" finding links to by name; the rest are counted ("+ 3 more").
NO_ROOM_PODGROUP_LINKS = 3


def _no_room_findings(room: GangRoom, queue_name: str, impossible: set[str]) -> list[Finding]:
    """One "bad" finding per queue that limits at least one resource the gang lacks room for (the
    binding row of ``room``, see GangRoom), the gang's own queue first, then its ancestors."""
    by_queue: dict[tuple[int, str], list[dict]] = {}
    for row in room.rows:
        if row["binding"] and row["short"] and row["resource"] not in impossible:
            by_queue.setdefault((row["depth"], row["queue"]), []).append(row)
    out = []
    for (depth, qname), rows in sorted(by_queue.items()):
        items = []
        holders: dict[tuple[str, str], None] = {}
        for r in rows:
            values = {
                "res": r["resource"],
                "need": r["need"],
                "left": r["left"],
                "cap": r["capability"],
                "alloc": r["allocated"],
                "reserved": r["reserved"],
                "n": len(r["reservers"]),
            }
            if r["reservers"]:
                items.append(
                    ngettext(
                        "%(res)s: needs %(need)s, %(left)s left (capability %(cap)s, allocated "
                        "%(alloc)s, reserved %(reserved)s by %(n)d Inqueue PodGroup)",
                        "%(res)s: needs %(need)s, %(left)s left (capability %(cap)s, allocated "
                        "%(alloc)s, reserved %(reserved)s by %(n)d Inqueue PodGroups)",
                        len(r["reservers"]),
                    )
                    % values
                )
            else:
                items.append(
                    _("%(res)s: needs %(need)s, %(left)s left (capability %(cap)s, allocated %(alloc)s)")
                    % values
                )
            holders.update(dict.fromkeys(tuple(k) for k in r["reservers"]))
        if depth == 0:
            text = _("No room in queue “%(queue)s” for the gang's minimum resources:") % {"queue": qname}
        elif depth == 1:
            text = _(
                "No room in parent queue “%(queue)s” (its capability covers “%(own)s” and every "
                "other queue below it) for the gang's minimum resources:"
            ) % {"queue": qname, "own": queue_name}
        else:
            text = _(
                "No room in ancestor queue “%(queue)s” (its capability covers “%(own)s” and every "
                "other queue below it) for the gang's minimum resources:"
            ) % {"queue": qname, "own": queue_name}
        names = list(holders)
        out.append(
            Finding(
                "bad",
                text,
                items=items,
                podgroups=names[:NO_ROOM_PODGROUP_LINKS],
                podgroups_label=ngettext(
                    "Reserved by the Inqueue PodGroup:", "Reserved by the Inqueue PodGroups:", len(names)
                )
                if names
                else "",
                podgroups_more=max(0, len(names) - NO_ROOM_PODGROUP_LINKS),
            )
        )
    return out


def why_pending(
    job: Mapping | None,
    pg: Mapping | None,
    queue: Mapping | None,
    queue_name: str,
    pods: list[Mapping],
    *,
    pg_state: Any = None,
    queue_state: Any = None,
    owner_job: Mapping | None = None,
    queue_lookup: Callable[[str], Mapping | None] | None = None,
    queue_children: Callable[[str], Iterable[Mapping]] | None = None,
    inqueue_podgroups: Callable[[str], Iterable[Mapping]] | None = None,
    room: GangRoom | None = None,
) -> list[Finding]:
    """Plain-words reasons why a Job (or a PodGroup) is not running yet, most decisive first.

    ``pg_state``/``queue_state`` are the cache KindStates of PodGroups/Queues: when a kind cannot
    be read (``unreadable_reason``) a missing object is reported as unreadable, never as absent.

    Inputs follow REFERENCE.md: a Job whose PodGroup is Pending has no pods (§1); a PodGroup is
    Pending until the queue admits it and Inqueue until the gang fits (§2); Jobs can only be
    admitted to Open queues (§3); the scheduler's Unschedulable condition message is quoted verbatim.

    Gangs that can never be satisfied come first (``never_start``): ``owner_job`` is the Volcano Job
    owning ``pg`` when ``job`` is None (the PodGroup's page), ``queue_lookup(name)`` finds the
    queue's ancestors for their capability.

    "No room" findings name the queue that limits each resource, the gang's own or an ancestor, with
    its capability, allocated and the minResources reserved by Inqueue PodGroups (``gang_room``;
    ``queue_children``/``inqueue_podgroups`` as there, or ``room`` when the caller has it already).
    """
    never, impossible = never_start(job, pg, queue, pods, owner_job=owner_job, queue_lookup=queue_lookup)
    findings: list[Finding] = list(never)
    if job is not None and not status_of(job):
        findings.append(
            Finding(
                "info", _("The Volcano job controller has not processed this Job yet (it has no status).")
            )
        )
    pg_unreadable = unreadable_reason(pg_state)
    queue_unreadable = unreadable_reason(queue_state)
    if pg is None and job is not None and pg_unreadable:
        findings.append(
            Finding(
                "info",
                _("PodGroups cannot be read (%(why)s), so the Job's PodGroup cannot be checked.")
                % {"why": pg_unreadable},
            )
        )
    elif pg is None and job is not None:
        findings.append(
            Finding(
                "warn",
                _(
                    "No PodGroup exists for this Job yet. The job controller creates "
                    "one before any pod; until then the scheduler cannot consider it."
                ),
            )
        )
    elif pg is not None:
        phase = podgroup_phase_name(pg)
        cond = unschedulable_condition(pg)
        verbatim = as_str(cond.get("message")) if cond else ""
        if not phase:
            findings.append(
                Finding("info", _("The scheduler has not looked at the PodGroup yet (no status)."))
            )
        elif phase == "Pending" and pods and job is None:
            # A Deployment's, StatefulSet's, batch/v1 Job's or bare pod's PodGroup: the pods exist
            # already, the scheduler just does not place them (REFERENCE.md §2, §4 "Other workloads").
            findings.append(
                Finding(
                    "warn",
                    _(
                        "The PodGroup is Pending: queue “%(queue)s” has not admitted it yet, "
                        "so the scheduler does not place its pods."
                    )
                    % {"queue": queue_name},
                    verbatim,
                )
            )
        elif phase == "Pending":
            findings.append(
                Finding(
                    "warn",
                    _(
                        "The PodGroup is Pending: queue “%(queue)s” has not admitted it yet, "
                        "so no pods are created."
                    )
                    % {"queue": queue_name},
                    verbatim,
                )
            )
        elif phase == "Inqueue":
            gang_size = max(0, to_int(spec_of(pg).get("minMember")))  # a negative minMember counts as 0
            findings.append(
                Finding(
                    "warn",
                    (
                        ngettext(
                            "The PodGroup was admitted (Inqueue), but the scheduler cannot "
                            "place the whole gang of %(min)d pod.",
                            "The PodGroup was admitted (Inqueue), but the scheduler cannot "
                            "place the whole gang of %(min)d pods.",
                            gang_size,
                        )
                        if never
                        else ngettext(
                            "The PodGroup was admitted (Inqueue), but the scheduler cannot yet "
                            "place the whole gang of %(min)d pod.",
                            "The PodGroup was admitted (Inqueue), but the scheduler cannot yet "
                            "place the whole gang of %(min)d pods.",
                            gang_size,
                        )
                    )
                    % {"min": gang_size},
                    verbatim,
                )
            )
        elif phase == "Unknown":
            findings.append(
                Finding(
                    "bad",
                    _(
                        "Some pods are running but the gang was found unschedulable "
                        "in the latest scheduling session."
                    ),
                    verbatim,
                )
            )
        elif verbatim:
            findings.append(Finding("warn", _("The scheduler reports the gang as unschedulable."), verbatim))
    if queue_name:
        if queue is None and queue_unreadable:
            findings.append(
                Finding(
                    "info",
                    _("Queue “%(queue)s” cannot be checked: Queues cannot be read (%(why)s).")
                    % {"queue": queue_name, "why": queue_unreadable},
                )
            )
        elif queue is None:
            findings.append(
                Finding(
                    "bad", _("Queue “%(queue)s” does not exist (or is not visible).") % {"queue": queue_name}
                )
            )
        else:
            state = as_str(status_of(queue).get("state"))
            if state and state != "Open":
                findings.append(
                    Finding(
                        "bad",
                        _("Queue “%(queue)s” is %(state)s: it admits no new work.")
                        % {"queue": queue_name, "state": state},
                    )
                )
            # A resource above the capability itself is a "never" finding above, not a lack of room.
            if room is None:
                room = gang_room(
                    queue,
                    pg,
                    queue_lookup=queue_lookup,
                    queue_children=queue_children,
                    inqueue_podgroups=inqueue_podgroups,
                )
            findings.extend(_no_room_findings(room, queue_name, impossible))
    blockers: list[str] = []
    for pod in pods:
        for text in pod_blockers(pod):
            line = f"{name_of(pod)}: {text}"
            if text not in {b.split(": ", 1)[-1] for b in blockers}:
                blockers.append(line)
    if blockers:
        findings.append(
            Finding(
                "warn",
                ngettext("%(n)d pod reports a problem:", "%(n)d pods report problems:", len(blockers))
                % {"n": len(blockers)},
                items=blockers[:10],
            )
        )
    # Most decisive first: after the "never" findings, what blocks outright (a closed or missing
    # queue, no room under its capability) before the phase it leaves the PodGroup in ("Pending:
    # not admitted yet" is the symptom; the closed queue is the cause). Stable otherwise.
    rest = findings[len(never) :]
    return (
        findings[: len(never)] + [f for f in rest if f.level == "bad"] + [f for f in rest if f.level != "bad"]
    )


# --- filtering, sorting, paging of the Job list -----------------------------------------------


class SelectorError(ValueError):
    """A label selector that does not parse; the message says where."""


_SEL_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|[^\s!=,()]+)")


# Kubernetes label syntax (apimachinery validation: IsQualifiedName, IsValidLabelValue): a name is
# at most 63 characters of alphanumerics, "-", "_", "." beginning and ending alphanumeric; a key
# may carry a DNS-subdomain prefix ("example.com/") of at most 253 characters.
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _label_key(key: str) -> str:
    prefix, _sep, name = key.rpartition("/")
    if not _LABEL_NAME.fullmatch(name) or (
        _sep and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix))
    ):
        raise SelectorError(_("“%(key)s” is not a valid label key") % {"key": key})
    return key


def _label_value(value: str) -> str:
    if value and not _LABEL_NAME.fullmatch(value):
        raise SelectorError(_("“%(value)s” is not a valid label value") % {"value": value})
    return value


def parse_selector(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """Parse a Kubernetes label selector ("team=ml,env!=dev,tier in (a,b),!legacy,owner") into
    (key, op, values) requirements with op in {"=", "!=", "in", "notin", "exists", "!exists"}.
    Raises SelectorError on bad syntax."""
    tokens = [t for t in _SEL_TOKEN.findall(text) if t.strip()]
    reqs = []
    i = 0

    def take() -> str:
        nonlocal i
        if i >= len(tokens):
            raise SelectorError(_("unexpected end of selector"))
        i += 1
        return tokens[i - 1]

    def value() -> str:
        # "a=" (and "a=,b") selects an empty value, as in Kubernetes.
        if i >= len(tokens) or tokens[i] == ",":
            return ""
        return _label_value(take())

    while i < len(tokens):
        tok = take()
        if tok == "!":
            key = _label_key(take())
            reqs.append((key, "!exists", frozenset()))
        else:
            key = tok
            if key in (",", "(", ")", "=", "==", "!="):
                raise SelectorError(_("unexpected “%(tok)s”") % {"tok": key})
            key = _label_key(key)
            nxt = tokens[i] if i < len(tokens) else ","
            if nxt in ("=", "=="):
                take()
                reqs.append((key, "=", frozenset([value()])))
            elif nxt == "!=":
                take()
                reqs.append((key, "!=", frozenset([value()])))
            elif nxt in ("in", "notin"):
                op = take()
                if take() != "(":
                    raise SelectorError(_("expected “(” after %(op)s") % {"op": op})
                values = []
                while True:
                    t = take()
                    if t == ")":
                        break
                    if t != ",":
                        values.append(_label_value(t))
                if not values:
                    raise SelectorError(_("%(op)s needs at least one value in its parentheses") % {"op": op})
                reqs.append((key, op, frozenset(values)))
            else:
                reqs.append((key, "exists", frozenset()))
        if i < len(tokens) and take() != ",":
            raise SelectorError(_("expected “,” between requirements"))
    return reqs


def selector_matches(labels: Mapping[str, str], reqs: list[tuple[str, str, frozenset[str]]]) -> bool:
    for key, op, values in reqs:
        present = key in labels
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
        if op in ("=", "in") and (not present or labels[key] not in values):
            return False
        if op in ("!=", "notin") and present and labels[key] in values:
            return False
    return True


def version_key(*parts: Any) -> str:
    """A short stable digest of ``parts`` used as a fragment's ``?v=`` version."""
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()


def resource_versions(objs: Iterable[Mapping | None]) -> tuple[str, ...]:
    return tuple(
        f"{namespace_of(o)}/{name_of(o)}@{as_str(meta(o).get('resourceVersion'))}" if o else "-" for o in objs
    )
