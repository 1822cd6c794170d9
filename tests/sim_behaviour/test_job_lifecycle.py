"""A Volcano Job through the job controller, the gang scheduler and the kubelet (REFERENCE.md §1, §2, §4)."""

from __future__ import annotations

import pytest

from dashboard.sim.store import ApiError

from .helpers import JOB, POD, PODGROUP, QUEUE, events_for, job, new_cluster, phase, pods_of, run_until, task


@pytest.fixture
def cluster():
    c = new_cluster(nodes=2, cpu=8)
    yield c
    c.stop()


def two_task_job(**kw):
    return job(
        "train",
        [
            task("ps", 1, cpu="1", annotations={"sim.volcano-ui/duration": "20"}),
            task("worker", 2, cpu="2", memory="2Gi", annotations={"sim.volcano-ui/duration": "20"}),
        ],
        labels={"team": "vision"},
        annotations={"owner": "alice"},
        **kw,
    )


def test_two_task_job_runs_to_completion_with_podgroup_and_pods(cluster):
    created = cluster.store.create(JOB, two_task_job())
    uid = created["metadata"]["uid"]
    cluster.advance(1)
    assert phase(cluster, "train") == "Pending"
    status = cluster.store.get(JOB, "default", "train")["status"]
    assert status["minAvailable"] == 3
    assert [c["status"] for c in status["conditions"]] == ["Pending"]
    for zero in ("running", "succeeded", "failed", "terminating", "unknown", "version", "retryCount"):
        assert zero not in status  # Go omitempty: zero counters absent

    pg = cluster.store.get(PODGROUP, "default", f"train-{uid}")
    assert pg["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "train",
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert pg["metadata"]["labels"]["team"] == "vision"
    assert pg["metadata"]["annotations"]["owner"] == "alice"
    assert pg["spec"]["minMember"] == 3
    assert pg["spec"]["minTaskMember"] == {"ps": 1, "worker": 2}
    assert pg["spec"]["queue"] == "default"
    assert pg["spec"]["minResources"] == {
        "count/pods": "3",
        "pods": "3",
        "cpu": "5",
        "requests.cpu": "5",
        "memory": "5Gi",
        "requests.memory": "5Gi",
    }

    run_until(cluster, lambda: phase(cluster, "train") == "Running", 30)
    pods = pods_of(cluster, "train")
    assert [p["metadata"]["name"] for p in pods] == ["train-ps-0", "train-worker-0", "train-worker-1"]
    worker = pods[2]
    assert worker["metadata"]["ownerReferences"][0]["uid"] == uid
    assert worker["spec"]["schedulerName"] == "volcano"
    assert worker["spec"]["nodeName"].startswith("node-")
    ann, labels = worker["metadata"]["annotations"], worker["metadata"]["labels"]
    assert ann["scheduling.k8s.io/group-name"] == f"train-{uid}"
    assert ann["volcano.sh/job-name"] == "train"
    assert ann["volcano.sh/task-spec"] == "worker"
    assert ann["volcano.sh/task-index"] == "1"
    assert ann["volcano.sh/queue-name"] == "default"
    assert ann["volcano.sh/job-version"] == "0"
    assert ann["volcano.sh/job-retry-count"] == "0"
    assert ann["volcano.sh/template-uid"] == "train-worker"
    assert labels == {
        "role": "worker",
        "volcano.sh/job-name": "train",
        "volcano.sh/job-namespace": "default",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/task-index": "1",
        "volcano.sh/queue-name": "default",
    }
    status = cluster.store.get(JOB, "default", "train")["status"]
    assert status["running"] == 3
    assert status["taskStatusCount"] == {"ps": {"phase": {"Running": 1}}, "worker": {"phase": {"Running": 2}}}
    pg = cluster.store.get(PODGROUP, "default", f"train-{uid}")
    assert pg["status"]["phase"] == "Running"
    assert pg["status"]["running"] == 3
    scheduled = [c for c in pg["status"]["conditions"] if c["type"] == "Scheduled"]
    assert scheduled and scheduled[0]["reason"] == "tasks in gang are ready to be scheduled"
    queue = cluster.store.get(QUEUE, None, "default")
    assert queue["status"]["allocated"]["cpu"] == "5"
    assert cluster.store.get(QUEUE, None, "root")["status"]["allocated"]["cpu"] == "5"  # summed into parents
    reasons = {e["reason"] for e in events_for(cluster, worker)}
    assert {"Scheduled", "Pulling", "Pulled", "Created", "Started"} <= reasons
    sched = next(e for e in events_for(cluster, worker) if e["reason"] == "Scheduled")
    assert sched["message"] == f"Successfully assigned default/train-worker-1 to {worker['spec']['nodeName']}"
    assert sched["source"]["component"] == "volcano"
    assert sched["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "train-worker-1",
        "namespace": "default",
        "uid": worker["metadata"]["uid"],
        "resourceVersion": sched["involvedObject"]["resourceVersion"],
    }

    run_until(cluster, lambda: phase(cluster, "train") == "Completed", 60)
    status = cluster.store.get(JOB, "default", "train")["status"]
    assert [c["status"] for c in status["conditions"]] == ["Pending", "Running", "Completed"]
    assert status["succeeded"] == 3 and "running" not in status
    assert status["version"] == 1
    assert status["runningDuration"].endswith("s")
    with pytest.raises(ApiError):  # every whole-job kill deletes the PodGroup
        cluster.store.get(PODGROUP, "default", f"train-{uid}")
    assert [p["status"]["phase"] for p in pods_of(cluster, "train")] == ["Succeeded"] * 3
    assert cluster.store.get(QUEUE, None, "default")["status"]["allocated"]["cpu"] == "0"


def test_pods_are_created_only_after_the_podgroup_is_admitted(cluster):
    cluster.store.create(JOB, two_task_job())
    cluster.advance(1)  # the job controller creates the PodGroup; no pods yet
    assert pods_of(cluster, "train") == []
    run_until(cluster, lambda: len(pods_of(cluster, "train")) == 3, 5)


def test_gang_that_cannot_fit_stays_pending_with_unschedulable_condition_and_events(cluster):
    big = job("huge", [task("worker", 3, cpu="6")])  # 18 cpu > 16 in the cluster
    created = cluster.store.create(JOB, big)
    cluster.advance(15)
    assert phase(cluster, "huge") == "Pending"
    assert pods_of(cluster, "huge") == []  # a Pending PodGroup has no pods
    pg = cluster.store.get(PODGROUP, "default", f"huge-{created['metadata']['uid']}")
    assert pg["status"]["phase"] == "Pending"
    cond = next(c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable")
    assert cond["status"] == "True"
    assert cond["reason"] == "NotEnoughResources"
    assert cond["message"].startswith(
        "3/0 tasks in gang unschedulable: pod group is not ready, 3 minAvailable"
    )
    assert "insufficient cpu" in cond["message"]
    pg_events = {(e["type"], e["reason"]) for e in events_for(cluster, pg)}
    assert ("Warning", "Unschedulable") in pg_events
    job_events = [e for e in events_for(cluster, created) if e["reason"] == "PodGroupPending"]
    assert job_events and job_events[0]["type"] == "Warning"
    assert job_events[0]["message"].startswith(
        "PodGroup default:huge unschedulable, reason: 3/0 tasks in gang"
    )
    warning = next(e for e in events_for(cluster, pg) if e["type"] == "Warning")
    assert warning["count"] >= 1 and warning["firstTimestamp"] <= warning["lastTimestamp"]


def test_gang_that_fits_the_queue_but_no_node_is_inqueue_with_failed_scheduling(cluster):
    created = cluster.store.create(JOB, job("wide", [task("worker", 2, cpu="6"), task("extra", 1, cpu="3")]))
    cluster.advance(5)
    pg = cluster.store.get(PODGROUP, "default", f"wide-{created['metadata']['uid']}")
    assert pg["status"]["phase"] == "Inqueue"  # 15 cpu fit the cluster's 16 in total, not per node
    pods = pods_of(cluster, "wide")
    assert len(pods) == 3 and not any(p["spec"].get("nodeName") for p in pods)
    cond = next(c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable")
    assert "Origin reason is" in cond["message"] and "Insufficient cpu" in cond["message"]
    failed = [e for p in pods for e in events_for(cluster, p) if e["reason"] == "FailedScheduling"]
    assert failed and all(e["type"] == "Warning" for e in failed)
    scheduled_cond = [c for c in pods[0]["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled_cond[0]["status"] == "False"


def test_deleting_a_job_deletes_its_podgroup_and_pods(cluster):
    created = cluster.store.create(JOB, two_task_job())
    run_until(cluster, lambda: phase(cluster, "train") == "Running", 30)
    cluster.store.delete(JOB, "default", "train")
    cluster.advance(1)
    assert pods_of(cluster, "train") == []
    with pytest.raises(ApiError):
        cluster.store.get(PODGROUP, "default", f"train-{created['metadata']['uid']}")
    cluster.advance(5)
    assert cluster.store.get(QUEUE, None, "default")["status"]["allocated"]["cpu"] == "0"


def test_pod_failure_policy_restarts_until_max_retry_then_failed(cluster):
    flaky = job(
        "flaky",
        [task("main", 2, annotations={"sim.volcano-ui/behaviour": "fail", "sim.volcano-ui/duration": "5"})],
        policies=[{"event": "PodFailed", "action": "RestartJob"}],
        maxRetry=2,
    )
    cluster.store.create(JOB, flaky)
    seen = set()

    def done():
        seen.add(phase(cluster, "flaky"))
        return phase(cluster, "flaky") == "Failed"

    run_until(cluster, done, 200)
    status = cluster.store.get(JOB, "default", "flaky")["status"]
    assert {"Pending", "Running", "Restarting", "Failed"} <= seen
    assert status["retryCount"] == 2
    assert [c["status"] for c in status["conditions"]][-1] == "Failed"
    assert len({c["status"] for c in status["conditions"]}) == len(status["conditions"])  # one per phase


def test_failed_pods_without_policy_fail_the_job(cluster):
    cluster.store.create(
        JOB,
        job(
            "bad",
            [
                task(
                    "main",
                    2,
                    annotations={"sim.volcano-ui/behaviour": "fail", "sim.volcano-ui/duration": "3"},
                )
            ],
        ),
    )
    run_until(cluster, lambda: phase(cluster, "bad") == "Failed", 60)
    status = cluster.store.get(JOB, "default", "bad")["status"]
    assert status["failed"] == 2
    pod = pods_of(cluster, "bad")[0]
    term = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 1 and term["reason"] == "Error"


def test_crashloop_and_image_pull_backoff(cluster):
    cluster.store.create(
        JOB,
        job(
            "crashy",
            [task("main", 1, restart="OnFailure", annotations={"sim.volcano-ui/behaviour": "crashloop"})],
        ),
    )
    cluster.store.create(
        JOB, job("noimage", [task("main", 1, annotations={"sim.volcano-ui/behaviour": "imagepullbackoff"})])
    )
    cluster.advance(60)
    crash = pods_of(cluster, "crashy")[0]
    cs = crash["status"]["containerStatuses"][0]
    assert crash["status"]["phase"] == "Running"
    assert cs["restartCount"] >= 2
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    reasons = {e["reason"] for e in events_for(cluster, crash)}
    assert "BackOff" in reasons
    pull = pods_of(cluster, "noimage")[0]
    waiting = pull["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
    assert pull["status"]["phase"] == "Pending" and waiting in ("ImagePullBackOff", "ErrImagePull")
    messages = [e["message"] for e in events_for(cluster, pull) if e["reason"] == "Failed"]
    assert any(m.startswith('Failed to pull image "busybox:1.36"') for m in messages)
    assert phase(cluster, "noimage") == "Pending"


def test_ttl_seconds_after_finished_deletes_the_job(cluster):
    cluster.store.create(
        JOB,
        job(
            "short",
            [task("main", 1, annotations={"sim.volcano-ui/duration": "5"})],
            ttlSecondsAfterFinished=30,
        ),
    )
    run_until(cluster, lambda: phase(cluster, "short") == "Completed", 60)
    cluster.advance(25)
    assert cluster.store.get(JOB, "default", "short")
    cluster.advance(10)
    with pytest.raises(ApiError):
        cluster.store.get(JOB, "default", "short")
    assert pods_of(cluster, "short") == []


def test_same_seed_same_history():
    def run(seed):
        c = new_cluster(seed=seed)
        for i in range(3):
            c.store.create(JOB, job(f"j{i}", [task("main", 2)]))  # default durations come from the seed
        c.advance(150)
        out = [
            (p["metadata"]["name"], p["status"]["phase"], p["spec"].get("nodeName"))
            for p in c.store.list(POD)[0]
        ]
        return out, [phase(c, f"j{i}") for i in range(3)]

    assert run(7) == run(7)
