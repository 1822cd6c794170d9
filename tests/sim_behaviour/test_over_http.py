"""The simulated behaviour seen through real HTTP with the official kubernetes client."""

from __future__ import annotations

import json
import urllib.request

import pytest
from kubernetes import client, config

from .helpers import job, new_cluster, task

GROUP, VERSION = "batch.volcano.sh", "v1alpha1"


@pytest.fixture
def served(tmp_path):
    cluster = new_cluster(nodes=2, cpu=8)
    cluster.start()
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    api_client = config.new_client_from_config(config_file=str(kubeconfig))
    yield cluster, api_client
    api_client.close()
    cluster.stop()


def advance(cluster, seconds: float) -> dict:
    req = urllib.request.Request(
        f"{cluster.url}/_sim/advance",
        data=json.dumps({"seconds": seconds}).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {cluster.admin_token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_job_created_over_http_runs_and_completes(served):
    cluster, api_client = served
    custom = client.CustomObjectsApi(api_client)
    core = client.CoreV1Api(api_client)
    body = job(
        "http-job",
        [
            task("master", 1, annotations={"sim.volcano-ui/duration": "15"}),
            task("worker", 2, annotations={"sim.volcano-ui/duration": "15"}),
        ],
    )
    created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", "jobs", body)
    uid = created["metadata"]["uid"]

    advance(cluster, 10)
    got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "jobs", "http-job")
    assert got["status"]["state"]["phase"] == "Running"
    assert got["status"]["running"] == 3
    pg = custom.get_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", "default", "podgroups", f"http-job-{uid}"
    )
    assert pg["status"]["phase"] == "Running"
    pods = core.list_namespaced_pod("default", label_selector="volcano.sh/job-name=http-job").items
    assert sorted(p.metadata.name for p in pods) == [
        "http-job-master-0",
        "http-job-worker-0",
        "http-job-worker-1",
    ]
    assert all(p.status.phase == "Running" and p.spec.node_name for p in pods)
    events = core.list_namespaced_event(
        "default", field_selector=f"involvedObject.uid={pods[0].metadata.uid}"
    ).items
    assert "Started" in {e.reason for e in events}

    advance(cluster, 30)
    got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "jobs", "http-job")
    assert got["status"]["state"]["phase"] == "Completed"
    assert got["status"]["succeeded"] == 3


def test_abort_command_over_http(served):
    cluster, api_client = served
    custom = client.CustomObjectsApi(api_client)
    created = custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        "jobs",
        job("victim", [task("main", 1, annotations={"sim.volcano-ui/behaviour": "run"})]),
    )
    advance(cluster, 10)
    command = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": "victim-abortjob-", "namespace": "default"},
        "action": "AbortJob",
        "target": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "victim",
            "uid": created["metadata"]["uid"],
            "controller": True,
        },
    }
    custom.create_namespaced_custom_object("bus.volcano.sh", "v1alpha1", "default", "commands", command)
    advance(cluster, 10)
    got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "jobs", "victim")
    assert got["status"]["state"]["phase"] == "Aborted"
    assert (
        custom.list_namespaced_custom_object("bus.volcano.sh", "v1alpha1", "default", "commands")["items"]
        == []
    )
