"""The Server-Timing header the benchmark reads (dashboard.middleware.server_timing_middleware)."""

from __future__ import annotations

import re

from django.http import HttpResponse
from django.test import RequestFactory

from bench.loadgen import server_time_ms
from dashboard.middleware import server_timing_middleware


def test_it_reports_the_app_duration_in_milliseconds(client) -> None:
    response = client.get("/healthz")
    assert re.fullmatch(r"app;dur=\d+\.\d{2}, cpu;dur=\d+\.\d{2}", response["Server-Timing"])
    assert server_time_ms(response) is not None
    assert server_time_ms(response, "cpu") is not None


def test_it_keeps_a_server_timing_the_view_already_set() -> None:
    def view(request):
        response = HttpResponse("ok")
        response["Server-Timing"] = "cache;dur=0.5"
        return response

    response = server_timing_middleware(view)(RequestFactory().get("/"))
    assert response["Server-Timing"].startswith("cache;dur=0.5, app;dur=")
    assert server_time_ms(response) >= 0.0
