"""dashboard.volcano.pods: kubectl's pod columns and Volcano's pod keys."""

from __future__ import annotations

import pytest

from dashboard.volcano import pods as p


def _pod(status, spec=None, meta=None):
    return {
        "metadata": {"name": "p", "namespace": "n", **(meta or {})},
        "spec": spec or {"containers": [{"name": "main"}]},
        "status": status,
    }


def _waiting(reason, name="main", restarts=0):
    return {"name": name, "restartCount": restarts, "state": {"waiting": {"reason": reason}}}


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ({"phase": "Running", "containerStatuses": [{"ready": True, "state": {"running": {}}}]}, "Running"),
        ({"phase": "Pending", "containerStatuses": [_waiting("ImagePullBackOff")]}, "ImagePullBackOff"),
        ({"phase": "Running", "containerStatuses": [_waiting("CrashLoopBackOff")]}, "CrashLoopBackOff"),
        ({"phase": "Failed", "reason": "Evicted"}, "Evicted"),
        (
            {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"reason": "Completed"}}}]},
            "Completed",
        ),
        (
            {"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 2}}}]},
            "ExitCode:2",
        ),
        ({"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"signal": 9}}}]}, "Signal:9"),
        (
            {"phase": "Pending", "conditions": [{"type": "PodScheduled", "reason": "SchedulingGated"}]},
            "SchedulingGated",
        ),
        ({}, "Unknown"),
    ],
)
def test_status_column(status, shown):
    assert p.pod_display_status(_pod(status)).status == shown


def test_init_containers():
    spec = {"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "main"}]}
    running = {"phase": "Pending", "initContainerStatuses": [{"name": "a", "state": {"running": {}}}]}
    assert p.pod_display_status(_pod(running, spec)).status == "Init:0/2"
    failed = {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 1}}}],
    }
    assert p.pod_display_status(_pod(failed, spec)).status == "Init:ExitCode:1"
    looping = {"phase": "Pending", "initContainerStatuses": [_waiting("CrashLoopBackOff", "a")]}
    assert p.pod_display_status(_pod(looping, spec)).status == "Init:CrashLoopBackOff"
    assert p.pod_is_crashlooping(_pod(looping, spec))


def test_ready_restarts_and_deletion():
    status = {
        "phase": "Running",
        "containerStatuses": [
            {"ready": True, "restartCount": 3, "state": {"running": {}}},
            {"ready": False, "restartCount": -4, "state": {"running": {}}},  # below 0 counts as 0
        ],
    }
    pod = _pod(status, {"containers": [{"name": "a"}, {"name": "b"}]})
    shown = p.pod_display_status(pod)
    assert (shown.ready_text, shown.restarts) == ("1/2", 3)
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert p.pod_display_status(pod).status == "Terminating"
    pod["status"]["reason"] = "NodeLost"
    assert p.pod_display_status(pod).status == "Unknown"


def test_blockers():
    status = {
        "conditions": [{"type": "PodScheduled", "status": "False", "message": "0/3 nodes are available"}],
        "containerStatuses": [
            {"name": "main", "state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}},
            {"name": "side", "state": {"waiting": {"reason": "ContainerCreating"}}},
        ],
    }
    assert p.pod_blockers(_pod(status)) == ["0/3 nodes are available", "main: ErrImagePull — not found"]


def test_volcano_keys():
    pod = _pod(
        {},
        meta={
            "labels": {
                "volcano.sh/job-name": "j",
                "volcano.sh/task-spec": "worker",
                "volcano.sh/task-index": "2",
            },
            "annotations": {"scheduling.k8s.io/group-name": "j-uid"},
        },
    )
    assert (p.pod_job_name(pod), p.pod_task(pod), p.pod_task_index(pod), p.pod_group_name(pod)) == (
        "j",
        "worker",
        2,
        "j-uid",
    )
    assert p.pod_task_index(_pod({}, meta={"labels": {"volcano.sh/task-index": "²"}})) is None
    assert p.pod_group_name(_pod({})) is None and p.pod_job_name(_pod({})) is None


def test_exit_status():
    assert p.exit_status({"exitCode": 137, "signal": 9}) == ("137", "9")
    assert p.exit_status({"exitCode": 0, "signal": 0}) == ("0", "")
    assert p.exit_status({"exitCode": True}) is None and p.exit_status({}) is None


@pytest.mark.parametrize(
    "status,started",
    [
        ({}, False),  # no status written yet
        ({"phase": "Pending"}, False),  # no node
        (
            {"phase": "Pending", "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "X"}}}]},
            False,
        ),
        ({"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"running": {}}}]}, True),
        ({"phase": "Pending", "containerStatuses": [{"name": "c", "lastState": {"terminated": {}}}]}, True),
        ({"phase": "Running"}, True),
        ({"phase": "Failed"}, True),
    ],
)
def test_pod_not_started(status, started):
    assert p.pod_not_started(_pod(status)) is not started
