"""A Queue whose status the scheduler wrote (``allocated``) while the controller that writes
``state`` was down, over the simulated cluster: its state is "not reported", the status it has is
shown; "No status" is for a Queue with no status at all."""

from __future__ import annotations

import pytest

from tests.pages.helpers import kind, text

QUEUES = ("scheduling.volcano.sh", "queues")


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=9, name="queue-unreported") as (cluster, cache):
        for name, status in (("half", {"allocated": {"cpu": "3", "memory": "6Gi"}}), ("bare", None)):
            queue = {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": {"weight": 1, "capability": {"cpu": "8", "memory": "16Gi"}},
            }
            if status is not None:
                queue["status"] = status
            cluster.store.create(kind(*QUEUES), queue, None, replay=True)
        cache.wait_for(lambda s: s.queues.get(None, "half") and s.queues.get(None, "bare"), timeout=10)
        yield cluster, cache


def _state(client, name: str) -> tuple[str, str]:
    resp = client.get(f"/queues/{name}/")
    assert resp.status_code == 200
    page = resp.content.decode()
    return text(page.split('class="phase-big">')[1].split("</div>")[0]).strip(), page


def test_a_status_without_state_says_the_state_is_not_reported(own, client):
    label, page = _state(client, "half")
    assert label == "State not reported", label
    assert "No status" not in text(page)
    assert "cpu 3 · 38% of capability 8" in text(page)  # status.allocated, shown


def test_no_status_at_all_reads_no_status(own, client):
    label, _page = _state(client, "bare")
    assert label == "No status", label
