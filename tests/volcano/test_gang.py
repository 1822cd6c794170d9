"""dashboard.volcano.gang: one readiness rule per object, as Volcano decides it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dashboard.volcano import gang as g
from tests.volcano.conftest import shared_yaml


def _job(status=None, spec=None):
    job = {"kind": "Job", "metadata": {"name": "j", "namespace": "n"}, "spec": spec or {"tasks": []}}
    if status is not None:
        job["status"] = status
    return job


def test_running_and_succeeded_pods_count_toward_a_jobs_gang():
    gang = g.job_gang(_job({"minAvailable": 4, "running": 3, "succeeded": 1, "failed": 1}))
    assert (gang.running, gang.ready, gang.required) == (3, 4, 4) and gang.met and not gang.short
    assert g.job_gang(_job({"minAvailable": 4, "running": 3})).short


def test_failed_pods_hold_no_place_in_the_gang():
    # An Aborted Job whose only pod failed (PodFailed -> AbortJob keeps the failed pod).
    gang = g.job_gang(_job({"state": {"phase": "Aborted"}, "minAvailable": 1, "failed": 1}))
    assert gang.ready == 0 and not gang.met and gang.short
    task = {"name": "w", "replicas": 2, "minAvailable": 2}
    assert not g.task_gang(task, {"Running": 1, "Failed": 1}).met


def test_a_gang_of_zero_is_no_gang():
    gang = g.job_gang(_job({"state": {"phase": "Pending"}, "minAvailable": 0}))
    assert gang.gangless and not gang.met and not gang.short
    assert not g.job_gang(_job({"minAvailable": 0})).gangless  # counters not reported: unknown
    pg = {"spec": {"minMember": 0}, "status": {"phase": "Inqueue"}}
    assert g.podgroup_gang(pg).gangless and not g.podgroup_gang(pg).met


def test_a_job_without_tasks():
    assert g.job_has_no_tasks(_job(spec={"minAvailable": 0}))
    assert g.job_has_no_tasks(_job(spec={"tasks": []}))
    assert not g.job_has_no_tasks(_job(spec={"tasks": [{"name": "w", "replicas": 1}]}))
    assert not g.job_has_no_tasks({"metadata": {"name": "j"}})  # no spec read: nothing claimed


def test_a_podgroups_gang_counts_running_and_succeeded():
    pg = {"spec": {"minMember": 3}, "status": {"phase": "Running", "running": 2, "succeeded": 1, "failed": 5}}
    gang = g.podgroup_gang(pg)
    assert (gang.ready, gang.required) == (3, 3) and gang.met
    pg["status"]["succeeded"] = 0
    assert g.podgroup_gang(pg).short and g.podgroup_below_gang(pg)
    pg["status"]["phase"] = "Inqueue"
    assert not g.podgroup_below_gang(pg)  # only placed gangs can fall below


@pytest.mark.parametrize(
    "status",
    [
        {"minAvailable": 2, "running": -1, "succeeded": 5},
        {"minAvailable": -2, "running": 0},
        {"minAvailable": 1, "running": True},  # count(True) is 0: short, not "1 running"
    ],
)
def test_negative_counters_prove_nothing(status):
    gang = g.job_gang(_job(status))
    if min(v for v in status.values() if not isinstance(v, bool)) < 0:
        assert not gang.trusted and not gang.met and not gang.short
    else:
        assert gang.short


def test_negative_podgroup_counters_are_not_below_gang():
    pg = {"spec": {"minMember": 1}, "status": {"phase": "Running", "running": -5, "succeeded": 1}}
    assert not g.podgroup_below_gang(pg)


def test_a_negative_counter_is_unknown_not_zero():
    gang = g.job_gang(_job({"minAvailable": 2, "running": -5}))
    assert (gang.running, gang.ready, gang.required) == (None, None, 2)
    assert not (gang.trusted or gang.met or gang.short or gang.gangless)
    gang = g.job_gang(_job({"minAvailable": 2, "running": 1, "succeeded": -1}))
    assert (gang.running, gang.ready, gang.required) == (1, None, 2) and not gang.trusted
    unreported = g.job_gang(_job(spec={"minAvailable": 2, "tasks": [{"name": "w", "replicas": 2}]}))
    assert (unreported.running, unreported.ready, unreported.required, unreported.known) == (
        None,
        None,
        2,
        False,
    )


@pytest.mark.parametrize("value", [-4, "x", 1.5, True, {"n": 1}])
def test_an_invalid_min_member_is_unknown_not_a_gang_of_zero(value):
    pg = {"spec": {"minMember": value}, "status": {"phase": "Inqueue", "running": 0}}
    assert g.podgroup_min_member(pg) is None
    gang = g.podgroup_gang(pg)
    assert gang.required is None and not (gang.trusted or gang.gangless or gang.met or gang.short)
    assert (
        g.podgroup_min_member({"spec": {}}) == 0 and g.podgroup_min_member({"spec": {"minMember": None}}) == 0
    )
    assert g.podgroup_min_member({"spec": {"minMember": "3"}}) == 3  # as count() reads it


def test_podgroup_counters_for_display():
    pg = {"spec": {"minMember": 1}, "status": {"phase": "Inqueue", "running": -1, "failed": -3}}
    assert g.podgroup_counters(pg) == {"running": None, "succeeded": 0, "failed": None}
    assert g.podgroup_counters({"spec": {}}) == {"running": None, "succeeded": None, "failed": None}


def test_min_available_defaults():
    tasks = [{"name": "a", "replicas": 2}, {"name": "b", "replicas": 3, "minAvailable": 1}]
    assert g.job_min_available(_job(spec={"tasks": tasks})) == 3
    assert g.job_min_available(_job(spec={"tasks": tasks, "minAvailable": 4})) == 4
    assert g.job_min_available(_job({"minAvailable": 5}, {"tasks": tasks, "minAvailable": 4})) == 5
    assert g.job_total_replicas(_job(spec={"tasks": [*tasks, {"replicas": -4}, "junk"]})) == 5


def test_task_gang_from_task_status_count():
    job = _job(
        {"taskStatusCount": {"w": {"phase": {"Running": 2, "Succeeded": "1", "Pending": 1}}}},
        {"tasks": [{"name": "w", "replicas": 4, "minAvailable": 3}]},
    )
    (task,) = g.job_tasks(job)
    phases = g.task_phase_counts(job, "w")
    assert phases == {"Running": 2, "Succeeded": 1, "Pending": 1}
    gang = g.task_gang(task, phases)
    assert (gang.ready, gang.required, gang.total) == (3, 3, 4) and gang.met


def test_min_resources_of_the_elastic_job_example():
    (job,) = shared_yaml("examples/elastic-job.yaml")
    assert g.job_min_available(job) == 3 and g.job_total_replicas(job) == 10
    # The first minAvailable pods in spec order: three workers of 1 cpu.
    assert g.job_min_resources(job, g.job_min_available(job)) == {"cpu": Decimal(3)}


def test_pod_template_requests_follow_the_scheduler():
    template = {
        "spec": {
            "containers": [
                {"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}},
                {"resources": {"requests": {"cpu": "500m", "memory": "bad"}}},
            ],
            "initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
        }
    }
    # Limits stand in for a missing request; an init container counts at its largest.
    assert g.pod_template_requests(template) == {"cpu": Decimal(4), "memory": Decimal(2**30)}


def test_podgroup_min_resources_map_quota_keys():
    pg = {
        "spec": {
            "minResources": {"requests.cpu": "2", "cpu": "3", "limits.cpu": "9", "pods": "4", "x": "bad"}
        }
    }
    assert g.podgroup_min_resources(pg) == {"cpu": Decimal(3)}
    assert g.podgroup_min_resources({"spec": None}) == {}
