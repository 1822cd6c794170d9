"""Security headers, request ids and JSON logs, health endpoints, and refusal of anonymous
requests in the authenticated access modes (Django test client; no cluster needed here)."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest
from django.test import Client

from dashboard.logs import JsonFormatter, RequestIdFilter


def test_csp_allows_no_inline_script_and_no_framing(client):
    response = client.get("/healthz")  # answered before the security middleware: no CSP needed
    response = client.get("/")
    csp = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert directives["frame-ancestors"] == "'none'"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_kiosk_framing_can_be_allowed_for_named_origins(client, settings):
    settings.VOLCANO_UI_FRAME_ANCESTORS = ["https://wall.example.com"]
    response = client.get("/")
    assert "frame-ancestors https://wall.example.com" in response["Content-Security-Policy"]
    assert "X-Frame-Options" not in response


def test_tls_sends_hsts_and_redirects_http_but_not_the_probes(settings):
    settings.VOLCANO_UI_TLS = True
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client = Client()
    assert client.get("/").status_code == 301
    secure = client.get("/", headers={"X-Forwarded-Proto": "https"})
    assert secure["Strict-Transport-Security"].startswith("max-age=31536000")
    # kubelet probes: plain http, the pod IP as Host (not in ALLOWED_HOSTS).
    for path in ("/healthz", "/metrics"):
        assert client.get(path, HTTP_HOST="10.1.2.3:8000").status_code == 200


def test_healthz_is_plain_ok(client):
    response = client.get("/healthz", HTTP_HOST="10.1.2.3:8000")
    assert response.status_code == 200
    assert response.content == b"ok\n"


def test_request_id_is_echoed_when_sane_and_generated_otherwise(client):
    assert client.get("/", headers={"X-Request-ID": "abc-123"})["X-Request-ID"] == "abc-123"
    generated = client.get("/", headers={"X-Request-ID": "bad id\nwith newline"})["X-Request-ID"]
    assert generated != "bad id\nwith newline" and len(generated) == 32
    assert client.get("/")["X-Request-ID"] != client.get("/")["X-Request-ID"]


def test_every_log_line_of_a_request_carries_its_id_as_json(client):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("volcano_ui.request")
    logger.addHandler(handler)
    try:
        client.get("/", headers={"X-Request-ID": "req-42"})
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines, "the request was logged"
    assert all(line["request_id"] == "req-42" for line in lines)
    assert lines[-1]["status"] == 200 and lines[-1]["path"] == "/" and lines[-1]["level"] == "INFO"


def test_json_formatter_outside_a_request_and_with_an_exception():
    formatter = JsonFormatter()
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed %s", ("here",), sys.exc_info())
    RequestIdFilter().filter(record)
    entry = json.loads(formatter.format(record))
    assert entry["message"] == "failed here" and entry["request_id"] == "-"
    assert "ValueError: boom" in entry["exc_info"]


def test_metrics_are_prometheus_text_with_the_request_histogram(client):
    client.get("/")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert "volcano_ui_request_duration_seconds_bucket{" in body
    assert re.search(r'^volcano_ui_request_duration_seconds_bucket\{[^}]*view="overview"', body, re.M)


@pytest.fixture
def proxy_mode(settings):
    import ipaddress

    settings.VOLCANO_UI_ACCESS_MODE = "proxy"
    settings.VOLCANO_UI_TRUSTED_PROXIES = [ipaddress.ip_network("10.9.0.0/16")]


def test_proxy_mode_ignores_identity_headers_from_an_untrusted_peer(client, proxy_mode):
    response = client.get("/", headers={"X-Forwarded-User": "admin"}, REMOTE_ADDR="192.0.2.7")
    assert response.status_code == 401


def test_proxy_mode_refuses_a_trusted_peer_that_sends_no_user(client, proxy_mode):
    assert client.get("/", REMOTE_ADDR="10.9.1.1").status_code == 401


def test_token_mode_sends_anonymous_pages_to_sign_in_and_fragments_get_401(client, settings):
    settings.VOLCANO_UI_ACCESS_MODE = "token"
    response = client.get("/?x=1")
    assert response.status_code == 302
    assert response["Location"] == "/sign-in/?next=/%3Fx%3D1"
    fragment = client.get("/", headers={"HX-Request": "true"})
    assert fragment.status_code == 401
    assert fragment["HX-Redirect"].startswith("/sign-in/")
    form = client.get("/sign-in/")
    assert form.status_code == 200 and b'name="token"' in form.content
    assert client.get("/sign-out/").status_code == 405


def test_sign_in_post_needs_the_csrf_token(settings):
    settings.VOLCANO_UI_ACCESS_MODE = "token"
    client = Client(enforce_csrf_checks=True)
    assert client.post("/sign-in/", {"token": "x"}).status_code == 403
    assert client.post("/sign-out/").status_code == 403


def test_sign_in_refuses_an_empty_token(client, settings):
    settings.VOLCANO_UI_ACCESS_MODE = "token"
    assert client.post("/sign-in/", {"token": "  "}).status_code == 400


def test_token_mode_lets_anonymous_users_choose_language_and_theme_only(client, settings):
    settings.VOLCANO_UI_ACCESS_MODE = "token"
    assert client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/sign-in/"}).status_code == 302
    assert client.get("/prefs/theme/?theme=dark&next=/sign-in/")["Location"] == "/sign-in/"
    for path in ("/jobs/", "/queues/", "/podgroups/", "/kiosk/"):
        assert client.get(path)["Location"].startswith("/sign-in/"), path


def test_metrics_are_for_scrapers_not_users_behind_the_proxy(client, proxy_mode, settings):
    import ipaddress

    # A user's request arrives from the trusted proxy; Prometheus connects to the pod directly.
    assert client.get("/metrics", REMOTE_ADDR="10.9.1.1").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.50").status_code == 200
    settings.VOLCANO_UI_METRICS_ALLOWED_CIDRS = [ipaddress.ip_network("192.0.2.0/28")]
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.50").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.5").status_code == 200


def test_metrics_in_token_mode_need_an_allowed_peer_or_the_bearer_token(client, settings):
    import ipaddress

    settings.VOLCANO_UI_ACCESS_MODE = "token"
    # Any signed-in (or not) user reaches the pod's port: no peer is a scraper by default.
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.50").status_code == 403
    settings.VOLCANO_UI_METRICS_TOKEN = "scrape-token-0123456789"
    wrong = client.get("/metrics", REMOTE_ADDR="192.0.2.50", HTTP_AUTHORIZATION="Bearer wrong")
    assert wrong.status_code == 403
    ok = client.get("/metrics", REMOTE_ADDR="192.0.2.50", HTTP_AUTHORIZATION="Bearer scrape-token-0123456789")
    assert ok.status_code == 200
    settings.VOLCANO_UI_METRICS_ALLOWED_CIDRS = [ipaddress.ip_network("192.0.2.0/28")]
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.5").status_code == 200


def test_forwarded_proto_is_believed_only_from_a_trusted_proxy(client, settings):
    import ipaddress

    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.VOLCANO_UI_TRUSTED_PROXIES = [ipaddress.ip_network("10.9.0.0/16")]
    claimed = {"HTTP_X_FORWARDED_PROTO": "https"}
    # From the proxy: https, no redirect. From anyone else: the claim is dropped, redirected.
    assert client.get("/jobs/", REMOTE_ADDR="10.9.1.1", **claimed).status_code == 200
    response = client.get("/jobs/", REMOTE_ADDR="192.0.2.7", **claimed)
    assert response.status_code == 301 and response["Location"].startswith("https://")
