"""The overview page against the demo scenario: counts by phase, needs attention, queues, warnings."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.pages.helpers import check_fragment, jobs, phase, phase_count, podgroups, text, url

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_it_counts_jobs_and_podgroups_by_phase(client, demo_cluster):
    page = client.get("/").content.decode()
    for name, n in Counter(phase(j) for j in jobs(demo_cluster)).items():
        assert phase_count(page, name) == n, name
    pg_phases = Counter((g.get("status") or {}).get("phase", "") for g in podgroups(demo_cluster))
    for name, n in pg_phases.items():
        if name:
            assert f'data-phase="{name}" data-count="{n}"' in page
    assert f"{len(jobs(demo_cluster))} Jobs" in text(page)


def test_phase_cards_link_to_the_filtered_jobs_list(client):
    page = client.get("/").content.decode()
    assert 'href="/jobs/?phase=Pending"' in page
    assert 'href="/podgroups/?phase=Running"' in page


def test_needs_attention_lists_pending_crashlooping_failed_and_closed(client, demo_cluster):
    body = text(client.get("/").content.decode())
    pending = [j for j in jobs(demo_cluster) if phase(j) == "Pending"]
    assert f"{len(pending)} pending Jobs" in body
    # The gang that can never fit is among the longest waiting, with the scheduler's words.
    assert "bert-pretrain-xl" in body
    assert "waiting" in body
    assert "crash-looping pod" in body and "augment-crashloop-main-0" in body
    assert "failed Job" in body and "flaky-simulation" in body
    assert "closed queue" in body and "legacy" in body


def test_queue_usage_and_recent_warnings(client):
    page = client.get("/").content.decode()
    body = text(page)
    assert 'href="/queues/research-nlp/"' in page
    assert "Recent warning events" in body
    assert "PodGroupPending" in body or "Unschedulable" in body


@pytest.mark.parametrize("fragment", ["counts", "attention", "queues", "events", "notices"])
def test_each_fragment_renders_alone_and_is_skipped_when_unchanged(client, fragment):
    check_fragment(client, client.get("/").content.decode(), fragment)


def test_the_full_page_also_varies_on_hx_request(client):
    resp = client.get("/")
    assert resp.status_code == 200
    assert "HX-Request" in resp["Vary"]
    assert url("overview") == "/"
