"""dashboard.volcano.failure: which policy fired, the failed containers, from plain objects."""

from __future__ import annotations

from dashboard.volcano.failure import DEFAULT_MAX_RETRY, explain_failure, failure_applies


def job(phase="Failed", *, policies=None, tasks=None, max_retry=None, retries=0, failed=0, conditions=()):
    spec = {"minAvailable": 2, "tasks": tasks or [{"name": "main", "replicas": 2}]}
    if policies is not None:
        spec["policies"] = policies
    if max_retry is not None:
        spec["maxRetry"] = max_retry
    return {
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": spec,
        "status": {
            "state": {"phase": phase},
            "retryCount": retries,
            "failed": failed,
            "conditions": [{"status": c} for c in conditions],
        },
    }


def pod(name, *, code=1, reason="Error", last=False, task="main", waiting=None):
    term = {"exitCode": code, "reason": reason, "finishedAt": f"2026-11-29T10:00:{10 + int(name[-1])}Z"}
    cs = {"name": "main", "restartCount": 1 if last else 0}
    if waiting:
        cs["state"] = {"waiting": waiting}
    elif last:
        cs["state"], cs["lastState"] = {"running": {}}, {"terminated": term}
    else:
        cs["state"] = {"terminated": term}
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {"volcano.sh/task-spec": task}},
        "status": {"phase": "Failed", "containerStatuses": [cs]},
    }


def action(message, second):
    return {
        "involvedObject": {"kind": "Job", "name": "j", "namespace": "ns"},
        "reason": "ExecuteAction",
        "message": message,
        "lastTimestamp": f"2026-11-29T10:00:{second:02d}Z",
        "count": 1,
    }


def test_applies_to_failed_aborted_terminated_and_completed_with_failures():
    assert (
        failure_applies(job("Failed"))
        and failure_applies(job("Aborted"))
        and failure_applies(job("Terminated"))
    )
    assert failure_applies(job("Completed", failed=1)) and not failure_applies(job("Completed"))
    assert not failure_applies(job("Running")) and explain_failure(job("Running"), [], []) is None


def test_restart_policy_until_max_retry_without_pods():
    j = job(policies=[{"event": "PodFailed", "action": "RestartJob"}], max_retry=2, retries=2)
    events = [
        action("Job failed on action RestartJob for retry limit reached", 40),
        action("Start to execute action RestartJob", 20),
    ]
    facts = explain_failure(j, [], events)
    assert facts.retries_exhausted and facts.max_retry == 2 and facts.max_retry_set
    assert [(p.trigger, p.action, p.scope) for p in facts.policies] == [("PodFailed", "RestartJob", "")]
    assert [a.message for a in facts.actions] == [
        "Start to execute action RestartJob",
        "Job failed on action RestartJob for retry limit reached",
    ]
    assert not facts.pods_present and facts.terminations == ()


def test_default_max_retry_task_policy_first_exit_code_and_oom():
    tasks = [{"name": "main", "replicas": 2, "policies": [{"exitCode": 137, "action": "RestartTask"}]}]
    j = job(tasks=tasks, policies=[{"events": ["PodFailed"], "action": "AbortJob"}], retries=0)
    pods = [pod("p-1", code=137, reason="OOMKilled"), pod("p-0", code=3, last=True)]
    facts = explain_failure(j, pods, [])
    assert facts.max_retry == DEFAULT_MAX_RETRY and not facts.max_retry_set
    assert [(p.trigger, p.action, p.scope) for p in facts.policies] == [
        ("exitCode 137", "RestartTask", "main"),
        ("PodFailed", "AbortJob", ""),
    ]
    first, second = facts.terminations
    assert (first.pod, first.exit_code, first.previous) == ("p-0", "3", True)  # finished first
    assert second.oom and second.reason == "OOMKilled"


def test_image_pulls_and_unschedulable_only_for_a_job_that_never_ran():
    pulling = pod("p-0", waiting={"reason": "ImagePullBackOff", "message": "Back-off pulling image x"})
    unsched = {
        "involvedObject": {"kind": "PodGroup", "name": "pg"},
        "reason": "Unschedulable",
        "message": "0/3 nodes",
    }
    facts = explain_failure(job(), [pulling], [unsched])
    assert facts.image_pulls == ("p-0/main: Back-off pulling image x",)
    assert facts.unschedulable == "0/3 nodes"
    assert explain_failure(job(conditions=("Running",)), [], [unsched]).unschedulable == ""
