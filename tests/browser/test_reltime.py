"""Relative times tick in the browser (static/dashboard/reltime.js) while the fragment around them
is unchanged (its polls answer 204): the browser's clock is Playwright's, moved by hand, and the
pages' clock the simulated cluster's (controllers off, so no object changes)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import serve_dashboard
from tests.pages.helpers import kind

pytestmark = pytest.mark.browser


def _iso(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def quiet_dashboard(make_live_cache):
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=3, controllers=False)
    try:
        cache = make_live_cache(cluster)
        base, stop = serve_dashboard(cache, cluster.clock)
        try:
            yield base, cluster, cache
        finally:
            stop()
    finally:
        cluster.stop()


def test_relative_times_tick_without_a_new_fragment(quiet_dashboard, page):
    base, cluster, cache = quiet_dashboard
    at = _iso(cluster.clock.now())
    store = cluster.store
    if store.try_get(kind("", "namespaces"), None, "tick") is None:
        store.create(kind("", "namespaces"), {"metadata": {"name": "tick"}})
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "ticking", "namespace": "tick", "creationTimestamp": at},
        "spec": {"queue": "default", "tasks": []},
        "status": {"state": {"phase": "Running", "lastTransitionTime": at}, "running": 0},
    }
    store.create(kind("batch.volcano.sh", "jobs"), job, "tick", replay=True)
    cache.wait_for(lambda s: s.jobs.get("tick", "ticking") is not None, timeout=10)

    page.clock.install()
    polls: list[int] = []
    page.on("response", lambda r: polls.append(r.status) if "f=status" in r.url else None)
    page.goto(base + "/jobs/tick/ticking/")
    created = page.locator("time[data-rel='ago']").first
    expect(created).to_have_text("0s ago")

    # Both clocks move together, 30 s at a time (the polls in between renew the server's "now").
    for _ in range(10):
        page.clock.run_for(30_000)
        cluster.advance(30)
    page.clock.run_for(15_000)
    # 5m, give or take the step a poll's answer can lag behind the browser's clock.
    expect(created).to_have_text(re.compile(r"^[45]m ago$"))
    expect(page.locator("time[data-rel='age']").first).to_have_text(re.compile(r"^[45]m$"))
    assert polls and set(polls) == {204}, polls  # the fragment itself never changed
