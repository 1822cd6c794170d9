"""What a Queue's page keeps between requests (its queue's sorted Jobs and PodGroups, their
waiting-longest-first order, its fragments' versions, the queue tree's rows) answers as a fresh
computation would: after an object changes, in another language, for viewers who see different
namespaces and as time passes.

A simulated cluster with its controllers off (objects exactly as written), read by a live cache;
the pages' clock is the simulated clock, advanced by the tests. Each test has its own Queue.
"""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from dashboard.views import memo
from tests.pages.helpers import fragment_version, kind, seen_job, seen_podgroup
from tests.pages.test_list_rows import CJK, PODGROUPS, _page
from tests.pages.test_queue_rows import _queue, _seq


@pytest.fixture(scope="module")
def qm(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=31, name="queuememos") as (cluster, cache):
        yield cluster, cache


def _fresh(client, path: str, **headers) -> str:
    """The page with nothing the queue pages keep: every memo emptied first."""
    from dashboard.kube import snapshot
    from dashboard.views import queues

    snapshot._SORTED_BUCKETS.clear()
    queues._SORT_ORDERS.clear()
    queues._VERSIONS.clear()
    queues._PHASES.clear()
    memo.SECTIONS.clear()
    memo.LIST_ROW_HTML.clear()
    memo.FRAGMENT_HTML.clear()
    return _page(client, path, **headers)


def _shown(page: str) -> str:
    """The page without its per-request CSRF token."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def _pg_order(page: str, ns: str) -> list[str]:
    return re.findall(rf'href="/podgroups/{ns}/([^/"]+)/"', page)


def _pending_card(page: str) -> str:
    m = re.search(r'phase=Pending"><span class="phase-card-count">(\d+)</span>', page)
    assert m, "no Pending card"
    return m.group(1)


def _mutate_pg(cluster, cache, ns: str, name: str, change, seen) -> None:
    cluster.store.mutate(kind(*PODGROUPS), ns, name, change)
    cache.wait_for(lambda s: seen(s.podgroups.get(ns, name) or {}), timeout=10)


def _many_podgroups(cluster, cache, queue: str, ns: str) -> None:
    # Above the size from which the snapshot remembers a queue's sorted objects.
    from dashboard.kube.snapshot import SORTED_BUCKET_MIN

    for i in range(SORTED_BUCKET_MIN + 2):
        seen_podgroup(cluster, cache, queue, ns, f"pg{i:03d}", age=7200 - i, phase="Pending", members=2)


def test_a_changed_podgroup_changes_the_versions_and_the_counts_only_when_its_phase_does(qm, client):
    cluster, cache = qm
    queue = _queue(cluster, cache)
    ns = f"qm-{next(_seq)}"
    _many_podgroups(cluster, cache, queue, ns)
    path = f"/queues/{queue}/"
    page = _page(client, path)
    versions = (fragment_version(page, "status"), fragment_version(page, "jobs"))
    assert _shown(_page(client, path)) == _shown(page)
    total = int(_pending_card(page))
    assert _pg_order(page, ns)[:2] == ["pg000", "pg001"]  # the longest waiting first

    def label(obj):
        obj["metadata"]["labels"] = {"seen": "yes"}

    _mutate_pg(cluster, cache, ns, "pg005", label, lambda g: g["metadata"].get("labels"))
    page = _page(client, path)
    assert (fragment_version(page, "status"), fragment_version(page, "jobs")) != versions
    assert int(_pending_card(page)) == total
    assert _shown(page) == _shown(_fresh(client, path))

    def run(obj):
        obj["status"]["phase"] = "Running"

    _mutate_pg(cluster, cache, ns, "pg000", run, lambda g: g["status"]["phase"] == "Running")
    page = _page(client, path)
    assert int(_pending_card(page)) == total - 1
    assert _pg_order(page, ns)[0] == "pg001"  # pg000 no longer waits: after every waiting one
    assert _pg_order(_page(client, path + "?pgs_page=2"), ns)[-1] == "pg000"
    assert _shown(page) == _shown(_fresh(client, path))


def test_time_passing_moves_a_podgroup_created_ahead_of_the_clock_into_its_place(qm, client):
    cluster, cache = qm
    queue = _queue(cluster, cache)
    ns = f"qm-{next(_seq)}"
    _many_podgroups(cluster, cache, queue, ns)
    seen_podgroup(
        cluster, cache, queue, ns, "zzz-ahead", age=-90, phase="Pending", members=2
    )  # a later clock
    seen_podgroup(cluster, cache, queue, ns, "mmm-runs", age=30, phase="Running", members=2)
    path = f"/queues/{queue}/?pgs_page=2"
    # It waits 0 until the clock passes its creation: with the ones that do not wait, by name.
    assert _pg_order(_page(client, path), ns)[-2:] == ["mmm-runs", "zzz-ahead"]
    cluster.clock.advance(60)  # still ahead by 30 s
    page = _page(client, path)
    assert _pg_order(page, ns)[-2:] == ["mmm-runs", "zzz-ahead"]
    assert _shown(page) == _shown(_fresh(client, path))
    cluster.clock.advance(90)  # created 60 s ago now: it waits, before the running one
    page = _page(client, path)
    assert _pg_order(page, ns)[-2:] == ["zzz-ahead", "mmm-runs"]
    assert _shown(page) == _shown(_fresh(client, path))


def test_the_tree_counts_follow_the_language(qm, client):
    cluster, cache = qm
    queue = _queue(cluster, cache)
    ns = f"qm-{next(_seq)}"
    seen_podgroup(cluster, cache, queue, ns, "worded", age=60, phase="Pending", members=2)
    path = f"/queues/{queue}/"
    english = _page(client, path)
    client.cookies["django_language"] = "zh-hans"
    try:
        chinese = _page(client, path)
        assert CJK.search(chinese) and _pending_card(chinese) == "1"
        assert _shown(chinese) == _shown(_fresh(client, path))
    finally:
        client.cookies["django_language"] = "en"
    assert _shown(_page(client, path)) == _shown(english)


def test_viewers_of_different_namespaces_get_their_own_objects_order_and_versions(qm, client):
    from dashboard.access import review_cache
    from tests.prod.conftest import proxy_settings

    cluster, cache = qm
    queue = _queue(cluster, cache)
    n = next(_seq)
    a, b = f"qm-vis{n}-a", f"qm-vis{n}-b"
    _many_podgroups(cluster, cache, queue, a)
    seen_podgroup(cluster, cache, queue, b, "in-b", age=99999, phase="Pending", members=2)  # waits longest
    seen_job(cluster, cache, queue, b, "job-b", age=600, members=2)
    cluster.add_user(f"qm-alice{n}", f"token-qm-alice-{n:012d}", [a])
    cluster.add_user(f"qm-bob{n}", f"token-qm-bob-{n:014d}", [a, b])
    alice, bob = {"HTTP_X_FORWARDED_USER": f"qm-alice{n}"}, {"HTTP_X_FORWARDED_USER": f"qm-bob{n}"}
    path = f"/queues/{queue}/"
    review_cache.clear()
    try:
        with override_settings(**proxy_settings()):
            bobs = _page(client, path, **bob)
            alices = _page(client, path, **alice)
            assert "in-b" in bobs and "job-b" in bobs and "in-b" not in alices and "job-b" not in alices
            assert fragment_version(alices, "jobs") != fragment_version(bobs, "jobs")
            assert _pending_card(bobs) == str(int(_pending_card(alices)) + 1)
            # In turn, each as a fresh computation gives it.
            assert _shown(_page(client, path, **bob)) == _shown(bobs)
            assert _shown(_page(client, path, **alice)) == _shown(alices)
            assert _shown(_fresh(client, path, **alice)) == _shown(alices)
            assert _shown(_fresh(client, path, **bob)) == _shown(bobs)
    finally:
        review_cache.clear()


def test_a_parents_counts_follow_a_childs_podgroup_phase_not_its_other_changes(qm, client):
    from tests.pages.test_queue_rows import QUEUES

    cluster, cache = qm
    parent = _queue(cluster, cache)
    child = f"{parent}-child"
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": child},
        "spec": {"weight": 1, "parent": parent},
        "status": {"state": "Open"},
    }
    cluster.store.create(kind(*QUEUES), obj, None, replay=True)
    cache.wait_for(lambda s: s.queues.get(None, child) is not None, timeout=10)
    ns = f"qm-{next(_seq)}"
    seen_podgroup(cluster, cache, child, ns, "in-child", age=60, phase="Pending", members=2)
    path = f"/queues/{parent}/"
    assert _pending_card(_page(client, path)) == "1"

    def label(obj):
        obj["metadata"]["labels"] = {"seen": "yes"}

    _mutate_pg(cluster, cache, ns, "in-child", label, lambda g: g["metadata"].get("labels"))
    page = _page(client, path)
    assert _pending_card(page) == "1" and _shown(page) == _shown(_fresh(client, path))

    def run(obj):
        obj["status"]["phase"] = "Running"

    _mutate_pg(cluster, cache, ns, "in-child", run, lambda g: g["status"]["phase"] == "Running")
    page = _page(client, path)
    assert _pending_card(page) == "0" and _shown(page) == _shown(_fresh(client, path))
