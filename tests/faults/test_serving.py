"""The health listener and the guarded gthread worker under abuse: real gunicorn, loopback only.

gunicorn runs with deploy/gunicorn.conf.py against the simulated demo cluster (one worker, four
threads, so saturation is cheap to reach). /healthz on the health port must answer under 1 s while
slow-header clients and a crowd on /jobs/ occupy the page port; the page port itself answers a
saturated moment with a fast 503 and Retry-After, and cuts clients that trickle their headers.
Every client loop is bounded and stops by itself.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.faults.conftest import wait_for

# Starts real servers or many caches: part of `make test`, not of the fast `make check`.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HEADER_TIMEOUT = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port: int, path: str, timeout: float = 10.0) -> tuple[int, dict, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status, dict(response.getheaders()), time.monotonic() - started
    finally:
        conn.close()


class Gunicorn:
    def __init__(self, kubeconfig: Path, **overrides: str) -> None:
        self.port, self.health_port = _free_port(), _free_port()
        env = {
            **os.environ,
            "VOLCANO_UI_BIND": f"127.0.0.1:{self.port}",
            "VOLCANO_UI_HEALTH_BIND": f"127.0.0.1:{self.health_port}",
            "VOLCANO_UI_CLUSTER": "kubeconfig",
            "VOLCANO_UI_KUBECONFIG": str(kubeconfig),
            "VOLCANO_UI_DEBUG": "true",  # static files from the finders: no collectstatic needed
            "VOLCANO_UI_WORKERS": "1",
            "VOLCANO_UI_THREADS": "4",
            "VOLCANO_UI_MAX_QUEUED": "4",
            "VOLCANO_UI_HEADER_TIMEOUT": str(HEADER_TIMEOUT),
            "VOLCANO_UI_LOG_LEVEL": "WARNING",
            **overrides,
        }
        env.pop("DJANGO_SETTINGS_MODULE", None)
        self.proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "--config",
                str(REPO / "deploy" / "gunicorn.conf.py"),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ready(self) -> bool:
        try:
            return _get(self.health_port, "/readyz", timeout=2)[0] == 200
        except OSError:
            assert self.proc.poll() is None, self.proc.stderr.read()[-3000:]
            return False

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture(scope="module")
def served(demo_cluster, tmp_path_factory):
    kubeconfig = demo_cluster.write_kubeconfig(tmp_path_factory.mktemp("gunicorn") / "kubeconfig")
    server = Gunicorn(kubeconfig)
    try:
        wait_for(server.ready, timeout=60, what="gunicorn's /readyz on the health port", every=0.2)
        yield server
    finally:
        server.stop()


def _probe(server: Gunicorn, count: int = 5) -> list[float]:
    times = []
    for _ in range(count):
        status, _, took = _get(server.health_port, "/healthz", timeout=5)
        assert status == 200
        times.append(took)
        time.sleep(0.1)  # spaced like probes, not a load of their own
    return times


def test_health_listener_answers_probes_and_scrapes(served):
    status, headers, _ = _get(served.health_port, "/readyz")
    assert status == 200 and headers["Content-Type"] == "application/json"
    status, headers, _ = _get(served.health_port, "/metrics")
    assert status == 200 and "text/plain" in headers["Content-Type"]
    assert _get(served.health_port, "/jobs/")[0] == 404  # no page is served there


def test_slow_header_clients_neither_block_health_nor_keep_their_threads(served):
    stop = threading.Event()
    cut = []

    def trickle() -> None:
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
        try:
            sock.sendall(b"GET /jobs/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            started = time.monotonic()
            for i in range(5):  # one header line every 3 s, at most 15 s
                if stop.wait(3.0):
                    return
                try:
                    sock.sendall(b"X-Slow-%d: 1\r\n" % i)
                    if sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                        break
                except BlockingIOError:
                    continue
                except OSError:
                    break
            cut.append(time.monotonic() - started)
        finally:
            sock.close()

    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(12)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)  # the connections are open and have started their headers
        assert max(_probe(served)) < 1.0
        status, headers, took = _get(served.port, "/jobs/")
        # Every thread may be held by a trickler: then the answer is a fast 503, never a long wait.
        assert (status == 200) or (status == 503 and headers.get("Retry-After")), status
        assert took < 3.0, took
    finally:
        for t in threads:
            t.join(20)
        stop.set()
    # Each trickler was cut (refused at once, or at its header deadline once a thread read it; it
    # notices at its next line): none kept a connection for its whole 15 s.
    assert len(cut) == 12 and max(cut) < 10.0, cut
    wait_for(lambda: _get(served.port, "/jobs/")[0] == 200, timeout=10, what="the page port serving again")


def test_two_hundred_clients_get_pages_or_a_fast_503_and_health_stays_fast(served):
    deadline = time.monotonic() + 6.0
    outcomes: list[tuple[int, float, str]] = []
    lock = threading.Lock()

    def client(_: int) -> None:
        for _ in range(3):  # at most three requests each, and never past the deadline
            if time.monotonic() > deadline:
                return
            try:
                status, headers, took = _get(served.port, "/jobs/", timeout=15)
            except OSError:
                status, headers, took = 0, {}, 0.0
            with lock:
                outcomes.append((status, took, headers.get("Retry-After", "")))

    with ThreadPoolExecutor(200) as pool:
        load = [pool.submit(client, i) for i in range(200)]
        time.sleep(0.5)
        probes = _probe(served)
        for f in load:
            f.result()
    assert max(probes) < 1.0, probes
    codes = {status for status, _, _ in outcomes}
    assert codes <= {200, 503}, codes
    assert 200 in codes
    busy = [(took, retry) for status, took, retry in outcomes if status == 503]
    assert all(retry for _, retry in busy)
    assert not busy or max(took for took, _ in busy) < 2.0
    # Every request handed to a thread was counted out again (the background threads give way to
    # requests in flight: a count left above 0 would slow them for good).
    wait_for(
        lambda: _metric(served, "volcano_ui_requests_in_flight") == 0.0,
        timeout=10,
        what="no request in flight after the load",
    )
    assert _metric(served, "volcano_ui_background_give_way_seconds_total") is not None


def _metric(server: Gunicorn, name: str) -> float | None:
    """The value of the unlabelled metric ``name`` on the worker's /metrics (None: absent)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.health_port, timeout=10)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        assert response.status == 200
        text = response.read().decode()
    finally:
        conn.close()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_duplicated_identity_headers_are_named_for_refusal(settings):
    from dashboard.gunicorn_worker import _duplicated_identity_header

    settings.VOLCANO_UI_ACCESS_MODE = "proxy"
    once = [("HOST", "x"), ("X-FORWARDED-USER", "alice"), ("X-FORWARDED-GROUPS", "team")]
    assert _duplicated_identity_header(once) == ""
    injected = [*once, ("X-Forwarded-Groups", "system:masters")]
    assert _duplicated_identity_header(injected) == "X-Forwarded-Groups"
    assert _duplicated_identity_header([*once, ("X-FORWARDED-USER", "bob")]) == "X-FORWARDED-USER"
    settings.VOLCANO_UI_ACCESS_MODE = "none"
    assert _duplicated_identity_header([*once, ("X-FORWARDED-USER", "bob")]) == ""


@pytest.fixture(scope="module")
def two_threads(demo_cluster, tmp_path_factory):
    """A worker with two page threads and no queue: with both threads held, a request gets a 503."""
    kubeconfig = demo_cluster.write_kubeconfig(tmp_path_factory.mktemp("gunicorn2") / "kubeconfig")
    server = Gunicorn(
        kubeconfig, VOLCANO_UI_THREADS="2", VOLCANO_UI_MAX_QUEUED="0", VOLCANO_UI_HEADER_TIMEOUT="30"
    )
    try:
        wait_for(server.ready, timeout=60, what="gunicorn's /readyz on the health port", every=0.2)
        yield server
    finally:
        server.stop()


def test_headers_still_arriving_hold_no_page_thread(two_threads):
    # Twelve connections that have sent a request line and one header, and not the blank line
    # that ends the head: with a thread reading each, both threads would be held and the request
    # below refused with a 503; the worker's main loop buffers them instead.
    slow = [socket.create_connection(("127.0.0.1", two_threads.port), timeout=10) for _ in range(12)]
    try:
        for sock in slow:
            sock.sendall(b"GET /jobs/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(3):
            for i, sock in enumerate(slow):
                sock.sendall(b"X-Slow-%d: 1\r\n" % i)
            status, _, took = _get(two_threads.port, "/jobs/")
            assert status == 200, status
            assert took < 3.0, took
        # A head that completes is served like any other, on the same connection.
        slow[0].sendall(b"\r\n")
        slow[0].settimeout(10)
        assert slow[0].recv(64).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in slow:
            sock.close()
