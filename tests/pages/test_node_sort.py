"""The Nodes list ordered by what each node has free (cpu, memory, GPUs): allocatable minus the
requests of the pods bound to it, an unknown allocatable below every amount, the order following
the pods as they come."""

from __future__ import annotations

import re

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import kind

PODS = kind("", "pods")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=17, name="node-sort") as (cluster, cache):
        store = cluster.store
        store.create(kind("", "namespaces"), {"metadata": {"name": io.NS}})
        for n in (
            io.node("g-two", gpu="8", cpu="8"),
            io.node("g-six", gpu="8", cpu="64"),
            io.node("g-lots", gpu="lots"),  # unreadable: unknown free
            io.node("c-none", cpu="2"),  # no GPUs: none free
        ):
            store.create(kind("", "nodes"), n, replay=True)
        job, pg = {"metadata": {"name": "a"}}, {"metadata": {"name": "a-pg"}}
        store.create(PODS, io.pod(job, pg, 0, "g-two", gpu="6", cpu="1"), io.NS, replay=True)
        store.create(PODS, io.pod(job, pg, 1, "g-six", gpu="2", cpu="1"), io.NS, replay=True)
        cache.wait_for(lambda s: len(s.nodes.all()) == 4 and len(s.pods.all()) == 2, 10)
        yield cluster, cache, job, pg


def _order(client, sort):
    resp = client.get(f"/nodes/?sort={sort}")
    assert resp.status_code == 200
    return re.findall(r'<tr data-node="([^"]+)"', resp.content.decode())


def test_nodes_sort_by_free_gpus_unknown_last(cluster, client):
    assert _order(client, "-free_gpu") == ["g-six", "g-two", "c-none", "g-lots"]
    assert _order(client, "free_gpu") == ["g-lots", "c-none", "g-two", "g-six"]
    assert _order(client, "-free_cpu")[:2] == ["g-six", "g-lots"]  # 63 and 16 cores free
    page = client.get("/nodes/?sort=-free_gpu").content.decode()
    assert '<option value="-free_gpu" selected>Free GPUs, highest first</option>' in page
    assert 'aria-sort="descending"><a href="?sort=free_gpu">GPUs requested / allocatable' in page


def test_the_order_follows_new_pods_on_an_unchanged_node(cluster, client):
    cl, cache, job, pg = cluster
    assert _order(client, "-free_gpu")[0] == "g-six"
    cl.store.create(PODS, io.pod(job, pg, 2, "g-six", gpu="5", cpu="1"), io.NS)  # 1 left
    cache.wait_for(lambda s: len(s.pods.all()) == 3, 10)
    assert _order(client, "-free_gpu")[:3] == ["g-two", "g-six", "c-none"]
