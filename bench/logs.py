"""A Job's log page with many long logs: time to first byte and total, and the dashboard's memory
while many browsers follow it.

    .venv/bin/python -m bench.logs                      # 20 pods x 10,000 lines, 20 follows for 30 s
    .venv/bin/python -m bench.logs --pods 5 --lines 1000 --follows 5 --seconds 5   # a quick look

The simulated cluster (bench/simproc.py, controllers off) replays one Volcano Job whose ``--pods``
pods have been running long enough to have written ``--lines`` progress lines each (the simulator
generates a log from its container's start time, dashboard/sim/podlogs.py); the dashboard runs under
gunicorn with the production settings (bench/common.py). Measured:

- the Job's log page, default tail (1000 lines, merged by time) and ``tail=all``: time to first
  byte and to the last byte, median and max of ``--repeat`` requests, and the page's size;
- ``--follows`` clients following that page as static/dashboard/logs.js does (``?after=`` every
  2 s) for ``--seconds`` while the simulated clock advances 2 s every 2 s: poll latency, new lines
  received, "busy" answers (VOLCANO_UI_LOGS_MAX_STREAMS), and the gunicorn processes' RSS before,
  at its peak and after.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from bench.common import (
    LOOPBACK,
    exit_on_sigterm,
    machine_info,
    memory,
    percentile,
    start_dashboard,
    start_sim,
    wait_ready,
)
from dashboard.sim.clock import DEFAULT_START, rfc3339

NS = "default"
JOB = "log-bench"
# Seconds between progress lines of a "batch" container (dashboard/sim/podlogs.py _PERIOD).
BATCH_PERIOD = 1.5


def scenario(pods: int, lines: int) -> dict:
    """A List: the Job and its running pods, started ``lines`` progress periods before the clock."""
    started = rfc3339(DEFAULT_START - timedelta(seconds=lines * BATCH_PERIOD))
    items: list[dict] = [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": JOB, "namespace": NS, "uid": "00000000-0000-4000-8000-000000000001"},
            "spec": {
                "minAvailable": pods,
                "queue": "default",
                "schedulerName": "volcano",
                "tasks": [{"name": "worker", "replicas": pods, "template": {"spec": {"containers": []}}}],
            },
            "status": {"state": {"phase": "Running"}, "running": pods},
        }
    ]
    for i in range(pods):
        name = f"{JOB}-worker-{i}"
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": NS,
                    "uid": f"00000000-0000-4000-8000-{i + 2:012d}",
                    "labels": {"volcano.sh/job-name": JOB, "volcano.sh/task-spec": "worker"},
                    "annotations": {
                        "scheduling.k8s.io/group-name": JOB,
                        "volcano.sh/job-name": JOB,
                        "volcano.sh/task-spec": "worker",
                        "volcano.sh/task-index": str(i),
                    },
                },
                "spec": {
                    "schedulerName": "volcano",
                    "nodeName": "node-1",
                    "containers": [
                        {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "run-batch.sh"]}
                    ],
                },
                "status": {
                    "phase": "Running",
                    "startTime": started,
                    "containerStatuses": [
                        {
                            "name": "main",
                            "ready": True,
                            "restartCount": 0,
                            "state": {"running": {"startedAt": started}},
                        }
                    ],
                },
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, float, float, bytes, dict]:
    """(status, seconds to first byte, seconds to last byte, body, headers) of one GET."""
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=120)
    t0 = time.perf_counter()
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    first = resp.read(1)
    ttfb = time.perf_counter() - t0
    body = first + resp.read()
    total = time.perf_counter() - t0
    conn.close()
    return resp.status, ttfb, total, body, dict(resp.getheaders())


def page_timings(port: int, path: str, repeat: int) -> dict:
    runs = [get(port, path) for _ in range(repeat)]
    statuses = sorted({r[0] for r in runs})
    return {
        "path": path,
        "status": statuses,
        "ttfb_ms_median": statistics.median(r[1] for r in runs) * 1000,
        "ttfb_ms_max": max(r[1] for r in runs) * 1000,
        "total_ms_median": statistics.median(r[2] for r in runs) * 1000,
        "total_ms_max": max(r[2] for r in runs) * 1000,
        "bytes": len(runs[-1][3]),
        "lines": runs[-1][3].count(b'class="log-line'),
    }


def follow(port: int, path: str, after: str, until: float, out: dict, lock: threading.Lock) -> None:
    """One browser following the page: GET ?after= every 2 s, as logs.js does."""
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=60)
    latencies, lines, busy, errors = [], 0, 0, 0
    while time.monotonic() < until:
        t0 = time.perf_counter()
        try:
            conn.request("GET", f"{path}?after={after}", headers={"X-Log-Poll": "1"})
            resp = conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection(LOOPBACK, port, timeout=60)
            time.sleep(2)
            continue
        latencies.append(time.perf_counter() - t0)
        if resp.status != 200:
            errors += 1
        lines += body.count(b'class="log-line')
        busy += 1 if resp.getheader("X-Log-Busy") else 0
        after = resp.getheader("X-Log-After") or after
        time.sleep(max(0.0, 2.0 - (time.perf_counter() - t0)))
    conn.close()
    with lock:
        out["latencies"].extend(latencies)
        out["lines"].append(lines)
        out["busy"] += busy
        out["errors"] += errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=20)
    parser.add_argument("--lines", type=int, default=10_000, help="progress lines per pod")
    parser.add_argument("--follows", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the follows run")
    parser.add_argument("--repeat", type=int, default=5, help="requests per page measurement")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    workdir = Path(tempfile.mkdtemp(prefix="bench-logs-"))
    path = workdir / "logs-scenario.json"
    path.write_text(json.dumps(scenario(args.pods, args.lines)))
    sim = start_sim(workdir, scenario=str(path), extra=["--churn", "off"], timeout=120)
    dash = None
    try:
        dash = start_dashboard(
            workdir, sim, extra_env={"VOLCANO_UI_LOGS_JOB_MAX_PODS": str(max(20, args.pods))}
        )
        wait_ready(dash, timeout=120)
        page = f"/jobs/{NS}/{JOB}/logs/"
        results = {
            "machine": machine_info(),
            "args": vars(args),
            "default_tail": page_timings(dash.port, page, args.repeat),
            "tail_all": page_timings(dash.port, page + "?tail=all", args.repeat),
        }
        _status, _ttfb, _total, _body, headers = get(dash.port, page)
        after = sim.admin("GET", "/_sim/clock")["now"]  # type: ignore[index]
        lock = threading.Lock()
        out: dict = {"latencies": [], "lines": [], "busy": 0, "errors": 0}
        rss: list[int] = []
        before = memory(dash.pids()).rss
        until = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=follow, args=(dash.port, page, after, until, out, lock), daemon=True)
            for _ in range(args.follows)
        ]
        for t in threads:
            t.start()
        next_advance = time.monotonic()
        while time.monotonic() < until:
            if time.monotonic() >= next_advance:
                sim.admin("POST", "/_sim/advance", {"seconds": 2})
                next_advance += 2.0
            rss.append(memory(dash.pids()).rss)
            time.sleep(0.25)
        for t in threads:
            t.join(timeout=90)
        after_rss = memory(dash.pids()).rss
        lat = out["latencies"]
        results["follows"] = {
            "clients": args.follows,
            "seconds": args.seconds,
            "polls": len(lat),
            "poll_ms_p50": (percentile(lat, 50) or 0) * 1000,
            "poll_ms_p95": (percentile(lat, 95) or 0) * 1000,
            "new_lines_per_client_median": statistics.median(out["lines"]) if out["lines"] else 0,
            "busy_answers": out["busy"],
            "errors": out["errors"],
            "rss_mb_before": before / 2**20,
            "rss_mb_peak": max(rss, default=before) / 2**20,
            "rss_mb_after": after_rss / 2**20,
        }
        print(json.dumps(results, indent=2))
        return 0
    finally:
        if dash is not None:
            dash.stop()
        sim.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
