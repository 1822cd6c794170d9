"""Preferences (theme, language) and what every read-only page answers to HEAD."""

from __future__ import annotations

import pytest

from tests.pages.helpers import pods

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_theme_preference_is_a_cookie_and_renders_server_side(client):
    resp = client.get("/prefs/theme/?theme=dark&next=/jobs/")
    assert resp.status_code == 302 and resp["Location"] == "/jobs/"
    assert resp.cookies["vui_theme"].value == "dark"
    assert 'data-theme="dark"' in client.get("/jobs/").content.decode()
    # An open redirect is refused.
    assert client.get("/prefs/theme/?theme=light&next=https://evil.example/")["Location"] == "/"


def test_language_switch_to_simplified_chinese(client):
    page = client.get("/").content.decode()
    assert 'action="/i18n/setlang/"' in page
    resp = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/jobs/"})
    assert resp.status_code == 302
    page = client.get("/jobs/").content.decode()
    assert 'lang="zh-hans"' in page
    assert "作业" in page  # "Jobs"


def test_read_only_pages_answer_head_like_get(client, demo_cluster):
    """HEAD (link checkers, uptime probes, curl -I) gets the GET answer without a body; other
    methods stay refused."""
    pod = pods(demo_cluster, "team-vision")[0]
    urls = [
        "/",
        "/jobs/",
        "/jobs/team-vision/augment-crashloop/",
        "/podgroups/",
        f"/podgroups/team-vision/{pod['metadata']['annotations']['scheduling.k8s.io/group-name']}/",
        "/queues/",
        "/queues/research-vision/",
        f"/pods/team-vision/{pod['metadata']['name']}/",
        "/kiosk/",
    ]
    for url in urls:
        get = client.get(url)
        head = client.head(url)
        assert get.status_code == 200, url
        assert head.status_code == 200, (url, head.status_code)
        assert head.content == b"", url
        assert head["Content-Type"] == get["Content-Type"]
        assert client.head("/jobs/team-vision/nope/").status_code == 404
        assert client.post(url).status_code in (403, 405), url
