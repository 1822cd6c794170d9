"""Headless Chromium against the dashboard: the pages as a person sees them, live fragment swaps
without a reload, the filter form, language and theme switches, the kiosk. Screenshots go to
tests/artifacts/ (and, with VOLCANO_UI_UPDATE_SCREENSHOTS=1, the README's pictures, each page's
first 1440×900 screen, to docs/screenshots/)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def _no_csp_violations(pg) -> list[str]:
    messages: list[str] = []
    pg.on("console", lambda msg: messages.append(msg.text) if "Content Security Policy" in msg.text else None)
    return messages


def _marker(page):
    """window.__vuiMarker, or "navigating" when the page is being reloaded right now (an evaluate
    racing the kiosk's own reload loses its execution context)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        return page.evaluate("window.__vuiMarker")
    except PlaywrightError as exc:
        if "Execution context was destroyed" in str(exc):
            return "navigating"
        raise


def _live_job(namespace: str, name: str, queue: str) -> dict:
    container = {
        "name": "main",
        "image": "busybox:1.36",
        "command": ["sh", "-c", "sleep 30"],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"owner": "browser-test"},
            "annotations": {"sim.volcano-ui/duration": "30"},
        },
        "spec": {
            "schedulerName": "volcano",
            "queue": queue,
            "minAvailable": 2,
            "maxRetry": 3,
            "tasks": [
                {
                    "name": "main",
                    "replicas": 2,
                    "template": {"spec": {"restartPolicy": "OnFailure", "containers": [container]}},
                }
            ],
        },
    }


def test_overview_jobs_filter_detail_and_kiosk(live_dashboard, page):
    base, cluster, cache = live_dashboard
    violations = _no_csp_violations(page)

    page.goto(base + "/")
    assert page.locator("h1").first.inner_text() == "Overview"
    assert page.locator(".phase-card").count() >= 4
    assert page.get_by_text("Needs attention").is_visible()
    screenshot(page, "overview", readme=True)

    page.goto(base + "/jobs/")
    total = page.locator("tr[data-job]").count()
    assert total > 5
    page.fill("#f-q", "bert")
    # (Locator waits, not wait_for_function: the page's CSP forbids string evaluation.)
    expect(page.locator("tr[data-job]")).to_have_count(1)
    assert page.locator("tr[data-job]").first.get_attribute("data-job") == "team-nlp/bert-pretrain-xl"
    page.wait_for_url(re.compile(r".*[?&]q=bert.*"))  # filter state lives in the address
    screenshot(page, "jobs-filtered")

    page.click("tr[data-job] td.name a")
    page.wait_for_url(re.compile(r".*/jobs/team-nlp/bert-pretrain-xl/$"))
    assert page.get_by_text("Why is this Job pending?").is_visible()
    assert page.locator(".verbatim").count() >= 1
    screenshot(page, "job-detail", readme=True)

    page.goto(base + "/kiosk/")
    assert page.locator("html").get_attribute("data-theme") == "dark"
    assert page.locator(".topbar").count() == 0  # no controls
    page.set_viewport_size({"width": 1920, "height": 1080})
    # A wall display has no scrollbar: the whole board, "Recent warnings" included, fits 1080p.
    assert page.evaluate("document.documentElement.scrollHeight") <= 1080
    box = page.locator('[data-panel="warnings"]').bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1080
    # docs/screenshots/kiosk.png (1920×1080) comes from tests/browser/test_kiosk_readable.py.
    screenshot(page, "kiosk", full_page=False)
    assert violations == []


def test_status_and_gang_bar_change_in_place_without_a_reload(live_dashboard, page):
    base, cluster, cache = live_dashboard
    from tests.pages.helpers import kind

    cluster.store.create(
        kind("batch.volcano.sh", "jobs"), _live_job("research", "browser-live", "research-vision"), "research"
    )
    cache.wait_for(lambda s: s.jobs.get("research", "browser-live") is not None, timeout=10)
    page.goto(base + "/jobs/research/browser-live/")
    first_phase = page.locator("#job-phase").inner_text()
    assert "Running" not in first_phase
    page.evaluate("window.__vuiMarker = 'same-document'")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "f=status" in r.url else None)

    cluster.advance(15)
    expect(page.locator("#job-phase")).to_contain_text("Running", timeout=20000)
    assert page.evaluate("window.__vuiMarker") == "same-document"  # swapped in place, no reload
    assert page.locator("#job-gang .gang-text").inner_text().replace(" ", "") == "2/2"
    assert page.locator("#job-gang .gang-fill.is-met").count() == 1
    assert requests, "the status fragment was polled"
    screenshot(page, "job-live-running")

    # Paused while the tab is hidden: no fragment polls at all.
    page.evaluate("""() => {
        Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    page.wait_for_timeout(300)
    requests.clear()
    page.wait_for_timeout(4500)
    assert requests == []


def test_language_and_theme_switches(live_dashboard, page):
    base, _cluster, _cache = live_dashboard
    page.goto(base + "/jobs/")
    page.select_option("#lang-select", "zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert "作业" in page.locator(".mainnav").inner_text()
    screenshot(page, "jobs-zh-hans")
    page.select_option("#lang-select", "en")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert "Jobs" in page.locator(".mainnav").inner_text()

    assert page.locator("html").get_attribute("data-theme") is None  # follows the system
    page.click("#theme-toggle")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.reload()
    assert page.locator("html").get_attribute("data-theme") == "dark"  # remembered (cookie)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background != "rgb(245, 246, 248)"
    screenshot(page, "jobs-dark")
    page.click("#theme-toggle")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")


def test_kiosk_recovers_by_itself_after_the_dashboard_restarts(make_live_cache, page):
    """Stop the dashboard under an open kiosk: polls fail, the kiosk says so, probes the address,
    and reloads in full once a dashboard answers there again."""
    scenarios = pytest.importorskip("dashboard.sim.scenarios", reason="the demo scenario is not available")
    from tests.browser.conftest import serve_dashboard
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=0, scenario="demo", controllers=True)
    try:
        cluster.advance(float(getattr(scenarios, "DEMO_SETTLE_SECONDS", 120.0)))
        cache = make_live_cache(cluster)
        base, stop = serve_dashboard(cache, cluster.clock)
        port = int(base.rsplit(":", 1)[1])
        # ?rotate=1 makes the kiosk poll every second, so the test needs only a few seconds.
        page.goto(base + "/kiosk/?rotate=1")
        expect(page.locator(".kiosk-board")).to_be_visible()
        page.evaluate("window.__vuiMarker = 'before-restart'")
        stop()
        expect(page.locator("#kiosk-offline")).to_be_visible(timeout=20000)
        assert page.evaluate("window.__vuiMarker") == "before-restart"  # no reload onto an error page
        # Long enough for three failed polls (1 s, then backing off): the kiosk now probes the page.
        page.wait_for_timeout(9000)
        base, stop = serve_dashboard(cache, cluster.clock, port=port)
        try:
            # (Polled from here: the page's CSP forbids the string evaluation wait_for_function uses.)
            for _ in range(60):
                if _marker(page) is None:
                    break
                page.wait_for_timeout(500)
            page.wait_for_load_state()
            assert _marker(page) is None, "the kiosk did not reload itself"
            expect(page.locator(".kiosk-board")).to_be_visible()
            expect(page.locator("#kiosk-offline")).to_be_hidden()
        finally:
            stop()
    finally:
        cluster.stop()


def test_a_job_deleted_while_its_page_is_open_says_so_and_stops_polling(live_dashboard, page):
    base, cluster, cache = live_dashboard
    from tests.pages.helpers import kind

    violations = _no_csp_violations(page)
    cluster.store.create(
        kind("batch.volcano.sh", "jobs"), _live_job("research", "browser-gone", "research-vision"), "research"
    )
    cache.wait_for(lambda s: s.jobs.get("research", "browser-gone") is not None, timeout=10)
    page.goto(base + "/jobs/research/browser-gone/")
    expect(page.locator("#gone-notice")).to_be_hidden()
    cluster.store.delete(kind("batch.volcano.sh", "jobs"), "research", "browser-gone")
    cache.wait_for(lambda s: s.jobs.get("research", "browser-gone") is None, timeout=10)
    notice = page.locator("#gone-notice")
    expect(notice).to_be_visible(timeout=20000)
    expect(notice).to_contain_text("This Job no longer exists (deleted or renamed)")
    assert page.locator("body.is-gone").count() == 1
    assert page.locator("[data-poll]").count() == 0  # polling stopped for good
    assert page.locator("h1").count() >= 1  # the last known state is still shown
    assert violations == []
