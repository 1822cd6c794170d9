"""A served request leaves nothing for the cyclic garbage collector: its request, environ and
template contexts are freed by reference counting when the response is done, so the collector's
pauses do not grow with the request rate (dashboard/template_backend.py, and the middleware's
drop of ``request.htmx``)."""

from __future__ import annotations

import gc
from collections import Counter

import pytest
from django.core.handlers.wsgi import WSGIHandler

from bench.common import wsgi_get

pytestmark = pytest.mark.usefixtures("demo_cache")

# Objects that only a request's own cycles can hold (the simulated cluster in this process makes
# garbage of its own meanwhile, so the check names the request's kinds).
REQUEST_KINDS = {"WSGIRequest", "HtmxDetails", "RequestContext", "Context", "ContextDict", "RenderContext"}


def _left_by(app, path: str, htmx: bool) -> Counter:
    wsgi_get(app, path, htmx)  # warm memos and caches first
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            status, _body = wsgi_get(app, path, htmx)
        gc.collect()
        kinds = Counter(type(o).__name__ for o in gc.garbage if type(o).__name__ in REQUEST_KINDS)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    assert status in (200, 404), (path, status)
    return kinds


@pytest.mark.parametrize(
    ("path", "htmx"),
    [
        ("/", False),
        ("/jobs/", False),
        ("/jobs/?phase=Running", True),
        ("/queues/", False),
        ("/podgroups/", False),
        ("/jobs/no-such-namespace/no-such-job/", False),
    ],
)
def test_pages_leave_no_request_cycles(path, htmx):
    assert _left_by(WSGIHandler(), path, htmx) == Counter()


def test_a_job_page_and_its_status_fragment_leave_no_request_cycles(demo_cache):
    meta = demo_cache.snapshot().jobs.all()[0]["metadata"]
    page = f"/jobs/{meta['namespace']}/{meta['name']}/"
    app = WSGIHandler()
    assert _left_by(app, page, False) == Counter()
    assert _left_by(app, page + "?f=status&v=0", True) == Counter()
