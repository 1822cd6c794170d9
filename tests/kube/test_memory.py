"""The cache's memory measures: shared sub-trees (trim.share), the events list bounded while it
accumulates (EventStore.bound_listed), and the allocator helpers (dashboard/kube/memory.py)."""

from __future__ import annotations

import os
import sys

import pytest

from dashboard.kube import memory, trim
from dashboard.kube.kinds import EVENTS
from dashboard.kube.store import EventStore, event_sort_time

JOB_REF = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "name": "train",
    "uid": "4321158b-edc2-41a1-a772-61a5de08ce4a",
    "controller": True,
    "blockOwnerDeletion": True,
}


def _pod(index: int) -> dict:
    """A pod of Job "train" as Volcano's job controller creates it (REFERENCE.md §4)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"train-worker-{index}",
            "namespace": "team-a",
            "uid": f"uid-{index}",
            "resourceVersion": str(100 + index),
            "creationTimestamp": "2026-11-29T07:45:59Z",
            "labels": {"volcano.sh/job-name": "train", "volcano.sh/task-index": str(index)},
            "annotations": {"scheduling.k8s.io/group-name": "train-pg", "volcano.sh/task-spec": "worker"},
            "ownerReferences": [dict(JOB_REF)],
        },
        "spec": {
            "nodeName": "node-1",
            "schedulerName": "volcano",
            "restartPolicy": "OnFailure",
            "containers": [
                {"name": "main", "image": "pytorch/pytorch:2.5.1", "resources": {"requests": {"cpu": "1"}}}
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-29T07:46:10Z"}],
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "pytorch/pytorch:2.5.1",
                    "imageID": f"docker-pullable://sha256:{index:064d}",
                    "containerID": f"containerd://{index:064d}",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": "2026-11-29T07:46:05Z"}},
                }
            ],
            "startTime": "2026-11-29T07:46:00Z",
            "podIP": f"10.0.0.{index}",
        },
    }


def test_pods_of_one_task_share_equal_subtrees_and_keep_every_read_field():
    a, b = trim.trim_pod(_pod(0)), trim.trim_pod(_pod(1))
    # Shared (one object for both pods): what is equal between pods of one task on one node.
    assert a["spec"] is b["spec"]
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert a["status"]["conditions"] is b["status"]["conditions"]
    assert a["status"]["containerStatuses"] is b["status"]["containerStatuses"]
    # Per pod: what differs.
    assert a["metadata"]["labels"] != b["metadata"]["labels"] and a["status"]["podIP"] != b["status"]["podIP"]
    # Nothing the pages read changed: same values, same JSON types (lists stay lists).
    assert a["metadata"]["ownerReferences"] == [JOB_REF]
    assert a["spec"] == {
        "nodeName": "node-1",
        "schedulerName": "volcano",
        "restartPolicy": "OnFailure",
        "containers": [
            {"name": "main", "image": "pytorch/pytorch:2.5.1", "resources": {"requests": {"cpu": "1"}}}
        ],
    }
    assert a["status"]["containerStatuses"] == [
        {
            "name": "main",
            "image": "pytorch/pytorch:2.5.1",
            "ready": True,
            "restartCount": 0,
            "started": True,
            "state": {"running": {"startedAt": "2026-11-29T07:46:05Z"}},
        }
    ]
    assert isinstance(a["status"]["conditions"], list) and isinstance(a["spec"]["containers"], list)


def test_a_podgroup_shares_its_owner_reference_with_the_jobs_pods():
    pod = trim.trim_pod(_pod(0))
    pg = trim.trim_podgroup(
        {"metadata": {"name": "train-pg", "namespace": "team-a", "ownerReferences": [dict(JOB_REF)]}}
    )
    assert pg["metadata"]["ownerReferences"] is pod["metadata"]["ownerReferences"]


@pytest.mark.parametrize(
    "left, right",
    [
        ({"ready": True}, {"ready": 1}),
        ({"ready": 1}, {"ready": 1.0}),
        ({"ready": False}, {"ready": 0}),
        ({"a": [1]}, {"a": [True]}),
        ({"a": None}, {"a": "None"}),
        ({"a": {"b": 1}}, {"a": [{"b": 1}]}),
        ([], {}),
        ({"a": "1"}, {"a": 1}),
    ],
)
def test_share_never_merges_values_json_tells_apart(left, right):
    shared = trim.SharedTrees()
    one, other = shared(left), shared(right)
    assert one == left and other == right
    assert type(one) is type(left) and one is not other
    assert repr(one) == repr(left) and repr(other) == repr(right)  # True stays True, 1.0 stays 1.0


def test_share_checks_a_hit_so_a_hash_collision_never_merges_unequal_values():
    shared = trim.SharedTrees()
    first = shared({"a": 1})

    # Every entry now claims the hash of any new shape: a hit must still be compared.
    class Colliding(dict):
        def get(self, key, default=None):
            return first

    shared._new = Colliding(shared._new)
    other = shared({"a": 2})
    assert other == {"a": 2} and other is not first
    assert shared([1, 2]) == [1, 2]
    assert shared({"a": 1}) is first


def test_share_caps_free_text_and_bounds_its_table():
    shared = trim.SharedTrees(limit=10)
    huge = "x" * (trim.MESSAGE_LIMIT + 1000)
    out = shared({"message": huge})
    assert out["message"].startswith("x" * trim.MESSAGE_LIMIT) and "truncated by volcano-ui" in out["message"]
    for i in range(100):
        shared({"i": i})
    assert len(shared) <= 20  # two generations of at most ``limit`` entries
    # A value still in use is shared again after its generation was dropped.
    first = shared({"keep": [1, 2]})
    for i in range(30):
        shared({"j": i})
    again = shared({"keep": [1, 2]})
    assert again == first


def test_share_purge_drops_the_trees_nothing_else_holds_and_keeps_the_rest():
    shared = trim.SharedTrees(limit=4)  # small: the entries span both generations
    gone = shared({"spec": {"x": [1, 2], "y": {"z": "w"}}, "owners": [{"kind": "Job"}]})
    kept = shared({"keep": {"x": [1, 2]}})
    assert len(shared) > 3
    del gone
    dropped = shared.purge()
    # What only the first object used goes in one pass (parents before their children); the
    # sub-trees the second object holds stay and are still shared.
    assert dropped >= 2
    assert sorted(map(repr, {**shared._old, **shared._new}.values())) == sorted(
        map(repr, [[1, 2], {"x": [1, 2]}, {"keep": {"x": [1, 2]}}])
    )
    assert shared({"other": {"x": [1, 2]}})["other"] is kept["keep"]
    assert shared.purge() == 1  # the {"other": ...} tree just built and dropped
    del kept
    # A child re-added to the newer generation after its parent (in the older one) goes with the
    # next purge: the cache purges every few seconds.
    passes = 0
    while shared.purge():
        passes += 1
    assert len(shared) == 0 and passes <= 2


def test_share_purge_pauses_every_so_many_entries():
    shared = trim.SharedTrees()
    keep = [shared({"n": i}) for i in range(10)]
    pauses = []
    assert shared.purge(pause=lambda: pauses.append(len(pauses)), every=3) == 0
    assert len(pauses) == 3 and len(shared) == 10  # 10 entries: after the 3rd, 6th and 9th
    del keep


def test_share_purge_runs_with_the_memory_releases_and_survives_a_failing_task():
    import threading

    ran = threading.Event()

    def failing():
        raise RuntimeError("boom")

    releaser = memory.MemoryReleaser(0.01, before=(failing, ran.set))
    releaser.start()
    try:
        assert ran.wait(5)  # after the failing task, the next one and the release still run
    finally:
        releaser.stop()


def _event(name: str, second: int, obj: str) -> dict:
    stamp = f"2026-11-29T10:{second // 60:02d}:{second % 60:02d}Z"
    return {
        "metadata": {"name": name, "namespace": "team-a", "resourceVersion": str(second + 1)},
        "involvedObject": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "namespace": "team-a",
            "name": obj,
        },
        "reason": "Scheduled",
        "message": f"event at {second}",
        "type": "Normal",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
    }


def test_event_store_bounds_a_list_to_the_newest_per_object_and_in_total():
    store = EventStore(EVENTS, per_object=3, total=5)
    # Listed in name order, which is the reverse of time order here.
    listed = [trim.trim_event(_event(f"e-{i:03d}", 100 - i, "a" if i % 2 else "b")) for i in range(20)]
    assert store.bound_listed(listed[:6]) == listed[:6]  # within the cap and its slack: left alone
    assert len(store.bound_listed(listed[:7])) == 5  # beyond: pruned to the cap
    kept = store.bound_listed(listed, final=True)
    times = [event_sort_time(e) for e in kept]
    assert times == sorted(times)  # oldest first: the total cap drops the oldest first later
    # Newest 3 of "a" (i = 1, 3, 5) and of "b" (i = 0, 2, 4); then the newest 5 of those six.
    assert {e["metadata"]["name"] for e in kept} == {"e-000", "e-001", "e-002", "e-003", "e-004"}
    store.replace(kept)
    assert len(store) == 5


def test_a_listed_event_backlog_keeps_the_newest_events_within_the_caps(sim_cluster, make_live_cache):
    # 60 events about 3 Jobs; names sort opposite to time, so keeping the last listed (the old
    # behaviour) would keep the oldest ones.
    sim_cluster.store.create("namespaces", {"metadata": {"name": "team-a"}})
    for i in range(60):
        sim_cluster.store.create("events", _event(f"ev-{i:03d}", 3000 - i, f"job-{i % 3}"), "team-a")
    cache = make_live_cache(sim_cluster, events_total=12, events_per_object=5, page_size=7)
    events = cache.snapshot().events.all()
    names = sorted(e["metadata"]["name"] for e in events)
    # Per Job the 5 newest (smallest i), then the 12 newest of those 15: i = 0..11.
    assert names == [f"ev-{i:03d}" for i in range(12)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc allocator calls: Linux only")
def test_allocator_helpers_on_glibc(monkeypatch):
    if memory._glibc() is None:
        pytest.skip("not glibc (e.g. musl): the helpers are no-ops there")
    assert memory.release_free_memory() is True
    assert "glibc" in memory.describe()
    # The operator's MALLOC_ARENA_MAX (applied by glibc at start-up) wins over ours.
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_arenas() is False
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert memory.limit_arenas(memory.DEFAULT_ARENAS) is True
    assert os.environ.get("MALLOC_ARENA_MAX") is None


def _releaser_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name == "memory-release"]


def test_the_cache_releases_free_memory_while_it_runs_and_stops_doing_so(sim_cluster, make_live_cache):
    if memory._glibc() is None:
        pytest.skip("not glibc: no releaser thread")
    import threading

    cache = make_live_cache(sim_cluster, memory_release_interval=0.05)
    releaser = cache.memory_releaser
    done = threading.Event()
    # Up to 30 s in steps of 0.05 s: a condition with a timeout, not a sleep for state (a release
    # walks the test process's whole heap, which after a long test run takes a while).
    deadline = 600
    while releaser.releases < 2 and deadline:
        done.wait(0.05)
        deadline -= 1
    assert releaser.releases >= 2
    assert "memory-release" in _releaser_threads()
    thread = releaser._thread
    cache.stop()
    # stop() waits 5 s; a release in progress on a loaded machine may outlast that: then the
    # thread ends after it (its stop flag is set).
    assert thread is not None
    thread.join(30)
    # This cache's thread, not every thread of that name: another test's cache may be finishing
    # a release after its own stop() on a loaded machine.
    assert releaser._thread is None and not thread.is_alive() and thread not in threading.enumerate()
    # A cache built with the interval 0 releases only after full lists: no thread.
    quiet = make_live_cache(sim_cluster, memory_release_interval=0)
    assert quiet.memory_releaser._thread is None


def test_limit_arenas_sets_only_the_arena_cap_and_yields_to_the_operator(monkeypatch):
    if memory._glibc() is None:
        pytest.skip("not glibc")
    calls = []
    real = memory._glibc()

    class Recorder:
        def mallopt(self, param, value):
            calls.append((param, value))
            return real.mallopt(param, value)

    monkeypatch.setattr(memory, "_glibc", lambda: Recorder())
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert memory.limit_arenas() is True
    assert calls == [(memory.M_ARENA_MAX, memory.DEFAULT_ARENAS)]  # the mmap threshold stays glibc's
    calls.clear()
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_arenas() is False and calls == []


@pytest.fixture
def gc_thresholds():
    """Restores the process's GC thresholds after a test that changes them."""
    import gc

    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


def test_tune_gc_raises_only_the_young_threshold(gc_thresholds):
    import gc

    gc.set_threshold(700, 10, 10)  # CPython's defaults
    assert memory.tune_gc() is True
    assert gc.get_threshold() == (memory.GC_THRESHOLD0, 10, 10)
    assert memory.tune_gc() is False  # idempotent
    # A higher value chosen by the embedding application stays; so does a disabled collector.
    gc.set_threshold(50_000, 5, 7)
    assert memory.tune_gc() is False and gc.get_threshold() == (50_000, 5, 7)
    gc.set_threshold(0, 10, 10)
    assert memory.tune_gc() is False and gc.get_threshold() == (0, 10, 10)


def test_starting_the_cache_tunes_the_gc(sim_cluster, make_live_cache, gc_thresholds):
    import gc

    gc.set_threshold(700, 10, 10)
    make_live_cache(sim_cluster)
    assert gc.get_threshold()[0] == memory.GC_THRESHOLD0


def test_compact_copies_what_only_the_object_holds_and_keeps_what_it_shares():
    shared = trim.SharedTrees()
    pods = [trim.trim_pod(_pod(i)) for i in range(2)]
    spec = shared(dict(pods[0]["spec"]))
    pods[0] = {**pods[0], "spec": spec}
    copy = trim.compact(pods[0])
    assert copy == pods[0]
    assert copy["spec"] is spec  # held by the sharing table: stays shared
    assert copy["metadata"] is not pods[0]["metadata"]  # only this pod's: a new copy
    assert copy["metadata"]["uid"] is not pods[0]["metadata"]["uid"]
