"""Concurrent requests for the same page share one rendering.

Viewers who open or reload the same page at the same moment (a team after an alert, a wall of
kiosks, a hundred tabs) ask for the same computation. Under churn the cache's change counters
move between any two requests, so the memos alone would have each of them compute the page in
turn. ``shared_page`` makes a whole-page GET that arrives while an identical one is being
rendered wait for it and answer with its body (``memo.SingleFlight``): that rendering finished
after this request arrived, so it is at most as old as the wait.

Identical means the same ``page_key``: the path and query, what the viewer may see and who they
are, language, time zone, theme, script prefix and htmx headers. The form tokens are the only
per-browser part of a page: each waiter's own CSRF token replaces the renderer's. A rendering
that is not a plain 200 HTML body without cookies is not shared (the waiters render their own).
Fragment polls (``?f=``) have their own sharing per version (``Fragments.unchanged``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token

from dashboard.views import memo
from dashboard.views.fragments import polled

# Whole pages being rendered, by page_key; a result is kept only while requests wait for it.
PAGE_FLIGHTS = memo.SingleFlight(max_slots=256)
# Django's {% csrf_token %} output; the value is a masked token (letters and digits).
_TOKEN_RE = re.compile(rb'(name="csrfmiddlewaretoken" value=")[A-Za-z0-9]*(")')
# A rendering as shared: (status, body, the view's headers).
Shared = tuple[int, bytes, list[tuple[str, str]]]


def page_key(request: HttpRequest) -> tuple | None:
    """What a whole page's rendering depends on besides the cache (see the module docstring), or
    None when the request is not a whole-page GET."""
    if request.method != "GET" or polled(request):
        return None
    return (
        *memo.viewer_key(request),
        request.headers.get("HX-Request", ""),
        request.headers.get("HX-Boosted", ""),
        request.headers.get("HX-Target", ""),
    )


def shared_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view``, with concurrent identical whole-page GETs answered from one rendering."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        key = page_key(request)
        if key is None:
            return view(request, *args, **kwargs)
        own: list[HttpResponse] = []

        def render() -> Shared | None:
            resp = view(request, *args, **kwargs)
            own.append(resp)
            return shareable(resp)

        shared = PAGE_FLIGHTS.run(key, render)
        if own:
            return own[0]
        if shared is None:
            return view(request, *args, **kwargs)
        return rebuilt(shared, request)

    return wrapper


def shareable(resp: HttpResponse) -> Shared | None:
    """The parts of ``resp`` another viewer's answer is built from, or None when it must not be
    shared (not 200, not HTML, streamed, or setting cookies)."""
    if (
        resp.status_code != 200
        or getattr(resp, "streaming", False)
        or resp.cookies
        or not resp.get("Content-Type", "").startswith("text/html")
    ):
        return None
    return (resp.status_code, resp.content, list(resp.items()))


def rebuilt(shared: Shared, request: HttpRequest) -> HttpResponse:
    """An answer to ``request`` from a shared rendering, with ``request``'s own CSRF token in its
    forms (``get_token`` also has CsrfViewMiddleware set the cookie, as rendering would)."""
    status, body, headers = shared
    if b"csrfmiddlewaretoken" in body:
        token = get_token(request).encode()
        body = _TOKEN_RE.sub(lambda m: m.group(1) + token + m.group(2), body)
    resp = HttpResponse(body, status=status)
    for name, value in headers:
        resp[name] = value
    return resp
