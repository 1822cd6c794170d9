"""Pages for an object that is not shown: its kind cannot be read (403/503), or it is not in the
cache (404, ``not_found`` is the site's handler404)."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _

from dashboard import access
from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.clock import reference_now
from dashboard.presenters.pending import unreadable_reason
from dashboard.views.fragments import GONE_HEADER, polled
from dashboard.views.notices import ALL_KINDS, kind_label, page_ctx
from dashboard.views.rows import snapshot

# Seconds before an "cannot be read" detail page reloads itself: (still loading, other reasons).
UNREADABLE_RETRY_SECONDS = (2, 15)


def unreadable(request: HttpRequest, snap: Snapshot, kind: str, *names: str) -> HttpResponse | None:
    """For a detail page whose object is not in the cache: when its kind cannot be read
    (``presenters.pending.unreadable_reason``), the page with that kind's notice instead of a 404 that
    would claim the object is absent; 403 when forbidden, else 503. Also 503 when the API server
    never answered whether the user may see the object's namespace (``names`` = namespace, name):
    "cannot decide" is not "does not exist". None when the kind is readable."""
    state_name = getattr(snap, kind).state.name
    why = unreadable_reason(getattr(snap, kind).state)
    if not why and len(names) == 2 and access.access_unknown(request, names[0]):
        why, state_name = _("your permissions in this namespace could not be checked"), "unreachable"
    if not why:
        return None
    now = reference_now(snap)
    ctx = page_ctx(snap, now, (kind,), kind)
    # The page has no live fragment to poll: it reloads itself, soon while the first list is on its
    # way (a page opened right after start-up), slowly while the kind stays unreadable (RBAC or a
    # CRD may be fixed meanwhile). A plain <meta> refresh: no script, allowed by the CSP.
    retry = UNREADABLE_RETRY_SECONDS[0] if state_name == "syncing" else UNREADABLE_RETRY_SECONDS[1]
    ctx.update({"kind_label": kind_label(kind), "why": why, "name": "/".join(names), "retry_seconds": retry})
    status = 403 if state_name == "forbidden" else 503
    resp = render(request, "dashboard/unreadable.html", ctx, status=status)
    if status == 503:
        resp["Retry-After"] = str(retry)
    patch_vary_headers(resp, ["HX-Request"])
    return resp


class ObjectNotFound(Http404):
    """A detail page's object is not in the cache (its kind is readable): ``kind_label`` is the
    translated kind ("Job"), for the notice a live page shows when its object goes away;
    ``confirmed``: the kind is synced, so the object is known to be gone (not merely unseen while
    the kind is stale), and a live page may stop polling for it."""

    def __init__(self, message: str, kind_label: str, confirmed: bool = True) -> None:
        super().__init__(message)
        self.kind_label = kind_label
        self.confirmed = confirmed


def or_404(obj: dict | None, kind: str, *names: str, confirmed: bool = True) -> dict:
    """``obj``, or ObjectNotFound naming the ``kind`` (translated, "Job") and ``names``."""
    if obj is None:
        message = _("%(kind)s %(name)s not found.") % {"kind": kind, "name": "/".join(names)}
        raise ObjectNotFound(message, kind, confirmed)
    return obj


def find_object(
    request: HttpRequest, kind: str, label: str, namespace: str | None, name: str
) -> tuple[Snapshot, dict] | HttpResponse:
    """(the request's snapshot, the object of a detail page) for ``kind`` ("jobs"; ``namespace``
    None for Queues), else the page saying the kind cannot be read (``unreadable``). Raises
    ObjectNotFound (a 404 naming ``label``, "Job") when the kind is readable and has no such
    object."""
    snap = snapshot(request)
    names = (name,) if namespace is None else (namespace, name)
    obj = getattr(snap, kind).get(namespace, name)
    if obj is None and (resp := unreadable(request, snap, kind, *names)):
        return resp
    return snap, or_404(obj, label, *names, confirmed=getattr(snap, kind).state.name == "synced")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: templates/404.html with the status bar of every page (the real "data as of" and
    the notices of kinds that are not live), so a 404 never says "No data yet" while the cache is
    synced. The message is the Http404's own (as Django's default handler shows it)."""
    message = exception.args[0] if exception.args and isinstance(exception.args[0], str) else ""
    if isinstance(exception, ObjectNotFound) and polled(request):
        # A poll of an open detail page whose object was deleted (or renamed): the page keeps its
        # last known state, so it must say so; htmx does not swap a 404, app.js shows this body.
        if exception.confirmed:
            gone_text = _(
                "This %(kind)s no longer exists (deleted or renamed); the page shows its last known state."
            ) % {"kind": exception.kind_label}
        else:
            gone_text = _(
                "This %(kind)s is not in the last data read from the cluster, which is not current; "
                "the page shows its last known state."
            ) % {"kind": exception.kind_label}
        resp = render(
            request, "dashboard/_gone.html", {"gone_text": gone_text, "message": message}, status=404
        )
        if exception.confirmed:
            resp[GONE_HEADER] = "1"
        patch_vary_headers(resp, ["HX-Request"])
        return resp
    ctx: dict[str, Any] = {"exception": message or exception.__class__.__name__, "request_path": request.path}
    try:
        snap = snapshot(request)
        ctx.update(page_ctx(snap, reference_now(snap), ALL_KINDS, ""))
    except Exception:  # noqa: BLE001 - the 404 page must render even when the cache cannot be read
        ctx["hide_asof"] = True
    return render(request, "404.html", ctx, status=404)
