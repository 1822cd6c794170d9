"""Lifecycle policies and completion rules of Volcano's job controller (REFERENCE.md §1)."""

from __future__ import annotations

import pytest

from .helpers import JOB, job, new_cluster, phase, pods_of, run_until, task


@pytest.fixture
def cluster():
    c = new_cluster(nodes=2, cpu=8)
    yield c
    c.stop()


RUN = {"sim.volcano-ui/behaviour": "run"}


def test_task_completed_complete_job_goes_through_completing(cluster):
    launcher = task(
        "launcher",
        1,
        annotations={"sim.volcano-ui/duration": "10"},
        policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
    )
    workers = task("worker", 2, annotations=RUN)
    cluster.store.create(JOB, job("mpi", [launcher, workers]))
    seen = []

    def done():
        seen.append(phase(cluster, "mpi"))
        return seen[-1] == "Completed"

    run_until(cluster, done, 60)
    assert "Completing" in seen
    status = cluster.store.get(JOB, "default", "mpi")["status"]
    assert [c["status"] for c in status["conditions"]] == ["Pending", "Running", "Completing", "Completed"]
    # The soft kill keeps the finished launcher and removes the running workers.
    assert [p["metadata"]["name"] for p in pods_of(cluster, "mpi")] == ["mpi-launcher-0"]
    assert any(
        e["reason"] == "ExecuteAction" and e["message"] == "Start to execute action CompleteJob "
        for e in cluster.store.list("events")[0]
        if e["involvedObject"]["name"] == "mpi"
    )


def test_min_success_completes_early(cluster):
    cluster.store.create(
        JOB,
        job(
            "ms",
            [task("a", 1, annotations={"sim.volcano-ui/duration": "5"}), task("b", 1, annotations=RUN)],
            minSuccess=1,
        ),
    )
    run_until(cluster, lambda: phase(cluster, "ms") == "Completed", 60)


@pytest.mark.parametrize(("job_min", "expected"), [(2, "Failed"), (1, "Completed")])
def test_task_min_available_counts_only_when_the_job_min_covers_the_tasks(cluster, job_min, expected):
    # a: 3 succeed (task minAvailable 1); b: its 1 pod fails (task minAvailable 1). Succeeded 3 >= the
    # Job's minAvailable either way, but with minAvailable >= sum of the tasks' (2) every task must
    # reach its own minAvailable in Succeeded pods, and b does not.
    ok = {"sim.volcano-ui/duration": "5"}
    bad = {"sim.volcano-ui/behaviour": "fail", "sim.volcano-ui/duration": "5"}
    spec = [task("a", 3, min_available=1, annotations=ok), task("b", 1, min_available=1, annotations=bad)]
    cluster.store.create(JOB, job("strict", spec, min_available=job_min))
    run_until(cluster, lambda: phase(cluster, "strict") in ("Completed", "Failed"), 60)
    assert phase(cluster, "strict") == expected


def test_restart_task_policy_keeps_the_podgroup_and_recreates_the_pod(cluster):
    flaky = task(
        "flaky",
        1,
        annotations={"sim.volcano-ui/behaviour": "fail", "sim.volcano-ui/duration": "5"},
        policies=[{"event": "PodFailed", "action": "RestartTask"}],
    )
    created = cluster.store.create(JOB, job("rt", [flaky, task("steady", 1, annotations=RUN)], maxRetry=10))
    first_uid = None

    def restarted():
        nonlocal first_uid
        pods = {p["metadata"]["name"]: p for p in pods_of(cluster, "rt")}
        pod = pods.get("rt-flaky-0")
        if pod is None:
            return False
        if first_uid is None:
            first_uid = pod["metadata"]["uid"]
        return pod["metadata"]["uid"] != first_uid

    run_until(cluster, restarted, 60)
    status = cluster.store.get(JOB, "default", "rt")["status"]
    assert status["retryCount"] >= 1
    assert "Restarting" not in [c["status"] for c in status["conditions"]]  # no whole-job kill
    assert cluster.store.get("podgroups", "default", f"rt-{created['metadata']['uid']}")


def test_exit_code_policy(cluster):
    crash = task(
        "main",
        1,
        annotations={
            "sim.volcano-ui/behaviour": "fail",
            "sim.volcano-ui/duration": "4",
            "sim.volcano-ui/exit-code": "3",
        },
    )
    cluster.store.create(JOB, job("exit3", [crash], policies=[{"exitCode": 3, "action": "AbortJob"}]))
    run_until(cluster, lambda: phase(cluster, "exit3") == "Aborted", 60)
    cluster.store.create(
        JOB, job("exit4", [dict(crash, name="main")], policies=[{"exitCode": 4, "action": "AbortJob"}])
    )
    run_until(cluster, lambda: phase(cluster, "exit4") == "Failed", 60)  # no matching policy
