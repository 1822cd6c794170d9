"""A stalled, dead or flaky API server while signed-in users poll (proxy and token modes, real HTTP).

Permission answers expire during the fault (``review_cache.expire()``, as their freshness running
out would): every page and fragment must still answer within 2 s with the user's last known
objects and a "permissions as of" notice, nothing that exists is reported gone, and the notice
goes away by itself once the API server answers again.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.urls import reverse

from dashboard.access import review_cache, token_checks
from dashboard.middleware import PERMISSIONS_AS_OF_HEADER
from tests.faults.conftest import wait_for
from tests.prod.conftest import ALICE, proxy_session, proxy_settings, token_session, token_settings

# Starts real servers or many caches: part of `make test`, not of the fast `make check`.
pytestmark = pytest.mark.slow

HX = {"HX-Request": "true"}
BOUND = 2.0  # seconds a page may take while the API server is away


def _alice(mode: str, base: str) -> requests.Session:
    return proxy_session(ALICE[0]) if mode == "proxy" else token_session(base, ALICE[1])


def _settings(mode: str) -> dict:
    return proxy_settings() if mode == "proxy" else token_settings()


def _own_job(snap) -> tuple[str, str]:
    job = next(j for j in snap.jobs.all() if j["metadata"]["namespace"] == ALICE[2])
    return job["metadata"]["namespace"], job["metadata"]["name"]


def _timed_get(session: requests.Session, url: str, **kwargs) -> tuple[requests.Response, float]:
    started = time.monotonic()
    response = session.get(url, allow_redirects=False, timeout=30, **kwargs)
    return response, time.monotonic() - started


@pytest.mark.parametrize("fault", ["stall", "down"])
@pytest.mark.parametrize("mode", ["proxy", "token"])
def test_pages_keep_last_known_permissions_while_the_api_server_is_away(
    mode, fault, teams, faults, installed_cache, dashboard_server
):
    server = dashboard_server(**_settings(mode))
    namespace, name = _own_job(installed_cache.snapshot())
    detail = server.url + reverse("job_detail", kwargs={"namespace": namespace, "name": name})
    session = _alice(mode, server.url)
    first, _ = _timed_get(session, detail)
    assert first.status_code == 200 and PERMISSIONS_AS_OF_HEADER not in first.headers

    if fault == "stall":
        faults.set(latency_ms=11000)
    else:
        faults.set(unavailable_seconds=60)
    review_cache.expire()
    token_checks.expire()  # token mode: the session's token is due for its re-check too

    # 16 clients at once, as in the report: each answers in time, none is told the Job is gone.
    def poll(_: int) -> tuple[int, float, str, bool]:
        response, took = _timed_get(session, detail + "?f=status", headers=HX)
        return (
            response.status_code,
            took,
            response.headers.get("X-Volcano-Gone", ""),
            (PERMISSIONS_AS_OF_HEADER in response.headers),
        )

    with ThreadPoolExecutor(16) as pool:
        polls = list(pool.map(poll, range(16)))
    assert all(code == 200 and not gone and stale for code, _, gone, stale in polls), polls
    assert max(took for _, took, _, _ in polls) < BOUND, polls

    page, took = _timed_get(session, detail)
    assert page.status_code == 200 and took < BOUND
    assert "Permissions as of" in page.text
    jobs, took = _timed_get(session, server.url + reverse("jobs"))
    assert jobs.status_code == 200 and took < BOUND
    assert name in jobs.text and "Permissions as of" in jobs.text
    health, took = _timed_get(session, server.url + "/healthz")
    assert health.status_code == 200 and took < 1.0

    faults.reset()
    # Recovery needs no reload: the next polls get fresh answers once the backoff has passed.
    wait_for(
        lambda: (
            PERMISSIONS_AS_OF_HEADER not in _timed_get(session, detail + "?f=status", headers=HX)[0].headers
        ),
        timeout=20,
        what="fresh permission answers after the fault",
        every=0.25,
    )
    page, _ = _timed_get(session, detail)
    assert page.status_code == 200 and "Permissions as of" not in page.text


@pytest.mark.parametrize("mode", ["proxy", "token"])
def test_five_percent_api_errors_never_blank_or_delete(
    mode, teams, faults, installed_cache, dashboard_server
):
    server = dashboard_server(**_settings(mode))
    namespace, name = _own_job(installed_cache.snapshot())
    detail = server.url + reverse("job_detail", kwargs={"namespace": namespace, "name": name})
    session = _alice(mode, server.url)
    faults.set(error_rate=0.05)
    for _ in range(40):
        review_cache.expire()
        response, took = _timed_get(session, detail + "?f=status", headers=HX)
        assert response.status_code == 200 and not response.headers.get("X-Volcano-Gone"), (
            response.status_code
        )
        assert took < BOUND
    listing, _ = _timed_get(session, server.url + reverse("jobs"))
    assert listing.status_code == 200 and name in listing.text


def _stalled_from_the_start(faults, installed_cache, dashboard_server):
    server = dashboard_server(**proxy_settings())  # a fresh process: no answer was ever received
    namespace, name = _own_job(installed_cache.snapshot())
    faults.set(latency_ms=11000)
    return server, name, server.url + reverse("job_detail", kwargs={"namespace": namespace, "name": name})


def test_never_answered_permissions_fail_closed_and_say_so(teams, faults, installed_cache, dashboard_server):
    server, name, _ = _stalled_from_the_start(faults, installed_cache, dashboard_server)
    jobs, took = _timed_get(proxy_session(ALICE[0]), server.url + reverse("jobs"))
    assert jobs.status_code == 200 and took < BOUND
    assert name not in jobs.text and "Permissions could not be checked" in jobs.text


def test_an_object_behind_unknown_permissions_is_not_reported_gone(
    teams, faults, installed_cache, dashboard_server
):
    _, _, detail = _stalled_from_the_start(faults, installed_cache, dashboard_server)
    response, took = _timed_get(proxy_session(ALICE[0]), detail + "?f=status", headers=HX)
    assert took < BOUND
    assert not response.headers.get("X-Volcano-Gone")
    assert response.status_code == 503 and response.headers.get("Retry-After")


def test_a_permission_never_checked_is_unchecked_not_denied(teams, faults, installed_cache, dashboard_server):
    """While the API server is away, a logs page or an action whose permission was never answered
    says the permission could not be checked (503, Retry-After), not that RBAC refuses it."""
    server = dashboard_server(**proxy_settings(VOLCANO_UI_ENABLE_ACTIONS=True))
    namespace, name = _own_job(installed_cache.snapshot())
    pod = next(
        p
        for p in installed_cache.snapshot().pods.all()
        if p["metadata"]["namespace"] == namespace and (p.get("status") or {}).get("containerStatuses")
    )
    session = _alice("proxy", server.url)
    first, _ = _timed_get(session, server.url + reverse("jobs"))
    assert first.status_code == 200  # her namespaces are known; pods/log and Commands never asked
    faults.set(unavailable_seconds=60)

    logs, took = _timed_get(session, f"{server.url}/pods/{namespace}/{pod['metadata']['name']}/logs/")
    assert logs.status_code == 503 and logs.headers.get("Retry-After"), logs.status_code
    assert "could not be checked" in logs.text and "You may not read pod logs" not in logs.text
    assert took < BOUND + 2  # one wait for the review, not one per container
    action, _ = _timed_get(session, f"{server.url}/actions/jobs/{namespace}/{name}/restart/")
    assert action.status_code == 503 and action.headers.get("Retry-After"), action.status_code
    assert "could not be checked" in action.text and "does not let you" not in action.text

    faults.reset()
    logs_url = f"{server.url}/pods/{namespace}/{pod['metadata']['name']}/logs/"
    wait_for(
        lambda: _timed_get(session, logs_url)[0].status_code == 200,
        timeout=20,
        what="the logs permission answered after the fault",
        every=0.25,
    )
