"""The headroom on "Why is this Job pending?" follows the scheduler's enqueue rule: per resource,
capability − allocated − the minResources reserved by Inqueue PodGroups, for the Job's queue and
for every ancestor that sets a capability (REFERENCE.md §2 phases, §3 allocated summed into parents,
§5 "queue resource quota insufficient"), and names the queue and the PodGroups that bind.

End to end against the simulated cluster (the demo scenario, and a hierarchy built here whose
scheduler decides), plus unit tests of the pure functions on odd shapes."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest

from dashboard.presenters.pending import Finding, findings
from dashboard.presenters.queues import GangRoom, gang_room
from dashboard.volcano import queues as derive_queues
from dashboard.volcano.pending import PendingContext, why_pending
from dashboard.volcano.quantities import format_quantity, quantity
from tests.pages.helpers import text


def _queue(
    name: str,
    parent: str = "",
    capability: dict | None = None,
    allocated: dict | None = None,
    status: bool = True,
) -> dict:
    spec: dict = {"weight": 1}
    if parent:
        spec["parent"] = parent
    if capability is not None:
        spec["capability"] = capability
    q: dict = {"kind": "Queue", "metadata": {"name": name, "resourceVersion": "1"}, "spec": spec}
    if status:
        q["status"] = {"state": "Open", **({"allocated": allocated} if allocated is not None else {})}
    return q


def _pg(name: str, queue: str, phase: str | None, min_resources: dict | None = None, ns: str = "ml") -> dict:
    pg: dict = {
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": "2"},
        "spec": {"queue": queue, "minMember": 1},
    }
    if min_resources is not None:
        pg["spec"]["minResources"] = min_resources
    if phase is not None:
        pg["status"] = {"phase": phase}
    return pg


class World:
    """Queues and PodGroups with the lookups the pages use (snapshot indexes, here dicts)."""

    def __init__(self, queues: list[dict], pgs: list[dict]):
        self.queues = {q["metadata"]["name"]: q for q in queues}
        self.pgs = pgs

    def get(self, name: str):
        return self.queues.get(name)

    def children(self, name: str):
        return [
            q
            for q in self.queues.values()
            if name != q["metadata"]["name"] and ((q.get("spec") or {}).get("parent") or "root") == name
        ]

    def inqueue(self, name: str):
        return [
            g
            for g in self.pgs
            if (g.get("spec") or {}).get("queue") == name
            and (g.get("status") or {}).get("phase") == "Inqueue"
        ]

    def room(self, queue: str, pg: dict) -> GangRoom:
        return gang_room(
            self.queues[queue],
            pg,
            queue_lookup=self.get,
            queue_children=self.children,
            inqueue_podgroups=self.inqueue,
        )

    def findings(self, queue: str, pg: dict) -> list[Finding]:
        ctx = PendingContext(
            None,
            pg,
            self.queues[queue],
            queue,
            queue_lookup=self.get,
            queue_children=self.children,
            inqueue_podgroups=self.inqueue,
        )
        return findings(why_pending(ctx))


# --- the pure rule ----------------------------------------------------------------------------


def test_inqueue_reservations_of_other_podgroups_count_and_the_own_one_does_not():
    q = _queue("prod", capability={"cpu": "192"}, allocated={"cpu": "90250m"})
    wide = _pg("wide", "prod", "Inqueue", {"cpu": "96", "requests.cpu": "96", "count/pods": "1"})
    running = _pg("run", "prod", "Running", {"cpu": "50"})  # in allocated already
    pending = _pg("other", "prod", "Pending", {"cpu": "50"})  # not admitted: reserves nothing
    me = _pg("me", "prod", "Inqueue", {"cpu": "12"})
    w = World([_queue("root"), q], [wide, running, pending, me])
    rooms = derive_queues.queue_room({"cpu": Decimal(12)}, [q], inqueue=w.inqueue, exclude=("ml", "me"))
    (room,) = rooms["cpu"]
    assert (room.capability, room.allocated, room.reserved) == (192, Decimal("90.25"), 96)
    assert room.reservers == (("ml", "wide"),)
    assert room.left == Decimal("5.75")
    # Seen from "wide" itself, only "me" reserves.
    rooms = derive_queues.queue_room({"cpu": Decimal(96)}, [q], inqueue=w.inqueue, exclude=("ml", "wide"))
    assert rooms["cpu"][0].reserved == 12 and rooms["cpu"][0].reservers == (("ml", "me"),)


def test_an_ancestor_counts_its_whole_subtree_and_its_status_allocated():
    parent = _queue("small-parent", "root", {"cpu": "6"}, allocated={"cpu": "4"})
    child = _queue("big-child", "small-parent", {"cpu": "100"}, allocated={"cpu": "0"})
    sibling = _queue("sibling", "small-parent", allocated={"cpu": "4"})
    sib_pg = _pg("sib-wait", "sibling", "Inqueue", {"cpu": "1"}, ns="other")
    w = World([_queue("root"), parent, child, sibling], [sib_pg])
    chain = derive_queues.queue_ancestry(child, w.get)
    rooms = derive_queues.queue_room({"cpu": Decimal(4)}, chain, children=w.children, inqueue=w.inqueue)
    own, anc = rooms["cpu"]
    assert (own.queue, own.depth, own.left) == ("big-child", 0, 100)
    assert (anc.queue, anc.depth, anc.allocated, anc.reserved) == ("small-parent", 1, 4, 1)
    assert anc.reservers == (("other", "sib-wait"),)
    assert derive_queues.binding_room(rooms["cpu"]) is anc and anc.left == 1


def test_a_parent_without_status_allocated_sums_its_children():
    parent = _queue("p", "root", {"cpu": "10", "memory": "10Gi"}, status=False)
    a = _queue("a", "p", allocated={"cpu": "3", "memory": "1Gi"})
    b = _queue("b", "p", allocated={"cpu": "2500m"})  # no memory key: 0
    deeper = _queue("c", "b", allocated={"cpu": "500m"})  # under b, which reports its own sum
    w = World([_queue("root"), parent, a, b, deeper], [])
    rooms = derive_queues.queue_room({"cpu": Decimal(1), "memory": Decimal(1)}, [parent], children=w.children)
    assert rooms["cpu"][0].allocated == Decimal("5.5")
    assert rooms["memory"][0].allocated == 2**30


@pytest.mark.parametrize(
    "value",
    [None, "", "abc", "-1", "1e1000000", [], {"x": 1}, True, "1.2.3"],
)
def test_odd_quantities_and_shapes_never_raise_and_are_never_counted(value):
    q = _queue("q", capability={"cpu": value, "memory": "1Gi"}, allocated={"cpu": value, "memory": value})
    odd = [
        _pg("no-status", "q", None, {"cpu": "1"}),
        _pg("no-min", "q", "Inqueue"),
        _pg("odd", "q", "Inqueue", {"cpu": value, "memory": value}),
        {"kind": "PodGroup", "metadata": None, "spec": None, "status": {"phase": "Inqueue"}},
        {"status": "Inqueue"},
        "not a dict",
    ]
    w = World([_queue("root"), q], odd)  # type: ignore[list-item]
    w.inqueue = lambda name: odd  # every odd shape, whatever its phase  # type: ignore[method-assign]
    needs = {"cpu": Decimal(1), "memory": Decimal(1)}
    rooms = derive_queues.queue_room(needs, [q], inqueue=w.inqueue, children=w.children)
    for room in rooms["cpu"] + rooms["memory"]:
        assert room.reserved == 0 and room.reservers == ()
    room = w.room("q", _pg("me", "q", "Pending", {"cpu": "1", "memory": "1"}))
    for row in room.rows:
        assert isinstance(row["left"], str) and isinstance(row["allocated"], str)
    assert not any(r["short"] for r in room.rows if r["resource"] == "cpu")
    # A PodGroup without minResources needs nothing: no rows, no finding.
    assert w.room("q", _pg("bare", "q", "Pending")).rows == []
    assert gang_room(None, None).rows == [] and gang_room(_queue("q"), {"spec": None}).rows == []


def test_a_child_queue_cycle_ends_the_walk():
    a = _queue("a", "b", {"cpu": "4"})  # no status at all
    b = _queue("b", "a", {"cpu": "4"})
    w = World([a, b], [_pg("x", "b", "Inqueue", {"cpu": "1"})])
    rooms = derive_queues.queue_room(
        {"cpu": Decimal(1)}, derive_queues.queue_ancestry(a, w.get), children=w.children, inqueue=w.inqueue
    )
    assert [(r.queue, r.reserved) for r in rooms["cpu"]] == [("a", 1), ("b", 1)]


# --- the page's words -------------------------------------------------------------------------


def test_the_finding_names_the_queue_the_reservation_and_the_numbers():
    q = _queue("prod-training", "root", {"cpu": "192"}, allocated={"cpu": "90250m"})
    pgs = [_pg(f"wide-{i}", "prod-training", "Inqueue", {"cpu": "24"}) for i in range(4)]
    w = World([_queue("root"), q], pgs)
    me = _pg("me", "prod-training", "Pending", {"cpu": "12", "memory": "1Gi"})
    (finding,) = [f for f in w.findings("prod-training", me) if f.text.startswith("No room")]
    assert finding.text == "No room in queue “prod-training” for the gang's minimum resources:"
    assert finding.items == [
        "cpu: needs 12, 5.75 left (capability 192, allocated 90.25, reserved 96 by 4 Inqueue PodGroups)"
    ]
    assert finding.podgroups == [("ml", "wide-0"), ("ml", "wide-1"), ("ml", "wide-2")]
    assert finding.podgroups_more == 1
    rows = w.room("prod-training", me).rows
    cpu = next(r for r in rows if r["resource"] == "cpu")
    assert (cpu["reserved"], cpu["left"], cpu["short"], cpu["binding"]) == ("96", "5.75", True, True)
    memory = next(r for r in rows if r["resource"] == "memory")
    assert (memory["capability"], memory["left"], memory["short"]) == ("", "", False)  # no limit


def test_the_parent_is_named_when_it_binds():
    parent = _queue("small-parent", "root", {"cpu": "6"}, allocated={"cpu": "4"})
    child = _queue("big-child", "small-parent", {"cpu": "100"}, allocated={"cpu": "0"})
    sibling = _queue("sibling", "small-parent", allocated={"cpu": "4"})
    w = World([_queue("root"), parent, child, sibling], [])
    findings = w.findings("big-child", _pg("me", "big-child", "Pending", {"cpu": "4"}))
    (finding,) = [f for f in findings if f.text.startswith("No room")]
    assert "parent queue “small-parent”" in finding.text and "“big-child”" in finding.text
    assert finding.items == ["cpu: needs 4, 2 left (capability 6, allocated 4)"]
    assert finding.podgroups == []
    # A grandparent is an ancestor.
    leaf = _queue("leaf", "big-child", allocated={"cpu": "0"})
    w = World([_queue("root"), parent, child, sibling, leaf], [])
    findings = w.findings("leaf", _pg("me", "leaf", "Pending", {"cpu": "4"}))
    assert any(f.text.startswith("No room in ancestor queue “small-parent”") for f in findings)


def test_a_gang_above_a_capability_is_a_never_finding_not_a_lack_of_room():
    parent = _queue("small-parent", "root", {"cpu": "6"}, allocated={"cpu": "4"})
    child = _queue("big-child", "small-parent", {"cpu": "100"}, allocated={"cpu": "0"})
    w = World([_queue("root"), parent, child], [])
    findings = w.findings("big-child", _pg("me", "big-child", "Pending", {"cpu": "8"}))
    assert findings[0].text.startswith("This will never start")
    assert not any(f.text.startswith("No room") for f in findings)


# --- end to end: the demo scenario (repro A) ----------------------------------------------------


def _store(cluster, plural: str, namespace=None) -> list[dict]:
    from dashboard.sim.kinds import kind_for

    return cluster.store.list(kind_for("scheduling.volcano.sh", plural), namespace)[0]


def test_demo_pytorch_job_04_names_the_inqueue_reservation(client, demo_cluster, demo_cache):
    pgs = _store(demo_cluster, "podgroups", "platform")
    mine = next(g for g in pgs if g["metadata"]["name"].startswith("pytorch-job-04-"))
    wide = next(g for g in pgs if g["metadata"]["name"].startswith("wide-pod-"))
    assert mine["status"]["phase"] == "Pending" and wide["status"]["phase"] == "Inqueue"
    assert wide["spec"]["queue"] == mine["spec"]["queue"] == "prod-training"
    queue = next(q for q in _store(demo_cluster, "queues") if q["metadata"]["name"] == "prod-training")
    cap = quantity(queue["spec"]["capability"]["cpu"])
    alloc = quantity(queue["status"]["allocated"]["cpu"])
    reserved = quantity(wide["spec"]["minResources"]["cpu"])
    need = quantity(mine["spec"]["minResources"]["cpu"])
    # The scheduler turned it down for cpu, and the arithmetic says why (no sleep: the cluster is
    # the module's demo, settled).
    assert need > cap - alloc - reserved and need <= cap - alloc
    cond = next(c for c in mine["status"]["conditions"] if c["type"] == "Unschedulable")
    assert "queue resource quota insufficient: insufficient cpu" in cond["message"]

    page = client.get("/jobs/platform/pytorch-job-04/").content.decode()
    body = text(page)
    q = format_quantity
    left = q("cpu", cap - alloc - reserved)
    assert "No room in queue “prod-training” for the gang's minimum resources:" in body
    assert (
        f"cpu: needs {q('cpu', need)}, {left} left (capability {q('cpu', cap)}, "
        f"allocated {q('cpu', alloc)}, reserved {q('cpu', reserved)} by 1 Inqueue PodGroup)"
    ) in body
    assert "Reserved by the Inqueue PodGroup:" in body
    assert f'href="/podgroups/platform/{html.escape(wide["metadata"]["name"])}/"' in page
    # The old, wrong figure (capability − allocated alone) is gone from the table.
    assert f">{format_quantity('cpu', cap - alloc)}<" not in page
    assert "Reserved (Inqueue)" in body
    # The PodGroup's own page says the same.
    pg_page = text(client.get(f"/podgroups/platform/{mine['metadata']['name']}/").content.decode())
    assert "No room in queue “prod-training”" in pg_page


def test_demo_the_inqueue_podgroup_does_not_compete_with_itself(client, demo_cluster, demo_cache):
    from dashboard.views.rows import gang_room as _gang_room

    wide = next(
        g
        for g in _store(demo_cluster, "podgroups", "platform")
        if g["metadata"]["name"].startswith("wide-pod-")
    )
    snap = demo_cache.snapshot()
    pg = snap.podgroups.get("platform", wide["metadata"]["name"])
    room = _gang_room(snap, snap.queues.get(None, "prod-training"), pg)
    assert room.rows and all(r["reservers"] == [] and r["reserved"] == "" for r in room.rows)
    body = text(client.get(f"/podgroups/platform/{wide['metadata']['name']}/").content.decode())
    assert "Queue headroom against the gang" in body and "Reserved by the Inqueue" not in body


# --- end to end: a hierarchy decided by the simulated scheduler (repro B) -----------------------


@pytest.fixture
def hierarchy(sim_cluster, tmp_path):
    """small-parent (cpu 6) above big-child (cpu 100) and sibling; a Running Job in sibling uses 4
    cpu; a Job in big-child needing 4 cpu stays Pending."""
    from dashboard.sim.kinds import JOB, NODE, PODGROUP, QUEUE
    from tests.pages.conftest import installed_cache
    from tests.sim_behaviour.helpers import job, node, phase, queue, run_until, task

    c = sim_cluster
    for i in range(2):
        c.store.create(NODE, node(f"node-{i}", cpu=16))
    c.store.create(QUEUE, queue("small-parent", capability={"cpu": "6"}))
    c.store.create(QUEUE, queue("big-child", parent="small-parent", capability={"cpu": "100"}))
    c.store.create(QUEUE, queue("sibling", parent="small-parent"))
    c.advance(1)
    run = {"sim.volcano-ui/behaviour": "run"}
    c.store.create(JOB, job("user", [task("main", 4, cpu="1", annotations=run)], queue_name="sibling"))
    run_until(c, lambda: phase(c, "user") == "Running", 60)
    waiting = c.store.create(JOB, job("needs-four", [task("main", 4, cpu="1")], queue_name="big-child"))
    c.advance(5)
    pg = c.store.get(PODGROUP, "default", f"needs-four-{waiting['metadata']['uid']}")
    with installed_cache(c, tmp_path) as cache:

        def synced(s) -> bool:
            parent = s.queues.get(None, "small-parent") or {}
            return (
                s.podgroups.get("default", pg["metadata"]["name"]) is not None
                and parent.get("status", {}).get("allocated", {}).get("cpu") == "4"
            )

        cache.wait_for(synced, timeout=10)
        yield c, pg


def test_hierarchy_page_names_the_parent_queue(client, hierarchy):
    cluster, pg = hierarchy
    assert pg["status"]["phase"] == "Pending"
    cond = next(c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable")
    assert "queue resource quota insufficient: insufficient cpu" in cond["message"]
    page = client.get("/jobs/default/needs-four/").content.decode()
    body = text(page)
    assert "No room in parent queue “small-parent”" in body
    assert "cpu: needs 4, 2 left (capability 6, allocated 4)" in body
    assert 'href="/queues/small-parent/"' in page
    assert "data-binding" in page
    # The never-start finding is not claimed: 4 ≤ 6.
    assert "This will never start" not in body


def test_hierarchy_a_sibling_reservation_counts_at_the_parent(client, hierarchy):
    """An Inqueue PodGroup in the sibling queue reserves under small-parent too: written as the
    scheduler would leave it (controllers' view), and read back through the cache."""
    from dashboard.kube import get_cluster_cache
    from dashboard.sim.kinds import PODGROUP
    from tests.pages.helpers import fragment_url

    cluster, pg = hierarchy
    htmx = {"HX-Request": "true"}
    frag = fragment_url(client.get("/jobs/default/needs-four/").content.decode(), "status")
    assert client.get(frag, headers=htmx).status_code == 204
    held = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "sib-held", "namespace": "default"},
        "spec": {
            "queue": "sibling",
            "minMember": 1,
            "minResources": {"cpu": "1500m", "requests.cpu": "1500m"},
        },
        "status": {"phase": "Inqueue"},
    }
    cluster.store.create(PODGROUP, held, replay=True)
    get_cluster_cache().wait_for(lambda s: s.podgroups.get("default", "sib-held") is not None, timeout=10)
    # No queue changed, only a PodGroup elsewhere in the tree: the page's poll still re-renders.
    resp = client.get(frag, headers=htmx)
    assert resp.status_code == 200 and "reserved 1.5 by 1 Inqueue PodGroup" in text(resp.content.decode())
    body = text(client.get("/jobs/default/needs-four/").content.decode())
    assert "cpu: needs 4, 500m left (capability 6, allocated 4, reserved 1.5 by 1 Inqueue PodGroup)" in body
    assert "Reserved by the Inqueue PodGroup: sib-held" in body


def test_domain_why_pending_uses_the_same_rule():
    parent = _queue("small-parent", "root", {"cpu": "6"}, allocated={"cpu": "4"})
    child = _queue("big-child", "small-parent", {"cpu": "100"}, allocated={"cpu": "0"})
    sibling = _queue("sibling", "small-parent", allocated={"cpu": "4"})
    held = _pg("held", "sibling", "Inqueue", {"cpu": "1"})
    w = World([_queue("root"), parent, child, sibling], [held])
    me = _pg("me", "big-child", "Pending", {"cpu": "2"})
    from dashboard.volcano.pending import PendingContext, why_pending

    ctx = PendingContext(
        None,
        me,
        child,
        "big-child",
        queue_lookup=w.get,
        queue_children=w.children,
        inqueue_podgroups=w.inqueue,
    )
    (room,) = [f for f in why_pending(ctx) if f.kind == "no_room"]
    assert room.values == {"queue": "small-parent", "depth": 1, "own": "big-child"}
    (row,) = room.rows
    assert (row.resource, row.need, row.left, row.reserved) == ("cpu", 2, 1, 1)
    assert row.reservers == (("ml", "held"),)
    # Without the lookups only the queue itself is judged: 100 left, nothing to say.
    alone = PendingContext(None, me, child, "big-child")
    assert not [f for f in why_pending(alone) if f.kind == "no_room"]


def test_a_very_deep_tree_renders():
    """Any object the CRD admits renders: a 3,000-deep chain of queues without status.allocated."""
    queues = [_queue("q0", "root", {"cpu": "4"}, status=False)]
    queues += [_queue(f"q{i}", f"q{i - 1}", status=False) for i in range(1, 3000)]
    queues[-1]["status"] = {"allocated": {"cpu": "3"}}
    w = World([_queue("root"), *queues], [_pg("held", "q2999", "Inqueue", {"cpu": "1"})])
    children = {q["metadata"]["name"]: [] for q in queues}
    for q in queues[1:]:
        children[q["spec"]["parent"]].append(q)
    w.children = lambda name: children.get(name, [])  # type: ignore[method-assign]
    findings = w.findings("q2999", _pg("me", "q2999", "Pending", {"cpu": "1"}))
    (finding,) = [f for f in findings if f.text.startswith("No room")]
    assert "ancestor queue “q0”" in finding.text
    assert finding.items == [
        "cpu: needs 1, 0 left (capability 4, allocated 3, reserved 1 by 1 Inqueue PodGroup)"
    ]


def test_demo_overview_attention_names_the_reservation_too(client, demo_cluster, demo_cache):
    body = text(client.get("/").content.decode())
    section = body.split("Needs attention", 1)[1].split("All pending Jobs", 1)[0]
    # The Job's first finding, right after its wait time.
    m = re.search(r"pytorch-job-04 platform waiting \S+ (No room in queue “prod-training”.*?\))", section)
    assert m, section
    assert "reserved 96 by 1 Inqueue PodGroup" in m.group(1)
