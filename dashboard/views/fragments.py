"""The fragment protocol of the pages: a page is rendered whole, or one ``{% partialdef %}`` of it.

An htmx poll asks for one fragment with ``?f=<name>&v=<version it has>``:

- 204 (nothing rendered) when ``v`` equals the fragment's current version;
- 400 when the page has no fragment of that name (swapping a whole document into the fragment's
  place would break the page);
- the rendering another viewer with the same visibility, language and theme got for the same
  version, path and query (``memo.FRAGMENT_HTML``), without computing the fragment again;
- else ``<template>#<name>`` rendered; ``notices`` (the "data as of" bar) is defined once, in
  ``dashboard/base.html``.

A fragment's version is a short key of everything it shows (``presenters.versions.version_key``); a
request computes only the version of the fragment it asks for (a whole page: all of them, for
the ``{% poll %}`` attributes). Versions hold no time: relative times ("5m ago") tick in the
browser (static/dashboard/reltime.js, which takes the pages' clock from ``NOW_HEADER``); a
condition that time alone flips (a Job stuck longer than VOLCANO_UI_STUCK_SECONDS) is part of its
fragment's version as its boolean. ``Vary: HX-Request`` on every answer. A poll whose object no
longer exists answers 404 with ``GONE_HEADER`` (``errors.not_found``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _

from dashboard import access
from dashboard.presenters.versions import version_key
from dashboard.views import memo

FRAGMENT_PARAM = "f"
VERSION_PARAM = "v"
# "Data as of" (the notices bar) is the page's clock itself while every kind is live: its version
# moves on in AGE_BUCKET-second steps. No other fragment's version holds the time.
AGE_BUCKET = 10
# Header of every fragment answer (204 included): the pages' "now" in epoch milliseconds (the
# cluster's clock), so the browser's relative times tick against it.
NOW_HEADER = "X-Volcano-Now"
# Header of a fragment poll's 404 whose page object no longer exists; static/dashboard/app.js
# shows the response body (a notice) and stops polling that page.
GONE_HEADER = "X-Volcano-Gone"
# The fragment every page has: the notices / "data as of" bar of dashboard/base.html.
NOTICES = "notices"


def bucket(now: datetime) -> int:
    """``now`` in AGE_BUCKET-second steps (part of the version of a fragment showing ages)."""
    return int(now.timestamp() // AGE_BUCKET)


def kind_states(snap: Any, *kinds: str) -> tuple:
    """((kind, state name), ...): part of the version of a fragment that shows those kinds."""
    return tuple((k, getattr(getattr(snap, k).state, "name", "")) for k in kinds)


def scope_suffix(request: HttpRequest) -> str:
    """ "" when the viewer sees every namespace, else "." and a digest of the namespaces they see
    (``access.visible_namespaces``): stable across processes (a poll may reach another worker),
    and a fragment whose objects did not change still renders again for a viewer whose
    permissions did."""
    visible = access.visible_namespaces(request)
    if visible is None:
        return ""
    return "." + hashlib.blake2b("\n".join(sorted(visible)).encode(), digest_size=6).hexdigest()


def polled(request: HttpRequest) -> str:
    """The fragment an htmx request names (``?f=``), "" for a request for the whole page."""
    return (request.GET.get(FRAGMENT_PARAM) or "") if getattr(request, "htmx", False) else ""


Version = str | Callable[[], str]


class Fragments:
    """The refreshable fragments of one page request.

    ``fragments``: name -> its version, or a function computing it (called only when that
    version is needed). The notices bar's version (kind states, their sync times, the age
    bucket) is added for ``kinds``. ``asked``: the fragment this request renders, None for the
    whole page; ``want(name)``: whether the response shows fragment ``name``."""

    def __init__(
        self, request: HttpRequest, snap: Any, now: datetime, kinds: tuple[str, ...], **fragments: Version
    ) -> None:
        self.request = request
        self.now_ms = str(int(now.timestamp() * 1000))
        self._pending: dict[str, Version] = {
            **fragments,
            NOTICES: lambda: _notices_version(snap, now, kinds),
        }
        self._known: dict[str, str] = {}
        frag = polled(request)
        self.asked: str | None = frag if frag in self._pending else None
        self.unknown = bool(frag) and frag not in self._pending
        self._share_key: tuple | None = None

    def want(self, name: str) -> bool:
        return self.asked is None or self.asked == name

    def version(self, name: str) -> str:
        """Fragment ``name``'s version for this viewer: what it shows, then the viewer's scope
        (``scope_suffix``), so a poll after a change of permissions renders again."""
        if name not in self._known:
            value = self._pending[name]
            self._known[name] = (value() if callable(value) else value) + scope_suffix(self.request)
        return self._known[name]

    def versions(self) -> dict[str, str]:
        """The versions the response needs: the asked fragment's, or (whole page) all."""
        names = [self.asked] if self.asked else list(self._pending)
        return {name: self.version(name) for name in names}

    def unchanged(self) -> HttpResponse | None:
        """204 for a poll whose ``?v=`` is the fragment's current version; 400 for an htmx
        request naming a fragment this page does not have; the shared rendering of the asked
        fragment's current version when a viewer who sees the same got it (``share_key``); None:
        render."""
        if self.unknown:
            resp = HttpResponse(
                _("Unknown fragment “%(f)s”.") % {"f": self.request.GET.get(FRAGMENT_PARAM)},
                status=400,
                content_type="text/plain; charset=utf-8",
            )
            patch_vary_headers(resp, ["HX-Request"])
            return resp
        if self.asked and self.request.GET.get(VERSION_PARAM) == self.version(self.asked):
            resp = HttpResponse(status=204)
            resp[NOW_HEADER] = self.now_ms
            patch_vary_headers(resp, ["HX-Request"])
            return resp
        if self.asked:
            self._share_key = self.share_key(self.asked)
            hit = memo.FRAGMENT_HTML.get(self._share_key)
            if hit is not None:
                resp = HttpResponse(hit[0], content_type=hit[1])
                resp[NOW_HEADER] = self.now_ms
                patch_vary_headers(resp, ["HX-Request"])
                return resp
        return None

    def share_key(self, name: str) -> tuple:
        """What a rendering of fragment ``name`` depends on: its version and the viewer
        (``memo.viewer_key`` without ``?v=``; the identity only with actions enabled, where the
        buttons offered follow the user's permissions)."""
        actions = settings.VOLCANO_UI_ENABLE_ACTIONS and settings.VOLCANO_UI_ACCESS_MODE != "none"
        return (
            name,
            self.version(name),
            *memo.viewer_key(self.request, identity=actions, drop=(VERSION_PARAM,)),
        )

    def respond(self, template: str, ctx: dict[str, Any], status: int = 200) -> HttpResponse:
        """``template`` whole, or the asked fragment of it, with ``ctx`` (plus ``versions``)."""
        ctx["versions"] = self.versions()
        if self.asked:
            source = "dashboard/base.html" if self.asked == NOTICES else template
            resp = render(self.request, f"{source}#{self.asked}", ctx, status=status)
            resp[NOW_HEADER] = self.now_ms
            body = resp.content
            # A form's CSRF token belongs to one browser: such a rendering is never shared.
            if status == 200 and self._share_key is not None and b"csrfmiddlewaretoken" not in body:
                memo.FRAGMENT_HTML.put(
                    self._share_key,
                    (body, resp["Content-Type"]),
                    len(body) + 300,
                    slot=self._share_key[:1] + self._share_key[2:],
                )
        else:
            resp = render(self.request, template, ctx, status=status)
        patch_vary_headers(resp, ["HX-Request"])
        return resp


def _notices_version(snap: Any, now: datetime, kinds: tuple[str, ...]) -> str:
    """What the bar shows of each kind: its state, the error and its category the notice quotes
    (a new error in the same state is news at once), its sync times and a request's wait."""
    states = tuple(
        (
            k,
            getattr(getattr(snap, k).state, "name", ""),
            getattr(getattr(snap, k).state, "last_error", ""),
            getattr(getattr(snap, k).state, "error_category", ""),
            str(getattr(getattr(snap, k).state, "synced_at", "")),
            str(getattr(getattr(snap, k).state, "live_until", "")),
            str(getattr(getattr(snap, k).state, "waiting_since", "")),
        )
        for k in kinds
    )
    return version_key(states, bucket(now))
