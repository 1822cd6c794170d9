"""A Warning stamped ahead of the cluster's clock (a writer's clock ahead, a hand-written Event)
among the ones the scheduler keeps writing: the merged warning row shows the current message, the
one last seen on time, not the one from the future; the row keeps its "(clock skew?)" mark, and
once the clock reaches the skewed time, the skewed message is the current one."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import fragment_url, text
from tests.pages.test_folded_warnings import _ago, _create

JOBS = ("batch.volcano.sh", "jobs")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
QUEUES = ("scheduling.volcano.sh", "queues")
EVENTS = ("", "events")
VIEWS = {"jobs": "jobs", "podgroups": "podgroups", "queues": "queues", "events": "events"}

CPU = "0/{n} nodes are available: {n} Insufficient cpu."
CURRENT = CPU.format(n=5)
FUTURE = CPU.format(n=9)
# (message, count, seconds ago; negative: ahead of the clock)
WARNINGS = [(CPU.format(n=3), 40, 600), (CURRENT, 6, 30), (FUTURE, 1, -3600)]


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=29, name="skewed") as pair:
        yield pair


def _pending_job(pair, ns: str) -> None:
    """A pending Job ``j`` in ``ns`` whose PodGroup carries the WARNINGS (one of them from the future)."""
    cluster, _cache = pair
    _create(
        pair, QUEUES, {"metadata": {"name": f"q-{ns}"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
    )
    uid = f"uid-{ns}"
    _create(
        pair,
        JOBS,
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": ns, "uid": uid, "creationTimestamp": _ago(cluster, 3600)},
            "spec": {"queue": f"q-{ns}", "minAvailable": 2, "tasks": [{"name": "worker", "replicas": 2}]},
            "status": {"state": {"phase": "Pending"}},
        },
        ns,
    )
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "j",
        "uid": uid,
        "controller": True,
    }
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "j-pg", "namespace": ns, "uid": f"pg-{uid}", "ownerReferences": [owner]},
        "spec": {"minMember": 2, "queue": f"q-{ns}"},
        "status": {"phase": "Inqueue"},
    }
    _create(pair, PODGROUPS, pg, ns)
    for i, (message, count, seconds) in enumerate(WARNINGS):
        ref = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "name": "j-pg",
            "namespace": ns,
        }
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"j-pg.{i}", "namespace": ns},
            "involvedObject": {**ref, "uid": f"pg-{uid}"},
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": message,
            "count": count,
            "firstTimestamp": _ago(cluster, seconds + 30),
            "lastTimestamp": _ago(cluster, seconds),
        }
        _create(pair, EVENTS, event, ns)


def _row(html: str, anchor: str, tag: str = "tr") -> str:
    """The first ``tag`` element of ``html`` that names ``anchor`` (no nested ones of its kind)."""
    for part in re.findall(rf"<{tag}\b.*?</{tag}>", html, re.S):
        if anchor in part:
            return part
    raise AssertionError(f"{anchor} not in the page")


def _events_card(page: str) -> str:
    return page.split('id="frag-events"', 1)[1].split("</section>", 1)[0]


def _no_future(shown: str, where: str) -> None:
    assert CURRENT in shown, where
    assert FUTURE not in shown.split("variant", 1)[0], where


def test_the_merged_warning_shows_the_message_last_seen_on_time(skewed, client):
    _pending_job(skewed, "skew-a")
    overview = _events_card(client.get("/").content.decode())
    row = _row(overview, "skew-a")
    _no_future(row, "overview")
    assert "(clock skew?)" in row and re.search(r'<td class="num">47</td>', row), row
    kiosk = client.get("/kiosk/").content.decode()
    item = _row(kiosk, "skew-a/j-pg", "li")
    _no_future(text(item), "kiosk")
    page = client.get("/jobs/skew-a/j/").content.decode()
    why = page.split('id="why-title"', 1)[1].split("</section>", 1)[0]
    head = why.split("<details", 1)[0]
    assert CURRENT in head and FUTURE not in head, head
    assert "(clock skew?)" in why and "47 times" in text(why)
    # The variants list the current message first; the one from the future is still there.
    variants = re.findall(r"<li data-variant><span class=\"msg\">([^<]*)</span>", why)
    assert variants[0] == CURRENT and FUTURE in variants, variants
    table = _events_card(page)
    assert CURRENT in _row(table, "Insufficient cpu").split("<details", 1)[0]


def test_once_the_clock_reaches_it_the_skewed_message_is_current(skewed, client):
    from tests.pages.helpers import check_fragment

    cluster, _cache = skewed
    _pending_job(skewed, "skew-b")
    page = client.get("/jobs/skew-b/j/").content.decode()
    before = check_fragment(client, page, "events")
    assert CURRENT in _row(before, "Insufficient cpu").split("<details", 1)[0]
    cluster.clock.advance(3600)
    # The fragment's version holds which message is current: the page's copy is stale now.
    stale = client.get(fragment_url(page, "events"), headers={"HX-Request": "true"})
    assert stale.status_code == 200 and FUTURE in stale.content.decode()
    page = client.get("/jobs/skew-b/j/").content.decode()
    after = check_fragment(client, page, "events")
    assert FUTURE in _row(after, "Insufficient cpu").split("<details", 1)[0]
    assert FUTURE in _row(_events_card(client.get("/").content.decode()), "skew-b").split("variant", 1)[0]


def test_the_overview_keeps_the_current_message_after_many_newer_warnings(skewed, client):
    """The overview reads only the newest few hundred Warnings: the one from the future stays
    among them while the current one leaves; the row still folds every Warning of its object."""
    from tests.pages.helpers import kind

    cluster, cache = skewed
    _pending_job(skewed, "skew-c")
    ns = "skew-noise"
    if cluster.store.try_get(kind("", "namespaces"), None, ns) is None:
        cluster.store.create(kind("", "namespaces"), {"metadata": {"name": ns}})
    for i in range(320):
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"noise.{i}", "namespace": ns},
            "involvedObject": {
                "kind": "PodGroup",
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "namespace": ns,
                "name": f"pg{i}",
            },
            "type": "Warning",
            "reason": "BackOff",
            "message": "Back-off restarting failed container",
            "count": 1,
            "lastTimestamp": _ago(cluster, 5),
        }
        cluster.store.create(kind(*EVENTS), event, ns, replay=True)
    cache.wait_for(lambda s: s.events.get(ns, "noise.319") is not None, timeout=10)
    overview = _events_card(client.get("/").content.decode())
    row = _row(overview, "skew-c")
    _no_future(row, "overview")
    assert re.search(r'<td class="num">47</td>', row), row
    kiosk = client.get("/kiosk/").content.decode()
    _no_future(text(_row(kiosk, "skew-c/j-pg", "li")), "kiosk")
