"""The CronJobs store: remembers when it saw each CronJob suspended and resumed.

A CronJob keeps only its current ``spec.suspend``; which scheduled times fell while it was
suspended (skipped on purpose, not missed) is known only to whoever watched it. The times are the
pages' clock (``presenters.clock.reference_now``: the cluster's clock where one is configured) when
the change arrived.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from dashboard.kube.store import Key, KindStore
from dashboard.presenters.clock import reference_now
from dashboard.volcano.cronjobs import Suspension, suspended


class CronJobStore(KindStore):
    """``suspensions`` {(namespace, name): tuple of Suspension, oldest first}, the newest
    SUSPENSIONS_KEPT per CronJob until it goes; read without a lock (the writer replaces a tuple,
    never changes one)."""

    SUSPENSIONS_KEPT = 8

    def __init__(self, spec: Any, clock: Callable[[], datetime] | None = None, **kw: Any):
        super().__init__(spec, **kw)
        self._clock = clock or reference_now
        self.suspensions: dict[Key, tuple[Suspension, ...]] = {}

    def _put(self, key: Key, obj: dict[str, Any]) -> bool:
        old = self._objects.get(key)
        changed = super()._put(key, obj)
        if not changed:
            return changed
        was, now_suspended = old is not None and suspended(old), suspended(obj)
        kept = self.suspensions.get(key, ())
        if now_suspended and (old is None or not was):
            at = self._clock()
            kept = (*kept, Suspension(None if old is None else at, None, at))
        elif was and not now_suspended and kept and kept[-1].end is None:
            kept = (*kept[:-1], Suspension(kept[-1].start, self._clock(), kept[-1].seen))
        else:
            return changed
        self.suspensions[key] = kept[-self.SUSPENSIONS_KEPT :]
        return changed

    def _remove(self, key: Key, final: dict[str, Any] | None = None, deleted: bool = True) -> bool:
        removed = super()._remove(key, final, deleted)
        if removed:
            self.suspensions.pop(key, None)
        return removed
