"""A queue a little over its deserved share (or capability) is over, whatever a whole percentage
would round it to: marked, and its percentage never reads 100 or less."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dashboard.volcano.quantities import over_share, percent_over_text
from tests.pages.helpers import kind, text

QUEUES = ("scheduling.volcano.sh", "queues")


@pytest.fixture(scope="module")
def overshoot(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=5, name="overshoot") as (cluster, cache):
        queues = {
            # 56250m of a deserved 56 cores: 100.45 %, a whole percent would say 100.
            "research-nlp": ({"deserved": {"cpu": "56"}}, {"cpu": "56250m"}),
            # One millicore over a capability of 100 cores: 100.001 %.
            "tight-cap": ({"capability": {"cpu": "100"}}, {"cpu": "100001m"}),
            "exactly-full": ({"deserved": {"cpu": "8"}}, {"cpu": "8"}),
        }
        for name, (spec, allocated) in queues.items():
            obj = {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": {"weight": 1, **spec},
                "status": {"state": "Open", "allocated": allocated},
            }
            cluster.store.create(kind(*QUEUES), obj, None, replay=True)
        cache.wait_for(lambda s: all(s.queues.get(None, n) is not None for n in queues), timeout=10)
        yield cluster, cache


def _cpu_bar(page: str) -> str:
    return page.split('data-resource="cpu"')[1].split("</div>")[0]


def test_a_small_overshoot_of_deserved_is_over_and_never_reads_100(overshoot, client):
    page = client.get("/queues/research-nlp/").content.decode()
    assert "100.4% of deserved" in text(page), text(_cpu_bar(page))
    assert "is-over" in page
    listing = client.get("/queues/").content.decode()
    row = listing.split('data-queue="research-nlp"')[1].split("</tr>")[0]
    assert "100.4%" in text(row) and "is-over" in row


def test_one_millicore_over_capability_reads_more_than_100(overshoot, client):
    page = client.get("/queues/tight-cap/").content.decode()
    assert ">100% of capability" in text(page)
    assert "is-over" in page


def test_exactly_the_deserved_share_is_not_over(overshoot, client):
    page = client.get("/queues/exactly-full/").content.decode()
    assert "100% of deserved" in text(page) and "is-over" not in page


def test_over_share_compares_exact_quantities():
    assert over_share(Decimal("56.25"), Decimal("56"))
    assert not over_share(Decimal("56"), Decimal("56"))
    assert percent_over_text(Decimal("56.25"), Decimal("56")) == "100.4"
    assert percent_over_text(Decimal("100.001"), Decimal("100")) == ">100"
    assert percent_over_text(Decimal("8"), Decimal("8")) == ""
    assert percent_over_text(Decimal("1"), Decimal("0")) == ""
