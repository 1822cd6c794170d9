"""dashboard.volcano.jobs: Job spec fields read with Volcano's defaults."""

from __future__ import annotations

import pytest

from dashboard.volcano import jobs


@pytest.mark.parametrize(
    ("spec", "value", "default"),
    [
        ({}, 3, True),  # the CRD and the admission webhook default it to 3
        ({"maxRetry": None}, 3, True),
        ({"maxRetry": 5}, 5, False),
        ({"maxRetry": 0}, 0, False),  # written: the controller compares against it as written
        ({"maxRetry": "7"}, 7, False),
        ({"maxRetry": "x"}, None, False),  # no integer: unknown, never a number
        ({"maxRetry": True}, None, False),
        ({"maxRetry": 1.5}, None, False),
    ],
)
def test_max_retry(spec, value, default):
    job = {"spec": spec}
    assert jobs.max_retry(job) == value
    assert jobs.max_retry_is_default(job) is default


@pytest.mark.parametrize(
    ("spec", "value"),
    [
        ({}, None),
        ({"ttlSecondsAfterFinished": 0}, 0),
        ({"ttlSecondsAfterFinished": 600}, 600),
        ({"ttlSecondsAfterFinished": "x"}, None),
    ],
)
def test_ttl_after_finished_keeps_a_real_zero(spec, value):
    assert jobs.ttl_after_finished({"spec": spec}) == value


def test_a_job_without_spec_has_the_defaults():
    assert jobs.max_retry({}) == jobs.DEFAULT_MAX_RETRY
    assert jobs.ttl_after_finished(None) is None


@pytest.mark.parametrize(
    "retry_count,max_retry,phase,performed",
    [
        (2, 2, "Failed", 1),  # the 2nd restart hit maxRetry: Failed instead of Pending
        (3, 3, "Failed", 2),
        (1, 0, "Failed", 0),  # maxRetry 0: the first restart already fails the Job
        (1, 3, "Failed", 1),  # failed another way (a FailJob policy) after one restart
        (1, 2, "Running", 1),
        (2, 2, "Restarting", 2),  # the restart is still under way
        (0, 3, "Failed", 0),
        (-1, 3, "Running", 0),
    ],
)
def test_restarts_performed(retry_count, max_retry, phase, performed):
    assert jobs.restarts_performed(retry_count, max_retry, phase) == performed
    assert jobs.hit_retry_limit(retry_count, max_retry, phase) == (
        phase == "Failed" and retry_count >= max(1, max_retry)
    )
