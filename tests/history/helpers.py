"""Shared steps of the history tests."""

from __future__ import annotations

from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.sim.kinds import JOB, NODE
from tests.sim_behaviour.helpers import job, node, task


def add_nodes(cluster, count: int = 2, gpus: int = 2) -> None:
    for i in range(count):
        cluster.store.create(NODE, node(f"node-{i}", cpu=8, gpus=gpus))


def gpu_job(cluster, name: str, replicas: int = 2, seconds: int | None = 30, **kw) -> dict:
    annotations = {"sim.volcano-ui/behaviour": "succeed", "sim.volcano-ui/duration": str(seconds)}
    if seconds is None:
        annotations = {"sim.volcano-ui/behaviour": "run"}
    return cluster.store.create(
        JOB, job(name, [task("main", replicas, gpus=1, annotations=annotations)], **kw)
    )


def recorder(cache, cluster, using: str, **options) -> Recorder:
    """A recorder on ``cache`` whose clock is the simulator's, written at every step."""
    opts = RecorderOptions(flush_seconds=0, **options)
    rec = Recorder(cache, using, opts, clock=cluster.clock.now)
    cache.add_listener(rec.listener)
    return rec


def settle(cache, cluster, predicate, rec: Recorder, limit: int = 300) -> None:
    """Advance the simulator a second at a time until ``predicate(snapshot)`` holds in the cache,
    stepping the recorder each second."""
    for _ in range(limit):
        cluster.advance(1)
        try:
            cache.wait_for(predicate, timeout=0.15)
            rec.step()
            return
        except TimeoutError:
            rec.step()
    raise AssertionError("condition not reached")
