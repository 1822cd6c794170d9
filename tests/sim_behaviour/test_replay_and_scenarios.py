"""Controllers off, verbatim scenario files, the demo scenario and the large generator."""

from __future__ import annotations

import collections
import json

import pytest
import yaml

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.scenarios import ScenarioError, load_scenario

from .helpers import EVENT, JOB, NODE, POD, PODGROUP, QUEUE, job, new_cluster, node, task

REPORTED = [
    {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "ml", "uid": "ns-uid-1", "creationTimestamp": "2025-01-02T03:04:05Z"},
        "status": {"phase": "Active"},
    },
    {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": "stuck",
            "namespace": "ml",
            "uid": "3f0e1d2c-0000-4000-8000-000000000001",
            "creationTimestamp": "2025-01-02T03:04:05Z",
            "deletionTimestamp": "2025-01-02T04:00:00Z",
            "finalizers": ["example.com/hold"],
            "generation": 7,
        },
        "spec": {
            "minAvailable": 2,
            "queue": "q1",
            "schedulerName": "volcano",
            "tasks": [
                {
                    "name": "w",
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                            ]
                        }
                    },
                }
            ],
        },
        "status": {
            "state": {"phase": "Running", "lastTransitionTime": "2025-01-02T03:05:00Z"},
            "running": 1,
            "pending": 1,
            "minAvailable": 2,
            "retryCount": 4,
            "version": 9,
            "conditions": [{"status": "Running", "lastTransitionTime": "2025-01-02T03:05:00Z"}],
        },
    },
    {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "stuck-3f0e1d2c-0000-4000-8000-000000000001",
            "namespace": "ml",
            "uid": "pg-uid-1",
            "creationTimestamp": "2025-01-02T03:04:06Z",
        },
        "spec": {"minMember": 2, "queue": "q1"},
        "status": {
            "phase": "Unknown",
            "running": 1,
            "conditions": [
                {
                    "type": "Unschedulable",
                    "status": "True",
                    "reason": "NotEnoughResources",
                    "message": "odd <b>msg</b>",
                    "lastTransitionTime": "2025-01-02T03:06:00Z",
                    "transitionID": "t1",
                }
            ],
        },
    },
    {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q1", "uid": "q-uid-1", "creationTimestamp": "2024-12-01T00:00:00Z"},
        "spec": {"weight": 1, "parent": "root"},
        "status": {"state": "Closing", "allocated": {"cpu": "7"}},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "stuck-w-0",
            "namespace": "ml",
            "uid": "pod-uid-1",
            "creationTimestamp": "2025-01-02T03:04:07Z",
            "annotations": {"scheduling.k8s.io/group-name": "stuck-3f0e1d2c-0000-4000-8000-000000000001"},
        },
        "spec": {
            "nodeName": "gone-node",
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "x"}],
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "c",
                    "ready": False,
                    "restartCount": 12,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                }
            ],
        },
    },
]


def _strip(obj):
    obj = json.loads(json.dumps(obj))
    obj["metadata"].pop("resourceVersion", None)
    return obj


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_scenario_file_replays_verbatim(tmp_path, fmt):
    if fmt == "yaml":
        path = tmp_path / "reported.yaml"
        path.write_text(yaml.safe_dump_all(REPORTED))
    else:
        path = tmp_path / "reported.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": REPORTED}))
    cluster = SimulatedCluster(seed=3, scenario=path, controllers=False)
    from dashboard.sim.kinds import kind_for_api_version

    for written in REPORTED:
        kind = kind_for_api_version(written["apiVersion"], written["kind"])
        md = written["metadata"]
        stored = cluster.store.get(kind, md.get("namespace"), md["name"])
        got = _strip(stored)
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "generation", "finalizers"):
            assert got["metadata"].get(key) == md.get(key, got["metadata"].get(key)), key
        assert got.get("status") == written.get("status")
        assert got.get("spec") == written.get("spec")
    cluster.advance(120)
    assert _strip(cluster.store.get(JOB, "ml", "stuck"))["status"] == REPORTED[1]["status"]


def test_scenario_file_errors_are_clear(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {}\n")
    cluster = SimulatedCluster(controllers=False)
    with pytest.raises(ScenarioError, match="metadata.name is required"):
        load_scenario(cluster, bad)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    with pytest.raises(ScenarioError, match="does not serve example.com/v1 Widget"):
        load_scenario(cluster, unknown)
    with pytest.raises(ScenarioError, match="unknown scenario"):
        load_scenario(cluster, tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_scenario(cluster, broken)


def test_with_controllers_off_objects_keep_exactly_their_status():
    cluster = new_cluster(controllers=False)
    given = job("frozen", [task("main", 2)])
    given["status"] = {"state": {"phase": "Running"}, "running": 5}
    created = cluster.store.create(JOB, given, replay=True)
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "orphan", "namespace": "default"},
        "spec": {"minMember": 3},
    }
    cluster.store.create(PODGROUP, pg)
    cluster.advance(300)
    assert cluster.store.get(JOB, "default", "frozen")["status"] == given["status"]
    assert (
        cluster.store.get(JOB, "default", "frozen")["metadata"]["resourceVersion"]
        == created["metadata"]["resourceVersion"]
    )
    assert "status" not in cluster.store.get(PODGROUP, "default", "orphan")
    assert cluster.store.list(POD)[0] == []
    assert cluster.store.list(EVENT)[0] == []


JOB_PHASES = {
    "Pending",
    "Running",
    "Restarting",
    "Aborting",
    "Aborted",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
}
POD_STATES = {
    "Pending",
    "ContainerCreating",
    "Running",
    "Succeeded",
    "Failed",
    "CrashLoopBackOff",
    "Terminating",
}


def _pod_state(pod):
    if pod["metadata"].get("deletionTimestamp"):
        return "Terminating"
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting:
            return waiting.get("reason")
    return (pod.get("status") or {}).get("phase")


def test_demo_scenario_shows_every_state_within_a_minute():
    from dashboard.sim.scenarios import DEMO_SETTLE_SECONDS

    cluster = SimulatedCluster(seed=0, scenario="demo")
    seen = collections.defaultdict(set)
    for _ in range(int(DEMO_SETTLE_SECONDS)):
        cluster.advance(1)
        for p in cluster.store.list(POD)[0]:
            seen["pod"].add(_pod_state(p))
    assert seen["pod"] >= POD_STATES
    assert seen["pod"] & {"ImagePullBackOff", "ErrImagePull"}
    # From DEMO_SETTLE_SECONDS on, every Job phase, PodGroup phase and queue state exists at once.
    for _ in range(2):
        jobs = {j["status"]["state"]["phase"] for j in cluster.store.list(JOB)[0]}
        assert jobs == JOB_PHASES
        pgs = {(pg.get("status") or {}).get("phase") for pg in cluster.store.list(PODGROUP)[0]}
        assert pgs >= {"Pending", "Inqueue", "Running", "Completed"}
        assert {q["status"]["state"] for q in cluster.store.list(QUEUE)[0]} == {"Open", "Closing", "Closed"}
        pods = {_pod_state(p) for p in cluster.store.list(POD)[0]}
        assert pods >= {"Pending", "Running", "Succeeded", "Failed", "Terminating", "CrashLoopBackOff"}
        cluster.advance(60)
    namespaces = {j["metadata"]["namespace"] for j in cluster.store.list(JOB)[0]}
    assert {"team-vision", "team-nlp", "research", "platform"} <= namespaces
    assert len(cluster.store.list(JOB)[0]) >= 30
    # The Deployment scheduled by Volcano has a podgroup-<ReplicaSet uid>.
    from dashboard.sim.kinds import kind_by_name

    rs = cluster.store.list(kind_by_name("ReplicaSet", "apps"), "platform")[0][0]
    pg = cluster.store.get(PODGROUP, "platform", f"podgroup-{rs['metadata']['uid']}")
    assert pg["spec"]["queue"] == "prod-serving" and pg["status"]["phase"] == "Running"
    pods = [
        p
        for p in cluster.store.list(POD, "platform")[0]
        if p["metadata"]["name"].startswith(rs["metadata"]["name"])
    ]
    assert len(pods) == 3
    assert all(
        p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == pg["metadata"]["name"] for p in pods
    )
    # Pending jobs say why.
    bert = cluster.store.get(JOB, "team-nlp", "bert-pretrain-xl")
    bert_pg = cluster.store.get(PODGROUP, "team-nlp", f"bert-pretrain-xl-{bert['metadata']['uid']}")
    assert "insufficient nvidia.com/gpu" in bert_pg["status"]["conditions"][-1]["message"]
    gpu_nodes = [n for n in cluster.store.list(NODE)[0] if "nvidia.com/gpu" in n["status"]["allocatable"]]
    assert len(gpu_nodes) == 10  # four A100 nodes and the six (tainted) H100 nodes


def test_demo_is_deterministic_for_a_seed():
    def snapshot(seed):
        cluster = SimulatedCluster(seed=seed, scenario="demo")
        cluster.advance(40)
        return sorted(
            (j["metadata"]["name"], j["status"]["state"]["phase"], j["status"].get("running", 0))
            for j in cluster.store.list(JOB)[0]
        )

    assert snapshot(5) == snapshot(5)


def test_large_generator_is_consistent_and_churns():
    cluster = SimulatedCluster(seed=2)
    counts = load_scenario(cluster, "large", jobs=300, pods=1500, queues=20, events=2000, churn=2.0)
    assert counts["Job"] == 300 and counts["Pod"] == 1500 and counts["Event"] == 2000
    assert counts["Queue"] == 18  # plus the bootstrap's root and default: exactly 20
    assert counts["PodGroup"] == 300  # as many as Jobs: other workloads make up the finished Jobs'
    jobs = cluster.store.list(JOB)[0]
    by_uid = {j["metadata"]["uid"]: j for j in jobs}
    per_job = collections.Counter()
    for pod in cluster.store.list(POD)[0]:
        refs = pod["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("apiVersion") != "batch.volcano.sh/v1alpha1":
            continue  # a Deployment's, StatefulSet's, batch/v1 Job's or a bare pod (tests/sim)
        owner = refs[0]["uid"]
        assert owner in by_uid
        per_job[owner] += 1
        if pod["status"]["phase"] == "Running":
            assert pod["spec"]["nodeName"]
    for uid, n in per_job.items():
        status = by_uid[uid]["status"]
        assert sum(status.get(k, 0) for k in ("pending", "running", "succeeded", "failed")) == n
    phases = collections.Counter(j["status"]["state"]["phase"] for j in jobs)
    assert {"Running", "Completed", "Pending", "Failed", "Aborted"} <= set(phases)
    cluster.advance(30)
    churned = [j for j in cluster.store.list(JOB)[0] if j["metadata"]["name"].startswith("churn-")]
    assert len(churned) >= 30
    assert any(j["status"]["state"]["phase"] == "Running" for j in churned)
    starved = {
        q["metadata"]["name"]
        for q in cluster.store.list(QUEUE)[0]
        if (q["spec"].get("capability") or {}).get("cpu") == "2"
    }
    pending_pg = [pg for pg in cluster.store.list(PODGROUP)[0] if pg["spec"]["queue"] in starved]
    assert pending_pg and all(pg["status"]["phase"] == "Pending" for pg in pending_pg)


def test_nodes_from_helpers_are_valid():
    assert node("n", gpus=2)["status"]["allocatable"]["nvidia.com/gpu"] == "2"
