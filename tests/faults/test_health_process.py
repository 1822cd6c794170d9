"""The health listener as a process of its own (dashboard/health_server.py ``start_process``).

A small worker stand-in (a Python process that calls ``start_process`` like gunicorn's post_fork
does) is driven over its stdin. The point of the process: a probe is answered while the worker's
interpreter lock is held for seconds, which the in-thread listener cannot do (checked as well,
so the test shows what it measures).
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from dashboard import health_server
from tests.faults.conftest import wait_for

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

WORKER = textwrap.dedent(
    """
    import os, sys
    from dashboard import health_server
    mode = sys.argv[1]
    # As gunicorn's post_fork does: fork the listener before Django's apps are loaded.
    early = health_server.start_process("127.0.0.1:0", stale_after=30) if mode == "process" else None
    import django
    django.setup()
    from prometheus_client import Counter
    from dashboard import health
    health._cache = lambda: None  # no cluster here: every kind "unavailable"
    listener = early.start_beacon() if early else health_server.start("127.0.0.1:0")
    after_fork = Counter("volcano_ui_test_after_fork", "counted in the worker after the fork")
    after_fork.inc(7)
    print(listener.port, getattr(listener, "pid", os.getpid()), flush=True)
    for line in sys.stdin:
        if line.strip() == "hold":
            print("holding", flush=True)
            sum(range(150_000_000))  # one C call: the interpreter lock is not released until it ends
            print("done", flush=True)
    listener.stop()
    """
)


class Worker:
    def __init__(self, mode: str) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "volcano_ui.settings",
            "VOLCANO_UI_LOG_LEVEL": "WARNING",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, mode],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        port, pid = self.proc.stdout.readline().split()
        self.port, self.listener_pid = int(port), int(pid)

    def line(self) -> tuple[str, float]:
        return self.proc.stdout.readline().strip(), time.monotonic()

    def send(self, text: str) -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _get(port: int, path: str, timeout: float = 10.0) -> tuple[int, bytes, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read(), time.monotonic()
    finally:
        conn.close()


def _probe_while_holding(worker: Worker) -> tuple[float, float, float]:
    """(hold started, probe answered, hold ended), monotonic seconds."""
    worker.send("hold")
    line, started = worker.line()
    assert line == "holding"
    status, _, answered = _get(worker.port, "/healthz", timeout=30)
    assert status == 200
    line, ended = worker.line()
    assert line == "done"
    return started, answered, ended


@pytest.fixture
def process_worker():
    worker = Worker("process")
    yield worker
    worker.close()


def test_a_probe_is_answered_while_the_worker_holds_the_interpreter_lock(process_worker):
    started, answered, ended = _probe_while_holding(process_worker)
    assert ended - started > 1.0, "the hold is too short on this machine to show anything"
    assert answered - started < 1.0 and answered < ended, (started, answered, ended)


def test_the_in_thread_listener_waits_for_the_lock():
    worker = Worker("thread")
    try:
        for _attempt in range(3):
            started, answered, ended = _probe_while_holding(worker)
            assert ended - started > 1.0
            # Printing "holding" gives up the lock; on a busy machine the listener's thread may take
            # it first and answer before the hold begins. Only then is the measurement repeated.
            if answered - started > 0.1:
                break
        assert answered >= ended - 0.05, (started, answered, ended)
    finally:
        worker.close()


def test_readyz_is_the_workers_and_metrics_are_relayed_from_it(process_worker):
    status, body, _ = _get(process_worker.port, "/readyz")
    assert status == 503 and b'"ready": false' in body and b'"jobs": "unavailable"' in body
    status, body, _ = _get(process_worker.port, "/metrics")
    # Counted in the worker after the fork: only a relay to the worker can know it.
    assert status == 200 and b"volcano_ui_test_after_fork_total 7.0" in body, body[:300]
    assert _get(process_worker.port, "/jobs/")[0] == 404


def test_the_process_ends_with_its_worker(process_worker):
    child = process_worker.listener_pid
    assert child != process_worker.proc.pid
    os.kill(process_worker.proc.pid, signal.SIGKILL)
    process_worker.proc.wait()

    def refused() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", process_worker.port), timeout=1):
                return False
        except OSError:
            return True

    wait_for(refused, timeout=10, what="the health port closed after its worker died", every=0.1)


def test_a_silent_worker_fails_the_liveness_answer():
    beacon = health_server.Beacon()
    answers = health_server._BeaconAnswers(beacon, stale_after=30)
    assert answers.healthz(False).startswith(b"HTTP/1.1 200 ")  # starting: within the allowance
    beacon.write(200, b'{"ready": true}', at=time.monotonic() - 5)
    assert answers.healthz(False).startswith(b"HTTP/1.1 200 ")
    assert answers.readyz(False).endswith(b'{"ready": true}')
    # Silent for longer than READY_STALE_S: out of the Service, not yet restarted.
    beacon.write(200, b'{"ready": true}', at=time.monotonic() - health_server.READY_STALE_S - 1)
    assert answers.healthz(False).startswith(b"HTTP/1.1 200 ")
    assert answers.readyz(False).startswith(b"HTTP/1.1 503 ")
    beacon.write(200, b'{"ready": true}', at=time.monotonic() - 31)
    silent = answers.healthz(False)
    assert silent.startswith(b"HTTP/1.1 503 ") and b"worker not responding for 31 s" in silent
    assert answers.readyz(False).startswith(b"HTTP/1.1 503 ")


def test_a_beacon_read_during_writes_is_never_torn():
    beacon = health_server.Beacon()
    bodies = [b"a" * 10, b"b" * 5000]
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            for body in bodies:
                beacon.write(200, body)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        seen = set()
        for _ in range(2000):
            last = beacon.read()
            if last is not None:
                seen.add(last[2])
        assert seen <= set(bodies), {len(b) for b in seen}
    finally:
        stop.set()
        writer.join()
