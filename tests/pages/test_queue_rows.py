"""A Queue's page renders its Job and PodGroup rows once and shares them (memo.list_rows_html, with
the page's own row partials): a reused row is always the row a fresh render gives, after its Job or
PodGroup changes, in another language, for viewers who see different namespaces and as time passes
(its ages' text); the cells show what the page shows.

A simulated cluster with its controllers off (objects exactly as written), read by a live cache;
the pages' clock is the simulated clock, advanced by the tests. Each test has its own Queue.
"""

from __future__ import annotations

import itertools
import re

import pytest
from django.test import override_settings

from dashboard.views import memo
from tests.pages.helpers import iso, kind, seen_job, seen_podgroup, text
from tests.pages.test_list_rows import CJK, JOBS, PODGROUPS, _page, _Renders

QUEUES = ("scheduling.volcano.sh", "queues")
_seq = itertools.count()


@pytest.fixture(scope="module")
def qr(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=29, name="queuerows") as (cluster, cache):
        yield cluster, cache


@pytest.fixture
def renders(monkeypatch) -> _Renders:
    monkeypatch.setattr(memo, "LIST_ROW_HTML", memo.SizedMemo(memo.LIST_ROW_HTML.budget))
    counting = _Renders(memo.get_template)
    monkeypatch.setattr(memo, "get_template", counting)
    return counting


def _queue(cluster, cache) -> str:
    name = f"qr-q{next(_seq)}"
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1},
        "status": {"state": "Open"},
    }
    cluster.store.create(kind(*QUEUES), queue, None, replay=True)
    cache.wait_for(lambda s: s.queues.get(None, name) is not None, timeout=10)
    return name


def _job_row(page: str, ns: str, name: str) -> str:
    m = re.search(
        rf'<tr>\s*<td class="name"><a class="objlink" href="/jobs/{ns}/{name}/">.*?</tr>', page, re.S
    )
    assert m, f"no Job row of {ns}/{name}"
    return m.group(0)


def _pg_row(page: str, ns: str, name: str) -> str:
    m = re.search(
        rf'<tr>\s*<td class="name"><a class="objlink" href="/podgroups/{ns}/{name}/">.*?</tr>', page, re.S
    )
    assert m, f"no PodGroup row of {ns}/{name}"
    return m.group(0)


def _cells(row: str) -> list[str]:
    return [" ".join(text(c).split()) for c in re.findall(r"<td[^>]*>.*?</td>", row, re.S)]


def _tables(page: str) -> list[str]:
    return re.findall(r"<tbody>.*?</tbody>", page, re.S)


def _fresh(client, path: str, **headers) -> str:
    """The page with every row rendered anew."""
    memo.LIST_ROW_HTML.clear()
    return _page(client, path, **headers)


def test_the_rows_show_the_pages_cells(qr, client, renders):
    cluster, cache = qr
    queue = _queue(cluster, cache)
    ns = f"qr-{next(_seq)}"
    seen_job(cluster, cache, queue, ns, "short", age=7200 + 5, running=1, members=2)  # below minAvailable 2
    seen_job(cluster, cache, queue, ns, "done", age=600, phase="Completed", running=0, succeeded=2, members=2)
    seen_podgroup(cluster, cache, queue, ns, "waits", age=150, phase="Pending", members=2)
    seen_podgroup(cluster, cache, queue, ns, "runs", age=7200, phase="Running", members=2)
    page = _page(client, f"/queues/{queue}/")
    name, status, gang, in_phase = _cells(_job_row(page, ns, "short"))
    assert (name, in_phase) == (f"short {ns}", "2h")
    assert (status, gang) == ("Running below minAvailable", "1 /2")
    assert "1 of minAvailable 2 running" in _job_row(page, ns, "short")
    assert _cells(_job_row(page, ns, "done")) == [f"done {ns}", "Completed", "finished: 2 succeeded", "10m"]
    assert _cells(_pg_row(page, ns, "waits")) == [f"waits {ns}", "Pending", "0 /2", "2m30s"]
    assert _cells(_pg_row(page, ns, "runs")) == [f"runs {ns}", "Running", "0 /2", "—"]
    # Longest waiting first, the final Job last: the order the page sorts them in.
    assert page.index(f"/jobs/{ns}/short/") < page.index(f"/jobs/{ns}/done/")
    assert page.index(f"/podgroups/{ns}/waits/") < page.index(f"/podgroups/{ns}/runs/")
    assert renders.count == 4
    assert _tables(_page(client, f"/queues/{queue}/")) == _tables(page)  # every row reused
    assert renders.count == 4
    assert _tables(_fresh(client, f"/queues/{queue}/")) == _tables(page)


def test_a_changed_job_renders_only_its_row(qr, client, renders):
    cluster, cache = qr
    queue = _queue(cluster, cache)
    ns = f"qr-{next(_seq)}"
    seen_job(cluster, cache, queue, ns, "kept", age=7200, members=2)
    seen_job(cluster, cache, queue, ns, "changed", age=7200, members=2)
    seen_podgroup(cluster, cache, queue, ns, "pg", age=7200, phase="Running", members=2)
    path = f"/queues/{queue}/"
    first = _page(client, path)
    assert renders.count == 3
    _page(client, path)
    assert renders.count == 3

    def fail(obj):
        obj["status"]["state"]["phase"] = "Failed"

    cluster.store.mutate(kind(*JOBS), ns, "changed", fail)
    cache.wait_for(
        lambda s: (s.jobs.get(ns, "changed") or {})["status"]["state"]["phase"] == "Failed", timeout=10
    )
    after = _page(client, path)
    assert renders.count == 4  # only the changed Job's row
    assert _cells(_job_row(after, ns, "changed"))[1] == "Failed"
    assert _job_row(after, ns, "kept") == _job_row(first, ns, "kept")
    fresh = _fresh(client, path)
    for name in ("kept", "changed"):
        assert _job_row(after, ns, name) == _job_row(fresh, ns, name)
    assert _pg_row(after, ns, "pg") == _pg_row(fresh, ns, "pg")


def test_a_jobs_row_follows_its_podgroup(qr, client, renders):
    """The Job is the same object, its hint (read from its PodGroup) is not: its row is rendered again."""
    cluster, cache = qr
    queue = _queue(cluster, cache)
    ns = f"qr-{next(_seq)}"
    seen_job(cluster, cache, queue, ns, "gang", age=600, phase="Pending", running=0, members=2)
    seen_podgroup(cluster, cache, queue, ns, "gang", age=600, phase="Pending", members=2)
    path = f"/queues/{queue}/"
    assert "waiting for queue admission" in _cells(_job_row(_page(client, path), ns, "gang"))[1]
    assert renders.count == 2

    def unschedulable(obj):
        at = iso(cluster.clock.now())
        cond = {
            "type": "Unschedulable",
            "status": "True",
            "reason": "NotEnoughResources",
            "lastTransitionTime": at,
        }
        obj["status"]["conditions"] = [cond]

    cluster.store.mutate(kind(*PODGROUPS), ns, "gang", unschedulable)
    cache.wait_for(lambda s: (s.podgroups.get(ns, "gang") or {})["status"].get("conditions"), timeout=10)
    page = _page(client, path)
    assert renders.count == 4  # the PodGroup's row and the Job's
    assert "unschedulable: NotEnoughResources" in _cells(_job_row(page, ns, "gang"))[1]
    assert _job_row(_fresh(client, path), ns, "gang") == _job_row(page, ns, "gang")


def test_the_rows_follow_the_language(qr, client, renders):
    cluster, cache = qr
    queue = _queue(cluster, cache)
    ns = f"qr-{next(_seq)}"
    seen_job(cluster, cache, queue, ns, "worded", age=7200, phase="Pending", members=2)
    seen_podgroup(cluster, cache, queue, ns, "worded-pg", age=7200, phase="Pending", members=2)
    path = f"/queues/{queue}/"
    page = _page(client, path)
    english = (_job_row(page, ns, "worded"), _pg_row(page, ns, "worded-pg"))
    client.cookies["django_language"] = "zh-hans"
    try:
        page = _page(client, path)
        chinese = (_job_row(page, ns, "worded"), _pg_row(page, ns, "worded-pg"))
        assert renders.count == 4
        for en, zh in zip(english, chinese, strict=True):
            assert CJK.search(text(zh)) and not CJK.search(text(en))
        page = _page(client, path)
        assert (_job_row(page, ns, "worded"), _pg_row(page, ns, "worded-pg")) == chinese
        assert renders.count == 4
        page = _fresh(client, path)
        assert (_job_row(page, ns, "worded"), _pg_row(page, ns, "worded-pg")) == chinese
    finally:
        client.cookies["django_language"] = "en"
    page = _page(client, path)
    assert (_job_row(page, ns, "worded"), _pg_row(page, ns, "worded-pg")) == english


def test_the_rows_ages_are_those_of_a_fresh_render_as_time_passes(qr, client, renders):
    cluster, cache = qr
    queue = _queue(cluster, cache)
    ns = f"qr-{next(_seq)}"
    seen_job(cluster, cache, queue, ns, "old", age=7200 + 5, members=2)  # "2h": its text holds for a minute
    seen_job(cluster, cache, queue, ns, "young", age=5, members=2)  # "5s": its text changes every second
    seen_podgroup(cluster, cache, queue, ns, "waits", age=5, phase="Inqueue", members=2)  # waiting "5s"
    seen_podgroup(cluster, cache, queue, ns, "runs", age=5, phase="Running", members=2)  # no wait shown
    path = f"/queues/{queue}/"
    _page(client, path)
    assert renders.count == 4
    for step in (20, 20, 40, 1):
        cluster.clock.advance(step)
        before = renders.count
        page = _page(client, path)
        fresh = _fresh(client, path)
        for name in ("old", "young"):
            assert _job_row(page, ns, name) == _job_row(fresh, ns, name)
        for name in ("waits", "runs"):
            assert _pg_row(page, ns, name) == _pg_row(fresh, ns, name)
        # The young Job's and the waiting PodGroup's rows each time, the old Job's only when its
        # minute moves, the running PodGroup's (no time shown) never; then the fresh page renders all 4.
        assert renders.count - before == 2 + (1 if step == 40 else 0) + 4


def test_rows_shared_between_viewers_of_different_namespaces(qr, client, renders):
    from dashboard.access import review_cache
    from tests.prod.conftest import proxy_settings

    cluster, cache = qr
    queue = _queue(cluster, cache)
    n = next(_seq)
    a, b = f"qr-vis{n}-a", f"qr-vis{n}-b"
    seen_job(cluster, cache, queue, a, "in-a", age=7200, members=2)
    seen_job(cluster, cache, queue, b, "in-b", age=7200, members=2)
    seen_podgroup(cluster, cache, queue, a, "pg-a", age=7200, phase="Running", members=2)
    seen_podgroup(cluster, cache, queue, b, "pg-b", age=7200, phase="Running", members=2)
    cluster.add_user(f"qr-alice{n}", f"token-qr-alice-{n:012d}", [a])
    cluster.add_user(f"qr-bob{n}", f"token-qr-bob-{n:014d}", [a, b])
    alice, bob = {"HTTP_X_FORWARDED_USER": f"qr-alice{n}"}, {"HTTP_X_FORWARDED_USER": f"qr-bob{n}"}
    path = f"/queues/{queue}/"
    review_cache.clear()
    try:
        with override_settings(**proxy_settings()):
            bobs = _page(client, path, **bob)
            assert renders.count == 4 and "in-b" in bobs and "pg-b" in bobs
            alices = _page(client, path, **alice)
            assert renders.count == 4  # her rows are bob's, reused
            assert "in-b" not in alices and "pg-b" not in alices
            assert _job_row(alices, a, "in-a") == _job_row(bobs, a, "in-a")
            assert _pg_row(alices, a, "pg-a") == _pg_row(bobs, a, "pg-a")
            fresh_alice = _fresh(client, path, **alice)
            assert _job_row(fresh_alice, a, "in-a") == _job_row(alices, a, "in-a")
            assert "in-b" not in fresh_alice
            fresh_bob = _fresh(client, path, **bob)
            for ns, name in ((a, "in-a"), (b, "in-b")):
                assert _job_row(fresh_bob, ns, name) == _job_row(bobs, ns, name)
            for ns, name in ((a, "pg-a"), (b, "pg-b")):
                assert _pg_row(fresh_bob, ns, name) == _pg_row(bobs, ns, name)
    finally:
        review_cache.clear()


def test_a_parents_page_counts_its_childrens_podgroups_as_they_come(qr, client):
    """A parent's tree row and child list come from the Queues list's shared rows (all_queue_rows):
    its PodGroup counts follow a child's new PodGroup."""
    cluster, cache = qr
    parent = _queue(cluster, cache)
    child = f"{parent}-child"
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": child},
        "spec": {"weight": 3, "parent": parent},
        "status": {"state": "Open"},
    }
    cluster.store.create(kind(*QUEUES), obj, None, replay=True)
    cache.wait_for(lambda s: s.queues.get(None, child) is not None, timeout=10)
    ns = f"qr-{next(_seq)}"

    def pending_card(page: str) -> str:
        m = re.search(r'phase=Pending"><span class="phase-card-count">(\d+)</span>', page)
        assert m, "no Pending card"
        return m.group(1)

    page = _page(client, f"/queues/{parent}/")
    assert "data-incl-children" in page and f'href="/queues/{child}/"' in page and "weight 3" in page
    assert pending_card(page) == "0"
    seen_podgroup(cluster, cache, child, ns, "in-child", age=60, phase="Pending", members=2)
    page = _page(client, f"/queues/{parent}/")
    assert pending_card(page) == "1"
