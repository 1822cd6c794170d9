"""A Queue's page with days of history next to the jobs list, in-process at the large scale:

    python -m bench.bench_history_pages [--days 7 --requests 20 --arrivals-per-min 120]
                                        [--database PATH|postgresql://...]

Fills a history database (a new SQLite file in a temp dir unless ``--database`` names one; one that
holds samples already is read as it is) with ``--days`` of what the recorder writes for the large
scale's Queues (dashboard/sim/generator.py, as ``bench.inproc_pages --generator large``): a
QueueSample per Queue and resource and a QueuePhaseSample per Queue and PodGroup phase every sample
interval, the hourly means of every closed hour, the five-minute means of the last 25 and the daily
rollups of the admission waits (dashboard/history/rollup.py, as the recorder rolls them; a database
filled without the latter gets them from its migrations), the PodGroup phase transitions of
``--arrivals-per-min`` gangs and their admissions (the admission-wait table reads these). The rows
are built from the recorder's own sample of the cache (Recorder._sample: the same queues, resources
and phases); their values follow a deterministic daily wave, not a run of the cluster (this
measures reads, not content). Job transitions and pod lifetimes are not written: the Queue page
reads neither.

Then, over the in-memory cache with churn between requests (bench/inproc_pages.py), it requests
``/jobs/`` and the busiest Queue's page (the most PodGroups) with ``?window=7d``, ``24h`` and
``1h`` in turn, one client, and prints p50/p90 in ms, each page's p50 as a multiple of the jobs
list's, the history reads' own times for the 7-day window, and the database's size and rows.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

DAY_SECONDS = 86400.0


def wave(at: datetime, phase: float) -> float:
    """The fill's deterministic load pattern: 0.5..1.0, one period a day."""
    return 0.75 + 0.25 * math.sin(2 * math.pi * (at.timestamp() % DAY_SECONDS) / DAY_SECONDS + phase)


class Inserter:
    """Rows of a history model written with one executemany per batch: the model's table and
    columns, each value converted by its field (Django's own conversion, memoised for the
    repeated datetimes); bulk_create builds a model instance and SQL per row, which makes
    millions of rows take an hour on this machine."""

    def __init__(self, using: str, model: Any):
        from django.db import connections

        self.connection = connections[using]
        self.fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        qn = self.connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in self.fields)
        marks = ", ".join(["%s"] * len(self.fields))
        self.sql = f"INSERT INTO {qn(model._meta.db_table)} ({columns}) VALUES ({marks})"
        self.prepped: dict[Any, Any] = {}
        self.converted = [f.get_internal_type() in ("DateTimeField", "JSONField") for f in self.fields]
        self.written = 0

    def _value(self, i: int, value: Any) -> Any:
        if value is None or not self.converted[i]:
            return value
        key = (i, value)
        if key not in self.prepped:
            if len(self.prepped) > 100_000:
                self.prepped.clear()
            self.prepped[key] = self.fields[i].get_db_prep_save(value, self.connection)
        return self.prepped[key]

    def write(self, rows: list[dict[str, Any]]) -> None:
        """``rows``: {field name: value}, every field but the primary key; one transaction."""
        from django.db import transaction

        names = [f.attname for f in self.fields]
        params = [tuple(self._value(i, row[n]) for i, n in enumerate(names)) for row in rows]
        with transaction.atomic(using=self.connection.alias), self.connection.cursor() as cur:
            for k in range(0, len(params), 5000):
                cur.executemany(self.sql, params[k : k + 5000])
        self.written += len(rows)


def fill_samples(
    using: str, template: list[Any], phases: list[Any], start: datetime, end: datetime, step: float
) -> tuple[int, int]:
    """QueueSample and QueuePhaseSample rows every ``step`` seconds in [start, end), shaped as
    ``template`` and ``phases`` (one sample of the recorder), committed an hour at a time."""
    from dashboard.history.models import QueuePhaseSample, QueueSample

    usage, counts = Inserter(using, QueueSample), Inserter(using, QueuePhaseSample)
    order = {q: i for i, q in enumerate(sorted({s.queue for s in template} | {p.queue for p in phases}))}
    at = start
    usage_rows: list[dict[str, Any]] = []
    count_rows: list[dict[str, Any]] = []
    while at < end:
        for s in template:
            base = s.allocated or s.deserved
            usage_rows.append(
                {
                    "at": at,
                    "queue": s.queue,
                    "resource": s.resource,
                    "allocated": None if base is None else base * wave(at, order[s.queue]),
                    "deserved": s.deserved,
                    "capability": s.capability,
                    "guarantee": s.guarantee,
                }
            )
        for p in phases:
            n = round(p.count * wave(at, order[p.queue] + len(p.phase)))
            if n:  # the recorder writes only the phases some PodGroup is in
                count_rows.append({"at": at, "queue": p.queue, "phase": p.phase, "count": n})
        at += timedelta(seconds=step)
        if at >= end or at.minute == 0 and at.second == 0:
            usage.write(usage_rows)
            counts.write(count_rows)
            usage_rows, count_rows = [], []
    return usage.written, counts.written


def fill_transitions(
    using: str, weights: dict[str, int], per_min: float, start: datetime, end: datetime
) -> int:
    """PodGroup transitions (Pending, Inqueue, Running, Completed) of ``per_min`` gangs a minute
    in [start, end), shared among the queues by ``weights``, with deterministic waits and run
    times, keyed as the recorder keys them."""
    from dashboard.history.models import Admission, PhaseTransition
    from dashboard.volcano.history import admission_wait

    inserter, admitted = Inserter(using, PhaseTransition), Inserter(using, Admission)
    total = sum(weights.values()) or 1
    for qi, (queue, weight) in enumerate(sorted(weights.items())):
        rate = per_min * weight / total  # gangs a minute
        if rate <= 0:
            continue
        rows, admissions = [], []
        j = 0
        while (created := start + timedelta(minutes=j / rate)) < end:
            uid = f"bench-{qi:04d}-{j:08d}"
            inqueue = created + timedelta(seconds=5 + j * 37 % 300)
            running = inqueue + timedelta(seconds=10 + j * 53 % 1200)
            completed = running + timedelta(seconds=600 + j * 97 % 3600)
            steps = [("Pending", "", created, None), ("Inqueue", "Pending", inqueue, inqueue)]
            steps += [
                ("Running", "Inqueue", running, running),
                ("Completed", "Running", completed, completed),
            ]
            for phase, previous, seen, own in steps:
                if seen >= end:
                    break
                stamp = own.isoformat() if own is not None else ""
                rows.append(
                    {
                        "kind": "PodGroup",
                        "key": f"PodGroup|{uid}|{phase}|{stamp}",
                        "uid": uid,
                        "namespace": f"ns-{qi % 50:02d}",
                        "name": f"{queue}-pg-{j}",
                        "queue": queue,
                        "phase": phase,
                        "previous": previous,
                        "seen_at": seen,
                        "object_time": own,
                        "created": created,
                    }
                )
            if running < end:  # as the recorder writes it on seeing the gang start Running
                wait = admission_wait(created, inqueue, running)
                assert wait is not None
                admissions.append(
                    {
                        "uid": uid,
                        "queue": queue,
                        "namespace": f"ns-{qi % 50:02d}",
                        "name": f"{queue}-pg-{j}",
                        "running": running,
                        "day": running.date(),
                        "wait": wait.total_seconds(),
                    }
                )
            j += 1
        inserter.write(rows)
        admitted.write(admissions)
    return inserter.written


def fill(cache: Any, days: float, per_min: float, end: datetime) -> None:
    from dashboard.history import rollup
    from dashboard.history.recorder import Recorder, RecorderOptions
    from dashboard.history.service import options_from_settings

    options: RecorderOptions = options_from_settings()
    recorder = Recorder(cache, "default", options)
    # The recorder's own sample of the cache: the rows it would write at ``end``.
    recorder._sample(end)
    template, phases = recorder._samples, recorder._phase_samples
    start = rollup.hour_of(end - timedelta(days=days))
    t0 = time.perf_counter()
    samples, counts = fill_samples("default", template, phases, start, end, options.sample_seconds)
    t1 = time.perf_counter()
    weights: dict[str, int] = {}
    for p in phases:
        weights[p.queue] = weights.get(p.queue, 0) + p.count
    transitions = fill_transitions("default", weights, per_min, start, end)
    t2 = time.perf_counter()
    # As the recorder rolls: every closed hour, in the order they close.
    hourly = 0
    hour = start
    recent = rollup.hour_of(end) - rollup.FIVE_MINUTE_KEEP  # the five-minute means kept
    while hour < rollup.hour_of(end):
        nxt = min(hour + timedelta(hours=24), rollup.hour_of(end))
        hourly += rollup.roll("default", hour, nxt, five_minutes_from=recent)
        hour = nxt
    t3 = time.perf_counter()
    print(
        f"filled {days:g} days from {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC every "
        f"{options.sample_seconds:g} s: {samples} queue samples and {counts} phase counts "
        f"in {t1 - t0:.0f} s, "
        f"{transitions} PodGroup transitions ({per_min:g} gangs/min) in {t2 - t1:.0f} s, "
        f"{hourly} hourly and five-minute means in {t3 - t2:.0f} s (values: a deterministic daily wave)",
        flush=True,
    )


def database_report() -> str:
    from django.conf import settings
    from django.db import connection

    from dashboard.history import models

    tables = [
        models.QueueSample,
        models.QueuePhaseSample,
        models.QueueHourly,
        models.QueuePhaseHourly,
        models.QueueFiveMinute,
        models.QueuePhaseFiveMinute,
        models.PhaseTransition,
        models.Admission,
        models.AdmissionDaily,
        models.PodLifetime,
    ]
    rows = ", ".join(f"{m.__name__} {m.objects.count():,}" for m in tables)
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        path = Path(db["NAME"])
        with connection.cursor() as cur:
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        where = f"SQLite {path}"
    else:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_database_size(current_database())")
            size = cur.fetchone()[0]
        where = f"PostgreSQL {db['HOST']}/{db['NAME']}"
    return f"database: {where}, {size / 1e6:.1f} MB; rows: {rows}"


def time_pages(paths: list[str], requests: int, churn: Callable[[], None]) -> dict[str, list[float]]:
    """Each path once per round, in turn, ``requests`` rounds, churn before every request."""
    from django.test import Client

    client = Client()
    for path in paths:  # warm
        assert client.get(path).status_code == 200, path
    times: dict[str, list[float]] = {p: [] for p in paths}
    for _ in range(requests):
        for path in paths:
            churn()
            s = time.perf_counter()
            r = client.get(path)
            times[path].append((time.perf_counter() - s) * 1000)
            assert r.status_code == 200, (path, r.status_code)
            time.sleep(0.05)  # a page poll interval, compressed (as bench.inproc_pages)
    return times


def time_reads(queue: str, now: datetime, rounds: int = 5) -> str:
    """The median time of each history read of the Queue page's 7-day window."""
    from dashboard.history import reads

    since = now - timedelta(days=7)
    calls = {
        "queue_usage": lambda: reads.queue_usage("default", queue, since, now),
        "queue_phase_counts": lambda: reads.queue_phase_counts("default", queue, since, now),
        "daily_waits": lambda: reads.daily_waits("default", queue, since, now),
        "wait_percentile": lambda: reads.wait_percentile("default", queue, since, 50),
    }
    out = []
    for label, fn in calls.items():
        ts = []
        for _ in range(rounds):
            s = time.perf_counter()
            value = fn()
            ts.append((time.perf_counter() - s) * 1000)
        if isinstance(value, dict):
            size = sum(len(v) for v in value.values())
        elif label == "wait_percentile":
            size = 1
        else:
            size = sum(len(v.allocated) for v in value) if label == "queue_usage" else len(value)
        out.append(f"{label} {statistics.median(ts):.1f} ms ({size} points)")
    return "history reads, 7d, p50 of 5: " + ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=float, default=7)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--pods", type=int, default=50_000)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--requests", type=int, default=20, help="requests of each page")
    ap.add_argument("--arrivals-per-min", type=float, default=120, help="gangs a minute, all queues")
    ap.add_argument(
        "--database", default="", help="SQLite file or postgresql:// URL (default: a new temp file)"
    )
    ap.add_argument("--profile", default="", help="write a cProfile of the 7-day page's requests here")
    args = ap.parse_args()
    os.environ["VOLCANO_UI_HISTORY_DB"] = args.database or str(
        Path(tempfile.mkdtemp(prefix="volcano-ui-bench-history-pages-")) / "history.sqlite3"
    )
    from bench.inproc_pages import load_cache, setup_django

    setup_django()
    import logging

    logging.getLogger("volcano_ui.request").setLevel(logging.WARNING)  # a line per request
    from django.core.management import call_command
    from django.utils import timezone

    from dashboard.history import reads
    from dashboard.history.service import HistoryService, override_service
    from dashboard.kube import override_cluster_cache
    from dashboard.presenters.clock import set_time_source

    t0, c0 = time.perf_counter(), time.process_time()
    call_command("migrate", verbosity=0)  # an existing store's backfills, timed
    print(f"migrated in {time.perf_counter() - t0:.1f} s ({time.process_time() - c0:.1f} s CPU)", flush=True)
    t0 = time.perf_counter()
    cache, churn = load_cache("large", args.jobs, args.pods, args.events)
    print(f"loaded the large scale in {time.perf_counter() - t0:.1f}s", flush=True)
    newest = reads.newest_sample("default")
    if newest is None:
        fill(cache, args.days, args.arrivals_per_min, timezone.now().replace(second=0, microsecond=0))
        newest = reads.newest_sample("default")
    else:
        print(f"reading the history already in the database (newest sample {newest:%Y-%m-%d %H:%M} UTC)")
    assert newest is not None
    # The pages' clock runs from 30 s after the newest sample, as if the recorder had just sampled.
    offset = timezone.now() - newest - timedelta(seconds=30)
    set_time_source(lambda: timezone.now() - offset)
    snap = cache.snapshot()
    busy = max(snap.queues.all(), key=lambda q: len(snap.podgroups_in_queue(q["metadata"]["name"])))
    queue = busy["metadata"]["name"]
    paths = ["/jobs/"] + [f"/queues/{queue}/?window={w}" for w in ("7d", "24h", "1h")]
    service = HistoryService(cache, record=False)
    with override_cluster_cache(cache), override_service(service):
        times = time_pages(paths, args.requests, churn)
        print(f"busiest queue: {queue} ({len(snap.podgroups_in_queue(queue))} PodGroups); one client, churn")
        print("| page | n | p50 ms | p90 ms | p50 / jobs list p50 |")
        print("|---|---|---|---|---|")
        base = statistics.median(times["/jobs/"])
        for path, ts in times.items():
            p50, p90 = statistics.median(ts), statistics.quantiles(ts, n=10)[8]
            print(f"| `{path}` | {len(ts)} | {p50:.0f} | {p90:.0f} | {p50 / base:.2f} |")
        print(time_reads(queue, timezone.now() - offset))
        if args.profile:
            import cProfile

            from django.test import Client

            client = Client()
            with cProfile.Profile() as prof:
                for _ in range(5):
                    client.get(paths[1])
            prof.dump_stats(args.profile)
            print(f"cProfile of 5 requests of {paths[1]}: {args.profile}")
    print(database_report())


if __name__ == "__main__":
    main()
