"""dashboard.volcano.queues: the hierarchy, capability limits and room."""

from __future__ import annotations

from decimal import Decimal

from dashboard.volcano import queues as qs
from tests.volcano.conftest import shared_yaml


def _queue(name, parent=None, capability=None, allocated=None, deserved=None):
    spec = {}
    if parent is not None:
        spec["parent"] = parent
    if capability is not None:
        spec["capability"] = capability
    if deserved is not None:
        spec["deserved"] = deserved
    q = {"metadata": {"name": name}, "spec": spec}
    if allocated is not None:
        q["status"] = {"allocated": allocated}
    return q


def _pg(name, queue, phase, min_resources):
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"queue": queue, "minResources": min_resources},
        "status": {"phase": phase},
    }


def test_parents():
    assert qs.parent_name(_queue("root")) is None
    assert qs.parent_name(_queue("a")) == "root"  # empty parent means root
    assert qs.parent_name(_queue("a", "b")) == "b"
    assert qs.effective_parent(_queue("a"), {"root"}) == "root"
    assert qs.effective_parent(_queue("a"), set()) == ""  # no root Queue: it is a top of its own
    assert qs.queue_of({"spec": {"queue": ""}}) == "default" and qs.queue_of({"spec": {"queue": "q"}}) == "q"


def test_ancestry_stops_at_cycles_and_missing_queues():
    world = {n: _queue(n, p) for n, p in [("a", "b"), ("b", "a")]}
    assert [q["metadata"]["name"] for q in qs.queue_ancestry(world["a"], world.get)] == ["a", "b"]
    world = {"root": _queue("root"), "x": _queue("x")}
    assert [q["metadata"]["name"] for q in qs.queue_ancestry(world["x"], world.get)] == ["x", "root"]
    assert qs.queue_ancestry(world["x"]) == [world["x"]] and qs.queue_ancestry(None, world.get) == []


def test_tree_of_the_hierarchical_example():
    queues = [q for q in shared_yaml("examples/hierarchical-jobs-queues.yaml") if q.get("kind") == "Queue"]
    names = {q["metadata"]["name"] for q in queues}
    if "root" not in names:
        queues.append(_queue("root"))
    rows = qs.queue_tree(queues)
    assert len(rows) == len(queues) and rows[0].queue["metadata"]["name"] == "root"
    assert not [r for r in rows if r.problem]
    depth = {r.queue["metadata"]["name"]: r.depth for r in rows}
    for q in queues:
        parent = qs.parent_name(q)
        if parent is not None:
            assert depth[q["metadata"]["name"]] == depth[parent] + 1


def test_tree_problems():
    rows = qs.queue_tree(
        [
            _queue("root"),
            _queue("self", "self"),
            _queue("orphan", "gone"),
            _queue("c1", "c2"),
            _queue("c2", "c1"),
        ]
    )
    problems = {r.queue["metadata"]["name"]: (r.problem, r.cycle) for r in rows}
    assert problems["self"] == ("self_parent", ("self", "self"))
    assert problems["orphan"] == ("missing_parent", ())
    assert problems["c1"] == ("cycle", ("c1", "c2", "c1"))
    assert [r.queue["metadata"]["name"] for r in rows] == ["root", "c1", "c2", "orphan", "self"]


def test_a_deep_chain_needs_no_recursion():
    chain = [_queue("root")] + [_queue(f"q{i}", "root" if i == 0 else f"q{i - 1}") for i in range(3000)]
    rows = qs.queue_tree(chain)
    assert rows[-1].depth == 3000


def test_capability_limits_take_the_tightest_ancestor():
    world = {"root": _queue("root", capability={"cpu": "100"}), "eng": _queue("eng", capability={"cpu": "8"})}
    leaf = _queue("leaf", "eng", capability={"cpu": "abc"})  # not an amount: ignored
    (lim,) = qs.capability_limits({"cpu": Decimal(10)}, qs.queue_ancestry(leaf, world.get))
    assert (lim.queue, lim.capability, lim.need) == ("eng", 8, 10)
    assert qs.capability_limits({"cpu": Decimal(8)}, qs.queue_ancestry(leaf, world.get)) == []


def test_room_is_capability_minus_allocated_minus_inqueue_reservations():
    parent = _queue("p", "root", capability={"cpu": "6"}, allocated={"cpu": "4"})
    child = _queue("c", "p", capability={"cpu": "100"}, allocated={"cpu": "0"})
    sibling = _queue("s", "p", allocated={"cpu": "1"})
    world = {q["metadata"]["name"]: q for q in (_queue("root"), parent, child, sibling)}
    held = _pg("held", "s", "Inqueue", {"cpu": "1"})
    running = _pg("run", "s", "Running", {"cpu": "3"})  # in allocated already

    def children(name):
        return [q for q in world.values() if qs.parent_name(q) == name]

    def inqueue(name):
        return [pg for pg in (held, running) if pg["spec"]["queue"] == name]

    me = _pg("me", "c", "Pending", {"requests.cpu": "2"})
    room = qs.gang_room(child, me, queue_lookup=world.get, queue_children=children, inqueue_podgroups=inqueue)
    own, anc = room.rows
    assert (own.depth, own.left, own.short, own.binding) == (0, 100, False, False)
    assert (anc.queue, anc.left, anc.reserved, anc.reservers, anc.short, anc.binding) == (
        "p",
        1,
        1,
        (("ml", "held"),),
        True,
        True,
    )
    assert held in room.read


def test_room_without_a_capability_or_with_garbage():
    q = _queue("q", capability={"cpu": "bad"}, allocated={"cpu": "1"}, deserved={"cpu": "1"})
    (row,) = qs.gang_room(q, _pg("me", "q", "Pending", {"cpu": "1"})).rows
    assert row.limited and row.unknown and row.left is None and not row.short
    assert row.over_deserved  # 1 allocated + 1 needed > 1 deserved
    q = _queue("q", allocated={"memory": "1Gi"})
    (row,) = qs.gang_room(q, _pg("me", "q", "Pending", {"memory": "1Gi"})).rows
    assert not row.limited and row.left is None and not row.short
    assert qs.gang_room(None, None).rows == []


def test_binding_room_prefers_the_least_left_then_the_nearest():
    rooms = [
        qs.QueueRoom("a", 0, "cpu", Decimal(5), Decimal(0), Decimal(0), ()),
        qs.QueueRoom("b", 1, "cpu", Decimal(5), Decimal(0), Decimal(0), ()),
        qs.QueueRoom("c", 2, "cpu", None, Decimal(0), Decimal(0), ()),
    ]
    assert qs.binding_room(rooms).queue == "a"
    assert qs.binding_room(rooms[2:]) is None
