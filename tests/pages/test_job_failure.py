"""The "Why did this Job fail?" card of the Job page on the demo's failed Jobs, with and without
their pods, and its lazily loaded last log lines."""

from __future__ import annotations

import re
from html import unescape

import pytest


# ------------------------------------------------------------------ "why did this Job fail?"
@pytest.mark.usefixtures("demo_cache")
def test_failure_card_for_a_job_whose_pods_are_gone(client, demo_cluster):
    page = unescape(client.get("/jobs/research/flaky-simulation/").content.decode())
    assert "Why did this Job fail?" in page
    assert "the policy of the Job restarts the Job (RestartJob)" in page
    assert "Volcano restarted it 1 time; restart number 2 reached maxRetry 2, so the Job is Failed." in page
    assert "Job failed on action RestartJob for retry limit reached" in page
    assert "pods are gone" in page and "data-log-tail" not in page
    assert 'href="/jobs/research/flaky-simulation/logs/"' in page


@pytest.mark.usefixtures("demo_cache")
def test_failure_card_names_the_failed_containers_and_loads_the_last_lines_lazily(client, demo_cluster):
    page = client.get("/jobs/research/bad-config/").content.decode()
    text = unescape(page)
    assert "No policy handles a failed pod" in text and "fewer than minAvailable (2)" in text
    assert "First failure: container main of pod bad-config-main-" in text and "Error, exit code 1" in text
    tail_url = unescape(re.search(r'<details class="log-tail"[^>]*hx-get="([^"]+)"', page, re.S).group(1))
    assert 'hx-trigger="toggle once"' in page
    assert "Traceback" not in page  # the log is read only when the details open
    fragment = client.get(tail_url)
    assert fragment.status_code == 200 and b"<html" not in fragment.content
    shown = [
        unescape(re.sub(r"<[^>]+>", "", ln))
        for ln in fragment.content.decode().split("\n")
        if "log-line" in ln
    ]
    assert 0 < len(shown) <= 20 and shown[-1].endswith("exited with status 1")
    assert any("Traceback (most recent call last):" in ln for ln in shown)
    assert client.get("/jobs/research/allreduce-bench/").content.decode().count("Why did this Job fail?") == 0


@pytest.mark.usefixtures("demo_cache")
def test_the_last_lines_without_javascript_are_a_link_to_the_log(client, demo_cluster):
    page = client.get("/jobs/research/bad-config/").content.decode()
    body = re.search(r'<div class="log-tail-body">(.*?)</div>', page, re.S).group(1)
    link = re.search(r'<a data-log-tail-link\s+href="([^"]+)"\s*>Show the last lines</a>', body)
    assert link, body
    url = unescape(link.group(1))
    assert re.fullmatch(r"/pods/research/bad-config-main-\d/logs/\?container=main&tail=100", url), url
    full = client.get(url)
    shown = unescape(full.content.decode())
    assert full.status_code == 200 and "<html" in shown
    assert "Traceback (most recent call last):" in shown and "exited with status 1" in shown


# ------------------------------------------------------------------ pods deleted under the cache
@pytest.fixture(scope="module")
def gone_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=11, name="gone") as pair:
        yield pair


def test_the_job_page_lists_deleted_pods_and_explains_the_failure_from_them(gone_cluster, client):
    from tests.kube.test_pod_records import job_pod
    from tests.pages.helpers import kind

    cluster, cache = gone_cluster
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "default", "uid": "job-uid"},
        "spec": {
            "minAvailable": 1,
            "maxRetry": 1,
            "policies": [{"event": "PodFailed", "action": "RestartJob"}],
            "tasks": [{"name": "worker", "replicas": 1, "template": {"spec": {"containers": []}}}],
        },
        "status": {"state": {"phase": "Failed"}, "retryCount": 1, "failed": 1},
    }
    cluster.store.create(kind("batch.volcano.sh", "jobs"), job, "default", replay=True)
    pod = job_pod("train-worker-0", message="killed: memory limit 1Gi")
    cluster.store.create(kind("", "pods"), pod, "default", replay=True)
    cache.wait_for(lambda s: s.pods.get("default", "train-worker-0") and s.jobs.get("default", "train"), 10)
    cluster.store.delete(kind("", "pods"), "default", "train-worker-0")
    cache.wait_for(lambda s: s.deleted_pods_of_job(job) and not s.pods.get("default", "train-worker-0"), 10)

    page = unescape(client.get("/jobs/default/train/").content.decode())
    assert "Pods (deleted)" in page and "data-deleted-pods" in page
    assert "First failure: container main of pod train-worker-0 ended: OOMKilled, exit code 137." in page
    assert "killed: memory limit 1Gi" in page and "pod deleted" in page
    assert "1 container was killed for using more memory than its limit (OOMKilled)" in page
    assert "come from what the dashboard saw when they were deleted" in page
    assert "the policy of the Job restarts the Job (RestartJob)" in page
    assert "data-log-tail" not in page  # no log to read of a deleted pod
    # Nor a page: the failure table names the deleted pod without a link to a 404.
    assert 'href="/pods/default/train-worker-0/"' not in page
