"""A day of history for the demo: a simulated cluster run forward through the recorder.

``fast_forward`` starts a simulated cluster with the demo scenario ``hours`` before ``end``, mirrors
every change of its store into an in-memory ClusterCache (the recorder's usual input, without
HTTP) and advances its clock to ``end`` a minute at a time, recording transitions, pod lifetimes
and queue samples as a dashboard watching it would have. About 12 s of CPU per simulated hour.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.kube.cache import ClusterCache

# The simulator's kinds (group, plural) the recorder reads, by the cache's kind names.
_MIRRORED = {
    ("batch.volcano.sh", "jobs"): "jobs",
    ("scheduling.volcano.sh", "podgroups"): "podgroups",
    ("scheduling.volcano.sh", "queues"): "queues",
    ("", "pods"): "pods",
}


def fast_forward(
    using: str, end: datetime, hours: float = 24.0, seed: int = 0, sample_seconds: float = 60.0
) -> int:
    """Record ``hours`` of the demo scenario ending at ``end`` into database ``using``; returns
    the rows written."""
    from dashboard.sim.cluster import SimulatedCluster

    cluster = SimulatedCluster(
        seed=seed, scenario="demo", controllers=True, start_time=end - timedelta(hours=hours)
    )
    cache = ClusterCache()
    for name in ("jobs", "podgroups", "queues", "pods", "events"):
        cache.store(name).set_state("synced")

    def mirror(event_type: str, kind: Any, obj: dict[str, Any]) -> None:
        name = _MIRRORED.get((kind.group, kind.plural))
        if name is None:
            return
        store = cache.store(name)
        if event_type == "DELETED":
            store.delete(obj)
        else:
            store.upsert(obj)

    from dashboard.sim.kinds import JOB, POD, PODGROUP, QUEUE

    for kind in (QUEUE, JOB, PODGROUP, POD):
        for obj in cluster.store.list(kind)[0]:
            mirror("ADDED", kind, obj)
    cluster.store.add_listener(mirror)
    options = RecorderOptions(sample_seconds=sample_seconds, flush_seconds=0, retention_days=3660)
    recorder = Recorder(cache, using, options, clock=cluster.clock.now)
    cache.add_listener(recorder.listener)
    recorder.step()
    while cluster.clock.now() < end:
        cluster.advance(min(sample_seconds, (end - cluster.clock.now()).total_seconds()))
        recorder.step()
    recorder.step(force_flush=True)
    cache.remove_listener(recorder.listener)
    cluster.store.remove_listener(mirror)
    return recorder.status().written
