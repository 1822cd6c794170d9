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
