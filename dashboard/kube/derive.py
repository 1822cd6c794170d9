"""Derived values the pages show: small pure functions on plain dicts (no I/O, no Django).

Every function accepts any object the CRD schema admits — missing ``status``, unknown phases, null
timestamps, odd or garbage quantities — and never raises on them: unreadable values are reported
in the result (e.g. ``ResourceUsage.errors``), not trusted. Facts about fields and their meaning
cite shared/volcano/REFERENCE.md (§ numbers) and kubectl's printer (``printPod`` in
k8s.io/kubernetes pkg/printers/internalversion/printers.go) for the pod status column.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from kubernetes.utils import parse_quantity

# -- small readers ---------------------------------------------------------------------------


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list:
    return value if isinstance(value, list) else []


def count(value: Any) -> int:
    """A status counter: Volcano omits zero counters (REFERENCE.md intro), so missing -> 0.
    Negative, non-integer or garbage values also read as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return max(int(value), 0)
    if isinstance(value, str):
        try:
            return max(int(value.strip()), 0)
        except ValueError:
            return 0
    return 0


def parse_time(value: Any) -> datetime | None:
    """Parse an RFC 3339 timestamp ("2026-08-20T10:00:05Z", with fraction or offset) to an aware
    UTC datetime; None for null, empty or unparseable values and for times before 1971 (Go's
    zero time "0001-01-01T00:00:00Z" is what an unset metav1.Time may marshal to)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    parsed = parsed.astimezone(UTC)
    # Go's zero time ("0001-01-01T00:00:00Z") and other pre-1971 placeholders mean "not set".
    return parsed if parsed.year >= 1971 else None


def meta(obj: Any) -> dict:
    return _d(_d(obj).get("metadata"))


def phase_of(obj: Any) -> str:
    """Job: status.state.phase; PodGroup/Pod: status.phase; Queue: status.state. "" when absent."""
    status = _d(_d(obj).get("status"))
    state = status.get("state")
    if isinstance(state, dict):
        value = state.get("phase")
    elif isinstance(state, str):
        value = state
    else:
        value = status.get("phase")
    return value if isinstance(value, str) else ""


# -- gang progress ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskProgress:
    """One task of a gang: ``ready`` = Running + Succeeded pods, ``required`` = its minAvailable
    (Job task) or minTaskMember (PodGroup), ``replicas`` (None when unknown), ``phases`` = pod
    counts per pod phase (Job status.taskStatusCount, REFERENCE.md §1)."""

    name: str
    ready: int
    required: int
    replicas: int | None
    phases: dict[str, int]

    @property
    def satisfied(self) -> bool:
        return self.ready >= self.required


@dataclass(frozen=True)
class GangProgress:
    """Overall gang progress: ``ready`` (running + succeeded) vs ``required`` (minAvailable /
    minMember). ``percent`` is capped at 100 for bars; ``satisfied`` when ready >= required."""

    ready: int
    required: int
    running: int
    succeeded: int
    pending: int
    failed: int
    tasks: list[TaskProgress] = field(default_factory=list)

    @property
    def satisfied(self) -> bool:
        return self.ready >= self.required

    @property
    def percent(self) -> int:
        if self.required <= 0:
            return 100
        return min(100, int(self.ready * 100 / self.required))


def _task_phases(task_status: Any) -> dict[str, int]:
    phases = _d(_d(task_status).get("phase"))
    return {str(k): count(v) for k, v in phases.items()}


def job_gang_progress(job: Any) -> GangProgress:
    """Gang progress of a Volcano Job from status.running/succeeded vs minAvailable, per task from
    status.taskStatusCount[task].phase vs tasks[].minAvailable (default: replicas), REFERENCE.md §1.

    minAvailable: status.minAvailable (copied from spec at init), else spec.minAvailable, else the
    sum of the tasks' minAvailable."""
    job = _d(job)
    spec, status = _d(job.get("spec")), _d(job.get("status"))
    tasks = []
    required_sum = 0
    counts = _d(status.get("taskStatusCount"))
    seen = set()
    for task in _l(spec.get("tasks")):
        task = _d(task)
        name = str(task.get("name") or "")
        replicas = count(task.get("replicas")) if "replicas" in task else None
        min_av = task.get("minAvailable")
        required = count(min_av) if min_av is not None else (replicas or 0)
        phases = _task_phases(counts.get(name))
        seen.add(name)
        required_sum += required
        tasks.append(
            TaskProgress(
                name, phases.get("Running", 0) + phases.get("Succeeded", 0), required, replicas, phases
            )
        )
    for name, task_status in counts.items():  # tasks in status but not in spec (odd, keep them)
        if name not in seen:
            phases = _task_phases(task_status)
            tasks.append(
                TaskProgress(
                    str(name), phases.get("Running", 0) + phases.get("Succeeded", 0), 0, None, phases
                )
            )
    if status.get("minAvailable") is not None:
        required = count(status.get("minAvailable"))
    elif spec.get("minAvailable") is not None:
        required = count(spec.get("minAvailable"))
    else:
        required = required_sum
    running, succeeded = count(status.get("running")), count(status.get("succeeded"))
    return GangProgress(
        ready=running + succeeded,
        required=required,
        running=running,
        succeeded=succeeded,
        pending=count(status.get("pending")),
        failed=count(status.get("failed")),
        tasks=tasks,
    )


TASK_SPEC_KEY = "volcano.sh/task-spec"


def _pod_task(pod: Any) -> str:
    m = meta(pod)
    for source in (m.get("annotations"), m.get("labels")):
        value = _d(source).get(TASK_SPEC_KEY)
        if isinstance(value, str) and value:
            return value
    return ""


def podgroup_gang_progress(pg: Any, pods: Iterable[Any] = ()) -> GangProgress:
    """Gang progress of a PodGroup: status.running + succeeded vs spec.minMember (REFERENCE.md §2);
    per task spec.minTaskMember vs the given pods' phases grouped by ``volcano.sh/task-spec``."""
    pg = _d(pg)
    spec, status = _d(pg.get("spec")), _d(pg.get("status"))
    per_task: dict[str, Counter] = {}
    for pod in pods:
        task = _pod_task(pod)
        if task:
            per_task.setdefault(task, Counter())[phase_of(pod) or "Unknown"] += 1
    tasks = []
    names = list(_d(spec.get("minTaskMember"))) + [
        t for t in sorted(per_task) if t not in _d(spec.get("minTaskMember"))
    ]
    for name in names:
        phases = dict(per_task.get(name, Counter()))
        tasks.append(
            TaskProgress(
                str(name),
                phases.get("Running", 0) + phases.get("Succeeded", 0),
                count(_d(spec.get("minTaskMember")).get(name)),
                None,
                phases,
            )
        )
    running, succeeded = count(status.get("running")), count(status.get("succeeded"))
    return GangProgress(
        ready=running + succeeded,
        required=count(spec.get("minMember")),
        running=running,
        succeeded=succeeded,
        pending=0,
        failed=count(status.get("failed")),
        tasks=tasks,
    )


def gang_progress(obj: Any, pods: Iterable[Any] = ()) -> GangProgress:
    """Dispatch on ``kind``: a Job (batch.volcano.sh) or a PodGroup (anything else with minMember)."""
    if _d(obj).get("kind") == "Job" or "tasks" in _d(_d(obj).get("spec")):
        return job_gang_progress(obj)
    return podgroup_gang_progress(obj, pods)


# -- pod display status (kubectl get pods) ----------------------------------------------------


@dataclass(frozen=True)
class PodDisplay:
    """What ``kubectl get pods`` shows: ``status`` (STATUS column), ``ready``/``total`` (READY n/m),
    ``restarts`` (RESTARTS), ``last_restart`` (the "(2m ago)" part; None when unknown)."""

    status: str
    ready: int
    total: int
    restarts: int
    last_restart: datetime | None = None

    @property
    def ready_text(self) -> str:
        return f"{self.ready}/{self.total}"


def _condition_true(pod: dict, ctype: str) -> bool:
    for cond in _l(_d(pod.get("status")).get("conditions")):
        cond = _d(cond)
        if cond.get("type") == ctype and cond.get("status") == "True":
            return True
    return False


def _has_condition(pod: dict, ctype: str) -> bool:
    return any(_d(c).get("type") == ctype for c in _l(_d(pod.get("status")).get("conditions")))


def _terminated_reason(term: dict) -> str:
    if term.get("reason"):
        return str(term["reason"])
    if count(term.get("signal")):
        return f"Signal:{count(term.get('signal'))}"
    return f"ExitCode:{term.get('exitCode', 0)}"


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def pod_display_status(pod: Any) -> PodDisplay:
    """The STATUS/READY/RESTARTS columns of ``kubectl get pods`` for ``pod``, following kubectl's
    ``printPod``: status.reason over phase; ``SchedulingGated``; init containers give
    ``Init:<reason>``, ``Init:Signal:n``, ``Init:ExitCode:n`` or ``Init:i/n`` (sidecars that started
    are skipped); container waiting/terminated reasons (CrashLoopBackOff, ImagePullBackOff,
    Completed, Error, ...) with the *first* container's reason winning; ``Completed`` with a running
    container shows Running/NotReady; a deletionTimestamp shows ``Terminating`` (``Unknown`` when the
    node is lost)."""
    pod = _d(pod)
    spec, status = _d(pod.get("spec")), _d(pod.get("status"))
    containers = _l(spec.get("containers"))
    init_specs = _l(spec.get("initContainers"))
    total = len(containers)
    ready = 0
    restarts = 0
    last_restart: datetime | None = None
    reason = status.get("phase") if isinstance(status.get("phase"), str) else ""
    if isinstance(status.get("reason"), str) and status.get("reason"):
        reason = status["reason"]
    reason = reason or "Unknown"

    for cond in _l(status.get("conditions")):
        cond = _d(cond)
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    sidecars = {_d(c).get("name") for c in init_specs if _d(c).get("restartPolicy") == "Always"}
    # Native sidecars count in READY n/m like regular containers (kubectl >= 1.29).
    total += len(sidecars)

    initializing = False
    sidecar_restarts = 0
    init_statuses = _l(status.get("initContainerStatuses"))
    for i, cs in enumerate(init_statuses):
        cs = _d(cs)
        state, last = _d(cs.get("state")), _d(cs.get("lastState"))
        restarts += count(cs.get("restartCount"))
        if _d(last.get("terminated")).get("finishedAt"):
            last_restart = _latest(last_restart, parse_time(last["terminated"]["finishedAt"]))
        is_sidecar = cs.get("name") in sidecars
        if is_sidecar:
            sidecar_restarts += count(cs.get("restartCount"))
            if cs.get("started") is True:
                if cs.get("ready") is True:
                    ready += 1
                continue
        term, waiting = _d(state.get("terminated")), _d(state.get("waiting"))
        if term and term.get("exitCode", 0) == 0:
            continue
        if term:
            reason = "Init:" + _terminated_reason(term)
            initializing = True
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
            initializing = True
        else:
            reason = f"Init:{i}/{len(init_specs) or len(init_statuses)}"
            initializing = True
        break

    if not initializing or _condition_true(pod, "Initialized"):
        restarts = sidecar_restarts
        has_running = False
        for cs in reversed(_l(status.get("containerStatuses"))):
            cs = _d(cs)
            state, last = _d(cs.get("state")), _d(cs.get("lastState"))
            restarts += count(cs.get("restartCount"))
            if _d(last.get("terminated")).get("finishedAt"):
                last_restart = _latest(last_restart, parse_time(last["terminated"]["finishedAt"]))
            waiting, term = _d(state.get("waiting")), _d(state.get("terminated"))
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif term:
                reason = _terminated_reason(term)
            elif cs.get("ready") is True and "running" in state:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = (
                "NotReady"
                if _has_condition(pod, "Ready") and not _condition_true(pod, "Ready")
                else "Running"
            )

    m = meta(pod)
    if m.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif m.get("deletionTimestamp"):
        reason = "Terminating"
    return PodDisplay(status=reason, ready=ready, total=total, restarts=restarts, last_restart=last_restart)


# -- quantities and queue usage --------------------------------------------------------------


# Real quantities live between 1n (10^-9, Kubernetes' smallest suffix) and a few Ei (~1.2 * 10^18);
# the CRD pattern also admits "1e1000000", whose arithmetic overflows Decimal's default context and
# whose plain rendering is a million digits. Beyond 10^±QUANTITY_EXPONENT_LIMIT a value is no amount of
# anything real: it reads as unreadable (None) and the pages show the string as written.
QUANTITY_EXPONENT_LIMIT = 30


def quantity(value: Any) -> Decimal | None:
    """``kubernetes.utils.parse_quantity`` that returns None instead of raising on garbage
    (None, "", "lots", "1.2.3", lists...). ``500M`` -> 500000000, ``16k`` -> 16000,
    ``1500m`` -> 1.5, ``0`` -> 0, ``4Gi`` -> 4294967296. Non-zero values whose magnitude is
    outside 10^-30 .. 10^30 (e.g. ``1e1000000``, which the CRD pattern admits) are None too, so
    every caller's arithmetic stays within Decimal's default context."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return None
        parsed = Decimal(str(value))
    elif not isinstance(value, str) or not value.strip():
        return None
    else:
        try:
            parsed = parse_quantity(value.strip())
        except (ValueError, TypeError, InvalidOperation, ArithmeticError):
            return None
    if not parsed.is_finite():
        return None
    if parsed and abs(parsed.adjusted()) > QUANTITY_EXPONENT_LIMIT:
        return None
    return parsed


def resource_amount(value: Any) -> Decimal | None:
    """A ResourceList amount (Queue capability/deserved/guarantee/allocated, PodGroup minResources,
    container requests): ``quantity`` that is also not negative, else None. Kubernetes quantities in
    a ResourceList are amounts of a resource, so "-1Gi" is as invalid there as "abc"; callers show
    such a value verbatim as invalid and compute nothing from it."""
    parsed = quantity(value)
    return parsed if parsed is not None and parsed >= 0 else None


def invalid_amount_note(value: Any) -> str:
    """Why ``value`` (present, but ``resource_amount`` is None) is not a usable amount: "negative",
    "out of range" (a quantity beyond 10^±30, see ``quantity``) or "not a quantity"."""
    parsed = quantity(value)
    if parsed is not None:
        return "negative" if parsed < 0 else ""
    if isinstance(value, str) and value.strip():
        try:
            parse_quantity(value.strip())
        except (ValueError, TypeError, InvalidOperation, ArithmeticError):
            return "not a quantity"
        return "out of range"
    return "not a quantity"


def compact_number(value: Decimal, places: int = 2) -> str:
    """``value`` as short plain text that does not lie: at least ``places`` decimals and enough for
    3 significant digits (1.5 -> "1.5" even with places=0, 0.5 -> "0.5"), trailing zeros dropped;
    magnitudes from 10^15 up or below 10^-6 in scientific notation ("1.23e+20"). Never raises on a
    finite Decimal."""
    if not value.is_finite():
        return str(value)
    if not value:
        return "0"
    adjusted = value.adjusted()
    if adjusted >= 15 or adjusted < -6:
        return f"{value:.3g}"
    decimals = max(places, 2 - adjusted)
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


@dataclass(frozen=True)
class ResourceUsage:
    """One resource of a Queue (Queue spec/status, REFERENCE.md §3). Decimal values in base units
    (cores for cpu, bytes for memory, counts for pods and extended resources such as
    ``nvidia.com/gpu``); None when the queue does not set that field. ``raw`` keeps the original
    strings; ``errors`` names fields whose quantity could not be parsed (shown, never fatal).
    Percentages are not capped: allocated above capability shows above 100."""

    name: str
    allocated: Decimal | None
    capability: Decimal | None
    deserved: Decimal | None
    guarantee: Decimal | None
    raw: dict[str, str]
    errors: tuple[str, ...] = ()

    def _pct(self, limit: Decimal | None) -> float | None:
        if limit is None or limit <= 0:
            return None
        return float((self.allocated or Decimal(0)) * 100 / limit)

    @property
    def percent_of_capability(self) -> float | None:
        return self._pct(self.capability)

    @property
    def percent_of_deserved(self) -> float | None:
        return self._pct(self.deserved)

    @property
    def headroom(self) -> Decimal | None:
        """capability - allocated (negative when over); None without a capability."""
        if self.capability is None:
            return None
        return self.capability - (self.allocated or Decimal(0))


def _resource_list(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in _d(value).items()}


def queue_usage(queue: Any) -> list[ResourceUsage]:
    """Per resource: status.allocated vs spec.capability, spec.deserved and
    spec.guarantee.resource (guarantee is nested under ``resource``, REFERENCE.md §3). Sorted with
    cpu, memory, pods first, then the rest (extended resources) by name."""
    queue = _d(queue)
    spec, status = _d(queue.get("spec")), _d(queue.get("status"))
    fields = {
        "allocated": _resource_list(status.get("allocated")),
        "capability": _resource_list(spec.get("capability")),
        "deserved": _resource_list(spec.get("deserved")),
        "guarantee": _resource_list(_d(spec.get("guarantee")).get("resource")),
    }
    names = set().union(*fields.values())
    order = {"cpu": 0, "memory": 1, "pods": 2}
    result = []
    for name in sorted(names, key=lambda n: (order.get(n, 3), n)):
        values: dict[str, Decimal | None] = {}
        raw: dict[str, str] = {}
        errors = []
        for fname, rl in fields.items():
            if name not in rl:
                values[fname] = None
                continue
            raw[fname] = str(rl[name])
            parsed = quantity(rl[name])
            if parsed is None:
                errors.append(f"{fname}: unreadable quantity {str(rl[name])[:64]!r}")
            values[fname] = parsed
        result.append(ResourceUsage(name=name, raw=raw, errors=tuple(errors), **values))
    return result


def format_quantity(resource: str, value: Decimal | None) -> str:
    """Human form: cpu in cores ("1.5", "250m"), memory-like in binary units ("4Gi"), others plain
    (compact_number: 3 significant digits at least, scientific for absurd magnitudes)."""
    if value is None:
        return "—"
    if resource in ("cpu",) or resource.endswith(".cpu"):
        if value != 0 and abs(value) < 1:
            return f"{compact_number(value * 1000, 0)}m"
        return compact_number(value)
    if "memory" in resource or "storage" in resource:
        for unit, size in (
            ("Ei", 2**60),
            ("Pi", 2**50),
            ("Ti", 2**40),
            ("Gi", 2**30),
            ("Mi", 2**20),
            ("Ki", 2**10),
        ):
            if abs(value) >= size:
                return f"{compact_number(value / size, 1)}{unit}"
        return compact_number(value, 0)
    return compact_number(value)


# -- PodGroup counts per queue ---------------------------------------------------------------

PODGROUP_PHASES = ("Pending", "Inqueue", "Running", "Unknown", "Completed")


def podgroup_counts(podgroups: Iterable[Any]) -> dict[str, int]:
    """Counts by status.phase, computed as vcctl does since Volcano v1.11 stopped writing them
    (REFERENCE.md §3). A PodGroup without status counts as Pending (the scheduler has not written
    it yet, §2); unknown phases are counted under their own name. Known phases always present."""
    counts: dict[str, int] = dict.fromkeys(PODGROUP_PHASES, 0)
    for pg in podgroups:
        phase = phase_of(pg) or "Pending"
        counts[phase] = counts.get(phase, 0) + 1
    return counts


def podgroup_counts_per_queue(podgroups: Iterable[Any]) -> dict[str, dict[str, int]]:
    """{queue name: podgroup_counts} using spec.queue (default "default")."""
    grouped: dict[str, list] = {}
    for pg in podgroups:
        q = _d(_d(pg).get("spec")).get("queue")
        grouped.setdefault(q if isinstance(q, str) and q else "default", []).append(pg)
    return {name: podgroup_counts(pgs) for name, pgs in grouped.items()}


# -- events ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventSummary:
    """Repeated events folded into one line: total ``count``, ``first_seen``/``last_seen``."""

    type: str
    reason: str
    message: str
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    object_kind: str = ""
    object_name: str = ""


def _event_times(ev: dict) -> tuple[datetime | None, datetime | None]:
    series = _d(ev.get("series"))
    first = (
        parse_time(ev.get("firstTimestamp"))
        or parse_time(ev.get("eventTime"))
        or parse_time(meta(ev).get("creationTimestamp"))
    )
    last = (
        parse_time(series.get("lastObservedTime"))
        or parse_time(ev.get("lastTimestamp"))
        or parse_time(ev.get("eventTime"))
        or first
    )
    return first, last


def summarize_events(events: Iterable[Any], type_: str | None = "Warning") -> list[EventSummary]:
    """Deduplicate events by (involved object, reason, message), summing ``count`` (or
    ``series.count``; at least 1 each), newest last-seen first. ``type_`` None keeps every type."""
    folded: dict[tuple, dict] = {}
    for ev in events:
        ev = _d(ev)
        etype = str(ev.get("type") or "Normal")
        if type_ is not None and etype != type_:
            continue
        involved = _d(ev.get("involvedObject"))
        key = (
            str(involved.get("kind") or ""),
            str(involved.get("name") or ""),
            ev.get("reason"),
            ev.get("message"),
        )
        n = max(count(ev.get("count")), count(_d(ev.get("series")).get("count")), 1)
        first, last = _event_times(ev)
        entry = folded.get(key)
        if entry is None:
            folded[key] = {"type": etype, "count": n, "first": first, "last": last}
        else:
            entry["count"] += n
            entry["first"] = min((t for t in (entry["first"], first) if t), default=None)
            entry["last"] = _latest(entry["last"], last)
    out = [
        EventSummary(
            type=v["type"],
            reason=str(k[2] or ""),
            message=str(k[3] or ""),
            count=v["count"],
            first_seen=v["first"],
            last_seen=v["last"],
            object_kind=k[0],
            object_name=k[1],
        )
        for k, v in folded.items()
    ]
    epoch = datetime.min.replace(tzinfo=UTC)
    out.sort(key=lambda e: e.last_seen or epoch, reverse=True)
    return out


# -- why is it pending -----------------------------------------------------------------------


@dataclass(frozen=True)
class Reason:
    """One line of "why is it pending". ``kind`` is a stable identifier the pages can style
    (see PENDING_REASON_KINDS); ``summary`` plain words; ``detail`` verbatim text from the cluster
    (condition message, event message) or numbers; ``severity`` "info" | "warning" | "blocker";
    ``objects`` names of the pods/objects concerned; ``count``/``first_seen``/``last_seen`` for
    folded events."""

    kind: str
    summary: str
    detail: str = ""
    severity: str = "warning"
    objects: tuple[str, ...] = ()
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None


PENDING_REASON_KINDS = (
    "gang_never",
    "job_phase",
    "podgroup_missing",
    "podgroup_phase",
    "unschedulable",
    "queue_missing",
    "queue_state",
    "queue_headroom",
    "event",
    "pod_unschedulable",
    "pod_image",
    "pod_crashloop",
    "pod_waiting",
)

# Container waiting reasons that block a pod from running, mapped to a reason kind and words.
_POD_BLOCKERS = {
    "ImagePullBackOff": ("pod_image", "cannot pull the container image"),
    "ErrImagePull": ("pod_image", "cannot pull the container image"),
    "InvalidImageName": ("pod_image", "the container image name is invalid"),
    "CrashLoopBackOff": ("pod_crashloop", "a container keeps crashing (CrashLoopBackOff)"),
    "CreateContainerConfigError": ("pod_waiting", "the container configuration is invalid"),
    "CreateContainerError": ("pod_waiting", "the container cannot be created"),
    "RunContainerError": ("pod_waiting", "the container cannot be started"),
}

_QUEUE_RESOURCE_SKIP_PREFIXES = ("limits.", "count/")


def _queue_key(min_resource: str) -> str | None:
    """Map a PodGroup minResources key (quota style, REFERENCE.md §4) to a Queue resource name."""
    if min_resource.startswith(_QUEUE_RESOURCE_SKIP_PREFIXES):
        return None
    if min_resource.startswith("requests."):
        return min_resource[len("requests.") :]
    return min_resource


def _conditions(obj: dict) -> list[dict]:
    return [_d(c) for c in _l(_d(obj.get("status")).get("conditions"))]


def _unschedulable_condition(pg: dict) -> dict | None:
    """The PodGroup's Unschedulable condition when it is the newest True condition (a Scheduled
    condition written later means the gang was placed since), REFERENCE.md §2."""
    true_conds = [c for c in _conditions(pg) if c.get("status") == "True"]
    if not true_conds:
        return None
    epoch = datetime.min.replace(tzinfo=UTC)
    newest = max(true_conds, key=lambda c: parse_time(c.get("lastTransitionTime")) or epoch)
    if newest.get("type") == "Unschedulable":
        return newest
    unsched = [c for c in true_conds if c.get("type") == "Unschedulable"]
    if unsched and all(parse_time(c.get("lastTransitionTime")) is None for c in true_conds):
        return unsched[-1]
    return None


# -- gangs that can never be satisfied -------------------------------------------------------


def job_total_replicas(job: Any) -> int:
    """Σ spec.tasks[].replicas of a Volcano Job (REFERENCE.md §1); garbage or negative counts as 0."""
    return sum(count(_d(t).get("replicas")) for t in _l(_d(_d(job).get("spec")).get("tasks")))


def _container_amounts(container: Any) -> dict[str, Decimal]:
    """A container's requests per resource, a limit standing in for a missing request (Kubernetes
    defaults a request to its limit). Values that are no usable amount are skipped."""
    resources = _d(_d(container).get("resources"))
    requests, limits = _d(resources.get("requests")), _d(resources.get("limits"))
    out: dict[str, Decimal] = {}
    for name in {*limits, *requests}:
        value = resource_amount(requests[name] if name in requests else limits.get(name))
        if value is not None:
            out[str(name)] = value
    return out


def pod_template_requests(template: Any) -> dict[str, Decimal]:
    """The effective requests of one pod of a PodTemplateSpec, as the scheduler counts them: the
    sum over ``containers``, and per resource at least the largest single init container."""
    spec = _d(_d(template).get("spec"))
    total: dict[str, Decimal] = {}
    for container in _l(spec.get("containers")):
        for name, value in _container_amounts(container).items():
            total[name] = total.get(name, Decimal(0)) + value
    for container in _l(spec.get("initContainers")):
        for name, value in _container_amounts(container).items():
            total[name] = max(total.get(name, Decimal(0)), value)
    return total


def job_min_resources(job: Any, min_available: int) -> dict[str, Decimal]:
    """What the first ``min_available`` pods of a Volcano Job request together, by resource name:
    the job controller's PodGroup.spec.minResources (REFERENCE.md §4), for when the PodGroup is
    not there (yet). Volcano orders the tasks by priority class value, which the cache cannot
    resolve; the tasks are taken in spec order (it only matters when tasks differ and minAvailable
    is below the total)."""
    total: dict[str, Decimal] = {}
    left = max(0, min_available)
    for task in _l(_d(_d(job).get("spec")).get("tasks")):
        if left <= 0:
            break
        n = min(left, count(_d(task).get("replicas")))
        left -= n
        for name, value in pod_template_requests(_d(task).get("template")).items():
            total[name] = total.get(name, Decimal(0)) + value * n
    return total


QUEUE_CHAIN_LIMIT = 10_000


def queue_ancestry(queue: Any, lookup: Any = None) -> list[dict]:
    """``queue`` followed by its ancestors via spec.parent (REFERENCE.md §3: an empty parent means
    ``root``), as far as ``lookup(name) -> Queue | None`` finds them. Stops at a missing queue, a
    cycle or QUEUE_CHAIN_LIMIT queues; without ``lookup`` just [queue]."""
    chain: list[dict] = []
    seen: set[str] = set()
    current = _d(queue) if queue else None
    while current is not None and len(chain) < QUEUE_CHAIN_LIMIT:
        name = str(meta(current).get("name") or "")
        if name in seen:
            break
        seen.add(name)
        chain.append(current)
        if lookup is None or name == "root":
            break
        parent = _d(current.get("spec")).get("parent")
        parent = parent if isinstance(parent, str) and parent else "root"
        found = lookup(parent)
        current = _d(found) if found else None
    return chain


@dataclass(frozen=True)
class CapabilityLimit:
    """A resource the gang needs more of than a queue's capability allows, ever: ``queue`` is the
    queue whose capability is the tightest in the hierarchy (the gang's own queue or an ancestor)."""

    resource: str
    need: Decimal
    capability: Decimal
    queue: str


def capability_limits(needs: Mapping[str, Decimal], chain: Iterable[Any]) -> list[CapabilityLimit]:
    """Resources in ``needs`` (Queue resource names) above the tightest spec.capability along
    ``chain`` (queue_ancestry). Capability is a hard limit for the queue and, in a hierarchy, for
    every queue below it (REFERENCE.md §3: a child's capability must be ≤ its ancestors'), so such a
    gang is never admitted while the capability stays. Values that are no usable amount are ignored."""
    tightest: dict[str, tuple[Decimal, str]] = {}
    for queue in chain:
        name = str(meta(queue).get("name") or "")
        for res, raw in _d(_d(_d(queue).get("spec")).get("capability")).items():
            value = resource_amount(raw)
            if value is not None and (str(res) not in tightest or value < tightest[str(res)][0]):
                tightest[str(res)] = (value, name)
    out = []
    for res, need in needs.items():
        if res in tightest and need > tightest[res][0]:
            out.append(CapabilityLimit(res, need, tightest[res][0], tightest[res][1]))
    return out


# -- room in the queue and its ancestors ------------------------------------------------------


def podgroup_min_resources(pg: Any) -> dict[str, Decimal]:
    """PodGroup.spec.minResources by Queue resource name (REFERENCE.md §4: the keys are quota-style,
    so ``requests.cpu`` and ``cpu`` are the same amount and the larger is taken; ``limits.*``,
    ``count/*`` and ``pods`` are left out). Values that are no usable amount (resource_amount) are
    left out; a missing spec or minResources gives {}."""
    out: dict[str, Decimal] = {}
    for key, raw in _d(_d(_d(pg).get("spec")).get("minResources")).items():
        name, value = _queue_key(str(key)), resource_amount(raw)
        if name is not None and name != "pods" and value is not None:
            out[name] = max(out.get(name, Decimal(0)), value)
    return out


@dataclass(frozen=True)
class QueueRoom:
    """What one queue of the gang's chain (its own queue, ``depth`` 0, or an ancestor, depth 1 =
    parent) has left of one resource under its spec.capability, as Volcano's enqueue checks it
    (REFERENCE.md §2: a PodGroup stays Pending while "the queue lacks quota"; §5: the event "queue
    resource quota insufficient: insufficient cpu"): capability − allocated − reserved.

    ``allocated`` is the queue's status.allocated, which the scheduler sums up into parents (§3), or
    for a queue whose status.allocated lacks the resource the sum over its child queues; None when a
    value is no usable amount. ``reserved`` is the sum of spec.minResources (§4) over the PodGroups
    that are Inqueue (§2: admitted by the enqueue action, pods not yet bound) in the queue and, for a
    parent, in every queue below it; ``reservers`` names them as (namespace, name), sorted. Amounts
    in base units (cores, bytes, counts). ``capability`` None: the value is no usable amount."""

    queue: str
    depth: int
    resource: str
    capability: Decimal | None
    allocated: Decimal | None
    reserved: Decimal
    reservers: tuple[tuple[str, str], ...]

    @property
    def left(self) -> Decimal | None:
        """capability − allocated − reserved (negative when over), None when not computable."""
        if self.capability is None or self.allocated is None:
            return None
        return self.capability - self.allocated - self.reserved


def _queue_name(queue: Any) -> str:
    return str(meta(queue).get("name") or "")


def _subtree(queue: dict, children: Any) -> list[dict]:
    """``queue`` and every queue below it (``children(name) -> Iterable[Queue]``), each once; a
    cycle or QUEUE_CHAIN_LIMIT queues end the walk."""
    out: list[dict] = []
    seen: set[str] = set()
    stack = [queue]
    while stack and len(out) < QUEUE_CHAIN_LIMIT:
        current = _d(stack.pop())
        name = _queue_name(current)
        if name in seen:
            continue
        seen.add(name)
        out.append(current)
        if children is not None:
            stack.extend(c for c in children(name) or () if isinstance(c, dict))
    return out


def _allocated(queue: dict, resource: str, children: Any) -> Decimal | None:
    """status.allocated[resource] of ``queue``; when the key is absent, the sum over its children,
    each by the same rule (0 for a leaf). None when a value found is no usable amount. Walks
    without recursion, each queue once, at most QUEUE_CHAIN_LIMIT queues (any depth renders)."""
    total = Decimal(0)
    seen: set[str] = set()
    stack = [queue]
    while stack and len(seen) < QUEUE_CHAIN_LIMIT:
        current = _d(stack.pop())
        name = _queue_name(current)
        if name in seen:
            continue
        seen.add(name)
        alloc = _d(_d(current.get("status")).get("allocated"))
        if resource in alloc:
            value = resource_amount(alloc[resource])
            if value is None:
                return None
            total += value
        elif children is not None:
            stack.extend(c for c in children(name) or () if isinstance(c, dict))
    return total


def queue_room(
    needs: Mapping[str, Decimal],
    chain: Iterable[Any],
    *,
    children: Any = None,
    inqueue: Any = None,
    exclude: tuple[str, str] | None = None,
) -> dict[str, list[QueueRoom]]:
    """Per resource in ``needs`` (Queue resource names), the room of each queue in ``chain``
    (queue_ancestry: the gang's queue first, then its ancestors) that sets a capability on it, in
    chain order. The rule is the one Volcano's capacity plugin applies with hierarchy and the
    simulated scheduler (dashboard/sim/scheduler.py ``_queue_free``) applies: a gang is admitted
    only if, for every such queue, need ≤ capability − allocated − reserved, where an ancestor's
    allocated and reserved cover its whole subtree (siblings included; REFERENCE.md §3: a child's
    capability bounds nothing above it, an ancestor's bounds every queue below it).

    ``children(name) -> Iterable[Queue]`` lists a queue's child queues; ``inqueue(name) ->
    Iterable[PodGroup]`` the Inqueue PodGroups whose spec.queue is ``name``; either None counts
    nothing below the queue / nothing reserved. ``exclude`` is the gang's own PodGroup
    (namespace, name): an Inqueue PodGroup does not compete with its own reservation. Running
    PodGroups are in status.allocated already and are not counted again. A queue in ``chain``
    without a usable capability amount on a resource gives a QueueRoom whose ``left`` is None."""
    chain = [_d(q) for q in chain if q]
    out: dict[str, list[QueueRoom]] = {res: [] for res in needs}
    reserved_in: dict[str, dict[str, tuple[Decimal, tuple[str, str]]]] = {}

    def reservations(qname: str) -> dict[str, tuple[Decimal, tuple[str, str]]]:
        # {"namespace/name": (amounts, key)} of the Inqueue PodGroups in one queue, read once.
        if qname not in reserved_in:
            found = {}
            for pg in (inqueue(qname) or ()) if inqueue is not None else ():
                pg = _d(pg)
                key = (str(meta(pg).get("namespace") or ""), str(meta(pg).get("name") or ""))
                if key == exclude or phase_of(pg) != "Inqueue":
                    continue
                found[key] = podgroup_min_resources(pg)
            reserved_in[qname] = found
        return reserved_in[qname]

    for depth, queue in enumerate(chain):
        caps = _d(_d(queue.get("spec")).get("capability"))
        wanted = [res for res in needs if res in caps]
        if not wanted:
            continue
        held: dict[tuple[str, str], dict[str, Decimal]] = {}
        for member in _subtree(queue, children):
            held.update(reservations(_queue_name(member)))
        for res in wanted:
            amounts = {key: a[res] for key, a in held.items() if a.get(res)}
            out[res].append(
                QueueRoom(
                    queue=_queue_name(queue),
                    depth=depth,
                    resource=res,
                    capability=resource_amount(caps[res]),
                    allocated=_allocated(queue, res, children),
                    reserved=sum(amounts.values(), Decimal(0)),
                    reservers=tuple(sorted(amounts)),
                )
            )
    return out


def binding_room(rooms: Iterable[QueueRoom]) -> QueueRoom | None:
    """The queue that limits a resource most: the least ``left`` among computable rooms, the nearest
    queue on a tie; None when none is computable."""
    known = [r for r in rooms if r.left is not None]
    return min(known, key=lambda r: (r.left, r.depth)) if known else None


def gang_never_reasons(job: Any, podgroup: Any, queue: Any, queue_lookup: Any = None) -> list[Reason]:
    """ "gang_never" Reasons for a Volcano Job's gang that can never be satisfied as it is: the
    Job's minAvailable (status, else spec) above Σ tasks[].replicas (REFERENCE.md §1; the
    admission webhook rejects this, so it exists only with the webhook off), the PodGroup's
    minMember above them, or the gang's minimum resources (PodGroup.spec.minResources, else the
    sum over the Job's first minAvailable pods) above the tightest capability of the queue and its
    ancestors (§3). The pages' words for the same facts are in presenters.never_start."""
    out: list[Reason] = []
    job, podgroup = (_d(job) if job else None), (_d(podgroup) if podgroup else None)
    min_av = 0
    if job is not None:
        status, spec = _d(job.get("status")), _d(job.get("spec"))
        min_av = count(status["minAvailable"] if "minAvailable" in status else spec.get("minAvailable"))
        total = job_total_replicas(job)
        if _l(spec.get("tasks")) and min_av > total:
            out.append(
                Reason(
                    "gang_never",
                    "The gang can never be complete: minAvailable is more than the Job's replicas.",
                    f"minAvailable {min_av} > {total} replicas in all tasks",
                    severity="blocker",
                )
            )
        min_member = count(_d(podgroup.get("spec")).get("minMember")) if podgroup else 0
        if _l(spec.get("tasks")) and min_member > total and min_member != min_av:
            out.append(
                Reason(
                    "gang_never",
                    "The gang can never be complete: the PodGroup's minMember is more than the "
                    "Job's replicas.",
                    f"minMember {min_member} > {total} replicas in all tasks",
                    severity="blocker",
                )
            )
    needs: dict[str, Decimal] = {}
    for key, raw in _d(_d(podgroup.get("spec")).get("minResources") if podgroup else None).items():
        name, value = _queue_key(str(key)), resource_amount(raw)
        if name is not None and name not in ("pods",) and value is not None:
            needs[name] = max(needs.get(name, Decimal(0)), value)
    if not needs and job is not None:
        needs = {
            k: v for k, v in job_min_resources(job, min_av).items() if _queue_key(k) == k and k != "pods"
        }
    for lim in capability_limits(needs, queue_ancestry(queue, queue_lookup)) if queue else []:
        out.append(
            Reason(
                "gang_never",
                f"The gang can never fit: it needs more {lim.resource} than queue {lim.queue!r} "
                "may ever have.",
                f"needs {format_quantity(lim.resource, lim.need)}; "
                f"capability {format_quantity(lim.resource, lim.capability)}",
                severity="blocker",
            )
        )
    return out


def explain_pending(
    *,
    job: Any = None,
    podgroup: Any = None,
    queue: Any = None,
    queue_name: str | None = None,
    pods: Iterable[Any] = (),
    events: Iterable[Any] = (),
    max_events: int = 5,
    queue_lookup: Any = None,
    queue_children: Any = None,
    inqueue: Any = None,
) -> list[Reason]:
    """Why a Job / PodGroup is not running, as a list of Reasons (most decisive first).

    Inputs are cache objects: the Job (optional), its PodGroup (None when missing), its Queue (None
    when missing; ``queue_name`` names it then), its pods, and the events of the Job, PodGroup and
    pods. Reads: PodGroup phase and its Unschedulable condition message verbatim (§2); queue state
    (§3); queue headroom vs the PodGroup's minResources (§4 keys: ``requests.cpu``/``cpu``...):
    capability − allocated − reserved by other Inqueue PodGroups, for the queue and each ancestor
    (queue_room; ``queue_lookup``, ``queue_children(name)`` and ``inqueue(name)`` as there); Warning events deduplicated with counts and first/last seen (§5);
    pod blockers: PodScheduled=False Unschedulable, ImagePullBackOff/ErrImagePull, CrashLoopBackOff.
    Returns [] when nothing indicates a problem."""
    job, podgroup, queue = (
        _d(job) if job else None,
        _d(podgroup) if podgroup else None,
        _d(queue) if queue else None,
    )
    pods = [p for p in pods if isinstance(p, dict)]
    # Gangs that can never be satisfied first (see gang_never_reasons).
    reasons: list[Reason] = gang_never_reasons(job, podgroup, queue, queue_lookup)

    job_phase = phase_of(job) if job else ""
    if job is not None and job_phase and job_phase not in ("Pending", "Running", "Restarting", ""):
        reasons.append(Reason("job_phase", f"The Job is {job_phase}.", severity="info"))

    if podgroup is None:
        if job is not None and job_phase in ("", "Pending"):
            reasons.append(
                Reason(
                    "podgroup_missing",
                    "The Job has no PodGroup yet, so the scheduler cannot consider it.",
                    "The job controller creates the PodGroup <job>-<uid> when it first syncs the Job.",
                    severity="blocker",
                )
            )
    else:
        pg_phase = phase_of(podgroup)
        words = {
            "": "The scheduler has not looked at the PodGroup yet (no status).",
            "Pending": "The PodGroup is Pending: the scheduler has not admitted it to its queue.",
            "Inqueue": "The PodGroup is Inqueue: admitted, waiting for enough pods to be placed together.",
            "Unknown": "The PodGroup is Unknown: some pods run but the gang became unschedulable.",
        }
        if pg_phase in words:
            reasons.append(
                Reason(
                    "podgroup_phase",
                    words[pg_phase],
                    f"phase: {pg_phase or '(none)'}",
                    severity="blocker" if pg_phase in ("", "Pending") else "warning",
                )
            )
        elif pg_phase not in ("Running", "Completed"):
            reasons.append(
                Reason(
                    "podgroup_phase",
                    f"The PodGroup is in an unknown phase {pg_phase!r}.",
                    f"phase: {pg_phase}",
                    severity="warning",
                )
            )
        cond = _unschedulable_condition(podgroup)
        if cond is not None:
            reasons.append(
                Reason(
                    "unschedulable",
                    "The scheduler cannot place the gang.",
                    str(cond.get("message") or cond.get("reason") or ""),
                    severity="blocker",
                    last_seen=parse_time(cond.get("lastTransitionTime")),
                )
            )

    qname = queue_name
    if qname is None:
        source = podgroup or job or {}
        q = _d(source.get("spec")).get("queue")
        qname = q if isinstance(q, str) and q else "default"
    if queue is None:
        reasons.append(Reason("queue_missing", f"Queue {qname!r} does not exist.", severity="blocker"))
    else:
        state = phase_of(queue)
        if state and state != "Open":
            reasons.append(
                Reason(
                    "queue_state",
                    f"Queue {qname!r} is {state}: it admits no new work.",
                    f"status.state: {state}",
                    severity="blocker",
                )
            )
        if podgroup is not None and phase_of(podgroup) in ("", "Pending"):
            chain = queue_ancestry(queue, queue_lookup)
            reasons.extend(_headroom_reasons(podgroup, chain, qname, queue_children, inqueue))

    for summary in summarize_events(events)[:max_events]:
        reasons.append(
            Reason(
                "event",
                f"{summary.reason or 'Warning'} on {summary.object_kind} {summary.object_name}".strip(),
                summary.message,
                severity="warning",
                count=summary.count,
                first_seen=summary.first_seen,
                last_seen=summary.last_seen,
            )
        )

    reasons.extend(_pod_blockers(pods))
    return reasons


def _headroom_reasons(pg: dict, chain: list[dict], qname: str, children: Any, inqueue: Any) -> list[Reason]:
    out = []
    for key, raw_need in _d(_d(pg.get("spec")).get("minResources")).items():
        if _queue_key(str(key)) is not None and quantity(raw_need) is None:
            out.append(
                Reason(
                    "queue_headroom",
                    f"The PodGroup's minResources {key} is unreadable.",
                    f"{key}: {str(raw_need)[:64]!r}",
                    severity="info",
                )
            )
    needs = podgroup_min_resources(pg)
    own = (str(meta(pg).get("namespace") or ""), str(meta(pg).get("name") or ""))
    rooms = queue_room(needs, chain, children=children, inqueue=inqueue, exclude=own)
    usage = {u.name: u for u in queue_usage(chain[0])} if chain else {}
    for rname, need in needs.items():
        room = binding_room(rooms[rname])
        if room is not None and room.left is not None and need > room.left:
            where = f"Queue {qname!r}" if room.depth == 0 else f"Ancestor queue {room.queue!r} of {qname!r}"
            reserved = (
                f", reserved {format_quantity(rname, room.reserved)} by {len(room.reservers)} Inqueue "
                f"PodGroup(s): {', '.join(f'{ns}/{n}' for ns, n in room.reservers[:3])}"
                if room.reservers
                else ""
            )
            out.append(
                Reason(
                    "queue_headroom",
                    f"{where} has not enough {rname} left for the gang.",
                    f"needs {format_quantity(rname, need)}; "
                    f"capability {format_quantity(rname, room.capability)}, "
                    f"allocated {format_quantity(rname, room.allocated)}{reserved}, "
                    f"free {format_quantity(rname, room.left)}",
                    severity="blocker",
                    objects=tuple(f"{ns}/{n}" for ns, n in room.reservers),
                )
            )
            continue
        u = usage.get(rname)
        if u is not None and u.deserved is not None and (u.allocated or Decimal(0)) + need > u.deserved:
            out.append(
                Reason(
                    "queue_headroom",
                    f"The gang would take queue {qname!r} above its deserved {rname}.",
                    f"needs {format_quantity(rname, need)}; deserved {format_quantity(rname, u.deserved)}, "
                    f"allocated {format_quantity(rname, u.allocated or Decimal(0))}",
                    severity="info",
                )
            )
    return out


def _pod_blockers(pods: list[dict]) -> list[Reason]:
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for pod in pods:
        name = str(meta(pod).get("name") or "")
        status = _d(pod.get("status"))
        for cond in _conditions(pod):
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                grouped.setdefault(
                    (
                        "pod_unschedulable",
                        "Pods cannot be scheduled.",
                        str(cond.get("message") or cond.get("reason") or ""),
                    ),
                    [],
                ).append(name)
        for cs in _l(status.get("initContainerStatuses")) + _l(status.get("containerStatuses")):
            waiting = _d(_d(_d(cs).get("state")).get("waiting"))
            wreason = waiting.get("reason")
            if wreason in _POD_BLOCKERS:
                kind, words = _POD_BLOCKERS[wreason]
                detail = f"{wreason}: {waiting.get('message') or ''}".strip().rstrip(":")
                grouped.setdefault((kind, f"Pods: {words}.", detail), []).append(name)
    return [
        Reason(
            kind,
            summary,
            detail,
            severity="blocker",
            objects=tuple(sorted(set(names))),
            count=len(set(names)),
        )
        for (kind, summary, detail), names in grouped.items()
    ]


def explain_pending_from_snapshot(snapshot: Any, obj: Mapping) -> list[Reason]:
    """Collect the inputs of explain_pending for a Job or PodGroup from a Snapshot and call it."""
    obj = _d(obj)
    if obj.get("kind") == "Job" or "tasks" in _d(obj.get("spec")):
        job, pg = obj, snapshot.podgroup_for_job(obj)
    else:
        pg, job = obj, snapshot.job_for_podgroup(obj)
    source = pg or job
    qname = _d(source.get("spec")).get("queue") if source else None
    qname = qname if isinstance(qname, str) and qname else "default"
    queue = snapshot.queues.get(None, qname)
    pods = snapshot.pods_for_podgroup(pg) if pg else []
    if not pods and job is not None:
        pods = snapshot.pods_for_job(job)
    events: list[dict] = []
    for o in (job, pg, *pods):
        if o is not None:
            events.extend(snapshot.events_for(o))
    return explain_pending(
        job=job,
        podgroup=pg,
        queue=queue,
        queue_name=qname,
        pods=pods,
        events=events,
        queue_lookup=lambda name: snapshot.queues.get(None, name),
        queue_children=snapshot.child_queues,
        inqueue=lambda name: snapshot.podgroups.lookup("queue_phase", (name, "Inqueue")),
    )
