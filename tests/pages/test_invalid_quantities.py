"""Queue quantities that are no usable amount (unparsable or negative, e.g. ``nvidia.com/gpu: abc``,
``memory: -1Gi``) are shown verbatim as invalid, with no percentage and no bar, on every page that
draws Queue resources. Uses the in-memory ClusterCache filled with Queue objects as the CRD admits
them (ResourceList values are strings)."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from dashboard.presenters.queues import gang_room
from dashboard.presenters.resources import queue_resource_bars
from tests.pages.helpers import text

QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "odd", "uid": "u-odd", "resourceVersion": "5"},
    "spec": {
        "weight": 1,
        "capability": {"cpu": "4", "memory": "-1Gi", "nvidia.com/gpu": "abc"},
        "deserved": {"example.com/fpga": "2"},
        "guarantee": {"resource": {"example.com/fpga": "x1"}},
    },
    "status": {
        "state": "Open",
        "allocated": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "2", "example.com/fpga": "1"},
    },
}


@pytest.fixture(autouse=True)
def english():
    # Presenters translate at call time; a page rendered in another language earlier in this
    # thread must not change the words compared below.
    with translation.override("en"):
        yield


@pytest.fixture
def cache(memory_cache):
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(kind).mark_synced()
    memory_cache.store("queues").upsert(QUEUE)
    return memory_cache


def test_bars_mark_invalid_values_and_compute_nothing_from_them():
    bars = {b.name: b for b in queue_resource_bars(QUEUE)}
    gpu, mem, cpu, fpga = bars["nvidia.com/gpu"], bars["memory"], bars["cpu"], bars["example.com/fpga"]
    assert gpu.capability == "abc (not a quantity)" and mem.capability == "-1Gi (negative)"
    assert fpga.guarantee == "x1 (not a quantity)"
    for bar in (gpu, mem, fpga):
        assert bar.invalid and bar.pct is None and bar.fill == 0 and not bar.over
        assert bar.capability_at is None and bar.deserved_at is None
    assert not cpu.invalid and cpu.pct == 50 and cpu.pct_of == "capability"


@pytest.mark.parametrize("url", ["/queues/odd/", "/queues/", "/"])
def test_pages_show_invalid_quantities_without_percentages(client, cache, url):
    resp = client.get(url)
    assert resp.status_code == 200
    page = text(resp.content.decode())
    # The only usage percentage is cpu's 50% (100% is in the legends): none for invalid values.
    assert [x for x in re.findall(r"\d+%", page) if x != "100%"] == ["50%"], re.findall(r".{40}\d+%", page)
    if url != "/":  # the overview's table shows allocated and % only (the capability in a title)
        assert "abc (not a quantity)" in page and "-1Gi (negative)" in page
        assert "50% of capability" in page


def test_headroom_ignores_an_invalid_capability():
    pg = {"spec": {"minResources": {"nvidia.com/gpu": "4", "requests.memory": "2Gi"}}}
    rows = {r["resource"]: r for r in gang_room(QUEUE, pg).rows}
    assert rows["nvidia.com/gpu"]["capability"] == "abc (not a quantity)"
    assert rows["memory"]["capability"] == "-1Gi (negative)"
    assert not rows["nvidia.com/gpu"]["short"] and not rows["memory"]["short"]
    assert rows["memory"]["left"] == rows["nvidia.com/gpu"]["left"] == "?"
