"""The informers against the simulated cluster over real HTTP (no mocked client).

Timings come from tests/conftest.py fast_cache_options(): backoff 0.05-0.5 s, inactivity timeout
3 s. Waits are on conditions (cache.wait_for), never sleeps for state.
"""

from __future__ import annotations

import functools
import json
import threading
import urllib.request

import pytest

from dashboard.volcano import gang, pending, pods, queues

# -- helpers: talk to the simulated API server over HTTP ---------------------------------


def api(cluster, method, path, body=None, token=None):
    """One HTTP request to the simulated cluster; returns (status, decoded JSON)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(cluster.url + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token or cluster.admin_token}")
    if data is not None:
        req.add_header(
            "Content-Type", "application/merge-patch+json" if method == "PATCH" else "application/json"
        )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def stats(cluster):
    return api(cluster, "GET", "/_sim/stats")[1]


def faults(cluster, **switches):
    status, body = api(cluster, "POST", "/_sim/faults", switches)
    assert status == 200, body
    return body


JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"
QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups"


def job_body(name, queue="default"):
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "queue": queue,
            "tasks": [
                {
                    "name": "w",
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }


def pod_body(name, scheduler="volcano", annotations=None):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "env": [{"name": "SECRET", "value": "hunter2"}],
                    "resources": {"requests": {"cpu": "500m"}},
                }
            ],
        },
    }


def create_pods(cluster, names, **kw):
    for name in names:
        status, body = api(cluster, "POST", PODS, pod_body(name, **kw))
        assert status == 201, body


# -- tests -----------------------------------------------------------------------------


def test_initial_sync_states_and_bootstrap_queues(sim_cluster, live_cache):
    snap = live_cache.snapshot()
    for view in snap.views().values():
        assert view.state.name == "synced", view
        assert view.state.synced_at is not None
    assert {q["metadata"]["name"] for q in snap.queues.all()} >= {"root", "default"}
    assert [q["metadata"]["name"] for q in snap.child_queues("root")] == ["default"]


def test_create_change_delete_show_within_one_second(sim_cluster, live_cache):
    status, _ = api(sim_cluster, "POST", JOBS, job_body("j1"))
    assert status == 201
    job = live_cache.wait_for(lambda s: s.jobs.get("default", "j1"), timeout=1.0)
    v1 = live_cache.snapshot().jobs.object_version("default", "j1")
    assert job["spec"]["queue"] == "default"
    assert "managedFields" not in job["metadata"]

    status, _ = api(sim_cluster, "PATCH", JOBS + "/j1", {"metadata": {"labels": {"team": "a"}}})
    assert status == 200
    live_cache.wait_for(
        lambda s: (
            (s.jobs.get("default", "j1") or {}).get("metadata", {}).get("labels", {}).get("team") == "a"
        ),
        1.0,
    )
    assert live_cache.snapshot().jobs.object_version("default", "j1") > v1

    status, _ = api(sim_cluster, "DELETE", JOBS + "/j1")
    assert status == 200
    live_cache.wait_for(lambda s: s.jobs.get("default", "j1") is None, timeout=1.0)


def test_pods_are_trimmed_and_filtered(sim_cluster, live_cache):
    create_pods(sim_cluster, ["v-0"])
    create_pods(sim_cluster, ["other-0"], scheduler="default-scheduler")
    create_pods(
        sim_cluster,
        ["grouped-0"],
        scheduler="default-scheduler",
        annotations={"scheduling.k8s.io/group-name": "pg-x"},
    )
    snap = live_cache.wait_for(lambda s: len(s.pods) == 2 and s, timeout=2.0)
    assert snap.pods.get("default", "other-0") is None  # neither Volcano's nor in a PodGroup
    pod = snap.pods.get("default", "v-0")
    container = pod["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "500m"}}
    # Literal values never enter the cache; the entry stays visible with a marker.
    assert container["env"] == [{"name": "SECRET", "value": "(hidden by volcano-ui)"}]
    assert "hunter2" not in repr(pod)
    assert snap.pods.get("default", "grouped-0") is not None


def test_paginated_list_and_no_duplicates(sim_cluster, make_live_cache):
    create_pods(sim_cluster, [f"p-{i}" for i in range(250)])
    cache = make_live_cache(sim_cluster, page_size=100)
    (informer,) = [i for i in cache.informers if i.spec.name == "pods"]
    assert informer.counters["list_pages"] == 3
    assert len(cache.snapshot().pods) == 250


def test_gone_relists_removes_objects_deleted_meanwhile(sim_cluster, live_cache):
    create_pods(sim_cluster, [f"p-{i}" for i in range(10)])
    live_cache.wait_for(lambda s: len(s.pods) == 10, 2.0)
    (informer,) = [i for i in live_cache.informers if i.spec.name == "pods"]
    lists_before = informer.counters["lists"]
    # Cut every watch and keep the server silent for a moment, delete behind the cache's back,
    # compact the history: the reconnecting watch gets 410 and must re-list.
    faults(sim_cluster, unavailable_seconds=0.5)
    for i in range(5):
        sim_cluster.store.delete("pods", "default", f"p-{i}")
    sim_cluster.store.create("pods", pod_body("late-0"), "default")
    sim_cluster.store.compact()
    snap = live_cache.wait_for(
        lambda s: s.pods.get("default", "p-0") is None and s.pods.get("default", "late-0") and s, 10.0
    )
    assert informer.counters["lists"] > lists_before
    names = [p["metadata"]["name"] for p in snap.pods.all()]
    assert len(names) == len(set(names)) == 6
    assert sorted(names) == ["late-0"] + [f"p-{i}" for i in range(5, 10)]
    assert snap.pods.state.name == "synced"


def test_watch_410_error_event_triggers_relist(sim_cluster, live_cache):
    (informer,) = [i for i in live_cache.informers if i.spec.name == "jobs"]
    lists_before, gone_before = informer.counters["lists"], informer.counters["relists_410"]
    # While the watch is cut, another kind moves the (cluster-wide) resourceVersion and the history
    # is compacted: the re-watch from the jobs informer's version gets 200 + an ERROR event (410).
    faults(sim_cluster, unavailable_seconds=0.3)
    sim_cluster.store.create("queues", {"metadata": {"name": "moves-rv"}})
    sim_cluster.store.create("jobs", job_body("after-410"), "default")
    sim_cluster.store.compact()
    live_cache.wait_for(lambda s: s.jobs.get("default", "after-410"), 10.0)
    # The 410 was seen and answered by a re-list (a list that then fails on a slow machine is
    # retried, so more than one list may follow it).
    counters = dict(informer.counters)
    assert counters["relists_410"] >= gone_before + 1, counters
    assert counters["lists"] >= lists_before + 1, counters


def test_outage_marks_stale_then_recovers_without_restart(sim_cluster, live_cache):
    synced_at = live_cache.snapshot().jobs.state.synced_at
    faults(sim_cluster, unavailable_seconds=3)
    snap = live_cache.wait_for(lambda s: all(v.state.name == "stale" for v in s.views().values()) and s, 8.0)
    since = snap.jobs.state.since
    assert since is not None and since >= synced_at
    assert snap.jobs.state.last_error
    assert len(snap.queues) >= 2  # stale data is still there
    live_cache.wait_for(lambda s: all(v.state.name == "synced" for v in s.views().values()), 15.0)
    api(sim_cluster, "POST", JOBS, job_body("after-outage"))
    live_cache.wait_for(lambda s: s.jobs.get("default", "after-outage"), 1.0)


def test_failing_server_is_retried_with_backoff_not_a_hot_loop(sim_cluster, live_cache):
    api(sim_cluster, "POST", "/_sim/stats/reset")
    faults(sim_cluster, error_rate=1.0, drop_watches=True)
    live_cache.wait_for(lambda s: s.jobs.state.name == "stale", 5.0)
    # A fixed 2 s measurement window (not a wait for state): count the retries it contains.
    threading.Event().wait(2.0)
    faults(sim_cluster, error_rate=0.0)
    counted = stats(sim_cluster)["requests"]
    watches = {k: v for k, v in counted.items() if k.startswith("watch ")}
    # 0.05 s doubling to 0.5 s gives about 7 attempts in 2 s per kind; a hot loop would be thousands.
    assert watches and all(v <= 15 for v in watches.values()), watches
    live_cache.wait_for(lambda s: all(v.state.name == "synced" for v in s.views().values()), 10.0)


def test_dropped_watch_resumes_without_relisting(sim_cluster, live_cache):
    api(sim_cluster, "POST", "/_sim/stats/reset")
    faults(sim_cluster, drop_watches=True)
    api(sim_cluster, "POST", JOBS, job_body("after-drop"))
    live_cache.wait_for(lambda s: s.jobs.get("default", "after-drop"), 2.0)
    counted = stats(sim_cluster)["requests"]
    assert not any(k.startswith("list ") for k in counted), counted


@pytest.mark.parametrize("fault,state", [("forbidden", "forbidden"), ("not_installed", "not_installed")])
def test_one_kind_forbidden_or_not_installed_others_work(sim_cluster, make_live_cache, fault, state):
    faults(sim_cluster, **{fault: ["podgroups"]})
    cache = make_live_cache(sim_cluster, wait=False)
    snap = cache.wait_for(
        lambda s: (
            s.podgroups.state.name == state
            and all(v.state.name == "synced" for n, v in s.views().items() if n != "podgroups")
            and s
        ),
        10.0,
    )
    assert snap.podgroups.state.last_error or snap.podgroups.state.detail
    api(sim_cluster, "POST", JOBS, job_body("still-works"))
    cache.wait_for(lambda s: s.jobs.get("default", "still-works"), 1.0)
    # The fault is lifted: the kind recovers on its own.
    faults(sim_cluster, **{fault: []})
    cache.wait_for(lambda s: s.podgroups.state.name == "synced", 10.0)


def test_reads_make_no_api_calls(sim_cluster, live_cache):
    api(sim_cluster, "POST", JOBS, job_body("j"))
    create_pods(sim_cluster, ["p-0", "p-1"])
    live_cache.wait_for(lambda s: s.jobs.get("default", "j") and len(s.pods) == 2, 2.0)
    before = stats(sim_cluster)["requests"]
    errors = []

    def page_like_reads():
        try:
            for _ in range(5):
                snap = live_cache.snapshot()
                for job in snap.jobs.all():
                    pg = snap.podgroup_for_job(job)
                    gang.job_gang(job)
                    snap.pods_for_job(job)
                    snap.events_for(job)
                    qname = queues.queue_of(pg or job)
                    ctx = pending.PendingContext(job, pg, snap.queues.get(None, qname), qname)
                    pending.why_pending(ctx)
                    if pg:
                        snap.pods_for_podgroup(pg)
                for q in snap.queues.all():
                    queues.queue_ancestry(q, functools.partial(snap.queues.get, None))
                    snap.podgroups_in_queue(q["metadata"]["name"])
                for p in snap.pods.all():
                    pods.pod_display_status(p)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=page_like_reads) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    after = stats(sim_cluster)["requests"]
    assert after == before, {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k)}
    # Since the start: exactly one list and one watch per kind.
    for plural in ("jobs", "podgroups", "queues", "pods", "events"):
        assert after.get(f"list {plural}") == 1, after
        assert after.get(f"watch {plural}") == 1, after


def test_events_are_linked_to_their_objects(sim_cluster, live_cache):
    status, job = api(sim_cluster, "POST", JOBS, job_body("ev-job"))
    assert status == 201
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "ev-job.1"},
        "involvedObject": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "ev-job",
            "namespace": "default",
            "uid": job["metadata"]["uid"],
        },
        "reason": "PodGroupPending",
        "message": "PodGroup default:ev-job unschedulable",
        "type": "Warning",
        "count": 2,
        "firstTimestamp": "2026-11-29T10:00:00Z",
        "lastTimestamp": "2026-11-29T10:01:00Z",
    }
    status, body = api(sim_cluster, "POST", "/api/v1/namespaces/default/events", event)
    assert status == 201, body
    evs = live_cache.wait_for(lambda s: s.events_for(s.jobs.get("default", "ev-job") or {}), 1.0)
    assert evs[0]["reason"] == "PodGroupPending"


def test_selector_mode_watches_one_pod_stream_per_scheduler(sim_cluster, make_live_cache):
    create_pods(sim_cluster, ["a-0"], scheduler="volcano")
    create_pods(sim_cluster, ["b-0"], scheduler="kube-batch")
    create_pods(sim_cluster, ["c-0"], scheduler="default-scheduler")
    cache = make_live_cache(sim_cluster, pod_watch="selector", scheduler_names=("volcano", "kube-batch"))
    assert sorted(i.label for i in cache.informers if i.spec.name == "pods") == [
        "pods[kube-batch]",
        "pods[volcano]",
    ]
    snap = cache.snapshot()
    assert sorted(p["metadata"]["name"] for p in snap.pods.all()) == ["a-0", "b-0"]
    api(sim_cluster, "DELETE", PODS + "/b-0")
    cache.wait_for(lambda s: s.pods.get("default", "b-0") is None, 1.0)


def test_namespace_restricted_user_sees_forbidden_for_cluster_wide_lists(sim_cluster, make_live_cache):
    sim_cluster.add_user("alice", "alice-token", ["team-a"])
    cache = make_live_cache(sim_cluster, user="alice", wait=False)
    snap = cache.wait_for(lambda s: s.jobs.state.name == "forbidden" and s, 10.0)
    assert "403" in snap.jobs.state.last_error


def test_bookmarks_advance_the_resource_version_so_a_reconnect_needs_no_relist(sim_cluster, live_cache):
    (informer,) = [i for i in live_cache.informers if i.spec.name == "jobs"]
    status, _ = api(sim_cluster, "POST", QUEUES, {"metadata": {"name": "moves-the-version"}})
    assert status == 201
    target = int(sim_cluster.store.resource_version)
    # No Job changed, so only a BOOKMARK can carry the jobs watch to the newer version.
    live_cache.wait_for(lambda s: int(informer.resource_version or 0) >= target, 5.0)
    assert informer.counters["bookmarks"] >= 1
    lists = informer.counters["lists"]
    sim_cluster.store.compact()
    faults(sim_cluster, drop_watches=True)
    api(sim_cluster, "POST", JOBS, job_body("after-bookmark"))
    live_cache.wait_for(lambda s: s.jobs.get("default", "after-bookmark"), 2.0)
    assert informer.counters["lists"] == lists  # resumed from the bookmark's version: no 410


def test_expired_continue_token_falls_back_to_one_unpaginated_list(sim_cluster, make_live_cache):
    # A kind whose paginated list outlasts the server's retained history (README "Benchmarks":
    # 100,000 Events under churn): every continue token expires before it is used. Made
    # deterministic by compacting right after the sim serves any pods page that has a next page.
    create_pods(sim_cluster, [f"p-{i:03d}" for i in range(250)])
    store = sim_cluster.store
    served = store.list_page

    def list_page_then_compact(kind, *args, **kw):
        page = served(kind, *args, **kw)
        if page.continue_token and getattr(kind, "plural", kind) == "pods":
            # Move the resourceVersion with another kind (the pod set stays exact), then forget.
            store.create("queues", {"metadata": {"name": f"rv-{store.resource_version}"}})
            store.compact()
        return page

    store.list_page = list_page_then_compact
    api(sim_cluster, "POST", "/_sim/stats/reset")
    cache = make_live_cache(sim_cluster, wait=False, page_size=100)
    snap = cache.wait_for(lambda s: s.pods.state.name == "synced" and s, 10.0)
    (informer,) = [i for i in cache.informers if i.spec.name == "pods"]
    names = [p["metadata"]["name"] for p in snap.pods.all()]
    assert names == [f"p-{i:03d}" for i in range(250)]  # every pod, once, in order
    assert informer.counters["list_fallbacks"] == 1 and informer.paginate is False
    # First page, the continue that gets 410 Expired, one unpaginated list: bounded, no loop.
    assert stats(sim_cluster)["requests"]["list pods"] == 3
    # The watch started from the unpaginated list's resourceVersion: new pods arrive.
    create_pods(sim_cluster, ["after-0"])
    cache.wait_for(lambda s: s.pods.get("default", "after-0"), 5.0)
    assert stats(sim_cluster)["requests"]["list pods"] == 3


def test_outage_records_when_the_watch_last_kept_the_kind_current(sim_cluster, live_cache):
    from datetime import UTC, datetime

    synced_at = live_cache.snapshot().jobs.state.synced_at
    api(sim_cluster, "POST", JOBS, job_body("before-outage"))
    live_cache.wait_for(lambda s: s.jobs.get("default", "before-outage"), 5.0)
    applied_seen = datetime.now(UTC)  # the watch applied an event after the start-up list
    faults(sim_cluster, unavailable_seconds=3)
    snap = live_cache.wait_for(lambda s: s.jobs.state.name == "stale" and s, 8.0)
    state = snap.jobs.state
    assert state.synced_at == synced_at  # no new full list
    assert state.live_until is not None and state.live_until >= applied_seen > synced_at
    assert state.current_at == state.live_until
    live_cache.wait_for(lambda s: s.jobs.state.name == "synced", 15.0)
