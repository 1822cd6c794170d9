"""Where does the dashboard's memory go over time under churn? A diagnostic for the soak; prints
numbers, not a test.

    .venv/bin/python -m bench.memory_growth --minutes 20 --warmup-minutes 3               # + tracemalloc diff
    .venv/bin/python -m bench.memory_growth --minutes 10 --warmup-minutes 1 --no-trace    # cheap: sizes only

Starts the large simulated cluster with its controllers churning (as ``make soak`` does), syncs a
cluster cache in this process, and renders the soak's mix of requests in-process (Django's WSGI
handler, ``--threads`` threads): mostly Job status fragments, every fifth a full page (overview,
jobs list page 1 and a deep page, queue list, a Job's detail). Once a minute it prints RSS, the
bytes Python has allocated (tracemalloc, started after the sync), the cluster's object counts and
the size of every bounded table the code keeps (sharing table, section memo, row HTML, list memo),
how many replaced Jobs/PodGroups the list memo still holds, pymalloc's arenas and live small-object
bytes, glibc's in-use/free bytes; every ``--deep-every`` samples the deep size of the cached
objects per kind and one timed ``trim.share.purge()``; at the end the allocation sites whose live
bytes grew most since the end of the warm-up. tracemalloc starts after the sync (so the diff cannot
show the replaced originals being freed) unless ``--trace-from-start``, which slows the sync ~15x:
long enough for the watches to expire (410) and re-list, which muddies what it measures.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")


from bench.bench_memory import debugmallocstats_text, deep_sizes, rss_mb  # noqa: E402


def pymalloc() -> dict[str, float]:
    """pymalloc's arenas (MB it holds from the system) and the bytes of live small objects in them,
    parsed from ``sys._debugmallocstats()`` (CPython writes it to stderr)."""
    import re

    text = debugmallocstats_text()

    def num(label: str) -> float:
        m = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        return int(m.group(1).replace(",", "")) / 2**20 if m else float("nan")

    arenas = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    return {
        "arenas_MB": int(arenas.group(1).replace(",", "")) if arenas else float("nan"),
        "live_small_MB": round(num("# bytes in allocated blocks"), 1),
        "free_small_MB": round(num("# bytes in available blocks"), 1),
    }


def glibc() -> dict[str, float]:
    """glibc malloc's in-use and free bytes (mallinfo2; large objects: pymalloc serves <= 512 B)."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (n, ctypes.c_size_t)
            for n in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        mi = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    mb = 2**20
    return {
        "malloc_used_MB": round(mi.uordblks / mb, 1),
        "malloc_free_MB": round(mi.fordblks / mb, 1),
        "mmapped_MB": round(mi.hblkhd / mb, 1),
    }


def census() -> collections.Counter:
    """GC-tracked objects by type name (dicts, lists, tuples, instances; not strings or ints),
    after a full collection."""
    gc.collect()
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


def gc_stats() -> dict[str, list[int]]:
    """The cyclic GC's collections and collected objects per generation so far (gc.get_stats())."""
    stats = gc.get_stats()
    return {
        "gc_collections": [g["collections"] for g in stats],
        "gc_collected": [g["collected"] for g in stats],
    }


def pinned(cache) -> int:
    """Job/PodGroup objects that the list memo keeps alive although the cache has replaced them."""
    from dashboard.views import memo

    snap = cache.snapshot()
    current = {id(o) for o in snap.jobs.all()} | {id(o) for o in snap.podgroups.all()}
    old: set[int] = set()
    for _key, (objs, _counts) in memo.LIST_MEMO.values():
        old.update(id(o) for o in objs if id(o) not in current)
    return len(old)


def tables() -> dict[str, int]:
    """Sizes of the bounded tables kept between requests (entries, or estimated bytes)."""
    from dashboard.kube import trim
    from dashboard.views import memo

    return {
        "share.new": len(trim.share._new),
        "share.old": len(trim.share._old),
        "section_memo": len(memo.SECTIONS.entries),
        "section_latest": len(memo.SECTIONS.latest),
        "row_html": len(memo.ROW_HTML),
        "list_memo_kB": memo.LIST_MEMO.total // 1024,
        "attention_kB": memo.ATTENTION_HTML.total // 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--warmup-minutes", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--frames", type=int, default=4, help="tracemalloc frames per allocation")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--sample-seconds", type=float, default=60.0)
    parser.add_argument(
        "--deep-every", type=int, default=3, help="deep size of the cached objects every N samples (0: never)"
    )
    parser.add_argument(
        "--trace-from-start",
        action="store_true",
        help="trace allocations from before the sync (complete diffs, slower)",
    )
    parser.add_argument("--no-trace", action="store_true", help="RSS and tables only (tracemalloc off)")
    parser.add_argument(
        "--census",
        action="store_true",
        help="count the GC-tracked objects by type at the end of the warm-up and at the end; "
        "print the growth",
    )
    parser.add_argument(
        "--gc-threshold0",
        type=int,
        help="set the GC's young threshold after the cache started (default: what the cache sets, "
        "dashboard.kube.memory.GC_THRESHOLD0; 700 is CPython's own)",
    )
    args = parser.parse_args(argv)

    import django

    django.setup()
    import logging

    logging.getLogger("volcano_ui.request").setLevel(logging.WARNING)
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler

    from bench.common import start_sim, wsgi_get
    from bench.endpoints import version_in
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from dashboard.kube.cache import CacheOptions

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    tmp = tempfile.TemporaryDirectory(prefix="memory-growth-")
    sim = start_sim(Path(tmp.name), scenario="large", extra=["--churn", "auto", "--generator", "auto"])
    print(f"simulated cluster: {sim.info.get('counts')} churn {sim.info.get('churn')}", flush=True)
    if args.trace_from_start:
        tracemalloc.start(args.frames)
    cache = build_cluster_cache(
        kubeconfig=str(sim.kubeconfig), context="", mode="kubeconfig", options=CacheOptions()
    )
    t0 = time.perf_counter()
    cache.start()
    cache.wait_synced(timeout=1800)
    if args.gc_threshold0 is not None:
        gc.set_threshold(args.gc_threshold0, *gc.get_threshold()[1:])
    print(f"gc thresholds {gc.get_threshold()}", flush=True)
    print(f"synced in {time.perf_counter() - t0:.1f} s; RSS {rss_mb():.0f} MB", flush=True)
    if not args.no_trace and not tracemalloc.is_tracing():
        tracemalloc.start(args.frames)

    stop = threading.Event()
    count = [0]
    statuses: dict[int, int] = {}

    def paths() -> list[str]:
        snap = cache.snapshot()
        jobs = snap.jobs.all()
        step = max(1, len(jobs) // 50)
        sample = jobs[::step][:50]
        running = sum(
            1 for j in jobs if ((j.get("status") or {}).get("state") or {}).get("phase") == "Running"
        )
        deep = max(1, running // 100)
        out = ["/", "/jobs/", f"/jobs/?phase=Running&page={deep}", "/queues/"]
        out += [f"/jobs/{j['metadata']['namespace']}/{j['metadata']['name']}/" for j in sample[:5]]
        frags = [f"/jobs/{j['metadata']['namespace']}/{j['metadata']['name']}/?f=status" for j in sample]
        return out, frags

    current = [paths()]

    def worker(index: int) -> None:
        app = WSGIHandler()  # not the test client: it adds per-request garbage (bench/common.py wsgi_get)
        seen: dict[str, str] = {}  # fragment -> the version it last answered (polls send it back)
        n = 0
        while not stop.is_set():
            pages, frags = current[0]
            if (n + index) % 5 == 0:
                path, htmx = pages[(n // 5 + index) % len(pages)], False
            else:
                mine = frags[index :: args.threads] or frags  # each thread polls its own Jobs
                frag = mine[n % len(mine)]
                path, htmx = f"{frag}&v={seen.get(frag, '0')}", True
            status, body = wsgi_get(app, path, htmx)
            if htmx and status == 200 and (v := version_in(body)):
                seen[frag] = v
            statuses[status] = statuses.get(status, 0) + 1
            count[0] += 1
            n += 1

    base_snapshot = None
    base_census = None
    started = time.monotonic()
    with override_cluster_cache(cache):
        pool = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.threads)]
        for t in pool:
            t.start()
        total = args.warmup_minutes + args.minutes
        next_sample = 0.0
        try:
            while (elapsed := time.monotonic() - started) < total * 60:
                if elapsed >= next_sample:
                    snap = cache.snapshot()
                    traced = tracemalloc.get_traced_memory()[0] / 2**20 if tracemalloc.is_tracing() else 0
                    print(
                        f"t={elapsed / 60:5.1f} min RSS {rss_mb():6.1f} MB traced {traced:6.1f} MB "
                        f"requests {count[0]:7} {dict(sorted(statuses.items()))} "
                        f"objects { {k: len(v) for k, v in snap.views().items()} } {tables()} "
                        f"pinned_by_list_memo {pinned(cache)} {pymalloc()} {glibc()} {gc_stats()}",
                        flush=True,
                    )
                    if args.deep_every and (round(elapsed / args.sample_seconds) % args.deep_every == 0):
                        t_deep = time.perf_counter()
                        sizes = deep_sizes(snap.views())
                        print(
                            "   deep size MB: "
                            + ", ".join(
                                f"{k} {b / 2**20:.1f} ({b / max(1, n):.0f} B each)"
                                for k, (n, b) in sizes.items()
                            )
                            + f"; total {sum(b for _, b in sizes.values()) / 2**20:.1f} "
                            + f"(took {time.perf_counter() - t_deep:.1f} s)",
                            flush=True,
                        )
                        from dashboard.kube import trim

                        t_purge = time.perf_counter()
                        dropped = trim.share.purge()
                        purge_ms = (time.perf_counter() - t_purge) * 1000
                        print(f"   share.purge(): {dropped} dropped in {purge_ms:.0f} ms", flush=True)
                    if args.census and base_census is None and elapsed >= args.warmup_minutes * 60:
                        base_census = census()
                        print(
                            "   (census at the end of the warm-up: "
                            f"{sum(base_census.values()):,} tracked objects)",
                            flush=True,
                        )
                    if (
                        base_snapshot is None
                        and elapsed >= args.warmup_minutes * 60
                        and tracemalloc.is_tracing()
                    ):
                        gc.collect()
                        base_snapshot = tracemalloc.take_snapshot()
                        print("   (baseline snapshot taken: end of warm-up)", flush=True)
                    next_sample += args.sample_seconds
                    current[0] = paths()
                time.sleep(1.0)
        finally:
            stop.set()
            for t in pool:
                t.join(timeout=30)
    if base_census is not None:
        stop.set()
        end_census = census()
        grown = sorted(((n - base_census.get(t, 0), t) for t, n in end_census.items()), reverse=True)
        print(
            f"\nGC-tracked objects: {sum(base_census.values()):,} -> {sum(end_census.values()):,}; "
            "largest growth by type:"
        )
        for diff, name in grown[: args.top]:
            print(f"  {diff:+9,} {name} (now {end_census[name]:,})")
    if base_snapshot is not None:
        gc.collect()
        end = tracemalloc.take_snapshot()
        filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
        diff = end.filter_traces(filters).compare_to(base_snapshot.filter_traces(filters), "traceback")
        print(f"\nlargest growth of live allocations since the end of the warm-up (top {args.top}):")
        for stat in diff[: args.top]:
            print(
                f"  {stat.size_diff / 2**20:+8.2f} MB {stat.count_diff:+9,} blocks "
                f"(now {stat.size / 2**20:7.2f} MB)"
            )
            for frame in stat.traceback:
                print(f"        {frame.filename.replace(str(REPO) + '/', '')}:{frame.lineno}")
    cache.stop()
    sim.stop()
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
