"""Fixtures for the page tests: the simulated cluster's demo scenario behind a live cluster cache,
installed as the process-wide cache, with the pages' clock following the simulated clock.

One cluster and one cache per test module (the demo takes a moment to settle); tests that change
the cluster use their own ``sim_cluster``.
"""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard import presenters


@pytest.fixture(scope="module")
def demo_cache(demo_cluster, tmp_path_factory):
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from tests.conftest import fast_cache_options

    kubeconfig = demo_cluster.write_kubeconfig(tmp_path_factory.mktemp("pages") / "kubeconfig", user="admin")
    cache = build_cluster_cache(
        kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options()
    )
    cache.start()
    previous = presenters.set_time_source(demo_cluster.clock.now)
    try:
        cache.wait_synced(timeout=20)
        with override_cluster_cache(cache):
            yield cache
    finally:
        presenters.set_time_source(previous)
        cache.stop()


@pytest.fixture
def client() -> Client:
    return Client()


@pytest.fixture
def htmx() -> dict[str, str]:
    """Headers of an htmx request (django-htmx sets request.htmx from HX-Request)."""
    return {"HX-Request": "true"}
