"""A day of history for the demo: a simulated cluster run forward through the recorder.

``fast_forward`` starts a simulated cluster with the demo scenario ``hours`` before ``end``, mirrors
every change of its store into an in-memory ClusterCache (the recorder's usual input, without
HTTP) and advances its clock to ``end`` a minute at a time, recording transitions, pod lifetimes
and queue samples as a dashboard watching it would have. The simulator runs in ``tick_seconds``
steps (its default is 1 s): timers and pod lifecycles land on that grid, which a chart of minute
samples does not show, at about half the CPU. Progress is kept in a HistoryFill row, so pages can
say how much of the window is there yet.
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
    using: str,
    end: datetime,
    hours: float = 24.0,
    seed: int = 0,
    sample_seconds: float = 60.0,
    tick_seconds: float = 10.0,
) -> int:
    """Record ``hours`` of the demo scenario ending at ``end`` into database ``using``; returns
    the rows written."""
    from dashboard.history.models import HistoryFill
    from dashboard.sim.cluster import SimulatedCluster

    start = end - timedelta(hours=hours)
    cluster = SimulatedCluster(seed=seed, scenario="demo", controllers=True, start_time=start)
    if cluster.controllers is not None:
        cluster.controllers.tick = float(tick_seconds)
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
    fill = HistoryFill.objects.using(using).create(start=start, end=end, reached=start)
    while cluster.clock.now() < end:
        cluster.advance(min(sample_seconds, (end - cluster.clock.now()).total_seconds()))
        recorder.step()
        if cluster.clock.now() - fill.reached >= timedelta(minutes=10):
            fill.reached = cluster.clock.now()
            fill.save(update_fields=["reached"])
    recorder.step(force_flush=True)
    fill.reached, fill.done = end, True
    fill.save(update_fields=["reached", "done"])
    cache.remove_listener(recorder.listener)
    cluster.store.remove_listener(mirror)
    return recorder.status().written
