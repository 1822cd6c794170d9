"""``python -m django demo_history --end ISO --hours 24``: the demo's fast-forwarded history
(dashboard/history/fastforward.py) into the configured history database."""

from __future__ import annotations

import time
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Record a simulated day of the demo scenario into the history database."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--end", required=True, help="the end of the history, ISO 8601 with offset")
        parser.add_argument("--hours", type=float, default=24.0)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--progress", action="store_true", help="a line per simulated hour recorded")

    def handle(self, *args, **opts) -> None:
        from dashboard.history.fastforward import fast_forward

        end = datetime.fromisoformat(opts["end"])
        if end.tzinfo is None:
            raise CommandError("--end needs a UTC offset")
        began = time.monotonic()

        def progress(done: float, total: float) -> None:
            self.stdout.write(f"history: {done:.0f} of {total:g} h of the demo recorded")
            self.stdout.flush()

        rows = fast_forward(
            "default",
            end,
            hours=opts["hours"],
            seed=opts["seed"],
            progress=progress if opts["progress"] else None,
        )
        seconds = time.monotonic() - began
        self.stdout.write(f"history: {rows} rows for {opts['hours']:g} h in {seconds:.0f} s")
