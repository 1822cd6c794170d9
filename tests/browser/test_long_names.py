"""Names as long as Kubernetes allows (253 characters for a Job, PodGroup or Queue) and a status
reason and message of one unbroken word wrap inside the window: no detail page scrolls sideways,
on a 390 px phone or a 1280 px screen."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.browser.conftest import serve_dashboard

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
# A DNS subdomain of 253 characters: four labels of 63 and a dot between each.
JOB = ".".join(["a" * 63] * 4)[:253]
QUEUE = "b" * 253
PODGROUP = "c" * 253
NS = "long"
CREATED = "2026-11-30T10:00:00Z"


class _Clock:
    def now(self) -> datetime:
        return NOW


@pytest.fixture
def long_pages(memory_cache):
    for k in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(k).mark_synced()
    memory_cache.store("queues").upsert(
        {"metadata": {"name": QUEUE, "uid": "u-q"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
    )
    memory_cache.store("jobs").upsert(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": JOB, "namespace": NS, "uid": "u-j", "creationTimestamp": CREATED},
            "spec": {"queue": QUEUE, "minAvailable": 1, "tasks": [{"name": "t", "replicas": 1}]},
            "status": {"state": {"phase": "Pending", "reason": "R" * 300, "message": "M" * 6000}},
        }
    )
    memory_cache.store("podgroups").upsert(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": PODGROUP, "namespace": NS, "uid": "u-pg"},
            "spec": {"minMember": 1, "queue": QUEUE},
            "status": {"phase": "Pending"},
        }
    )
    base, stop = serve_dashboard(memory_cache, _Clock())
    try:
        yield base
    finally:
        stop()


# The elements whose content reaches past the window without a scroll box of their own, to name in
# a failure.
_WIDE = """w => [...document.querySelectorAll('body *')]
  .filter(e => e.scrollWidth > w && getComputedStyle(e).overflowX === 'visible')
  .slice(-3).map(e => e.tagName + '.' + e.className + ': ' + e.scrollWidth)"""


@pytest.mark.parametrize("width", [390, 1280])
def test_detail_pages_with_the_longest_names_do_not_scroll_sideways(browser, long_pages, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for path in (f"/jobs/{NS}/{JOB}/", f"/podgroups/{NS}/{PODGROUP}/", f"/queues/{QUEUE}/"):
            page.goto(long_pages + path)
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, (path[:30], scroll, page.evaluate(_WIDE, width))
    finally:
        context.close()
