"""Django's request-scoped Locals under concurrent requests, in process, side by side.

    python -m bench.bench_locals [--jobs 10000 --pods 50000 --seconds 8 --threads 1,10]

Loads a generated cluster into an in-memory ClusterCache (bench/inproc_pages.py), then requests
each of ``--paths`` through Django's test Client from 1 and from 10 threads, closed loop with
churn between requests, once with Django's own ``asgiref.local.Local`` objects (a lock per read)
and once with the dashboard's ``threading.local`` swap (dashboard/threadlocal.py), alternating
the two twice. Prints requests/s, p50 latency and the request threads' CPU per request (ms).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import threading
import time

from asgiref.local import Local


def _use(mode: str) -> None:
    from dashboard import threadlocal

    for module, name in threadlocal.SWAPPED:
        setattr(module, name, Local() if mode == "asgiref Local" else threading.local())


def _run(path: str, threads: int, seconds: float, churn) -> tuple[int, float, float, float]:  # noqa: ANN001
    """(requests, wall s, p50 ms, CPU ms per request) of ``threads`` closed-loop clients."""
    from django.test import Client

    times: list[float] = []
    cpu: list[float] = []
    stop = time.perf_counter() + seconds

    def worker() -> None:
        c = Client()
        c0 = time.thread_time()
        n = 0
        while time.perf_counter() < stop:
            churn()
            s = time.perf_counter()
            r = c.get(path)
            times.append((time.perf_counter() - s) * 1000)
            assert r.status_code == 200, r.status_code
            n += 1
        cpu.append((time.thread_time() - c0) * 1000 / max(n, 1))

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    s = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - s
    return len(times), wall, statistics.median(times), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--pods", type=int, default=50_000)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--seconds", type=float, default=8.0, help="per path, mode and thread count")
    ap.add_argument("--threads", default="1,10")
    ap.add_argument("--paths", default="/jobs/,/queues/")
    args = ap.parse_args()
    from bench.inproc_pages import load_cache, setup_django

    setup_django()
    logging.getLogger("volcano_ui.request").setLevel(logging.WARNING)  # one line per request
    from django.test import Client

    from dashboard.kube import override_cluster_cache

    t0 = time.perf_counter()
    cache, churn = load_cache("large", args.jobs, args.pods, args.events)
    print(f"loaded in {time.perf_counter() - t0:.1f}s", flush=True)
    levels = [int(t) for t in args.threads.split(",")]
    print("| path | Locals | threads | requests/s | p50 ms | CPU ms/request |")
    print("|---|---|---|---|---|---|")
    with override_cluster_cache(cache):
        for path in args.paths.split(","):
            Client().get(path)  # warm
            for mode in ("asgiref Local", "threading.local") * 2:
                _use(mode)
                for level in levels:
                    n, wall, p50, cpu = _run(path, level, args.seconds, churn)
                    row = f"| {path} | {mode} | {level} | {n / wall:.1f} | {p50:.1f} | {cpu:.1f} |"
                    print(row, flush=True)
    _use("threading.local")


if __name__ == "__main__":
    main()
