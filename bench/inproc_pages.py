"""In-process page timing at scale: `/` and `/queues/` via Django's test Client over a ClusterCache
filled in memory from the bulk loader (no HTTP, no informers), with and without churn.

    python -m bench.inproc_pages --jobs 10000 --pods 50000 --requests 30 --threads 4

"Churn" modifies a few pods and Jobs between requests (bumping the change counters), the way a
live watch does; prints p50/p90 in ms. Numbers, not a test.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--pods", type=int, default=50_000)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--threads", default="4", help="comma-separated thread counts, e.g. 1,10")
    ap.add_argument(
        "--generator",
        choices=("bulk", "large"),
        default="bulk",
        help="bench/scale.py's bulk loader, or dashboard/sim/generator.py "
        "(queues with resources, as make bench)",
    )
    ap.add_argument("--paths", default="/,/queues/", help="comma-separated paths")
    ap.add_argument(
        "--profile", default="", help="write a pyinstrument HTML/text profile of the churn runs here"
    )
    ap.add_argument(
        "--memos",
        action="store_true",
        help="then fill the list memos (jobs/podgroups lists: every queue, sort and phase filter) and "
        "print the size of the pages' memos and the process RSS",
    )
    args = ap.parse_args()
    setup_django()
    from django.test import Client

    from dashboard.kube import override_cluster_cache

    t0 = time.perf_counter()
    cache, churn = load_cache(args.generator, args.jobs, args.pods, args.events)
    print(f"loaded in {time.perf_counter() - t0:.1f}s", flush=True)

    with override_cluster_cache(cache):
        for path, mode, threads in (
            (path, mode, int(t))
            for path in args.paths.split(",")
            for mode in ("quiet", "churn")
            for t in args.threads.split(",")
        ):
            client0 = Client()
            client0.get(path)  # warm
            times: list[float] = []

            def worker(path: str, mode: str, times: list[float]) -> None:
                c = Client()
                for _ in range(args.requests):
                    if mode == "churn":
                        churn()
                    s = time.perf_counter()
                    r = c.get(path)
                    times.append((time.perf_counter() - s) * 1000)
                    assert r.status_code == 200, r.status_code
                    if mode == "churn":
                        time.sleep(0.05)  # a page poll interval, compressed

            ts = [threading.Thread(target=worker, args=(path, mode, times)) for _ in range(threads)]
            profiler = None
            if args.profile and mode == "churn" and threads == 1:
                from pyinstrument import Profiler

                profiler = Profiler()
                profiler.start()
            s = time.perf_counter()
            if profiler is not None:
                worker(path, mode, times)  # in this thread: pyinstrument samples the thread that started it
                ts = []
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            wall = time.perf_counter() - s
            if profiler is not None:
                profiler.stop()
                out = f"{args.profile}-{path.strip('/') or 'overview'}.txt"
                with open(out, "w") as fh:
                    fh.write(
                        profiler.output_text(unicode=False, show_all=bool(os.environ.get("PROFILE_ALL")))
                    )
            q = statistics.quantiles(times, n=10)
            size = len(client0.get(path).content)
            print(
                f"{path:10s} {mode:6s} threads={threads} n={len(times)} "
                f"p50={statistics.median(times):.0f}ms p90={q[8]:.0f}ms wall={wall:.1f}s bytes={size}",
                flush=True,
            )
        if args.memos:
            _fill_and_measure(cache)


def setup_django() -> None:
    """Django with the benchmark settings, serving the test Client (any host, static files
    without the manifest)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def load_cache(generator: str, jobs: int, pods: int, events: int) -> tuple[Any, Callable[[], None]]:
    """A synced in-memory ClusterCache holding a generated cluster of 200 queues and 50 namespaces
    (``generator``: "bulk", bench/scale.py's loader, or "large", dashboard/sim/generator.py), and
    ``churn()``, which modifies three pods, a Job and a PodGroup (new resourceVersions), the way a
    live watch does between two page views."""
    from bench.scale import ScaleSpec, _kinds, bulk_load
    from dashboard.kube import ClusterCache
    from dashboard.sim.cluster import SimulatedCluster

    cluster = SimulatedCluster(seed=0, scenario="empty", controllers=False)
    if generator == "large":
        from dashboard.sim.generator import generate_large

        generate_large(cluster, jobs=jobs, pods=pods, queues=200, events=events)
    else:
        bulk_load(cluster, ScaleSpec(jobs=jobs, pods=pods, queues=200, events=events, namespaces=50))
    cache = ClusterCache()
    kinds = _kinds()
    sim_names = {"jobs": "job", "podgroups": "pg", "queues": "queue", "pods": "pod", "events": "event"}
    for name, sim_name in sim_names.items():
        objs, _ = cluster.store.list(kinds[sim_name])
        st = cache.store(name)
        st.replace(objs)
        st.set_state("synced")
    stores = {name: cache.store(name) for name in ("pods", "jobs", "podgroups")}
    objs = {name: cluster.store.list(kinds[sim_names[name]])[0] for name in stores}
    n = [0]
    lock = threading.Lock()

    def changed(name: str, i: int, version: int) -> None:
        o = copy.deepcopy(objs[name][i % len(objs[name])])
        o["metadata"]["resourceVersion"] = str(version)
        o["metadata"].setdefault("labels", {})["churn"] = str(n[0])
        stores[name].upsert(o)

    def churn() -> None:
        with lock:
            n[0] += 1
            for i in range(3):
                changed("pods", n[0] * 7 + i, 10**9 + n[0] * 10 + i)
            changed("jobs", n[0], 10**9 + n[0])
            changed("podgroups", n[0], 10**9 + n[0])

    return cache, churn


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _fill_and_measure(cache) -> None:
    """Page traffic that fills the list memos the way many users would, then their sizes."""
    import gc

    from django.test import Client

    from bench.memo_size import memo_bytes

    gc.collect()
    before = _rss_mb()
    c = Client()
    queues = sorted(q["metadata"]["name"] for q in cache.snapshot().queues.values())
    paths = [f"/jobs/?queue={q}" for q in queues[:60]]
    paths += [f"/jobs/?sort={s}" for s in ("name", "-age", "phase", "queue", "pending", "retries")]
    paths += [f"/jobs/?phase={ph}" for ph in ("Pending", "Running", "Completed", "Failed")]
    paths += [f"/podgroups/?sort={s}" for s in ("name", "-age", "phase", "queue")]
    paths += ["/", "/queues/", "/podgroups/"]
    for path in paths:
        assert c.get(path).status_code == 200, path
    gc.collect()
    sizes = memo_bytes(cache)
    print(
        f"memos after {len(paths)} distinct list views: "
        + ", ".join(f"{k}={v / 1e6:.1f}MB" for k, v in sizes.items())
        + f"; total {sum(sizes.values()) / 1e6:.1f} MB; RSS {before:.0f} -> {_rss_mb():.0f} MB",
        flush=True,
    )


if __name__ == "__main__":
    main()
