"""Every page of the demo scenario, and every fragment it carries, answers: a crawl from the
overview through the links it shows (each object kind at least once)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import override_settings

from tests.pages.helpers import check_fragment

pytestmark = pytest.mark.usefixtures("demo_cache")

LINK = re.compile(r'href="(/(?:jobs|podgroups|queues|pods)/[^"?#]+/)"')


def test_crawl_every_linked_page_and_its_fragments(client):
    seen: set[str] = set()
    kinds: set[str] = set()
    queue = ["/", "/jobs/", "/podgroups/", "/queues/", "/kiosk/", "/kiosk/?rotate=10"]
    while queue and len(seen) < 80:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        resp = client.get(url)
        assert resp.status_code == 200, url
        page = resp.content.decode()
        for fragment in re.findall(r'id="frag-([a-z]+)" hx-get=', page):
            check_fragment(client, page, fragment)
        for link in LINK.findall(page):
            kind = link.split("/")[1]
            # One or two objects of each kind are enough; the crawl stays fast.
            if sum(1 for u in seen | set(queue) if u.startswith(f"/{kind}/") and u.count("/") > 2) < 3:
                queue.append(link)
        kinds.add(url.split("/")[1])
    assert {"jobs", "podgroups", "queues", "pods", "kiosk"} <= kinds


@override_settings(TIME_ZONE="Asia/Shanghai")
def test_absolute_times_follow_the_configured_time_zone(client, demo_cluster):
    from django.utils import timezone

    from dashboard.templatetags.volcano import _absolute

    timezone.activate("Asia/Shanghai")
    try:
        assert _absolute(datetime(2026, 11, 29, 10, 0, tzinfo=UTC)) == "2026-11-29 18:00:00 CST"
        page = client.get("/jobs/team-nlp/bert-pretrain-xl/").content.decode()
        assert "CST" in page
    finally:
        timezone.deactivate()
