"""Job detail: phase, gang, the "why is it pending" panel, tasks, pods, PodGroup/Queue links, events."""

from __future__ import annotations

import html

import pytest

from tests.pages.helpers import check_fragment, job_named, podgroups, pods, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def podgroup_of(cluster, job):
    uid = job["metadata"]["uid"]
    return next(
        g
        for g in podgroups(cluster, job["metadata"]["namespace"])
        if any(r.get("uid") == uid for r in g["metadata"].get("ownerReferences", []))
    )


def test_pending_gang_explains_why_in_plain_words_with_the_scheduler_message(client, demo_cluster):
    job = job_named(demo_cluster, "team-nlp", "bert-pretrain-xl")
    pg = podgroup_of(demo_cluster, job)
    page = client.get("/jobs/team-nlp/bert-pretrain-xl/").content.decode()
    body = text(page)
    assert "Why is this Job pending?" in body
    assert 'data-phase="Pending"' in page
    cond = next(c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable")
    assert html.escape(cond["message"]) in page  # verbatim, escaped
    assert "has not admitted it yet" in body or "cannot yet place the whole gang" in body
    # Cross-links: the PodGroup and the Queue.
    assert f'href="/podgroups/team-nlp/{pg["metadata"]["name"]}/"' in page
    assert 'href="/queues/research-nlp/"' in page
    assert "Queue headroom against the gang" in body
    assert "No pods." in body


def test_queue_quota_shortfall_is_named_per_resource(client):
    body = text(client.get("/jobs/platform/quota-starved/").content.decode())
    assert "Why is this Job pending?" in body
    assert "cpu: needs 12" in body


def test_running_job_shows_gang_tasks_pods_and_history(client, demo_cluster):
    job = job_named(demo_cluster, "team-vision", "yolo-finetune")
    page = client.get("/jobs/team-vision/yolo-finetune/").content.decode()
    body = text(page)
    assert "Why is this Job pending?" not in body
    assert f"<strong>{job['status']['running']}</strong>/{job['status']['minAvailable']}" in page
    for task in job["spec"]["tasks"]:
        assert task["name"] in body
    job_pods = [
        p
        for p in pods(demo_cluster, "team-vision")
        if p["metadata"].get("labels", {}).get("volcano.sh/job-name") == "yolo-finetune"
    ]
    assert job_pods
    for pod in job_pods:
        assert f'href="/pods/team-vision/{pod["metadata"]["name"]}/"' in page
        assert pod["spec"]["nodeName"] in page
    assert "Phase history" in body and "Running" in body
    assert "Policies and plugins" in body and "pytorch" in body
    assert "YAML (read-only)" in body and "apiVersion: batch.volcano.sh/v1alpha1" in html.unescape(page)


def test_crashlooping_pods_show_kubectl_status_and_restarts(client):
    page = client.get("/jobs/team-vision/augment-crashloop/").content.decode()
    assert "CrashLoopBackOff" in page


def test_a_finished_job_stops_polling(client, demo_cluster):
    page = client.get("/jobs/platform/nightly-etl/").content.decode()
    assert 'data-phase="Completed"' in page
    status = page.split('id="frag-status"')[1].split(">")[0]
    assert "data-poll" not in status and "hx-trigger" not in status
    # No fragment polls, the notices included (the body's data-poll-seconds is a setting, not a poll).
    assert 'data-poll="' not in page and 'hx-trigger="vui:poll"' not in page
    assert "live updates stopped" in text(page)


def test_live_job_fragments(client):
    page = client.get("/jobs/team-nlp/bert-pretrain-xl/").content.decode()
    assert 'data-poll="status"' in page
    for fragment in ("status", "pods", "events", "notices"):
        check_fragment(client, page, fragment)


def test_unknown_job_is_a_404_page(client):
    resp = client.get("/jobs/team-nlp/no-such-job/")
    assert resp.status_code == 404
    assert "Not found" in resp.content.decode()
    assert client.get("/jobs/no-such-namespace/bert-pretrain-xl/").status_code == 404
