"""CronJobs that Volcano's controller reads otherwise than written, over the simulated cluster: a
startingDeadlineSeconds too large for Go's nanoseconds or of 0, an unknown concurrencyPolicy, a
schedule that matches no date, the "Local" time zone."""

from __future__ import annotations

import re
from contextlib import contextmanager
from datetime import timedelta

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import between, check_fragment, page_ok, text

NS = io.NS
CRONJOBS = io.kind("batch.volcano.sh", "cronjobs")


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=13, name="cron-rules") as (cluster, cache):
        yield cluster, cache


@contextmanager
def _cronjob(own, name: str, **spec):
    cluster, cache = own
    now = cluster.clock.now().replace(second=0, microsecond=0)
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": io.iso(now - timedelta(hours=1))},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"tasks": []}}, **spec},
        "status": {"lastScheduleTime": io.iso(now - timedelta(minutes=30))},
    }
    cluster.store.create(CRONJOBS, cj, NS, replay=True)
    try:
        cache.wait_for(lambda s: s.cronjobs.get(NS, name) is not None, timeout=10)
        yield
    finally:
        cluster.store.delete(CRONJOBS, NS, name)
        cache.wait_for(lambda s: s.cronjobs.get(NS, name) is None, timeout=10)


def _row(client, name: str) -> str:
    return between(page_ok(client, f"/cronjobs/?namespace={NS}"), f'data-cronjob="{NS}/{name}"', "</tr>")


@pytest.mark.parametrize("value", [9223372036854775807, 9223372037])
def test_a_deadline_that_wraps_to_no_lookback_is_out_of_range_and_starts_no_run(own, client, value):
    with _cronjob(own, "wraps-back", startingDeadlineSeconds=value):
        row = _row(client, "wraps-back")
        assert "Invalid" in text(row) and f"startingDeadlineSeconds {value}: no run can start" in text(row)
        page = page_ok(client, f"/cronjobs/{NS}/wraps-back/")
        problem = text(between(page, "data-cronjob-problem>", "</p>"))
        assert "Out of range" in problem and "int64 nanoseconds" in problem, problem
        assert "every run is too late, so it starts no Job" in problem, problem
        assert "Below the CRD's minimum" not in problem, problem
        assert text(between(page, "data-deadline-note>", "</span>")) == "no run can start"
        runs = between(page, "data-next-runs>", "</ol>")
        assert len(re.findall(r"<li>", runs)) == 5 and runs.count("data-will-miss") == 5, runs
        check_fragment(client, page, "status")


def test_a_deadline_that_wraps_to_another_lookback_says_which(own, client):
    with _cronjob(own, "wraps-long", startingDeadlineSeconds=10_000_000_000_000):
        assert "Invalid" not in text(_row(client, "wraps-long"))
        page = page_ok(client, f"/cronjobs/{NS}/wraps-long/")
        assert "data-cronjob-problem" not in page and "data-will-miss" not in page
        note = text(between(page, "data-deadline-note>", "</span>"))
        assert "Out of range" in note and "uses 1864712049.423024128 seconds instead" in note, note
        assert 'class="warn-text small" data-deadline-note' in page
        check_fragment(client, page, "status")


def test_a_deadline_of_zero_lets_no_run_start(own, client):
    with _cronjob(own, "zero", startingDeadlineSeconds=0):
        row = _row(client, "zero")
        assert "Invalid" in text(row) and "startingDeadlineSeconds 0: no run can start" in text(row)
        assert text(row.split("<td")[-2]).strip().endswith("never"), text(row)
        page = page_ok(client, f"/cronjobs/{NS}/zero/")
        problem = text(between(page, "data-cronjob-problem>", "</p>"))
        assert problem.strip().startswith("startingDeadlineSeconds 0: no run can start"), problem
        assert "wakes about 100 ms after a scheduled time" in problem, problem
        assert "invalid" not in problem and "CRD" not in problem and "Out of range" not in problem, problem
        assert text(between(page, "data-deadline>", "</dd>")).split() == ["0", "no", "run", "can", "start"]
        note = text(between(page, "data-next-runs-note>", "</p>"))
        assert note == "Each of these will be missed: startingDeadlineSeconds is 0 (see above).", note
        assert between(page, "data-next-runs>", "</ol>").count("data-will-miss") == 5
        assert len(re.findall(r"<li>", between(page, "data-missed>", "</ul>"))) == 6  # every */5 since


def test_an_unknown_concurrency_policy_is_treated_as_allow(own, client):
    with _cronjob(own, "sometimes", concurrencyPolicy="Sometimes"):
        row = _row(client, "sometimes")
        assert text(between(row, "data-policy-note>", "</div>")) == "treated as Allow"
        page = page_ok(client, f"/cronjobs/{NS}/sometimes/")
        assert text(between(page, "data-policy-note>", "</span>")) == "treated as Allow"
    with _cronjob(own, "forbid", concurrencyPolicy="Forbid"):
        assert "data-policy-note" not in _row(client, "forbid")
        assert "data-policy-note" not in page_ok(client, f"/cronjobs/{NS}/forbid/")


def test_a_schedule_that_matches_no_date_is_invalid_on_the_list(own, client):
    with _cronjob(own, "feb-30", schedule="0 0 30 2 *"):
        row = _row(client, "feb-30")
        assert "Invalid" in text(row) and "Idle" not in text(row), text(row)
        assert text(row.split("<td")[-2]).strip().endswith("never"), text(row)
        page = page_ok(client, f"/cronjobs/{NS}/feb-30/")
        assert "data-never-runs" in page and "Invalid" in text(between(page, "phase-big", "</div>"))


def test_the_local_time_zone_is_the_controllers_utc(own, client):
    with _cronjob(own, "local", timeZone="Local"):
        row = _row(client, "local")
        assert "Invalid" not in text(row) and "data-cronjob-problem" not in row, text(row)
        page = page_ok(client, f"/cronjobs/{NS}/local/")
        zone = text(between(page, "data-zone>", "</strong>"))
        assert zone == "Local: UTC (the controller's local time zone, UTC in Volcano's images)", zone
        assert "data-cronjob-problem" not in page and "data-will-miss" not in page
        assert len(re.findall(r"<li>", between(page, "data-next-runs>", "</ol>"))) == 5
