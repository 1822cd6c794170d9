"""Concurrent identical whole-page GETs share one rendering (dashboard/views/sharing.py); each
answer carries its own browser's CSRF token; different viewers and later requests render anew."""

from __future__ import annotations

import re
import threading

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from dashboard.views import listing, sharing

TOKEN = re.compile(rb'name="csrfmiddlewaretoken" value="([A-Za-z0-9]+)"')


def _wait_for_waiters(n: int) -> None:
    """Until ``n`` requests are inside PAGE_FLIGHTS (bounded: threads, not simulated state)."""
    done = threading.Event()
    for _ in range(2000):
        if sum(sharing.PAGE_FLIGHTS._in_flight.values()) >= n:
            return
        done.wait(0.005)
    raise AssertionError(f"{n} requests never waited together")


@pytest.fixture
def held_render(monkeypatch):
    """The jobs list's first rendering waits for ``release``; ``calls`` counts renderings."""
    state = {"calls": 0, "entered": threading.Event(), "release": threading.Event()}
    real = listing._results

    def slow(*args, **kwargs):
        state["calls"] += 1
        if state["calls"] == 1:
            state["entered"].set()
            assert state["release"].wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(listing, "_results", slow)
    yield state
    state["release"].set()


def _get(client: Client, path: str, into: dict, name: str, **headers) -> threading.Thread:
    t = threading.Thread(target=lambda: into.update({name: client.get(path, **headers)}))
    t.start()
    return t


def test_a_request_during_the_same_pages_rendering_takes_it_with_its_own_token(demo_cache, held_render):
    first, second = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    second.get(reverse("overview"))  # its own CSRF cookie, from an earlier page
    got: dict = {}
    t1 = _get(first, "/jobs/?sort=name", got, "first")
    assert held_render["entered"].wait(10)
    t2 = _get(second, "/jobs/?sort=name", got, "second")
    _wait_for_waiters(2)
    held_render["release"].set()
    t1.join(10)
    t2.join(10)
    assert held_render["calls"] == 1
    a, b = got["first"], got["second"]
    assert a.status_code == b.status_code == 200
    tokens_a, tokens_b = TOKEN.findall(a.content), TOKEN.findall(b.content)
    assert tokens_a and tokens_b and set(tokens_a).isdisjoint(tokens_b)
    assert TOKEN.sub(b"", a.content) == TOKEN.sub(b"", b.content)
    # Each browser's token is valid with its own cookie: the language form posts.
    for client, token in ((first, tokens_a[0]), (second, tokens_b[0])):
        resp = client.post(
            reverse("set_language"), {"csrfmiddlewaretoken": token.decode(), "language": "en", "next": "/"}
        )
        assert resp.status_code == 302
    # The other's token is not.
    resp = second.post(
        reverse("set_language"), {"csrfmiddlewaretoken": "x" * 64, "language": "en", "next": "/"}
    )
    assert resp.status_code == 403


def test_a_viewer_in_another_language_does_not_wait_for_the_rendering(demo_cache, held_render):
    got: dict = {}
    t1 = _get(Client(), "/jobs/", got, "en")
    assert held_render["entered"].wait(10)
    zh = Client()
    zh.cookies["django_language"] = "zh-hans"
    t2 = _get(zh, "/jobs/", got, "zh")
    t2.join(10)
    assert "zh" in got and not held_render["release"].is_set()  # answered while the first is held
    held_render["release"].set()
    t1.join(10)
    assert held_render["calls"] == 2
    assert got["zh"].content != got["en"].content


def test_requests_one_after_the_other_each_render(demo_cache, held_render):
    held_render["release"].set()
    c = Client()
    assert c.get("/jobs/").status_code == 200
    assert c.get("/jobs/").status_code == 200
    assert held_render["calls"] == 2


def test_fragment_polls_are_not_whole_pages(demo_cache) -> None:
    rf = RequestFactory()
    assert sharing.page_key(rf.post("/jobs/")) is None
    poll = rf.get("/jobs/?f=results&v=1", HTTP_HX_REQUEST="true")
    poll.htmx = True  # as django-htmx's middleware sets it
    assert sharing.page_key(poll) is None
    assert sharing.page_key(rf.get("/jobs/")) is not None


def test_a_rendering_that_sets_a_cookie_is_not_shared(demo_cache) -> None:
    entered, release = threading.Event(), threading.Event()
    calls: list[int] = []

    @sharing.shared_page
    def view(request):
        calls.append(1)
        if len(calls) == 1:
            entered.set()
            assert release.wait(10)
        resp = HttpResponse(f"<p>{len(calls)}</p>", content_type="text/html")
        resp.set_cookie("seen", str(len(calls)))
        return resp

    rf = RequestFactory()
    got: dict = {}
    t1 = threading.Thread(target=lambda: got.update(a=view(rf.get("/x/"))))
    t1.start()
    assert entered.wait(10)
    t2 = threading.Thread(target=lambda: got.update(b=view(rf.get("/x/"))))
    t2.start()
    _wait_for_waiters(2)
    release.set()
    t1.join(10)
    t2.join(10)
    assert len(calls) == 2
    assert got["a"].content == b"<p>1</p>" and got["b"].content == b"<p>2</p>"
    assert got["b"].cookies["seen"].value == "2"


def test_the_viewer_key_separates_what_a_rendering_shows(demo_cache) -> None:
    """Pages and fragments are shared by one key: each part that changes a rendering changes it."""
    from django.urls import set_script_prefix
    from django.utils import translation

    from dashboard.views import memo

    rf = RequestFactory()
    base = memo.viewer_key(rf.get("/jobs/?page=2&v=1"))
    assert memo.viewer_key(rf.get("/jobs/?page=2&v=1")) == base
    assert memo.viewer_key(rf.get("/jobs/?page=3&v=1")) != base
    assert memo.viewer_key(rf.get("/jobs/?page=2&v=2"), drop=("v",)) == memo.viewer_key(
        rf.get("/jobs/?page=2&v=1"), drop=("v",)
    )
    dark = rf.get("/jobs/?page=2&v=1")
    dark.COOKIES["vui_theme"] = "dark"
    assert memo.viewer_key(dark) != base
    with translation.override("zh-hans"):
        assert memo.viewer_key(rf.get("/jobs/?page=2&v=1")) != base
    set_script_prefix("/volcano/")
    try:
        assert memo.viewer_key(rf.get("/jobs/?page=2&v=1")) != base
    finally:
        set_script_prefix("/")
