"""A CronJob whose history limit or startingDeadlineSeconds is negative (below the CRD's minimum of
0) over the simulated cluster: the value is shown as written and flagged, the CronJob is Invalid,
and its next scheduled times are said to be missed, not promised."""

from __future__ import annotations

import re
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

    with own_cluster(tmp_path_factory, seed=11, name="cron-negative") as (cluster, cache):
        yield cluster, cache


@pytest.mark.parametrize(
    ("field", "value", "consequence"),
    [
        (
            "successfulJobsHistoryLimit",
            -1,
            "Volcano's controller deletes all successful Jobs of this CronJob, then crashes",
        ),
        (
            "failedJobsHistoryLimit",
            -2,
            "Volcano's controller deletes all failed Jobs of this CronJob, then crashes",
        ),
        (
            "startingDeadlineSeconds",
            -30,
            "the deadline of each scheduled time passes before the time comes, so the controller starts",
        ),
    ],
)
def test_a_negative_field_is_flagged_and_the_next_runs_will_be_missed(own, client, field, value, consequence):
    cluster, cache = own
    now = cluster.clock.now().replace(second=0, microsecond=0)
    base = now - timedelta(minutes=now.minute % 5)  # the newest */5 time at or before now
    name = field.lower()
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": io.iso(base - timedelta(hours=1))},
        "spec": {"schedule": "*/5 * * * *", field: value, "jobTemplate": {"spec": {"tasks": []}}},
        "status": {"lastScheduleTime": io.iso(base - timedelta(minutes=10))},
    }
    cluster.store.create(CRONJOBS, cj, NS, replay=True)
    try:
        cache.wait_for(lambda s: s.cronjobs.get(NS, name) is not None, timeout=10)
        listing = page_ok(client, f"/cronjobs/?namespace={NS}")
        row = between(listing, f'data-cronjob="{NS}/{name}"', "</tr>")
        assert "Invalid" in text(row) and f"{field} invalid: {value}" in text(row), text(row)
        assert text(row.split("<td")[-2]).strip().endswith("never"), text(row)  # the Next run column

        page = page_ok(client, f"/cronjobs/{NS}/{name}/")
        problem = text(between(page, "data-cronjob-problem>", "</p>"))
        assert f"{field} invalid: {value}" in problem and "Below the CRD's minimum of 0" in problem, problem
        assert consequence in problem, problem
        shown = text(
            between(
                page, "data-deadline>" if field == "startingDeadlineSeconds" else "data-history>", "</dd>"
            )
        )
        assert str(value) in shown and "invalid" in shown, shown
        note = text(between(page, "data-next-runs-note>", "</p>"))
        assert note == f"Each of these will be missed: {field} is {value} (see above).", note
        runs = between(page, "data-next-runs>", "</ol>")
        assert len(re.findall(r"<li>", runs)) == 5 and runs.count("data-will-miss") == 5, runs
        # base - 5 minutes and base have no Job and will never get one: both missed, the newest too.
        assert len(re.findall(r"<li>", between(page, "data-missed>", "</ul>"))) == 2
        check_fragment(client, page, "status")
    finally:
        cluster.store.delete(CRONJOBS, NS, name)
        cache.wait_for(lambda s: s.cronjobs.get(NS, name) is None, timeout=10)


def test_a_deadline_and_the_default_limits_are_not_flagged(own, client):
    cluster, cache = own
    now = cluster.clock.now().replace(microsecond=0)
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "minute", "namespace": NS, "creationTimestamp": io.iso(now)},
        "spec": {
            "schedule": "*/5 * * * *",
            "startingDeadlineSeconds": 60,
            "jobTemplate": {"spec": {"tasks": []}},
        },
    }
    cluster.store.create(CRONJOBS, cj, NS, replay=True)
    try:
        cache.wait_for(lambda s: s.cronjobs.get(NS, "minute") is not None, timeout=10)
        page = page_ok(client, f"/cronjobs/{NS}/minute/")
        assert "data-cronjob-problem" not in page and "data-next-runs-note" not in page
        assert "data-will-miss" not in page and "invalid" not in text(page)
        assert text(between(page, "data-deadline>", "</dd>")).strip() == "60"
        assert text(between(page, "data-history>", "</dd>")).strip() == "3 successful, 1 failed"
    finally:
        cluster.store.delete(CRONJOBS, NS, "minute")
        cache.wait_for(lambda s: s.cronjobs.get(NS, "minute") is None, timeout=10)
