"""Token-mode sessions are server-side: signing out revokes a copied cookie, a revoked token ends its
session at the next re-check, and sign-in attempts are rate-limited (real HTTP, simulated cluster)."""

from __future__ import annotations

import re

import requests
from django.urls import reverse

from dashboard.access import token_checks
from tests.prod.conftest import ALICE, csrf_token, token_session, token_settings


def _sign_out(session: requests.Session, base: str) -> None:
    page = session.get(base + reverse("jobs"))
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert csrf, "the page offers a sign-out form"
    response = session.post(
        base + "/sign-out/", data={"csrfmiddlewaretoken": csrf.group(1)}, allow_redirects=False
    )
    assert response.status_code == 302


def test_a_cookie_replayed_after_sign_out_is_refused(teams, installed_cache, dashboard_server):
    server = dashboard_server(**token_settings())
    session = token_session(server.url, ALICE[1])
    copied = session.cookies.get("volcano_ui_session")
    assert session.get(server.url + reverse("jobs"), allow_redirects=False).status_code == 200
    _sign_out(session, server.url)
    replay = requests.Session()
    replay.cookies.set("volcano_ui_session", copied)
    response = replay.get(server.url + reverse("jobs"), allow_redirects=False)
    assert response.status_code == 302 and "/sign-in/" in response.headers["Location"]


def test_a_revoked_token_ends_its_session_at_the_next_recheck(teams, installed_cache, dashboard_server):
    teams.add_user("carol", "token-carol-0123456789", [ALICE[2]])
    try:
        server = dashboard_server(**token_settings())
        session = token_session(server.url, "token-carol-0123456789")
        assert session.get(server.url + reverse("jobs"), allow_redirects=False).status_code == 200
        teams.add_user("carol", "token-carol-rotated-0123456789", [ALICE[2]])  # the old token is gone
        # Within the interval the verdict of the sign-in stands (one TokenReview per interval).
        assert session.get(server.url + reverse("jobs"), allow_redirects=False).status_code == 200
        token_checks.expire()  # VOLCANO_UI_TOKEN_RECHECK_SECONDS have passed
        response = session.get(server.url + reverse("jobs"), allow_redirects=False)
        assert response.status_code == 302 and "/sign-in/" in response.headers["Location"]
        fragment = session.get(
            server.url + reverse("jobs") + "?f=results", headers={"HX-Request": "true"}, allow_redirects=False
        )
        assert fragment.status_code == 401
    finally:
        teams.add_user("carol", "token-carol-0123456789", [ALICE[2]])


def test_sign_in_is_rate_limited_per_address_and_overall(teams, installed_cache, dashboard_server):
    server = dashboard_server(
        **token_settings(VOLCANO_UI_SIGN_IN_PER_MINUTE=3, VOLCANO_UI_SIGN_IN_GLOBAL_PER_MINUTE=5)
    )
    session = requests.Session()
    csrf = csrf_token(session, server.url, "/sign-in/")

    def attempt(forwarded: str = "") -> requests.Response:
        headers = {"Referer": server.url + "/sign-in/"} | (
            {"X-Forwarded-For": forwarded} if forwarded else {}
        )
        return session.post(
            server.url + "/sign-in/",
            data={"token": "not-a-token", "csrfmiddlewaretoken": csrf},
            headers=headers,
            allow_redirects=False,
        )

    assert [attempt().status_code for _ in range(3)] == [401, 401, 401]
    refused = attempt()
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    # An untrusted peer's X-Forwarded-For does not make a new client.
    assert attempt("203.0.113.9").status_code == 429


def test_sign_in_limit_counts_forwarded_clients_behind_a_trusted_proxy(
    teams, installed_cache, dashboard_server
):
    import ipaddress

    server = dashboard_server(
        **token_settings(
            VOLCANO_UI_SIGN_IN_PER_MINUTE=2,
            VOLCANO_UI_SIGN_IN_GLOBAL_PER_MINUTE=5,
            VOLCANO_UI_TRUSTED_PROXIES=[ipaddress.ip_network("127.0.0.1/32")],
        )
    )
    session = requests.Session()
    csrf = csrf_token(session, server.url, "/sign-in/")

    def attempt(client: str) -> int:
        return session.post(
            server.url + "/sign-in/",
            data={"token": "not-a-token", "csrfmiddlewaretoken": csrf},
            headers={"Referer": server.url + "/sign-in/", "X-Forwarded-For": client},
            allow_redirects=False,
        ).status_code

    assert [attempt("198.51.100.1") for _ in range(3)] == [401, 401, 429]
    assert [attempt("198.51.100.2") for _ in range(2)] == [401, 401]
    # Refused attempts are not counted: four so far, the fifth fills the global limit for everyone.
    assert attempt("198.51.100.3") == 401
    assert attempt("198.51.100.4") == 429


def test_per_user_pages_are_private_and_vary_on_the_identity(teams, installed_cache, dashboard_server):
    server = dashboard_server(**token_settings())
    session = token_session(server.url, ALICE[1])
    page = session.get(server.url + reverse("jobs"), allow_redirects=False)
    assert page.status_code == 200
    assert {"private", "no-store"} <= {p.strip() for p in page.headers["Cache-Control"].split(",")}
    assert "Cookie" in page.headers["Vary"]


def test_a_joined_user_header_is_no_identity(teams, installed_cache, dashboard_server):
    from tests.prod.conftest import proxy_session, proxy_settings

    server = dashboard_server(**proxy_settings())
    assert proxy_session("alice").get(server.url + reverse("jobs")).status_code == 200
    joined = proxy_session("alice,admin")
    assert joined.get(server.url + reverse("jobs"), allow_redirects=False).status_code == 401
