"""The REST protocol through the official kubernetes client (CustomObjectsApi, CoreV1Api,
watch.Watch) over real HTTPS against a fresh simulated cluster."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

G_BATCH, V_BATCH = "batch.volcano.sh", "v1alpha1"
G_SCHED, V_SCHED = "scheduling.volcano.sh", "v1beta1"


def vcjob(name, ns="default", **meta):
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, **meta},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "tasks": [
                {
                    "name": "t",
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }


def owner_ref(obj):
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def status_of(exc: ApiException) -> dict:
    body = json.loads(exc.body)
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["code"] == exc.status
    return body


def test_create_get_list_paginated(custom, cluster):
    for i in range(25):
        custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob(f"job-{i:02d}"))
    got = custom.get_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", "job-07")
    assert got["spec"]["queue"] == "default" and got["spec"]["maxRetry"] == 3
    names, token, pages, rvs = [], None, 0, set()
    while True:
        kwargs = {"limit": 10}
        if token:
            kwargs["_continue"] = token
        page = custom.list_cluster_custom_object(G_BATCH, V_BATCH, "jobs", **kwargs)
        pages += 1
        names += [i["metadata"]["name"] for i in page["items"]]
        rvs.add(page["metadata"]["resourceVersion"])
        token = page["metadata"].get("continue")
        if not token:
            break
    assert pages == 3 and names == [f"job-{i:02d}" for i in range(25)] and len(rvs) == 1
    assert page["kind"] == "JobList" and page["apiVersion"] == "batch.volcano.sh/v1alpha1"


def test_generate_name_and_errors_as_status(custom):
    created = custom.create_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", {**vcjob(""), "metadata": {"generateName": "gen-"}}
    )
    assert created["metadata"]["name"].startswith("gen-")
    with pytest.raises(ApiException) as err:
        custom.get_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", "missing")
    body = status_of(err.value)
    assert (err.value.status, body["reason"]) == (404, "NotFound")
    assert body["details"] == {"name": "missing", "group": "batch.volcano.sh", "kind": "jobs"}
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob("Bad_Name"))
    assert (err.value.status, status_of(err.value)["reason"]) == (422, "Invalid")
    custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob("dup"))
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob("dup"))
    assert (err.value.status, status_of(err.value)["reason"]) == (409, "AlreadyExists")
    stale = custom.get_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", "dup")
    custom.patch_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", "dup", {"spec": {"minAvailable": 1}}
    )
    custom.patch_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", "dup", {"metadata": {"labels": {"x": "1"}}}
    )
    with pytest.raises(ApiException) as err:
        custom.replace_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", "dup", stale)
    assert (err.value.status, status_of(err.value)["reason"]) == (409, "Conflict")
    with pytest.raises(ApiException) as err:
        custom.list_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", label_selector="a in (b")
    assert (err.value.status, status_of(err.value)["reason"]) == (400, "BadRequest")


def test_podgroup_status_subresource_is_404_but_queue_status_works(custom):
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "default"},
        "spec": {"minMember": 2},
    }
    custom.create_namespaced_custom_object(G_SCHED, V_SCHED, "default", "podgroups", pg)
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object_status(
            G_SCHED, V_SCHED, "default", "podgroups", "pg1", {"status": {"phase": "Running"}}
        )
    assert err.value.status == 404
    q = custom.patch_cluster_custom_object_status(
        G_SCHED, V_SCHED, "queues", "default", {"status": {"state": "Closed"}}
    )
    assert q["status"]["state"] == "Closed"
    q = custom.get_cluster_custom_object(G_SCHED, V_SCHED, "queues", "default")
    assert q["status"]["state"] == "Closed" and q["spec"]["weight"] == 1


def test_merge_and_json_patch(custom):
    custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob("p"))
    out = custom.patch_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", "p", {"metadata": {"labels": {"team": "a"}}}
    )
    assert out["metadata"]["labels"] == {"team": "a"} and out["metadata"]["generation"] == 1
    out = custom.patch_namespaced_custom_object(
        G_BATCH,
        V_BATCH,
        "default",
        "jobs",
        "p",
        [
            {"op": "replace", "path": "/spec/tasks/0/replicas", "value": 3},
        ],
        _content_type="application/json-patch+json",
    )
    assert out["spec"]["tasks"][0]["replicas"] == 3 and out["metadata"]["generation"] == 2
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object(
            G_BATCH,
            V_BATCH,
            "default",
            "jobs",
            "p",
            [{"op": "test", "path": "/spec/minAvailable", "value": 99}],
            _content_type="application/json-patch+json",
        )
    assert (err.value.status, status_of(err.value)["reason"]) == (422, "Invalid")


def test_delete_cascades_job_podgroup_pods(custom, core):
    job = custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob("cj"))
    pg = custom.create_namespaced_custom_object(
        G_SCHED,
        V_SCHED,
        "default",
        "podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "name": f"cj-{job['metadata']['uid']}",
                "namespace": "default",
                "ownerReferences": [owner_ref(job)],
            },
            "spec": {"minMember": 1},
        },
    )
    for i in range(3):
        core.create_namespaced_pod(
            "default",
            {
                "metadata": {
                    "name": f"cj-t-{i}",
                    "ownerReferences": [owner_ref(job)],
                    "annotations": {"scheduling.k8s.io/group-name": pg["metadata"]["name"]},
                },
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        )
    core.create_namespaced_pod(
        "default",
        {"metadata": {"name": "unrelated"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    )
    custom.delete_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", "cj", propagation_policy="Foreground"
    )
    assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["unrelated"]
    assert custom.list_namespaced_custom_object(G_SCHED, V_SCHED, "default", "podgroups")["items"] == []


def test_delete_queue_and_pod_and_orphan(custom, core):
    q = custom.create_cluster_custom_object(
        G_SCHED,
        V_SCHED,
        "queues",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "q1"},
            "spec": {"weight": 2},
        },
    )
    cm_owner = core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "owned-by-queue", "ownerReferences": [owner_ref(q)]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    assert cm_owner.metadata.owner_references[0].uid == q["metadata"]["uid"]
    custom.delete_cluster_custom_object(G_SCHED, V_SCHED, "queues", "q1", propagation_policy="Orphan")
    kept = core.read_namespaced_pod("owned-by-queue", "default")
    assert kept.metadata.owner_references is None
    core.delete_namespaced_pod("owned-by-queue", "default")
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("owned-by-queue", "default")
    assert err.value.status == 404


def test_selectors_over_http(core):
    for name, labels, node in (("a", {"app": "x"}, "n1"), ("b", {"app": "y"}, "n2"), ("c", {}, "n1")):
        core.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "nodeName": node,
                    "schedulerName": "volcano",
                    "containers": [{"name": "c", "image": "i"}],
                },
            },
        )
    names = lambda **kw: [p.metadata.name for p in core.list_pod_for_all_namespaces(**kw).items]  # noqa: E731
    assert names(label_selector="app in (x,y)") == ["a", "b"]
    assert names(label_selector="!app") == ["c"]
    assert names(field_selector="spec.nodeName=n1") == ["a", "c"]
    assert names(field_selector="spec.schedulerName=volcano,status.phase=Pending,metadata.name!=a") == [
        "b",
        "c",
    ]
    core.create_namespaced_event(
        "default",
        {
            "metadata": {"name": "ev1"},
            "involvedObject": {"kind": "Job", "name": "j", "namespace": "default", "uid": "u1"},
            "reason": "PodGroupPending",
            "type": "Warning",
            "message": "m",
        },
    )
    evs = core.list_namespaced_event(
        "default",
        field_selector="involvedObject.kind=Job,involvedObject.uid=u1,type=Warning,reason=PodGroupPending",
    )
    assert [e.metadata.name for e in evs.items] == ["ev1"]


def test_watch_events_bookmarks_and_selector(custom, cluster):
    custom.create_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", vcjob("w0", labels={"w": "1"})
    )
    listed = custom.list_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", label_selector="w=1")
    rv = listed["metadata"]["resourceVersion"]
    custom.create_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", vcjob("w1", labels={"w": "1"})
    )
    custom.create_namespaced_custom_object(G_BATCH, V_BATCH, "default", "jobs", vcjob("other"))
    custom.patch_namespaced_custom_object(
        G_BATCH, V_BATCH, "default", "jobs", "w0", {"metadata": {"labels": {"w": "2"}}}
    )
    w = watch.Watch()
    seen = []
    for ev in w.stream(
        custom.list_namespaced_custom_object,
        G_BATCH,
        V_BATCH,
        "default",
        "jobs",
        label_selector="w=1",
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=5,
    ):
        obj = ev["object"]
        seen.append((ev["type"], obj["metadata"].get("name")))
        if ev["type"] == "BOOKMARK":
            assert set(obj["metadata"]) == {"resourceVersion"}
            assert int(obj["metadata"]["resourceVersion"]) >= cluster.store.resource_version
            w.stop()
    assert seen == [("ADDED", "w1"), ("DELETED", "w0"), ("BOOKMARK", None)]


def test_watch_without_resource_version_starts_with_synthetic_added(core):
    core.create_namespaced_pod(
        "default", {"metadata": {"name": "s"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    )
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", timeout_seconds=5):
        assert (ev["type"], ev["object"].metadata.name) == ("ADDED", "s")
        w.stop()


def test_watch_410_after_compaction(custom, cluster):
    listed = custom.list_cluster_custom_object(G_SCHED, V_SCHED, "queues")
    custom.patch_cluster_custom_object(G_SCHED, V_SCHED, "queues", "default", {"spec": {"weight": 3}})
    cluster.store.compact()
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(
            custom.list_cluster_custom_object,
            G_SCHED,
            V_SCHED,
            "queues",
            resource_version=listed["metadata"]["resourceVersion"],
            timeout_seconds=5,
        ):
            pass
    assert err.value.status == 410 and "Expired" in err.value.reason


def test_watch_timeout_ends_stream(core):
    # From the list's resourceVersion nothing happens before the timeout: the stream ends empty.
    # (A resourceVersion the server has not reached gets 504 "Too large":
    # tests/sim/test_resource_versions.py.)
    current = core.list_namespace().metadata.resource_version
    events = list(watch.Watch().stream(core.list_namespace, resource_version=current, timeout_seconds=1))
    assert events == []


def test_plain_http_endpoint_accepts_tokens(cluster):
    cfg = client.Configuration(host=cluster.url)
    cfg.api_key = {"authorization": "Bearer " + cluster.admin_token}
    with client.ApiClient(cfg) as api:
        names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
