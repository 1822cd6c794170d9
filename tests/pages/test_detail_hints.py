"""Job and Pod detail pages: final-phase gang outcome, the list's health hints, container exit codes.

Uses the in-memory ClusterCache (the real cache class) filled with objects shaped as the simulated
cluster writes them.
"""

from __future__ import annotations

import pytest

from tests.pages.helpers import text

ALL = ("jobs", "podgroups", "queues", "pods", "events")


def job(name: str, phase: str, **status) -> dict:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"u-{name}",
            "resourceVersion": "3",
            "creationTimestamp": "2026-11-29T10:00:00Z",
        },
        "spec": {"queue": "default", "minAvailable": 4, "tasks": [{"name": "w", "replicas": 4}]},
        "status": {"state": {"phase": phase}, "minAvailable": 4, **status},
    }


def pod(name: str, job_name: str, container_status: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"u-{name}",
            "resourceVersion": "4",
            "labels": {"volcano.sh/job-name": job_name},
            "annotations": {"volcano.sh/job-name": job_name},
        },
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [{"name": "main", "restartCount": 5, **container_status}],
        },
    }


@pytest.fixture
def cache(memory_cache):
    for kind in ALL:
        memory_cache.store(kind).mark_synced()
    memory_cache.store("queues").upsert(
        {
            "metadata": {"name": "default", "resourceVersion": "1"},
            "spec": {"weight": 1},
            "status": {"state": "Open"},
        }
    )
    return memory_cache


@pytest.mark.parametrize(
    "phase,status,outcome",
    [
        ("Completed", {"succeeded": 4}, "finished: 4 succeeded"),
        ("Failed", {"succeeded": 1, "failed": 3}, "finished: 1 succeeded, 3 failed"),
    ],
)
def test_final_job_shows_outcome_not_minavailable_reached(client, cache, phase, status, outcome):
    cache.store("jobs").upsert(job("done", phase, **status))
    for url in ("/jobs/ml/done/", "/jobs/"):
        page = text(client.get(url).content.decode())
        assert outcome in page, url
        assert "minAvailable reached" not in page, url
        assert "0 /4" not in page, url


def test_running_job_still_shows_gang_bar(client, cache):
    cache.store("jobs").upsert(job("run", "Running", running=4))
    for i in range(4):  # the pods behind the counter: a counter no pod backs is disputed
        cache.store("pods").upsert(pod(f"run-main-{i}", "run", {"ready": True, "restartCount": 0}))
    page = text(client.get("/jobs/ml/run/").content.decode())
    assert "minAvailable reached" in page and "4 /4" in page


@pytest.mark.parametrize(
    "status,below",
    [
        ({"running": 2, "succeeded": 2}, False),  # succeeded pods count toward minAvailable
        ({"running": 3, "failed": 1}, True),  # a failed pod holds no place in the gang
        ({"running": 2}, True),
        ({"running": 2, "succeeded": 1}, True),
        ({"running": 5, "succeeded": -1}, False),  # a negative counter proves nothing
    ],
)
def test_below_minavailable_hint_counts_finished_pods(client, cache, status, below):
    cache.store("jobs").upsert(job("gang", "Running", **status))
    for url in ("/jobs/", "/jobs/ml/gang/"):
        page = text(client.get(url).content.decode())
        assert ("below minAvailable" in page) is below, url


def test_crashlooping_job_detail_shows_the_lists_hint(client, cache):
    cache.store("jobs").upsert(job("crashy", "Running", running=2))
    waiting = {"state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m"}}}
    for i in range(2):
        cache.store("pods").upsert(pod(f"crashy-w-{i}", "crashy", waiting))
    listed = text(client.get("/jobs/").content.decode())
    assert "2 pods CrashLoopBackOff" in listed
    page = client.get("/jobs/ml/crashy/").content.decode()
    head = text(page.split('id="job-phase"')[1].split("</header>")[0])
    assert "2 pods CrashLoopBackOff" in head


def test_pod_shows_exit_code_and_signal(client, cache):
    cache.store("jobs").upsert(job("crashy", "Running", running=1))
    cs = {
        "state": {"terminated": {"reason": "Error", "exitCode": 137, "signal": 9}},
        "lastState": {"terminated": {"reason": "Error", "exitCode": 2}},
    }
    cache.store("pods").upsert(pod("crashy-w-0", "crashy", cs))
    page = text(client.get("/pods/ml/crashy-w-0/").content.decode())
    assert "terminated Error (exit code 137, signal 9)" in page
    assert "terminated Error (exit code 2)" in page


def test_404_status_bar_shows_the_real_data_as_of(client, cache):
    for url in ("/jobs/ml/nope/", "/no/such/page/"):
        resp = client.get(url)
        assert resp.status_code == 404
        page = text(resp.content.decode())
        assert "No data yet" not in page, url
        assert "Data as of" in page, url
    cache.store("events").set_state("forbidden")
    page = text(client.get("/jobs/ml/nope/").content.decode())
    assert "The dashboard's own identity is not allowed to list Events" in page
    assert "Job ml/nope not found." in page


def test_kiosk_collapses_stale_notices_into_one_line(client, cache):
    for kind in ALL:
        cache.store(kind).set_state("stale", error="watch dropped")
    cache.store("events").set_state("forbidden", error="events is forbidden")
    kiosk = client.get("/kiosk/").content.decode()
    assert kiosk.count('class="notice notice-') == 1
    line = text(kiosk.split('class="notice notice-')[1].split("</div>")[0])
    assert "Volcano Jobs, PodGroups, Queues, Pods: may be out of date; Events: forbidden" in line
    # Other pages keep one notice per state and error: the four kinds that lost their watch the
    # same way share one, Events (forbidden) has its own.
    overview = client.get("/").content.decode()
    assert overview.count('class="notice notice-') == 2
    assert "Volcano Jobs, PodGroups, Queues and Pods may be out of date" in text(overview)
    assert overview.count("watch dropped") == 1
    assert 'data-kind="jobs podgroups queues pods" data-state="stale"' in overview
    assert 'data-kind="events" data-state="forbidden"' in overview


def test_an_outage_is_one_notice_naming_every_kind_and_the_plain_cause(client, cache):
    refused = "API server unreachable: cannot connect to 127.0.0.1:6443: connection refused"
    for kind in ALL:
        cache.store(kind).set_state("unreachable", error=refused, category="unreachable")
    page = client.get("/jobs/").content.decode()
    assert page.count('class="notice notice-') == 1
    notice = text(page.split('class="notice notice-')[1].split("</div>")[0])
    assert "The cluster is unreachable; Volcano Jobs" in notice and " and " in notice, notice
    assert page.count("connection refused") == 1
    # Jobs synced before the outage: the list still shows them (a kind never synced would block).
    assert "Jobs cannot be shown" not in text(page)


@pytest.mark.parametrize(
    ("queue", "first"),
    [
        (
            {"metadata": {"name": "archive"}, "spec": {"weight": 1}, "status": {"state": "Closed"}},
            "is Closed",
        ),
        (None, "does not exist"),
    ],
)
def test_a_closed_or_missing_queue_leads_the_why_pending_findings(queue, first):
    """The cause (the queue) before its symptom (the PodGroup left Pending, "not admitted yet"):
    the overview and the kiosk show only the first finding."""
    from dashboard.presenters.pending import findings
    from dashboard.volcano.pending import PendingContext, why_pending

    job = {
        "metadata": {"name": "archive-reindex", "namespace": "platform"},
        "spec": {"queue": "archive", "minAvailable": 1, "tasks": [{"name": "t", "replicas": 1}]},
        "status": {"state": {"phase": "Pending"}},
    }
    pg = {
        "metadata": {"name": "archive-reindex-pg", "namespace": "platform"},
        "spec": {"queue": "archive", "minMember": 1},
        "status": {"phase": "Pending"},
    }
    found = findings(why_pending(PendingContext(job, pg, queue, "archive")))
    assert first in found[0].text, [f.text for f in found]
    assert any("has not admitted it yet" in f.text for f in found[1:])


def test_headroom_that_rounds_alike_is_shown_exactly():
    """0.5Gi capability with 1e3 bytes allocated leaves 1,000 bytes less than 512Mi: "needs 512Mi,
    512Mi left" next to "no room" would contradict itself."""
    from dashboard.presenters.queues import gang_room

    queue = {
        "metadata": {"name": "oddq"},
        "spec": {"capability": {"memory": "0.5Gi", "cpu": "2"}},
        "status": {"allocated": {"memory": "1e3", "cpu": "1001m"}},
    }
    pg = {"metadata": {"name": "pg"}, "spec": {"minResources": {"memory": "512Mi", "cpu": "999.2m"}}}
    rows = {r["resource"]: r for r in gang_room(queue, pg).rows}
    assert rows["memory"]["short"]
    assert rows["memory"]["need"] == "536,870,912 bytes"
    assert rows["memory"]["left"] == "536,869,912 bytes"
    assert rows["cpu"]["short"]
    assert (rows["cpu"]["need"], rows["cpu"]["left"]) == ("999.2m", "999m")


@pytest.mark.parametrize(
    "pg_status,waiting",
    [
        ({}, True),  # the scheduler has not looked at the PodGroup yet
        ({"phase": "Bogus"}, True),  # a phase of no known meaning proves no placement
        ({"phase": "Inqueue"}, True),
        ({"phase": "Running"}, False),
    ],
)
def test_job_page_waits_while_its_podgroup_is_not_placed(client, cache, pg_status, waiting):
    """A Running Job whose PodGroup has no phase, an unknown one or Inqueue is still waiting for
    its gang: the page asks why the gang is not complete (the heading of a Running Job)."""
    cache.store("jobs").upsert(job("gang", "Running", running=4))
    cache.store("podgroups").upsert(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "gang-u-gang", "namespace": "ml", "uid": "pg-gang", "resourceVersion": "5"},
            "spec": {"queue": "default", "minMember": 4},
            "status": pg_status,
        }
    )
    page = text(client.get("/jobs/ml/gang/").content.decode())
    assert ("Why is this Job's gang not complete?" in page) is waiting
    assert "Why is this Job pending?" not in page


def test_job_page_of_a_final_job_does_not_wait_for_its_podgroup(client, cache):
    cache.store("jobs").upsert(job("done", "Completed", succeeded=4))
    cache.store("podgroups").upsert(
        {
            "metadata": {"name": "done-u-done", "namespace": "ml", "uid": "pg-done", "resourceVersion": "5"},
            "spec": {"queue": "default", "minMember": 4},
        }
    )
    page = text(client.get("/jobs/ml/done/").content.decode())
    assert "Why is this Job pending?" not in page


@pytest.mark.parametrize(
    "spec,retries,max_retry,ttl",
    [
        ({}, "0 /3 (default)", "maxRetry 3 (default)", "ttlSecondsAfterFinished —"),
        (
            {"maxRetry": 5, "ttlSecondsAfterFinished": 0},
            "0 /5",
            "maxRetry 5",
            "ttlSecondsAfterFinished 0 (deleted right after finishing)",
        ),
        (
            {"ttlSecondsAfterFinished": 600},
            "0 /3 (default)",
            "maxRetry 3 (default)",
            "ttlSecondsAfterFinished 600",
        ),
    ],
)
def test_job_page_shows_effective_max_retry_and_ttl(client, cache, spec, retries, max_retry, ttl):
    obj = job("spec", "Running", running=4)
    obj["spec"].update(spec)
    cache.store("jobs").upsert(obj)
    page = " ".join(text(client.get("/jobs/ml/spec/").content.decode()).split())
    assert f"Retries {retries}" in page
    assert max_retry in page and ttl in page
