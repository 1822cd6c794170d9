"""Headless Chromium: the JobFlow dependency graph (server-rendered SVG, no script needed) and the
HyperNode tree, on objects created through the simulated API server."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot, serve_dashboard
from tests.pages import infra_objects as io

pytestmark = pytest.mark.browser


@pytest.fixture
def infra_dashboard(make_live_cache):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.conftest import _new_cluster

    cluster = _new_cluster(seed=3, controllers=False)
    try:
        cache = make_live_cache(cluster)
        io.load(cluster, cache)
        base, stop = serve_dashboard(cache, cluster.clock)
        try:
            yield base
        finally:
            stop()
    finally:
        cluster.stop()


def test_jobflow_graph_draws_layers_left_to_right(infra_dashboard, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(infra_dashboard + f"/jobflows/{io.NS}/pipe/")
        graph = page.locator("svg[data-flow-graph]")
        assert graph.is_visible()
        boxes = {
            name: page.locator(f'svg[data-flow-graph] g[data-flow="{name}"] rect').bounding_box()
            for name in ("a", "b", "c", "d", "e")
        }
        assert all(b and b["width"] > 50 for b in boxes.values())
        # Layered by dependsOn depth: a | b | c, d | e, from left to right; c and d share a column.
        assert boxes["a"]["x"] < boxes["b"]["x"] < boxes["c"]["x"] < boxes["e"]["x"]
        assert boxes["c"]["x"] == boxes["d"]["x"] and boxes["c"]["y"] != boxes["d"]["y"]
        # The box names are readable (inside the box, not clipped).
        label = page.locator('svg[data-flow-graph] g[data-flow="a"] text').first.bounding_box()
        assert (
            label and boxes["a"]["x"] <= label["x"] and label["x"] + label["width"] <= boxes["a"]["x"] + 180
        )
        assert page.locator("svg[data-flow-graph] path.edge-unmet").count() >= 1
        page.locator('svg[data-flow-graph] g[data-flow="a"] a').click()
        assert page.url.endswith(f"/jobs/{io.NS}/pipe-a/")
        page.go_back()
        screenshot(page, "jobflow-graph")
    finally:
        context.close()


def test_hypernode_tree_nests_and_links(infra_dashboard, page):
    page.goto(infra_dashboard + "/hypernodes/")
    spine = page.locator('li[data-hypernode="spine-0"]').bounding_box()
    leaf = page.locator('li[data-hypernode="leaf-0"]').bounding_box()
    assert spine and leaf and leaf["x"] > spine["x"] and leaf["y"] > spine["y"]  # indented below its parent
    assert page.locator('li[data-hypernode="leaf-0"] [data-gang]').is_visible()
    screenshot(page, "hypernode-tree")
    page.locator('li[data-hypernode="leaf-0"] a[href="/nodes/gpu-a/"]').click()
    assert page.url.endswith("/nodes/gpu-a/")
    assert page.locator('[data-resource="nvidia.com/gpu"]').is_visible()
