"""The controllers read stored objects without copying them: a committed object never changes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from dashboard.sim.cluster import SimulatedCluster


def test_the_demo_never_modifies_a_committed_object():
    cluster = SimulatedCluster(
        seed=0, scenario="demo", controllers=True, start_time=datetime(2026, 11, 30, 12, tzinfo=UTC)
    )
    cluster.controllers.tick = 10.0
    committed: dict[int, tuple[dict, str]] = {}

    def snapshot(event_type: str, kind, obj: dict) -> None:
        committed[id(obj)] = (obj, json.dumps(obj))

    cluster.store.add_listener(snapshot)
    for _ in range(20):
        cluster.advance(60)
    assert len(committed) > 1000
    changed = [text for obj, text in committed.values() if json.dumps(obj) != text]
    assert changed == []
