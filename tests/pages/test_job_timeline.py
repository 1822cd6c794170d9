"""A Job's pod timeline (its page's history section): every bar row names its pod (escaped; a
long name shortened in the middle, whole in its title), a time axis with clock times at the
window's start, end and between, and the same times in the table for screen readers."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from dashboard.history.models import PodLifetime
from tests.pages.helpers import text
from tests.pages.history_store import history_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CREATED = NOW - timedelta(hours=2)
LONG = "train-worker-with-a-very-long-task-name-0123456789-7"
HOSTILE = "train-<b>x</b>-1"


@pytest.fixture
def job_page(memory_cache, tmp_path, django_db_blocker):
    for k in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(k).mark_synced()
    memory_cache.store("jobs").upsert(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {
                "name": "train",
                "namespace": "ml",
                "uid": "u-job",
                "resourceVersion": "3",
                "creationTimestamp": CREATED.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            "spec": {"queue": "default", "minAvailable": 1, "tasks": [{"name": "w", "replicas": 2}]},
            "status": {"state": {"phase": "Running"}, "running": 2},
        }
    )
    with django_db_blocker.unblock(), history_store(memory_cache, tmp_path / "h.sqlite3", NOW) as alias:
        for i, (name, ended) in enumerate(((LONG, None), (HOSTILE, NOW - timedelta(minutes=30)))):
            at = CREATED + timedelta(minutes=10 * i)
            PodLifetime.objects.using(alias).create(
                uid=f"u{i}",
                namespace="ml",
                name=name,
                job="train",
                task="w",
                node="n1",
                phase="Running" if ended is None else "Succeeded",
                created=at,
                scheduled=at + timedelta(minutes=1),
                started=at + timedelta(minutes=2),
                finished=ended,
                exit_code=None if ended is None else 0,
                last_seen=at,
            )
        yield Client().get("/jobs/ml/train/").content.decode()


def _chart(page: str) -> str:
    return page.partition("data-gantt ")[2].split("chart-legend")[0]


def test_each_bar_row_names_its_pod(job_page):
    chart = _chart(job_page)
    rows = chart.split("data-gantt-row")[1:]
    assert len(rows) == 2
    long_row, hostile_row = rows
    assert f'title="{LONG}"' in long_row and 'class="mid"' in long_row  # shortened, whole on hover
    assert text("<p" + long_row.split("<svg")[0]).replace(" ", "") == LONG  # the text is the full name
    assert "<b>x</b>" not in job_page and "train-&lt;b&gt;x&lt;/b&gt;-1" in hostile_row
    assert hostile_row.count('<rect class="gantt-') == 3


def test_time_axis_has_clock_ticks_from_the_jobs_creation_to_now(job_page):
    axis = _chart(job_page).partition("data-gantt-axis")[2].split("</svg>")[0]
    ticks = re.findall(r'<text class="chart-tick[^"]*" x="([\d.]+)%"[^>]*>([^<]+)</text>', axis)
    assert [float(x) for x, _t in ticks] == [0, 25, 50, 75, 100]
    assert [t for _x, t in ticks] == ["10:00", "10:30", "11:00", "11:30", "12:00"]


def test_the_table_has_every_pods_times(job_page):
    table = job_page.split("data-gantt-table")[1].split("</table>")[0]
    head = text(table.split("</thead>")[0])
    assert all(h in head for h in ("Pod", "Created", "Scheduled", "Started", "Finished"))
    body = text(table.split("<tbody>")[1])
    assert f"{LONG} 10:00 10:01 10:02 —" in body
    assert "train-<b>x</b>-1 10:10 10:11 10:12 11:30" in body


def test_a_young_jobs_ticks_have_seconds():
    from dashboard.presenters.charts import gantt

    ticks = [t.text for t in gantt([], NOW - timedelta(minutes=2), NOW).ticks]
    assert ticks == ["11:58:00", "11:58:30", "11:59:00", "11:59:30", "12:00:00"]
