"""The writer's cost of copy-on-write publication, in process.

Loads a generated cluster (dashboard/sim/generator.py) into an in-memory ClusterCache, then for
each of pods, Jobs and PodGroups times ``rounds`` rounds of "publish a view (``data()``), then
write one object" (the first write after a publication pays the copy-on-write), and the same
number of writes without a publication in between. Prints milliseconds per round (median and
p90) and the copies made.

    .venv/bin/python -m bench.bench_publish                   # 10,000 Jobs, 50,000 pods
    .venv/bin/python -m bench.bench_publish --pods 5000 --jobs 1000
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from typing import Any


def _changed(obj: dict[str, Any], n: int) -> dict[str, Any]:
    o = copy.deepcopy(obj)
    o["metadata"]["resourceVersion"] = str(10**9 + n)
    o["metadata"].setdefault("labels", {})["churn"] = str(n)
    return o


def measure(store: Any, objs: list[dict[str, Any]], rounds: int, publish: bool) -> list[float]:
    """Milliseconds of each round (publish, when asked, then one upsert)."""
    changed = [_changed(objs[(i * 7919) % len(objs)], i) for i in range(rounds)]
    out = []
    for obj in changed:
        t0 = time.perf_counter()
        if publish:
            store.data()
        store.upsert(obj)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)

    from bench.scale import _kinds
    from dashboard.kube import ClusterCache
    from dashboard.sim.cluster import SimulatedCluster
    from dashboard.sim.generator import generate_large

    cluster = SimulatedCluster(seed=0, scenario="empty", controllers=False)
    generate_large(cluster, jobs=args.jobs, pods=args.pods, queues=200, events=0)
    cache = ClusterCache()
    kinds = _kinds()
    for name, sim_name in {"jobs": "job", "podgroups": "pg", "pods": "pod"}.items():
        objs, _ = cluster.store.list(kinds[sim_name])
        store = cache.store(name)
        store.replace(objs)
        copies = store.copies
        for publish in (True, False):
            ms = measure(store, objs, args.rounds, publish)
            q = statistics.quantiles(ms, n=10)
            label = "publish+write" if publish else "write only   "
            print(
                f"{name:9} n={len(store):6} {label} median {statistics.median(ms):7.3f} ms"
                f"  p90 {q[-1]:7.3f} ms  copies {store.copies - copies}"
            )
            copies = store.copies
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
