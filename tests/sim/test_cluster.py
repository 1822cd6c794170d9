"""The SimulatedCluster facade: lifecycle, kubeconfigs, users, time."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client, config

from dashboard.sim.cluster import SimulatedCluster


def test_bootstrap_namespaces_and_volcano_queues():
    c = SimulatedCluster(seed=1, controllers=False)
    assert [n["metadata"]["name"] for n in c.store.list("namespaces")[0]] == [
        "default",
        "kube-node-lease",
        "kube-public",
        "kube-system",
    ]
    queues = {q["metadata"]["name"]: q for q in c.store.list("queues")[0]}
    assert queues["root"]["spec"]["reclaimable"] is False and queues["root"]["status"]["state"] == "Open"
    assert queues["default"]["spec"]["parent"] == "root"
    assert SimulatedCluster(controllers=False, bootstrap=False).store.list("namespaces")[0] == []


def test_plain_http_kubeconfig_and_restart(tmp_path):
    with SimulatedCluster(controllers=False) as c:
        path = c.write_kubeconfig(tmp_path / "kc", tls=False)
        doc = json.loads(path.read_text())
        assert doc["clusters"][0]["cluster"] == {"server": c.url} and oct(path.stat().st_mode)[-3:] == "600"
        cfg = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=cfg)
        with client.ApiClient(cfg) as api:
            assert client.VersionApi(api).get_code().git_version.startswith("v1.32")
        tls = json.loads(c.write_kubeconfig(tmp_path / "tls").read_text())["clusters"][0]["cluster"]
        assert tls["server"] == c.https_url and tls["certificate-authority-data"]
    c.start()  # a stopped cluster can serve again (new ephemeral port), with its objects intact
    try:
        with client.ApiClient(cfg_for(c, tmp_path)) as api:
            assert [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items][0] == "default"
    finally:
        c.stop()


def cfg_for(c: SimulatedCluster, tmp_path) -> client.Configuration:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(c.write_kubeconfig(tmp_path / "again")), client_configuration=cfg)
    return cfg


def test_no_tls_listener(tmp_path):
    c = SimulatedCluster(controllers=False)
    c.start(tls_port=None)
    try:
        assert c.https_url == ""
        with pytest.raises(RuntimeError):
            c.write_kubeconfig(tmp_path / "kc", tls=True)
        assert (
            json.loads(c.write_kubeconfig(tmp_path / "kc").read_text())["clusters"][0]["cluster"]["server"]
            == c.url
        )
    finally:
        c.stop()


def test_kubeconfig_for_namespace_user_uses_its_namespace(cluster, tmp_path):
    cluster.add_user("bob", "bob-token", ["team-b", "team-a"])
    doc = json.loads(cluster.write_kubeconfig(tmp_path / "bob", "bob").read_text())
    assert doc["contexts"][0]["context"]["namespace"] == "team-a"
    assert doc["users"][0] == {"name": "bob", "user": {"token": "bob-token"}}
    with pytest.raises(KeyError):
        cluster.write_kubeconfig(tmp_path / "x", "nobody")
    with pytest.raises(ValueError):
        cluster.add_user("eve", "bob-token", None)  # a token belongs to one user


def test_advance_without_controllers_moves_the_clock(cluster):
    before = cluster.clock.now()
    cluster.advance(3600)
    assert (cluster.clock.now() - before).total_seconds() == 3600
    with pytest.raises(ValueError):
        cluster.advance(-1)


def test_realtime_advances_with_wall_time():
    c = SimulatedCluster(controllers=False, speed=600.0)
    start = c.clock.now()
    c.start_realtime(tick=0.01)
    try:
        deadline = time.monotonic() + 10
        while (c.clock.now() - start).total_seconds() < 60 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (c.clock.now() - start).total_seconds() >= 60
    finally:
        c.stop()
    stopped_at = c.clock.now()
    time.sleep(0.05)
    assert c.clock.now() == stopped_at


def test_seed_makes_uids_reproducible():
    a = SimulatedCluster(seed=42, controllers=False)
    b = SimulatedCluster(seed=42, controllers=False)
    uid = lambda c: c.store.get("queues", None, "default")["metadata"]["uid"]  # noqa: E731
    assert uid(a) == uid(b) != uid(SimulatedCluster(seed=43, controllers=False))


def test_state_file_keeps_admin_token_and_ca_across_restarts(tmp_path):
    """SimulatedCluster(state_file=...) restarted on the same ports presents the same token and CA;
    a kubernetes client built from the first kubeconfig works against the second instance."""
    import stat

    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    from dashboard.sim.cluster import SimulatedCluster

    state = tmp_path / "sim.state.json"
    first = SimulatedCluster(controllers=False, state_file=state)
    first.start()
    ports = (int(first.url.rsplit(":", 1)[1]), int(first.https_url.rsplit(":", 1)[1]))
    kubeconfig = first.write_kubeconfig(tmp_path / "kc")
    token, ca = first.admin_token, first.server.tls.ca_pem
    api = k8s_config.new_client_from_config(config_file=str(kubeconfig))
    assert k8s_client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
    first.stop()
    assert stat.S_IMODE(state.stat().st_mode) == 0o600

    second = SimulatedCluster(controllers=False, state_file=state)
    try:
        second.start(port=ports[0], tls_port=ports[1])
        assert second.admin_token == token
        assert second.server.tls.ca_pem == ca
        assert k8s_client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
        assert second.write_kubeconfig(tmp_path / "kc2").read_text() == kubeconfig.read_text()
    finally:
        api.close()
        second.stop()

    # Without a state file every process-less cluster keeps its own fresh token.
    other = SimulatedCluster(controllers=False)
    assert other.admin_token != token
    # A corrupt state file is replaced by a new identity, not an error.
    state.write_text("{not json")
    third = SimulatedCluster(controllers=False, state_file=state)
    assert third.admin_token != token
    assert '"admin_token"' in state.read_text()
