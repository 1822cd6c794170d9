"""Fixtures for the production tests: the dashboard served over real HTTP (in this process, so it
reads the process-wide cluster cache the root conftest installs), with settings overridden for the
duration of the server, and the two-team users on the simulated cluster."""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Callable
from html import unescape
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
from django.core.wsgi import get_wsgi_application
from django.test.utils import override_settings

# Two namespace-scoped users on the demo scenario's namespaces (dashboard/sim/demo_scenario.py).
ALICE = ("alice", "token-alice-0123456789", "team-vision")
BOB = ("bob", "token-bob-0123456789", "team-nlp")
SECRET_KEY = "prod-tests-secret-key-" + "x" * 40


class _QuietHandler(WSGIRequestHandler):
    def setup(self):
        super().setup()
        # Headers and body leave in separate writes; without NODELAY each keep-alive response
        # waits ~40 ms for the client's delayed ACK (Nagle).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):  # the dashboard logs requests itself
        pass


class DashboardServer:
    """A running dashboard: ``.url``, ``.stop()``."""

    def __init__(self, overrides: dict):
        self._settings = override_settings(**overrides)
        self._settings.enable()
        from dashboard.access import review_cache, token_checks
        from dashboard.auth_views import sign_in_limiter

        review_cache.clear()
        token_checks.clear()
        sign_in_limiter.clear()
        self.httpd = ThreadedWSGIServer(("127.0.0.1", 0), _QuietHandler, allow_reuse_address=False)
        self.httpd.daemon_threads = True
        self.httpd.set_app(get_wsgi_application())
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self.thread.daemon = True
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
        self._settings.disable()


@pytest.fixture
def dashboard_server() -> Callable[..., DashboardServer]:
    """Factory: ``dashboard_server(**settings_overrides) -> DashboardServer`` (stopped at teardown)."""
    servers: list[DashboardServer] = []

    def start(**overrides) -> DashboardServer:
        server = DashboardServer(overrides)
        servers.append(server)
        return server

    yield start
    for server in reversed(servers):
        server.stop()


def proxy_settings(**extra) -> dict:
    return {
        "VOLCANO_UI_ACCESS_MODE": "proxy",
        "VOLCANO_UI_TRUSTED_PROXIES": [ipaddress.ip_network("127.0.0.1/32")],
        **extra,
    }


def token_settings(**extra) -> dict:
    return {"VOLCANO_UI_ACCESS_MODE": "token", "SECRET_KEY": SECRET_KEY, **extra}


def proxy_session(user: str, groups: str = "") -> requests.Session:
    session = requests.Session()
    session.headers["X-Forwarded-User"] = user
    if groups:
        session.headers["X-Forwarded-Groups"] = groups
    return session


def csrf_token(session: requests.Session, base: str, path: str) -> str:
    """GET ``path`` and return the form's csrfmiddlewaretoken (the cookie is kept by the session)."""
    page = session.get(base + path, allow_redirects=False)
    assert page.status_code == 200, (path, page.status_code)
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert match, f"no CSRF token in {path}"
    return match.group(1)


def token_session(base: str, token: str) -> requests.Session:
    """A session signed in with ``token`` through the sign-in form."""
    session = requests.Session()
    csrf = csrf_token(session, base, "/sign-in/")
    response = session.post(
        base + "/sign-in/",
        data={"token": token, "csrfmiddlewaretoken": csrf, "next": "/"},
        headers={"Referer": base + "/sign-in/"},
        allow_redirects=False,
    )
    assert response.status_code == 302, response.text[:500]
    session.sign_in_response = response
    return session


_LINK_RE = re.compile(r'(?:href|hx-get|action)="([^"]+)"')


def links(base: str, page_url: str, html: str) -> set[str]:
    """Same-origin page paths (with query) linked from ``html``: href, hx-get and form actions."""
    found = set()
    for raw in _LINK_RE.findall(html):
        url = urljoin(page_url, unescape(raw))
        parts = urlsplit(url)
        if not url.startswith(base) or parts.path.startswith("/static/"):
            continue
        found.add(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found
