"""Unit tests of the in-memory store, snapshots and cross-link helpers (no cluster needed)."""

from __future__ import annotations

import threading

from dashboard.kube import ClusterCache

JOB_UID = "6f1c0d3e-1111-2222-3333-444455556666"


def job(name="tf", ns="default", uid=JOB_UID, rv="1", queue="default"):
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "uid": uid, "resourceVersion": rv},
        "spec": {"queue": queue, "tasks": [{"name": "w", "replicas": 2}]},
    }


def podgroup(name, ns="default", owner_uid=None, rv="1", queue="default"):
    meta = {"name": name, "namespace": ns, "uid": f"pg-{name}", "resourceVersion": rv}
    if owner_uid:
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "tf",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"queue": queue},
    }


def pod(name, group, job_name="tf", ns="default", rv="1"):
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "labels": {"volcano.sh/job-name": job_name},
            "annotations": {"scheduling.k8s.io/group-name": group},
        },
        "spec": {"schedulerName": "volcano"},
    }


def queue(name, parent=None, rv="1"):
    spec = {"parent": parent} if parent else {}
    return {"kind": "Queue", "metadata": {"name": name, "resourceVersion": rv}, "spec": spec}


def event(name, kind, obj_name, uid="", ns="default", last="2026-08-20T10:00:00Z"):
    return {
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": name},
        "involvedObject": {"kind": kind, "name": obj_name, "namespace": ns, "uid": uid},
        "reason": "R",
        "message": name,
        "type": "Warning",
        "lastTimestamp": last,
    }


def filled_cache():
    cache = ClusterCache()
    cache.store("jobs").upsert(job())
    cache.store("jobs").upsert(job("legacy", uid="aaaaaaaa-1111-2222-3333-444455556666"))
    cache.store("jobs").upsert(
        job("other", ns="team-b", uid="bbbbbbbb-1111-2222-3333-444455556666", queue="q1")
    )
    cache.store("podgroups").upsert(podgroup(f"tf-{JOB_UID}", owner_uid=JOB_UID))
    cache.store("podgroups").upsert(podgroup("legacy"))
    cache.store("pods").upsert(pod("tf-w-0", f"tf-{JOB_UID}"))
    cache.store("pods").upsert(pod("tf-w-1", f"tf-{JOB_UID}"))
    cache.store("pods").upsert(pod("x-0", "other", job_name="other", ns="team-b"))
    for q in (queue("root"), queue("default"), queue("q1", "eng"), queue("eng", "root")):
        cache.store("queues").upsert(q)
    return cache


def test_links_between_job_podgroup_pods_queue():
    snap = filled_cache().snapshot()
    j = snap.jobs.get("default", "tf")
    pg = snap.podgroup_for_job(j)
    assert pg["metadata"]["name"] == f"tf-{JOB_UID}"
    assert snap.job_for_podgroup(pg) is j
    assert [p["metadata"]["name"] for p in snap.pods_for_podgroup(pg)] == ["tf-w-0", "tf-w-1"]
    assert [p["metadata"]["name"] for p in snap.pods_for_job(j)] == ["tf-w-0", "tf-w-1"]
    assert snap.podgroup_for_pod(snap.pods.get("default", "tf-w-0")) is pg
    # legacy PodGroup named like the job, without ownerReference
    legacy = snap.jobs.get("default", "legacy")
    assert snap.podgroup_for_job(legacy)["metadata"]["name"] == "legacy"
    assert snap.job_for_podgroup(snap.podgroups.get("default", "legacy")) is legacy
    assert [q["metadata"]["name"] for q in snap.child_queues("root")] == ["default", "eng"]
    assert [q["metadata"]["name"] for q in snap.child_queues("eng")] == ["q1"]
    assert [j["metadata"]["name"] for j in snap.jobs_in_queue("default")] == ["legacy", "tf"]
    assert len(snap.podgroups_in_queue("default")) == 2
    assert snap.namespaces() == ["default", "team-b"]


def test_job_for_podgroup_by_name_and_uid_without_owner_reference():
    cache = filled_cache()
    cache.store("podgroups").upsert(podgroup(f"tf-{JOB_UID}", rv="2"))  # owner reference dropped
    snap = cache.snapshot()
    assert snap.job_for_podgroup(snap.podgroups.get("default", f"tf-{JOB_UID}"))["metadata"]["name"] == "tf"


def test_namespace_restriction_applies_to_every_namespaced_view():
    snap = filled_cache().snapshot(namespaces=frozenset({"team-b"}))
    assert snap.jobs.get("default", "tf") is None
    assert [j["metadata"]["name"] for j in snap.jobs.all()] == ["other"]
    assert len(snap.jobs) == 1 and len(snap.pods) == 1
    assert snap.pods.in_namespace("default") == []
    assert snap.jobs_in_queue("default") == []
    assert len(snap.queues) == 4  # cluster-scoped: not restricted
    assert snap.namespaces() == ["team-b"]
    assert snap.jobs.object_version("default", "tf") is None


def test_snapshot_is_isolated_from_later_writes_and_cheap_when_unchanged():
    cache = filled_cache()
    before = cache.snapshot()
    assert cache.snapshot().jobs._data is before.jobs._data  # unchanged: same published view
    assert before.pods.version  # taken now: the writes below come after
    cache.store("jobs").upsert(job("new", uid="cccccccc-1111-2222-3333-444455556666"))
    cache.store("pods").delete(("default", "tf-w-0"))
    after = cache.snapshot()
    assert before.jobs.get("default", "new") is None and after.jobs.get("default", "new") is not None
    assert len(before.pods_for_job(before.jobs.get("default", "tf"))) == 2
    assert len(after.pods_for_job(after.jobs.get("default", "tf"))) == 1
    assert after.jobs.version > before.jobs.version


def test_a_snapshot_takes_a_kind_when_it_first_reads_it():
    cache = filled_cache()
    pods = cache.store("pods")
    snap = cache.snapshot()
    assert snap.jobs.get("default", "tf") is not None
    copies = pods.copies
    pods.upsert(pod("tf-w-2", f"tf-{JOB_UID}"))
    # The pods were not read: their store was not published for this snapshot, so the write
    # copied nothing; the first read takes the pods as they are then.
    assert pods.copies == copies
    assert len(snap.pods_for_job(snap.jobs.get("default", "tf"))) == 3
    pods.upsert(pod("tf-w-3", f"tf-{JOB_UID}"))
    assert pods.copies == copies + 1
    assert len(snap.pods_for_job(snap.jobs.get("default", "tf"))) == 3
    assert snap.views()["pods"] is snap.pods


def test_threads_sharing_a_snapshot_share_the_view_it_took():
    cache = filled_cache()
    snap = cache.snapshot()
    seen = []
    barrier = threading.Barrier(8)

    def read():
        barrier.wait()
        seen.append(snap.pods)
        cache.store("pods").upsert(pod(f"p-{threading.get_ident()}", "g"))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(view is snap.pods for view in seen)


def test_change_counters_per_object_and_collection():
    cache = filled_cache()
    s1 = cache.snapshot()
    v_tf, v_legacy = s1.jobs.object_version("default", "tf"), s1.jobs.object_version("default", "legacy")
    # same resourceVersion again (e.g. a re-list): no change
    cache.store("jobs").upsert(job())
    assert cache.snapshot().jobs.version == s1.jobs.version
    cache.store("jobs").upsert(job(rv="2"))
    s2 = cache.snapshot()
    assert s2.jobs.object_version("default", "tf") > v_tf
    assert s2.jobs.object_version("default", "legacy") == v_legacy
    assert s2.jobs.version > s1.jobs.version


def test_replace_diffs_vanished_objects_without_duplicates():
    cache = filled_cache()
    store = cache.store("pods")
    v = {k: cache.snapshot().pods.object_version(*k) for k in [("default", "tf-w-1")]}
    up, removed = store.replace([pod("tf-w-1", f"tf-{JOB_UID}"), pod("tf-w-2", f"tf-{JOB_UID}")])
    snap = cache.snapshot()
    assert (up, removed) == (1, 2)
    assert sorted(p["metadata"]["name"] for p in snap.pods.all()) == ["tf-w-1", "tf-w-2"]
    assert snap.pods.object_version("default", "tf-w-1") == v[("default", "tf-w-1")]
    assert len(snap.pods.lookup("group", ("default", f"tf-{JOB_UID}"))) == 2


def test_events_for_object_newest_first_and_capped():
    cache = ClusterCache()
    events = cache.store("events")
    events.per_object, events.total = 3, 5
    for i in range(5):
        events.upsert(event(f"e{i}", "Job", "tf", uid=JOB_UID, last=f"2026-08-20T10:0{i}:00Z"))
    snap = cache.snapshot()
    j = job()
    assert [e["metadata"]["name"] for e in snap.events_for(j)] == ["e4", "e3", "e2"]
    for i in range(4):
        events.upsert(event(f"q{i}", "Queue", "default", ns=""))
    assert len(cache.snapshot().events) == 5
    assert events.dropped == 2 + 2


def test_events_for_falls_back_to_kind_namespace_name_but_skips_other_uids():
    cache = ClusterCache()
    cache.store("events").upsert(event("a", "Job", "tf"))  # no uid in involvedObject
    cache.store("events").upsert(event("b", "Job", "tf", uid="someone-else"))
    names = [e["metadata"]["name"] for e in cache.snapshot().events_for(job())]
    assert names == ["a"]


def test_wait_for_wakes_on_change():
    cache = ClusterCache()
    t = threading.Timer(0.05, lambda: cache.store("jobs").upsert(job()))
    t.start()
    got = cache.wait_for(lambda s: s.jobs.get("default", "tf"), timeout=5)
    assert got["metadata"]["name"] == "tf"


def test_state_transitions_keep_since_while_state_unchanged():
    cache = ClusterCache()
    store = cache.store("jobs")
    store.set_state("synced")
    synced_at = store.state.synced_at
    store.set_state("stale", error="boom")
    since = store.state.since
    store.set_state("stale", error="boom again")
    assert store.state.since == since and store.state.last_error == "boom again"
    assert store.state.synced_at == synced_at
    assert cache.snapshot().jobs.state.name == "stale"


def _order(objs):
    return [(o["metadata"].get("namespace") or "", o["metadata"]["name"]) for o in objs]


def test_all_stays_sorted_incrementally_and_values_has_the_same_content():
    import random

    rng = random.Random(7)
    cache = ClusterCache()
    store = cache.store("pods")
    live: dict[tuple[str, str], dict] = {}
    snapshots = []
    for step in range(600):
        ns, name = rng.choice(["a", "b", "team-z"]), f"p-{rng.randrange(120)}"
        roll = rng.random()
        if roll < 0.6:
            obj = pod(name, "g", ns=ns, rv=str(step))
            store.upsert(obj)
            live[(ns, name)] = obj
        elif roll < 0.97:
            store.delete((ns, name))
            live.pop((ns, name), None)
        else:  # a re-list: keep a random half, add a few new ones
            kept = [o for k, o in sorted(live.items()) if rng.random() < 0.5]
            added = [pod(f"n-{step}-{i}", "g", ns=rng.choice(["a", "c"])) for i in range(3)]
            store.replace(kept + added)
            live = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in kept + added}
        if step % 50 == 0:
            snapshots.append((cache.snapshot().pods, sorted(live)))  # the pods view taken now
        view = cache.snapshot().pods
        assert _order(view.all()) == sorted(live)  # all(): (namespace, name) order, each once
        assert sorted(_order(view.values())) == sorted(live)  # values(): same content
    # Earlier snapshots keep their own order and content although the store changed since.
    for pods, keys in snapshots:
        assert _order(pods.all()) == keys
    restricted = cache.snapshot(frozenset({"a"})).pods
    assert _order(restricted.all()) == [k for k in sorted(live) if k[0] == "a"]
    assert sorted(_order(restricted.values())) == [k for k in sorted(live) if k[0] == "a"]


def test_cluster_scoped_and_event_store_keep_sorted_order():
    cache = ClusterCache()
    for name in ("root", "zeta", "alpha", "mid"):
        cache.store("queues").upsert(queue(name))
    cache.store("queues").delete((None, "zeta"))
    assert [q["metadata"]["name"] for q in cache.snapshot().queues.all()] == ["alpha", "mid", "root"]
    events = cache.store("events")
    events.per_object = 2  # the cap drops the oldest events of one object: order must follow
    for i, last in enumerate(["2026-08-20T10:00:03Z", "2026-08-20T10:00:01Z", "2026-08-20T10:00:02Z"]):
        events.upsert(event(f"e-{i}", "Job", "tf", last=last))
    newer = event("e-0", "Job", "tf", last="2026-08-20T10:00:04Z")
    newer["metadata"]["resourceVersion"] = "e-0b"  # e-0 seen again: re-inserted, e-1 dropped
    events.upsert(newer)
    view = cache.snapshot().events
    names = [e["metadata"]["name"] for e in view.all()]
    assert names == sorted(names) == sorted(e["metadata"]["name"] for e in view.values())
    assert names == ["e-0", "e-2"]


def test_index_buckets_grow_and_shrink_past_the_small_size_keeping_order_and_published_views():
    from dashboard.kube.store import SMALL_BUCKET

    cache = ClusterCache()
    store = cache.store("pods")
    names = [f"p{i:02d}" for i in range(SMALL_BUCKET + 3)]
    views = []
    for n in names:
        store.upsert(pod(n, group="g"))
        views.append(cache.snapshot().pods)  # the pods view taken now
    for i, pods in enumerate(views):  # every published view keeps the pods it had
        assert [p["metadata"]["name"] for p in pods.lookup("group", ("default", "g"))] == names[: i + 1]
    full = cache.snapshot().pods
    for n in names[:-1]:
        store.delete(("default", n))
    left = cache.snapshot().pods.lookup("group", ("default", "g"))
    assert [p["metadata"]["name"] for p in left] == names[-1:]
    assert len(full.lookup("group", ("default", "g"))) == len(names)
    store.delete(("default", names[-1]))
    assert cache.snapshot().pods.lookup("group", ("default", "g")) == []
    assert cache.snapshot().pods.count_by("group") == {}
    assert full.count_by("group") == {("default", "g"): len(names)}


def test_a_reader_takes_the_last_view_rather_than_wait_for_a_write_in_progress():
    from dashboard.kube.kinds import PODS
    from dashboard.kube.store import KindStore

    store = KindStore(PODS, publish_interval=1e-9)  # a publication is due at every read
    store.upsert(pod("a", "g"))
    first = store.data()
    store.upsert(pod("b", "g"))
    with store._lock:  # a write in progress
        assert store.data() is first
    assert {k[1] for k in store.data().objects} == {"a", "b"}
    # Without a publish interval (in-memory caches) every read sees every write: it waits.
    eager = KindStore(PODS)
    eager.upsert(pod("a", "g"))
    eager.data()
    eager.upsert(pod("b", "g"))
    done = threading.Event()
    with eager._lock:
        reader = threading.Thread(target=lambda: (eager.data(), done.set()))
        reader.start()
        assert not done.wait(0.05)
    reader.join(5)
    assert done.is_set() and {k[1] for k in eager.data().objects} == {"a", "b"}


def test_big_index_buckets_copy_a_chunk_or_two_and_keep_the_order_of_last_writes():
    from dashboard.kube.cowmap import SET_CHUNK, ChunkedSetView

    cache = ClusterCache()
    store = cache.store("jobs")
    names = [f"j{i:05d}" for i in range(10 * SET_CHUNK)]
    views = []
    for i, n in enumerate(names):
        store.upsert(job(n, uid=f"u{i}", queue="big"))
        if i % 97 == 0:
            views.append((cache.snapshot().jobs, names[: i + 1]))  # the Jobs view taken now
    assert isinstance(store.data().indexes["queue"]["big"], ChunkedSetView)
    before = store.copied_buckets()
    store.upsert(job(names[3], uid="u3", rv="2", queue="big"))  # written last: now last in its buckets
    # Its namespace, queue and phase buckets: a chunk or two each, not 1,280 keys each.
    assert 0 < store.copied_buckets() - before <= 3 * 2 * SET_CHUNK
    order = [*names[:3], *names[4:], names[3]]
    snap = cache.snapshot()
    assert [j["metadata"]["name"] for j in snap.jobs.lookup("queue", "big")] == order
    assert [j["metadata"]["name"] for j in snap.jobs.in_namespace("default")] == names
    assert snap.jobs_in_queue("big")[3]["metadata"]["resourceVersion"] == "2"
    for earlier, then in views:  # every published view keeps its Jobs, in their order
        assert [j["metadata"]["name"] for j in earlier.lookup("queue", "big")] == then
        assert earlier.count_by("queue") == {"big": len(then)}
        assert {j["metadata"]["resourceVersion"] for j in earlier.lookup_sorted("queue", "big")} == {"1"}
    full = cache.snapshot()
    full_jobs = full.jobs  # taken now
    for n in names[: -SET_CHUNK - 1]:
        store.delete(("default", n))
    assert type(store.data().indexes["queue"]["big"]) is ChunkedSetView  # two chunks left
    store.delete(("default", names[-SET_CHUNK - 1]))
    assert type(store.data().indexes["queue"]["big"]) is dict  # one chunk: a dict again
    for n in names[-SET_CHUNK:-1]:
        store.delete(("default", n))
    left = cache.snapshot()
    assert [j["metadata"]["name"] for j in left.jobs.lookup("queue", "big")] == [names[-1]]
    assert full_jobs.count_by("queue") == {"big": len(names)} and len(full.jobs_in_queue("big")) == len(names)
    store.delete(("default", names[-1]))
    assert cache.snapshot().jobs.count_by("queue") == {} and not store.data().indexes["queue"]
