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
    assert "restarted 2 times; maxRetry is 2, so the retries ran out" in page
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
