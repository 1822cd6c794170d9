"""The Job page's header on a 390x844 phone, in headless Chromium: the name, the phase badge with
its notes and the actions wrap onto lines of their own instead of squeezing each other; nothing in
the header reaches past the viewport and no two of its parts overlap."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dashboard import actions
from tests.browser.conftest import screenshot, serve_dashboard

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
NAME = "llm-pretrain-70b-mixture-of-experts-run-0042"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class _Clock:
    def now(self) -> datetime:
        return NOW


def _job() -> dict:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": NAME,
            "namespace": "research-platform",
            "uid": "u-job",
            "resourceVersion": "3",
            "creationTimestamp": "2026-11-30T10:00:00Z",
        },
        "spec": {
            "queue": "research-long-running",
            "minAvailable": 2,
            "tasks": [{"name": "w", "replicas": 2}],
        },
        "status": {
            "state": {"phase": "Running", "lastTransitionTime": "2026-11-30T10:05:00Z"},
            "running": 2,
            "minAvailable": 2,
        },
    }


@pytest.fixture
def job_page(memory_cache, monkeypatch):
    for k in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(k).mark_synced()
    memory_cache.store("jobs").upsert(_job())

    # Every Job action, as a user allowed all of them sees them (the permission check needs a
    # proxy or token identity: tests/prod/test_actions_http.py covers it).
    def offered(request, job):
        return [{"action": a, "url": f"/actions/{a.slug}/"} for a in actions.JOB_ACTIONS.values()]

    monkeypatch.setattr("dashboard.views.jobs.job_actions_for", offered)
    base, stop = serve_dashboard(memory_cache, _Clock())
    try:
        yield f"{base}/jobs/research-platform/{NAME}/"
    finally:
        stop()


# Boxes of the header's parts and of every element inside it, in CSS pixels.
_BOXES = """() => {
  const box = e => {
    const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, r: r.right, b: r.bottom};
  };
  const head = document.querySelector('.object-head');
  const shown = [...head.querySelectorAll('*')]
    .filter(e => e.getClientRects().length && !e.closest('[hidden]'));
  const name = head.querySelector('.object-name');
  return {
    width: innerWidth, scroll: document.documentElement.scrollWidth,
    name: box(name), nameSize: parseFloat(getComputedStyle(name).fontSize),
    nameLine: parseFloat(getComputedStyle(name).lineHeight),
    badge: box(head.querySelector('.object-state .badge')),
    actions: box(head.querySelector('.actions')),
    links: box(head.querySelector('.object-sub')),
    overflow: shown.map(e => ({tag: e.tagName + '.' + e.className, ...box(e)}))
      .filter(b => b.x < -0.5 || b.r > innerWidth + 0.5),
  };
}"""


def _overlap(a: dict, b: dict) -> bool:
    return a["x"] < b["r"] - 0.5 and b["x"] < a["r"] - 0.5 and a["y"] < b["b"] - 0.5 and b["y"] < a["b"] - 0.5


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_job_header_wraps_cleanly_on_a_phone(browser, job_page, scheme):
    context = browser.new_context(viewport=PHONE, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(job_page)
        page.locator(".object-head .actions").wait_for()
        boxes = page.evaluate(_BOXES)
        screenshot(page, f"job-header-phone-{scheme}", full_page=False)
        assert boxes["scroll"] <= boxes["width"], boxes["scroll"]
        assert boxes["overflow"] == [], boxes["overflow"]
        name = boxes["name"]
        for part in ("badge", "actions", "links"):
            assert not _overlap(name, boxes[part]), (part, name, boxes[part])
        assert not _overlap(boxes["badge"], boxes["actions"])
        # Readable: at least 18px, across most of the phone's width, on at most 2 lines.
        assert boxes["nameSize"] >= 18
        assert name["r"] - name["x"] >= 0.6 * boxes["width"], name
        assert name["b"] - name["y"] <= 2.2 * boxes["nameLine"], name
    finally:
        context.close()
