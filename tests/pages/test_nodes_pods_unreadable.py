"""Nodes whose pods cannot be read: what they have requested and free is unknown, never 0, and
"what would fit" on a Job's page says so instead of naming free room (Truth first)."""

from __future__ import annotations

import pytest

from tests.kube.test_informers import faults
from tests.pages import infra_objects as io
from tests.pages.helpers import text

NS = io.NS


@pytest.fixture(scope="module")
def pods_forbidden(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=3, name="nopods") as (cluster, cache):
        io.load(cluster, cache)
        faults(cluster, forbidden=["pods"], drop_watches=True)
        cache.wait_for(lambda s: s.pods.state.name == "forbidden", timeout=20)
        yield cluster, cache


def test_node_rows_show_unknown_requests_not_zero(pods_forbidden, client):
    page = client.get("/nodes/").content.decode()
    row = page.split('data-node="gpu-a"')[1].split("</tr>")[0]
    assert "— / 8" in row and "— / 16" in row  # GPUs and cpu: requested unknown / allocatable
    assert "0 / 16" not in row and "0 / 8" not in row
    cells = row.split('<td class="num">')
    assert cells[1].startswith("—"), cells[1][:20]  # the pods count


def test_node_page_shows_requested_and_free_unknown(pods_forbidden, client):
    page = client.get("/nodes/gpu-a/").content.decode()
    usage = page.split("data-usage")[1].split("</table>")[0]
    cpu = usage.split(">cpu<")[1].split("</tr>")[0]
    assert "16" in cpu and "—" in cpu
    assert ">0<" not in cpu.replace(" ", "")


def test_what_would_fit_is_unknown_without_pods(pods_forbidden, client):
    page = client.get(f"/jobs/{NS}/tight/").content.decode()
    fit = page.split("data-node-fit")[1].split("</section>")[0]
    assert "Pods cannot be read, so what the nodes have free is unknown." in text(fit)
    assert "data-fit-slots" not in fit and "data-fit-tasks" not in fit
    assert "3 Insufficient cpu" in text(fit)  # the scheduler's own words stay
