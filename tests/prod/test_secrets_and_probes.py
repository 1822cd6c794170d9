"""Secrets are never read or shown; /readyz follows the cache's kind states; SubjectAccessReview
answers are reused for the configured time."""

from __future__ import annotations

import base64
import json

import pytest
import requests

from tests.prod.conftest import ALICE, proxy_session, proxy_settings

SECRET_VALUE = "hunter2-this-is-the-secret-value"
LITERAL_VALUE = "literal-env-value-pasted-into-a-manifest"


@pytest.fixture(scope="module")
def secret_job(demo_cluster):
    from dashboard.sim.demo_scenario import batch
    from dashboard.sim.kinds import kind_by_name

    store = demo_cluster.store
    store.create(kind_by_name("Namespace", ""), {"metadata": {"name": "sec-test"}})
    store.create(
        kind_by_name("Secret", ""),
        {
            "metadata": {"name": "db", "namespace": "sec-test"},
            "data": {"password": base64.b64encode(SECRET_VALUE.encode()).decode()},
        },
    )
    job = batch("sec-test", "with-secret", "default", replicas=1)
    container = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container["env"] = [
        {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
        {"name": "PLAIN", "value": LITERAL_VALUE},
    ]
    store.create(kind_by_name("Job", "batch.volcano.sh"), job)
    demo_cluster.advance(10)
    return demo_cluster


def test_secret_values_never_reach_a_page_and_secrets_are_never_requested(
    secret_job, installed_cache, dashboard_server
):
    installed_cache.wait_for(lambda s: s.pods.get("sec-test", "with-secret-main-0") is not None, timeout=15)
    server = dashboard_server()
    pages = {
        path: requests.get(server.url + path)
        for path in ("/jobs/sec-test/with-secret/", "/pods/sec-test/with-secret-main-0/", "/jobs/", "/")
    }
    for path, response in pages.items():
        assert response.status_code == 200, path
        for value in (SECRET_VALUE, base64.b64encode(SECRET_VALUE.encode()).decode(), LITERAL_VALUE):
            assert value not in response.text, (path, value)
    pod_page = pages["/pods/sec-test/with-secret-main-0/"].text
    # The reference is shown: where the value comes from, not what it is.
    assert "secretKeyRef" in pod_page and "DB_PASSWORD" in pod_page
    requested = secret_job.server.stats()["requests"]
    assert requested, "the simulator counts requests"
    assert not [key for key in requested if "secret" in key.lower()], requested


def _readyz(client) -> tuple[int, dict]:
    response = client.get("/readyz")
    return response.status_code, json.loads(response.content)


@pytest.mark.parametrize(
    ("states", "ready"),
    [
        ({"jobs": "syncing"}, False),
        ({"pods": "stale"}, False),
        ({"events": "unreachable"}, False),
        ({}, True),
        ({"jobs": "not_installed", "podgroups": "not_installed"}, True),
        ({"events": "forbidden"}, True),
    ],
)
def test_readyz_is_503_only_while_a_kind_has_never_been_listed(client, memory_cache, states, ready):
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(kind).set_state(states.get(kind, "synced"))
    status, body = _readyz(client)
    assert status == (200 if ready else 503)
    assert body["ready"] is ready
    assert body["waiting"] == sorted(k for k, s in states.items() if s in ("syncing", "stale", "unreachable"))
    assert body["stale"] == []
    assert body["kinds"]["queues"] == "synced"


@pytest.mark.parametrize("lost", ["stale", "unreachable"])
def test_readyz_stays_200_when_a_synced_kind_goes_stale(client, memory_cache, lost):
    """The pages serve the last known objects with their age: the only replica stays in its Service."""
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(kind).set_state("synced")
    memory_cache.store("pods").set_state(lost, error="connection refused")
    memory_cache.store("jobs").set_state("syncing")  # a re-list in progress after a synced past
    status, body = _readyz(client)
    assert status == 200, body
    assert body == {
        "ready": True,
        "kinds": {
            "jobs": "syncing",
            "podgroups": "synced",
            "queues": "synced",
            "pods": lost,
            "events": "synced",
        },
        "waiting": [],
        "stale": ["jobs", "pods"],
    }


def test_metrics_expose_cache_sizes_states_and_watch_counters(installed_cache, client):
    installed_cache.wait_synced(timeout=15)
    body = client.get("/metrics").content.decode()
    snap = installed_cache.snapshot()
    assert f'volcano_ui_cache_objects{{kind="jobs"}} {float(len(snap.jobs))}' in body
    assert 'volcano_ui_cache_state{kind="pods",state="synced"} 1.0' in body
    assert 'volcano_ui_watch_relists_410_total{kind="jobs"}' in body
    assert 'volcano_ui_last_event_age_seconds{kind="jobs"}' in body


def _reviews_sent() -> float:
    from dashboard.health import ACCESS_REVIEWS

    return sum(
        sample.value
        for metric in ACCESS_REVIEWS.collect()
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels["review"] == "SubjectAccessReview"
    )


def test_subject_access_reviews_are_reused_within_the_ttl(demo_cluster, installed_cache, dashboard_server):
    demo_cluster.add_user(*ALICE[:2], [ALICE[2]])
    server = dashboard_server(**proxy_settings(VOLCANO_UI_ACCESS_CACHE_SECONDS=300))
    session = proxy_session(ALICE[0])
    assert session.get(server.url + "/jobs/").status_code == 200
    first = _reviews_sent()
    assert first > 0
    for _ in range(3):
        assert session.get(server.url + "/jobs/").status_code == 200
    assert _reviews_sent() == first, "answers within the TTL come from the cache"
    # With a TTL of 0 every request asks again.
    uncached = dashboard_server(**proxy_settings(VOLCANO_UI_ACCESS_CACHE_SECONDS=0))
    before = _reviews_sent()
    session.get(uncached.url + "/jobs/")
    session.get(uncached.url + "/jobs/")
    assert _reviews_sent() > before + 1
