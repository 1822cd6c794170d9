"""``python -m django demo_history --end ISO --hours 24``: the demo's fast-forwarded history
(dashboard/history/fastforward.py) into the configured history database."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Record a simulated day of the demo scenario into the history database."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--end", required=True, help="the end of the history, ISO 8601 with offset")
        parser.add_argument("--hours", type=float, default=24.0)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **opts) -> None:
        from dashboard.history.fastforward import fast_forward

        end = datetime.fromisoformat(opts["end"])
        if end.tzinfo is None:
            raise CommandError("--end needs a UTC offset")
        rows = fast_forward("default", end, hours=opts["hours"], seed=opts["seed"])
        self.stdout.write(f"history: {rows} rows for {opts['hours']:g} h")
