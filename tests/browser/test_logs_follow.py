"""Headless Chromium on a pod's log page: following it appends the lines the container writes as
the simulated clock advances, in the same document (no reload)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_following_a_pod_log_receives_new_lines_without_a_reload(live_dashboard, page):
    base, cluster, cache = live_dashboard
    snap = cache.snapshot()
    job = snap.jobs.get("team-vision", "yolo-finetune")  # runs for the whole demo
    pod = next(
        p["metadata"]["name"]
        for p in snap.pods_for_job(job)
        if (p.get("status") or {}).get("phase") == "Running"
    )
    page.goto(f"{base}/pods/team-vision/{pod}/logs/")
    lines = page.locator("#log-lines .log-line")
    expect(page.locator("#log-lines")).to_have_attribute("data-follow", "1")
    before = lines.count()
    assert before > 0
    last = lines.nth(before - 1).inner_text()
    page.evaluate("window.__vuiMarker = 'same-document'")
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "after=" in r.url else None)

    cluster.advance(30)  # a pytorch container writes a progress line every 3 s
    expect(lines).not_to_have_count(before, timeout=20000)
    page.wait_for_function(f"document.querySelectorAll('#log-lines .log-line').length >= {before + 5}")
    assert page.evaluate("window.__vuiMarker") == "same-document"
    assert polls, "the page polled ?after="
    after = lines.count()
    assert lines.nth(before - 1).inner_text() == last  # appended after what was shown
    assert lines.nth(after - 1).inner_text() != last
