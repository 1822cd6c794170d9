"""bus.volcano.sh Commands and the queue state machine (REFERENCE.md §1, §3, §6)."""

from __future__ import annotations

import pytest

from dashboard.sim.store import ApiError

from .helpers import (
    COMMAND,
    JOB,
    PODGROUP,
    QUEUE,
    command,
    events_for,
    job,
    new_cluster,
    phase,
    pods_of,
    queue,
    run_until,
    task,
)


@pytest.fixture
def cluster():
    c = new_cluster(nodes=2, cpu=8)
    yield c
    c.stop()


def running_job(cluster, name="long", **kw):
    created = cluster.store.create(
        JOB, job(name, [task("main", 2, annotations={"sim.volcano-ui/behaviour": "run"})], **kw)
    )
    run_until(cluster, lambda: phase(cluster, name, created["metadata"]["namespace"]) == "Running", 30)
    return cluster.store.get(JOB, created["metadata"]["namespace"], name)


def test_abort_then_resume(cluster):
    target = running_job(cluster)
    uid = target["metadata"]["uid"]
    cmd = cluster.store.create(COMMAND, command("default", "AbortJob", target))
    cluster.advance(1)
    with pytest.raises(ApiError):  # the controller deletes the Command first
        cluster.store.get(COMMAND, "default", cmd["metadata"]["name"])
    issued = [e for e in events_for(cluster, target) if e["reason"] == "CommandIssued"]
    assert issued[0]["message"] == (
        "Start to execute command AbortJob, and clean it up to make sure executed not more than once."
    )
    assert phase(cluster, "long") == "Aborting"
    assert all(p["metadata"].get("deletionTimestamp") for p in pods_of(cluster, "long"))  # Terminating
    assert cluster.store.get(JOB, "default", "long")["status"]["terminating"] == 2
    run_until(cluster, lambda: phase(cluster, "long") == "Aborted", 10)
    assert pods_of(cluster, "long") == []
    with pytest.raises(ApiError):
        cluster.store.get(PODGROUP, "default", f"long-{uid}")
    status = cluster.store.get(JOB, "default", "long")["status"]
    assert status["version"] == 1 and "retryCount" not in status

    cluster.store.create(COMMAND, command("default", "ResumeJob", target))
    seen = []

    def running_again():
        seen.append(phase(cluster, "long"))
        return seen[-1] == "Running"

    run_until(cluster, running_again, 40)
    status = cluster.store.get(JOB, "default", "long")["status"]
    assert status["retryCount"] == 1
    assert [c["status"] for c in status["conditions"]] == [
        "Aborting",
        "Aborted",
        "Restarting",
        "Pending",
        "Running",
    ]
    pods = pods_of(cluster, "long")
    assert len(pods) == 2
    assert {p["metadata"]["annotations"]["volcano.sh/job-version"] for p in pods} == {str(status["version"])}
    assert {p["metadata"]["annotations"]["volcano.sh/job-retry-count"] for p in pods} == {"1"}
    assert cluster.store.get(PODGROUP, "default", f"long-{uid}")["status"]["phase"] == "Running"


def test_terminate_and_restart_commands(cluster):
    a = running_job(cluster, "a")
    b = running_job(cluster, "b")
    cluster.store.create(COMMAND, command("default", "TerminateJob", a))
    cluster.store.create(COMMAND, command("default", "RestartJob", b))
    cluster.advance(1)
    assert phase(cluster, "a") == "Terminating"
    assert phase(cluster, "b") == "Restarting"
    run_until(cluster, lambda: phase(cluster, "a") == "Terminated", 10)
    run_until(cluster, lambda: phase(cluster, "b") == "Running", 40)
    assert cluster.store.get(JOB, "default", "b")["status"]["retryCount"] == 1
    cluster.advance(30)
    assert phase(cluster, "a") == "Terminated"  # terminal


def test_close_queue_with_podgroups_is_closing_then_closed(cluster):
    cluster.store.create(QUEUE, queue("team"))
    cluster.advance(1)
    q = cluster.store.get(QUEUE, None, "team")
    assert q["status"]["state"] == "Open"
    running_job(cluster, "in-team", queue_name="team")
    cluster.store.create(COMMAND, command("default", "CloseQueue", q))
    cluster.advance(1)
    assert cluster.store.get(QUEUE, None, "team")["status"]["state"] == "Closing"
    close_events = [e for e in events_for(cluster, q) if e["reason"] == "CloseQueue"]
    assert close_events and close_events[0]["message"] == "Close queue succeed"
    # A new job in a closing queue is never enqueued.
    late = cluster.store.create(JOB, job("late", [task("main", 1)], queue_name="team"))
    cluster.advance(5)
    assert (
        cluster.store.get(PODGROUP, "default", f"late-{late['metadata']['uid']}")["status"]["phase"]
        == "Pending"
    )
    cluster.store.delete(JOB, "default", "in-team")
    cluster.store.delete(JOB, "default", "late")
    cluster.advance(2)
    assert cluster.store.get(QUEUE, None, "team")["status"]["state"] == "Closed"
    cluster.store.create(COMMAND, command("default", "OpenQueue", q))
    cluster.advance(1)
    assert cluster.store.get(QUEUE, None, "team")["status"]["state"] == "Open"


def test_closing_a_parent_closes_and_reopens_its_children(cluster):
    cluster.store.create(QUEUE, queue("dept"))
    cluster.store.create(QUEUE, queue("dept-a", parent="dept"))
    cluster.store.create(QUEUE, queue("dept-b", parent="dept"))
    cluster.advance(1)
    dept = cluster.store.get(QUEUE, None, "dept")
    b = cluster.store.get(QUEUE, None, "dept-b")
    cluster.store.create(COMMAND, command("default", "CloseQueue", b))  # closed on its own
    cluster.advance(1)
    cluster.store.create(COMMAND, command("default", "CloseQueue", dept))
    cluster.advance(1)
    a = cluster.store.get(QUEUE, None, "dept-a")
    assert a["status"]["state"] == "Closed"
    assert a["metadata"]["annotations"]["volcano.sh/closed-by-parent"] == "true"
    cluster.store.create(COMMAND, command("default", "OpenQueue", dept))
    cluster.advance(1)
    assert cluster.store.get(QUEUE, None, "dept-a")["status"]["state"] == "Open"
    assert "volcano.sh/closed-by-parent" not in (
        cluster.store.get(QUEUE, None, "dept-a")["metadata"].get("annotations") or {}
    )
    assert cluster.store.get(QUEUE, None, "dept-b")["status"]["state"] == "Closed"


def test_queue_capability_limits_admission_and_parent_gets_allocated(cluster):
    cluster.store.create(QUEUE, queue("small", capability={"cpu": "2"}))
    cluster.store.create(QUEUE, queue("leaf", parent="small"))
    cluster.advance(1)
    assert cluster.store.get(QUEUE, None, "leaf")["spec"]["parent"] == "small"
    ok = cluster.store.create(
        JOB,
        job(
            "fits",
            [task("main", 2, cpu="1", annotations={"sim.volcano-ui/behaviour": "run"})],
            queue_name="leaf",
        ),
    )
    run_until(cluster, lambda: phase(cluster, "fits") == "Running", 30)
    blocked = cluster.store.create(JOB, job("blocked", [task("main", 1, cpu="1")], queue_name="leaf"))
    cluster.advance(5)
    pg = cluster.store.get(PODGROUP, "default", f"blocked-{blocked['metadata']['uid']}")
    assert pg["status"]["phase"] == "Pending"
    msg = next(c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable")["message"]
    assert msg.endswith("Origin reason is: queue resource quota insufficient: insufficient cpu")
    assert cluster.store.get(QUEUE, None, "small")["status"]["allocated"]["cpu"] == "2"
    assert cluster.store.get(QUEUE, None, "leaf")["status"]["allocated"]["cpu"] == "2"
    cluster.store.delete(JOB, "default", "fits")
    run_until(cluster, lambda: phase(cluster, "blocked") == "Running", 30)
    assert ok  # keeps the name used
