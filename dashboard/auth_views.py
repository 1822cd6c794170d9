"""Sign-in and sign-out for ``VOLCANO_UI_ACCESS_MODE=token``.

The form takes a Kubernetes bearer token (for example from ``kubectl create token NAME``), asks the
API server who it belongs to (TokenReview), and keeps only the resulting identity (username, uid,
groups) in the signed session cookie. The token itself is never stored: a signed cookie is
readable by whoever holds it, and the token is a credential valid outside the dashboard.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters

from dashboard.access import SESSION_KEY
from dashboard.health import ACCESS_REVIEWS
from dashboard.kube import reviews

log = logging.getLogger("volcano_ui.access")
_MAX_TOKEN_LENGTH = 16384


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
                    log.info("signed in", extra={"user": user.username})
                    return redirect(ctx["next"])
    elif request.method != "GET":
        return HttpResponseNotAllowed(["GET", "POST"])
    return render(request, "volcano_ui_prod/sign_in.html", ctx, status=status)


@never_cache
@csrf_protect
def sign_out(request: HttpRequest) -> HttpResponse:
    """POST only (CSRF-protected): forget the session and go to the sign-in form."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    identity = getattr(request, "identity", None)
    request.session.flush()
    if identity is not None:
        log.info("signed out", extra={"user": identity.username})
    if settings.VOLCANO_UI_ACCESS_MODE == "token":
        return redirect("sign_in")
    return redirect("/")
