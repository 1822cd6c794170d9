"""A missing object of a kind the cache cannot read is reported as unreadable, never as absent;
links go only to objects the cache holds (unreadable_reason / absent_hint).

Uses the in-memory ClusterCache (the real cache class; states set the way the informers set them).
"""

from __future__ import annotations

import pytest

from tests.pages.helpers import text

ALL = ("jobs", "podgroups", "queues", "pods", "events")

JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {
        "name": "quota-starved",
        "namespace": "platform",
        "uid": "j1",
        "resourceVersion": "5",
        "creationTimestamp": "2026-11-29T10:00:00Z",
    },
    "spec": {"queue": "batch", "minAvailable": 1, "tasks": [{"name": "w", "replicas": 1}]},
    "status": {"state": {"phase": "Pending"}},
}

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "done-w-0",
        "namespace": "research",
        "uid": "p1",
        "resourceVersion": "7",
        "labels": {"volcano.sh/job-name": "done", "volcano.sh/queue-name": "gone-queue"},
        "annotations": {"scheduling.k8s.io/group-name": "done-148b"},
    },
    "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    "status": {"phase": "Succeeded"},
}


@pytest.fixture
def cache(memory_cache, request):
    never_synced = getattr(request, "param", ())
    for kind in ALL:
        if kind not in never_synced:
            memory_cache.store(kind).mark_synced()
    memory_cache.store("jobs").upsert(JOB)
    memory_cache.store("pods").upsert(POD)
    return memory_cache


def test_queue_page_when_queues_forbidden_says_so_instead_of_404(client, cache):
    cache.store("queues").set_state("forbidden", error="queues is forbidden")
    resp = client.get("/queues/research/")
    page = text(resp.content.decode())
    assert resp.status_code == 403
    assert "Queues cannot be read: forbidden" in page
    assert "not found" not in page.lower()


@pytest.mark.parametrize("cache", [("queues",)], indirect=True)
def test_a_detail_page_opened_while_its_kind_is_still_loading_reloads_itself(client, cache):
    """The demo prints its address before the first list arrives: the page opened then must not
    stay on "still loading" (it has no fragment to poll)."""
    from dashboard.views.errors import UNREADABLE_RETRY_SECONDS

    resp = client.get("/queues/research/")
    assert resp.status_code == 503 and "still loading" in text(resp.content.decode())
    fast, slow = UNREADABLE_RETRY_SECONDS
    assert f'<meta http-equiv="refresh" content="{fast}">' in resp.content.decode()
    assert resp["Retry-After"] == str(fast)
    cache.store("queues").set_state("forbidden", error="queues is forbidden")
    resp = client.get("/queues/research/")
    assert (
        resp.status_code == 403 and f'<meta http-equiv="refresh" content="{slow}">' in resp.content.decode()
    )
    cache.store("queues").mark_synced()
    assert client.get("/queues/research/").status_code == 404  # loaded: the reload now tells


def test_queue_page_when_synced_and_absent_is_still_404(client, cache):
    assert client.get("/queues/research/").status_code == 404


@pytest.mark.parametrize("state", ["forbidden", "not_installed", "syncing"])
@pytest.mark.parametrize("cache", [("queues",)], indirect=True)
def test_why_pending_never_claims_an_unreadable_queue_does_not_exist(client, cache, state):
    cache.store("queues").set_state(state)  # never synced: the cache holds no Queue at all
    for url in ("/jobs/platform/quota-starved/", "/"):
        page = text(client.get(url).content.decode())
        assert "does not exist" not in page, url
    page = text(client.get("/jobs/platform/quota-starved/").content.decode())
    assert "Queue “batch” cannot be checked: Queues cannot be read" in page


def test_why_pending_absent_queue_when_readable_still_says_so(client, cache):
    page = text(client.get("/jobs/platform/quota-starved/").content.decode())
    assert "Queue “batch” does not exist" in page


def test_podgroups_not_installed_is_not_no_podgroup(client, cache):
    cache.store("podgroups").set_state("not_installed")
    page = text(client.get("/jobs/platform/quota-starved/").content.decode())
    assert "No PodGroup exists" not in page
    assert "PodGroups cannot be read (not installed)" in page
    assert "PodGroup none" not in page


def test_links_only_to_objects_in_the_cache(client, cache):
    page = client.get("/pods/research/done-w-0/").content.decode()
    assert 'href="/podgroups/research/done-148b/"' not in page
    assert 'href="/jobs/research/done/"' not in page
    assert 'href="/queues/gone-queue/"' not in page
    assert "done-148b (not found)" in text(page)
    page = client.get("/jobs/platform/quota-starved/").content.decode()
    assert 'href="/queues/batch/"' not in page
    assert "batch (not found)" in text(page)
    cache.store("queues").upsert(
        {"metadata": {"name": "batch", "resourceVersion": "1"}, "spec": {}, "status": {"state": "Open"}}
    )
    page = client.get("/jobs/platform/quota-starved/").content.decode()
    assert 'href="/queues/batch/"' in page


def test_list_pages_link_a_queue_only_when_it_exists(client, cache):
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "platform", "uid": "g1", "resourceVersion": "3"},
        "spec": {"queue": "batch", "minMember": 1},
        "status": {"phase": "Pending"},
    }
    cache.store("podgroups").upsert(pg)
    for url in ("/jobs/", "/podgroups/"):
        page = client.get(url).content.decode()
        assert 'href="/queues/batch/"' not in page, url
        assert "batch (not found)" in text(page), url
    jobs_version = _results_version(client, "/jobs/")
    cache.store("queues").upsert(
        {"metadata": {"name": "batch", "resourceVersion": "1"}, "spec": {}, "status": {"state": "Open"}}
    )
    # The polled results fragment must change too, or an open page would keep the stale hint.
    assert _results_version(client, "/jobs/") != jobs_version
    for url in ("/jobs/", "/podgroups/"):
        page = client.get(url).content.decode()
        assert 'href="/queues/batch/"' in page, url
        assert "(not found)" not in text(page), url


@pytest.mark.parametrize("state", ["forbidden", "syncing"])
@pytest.mark.parametrize("cache", [("queues",)], indirect=True)
def test_list_pages_do_not_mark_every_queue_when_queues_are_unreadable(client, cache, state):
    cache.store("queues").set_state(state)
    page = text(client.get("/jobs/").content.decode())
    assert "(not found)" not in page and "(cannot be read" not in page


def _results_version(client, url: str) -> str:
    import re

    m = re.search(
        r'hx-get="[^"]*[?&]amp;f=results&amp;v=([^"&]+)"|[?&]f=results&(?:amp;)?v=([^"&]+)',
        client.get(url).content.decode(),
    )
    assert m, "no results fragment"
    return m.group(1) or m.group(2)


def test_overview_warning_event_for_missing_object_is_not_linked(client, cache):
    cache.store("events").upsert(
        {
            "metadata": {"name": "ev1", "namespace": "research", "uid": "e1", "resourceVersion": "9"},
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": "boom",
            "count": 1,
            "lastTimestamp": "2026-11-29T10:00:00Z",
            "involvedObject": {"kind": "Pod", "namespace": "research", "name": "vanished-0"},
        }
    )
    page = client.get("/").content.decode()
    assert "vanished-0" in page
    assert 'href="/pods/research/vanished-0/"' not in page


FAILED_JOB = {
    **JOB,
    "metadata": {**JOB["metadata"], "name": "broke", "uid": "j2"},
    "status": {"state": {"phase": "Failed"}, "failed": 1, "minAvailable": 1},
}


def test_forbidden_pods_are_unavailable_not_gone(client, cache):
    cache.store("jobs").upsert(FAILED_JOB)
    cache.store("pods").set_state("forbidden", error="pods is forbidden")
    page = text(client.get("/jobs/platform/broke/").content.decode())
    assert "Pods are unavailable (forbidden): whether this gang has pods cannot be told." in page
    assert "Pods are unavailable (forbidden), so the failed containers cannot be shown." in page
    assert "pods were removed" not in page and "pods are gone" not in page


def test_forbidden_events_are_not_available_not_none(client, cache):
    cache.store("events").set_state("forbidden", error="events is forbidden")
    for path in ("/jobs/platform/quota-starved/", "/kiosk/", "/pods/research/done-w-0/"):
        page = text(client.get(path).content.decode())
        assert "Events are not available (see the notice above)." in page, path
        assert "No events." not in page and "No warnings." not in page, path
    # The Events card's count is unknown, not 0.
    html = client.get("/jobs/platform/quota-starved/").content.decode()
    card = html.split('id="events-title"', 1)[1].split("</h2>", 1)[0]
    assert 'class="count-pill"' in card and "—" in card and ">0<" not in card, card
