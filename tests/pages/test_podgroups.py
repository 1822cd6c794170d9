"""PodGroups list and detail: phase, gang, owner Job (or owner kind), Queue link, conditions, pods."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import check_fragment, job_named, podgroups, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def test_list_links_each_podgroup_to_its_job_or_owner_and_queue(client, demo_cluster):
    page = client.get("/podgroups/").content.decode()
    listed = set(re.findall(r'<tr data-podgroup="([^"]+)"', page))
    assert listed == {
        f"{g['metadata']['namespace']}/{g['metadata']['name']}" for g in podgroups(demo_cluster)
    }
    job = job_named(demo_cluster, "team-vision", "yolo-finetune")
    pg = next(
        g
        for g in podgroups(demo_cluster, "team-vision")
        if g["metadata"]["name"] == f"yolo-finetune-{job['metadata']['uid']}"
    )
    row = page.split(f'data-podgroup="team-vision/{pg["metadata"]["name"]}"')[1].split("</tr>")[0]
    assert 'href="/jobs/team-vision/yolo-finetune/"' in row
    assert 'href="/queues/research-vision/"' in row
    # A PodGroup of a non-Volcano workload names its owner's kind instead of a Job link.
    others = [
        g
        for g in podgroups(demo_cluster)
        if not any(r.get("kind") == "Job" for r in g["metadata"].get("ownerReferences", []))
    ]
    for g in others:
        row = page.split(f'data-podgroup="{g["metadata"]["namespace"]}/{g["metadata"]["name"]}"')[1].split(
            "</tr>"
        )[0]
        owner = (g["metadata"].get("ownerReferences") or [{}])[0]
        if owner.get("kind"):
            assert owner["kind"] in row


def test_filter_by_phase_and_queue(client, demo_cluster):
    page = client.get("/podgroups/?phase=Pending").content.decode()
    pending = {
        f"{g['metadata']['namespace']}/{g['metadata']['name']}"
        for g in podgroups(demo_cluster)
        if (g.get("status") or {}).get("phase") == "Pending"
    }
    assert set(re.findall(r'<tr data-podgroup="([^"]+)"', page)) == pending


def test_detail_shows_gang_conditions_min_resources_pods_and_links(client, demo_cluster):
    job = job_named(demo_cluster, "team-nlp", "bert-pretrain-xl")
    name = f"bert-pretrain-xl-{job['metadata']['uid']}"
    page = client.get(f"/podgroups/team-nlp/{name}/").content.decode()
    body = text(page)
    assert 'href="/jobs/team-nlp/bert-pretrain-xl/"' in page
    assert 'href="/queues/research-nlp/"' in page
    assert "Unschedulable" in body and "minTaskMember" in body and "minResources" in body
    assert "Why is this PodGroup not running?" in body
    for fragment in ("status", "pods", "events"):
        check_fragment(client, page, fragment)

    running = job_named(demo_cluster, "team-vision", "yolo-finetune")
    page = client.get(f"/podgroups/team-vision/yolo-finetune-{running['metadata']['uid']}/").content.decode()
    assert "/pods/team-vision/yolo-finetune-" in page


def test_unknown_podgroup_is_404(client):
    assert client.get("/podgroups/team-nlp/nope/").status_code == 404
    assert text(client.get("/podgroups/").content.decode())
