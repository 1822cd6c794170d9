"""Churn with the simulated Volcano controllers running the lifecycle.

This process only adds what a cluster's users do: submit Jobs (plain specs, no status: the
controllers initialise them, create the PodGroup, the scheduler admits it, pods are created, run
and finish) and delete Jobs that finished; the oldest loaded Jobs are retired so
the total stays level. Each tick also runs the controllers over ``sim_seconds_per_tick`` of
simulated time.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from bench.scale import Builder, ScaleSpec, _kinds, job_namespaces, leaf_queues

TERMINAL = {"Completed", "Failed", "Terminated", "Aborted"}


@dataclass
class ControllerChurn:
    cluster: object
    spec: ScaleSpec
    arrivals_per_tick: float = 2.0
    sim_seconds_per_tick: float = 1.0
    keep_finished_ticks: int = 10
    rng: random.Random = field(default_factory=lambda: random.Random(2))
    stats: dict = field(default_factory=lambda: {"created": 0, "deleted": 0})
    _carry: float = 0.0

    def __post_init__(self) -> None:
        self.kinds = _kinds()
        jobs, _ = self.cluster.store.list(self.kinds["job"])
        self.builder = Builder(self.rng, leaf_queues(self.cluster.store), job_namespaces(jobs))
        self.builder.serial = 20_000_000
        jobs.sort(key=lambda j: (j["metadata"].get("creationTimestamp") or "", j["metadata"]["name"]))
        self.old_jobs = deque((j["metadata"]["namespace"], j["metadata"]["name"]) for j in jobs)
        self.total = self.target = len(jobs)
        self.mine: deque = deque()  # (namespace, name) of submitted Jobs, oldest first
        self.finished_at: dict[tuple[str, str], int] = {}
        self.ticks = 0

    def tick(self) -> None:
        from dashboard.sim.store import ApiError

        store = self.cluster.store
        self.ticks += 1
        self._carry += self.arrivals_per_tick
        arrivals, self._carry = int(self._carry), self._carry - int(self._carry)
        for _ in range(arrivals):
            ns = self.rng.choice(self.builder.namespaces)
            job = self.builder.job(
                ns,
                self.builder.job_name(),
                self.rng.choice(self.builder.leaf_queues),
                (1, self.rng.randrange(1, 8)),
                "",
                arrival=True,
            )
            del job["status"]
            for key in ("uid", "creationTimestamp"):
                job["metadata"].pop(key)
            store.create(self.kinds["job"], job, ns)
            self.mine.append((ns, job["metadata"]["name"]))
            self.stats["created"] += 1
            self.total += 1
        self.cluster.advance(self.sim_seconds_per_tick)
        # Delete submitted Jobs some ticks after they reached a terminal phase.
        still = deque()
        for key in self.mine:
            job = store.try_get(self.kinds["job"], *key)
            if job is None:
                self.total -= 1
                continue
            phase = ((job.get("status") or {}).get("state") or {}).get("phase")
            if phase in TERMINAL:
                since = self.finished_at.setdefault(key, self.ticks)
                if self.ticks - since >= self.keep_finished_ticks:
                    try:
                        store.delete(self.kinds["job"], *key)
                        self.stats["deleted"] += 1
                        self.total -= 1
                    except ApiError:
                        pass
                    self.finished_at.pop(key, None)
                    continue
            still.append(key)
        self.mine = still
        while self.total > self.target and self.old_jobs:
            key = self.old_jobs.popleft()
            try:
                store.delete(self.kinds["job"], *key)
                self.stats["deleted"] += 1
                self.total -= 1
            except ApiError:
                continue
