"""``python manage.py demo``: the simulated Volcano cluster (demo scenario, realtime) plus the dashboard.

The cluster runs in this process on loopback; its admin kubeconfig goes to a temporary file that
the dashboard uses (``settings.VOLCANO_UI_KUBECONFIG`` and ``KUBECONFIG``). The dashboard is served
by Django's development server without the autoreloader, so the cluster starts exactly once.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from .simcluster import build_cluster, positive_float, wall_now


class Command(BaseCommand):
    help = "Start the simulated Volcano cluster (demo scenario) and serve the dashboard against it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=8000, help="dashboard port (default 8000)")
        parser.add_argument("--host", default="127.0.0.1", help="dashboard address (default 127.0.0.1)")
        parser.add_argument(
            "--sim-port", type=int, default=0, help="simulated API server port (default: ephemeral)"
        )
        parser.add_argument(
            "--speed",
            type=positive_float,
            default=1.0,
            help="simulated seconds per wall-clock second (default 1)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed for the simulation (default 0)")
        parser.add_argument("--scenario", default="demo", help="scenario for the cluster (default demo)")

    def handle(self, *args, **opts) -> None:
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
        kubeconfig = cluster.write_kubeconfig(workdir / "kubeconfig")
        os.environ["KUBECONFIG"] = str(kubeconfig)
        os.environ["VOLCANO_UI_KUBECONFIG"] = str(kubeconfig)
        settings.VOLCANO_UI_KUBECONFIG = str(kubeconfig)
        if not settings.DEBUG:
            # Production static storage serves hashed files from the manifest `collectstatic` writes;
            # collect into the demo's temporary directory so a fresh checkout needs no extra step.
            settings.STATIC_ROOT = str(workdir / "static")
            call_command("collectstatic", interactive=False, verbosity=0)
        cluster.start_realtime()
        # Ages and wait times on the pages follow the simulated clock (it runs at --speed).
        from dashboard import presenters

        presenters.set_time_source(cluster.clock.now)
        url = (
            f"http://{opts['host'] if ':' not in opts['host'] else '[' + opts['host'] + ']'}:{opts['port']}/"
        )
        self.stdout.write(
            f"Simulated Volcano cluster: {sim_url} (kubeconfig {kubeconfig}, "
            f"speed {opts['speed']:g}x, seed {opts['seed']})"
        )
        self.stdout.write(f"volcano-ui dashboard: {url}")
        self.stdout.flush()

        def on_sigterm(signum, frame) -> None:
            raise KeyboardInterrupt  # stop like Ctrl-C, so the cleanup below runs

        previous = signal.signal(signal.SIGTERM, on_sigterm)
        try:
            call_command(
                "runserver",
                f"{opts['host']}:{opts['port']}",
                use_reloader=False,
                use_threading=True,
            )
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            cluster.stop()
            shutil.rmtree(workdir, ignore_errors=True)
