"""A fragment poll leaves nothing for the cyclic garbage collector: its request, environ and the
server's objects are freed by reference counting when the response is done (the middleware drops
django-htmx's ``request.htmx``, which points back at the request). Whole pages still leave their
template contexts' cycles."""

from __future__ import annotations

import gc
from collections import Counter

import pytest
from django.core.handlers.wsgi import WSGIHandler

from bench.common import wsgi_get

pytestmark = pytest.mark.usefixtures("demo_cache")

# Objects that only a request's own cycles can hold (the simulated cluster in this process makes
# garbage of its own meanwhile, so the check names the request's kinds).
REQUEST_KINDS = {"WSGIRequest", "HtmxDetails"}


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
    assert status == 200, (path, status)
    return kinds


def test_a_job_status_fragment_poll_leaves_no_request_cycle(demo_cache):
    meta = demo_cache.snapshot().jobs.all()[0]["metadata"]
    fragment = f"/jobs/{meta['namespace']}/{meta['name']}/?f=status&v=0"
    assert _left_by(WSGIHandler(), fragment, True) == Counter()
