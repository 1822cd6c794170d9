"""CronJob, JobFlow/JobTemplate, HyperNode topology and the Volcano components, simulated
(controllers on, simulated clock advanced; never slept)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

from dashboard.sim import components
from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.cronjobs import SCHEDULED_ANNOTATION
from dashboard.sim.jobflows import merge_job_spec
from dashboard.sim.topology import node_count

from .helpers import job, node, task

START = datetime(2026, 11, 29, 10, 0, 30, tzinfo=UTC)


@pytest.fixture
def cluster():
    c = SimulatedCluster(seed=3, start_time=START)
    for i in range(4):
        n = node(f"gpu-{i}", cpu=64, memory="256Gi", gpus=8)
        n["metadata"]["labels"]["rack"] = "a" if i < 2 else "b"
        c.store.create("nodes", n)
    yield c
    c.stop()


def cronjob(name: str, **spec) -> dict:
    template = job(
        "x", [task("main", 1, annotations={"sim.volcano-ui/duration": str(spec.pop("duration", 20))})]
    )
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"metadata": {"labels": {"cron": name}}, "spec": template["spec"]},
            **spec,
        },
    }


def owned_jobs(c, name: str) -> list[dict]:
    items, _ = c.store.list("jobs", "default", label_selector=f"cron={name}")
    return items


def events_for(c, kind: str, name: str) -> list[tuple[str, str, str]]:
    items, _ = c.store.list("events")
    return [
        (e["type"], e["reason"], e["message"])
        for e in items
        if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"] == name
    ]


# ---------------------------------------------------------------------- CronJob
def test_cronjob_creates_a_job_on_schedule_with_volcanos_name_and_marks(cluster):
    cluster.store.create("cronjobs", cronjob("every-minute", timeZone="Asia/Shanghai"))
    cluster.advance(20)
    assert owned_jobs(cluster, "every-minute") == []  # 10:00:50: the first run is at 10:01
    cluster.advance(15)
    (created,) = owned_jobs(cluster, "every-minute")
    md = created["metadata"]
    scheduled = datetime(2026, 11, 29, 10, 1, tzinfo=UTC)
    assert md["name"] == f"every-minute-{int(scheduled.timestamp()) // 60}"
    assert md["annotations"][SCHEDULED_ANNOTATION] == "2026-11-29T18:01:00+08:00"
    (ref,) = md["ownerReferences"]
    cj = cluster.store.get("cronjobs", "default", "every-minute")
    assert ref["kind"] == "CronJob" and ref["uid"] == cj["metadata"]["uid"] and ref["controller"] is True
    status = cj["status"]
    assert status["lastScheduleTime"] == "2026-11-29T10:01:00Z"
    assert [(a["kind"], a["name"], a["uid"]) for a in status["active"]] == [("Job", md["name"], md["uid"])]
    assert (
        "Normal",
        "SuccessfulCreate",
        f"Created job {md['name']} for CronJob default/every-minute",
    ) in events_for(cluster, "CronJob", "every-minute")
    # The Job runs (controllers on) and completes: out of active, lastSuccessfulTime set.
    cluster.advance(45)
    status = cluster.store.get("cronjobs", "default", "every-minute")["status"]
    done = cluster.store.get("jobs", "default", md["name"])["status"]["state"]
    assert done["phase"] == "Completed"
    assert status["lastSuccessfulTime"] == done["lastTransitionTime"]
    assert ("Normal", "SawCompletedJob", f"Saw completed job: {md['name']} in active, remove") in events_for(
        cluster, "CronJob", "every-minute"
    )


def test_history_limits_prune_the_oldest_finished_jobs(cluster):
    cluster.store.create("cronjobs", cronjob("pruned", successfulJobsHistoryLimit=2, duration=5))
    cluster.advance(60 * 5)
    names = sorted(j["metadata"]["name"] for j in owned_jobs(cluster, "pruned"))
    assert len(names) == 2, names
    deleted = [m for t, r, m in events_for(cluster, "CronJob", "pruned") if r == "SuccessfulDelete"]
    assert deleted and all(m.startswith('Deleted job "pruned-') for m in deleted)


def test_forbid_skips_runs_while_a_job_is_active(cluster):
    cluster.store.create(
        "cronjobs", cronjob("forbid", concurrencyPolicy="Forbid", startingDeadlineSeconds=30, duration=150)
    )
    cluster.advance(60 * 3)
    jobs = owned_jobs(cluster, "forbid")
    assert len(jobs) == 1
    assert (
        "Warning",
        "ForbidConcurrent",
        "Skipping job creation because another job is already running",
    ) in events_for(cluster, "CronJob", "forbid")
    allow = cronjob("allow", duration=150)
    cluster.store.create("cronjobs", allow)
    cluster.advance(60 * 2)
    assert len(owned_jobs(cluster, "allow")) == 2


def test_replace_deletes_the_active_job(cluster):
    cluster.store.create("cronjobs", cronjob("replace", concurrencyPolicy="Replace", duration=150))
    cluster.advance(60 * 2)
    (only,) = owned_jobs(cluster, "replace")
    assert only["metadata"]["name"].endswith(
        str(int(datetime(2026, 11, 29, 10, 2, tzinfo=UTC).timestamp()) // 60)
    )
    assert any(r == "ReplaceConcurrent" for _, r, _ in events_for(cluster, "CronJob", "replace"))


def test_suspended_cronjob_creates_nothing_until_resumed(cluster):
    cluster.store.create("cronjobs", cronjob("paused", suspend=True, startingDeadlineSeconds=20))
    cluster.advance(60 * 3)
    assert owned_jobs(cluster, "paused") == []
    assert "status" not in cluster.store.get("cronjobs", "default", "paused")
    cluster.store.mutate("cronjobs", "default", "paused", lambda o: o["spec"].__setitem__("suspend", False))
    cluster.advance(60)
    assert len(owned_jobs(cluster, "paused")) == 1


def test_bad_schedule_and_time_zone_are_events(cluster):
    cluster.store.create("cronjobs", cronjob("bad-tz", timeZone="Mars/Olympus"))
    cluster.store.create("cronjobs", cronjob("bad-cron", schedule="61 * * * *"))
    cluster.advance(70)
    assert owned_jobs(cluster, "bad-tz") == [] and owned_jobs(cluster, "bad-cron") == []
    assert any(r == "InvalidTimeZone" for _, r, _ in events_for(cluster, "CronJob", "bad-tz"))
    assert (
        "Warning",
        "UnParseableCronJobSchedule",
        "unparseable schedule for cronjob: 61 * * * *",
    ) in events_for(cluster, "CronJob", "bad-cron")


# ---------------------------------------------------------------------- JobFlow
@pytest.mark.parametrize("deadline", [0, -30, 9223372036854775807, 9223372037])
def test_a_deadline_that_lets_no_run_start_creates_nothing(cluster, deadline):
    # The controller looks back to now minus the deadline (in Go's int64 nanoseconds, which wrap):
    # not back at all, or to a moment after now. It emits no event for it.
    cluster.store.create("cronjobs", cronjob("late", startingDeadlineSeconds=deadline))
    cluster.advance(60 * 3)
    assert owned_jobs(cluster, "late") == []
    assert events_for(cluster, "CronJob", "late") == []


def test_a_deadline_that_wraps_to_a_long_lookback_runs(cluster):
    cluster.store.create("cronjobs", cronjob("long", startingDeadlineSeconds=10_000_000_000_000))
    cluster.advance(60 * 2)
    assert len(owned_jobs(cluster, "long")) == 2


def test_a_negative_history_limit_crashes_the_controller_before_any_run(cluster):
    cluster.store.create("cronjobs", cronjob("kept", duration=5))
    cluster.advance(60 * 2 + 10)
    finished = sorted(j["metadata"]["name"] for j in owned_jobs(cluster, "kept"))
    assert len(finished) == 2
    # The limit turns negative: the controller deletes every successful Job, then panics before it
    # writes the status or starts a Job.
    cluster.store.mutate(
        "cronjobs", "default", "kept", lambda o: o["spec"].__setitem__("successfulJobsHistoryLimit", -1)
    )
    status = cluster.store.get("cronjobs", "default", "kept")["status"]
    cluster.advance(60 * 3)
    assert owned_jobs(cluster, "kept") == []
    assert cluster.store.get("cronjobs", "default", "kept")["status"] == status
    deleted = [m for _, r, m in events_for(cluster, "CronJob", "kept") if r == "SuccessfulDelete"]
    assert deleted == [f'Deleted job "{n}"' for n in finished]
    cluster.store.create("cronjobs", cronjob("never", failedJobsHistoryLimit=-2))
    cluster.advance(60 * 2)
    assert owned_jobs(cluster, "never") == [] and events_for(cluster, "CronJob", "never") == []


def test_an_unknown_concurrency_policy_allows(cluster):
    cluster.store.create("cronjobs", cronjob("sometimes", concurrencyPolicy="Sometimes", duration=150))
    cluster.advance(60 * 2)
    assert len(owned_jobs(cluster, "sometimes")) == 2


def test_the_local_time_zone_is_utc(cluster):
    cluster.store.create("cronjobs", cronjob("local", timeZone="Local"))
    cluster.advance(35)
    (created,) = owned_jobs(cluster, "local")
    assert created["metadata"]["annotations"][SCHEDULED_ANNOTATION] == "2026-11-29T10:01:00Z"
    assert not any(r == "InvalidTimeZone" for _, r, _ in events_for(cluster, "CronJob", "local"))


def _template(name: str, duration: int, behaviour: str = "succeed") -> dict:
    spec = job(
        "t",
        [
            task(
                "main",
                1,
                annotations={"sim.volcano-ui/duration": str(duration), "sim.volcano-ui/behaviour": behaviour},
            )
        ],
    )["spec"]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _flow(name: str, flows: list[dict], retain: str = "retain") -> dict:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"jobRetainPolicy": retain, "flows": flows},
    }


def test_jobflow_runs_its_chain_in_order_to_succeed(cluster):
    for name in ("a", "b", "c"):
        cluster.store.create("jobtemplates", _template(name, 10))
    patch = {
        "tasks": [
            {
                "name": "main",
                "template": {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}},
            }
        ]
    }
    cluster.store.create(
        "jobflows",
        _flow(
            "chain",
            [
                {"name": "a"},
                {"name": "b", "dependsOn": {"targets": ["a"]}, "patch": {"jobSpec": patch}},
                {"name": "c", "dependsOn": {"targets": ["b"]}},
            ],
        ),
    )
    created: dict[str, str] = {}
    for _ in range(200):
        cluster.advance(1)
        for item in cluster.store.list("jobs", "default")[0]:
            created.setdefault(item["metadata"]["name"], cluster.clock.rfc3339())
        if (cluster.store.get("jobflows", "default", "chain").get("status") or {}).get("state", {}).get(
            "phase"
        ) == "Succeed":
            break
    status = cluster.store.get("jobflows", "default", "chain")["status"]
    assert status["state"]["phase"] == "Succeed"
    assert status["completedJobs"] == ["chain-a", "chain-b", "chain-c"]
    assert created["chain-a"] < created["chain-b"] < created["chain-c"]
    entry = status["jobStatusList"][0]
    assert entry["name"] == "chain-a" and entry["state"] == "Completed"
    assert [h["state"] for h in entry["runningHistories"]][-1] == "Completed"
    assert status["conditions"]["chain-b"]["phase"] == "Completed"
    b = cluster.store.get("jobs", "default", "chain-b")
    assert b["metadata"]["labels"]["volcano.sh/createdByJobFlow"] == "default.chain"
    assert b["metadata"]["annotations"]["volcano.sh/createdByJobTemplate"] == "default.b"
    assert b["metadata"]["ownerReferences"][0]["kind"] == "JobFlow"
    assert b["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert ("Normal", "Created", "create a job named chain-a!") in events_for(cluster, "JobFlow", "chain")
    assert cluster.store.get("jobtemplates", "default", "b")["status"]["jobDependsOnList"] == ["chain-b"]


def test_jobflow_fails_with_a_failed_step_and_delete_policy_removes_jobs(cluster):
    cluster.store.create("jobtemplates", _template("ok", 5))
    cluster.store.create("jobtemplates", _template("boom", 5, behaviour="fail"))
    cluster.store.create(
        "jobflows", _flow("failing", [{"name": "ok"}, {"name": "boom", "dependsOn": {"targets": ["ok"]}}])
    )
    cluster.store.create("jobflows", _flow("tidy", [{"name": "ok"}], retain="delete"))
    cluster.advance(150)
    assert cluster.store.get("jobflows", "default", "failing")["status"]["state"]["phase"] == "Failed"
    assert cluster.store.get("jobflows", "default", "tidy")["status"]["state"]["phase"] == "Succeed"
    assert cluster.store.try_get("jobs", "default", "tidy-ok") is None


def test_merge_job_spec_merges_by_name():
    base = {
        "queue": "a",
        "tasks": [
            {
                "name": "t",
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [{"name": "c", "image": "x", "env": [{"name": "A", "value": "1"}]}]
                    }
                },
            }
        ],
    }
    out = merge_job_spec(
        base,
        {
            "queue": "b",
            "tasks": [
                {
                    "name": "t",
                    "template": {
                        "spec": {"containers": [{"name": "c", "env": [{"name": "B", "value": "2"}]}]}
                    },
                },
                {"name": "new", "replicas": 2},
            ],
        },
    )
    assert out["queue"] == "b" and [t["name"] for t in out["tasks"]] == ["t", "new"]
    container = out["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["image"] == "x" and container["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
    ]
    assert base["tasks"][0]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]


# ---------------------------------------------------------------------- HyperNodes and topology
def _hn(name: str, tier: int, members: list[dict], tier_name: str = "") -> dict:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }


def _tree(c) -> None:
    c.store.create(
        "hypernodes",
        _hn(
            "leaf-a",
            1,
            [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}],
            "leaf",
        ),
    )
    c.store.create(
        "hypernodes",
        _hn("leaf-b", 1, [{"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-[23]$"}}}], "leaf"),
    )
    kids = [{"type": "HyperNode", "selector": {"exactMatch": {"name": n}}} for n in ("leaf-a", "leaf-b")]
    c.store.create("hypernodes", _hn("spine", 2, kids, "spine"))


def test_nodecount_counts_members_as_volcanos_controller_does(cluster):
    _tree(cluster)
    cluster.advance(2)
    counts = {h["metadata"]["name"]: h["status"]["nodeCount"] for h in cluster.store.list("hypernodes")[0]}
    assert counts == {"leaf-a": 2, "leaf-b": 2, "spine": 2}  # the spine counts its two exactMatch members
    nodes = {"n1": {}, "n2": {"zone": "east"}}
    member = {
        "spec": {"members": [{"selector": {"exactMatch": {"name": "n1"}}}, {"selector": {"labelMatch": {}}}]}
    }
    assert node_count(member, nodes) == 1


def test_hard_topology_gang_stays_pending_with_the_hypernode_fit_error(cluster):
    _tree(cluster)
    fits = job(
        "fits",
        [task("w", 2, cpu="4", gpus=8, annotations={"sim.volcano-ui/behaviour": "run"})],
        networkTopology={"mode": "hard", "highestTierAllowed": 1},
    )
    stuck = job(
        "stuck",
        [task("w", 3, cpu="4", gpus=5, annotations={"sim.volcano-ui/behaviour": "run"})],
        networkTopology={"mode": "hard", "highestTierName": "leaf"},
    )
    spine = job(
        "spine-ok",
        [task("w", 3, cpu="4", gpus=5, annotations={"sim.volcano-ui/behaviour": "run"})],
        networkTopology={"mode": "hard", "highestTierName": "spine"},
    )
    cluster.store.create("jobs", fits)
    cluster.advance(5)
    cluster.store.create("jobs", stuck)
    cluster.advance(10)
    pgs = {
        pg["metadata"]["name"].rsplit("-", 5)[0]: pg for pg in cluster.store.list("podgroups", "default")[0]
    }
    assert pgs["fits"]["status"]["phase"] == "Running"
    assert pgs["fits"]["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    placed = {
        p["spec"]["nodeName"]
        for p in cluster.store.list("pods", "default", label_selector="volcano.sh/job-name=fits")[0]
    }
    assert placed in ({"gpu-0", "gpu-1"}, {"gpu-2", "gpu-3"})
    pg = pgs["stuck"]
    assert pg["status"]["phase"] == "Inqueue"
    (cond,) = [c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable"]
    free_leaf = "leaf-b" if placed == {"gpu-0", "gpu-1"} else "leaf-a"
    assert cond["reason"] == "NotEnoughResources"
    assert cond["message"].startswith(
        "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable"
    )
    assert (
        f"In hyperNode {free_leaf}: 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu."
        in cond["message"]
    )
    assert cond["lastTransitionTime"]
    pod_events = [m for t, r, m in events_for(cluster, "Pod", "stuck-w-2") if r == "FailedScheduling"]
    assert pod_events and pod_events[0].startswith(f"In hyperNode {free_leaf}: ")
    # Allowed to cross the spine, the same gang fits on an empty cluster: over both leaves.
    cluster.store.delete("jobs", "default", "stuck")
    cluster.store.delete("jobs", "default", "fits")
    cluster.advance(15)
    cluster.store.create("jobs", spine)
    cluster.advance(10)
    pg = next(
        p
        for p in cluster.store.list("podgroups", "default")[0]
        if p["metadata"]["name"].startswith("spine-ok-")
    )
    assert pg["status"]["phase"] == "Running"


def test_partitions_each_stay_within_a_leaf(cluster):
    _tree(cluster)
    sweep = job(
        "sweep",
        [task("w", 4, cpu="40", annotations={"sim.volcano-ui/behaviour": "run"})],
        networkTopology={"mode": "hard", "highestTierAllowed": 2},
    )
    sweep["spec"]["tasks"][0]["partitionPolicy"] = {
        "totalPartitions": 2,
        "partitionSize": 2,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    cluster.store.create("jobs", sweep)
    cluster.advance(10)
    pg = cluster.store.list("podgroups", "default")[0][0]
    assert pg["spec"]["subGroupPolicy"] == [
        {
            "name": "w",
            "subGroupSize": 2,
            "minSubGroups": 0,
            "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "w"}},
            "matchLabelKeys": ["volcano.sh/partition-id"],
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        }
    ]
    pods = cluster.store.list("pods", "default")[0]
    racks: dict[str, set[str]] = {}
    for p in pods:
        rack = "a" if p["spec"]["nodeName"] in ("gpu-0", "gpu-1") else "b"
        racks.setdefault(p["metadata"]["labels"]["volcano.sh/partition-id"], set()).add(rack)
    assert len(pods) == 4 and all(len(r) == 1 for r in racks.values())


def test_taints_and_tolerations(cluster):
    tainted = node("tainted", cpu=128)
    tainted["spec"] = {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}
    cluster.store.create("nodes", tainted)
    big = job("big", [task("w", 1, cpu="100", annotations={"sim.volcano-ui/behaviour": "run"})])
    cluster.store.create("jobs", big)
    cluster.advance(5)
    (message,) = {m for t, r, m in events_for(cluster, "Pod", "big-w-0") if r == "FailedScheduling"}
    assert (
        message == "0/5 nodes are unavailable: "
        "1 node(s) had untolerated taint {dedicated: infra}, 4 Insufficient cpu."
    )
    tolerant = copy.deepcopy(big)
    tolerant["metadata"]["name"] = "tolerant"
    tolerant["spec"]["tasks"][0]["template"]["spec"]["tolerations"] = [
        {"key": "dedicated", "operator": "Exists"}
    ]
    cluster.store.create("jobs", tolerant)
    cluster.advance(5)
    assert cluster.store.get("pods", "default", "tolerant-w-0")["spec"]["nodeName"] == "tainted"


# ---------------------------------------------------------------------- components and the fault switch
def test_components_down_breaks_readiness_and_pauses_the_scheduler(cluster):
    components.install(cluster.store)
    cluster.advance(10)
    deps = {d["metadata"]["name"]: d for d in cluster.store.list("deployments", "volcano-system")[0]}
    assert set(deps) == {"volcano-scheduler", "volcano-controllers", "volcano-admission"}
    assert all(d["status"]["readyReplicas"] == 1 for d in deps.values())
    state = cluster.server.set_faults({"components_down": ["volcano-scheduler"]})
    assert state["components_down"] == ["volcano-scheduler"]
    cluster.store.create("jobs", job("waits", [task("w", 1)]))
    cluster.advance(10)
    dep = cluster.store.get("deployments", "volcano-system", "volcano-scheduler")
    available = next(c for c in dep["status"]["conditions"] if c["type"] == "Available")
    assert available["status"] == "False" and available["reason"] == "MinimumReplicasUnavailable"
    assert "readyReplicas" not in dep["status"] and dep["status"]["unavailableReplicas"] == 1
    (pod,) = cluster.store.list("pods", "volcano-system", label_selector="app=volcano-scheduler")[0]
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    pg = cluster.store.list("podgroups", "default")[0][0]
    assert "status" not in pg  # no scheduler session wrote it
    cluster.server.set_faults({"reset": True})
    cluster.advance(5)
    assert (
        cluster.store.get("deployments", "volcano-system", "volcano-scheduler")["status"]["readyReplicas"]
        == 1
    )
    assert cluster.store.list("podgroups", "default")[0][0]["status"]["phase"] in ("Inqueue", "Running")
    with pytest.raises(Exception, match="unknown Volcano components"):
        cluster.server.set_faults({"components_down": ["kube-scheduler"]})


# ---------------------------------------------------------------------- the demo
def test_demo_has_pipelines_schedules_topology_and_components():
    c = SimulatedCluster(seed=0, scenario="demo")
    try:
        c.advance(60)
        flows = {f["metadata"]["name"]: f["status"]["state"]["phase"] for f in c.store.list("jobflows")[0]}
        assert flows == {"nightly-pipeline": "Running"}
        assert len(c.store.list("jobtemplates", "ml-platform")[0]) == 4
        crons = {cj["metadata"]["name"]: cj for cj in c.store.list("cronjobs", "ml-platform")[0]}
        assert crons["weekly-report"]["spec"]["suspend"] is True
        assert crons["feature-refresh"]["status"]["lastScheduleTime"]
        tiers = {h["metadata"]["name"]: h["spec"]["tier"] for h in c.store.list("hypernodes")[0]}
        assert sorted(set(tiers.values())) == [1, 2, 3] and len(tiers) == 8
        pg = next(
            p
            for p in c.store.list("podgroups", "ml-platform")[0]
            if p["metadata"]["name"].startswith("allreduce-one-rack-")
        )
        (cond,) = [x for x in pg["status"]["conditions"] if x["type"] == "Unschedulable"]
        assert (
            "In hyperNode leaf-h100-c: 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu."
            in cond["message"]
        )
        running = {
            j["metadata"]["name"]: j["status"]["state"]["phase"]
            for j in c.store.list("jobs", "ml-platform")[0]
        }
        assert running["moe-rack-local"] == running["llm-spine"] == running["partitioned-sweep"] == "Running"
        nodes = {n["metadata"]["name"]: n for n in c.store.list("nodes")[0]}
        assert nodes["cpu-node-06"]["spec"]["unschedulable"] is True
        assert nodes["h100-node-01"]["spec"]["taints"] == [
            {"key": "dedicated", "value": "hpc", "effect": "NoSchedule"}
        ]
        assert nodes["h100-node-01"]["status"]["allocatable"]["nvidia.com/gpu"] == "8"
        deps = c.store.list("deployments", "volcano-system")[0]
        assert {d["metadata"]["name"] for d in deps} == set(components.COMPONENTS)
        assert c.controllers.errors == 0
    finally:
        c.stop()
