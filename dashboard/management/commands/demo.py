"""``python manage.py demo``: the simulated Volcano cluster (demo scenario, realtime) plus the dashboard.

The cluster runs in this process on loopback; its admin kubeconfig goes to a temporary file that
the dashboard uses (``settings.VOLCANO_UI_KUBECONFIG`` and ``KUBECONFIG``). The dashboard is served
by Django's development server without the autoreloader, so the cluster starts exactly once.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.management.commands.runserver import Command as RunserverCommand
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.core.servers.basehttp import WSGIServer

from .simcluster import build_cluster, port_arg, port_or_ephemeral_arg, positive_float, wall_now


def _listen_error(host: str, port: int, exc: OSError) -> CommandError:
    if exc.errno == errno.EADDRINUSE:
        return CommandError(
            f"port {port} is in use on {host}; pass another one: make demo PORT=N, or manage.py demo --port N"
        )
    return CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


def check_port_free(host: str, port: int) -> None:
    """Raise CommandError unless ``host:port`` can be bound now, as Django's server will bind it
    (IPv6 when the address has a colon, SO_REUSEADDR so a port in TIME_WAIT counts as free)."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as exc:
            raise _listen_error(host, port, exc) from None


class _DemoServer(WSGIServer):
    """Django's development server, but a failed bind raises CommandError.

    runserver ends the process with ``os._exit(1)`` when its server cannot bind (a port taken
    between check_port_free and the bind), which skips every ``finally`` and would leave the demo's
    temporary directory (an admin kubeconfig) behind. CommandError is not an OSError, so it passes
    runserver's handler and reaches the demo's cleanup.
    """

    def __init__(self, server_address, *args, **kwargs):
        try:
            super().__init__(server_address, *args, **kwargs)
        except OSError as exc:
            raise _listen_error(str(server_address[0]), int(server_address[1]), exc) from None


def _fill_history(path: Path, cluster, seed: int, hours: float, out) -> None:
    """The demo's history: a temporary SQLite file holding the last ``hours`` of the demo scenario,
    recorded by a separate process (manage.py demo_history; it frees its simulated cluster's
    memory when it ends) before the dashboard is served, so every chart has them when the demo
    opens. Its progress lines are written to ``out``, and a line when it fails (the demo then
    starts without it). docs/benchmarks.md has the time it takes."""
    if not settings.VOLCANO_UI_HISTORY:
        return
    # Before the first connection: the demo's history lives and dies with its temporary directory.
    settings.DATABASES["default"]["NAME"] = str(path)
    # The tables exist before either process writes, and runserver's check finds nothing unapplied.
    call_command("migrate", "history", interactive=False, verbosity=0)
    if hours <= 0:
        return
    env = {**os.environ, "VOLCANO_UI_HISTORY_DB": str(path), "DJANGO_SETTINGS_MODULE": "volcano_ui.settings"}
    env["PYTHONUNBUFFERED"] = "1"
    end = cluster.clock.now().isoformat()
    command = [sys.executable, "-m", "django", "demo_history", "--end", end, "--seed", str(seed)]
    command += ["--hours", f"{hours:g}", "--progress"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line.rstrip("\n"))
            out.flush()
        if proc.wait() != 0:
            # The demo goes on without its past day: history is recorded from now on.
            out.write(f"history: the past {hours:g} h could not be recorded (exit {proc.returncode})")
    finally:
        if proc.poll() is None:  # Ctrl-C or SIGTERM while it runs
            proc.terminate()
            proc.wait(10)


class _DemoRunserver(RunserverCommand):
    server_cls = _DemoServer


class Command(BaseCommand):
    help = "Start the simulated Volcano cluster (demo scenario) and serve the dashboard against it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=port_arg, default=8000, help="dashboard port (default 8000)")
        parser.add_argument("--host", default="127.0.0.1", help="dashboard address (default 127.0.0.1)")
        parser.add_argument(
            "--sim-port",
            type=port_or_ephemeral_arg,
            default=0,
            help="simulated API server port (default: ephemeral)",
        )
        parser.add_argument(
            "--speed",
            type=positive_float,
            default=1.0,
            help="simulated seconds per wall-clock second (default 1)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed for the simulation (default 0)")
        parser.add_argument("--scenario", default="demo", help="scenario for the cluster (default demo)")
        parser.add_argument(
            "--history-hours",
            type=float,
            default=24.0,
            help="hours of the demo scenario recorded as history before the dashboard opens "
            "(default 24; 0: none)",
        )

    def handle(self, *args, **opts) -> None:
        # Before anything is started or printed: a taken port is the common failure.
        check_port_free(opts["host"], opts["port"])

        def on_signal(signum, frame) -> None:
            # SIGINT/SIGTERM/SIGHUP stop the demo like Ctrl-C: KeyboardInterrupt is not an Exception, so
            # no handler on the way swallows it before the cleanup below.
            raise KeyboardInterrupt

        stop_signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.getsignal(sig) for sig in stop_signals}
        # SIGINT too: a demo started in the background of a non-interactive shell inherits it
        # ignored, and Ctrl-C (or kill -INT) must still stop it.
        for sig in stop_signals:
            signal.signal(sig, on_signal)
        cluster = None
        workdir: Path | None = None
        # Every exit path (Ctrl-C, SIGTERM/SIGHUP, an error while starting or serving) goes through
        # the finally below, which deletes the temporary directory with the admin kubeconfig.
        try:
            cluster, _ = build_cluster(
                scenario=opts["scenario"],
                seed=opts["seed"],
                speed=opts["speed"],
                controllers=True,
                history=10000,
                start_time=wall_now(),
            )
            try:
                sim_url = cluster.start("127.0.0.1", opts["sim_port"])
            except OSError as exc:
                raise CommandError(
                    f"cannot start the simulated cluster on port {opts['sim_port']}: {exc}"
                ) from None
            workdir = Path(tempfile.mkdtemp(prefix="volcano-ui-demo-"))
            self._serve(cluster, sim_url, workdir, opts)
        except KeyboardInterrupt:
            pass
        finally:
            # A second Ctrl-C must not interrupt the cleanup halfway.
            for sig in stop_signals:
                signal.signal(sig, signal.SIG_IGN)
            try:
                if cluster is not None:
                    cluster.stop()
            finally:
                if workdir is not None:
                    shutil.rmtree(workdir, ignore_errors=True)
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    def _serve(self, cluster, sim_url: str, workdir: Path, opts: dict) -> None:
        kubeconfig = cluster.write_kubeconfig(workdir / "kubeconfig")
        os.environ["KUBECONFIG"] = str(kubeconfig)
        os.environ["VOLCANO_UI_KUBECONFIG"] = str(kubeconfig)
        settings.VOLCANO_UI_KUBECONFIG = str(kubeconfig)
        if not settings.DEBUG:
            # Production static storage serves hashed files from the manifest `collectstatic` writes;
            # collect into the demo's temporary directory so a fresh checkout needs no extra step.
            settings.STATIC_ROOT = str(workdir / "static")
            call_command("collectstatic", interactive=False, verbosity=0)
        self.stdout.write(
            f"Simulated Volcano cluster: {sim_url} (kubeconfig {kubeconfig}, "
            f"speed {opts['speed']:g}x, seed {opts['seed']})"
        )
        self.stdout.flush()
        _fill_history(workdir / "history.sqlite3", cluster, opts["seed"], opts["history_hours"], self.stdout)
        from dashboard.history.fastforward import catch_up

        # The cluster's clock stood still while the past was recorded: simulated now is real now
        # when the dashboard opens (that stretch recorded too), then it runs at --speed.
        sample = float(settings.VOLCANO_UI_HISTORY_SAMPLE_SECONDS)
        catch_up(cluster, "default" if settings.VOLCANO_UI_HISTORY else None, sample)
        cluster.start_realtime()
        # Ages and wait times on the pages follow the simulated clock (it runs at --speed).
        from dashboard.presenters.clock import set_time_source

        set_time_source(cluster.clock.now)
        url = (
            f"http://{opts['host'] if ':' not in opts['host'] else '[' + opts['host'] + ']'}:{opts['port']}/"
        )
        self.stdout.write(f"volcano-ui dashboard: {url}")
        self.stdout.flush()
        call_command(
            _DemoRunserver(),
            f"{opts['host']}:{opts['port']}",
            use_reloader=False,
            use_threading=True,
        )
