"""Every Failed or Aborted Job of the demo gets a "Why did this Job fail?" card that names its cause,
read with its pods and, once they are gone, from the records the cache kept of them. The cache
watches the demo from t=0, so it sees Volcano delete the pods (RestartJob, and on the way to Failed).

The cause each Job must be given is read from its spec, as the demo wrote it: an Aborted Job was
asked for AbortJob; a Failed Job with a RestartJob policy ran out of retries, one without a policy
failed with no policy to handle the failed pod; and its pods exited with the demo's exit code
(``sim.volcano-ui/exit-code``, default 1; 137 is an OOM kill).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest

from dashboard.presenters.failure import failure_view
from dashboard.volcano.phases import job_phase
from dashboard.volcano.podrecords import pod_record
from tests.pages.helpers import jobs

# Starts real servers or many caches: part of `make test`, not of the fast `make check`.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def watched_demo(tmp_path_factory):
    """The demo run for its first minute under a live, installed cache."""
    from dashboard.sim import scenarios
    from tests.conftest import _new_cluster
    from tests.pages.conftest import installed_cache

    cluster = _new_cluster(seed=0, scenario="demo", controllers=True)
    try:
        with installed_cache(cluster, tmp_path_factory.mktemp("demo-failures")) as cache:
            step = 2.0
            for _ in range(int(scenarios.DEMO_SETTLE_SECONDS / step)):
                cluster.advance(step)
                expected = {
                    (j["metadata"]["namespace"], j["metadata"]["name"]): job_phase(j) for j in jobs(cluster)
                }
                cache.wait_for(
                    lambda s, expected=expected: all(
                        job_phase(s.jobs.get(ns, n) or {}) == phase for (ns, n), phase in expected.items()
                    ),
                    timeout=15,
                )
            yield cluster, cache
    finally:
        cluster.stop()


def _failed_jobs(cluster) -> list[dict]:
    return [j for j in jobs(cluster) if job_phase(j) in ("Failed", "Aborted")]


def _expected(job: dict) -> tuple[str, str | None]:
    """(the policy/phase words, the container's end words or None for an Aborted Job)."""
    if job_phase(job) == "Aborted":
        return "asked for AbortJob", None
    spec = job["spec"]
    policies = spec.get("policies", []) + [p for t in spec["tasks"] for p in t.get("policies", [])]
    code = (job["metadata"].get("annotations") or {}).get("sim.volcano-ui/exit-code", "1")
    ended = "OOMKilled, exit code 137" if code == "137" else f"Error, exit code {code}"
    if any(p.get("action") == "RestartJob" for p in policies):
        return "so the Job is Failed.", ended
    return "No policy handles a failed pod", ended


def _text(view) -> str:
    return " ".join(f.text + " " + (f.verbatim or "") for f in view.findings)


def test_the_demo_has_the_failures_it_promises(watched_demo):
    cluster, _cache = watched_demo
    failed = {j["metadata"]["name"]: _expected(j) for j in _failed_jobs(cluster)}
    assert failed["embed-oom"] == ("No policy handles a failed pod", "OOMKilled, exit code 137")
    assert failed["flaky-simulation"] == ("so the Job is Failed.", "Error, exit code 1")
    assert failed["bad-config"][1] == "Error, exit code 1"
    assert failed["sweep-abort"][0] == "asked for AbortJob"
    names = {j["metadata"]["name"]: j for j in jobs(cluster)}
    assert "augment-crashloop" in names and "sweep-restart" in names  # crash-looping, stuck Terminating


def test_every_failed_or_aborted_demo_job_is_explained_with_and_without_its_pods(watched_demo, client):
    cluster, cache = watched_demo
    snap = cache.snapshot()
    checked = 0
    for raw in _failed_jobs(cluster):
        ns, name = raw["metadata"]["namespace"], raw["metadata"]["name"]
        job = snap.jobs.get(ns, name)
        policy_words, ended = _expected(job)
        pods = snap.pods_for_job(job)
        events = [e for o in (job, *pods) for e in snap.events_for(o)]
        deleted = snap.deleted_pods_of_job(job)
        # Without its pods: what the cache recorded when they were deleted, else (pods still
        # there) the records they would leave.
        gone = deleted or [r for p in pods if (r := pod_record(p, datetime.now(UTC))) is not None]
        readings = {"without pods": failure_view(job, [], events, gone)}
        if pods:
            readings["with pods"] = failure_view(job, pods, events)
        for how, view in readings.items():
            text = _text(view)
            assert policy_words in text, (name, how, text)
            if ended is not None:
                assert f"ended: {ended}." in text, (name, how, text)
                if "OOMKilled" in ended:
                    assert re.search(r"killed for using more memory than (its|their) limit", text), text
        page = unescape(client.get(f"/jobs/{ns}/{name}/").content.decode())
        assert "Why did this Job fail?" in page and policy_words in page, name
        if ended is not None:
            assert f"ended: {ended}." in page, name
        checked += 1
    assert checked >= 4


def test_flaky_simulation_is_explained_from_its_deleted_pods(watched_demo, client):
    cluster, cache = watched_demo
    job = cache.snapshot().jobs.get("research", "flaky-simulation")
    assert cache.snapshot().pods_for_job(job) == []
    records = cache.snapshot().deleted_pods_of_job(job)
    # Killed while running when another pod failed (RestartJob) or failed themselves.
    assert {r.task for r in records} == {"main"} and any(r.failed for r in records)
    page = unescape(client.get("/jobs/research/flaky-simulation/").content.decode())
    assert "Pods (deleted)" in page and "pod deleted" in page
    assert "their exit codes come from what the dashboard saw when they were deleted" in page
    # retryCount 2 with maxRetry 2: the second restart action failed the Job, one restart ran.
    assert "Volcano restarted it 1 time; restart number 2 reached maxRetry 2" in page
