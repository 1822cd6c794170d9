"""The scale benchmark: the dashboard under gunicorn against a large, churning simulated cluster.

    python -m bench.run                     # the benchmark scale (make bench)
    python -m bench.run --scenario tiny --seconds 1 --concurrency 1,2 --poll-seconds 4 --pollers 4

Three processes: the simulated cluster (bench/simproc.py), the dashboard (gunicorn, production
settings, DEBUG off) and this load generator. Prints markdown tables on stdout (progress on
stderr) and writes them, with the raw numbers as JSON, to --out.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import endpoints as ep_mod
from bench.common import (
    REPO,
    add_cluster_arguments,
    cpu_seconds,
    exit_on_sigterm,
    fmt_mb,
    fmt_ms,
    http_get,
    log,
    machine_info,
    markdown_table,
    median,
    memory,
    other_load,
    percentile,
    start_dashboard,
    start_sim,
    wait_ready,
)
from bench.loadgen import closed_loop, pollers
from bench.simstats import api_calls, api_calls_by_resource, open_watches, per_minute

# Targets on the 2-core machine (server time p50 with 1 client).
TARGETS = {
    "jobs list, page 1": 30.0,
    "job detail": 30.0,
    "overview": 50.0,
    "fragment, unchanged (204)": 2.0,
}
RSS_TARGET_MB = 600
SYNC_TARGET_S = 60
# Load goals, as ratios of two numbers of the same run (the machine's noise cancels).
POLL_P95_RATIO = 5.0  # the pollers' p95 over the 1-client p50 of the unchanged fragment
UNCHANGED_204_SHARE = 0.9  # of the polls of Jobs that did not change in the window
JOBS_SCALE_RATIO = 1.5  # jobs list req/s with 10 clients over 1 client
JOBS_VS_DETAIL = 1.5  # jobs list page 1 server p50 over the job detail's, 1 client


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_cluster_arguments(parser)
    parser.add_argument("--concurrency", default="1,10,100", help="comma-separated client counts")
    parser.add_argument("--seconds", type=float, default=10.0, help="max seconds per endpoint and level")
    parser.add_argument("--max-requests", type=int, default=3000, help="max requests per endpoint and level")
    parser.add_argument("--pollers", type=int, default=100)
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between one poller's requests")
    parser.add_argument("--poll-seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, help="override the gunicorn config's worker count")
    parser.add_argument("--threads", type=int, help="override the gunicorn config's thread count")
    parser.add_argument("--sim-port", type=int, default=0)
    parser.add_argument("--port", type=int, default=0, help="the dashboard's port (0 = any free one)")
    parser.add_argument(
        "--compare-runs", type=int, default=3, help="runs of kubectl / client list (0 = skip)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="directory for results")
    parser.add_argument("--ready-timeout", type=float, default=600.0)
    return parser.parse_args(argv)


def sim_extra(args: argparse.Namespace) -> list[str]:
    extra = [
        "--churn",
        args.churn,
        "--generator",
        args.generator,
    ]
    for name in ("jobs", "pods", "queues", "events", "nodes", "hypernodes", "arrivals_per_min"):
        if getattr(args, name, None) is not None:
            extra += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return extra


def compare_without_dashboard(kubeconfig: Path, runs: int) -> dict:
    """What a user waits for without the dashboard: kubectl and a plain client list of all Jobs."""
    out: dict = {"kubectl_ms": [], "client_ms": [], "kubectl_rows": None, "client_items": None}
    kubectl = "/usr/bin/kubectl"
    for _ in range(runs):
        if Path(kubectl).exists():
            start = time.perf_counter()
            proc = subprocess.run(
                [kubectl, "--kubeconfig", str(kubeconfig), "get", "vcjob", "-A"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            elapsed = (time.perf_counter() - start) * 1000
            if proc.returncode == 0:
                out["kubectl_ms"].append(elapsed)
                out["kubectl_rows"] = max(0, len(proc.stdout.splitlines()) - 1)
            else:
                out["kubectl_error"] = proc.stderr.strip()[-300:]
        from kubernetes import client, config

        start = time.perf_counter()
        api = config.new_client_from_config(config_file=str(kubeconfig))
        try:
            result = client.CustomObjectsApi(api).list_cluster_custom_object(
                "batch.volcano.sh", "v1alpha1", "jobs"
            )
        finally:
            api.close()
        out["client_ms"].append((time.perf_counter() - start) * 1000)
        items = result.get("items") if isinstance(result, dict) else getattr(result, "items", None)
        out["client_items"] = len(items or [])
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    exit_on_sigterm()
    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    started_wall = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine = machine_info()
    busy_before = other_load()
    results: dict = {
        "started": started_wall,
        "machine": machine,
        "busy_before": busy_before,
        "argv": sys.argv[1:] if argv is None else argv,
    }
    workdir = Path(tempfile.mkdtemp(prefix="volcano-ui-bench-"))
    sim = dash = None
    try:
        sim = start_sim(workdir, port=args.sim_port, scenario=args.scenario, extra=sim_extra(args))
        results["sim"] = sim.info
        log(
            f"sim ready at {sim.url}: {sim.info['counts']} "
            f"in {sim.info['load_seconds']}s ({sim.info['generator']})"
        )

        stats0 = sim.stats()
        dash = start_dashboard(workdir, sim, port=args.port, workers=args.workers, threads=args.threads)
        sync_s = wait_ready(dash, timeout=args.ready_timeout)
        results["initial_sync_s"] = round(sync_s, 2)
        results["gunicorn"] = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(dash.command))
        mem_ready = memory(dash.pids())
        log(f"dashboard ready in {sync_s:.1f}s; RSS {fmt_mb(mem_ready.rss)} MB")
        # Who used the two cores while we measured: the simulated API server, the dashboard, us.
        cpu0 = (time.monotonic(), cpu_seconds([sim.proc.pid]), cpu_seconds(dash.pids()), time.process_time())
        stats_ready = sim.stats()
        results["api_calls_during_sync"] = _delta(api_calls(stats0), api_calls(stats_ready))

        eps = ep_mod.resolve(dash.base, str(sim.kubeconfig))
        results["endpoint_notes"] = eps.notes
        targets = ep_mod.targets(eps, dash.base)
        # Warm every path once per worker (template loading, first-touch caches).
        for target in targets:
            closed_loop(target, port=dash.port, concurrency=2, max_requests=10, max_seconds=10)

        rows = []
        raw = []
        for level in levels:
            for target in targets:
                drain(dash)
                res = closed_loop(
                    target,
                    port=dash.port,
                    concurrency=level,
                    max_requests=args.max_requests,
                    max_seconds=args.seconds,
                )
                raw.append(res.as_dict())
                if res.statuses.get(404):
                    results.setdefault("endpoint_notes", eps.notes).append(
                        f"{target.name}, {level} clients: {res.statuses[404]} answers were 404 (the Job "
                        "finished and was deleted by churn meanwhile; it left the rotation)"
                    )
                rows.append(
                    [
                        target.name,
                        level,
                        res.count,
                        res.error_count,
                        f"{res.throughput:.0f}",
                        fmt_ms(res.p(50)),
                        fmt_ms(res.p(95)),
                        fmt_ms(res.p(99)),
                        fmt_ms(res.server_p(50)),
                        fmt_ms(res.server_p(95)),
                        fmt_ms(percentile(res.cpu_ms, 50)),
                        f"{res.statuses.get(204, 0) / res.count:.0%}"
                        if res.count and 204 in target.expect
                        else "",
                    ]
                )
                log(
                    f"{target.name} c={level}: n={res.count} err={res.error_count} "
                    f"p50={fmt_ms(res.p(50))} ms "
                    f"server p50={fmt_ms(res.server_p(50))} ms {res.throughput:.0f} rps"
                )
        results["latency"] = raw
        mem_after_latency = memory(dash.pids())

        # N pollers on the fragment every interval, as open browser tabs would; like every row,
        # after the requests the last one's clients gave up on have left the worker, and once
        # the background work the saturated rows held back (informers, recorder) is done.
        drain(dash)
        results["settle_s"] = round(settle(dash), 1)
        poll_res, poll_stats = run_pollers(args, dash, sim, eps)
        results["pollers"] = poll_res.as_dict() | poll_stats
        mem_after_poll = memory(dash.pids())

        comparison = compare_without_dashboard(sim.kubeconfig, args.compare_runs) if args.compare_runs else {}
        results["comparison"] = comparison
        wall = time.monotonic() - cpu0[0]
        results["cpu_share"] = {
            "wall_s": round(wall, 1),
            "sim": round((cpu_seconds([sim.proc.pid]) - cpu0[1]) / wall, 2),
            "dashboard": round((cpu_seconds(dash.pids()) - cpu0[2]) / wall, 2),
            "load": round((time.process_time() - cpu0[3]) / wall, 2),
        }
        busy_after = other_load()
        results["busy_after"] = busy_after
        results["memory"] = {
            "ready": _mem_dict(mem_ready),
            "after_latency": _mem_dict(mem_after_latency),
            "after_pollers": _mem_dict(mem_after_poll),
        }
        report = render(results, rows, args, poll_res)
        print(report)
        args.out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        (args.out / f"bench-{args.scenario}-{stamp}.md").write_text(report + "\n")
        (args.out / f"bench-{args.scenario}-{stamp}.json").write_text(
            json.dumps(results, indent=1, default=str)
        )
        log(f"wrote {args.out}/bench-{args.scenario}-{stamp}.md")
        return 0
    finally:
        if dash is not None:
            dash.stop()
        if sim is not None:
            sim.stop()


def drain(dash, timeout: float = 120.0) -> float:  # noqa: ANN001
    """Wait until the dashboard answers /healthz quickly again; returns the seconds waited.

    Requests a client gave up on (timeouts at 100 clients) are still queued in the worker; without
    this the next row would measure that backlog instead of its own page.
    """
    start = time.monotonic()
    fast = 0
    while time.monotonic() - start < timeout and fast < 2:
        t0 = time.perf_counter()
        with contextlib.suppress(OSError):
            http_get(dash.base + "/healthz", timeout=timeout)
        fast = fast + 1 if time.perf_counter() - t0 < 0.05 else 0
        if fast < 2:
            time.sleep(0.2)
    waited = time.monotonic() - start
    if waited > 1:
        log(f"waited {waited:.1f}s for the dashboard to drain its backlog")
    return waited


#: The pollers start when the dashboard's processes used less than this many cores over
#: SETTLE_WINDOW_S (following the churn alone takes about 0.2 on the 2-core machine).
SETTLE_CORES = 0.4
SETTLE_WINDOW_S = 2.0


def settle(dash, timeout: float = 90.0) -> float:  # noqa: ANN001
    """Wait until the dashboard's CPU use over ``SETTLE_WINDOW_S`` is below ``SETTLE_CORES``
    (at most ``timeout``); returns the seconds waited.

    At 100 clients the background threads give way to requests for most of each second, so the
    informers and the history recorder fall behind; they catch up once the load stops. Without
    this the pollers would measure that catching up rather than a steady state of open tabs."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        cpu0, t0 = cpu_seconds(dash.pids()), time.monotonic()
        time.sleep(SETTLE_WINDOW_S)
        cores = (cpu_seconds(dash.pids()) - cpu0) / (time.monotonic() - t0)
        if cores < SETTLE_CORES:
            break
    waited = time.monotonic() - start
    log(f"waited {waited:.1f}s for the dashboard's background work to settle")
    return waited


def job_resource_versions(kubeconfig, paths: list[str]) -> dict[str, str]:  # noqa: ANN001
    """{job page path: the Job's resourceVersion} read from the simulated server (outside the
    measured window; "" for a Job that cannot be read)."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kubeconfig))
    out = {}
    try:
        crd = client.CustomObjectsApi(api)
        for path in paths:
            parts = [p for p in path.split("/") if p]
            try:
                obj = crd.get_namespaced_custom_object(
                    "batch.volcano.sh", "v1alpha1", parts[-2], "jobs", parts[-1]
                )
                out[path] = obj["metadata"]["resourceVersion"]
            except Exception:  # noqa: BLE001 - deleted by churn, or not a Job path
                out[path] = ""
    finally:
        api.close()
    return out


def share_204_by_job(tally: dict, before: dict[str, str], after: dict[str, str]) -> dict:
    """The 204 share of the fragment polls of Jobs whose resourceVersion is the same before and
    after the polling window ("unchanged") and of the others ("changed"), with the poll counts."""
    out = {}
    for label, pick in (("unchanged", True), ("changed", False)):
        n204 = n200 = 0
        for path, counts in tally.items():
            same = bool(before.get(path)) and before.get(path) == after.get(path)
            if same == pick:
                n204 += counts["204"]
                n200 += counts["200"]
        total = n204 + n200
        out[label] = {"polls": total, "share_204": round(n204 / total, 3) if total else None}
    return out


def _delta(before: dict, after: dict) -> dict:
    return {
        k: after.get(k, 0) - before.get(k, 0)
        for k in set(before) | set(after)
        if after.get(k, 0) - before.get(k, 0)
    }


def _mem_dict(sample) -> dict:  # noqa: ANN001
    return {
        "rss_mb": round(sample.rss / 2**20, 1),
        "pss_mb": None if sample.pss is None else round(sample.pss / 2**20, 1),
        "per_process": [
            {"pid": pid, "rss_mb": round(rss / 2**20, 1), "threads": t} for pid, rss, t in sample.per_process
        ],
    }


def run_pollers(args: argparse.Namespace, dash, sim, eps) -> tuple:  # noqa: ANN001
    """``args.pollers`` clients, each polling one Job's status fragment every ``args.interval`` s.

    Each poller keeps the version from its last 200, as htmx does (bench/endpoints.py
    ``poll_mix``). Meanwhile the simulated server's request counters are sampled: the target is
    that only the informers' watches reach it (no list or get caused by page views).
    """
    request, observe = ep_mod.poll_mix(eps, dash.base)
    samples = []

    def tick(elapsed: float) -> None:
        samples.append({"t": round(elapsed, 1), "stats": sim.stats(), "mem": memory(dash.pids()).rss})

    jobs_before = job_resource_versions(sim.kubeconfig, eps.job_details)
    stats_before = sim.stats()
    t0 = time.monotonic()
    res = pollers(
        port=dash.port,
        count=args.pollers,
        interval_s=args.interval,
        duration_s=args.poll_seconds,
        request=request,
        observe=observe,
        name=f"{args.pollers} pollers",
        on_tick=tick,
        tick_s=max(1.0, min(15.0, args.poll_seconds / 4)),
    )
    stats_after = sim.stats()
    minutes = (time.monotonic() - t0) / 60.0
    calls = _delta(api_calls(stats_before), api_calls(stats_after))
    jobs_after = job_resource_versions(sim.kubeconfig, eps.job_details)
    return res, {
        "share_204_by_job": share_204_by_job(observe.tally, jobs_before, jobs_after),
        "api_calls": calls,
        "api_calls_by_resource": _delta(
            api_calls_by_resource(stats_before), api_calls_by_resource(stats_after)
        ),
        "api_calls_per_min": per_minute(calls, minutes),
        "open_watches": open_watches(stats_after),
        "share_204": round(res.statuses.get(204, 0) / res.count, 3) if res.count else None,
        "gone_404": res.statuses.get(404, 0),
        "peak_rss_mb": round(max([s["mem"] for s in samples] or [0]) / 2**20, 1),
    }


def render(results: dict, rows: list, args: argparse.Namespace, poll_res) -> str:  # noqa: ANN001
    m = results["machine"]
    sim = results["sim"]
    lines = [
        f"### Benchmark ({args.scenario}) — {results['started']}",
        "",
        f"Machine: {m['nproc']} cores, {m['memory']} RAM, Python {m['python']}, Linux {m['kernel']}; "
        f"load average at start {m['loadavg']}. Other busy processes at start: {results['busy_before']}; "
        f"at end: {results['busy_after']}.",
        "",
        f"Cluster: {', '.join(f'{v} {k}' for k, v in sim['counts'].items())}; loaded by {sim['generator']} "
        f"in {sim['load_seconds']} s; churn `{sim['churn']}` at {sim['arrivals_per_min']:g} new Jobs/min.",
        f"Dashboard: `{results['gunicorn']}` (DEBUG off).",
        "",
        f"Initial sync (spawn to every worker's /readyz 200): **{results['initial_sync_s']} s**. "
        f"API calls during sync: {results['api_calls_during_sync'] or 'not counted'}.",
        "",
        "Latency in ms (client-observed over loopback keep-alive; server = `Server-Timing: app`, the "
        "wall time in Django; server CPU = `Server-Timing: cpu`, the serving thread's CPU time, which "
        "other load on the machine inflates less):",
        "",
        markdown_table(
            [
                "endpoint",
                "clients",
                "requests",
                "errors",
                "req/s",
                "p50",
                "p95",
                "p99",
                "server p50",
                "server p95",
                "server CPU p50",
                "204 share",
            ],
            rows,
        ),
        "",
    ]
    for note in results.get("endpoint_notes", []):
        lines.append(f"- {note}")
    p = results["pollers"]
    lines += [
        "",
        f"{args.pollers} pollers, one fragment request every {args.interval:g} s each, "
        f"for {args.poll_seconds:g} s (started after {results.get('settle_s', 0):g} s waiting for the "
        f"dashboard's CPU use to fall below {SETTLE_CORES:g} cores):",
        "",
        markdown_table(
            [
                "requests",
                "errors",
                "p50",
                "p95",
                "p99",
                "server p50",
                "204 share",
                "404 (Job deleted)",
                "API calls/min at the sim",
                "open watches",
            ],
            [
                [
                    p["count"],
                    sum(p["errors"].values()),
                    fmt_ms(p["p50_ms"]),
                    fmt_ms(p["p95_ms"]),
                    fmt_ms(p["p99_ms"]),
                    fmt_ms(p["server_p50_ms"]),
                    p["share_204"],
                    p["gone_404"],
                    _fmt_calls(p["api_calls_per_min"]),
                    p["open_watches"],
                ]
            ],
        ),
        "",
    ]
    by_job = p.get("share_204_by_job") or {}
    if by_job:
        lines += [
            "204 share of the polls by polled Job (unchanged: the same resourceVersion before and after "
            "the window): "
            + "; ".join(f"{label} {v['share_204']} of {v['polls']} polls" for label, v in by_job.items()),
            "",
        ]
    by_resource = {
        k: v for k, v in (p.get("api_calls_by_resource") or {}).items() if not k.startswith("watch ")
    }
    if by_resource:
        lines += [
            "API calls other than watches during the pollers: "
            + ", ".join(f"`{k}` {v}" for k, v in sorted(by_resource.items())),
            "",
        ]
    share = results["cpu_share"]
    lines += [
        f"CPU used while measuring ({share['wall_s']} s; cores busy on average, of 2): simulated API server "
        f"{share['sim']}, dashboard {share['dashboard']}, load generator {share['load']}; the rest of the "
        "machine's load came from other processes (see the top).",
        "",
    ]
    mem = results["memory"]
    lines += [
        "Memory of the dashboard processes (MB; RSS summed over master and workers, "
        "PSS counts shared pages once):",
        "",
        markdown_table(
            ["when", "RSS total", "PSS total", "per process (RSS, threads)"],
            [
                [
                    label,
                    mem[key]["rss_mb"],
                    mem[key]["pss_mb"],
                    ", ".join(f"{pp['rss_mb']}/{pp['threads']}t" for pp in mem[key]["per_process"]),
                ]
                for label, key in (
                    ("after sync", "ready"),
                    ("after latency runs", "after_latency"),
                    ("after pollers", "after_pollers"),
                )
            ],
        ),
        "",
    ]
    comp = results.get("comparison") or {}
    jobs_p50 = next(
        (
            r["p50_ms"]
            for r in results["latency"]
            if r["name"] == "jobs list, page 1"
            and r["concurrency"] == min(int(c) for c in args.concurrency.split(","))
        ),
        None,
    )
    if comp:
        k_ms, c_ms = median(comp["kubectl_ms"]), median(comp["client_ms"])
        lines += [
            "Without the dashboard (same cluster, same moment; median of runs; ratio = their time / our jobs "
            "page p50):",
            "",
            markdown_table(
                ["what", "ms", "items", "ratio"],
                [
                    ["dashboard jobs list page 1 (p50, 1 client)", fmt_ms(jobs_p50), "", "1.0"],
                    [
                        "`kubectl get vcjob -A`",
                        fmt_ms(k_ms, 0),
                        comp.get("kubectl_rows"),
                        _ratio(k_ms, jobs_p50),
                    ],
                    [
                        "kubernetes client `list_cluster_custom_object`",
                        fmt_ms(c_ms, 0),
                        comp.get("client_items"),
                        _ratio(c_ms, jobs_p50),
                    ],
                ],
            ),
            "",
        ]
        if comp.get("kubectl_error"):
            lines.append(f"kubectl failed: `{comp['kubectl_error']}`\n")
    lines += [
        "Targets (server time p50 with 1 client):",
        "",
        markdown_table(["target", "goal", "measured", "verdict"], target_rows(results, args)),
    ]
    goals = load_goal_rows(results, args)
    if goals:
        lines += [
            "",
            "Load goals (ratios of numbers of this run):",
            "",
            markdown_table(["goal", "wanted", "measured", "verdict"], goals),
        ]
    return "\n".join(lines)


def _row(results: dict, name: str, level: int) -> dict | None:
    return next(
        (r for r in results["latency"] if r["name"] == name and r["concurrency"] == level and r["count"]),
        None,
    )


def load_goal_rows(results: dict, args: argparse.Namespace) -> list[list[object]]:
    """The load goals that this run's levels measure; each a ratio of two of its numbers."""
    levels = sorted({int(c) for c in args.concurrency.split(",") if c.strip()})
    low, rows = levels[0], []
    p = results["pollers"]
    one_204 = _row(results, "fragment, unchanged (204)", low)
    if one_204 and one_204["p50_ms"] and p["count"]:
        ratio = p["p95_ms"] / one_204["p50_ms"]
        rows.append(
            [
                f"{args.pollers} pollers' p95 / the {low}-client p50 of the unchanged fragment",
                f"<= {POLL_P95_RATIO:g}×",
                f"{fmt_ms(p['p95_ms'])} / {fmt_ms(one_204['p50_ms'])} ms = {ratio:.1f}×",
                _verdict(ratio <= POLL_P95_RATIO),
            ]
        )
    unchanged = (p.get("share_204_by_job") or {}).get("unchanged") or {}
    if unchanged.get("polls"):
        rows.append(
            [
                "204 share of the polls of unchanged Jobs",
                f">= {UNCHANGED_204_SHARE:g}",
                f"{unchanged['share_204']} of {unchanged['polls']} polls",
                _verdict(unchanged["share_204"] >= UNCHANGED_204_SHARE),
            ]
        )
    jobs_1, jobs_10 = _row(results, "jobs list, page 1", low), _row(results, "jobs list, page 1", 10)
    if low == 1 and 10 in levels and jobs_1 and jobs_10 and jobs_1["throughput_rps"]:
        ratio = jobs_10["throughput_rps"] / jobs_1["throughput_rps"]
        rows.append(
            [
                "jobs list req/s, 10 clients / 1 client",
                f">= {JOBS_SCALE_RATIO:g}×",
                f"{jobs_10['throughput_rps']:.0f} / {jobs_1['throughput_rps']:.0f} = {ratio:.1f}×",
                _verdict(ratio >= JOBS_SCALE_RATIO),
            ]
        )
    detail = _row(results, "job detail", low)
    if jobs_1 and detail and jobs_1["server_p50_ms"] and detail["server_p50_ms"]:
        ratio = jobs_1["server_p50_ms"] / detail["server_p50_ms"]
        rows.append(
            [
                f"jobs list page 1 / job detail, server p50 with {low} client(s)",
                f"<= {JOBS_VS_DETAIL:g}×",
                f"{fmt_ms(jobs_1['server_p50_ms'])} / {fmt_ms(detail['server_p50_ms'])} ms = {ratio:.2f}×",
                _verdict(ratio <= JOBS_VS_DETAIL),
            ]
        )
    top = levels[-1]
    at_top = [r for r in results["latency"] if r["concurrency"] == top]
    if top >= 100 and at_top:
        errors = sum(sum(r["errors"].values()) for r in at_top)
        worst = max(at_top, key=lambda r: r["p95_ms"] or 0)
        rows.append(
            [
                f"{top} clients on every endpoint",
                "no errors",
                f"{errors} errors in {sum(r['count'] for r in at_top)} requests; highest p95 "
                f"{fmt_ms(worst['p95_ms'])} ms ({worst['name']})",
                _verdict(errors == 0),
            ]
        )
    return rows


def target_rows(results: dict, args: argparse.Namespace) -> list[list[object]]:
    low = min(int(c) for c in args.concurrency.split(","))
    rows = []
    for name, goal in TARGETS.items():
        rec = next((r for r in results["latency"] if r["name"] == name and r["concurrency"] == low), None)
        value = None if rec is None else rec["server_p50_ms"]
        basis = "server"
        if rec is not None and value is None:
            value, basis = rec["p50_ms"], "client"
        rows.append(
            [
                f"{name} p50",
                f"<= {goal:g} ms",
                f"{fmt_ms(value)} ms ({basis})" if value is not None else "–",
                _verdict(value <= goal) if value is not None else "not measured",
            ]
        )
    p = results["pollers"]
    ok = p["count"] > 0 and not p["errors"]
    rows.append(
        [
            f"{args.pollers} pollers every {args.interval:g} s",
            "no errors",
            f"{p['count']} requests, {sum(p['errors'].values())} errors",
            _verdict(ok),
        ]
    )
    peak = max(v["rss_mb"] for v in results["memory"].values())
    rows.append(
        [
            "RSS of the dashboard processes",
            f"<= {RSS_TARGET_MB} MB",
            f"{peak} MB (peak sample)",
            _verdict(peak <= RSS_TARGET_MB),
        ]
    )
    rows.append(
        [
            "initial sync",
            f"<= {SYNC_TARGET_S} s",
            f"{results['initial_sync_s']} s",
            _verdict(results["initial_sync_s"] <= SYNC_TARGET_S),
        ]
    )
    calls = p.get("api_calls_per_min") or {}
    non_watch = {k: v for k, v in calls.items() if k not in ("watch",)}
    rows.append(
        ["API calls from page views", "0 list/get", _fmt_calls(calls), _verdict(not any(non_watch.values()))]
    )
    return rows


def _fmt_calls(calls: dict) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in sorted(calls.items())) or "0"


def _ratio(theirs: float | None, ours: float | None) -> str:
    if not theirs or not ours:
        return "–"
    ratio = theirs / ours
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


if __name__ == "__main__":
    sys.exit(main())
