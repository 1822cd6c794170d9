"""The history recorder at scale: ``python -m bench.bench_history [--jobs N --pods N --minutes M]``.

Builds the ``large`` scenario (10,000 Jobs, 50,000 pods and 120 new Jobs a minute by default) in
the simulator, mirrors its store into an in-memory cache (no HTTP: the recorder's cost alone),
records the initial state into a SQLite file, then runs ``--minutes`` of churn, stepping the
recorder every ``--step-seconds`` of simulated time (the dashboard writes every 2 s) and marking
the pod store re-listed every ``--relist-minutes`` (its vanished-pod check then runs).

Prints the recorder's CPU seconds per simulated minute, the rows written, and how long the
recorder runs between two ``REQUESTS.give_way()`` calls (a request waits at most about that for
the interpreter): the stretches from the start of a step to its first give_way, between two,
and from the last to the end of the step, each attributed to the phase (drain, flush, upkeep,
sample, roll, prune, ...) that took most of its CPU time. ``wall`` is the stretch's wall time;
``python`` the thread's CPU time in it outside database calls (execute, fetch, commit: sqlite3
and psycopg release the interpreter lock while a statement runs), which other processes on the
machine do not inflate. A statement that calls Python (Django's SQLite functions, e.g. TruncHour)
holds the lock but counts as database time here. ``--longest`` names where the 10 longest
stretches began and ended and how much of each was garbage collection.
``--hourly`` ends with what the recorder does once an hour: the roll-up of an hour of samples,
and the prune. ``--profile N`` prints the N functions with the most own time (cProfile) over
the initial step, the churn steps and the hourly work.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

PHASES = {
    "_drain": "drain",
    "_flush": "flush",
    "_pod_upkeep": "upkeep",
    "_close_unseen": "upkeep",
    "_sample": "sample",
    "_activate": "activate",
    "_ensure_schema": "schema",
    "_roll": "roll",
    "_prune": "prune",
}


class Stretches:
    """The stretches between give_way calls inside recorder steps, by phase: wall time, and
    the thread's CPU time outside database calls (what it holds the interpreter for, also
    when other processes take the machine's cores)."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = defaultdict(list)
        self.python: dict[str, list[float]] = defaultdict(list)
        self.calls = 0
        self.verbose = False
        self._stack: list[str] = []
        self._active = False
        self._start = self._cpu_start = self._last = 0.0
        self._db = 0.0  # CPU seconds inside database calls in the current stretch
        self._shares: dict[str, float] = defaultdict(float)
        self._where = "step start"
        self.longest: list[tuple[float, float, str, str, str]] = []  # (python s, gc s, phase, from, to)
        self._gc = self._gc_started = 0.0  # CPU seconds collecting garbage in the current stretch
        self.gc_total = 0.0
        gc.callbacks.append(self._collecting)

    def _collecting(self, phase: str, info: dict[str, Any]) -> None:
        if not self._active:
            return
        if phase == "start":
            self._gc_started = time.thread_time()
        else:
            spent = time.thread_time() - self._gc_started
            self._gc += spent
            self.gc_total += spent

    def _account(self, cpu: float) -> None:
        self._shares[self._stack[-1] if self._stack else "other"] += cpu - self._last
        self._last = cpu

    def _close(self, where: str) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self._account(cpu)
        phase = max(self._shares, key=self._shares.__getitem__) if self._shares else "other"
        self.wall[phase].append(now - self._start)
        python = max(0.0, cpu - self._cpu_start - self._db)
        self.python[phase].append(python)
        entry = (python, self._gc, phase, self._where, where)
        self.longest = sorted([*self.longest, entry], reverse=True)[:10]
        self._where = where
        self._gc = 0.0
        self._start, self._cpu_start, self._last = now, cpu, cpu
        self._db = 0.0
        self._shares = defaultdict(float)

    def begin(self) -> None:
        self._active = True
        self._where = "step start"
        self._gc = 0.0
        self._start, self._cpu_start = time.perf_counter(), time.thread_time()
        self._last = self._cpu_start
        self._db = 0.0
        self._shares = defaultdict(float)

    def end(self) -> None:
        self._close("step end")
        self._active = False

    def give_way(self) -> None:
        if self._active:
            self.calls += 1
            self._close(_caller())

    def phase(self, label: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self._account(time.thread_time())
            self._stack.append(label)
            try:
                return method(*args, **kwargs)
            finally:
                self._account(time.thread_time())
                self._stack.pop()

        return wrapped

    def database(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        t = time.thread_time()
        try:
            return execute(sql, params, many, context)
        finally:
            self._db += time.thread_time() - t

    def timed(self, call: Callable[..., Any]) -> Callable[..., Any]:
        """``call`` (a commit) counted as time inside the database."""

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                self._db += time.thread_time() - t

        return wrapped

    def clear(self) -> None:
        self.wall.clear()
        self.python.clear()
        self.calls = 0
        self.longest = []
        self.gc_total = 0.0

    def table(self) -> str:
        lines = [
            f"{'phase':<9} {'stretches':>9} {'wall s':>7} {'python s':>8}   wall ms p50 / p99 / max"
            "      python ms p50 / p99 / max"
        ]
        for phase in sorted(self.wall, key=lambda p: -max(self.python[p])):
            wall, py = sorted(self.wall[phase]), sorted(self.python[phase])
            lines.append(
                f"{phase:<9} {len(wall):>9} {sum(wall):7.2f} {sum(py):8.2f}   {_dist(wall):<28} {_dist(py)}"
            )
        python = sum(sum(v) for v in self.python.values())
        lines.append(f"all phases: python {python:.2f} s (CPU outside database calls)")
        if self.verbose:
            lines.append(f"garbage collection in the stretches: {self.gc_total:.2f} s")
            lines.append("the longest (python ms, of it collecting garbage, phase, from, to):")
            lines += [
                f"  {py * 1000:7.2f} {gc_s * 1000:7.2f}  {phase:<9} {a} -> {b}"
                for py, gc_s, phase, a, b in self.longest
            ]
        return "\n".join(lines)


def _profile(profiler: cProfile.Profile, order: str, top: int) -> str:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(top)
    return out.getvalue()


def _caller() -> str:
    """Where in dashboard/ (outside priority.py) the running give_way was called from."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if "/dashboard/" in path and not path.endswith("priority.py"):
            return f"{path.rsplit('/dashboard/', 1)[1]}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


def _dist(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"{_pct(ms, 50):7.2f} / {_pct(ms, 99):7.2f} / {ms[-1]:7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--step-seconds", type=float, default=2.0, help="simulated seconds per recorder step")
    parser.add_argument("--relist-minutes", type=int, default=1, help="0: the pod store is never re-listed")
    parser.add_argument("--hourly", action="store_true", help="end with one hourly roll-up and prune")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--longest", action="store_true", help="name where the 10 longest began and ended")
    parser.add_argument("--sort", default="tottime", help="cProfile order: tottime or cumulative")
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp(prefix="volcano-ui-bench-history-")) / "history.sqlite3"
    os.environ["VOLCANO_UI_HISTORY_DB"] = str(db)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")
    import django

    django.setup()
    from django.db import connections

    from dashboard.history.recorder import Recorder, RecorderOptions
    from dashboard.kube.cache import ClusterCache
    from dashboard.management.commands.simcluster import build_cluster
    from dashboard.priority import REQUESTS
    from dashboard.sim.kinds import JOB, POD, PODGROUP, QUEUE

    cluster, _ = build_cluster(
        scenario="large", seed=0, speed=1, controllers=True, history=10000, jobs=args.jobs, pods=args.pods
    )
    cache = ClusterCache()
    for name in ("jobs", "podgroups", "queues", "pods", "events"):
        cache.store(name).set_state("synced")
    names = {JOB.key: "jobs", PODGROUP.key: "podgroups", QUEUE.key: "queues", POD.key: "pods"}

    def mirror(event_type, kind, obj) -> None:
        name = names.get(kind.key)
        if name is not None:
            (cache.store(name).delete if event_type == "DELETED" else cache.store(name).upsert)(obj)

    for kind in (QUEUE, JOB, PODGROUP, POD):
        for obj in cluster.store.list(kind)[0]:
            mirror("ADDED", kind, obj)
    cluster.store.add_listener(mirror)
    recorder = Recorder(
        cache,
        "default",
        RecorderOptions(flush_seconds=0, sample_seconds=60, queue_size=1_000_000),
        clock=cluster.clock.now,
    )
    cache.add_listener(recorder.listener)

    stretches = Stretches()
    stretches.verbose = args.longest
    real_give_way = REQUESTS.give_way

    def give_way() -> float:
        stretches.give_way()
        return real_give_way()

    REQUESTS.give_way = give_way  # type: ignore[method-assign]
    for method, label in PHASES.items():
        if hasattr(recorder, method):
            setattr(recorder, method, stretches.phase(label, getattr(recorder, method)))

    connection = connections["default"]
    connection.ensure_connection()
    connection._commit = stretches.timed(connection._commit)  # type: ignore[method-assign]
    # Rows are fetched after execute: SQLite steps through a query (a GROUP BY's groups) then.
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    for fetch in ("fetchone", "fetchmany", "fetchall"):
        setattr(SQLiteCursorWrapper, fetch, stretches.timed(getattr(SQLiteCursorWrapper, fetch)))

    def step(**kwargs: Any) -> float:
        """One recorder step; returns its CPU seconds."""
        t = time.process_time()
        stretches.begin()
        with connections["default"].execute_wrapper(stretches.database):
            recorder.step(**kwargs)
        stretches.end()
        return time.process_time() - t

    initial = cProfile.Profile() if args.profile else None
    if initial is not None:
        initial.enable()
    initial_cpu = step()
    if initial is not None:
        initial.disable()
    initial_rows = recorder.status().written
    print(f"initial state: {initial_rows} rows in {initial_cpu:.1f} s CPU, {stretches.calls} give_way calls")
    print(stretches.table())
    if initial is not None:
        print("initial step:", _profile(initial, args.sort, args.profile))
    stretches.clear()

    profiler = cProfile.Profile() if args.profile else None
    recorder_cpu = sim_cpu = 0.0
    steps_per_minute = max(1, round(60 / args.step_seconds))
    for minute in range(args.minutes):
        if args.relist_minutes and minute % args.relist_minutes == 0:
            cache.store("pods").mark_synced()  # as a completed re-list does: the vanished-pod check
        for _ in range(steps_per_minute):
            t = time.process_time()
            cluster.advance(60 / steps_per_minute)
            sim_cpu += time.process_time() - t
            if profiler is not None:
                profiler.enable()
            recorder_cpu += step()
            if profiler is not None:
                profiler.disable()
    rows = recorder.status().written - initial_rows
    size = sum(p.stat().st_size for p in db.parent.glob("history.sqlite3*"))
    print(
        f"{args.minutes} simulated min of churn, a step every {60 / steps_per_minute:g} s: "
        f"recorder {recorder_cpu:.2f} s CPU = {recorder_cpu / args.minutes:.3f} s per minute "
        f"(simulator {sim_cpu:.1f} s), {rows} rows = {rows / args.minutes:.0f} rows/min, "
        f"{stretches.calls} give_way calls, dropped {recorder.status().dropped}; database {size / 1e6:.1f} MB"
    )
    print(stretches.table())
    if args.hourly:
        # The hour before this one sampled every minute, as the recorder leaves it, then that
        # hour's roll-up and the prune, as the recorder runs them once an hour.
        from dashboard.history.rollup import hour_of

        now = cluster.clock.now()
        hour = hour_of(now) - timedelta(hours=1)
        for k in range(60):
            recorder._sample(hour + timedelta(minutes=k))
        recorder._flush()
        recorder._rolled, recorder._next_prune = hour, None
        stretches.clear()
        hourly = cProfile.Profile() if args.profile else None
        t = time.process_time()
        stretches.begin()
        with connections["default"].execute_wrapper(stretches.database):
            if hourly is not None:
                hourly.enable()
            recorder._roll(now)
            recorder._prune(now)
            if hourly is not None:
                hourly.disable()
        stretches.end()
        print(f"hourly roll-up of an hour of samples, and prune: {time.process_time() - t:.2f} s CPU")
        print(stretches.table())
        if hourly is not None:
            print("roll-up and prune:", _profile(hourly, args.sort, args.profile))
    if profiler is not None:
        print("churn steps:", _profile(profiler, args.sort, args.profile))


if __name__ == "__main__":
    main()
