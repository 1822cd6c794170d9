"""Backoff, Retry-After and API version discovery (the latter against a small real HTTP server
that serves only another version of the Volcano groups — the simulated cluster serves exactly
the expected ones)."""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes import client as k8s_client

from dashboard.kube.client import KubeClient, _retry_after
from dashboard.kube.discovery import Discovery
from dashboard.kube.informer import Backoff, InformerOptions
from dashboard.kube.kinds import JOBS, PODGROUPS, PODS, QUEUES


def test_backoff_grows_exponentially_with_jitter_and_cap():
    opts = InformerOptions(backoff_initial=0.5, backoff_max=8.0, backoff_factor=2.0, jitter=0.2)
    b = Backoff(opts, random.Random(1))
    delays = [b.next_delay() for _ in range(8)]
    bases = [0.5, 1, 2, 4, 8, 8, 8, 8]
    for d, base in zip(delays, bases, strict=True):
        assert base * 0.8 <= d <= base * 1.2
    assert len({round(d, 6) for d in delays[4:]}) > 1  # jitter: not lockstep
    b.reset()
    assert b.next_delay() <= 0.6


def test_retry_after_is_a_floor():
    b = Backoff(InformerOptions(backoff_initial=0.1), random.Random(0))
    assert b.next_delay(retry_after=5.0) == 5.0


def test_retry_after_header_forms():
    assert _retry_after({"Retry-After": "3"}) == 3.0
    assert _retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert _retry_after({"Retry-After": "soon"}) is None
    assert _retry_after({}) is None


class _Handler(BaseHTTPRequestHandler):
    routes: dict[str, dict] = {}

    def do_GET(self):  # noqa: N802
        body = self.routes.get(self.path.split("?")[0])
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        data = json.dumps(body if body is not None else {"kind": "Status", "code": 404}).encode()
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def tiny_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    cfg = k8s_client.Configuration()
    cfg.host = f"http://127.0.0.1:{server.server_address[1]}"
    yield KubeClient(cfg)
    server.shutdown()


def test_discovery_uses_another_served_version_and_reports_absent_crds(tiny_server):
    _Handler.routes = {
        "/apis/batch.volcano.sh": {
            "kind": "APIGroup",
            "versions": [{"groupVersion": "batch.volcano.sh/v1beta1", "version": "v1beta1"}],
            "preferredVersion": {"groupVersion": "batch.volcano.sh/v1beta1", "version": "v1beta1"},
        },
        "/apis/batch.volcano.sh/v1beta1": {"kind": "APIResourceList", "resources": [{"name": "jobs"}]},
        "/apis/scheduling.volcano.sh": {
            "kind": "APIGroup",
            "versions": [{"groupVersion": "scheduling.volcano.sh/v1beta1", "version": "v1beta1"}],
        },
        "/apis/scheduling.volcano.sh/v1beta1": {"kind": "APIResourceList", "resources": [{"name": "queues"}]},
    }
    d = Discovery(tiny_server)
    jobs = d.resolve(JOBS)
    assert jobs.version == "v1beta1" and jobs.fallback and "not the expected v1alpha1" in jobs.detail
    assert d.resolve(QUEUES).version == "v1beta1" and not d.resolve(QUEUES).fallback
    pgs = d.resolve(PODGROUPS)
    assert pgs.version is None and "not installed" in pgs.detail
    assert d.resolve(PODS).version == "v1"
    _Handler.routes = {}
    assert d.resolve(JOBS).version == "v1beta1"  # cached until invalidated
    d.invalidate("batch.volcano.sh")
    assert d.resolve(JOBS).version is None


class _Scripted(BaseHTTPRequestHandler):
    """A minimal API server whose list/watch behaviour a test scripts (see the tests below)."""

    protocol_version = "HTTP/1.1"
    log: list = []
    cond = threading.Condition()
    list_status = 200
    retry_after = None
    hang = threading.Event()

    def _json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        import time

        path = self.path.split("?")[0]
        watch = "watch=true" in self.path
        with self.cond:
            self.log.append((time.monotonic(), path, watch))
            self.cond.notify_all()
        if path != "/api/v1/pods":
            self._json(404, {"kind": "Status", "code": 404})
            return
        if not watch:
            if self.list_status != 200:
                headers = [("Retry-After", self.retry_after)] if self.retry_after else []
                self._json(
                    self.list_status,
                    {"kind": "Status", "code": self.list_status, "message": "slow down"},
                    headers,
                )
                return
            self._json(200, {"kind": "PodList", "metadata": {"resourceVersion": "5"}, "items": []})
            return
        # A watch that sends its headers and then stays silent (no events, no bookmarks).
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self.hang.wait(10)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    _Scripted.log = []
    _Scripted.list_status = 200
    _Scripted.retry_after = None
    _Scripted.hang = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cfg = k8s_client.Configuration()
    cfg.host = f"http://127.0.0.1:{server.server_address[1]}"
    yield cfg
    _Scripted.hang.set()
    server.shutdown()


def _pod_informer(cfg, **opts):
    from dashboard.kube.informer import Informer
    from dashboard.kube.store import KindStore

    client = KubeClient(cfg)
    options = InformerOptions(
        backoff_initial=0.05, backoff_max=0.2, connect_timeout=1, request_timeout=2, **opts
    )
    return Informer(PODS, client, KindStore(PODS), Discovery(client), options)


def _wait_log(predicate, timeout=10.0):
    with _Scripted.cond:
        assert _Scripted.cond.wait_for(lambda: predicate(_Scripted.log), timeout), _Scripted.log


def test_silent_watch_is_reconnected_after_the_inactivity_timeout(scripted):
    informer = _pod_informer(scripted, inactivity_timeout=0.5)
    informer.start()
    try:
        _wait_log(lambda log: sum(1 for _, _, w in log if w) >= 3)
        watches = [t for t, _, w in _Scripted.log if w]
        assert watches[1] - watches[0] >= 0.5  # waited for the inactivity timeout, no hot loop
        assert sum(1 for _, _, w in _Scripted.log if not w) == 1  # resumed from the version: no re-list
    finally:
        informer.stop()


def test_retry_after_is_honoured(scripted):
    _Scripted.list_status = 429
    _Scripted.retry_after = "1"
    informer = _pod_informer(scripted)
    informer.start()
    try:
        _wait_log(lambda log: sum(1 for _, _, w in log if not w) >= 2)
        lists = [t for t, _, w in _Scripted.log if not w]
        assert lists[1] - lists[0] >= 0.95  # backoff alone would have retried after ~0.05 s
        assert informer.state == "unreachable" and "429" in informer.last_error
    finally:
        informer.stop()


def _fallback_routes(job_spec):
    return {
        "/apis/batch.volcano.sh": {
            "kind": "APIGroup",
            "versions": [{"groupVersion": "batch.volcano.sh/v1beta1", "version": "v1beta1"}],
        },
        "/apis/batch.volcano.sh/v1beta1": {"kind": "APIResourceList", "resources": [{"name": "jobs"}]},
        "/apis/batch.volcano.sh/v1beta1/jobs": {
            "kind": "JobList",
            "metadata": {"resourceVersion": "3"},
            "items": [
                {"metadata": {"name": "j", "namespace": "default", "resourceVersion": "3"}, "spec": job_spec}
            ],
        },
    }


@pytest.mark.parametrize("good", [True, False])
def test_a_served_other_version_is_used_when_its_shape_reads(tiny_server, good):
    from dashboard.kube.informer import Informer
    from dashboard.kube.store import KindStore

    _Handler.routes = _fallback_routes({"tasks": [{"name": "w"}]} if good else {"tasks": "not-a-list"})
    store = KindStore(JOBS)
    states = []
    informer = Informer(
        JOBS,
        tiny_server,
        store,
        Discovery(tiny_server),
        InformerOptions(backoff_initial=0.05, backoff_max=0.2, not_installed_recheck=0.2),
        state_sink=lambda i: states.append((i.state, i.last_error, i.detail)),
    )
    informer.start()
    try:
        cond = threading.Event()
        for _ in range(100):
            if (good and len(store)) or (not good and any(s[0] == "not_installed" for s in states)):
                cond.set()
                break
            cond.wait(0.05)
        assert cond.is_set(), states
        if good:
            assert store.data().objects[("default", "j")]["spec"]["tasks"] == [{"name": "w"}]
            assert "not the expected v1alpha1" in informer.detail
        else:
            state = next(s for s in states if s[0] == "not_installed")
            assert "do not have that shape" in state[1]
            assert len(store) == 0
    finally:
        informer.stop()
