"""Preferences kept in cookies: the colour theme (the language is Django's set_language)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme

# GET only (not HEAD): it sets a cookie.
from django.views.decorators.http import require_GET

THEME_COOKIE = "vui_theme"
# Seconds the choice is kept: a year, as the language cookie (settings.LANGUAGE_COOKIE_AGE).
THEME_COOKIE_AGE = 365 * 86400


@require_GET
def set_theme(request: HttpRequest) -> HttpResponse:
    """Store the theme choice ("light", "dark" or "" for the system's) in a cookie and go back.
    static/js/app.js does the same without a round trip; this keeps the toggle working without JS."""
    theme = request.GET.get("theme", "")
    nxt = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        nxt = "/"
    resp = HttpResponseRedirect(nxt)
    if theme in ("light", "dark"):
        resp.set_cookie(THEME_COOKIE, theme, max_age=THEME_COOKIE_AGE, samesite="Lax")
    else:
        resp.delete_cookie(THEME_COOKIE)
    return resp
