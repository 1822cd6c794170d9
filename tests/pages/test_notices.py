"""Kinds that are not live get one clear notice on their pages, never empty tables or zeros.

Uses the in-memory ClusterCache (the real cache class, no informers): its per-kind states are set
the way the informers set them for a missing CRD, a 403, a lost watch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pages.helpers import text

ALL = ("jobs", "podgroups", "queues", "pods", "events")


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


def test_jobs_not_installed_is_one_notice_not_an_empty_table(client, cache):
    cache.store("jobs").set_state("not_installed")
    for url in ("/", "/jobs/", "/queues/default/"):
        page = client.get(url).content.decode()
        assert page.count('data-kind="jobs" data-state="not_installed"') == 1, url
        assert "are not installed in this cluster" in text(page)
    page = client.get("/jobs/").content.decode()
    assert "Jobs cannot be shown" in text(page)
    assert "<table" not in page.split('id="frag-results"')[1]
    jobs_card = client.get("/").content.decode().split('id="jobs-by-phase"')[1].split('id="pgs-by-phase"')[0]
    assert "data-count" not in jobs_card and "Jobs are not available" in text(jobs_card)


def test_forbidden_podgroups(client, cache):
    cache.store("podgroups").set_state("forbidden", error="podgroups is forbidden")
    page = client.get("/podgroups/").content.decode()
    assert "You are not allowed" not in text(page)
    assert "The dashboard's own identity is not allowed to list PodGroups in this cluster" in text(page)
    assert "podgroups is forbidden" in page  # the API server's words, naming that identity
    assert "PodGroups cannot be shown" in text(page)


def test_stale_kind_warns_but_keeps_showing_data(client, cache):
    cache.store("queues").set_state("stale", error="watch dropped")
    page = client.get("/queues/").content.decode()
    assert "may be out of date" in text(page)
    assert 'data-queue="default"' in page
    assert "watch dropped" in page


def test_syncing_then_synced_changes_the_notices_fragment(client, cache):
    cache.store("events").set_state("syncing")
    page = client.get("/").content.decode()
    assert "Loading Events from the cluster" in text(page)
    cache.store("events").mark_synced()
    from tests.pages.helpers import fragment_url

    resp = client.get(fragment_url(page, "notices"), headers={"HX-Request": "true"})
    assert resp.status_code == 200
    assert "Loading Events" not in resp.content.decode()


def test_missing_objects_are_404_with_a_page(client, cache):
    for url in ("/jobs/a/b/", "/podgroups/a/b/", "/queues/nope/", "/pods/a/b/"):
        resp = client.get(url)
        assert resp.status_code == 404
        assert "Not found" in resp.content.decode()


def test_forbidden_names_the_dashboards_identity_in_chinese_too(client, cache):
    cache.store("queues").set_state("forbidden", error='queues is forbidden: User "admin" cannot list')
    client.cookies["django_language"] = "zh-hans"
    page = text(client.get("/queues/").content.decode())
    assert "仪表盘自身的身份无权在此集群中列出" in page
    assert "你无权" not in page


CUT = "API server unreachable: the connection was cut off in the middle of a response"


def test_a_request_waiting_for_an_answer_is_said_with_the_error_as_the_previous_cause(client, cache):
    from datetime import UTC, datetime, timedelta

    from dashboard.templatetags.volcano import absolute
    from dashboard.views import notices
    from tests.pages.helpers import fragment_url

    for kind in ("jobs", "podgroups"):
        cache.store(kind).set_state("stale", error=CUT, category="unreachable")
    page = client.get("/").content.decode()
    assert "Waiting for an answer" not in text(page) and "Before that" not in text(page)

    # Both reconnects wait, sent a second apart: still one notice, since the earlier one.
    t0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    cache.store("jobs").set_state("stale", error=CUT, category="unreachable", waiting_since=t0)
    cache.store("podgroups").set_state(
        "stale", error=CUT, category="unreachable", waiting_since=t0 + timedelta(seconds=1)
    )
    (notice,) = notices.notices(cache.snapshot(), "jobs", "podgroups")
    assert notice["kinds"] == ("jobs", "podgroups") and notice["waiting_since"] == t0

    # The notices bar has a new version at once, not at its next 10-second step.
    resp = client.get(fragment_url(page, "notices"), headers={"HX-Request": "true"})
    assert resp.status_code == 200
    bar = resp.content.decode()
    assert bar.count('data-state="stale"') == 1
    assert f'<time datetime="{t0.isoformat()}">' in bar  # an absolute time: it does not go stale
    assert f"Waiting for an answer from the API server since {absolute(t0)}" in text(bar)
    assert f"Before that: {CUT}" in text(bar)

    # The kiosk leaves the wait to the other pages, as it does the error detail: its one notice
    # carries it for the desk pages' markup, its style hides it; its one line for several
    # notices has neither.
    kiosk = client.get("/kiosk/").content.decode()
    assert '<span class="small notice-waiting">' in kiosk
    css = (Path(__file__).resolve().parents[2] / "static" / "dashboard" / "app.css").read_text()
    assert "body.kiosk .notice .container > span.notice-waiting { display: none; }" in css
    cache.store("events").set_state("forbidden", error="events is forbidden")
    (line,) = notices.one_notice(notices.notices(cache.snapshot(), "jobs", "podgroups", "events"))
    assert line["waiting"] == "" and line["waiting_since"] is None
    assert "Waiting" not in text(client.get("/kiosk/").content.decode())

    # Answered: the mark goes, the error is the current cause again.
    cache.store("jobs").set_state("stale", error=CUT, category="unreachable")
    cache.store("podgroups").set_state("stale", error=CUT, category="unreachable")
    bar = text(client.get("/").content.decode())
    assert "Waiting for an answer" not in bar and "Before that" not in bar and CUT in bar


def test_a_new_error_in_the_same_state_is_a_new_notices_bar_at_once(client, cache):
    from tests.pages.helpers import fragment_url

    cache.store("jobs").set_state("stale", error=CUT, category="unreachable")
    page = client.get("/").content.decode()
    assert CUT in text(page)
    url = fragment_url(page, "notices")  # carries the version the page shows
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 204

    refused = "HTTP 403 Forbidden: jobs is forbidden"
    cache.store("jobs").set_state("stale", error=refused, category="")
    again = client.get(url, headers={"HX-Request": "true"})
    assert again.status_code == 200
    assert refused in text(again.content.decode()) and CUT not in text(again.content.decode())
