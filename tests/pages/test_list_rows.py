"""Jobs and PodGroups list rows are rendered once and shared (memo.list_rows_html): a reused row is
always the row a fresh render gives, after its Job changes, in another language, for viewers who
see different namespaces and as time passes (its ages' text).

A simulated cluster with its controllers off (objects exactly as written), read by a live cache;
the pages' clock is the simulated clock, advanced by the tests.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings
from django.utils import translation

from dashboard.templatetags.volcano import ago
from dashboard.views import memo
from tests.pages.helpers import kind, seen_job, seen_podgroup, text

JOBS = ("batch.volcano.sh", "jobs")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
QUEUE = "lr-q"
_seq = itertools.count()
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def lr(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=23, name="listrows") as (cluster, cache):
        queue = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": QUEUE},
            "spec": {"weight": 1},
            "status": {"state": "Open"},
        }
        cluster.store.create(kind("scheduling.volcano.sh", "queues"), queue, None, replay=True)
        cache.wait_for(lambda s: s.queues.get(None, QUEUE) is not None, timeout=10)
        yield cluster, cache


class _Renders:
    """Counts the list rows memo.list_rows_html renders (a reused row is not rendered)."""

    def __init__(self, real):
        self.real = real
        self.count = 0

    def __call__(self, name):
        template = self.real(name)
        outer = self

        class Counting:
            def render(self, ctx):
                outer.count += 1
                return template.render(ctx)

        return Counting()


@pytest.fixture
def renders(monkeypatch) -> _Renders:
    monkeypatch.setattr(memo, "LIST_ROW_HTML", memo.SizedMemo(memo.LIST_ROW_HTML.budget))
    counting = _Renders(memo.get_template)
    monkeypatch.setattr(memo, "get_template", counting)
    return counting


def _row(page: str, attr: str, ns: str, name: str) -> str:
    m = re.search(rf'<tr {attr}="{ns}/{name}">.*?</tr>', page, re.S)
    assert m, f"no row of {ns}/{name}"
    return m.group(0)


def _page(client, path: str, **headers) -> str:
    resp = client.get(path, **headers)
    assert resp.status_code == 200
    return resp.content.decode()


def _fresh(client, path: str, **headers) -> str:
    """The page with every row rendered anew."""
    memo.LIST_ROW_HTML.clear()
    return _page(client, path, **headers)


def test_a_reused_row_equals_a_fresh_render_after_the_job_changes(lr, client, renders):
    cluster, cache = lr
    ns = f"lr-{next(_seq)}"
    seen_job(cluster, cache, QUEUE, ns, "kept", age=7200)
    seen_job(cluster, cache, QUEUE, ns, "changed", age=7200)
    path = f"/jobs/?ns={ns}"
    first = _page(client, path)
    assert renders.count == 2
    again = _page(client, path)
    assert renders.count == 2  # nothing changed: no row rendered
    assert _row(again, "data-job", ns, "kept") == _row(first, "data-job", ns, "kept")

    def fail(obj):
        obj["status"]["failed"] = 3

    cluster.store.mutate(kind(*JOBS), ns, "changed", fail)
    cache.wait_for(lambda s: (s.jobs.get(ns, "changed") or {})["status"].get("failed") == 3, timeout=10)
    after = _page(client, path)
    assert renders.count == 3  # only the changed Job's row
    assert '<td class="num bad-text">3</td>' in _row(after, "data-job", ns, "changed")
    fresh = _fresh(client, path)
    for name in ("kept", "changed"):
        assert _row(after, "data-job", ns, name) == _row(fresh, "data-job", ns, name)


def test_a_reused_row_follows_the_language(lr, client, renders):
    cluster, cache = lr
    ns = f"lr-{next(_seq)}"
    seen_job(cluster, cache, QUEUE, ns, "worded", age=7200, phase="Pending")
    path = f"/jobs/?ns={ns}"
    english = _row(_page(client, path), "data-job", ns, "worded")
    client.cookies["django_language"] = "zh-hans"
    try:
        chinese = _row(_page(client, path), "data-job", ns, "worded")
        assert renders.count == 2 and chinese != english
        assert re.search(r"[\u4e00-\u9fff]", text(chinese)) and not re.search(
            r"[\u4e00-\u9fff]", text(english)
        )
        assert _row(_page(client, path), "data-job", ns, "worded") == chinese
        assert renders.count == 2
        assert _row(_fresh(client, path), "data-job", ns, "worded") == chinese
    finally:
        client.cookies["django_language"] = "en"
    assert _row(_page(client, path), "data-job", ns, "worded") == english


def test_a_reused_rows_ages_are_those_of_a_fresh_render_as_time_passes(lr, client, renders):
    cluster, cache = lr
    ns = f"lr-{next(_seq)}"
    seen_job(cluster, cache, QUEUE, ns, "old", age=7200 + 5)  # "2h": its text holds for a minute
    seen_job(cluster, cache, QUEUE, ns, "young", age=5)  # "5s": its text changes every second
    path = f"/jobs/?ns={ns}"
    _page(client, path)
    assert renders.count == 2
    for step in (20, 20, 40, 1):
        cluster.clock.advance(step)
        before = renders.count
        page = _page(client, path)
        fresh = _fresh(client, path)
        for name in ("old", "young"):
            assert _row(page, "data-job", ns, name) == _row(fresh, "data-job", ns, name)
        # The young Job's row is rendered again each time; the old one's only when its minute moves
        # (then the fresh page renders both).
        assert renders.count - before == 1 + (1 if step == 40 else 0) + 2


def test_rows_shared_between_viewers_of_different_namespaces(lr, client, renders):
    from dashboard.access import review_cache
    from tests.prod.conftest import proxy_settings

    cluster, cache = lr
    n = next(_seq)
    a, b = f"lr-vis{n}-a", f"lr-vis{n}-b"
    seen_job(cluster, cache, QUEUE, a, "in-a", age=7200)
    seen_job(cluster, cache, QUEUE, b, "in-b", age=7200)
    cluster.add_user(f"lr-alice{n}", f"token-lr-alice-{n:012d}", [a])
    cluster.add_user(f"lr-bob{n}", f"token-lr-bob-{n:014d}", [a, b])
    alice, bob = {"HTTP_X_FORWARDED_USER": f"lr-alice{n}"}, {"HTTP_X_FORWARDED_USER": f"lr-bob{n}"}
    path = f"/jobs/?q=lr-vis{n}-"
    review_cache.clear()
    try:
        with override_settings(**proxy_settings()):
            bobs = _page(client, path, **bob)
            assert renders.count == 2 and "in-b" in bobs
            alices = _page(client, path, **alice)
            assert renders.count == 2  # her one row is bob's, reused
            assert "in-b" not in alices
            assert _row(alices, "data-job", a, "in-a") == _row(bobs, "data-job", a, "in-a")
            assert _row(_fresh(client, path, **alice), "data-job", a, "in-a") == _row(
                alices, "data-job", a, "in-a"
            )
            fresh_bob = _fresh(client, path, **bob)
            for ns, name in ((a, "in-a"), (b, "in-b")):
                assert _row(fresh_bob, "data-job", ns, name) == _row(bobs, "data-job", ns, name)
    finally:
        review_cache.clear()


def test_podgroup_rows_are_shared_and_their_wait_stays_exact(lr, client, renders):
    cluster, cache = lr
    ns = f"lr-{next(_seq)}"
    seen_podgroup(cluster, cache, QUEUE, ns, "waiting", age=30, phase="Pending")
    seen_podgroup(cluster, cache, QUEUE, ns, "running", age=7200, phase="Running")
    path = f"/podgroups/?ns={ns}"
    first = _page(client, path)
    assert renders.count == 2 and "waiting" in text(_row(first, "data-podgroup", ns, "waiting"))
    again = _page(client, path)
    assert renders.count == 2
    assert _row(again, "data-podgroup", ns, "waiting") == _row(first, "data-podgroup", ns, "waiting")
    cluster.clock.advance(1)
    page = _page(client, path)
    assert renders.count == 3  # the 30 s wait and age moved; the 2 h age did not
    fresh = _fresh(client, path)
    for name in ("waiting", "running"):
        assert _row(page, "data-podgroup", ns, name) == _row(fresh, "data-podgroup", ns, name)


def test_equal_age_steps_give_equal_age_text():
    """memo.ago_step decides when a cached row's ages are still right: the ``ago`` tag's output
    must be the same for any two times with the same step (around every unit boundary)."""
    dt = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
    seconds = [*range(-400, 700), *range(35000, 37000, 7), *range(86000, 87000, 13)]
    seconds += [*range(863000, 866000, 29), *range(2_000_000, 2_200_000, 997)]
    with translation.override("en"):
        seen: dict[tuple, str] = {}
        for s in seconds:
            now = dt + timedelta(seconds=s, milliseconds=s % 3 * 300)
            out = ago({"now": now}, dt)
            assert seen.setdefault(memo.ago_step(dt, now), out) == out, (s, out)
    assert memo.ago_step(None, dt) == ("none",)
