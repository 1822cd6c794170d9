"""The health listener in-process (dashboard/health_server.py): answers, limits and slow clients.

Every client here is a loopback socket; a trickling client is cut by the listener's deadline, which
the test observes as end-of-stream, never by sleeping.
"""

from __future__ import annotations

import socket

import pytest

from dashboard import health_server


@pytest.fixture
def listener():
    server = health_server.start("127.0.0.1:0")
    yield server
    server.stop()


def _ask(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_healthz_404_405_and_head(listener):
    answer = _ask(listener.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"\r\n\r\nok\n")
    assert b"Cache-Control: no-store\r\n" in answer
    assert _ask(listener.port, b"GET /jobs/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 404 ")
    refused = _ask(listener.port, b"POST /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 405 ") and b"Allow: GET, HEAD\r\n" in refused
    head = _ask(listener.port, b"HEAD /healthz HTTP/1.1\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and head.endswith(b"\r\n\r\n")


def test_readyz_and_metrics_come_from_the_health_views(listener, monkeypatch):
    from dashboard import health

    monkeypatch.setattr(health, "_cache", lambda: None)  # no cluster here: every kind unavailable
    ready = _ask(listener.port, b"GET /readyz?verbose=1 HTTP/1.1\r\n\r\n")
    assert ready.startswith(b"HTTP/1.1 503 ") and b"Content-Type: application/json" in ready
    assert b'"ready": false' in ready
    metrics = _ask(listener.port, b"GET /metrics HTTP/1.1\r\n\r\n")
    assert metrics.split(b" ", 2)[1] in (b"200", b"403")


def test_a_trickling_client_is_cut_and_does_not_delay_a_probe(listener):
    slow = socket.create_connection(("127.0.0.1", listener.port), timeout=10)
    try:
        slow.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: 1\r\n")  # the head never ends
        assert _ask(listener.port, b"GET /healthz HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 200 ")
        assert slow.recv(1) == b""  # cut at its deadline, with no answer
    finally:
        slow.close()


def test_connections_over_the_cap_are_closed_at_once(listener, monkeypatch):
    monkeypatch.setattr(health_server, "_MAX_CONNECTIONS", 2)
    held = [socket.create_connection(("127.0.0.1", listener.port), timeout=10) for _ in range(2)]
    try:
        # The listener accepts in arrival order: both held connections take the slots first.
        extra = socket.create_connection(("127.0.0.1", listener.port), timeout=10)
        with extra:
            try:
                extra.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
                answer = extra.recv(64)
            except ConnectionResetError:
                answer = b""
            assert answer == b""  # closed without an answer while both slots are held
    finally:
        for sock in held:
            sock.close()


def test_oversized_or_malformed_heads_are_dropped(listener):
    assert _ask(listener.port, b"NONSENSE\r\n\r\n") == b""
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(health_server._MAX_HEADERS + 1))
    assert _ask(listener.port, b"GET /healthz HTTP/1.1\r\n" + many + b"\r\n") == b""
