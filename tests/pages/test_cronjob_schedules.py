"""CronJob schedules on the CronJob pages read as Volcano reads them (robfig/cron's
``ParseStandard``): ``@every 90s`` runs every 90 seconds, ``0 12 * * 7`` and the other schedules
robfig rejects are Invalid with robfig's reason."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import between, check_fragment, page_ok, text

NS = io.NS
CRONJOBS = io.kind("batch.volcano.sh", "cronjobs")


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=12, name="cron-schedules") as (cluster, cache):
        yield cluster, cache


@pytest.fixture
def cronjob(own):
    """Creates a CronJob with a schedule (and its lastScheduleTime); deletes it afterwards."""
    cluster, cache = own
    made = []

    def make(name: str, schedule: str, last: datetime | None = None) -> None:
        now = cluster.clock.now().replace(microsecond=0)
        cj = {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "CronJob",
            "metadata": {
                "name": name,
                "namespace": NS,
                "creationTimestamp": io.iso(now - timedelta(hours=1)),
            },
            "spec": {"schedule": schedule, "jobTemplate": {"spec": {"tasks": []}}},
        }
        if last is not None:
            cj["status"] = {"lastScheduleTime": io.iso(last)}
        cluster.store.create(CRONJOBS, cj, NS, replay=True)
        made.append(name)
        cache.wait_for(lambda s: s.cronjobs.get(NS, name) is not None, timeout=10)

    yield make
    for name in made:
        cluster.store.delete(CRONJOBS, NS, name)
        cache.wait_for(lambda s, name=name: s.cronjobs.get(NS, name) is None, timeout=10)


def _row(client, name: str) -> str:
    return between(page_ok(client, f"/cronjobs/?namespace={NS}"), f'data-cronjob="{NS}/{name}"', "</tr>")


def test_every_90s_runs_every_90_seconds_on_the_grid_of_its_last_run(own, client, cronjob):
    cluster, _ = own
    last = cluster.clock.now().replace(microsecond=0) - timedelta(seconds=30)
    cronjob("every90", "@every 90s", last)
    row = _row(client, "every90")
    assert "Invalid" not in text(row) and "Idle" in text(row), text(row)
    assert "Every 90 seconds" in text(row) and "never" not in text(row), text(row)

    page = page_ok(client, f"/cronjobs/{NS}/every90/")
    assert "data-cronjob-problem" not in page
    assert text(between(page, "data-words>", "</p>")).strip() == "Every 90 seconds"
    shown = re.findall(r'datetime="([^"]+)"', between(page, "data-next-runs>", "</ol>"))
    times = sorted({datetime.fromisoformat(t.replace("Z", "+00:00")) for t in shown})
    assert times == [last + timedelta(seconds=90 * k) for k in range(1, 6)], shown
    check_fragment(client, page, "status")


def test_every_in_chinese(own, client, cronjob):
    cronjob("every2h", "@every 2h")
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    try:
        page = page_ok(client, f"/cronjobs/{NS}/every2h/")
        assert text(between(page, "data-words>", "</p>")).strip() == "每 2 小时"
    finally:
        client.post("/i18n/setlang/", {"language": "en", "next": "/"})


@pytest.mark.parametrize(
    ("name", "schedule", "reason"),
    [
        ("sunday7", "0 12 * * 7", "end of range (7) above maximum (6): 7"),
        ("dow07", "* * * * 0-7", "end of range (7) above maximum (6): 0-7"),
        ("fritomon", "0 0 * * 5-1", "beginning of range (5) beyond end of range (1): 5-1"),
        ("lastday", "0 0 L * *", 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'),
        ("nth", "0 9 * * 1#1", 'failed to parse int from 1#1: strconv.Atoi: parsing "1#1": invalid syntax'),
        ("seconds", "*/10 * * * * *", "expected exactly 5 fields, found 6: [*/10 * * * * *]"),
        ("years", "0 0 * * * * *", "expected exactly 5 fields, found 7: [0 0 * * * * *]"),
    ],
)
def test_a_schedule_volcano_rejects_is_invalid_with_the_reason(own, client, cronjob, name, schedule, reason):
    cronjob(name, schedule)
    problem = f"schedule invalid: {schedule} ({reason})"
    row = _row(client, name)
    assert "Invalid" in text(row) and problem in text(row), text(row)
    assert text(row.split("<td")[-2]).strip().endswith("never"), text(row)  # the Next run column

    page = page_ok(client, f"/cronjobs/{NS}/{name}/")
    shown = text(between(page, "data-cronjob-problem>", "</p>"))
    assert problem in shown and "the controller will not run this CronJob" in shown, shown
    assert "<p data-words>" not in page and "data-next-runs>" not in page


def test_the_reason_is_escaped(own, client, cronjob):
    cronjob("markup", "<b>x</b> * * * *")
    page = page_ok(client, f"/cronjobs/{NS}/markup/")
    assert "<b>x</b>" not in page
    problem = between(page, "data-cronjob-problem>", "</p>")
    # robfig splits "<b>x</b>" at its "/" (a step) and fails on "<b>x<".
    assert (
        "failed to parse int from &lt;b&gt;x&lt;: strconv.Atoi: parsing &quot;&lt;b&gt;x&lt;&quot;" in problem
    ), problem
