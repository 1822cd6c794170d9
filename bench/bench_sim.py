"""Simulated API server benchmark: store writes, paginated lists over HTTP, watch fan-out.
Prints numbers; not a test.

    .venv/bin/python -m bench.bench_sim               # 10,000 Jobs/PodGroups, 50,000 pods, 100,000 events
    .venv/bin/python -m bench.bench_sim --scale 0.1          # a tenth of that

Sections: (1) objects created per second through ``Store.create`` (the path scenario loaders and
controllers use), (2) full paginated lists over HTTP (limit 500) per kind, first (JSON encoding
of every object) and second time (cached encodings), plus a namespace and a label-selector list,
(3) watch fan-out: N watchers on pods while pods are mutated, (4) process RSS.
"""

from __future__ import annotations

import argparse
import http.client
import json
import resource
import time

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.kinds import EVENT, JOB, NAMESPACE, POD, PODGROUP

NAMESPACES = 20


def _rss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def load(cluster: SimulatedCluster, jobs: int, pods: int, events: int) -> None:
    store = cluster.store
    for i in range(NAMESPACES):
        store.create(NAMESPACE, {"metadata": {"name": f"ns-{i}"}})
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    plans = (
        (
            "jobs",
            JOB,
            jobs,
            lambda i: {
                "metadata": {
                    "name": f"job-{i}",
                    "namespace": f"ns-{i % NAMESPACES}",
                    "labels": {"team": f"t{i % 7}"},
                },
                "spec": {
                    "minAvailable": 3,
                    "tasks": [
                        {"name": "worker", "replicas": 5, "template": {"spec": {"containers": [container]}}}
                    ],
                },
            },
        ),
        (
            "podgroups",
            PODGROUP,
            jobs,
            lambda i: {
                "metadata": {"name": f"job-{i}-pg", "namespace": f"ns-{i % NAMESPACES}"},
                "spec": {"minMember": 3},
                "status": {"phase": "Running", "running": 3},
            },
        ),
        (
            "pods",
            POD,
            pods,
            lambda i: {
                "metadata": {
                    "name": f"job-{i // 5}-worker-{i % 5}",
                    "namespace": f"ns-{(i // 5) % NAMESPACES}",
                    "labels": {"volcano.sh/job-name": f"job-{i // 5}"},
                    "annotations": {"scheduling.k8s.io/group-name": f"job-{i // 5}-pg"},
                },
                "spec": {
                    "schedulerName": "volcano",
                    "nodeName": f"node-{i % 100}",
                    "containers": [container],
                },
            },
        ),
        (
            "events",
            EVENT,
            events,
            lambda i: {
                "metadata": {"name": f"ev-{i}", "namespace": f"ns-{i % NAMESPACES}"},
                "involvedObject": {"kind": "Pod", "name": f"p-{i}", "namespace": f"ns-{i % NAMESPACES}"},
                "reason": "Scheduled",
                "message": "Successfully assigned",
                "type": "Normal",
                "count": 1,
            },
        ),
    )
    print("| create | objects | seconds | objects/s |\n|---|---|---|---|")
    for name, kind, n, make in plans:
        t0 = time.perf_counter()
        for i in range(n):
            store.create(kind, make(i))
        dt = time.perf_counter() - t0
        print(f"| {name} | {n} | {dt:.2f} | {n / dt if dt else 0:,.0f} |")


def paged(cluster: SimulatedCluster, path: str, limit: int = 500) -> tuple[int, int, float, float]:
    conn = http.client.HTTPConnection(cluster.url.removeprefix("http://"), timeout=120)
    headers = {"Authorization": f"Bearer {cluster.admin_token}"}
    token, items, pages, size = "", 0, 0, 0
    sep = "&" if "?" in path else "?"
    t0 = time.perf_counter()
    while True:
        conn.request(
            "GET", f"{path}{sep}limit={limit}" + (f"&continue={token}" if token else ""), headers=headers
        )
        body = conn.getresponse().read()
        size += len(body)
        doc = json.loads(body)
        items += len(doc["items"])
        pages += 1
        token = doc["metadata"].get("continue", "")
        if not token:
            break
    conn.close()
    return items, pages, time.perf_counter() - t0, size / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies 10k jobs, 50k pods, 100k events")
    parser.add_argument("--watchers", type=int, default=4)
    parser.add_argument("--mutations", type=int, default=5000)
    args = parser.parse_args()
    jobs, pods, events = int(10_000 * args.scale), int(50_000 * args.scale), int(100_000 * args.scale)
    cluster = SimulatedCluster(seed=1, controllers=False, history_size=max(10_000, args.mutations))
    cluster.start()
    try:
        load(cluster, jobs, pods, events)
        print(f"\nRSS after load: {_rss_mb()} MB\n")
        print("| list over HTTP (limit 500) | items | pages | seconds | MB | ms/page |")
        print("|---|---|---|---|---|---|")
        for label, path in (
            ("jobs, first", "/apis/batch.volcano.sh/v1alpha1/jobs"),
            ("jobs, cached", "/apis/batch.volcano.sh/v1alpha1/jobs"),
            ("podgroups", "/apis/scheduling.volcano.sh/v1beta1/podgroups"),
            ("pods, first", "/api/v1/pods"),
            ("pods, cached", "/api/v1/pods"),
            ("pods, one namespace", "/api/v1/namespaces/ns-3/pods"),
            ("pods, label selector", "/api/v1/pods?labelSelector=volcano.sh%2Fjob-name%3Djob-7"),
            ("events, first", "/api/v1/events"),
            ("events, cached", "/api/v1/events"),
        ):
            n, pages, dt, mb = paged(cluster, path)
            print(f"| {label} | {n} | {pages} | {dt:.2f} | {mb:.1f} | {1000 * dt / pages:.1f} |")
        store = cluster.store
        watches = [
            store.watch(POD, resource_version=str(store.resource_version)) for _ in range(args.watchers)
        ]
        t0 = time.perf_counter()
        for i in range(args.mutations):
            j = i % max(1, pods)
            store.mutate(
                POD,
                f"ns-{(j // 5) % NAMESPACES}",
                f"job-{j // 5}-worker-{j % 5}",
                lambda o: o["status"].__setitem__(
                    "phase", "Running" if o["status"]["phase"] == "Pending" else "Pending"
                ),
            )
        dt = time.perf_counter() - t0
        print(
            f"\nwatch fan-out: {args.mutations} pod mutations with {args.watchers} watchers in {dt:.2f} s "
            f"({args.mutations / dt:,.0f}/s); queued per watcher: {watches[0].pending()}"
        )
        print(f"RSS at the end: {_rss_mb()} MB")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
