"""A Volcano component not ready is the worst attention item: the kiosk's overall status names it
and the overview's Needs attention lists it; scheduler health read from data that is not current
says unknown, never ready."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import check_fragment, sim_faults, text

pytestmark = pytest.mark.usefixtures("demo_cache")


def _components_current(cluster, snap) -> bool:
    """The cache holds every volcano-system Deployment at the simulator's resourceVersion (a fault
    writes each component in turn; the test must not read the page halfway through)."""
    from dashboard.sim.components import DEPLOYMENT

    deployments, _ = cluster.store.list(DEPLOYMENT, "volcano-system")
    for dep in deployments:
        seen = snap.deployments.get("volcano-system", dep["metadata"]["name"])
        if seen is None or seen["metadata"].get("resourceVersion") != dep["metadata"]["resourceVersion"]:
            return False
    return True


def _scheduler_ready(snap) -> bool | None:
    dep = snap.deployments.get("volcano-system", "volcano-scheduler")
    if dep is None:
        return None
    status = dep.get("status") or {}
    conditions = status.get("conditions") or []
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in conditions)


@pytest.fixture
def scheduler_down(demo_cluster, demo_cache):
    demo_cache.wait_for(lambda s: _scheduler_ready(s) is True, timeout=20)
    sim_faults(demo_cluster, components_down=["volcano-scheduler"])
    try:
        demo_cache.wait_for(
            lambda s: _scheduler_ready(s) is False and _components_current(demo_cluster, s), timeout=20
        )
        yield demo_cluster, demo_cache
    finally:
        sim_faults(demo_cluster, components_down=[])
        demo_cache.wait_for(
            lambda s: _scheduler_ready(s) is True and _components_current(demo_cluster, s), timeout=20
        )


def test_a_scheduler_outage_is_the_kiosk_headline_and_first_in_needs_attention(scheduler_down, client):
    kiosk = client.get("/kiosk/").content.decode()
    head = text(kiosk.split('class="kiosk-status')[1].split("</h1>")[0])
    assert "worst: Volcano component volcano-scheduler not ready (0/1)" in head, head
    assert "crash-looping" not in head
    check_fragment(client, kiosk, "board")
    overview = client.get("/").content.decode()
    groups = re.findall(r'<div class="att-group"(?: data-group="(\w+)")?', overview)
    assert groups and groups[0] == "components", groups
    att = overview.split('data-group="components"')[1].split("</div>\n</div>")[0]
    assert "1 Volcano component not ready" in text(att) and 'data-component-down="volcano-scheduler"' in att
    assert "0/1 ready" in text(att)
    check_fragment(client, overview, "attention")


@pytest.fixture
def api_failing(demo_cluster, demo_cache):
    """Every request fails and the watches drop: the kinds the card reads go stale."""
    sim_faults(demo_cluster, error_rate=1.0, drop_watches=True)
    try:
        demo_cache.wait_for(lambda s: s.deployments.state.name != "synced", timeout=20)
        yield demo_cache
    finally:
        sim_faults(demo_cluster, error_rate=0.0)
        demo_cache.wait_for(lambda s: all(v.state.name == "synced" for v in s.views().values()), timeout=30)


def test_scheduler_health_from_data_that_is_not_current_reads_unknown(api_failing, client):
    kiosk = client.get("/kiosk/").content.decode()
    strip = kiosk.split("data-scheduler-health")[1].split("</p>")[0]
    assert 'data-fresh="false"' in strip
    assert "Scheduler and Volcano components: unknown (data as of" in text(strip), text(strip)
    assert "Volcano components ready" not in text(strip) and "last acted" not in text(strip)
    card = client.get("/").content.decode().split("data-scheduler-health")[1].split("</section>")[0]
    assert "data-health-stale" in card and "Current state unknown (data as of" in text(card)
