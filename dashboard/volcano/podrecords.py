"""The final state of a deleted pod of a Volcano Job, kept after the pod is gone.

Volcano's job controller deletes a Job's pods when it restarts the Job (RestartJob) or kills
it (AbortJob, TerminateJob, and on the way to Failed); the exit codes that explain the failure
leave with them. A ``PodRecord`` is the small part of a pod
that explains how it ended: name, task, phase, node, resource requests, and for each container its
last termination (``state.terminated``, else ``lastState.terminated``: ContainerStateTerminated's
reason, exitCode, signal, message, startedAt, finishedAt).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.volcano.gang import pod_template_requests
from dashboard.volcano.objects import as_dict, as_list, as_str, meta, name, namespace, spec, status, uid
from dashboard.volcano.pods import exit_status, pod_job_name, pod_task, restart_count
from dashboard.volcano.quantities import plain_decimal
from dashboard.volcano.time import parse_time

#: Characters of a termination message a record keeps (the kubelet allows 4096 bytes).
MESSAGE_CHARS = 1024


@dataclass(frozen=True, slots=True)
class ContainerEnd:
    """How one container last ended. ``exit_code``/``signal`` as written ("" when unset);
    ``previous``: read from ``lastState`` (the container restarted since); ``restarts`` its
    restartCount."""

    container: str
    reason: str
    exit_code: str
    signal: str
    message: str
    started: datetime | None
    finished: datetime | None
    previous: bool
    restarts: int

    @property
    def failed(self) -> bool:
        """A non-zero exit code, or a reason other than Completed."""
        return self.exit_code not in ("", "0") or self.reason not in ("", "Completed")


def container_ends(pod: object, message_chars: int | None = None) -> list[ContainerEnd]:
    """The last termination of every container and init container of ``pod`` that has one: the
    current ``state.terminated`` when there is one, else ``lastState.terminated``. ``message_chars``
    cuts the messages (None: as written)."""
    found: list[ContainerEnd] = []
    st = status(pod)
    for cs in as_list(st.get("containerStatuses")) + as_list(st.get("initContainerStatuses")):
        cs = as_dict(cs)
        for key, previous in (("state", False), ("lastState", True)):
            term = as_dict(as_dict(cs.get(key)).get("terminated"))
            if not term:
                continue
            code, signal = exit_status(term) or ("", "")
            message = as_str(term.get("message"))
            if message_chars is not None:
                message = message[:message_chars]
            found.append(
                ContainerEnd(
                    container=as_str(cs.get("name")),
                    reason=as_str(term.get("reason")),
                    exit_code=code,
                    signal=signal,
                    message=message,
                    started=parse_time(term.get("startedAt")),
                    finished=parse_time(term.get("finishedAt")),
                    previous=previous,
                    restarts=restart_count(cs),
                )
            )
            break
    return found


@dataclass(frozen=True, slots=True)
class PodRecord:
    """A deleted pod of Volcano Job ``job`` (in ``namespace``). ``deleted_at``: when the cache saw
    it go (its clock); ``requests``: (resource, amount) pairs as the scheduler counts them."""

    namespace: str
    name: str
    uid: str
    job: str
    task: str
    phase: str
    node: str
    created: datetime | None
    started: datetime | None
    deleted_at: datetime
    requests: tuple[tuple[str, str], ...]
    containers: tuple[ContainerEnd, ...]

    @property
    def failed(self) -> tuple[ContainerEnd, ...]:
        return tuple(c for c in self.containers if c.failed)


def pod_record(pod: Mapping[str, Any], deleted_at: datetime) -> PodRecord | None:
    """The record of ``pod``, or None when it is not a pod of a Volcano Job."""
    job = pod_job_name(pod)
    if not job:
        return None
    requests = tuple(
        sorted((res, plain_decimal(amount)) for res, amount in pod_template_requests(pod).items())
    )
    return PodRecord(
        namespace=sys.intern(namespace(pod)),
        name=name(pod),
        uid=uid(pod),
        job=sys.intern(job),
        task=sys.intern(pod_task(pod)),
        phase=sys.intern(as_str(status(pod).get("phase"))),
        node=sys.intern(as_str(spec(pod).get("nodeName"))),
        created=parse_time(meta(pod).get("creationTimestamp")),
        started=parse_time(status(pod).get("startTime")),
        deleted_at=deleted_at,
        requests=requests,
        containers=tuple(container_ends(pod, MESSAGE_CHARS)),
    )


def record_size(record: PodRecord) -> int:
    """An estimate of the bytes ``record`` holds (its strings, tuples and datetimes), for the
    byte bound of the records kept; about 10 % above tracemalloc's figure for a pod with two
    containers (bench/pod_records.py)."""
    size = 400 + len(record.name) + len(record.uid) + 60 * len(record.requests)
    for c in record.containers:
        size += 250 + len(c.container) + len(c.reason) + len(c.message)
    return size


def records_by_name(records: Sequence[PodRecord]) -> list[PodRecord]:
    """Newest deletion first per name (a pod name recurs after a Job restart), sorted by name."""
    return sorted(records, key=lambda r: (r.name, -r.deleted_at.timestamp()))
