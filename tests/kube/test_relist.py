"""The API server's history replaced under a running cache (the simulator restarted with the same
state file and kubeconfig, or another cluster on the same address): the informers' old
resourceVersions are refused (410 Expired / 504 "Too large resource version") and they re-list, so
the cache ends up with exactly the new cluster's objects (real HTTP/TLS, no reload of the
kubeconfig involved)."""

from __future__ import annotations

from dashboard.kube.client import Gone, KubeError, TooLargeResourceVersion, error_from_status
from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.kinds import QUEUE
from dashboard.sim.store import too_large_rv


def _ports(cluster: SimulatedCluster) -> tuple[int, int]:
    return int(cluster.url.rsplit(":", 1)[1]), int(cluster.https_url.rsplit(":", 1)[1])


def _queues(snap) -> dict[str, str]:
    return {q["metadata"]["name"]: q["metadata"]["uid"] for q in snap.queues.all()}


def _create_queues(cluster: SimulatedCluster, *names: str) -> None:
    for name in names:
        cluster.store.create(QUEUE, {"metadata": {"name": name}, "spec": {"weight": 1}})


def _expected(cluster: SimulatedCluster) -> dict[str, str]:
    return {q["metadata"]["name"]: q["metadata"]["uid"] for q in cluster.store.list(QUEUE)[0]}


def _replace_and_wait(cache, old: SimulatedCluster, new: SimulatedCluster) -> dict[str, str]:
    ports = _ports(old)
    old.stop()
    new.start(port=ports[0], tls_port=ports[1])
    _create_queues(new, "kept", "new-1")
    expected = _expected(new)
    snap = cache.wait_for(
        lambda s: s if s.queues.state.name == "synced" and _queues(s) == expected else None, timeout=15
    )
    assert "old-1" not in _queues(snap) and "old-2" not in _queues(snap)
    assert cache.client.reloads == 0  # the kubeconfig never changed: the refused version did it
    return expected


def test_a_simulator_restarted_with_the_same_state_file_is_re_listed(tmp_path, make_live_cache):
    state = tmp_path / "sim.sim-state.json"
    a = SimulatedCluster(controllers=False, bookmark_interval=1.0, state_file=state)
    b = None
    try:
        a.start()
        _create_queues(a, "old-1", "old-2", "kept")
        cache = make_live_cache(a)
        cache.wait_for(lambda s: "old-2" in _queues(s), timeout=10)
        # Same state file: same token, CA and ports, so the same kubeconfig; a new run (epoch).
        b = SimulatedCluster(controllers=False, bookmark_interval=1.0, state_file=state)
        assert b.admin_token == a.admin_token and b.epoch == a.epoch + 1
        _replace_and_wait(cache, a, b)
        # Every old resourceVersion is below the new run's base: 410 Expired, then a re-list.
        assert cache.kind_counters("queues").relists_410 >= 1
    finally:
        for cluster in (a, b):
            if cluster is not None:
                cluster.stop()


def test_a_cluster_behind_the_cache_resource_version_answers_too_large_and_is_re_listed(make_live_cache):
    # No state file: both use the process's TLS material; the same token, so one kubeconfig. The
    # old cluster's history is far ahead of the new one's (an etcd restored from a backup).
    token = "sim-admin-relist"
    a = SimulatedCluster(
        controllers=False, bookmark_interval=1.0, admin_token=token, resource_version_base=50_000
    )
    b = SimulatedCluster(controllers=False, bookmark_interval=1.0, admin_token=token)
    try:
        a.start()
        _create_queues(a, "old-1", "old-2", "kept")
        cache = make_live_cache(a)
        cache.wait_for(lambda s: "old-2" in _queues(s), timeout=10)
        expected = _replace_and_wait(cache, a, b)
        counters = cache.kind_counters("queues")
        assert counters.relists_too_large >= 1 and counters.relists_410 == 0
        # Watching again from the new list's resourceVersion: later changes still arrive.
        _create_queues(b, "after")
        cache.wait_for(lambda s: "after" in _queues(s), timeout=10)
        assert set(_queues(cache.snapshot())) == set(expected) | {"after"}
    finally:
        a.stop()
        b.stop()


def test_error_from_status_recognises_too_large_resource_version():
    # The Status the simulator (and kube-apiserver's watch cache) sends, as an HTTP body or as the
    # object of a watch ERROR event.
    status = too_large_rv(5000, 300).status()
    err = error_from_status(504, "Timeout", status)
    assert isinstance(err, TooLargeResourceVersion)
    assert err.message == "Timeout: Too large resource version: 5000, current: 300"
    # Older servers: no cause, only the message.
    assert isinstance(
        error_from_status(504, "Timeout", {"message": "Timeout: Too large resource version: 5, current: 3"}),
        TooLargeResourceVersion,
    )
    other = error_from_status(504, "Timeout", {"message": "request timed out", "reason": "Timeout"})
    assert type(other) is KubeError
    assert isinstance(error_from_status(410, "Expired", {"message": "too old resource version: 1 (5)"}), Gone)
    assert type(error_from_status(500, "InternalError", "not a Status")) is KubeError
