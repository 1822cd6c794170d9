"""Discovery, Tables, the /_sim/ admin API and the fault switches, over HTTP."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException

from dashboard.sim.cluster import SimulatedCluster

from .test_auth import raw


def admin(cluster, method, path, body=None):
    return raw(cluster, method, path, cluster.admin_token, body)


def test_discovery_documents(cluster):
    code, version = admin(cluster, "GET", "/version")
    assert code == 200 and version["major"] == "1"
    assert admin(cluster, "GET", "/api")[1]["versions"] == ["v1"]
    groups = {g["name"]: g for g in admin(cluster, "GET", "/apis")[1]["groups"]}
    assert groups["scheduling.volcano.sh"]["preferredVersion"]["version"] == "v1beta1"
    assert "scheduling.volcano.sh/v1alpha1" not in json.dumps(groups)  # REFERENCE §0
    res = {r["name"]: r for r in admin(cluster, "GET", "/apis/scheduling.volcano.sh/v1beta1")[1]["resources"]}
    assert res["queues"]["namespaced"] is False and res["queues"]["shortNames"] == ["q", "queue-v1beta1"]
    assert res["podgroups"]["shortNames"] == ["pg", "podgroup-v1beta1"] and "podgroups/status" not in res
    assert "queues/status" in res and res["queues"]["singularName"] == "queue"
    assert "watch" in res["queues"]["verbs"] and "deletecollection" in res["queues"]["verbs"]
    jobs = {r["name"]: r for r in admin(cluster, "GET", "/apis/batch.volcano.sh/v1alpha1")[1]["resources"]}
    assert jobs["jobs"]["shortNames"] == ["vcjob", "vj"] and jobs["jobs"]["kind"] == "Job"
    core = {r["name"]: r for r in admin(cluster, "GET", "/api/v1")[1]["resources"]}
    assert core["pods"]["categories"] == ["all"] and core["namespaces"]["namespaced"] is False
    reviews = admin(cluster, "GET", "/apis/authorization.k8s.io/v1")[1]["resources"]
    assert {r["name"]: r["verbs"] for r in reviews}["subjectaccessreviews"] == ["create"]
    assert admin(cluster, "GET", "/apis/scheduling.volcano.sh/v1alpha1")[0] == 404
    assert admin(cluster, "GET", "/openapi/v2")[0] == 404
    index = admin(cluster, "GET", "/openapi/v3")[1]
    assert "apis/batch.volcano.sh/v1alpha1" in index["paths"]


def test_unknown_paths_and_methods(cluster):
    assert admin(cluster, "GET", "/apis/batch.volcano.sh/v1alpha1/nothings")[0] == 404
    assert (
        admin(cluster, "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/x/status")[0]
        == 404
    )
    assert admin(cluster, "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/queues")[0] == 404
    code, body = admin(cluster, "PUT", "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs", {})
    assert (code, body["reason"]) == (405, "MethodNotAllowed")


def table_request(cluster, path):
    req = urllib.request.Request(
        cluster.url + path,
        headers={
            "Authorization": f"Bearer {cluster.admin_token}",
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        },
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers["Content-Type"], json.loads(resp.read())


def test_tables_use_printer_columns(cluster):
    cluster.store.create("jobs", {"metadata": {"name": "j", "namespace": "default"}, "spec": {"tasks": []}})
    cluster.store.mutate(
        "jobs",
        "default",
        "j",
        lambda o: o.update(status={"state": {"phase": "Running"}, "minAvailable": 2, "running": 2}),
    )
    cluster.advance(125)
    ctype, table = table_request(cluster, "/apis/batch.volcano.sh/v1alpha1/jobs")
    assert ctype.startswith("application/json;as=Table")
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "STATUS",
        "minAvailable",
        "RUNNINGS",
        "AGE",
        "QUEUE",
    ]
    assert table["rows"][0]["cells"] == ["j", "Running", 2, 2, "2m5s", "default"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    _, table = table_request(cluster, "/apis/scheduling.volcano.sh/v1beta1/queues/default")
    assert table["rows"][0]["cells"] == ["default", "root"]


def test_stats_count_requests_and_open_watches(cluster, custom):
    admin(cluster, "POST", "/_sim/stats/reset")
    custom.list_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "default", "jobs")
    custom.get_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues", "default")
    stream = watch.Watch().stream(
        custom.list_cluster_custom_object, "scheduling.volcano.sh", "v1beta1", "queues", timeout_seconds=5
    )
    next(stream)  # the watch is open now
    stats = admin(cluster, "GET", "/_sim/stats")[1]
    assert stats["requests"]["list jobs"] == 1 and stats["requests"]["get queues"] == 1
    assert stats["requests"]["watch queues"] == 1 and stats["watches"] == {"queues": 1}
    stream.close()
    admin(cluster, "POST", "/_sim/stats/reset")
    assert admin(cluster, "GET", "/_sim/stats")[1]["requests"] == {}


def test_advance_and_clock(cluster):
    assert admin(cluster, "GET", "/_sim/clock")[1]["now"] == "2026-11-29T10:00:00Z"
    code, body = admin(cluster, "POST", "/_sim/advance", {"seconds": 90})
    assert code == 200 and body["now"] == "2026-11-29T10:01:30Z"
    assert admin(cluster, "POST", "/_sim/advance", {"seconds": -1})[0] == 400
    assert admin(cluster, "POST", "/_sim/nothing")[0] == 404


def test_fault_not_installed_and_forbidden(cluster, custom):
    body = admin(cluster, "POST", "/_sim/faults", {"not_installed": ["podgroups"], "forbidden": ["q"]})[1]
    assert body["not_installed"] == ["podgroups.scheduling.volcano.sh"]
    res = [r["name"] for r in admin(cluster, "GET", "/apis/scheduling.volcano.sh/v1beta1")[1]["resources"]]
    assert "podgroups" not in res and "queues" in res
    with pytest.raises(ApiException) as err:
        custom.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "podgroups")
    assert err.value.status == 404
    with pytest.raises(ApiException) as err:
        custom.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")
    assert err.value.status == 403 and json.loads(err.value.body)["reason"] == "Forbidden"
    admin(cluster, "POST", "/_sim/faults", {"not_installed": ["podgroups", "queues"]})
    assert "scheduling.volcano.sh" not in json.dumps(admin(cluster, "GET", "/apis")[1])
    admin(cluster, "POST", "/_sim/faults", {"reset": True})
    assert len(custom.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")["items"]) == 2
    assert admin(cluster, "POST", "/_sim/faults", {"bogus": 1})[0] == 400


def test_fault_error_rate_is_deterministic():
    def run():
        with SimulatedCluster(seed=5, controllers=False) as c:
            admin(c, "POST", "/_sim/faults", {"error_rate": 0.5})
            codes = [raw(c, "GET", "/api/v1/namespaces", c.admin_token)[0] for _ in range(20)]
            assert admin(c, "GET", "/api")[0] == 200  # discovery is never failed
        return codes

    first = run()
    assert set(first) == {200, 500} and first == run()


def test_fault_latency(cluster):
    admin(cluster, "POST", "/_sim/faults", {"latency_ms": 150})
    t0 = time.monotonic()
    assert admin(cluster, "GET", "/api/v1/namespaces")[0] == 200
    assert time.monotonic() - t0 >= 0.15


def test_fault_drop_watches_ends_streams(cluster, core):
    ended = threading.Event()

    def consume():
        for _ in watch.Watch().stream(core.list_namespace, timeout_seconds=30):
            pass
        ended.set()

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while not admin(cluster, "GET", "/_sim/stats")[1]["watches"] and time.monotonic() < deadline:
        time.sleep(0.01)
    admin(cluster, "POST", "/_sim/faults", {"drop_watches": True})
    assert ended.wait(20)


def test_fault_compact_gives_410(cluster, custom):
    rv = custom.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")["metadata"][
        "resourceVersion"
    ]
    custom.patch_cluster_custom_object(
        "scheduling.volcano.sh", "v1beta1", "queues", "root", {"spec": {"weight": 2}}
    )
    admin(cluster, "POST", "/_sim/faults", {"compact": True})
    with pytest.raises(ApiException) as err:
        list(
            watch.Watch().stream(
                custom.list_cluster_custom_object,
                "scheduling.volcano.sh",
                "v1beta1",
                "queues",
                resource_version=rv,
                timeout_seconds=2,
            )
        )
    assert err.value.status == 410


def test_fault_unavailable_holds_then_drops_connections(cluster):
    admin(cluster, "POST", "/_sim/faults", {"unavailable_seconds": 60})
    host, port = cluster.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(
            f"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {cluster.admin_token}"
            "\r\n\r\n".encode()
        )
        deadline = time.monotonic() + 10  # wait (without sleeping for state) until the server holds it
        while admin(cluster, "GET", "/_sim/faults")[1]["held_requests"] != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert admin(cluster, "GET", "/_sim/faults")[1]["held_requests"] == 1
        admin(cluster, "POST", "/_sim/faults", {"unavailable_seconds": 0})  # the outage ends
        assert s.recv(1024) == b""  # the held request was closed without an answer
    assert admin(cluster, "GET", "/api/v1/namespaces")[0] == 200  # alive again


def test_unavailable_can_be_ended_early(cluster):
    admin(cluster, "POST", "/_sim/faults", {"unavailable_seconds": 60})
    assert admin(cluster, "GET", "/_sim/faults")[1]["unavailable_seconds"] > 50
    admin(cluster, "POST", "/_sim/faults", {"unavailable_seconds": 0})
    assert admin(cluster, "GET", "/api/v1/namespaces")[0] == 200


def test_stop_is_clean_with_open_watch(core):
    c = SimulatedCluster(controllers=False)
    c.start()
    req = urllib.request.Request(
        c.url + "/api/v1/pods?watch=1", headers={"Authorization": f"Bearer {c.admin_token}"}
    )
    resp = urllib.request.urlopen(req, timeout=5)
    t0 = time.monotonic()
    c.stop()
    assert time.monotonic() - t0 < 10  # generous: a hang would be the bug, not a slow machine
    with contextlib.suppress(urllib.error.URLError, ConnectionError, OSError):
        assert resp.read() == b""
    with pytest.raises(OSError):
        urllib.request.urlopen(c.url + "/version", timeout=2)


def request(cluster, method, path, body: bytes | None = None, content_type="application/json"):
    req = urllib.request.Request(
        cluster.url + path,
        method=method,
        data=body,
        headers={"Authorization": f"Bearer {cluster.admin_token}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_dry_run_deletecollection_apply_patch_and_media_types(cluster):
    ns_path = "/api/v1/namespaces/default/configmaps"
    for name in ("a", "b", "c"):
        body = {
            "metadata": {"name": name, "labels": {"drop": "yes" if name != "c" else "no"}},
            "data": {"k": name},
        }
        assert admin(cluster, "POST", ns_path, body)[0] == 201
    code, _ = admin(cluster, "POST", ns_path + "?dryRun=All", {"metadata": {"name": "dry"}})
    assert code == 201 and admin(cluster, "GET", ns_path + "/dry")[0] == 404
    code, body = admin(cluster, "DELETE", ns_path + "?labelSelector=drop%3Dyes")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]
    assert [i["metadata"]["name"] for i in admin(cluster, "GET", ns_path)[1]["items"]] == ["c"]
    code, raw_body = request(
        cluster,
        "PATCH",
        ns_path + "/c?fieldManager=me",
        b"metadata:\n  labels:\n    applied: 'yes'\n",
        "application/apply-patch+yaml",
    )
    assert code == 200 and json.loads(raw_body)["metadata"]["labels"] == {"drop": "no", "applied": "yes"}
    code, raw_body = request(cluster, "PATCH", ns_path + "/c", b"{}", "text/plain")
    assert code == 415 and json.loads(raw_body)["reason"] == "UnsupportedMediaType"
    code, raw_body = request(cluster, "POST", ns_path, b"k8s\x00...", "application/vnd.kubernetes.protobuf")
    assert code == 415
    code, raw_body = request(cluster, "POST", ns_path, b"{not json")
    assert code == 400 and json.loads(raw_body)["reason"] == "BadRequest"


def test_legacy_watch_path_and_chunked_events(cluster):
    rv = cluster.store.resource_version
    cluster.store.create("configmaps", {"metadata": {"name": "w", "namespace": "default"}})
    req = urllib.request.Request(
        cluster.url + f"/api/v1/watch/namespaces/default/configmaps?resourceVersion={rv}&timeoutSeconds=1",
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Transfer-Encoding"] == "chunked"
        lines = resp.read().splitlines()
    events = [json.loads(line) for line in lines]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "w")]


def test_keep_alive_connection_survives_errors(cluster):
    import http.client

    conn = http.client.HTTPConnection(cluster.url.removeprefix("http://"), timeout=10)
    headers = {"Authorization": f"Bearer {cluster.admin_token}", "Content-Type": "application/json"}
    for path, code in (("/api/v1/namespaces/default/pods/x", 404), ("/api/v1/namespaces", 200)):
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        assert resp.status == code
        resp.read()
    # An error answered before the body is read must not poison the connection.
    conn.request(
        "POST",
        "/api/v1/namespaces/default/pods",
        body=b'{"metadata": {"name": "x"}}',
        headers={"Content-Type": "application/json"},
    )
    resp = conn.getresponse()
    assert resp.status == 401
    resp.read()
    conn.request("GET", "/version", headers=headers)
    assert conn.getresponse().status == 200
    conn.close()


def test_aggregated_discovery(cluster):
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

    def get(path):
        req = urllib.request.Request(
            cluster.url + path, headers={"Authorization": f"Bearer {cluster.admin_token}", "Accept": accept}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.headers["Content-Type"], json.loads(resp.read())

    ctype, doc = get("/apis")
    assert ctype == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    groups = {g["metadata"]["name"]: g for g in doc["items"]}
    version = groups["scheduling.volcano.sh"]["versions"][0]
    assert version["version"] == "v1beta1" and version["freshness"] == "Current"
    res = {r["resource"]: r for r in version["resources"]}
    assert res["queues"]["scope"] == "Cluster" and res["queues"]["shortNames"] == ["q", "queue-v1beta1"]
    assert (
        res["queues"]["subresources"][0]["subresource"] == "status" and "subresources" not in res["podgroups"]
    )
    assert res["podgroups"]["responseKind"] == {
        "group": "scheduling.volcano.sh",
        "version": "v1beta1",
        "kind": "PodGroup",
    }
    _, core = get("/api")
    assert [g["metadata"]["name"] for g in core["items"]] == [""]
    assert "pods" in {r["resource"] for r in core["items"][0]["versions"][0]["resources"]}
    admin(cluster, "POST", "/_sim/faults", {"not_installed": ["podgroups", "queues"]})
    assert "scheduling.volcano.sh" not in {g["metadata"]["name"] for g in get("/apis")[1]["items"]}
