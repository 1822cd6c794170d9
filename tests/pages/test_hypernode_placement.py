"""The gang placement of the HyperNode pages: computed once per (Pods, PodGroups, HyperNodes,
Nodes) versions, shared by the tree and the detail pages, recomputed when a pod moves."""

from __future__ import annotations

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import kind

NS = io.NS


@pytest.fixture(scope="module")
def infra(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    # Its own cluster: the test moves a pod.
    with own_cluster(tmp_path_factory, seed=5, name="placement") as (cluster, cache):
        now = io.load(cluster, cache)
        yield cluster, cache, now


@pytest.fixture
def placements(monkeypatch):
    """Counts the computations of the gang placement."""
    from dashboard.views import topology

    # Exact keys only (tests/pages/conftest.py, exact_sections): never reused after a move.
    calls: list[int] = []
    real = topology.place_gangs

    def counting(snap, topo):
        calls.append(1)
        return real(snap, topo)

    monkeypatch.setattr(topology, "place_gangs", counting)
    return calls


def _row(page: str, hypernode: str) -> str:
    """The tree row of ``hypernode``: up to the next row (the rows are siblings, depth is a class)."""
    return page.split(f'data-hypernode="{hypernode}"')[1].split("data-hypernode=")[0]


def _node_of(pod: dict | None) -> str | None:
    return (pod or {}).get("spec", {}).get("nodeName")


def _get(client, url: str) -> str:
    resp = client.get(url)
    assert resp.status_code == 200, (url, resp.status_code)
    return resp.content.decode()


def test_placement_is_reused_until_a_pod_moves(infra, client, placements):
    cluster, cache, _ = infra
    gang = 'data-gang="pipeline/train-uid-train"'
    page = _get(client, "/hypernodes/")
    assert gang in _row(page, "leaf-0") and gang not in _row(page, "spine-0")
    assert len(placements) == 1
    _get(client, "/hypernodes/")
    detail = _get(client, "/hypernodes/leaf-0/")
    assert gang in detail
    assert len(placements) == 1  # the same versions: the tree and the detail page share it

    # The gang's second pod comes back on cpu-c (leaf-1): the gang now spans the spine.
    pods = kind("", "pods")
    moved = cluster.store.get(pods, NS, "train-worker-1")
    cluster.store.delete(pods, NS, "train-worker-1")
    cache.wait_for(lambda s: s.pods.get(NS, "train-worker-1") is None, timeout=10)
    pg = cluster.store.get(kind("scheduling.volcano.sh", "podgroups"), NS, "train-uid-train")
    again = io.pod({"metadata": {"name": "train"}}, pg, 1, "cpu-c", gpu="4")
    assert again["metadata"]["name"] == moved["metadata"]["name"]
    cluster.store.create(pods, again, NS, replay=True)
    cache.wait_for(lambda s: _node_of(s.pods.get(NS, "train-worker-1")) == "cpu-c")

    page = _get(client, "/hypernodes/")
    assert len(placements) == 2
    assert gang in _row(page, "spine-0") and gang not in _row(page, "leaf-0")
    assert gang in _get(client, "/hypernodes/spine-0/")
    assert gang not in _get(client, "/hypernodes/leaf-0/")
    assert len(placements) == 2
