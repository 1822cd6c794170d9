"""Soak: N minutes of churn with 50 pollers; does the dashboard stay flat?

    python -m bench.soak                    # 30 minutes at the benchmark scale (make soak)
    python -m bench.soak --minutes 5        # a shortened run; the report says which duration ran
    python -m bench.soak windows bench/results/soak-<stamp>.json --skip-minutes 30
                                            # re-judge a saved run's later 30-minute windows

Verdict (printed last): PASS when, between the end of the warm-up and the end of the run, the
dashboard processes' RSS grew by less than 5% (median over the first sixth of the samples against the
median over the last sixth: single samples swing by ±5-10 %), no request failed, and neither the
workers' thread counts nor the simulated server's open watches grew (the most in the last sixth
against the most in the first: a sample can fall between a watch's end and its re-opening).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

from bench import endpoints as ep_mod
from bench.common import (
    REPO,
    add_cluster_arguments,
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
# Single RSS samples swing by ±5-10 % around the level (the cache returns freed memory to the system
# every 10 s; pages allocate in bursts, up to 8 at a time on a saturated worker), so the start and
# end levels are medians over windows of WINDOW_SHARE of the run (at least 3 samples), not single
# samples; sampled every 10 s, a 30-minute run has 30 samples per window (the 00:21 soak sampled
# every 30 s: 10 per window, and 20-minute sub-windows of it judged anywhere from +0.7 to +7.8 %).
WINDOW_SHARE = 1 / 6
# Events live this long after their last occurrence (minutes; the API server's default --event-ttl,
# the simulated server's too), and the margin after it before RSS is judged: the generated Events,
# stamped at the start, expire together then, and the memory they held is returned over a minute.
EVENT_TTL_MIN = 60
EVENT_EXPIRY_MARGIN_MIN = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=30.0, help="measured duration after the warm-up")
    parser.add_argument(
        "--warmup-minutes",
        type=float,
        help="default with churn: the longer of the time the churn takes to replace the generated Jobs "
        "once (Jobs / arrivals per minute, rounded up to 10 minutes: 90 at the large scale) and the "
        "Events' hour of life plus 10 minutes; without churn a third of --minutes, at most 10",
    )
    parser.add_argument("--pollers", type=int, default=50)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument(
        "--sample-seconds",
        type=float,
        default=10.0,
        help="RSS sample period (the report's table shows one a minute)",
    )
    add_cluster_arguments(parser)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--sim-port", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    warmup = args.warmup_minutes

    machine = machine_info()
    busy = other_load()
    workdir = Path(tempfile.mkdtemp(prefix="volcano-ui-soak-"))
    sim = dash = None
    try:
        sim = start_sim(workdir, port=args.sim_port, scenario=args.scenario, extra=sim_extra(args))
        dash = start_dashboard(workdir, sim, port=args.port, workers=args.workers, threads=args.threads)
        sync_s = wait_ready(dash)
        if warmup is None:
            warmup = default_warmup_minutes(
                args.minutes, sim.info["counts"].get("jobs"), sim.info.get("arrivals_per_min")
            )
        eps = ep_mod.resolve(dash.base, str(sim.kubeconfig))
        request, observe = ep_mod.poll_mix(eps, dash.base, page_every=5)
        log(f"ready in {sync_s:.1f}s; warm-up {warmup:g} min with {args.pollers} pollers")
        samples: list[dict] = []
        # The warm-up is sampled too (negative t_s, kept apart in the JSON): how long RSS takes to
        # level off is what justifies the warm-up's length.
        warmup_samples: list[dict] = []

        def sample(elapsed: float, into: list[dict] = samples) -> None:
            mem = memory(dash.pids())
            stats = sim.stats()
            into.append(
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
                f"soak t={elapsed:.0f}s RSS {into[-1]['rss_mb']} MB threads {mem.threads} "
                f"watches {into[-1]['watches']}"
            )

        warm = pollers(
            port=dash.port,
            count=args.pollers,
            interval_s=args.interval,
            duration_s=warmup * 60,
            request=request,
            observe=observe,
            name="warm-up",
            on_tick=lambda elapsed: sample(elapsed - warmup * 60, warmup_samples),
            tick_s=args.sample_seconds,
        )
        # gunicorn's gthread pool starts threads on demand up to its size: a short burst above the
        # pool size brings it to its steady count now, so later growth means a leak, not warm-up.
        for target in ep_mod.targets(eps, dash.base):
            closed_loop(target, port=dash.port, concurrency=32, max_requests=64, max_seconds=10)

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
                [
                    "t (s)",
                    "RSS MB",
                    "PSS MB",
                    "threads",
                    "open watches",
                    "cluster objects (Jobs/PodGroups/pods/events)",
                ],
                [
                    [
                        s["t_s"],
                        s["rss_mb"],
                        s["pss_mb"],
                        s["threads"],
                        s["watches"],
                        "/".join(
                            f"{(s.get('objects') or {}).get(k) or 0:,}"
                            for k in ("jobs", "podgroups", "pods", "events")
                        ),
                    ]
                    for s in _every_minute(samples)
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
            json.dumps(
                {"samples": samples, "warmup_samples": warmup_samples, "result": res.as_dict()},
                indent=1,
                default=str,
            )
        )
        return 0 if verdict == "PASS" else 1
    finally:
        if dash is not None:
            dash.stop()
        if sim is not None:
            sim.stop()


def default_warmup_minutes(minutes: float, jobs: int | None, arrivals_per_min: float | None) -> float:
    """The warm-up before RSS is judged, in minutes. With churn, the longer of: the time the churn
    takes to replace the generated Jobs once (``jobs / arrivals_per_min`` rounded up to a multiple
    of 10), and the Events' lifetime plus a margin (``EVENT_TTL_MIN + EVENT_EXPIRY_MARGIN_MIN``).
    Without churn ``min(10, minutes / 3)``.

    Why: the initial list decodes a generated population whose objects share most of their
    sub-trees (trim.share); the churn replaces them with objects as varied as a live cluster's, and
    the cache's memory grows with that variety until the generated population is gone. The 06:06
    soak (docs/benchmarks.md) measured RSS rising for ~50 minutes at 120 new Jobs a minute and level
    from there to its 120th minute. Events are kept for an hour after their last occurrence (the
    API server's ``--event-ttl``, which the simulated server follows): until the first of the
    churn's Events expire, their number only rises (large scale: 114,000 to 310,000 in the first
    hour), and the cache's memory with it."""
    floor = min(10.0, minutes / 3)
    if not arrivals_per_min:
        return floor
    replace = math.ceil((jobs or 0) / arrivals_per_min / 10) * 10
    return max(floor, replace, EVENT_TTL_MIN + EVENT_EXPIRY_MARGIN_MIN)


def _every_minute(samples: list[dict]) -> list[dict]:
    """The samples the report's table shows: one a minute (the first at or after each full minute)
    and the last; the JSON keeps them all."""
    shown, next_t = [], 0
    for s in samples:
        if s["t_s"] >= next_t:
            shown.append(s)
            next_t = (s["t_s"] // 60 + 1) * 60
    if samples and shown[-1] is not samples[-1]:
        shown.append(samples[-1])
    return shown


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
    return 600 * sum((t - mt) * (y - my) for t, y in zip(ts, ys, strict=True)) / var if var else 0.0


def rss_growth(samples: list[dict]) -> tuple[float, float, float, int]:
    """(start MB, end MB, growth as a fraction, window): start = median RSS over the first sixth of
    ``samples`` (at least 3), end = median over the last sixth."""
    width = max(3, round(len(samples) * WINDOW_SHARE))
    base_rss = median(s["rss_mb"] for s in samples[:width])
    end_rss = median(s["rss_mb"] for s in samples[-width:])
    return base_rss, end_rss, (end_rss - base_rss) / base_rss if base_rss else 0.0, width


def judge(samples: list[dict], res, warm) -> tuple[str, list[list[str]]]:  # noqa: ANN001
    """Baseline = median RSS over the first sixth of the samples after warm-up (at least 3), end =
    median over the last sixth; also reports the least-squares slope over all samples."""
    base_rss, end_rss, growth, width = rss_growth(samples)
    head, tail = samples[:width], samples[-width:]
    base_threads, end_threads = max(s["threads"] for s in head), max(s["threads"] for s in tail)
    # Like the threads: the most in each window. A single sample can fall between a watch's end
    # and its re-opening (each watch ends after its timeoutSeconds), so it reads one or two short.
    head_watches = [s["watches"] for s in head if s["watches"] is not None]
    tail_watches = [s["watches"] for s in tail if s["watches"] is not None]
    # The cluster over the same windows: RSS that follows a growing cluster is no leak, but the
    # check does not excuse it (the warm-up is meant to reach a level population).
    objs_start = median(_objects(s) for s in head)
    objs_end = median(_objects(s) for s in tail)
    checks = [
        [
            "RSS growth after warm-up < 5%",
            f"{base_rss} -> {end_rss} MB ({growth:+.1%}; medians of the first and last {width} samples; "
            f"trend {_slope_mb_per_10min(samples):+.1f} MB per 10 min, first half "
            f"{_slope_mb_per_10min(samples[: len(samples) // 2]):+.1f}, second half "
            f"{_slope_mb_per_10min(samples[len(samples) // 2 :]):+.1f}; cluster objects, medians of "
            f"the same samples, {objs_start:,.0f} -> {objs_end:,.0f}"
            f"{f' ({(objs_end - objs_start) / objs_start:+.1%})' if objs_start else ''})",
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
            f"{max(head_watches) if head_watches else '?'} -> {max(tail_watches) if tail_watches else '?'}",
            bool(head_watches and tail_watches) and max(tail_watches) <= max(head_watches),
        ],
        ["requests answered", f"{res.count}", res.count > 0],
    ]
    ok = all(c[2] for c in checks)
    return ("PASS" if ok else "FAIL"), [[c[0], c[1] + ("" if c[2] else "  **FAIL**")] for c in checks]


def windows(argv: list[str] | None = None) -> int:
    """``python -m bench.soak windows``: re-judging of a saved run: the RSS check of every
    ``--window-minutes`` window of a soak's JSON that starts ``--skip-minutes`` or later into the
    measured part (in steps of ``--step-minutes``), as if the warm-up had been that much longer.
    Same rule as the run's own verdict (medians of the first and last sixth of the window).
    ``--include-warmup`` also uses the warm-up's samples (runs from this version on): minutes then
    count from the start of the warm-up, so a run shows how long RSS took to level off."""
    parser = argparse.ArgumentParser(prog="python -m bench.soak windows", description=windows.__doc__)
    parser.add_argument("json", type=Path, help="a soak-*.json written by python -m bench.soak")
    parser.add_argument("--window-minutes", type=float, default=30.0)
    parser.add_argument("--skip-minutes", type=float, default=0.0)
    parser.add_argument("--step-minutes", type=float, default=5.0)
    parser.add_argument("--include-warmup", action="store_true", help="count from the warm-up's start")
    args = parser.parse_args(argv)
    data = json.loads(args.json.read_text())
    samples = data["samples"]
    origin = 0
    if args.include_warmup:
        warm = data.get("warmup_samples") or []
        if not warm:
            parser.error(f"{args.json} has no warm-up samples (written before bench.soak kept them)")
        origin = warm[0]["t_s"]
        samples = [{**s, "t_s": s["t_s"] - origin} for s in warm + samples]
    end_t = samples[-1]["t_s"]
    rows = []
    start = args.skip_minutes * 60
    while start + args.window_minutes * 60 <= end_t + 1:
        part = [s for s in samples if start <= s["t_s"] <= start + args.window_minutes * 60]
        base, end, growth, width = rss_growth(part)
        rows.append(
            [
                f"{start / 60:g}-{start / 60 + args.window_minutes:g}",
                len(part),
                f"{base:.1f} -> {end:.1f}",
                f"{growth:+.1%}",
                f"{_slope_mb_per_10min(part):+.1f}",
                "pass" if growth < RSS_GROWTH_LIMIT else "FAIL",
            ]
        )
        start += args.step_minutes * 60
    print(
        markdown_table(
            [
                "minutes after warm-up start" if args.include_warmup else "minutes after warm-up",
                "samples",
                "RSS MB (medians of first/last sixth)",
                "growth",
                "trend MB/10 min",
                "< 5 %",
            ],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["windows"]:
        sys.exit(windows(sys.argv[2:]))
    sys.exit(main())
