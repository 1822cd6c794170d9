"""Process model: informers start lazily in the serving process only, once per process (fork-safe),
and stop cleanly. The connection comes from the kubernetes client's own kubeconfig loader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import dashboard.kube as kube
from tests.kube.test_informers import api, stats

# Starts Django processes (fork, management commands).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def informer_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("informer-")]


@pytest.fixture
def kubeconfig_settings(sim_cluster, settings, tmp_path):
    path = sim_cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings.VOLCANO_UI_CLUSTER = "kubeconfig"
    settings.VOLCANO_UI_KUBECONFIG = str(path)
    settings.VOLCANO_UI_KUBE_CONTEXT = ""
    previous = kube.set_cluster_cache(None)
    yield path
    kube.stop()
    kube.set_cluster_cache(previous)


def test_get_cluster_cache_starts_lazily_once_per_process(sim_cluster, kubeconfig_settings):
    assert stats(sim_cluster)["requests"].get("list jobs") is None  # nothing before first use
    cache = kube.get_cluster_cache()
    assert kube.get_cluster_cache() is cache
    cache.wait_synced(timeout=10)
    assert len(cache.snapshot().queues) >= 2
    # What a forked child sees: a different pid builds its own cache (the parent's threads are gone).
    kube._pid = -1
    try:
        other = kube.get_cluster_cache()
        assert other is not cache
    finally:
        cache.stop()
    kube.stop()
    assert not [i for i in other.informers if i.alive]


def test_stop_closes_watches_and_joins_threads(sim_cluster, kubeconfig_settings):
    cache = kube.start()
    cache.wait_synced(timeout=10)
    informers = list(cache.informers)
    assert all(i.alive for i in informers)
    kube.stop()
    assert not any(i.alive for i in informers)
    kube.stop()  # idempotent
    # The simulated API server sees the watches end.
    cache2 = kube.get_cluster_cache()  # and a later use starts a fresh set
    cache2.wait_synced(timeout=10)
    assert cache2 is not cache


def test_unusable_kubeconfig_gives_unreachable_kinds_with_the_reason(settings, tmp_path):
    cache = kube.build_cluster_cache(kubeconfig=str(tmp_path / "missing"), mode="kubeconfig", context="")
    snap = cache.snapshot()
    for view in snap.views().values():
        assert view.state.name == "unreachable"
        assert "kubeconfig" in view.state.last_error.lower() or "missing" in view.state.last_error
    assert not cache.started


def test_kubeconfig_context_setting_is_honoured(sim_cluster, tmp_path):
    path = sim_cluster.write_kubeconfig(tmp_path / "kc")
    with pytest.raises(Exception, match="no-such-context|Cannot load"):
        from dashboard.kube.client import load_configuration

        load_configuration("kubeconfig", str(path), "no-such-context")


def test_connection_pool_holds_every_watch_and_the_page_calls(sim_cluster, tmp_path):
    from dashboard.kube.client import load_configuration
    from dashboard.kube.kinds import ALL_KINDS

    configuration = load_configuration("kubeconfig", str(sim_cluster.write_kubeconfig(tmp_path / "kc")))
    # a watch per kind, and one call at a time from each of the default 8 serving threads
    assert configuration.connection_pool_maxsize >= len(ALL_KINDS) + 8


def _run(code: str, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "DJANGO_SETTINGS_MODULE": "volcano_ui.settings", **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_import_and_non_serving_management_commands_start_nothing(sim_cluster, tmp_path):
    path = sim_cluster.write_kubeconfig(tmp_path / "kc")
    env = {"VOLCANO_UI_KUBECONFIG": str(path), "VOLCANO_UI_CLUSTER": "kubeconfig"}
    api(sim_cluster, "POST", "/_sim/stats/reset")
    result = _run(
        """
        import threading, django
        django.setup()
        import dashboard.kube, dashboard.urls, volcano_ui.urls
        from django.core.management import call_command
        call_command("check")
        print([t.name for t in threading.enumerate() if t.name.startswith("informer-")])
        """,
        env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert not any(k.startswith(("list ", "watch ")) for k in stats(sim_cluster)["requests"])


def test_forked_child_builds_its_own_informers(sim_cluster, tmp_path):
    path = sim_cluster.write_kubeconfig(tmp_path / "kc")
    env = {"VOLCANO_UI_KUBECONFIG": str(path), "VOLCANO_UI_CLUSTER": "kubeconfig"}
    result = _run(
        """
        import json, os, django
        django.setup()
        import dashboard.kube as kube
        parent = kube.get_cluster_cache()
        parent.wait_synced(timeout=10)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            child = kube.get_cluster_cache()
            child.wait_synced(timeout=10)
            out = {"same": child is parent, "alive": sum(i.alive for i in child.informers),
                   "informers": len(child.informers), "queues": len(child.snapshot().queues)}
            kube.stop()
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        data = os.read(r, 4096)
        os.waitpid(pid, 0)
        kube.stop()
        print(data.decode())
        """,
        env,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # Every informer of the child's own cache runs: one per watched kind.
    assert out["same"] is False and out["alive"] == out["informers"] >= 5
    assert out["queues"] >= 2


def test_exec_auth_plugin_and_context_selection(sim_cluster, tmp_path):
    """The kubernetes client's own loader runs an exec credential plugin; the context setting picks
    the context (the other one points at a closed port)."""
    from dashboard.kube import build_cluster_cache
    from tests.conftest import fast_cache_options

    plugin = tmp_path / "credential-plugin"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": sim_cluster.admin_token},
    }
    plugin.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(0o755)
    base = json.loads(sim_cluster.write_kubeconfig(tmp_path / "base").read_text())
    server = base["clusters"][0]["cluster"]
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "sim", "cluster": server},
            {"name": "dead", "cluster": {"server": "http://127.0.0.1:9"}},
        ],
        "users": [
            {
                "name": "exec-user",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": str(plugin),
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "contexts": [
            {"name": "dead", "context": {"cluster": "dead", "user": "exec-user"}},
            {"name": "sim", "context": {"cluster": "sim", "user": "exec-user"}},
        ],
        "current-context": "dead",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(kubeconfig))
    cache = build_cluster_cache(
        kubeconfig=str(path), context="sim", mode="kubeconfig", options=fast_cache_options()
    )
    try:
        cache.start()
        cache.wait_synced(timeout=15)
        assert len(cache.snapshot().queues) >= 2
    finally:
        cache.stop()


def test_an_api_server_that_never_answered_is_unreachable(tmp_path):
    import socket

    from dashboard.kube import build_cluster_cache
    from tests.conftest import fast_cache_options

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "kc"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    cache = build_cluster_cache(
        kubeconfig=str(path), context="", mode="kubeconfig", options=fast_cache_options()
    )
    try:
        cache.start()
        snap = cache.wait_for(
            lambda s: all(v.state.name == "unreachable" for v in s.views().values()) and s, 10
        )
        assert "unreachable" in snap.jobs.state.last_error and snap.jobs.state.synced_at is None
    finally:
        cache.stop()


def test_installed_cache_is_what_views_read(installed_cache, client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert set(response.json()["kinds"].values()) == {"synced"}
    assert kube.get_cluster_cache() is installed_cache
