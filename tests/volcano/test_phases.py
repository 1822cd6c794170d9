"""dashboard.volcano.phases: phase tables against Volcano's CRDs, classes, and the waiting rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dashboard.volcano import phases as ph
from tests.volcano.conftest import crd_enum


def test_job_phases_are_the_crds():
    assert set(ph.JOB_PHASES) == set(crd_enum("crds/batch.volcano.sh_jobs.yaml", "state", "phase"))


def test_podgroup_phases_are_the_crds():
    assert set(ph.PODGROUP_PHASES) == set(crd_enum("crds/scheduling.volcano.sh_podgroups.yaml", "phase"))


def test_queue_states_are_the_crds():
    assert set(ph.QUEUE_STATES) == set(crd_enum("crds/scheduling.volcano.sh_queues.yaml", "state"))


def test_job_phase_classes_partition_the_stopping_phases():
    assert {"Completed", "Terminated", "Failed"} == ph.FINAL_JOB_PHASES
    assert {"Aborted"} == ph.RESUMABLE_JOB_PHASES  # ResumeJob brings it back
    assert {"Restarting", "Aborting", "Completing", "Terminating"} == ph.TRANSITIONAL_JOB_PHASES
    classes = (ph.FINAL_JOB_PHASES, ph.RESUMABLE_JOB_PHASES, ph.TRANSITIONAL_JOB_PHASES)
    assert all(not (a & b) for a in classes for b in classes if a is not b)
    assert set().union(*classes) | {"Pending", "Running"} == set(ph.JOB_PHASES)
    assert {"Completed"} == ph.FINAL_PODGROUP_PHASES


@pytest.mark.parametrize(
    ("obj", "job", "podgroup"),
    [
        ({"status": {"state": {"phase": "Running"}, "phase": "Inqueue"}}, "Running", "Inqueue"),
        ({"status": {"state": {"phase": 7}, "phase": 7}}, "7", "7"),  # shown verbatim
        ({"status": {"state": None}}, "", ""),
        ({"status": None}, "", ""),
        ({}, "", ""),
        ("junk", "", ""),
    ],
)
def test_phase_readers(obj, job, podgroup):
    assert ph.job_phase(obj) == job
    assert ph.podgroup_phase(obj) == podgroup


def test_queue_and_pod_readers():
    assert ph.queue_state({"status": {"state": "Closed"}}) == "Closed"
    assert ph.queue_state({}) == ""
    assert ph.pod_phase({"status": {"phase": "Succeeded"}}) == "Succeeded"
    assert ph.queue_admits("Open") and ph.queue_admits("")
    assert not ph.queue_admits("Closing") and not ph.queue_admits("Closed")


@pytest.mark.parametrize(
    ("job", "pg", "waiting"),
    [
        ("Pending", None, True),
        ("", None, True),  # no status yet
        ("Running", None, False),
        ("Running", "Inqueue", True),  # a Job's PodGroup that lost its gang
        ("Running", "Running", False),
        ("Completed", "Inqueue", False),  # final: nothing to wait for
        ("Running", "Bogus", True),  # an unknown phase proves no placement
        (None, "Pending", True),  # a PodGroup's page
        (None, "Unknown", True),
        (None, "", True),
        (None, "Running", False),
        (None, "Completed", False),
        (None, None, False),
    ],
)
def test_one_waiting_rule_for_job_and_podgroup_pages(job, pg, waiting):
    assert ph.gang_waiting(job, pg) is waiting


def test_phase_since():
    t = "2026-01-01T00:00:00Z"
    assert ph.job_phase_since({"status": {"state": {"lastTransitionTime": t}}}) == datetime(
        2026, 1, 1, tzinfo=UTC
    )
    conds = {"status": {"conditions": [{"lastTransitionTime": "x"}, {"lastTransitionTime": t}]}}
    assert ph.job_phase_since(conds) == datetime(2026, 1, 1, tzinfo=UTC)
    assert ph.job_phase_since({}) is None


def test_queued_podgroups_and_closed_queues_and_final_pods():
    assert [x for x in ph.PODGROUP_PHASES if ph.podgroup_queued(x)] == ["Pending", "Inqueue"]
    assert not ph.podgroup_queued("") and not ph.podgroup_queued("Bogus")
    assert ph.podgroup_awaits_admission("Pending") and not ph.podgroup_awaits_admission("Inqueue")
    assert ph.job_waiting("Pending") and ph.job_waiting("") and not ph.job_waiting("Running")
    assert [s for s in ph.QUEUE_STATES if ph.queue_closed(s)] == ["Closing", "Closed"]
    assert not ph.queue_closed("") and not ph.queue_closed("Bogus")
    assert [x for x in ph.POD_PHASES if ph.pod_is_final(x)] == ["Succeeded", "Failed"]
