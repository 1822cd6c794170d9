"""Request plumbing: health endpoints, request ids and logs, security headers, identity.

Order matters and is set in volcano_ui/settings.py ``MIDDLEWARE``; each class says why it sits
where it does.
"""

from __future__ import annotations

import ipaddress
import logging
import random
import re
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_cache_control, patch_vary_headers

from dashboard import health
from dashboard.logs import request_id_var

log = logging.getLogger("volcano_ui.request")

_HEALTH = {"/healthz": health.healthz, "/readyz": health.readyz, "/metrics": health.metrics}
# An incoming X-Request-ID is reused only when it looks like an id, so a client cannot write
# arbitrary text (newlines, JSON) into every log line of its request.
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class HealthEndpointsMiddleware:
    """Answer /healthz, /readyz and /metrics (GET/HEAD) before anything else runs.

    Kubelet probes and Prometheus reach the pod by IP over plain HTTP, so these paths skip
    ALLOWED_HOSTS, the https redirect and access control; they expose no Kubernetes object.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = _HEALTH.get(request.path_info)
        if view is not None and request.method in ("GET", "HEAD"):
            return view(request)
        return self.get_response(request)


def new_request_id() -> str:
    """32 random hex digits. Not a uuid4: that reads the system's random source, a system call in
    which the serving thread gives up the interpreter lock, to wait for it again under load. The
    id needs to be unique, not unpredictable; ``random`` is reseeded in every forked worker."""
    return f"{random.getrandbits(128):032x}"


class RequestContextMiddleware:
    """Give the request an id, log one line when it ends, observe its latency by URL name.

    The id comes from ``X-Request-ID`` when that looks like an id, else a new one
    (``new_request_id``); it is kept in a context variable so every log line written while serving
    the request carries it (dashboard/logs.py), and it is echoed back in the response's
    ``X-Request-ID``.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        request_id = incoming if _REQUEST_ID_RE.match(incoming) else new_request_id()
        request.request_id = request_id  # type: ignore[attr-defined]
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            elapsed = time.perf_counter() - started
            match = getattr(request, "resolver_match", None)
            # Label by URL name, never by path: paths carry object names (unbounded cardinality).
            view = (match.view_name if match is not None and match.view_name else "<unresolved>")[:100]
            health.REQUEST_LATENCY.labels(view, request.method).observe(elapsed)
            health.REQUESTS.labels(view, request.method, str(response.status_code)).inc()
            response["X-Request-ID"] = request_id
            identity = getattr(request, "identity", None)
            log.info(
                "%s %s %s %.1fms",
                request.method,
                request.get_full_path()[:500],
                response.status_code,
                elapsed * 1000,
                extra={
                    "http_method": request.method,
                    "path": request.path[:500],
                    "status": response.status_code,
                    "duration_ms": round(elapsed * 1000, 1),
                    "view": view,
                    "user": identity.username if identity is not None else None,
                },
            )
            return response
        finally:
            # django-htmx's request.htmx points back at the request: without this, every htmx
            # request (its environ, the server's objects) waits for the cyclic GC to be freed.
            request.__dict__.pop("htmx", None)
            request_id_var.reset(token)


def content_security_policy() -> str:
    """The Content-Security-Policy value: same-origin resources only, no inline script at all.

    ``frame-ancestors`` is 'none' unless VOLCANO_UI_FRAME_ANCESTORS names origins (kiosk embedding).
    """
    ancestors = " ".join(settings.VOLCANO_UI_FRAME_ANCESTORS) or "'none'"
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            f"frame-ancestors {ancestors}",
        ]
    )


class SecurityHeadersMiddleware:
    """Set Content-Security-Policy on every response (Django 5.2 has no built-in CSP).

    Sits after XFrameOptionsMiddleware in MIDDLEWARE, so it sees the response first: when framing
    is allowed for given origins it marks the response exempt from ``X-Frame-Options: DENY`` and
    lets CSP ``frame-ancestors`` (which browsers prefer) say who may frame it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", content_security_policy())
        if settings.VOLCANO_UI_FRAME_ANCESTORS:
            response.xframe_options_exempt = True
        return response


# Routes that show no cluster data and so need no identity: signing in and out, and the display
# preferences the sign-in page itself offers (language, theme), which only set a cookie.
_ANONYMOUS_ROUTES = ("sign_in", "sign_out", "set_language", "set_theme")


def _anonymous_allowed(request: HttpRequest) -> bool:
    path = request.path_info
    if path.startswith("/" + settings.STATIC_URL.lstrip("/")):
        return True  # WhiteNoise answers these earlier anyway
    allowed = set()
    for name in _ANONYMOUS_ROUTES:
        try:
            allowed.add(reverse(name))
        except NoReverseMatch:  # a route the pages do not (yet) have
            continue
    return path in allowed


# The time of the last known permission answers a response was computed with, when the API server
# could not renew them (dashboard/access.py); absent when they were fresh.
PERMISSIONS_AS_OF_HEADER = "X-Volcano-Permissions-As-Of"


class IdentityMiddleware:
    """Attach ``request.identity`` (dashboard.access.Identity or None) and refuse anonymous access.

    In ``proxy`` and ``token`` mode a request without an identity never reaches a view: a page
    request is redirected to the sign-in form (token mode) or answered 401 (proxy mode, or any htmx
    fragment request, which gets an ``HX-Redirect`` to the sign-in page in token mode). In ``none``
    mode identity is always None and every page is open and read-only.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from dashboard import access

        mode = settings.VOLCANO_UI_ACCESS_MODE
        identity = access.identity_from_request(request)
        request.identity = identity  # type: ignore[attr-defined]
        if mode == "none" or identity is not None or _anonymous_allowed(request):
            response = self.get_response(request)
            as_of = access.access_as_of(request)
            if as_of is not None:
                # Also on fragments, which do not carry the page header's notice.
                response[PERMISSIONS_AS_OF_HEADER] = as_of.isoformat()
            if identity is not None:
                # A page for one user: no shared cache may keep it or hand it to another user.
                patch_cache_control(response, private=True, no_store=True)
                identity_header = "Cookie" if mode == "token" else settings.VOLCANO_UI_PROXY_USER_HEADER
                patch_vary_headers(response, [identity_header])
            return response
        if mode == "token":
            sign_in = f"{reverse('sign_in')}?next={_safe_next(request)}"
            if request.headers.get("HX-Request") == "true":
                response = HttpResponse("Sign in first.\n", status=401, content_type="text/plain")
                response["HX-Redirect"] = sign_in
                return response
            return redirect(sign_in)
        response = HttpResponse(
            "401 Unauthorized: no identity from a trusted authenticating proxy.\n",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        return response


def untrusted_forwarded_proto_middleware(get_response: Callable[[HttpRequest], HttpResponse]):
    """Drop the "is this https?" header (VOLCANO_UI_PROXY_SSL_HEADER) from peers that are not in
    VOLCANO_UI_TRUSTED_PROXIES, when that list is set: only the proxy may say how the browser
    connected (it decides the https redirect and secure cookies). Listed before SecurityMiddleware.
    With no trusted proxies listed, the header is believed from every peer (the Ingress setup)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
        trusted = settings.VOLCANO_UI_TRUSTED_PROXIES
        if header and trusted and header[0] in request.META:
            try:
                peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
                believed = any(peer in net for net in trusted)
            except ValueError:
                believed = False
            if not believed:
                del request.META[header[0]]
        return get_response(request)

    return middleware


def _safe_next(request: HttpRequest) -> str:
    from urllib.parse import quote

    return quote(request.get_full_path(), safe="/")
