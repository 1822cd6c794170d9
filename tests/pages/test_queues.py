"""Queues: the hierarchy as a tree, states, PodGroup counts per phase, resource bars, detail page."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.pages.helpers import check_fragment, podgroups, queues, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_tree_lists_every_queue_children_below_parents(client, demo_cluster):
    page = client.get("/queues/").content.decode()
    order = re.findall(r'<tr data-queue="([^"]+)"', page)
    assert set(order) == {q["metadata"]["name"] for q in queues(demo_cluster)}
    for q in queues(demo_cluster):
        parent = q["spec"].get("parent")
        if parent and parent in order:
            assert order.index(parent) < order.index(q["metadata"]["name"])
    # Depth first: the rows between a queue's parent and the queue are the parent's descendants.
    parent_of = {q["metadata"]["name"]: q["spec"].get("parent") for q in queues(demo_cluster)}

    def descends_from(name: str, ancestor: str) -> bool:
        seen = set()
        while name in parent_of and name not in seen:
            seen.add(name)
            name = parent_of[name]
            if name == ancestor:
                return True
        return False

    for name, parent in parent_of.items():
        if parent in order:
            between = order[order.index(parent) + 1 : order.index(name)]
            assert all(descends_from(b, parent) for b in between), (name, between)
    research = order.index("research")
    assert order[research + 1 : research + 3] == ["research-nlp", "research-vision"]


def test_podgroup_counts_are_derived_from_podgroups(client, demo_cluster):
    page = client.get("/queues/").content.decode()
    row = page.split('data-queue="research-nlp"')[1].split("</tr>")[0]
    counts = Counter(
        (g.get("status") or {}).get("phase", "")
        for g in podgroups(demo_cluster)
        if g["spec"].get("queue") == "research-nlp"
    )
    for phase_name, n in counts.items():
        if phase_name:
            assert re.search(rf"{phase_name} <span class=\"chip-count\">{n}</span>", row), phase_name


def test_resource_bars_show_allocated_against_deserved_and_over_100_percent(client, demo_cluster):
    page = client.get("/queues/").content.decode()
    body = text(page)
    assert "nvidia.com/gpu" in body and "deserved" in body
    row = page.split('data-queue="research-nlp"')[1].split("</tr>")[0]
    assert re.search(r"\d+%", row)


def test_queue_detail_children_jobs_podgroups_and_events(client, demo_cluster):
    page = client.get("/queues/research/").content.decode()
    body = text(page)
    assert "Child queues" in body
    assert 'href="/queues/research-nlp/"' in page and 'href="/queues/research-vision/"' in page
    page = client.get("/queues/research-nlp/").content.decode()
    assert 'href="/jobs/team-nlp/bert-pretrain-xl/"' in page
    assert "/podgroups/team-nlp/bert-pretrain-xl-" in page
    assert 'href="/queues/research/"' in page  # parent
    for fragment in ("status", "jobs", "events"):
        check_fragment(client, page, fragment)


def test_closing_queue_state_is_shown(client):
    page = client.get("/queues/legacy/").content.decode()
    assert "Closing" in page or "Closed" in page


def test_unknown_queue_is_404(client):
    assert client.get("/queues/no-such-queue/").status_code == 404


def test_queues_list_fragment(client):
    check_fragment(client, client.get("/queues/").content.decode(), "results")
