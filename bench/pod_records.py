"""Memory of the deleted-pod records (dashboard/kube/podrecords.py): 10,000 records of pods with
two containers and a 200-character termination message, measured with tracemalloc, against the
estimate the byte bound uses.

    .venv/bin/python -m bench.pod_records [count]
"""

from __future__ import annotations

import sys
import tracemalloc

from dashboard.kube.podrecords import DeletedPods


def pod(i: int) -> dict:
    containers = []
    for c in ("main", "sidecar"):
        containers.append(
            {
                "name": c,
                "restartCount": 3,
                "state": {
                    "terminated": {
                        "reason": "Error",
                        "exitCode": 1,
                        "message": f"Traceback: ValueError in step {i}: " + "x" * 170,
                        "startedAt": "2026-01-01T00:00:00Z",
                        "finishedAt": "2026-01-01T00:10:00Z",
                    }
                },
            }
        )
    return {
        "metadata": {
            "name": f"train-{i // 8}-worker-{i % 8}",
            "namespace": "team-a",
            "uid": f"0b6d3f2e-5a7c-4d7e-9a51-{i:012d}",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"volcano.sh/job-name": f"train-{i // 8}", "volcano.sh/task-spec": "worker"},
        },
        "spec": {
            "nodeName": f"node-{i % 50}",
            "containers": [
                {
                    "name": "main",
                    "resources": {"requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}},
                },
                {"name": "sidecar", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
            ],
        },
        "status": {"phase": "Failed", "startTime": "2026-01-01T00:00:00Z", "containerStatuses": containers},
    }


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    pods = [pod(i) for i in range(count)]
    tracemalloc.start()
    records = DeletedPods(max_records=count, max_bytes=1 << 40)
    for p in pods:
        records.add(p)
    kept, _peak = tracemalloc.get_traced_memory()
    view = records.view()
    with_view, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"records: {len(records)} in {len(view)} jobs")
    print(f"traced: {kept / 1e6:.2f} MB ({kept / count:.0f} B/record)")
    print(f"with the published view: {with_view / 1e6:.2f} MB")
    print(f"estimate (record_size): {records.bytes / 1e6:.2f} MB ({records.bytes / count:.0f} B/record)")


if __name__ == "__main__":
    main()
