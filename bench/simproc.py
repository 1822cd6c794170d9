"""The simulated cluster in its own process, loaded at scale and churning.

    python -m bench.simproc --port 18601 --scenario large --kubeconfig /tmp/sim.kubeconfig

Prints one JSON line on stdout when it serves (url, admin token, kubeconfig, counts, load time),
then churns until SIGTERM/SIGINT. SIGUSR1 pauses the churn (and the simulated clock), SIGUSR2
resumes it: the fault run pauses it to compare the dashboard's cache with a fresh list.

Scenarios: ``large`` (the benchmark scale, sizes overridable), ``tiny`` (the smoke test's), ``demo``
and ``empty`` (the simulated cluster's own). Generator: the simulated cluster's large-cluster
generator when ``dashboard/sim/scenarios.py`` has one, else ``bench/scale.py``'s bulk loader.
Churn: ``auto`` (controllers with the simulator's generator, else bench), ``bench``
(bench/scale.py's driver writes the lifecycle to the store), ``controllers``
(the simulated Volcano controllers run the lifecycle; this process adds arrivals and deletions),
or ``off``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.scale import ScaleSpec, bulk_load


def _log(message: str) -> None:
    print(f"[simproc {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _sim_generator():  # noqa: ANN202
    """The simulated cluster's large-cluster generator, or None when it does not exist (yet)."""
    try:
        from dashboard.sim import scenarios
    except ImportError:
        return None
    for name in ("generate_large", "load_large", "large_cluster", "generate_large_cluster"):
        fn = getattr(scenarios, name, None)
        if callable(fn):
            return fn
    return None


def _call_generator(fn, cluster, spec: ScaleSpec):  # noqa: ANN001, ANN202
    """Call the generator with whichever of our sizes it accepts by name."""
    params = inspect.signature(fn).parameters
    wanted = {
        "jobs": spec.jobs,
        "pods": spec.pods,
        "queues": spec.queues,
        "events": spec.events,
        "podgroups": spec.podgroups,
        "namespaces": spec.namespaces,
        "seed": spec.seed,
        "nodes": spec.nodes,
        "hypernodes": spec.hypernodes,
    }
    kwargs = {k: v for k, v in wanted.items() if k in params and v is not None}
    return fn(cluster, **kwargs)


def count_objects(cluster) -> dict[str, int]:  # noqa: ANN001
    from dashboard.sim.kinds import kind_by_name

    out = {}
    for label, (kind, group) in {
        "jobs": ("Job", "batch.volcano.sh"),
        "podgroups": ("PodGroup", "scheduling.volcano.sh"),
        "queues": ("Queue", "scheduling.volcano.sh"),
        "pods": ("Pod", ""),
        "events": ("Event", ""),
        "nodes": ("Node", ""),
        "hypernodes": ("HyperNode", "topology.volcano.sh"),
    }.items():
        items, _ = cluster.store.list(kind_by_name(kind, group))
        out[label] = len(items)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--scenario", default="large", help="large | tiny | demo | empty")
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--pods", type=int)
    parser.add_argument("--queues", type=int)
    parser.add_argument("--events", type=int)
    parser.add_argument("--nodes", type=int, help="at least this many nodes (the simulator's generator)")
    parser.add_argument("--hypernodes", type=int, help="HyperNodes in the tree (the simulator's generator)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generator", choices=("auto", "sim", "bench"), default="auto")
    parser.add_argument("--churn", choices=("auto", "bench", "controllers", "off"), default="auto")
    parser.add_argument(
        "--arrivals-per-min",
        type=float,
        help="new Jobs per minute of wall time (default: 120 per 10,000 Jobs)",
    )
    parser.add_argument("--tick", type=float, default=1.0, help="seconds of wall time per churn step")
    parser.add_argument("--speed", type=float, default=1.0, help="simulated seconds per wall second")
    parser.add_argument("--history-size", type=int, default=10000)
    args = parser.parse_args(argv)

    from dashboard.sim.cluster import SimulatedCluster

    spec = ScaleSpec.tiny() if args.scenario == "tiny" else ScaleSpec()
    for name in ("jobs", "pods", "queues", "events", "nodes", "hypernodes"):
        if getattr(args, name) is not None:
            setattr(spec, name, getattr(args, name))
    spec.seed = args.seed

    if args.arrivals_per_min is None:
        # The same turnover at every scale: at 10,000 Jobs, 2 a second (a loaded Job lives ~80 min).
        args.arrivals_per_min = max(1.0, 120.0 * spec.jobs / 10_000)
    started = time.monotonic()
    fn = None
    if args.scenario in ("large", "tiny"):
        fn = _sim_generator() if args.generator in ("auto", "sim") else None
        if args.generator == "sim" and fn is None:
            parser.error("dashboard/sim/scenarios.py has no large-cluster generator")
    if args.churn == "auto":
        # The simulated controllers run the lifecycle of the simulator's own generated cluster; the
        # bench loader's objects (no pod durations, no nodes) churn through bench/scale.py instead.
        args.churn = "controllers" if fn is not None else "bench"
    controllers = args.churn == "controllers"
    cluster = SimulatedCluster(
        seed=args.seed,
        scenario="empty" if args.scenario in ("large", "tiny") else args.scenario,
        controllers=controllers,
        speed=args.speed,
        history_size=args.history_size,
        # The dashboard's recorder stamps what it sees with the wall clock: a simulated clock days
        # behind it would make every admission the churn produces land on a day already closed.
        start_time=datetime.now(UTC),
    )
    generator = "scenario"
    if args.scenario in ("large", "tiny"):
        if fn is not None:
            generator = f"dashboard.sim.scenarios.{fn.__name__}"
            _call_generator(fn, cluster, spec)
        else:
            generator = "bench.scale.bulk_load"
            bulk_load(cluster, spec)
    load_s = time.monotonic() - started
    counts = count_objects(cluster)
    _log(f"loaded {counts} with {generator} in {load_s:.1f}s")

    if "tls_port" in inspect.signature(cluster.start).parameters:
        # The HTTPS listener (kubeconfigs point at it) next to the plain one, in our port range.
        url = cluster.start(host="127.0.0.1", port=args.port, tls_port=args.port + 1 if args.port else 0)
    else:
        url = cluster.start(host="127.0.0.1", port=args.port)
    cluster.write_kubeconfig(args.kubeconfig)
    print(
        json.dumps(
            {
                "url": url,
                "token": cluster.admin_token,
                "kubeconfig": str(args.kubeconfig),
                "counts": counts,
                "load_seconds": round(load_s, 2),
                "generator": generator,
                "churn": args.churn,
                "arrivals_per_min": args.arrivals_per_min,
            }
        ),
        flush=True,
    )

    paused = threading.Event()
    stopping = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: paused.set())
    signal.signal(signal.SIGUSR2, lambda *_: paused.clear())
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())

    driver = None
    if args.churn == "bench":
        from bench.scale import ChurnDriver

        driver = ChurnDriver(cluster, spec, arrivals_per_tick=args.arrivals_per_min / 60.0 * args.tick)
    elif args.churn == "controllers":
        from bench.churn import ControllerChurn

        driver = ControllerChurn(
            cluster,
            spec,
            arrivals_per_tick=args.arrivals_per_min / 60.0 * args.tick,
            sim_seconds_per_tick=args.tick * args.speed,
        )

    slow_ticks = 0
    last_report = last_tick = time.monotonic()
    next_tick = last_tick + args.tick
    while not stopping.is_set():
        stopping.wait(max(0.0, next_tick - time.monotonic()))
        next_tick += args.tick
        if stopping.is_set():
            break
        t0 = time.monotonic()
        # Arrivals and simulated time follow the wall clock, so a slow step (a busy machine, a big
        # controller pass) delays the churn but does not thin it out. Capped so a long pause does
        # not come back as a burst.
        elapsed, last_tick = min(5.0 * args.tick, t0 - last_tick), t0
        if paused.is_set() or driver is None:
            continue
        driver.arrivals_per_tick = args.arrivals_per_min / 60.0 * elapsed
        if hasattr(driver, "sim_seconds_per_tick"):
            driver.sim_seconds_per_tick = elapsed * args.speed
        try:
            if args.churn == "bench":
                # Controllers off: this only moves the simulated clock, so timestamps and ages move on.
                cluster.advance(elapsed * args.speed)
            driver.tick()
        except Exception as exc:  # noqa: BLE001 - keep serving; the log says what broke
            _log(f"churn tick failed: {type(exc).__name__}: {exc}")
        spent = time.monotonic() - t0
        if spent > args.tick:
            slow_ticks += 1
            next_tick = time.monotonic() + args.tick
        if time.monotonic() - last_report > 60:
            last_report = time.monotonic()
            _log(
                f"churn {getattr(driver, 'stats', {})} last tick {spent * 1000:.0f} ms, "
                f"slow ticks {slow_ticks}"
            )
    cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
