"""The small Pod page, the kiosk, preferences (theme, language)."""

from __future__ import annotations

import pytest

from tests.pages.helpers import check_fragment, pods, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_pod_page_links_back_to_job_podgroup_and_queue(client, demo_cluster):
    pod = next(
        p
        for p in pods(demo_cluster, "team-vision")
        if p["metadata"].get("labels", {}).get("volcano.sh/job-name") == "augment-crashloop"
    )
    name = pod["metadata"]["name"]
    page = client.get(f"/pods/team-vision/{name}/").content.decode()
    assert 'href="/jobs/team-vision/augment-crashloop/"' in page
    group = pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
    assert f'href="/podgroups/team-vision/{group}/"' in page
    assert 'href="/queues/research-vision/"' in page
    assert "CrashLoopBackOff" in page
    check_fragment(client, page, "status")
    assert client.get("/pods/team-vision/nope/").status_code == 404


def test_kiosk_is_dark_has_no_controls_and_refreshes_itself(client, demo_cluster):
    page = client.get("/kiosk/").content.decode()
    assert 'data-theme="dark"' in page
    assert "<form" not in page and 'class="mainnav"' not in page
    assert "kiosk.js" in page and 'data-poll="board"' in page
    assert "Needs attention" in text(page)
    check_fragment(client, page, "board")


def test_kiosk_rotation_focuses_one_queue_at_a_time(client, demo_cluster):
    page = client.get("/kiosk/?rotate=15").content.decode()
    assert "kiosk-focus-name" in page
    assert client.get("/kiosk/?rotate=abc").status_code == 200


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
