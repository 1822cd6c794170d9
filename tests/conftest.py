"""Shared test fixtures.

Cluster fixtures (dashboard/kube owns these; see README "Cluster cache"):

* ``sim_cluster`` — an empty SimulatedCluster (bootstrap namespaces and the root/default queues)
  serving on an ephemeral port, controllers on when ``dashboard.sim.controllers`` exists. Fresh per
  test. Advance its clock with ``sim_cluster.advance(seconds)``.
* ``demo_cluster`` — the "demo" scenario advanced by ``DEMO_ADVANCE_SECONDS`` simulated seconds so
  every state exists; module-scoped (treat it as read-only, or restore what you change).
* ``live_cache`` — a started ClusterCache on the test's cluster (``demo_cluster`` when the test
  uses it, else ``sim_cluster``) with test-fast timings, synced, stopped at teardown.
* ``make_live_cache(cluster, user="admin", **options)`` — the same for other clusters/users/options.
* ``installed_cache`` — ``live_cache`` installed as the process-wide cache, so Django views under
  test that call ``get_cluster_cache()`` read it; the previous cache is restored afterwards.
* ``memory_cache`` — an in-memory ClusterCache (no cluster) installed process-wide; fill it with
  ``memory_cache.store("jobs").upsert(obj)`` and mark kinds synced with ``.set_state("synced")``.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests draw the same examples on every run ("ci", the default): a test run is
# deterministic, so CI cannot fail on a draw nobody saw locally. HYPOTHESIS_PROFILE=explore draws
# new examples each run, to look for new failures (then add them as fixed examples or fix the code).
hypothesis_settings.register_profile("ci", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Simulated seconds the demo scenario runs before tests look at it (its scenario module may
# declare a better value as DEMO_SETTLE_SECONDS).
DEMO_ADVANCE_SECONDS = 120.0


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def fast_cache_options(**overrides):
    """CacheOptions with timings shrunk so recovery tests take seconds, not minutes."""
    from dashboard.kube import CacheOptions, InformerOptions

    informer_fields = set(InformerOptions.__dataclass_fields__)
    fast = {
        "page_size": 100,
        "watch_timeout": 30,
        "inactivity_timeout": 3.0,
        "connect_timeout": 2.0,
        "request_timeout": 5.0,
        "backoff_initial": 0.05,
        "backoff_max": 0.5,
        "min_watch_seconds": 0.2,
        "not_installed_recheck": 0.5,
    }
    fast.update({k: v for k, v in overrides.items() if k in informer_fields})
    informer = InformerOptions(**fast)
    rest = {k: v for k, v in overrides.items() if k not in informer_fields}
    return CacheOptions(informer=informer, **rest)


def _new_cluster(**kwargs):
    if not _has_module("dashboard.sim.cluster"):
        pytest.skip("the simulated cluster (dashboard.sim.cluster) is not available yet")
    from dashboard.sim.cluster import SimulatedCluster

    kwargs.setdefault("controllers", _has_module("dashboard.sim.controllers"))
    kwargs.setdefault("bookmark_interval", 1.0)
    cluster = SimulatedCluster(**kwargs)
    cluster.start("127.0.0.1", 0)
    return cluster


@pytest.fixture
def sim_cluster():
    cluster = _new_cluster(seed=0)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def demo_cluster():
    if not _has_module("dashboard.sim.scenarios"):
        pytest.skip("the demo scenario (dashboard.sim.scenarios) is not available yet")
    from dashboard.sim import scenarios

    cluster = _new_cluster(seed=0, scenario="demo", controllers=True)
    try:
        cluster.advance(float(getattr(scenarios, "DEMO_SETTLE_SECONDS", DEMO_ADVANCE_SECONDS)))
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def make_live_cache(tmp_path):
    """Factory: ``make_live_cache(cluster, user="admin", wait=True, **options) -> ClusterCache``."""
    from dashboard.kube import build_cluster_cache

    caches = []

    def make(cluster, user: str = "admin", wait: bool = True, **options):
        kubeconfig = cluster.write_kubeconfig(tmp_path / f"kubeconfig-{user}-{len(caches)}", user=user)
        cache = build_cluster_cache(
            kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options(**options)
        )
        caches.append(cache)
        cache.start()
        if wait:
            cache.wait_synced(timeout=15)
        return cache

    try:
        yield make
    finally:
        for cache in caches:
            cache.stop()


@pytest.fixture
def live_cache(request, make_live_cache):
    cluster_fixture = "demo_cluster" if "demo_cluster" in request.fixturenames else "sim_cluster"
    return make_live_cache(request.getfixturevalue(cluster_fixture))


@pytest.fixture
def installed_cache(live_cache):
    from dashboard.kube import override_cluster_cache

    with override_cluster_cache(live_cache):
        yield live_cache


@pytest.fixture
def memory_cache():
    from dashboard.kube import ClusterCache, override_cluster_cache

    cache = ClusterCache()
    with override_cluster_cache(cache):
        yield cache


def pytest_configure(config):
    # Production settings serve hashed static files from the collectstatic manifest, which a test
    # run does not build; tests resolve {% static %} without it. (The manifest path is exercised
    # by tests/prod/test_image_steps.py, which runs collectstatic and gunicorn.)
    from django.conf import settings

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
