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
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

from bench.common import rss_mb  # noqa: E402 - after the path set-up above
from dashboard.kube import cowmap  # noqa: E402


def deep_size(roots: list, seen: set[int]) -> int:
    """getsizeof summed over every object reachable from ``roots`` (dicts, lists, tuples, sets
    and the slots of cowmap's structures followed) that is not in ``seen``; adds what it counts
    to ``seen``."""
    total = 0
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif type(obj).__module__ == cowmap.__name__:
            stack.extend(getattr(obj, slot) for slot in type(obj).__slots__ if hasattr(obj, slot))
    return total


def deep_sizes(views: dict, seen: set[int]) -> dict[str, tuple[int, int]]:
    """{kind: (objects, bytes)}: getsizeof over every object reachable from the kind's cached
    objects, each object counted once overall (shared sub-trees count for the first kind)."""
    return {name: (len(view), deep_size(list(view.all()), seen)) for name, view in views.items()}


def store_overhead(cache, seen: set[int]) -> dict[str, dict[str, int]]:
    """{kind: {part: bytes}} of each store's own structures beyond the cached objects (``seen``
    holds those): the key mapping, change counters, sorted order and each index (with the
    writer's side of its chunked buckets)."""
    out: dict[str, dict[str, int]] = {}
    for store in cache.stores():
        if not len(store):
            continue
        parts = {
            "objects": deep_size([store._objects], seen),
            "versions": deep_size([store._versions], seen),
            "sorted": deep_size([store._order], seen),
        }
        for name, index in store._indexes.items():
            parts[f"index {name}"] = deep_size([index, store._chunked[name]], seen)
        out[store.spec.name] = parts
    return out


def render_pages(cache, seconds: float, threads: int) -> int:
    """Render the benchmark's pages (overview, lists, a detail page of each kind, the kiosk)
    with ``threads`` threads for ``seconds``; returns the number of requests."""
    import threading

    from django.conf import settings
    from django.test import Client

    from dashboard.kube import override_cluster_cache

    # Production settings but plain static storage: no collectstatic manifest needed here.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }

    snap = cache.snapshot()
    job, pg, pod, queue = (v.all()[len(v) // 2] for v in (snap.jobs, snap.podgroups, snap.pods, snap.queues))

    def detail(prefix: str, obj: dict) -> str:
        meta = obj["metadata"]
        return (
            f"/{prefix}/{meta['namespace']}/{meta['name']}/"
            if meta.get("namespace")
            else f"/{prefix}/{meta['name']}/"
        )

    paths = [
        "/",
        "/jobs/",
        "/jobs/?page=5",
        "/podgroups/",
        "/queues/",
        "/kiosk/",
        detail("jobs", job),
        detail("podgroups", pg),
        detail("pods", pod),
        detail("queues", queue),
    ]
    deadline = time.monotonic() + seconds
    count = [0]
    errors: list[str] = []

    def worker(offset: int) -> None:
        client = Client(HTTP_HOST="localhost")
        i = offset
        while time.monotonic() < deadline:
            path = paths[i % len(paths)]
            resp = client.get(path)
            if resp.status_code != 200:
                errors.append(f"{path}: {resp.status_code}")
            count[0] += 1
            i += 1

    with override_cluster_cache(cache):
        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    if errors:
        print(f"   page errors: {sorted(set(errors))[:5]}")
    return count[0]


def debugmallocstats_text() -> str:
    """What ``sys._debugmallocstats()`` writes (CPython writes it to stderr, fd 2), as text."""

    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(w)
        os.close(saved)
    with open(r, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def pymalloc_summary() -> None:
    """The totals of ``sys._debugmallocstats()``: how much of Python's own arenas is in use, free
    in used pools (fragmentation), or in empty pools."""
    import re

    text = debugmallocstats_text()
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
    # The size classes holding most free blocks in used pools: which objects leave the holes.
    row = re.compile(r"^\s*\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", re.M)
    classes = [tuple(map(int, m.groups())) for m in row.finditer(text)]
    worst = sorted(classes, key=lambda c: -c[0] * c[3])[:6]
    print(
        "   pymalloc: most free in used pools (block size: MB free / MB in use): "
        + ", ".join(f"{b} B: {b * avail / 1e6:.1f} / {b * used / 1e6:.1f}" for b, _, used, avail in worst)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", help="a running simulated cluster's kubeconfig (else one is started)")
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tracemalloc", action="store_true", help="trace allocations (slows the sync ~2x)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--pages",
        type=float,
        default=0.0,
        help="then render pages in-process (Django test client, --threads threads) for this many seconds "
        "and print RSS again: what page traffic adds",
    )
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument(
        "--mmap-threshold",
        type=int,
        default=0,
        help="evaluate glibc's M_MMAP_THRESHOLD fixed at this many bytes (0: the cache's own setting, "
        "dashboard/kube/memory.py)",
    )
    parser.add_argument(
        "--mallocstats",
        action="store_true",
        help="print pymalloc's summary (sys._debugmallocstats) after the sync",
    )
    args = parser.parse_args(argv)

    import django

    django.setup()
    from dashboard.kube import build_cluster_cache, memory, options_from_settings, trim

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
        if args.mmap_threshold:
            libc = memory._glibc()
            if libc is not None:
                # As if the operator set it: memory.limit_arenas() then leaves it alone.
                os.environ["MALLOC_MMAP_THRESHOLD_"] = str(args.mmap_threshold)
                libc.mallopt(memory.M_MMAP_THRESHOLD, args.mmap_threshold)
        gc.collect()
        before = rss_mb()
        # The server's options (volcano_ui/settings.py): VOLCANO_UI_LIST_PAGE_SIZE and the rest apply.
        cache = build_cluster_cache(
            kubeconfig=kubeconfig, context="", mode="kubeconfig", options=options_from_settings()
        )
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
        seen: set[int] = set()
        sizes = deep_sizes(views, seen)
        total = sum(b for _, b in sizes.values())
        print(f"deep size of the cached objects (getsizeof, shared objects once): {total / 1e6:.0f} MB")
        for name, (n, b) in sizes.items():
            print(f"   {name:10} {n:7,} objects {b / 1e6:7.1f} MB  {b / max(1, n):6.0f} B each")
        overhead = store_overhead(cache, seen)
        print(
            "the stores' own structures beyond the objects: "
            f"{sum(sum(p.values()) for p in overhead.values()) / 1e6:.0f} MB"
        )
        for name, parts in overhead.items():
            print(f"   {name:10} " + ", ".join(f"{part} {b / 1e6:.1f}" for part, b in parts.items()))
        table = deep_size(list(vars(trim.share).values()), seen) if hasattr(trim, "share") else 0
        print(
            f"sharing table (trim.share): {len(getattr(trim, 'share', ())):,} entries, "
            f"{table / 1e6:.1f} MB beyond the objects"
        )
        counts = collections.Counter(type(o).__name__ for o in gc.get_objects())
        print("most numerous gc-tracked objects:", ", ".join(f"{k} {v:,}" for k, v in counts.most_common(6)))
        if args.mallocstats:
            pymalloc_summary()
        if args.pages:
            cpu_pages = time.process_time()
            n = render_pages(cache, args.pages, args.threads)
            cpu_pages = time.process_time() - cpu_pages
            gc.collect()
            after_pages = rss_mb()
            t_trim = time.perf_counter()
            memory.release_free_memory()
            t_trim = time.perf_counter() - t_trim
            print(f"   malloc_trim(0) took {t_trim * 1000:.1f} ms")
            print(
                f"pages: {n} requests in {args.pages:.0f} s with {args.threads} threads "
                f"({cpu_pages / max(1, n) * 1000:.1f} ms CPU of this process per request, "
                "informers included); "
                f"RSS {after_pages:.0f} MB "
                f"after them -> {rss_mb():.0f} MB after releasing free allocator memory"
            )
            if args.mallocstats:
                pymalloc_summary()
        if args.tracemalloc:
            current, peak = tracemalloc.get_traced_memory()
            print(f"tracemalloc: {current / 1e6:.0f} MB allocated now, peak {peak / 1e6:.0f} MB")
            stats = tracemalloc.take_snapshot().statistics("lineno")
            for stat in stats[: args.top]:
                frame = stat.traceback[0]
                where = f"{frame.filename.replace(str(REPO) + '/', '')}:{frame.lineno}"
                print(f"   {stat.size / 1e6:7.1f} MB {stat.count:9,}  {where}")
            tracemalloc.stop()
        cache.stop()
    finally:
        if sim is not None:
            sim.stop()
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
