from datetime import UTC, datetime

from dashboard.volcano import states as vs

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _cond(ctype: str, at: str | None) -> dict:
    c = {"type": ctype, "status": "True"}
    if at:
        c["lastTransitionTime"] = at
    return c


def test_current_condition_is_the_newest_true_one_and_the_rest_is_history():
    old, new = _cond("Scheduled", "2026-11-29T09:00:00Z"), _cond("Unschedulable", "2026-11-29T09:50:00Z")
    pg = {"status": {"conditions": [new, old]}}
    assert vs.current_condition(pg).type == "Unschedulable"
    assert [c.type for c in vs.condition_history(pg)] == ["Scheduled"]
    assert vs.current_condition({}) is None


def test_counters_are_checked_against_pods_terminating_from_deletion_timestamp():
    job = {"status": {"running": 2, "terminating": 0}}
    pods = [
        {"metadata": {"deletionTimestamp": "2026-11-29T09:59:00Z"}, "status": {"phase": "Running"}},
        {"status": {"phase": "Running"}},
    ]
    checks = vs.counter_mismatches(job, pods)
    assert [(c.counter, c.reported, c.observed) for c in checks] == [("running", 2, 1), ("terminating", 0, 1)]
    assert vs.counter_mismatches({}, pods) == []


def test_why_no_pods_names_the_actual_cause():
    job = {"spec": {"tasks": [{"replicas": 1}]}, "status": {"state": {"phase": "Pending"}}}
    assert vs.why_no_pods(job, {"status": {"phase": "Pending"}}, ()).cause == "not_admitted"
    failed = [{"type": "Warning", "reason": "FailedCreate", "message": "quota"}]
    assert vs.why_no_pods(job, {"status": {"phase": "Inqueue"}}, failed) == vs.NoPods(
        "create_failed", "Pending", "quota"
    )
    assert vs.why_no_pods({**job, "spec": {"tasks": []}}, None, ()).cause == "no_replicas"
    assert vs.why_no_pods({**job, "status": {"state": {"phase": "Completed"}}}, None, ()).cause == "finished"


def test_stuck_after_the_threshold_with_the_pods_that_hold_it():
    job = {"status": {"state": {"phase": "Terminating", "lastTransitionTime": "2026-11-29T09:40:00Z"}}}
    pod = {
        "metadata": {"name": "p", "deletionTimestamp": "2026-11-29T09:40:00Z", "finalizers": ["x/hold"]},
        "status": {"phase": "Running"},
    }
    stuck = vs.job_stuck(job, [pod], NOW, 600)
    assert stuck is not None and stuck.holders[0].finalizers == ("x/hold",)
    assert vs.job_stuck(job, [pod], NOW, 3600) is None
    assert vs.job_stuck({"status": {"state": {"phase": "Running"}}}, [], NOW, 1) is None


def test_wait_question_restarting_waits_only_until_the_gang_is_back():
    restarting = {"status": {"state": {"phase": "Restarting"}, "minAvailable": 1, "running": 1}}
    assert vs.job_wait_question(restarting, {"status": {"phase": "Pending"}}) == "pending"
    assert vs.job_wait_question(restarting, {"status": {"phase": "Running"}}) == ""
    assert (
        vs.job_wait_question({"status": {"state": {"phase": "Aborted"}}}, {"status": {"phase": "Pending"}})
        == ""
    )
