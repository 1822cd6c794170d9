"""The recorder: turns the cache's store changes into history rows, written in batches.

The cache's writer threads only hand each change to a bounded queue (``listener``); one recorder
thread reads the phase, lifetime and queue facts from them (dashboard/volcano), keeps the rows
due and writes them every ``flush_seconds`` in one transaction (as tuples: inserts.py; a pod's
row is built when it is written, from its latest change). Every ``sample_seconds`` (of
``clock``) it samples each Queue's amounts and its PodGroups by phase from the cache; every
``prune_seconds`` it deletes rows older than the retention. No API call is made. A pod's queue
is its PodGroup's (else its Job's), remembered from the PodGroup and Job changes handed over; a
cache snapshot is taken only when those do not name it, for a sample, and for the vanished-pod
check below: a snapshot publishes each store it reads, and the next watch event then copies
what changed.
Every long pass (over the objects, the rows, the queues, the stored pods) gives way to requests
in flight every millisecond or so (dashboard/priority.py).

Pods that went while no recorder watched (a restart, a handover between replicas, changes the
full queue dropped): whenever the pod cache has completed a list (its ``synced_at`` moves, which
a watch resumed after a break does too) the recorder closes every open pod row whose uid the
cache does not hold, marked ``vanished``, with ``deleted`` = the row's ``last_seen``. While the
pod cache stays synced every open row's pod is in it, so each write refreshes the open rows'
``last_seen`` (at most once per ``sample_seconds``, one UPDATE): the bound is the last moment the
recorder knew the pod existed, at most one sampling interval early, never late.

Failure: a full queue drops changes and counts them (``dropped``); a database that cannot be
written (down, disk full, locked) keeps the rows due, at most ``pending_max`` (then the oldest are
dropped and counted as ``lost``), retries with backoff and reports ``degraded`` with the error,
which pages show as a notice. Nothing here raises into the informers or a page.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, NamedTuple

from django.db import DatabaseError, connections, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce

from dashboard.history import rollup
from dashboard.history.inserts import TableInsert
from dashboard.history.models import (
    Admission,
    AdmissionDaily,
    PhaseTransition,
    PodLifetime,
    QueueFiveMinute,
    QueueHourly,
    QueuePhaseFiveMinute,
    QueuePhaseHourly,
    QueuePhaseSample,
    QueueSample,
)
from dashboard.kube.cache import ClusterCache
from dashboard.kube.snapshot import Snapshot
from dashboard.priority import REQUESTS
from dashboard.volcano.gang import pod_template_requests
from dashboard.volcano.history import (
    PodTimes,
    admission_wait,
    gpu_amount,
    pod_times,
    queue_amounts,
    queue_resources,
)
from dashboard.volcano.objects import as_dict, as_list, meta, name, namespace, spec, status, uid
from dashboard.volcano.phases import job_phase, job_phase_since, podgroup_phase
from dashboard.volcano.pods import pod_group_name, pod_job_name, pod_task
from dashboard.volcano.quantities import plain_decimal
from dashboard.volcano.queues import queue_of
from dashboard.volcano.time import parse_time

log = logging.getLogger(__name__)

Change = tuple[str, dict[str, Any] | None, dict[str, Any] | None, datetime]
_RECORDED_KINDS = frozenset({"jobs", "podgroups", "pods"})


# The rows, as tuples of their table's columns in order (dashboard/history/inserts.py): a model
# instance per row cost more than the rest of the recorder's work.
class TransitionRow(NamedTuple):
    kind: str
    key: str
    uid: str
    namespace: str
    name: str
    queue: str
    phase: str
    previous: str
    seen_at: datetime
    object_time: datetime | None
    created: datetime | None


class AdmissionRow(NamedTuple):
    uid: str
    queue: str
    namespace: str
    name: str
    running: datetime
    day: date
    wait: float | None


class PodRow(NamedTuple):
    uid: str
    namespace: str
    name: str
    job: str
    task: str
    podgroup: str
    queue: str
    node: str
    phase: str
    created: datetime | None
    scheduled: datetime | None
    started: datetime | None
    finished: datetime | None
    deleted: datetime | None
    vanished: bool
    last_seen: datetime
    exit_code: int | None
    restarts: int
    cpu: float | None
    memory: float | None
    gpu: float
    requests: dict[str, str]


class SampleRow(NamedTuple):
    at: datetime
    queue: str
    resource: str
    allocated: float | None
    deserved: float | None
    capability: float | None
    guarantee: float | None


class PhaseSampleRow(NamedTuple):
    at: datetime
    queue: str
    phase: str
    count: int  # type: ignore[assignment]  # the column's name (it hides tuple.count)


_TRANSITIONS = TableInsert(PhaseTransition, TransitionRow._fields, conflict="ignore")
_ADMISSIONS = TableInsert(Admission, AdmissionRow._fields, conflict="ignore")
# An upsert: a pod's row is rewritten whole at each of its writes.
_PODS = TableInsert(PodLifetime, PodRow._fields, conflict="update", unique=("uid",))
_SAMPLES = TableInsert(QueueSample, SampleRow._fields)
_PHASE_SAMPLES = TableInsert(QueuePhaseSample, PhaseSampleRow._fields)


@dataclass(slots=True)
class _PodChange:
    """A pod's latest change since the last write; its row is built when it is written."""

    pod: dict[str, Any]
    queue: str
    seen: datetime
    deleted: bool
    times: PodTimes | None  # pod_times(pod), when the change read it


def _pod_row(change: _PodChange) -> PodRow:
    pod = change.pod
    times = change.times if change.times is not None else pod_times(pod)
    requests = pod_template_requests(pod)
    cpu, memory = requests.get("cpu"), requests.get("memory")
    return PodRow(
        uid=uid(pod),
        namespace=namespace(pod),
        name=name(pod),
        job=pod_job_name(pod) or "",
        task=pod_task(pod),
        podgroup=pod_group_name(pod) or "",
        queue=change.queue,
        node=str(spec(pod).get("nodeName") or ""),
        phase=str(status(pod).get("phase") or ""),
        created=times.created,
        scheduled=times.scheduled,
        started=times.started,
        finished=times.finished,
        deleted=change.seen if change.deleted else None,
        vanished=False,
        last_seen=change.seen,
        exit_code=times.exit_code,
        restarts=times.restarts,
        cpu=float(cpu) if cpu is not None else None,
        memory=float(memory) if memory is not None else None,
        gpu=float(gpu_amount(requests)),
        requests={res: plain_decimal(v) for res, v in sorted(requests.items())},
    )


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class RecorderOptions:
    sample_seconds: float = 60.0
    retention_days: float = 14.0
    queue_size: int = 20000
    flush_seconds: float = 2.0
    prune_seconds: float = 3600.0
    pending_max: int = 100_000  # rows kept while the database cannot be written
    tick_seconds: float = 0.2  # the thread's wake-up period (wall time)
    sample_on_start: bool = True  # False: the first sample is one sample_seconds after it begins


@dataclass(frozen=True)
class RecorderStatus:
    """``state``: "starting", "recording", "degraded" (the database failed: ``error``, since
    ``since``), "standby" (another replica records) or "stopped"."""

    state: str
    since: datetime
    error: str = ""
    dropped: int = 0  # changes the full queue refused
    lost: int = 0  # rows given up while the database could not be written
    written: int = 0
    last_write: datetime | None = None
    last_sample: datetime | None = None


class Elector:
    """Who records: this one always does (a single process). See dashboard/history/lease.py."""

    def leading(self) -> bool:
        return True

    def release(self) -> None:
        return None


def _podgroup_since(pg: dict[str, Any]) -> datetime | None:
    """The PodGroup's newest condition lastTransitionTime (its own record of its last change)."""
    times = [parse_time(as_dict(c).get("lastTransitionTime")) for c in as_list(status(pg).get("conditions"))]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _let_go(table: dict[str, Any]) -> None:
    """Empty ``table`` a few thousand entries at a time, giving way to requests between: the
    rows of a first write (every object of the cluster) freed at once hold the interpreter
    for tens of milliseconds."""
    while table:
        REQUESTS.give_way()
        for _ in range(min(len(table), 2000)):
            table.popitem()


def _transition_time(t: TransitionRow) -> datetime:
    """When a transition happened: the object's own time where it carries one, else when seen."""
    return t.object_time or t.seen_at


class Recorder:
    def __init__(
        self,
        cache: ClusterCache,
        using: str = "default",
        options: RecorderOptions | None = None,
        clock: Callable[[], datetime] = utcnow,
        elector: Elector | None = None,
    ):
        self.cache = cache
        self.using = using
        self.options = options or RecorderOptions()
        self.clock = clock
        self.elector = elector or Elector()
        self._changes: queue.Queue[Change] = queue.Queue(maxsize=self.options.queue_size)
        self._transitions: dict[str, TransitionRow] = {}
        self._pods: dict[str, _PodChange] = {}  # by uid
        self._pod_queue: dict[str, str] = {}  # uid -> the queue last known for a live pod
        # {"podgroups" | "jobs": {(namespace, name): queue}} from the changes seen (_remember_queue).
        self._queues: dict[str, dict[tuple[str, str], str]] = {"podgroups": {}, "jobs": {}}
        self._snap: Snapshot | None = None
        self._samples: list[SampleRow] = []
        self._phase_samples: list[PhaseSampleRow] = []
        self._status = RecorderStatus(state="starting", since=clock())
        self._lock = threading.Lock()  # guards _status
        self._active = False
        self._schema_ready = False
        self._next_flush = 0.0
        self._retry_at = 0.0
        self._backoff = 0.0
        self._next_prune: datetime | None = None
        self._last_sample: datetime | None = None
        self._rolled: datetime | None = None  # hours before this one have their hourly means
        # The pod cache's synced_at (and the dropped count) when the open rows were last checked
        # against it; None: not since this recorder began writing.
        self._pods_checked: tuple[datetime | None, int] | None = None
        self._next_touch: datetime | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the cache's side ------------------------------------------------------------------
    def listener(self, kind: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
        """Hand one store change to the recorder (called with a store's lock held: never blocks)."""
        if kind not in _RECORDED_KINDS or not self._active:
            return
        try:
            self._changes.put_nowait((kind, before, after, self.clock()))
        except queue.Full:
            with self._lock:
                self._status = replace(self._status, dropped=self._status.dropped + 1)

    # -- status ----------------------------------------------------------------------------
    def status(self) -> RecorderStatus:
        with self._lock:
            return replace(self._status, last_sample=self._last_sample)

    def _set_state(self, state: str, error: str = "") -> None:
        with self._lock:
            old = self._status
            since = old.since if old.state == state else self.clock()
            self._status = replace(old, state=state, since=since, error=error)

    # -- the thread ------------------------------------------------------------------------
    def start(self) -> Recorder:
        self.cache.add_listener(self.listener)
        self._thread = threading.Thread(target=self._run, name="history-recorder", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.cache.remove_listener(self.listener)
        if self._thread is not None:
            self._thread.join(timeout)
        self._set_state("stopped")

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.step()
                self._stop.wait(self.options.tick_seconds)
            if self._active:
                self.step(force_flush=True)
                self.elector.release()
        finally:
            connections[self.using].close()

    def step(self, force_flush: bool = False) -> None:
        """One round: leadership, schema, the queued changes, a sample when due, a write when due,
        pruning when due. Tests call it directly."""
        try:
            self._step(force_flush)
        except Exception as exc:  # never let the thread die: history degrades, the pages stay up
            log.exception("history recorder step failed")
            self._set_state("degraded", error=str(exc) or exc.__class__.__name__)

    def _step(self, force_flush: bool) -> None:
        leading = self.elector.leading()
        if not leading:
            if self._active:
                self._deactivate()
            self._set_state("standby")
            return
        if not self._active:
            self._activate()
        now_wall = time.monotonic()
        if not self._schema_ready and now_wall >= self._retry_at and not self._ensure_schema():
            return
        self._drain()
        now = self.clock()
        if self._last_sample is None or now - self._last_sample >= timedelta(
            seconds=self.options.sample_seconds
        ):
            self._sample(now)
        if (
            self._schema_ready
            and (force_flush or now_wall >= self._next_flush)
            and now_wall >= self._retry_at
        ):
            self._next_flush = now_wall + self.options.flush_seconds
            if not self._flush():
                return
            self._roll(now)
            if self._next_prune is None or now >= self._next_prune:
                self._prune(now)

    def _activate(self) -> None:
        """Begin recording: the changes from now on, and the current state of every object (a
        transition seen again is one row; a pod's row is rewritten with the same facts)."""
        self._active = True
        self._last_sample = None if self.options.sample_on_start else self.clock()
        self._rolled = None
        self._pods_checked = None
        self._next_touch = None
        snap = self.cache.snapshot()
        seen = self.clock()
        for kind, view in (("jobs", snap.jobs), ("podgroups", snap.podgroups), ("pods", snap.pods)):
            for obj in REQUESTS.pace(view.all(), every=32):
                self._record(kind, None, obj, seen, snap)

    def _deactivate(self) -> None:
        self._active = False
        while True:
            try:
                self._changes.get_nowait()
            except queue.Empty:
                break
        self._transitions.clear()
        self._pods.clear()
        for queues in self._queues.values():
            queues.clear()
        self._samples.clear()
        self._phase_samples.clear()

    def _ensure_schema(self) -> bool:
        from django.core.management import call_command

        try:
            call_command("migrate", "history", database=self.using, verbosity=0, interactive=False)
        except Exception as exc:
            self._failed(exc)
            return False
        self._schema_ready = True
        return True

    # -- changes into rows -----------------------------------------------------------------
    def _drain(self) -> None:
        self._snap = None  # taken by the first change that needs one (_pod_queue_of)
        for _ in range(self.options.queue_size):
            try:
                kind, before, after, seen = self._changes.get_nowait()
            except queue.Empty:
                break
            REQUESTS.give_way()
            try:
                self._record(kind, before, after, seen, None)
            except Exception:  # one odd object costs its own row, never the others'
                log.exception("history: a %s change could not be recorded", kind)
        self._snap = None

    def _record(
        self,
        kind: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        seen: datetime,
        snap: Snapshot | None,
    ) -> None:
        """One change into rows. ``snap``: the view to read a pod's PodGroup or Job from when
        the changes seen do not name its queue (None: a snapshot is taken only then)."""
        if kind == "pods":
            self._record_pod(before, after, seen, snap)
            return
        self._remember_queue(kind, before, after)
        if after is not None:
            read, since, label = (
                (job_phase, job_phase_since, "Job")
                if kind == "jobs"
                else (podgroup_phase, _podgroup_since, "PodGroup")
            )
            phase = read(after)
            previous = read(before) if before is not None else ""
            if phase and phase != previous:
                self._transition(label, after, phase, previous, since(after), seen, first=before is None)

    def _transition(
        self,
        kind: str,
        obj: dict[str, Any],
        phase: str,
        previous: str,
        object_time: datetime | None,
        seen: datetime,
        first: bool,
    ) -> None:
        # Keyed by the object's own transition time, so a restart's re-list adds no row; without
        # one, a change seen on the watch is keyed by when it was seen (a list's sight by none).
        if object_time is not None:
            stamp = object_time.isoformat()
        else:
            stamp = "" if first else "@" + seen.isoformat()
        key = f"{kind}|{uid(obj)}|{phase}|{stamp}"[:320]
        self._transitions[key] = TransitionRow(
            kind=kind,
            key=key,
            uid=uid(obj),
            namespace=namespace(obj),
            name=name(obj),
            queue=queue_of(obj),
            phase=phase,
            previous=previous,
            seen_at=seen,
            object_time=object_time,
            created=parse_time(meta(obj).get("creationTimestamp")),
        )

    def _remember_queue(self, kind: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
        """Keep the queue of every PodGroup and Job from the changes handed over, so a pod's
        queue is read without a cache snapshot (each one publishes the stores it reads, and the
        next watch event then copies what changed)."""
        queues = self._queues.get(kind)
        obj = after if after is not None else before
        if queues is None or obj is None:
            return
        key = (namespace(obj), name(obj))
        if after is None:
            queues.pop(key, None)
        else:
            queues[key] = queue_of(after)

    def _pod_queue_of(self, pod: dict[str, Any], snap: Snapshot | None) -> str:
        """The queue of ``pod``'s PodGroup, else of its Job: from the changes seen, else the
        queue last known for the pod (its PodGroup and Job may go first: a Job's deletion), else
        from ``snap`` or a snapshot (a change the full queue dropped, or one not seen yet)."""
        ns = namespace(pod)
        group = pod_group_name(pod)
        job_name = pod_job_name(pod)
        if group and (ns, group) in self._queues["podgroups"]:
            return self._queues["podgroups"][(ns, group)]
        if job_name and (ns, job_name) in self._queues["jobs"]:
            return self._queues["jobs"][(ns, job_name)]
        known = self._pod_queue.get(uid(pod))
        if known:
            return known
        if snap is None:
            snap = self._snap = self._snap or self.cache.snapshot()
        pg = snap.podgroups.get(ns, group) if group else None
        if pg is not None:
            return queue_of(pg)
        job = snap.jobs.get(ns, job_name) if job_name else None
        return queue_of(job) if job is not None else ""

    def _record_pod(
        self,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        seen: datetime,
        snap: Snapshot | None,
    ) -> None:
        pod = after if after is not None else before
        if pod is None:
            return
        key = uid(pod)
        if not key:
            return
        times = None
        if after is not None and before is not None:
            unchanged, times = self._compare(key, before, after)
            if unchanged:
                return
        queue_name = self._pod_queue_of(pod, snap)
        if after is None:
            self._pod_queue.pop(key, None)
        elif queue_name:
            self._pod_queue[key] = queue_name
        self._pods[key] = _PodChange(pod, queue_name, seen, deleted=after is None, times=times)

    def _compare(
        self, key: str, before: dict[str, Any], after: dict[str, Any]
    ) -> tuple[bool, PodTimes | None]:
        """(Whether a pod's update changes nothing its row holds but ``last_seen``: its queue
        known, the same phase, node and times; ``pod_times(after)`` when it was read.) The
        cheap tests first: most updates change the phase or the node. (The times are compared
        as read, not the fields they are read from: JSON ``true`` equals 1 in Python, not as a
        count.)"""
        if (
            key not in self._pod_queue
            or status(before).get("phase") != status(after).get("phase")
            or spec(before).get("nodeName") != spec(after).get("nodeName")
        ):
            return False, None
        times = pod_times(after)
        return pod_times(before) == times, times

    def _sample(self, now: datetime) -> None:
        REQUESTS.give_way()
        snap = self.cache.snapshot()
        # Unknown is never recorded as zero: only a synced view of queues and PodGroups is sampled.
        if not (snap.queues.state.name == "synced" and snap.podgroups.state.name == "synced"):
            return
        self._last_sample = now
        queues = snap.queues.all()
        # Every resource some Queue names, for every Queue: a queue with none of it allocated
        # records 0, so its series has no gap (and an hourly mean no inflation) while it is idle;
        # one whose status states no allocation at all records None (unknown, a gap).
        # The snapshot never changes: giving way to requests between queues changes no sample.
        names = set().union(*(queue_resources(q) for q in REQUESTS.pace(queues, every=50)))
        for q in REQUESTS.pace(queues, every=2):
            qname = name(q)
            for res, amounts in queue_amounts(q, names).items():
                values = {k: (float(v) if v is not None else None) for k, v in amounts.items()}
                self._samples.append(SampleRow(at=now, queue=qname, resource=res, **values))
            counts: dict[str, int] = {}
            for pg in REQUESTS.pace(snap.podgroups_in_queue(qname), every=500):
                phase = podgroup_phase(pg) or "Pending"
                counts[phase] = counts.get(phase, 0) + 1
            for phase, n in counts.items():
                self._phase_samples.append(PhaseSampleRow(at=now, queue=qname, phase=phase, count=n))

    # -- writing ---------------------------------------------------------------------------
    def _pending(self) -> int:
        return len(self._transitions) + len(self._pods) + len(self._samples) + len(self._phase_samples)

    def _pod_upkeep(self) -> tuple[set[str] | None, tuple[datetime | None, int] | None, datetime | None]:
        """What this write does to the open pod rows: (the uids the pod cache holds, to close the
        others; None: no check due), the check's mark, and the time to refresh the open rows'
        last_seen with (None: not due). Both need a synced pod cache."""
        # The store's state, not a snapshot of the pods (which would publish them; see _remember_queue).
        state = self.cache.store("pods").state
        if state.name != "synced":
            return None, None, None
        with self._lock:
            mark = (state.synced_at, self._status.dropped)
        live = None
        if mark != self._pods_checked:
            REQUESTS.give_way()
            pods = self.cache.snapshot().pods  # its state and objects agree (the store's may be newer)
            if pods.state.name != "synced":
                return None, None, None
            with self._lock:
                mark = (pods.state.synced_at, self._status.dropped)
            # A snapshot's view never changes: giving way to requests changes no uid.
            live = {uid(p) for p in REQUESTS.pace(pods.values(), every=500)}
        now = self.clock()
        touch = now if self._next_touch is None or now >= self._next_touch else None
        return live, mark, touch

    def _close_unseen(self, live: set[str]) -> int:
        """Close the open pod rows whose uid is not in ``live`` (see the module docstring)."""
        pods = PodLifetime.objects.using(self.using)
        REQUESTS.give_way()
        open_uids = pods.filter(deleted=None).values_list("uid", flat=True).iterator(chunk_size=500)
        gone = [u for u in REQUESTS.pace(open_uids, every=250) if u not in live]
        for i in range(0, len(gone), 500):
            REQUESTS.give_way()
            pods.filter(uid__in=gone[i : i + 500]).update(deleted=F("last_seen"), vanished=True)
        return len(gone)

    def close_unseen(self, live: set[str]) -> int:
        """Close the open pod rows whose uid is not in ``live``, now; returns how many."""
        with transaction.atomic(using=self.using):
            return self._close_unseen(live)

    def _pod_rows(self) -> Iterator[PodRow]:
        """The rows of the pods changed since the last write, built as they are read (a pod
        whose row cannot be built is dropped, as a change that cannot be recorded: one odd
        object costs its own row)."""
        for key, change in REQUESTS.pace(list(self._pods.items()), every=8):
            try:
                row = _pod_row(change)
            except Exception:
                log.exception("history: the row of pod %s could not be built", key)
                del self._pods[key]
                continue
            yield row

    def _flush(self) -> bool:
        transitions = list(self._transitions.values())
        samples, phase_samples = self._samples, self._phase_samples
        live, mark, touch = self._pod_upkeep()
        if not (transitions or self._pods or samples or phase_samples or live is not None or touch):
            self._recovered()
            return True
        try:
            # The writes give way to requests between their batches (inserts.py), inside the
            # transaction: it stays open that much longer, which holds up no reader (SQLite in
            # WAL mode, PostgreSQL) and no other writer (the recorder is the one writer).
            with transaction.atomic(using=self.using):
                admissions = self._admissions(transitions)
                _TRANSITIONS.write(self.using, transitions)
                _ADMISSIONS.write(self.using, admissions)
                # A closed day's rollup is the day's rows as they are (rollup.py's docstring):
                # only the Queues that gained a row on it are rolled again.
                today = self.clock().astimezone(UTC).date()
                late: dict[date, set[str]] = {}
                for a in admissions:
                    if a.day < today:
                        late.setdefault(a.day, set()).add(a.queue)
                for day, queues in late.items():
                    rollup.roll_waits(self.using, [day], queues)
                pods = _PODS.write(self.using, self._pod_rows())
                _SAMPLES.write(self.using, samples)
                _PHASE_SAMPLES.write(self.using, phase_samples)
                # After the upserts: a row just written for a pod the cache no longer holds is closed.
                if live is not None:
                    self._close_unseen(live)
                if touch is not None:
                    REQUESTS.give_way()
                    PodLifetime.objects.using(self.using).filter(deleted=None).update(last_seen=touch)
        except Exception as exc:
            self._failed(exc)
            self._bound_pending()
            return False
        written = len(transitions) + pods + len(samples) + len(phase_samples)
        del transitions  # freed with the table below
        done = (self._transitions, self._pods)
        self._transitions, self._pods, self._samples, self._phase_samples = {}, {}, [], []
        for table in done:
            _let_go(table)
        if mark is not None:
            self._pods_checked = mark
        if touch is not None:
            self._next_touch = touch + timedelta(seconds=self.options.sample_seconds)
        with self._lock:
            self._status = replace(
                self._status, written=self._status.written + written, last_write=self.clock()
            )
        self._recovered()
        return True

    def _admissions(self, transitions: list[TransitionRow]) -> list[AdmissionRow]:
        """The admissions of the PodGroups ``transitions`` sees start Running that have none
        recorded yet: each from the PodGroup's first Running and first Inqueue, of this batch
        or recorded before (read by namespace and name, the transitions' index)."""
        runs: dict[str, TransitionRow] = {}
        inqueue: dict[str, datetime] = {}
        for t in REQUESTS.pace(transitions, every=500):
            if t.kind != "PodGroup":
                continue
            at = _transition_time(t)
            if t.phase == "Running" and (t.uid not in runs or at < _transition_time(runs[t.uid])):
                runs[t.uid] = t
            elif t.phase == "Inqueue":
                inqueue[t.uid] = min(at, inqueue.get(t.uid, at))
        uids = sorted(runs)
        known: set[str] = set()
        for k in range(0, len(uids), 100):
            REQUESTS.give_way()
            rows = Admission.objects.using(self.using).filter(uid__in=uids[k : k + 100])
            known.update(rows.values_list("uid", flat=True))
        new = [runs[u] for u in uids if u not in known]
        for k in range(0, len(new), 100):
            REQUESTS.give_way()
            batch = new[k : k + 100]
            # The rows of these PodGroups: namespace, name and uid each among theirs (the index
            # narrows by the first two), then exactly theirs.
            wanted = {(t.namespace, t.name, t.uid) for t in batch}
            earlier = (
                PhaseTransition.objects.using(self.using)
                .filter(
                    kind="PodGroup",
                    phase="Inqueue",
                    namespace__in=sorted({t.namespace for t in batch}),
                    name__in=sorted({t.name for t in batch}),
                    uid__in=sorted({t.uid for t in batch}),
                )
                .values_list("namespace", "name", "uid", Coalesce("object_time", "seen_at"))
            )
            for ns, pg_name, u, at in earlier:
                if (ns, pg_name, u) in wanted:
                    inqueue[u] = min(at, inqueue.get(u, at))
        out = []
        for t in REQUESTS.pace(new, every=200):
            running = _transition_time(t)
            wait = admission_wait(t.created, inqueue.get(t.uid), running)
            out.append(
                AdmissionRow(
                    uid=t.uid,
                    queue=t.queue,
                    namespace=t.namespace,
                    name=t.name,
                    running=running,
                    day=running.astimezone(UTC).date(),
                    wait=wait.total_seconds() if wait is not None else None,
                )
            )
        return out

    def _recovered(self) -> None:
        self._backoff = 0.0
        self._set_state("recording")

    def _failed(self, exc: Exception) -> None:
        if not isinstance(exc, DatabaseError | OSError):
            log.exception("history write failed")
        else:
            log.warning("history database failed: %s", exc)
        self._backoff = min(30.0, max(0.5, self._backoff * 2))
        self._retry_at = time.monotonic() + self._backoff
        try:
            connections[self.using].close()
        except Exception:  # the connection is broken already; a new one is opened on retry
            log.debug("closing the failed history connection", exc_info=True)
        self._set_state("degraded", error=str(exc).strip() or exc.__class__.__name__)

    def _bound_pending(self) -> None:
        """Keep at most pending_max rows for a database that does not answer: samples go first
        (the oldest), then transitions and pods in arrival order."""
        excess = self._pending() - self.options.pending_max
        if excess <= 0:
            return
        lost = 0
        for rows in (self._phase_samples, self._samples):
            cut = min(excess - lost, len(rows))
            del rows[:cut]
            lost += cut
        for table in (self._transitions, self._pods):
            while lost < excess and table:
                del table[next(iter(table))]  # type: ignore[attr-defined]
                lost += 1
        with self._lock:
            self._status = replace(self._status, lost=self._status.lost + lost)

    def _roll(self, now: datetime) -> None:
        """The hourly means of every hour closed since the last one rolled (dashboard/history/rollup.py)."""
        closed = rollup.hour_of(now)
        if self._rolled is not None and self._rolled >= closed:
            return
        REQUESTS.give_way()
        try:
            start = self._rolled
            if start is None:
                start = rollup.first_unrolled(self.using, now - timedelta(days=self.options.retention_days))
            if start is not None:
                rollup.roll(self.using, start, closed)
        except Exception as exc:
            self._failed(exc)
            return
        self._rolled = closed

    def _prune(self, now: datetime) -> None:
        cutoff = now - timedelta(days=self.options.retention_days)
        cut_day = cutoff.astimezone(UTC).date()
        # Kept for the windows that read them (rollup.FIVE_MINUTE_KEEP), not the retention.
        recent = max(cutoff, now - rollup.FIVE_MINUTE_KEEP)
        u = self.using
        try:
            with transaction.atomic(using=u):
                for old in (
                    PhaseTransition.objects.using(u).filter(seen_at__lt=cutoff),
                    Admission.objects.using(u).filter(running__lt=cutoff),
                    PodLifetime.objects.using(u).filter(Q(deleted__lt=cutoff) | Q(finished__lt=cutoff)),
                    QueueSample.objects.using(u).filter(at__lt=cutoff),
                    QueuePhaseSample.objects.using(u).filter(at__lt=cutoff),
                    QueueHourly.objects.using(u).filter(hour__lt=cutoff),
                    QueuePhaseHourly.objects.using(u).filter(hour__lt=cutoff),
                    AdmissionDaily.objects.using(u).filter(day__lt=cut_day),
                ):
                    REQUESTS.give_way()
                    old.delete()
                rolled = rollup.waits_rolled_until(u)
                if rolled is not None and cut_day < rolled:  # its rows before the cutoff are gone
                    rollup.roll_waits(u, [cut_day])
                for old_means in (
                    QueueFiveMinute.objects.using(u).filter(at__lt=recent),
                    QueuePhaseFiveMinute.objects.using(u).filter(at__lt=recent),
                ):
                    REQUESTS.give_way()
                    old_means.delete()
        except Exception as exc:
            self._failed(exc)
            return
        self._next_prune = now + timedelta(seconds=self.options.prune_seconds)
