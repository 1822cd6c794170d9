from datetime import UTC, datetime

import pytest

from dashboard.volcano import states as vs
from dashboard.volcano.phases import FINAL_JOB_PHASES, JOB_PHASES

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


# -- what needs a look first ------------------------------------------------------------------------


def _job_in(phase_name, **status):
    return {"metadata": {"name": "j"}, "status": {"state": {"phase": phase_name}, **status}, "spec": {}}


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        ({}, "waiting"),
        (_job_in("Pending"), "waiting"),
        (_job_in("Restarting"), "failing"),
        (_job_in("Running", failed=1, running=2), "failing"),
        (_job_in("Running", running=2), "running"),
        (_job_in("Aborting"), "in_transition"),
        (_job_in("Completing"), "in_transition"),
        (_job_in("Terminating"), "in_transition"),
        (_job_in("SomethingNew"), "in_transition"),
        (_job_in("Failed", failed=3), "failed"),
        (_job_in("Aborted"), "stopped"),
        (_job_in("Terminated"), "stopped"),
        (_job_in("Completed"), "finished"),
    ],
)
def test_job_attention_classes(job, expected):
    assert vs.job_attention(job) == expected


def test_a_running_job_below_min_available_is_failing():
    job = _job_in("Running", running=1)
    job["spec"] = {"minAvailable": 3, "tasks": [{"name": "w", "replicas": 3}]}
    assert vs.job_attention(job) == "failing"


def test_every_job_phase_has_a_class_and_final_ones_come_last():
    classes = {p: vs.job_attention(_job_in(p)) for p in JOB_PHASES}
    live = [vs.attention_rank(c) for p, c in classes.items() if p not in FINAL_JOB_PHASES and p != "Aborted"]
    final = [vs.attention_rank(c) for p, c in classes.items() if p in FINAL_JOB_PHASES]
    assert max(live) < min(final)


@pytest.mark.parametrize(
    ("phase_name", "expected"),
    [
        ("", "waiting"),
        ("Pending", "waiting"),
        ("Inqueue", "waiting"),
        ("Unknown", "failing"),
        ("Running", "running"),
        ("Completed", "finished"),
        ("Odd", "in_transition"),
    ],
)
def test_podgroup_attention_classes(phase_name, expected):
    pg = {
        "metadata": {"name": "g"},
        "spec": {"minMember": 0},
        "status": {"phase": phase_name} if phase_name else {},
    }
    assert vs.podgroup_attention(pg) == expected
