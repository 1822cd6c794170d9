"""The writer's cost of copy-on-write publication, in process.

Loads a generated cluster (dashboard/sim/generator.py) into an in-memory ClusterCache, then times
``rounds`` rounds of "publish a view (``data()``), then write one object" (the first write after a
publication pays the copy-on-write), and as many writes without a publication in between, for
each case:

- pods: any pod relabelled; a pod of the namespace with the most pods relabelled;
- Jobs and PodGroups: any one relabelled; one moving from the most common phase to the next
  (it leaves one big "phase" bucket for another);
- Events: a new Warning event in a store at its cap (the oldest event is dropped).

Per case: milliseconds per round (median and p90), the entries copy-on-write copied per round
(shards, chunks and index buckets; in parentheses those of index buckets) and the milliseconds
of a young garbage collection after each round (the cyclic GC traverses every fresh container,
so a fresh copy costs again at the next young collection; the collector is otherwise off).

With ``--sizes``, first the deep size of each store's own structures beyond the objects
(bench/bench_memory.py's ``store_overhead``) and how many index buckets are tuples, dicts and
chunked sets.

    .venv/bin/python -m bench.bench_publish                   # 10,000 Jobs, 50,000 pods, 20,000 Events
    .venv/bin/python -m bench.bench_publish --pods 5000 --jobs 1000 --events 2000
"""

from __future__ import annotations

import argparse
import copy
import gc
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]


def _changed(obj: Obj, n: int) -> Obj:
    o = copy.deepcopy(obj)
    o["metadata"]["resourceVersion"] = str(10**9 + n)
    o["metadata"].setdefault("labels", {})["churn"] = str(n)
    return o


def _job_phase(phase: str) -> Callable[[Obj, int], Obj]:
    def change(obj: Obj, n: int) -> Obj:
        o = _changed(obj, n)
        o.setdefault("status", {}).setdefault("state", {})["phase"] = phase
        return o

    return change


def _pg_phase(phase: str) -> Callable[[Obj, int], Obj]:
    def change(obj: Obj, n: int) -> Obj:
        o = _changed(obj, n)
        o.setdefault("status", {})["phase"] = phase
        return o

    return change


def _new_event(obj: Obj, n: int) -> Obj:
    o = _changed(obj, n)
    o["metadata"]["name"] = f"{o['metadata']['name']}.bench{n}"
    o["metadata"]["uid"] = f"bench-{n}"
    o["lastTimestamp"] = "2099-01-01T00:00:00Z"  # the newest: the cap drops an older one
    return o


def measure(store: Any, changed: list[Obj], publish: bool) -> tuple[list[float], list[int], list[float]]:
    """Per round (publish, when asked, then one upsert): milliseconds, entries copied, and the
    milliseconds of a young collection after it."""
    ms, copied, young = [], [], []
    gc.collect()
    gc.disable()
    try:
        for obj in changed:
            before = store.copied()
            t0 = time.perf_counter()
            if publish:
                store.data()
            store.upsert(obj)
            t1 = time.perf_counter()
            gc.collect(0)
            t2 = time.perf_counter()
            ms.append((t1 - t0) * 1000)
            young.append((t2 - t1) * 1000)
            copied.append(store.copied() - before)
    finally:
        gc.enable()
    return ms, copied, young


def _pick(objs: list[Obj], start: int, rounds: int) -> list[Obj]:
    return [objs[(start + i * 7919) % len(objs)] for i in range(rounds)]


def _phases(objs: list[Obj], phase_of: Callable[[Obj], str]) -> tuple[str, str]:
    common = Counter(phase_of(o) for o in objs).most_common(2)
    return common[0][0], common[-1][0]


def main(argv: list[str] | None = None) -> int:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--sizes", action="store_true", help="print the stores' sizes first")
    args = parser.parse_args(argv)

    from bench.scale import _kinds
    from dashboard.kube import ClusterCache
    from dashboard.sim.cluster import SimulatedCluster
    from dashboard.sim.generator import generate_large
    from dashboard.volcano.events import is_warning
    from dashboard.volcano.objects import namespace
    from dashboard.volcano.phases import job_phase, podgroup_phase

    cluster = SimulatedCluster(seed=0, scenario="empty", controllers=False)
    generate_large(cluster, jobs=args.jobs, pods=args.pods, queues=200, events=args.events)
    cache = ClusterCache()
    kinds = _kinds()
    listed = {
        name: cluster.store.list(kinds[sim])[0]
        for name, sim in {"pods": "pod", "jobs": "job", "podgroups": "pg", "events": "event"}.items()
    }
    del cluster
    for name, objs in listed.items():
        cache.store(name).replace(objs)
    if args.sizes:
        print_sizes(cache, list(listed))

    pods = listed["pods"]
    biggest = Counter(namespace(p) for p in pods).most_common(1)[0][0]
    job_from, job_to = _phases(listed["jobs"], job_phase)
    pg_from, pg_to = _phases(listed["podgroups"], podgroup_phase)
    cases: list[tuple[str, str, list[Obj], Callable[[Obj, int], Obj]]] = [
        ("pods", "any pod", pods, _changed),
        ("pods", f"a pod of {biggest}", [p for p in pods if namespace(p) == biggest], _changed),
        ("jobs", "any Job", listed["jobs"], _changed),
        (
            "jobs",
            f"{job_from} -> {job_to}",
            [j for j in listed["jobs"] if job_phase(j) == job_from],
            _job_phase(job_to),
        ),
        ("podgroups", "any PodGroup", listed["podgroups"], _changed),
        (
            "podgroups",
            f"{pg_from} -> {pg_to}",
            [g for g in listed["podgroups"] if podgroup_phase(g) == pg_from],
            _pg_phase(pg_to),
        ),
    ]
    warnings = [e for e in listed["events"] if is_warning(e)]
    if warnings:
        cases.append(("events", "a new Warning", warnings, _new_event))

    print(f"{'':38} {'publish+write ms':>17} {'write only ms':>15}  {'copied/round':>14}  young GC ms")
    print(
        f"{'store':10} {'n':>6} {'write':20} {'median':>8} {'p90':>8} {'median':>7} {'p90':>7}"
        f"  {'all (buckets)':>14}  {'median':>6} {'p90':>6}"
    )
    n = 0
    for kind, label, objs, change in cases:
        store = cache.store(kind)
        results = {}
        for publish in (True, False):
            changed = [change(o, n + i) for i, o in enumerate(_pick(objs, n, args.rounds))]
            n += args.rounds
            buckets = store.copied_buckets()
            ms, copied, young = measure(store, changed, publish)
            results[publish] = (ms, copied, young, (store.copied_buckets() - buckets) / args.rounds)
        ms, copied, young, buckets = results[True]
        alone = results[False][0]
        print(
            f"{kind:10} {len(store):6} {label[:20]:20} {statistics.median(ms):8.3f} {_p90(ms):8.3f}"
            f" {statistics.median(alone):7.3f} {_p90(alone):7.3f}"
            f"  {f'{statistics.mean(copied):,.0f} ({buckets:,.0f})':>14}"
            f"  {statistics.median(young):6.3f} {_p90(young):6.3f}"
        )
    return 0


def print_sizes(cache: Any, kinds: list[str]) -> None:
    """The deep size of each store's structures beyond its objects, and its buckets' forms."""
    from bench.bench_memory import deep_size, store_overhead

    seen: set[int] = set()
    for kind in kinds:
        deep_size(list(cache.store(kind).data().iter_objects()), seen)
    for kind, parts in store_overhead(cache, seen).items():
        indexes = sum(b for part, b in parts.items() if part.startswith("index "))
        forms = Counter(
            type(bucket).__name__
            for index in cache.store(kind).data().indexes.values()
            for bucket in index.values()
        )
        total = sum(parts.values())
        print(
            f"{kind:10} structures {total / 1e6:6.2f} MB, of which indexes {indexes / 1e6:6.2f} MB;"
            f" buckets: {', '.join(f'{n:,} {form}' for form, n in forms.most_common())}"
        )
    print()


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


if __name__ == "__main__":
    raise SystemExit(main())
