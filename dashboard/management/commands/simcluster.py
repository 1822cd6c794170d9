"""``python manage.py simcluster``: run the simulated Volcano cluster as a standalone API server.

It serves the Kubernetes REST API on ``--host``/``--port`` (plain HTTP) and on an HTTPS port
(``--tls-port``, ephemeral by default; kubectl only sends tokens over TLS), writes a kubeconfig for
the admin user to ``--kubeconfig``, prints the URLs, the kubeconfig path and the admin token,
advances simulated time with wall time x ``--speed`` when the controllers run, and serves until
SIGINT or SIGTERM.

The admin token and the TLS CA/serving certificate are kept in ``--state-file`` (default: the
kubeconfig path + ``.sim-state.json``, mode 0600): a restart with the same paths presents the same
token and certificates, so clients holding the old kubeconfig just see an outage. The cluster's
objects are not kept (the scenario is loaded afresh); the state file's run counter (``epoch``)
moves the new run's resourceVersions above every earlier run's, so clients' watches from an old
resourceVersion are refused (410 Expired or 504 "Too large resource version") and they re-list
(dashboard/sim/cluster.py).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError


def start_time_arg(text: str) -> datetime:
    """An RFC 3339 / ISO 8601 instant; "now" is the wall clock (the default)."""
    if text == "now":
        return wall_now()
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("give a time zone, e.g. 2026-11-29T10:00:00Z")
    return value


def wall_now() -> datetime:
    # Ages shown by kubectl and the dashboard are computed from wall time, so a cluster served in
    # real time starts its simulated clock now.
    return datetime.now(UTC).replace(microsecond=0)


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError("must be > 0")
    return value


def _port(text: str, *, ephemeral: bool) -> int:
    low = 0 if ephemeral else 1
    try:
        value = int(text, 10)
    except ValueError:
        value = -1
    if not low <= value <= 65535:
        # argparse prints this after "argument --port:" and exits with status 2.
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a TCP port: use {low}-65535{' (0 = any free port)' if ephemeral else ''}"
        )
    return value


def port_arg(text: str) -> int:
    """A TCP port, 1-65535 (argparse type)."""
    return _port(text, ephemeral=False)


def port_or_ephemeral_arg(text: str) -> int:
    """A TCP port, 1-65535, or 0 for an ephemeral port chosen by the kernel (argparse type)."""
    return _port(text, ephemeral=True)


def build_cluster(
    *,
    scenario: str,
    seed: int,
    speed: float,
    controllers: bool,
    history: int,
    jobs: int | None = None,
    pods: int | None = None,
    queues: int | None = None,
    events: int | None = None,
    podgroups: int | None = None,
    nodes: int | None = None,
    hypernodes: int | None = None,
    start_time: datetime | None = None,
    churn: float = 2.0,
    state_file: str | Path | None = None,
):
    """A SimulatedCluster with ``scenario`` loaded; ``jobs``/``pods``/``queues``/``events`` size the
    ``large`` scenario. Raises CommandError for a scenario that cannot be loaded."""
    from dashboard.sim.cluster import SimulatedCluster
    from dashboard.sim.scenarios import ScenarioError, load_scenario

    if scenario not in ("empty", "demo", "large") and not Path(scenario).is_file():
        raise CommandError(f"--scenario {scenario!r}: not empty, demo, large, or an existing YAML/JSON file")
    cluster = SimulatedCluster(
        seed=seed,
        scenario="empty",
        controllers=controllers,
        speed=speed,
        history_size=history,
        start_time=start_time,
        state_file=state_file,
    )
    options: dict[str, Any] = {}
    if scenario == "large":
        options = {
            k: v
            for k, v in (
                ("jobs", jobs),
                ("pods", pods),
                ("queues", queues),
                ("events", events),
                ("podgroups", podgroups),
                ("nodes", nodes),
                ("hypernodes", hypernodes),
            )
            if v is not None
        }
        options["churn"] = churn
    try:
        counts = load_scenario(cluster, scenario, **options)
    except ScenarioError as exc:
        raise CommandError(str(exc)) from None
    return cluster, counts


class Command(BaseCommand):
    help = "Run the simulated Volcano cluster (Kubernetes REST API over HTTP) until interrupted."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        parser.add_argument(
            "--port", type=port_or_ephemeral_arg, default=0, help="plain-HTTP port (default: ephemeral)"
        )
        parser.add_argument(
            "--tls-port", type=port_or_ephemeral_arg, default=0, help="HTTPS port (default: ephemeral)"
        )
        parser.add_argument("--kubeconfig", required=True, help="path to write the admin kubeconfig to")
        parser.add_argument(
            "--state-file",
            help="where the admin token and TLS CA/certificate persist across restarts "
            "(default: <kubeconfig>.sim-state.json, mode 0600)",
        )
        parser.add_argument(
            "--fresh",
            action="store_true",
            help="make a new admin token and CA (overwriting the state file) instead of reusing them",
        )
        parser.add_argument(
            "--scenario",
            default="demo",
            help="empty, demo (default), large, or a YAML/JSON file replayed verbatim",
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="seed for all simulated randomness (default 0)"
        )
        parser.add_argument(
            "--speed",
            type=positive_float,
            default=1.0,
            help="simulated seconds per wall-clock second (default 1)",
        )
        parser.add_argument(
            "--no-controllers",
            action="store_true",
            help="no simulated behaviour: objects keep exactly the status they were given",
        )
        parser.add_argument("--jobs", type=int, help="large scenario: number of Jobs (default 10000)")
        parser.add_argument("--pods", type=int, help="large scenario: number of pods (default 50000)")
        parser.add_argument("--queues", type=int, help="large scenario: number of queues (default 200)")
        parser.add_argument("--events", type=int, help="large scenario: number of Events (default 100000)")
        parser.add_argument(
            "--podgroups",
            type=int,
            help="large scenario: number of PodGroups (default: as many as Jobs; the Deployments, "
            "StatefulSets, batch/v1 Jobs and bare pods scheduled by Volcano make up the difference)",
        )
        parser.add_argument(
            "--nodes", type=int, help="large scenario: at least this many nodes (default: as the pods need)"
        )
        parser.add_argument(
            "--hypernodes",
            type=int,
            help="large scenario: a HyperNode tree of this many (leaves, spines, a core; default none)",
        )
        parser.add_argument(
            "--churn",
            type=float,
            default=2.0,
            help="large scenario with controllers: new Jobs per simulated second (default 2; 0 = none)",
        )
        parser.add_argument(
            "--start-time",
            type=start_time_arg,
            default="now",
            help="the simulated clock's start, RFC 3339 (default: now, the wall clock)",
        )
        parser.add_argument(
            "--history", type=int, default=10000, help="watch events retained per kind (default 10000)"
        )

    def handle(self, *args, **opts) -> None:
        if opts["history"] < 1:
            raise CommandError("--history must be at least 1")
        for name in ("jobs", "pods", "queues", "events", "podgroups", "nodes", "hypernodes", "churn"):
            if opts[name] is not None and opts[name] < 0:
                raise CommandError(f"--{name} must not be negative")
        state_file = Path(opts["state_file"] or f"{opts['kubeconfig']}.sim-state.json")
        if opts["fresh"]:
            state_file.unlink(missing_ok=True)
        started = time.monotonic()
        cluster, counts = build_cluster(
            scenario=opts["scenario"],
            seed=opts["seed"],
            speed=opts["speed"],
            controllers=not opts["no_controllers"],
            history=opts["history"],
            jobs=opts["jobs"],
            pods=opts["pods"],
            queues=opts["queues"],
            events=opts["events"],
            podgroups=opts["podgroups"],
            nodes=opts["nodes"],
            hypernodes=opts["hypernodes"],
            start_time=opts["start_time"],
            churn=opts["churn"],
            state_file=state_file,
        )
        loaded = time.monotonic() - started
        try:
            url = cluster.start(opts["host"], opts["port"], tls_port=opts["tls_port"])
        except OSError as exc:
            raise CommandError(f"cannot listen on {opts['host']}:{opts['port']}: {exc}") from None
        path = cluster.write_kubeconfig(opts["kubeconfig"])
        if cluster.controllers is not None:
            cluster.start_realtime()
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing"
        self.stdout.write(
            f"Simulated Volcano cluster ({opts['scenario']}, seed {opts['seed']}, "
            f"speed {opts['speed']:g}x, controllers {'off' if cluster.controllers is None else 'on'})"
        )
        self.stdout.write(f"Loaded {summary} in {loaded:.1f}s")
        self.stdout.write(f"URL: {url}")
        if getattr(cluster, "https_url", ""):
            self.stdout.write(f"HTTPS URL: {cluster.https_url}")
        self.stdout.write(f"Kubeconfig: {path}")
        self.stdout.write(f"Admin token (also for /_sim/): {cluster.admin_token}")
        self.stdout.write(f"State file (token + CA, kept across restarts): {state_file}")
        from dashboard.sim.cluster import EPOCH_SPAN

        self.stdout.write(
            f"Run {cluster.epoch} of this state file: resourceVersions above {cluster.epoch * EPOCH_SPAN}"
        )
        self.stdout.write("Press Ctrl-C to stop.")
        self.stdout.flush()
        stop = threading.Event()

        def on_signal(signum, frame) -> None:
            stop.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not stop.wait(0.5):
                pass
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            cluster.stop()
            self.stdout.write("Stopped.")
            sys.stdout.flush()
