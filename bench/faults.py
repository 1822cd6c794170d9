"""Fault run: the API server misbehaves while users poll; the dashboard must not 5xx and must heal.

    python -m bench.faults                                  # make faults (the brief's scale)
    python -m bench.faults --scenario tiny --drop-minutes 0.5 --outage-seconds 10 --error-minutes 0.5

Phases, in order, with pollers (pages and fragments) running throughout:
1. watches dropped every ``--drop-every`` s for ``--drop-minutes``;
2. one 410 storm: the simulated server compacts its history and drops every watch, so each
   informer's resume fails with 410 Gone and must re-list;
3. the API server stops answering for ``--outage-seconds`` (sim fault "stop answering");
4. ``--error-rate`` of API calls fail (HTTP 500) for ``--error-minutes``;
then faults are cleared, churn is paused, and every worker's cache is compared object by object
with a fresh list (bench/cachecheck.py) until it matches or ``--settle-timeout`` passes.

Verdict PASS: no 5xx (and no refused connection) from the dashboard in any phase, and every
worker's cache identical to the API server's after the faults.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench import cachecheck
from bench import endpoints as ep_mod
from bench.common import (
    REPO,
    add_cluster_arguments,
    exit_on_sigterm,
    fmt_ms,
    log,
    machine_info,
    markdown_table,
    other_load,
    percentile,
    start_dashboard,
    start_sim,
    wait_ready,
)
from bench.loadgen import pollers
from bench.run import sim_extra


class Faults:
    """The simulated server's fault switches (``POST /_sim/faults``, dashboard/sim/server.py)."""

    def __init__(self, sim) -> None:  # noqa: ANN001
        self.sim = sim

    def drop_watches(self) -> None:
        self.sim.faults(drop_watches=True)

    def storm_410(self) -> None:
        # Compact first, then cut the watches: every informer resumes from a resourceVersion older
        # than the retained history, gets 410 Gone, and must re-list.
        self.sim.compact()
        self.sim.faults(drop_watches=True)

    def stop_answering(self, seconds: float) -> None:
        """The server accepts connections and answers nothing for ``seconds`` (0 ends it now)."""
        self.sim.faults(unavailable_seconds=seconds)

    def error_rate(self, rate: float) -> None:
        self.sim.faults(error_rate=rate)

    def clear(self) -> None:
        self.sim.faults(unavailable_seconds=0, error_rate=0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_cluster_arguments(parser)
    parser.add_argument("--pollers", type=int, default=20)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--drop-every", type=float, default=30.0)
    parser.add_argument("--drop-minutes", type=float, default=2.0)
    parser.add_argument("--storm-settle-seconds", type=float, default=60.0, help="time after the 410 storm")
    parser.add_argument("--outage-seconds", type=float, default=60.0)
    parser.add_argument("--error-rate", type=float, default=0.05)
    parser.add_argument("--error-minutes", type=float, default=2.0)
    parser.add_argument("--after-seconds", type=float, default=30.0, help="polling after the faults end")
    parser.add_argument("--settle-timeout", type=float, default=300.0)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--sim-port", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    exit_on_sigterm()

    machine = machine_info()
    busy = other_load()
    workdir = Path(tempfile.mkdtemp(prefix="volcano-ui-faults-"))
    sim = dash = None
    stop = threading.Event()
    try:
        sim = start_sim(workdir, port=args.sim_port, scenario=args.scenario, extra=sim_extra(args))
        dash = start_dashboard(workdir, sim, port=args.port, workers=args.workers, threads=args.threads)
        sync_s = wait_ready(dash)
        workers = max(1, len(dash.pids()) - 1)
        eps = ep_mod.resolve(dash.base, str(sim.kubeconfig))
        request, observe = ep_mod.poll_mix(eps, dash.base, page_every=5)
        faults = Faults(sim)
        log(f"ready in {sync_s:.1f}s with {workers} workers")

        budget = (
            args.after_seconds
            + args.drop_minutes * 60
            + args.storm_settle_seconds
            + args.outage_seconds
            + args.error_minutes * 60
            + args.settle_timeout
            + 120
        )
        stats_start = sim.stats()
        holder: dict = {}
        poll_thread = threading.Thread(
            target=lambda: holder.setdefault(
                "res",
                pollers(
                    port=dash.port,
                    count=args.pollers,
                    interval_s=args.interval,
                    duration_s=budget,
                    request=request,
                    observe=observe,
                    name="fault pollers",
                    stop=stop,
                ),
            ),
            daemon=True,
        )
        poll_thread.start()

        phases: list[tuple[str, float, float]] = []

        def phase(name: str, fn) -> None:  # noqa: ANN001
            start = time.monotonic()
            log(f"phase: {name}")
            fn()
            phases.append((name, start, time.monotonic()))

        def drops() -> None:
            end = time.monotonic() + args.drop_minutes * 60
            while time.monotonic() < end:
                faults.drop_watches()
                time.sleep(min(args.drop_every, max(0.0, end - time.monotonic())))

        def storm() -> None:
            faults.storm_410()
            time.sleep(args.storm_settle_seconds)

        def outage() -> None:
            faults.stop_answering(args.outage_seconds)
            try:
                time.sleep(args.outage_seconds)
            finally:
                faults.stop_answering(0)

        def errors() -> None:
            faults.error_rate(args.error_rate)
            try:
                time.sleep(args.error_minutes * 60)
            finally:
                faults.error_rate(0.0)

        phase(f"watches dropped every {args.drop_every:g} s for {args.drop_minutes:g} min", drops)
        phase("410 storm (compact + drop)", storm)
        phase(f"API server not answering for {args.outage_seconds:g} s", outage)
        phase(f"{args.error_rate:.0%} of API calls failing for {args.error_minutes:g} min", errors)
        faults.clear()
        phase(f"after the faults ({args.after_seconds:g} s)", lambda: time.sleep(args.after_seconds))
        # Pollers stop before the check: dumping every cached object is not what users do, and it
        # must not be counted against the pages.
        stop.set()
        poll_thread.join(60)
        sim.pause_churn()
        time.sleep(2)  # let the last churn step's events reach the informers
        converged = {}
        ok, took, last = cachecheck.wait_converged(
            dash.base, str(sim.kubeconfig), workers, args.settle_timeout
        )
        converged.update(ok=ok, took=took, last=last)
        stats_end = sim.stats()
        calls = {
            k: v - stats_start["requests"].get(k, 0)
            for k, v in stats_end["requests"].items()
            if v - stats_start["requests"].get(k, 0)
        }
        res = holder.get("res")
        timeline = res.timeline if res else []
        rows = []
        total_bad = 0
        for name, start, end in phases:
            items = [e for e in timeline if start <= e[0] < end]
            statuses = Counter(e[1] for e in items)
            failures = Counter(e[2] or f"HTTP {e[1]}" for e in items if e[1] == 0 or e[1] >= 500)
            total_bad += sum(failures.values())
            latencies = [e[3] for e in items]
            rows.append(
                [
                    name,
                    f"{end - start:.0f}",
                    len(items),
                    ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()) if s),
                    ", ".join(f"{k}: {n}" for k, n in failures.items()) or "0",
                    fmt_ms(percentile(latencies, 50)),
                    fmt_ms(percentile(latencies, 99)),
                ]
            )
        outside = [
            e for e in timeline if (e[1] == 0 or e[1] >= 500) and not any(a <= e[0] < b for _, a, b in phases)
        ]
        total_bad += len(outside)
        verdict = "PASS" if total_bad == 0 and converged.get("ok") else "FAIL"
        lines = [
            f"### Fault run — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            "",
            f"Cluster {sim.info['counts']} with churn `{sim.info['churn']}`; "
            f"{workers} gunicorn workers; "
            f"{args.pollers} pollers every {args.interval:g} s (pages and fragments). "
            f"Machine: {machine['nproc']} "
            f"cores, {machine['memory']}, Python {machine['python']}, "
            f"load {machine['loadavg']}; busy: {busy}.",
            "",
            markdown_table(
                ["phase", "seconds", "requests", "statuses", "5xx / failed", "p50 ms", "p99 ms"], rows
            ),
            "",
            f"5xx or failed requests outside the phases: {len(outside)}. A failed request is a refused "
            "or reset connection or no answer within 30 s.",
            "",
            "Caches after the faults: "
            f"{'identical to a fresh list' if converged.get('ok') else 'NOT identical'} "
            f"for every worker after {converged.get('took', 0):.0f} s "
            f"({'; '.join(f'pid {p}: {s}' for p, s in converged.get('last', {}).items())}).",
            "",
            "API requests the simulated server received during the run: "
            + ", ".join(f"`{k}` {v}" for k, v in sorted(calls.items())),
            "",
            f"**Verdict: {verdict}**",
        ]
        report = "\n".join(lines)
        print(report)
        args.out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        (args.out / f"faults-{stamp}.md").write_text(report + "\n")
        return 0 if verdict == "PASS" else 1
    finally:
        stop.set()
        if dash is not None:
            dash.stop()
        if sim is not None:
            with contextlib.suppress(OSError):
                Faults(sim).clear()
            sim.stop()


if __name__ == "__main__":
    sys.exit(main())
