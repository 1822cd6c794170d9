"""A Queue's page lists its Jobs and PodGroups waiting longest first; the sort reads an object's
parts once while the cache publishes the same object, and again once it is replaced."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboard.presenters import phases as badges
from dashboard.views import queues
from dashboard.volcano import objects, phases
from dashboard.volcano.time import created_at, seconds_between

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _pg(name: str, phase: str, age: timedelta | None) -> dict:
    meta = {"namespace": "ns", "name": name, "uid": f"u-{name}"}
    if age is not None:
        meta["creationTimestamp"] = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": meta, "status": {"phase": phase}}


def _plain_order(pgs: list[dict], now: datetime) -> list[str]:
    def key(g: dict) -> tuple:
        waiting = phases.podgroup_queued(phases.podgroup_phase(g))
        wait = (seconds_between(created_at(g), now) or 0) if waiting else 0
        return (badges.podgroup_phase(g).final, -wait, objects.namespace(g), objects.name(g))

    return [objects.name(g) for g in sorted(pgs, key=key)]


def test_podgroups_are_ordered_by_their_wait_and_a_replaced_one_is_read_again():
    pgs = [
        _pg("a", "Pending", timedelta(minutes=5)),
        _pg("b", "Inqueue", timedelta(hours=2)),
        _pg("c", "Running", timedelta(days=1)),  # not waiting: 0
        _pg("d", "Completed", timedelta(days=2)),  # final: last
        _pg("e", "Pending", None),  # creation unknown: 0
        _pg("f", "Pending", timedelta(minutes=-3)),  # a later clock: 0
        _pg("g", "Pending", timedelta(minutes=30)),
    ]
    slot = ("podgroups", 0, "test-queue")

    def order(objs: list[dict], now: datetime) -> list[str]:
        return [objects.name(g) for g in queues._waiting_longest_first(slot, objs, queues._pg_parts, now)]

    assert order(pgs, NOW) == _plain_order(pgs, NOW) == ["b", "g", "a", "c", "e", "f", "d"]
    # Later, the same objects: "f" has waited by then.
    later = NOW + timedelta(minutes=10)
    assert order(pgs, later) == _plain_order(pgs, later)
    # "b" starts running: a new object from the cache replaces it.
    pgs[1] = _pg("b", "Running", timedelta(hours=2))
    assert order(pgs, NOW) == _plain_order(pgs, NOW) == ["g", "a", "b", "c", "e", "f", "d"]


def test_the_kept_order_is_the_plain_sort_at_every_time_for_any_objects():
    """Equal creation times, creations ahead of the clock, final and unknown phases, at times before,
    at and after them; the same objects between times (the kept order) and replaced ones."""
    import random

    rng = random.Random(7)
    phases_ = ("Pending", "Inqueue", "Running", "Completed", "Unknown", "")
    ages = [None, *(timedelta(seconds=s) for s in (-120, -60, 0, 0, 30, 60, 60, 600, 3600))]
    pgs = [_pg(f"g{i:02d}", rng.choice(phases_), rng.choice(ages)) for i in range(40)]
    slot = ("podgroups", 0, "property-queue")
    for round_ in range(6):
        for shift in (-300, -60, 0, 1, 59, 60, 61, 120, 7200):
            now = NOW + timedelta(seconds=shift)
            got = [objects.name(g) for g in queues._waiting_longest_first(slot, pgs, queues._pg_parts, now)]
            assert got == _plain_order(pgs, now), (round_, shift)
        i = rng.randrange(len(pgs))
        pgs[i] = _pg(f"g{i:02d}", rng.choice(phases_), rng.choice(ages))
        rng.shuffle(pgs)  # the cache's order is by name; the sort must not depend on it
