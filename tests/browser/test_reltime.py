"""Relative times tick in the browser (static/dashboard/reltime.js) while the fragment around them
is unchanged (its polls answer 204): the browser's clock is Playwright's, moved by hand, and the
pages' clock the simulated cluster's (controllers off, so no object changes)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import serve_dashboard
from tests.pages.helpers import kind

pytestmark = pytest.mark.browser


def _iso(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _hold_browser_clock(page) -> None:
    """Playwright's clock, installed and paused: only run_for moves it (an installed clock that
    is not paused also runs at real speed, by however long a loaded machine takes)."""
    start = datetime.now(UTC).replace(microsecond=0)
    page.clock.install(time=start)
    page.clock.pause_at(start + timedelta(seconds=1))


# Counts htmx requests sent and not yet answered (htmx:afterRequest also ends a failed one).
_COUNT_INFLIGHT = """
window.__inflight = 0;
document.addEventListener("htmx:beforeRequest", function () { window.__inflight += 1; });
document.addEventListener("htmx:afterRequest", function () { window.__inflight -= 1; });
"""


def _answered(page, timeout: float = 10.0) -> None:
    """Every poll sent so far has had its answer handled. The polls run on the browser's held
    clock but their answers come in real time: one answered after both clocks moved on would
    carry an old "now" and set the page's offset back by a step or more."""
    deadline = time.monotonic() + timeout
    while page.evaluate("window.__inflight || 0") > 0:
        assert time.monotonic() < deadline, "polls still unanswered"
        page.wait_for_timeout(20)


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

    _hold_browser_clock(page)
    page.add_init_script(_COUNT_INFLIGHT)
    polls: list[int] = []
    page.on("response", lambda r: polls.append(r.status) if "f=status" in r.url else None)
    page.goto(base + "/jobs/tick/ticking/")
    created = page.locator("time[data-rel='ago']").first
    expect(created).to_have_text("0s ago")

    # Both clocks move together, 30 s at a time (the polls in between renew the server's "now"),
    # the pages' clock first so that every poll of a step is answered with the step's end.
    for _ in range(10):
        cluster.advance(30)
        page.clock.run_for(30_000)
        _answered(page)
    page.clock.run_for(15_000)
    _answered(page)
    # 5m, give or take the step a poll's answer can lag behind the browser's clock.
    expect(created).to_have_text(re.compile(r"^[45]m(\d{1,2}s)? ago$"))
    expect(page.locator("time[data-rel='age']").first).to_have_text(re.compile(r"^[45]m(\d{1,2}s)?$"))
    assert polls and set(polls) == {204}, polls  # the fragment itself never changed


@pytest.mark.parametrize(
    ("language", "first", "later"), [("en", "in 1m", "in 30s"), ("zh-hans", "1分钟后", "30秒后")]
)
def test_next_runs_count_down(quiet_dashboard, page, language, first, later, settings):
    base, cluster, cache = quiet_dashboard
    # No poll in this test: a poll's answer, handled by the browser whenever its response comes
    # in, renews the offset from a moment the test does not control. The counting down is the
    # browser's own (the first test covers the polls' renewal).
    settings.VOLCANO_UI_POLL_SECONDS = 3600
    store = cluster.store
    if store.try_get(kind("", "namespaces"), None, "tick") is None:
        store.create(kind("", "namespaces"), {"metadata": {"name": "tick"}})
    name = f"every-minute-{language}"
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "tick", "creationTimestamp": _iso(cluster.clock.now())},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"tasks": []}}},
    }
    store.create(kind("batch.volcano.sh", "cronjobs"), cj, "tick", replay=True)
    cache.wait_for(lambda s: s.cronjobs.get("tick", name) is not None, timeout=10)
    # A whole minute on the pages' clock: the next run is 60 s ahead.
    second = cluster.clock.now().second
    if second:
        cluster.advance(60 - second)

    page.context.add_cookies([{"name": "django_language", "value": language, "url": base}])
    _hold_browser_clock(page)
    page.goto(f"{base}/cronjobs/tick/{name}/")
    upcoming = page.locator("[data-next-runs] time[data-rel='in']").first
    # The browser's clock has moved a few milliseconds past the page's "now": 59 s or 60 s.
    expect(upcoming).to_have_text(re.compile("^" + re.escape(first).replace("60", "(59|60)") + "$"))
    page.clock.run_for(31_000)
    expect(upcoming).to_have_text(re.compile("^" + re.escape(later).replace("30", "(29|30|31)") + "$"))
