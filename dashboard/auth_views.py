"""Sign-in and sign-out for ``VOLCANO_UI_ACCESS_MODE=token``.

The form takes a Kubernetes bearer token (for example from ``kubectl create token NAME``), asks the
API server who it belongs to (TokenReview), and keeps the resulting identity (username, uid,
groups) and the token in a server-side session: the cookie carries only a random session key, so
the token (a credential valid outside the dashboard) never leaves the server. Keeping the token
lets the dashboard review it again every VOLCANO_UI_TOKEN_RECHECK_SECONDS and end the session once
the API server refuses it (dashboard/access.py); signing out deletes the session, so a copied
cookie is worthless afterwards.

Sign-in attempts are limited per client address (VOLCANO_UI_SIGN_IN_PER_MINUTE) and in total
(VOLCANO_UI_SIGN_IN_GLOBAL_PER_MINUTE), per process: each attempt costs a TokenReview on the API
server, and guessing tokens must stay slow. Over the limit the answer is 429 with Retry-After.
"""

from __future__ import annotations

import ipaddress
import logging
import random
import threading
import time
from collections import OrderedDict, deque

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters

from dashboard.access import SESSION_KEY, TOKEN_SESSION_KEY, token_checks, token_key
from dashboard.health import ACCESS_REVIEWS
from dashboard.kube import reviews

log = logging.getLogger("volcano_ui.access")
_MAX_TOKEN_LENGTH = 16384
_WINDOW = 60.0  # seconds: the sign-in limits are per minute
_MAX_ADDRESSES = 10_000  # client addresses whose attempts are remembered


class _SignInLimiter:
    """Sliding one-minute windows of sign-in attempts: per client address and in total."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_address: OrderedDict[str, deque[float]] = OrderedDict()
        self._all: deque[float] = deque()

    def attempt(self, address: str) -> float:
        """Count an attempt from ``address``; 0 when allowed, else seconds until one would be."""
        now = time.monotonic()
        per_address = settings.VOLCANO_UI_SIGN_IN_PER_MINUTE
        overall = settings.VOLCANO_UI_SIGN_IN_GLOBAL_PER_MINUTE
        with self._lock:
            mine = self._by_address.pop(address, None) or deque()
            self._by_address[address] = mine  # most recent last, for eviction
            while len(self._by_address) > _MAX_ADDRESSES:
                self._by_address.popitem(last=False)
            for window in (mine, self._all):
                while window and window[0] <= now - _WINDOW:
                    window.popleft()
            waits = [
                w[0] + _WINDOW - now
                for w, cap in ((mine, per_address), (self._all, overall))
                if len(w) >= cap
            ]
            if waits:
                return max(1.0, max(waits))
            mine.append(now)
            self._all.append(now)
            return 0.0

    def clear(self) -> None:
        with self._lock:
            self._by_address.clear()
            self._all.clear()


sign_in_limiter = _SignInLimiter()


def client_address(request: HttpRequest) -> str:
    """The client's address: the peer, or the last X-Forwarded-For hop when the peer is a trusted
    proxy (VOLCANO_UI_TRUSTED_PROXIES, e.g. the Ingress controller); anyone else's header is ignored."""
    peer = request.META.get("REMOTE_ADDR", "")
    try:
        trusted = any(ipaddress.ip_address(peer) in net for net in settings.VOLCANO_UI_TRUSTED_PROXIES)
    except ValueError:
        return peer
    forwarded = request.headers.get("X-Forwarded-For", "")
    if trusted and forwarded:
        last = forwarded.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            return peer
    return peer


def _next_url(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or "/"
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return "/"
    return target


@never_cache
@csrf_protect
@sensitive_post_parameters("token")
def sign_in(request: HttpRequest) -> HttpResponse:
    """GET: the form. POST: check the token with a TokenReview; 200 with the form and an error
    message when it is refused (400 for an empty or oversized token, 503 when the API server
    cannot answer), else a redirect to ``next``."""
    if settings.VOLCANO_UI_ACCESS_MODE != "token":
        return redirect("/")
    ctx = {"next": _next_url(request), "error": ""}
    status = 200
    if request.method == "POST":
        token = request.POST.get("token", "").strip()
        wait = sign_in_limiter.attempt(client_address(request))
        if wait:
            log.warning("sign-in refused: too many attempts", extra={"client": client_address(request)})
            ctx["error"] = "Too many sign-in attempts. Try again in a minute."
            response = render(request, "volcano_ui_prod/sign_in.html", ctx, status=429)
            response["Retry-After"] = str(int(wait + 0.999))
            return response
        if not token or len(token) > _MAX_TOKEN_LENGTH:
            ctx["error"] = "Paste a Kubernetes bearer token."
            status = 400
        else:
            try:
                user = reviews.token_review(token)
            except reviews.ReviewError as exc:
                ACCESS_REVIEWS.labels("TokenReview", "error").inc()
                log.warning("sign-in failed: %s", exc)
                ctx["error"] = "The Kubernetes API server could not check the token. Try again later."
                status = 503
            else:
                if user is None:
                    ACCESS_REVIEWS.labels("TokenReview", "denied").inc()
                    log.info("sign-in refused: the token is not valid")
                    ctx["error"] = "This token was not accepted by the Kubernetes API server."
                    status = 401
                else:
                    ACCESS_REVIEWS.labels("TokenReview", "allowed").inc()
                    # A fresh session on sign-in: nothing carried over from before (fixation).
                    request.session.flush()
                    request.session[SESSION_KEY] = {
                        "username": user.username,
                        "uid": user.uid,
                        "groups": list(user.groups),
                    }
                    request.session[TOKEN_SESSION_KEY] = token
                    token_checks.record(token_key(token), True)
                    if random.random() < 0.02:  # now and then: expired sessions' files go
                        request.session.clear_expired()
                    log.info("signed in", extra={"user": user.username})
                    return redirect(ctx["next"])
    elif request.method != "GET":
        return HttpResponseNotAllowed(["GET", "POST"])
    return render(request, "volcano_ui_prod/sign_in.html", ctx, status=status)


@never_cache
@csrf_protect
def sign_out(request: HttpRequest) -> HttpResponse:
    """POST only (CSRF-protected): delete the session (server-side: its cookie stops working) and go
    to the sign-in form."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    identity = getattr(request, "identity", None)
    request.session.flush()
    if identity is not None:
        log.info("signed out", extra={"user": identity.username})
    if settings.VOLCANO_UI_ACCESS_MODE == "token":
        return redirect("sign_in")
    return redirect("/")
