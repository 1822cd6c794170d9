"""A restarted/replaced API server with other credentials: honest error categories, and recovery
without restarting the dashboard once the kubeconfig on disk is rewritten (real HTTP/TLS)."""

from __future__ import annotations

import pytest

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.kinds import QUEUE


def _ports(cluster: SimulatedCluster) -> tuple[int, int]:
    return int(cluster.url.rsplit(":", 1)[1]), int(cluster.https_url.rsplit(":", 1)[1])


def _queue_names(snap) -> set[str]:
    return {q["metadata"]["name"] for q in snap.queues.all()}


def test_new_credentials_are_rejected_honestly_then_picked_up_from_the_rewritten_kubeconfig(
    tmp_path, make_live_cache
):
    from django.utils import translation

    from dashboard.views.notices import notices as _notices

    # Cluster A: its own CA and token (a state file makes a fresh identity, not the process-wide one).
    a = SimulatedCluster(controllers=False, bookmark_interval=1.0, state_file=tmp_path / "a.json")
    b = SimulatedCluster(controllers=False, bookmark_interval=1.0, state_file=tmp_path / "b.json")
    c = None
    try:
        a.start()
        a.store.create(QUEUE, {"metadata": {"name": "from-a"}, "spec": {"weight": 1}})
        cache = make_live_cache(a)  # connected through a kubeconfig file on disk (TLS + token)
        kubeconfig = cache.client.source.kubeconfig
        assert "from-a" in _queue_names(cache.snapshot())
        ports = _ports(a)
        a.stop()

        # Cluster B on the same ports with a different CA and token; the kubeconfig still names A's.
        assert b.admin_token != a.admin_token
        b.start(port=ports[0], tls_port=ports[1])
        b.store.create(QUEUE, {"metadata": {"name": "from-b"}, "spec": {"weight": 1}})
        state = cache.wait_for(
            lambda s: s.queues.state if s.queues.state.error_category == "rejected" else None, timeout=10
        )
        assert state.name == "stale"  # the data from A is still shown, marked as such
        assert state.last_error.startswith("Credentials or trust rejected")
        assert "CERTIFICATE_VERIFY_FAILED" in state.last_error
        # Outside a request: English whatever language an earlier test's request left active.
        with translation.override("en"):
            (notice,) = _notices(cache.snapshot(), "queues")
        assert notice["category"] == "rejected"
        assert "Credentials or trust rejected" in str(notice["text"])
        assert "unreachable" not in str(notice["text"]).lower()
        from django.test import Client

        from dashboard.kube import override_cluster_cache

        with override_cluster_cache(cache):
            page = Client().get("/queues/").content.decode()
        assert "Credentials or trust rejected" in page
        assert 'data-queue="from-a"' in page  # the last synced data is still shown

        # The kubeconfig is rewritten on disk: the next reconnect loads it, no restart needed.
        b.write_kubeconfig(kubeconfig)
        cache.wait_for(
            lambda s: (
                s.queues.state.name == "synced"
                and "from-b" in _queue_names(s)
                and "from-a" not in _queue_names(s)
            ),
            timeout=10,
        )
        cache.wait_synced(timeout=10)
        assert cache.client.reloads >= 1
        assert cache.snapshot().queues.state.error_category == ""
        b.stop()

        # Cluster C: B's CA (same state file) but another token -> 401: rejected, not unreachable.
        c = SimulatedCluster(
            controllers=False,
            bookmark_interval=1.0,
            state_file=tmp_path / "b.json",
            admin_token="sim-admin-rotated",
        )
        c.start(port=ports[0], tls_port=ports[1])
        state = cache.wait_for(
            lambda s: s.queues.state if s.queues.state.name == "forbidden" else None, timeout=10
        )
        assert state.error_category == "rejected"
        assert "401 Unauthorized" in state.last_error
        c.write_kubeconfig(kubeconfig)
        cache.wait_synced(timeout=10)
        assert "from-b" not in _queue_names(cache.snapshot())  # C is a fresh cluster
        assert cache.client.reloads >= 2
    finally:
        for cluster in (a, b, c):
            if cluster is not None:
                cluster.stop()


def test_unreachable_is_categorised_as_unreachable(sim_cluster, make_live_cache):
    cache = make_live_cache(sim_cluster)
    sim_cluster.stop()
    seen: list[str] = []

    def refused(snapshot):
        state = snapshot.queues.state
        if state.error_category == "unreachable":
            seen.append(state.last_error)
            if "connection refused" in state.last_error.lower():
                return state
        return None

    # The first errors may be the watch ending or a kept-alive connection being dropped by the
    # stopping server ("closed without a response"); once it is gone, connections are refused.
    state = cache.wait_for(refused, timeout=10)
    assert state.name == "stale"
    for message in seen:
        assert message.startswith("API server unreachable: "), message
        # The page notice gets the gist, not urllib3's repr of a connection pool and a socket object.
        assert "object at 0x" not in message and "Max retries" not in message, message
        assert "(" not in message, message


@pytest.mark.parametrize(
    "message, gist",
    [
        (
            "HTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries exceeded with url: /apis "
            "(Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f>: "
            "Failed to establish a new connection: [Errno 111] Connection refused'))",
            "cannot connect to 127.0.0.1:6443: connection refused",
        ),
        (
            "('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))",
            "the connection was closed without a response",
        ),
        (
            "HTTPSConnectionPool(host='kube.example', port=443): Max retries exceeded with url: /api "
            "(Caused by SSLError(SSLEOFError(8, 'EOF occurred in violation of protocol (_ssl.c:2427)')))",
            "the connection to kube.example:443 was closed without a response",
        ),
        (
            "HTTPSConnectionPool(host='10.0.0.1', port=443): Read timed out. (read timeout=5)",
            "no answer from 10.0.0.1:443 (timed out)",
        ),
        (
            "('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))",
            "the connection was reset",
        ),
        (
            "('Connection aborted.', BrokenPipeError(32, 'Broken pipe'))",
            "the connection was reset",
        ),
        ("Response ended prematurely", "the connection was cut off in the middle of a response"),
        (
            "('Connection broken: IncompleteRead(0 bytes read, 2 more expected)', "
            "IncompleteRead(0 bytes read))",
            "the connection was cut off in the middle of a response",
        ),
        ("something nobody has seen before", ""),
    ],
)
def test_transport_errors_are_told_plainly(message, gist):
    from dashboard.kube.client import _plain_transport_cause

    assert _plain_transport_cause(message) == gist


def test_a_rewritten_but_identical_kubeconfig_is_not_reloaded(sim_cluster, make_live_cache):
    """A restarted simcluster rewrites the same kubeconfig: no reload, so no re-list of everything."""
    import os

    cache = make_live_cache(sim_cluster)
    path = cache.client.source.kubeconfig
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text)
    os.utime(path, ns=(1, 1))  # another mtime, same content
    assert cache.client.reload_if_changed() is False
    assert cache.client.reloads == 0
    with open(path, "w") as f:
        f.write(text.replace('"preferences"', '"extensions": [], "preferences"'))
    assert cache.client.reload_if_changed() is True
    assert cache.client.reloads == 1
    cache.wait_synced(timeout=10)


def test_a_cache_started_before_its_kubeconfig_exists_connects_once_it_is_written(sim_cluster, tmp_path):
    """Two terminals started together: the dashboard must not need a restart because the
    simulator had not written its kubeconfig yet."""
    from dashboard.kube import build_cluster_cache
    from tests.conftest import fast_cache_options

    path = tmp_path / "later" / "kubeconfig"
    cache = build_cluster_cache(
        kubeconfig=str(path), context="", mode="kubeconfig", options=fast_cache_options()
    )
    try:
        state = cache.snapshot().jobs.state
        assert state.name == "unreachable" and state.error_category == "unconfigured"
        assert "does not exist (yet)" in state.last_error, state.last_error
        cache.start()
        state = cache.wait_for(lambda s: s.queues.state if s.queues.state.last_error else None, timeout=10)
        assert "No usable cluster connection" in state.last_error
        path.parent.mkdir()
        sim_cluster.write_kubeconfig(path)
        cache.wait_synced(timeout=30)
        # Picked up without a restart; an informer that read the file while it was being written
        # may count a second reload.
        assert cache.client.reloads >= 1
        assert {q["metadata"]["name"] for q in cache.snapshot().queues.all()} == {
            q["metadata"]["name"] for q in sim_cluster.store.list(QUEUE)[0]
        }
    finally:
        cache.stop()
