"""``Server-Timing`` on every response, for the benchmark (bench/settings.py lists it first)."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


def server_timing_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Add ``Server-Timing: app;dur=<ms>, cpu;dur=<ms>`` to every response.

    ``app`` is the wall time spent in Django; ``cpu`` the CPU time of the serving thread over the
    same span (``time.thread_time``), which stays meaningful when the machine is busy with other
    work, while ``app`` then also counts waiting for a core or the GIL. Listed first in
    ``MIDDLEWARE`` so it covers every other middleware and the view. Browsers' developer tools and
    the benchmark (bench/loadgen.py) read it, so server time can be reported next to
    client-observed latency (docs/benchmarks.md). Streaming responses get the time to their first
    byte. The values are durations only; they name no object and no user.
    """

    def middleware(request: HttpRequest) -> HttpResponse:
        started, cpu_started = time.perf_counter(), time.thread_time()
        response = get_response(request)
        metric = (
            f"app;dur={(time.perf_counter() - started) * 1000:.2f}, "
            f"cpu;dur={(time.thread_time() - cpu_started) * 1000:.2f}"
        )
        existing = response.get("Server-Timing")
        response["Server-Timing"] = f"{existing}, {metric}" if existing else metric
        return response

    return middleware
