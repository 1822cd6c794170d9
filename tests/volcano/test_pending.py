"""dashboard.volcano.pending: the facts of "why is it not running", most decisive first."""

from __future__ import annotations

from dashboard.volcano.pending import PendingContext, never_start, unschedulable_condition, why_pending


def _job(min_available, replicas, status=None, queue="q"):
    job = {
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ml"},
        "spec": {
            "queue": queue,
            "minAvailable": min_available,
            "tasks": [{"name": "w", "replicas": replicas}],
        },
    }
    if status is not None:
        job["status"] = status
    return job


def _pg(phase=None, min_member=1, conditions=None, min_resources=None, owner=True):
    pg = {
        "metadata": {"name": "j-uid", "namespace": "ml"},
        "spec": {"queue": "q", "minMember": min_member, "minResources": min_resources or {}},
        "status": {"conditions": conditions or []},
    }
    if owner:
        pg["metadata"]["ownerReferences"] = [
            {"kind": "Job", "apiVersion": "batch.volcano.sh/v1alpha1", "name": "j"}
        ]
    if phase:
        pg["status"]["phase"] = phase
    return pg


def _queue(state="Open", capability=None, allocated=None):
    return {
        "metadata": {"name": "q"},
        "spec": {"capability": capability or {}},
        "status": {"state": state, "allocated": allocated or {}},
    }


def _kinds(facts):
    return [f.kind for f in facts]


def test_never_facts_come_first():
    ctx = PendingContext(_job(5, 3, {"state": {"phase": "Pending"}}), _pg("Pending", 4), _queue(), "q")
    facts = why_pending(ctx)
    assert _kinds(facts)[:2] == ["min_available_above_replicas", "min_member_above_replicas"]
    assert facts[0].values == {"min": 5, "total": 3}


def test_a_closed_queue_leads_the_symptoms():
    ctx = PendingContext(_job(1, 1, {"state": {"phase": "Pending"}}), _pg("Pending"), _queue("Closed"), "q")
    assert _kinds(why_pending(ctx)) == ["queue_not_open", "podgroup_pending"]


def test_missing_or_unreadable_objects():
    job = _job(1, 1)  # no status: the controller has not seen it
    assert _kinds(why_pending(PendingContext(job, None, None, "q"))) == [
        "queue_missing",
        "job_no_status",
        "podgroup_missing",
    ]
    unreadable = PendingContext(job, None, None, "q", podgroups_unreadable="forbidden", queues_unreadable="x")
    facts = why_pending(unreadable)
    assert _kinds(facts) == ["job_no_status", "podgroups_unreadable", "queues_unreadable"]
    assert facts[1].values == {"why": "forbidden"}


def test_podgroup_phases():
    job = _job(2, 2, {"state": {"phase": "Pending"}})
    cond = {
        "type": "Unschedulable",
        "status": "True",
        "message": "0/3 nodes",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    facts = why_pending(PendingContext(job, _pg("Inqueue", 2, [cond]), _queue(), "q"))
    (inq,) = [f for f in facts if f.kind == "podgroup_inqueue"]
    assert inq.values == {"min": 2, "never": False} and inq.verbatim == "0/3 nodes"
    assert _kinds(why_pending(PendingContext(job, _pg(None), _queue(), "q"))) == ["podgroup_no_status"]
    assert _kinds(why_pending(PendingContext(job, _pg("Unknown"), _queue(), "q"))) == ["podgroup_unknown"]


def test_pods_of_other_workloads():
    pods = [{"metadata": {"name": f"p{i}"}} for i in range(2)]
    ctx = PendingContext(None, _pg("Pending", 3, owner=False), _queue(), "q", pods=pods)
    facts = why_pending(ctx)
    assert _kinds(facts) == ["min_member_above_pods", "podgroup_pending"]
    assert facts[1].values["pods_exist"] is True


def test_capability_and_room():
    pg = _pg("Pending", 1, min_resources={"cpu": "10", "memory": "1Gi"})
    queue = _queue(capability={"cpu": "8", "memory": "2Gi"}, allocated={"memory": "1536Mi"})
    facts, impossible = never_start(PendingContext(None, pg, queue, "q"))
    assert _kinds(facts) == ["capability"] and impossible == {"cpu"}
    all_facts = why_pending(PendingContext(None, pg, queue, "q"))
    (room,) = [f for f in all_facts if f.kind == "no_room"]
    assert [r.resource for r in room.rows] == ["memory"]  # cpu is a "never" fact, not a lack of room
    assert room.values == {"queue": "q", "depth": 0, "own": "q"}


def test_pod_problems_are_listed_once():
    waiting = {"containerStatuses": [{"name": "main", "state": {"waiting": {"reason": "ErrImagePull"}}}]}
    pods = [{"metadata": {"name": f"p{i}"}, "status": waiting} for i in range(3)]
    facts = why_pending(
        PendingContext(_job(3, 3, {"state": {"phase": "Pending"}}), _pg("Running", 3), _queue(), "q", pods)
    )
    (problems,) = [f for f in facts if f.kind == "pod_problems"]
    assert problems.blockers == ("p0: main: ErrImagePull",)


def test_unschedulable_condition_until_scheduled_again():
    old = {"type": "Unschedulable", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    new = {"type": "Scheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:01:00Z"}
    assert unschedulable_condition({"status": {"conditions": [old]}}) == old
    assert unschedulable_condition({"status": {"conditions": [old, new]}}) is None
    untimed = [{"type": "Scheduled", "status": "True"}, {"type": "Unschedulable", "status": "True", "m": 1}]
    assert unschedulable_condition({"status": {"conditions": untimed}}) == untimed[1]
    assert unschedulable_condition({}) is None


def test_a_job_without_tasks_has_nothing_to_schedule():
    job = _job(0, 0, {"state": {"phase": "Pending"}})
    job["spec"]["tasks"] = []
    facts = why_pending(PendingContext(job, _pg("Inqueue", 0), _queue(), "q"))
    assert _kinds(facts) == ["job_no_tasks"]  # no "gang of 0 pods" to place
    del job["spec"]["tasks"]  # absent is the same to Volcano's Go types
    assert _kinds(never_start(PendingContext(job, None, _queue(), "q"))[0]) == ["job_no_tasks"]


def _node(name, **alloc):
    return {"metadata": {"name": name}, "status": {"allocatable": alloc}}


def test_a_gang_above_the_whole_cluster_is_never_and_unknown_totals_say_nothing():
    from decimal import Decimal

    from dashboard.volcano.pending import cluster_short

    nodes = [_node("a", cpu="64", **{"nvidia.com/gpu": "8"}), _node("b", cpu="64")]
    needs = {"cpu": Decimal(200), "memory": Decimal(1), "nvidia.com/gpu": Decimal(8)}
    assert cluster_short(needs, nodes) == (
        ("cpu", Decimal(200), Decimal(128)),
        ("memory", Decimal(1), Decimal(0)),
    )
    assert cluster_short(needs, None) == ()  # Nodes cannot be read
    assert cluster_short(needs, []) == ()
    assert cluster_short({"cpu": Decimal(200)}, [*nodes, _node("c", cpu="lots")]) == ()
    # A node that reports no allocatable makes the sum a lower bound: nothing is claimed.
    unreported = _node("d", cpu="1")
    del unreported["status"]["allocatable"]
    assert cluster_short({"cpu": Decimal(200)}, [*nodes, unreported]) == ()
    pg = _pg("Pending", min_resources={"cpu": "1e30"}, owner=False)
    ctx = PendingContext(job=None, podgroup=pg, queue=_queue(), queue_name="q", nodes=nodes)
    facts = why_pending(ctx)
    assert facts[0].kind == "cluster_too_small" and facts[0].values == {"nodes": 2}
    assert [f.kind for f in facts].index("podgroup_pending") > 0


def test_the_components_a_gang_waits_on_lead_and_a_task_it_can_do_without_is_not_never():
    from dashboard.volcano.scheduler import Readiness

    down = (
        Readiness("volcano-scheduler", 1, 0, False, ""),
        Readiness("volcano-controllers", 1, 0, False, ""),
        Readiness("volcano-admission", 1, 0, False, ""),
    )
    ownerless = PendingContext(
        job=None, podgroup=_pg("Pending", owner=False), queue=_queue(), queue_name="q", components_down=down
    )
    facts = why_pending(ownerless)
    assert [f.values.get("component") for f in facts if f.kind == "component_down"] == ["volcano-scheduler"]
    job = _job(1, 1)
    job["spec"]["tasks"] = [
        {
            "name": "small",
            "replicas": 1,
            "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}},
        },
        {
            "name": "wide",
            "replicas": 1,
            "minAvailable": 0,
            "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "96"}}}]}},
        },
    ]
    nodes = [_node("a", cpu="64", pods="110")]
    ctx = PendingContext(
        job=job, podgroup=_pg("Inqueue"), queue=_queue(), queue_name="q", nodes=nodes, components_down=down
    )
    facts = why_pending(ctx)
    assert [f.kind for f in facts][:2] == ["component_down", "component_down"]
    assert not any(f.kind == "no_node_for_task" for f in facts)
    job["spec"]["tasks"][1].pop("minAvailable")  # the task's own minAvailable defaults to its replicas
    facts = why_pending(ctx)
    assert [f.values.get("task") for f in facts if f.kind == "no_node_for_task"] == ["wide"]
    assert facts[2].kind == "no_node_for_task"


def test_an_invalid_min_member_is_an_unknown_gang_size_not_a_gang_of_zero():
    job = _job(2, 2, {"state": {"phase": "Pending"}})
    for value in (-4, "x"):
        pg = _pg("Inqueue", value)
        (inq,) = [
            f for f in why_pending(PendingContext(job, pg, _queue(), "q")) if f.kind == "podgroup_inqueue"
        ]
        assert inq.values["min"] is None
        # An unknown size is above nothing.
        assert "min_member_above_replicas" not in _kinds(why_pending(PendingContext(job, pg, _queue(), "q")))
