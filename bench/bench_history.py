"""The history recorder at scale: ``python -m bench.bench_history [--jobs N --pods N --minutes M]``.

Builds the ``large`` scenario (10,000 Jobs, 50,000 pods by default) in the simulator, mirrors its
store into an in-memory cache (no HTTP: the recorder's cost alone), records the initial state into
a SQLite file, then runs ``--minutes`` of churn a minute at a time. Prints the recorder's CPU
seconds, rows written, rows per simulated hour and the database size.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--minutes", type=int, default=10)
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp(prefix="volcano-ui-bench-history-")) / "history.sqlite3"
    os.environ["VOLCANO_UI_HISTORY_DB"] = str(db)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")
    import django

    django.setup()
    from dashboard.history.recorder import Recorder, RecorderOptions
    from dashboard.kube.cache import ClusterCache
    from dashboard.management.commands.simcluster import build_cluster
    from dashboard.sim.kinds import JOB, POD, PODGROUP, QUEUE

    cluster, _ = build_cluster(
        scenario="large", seed=0, speed=1, controllers=True, history=10000, jobs=args.jobs, pods=args.pods
    )
    cache = ClusterCache()
    for name in ("jobs", "podgroups", "queues", "pods", "events"):
        cache.store(name).set_state("synced")
    names = {JOB.key: "jobs", PODGROUP.key: "podgroups", QUEUE.key: "queues", POD.key: "pods"}

    def mirror(event_type, kind, obj) -> None:
        name = names.get(kind.key)
        if name is not None:
            (cache.store(name).delete if event_type == "DELETED" else cache.store(name).upsert)(obj)

    for kind in (QUEUE, JOB, PODGROUP, POD):
        for obj in cluster.store.list(kind)[0]:
            mirror("ADDED", kind, obj)
    cluster.store.add_listener(mirror)
    recorder = Recorder(
        cache,
        "default",
        RecorderOptions(flush_seconds=0, sample_seconds=60, queue_size=1_000_000),
        clock=cluster.clock.now,
    )
    cache.add_listener(recorder.listener)
    cpu = time.process_time()
    recorder.step()
    initial_cpu, initial_rows = time.process_time() - cpu, recorder.status().written
    print(f"initial state: {initial_rows} rows in {initial_cpu:.1f} s CPU")
    recorder_cpu = 0.0
    sim_cpu = 0.0
    for _ in range(args.minutes):
        t = time.process_time()
        cluster.advance(60)
        sim_cpu += time.process_time() - t
        t = time.process_time()
        recorder.step()
        recorder_cpu += time.process_time() - t
    rows = recorder.status().written - initial_rows
    size = sum(p.stat().st_size for p in db.parent.glob("history.sqlite3*"))
    print(
        f"{args.minutes} simulated min of churn: recorder {recorder_cpu:.1f} s CPU "
        f"(simulator {sim_cpu:.1f} s), {rows} rows = {rows * 60 / args.minutes:.0f} rows/h, "
        f"dropped {recorder.status().dropped}; database {size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
