"""/usage/ names the pods whose queue (or namespace) is unknown the same way in its table, its
charts and its CSV: one translated label (views.history.unknown_key_label)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from dashboard.history.models import PodLifetime
from tests.pages.history_store import history_store

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LABEL = "no known queue"


@pytest.fixture
def usage(memory_cache, tmp_path, django_db_blocker):
    for k in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(k).mark_synced()
    with django_db_blocker.unblock(), history_store(memory_cache, tmp_path / "h.sqlite3", NOW) as alias:
        started = NOW - timedelta(hours=2)
        for i, queue in enumerate(("", "research", "")):
            PodLifetime.objects.using(alias).create(
                uid=f"u{i}",
                namespace="ml",
                name=f"p{i}",
                queue=queue,
                phase="Running",
                created=started,
                started=started,
                last_seen=started,
                cpu=2.0,
                gpu=1.0,
            )
        yield Client()


def test_unknown_queue_has_one_name_in_table_chart_and_csv(usage):
    html = usage.get("/usage/?window=24h&by=queue").content.decode()
    table = html.split("data-usage")[1].split("</table>")[0]
    assert f'<span class="muted">{LABEL}</span>' in table
    charts = html.split('class="usage-charts"')[1].split("data-usage")[0]
    assert charts.count(LABEL) >= 2  # the GPU-hours and the CPU-hours chart
    assert "—" not in charts and "unknown" not in html.split("<main")[1]
    rows = list(csv.reader(io.StringIO(usage.get("/usage/?window=24h&by=queue&format=csv").content.decode())))
    assert sorted(r[0] for r in rows[1:]) == [LABEL, "research"]
    assert {r[0]: r[3] for r in rows[1:]}[LABEL] == "2"


def test_the_label_is_translated(usage):
    html = usage.get("/usage/?window=24h&by=queue", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert LABEL not in html and html.count("无已知队列") >= 3
