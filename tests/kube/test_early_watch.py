"""A paginated list that outlasts the API server's watch history: the watch that follows it is
opened from the list's resourceVersion after the first page (informer.EarlyWatch), so the changes
made while the later pages load are delivered, not refused with 410 and listed again."""

from __future__ import annotations

import threading
import time

from dashboard.kube import build_cluster_cache
from dashboard.kube.informer import Informer
from dashboard.kube.kinds import QUEUES
from dashboard.kube.store import KindStore
from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.kinds import QUEUE
from tests.conftest import fast_cache_options

HISTORY = 20


class _ChurnDuringList(KindStore):
    """Makes more changes than the server's history holds while the list's pages load (from the
    informer's thread, after the first page), once."""

    def __init__(self, cluster: SimulatedCluster):
        super().__init__(QUEUES)
        self.cluster = cluster
        self.churned = False

    def bound_listed(self, objs, final=False):
        if not final and not self.churned:
            self.churned = True
            store = self.cluster.store
            for i in range(HISTORY + 10):
                name = f"q-{i % 5:02d}"
                queue = store.get(QUEUE, None, name)
                queue["spec"]["weight"] = 100 + i
                store.update(QUEUE, queue)
            store.create(QUEUE, {"metadata": {"name": "late"}, "spec": {"weight": 1}})
            store.delete(QUEUE, None, "q-29")
        return objs


def _expected(cluster: SimulatedCluster) -> dict[str, int]:
    return {q["metadata"]["name"]: q["spec"]["weight"] for q in cluster.store.list(QUEUE)[0]}


def _stored(store: KindStore) -> dict[str, int]:
    return {key[1]: obj["spec"]["weight"] for key, obj in store.data().objects.items()}


def test_changes_made_while_a_paginated_list_loads_come_from_the_early_watch(tmp_path):
    cluster = SimulatedCluster(controllers=False, bookmark_interval=1.0, history_size=HISTORY)
    cluster.start()
    informer = None
    try:
        for i in range(30):
            cluster.store.create(QUEUE, {"metadata": {"name": f"q-{i:02d}"}, "spec": {"weight": i}})
        kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
        cache = build_cluster_cache(
            kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options(page_size=4)
        )
        assert cache.client is not None and cache.discovery is not None
        store = _ChurnDuringList(cluster)
        informer = Informer(QUEUES, cache.client, store, cache.discovery, cache.options.informer)
        informer.start()
        deadline = time.monotonic() + 15
        while not (store.churned and _stored(store) == _expected(cluster)) and time.monotonic() < deadline:
            threading.Event().wait(0.05)
        assert store.churned and _stored(store) == _expected(cluster)
        assert informer.counters["lists"] == 1 and informer.counters["relists_410"] == 0
        assert informer.counters["list_pages"] == 8 and informer.state == "synced"
    finally:
        if informer is not None:
            informer.stop()
        cluster.stop()
    assert not any(t.name == "informer-queues-early" for t in threading.enumerate())
