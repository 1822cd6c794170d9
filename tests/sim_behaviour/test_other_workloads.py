"""PodGroups of workloads that are not Volcano Jobs (REFERENCE.md §4 "Other workloads"): the
simulated PodGroup controller, and the large generator's totals (issue 6: 10,000 Jobs, 10,000
PodGroups, 50,000 pods, 200 Queues, 100,000 events)."""

from __future__ import annotations

import collections
import inspect

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.generator import generate_large, plan_large
from dashboard.sim.kinds import EVENT, JOB, POD, PODGROUP, QUEUE, kind_by_name
from dashboard.sim.scenarios import load_scenario
from tests.sim_behaviour.helpers import node, queue

GROUP = "scheduling.k8s.io/group-name"
QUEUE_ANN = "scheduling.volcano.sh/queue-name"
STATEFULSET = kind_by_name("StatefulSet", "apps")
BATCH_JOB = kind_by_name("Job", "batch")


def _cluster() -> SimulatedCluster:
    cluster = SimulatedCluster(seed=3)
    cluster.store.create(kind_by_name("Node", ""), node("n1", cpu=8))
    cluster.store.create(QUEUE, queue("serving", capability={"cpu": "6"}))
    cluster.store.create(kind_by_name("Namespace", ""), {"metadata": {"name": "apps"}})
    return cluster


def _pod(name: str, *, owner: dict | None = None, annotations: dict | None = None, cpu: str = "1") -> dict:
    md: dict = {"name": name, "annotations": {QUEUE_ANN: "serving", **(annotations or {})}}
    if owner is not None:
        md["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {"name": "main", "image": "busybox:1.36", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


def test_bare_pod_gets_podgroup_named_after_its_uid_and_is_scheduled():
    cluster = _cluster()
    pod = cluster.store.create(POD, _pod("notebook"), "apps")
    cluster.advance(3)
    uid = pod["metadata"]["uid"]
    pg = cluster.store.get(PODGROUP, "apps", f"podgroup-{uid}")
    assert pg["spec"]["queue"] == "serving" and pg["spec"]["minMember"] == 1
    assert pg["spec"]["minResources"]["cpu"] == "1"
    (ref,) = pg["metadata"]["ownerReferences"]
    assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"]) == ("v1", "Pod", "notebook", uid)
    pod = cluster.store.get(POD, "apps", "notebook")
    assert pod["metadata"]["annotations"][GROUP] == f"podgroup-{uid}"
    # The scheduler then gangs it like any PodGroup.
    cluster.advance(10)
    assert cluster.store.get(POD, "apps", "notebook")["spec"].get("nodeName") == "n1"
    assert cluster.store.get(PODGROUP, "apps", f"podgroup-{uid}")["status"]["phase"] == "Running"


def test_statefulset_pods_share_one_podgroup_with_the_owner_min_member_as_a_gang():
    cluster = _cluster()
    sts = cluster.store.create(
        STATEFULSET,
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": "triton",
                "annotations": {
                    "scheduling.volcano.sh/group-min-member": "2",
                    "volcano.sh/preemptable": "false",
                },
            },
            "spec": {
                "replicas": 2,
                "serviceName": "triton",
                "selector": {"matchLabels": {"app": "triton"}},
                "template": {
                    "metadata": {"labels": {"app": "triton"}},
                    "spec": {"containers": [{"name": "m"}]},
                },
            },
        },
        "apps",
    )
    cluster.store.create(POD, _pod("triton-0", owner=sts, cpu="2"), "apps")
    cluster.advance(5)
    pg_name = f"podgroup-{sts['metadata']['uid']}"
    pg = cluster.store.get(PODGROUP, "apps", pg_name)
    assert pg["spec"]["minMember"] == 2 and pg["spec"]["minResources"]["cpu"] == "4"
    assert pg["metadata"]["annotations"] == {"volcano.sh/preemptable": "false"}
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    # One of two members: the gang holds the pod back.
    assert not cluster.store.get(POD, "apps", "triton-0")["spec"].get("nodeName")
    assert pg["status"]["phase"] != "Running"
    cluster.store.create(POD, _pod("triton-1", owner=sts, cpu="2"), "apps")
    cluster.advance(10)
    assert cluster.store.get(POD, "apps", "triton-1")["metadata"]["annotations"][GROUP] == pg_name
    assert [p["metadata"]["name"] for p in cluster.store.list(PODGROUP, "apps")[0]] == [pg_name]
    assert all(cluster.store.get(POD, "apps", n)["spec"].get("nodeName") for n in ("triton-0", "triton-1"))
    assert cluster.store.get(PODGROUP, "apps", pg_name)["status"]["phase"] == "Running"


def test_batch_v1_job_pod_gets_a_podgroup_but_a_grouped_or_other_scheduler_pod_does_not():
    cluster = _cluster()
    job = cluster.store.create(
        BATCH_JOB,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "etl"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m"}]}}},
        },
        "apps",
    )
    cluster.store.create(POD, _pod("etl-x7k2p", owner=job), "apps")
    # An operator (LWS, Kubeflow, Spark) already named the group: nothing is created for it.
    cluster.store.create(POD, _pod("lws-0", annotations={GROUP: "lws-group"}), "apps")
    other = _pod("web")
    other["spec"]["schedulerName"] = "default-scheduler"
    cluster.store.create(POD, other, "apps")
    cluster.advance(3)
    names = [p["metadata"]["name"] for p in cluster.store.list(PODGROUP, "apps")[0]]
    assert names == [f"podgroup-{job['metadata']['uid']}"]
    assert cluster.store.get(POD, "apps", "lws-0")["metadata"]["annotations"][GROUP] == "lws-group"
    assert GROUP not in (cluster.store.get(POD, "apps", "web")["metadata"].get("annotations") or {})


def test_full_size_plan_has_exactly_the_issue_totals():
    # The defaults of generate_large are the issue's scale; the plan fixes the arithmetic without
    # generating 200,000 objects.
    defaults = {k: p.default for k, p in inspect.signature(generate_large).parameters.items()}
    assert (defaults["jobs"], defaults["pods"], defaults["queues"], defaults["events"]) == (
        10000,
        50000,
        200,
        100000,
    )
    for seed in (0, 1, 7):
        plan = plan_large(
            jobs=defaults["jobs"], pods=defaults["pods"], podgroups=defaults["podgroups"], seed=seed
        )
        assert len(plan.job_phases) == 10000
        assert plan.podgroups == 10000 and plan.pods == 50000
        kinds = collections.Counter(w[0] for w in plan.workloads)
        assert set(kinds) == {"Deployment", "StatefulSet", "BatchJob", "Pod"}
        assert {w[1] for w in plan.workloads} == {"Running", "Pending", "Inqueue"}
        # Volcano Jobs keep realistic sizes: most pods are theirs.
        assert sum(plan.sizes) >= 0.75 * 50000
    assert plan_large(jobs=10000, pods=50000, seed=3) == plan_large(jobs=10000, pods=50000, seed=3)


def _generated(seed: int) -> tuple[SimulatedCluster, dict]:
    cluster = SimulatedCluster(seed=seed)
    counts = load_scenario(cluster, "large", jobs=400, pods=2000, queues=20, events=4000)
    return cluster, counts


def test_scaled_down_generator_totals_and_other_workloads_are_consistent():
    cluster, counts = _generated(5)
    store = cluster.store
    assert len(store.list(JOB)[0]) == 400 and counts["Job"] == 400
    assert len(store.list(PODGROUP)[0]) == 400
    assert len(store.list(POD)[0]) == 2000
    assert len(store.list(QUEUE)[0]) == 20
    assert len(store.list(EVENT)[0]) == 4000
    pgs = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in store.list(PODGROUP)[0]}
    pods_by_group = collections.defaultdict(list)
    for pod in store.list(POD)[0]:
        md = pod["metadata"]
        group = md["annotations"][GROUP]
        # A finished Volcano Job's pods keep naming the PodGroup Volcano deleted (REFERENCE §1).
        assert (md["namespace"], group) in pgs or pod["status"]["phase"] in ("Succeeded", "Failed"), md[
            "name"
        ]
        pods_by_group[(md["namespace"], group)].append(pod)
    others = {k: g for k, g in pgs.items() if k[1].startswith("podgroup-")}
    owner_kinds = collections.Counter()
    for key, pg in others.items():
        pods = pods_by_group[key]
        assert pods, key
        (ref,) = pg["metadata"]["ownerReferences"]
        owner_kinds[(ref["apiVersion"], ref["kind"])] += 1
        first = pods[0]["metadata"]
        owner_uid = first["uid"] if ref["kind"] == "Pod" else first["ownerReferences"][0]["uid"]
        assert key[1] == f"podgroup-{owner_uid}" and ref["uid"] == owner_uid
        assert pg["spec"]["queue"] == first["annotations"][QUEUE_ANN]
        assert pg["spec"]["minMember"] <= len(pods)
        phase = pg["status"]["phase"]
        for pod in pods:
            assert pod["spec"]["schedulerName"] == "volcano"
            if phase == "Running":
                assert pod["status"]["phase"] == "Running" and pod["spec"]["nodeName"]
            else:
                assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
        if ref["kind"] != "Pod":
            owner_kind = kind_by_name(ref["kind"], ref["apiVersion"].rpartition("/")[0])
            owner = store.get(owner_kind, key[0], ref["name"])
            want = int(
                (owner["metadata"].get("annotations") or {}).get("scheduling.volcano.sh/group-min-member", 1)
            )
            assert pg["spec"]["minMember"] == want
    assert set(owner_kinds) == {
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("batch/v1", "Job"),
        ("v1", "Pod"),
    }
    assert {g["status"]["phase"] for g in others.values()} == {"Running", "Pending", "Inqueue"}
    # Every waiting PodGroup says why, as the scheduler words it (REFERENCE.md §5).
    unschedulable = {
        (e["metadata"]["namespace"], e["involvedObject"]["name"])
        for e in store.list(EVENT)[0]
        if e["involvedObject"]["kind"] == "PodGroup" and e["reason"] == "Unschedulable"
    }
    waiting = [k for k, g in others.items() if g["status"]["phase"] != "Running"]
    assert waiting and all(k in unschedulable for k in waiting)
    for k in waiting:
        assert (
            "tasks in gang unschedulable: pod group is not ready"
            in (pgs[k]["status"]["conditions"][0]["message"])
        )
    # The controllers leave the generated workloads as they are (no second ReplicaSet, no new pods).
    cluster.advance(20)
    assert len(store.list(POD)[0]) == 2000 and len(store.list(PODGROUP)[0]) == 400
    assert {g["status"]["phase"] for k, g in others.items() if g["status"]["phase"] != "Running"} <= {
        "Pending",
        "Inqueue",
    }
    assert all(store.get(PODGROUP, *k)["status"]["phase"] == g["status"]["phase"] for k, g in others.items())


def test_generator_is_deterministic_per_seed():
    def summary(seed):
        cluster, counts = _generated(seed)
        return counts, sorted(
            (g["metadata"]["namespace"], g["metadata"]["name"], g["status"]["phase"])
            for g in cluster.store.list(PODGROUP)[0]
        )

    assert summary(4) == summary(4)
