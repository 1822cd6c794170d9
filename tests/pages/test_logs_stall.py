"""A Job's merged log while the API server does not answer: how many pods were read, why the
others were not, and a "busy" answer that names the stalled API server as its cause."""

from __future__ import annotations

import re
import threading
from html import unescape

import pytest
from django.test import Client, override_settings

from dashboard.sim.clock import rfc3339
from dashboard.sim.kinds import resolve
from tests.faults.conftest import wait_for
from tests.pages.conftest import own_cluster
from tests.pages.helpers import seen_job
from tests.pages.test_logs import make_pod

POD = resolve("pods")
NS = "default"
JOB_LABEL = "volcano.sh/job-name"


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    with own_cluster(tmp_path_factory, seed=13, name="logs-stall") as (cluster, cache):
        seen_job(cluster, cache, "default", NS, "stalled", members=2)
        for i in range(2):
            make_pod(cluster, cache, f"stalled-{i}", labels={JOB_LABEL: "stalled"})
        cluster.advance(20)
        yield cluster, cache


class Stall:
    """The API server answering nothing (``start()``) until ``end()``, which also waits for the
    cache to catch up with it again."""

    def __init__(self, cluster, cache) -> None:
        self.cluster, self.cache = cluster, cache

    def start(self) -> None:
        self.cluster.server.set_faults({"unavailable_seconds": 60})

    def end(self) -> None:
        self.cluster.server.set_faults({"reset": True})
        self.cache.wait_for(lambda snap: snap.pods.state.name == "synced", 20)


@pytest.fixture
def stall(own):
    switch = Stall(*own)
    yield switch
    switch.end()


def _problems(page: str) -> list[str]:
    return [unescape(p) for p in re.findall(r"data-log-problem><p>(.*?)</p>", page, re.S)]


def _waiting_pod(cluster, cache, name: str, job: str) -> None:
    """A pod placed on a node whose container waits to start: the API server refuses its log."""
    spec = {
        "nodeName": "node-1",
        "schedulerName": "volcano",
        "containers": [{"name": "main", "image": "busybox:1.36"}],
    }
    meta = {"name": name, "namespace": NS, "labels": {JOB_LABEL: job}}
    cluster.store.create(POD, {"metadata": meta, "spec": spec})

    def status(obj):
        obj["status"] = {
            "phase": "Pending",
            "startTime": rfc3339(cluster.clock.now()),
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "restartCount": 0,
                    "state": {"waiting": {"reason": "ContainerCreating"}},
                }
            ],
        }

    cluster.store.mutate(POD, NS, name, status)
    cache.wait_for(lambda snap: (snap.pods.get(NS, name) or {}).get("status"), 10)


def test_a_stalled_api_server_reads_no_pod_and_says_so_once(client, stall):
    stall.start()
    with override_settings(VOLCANO_UI_LOGS_TIMEOUT_SECONDS=1):
        resp = client.get(f"/jobs/{NS}/stalled/logs/")
    page = unescape(resp.content.decode())
    assert "Merged by time from" not in page
    assert "No log could be read from any of the 2 pods of this Job, so no line is shown." in page
    assert _problems(resp.content.decode()) == [
        "stalled-0/main, stalled-1/main: The API server did not answer within 1 second."
    ]
    assert 'id="log-lines"' not in page and "No log lines." not in page


def test_the_count_is_of_the_pods_read_and_the_others_are_named(client, own):
    cluster, cache = own
    seen_job(cluster, cache, "default", NS, "mixed", members=2)
    make_pod(cluster, cache, "mixed-0", labels={JOB_LABEL: "mixed"})
    _waiting_pod(cluster, cache, "mixed-1", "mixed")
    cluster.advance(20)
    resp = client.get(f"/jobs/{NS}/mixed/logs/")
    page = unescape(resp.content.decode())
    assert resp.status_code == 200
    assert "Merged by time from 1 of 2 pods (2 placed on a node)" in page
    assert _problems(resp.content.decode()) == [
        'mixed-1/main: container "main" in pod "mixed-1" is waiting to start: ContainerCreating'
    ]
    assert "data-log-none-read" not in page and "[mixed-0/main]" in page


def test_busy_while_the_reads_wait_on_a_stalled_api_server_names_it(client, stall, monkeypatch):
    from dashboard.views import logs

    monkeypatch.setattr(logs, "STALLED_READ_SECONDS", 1.0)

    def read() -> None:
        Client().get(f"/pods/{NS}/stalled-0/logs/")

    readers = [threading.Thread(target=read) for _ in range(2)]
    with override_settings(VOLCANO_UI_LOGS_MAX_STREAMS=2):
        stall.start()
        try:
            for reader in readers:
                reader.start()
            wait_for(
                lambda: len([s for s in logs.slots().waiting_seconds() if s >= 1.0]) == 2,
                timeout=8,
                what="both log slots held by reads waiting on the API server",
            )
            page = client.get(f"/jobs/{NS}/stalled/logs/")
            download = client.get(f"/jobs/{NS}/stalled/logs/?download=1")
        finally:
            stall.end()  # the held reads end once the API server answers again
            for reader in readers:
                reader.join(15)
    assert not any(reader.is_alive() for reader in readers)
    for response in (page, download):
        body = unescape(response.content.decode())
        assert response.status_code == 503 and response["Retry-After"], response.status_code
        assert (
            "The API server is not answering: the 2 log reads this dashboard makes at a time are "
            "waiting for it, so no other log can be read now. Try again in a moment."
        ) in body
        assert "Too many logs are being read right now" not in body
