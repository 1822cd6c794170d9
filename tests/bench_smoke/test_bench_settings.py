"""The benchmark's settings (bench/settings.py): Server-Timing and ``/_bench/cache``, which the
production settings do not load."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings as production
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import Resolver404, resolve

from bench.loadgen import server_time_ms
from bench.middleware import server_timing_middleware


@pytest.fixture
def bench_settings(settings):
    """The test settings switched to bench/settings.py's middleware and URLconf."""
    import bench.settings as bench

    settings.MIDDLEWARE = bench.MIDDLEWARE
    settings.ROOT_URLCONF = bench.ROOT_URLCONF
    return settings


def test_production_settings_load_no_benchmark_hook() -> None:
    assert production.ROOT_URLCONF == "volcano_ui.urls"
    assert not [m for m in production.MIDDLEWARE if m.startswith("bench.")]
    with pytest.raises(Resolver404):
        resolve("/_bench/cache")
    assert "Server-Timing" not in Client().get("/healthz")


def test_it_reports_the_app_duration_in_milliseconds(bench_settings) -> None:
    response = Client().get("/healthz")
    assert re.fullmatch(r"app;dur=\d+\.\d{2}, cpu;dur=\d+\.\d{2}", response["Server-Timing"])
    assert server_time_ms(response) is not None
    assert server_time_ms(response, "cpu") is not None


def test_it_keeps_a_server_timing_the_view_already_set() -> None:
    def view(request):
        response = HttpResponse("ok")
        response["Server-Timing"] = "cache;dur=0.5"
        return response

    response = server_timing_middleware(view)(RequestFactory().get("/"))
    assert re.fullmatch(r"cache;dur=0\.5, app;dur=\d+\.\d{2}, cpu;dur=\d+\.\d{2}", response["Server-Timing"])
    assert server_time_ms(response, "cache") == 0.5


def test_the_cache_dump_lists_every_cached_object(bench_settings, demo_cluster, tmp_path) -> None:
    from tests.pages.conftest import installed_cache

    with installed_cache(demo_cluster, tmp_path) as cache:
        response = Client().get("/_bench/cache")
        snapshot = cache.snapshot()
    assert response.status_code == 200
    answer = json.loads(response.content)
    jobs = answer["kinds"]["jobs"]
    assert jobs["state"] == snapshot.jobs.state.name
    expected = {
        f"{j['metadata']['namespace']}/{j['metadata']['name']}": j["metadata"]["resourceVersion"]
        for j in snapshot.jobs.all()
    }
    assert expected and jobs["objects"] == expected
    assert set(answer["kinds"]) == {"jobs", "podgroups", "queues", "pods", "events"}
    assert answer["limits"]["events_total"] == production.VOLCANO_UI_EVENTS_TOTAL
