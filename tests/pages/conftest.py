"""Fixtures for the page tests: the simulated cluster's demo scenario behind a live cluster cache,
installed as the process-wide cache, with the pages' clock following the simulated clock.

One cluster and one cache per test module (the demo takes a moment to settle); tests that change
the cluster use their own ``sim_cluster``.
"""

from __future__ import annotations

import contextlib

import pytest
from django.test import Client

from dashboard.presenters.clock import set_time_source


@contextlib.contextmanager
def installed_cache(cluster, directory):
    """A live cluster cache on ``cluster`` (admin kubeconfig written in ``directory``), synced and
    installed as the process-wide cache, with the pages' clock following the simulated clock.
    Yields the cache; stops it (not the cluster) on exit."""
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from tests.conftest import fast_cache_options

    kubeconfig = cluster.write_kubeconfig(directory / "kubeconfig", user="admin")
    cache = build_cluster_cache(
        kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options()
    )
    cache.start()
    previous = set_time_source(cluster.clock.now)
    try:
        cache.wait_synced(timeout=20)
        with override_cluster_cache(cache):
            yield cache
    finally:
        set_time_source(previous)
        cache.stop()


@contextlib.contextmanager
def own_cluster(tmp_path_factory, seed: int, name: str):
    """A module's own simulated cluster (controllers off, so tests control every object) behind an
    installed cache: yields (cluster, cache)."""
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=seed, controllers=False)
    try:
        with installed_cache(cluster, tmp_path_factory.mktemp(name)) as cache:
            yield cluster, cache
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def exact_sections(monkeypatch):
    """Pages show the objects a test just added: no stale reuse of a section. memo.section reuses
    one for a moment when computing it took long, which on a small test cluster happens only when
    a garbage collection or a busy machine stretched the computation (tests/pages/
    test_section_memo.py tests that reuse with the real threshold)."""
    from dashboard.views import memo

    monkeypatch.setattr(memo, "STALE_MIN_COMPUTE_SECONDS", float("inf"))


@pytest.fixture(scope="module")
def demo_cache(demo_cluster, tmp_path_factory):
    with installed_cache(demo_cluster, tmp_path_factory.mktemp("pages")) as cache:
        yield cache


@pytest.fixture
def client() -> Client:
    return Client()


@pytest.fixture
def htmx() -> dict[str, str]:
    """Headers of an htmx request (django-htmx sets request.htmx from HX-Request)."""
    return {"HX-Request": "true"}
