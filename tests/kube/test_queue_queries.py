"""A queue's Jobs and PodGroups by name (Snapshot.jobs_in_queue / podgroups_in_queue): the sorted
bucket the snapshot remembers answers only while the cache publishes the very same objects."""

from __future__ import annotations

from dashboard.kube import ClusterCache
from dashboard.kube import snapshot as snapshot_module

N = snapshot_module.SORTED_BUCKET_MIN + 6  # above the size from which buckets are remembered


def _job(name: str, ns: str, rv: str = "1", queue: str = "q") -> dict:
    return {
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "uid": f"u-{ns}-{name}", "resourceVersion": rv},
        "spec": {"queue": queue},
    }


def _pg(name: str, ns: str, rv: str = "1", queue: str = "q") -> dict:
    return {
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns, "uid": f"pg-{ns}-{name}", "resourceVersion": rv},
        "spec": {"queue": queue},
    }


def _names(objs: list[dict]) -> list[tuple[str, str]]:
    return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]


def _filled() -> ClusterCache:
    cache = ClusterCache()
    # Inserted out of order, over two namespaces.
    for i in reversed(range(N)):
        cache.store("jobs").upsert(_job(f"j{i:03d}", "b" if i % 2 else "a"))
        cache.store("podgroups").upsert(_pg(f"g{i:03d}", "b" if i % 2 else "a"))
    cache.store("jobs").upsert(_job("other", "a", queue="elsewhere"))
    return cache


def test_a_queues_objects_are_in_namespace_and_name_order_and_a_changed_one_is_the_new_object():
    cache = _filled()
    first = cache.snapshot().jobs_in_queue("q")
    assert _names(first) == sorted(_names(first)) and len(first) == N
    again = cache.snapshot().jobs_in_queue("q")
    assert again == first and again is not first  # a new list each call: the caller's to change
    again.append({})
    assert len(cache.snapshot().jobs_in_queue("q")) == N

    changed = _job("j004", "a", rv="2")
    changed["metadata"]["labels"] = {"x": "y"}
    cache.store("jobs").upsert(changed)
    now = cache.snapshot().jobs_in_queue("q")
    assert [o for o in now if o["metadata"]["name"] == "j004"] == [changed]
    assert next(o for o in now if o["metadata"]["name"] == "j004") is changed


def test_an_object_that_leaves_or_joins_the_queue_or_is_deleted_is_seen():
    cache = _filled()
    assert len(cache.snapshot().podgroups_in_queue("q")) == N
    cache.store("podgroups").upsert(_pg("g001", "b", rv="2", queue="elsewhere"))
    cache.store("podgroups").delete(_pg("g002", "a"))
    cache.store("podgroups").upsert(_pg("g999", "a", rv="3"))
    names = _names(cache.snapshot().podgroups_in_queue("q"))
    assert ("b", "g001") not in names and ("a", "g002") not in names and ("a", "g999") in names
    assert names == sorted(names) and len(names) == N - 1
    assert _names(cache.snapshot().podgroups_in_queue("elsewhere")) == [("b", "g001")]


def test_two_viewers_with_different_namespaces_see_their_own_objects():
    cache = _filled()
    everyone = cache.snapshot().jobs_in_queue("q")
    only_a = cache.snapshot(namespaces=frozenset({"a"})).jobs_in_queue("q")
    only_b = cache.snapshot(namespaces=frozenset({"b"})).podgroups_in_queue("q")
    assert {ns for ns, _ in _names(only_a)} == {"a"} and {ns for ns, _ in _names(only_b)} == {"b"}
    assert _names(only_a) == [n for n in _names(everyone) if n[0] == "a"]
    assert len(cache.snapshot(namespaces=frozenset()).jobs_in_queue("q")) == 0
    assert cache.snapshot().jobs_in_queue("nobody") == []
