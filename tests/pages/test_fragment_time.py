"""Fragment versions hold no time, and rendered fragments are shared only between viewers who see
the same: a poll of an unchanged Job answers 204 however far the clock moves, a condition time
alone flips (stuck) changes the version, the server's text (no JavaScript) is right for the moment
of the request, and one viewer's rendering never reaches a viewer with a different RBAC scope.

A simulated cluster with its controllers off (objects exactly as written); the pages' clock is the
simulated one, moved by ``cluster.advance`` (no sleeping).
"""

from __future__ import annotations

import itertools
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings

from dashboard.views import fragments, memo
from tests.pages.helpers import create_seen, fragment_url, iso, text, with_version

JOBS = ("batch.volcano.sh", "jobs")
QUEUES = ("scheduling.volcano.sh", "queues")
QUEUE = "ft-q"
HX = {"HX-Request": "true"}
_seq = itertools.count()


def _job(cluster, cache, ns: str, name: str, phase: str) -> None:
    at = iso(cluster.clock.now())
    obj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": at},
        "spec": {
            "queue": QUEUE,
            "minAvailable": 1,
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
                }
            ],
        },
        "status": {
            "state": {"phase": phase, "lastTransitionTime": at},
            "conditions": [{"status": phase, "lastTransitionTime": at}],
            "running": 1 if phase == "Running" else 0,
        },
    }
    create_seen(cluster, cache, JOBS, obj)


@pytest.fixture(scope="module")
def ft(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=18, name="fragtime") as (cluster, cache):
        create_seen(
            cluster,
            cache,
            QUEUES,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": QUEUE},
                "spec": {"weight": 1},
                "status": {"state": "Open"},
            },
        )
        yield cluster, cache


def _status_url(client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200
    return fragment_url(page.content.decode(), "status")


def test_an_unchanged_job_answers_204_across_minutes_and_its_text_is_right(ft, client):
    cluster, cache = ft
    ns, name = f"ft-{next(_seq)}", "steady"
    _job(cluster, cache, ns, name, "Running")
    path = f"/jobs/{ns}/{name}/"
    url = _status_url(client, path)
    for _ in range(3):
        cluster.advance(240)
        resp = client.get(url, headers=HX)
        assert resp.status_code == 204, resp.status_code
        assert int(resp[fragments.NOW_HEADER]) == int(cluster.clock.now().timestamp() * 1000)
    # 12 minutes later, the page as served without JavaScript says so.
    shown = text(client.get(path).content.decode())
    assert "in this phase for 12m" in shown, shown[:3000]
    assert "Created 12m ago" in shown
    # The ticking times carry their moment for static/dashboard/reltime.js.
    body = client.get(with_version(url, "stale"), headers=HX).content.decode()
    assert re.search(r'<time datetime="[^"]+" title="[^"]+" data-rel="age">12m</time>', body), body[:3000]


def test_a_job_becoming_stuck_changes_the_version(ft, client):
    cluster, cache = ft
    ns, name = f"ft-{next(_seq)}", "restarting"
    _job(cluster, cache, ns, name, "Restarting")
    url = _status_url(client, f"/jobs/{ns}/{name}/")
    limit = settings.VOLCANO_UI_STUCK_SECONDS
    cluster.advance(limit - 60)
    assert client.get(url, headers=HX).status_code == 204  # not stuck yet: same version
    cluster.advance(120)
    resp = client.get(url, headers=HX)
    assert resp.status_code == 200, resp.status_code
    body = resp.content.decode()
    assert "data-stuck" in body
    # The new version is stable again while it stays stuck.
    cluster.advance(300)
    assert client.get(fragment_url(body, "status"), headers=HX).status_code == 204


def test_a_future_time_beyond_skew_is_marked_for_the_browser(ft, client):
    cluster, cache = ft
    ns = f"ft-{next(_seq)}"
    ahead = cluster.clock.now() + timedelta(days=2)
    obj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "ahead", "namespace": ns, "creationTimestamp": iso(ahead)},
        "spec": {"queue": QUEUE, "tasks": []},
        "status": {"state": {"phase": "Running", "lastTransitionTime": iso(ahead)}},
    }
    create_seen(cluster, cache, JOBS, obj)
    page = client.get(f"/jobs/{ns}/ahead/").content.decode()
    assert "(clock skew?)" in text(page)
    assert 'data-rel-skew="ago"' in page and 'data-rel-skew="age"' in page


@pytest.fixture
def users(ft):
    """Two proxy users who see only namespace A and one who sees A and B (and Queues)."""
    from dashboard.access import review_cache
    from tests.prod.conftest import proxy_settings

    cluster, cache = ft
    a, b = "ft-vis-a", "ft-vis-b"
    if cluster.auth.user_named("ft-alice") is None:
        _job(cluster, cache, a, "in-a", "Running")
        _job(cluster, cache, b, "in-b", "Running")
        cluster.add_user("ft-alice", "token-ft-alice-0123456789", [a])
        cluster.add_user("ft-anna", "token-ft-anna-01234567890", [a])
        cluster.add_user("ft-bob", "token-ft-bob-012345678901", [a, b])
    review_cache.clear()
    with override_settings(**proxy_settings()):
        yield {name: {"HTTP_X_FORWARDED_USER": name} for name in ("ft-alice", "ft-anna", "ft-bob")}
    review_cache.clear()


def test_a_shared_rendering_never_reaches_another_visibility(ft, client, users, monkeypatch):
    renders = []
    real = fragments.render
    monkeypatch.setattr(fragments, "render", lambda *a, **k: renders.append(a[1]) or real(*a, **k))
    memo.FRAGMENT_HTML.clear()
    url = "/jobs/?f=results&v=stale"
    bob = client.get(url, headers=HX, **users["ft-bob"]).content.decode()
    assert "in-a" in bob and "in-b" in bob
    alice = client.get(url, headers=HX, **users["ft-alice"]).content.decode()
    assert "in-a" in alice and "in-b" not in alice
    assert len(renders) == 2  # different visibility: rendered for each
    anna = client.get(url, headers=HX, **users["ft-anna"]).content.decode()
    assert anna == alice and len(renders) == 2  # the same visibility: alice's rendering, shared


def test_viewers_of_one_job_share_one_render_per_version(ft, client, monkeypatch):
    cluster, cache = ft
    ns, name = f"ft-{next(_seq)}", "watched"
    _job(cluster, cache, ns, name, "Running")
    url = with_version(_status_url(client, f"/jobs/{ns}/{name}/"), "old")
    renders = []
    real = fragments.render
    monkeypatch.setattr(fragments, "render", lambda *a, **k: renders.append(a[1]) or real(*a, **k))
    bodies = {client.get(url, headers=HX).content for _ in range(5)}
    assert len(bodies) == 1 and len(renders) == 1
    # Another language is another rendering.
    client.get(url, headers=HX, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert len(renders) == 2
