"""Volcano Job spec fields whose reading depends on Volcano's defaults.

Sources: the Job CRD (batch.volcano.sh_jobs.yaml, ``maxRetry`` default 3), Volcano's Job
admission webhook (volcano-sh/volcano pkg/webhooks/admission/jobs/mutate, default maxRetry 3) and
its garbage collector (volcano-sh/volcano pkg/controllers/garbagecollector,
``ttlSecondsAfterFinished``); https://volcano.sh/en/docs/vcjob/.
"""

from __future__ import annotations

import re

from dashboard.volcano.objects import spec

# Retries before the controller marks a restarting Job Failed, when spec.maxRetry is unset.
DEFAULT_MAX_RETRY = 3

_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def _integer(value: object) -> int | None:
    """An int32 field's value; None when absent or no integer (true, 1.5, "x")."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # more digits than Python converts
            return None
    return None


def max_retry_is_default(job: object) -> bool:
    """spec.maxRetry is unset, so Volcano's default (DEFAULT_MAX_RETRY) applies."""
    return spec(job).get("maxRetry") is None


def max_retry(job: object) -> int | None:
    """The retries the controller allows before it marks the Job Failed (it compares
    status.retryCount against it): spec.maxRetry, DEFAULT_MAX_RETRY when unset; None when the
    field holds no integer."""
    if max_retry_is_default(job):
        return DEFAULT_MAX_RETRY
    return _integer(spec(job).get("maxRetry"))


def hit_retry_limit(retry_count: int, max_retry: int, phase: str) -> bool:
    """A Failed Job whose status.retryCount reached maxRetry: the controller, in Restarting,
    marks a Job Failed instead of Pending once retryCount >= maxRetry, so its last restart was
    started (and counted) but never carried out."""
    return phase == "Failed" and retry_count >= 1 and retry_count >= max_retry


def restarts_performed(retry_count: int, max_retry: int, phase: str) -> int:
    """How many times Volcano restarted the Job and let it run again, from status.retryCount,
    maxRetry and the Job's phase. Every restart action (RestartJob, RestartTask, RestartPod,
    RestartPartition, ResumeJob) adds 1 to retryCount as it starts; a restart that hit the limit
    (``hit_retry_limit``) ended in Failed instead, so it is not one performed. A negative
    retryCount counts as 0."""
    if hit_retry_limit(retry_count, max_retry, phase):
        return retry_count - 1
    return max(0, retry_count)


def ttl_after_finished(job: object) -> int | None:
    """spec.ttlSecondsAfterFinished: seconds after the Job reaches a final phase (Completed,
    Failed, Terminated) before the garbage collector deletes it; 0 deletes it right after it
    finishes. None when unset (the Job is never deleted automatically) or no integer."""
    return _integer(spec(job).get("ttlSecondsAfterFinished"))
