"""The records of deleted pods of Volcano Jobs the cache keeps (``volcano.podrecords.PodRecord``).

Bounded three ways: records older than ``retention`` seconds go (checked on every write and
publication), then the oldest go while there are more than ``max_records`` or their estimated
size (``record_size``) passes ``max_bytes``. Readers get an immutable mapping
{(namespace, job name): tuple of records, oldest deletion first}, re-built only after a change.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from dashboard.kube.store import utcnow
from dashboard.volcano.podrecords import PodRecord, pod_record, record_size

JobKey = tuple[str, str]
_EMPTY: Mapping[JobKey, tuple[PodRecord, ...]] = MappingProxyType({})


class DeletedPods:
    """Writer: ``add(pod)`` after a pod left the cache. Reader: ``view()``."""

    def __init__(
        self,
        retention: float = 86400.0,
        max_records: int = 10000,
        max_bytes: int = 16 * 1024 * 1024,
        clock: Callable[[], datetime] | None = None,
    ):
        self.retention = timedelta(seconds=retention)
        self.max_records = max_records
        self.max_bytes = max_bytes
        self._clock = clock or utcnow
        self._lock = threading.Lock()
        # (namespace, pod name, uid) -> (record, size), in order of deletion.
        self._records: OrderedDict[tuple[str, str, str], tuple[PodRecord, int]] = OrderedDict()
        self.bytes = 0
        self.dropped = 0
        self._view: Mapping[JobKey, tuple[PodRecord, ...]] | None = _EMPTY

    def __len__(self) -> int:
        return len(self._records)

    def add(self, pod: Mapping[str, Any]) -> bool:
        """Record ``pod`` (its last known state) if it is a pod of a Volcano Job."""
        if not self.retention or not self.max_records:
            return False
        record = pod_record(pod, self._clock())
        if record is None:
            return False
        key = (record.namespace, record.name, record.uid)
        size = record_size(record)
        with self._lock:
            old = self._records.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._records[key] = (record, size)
            self.bytes += size
            self._prune(record.deleted_at)
            self._view = None
        return True

    def _prune(self, now: datetime) -> bool:
        limit = now - self.retention
        dropped = 0
        while self._records:
            record, size = next(iter(self._records.values()))
            if (
                record.deleted_at > limit
                and len(self._records) <= self.max_records
                and (self.bytes <= self.max_bytes)
            ):
                break
            self._records.popitem(last=False)
            self.bytes -= size
            dropped += 1
        self.dropped += dropped
        return bool(dropped)

    def view(self) -> Mapping[JobKey, tuple[PodRecord, ...]]:
        """{(namespace, job): records oldest first}: shared and read-only."""
        with self._lock:
            if self._prune(self._clock()) or self._view is None:
                by_job: dict[JobKey, list[PodRecord]] = {}
                for record, _size in self._records.values():
                    by_job.setdefault((record.namespace, record.job), []).append(record)
                self._view = MappingProxyType({k: tuple(v) for k, v in by_job.items()})
            return self._view
