"""A day of history for the demo: a simulated cluster run forward through the recorder.

``fast_forward`` starts a simulated cluster with the demo scenario ``hours`` before ``end``, mirrors
every change of its store into an in-memory ClusterCache (the recorder's usual input, without
HTTP) and advances its clock to ``end`` a minute at a time, recording transitions, pod lifetimes
and queue samples as a dashboard watching it would have.

What it skips is what the recorder does not read (docs/benchmarks.md has the measurement): the
simulator's Kubernetes Events (capped at 0 per object) and the cache's records of deleted pods.
The simulator runs in ``tick_seconds`` steps (its default is 1 s): timers and pod lifecycles land
on that grid, which a chart of minute samples does not show. The recorder writes every
``flush_minutes`` of simulated time, so a pod's row is written once per flush rather than at each
of its changes. Progress is kept in a HistoryFill row (pages say how much of the window is there
yet) and told to ``progress(hours done, hours in all)``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.kube.cache import CacheOptions, ClusterCache

# The simulator's kinds (group, plural) the recorder reads, by the cache's kind names.
_MIRRORED = {
    ("batch.volcano.sh", "jobs"): "jobs",
    ("scheduling.volcano.sh", "podgroups"): "podgroups",
    ("scheduling.volcano.sh", "queues"): "queues",
    ("", "pods"): "pods",
}


# Mixed into the recorded past's uids: the demo's live cluster starts from the same scenario and
# seed, and its objects are other objects than the past's (a wait recorded for one uid must not
# be read as the wait of a live Job that happens to get the same uid).
PAST_UID_SALT = 0x7061_7374_6461_7900_0000_0000_0000_0001


def demo_cluster(start: datetime, seed: int, tick_seconds: float) -> Any:
    """The demo scenario's simulated cluster from ``start``, stepping ``tick_seconds``, without
    Kubernetes Events (the recorder reads none); its uids are not the live demo's."""
    from dashboard.sim.cluster import SimulatedCluster

    cluster = SimulatedCluster(
        seed=seed, scenario="demo", controllers=True, start_time=start, uid_salt=PAST_UID_SALT
    )
    cluster.controllers.tick = float(tick_seconds)
    cluster.controllers.events.per_object_cap = 0
    return cluster


def mirrored_cache(cluster: Any) -> tuple[ClusterCache, Callable[..., None]]:
    """A synced in-memory cache holding ``cluster``'s Jobs, PodGroups, Queues and pods, and the
    store listener that keeps it current (added to the cluster's store)."""
    from dashboard.sim.kinds import JOB, POD, PODGROUP, QUEUE

    cache = ClusterCache(options=CacheOptions(pod_record_seconds=0))
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

    for kind in (QUEUE, JOB, PODGROUP, POD):
        for obj in cluster.store.list(kind)[0]:
            mirror("ADDED", kind, obj)
    cluster.store.add_listener(mirror)
    return cache, mirror


def fast_forward(
    using: str,
    end: datetime,
    hours: float = 24.0,
    seed: int = 0,
    sample_seconds: float = 60.0,
    tick_seconds: float = 10.0,
    flush_minutes: float = 60.0,
    progress: Callable[[float, float], None] | None = None,
    cluster: Any = None,
    close_pods: bool = True,
    sample_on_start: bool = True,
) -> int:
    """Record ``hours`` of the demo scenario ending at ``end`` into database ``using``; returns
    the rows written. ``cluster``: a simulated cluster at ``end - hours`` to run instead of a new
    demo one (tests keep it to compare the history with what it did). ``close_pods``: at ``end``
    the pod rows still open are closed as vanished at their last_seen (``end``: the recorder
    refreshes it at its last write); False when ``cluster`` goes on as the live one.
    ``sample_on_start``: False when a recorded history ends at ``end - hours`` with its sample."""
    from dashboard.history.models import HistoryFill

    start = end - timedelta(hours=hours)
    cluster = cluster or demo_cluster(start, seed, tick_seconds)
    cache, mirror = mirrored_cache(cluster)
    # The flushes are driven by simulated time below, not by the recorder's wall-clock period.
    options = RecorderOptions(
        sample_seconds=sample_seconds,
        flush_seconds=float("inf"),
        retention_days=3660,
        sample_on_start=sample_on_start,
    )
    recorder = Recorder(cache, using, options, clock=cluster.clock.now)
    cache.add_listener(recorder.listener)
    recorder.step()
    fill = HistoryFill.objects.using(using).create(start=start, end=end, reached=start)
    flush_every = timedelta(minutes=flush_minutes)
    try:
        while cluster.clock.now() < end:
            cluster.advance(min(sample_seconds, (end - cluster.clock.now()).total_seconds()))
            due = cluster.clock.now() - fill.reached >= flush_every
            recorder.step(force_flush=due)
            if due:
                fill.reached = cluster.clock.now()
                fill.save(update_fields=["reached"])
                if progress is not None:
                    progress((fill.reached - start).total_seconds() / 3600, hours)
        recorder.step(force_flush=True)
        if close_pods:
            # The recorded cluster ends here: its pods are not the live cluster's (another uid salt).
            recorder.close_unseen(set())
    finally:
        cache.remove_listener(recorder.listener)
        cluster.store.remove_listener(mirror)
    fill.reached, fill.done = end, True
    fill.save(update_fields=["reached", "done"])
    return recorder.status().written


def catch_up(cluster: Any, using: str | None, sample_seconds: float = 60.0) -> None:
    """Run ``cluster`` (the live demo's, created when the demo started) forward to the wall
    clock, so its clock (the pages' clock) is real time when the demo opens: the time the past
    took to record is simulated at once. Recorded into ``using`` as the continuation of the past
    (its pods stay open: they are the live ones); ``using`` None: not recorded."""
    while (gap := (datetime.now(UTC) - cluster.clock.now()).total_seconds()) > 0.2:
        if using is None:
            cluster.advance(gap)
            continue
        end = cluster.clock.now() + timedelta(seconds=gap)
        fast_forward(
            using,
            end,
            hours=gap / 3600,
            sample_seconds=sample_seconds,
            flush_minutes=gap / 60,
            cluster=cluster,
            close_pods=False,
            sample_on_start=False,
        )
