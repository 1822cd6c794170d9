"""A CronJob suspended and resumed, seen by the cache over the simulated cluster with its clock
advanced: the scheduled times it skipped while suspended are not missed runs."""

from __future__ import annotations

import re

import pytest

from dashboard.volcano import cronjobs as vc
from tests.pages import infra_objects as io
from tests.pages.helpers import page_ok, text

NS = io.NS


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=5, name="cron-suspend") as (cluster, cache):
        yield cluster, cache


def test_times_skipped_while_suspended_are_not_missed(own, client):
    """Suspended, then resumed: the scheduled times in between are listed as skipped, never missed,
    and stay listed after the resume."""
    cluster, cache = own
    now = cluster.clock.now()
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "refresh", "namespace": NS, "creationTimestamp": io.iso(now)},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"tasks": []}}},
        "status": {"lastScheduleTime": io.iso(now)},
    }
    k = io.kind("batch.volcano.sh", "cronjobs")

    def patched(value: bool) -> None:
        cluster.store.patch(k, NS, "refresh", {"spec": {"suspend": value}}, "merge")
        cache.wait_for(lambda s: vc.suspended(s.cronjobs.get(NS, "refresh")) is value, timeout=10)

    def listed(page: str, marker: str) -> int:
        return len(re.findall(r"<li>", page.split(marker)[1].split("</ul>")[0])) if marker in page else 0

    cluster.store.create(k, cj, NS, replay=True)
    cache.wait_for(lambda s: s.cronjobs.get(NS, "refresh"), timeout=10)
    patched(True)
    cluster.clock.advance(11 * 60)
    page = page_ok(client, f"/cronjobs/{NS}/refresh/")
    assert listed(page, "data-missed") == 0 and listed(page, "data-skipped") == 2
    assert "Skipped while suspended" in text(page)
    patched(False)
    cluster.clock.advance(1)
    page = page_ok(client, f"/cronjobs/{NS}/refresh/")
    # The newest skipped time may still start now that it runs again; the older stays skipped.
    assert listed(page, "data-missed") == 0 and listed(page, "data-skipped") == 1
