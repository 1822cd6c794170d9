"""Soak: N minutes of churn with 50 pollers; does the dashboard stay flat?

    python -m bench.soak                    # 30 minutes at the brief's scale (make soak)
    python -m bench.soak --minutes 5        # a shortened run; the report says which duration ran

Verdict (printed last): PASS when, between the end of the warm-up and the end of the run, the
dashboard processes' RSS grew by less than 5% (median over the first sixth of the samples against the
median over the last sixth: single 30 s samples swing by about ±5 %), no request failed, and neither the workers' thread
counts nor the simulated server's open watches grew.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench import endpoints as ep_mod
from bench.common import (
    REPO,
    exit_on_sigterm,
    fmt_ms,
    log,
    machine_info,
    markdown_table,
    median,
    memory,
    other_load,
    start_dashboard,
    start_sim,
    wait_ready,
)
from bench.loadgen import closed_loop, pollers
from bench.run import sim_extra
from bench.simstats import api_calls, open_watches, per_minute

RSS_GROWTH_LIMIT = 0.05
# The kinds the dashboard caches, as the simulated server's stats name them.
CACHED_KINDS = ("jobs", "podgroups", "queues", "pods", "events")
# RSS sampled every 30 s swings by ±5 % around its level (the cache returns freed memory to the
# system every 10 s, pages allocate in bursts), so the start and end levels are medians over windows
# of WINDOW_SHARE of the run (at least 3 samples), not single samples.
WINDOW_SHARE = 1 / 6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=30.0, help="measured duration after the warm-up")
    parser.add_argument("--warmup-minutes", type=float, help="default: a third of --minutes, at most 10")
    parser.add_argument("--pollers", type=int, default=50)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--sample-seconds", type=float, default=30.0)
    parser.add_argument("--scenario", default="large")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--pods", type=int)
    parser.add_argument("--queues", type=int)
    parser.add_argument("--events", type=int)
    parser.add_argument("--churn", default="auto", choices=("auto", "bench", "controllers", "off"))
    parser.add_argument("--arrivals-per-min", type=float, help="default: 120 per 10,000 Jobs")
    parser.add_argument("--generator", default="auto", choices=("auto", "sim", "bench"))
    parser.add_argument("--workers", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--sim-port", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    # The dashboard's RSS rises for the first ~10 minutes under load at this scale while its
    # bounded tables fill (the sharing table's generations, the memos, the allocators' arenas;
    # bench/memory_growth.py) and is flat after that (README "Benchmarks", the 22:02 soak).
    warmup = args.warmup_minutes if args.warmup_minutes is not None else min(10.0, args.minutes / 3)

    machine = machine_info()
    busy = other_load()
    workdir = Path(tempfile.mkdtemp(prefix="volcano-ui-soak-"))
    sim = dash = None
    try:
        sim = start_sim(workdir, port=args.sim_port, scenario=args.scenario, extra=sim_extra(args))
        dash = start_dashboard(workdir, sim, port=args.port, workers=args.workers, threads=args.threads)
        sync_s = wait_ready(dash)
        eps = ep_mod.resolve(dash.base, str(sim.kubeconfig))
        request, observe = ep_mod.poll_mix(eps, dash.base, page_every=5)
        log(f"ready in {sync_s:.1f}s; warm-up {warmup:g} min with {args.pollers} pollers")
        warm = pollers(
            port=dash.port,
            count=args.pollers,
            interval_s=args.interval,
            duration_s=warmup * 60,
            request=request,
            observe=observe,
            name="warm-up",
        )
        # gunicorn's gthread pool starts threads on demand up to its size: a short burst above the
        # pool size brings it to its steady count now, so later growth means a leak, not warm-up.
        for target in ep_mod.targets(eps, dash.base):
            closed_loop(target, port=dash.port, concurrency=32, max_requests=64, max_seconds=10)

        samples: list[dict] = []

        def sample(elapsed: float) -> None:
            mem = memory(dash.pids())
            stats = sim.stats()
            samples.append(
                {
                    "t_s": round(elapsed),
                    "rss_mb": round(mem.rss / 2**20, 1),
                    "pss_mb": None if mem.pss is None else round(mem.pss / 2**20, 1),
                    "threads": mem.threads,
                    "watches": open_watches(stats),
                    "calls": api_calls(stats),
                    # What the cache mirrors: RSS that grows with the cluster is not a leak.
                    "objects": {k: stats.get("objects", {}).get(k) for k in CACHED_KINDS},
                }
            )
            log(
                f"soak t={elapsed:.0f}s RSS {samples[-1]['rss_mb']} MB threads {mem.threads} "
                f"watches {samples[-1]['watches']}"
            )

        sample(0.0)
        res = pollers(
            port=dash.port,
            count=args.pollers,
            interval_s=args.interval,
            duration_s=args.minutes * 60,
            request=request,
            observe=observe,
            name="soak",
            on_tick=sample,
            tick_s=args.sample_seconds,
        )
        verdict, checks = judge(samples, res, warm)
        first, last = samples[0], samples[-1]
        calls = {k: last["calls"].get(k, 0) - first["calls"].get(k, 0) for k in last["calls"]}
        lines = [
            f"### Soak — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            "",
            f"Ran **{args.minutes:g} min** (after {warmup:g} min warm-up) with {args.pollers} pollers every "
            f"{args.interval:g} s; cluster {sim.info['counts']} with churn `{sim.info['churn']}` at "
            f"{sim.info['arrivals_per_min']:g} new Jobs/min. "
            f"Machine: {machine['nproc']} cores, {machine['memory']}, "
            f"Python {machine['python']}, load {machine['loadavg']}; busy at start: {busy}.",
            "",
            markdown_table(
                [
                    "requests",
                    "errors",
                    "keep-alive retries",
                    "p50 ms",
                    "p95 ms",
                    "p99 ms",
                    "server p50 ms",
                    "API calls/min",
                ],
                [
                    [
                        res.count,
                        res.error_count,
                        res.retries,
                        fmt_ms(res.p(50)),
                        fmt_ms(res.p(95)),
                        fmt_ms(res.p(99)),
                        fmt_ms(res.server_p(50)),
                        ", ".join(f"{k} {v:g}" for k, v in per_minute(calls, args.minutes).items() if v)
                        or "0",
                    ]
                ],
            ),
            "",
            markdown_table(
                ["t (s)", "RSS MB", "PSS MB", "threads", "open watches", "cluster objects (Jobs/PodGroups/pods/events)"],
                [
                    [
                        s["t_s"],
                        s["rss_mb"],
                        s["pss_mb"],
                        s["threads"],
                        s["watches"],
                        "/".join(f"{(s.get('objects') or {}).get(k) or 0:,}" for k in ("jobs", "podgroups", "pods", "events")),
                    ]
                    for s in samples
                ],
            ),
            "",
            markdown_table(["check", "result"], checks),
            "",
            f"**Verdict: {verdict}**",
        ]
        report = "\n".join(lines)
        print(report)
        args.out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        (args.out / f"soak-{stamp}.md").write_text(report + "\n")
        (args.out / f"soak-{stamp}.json").write_text(
            json.dumps({"samples": samples, "result": res.as_dict()}, indent=1, default=str)
        )
        return 0 if verdict == "PASS" else 1
    finally:
        if dash is not None:
            dash.stop()
        if sim is not None:
            sim.stop()


def _objects(sample: dict) -> int:
    return sum(v or 0 for v in (sample.get("objects") or {}).values())


def _slope_mb_per_10min(samples: list[dict]) -> float:
    """Least-squares slope of RSS over time, in MB per 10 minutes (0 with fewer than 2 samples)."""
    if len(samples) < 2:
        return 0.0
    ts = [s["t_s"] for s in samples]
    ys = [s["rss_mb"] for s in samples]
    mt, my = sum(ts) / len(ts), sum(ys) / len(ys)
    var = sum((t - mt) ** 2 for t in ts)
    return 600 * sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / var if var else 0.0


def judge(samples: list[dict], res, warm) -> tuple[str, list[list[str]]]:  # noqa: ANN001
    """Baseline = median RSS over the first sixth of the samples after warm-up (at least 3), end =
    median over the last sixth; also reports the least-squares slope over all samples."""
    width = max(3, round(len(samples) * WINDOW_SHARE))
    head, tail = samples[:width], samples[-width:]
    base_rss, end_rss = median(s["rss_mb"] for s in head), median(s["rss_mb"] for s in tail)
    growth = (end_rss - base_rss) / base_rss if base_rss else 0.0
    base_threads, end_threads = max(s["threads"] for s in head), max(s["threads"] for s in tail)
    watches = [s["watches"] for s in samples if s["watches"] is not None]
    objs_start, objs_end = _objects(samples[0]), _objects(samples[-1])
    checks = [
        [
            "RSS growth after warm-up < 5%",
            f"{base_rss} -> {end_rss} MB ({growth:+.1%}; medians of the first and last {width} samples; "
            f"trend {_slope_mb_per_10min(samples):+.1f} MB per 10 min, first half "
            f"{_slope_mb_per_10min(samples[: len(samples) // 2]):+.1f}, second half "
            f"{_slope_mb_per_10min(samples[len(samples) // 2 :]):+.1f}; cluster objects "
            f"{objs_start:,} -> {objs_end:,})",
            growth < RSS_GROWTH_LIMIT,
        ],
        [
            "no errors",
            f"{res.error_count} errors in {res.count} requests "
            f"(warm-up: {warm.error_count} in {warm.count}) {dict(res.errors) or ''}",
            res.error_count == 0,
        ],
        ["threads do not grow", f"{base_threads} -> {end_threads}", end_threads <= base_threads],
        [
            "open watches do not grow",
            f"{watches[0] if watches else '?'} -> {watches[-1] if watches else '?'}",
            bool(watches) and watches[-1] <= watches[0],
        ],
        ["requests answered", f"{res.count}", res.count > 0],
    ]
    ok = all(c[2] for c in checks)
    return ("PASS" if ok else "FAIL"), [[c[0], c[1] + ("" if c[2] else "  **FAIL**")] for c in checks]


if __name__ == "__main__":
    sys.exit(main())
