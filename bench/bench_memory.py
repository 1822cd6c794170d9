"""Memory of the cluster cache at scale: RSS after a full sync over HTTP, and where it goes.
Prints numbers; not a test.

    .venv/bin/python -m bench.bench_memory                       # starts the large simulated cluster
    .venv/bin/python -m bench.bench_memory --kubeconfig /tmp/sim.kubeconfig   # reuse a running one
    .venv/bin/python -m bench.bench_memory --tracemalloc         # plus the top allocation sites

A running one: ``python -m bench.simproc --port 18101 --scenario large --churn off --kubeconfig
/tmp/sim.kubeconfig`` (10,000 Jobs, ~7,000 PodGroups, 200 Queues, 50,000 pods, 100,000 events).
The simulated cluster runs in its own process, so this process's RSS is the cache's (plus Django
and the kubernetes client, imported before the first number).

Prints: RSS before the sync, right after it (what the worker holds), after ``gc.collect()``, and
after releasing free allocator memory (``dashboard.kube.memory.release_free_memory``; the cache
itself does that after every full list); CPU and wall time of the sync; per kind the objects and
their deep size (``sys.getsizeof`` over every reachable object, each counted once: what sharing
saves shows here); the sharing table's size; the most numerous Python object types; and with
``--tracemalloc`` the top allocation sites of what stays allocated.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def deep_sizes(views: dict) -> dict[str, tuple[int, int]]:
    """{kind: (objects, bytes)}: getsizeof over every object reachable from the kind's cached
    objects, each object counted once overall (shared sub-trees count for the first kind)."""
    seen: set[int] = set()
    out = {}
    for name, view in views.items():
        total = 0
        stack = list(view.all())
        while stack:
            obj = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            total += sys.getsizeof(obj)
            if isinstance(obj, dict):
                stack.extend(obj.keys())
                stack.extend(obj.values())
            elif isinstance(obj, (list, tuple)):
                stack.extend(obj)
        out[name] = (len(view), total)
    return out


def pymalloc_summary() -> None:
    """The totals of ``sys._debugmallocstats()`` (written by CPython to stderr): how much of
    Python's own arenas is in use, free in used pools (fragmentation), or in empty pools."""
    import io
    import re

    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(w)
        os.close(saved)
    with io.open(r, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    wanted = (
        "arenas allocated current",
        "bytes in allocated blocks",
        "bytes in available blocks",
        "unused pools",
        "bytes lost to pool headers",
        "bytes lost to quantization",
        "Total",
    )
    for line in text.splitlines():
        if any(line.strip().startswith(w) or w in line for w in wanted) and re.search(r"\d", line):
            print(f"   pymalloc: {line.strip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubeconfig", help="a running simulated cluster's kubeconfig (else one is started)")
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tracemalloc", action="store_true", help="trace allocations (slows the sync ~2x)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--mallocstats", action="store_true", help="print pymalloc's summary (sys._debugmallocstats) after the sync"
    )
    args = parser.parse_args(argv)

    import django

    django.setup()
    from dashboard.kube import build_cluster_cache, memory, trim
    from dashboard.kube.cache import CacheOptions

    sim = None
    tmp = tempfile.TemporaryDirectory(prefix="bench-memory-")
    kubeconfig = args.kubeconfig
    if not kubeconfig:
        from bench.common import start_sim

        sim = start_sim(
            Path(tmp.name),
            port=args.port,
            scenario="large",
            extra=[
                *("--jobs", str(args.jobs), "--pods", str(args.pods)),
                *("--queues", str(args.queues), "--events", str(args.events), "--churn", "off"),
            ],
        )
        kubeconfig = str(sim.kubeconfig)
        print(f"simulated cluster: {sim.info.get('counts')}")
    try:
        if args.tracemalloc:
            import tracemalloc

            tracemalloc.start(1)
        gc.collect()
        before = rss_mb()
        cache = build_cluster_cache(kubeconfig=kubeconfig, context="", mode="kubeconfig", options=CacheOptions())
        cpu0, t0 = time.process_time(), time.perf_counter()
        cache.start()
        cache.wait_synced(timeout=1800)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        synced = rss_mb()
        gc.collect()
        collected = rss_mb()
        released = memory.release_free_memory()
        after_release = rss_mb()
        snap = cache.snapshot()
        views = snap.views()
        print(f"allocator: {memory.describe()}")
        print(f"sync: {wall:.1f} s wall, {cpu:.1f} s CPU (this process: decode, trim, index)")
        print(f"   objects: { {n: len(v) for n, v in views.items()} }")
        print(
            f"RSS: {before:.0f} MB before the sync -> {synced:.0f} MB synced -> {collected:.0f} MB after "
            f"gc.collect() -> {after_release:.0f} MB after releasing free allocator memory "
            f"({'done' if released else 'not available here'})"
        )
        print(f"   the cache's growth: {after_release - before:.0f} MB")
        sizes = deep_sizes(views)
        total = sum(b for _, b in sizes.values())
        print(f"deep size of the cached objects (getsizeof, shared objects once): {total / 1e6:.0f} MB")
        for name, (n, b) in sizes.items():
            print(f"   {name:10} {n:7,} objects {b / 1e6:7.1f} MB  {b / max(1, n):6.0f} B each")
        print(f"sharing table (trim.share): {len(getattr(trim, 'share', ())):,} entries")
        counts = collections.Counter(type(o).__name__ for o in gc.get_objects())
        print("most numerous gc-tracked objects:", ", ".join(f"{k} {v:,}" for k, v in counts.most_common(6)))
        if args.mallocstats:
            pymalloc_summary()
        if args.tracemalloc:
            current, peak = tracemalloc.get_traced_memory()
            print(f"tracemalloc: {current / 1e6:.0f} MB allocated now, peak {peak / 1e6:.0f} MB")
            stats = tracemalloc.take_snapshot().statistics("lineno")
            for stat in stats[: args.top]:
                frame = stat.traceback[0]
                print(f"   {stat.size / 1e6:7.1f} MB {stat.count:9,}  {frame.filename.replace(str(REPO) + '/', '')}:{frame.lineno}")
            tracemalloc.stop()
        cache.stop()
    finally:
        if sim is not None:
            sim.stop()
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
