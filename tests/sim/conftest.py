"""Fixtures for the simulated-cluster protocol tests: a fresh cluster per test (ephemeral ports,
controllers off, short bookmark interval) and official-client APIs bound to it over HTTPS."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from kubernetes import client, config

from dashboard.sim.cluster import SimulatedCluster


def shared_dir() -> Path | None:
    """The shared reference data (shared/volcano), next to the repository or at /work/shared."""
    candidates = [Path(__file__).resolve().parents[2].parent / "shared", Path("/work/shared")]
    if os.environ.get("VOLCANO_SHARED"):
        candidates.insert(0, Path(os.environ["VOLCANO_SHARED"]))
    for c in candidates:
        if (c / "volcano" / "examples").is_dir():
            return c
    return None


@pytest.fixture
def cluster():
    c = SimulatedCluster(seed=7, controllers=False, bookmark_interval=0.2, history_size=200)
    c.start()
    yield c
    c.stop()


def api_client_for(cluster: SimulatedCluster, tmp_path: Path, user: str = "admin") -> client.ApiClient:
    path = cluster.write_kubeconfig(tmp_path / f"kubeconfig-{user}", user)
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(path), client_configuration=cfg)
    return client.ApiClient(cfg)


@pytest.fixture
def api(cluster, tmp_path):
    a = api_client_for(cluster, tmp_path)
    yield a
    a.close()


@pytest.fixture
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture
def kubectl_bin():
    path = shutil.which("kubectl")
    if path is None:
        pytest.skip("kubectl is not installed")
    return path


@pytest.fixture
def shared():
    d = shared_dir()
    if d is None:
        pytest.skip("shared/volcano reference data not found next to the repository nor at /work/shared")
    return d
