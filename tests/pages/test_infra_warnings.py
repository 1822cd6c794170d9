"""CronJobs and JobFlows the controllers cannot run: their next runs in words, their warning events
(on their pages and the overview), a broken schedule or time zone on the list, a flow whose
JobTemplate is missing; objects and events created through the simulated API server."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from tests.pages.helpers import check_fragment, kind, text
from tests.pages.infra_objects import iso

NS = "ml-platform"
CRONJOBS = kind("batch.volcano.sh", "cronjobs")


def _cronjob(name, schedule, *, zone=None, last=None):
    spec = {"schedule": schedule, "jobTemplate": {"spec": {"minAvailable": 1, "tasks": []}}}
    if zone:
        spec["timeZone"] = zone
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"lastScheduleTime": iso(last)} if last else {},
    }


def _event(name, obj_kind, api, obj_name, reason, message, at):
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NS},
        "involvedObject": {
            "kind": obj_kind,
            "apiVersion": api,
            "namespace": NS,
            "name": obj_name,
            "uid": f"uid-{obj_name}",
        },
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 3,
        "firstTimestamp": iso(at - timedelta(minutes=5)),
        "lastTimestamp": iso(at),
    }


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=5, name="broken") as (cluster, cache):
        # Five seconds past a whole minute: the next "* * * * *" run is 55 s ahead.
        now = cluster.clock.advance(5 - cluster.clock.now().second % 60)
        store = cluster.store
        store.create(kind("", "namespaces"), {"metadata": {"name": NS}})
        cjs = [
            _cronjob("feature-refresh", "* * * * *", last=now - timedelta(seconds=50)),
            _cronjob("weekly-report", "0 6 * * 1"),
            _cronjob("bad-schedule", "61 * * * *"),
            _cronjob("bad-zone", "0 * * * *", zone="Mars/Olympus"),
        ]
        for cj in cjs:
            store.create(CRONJOBS, cj, NS, replay=True)
        flow = {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "orphan", "namespace": NS, "uid": "uid-orphan"},
            "spec": {"flows": [{"name": "step-a"}]},
            "status": {"state": {"phase": "Pending"}},
        }
        store.create(kind("flow.volcano.sh", "jobflows"), flow, NS, replay=True)
        events = [
            _event(
                "bad-zone.1",
                "CronJob",
                "batch.volcano.sh/v1alpha1",
                "bad-zone",
                "InvalidTimeZone",
                'invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus',
                now,
            ),
            _event(
                "bad-schedule.1",
                "CronJob",
                "batch.volcano.sh/v1alpha1",
                "bad-schedule",
                "UnParseableCronJobSchedule",
                "unparseable schedule: 61 * * * * : end of range (61) above maximum (59): 61",
                now,
            ),
            _event(
                "orphan.1",
                "JobFlow",
                "flow.volcano.sh/v1alpha1",
                "orphan",
                "SyncJobFlow",
                'jobtemplate.flow.volcano.sh "step-a" not found',
                now,
            ),
        ]
        for ev in events:
            store.create(kind("", "events"), ev, NS, replay=True)

        def held(s):
            return all(s.cronjobs.get(NS, c["metadata"]["name"]) for c in cjs) and all(
                s.events.get(NS, e["metadata"]["name"]) for e in events
            )

        cache.wait_for(lambda s: held(s) and s.jobflows.get(NS, "orphan") is not None, timeout=10)
        yield cluster, cache, now


def _get(client, url, lang="en"):
    resp = client.get(url, HTTP_ACCEPT_LANGUAGE=lang)
    assert resp.status_code == 200, (url, resp.status_code)
    return resp.content.decode()


def _next_runs(page: str) -> list[str]:
    block = page.split("data-next-runs")[1].split("</ol>")[0]
    return re.findall(r'<time [^>]*data-rel="in">([^<]+)</time>', block)


def test_next_runs_read_as_waits_not_clock_skew(broken, client):
    page = _get(client, f"/cronjobs/{NS}/feature-refresh/")
    runs = _next_runs(page)
    assert len(runs) == 5 and runs[0] == "in 55s" and runs[1] == "in 1m55s" and runs[4] == "in 4m55s"
    assert "just now" not in page.split("data-next-runs")[1].split("</ol>")[0]
    assert "50s ago" in text(page.split("Last scheduled")[1])
    weekly = _get(client, f"/cronjobs/{NS}/weekly-report/")
    assert "clock skew" not in weekly
    # Monday 06:00 UTC from Sunday 10:00:05, then weekly.
    assert _next_runs(weekly) == ["in 19h", "in 7d19h", "in 14d", "in 21d", "in 28d"]
    zh = _get(client, f"/cronjobs/{NS}/weekly-report/", "zh-hans")
    assert "时钟偏差？" not in zh
    assert _next_runs(zh) == ["19小时后", "7天19小时后", "14天后", "21天后", "28天后"]
    check_fragment(client, page, "status")


def test_reltime_words_carry_the_future_form(broken, client):
    zh = _get(client, f"/cronjobs/{NS}/weekly-report/", "zh-hans")
    words = re.search(r'data-words="([^"]+)"', zh).group(1)
    assert "&quot;in&quot;: &quot;%(t)s后&quot;" in words


def test_broken_cronjobs_say_what_is_invalid_and_show_their_events(broken, client):
    page = _get(client, "/cronjobs/")
    row = page.split(f'data-cronjob="{NS}/bad-schedule"')[1].split("</tr>")[0]
    assert "schedule invalid: 61 * * * *" in text(row) and "Invalid" in text(row) and "Idle" not in text(row)
    row = page.split(f'data-cronjob="{NS}/bad-zone"')[1].split("</tr>")[0]
    assert "time zone invalid: Mars/Olympus" in text(row)
    detail = _get(client, f"/cronjobs/{NS}/bad-zone/")
    assert "InvalidTimeZone" in text(detail.split('id="events-title"')[1])
    check_fragment(client, detail, "events")
    detail = _get(client, f"/cronjobs/{NS}/bad-schedule/")
    assert "UnParseableCronJobSchedule" in detail and "schedule invalid: 61 * * * *" in text(detail)


def test_jobflow_with_missing_template_never_runs(broken, client):
    detail = _get(client, f"/jobflows/{NS}/orphan/")
    svg = detail.split('<svg class="flow-graph"')[1].split("</svg>")[0]
    assert "JobTemplate missing — will never run" in svg and "no Job yet" not in svg
    # Wider than a box at 12 px: fitted into it.
    assert re.search(r'textLength="160"[^>]*>JobTemplate missing — will never run<', svg)
    assert "SyncJobFlow" in text(detail.split('id="events-title"')[1])
    check_fragment(client, detail, "events")
    check_fragment(client, detail, "status")


def test_overview_recent_warnings_include_cronjob_and_jobflow_events(broken, client):
    page = text(_get(client, "/"))
    for reason in ("InvalidTimeZone", "UnParseableCronJobSchedule", "SyncJobFlow"):
        assert reason in page, reason


def test_list_chips_and_order_names(broken, client):
    page = _get(client, "/cronjobs/")
    assert 'data-preset="active"' not in page
    options = re.findall(r"<option[^>]*>([^<]+)</option>", page)
    assert "State, A–Z" in options and "Last scheduled, newest first" in options
    assert not any(o.startswith(("Phase", "last")) for o in options)
    assert 'data-preset="active"' not in _get(client, "/nodes/")
    zh = text(_get(client, "/cronjobs/", "zh-hans"))
    assert "Monday" not in zh and "星期一" in zh
