"""Cluster cache benchmark: initial sync and memory at scale, event throughput, snapshot cost,
and the measurements behind the cache's design choices. Prints numbers; not a test.

    .venv/bin/python -m bench.bench_sync                    # 10,000 Jobs/PodGroups, 50,000 pods
    .venv/bin/python -m bench.bench_sync --jobs 1000 --pods 5000 --events 10000   # quicker

The simulated cluster runs in its own process (bench/simproc.py, churn off) so this process's RSS
is the cache's alone. Sections:

1. initial sync: wall time until every kind is synced, list pages, objects held, RSS growth;
2. snapshot cost at this size: an unchanged snapshot, the first write after a snapshot (the
   copy-on-write copy), a full page-like read;
3. events applied per second: (a) the informer pipeline alone (decode + trim + index + publish) on
   real watch lines, (b) end to end over HTTP from a second, in-process simulated cluster;
4. raw JSON vs the client's generated models for the same list pages;
5. pod watch modes: one unfiltered watch ("all") vs a spec.schedulerName field selector.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

from bench.common import rss_mb  # noqa: E402 - after the path set-up above


def machine() -> str:
    cpus = os.cpu_count()
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            mem = f"{int(fh.readline().split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return f"{cpus} CPUs ({model}), {mem} RAM, Python {platform.python_version()}, {platform.system()}"


def options(**kw):
    from dashboard.kube import CacheOptions, InformerOptions

    informer_keys = set(InformerOptions.__dataclass_fields__)
    informer = InformerOptions(**{k: v for k, v in kw.items() if k in informer_keys})
    return CacheOptions(informer=informer, **{k: v for k, v in kw.items() if k not in informer_keys})


def sync_section(kubeconfig: str, page_size: int, pod_watch: str = "all") -> tuple[object, dict]:
    from dashboard.kube import build_cluster_cache

    gc.collect()
    before = rss_mb()
    cpu0 = time.process_time()
    cache = build_cluster_cache(
        kubeconfig=kubeconfig,
        context="",
        mode="kubeconfig",
        options=options(page_size=page_size, pod_watch=pod_watch),
    )
    t0 = time.perf_counter()
    cache.start()
    cache.wait_synced(timeout=1800)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    gc.collect()
    after = rss_mb()
    snap = cache.snapshot()
    counts = {name: len(view) for name, view in snap.views().items()}
    pages = {i.label: i.counters["list_pages"] for i in cache.informers}
    return cache, {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "rss_before_mb": before,
        "rss_after_mb": after,
        "rss_growth_mb": after - before,
        "counts": counts,
        "pages": pages,
    }


def snapshot_section(cache) -> dict:
    """CPU time of this thread (time.thread_time), so other load on the machine does not count."""
    clock = time.thread_time
    store = cache.store("pods")
    snap = cache.snapshot()
    n = 2000
    t0 = clock()
    for _ in range(n):
        cache.snapshot()
    unchanged_us = (clock() - t0) / n * 1e6
    # The first write after a *new* view was published pays the copy-on-write copy of the kind's
    # mappings; the rate limit is lifted here to measure that copy itself.
    interval, store.publish_interval = store.publish_interval, 0.0
    pod = dict(snap.pods.all()[0])
    samples = []
    for i in range(20):
        cache.snapshot()
        meta = dict(pod["metadata"])
        meta["resourceVersion"] = f"bench-{i}"
        pod = {**pod, "metadata": meta}
        t0 = clock()
        store.upsert(pod)
        samples.append(clock() - t0)
    store.publish_interval = interval
    samples.sort()
    first_write_ms = samples[len(samples) // 2] * 1000
    t0 = clock()
    for _ in range(200):
        store.upsert({**pod, "metadata": {**pod["metadata"], "resourceVersion": str(time.perf_counter())}})
    later_write_us = (clock() - t0) / 200 * 1e6
    # A page-like read: every Job's PodGroup, pods and gang progress (the Jobs list page at scale).
    from dashboard.volcano import gang

    snap = cache.snapshot()
    jobs = snap.jobs.all()
    t0 = clock()
    for job in jobs:
        snap.podgroup_for_job(job)
    links_ms = (clock() - t0) * 1000
    t0 = clock()
    for job in jobs:
        gang.job_gang(job)
    progress_ms = (clock() - t0) * 1000
    store.upsert({**pod, "metadata": {**pod["metadata"], "resourceVersion": "sorted"}})
    store.publish_interval, interval = 0.0, store.publish_interval
    snap = cache.snapshot()
    store.publish_interval = interval
    t0 = clock()
    snap.pods.all()
    all_pods_ms = (clock() - t0) * 1000
    return {
        "snapshot_unchanged_us": unchanged_us,
        "first_write_after_snapshot_ms": first_write_ms,
        "write_without_snapshot_us": later_write_us,
        "jobs_links_ms": links_ms,
        "jobs_progress_ms": progress_ms,
        "pods_all_sorted_ms": all_pods_ms,
    }


def pipeline_section(kubeconfig: str, events: int) -> dict:
    """Decode + trim + index + publish of real pod watch lines, without HTTP."""
    from dashboard.kube import build_cluster_cache
    from dashboard.kube.informer import Informer
    from dashboard.kube.kinds import PODS

    cache = build_cluster_cache(kubeconfig=kubeconfig, context="", mode="kubeconfig", options=options())
    body = cache.client.get_json("/api/v1/pods", [("limit", 500)])
    raw_pods = body["items"]
    lines = []
    for i in range(events):
        pod = raw_pods[i % len(raw_pods)]
        meta = {**pod["metadata"], "resourceVersion": str(10_000_000 + i)}
        etype = "ADDED" if i < len(raw_pods) else "MODIFIED"
        lines.append(json.dumps({"type": etype, "object": {**pod, "metadata": meta}}).encode())
    informer = Informer(
        PODS,
        cache.client,
        cache.store("pods"),
        cache.discovery,
        cache.options.informer,
        accept=cache._accept_pod,
    )
    stop = threading.Event()
    reads = [0]

    def reader():  # a page poller taking snapshots meanwhile, so copy-on-write costs are included
        while not stop.is_set():
            cache.snapshot().pods.get("x", "y")
            reads[0] += 1
            time.sleep(0.01)

    t = threading.Thread(target=reader)
    t.start()
    copies0 = cache.store("pods").copies
    t0, c0 = time.perf_counter(), time.thread_time()
    for line in lines:
        event = json.loads(line)
        informer._apply(event["type"], event["object"])
    elapsed, cpu = time.perf_counter() - t0, time.thread_time() - c0
    stop.set()
    t.join()
    # What an unfiltered pod watch pays for a pod that is not Volcano's: decode + filter, no trim.
    foreign = [
        json.dumps(
            {
                "type": "ADDED",
                "object": {
                    **p,
                    "spec": {**p["spec"], "schedulerName": "default-scheduler"},
                    "metadata": {k: v for k, v in p["metadata"].items() if k != "annotations"},
                },
            }
        ).encode()
        for p in raw_pods
    ]
    rounds = max(1, events // len(foreign))
    t0 = time.thread_time()
    for _ in range(rounds):
        for line in foreign:
            event = json.loads(line)
            informer._apply(event["type"], event["object"])
    reject_us = (time.thread_time() - t0) / (rounds * len(foreign)) * 1e6
    cache.client.close()
    return {
        "reject_us": reject_us,
        "events": events,
        "seconds": elapsed,
        "per_second": events / elapsed,
        "per_cpu_second": events / cpu,
        "snapshots_meanwhile": reads[0],
        "copies": cache.store("pods").copies - copies0,
    }


def end_to_end_section(events: int) -> dict:
    """Mutations in an in-process simulated cluster's store -> watch over HTTP -> cache."""
    from dashboard.kube import build_cluster_cache
    from dashboard.sim.cluster import SimulatedCluster

    cluster = SimulatedCluster(seed=1, controllers=False, history_size=max(10000, events * 2))
    cluster.start("127.0.0.1", 0)
    n_pods = 500
    for i in range(n_pods):
        cluster.store.create(
            "pods",
            {
                "metadata": {"name": f"e2e-{i}"},
                "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "x"}]},
            },
            "default",
        )
    with tempfile.TemporaryDirectory() as tmp:
        kc = cluster.write_kubeconfig(Path(tmp) / "kc")
        cache = build_cluster_cache(kubeconfig=str(kc), context="", mode="kubeconfig", options=options())
        cache.start()
        cache.wait_synced(timeout=60)
    (informer,) = [i for i in cache.informers if i.spec.name == "pods"]
    base = informer.counters["events"]

    def bump(i):
        def fn(obj):
            obj["metadata"].setdefault("labels", {})["n"] = str(i)

        return fn

    t0 = time.perf_counter()
    for i in range(events):
        cluster.store.mutate("pods", "default", f"e2e-{i % n_pods}", bump(i))
    written = time.perf_counter() - t0
    cache.wait_for(lambda s: informer.counters["events"] - base >= events, timeout=600)
    elapsed = time.perf_counter() - t0
    cache.stop()
    cluster.stop()
    return {
        "events": events,
        "sim_write_seconds": written,
        "seconds": elapsed,
        "per_second": events / elapsed,
    }


def models_section(kubeconfig: str, pages: int) -> dict:
    """The same pod list pages decoded as raw JSON vs the client's generated models."""
    from kubernetes import client as k8s

    from dashboard.kube.client import KubeClient, load_configuration

    cfg = load_configuration("kubeconfig", kubeconfig, "")
    raw = KubeClient(cfg)
    api = k8s.CoreV1Api(k8s.ApiClient(cfg))

    def run_raw():
        cont, n = "", 0
        for _ in range(pages):
            q = [("limit", 500)] + ([("continue", cont)] if cont else [])
            body = raw.get_json("/api/v1/pods", q)
            n += len(body["items"])
            cont = body["metadata"].get("continue")
            if not cont:
                break
        return n

    def run_models():
        cont, n = None, 0
        for _ in range(pages):
            kwargs = {"limit": 500}
            if cont:
                kwargs["_continue"] = cont
            result = api.list_pod_for_all_namespaces(**kwargs)
            n += len(result.items)
            cont = result.metadata._continue
            if not cont:
                break
        return n

    t0 = time.perf_counter()
    n_raw = run_raw()
    raw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    models_error = ""
    try:
        n_models = run_models()
    except Exception as exc:  # noqa: BLE001 - the models' strict validation is itself a finding
        n_models, models_error = 0, f"{type(exc).__name__}: {str(exc).splitlines()[0:3]}"
    models_s = time.perf_counter() - t0
    # Memory held by one page of 500 pods in each form (tracemalloc, Python allocations only).
    import tracemalloc

    from dashboard.kube.kinds import PODS

    def held(fn):
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        kept = fn()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        del kept
        return size / 1024 / 500

    try:
        mem_models = held(lambda: api.list_pod_for_all_namespaces(limit=500))
    except Exception:  # noqa: BLE001
        tracemalloc.stop()
        mem_models = float("nan")
    mem_raw = held(lambda: raw.get_json("/api/v1/pods", [("limit", 500)]))
    mem_trimmed = held(
        lambda: [PODS.trim(p) for p in raw.get_json("/api/v1/pods", [("limit", 500)])["items"]]
    )
    raw.close()
    return {
        "pods": n_raw,
        "raw_seconds": raw_s,
        "models_pods": n_models,
        "models_seconds": models_s,
        "models_error": models_error,
        "kib_models": mem_models,
        "kib_raw": mem_raw,
        "kib_trimmed": mem_trimmed,
    }


def outage_section(sim, kubeconfig: str, seconds: float) -> dict:
    """The real-time fault scenario with production timings (InformerOptions defaults): the API
    server stops answering for ``seconds``; how fast the cache says "stale", how fast it recovers,
    and how many requests it made meanwhile (the backoff at work)."""
    from dashboard.kube import build_cluster_cache

    cache = build_cluster_cache(kubeconfig=kubeconfig, context="", mode="kubeconfig", options=options())
    cache.start()
    cache.wait_synced(timeout=1800)
    before = sim.stats()["requests"]
    attempts0 = {i.label: i.counters["errors"] for i in cache.informers}
    t0 = time.perf_counter()
    sim.faults(unavailable_seconds=seconds)
    cache.wait_for(lambda s: all(v.state.name == "stale" for v in s.views().values()), timeout=seconds + 120)
    stale_after = time.perf_counter() - t0
    cache.wait_for(lambda s: all(v.state.name == "synced" for v in s.views().values()), timeout=seconds + 300)
    recovered_after = time.perf_counter() - t0
    after = sim.stats()["requests"]
    delta = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    failed = {i.label: i.counters["errors"] - attempts0[i.label] for i in cache.informers}
    cache.stop()
    return {
        "stale_after": stale_after,
        "recovered_after": recovered_after,
        "requests": delta,
        "failed": failed,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument(
        "--events", type=int, default=100_000, help="events in the cluster (cache keeps 20,000)"
    )
    parser.add_argument("--port", type=int, default=18310)
    parser.add_argument("--page-size", type=int, default=500)
    parser.add_argument("--pipeline-events", type=int, default=50_000)
    parser.add_argument("--e2e-events", type=int, default=20_000)
    parser.add_argument("--model-pages", type=int, default=10)
    parser.add_argument("--skip-modes", action="store_true", help="skip the pod watch mode comparison")
    parser.add_argument(
        "--outage",
        type=float,
        default=0.0,
        help="also run the real-time fault scenario: the API server silent for this many seconds",
    )
    parser.add_argument("--only-outage", action="store_true", help="run only the fault scenario")
    parser.add_argument(
        "--generator",
        choices=("auto", "sim", "bench"),
        default="auto",
        help="large-cluster generator (bench/simproc.py): the simulated cluster's or bench/scale.py's",
    )
    args = parser.parse_args(argv)

    import django

    django.setup()
    from bench.common import start_sim

    print(f"machine: {machine()}")
    print(f"command: python -m bench.bench_sync {' '.join(argv if argv is not None else sys.argv[1:])}")
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        t0 = time.perf_counter()
        sim = start_sim(
            Path(tmp),
            port=args.port,
            scenario="large",
            extra=[
                "--jobs",
                str(args.jobs),
                "--pods",
                str(args.pods),
                "--queues",
                str(args.queues),
                "--events",
                str(args.events),
                "--churn",
                "off",
                "--generator",
                args.generator,
            ],
        )
        print(
            f"simulated cluster loaded in {time.perf_counter() - t0:.1f}s: {sim.info.get('counts')} "
            f"({sim.info.get('generator')})"
        )
        try:
            kubeconfig = str(sim.kubeconfig)
            if args.only_outage:
                args.outage = args.outage or 30.0
                out = outage_section(sim, kubeconfig, args.outage)
                print(f"\n6. the API server silent for {args.outage:.0f} s (production timings)")
                print(
                    f"   every kind 'stale' after {out['stale_after']:.1f} s; every kind 'synced' again "
                    f"{out['recovered_after'] - args.outage:.1f} s after the server answered again"
                )
                print(
                    f"   failed attempts per informer during the outage (backoff 0.5 s doubling to 30 s, "
                    f"+-20 %; each waits up to its timeout): {out['failed']}"
                )
                print(f"   requests the simulated cluster counted meanwhile: {out['requests']}")
                return 0
            cache, sync = sync_section(kubeconfig, args.page_size)
            print("\n1. initial sync (pod_watch=all)")
            print(
                f"   wall time until every kind synced: {sync['seconds']:.1f} s "
                f"(CPU time of this process: {sync['cpu_seconds']:.1f} s; "
                "the rest is the simulated API server)"
            )
            print(f"   objects held: {sync['counts']}")
            print(f"   list pages: {sync['pages']}")
            print(
                f"   RSS {sync['rss_before_mb']:.0f} MB -> {sync['rss_after_mb']:.0f} MB "
                f"(growth {sync['rss_growth_mb']:.0f} MB)"
            )
            per_pod = sync["rss_growth_mb"] * 1024 / max(1, sum(sync["counts"].values()))
            print(f"   ~{per_pod:.2f} KiB per cached object on average")

            snap = snapshot_section(cache)
            print("\n2. snapshot cost at this size (CPU time of the reading thread)")
            print(f"   snapshot() with nothing changed: {snap['snapshot_unchanged_us']:.1f} us")
            print(
                "   first pod write after a snapshot (copy-on-write copy): "
                f"{snap['first_write_after_snapshot_ms']:.2f} ms"
            )
            print(f"   pod write with no snapshot in between: {snap['write_without_snapshot_us']:.1f} us")
            print(
                f"   every Job -> its PodGroup: {snap['jobs_links_ms']:.0f} ms; "
                f"every Job's gang progress: {snap['jobs_progress_ms']:.0f} ms"
            )
            print(f"   pods.all() on a new view (sorted once per view): {snap['pods_all_sorted_ms']:.0f} ms")
            cache.stop()
            del cache
            gc.collect()

            pipe = pipeline_section(kubeconfig, args.pipeline_events)
            print(
                "\n3a. informer pipeline alone (decode + trim + index + publish, "
                "a poller snapshotting every 10 ms)"
            )
            print(
                f"   {pipe['events']} pod events: {pipe['per_cpu_second']:,.0f} events per CPU-second "
                "of the applying "
                f"thread; {pipe['per_second']:,.0f} events/s wall "
                f"({pipe['snapshots_meanwhile']} snapshots taken, {pipe['copies']} copy-on-write copies: "
                f"publication is rate-limited to one per 50 ms)"
            )
            print(
                "   a pod that is not Volcano's, seen by the unfiltered pod watch: "
                f"{pipe['reject_us']:.0f} us "
                f"of CPU (decode + filter), nothing kept"
            )
            e2e = end_to_end_section(args.e2e_events)
            print("3b. end to end over HTTP (in-process simulated cluster: store.mutate -> watch -> cache)")
            print(
                f"   {e2e['events']} MODIFIED events in {e2e['seconds']:.2f} s "
                f"= {e2e['per_second']:,.0f} events/s "
                f"(the simulated cluster's writes took {e2e['sim_write_seconds']:.2f} s of that)"
            )

            models = models_section(kubeconfig, args.model_pages)
            print("\n4. raw JSON vs generated models (same pod list pages over HTTP)")
            print(
                f"   raw JSON: {models['pods']} pods in {models['raw_seconds']:.2f} s "
                f"({models['pods'] / models['raw_seconds']:,.0f} pods/s)"
            )
            if models["models_error"]:
                print(f"   models:   FAILED after {models['models_seconds']:.2f} s: {models['models_error']}")
            else:
                print(
                    f"   models:   {models['models_pods']} pods in {models['models_seconds']:.2f} s "
                    f"({models['models_pods'] / models['models_seconds']:,.0f} pods/s)"
                )
            print(
                f"   memory per pod: models {models['kib_models']:.1f} KiB, "
                f"raw dict {models['kib_raw']:.1f} KiB, "
                f"trimmed dict {models['kib_trimmed']:.1f} KiB"
            )

            if not args.skip_modes:
                results = {}
                for mode in ("selector", "all"):
                    mode_cache, results[mode] = sync_section(kubeconfig, args.page_size, pod_watch=mode)
                    mode_cache.stop()
                    del mode_cache
                    gc.collect()
                print(
                    "\n5. pod watch modes (fresh full syncs, back to back; every generated pod is Volcano's)"
                )
                for mode, label in (
                    ("all", "all (one watch, client-side filter)"),
                    ("selector", "selector (spec.schedulerName=volcano)"),
                ):
                    print(
                        f"   {label}: {results[mode]['seconds']:.1f} s wall, "
                        f"{results[mode]['cpu_seconds']:.1f} s CPU in this process"
                    )
            if args.outage:
                out = outage_section(sim, kubeconfig, args.outage)
                print(f"\n6. the API server silent for {args.outage:.0f} s (production timings)")
                print(
                    f"   every kind 'stale' after {out['stale_after']:.1f} s; every kind 'synced' again "
                    f"{out['recovered_after'] - args.outage:.1f} s after the server answered again"
                )
                print(
                    f"   failed attempts per informer during the outage (backoff 0.5 s doubling to 30 s, "
                    f"+-20 %; each waits up to its timeout): {out['failed']}"
                )
                print(f"   requests the simulated cluster counted meanwhile: {out['requests']}")
            stats = sim.stats()["requests"]
            print(
                "\nrequests seen by the simulated cluster:",
                {k: v for k, v in stats.items() if k.startswith(("list", "watch"))},
            )
        finally:
            sim.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
