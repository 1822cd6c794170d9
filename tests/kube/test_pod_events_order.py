"""Pod events survive every order of the pods and events informers (simulated cluster, real HTTP).

The events informer keeps events of pods the cache holds; an event can reach the cache before its
pod does (the events list ran first, or the pod watch delivers a new pod after its first event).
Such events wait for their pod, and are discarded only once the pods are known not to include it.
Orders are forced with ``CacheOptions.start_order``; waits are on conditions, never sleeps.
"""

from __future__ import annotations

import time

import pytest

# Starts real servers or many caches: part of `make test`, not of the fast `make check`.
pytestmark = pytest.mark.slow

NS = "default"
ORDERS = [("events", "pods"), ("pods", "events")]


def pod(name, scheduler="volcano"):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "busybox"}]},
    }


def event(name, pod_name, reason, count=1, uid=""):
    ref = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "namespace": NS}
    if uid:
        ref["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NS},
        "involvedObject": ref,
        "reason": reason,
        "message": f"{reason} of {pod_name}",
        "type": "Warning",
        "count": count,
        "firstTimestamp": "2026-11-29T10:00:00Z",
        "lastTimestamp": "2026-11-29T10:30:00Z",
    }


def crashloop_state(cluster):
    """A crash-looping Volcano pod with its BackOff x327 event, and a pod of another scheduler
    with two events of its own (which the cache must not keep)."""
    store = cluster.store
    crash = store.create("pods", pod("crash-0"), NS)
    store.create("events", event("crash-0.backoff", "crash-0", "BackOff", 327, crash["metadata"]["uid"]), NS)
    store.create("events", event("crash-0.started", "crash-0", "Started", 1), NS)
    other = store.create("pods", pod("other-0", scheduler="default-scheduler"), NS)
    for reason in ("Scheduled", "Pulled"):
        body = event(f"other-0.{reason.lower()}", "other-0", reason, 1, other["metadata"]["uid"])
        store.create("events", body, NS)


def reasons(snap, pod_name):
    return sorted(e["reason"] for e in snap.events.all() if e["involvedObject"]["name"] == pod_name)


def backoff_kept(snap):
    pod_obj = snap.pods.get(NS, "crash-0")
    return pod_obj is not None and [e["count"] for e in snap.events_for(pod_obj) if e["reason"] == "BackOff"]


def informer(cache, kind):
    (found,) = [i for i in cache.informers if i.spec.name == kind]
    return found


@pytest.mark.parametrize("order", ORDERS, ids=["events-first", "pods-first"])
def test_pod_events_kept_in_both_orders_and_unwatched_ones_discarded(sim_cluster, make_live_cache, order):
    crashloop_state(sim_cluster)
    cache = make_live_cache(sim_cluster, start_order=order)
    first, second = (informer(cache, kind) for kind in order)
    # The order held: the second kind's list began after the first kind's list was done.
    assert first.counters["lists"] == second.counters["lists"] == 1
    assert cache.wait_for(backoff_kept, 2.0) == [327]
    snap = cache.wait_for(lambda s: len(s.events) == 2 and s, 2.0)
    assert reasons(snap, "crash-0") == ["BackOff", "Started"]
    assert reasons(snap, "other-0") == []
    events = cache.store("events")
    if order[0] == "events":
        # Listed before the pods: held, then settled by the pods list (moved or discarded).
        assert events.held_counts() == {"held": 0, "moved": 2, "discarded": 2, "overflow": 0}
    else:
        # The other scheduler's pod may still be created in the pod watch: its events wait.
        assert events.held_counts() == {"held": 2, "moved": 0, "discarded": 0, "overflow": 0}
        # No pod arrives within the wait while the pod watch is live: discarded.
        events.expire_held(time.monotonic() + cache.options.held_pod_event_seconds + 1)
        assert events.held_counts()["held"] == 0
    assert cache.kind_counters("events").errors == 0


@pytest.mark.parametrize("options", [{}, {"start_order": ()}], ids=["default-order", "unordered"])
def test_fifty_starts_keep_the_backoff_event(sim_cluster, make_live_cache, options):
    crashloop_state(sim_cluster)
    kept = 0
    for _ in range(50):
        # Pods first (the default) or all informers at once, in whatever order the threads run.
        cache = make_live_cache(sim_cluster, wait=False, **options)
        try:
            cache.wait_synced(timeout=10)
            try:
                kept += cache.wait_for(backoff_kept, 2.0) == [327]
            except TimeoutError:
                continue
            snap = cache.wait_for(lambda s: len(s.events) == 2 and s, 2.0)
            assert reasons(snap, "other-0") == []
        finally:
            cache.stop()
    assert kept == 50


@pytest.mark.parametrize("order", ORDERS, ids=["events-first", "pods-first"])
def test_pod_whose_events_arrive_before_it(sim_cluster, make_live_cache, order):
    cache = make_live_cache(sim_cluster, start_order=order)
    events = cache.store("events")
    # The event is written first: the events watch delivers it while no such pod exists.
    sim_cluster.store.create("events", event("late-0.scheduled", "late-0", "Scheduled"), NS)
    cache.wait_for(lambda s: events.held_counts()["held"] == 1, 2.0)
    assert cache.snapshot().events.get(NS, "late-0.scheduled") is None
    # A newer version of the held event replaces it; it still waits.
    held = sim_cluster.store.get("events", NS, "late-0.scheduled")
    sim_cluster.store.update("events", {**held, "count": 2})
    cache.wait_for(lambda s: (events.held_event(NS, "late-0.scheduled") or {}).get("count") == 2, 2.0)
    assert events.held_counts()["held"] == 1
    created = sim_cluster.store.create("pods", pod("late-0"), NS)
    snap = cache.wait_for(lambda s: s.events.get(NS, "late-0.scheduled") and s, 2.0)
    assert [(e["reason"], e["count"]) for e in snap.events_for(created)] == [("Scheduled", 2)]
    assert events.held_counts()["held"] == 0
    assert events.held_counts()["moved"] == 1


def test_held_event_deleted_on_the_server_is_forgotten(sim_cluster, make_live_cache):
    cache = make_live_cache(sim_cluster)
    events = cache.store("events")
    sim_cluster.store.create("events", event("gone-0.x", "gone-0", "Scheduled"), NS)
    cache.wait_for(lambda s: events.held_counts()["held"] == 1, 2.0)
    sim_cluster.store.delete("events", NS, "gone-0.x")
    cache.wait_for(lambda s: events.held_counts()["held"] == 0, 2.0)
    # The pod appears afterwards: the deleted event is not resurrected.
    sim_cluster.store.create("pods", pod("gone-0"), NS)
    cache.wait_for(lambda s: s.pods.get(NS, "gone-0"), 2.0)
    assert cache.snapshot().events.get(NS, "gone-0.x") is None
    assert events.held_counts()["moved"] == 0


def test_held_events_are_bounded(sim_cluster, make_live_cache):
    cache = make_live_cache(sim_cluster, events_total=3, events_per_object=2)
    events = cache.store("events")
    for i in range(3):
        for j in range(3):
            sim_cluster.store.create("events", event(f"u-{i}.{j}", f"u-{i}", f"R{j}"), NS)
    cache.wait_for(lambda s: events.held_counts()["overflow"] == 6, 2.0)
    # At most events_per_object per pod and events_total in all wait.
    assert events.held_counts()["held"] == 3


def test_selector_mode_holds_until_every_pod_watch_listed(sim_cluster, make_live_cache):
    crashloop_state(sim_cluster)
    batch = sim_cluster.store.create("pods", pod("batch-0", scheduler="kube-batch"), NS)
    sim_cluster.store.create(
        "events", event("batch-0.pulled", "batch-0", "Pulled", 1, batch["metadata"]["uid"]), NS
    )
    cache = make_live_cache(
        sim_cluster,
        pod_watch="selector",
        scheduler_names=("volcano", "kube-batch"),
        start_order=("events", "pods"),
    )
    snap = cache.wait_for(lambda s: len(s.events) == 3 and s, 2.0)
    assert reasons(snap, "batch-0") == ["Pulled"]
    assert reasons(snap, "crash-0") == ["BackOff", "Started"]
    assert reasons(snap, "other-0") == []
    assert cache.store("events").held_counts() == {"held": 0, "moved": 3, "discarded": 2, "overflow": 0}
