"""A cluster without the CRDs of CronJob, JobFlow, JobTemplate and HyperNode (or that forbids
Nodes) shows one notice per missing kind on the pages that read it; every other page is as before."""

from __future__ import annotations

import pytest

from tests.kube.test_informers import faults
from tests.pages.helpers import text

MISSING = [
    "cronjobs.batch.volcano.sh",
    "jobflows.flow.volcano.sh",
    "jobtemplates.flow.volcano.sh",
    "hypernodes",
]


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from dashboard.presenters.clock import set_time_source
    from tests.conftest import _new_cluster, fast_cache_options

    cluster = _new_cluster(seed=5, controllers=False)
    kubeconfig = cluster.write_kubeconfig(tmp_path_factory.mktemp("bare") / "kubeconfig", user="admin")
    faults(cluster, not_installed=MISSING, forbidden=["nodes"])
    cache = build_cluster_cache(
        kubeconfig=str(kubeconfig), context="", mode="kubeconfig", options=fast_cache_options()
    )
    cache.start()
    previous = set_time_source(cluster.clock.now)
    try:
        cache.wait_synced(timeout=20, kinds=("jobs", "podgroups", "queues", "pods", "events"))
        # Each informer finds its kind missing on its own: wait for every one of them.
        cache.wait_for(
            lambda s: (
                all(
                    getattr(s, k).state.name == "not_installed"
                    for k in ("cronjobs", "jobflows", "jobtemplates", "hypernodes")
                )
                and s.nodes.state.name == "forbidden"
            ),
            timeout=15,
        )
        with override_cluster_cache(cache):
            yield cluster, cache
    finally:
        set_time_source(previous)
        cache.stop()
        cluster.stop()


@pytest.mark.parametrize(
    "url,kind,words",
    [
        ("/cronjobs/", "cronjobs", "CronJobs cannot be shown"),
        ("/jobflows/", "jobflows", "JobFlows cannot be shown"),
        ("/jobtemplates/", "jobtemplates", "JobTemplates cannot be shown"),
        ("/hypernodes/", "hypernodes", "HyperNodes cannot be shown"),
    ],
)
def test_missing_kind_is_one_notice_and_no_table(bare, client, url, kind, words):
    page = client.get(url).content.decode()
    assert page.count('data-state="not_installed"') == 1, page.count("data-state=")
    assert "are not installed in this cluster" in text(page)
    assert words in text(page)
    assert "No " + kind not in text(page)


def test_forbidden_nodes_are_never_an_empty_list(bare, client):
    page = client.get("/nodes/").content.decode()
    assert "The dashboard's own identity is not allowed to list Nodes" in text(page)
    assert "Nodes cannot be shown" in text(page) and "No Nodes yet" not in text(page)
    assert client.get("/nodes/any/").status_code == 403
    assert client.get("/hypernodes/any/").status_code == 503


def test_other_pages_show_no_notice_for_the_new_kinds(bare, client):
    for url in ("/", "/jobs/", "/queues/", "/podgroups/", "/kiosk/"):
        page = client.get(url).content.decode()
        assert 'data-state="not_installed"' not in page, url
        assert 'data-state="forbidden"' not in page, url
