"""Nodes, HyperNodes, CronJobs, JobFlows and scheduler health: the domain facts, on Volcano's own
examples and on any value the CRD schemas admit (property-based)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.volcano import cronjobs as vc
from dashboard.volcano import hypernodes as vh
from dashboard.volcano import jobflows as vf
from dashboard.volcano import nodes as vn
from dashboard.volcano import scheduler as vs
from dashboard.volcano import subgroups as vsub
from tests.volcano.conftest import shared_yaml

NOW = datetime(2026, 11, 29, 10, 0, 30, tzinfo=UTC)


def test_jobflow_example_layers_by_dependency_depth():
    (jf,) = shared_yaml("examples/JobFlow.yaml")
    assert vf.depths(vf.flows(jf)) == {"a": 0, "b": 1, "c": 2, "d": 2, "e": 3}
    assert vf.retain_policy(jf) == "delete"
    assert vf.flow_job_name(jf, "a") == "test-a"
    assert vf.unmet(vf.flows(jf)[4], {"c": "Completed", "d": "Running"}) == ["d"]


def test_cronjob_example_schedule_next_and_missed_runs():
    (cj,) = shared_yaml("examples/cronjob.yaml")
    assert vc.schedule_valid(cj) and vc.concurrency_policy(cj) == "Forbid"
    assert vc.history_limits(cj) == (5, 3) and vc.starting_deadline(cj) == 60
    runs = vc.next_runs(cj, NOW, 3)
    assert [r.astimezone(UTC).minute for r in runs] == [5, 10, 15]
    cj = {**cj, "status": {"lastScheduleTime": "2026-11-29T09:40:00Z"}}
    made = [{"metadata": {"name": f"x-{int(datetime(2026, 11, 29, 9, 50, tzinfo=UTC).timestamp()) // 60}"}}]
    # 09:45 has no Job and is past its deadline; 09:50 ran; 09:55 is past its deadline; 10:00 is not.
    missed = vc.missed_runs(cj, NOW, made)
    assert [t.astimezone(UTC).strftime("%H:%M") for t in missed] == ["09:45", "09:55"]


def _hm(times):
    return [t.astimezone(UTC).strftime("%H:%M") for t in times]


def test_cronjob_times_in_a_suspension_seen_are_skipped_not_missed():
    at = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
    base = {
        "metadata": {"creationTimestamp": "2026-11-29T08:00:00Z"},
        "spec": {"schedule": "*/10 * * * *"},
        "status": {"lastScheduleTime": "2026-11-29T09:00:00Z"},
    }
    paused = {**base, "spec": {**base["spec"], "suspend": True}}
    seen = [vc.Suspension(at + timedelta(minutes=25), None, at + timedelta(minutes=25))]
    # Suspended at 09:25: 09:10 and 09:20 were missed, 09:30..10:00 skipped on purpose.
    found = vc.not_started(paused, NOW, [], seen)
    assert _hm(found.missed) == ["09:10", "09:20"]
    assert _hm(found.skipped) == ["09:30", "09:40", "09:50", "10:00"]
    # Resumed at 09:55 and the controller started 10:00: the skipped times stay listed.
    resumed = [vc.Suspension(seen[0].start, at + timedelta(minutes=55), seen[0].seen)]
    ran = {**base, "status": {"lastScheduleTime": "2026-11-29T10:00:00Z"}}
    job = {"metadata": {"name": f"x-{int(NOW.timestamp()) // 60 // 10 * 10}"}}
    found = vc.not_started(ran, NOW, [job], resumed)
    assert (found.missed, _hm(found.skipped)) == ([], ["09:30", "09:40", "09:50"])
    # Suspended when first seen at 09:45: before that, skipped or missed is not known.
    first = [vc.Suspension(None, None, at + timedelta(minutes=45))]
    found = vc.not_started(paused, NOW, [], first)
    assert (_hm(found.unsure), _hm(found.skipped), found.missed) == (
        ["09:10", "09:20", "09:30", "09:40"],
        ["09:50", "10:00"],
        [],
    )
    assert found.suspended_since == at + timedelta(minutes=45)


def test_a_negative_history_limit_or_deadline_keeps_every_run_from_starting():
    base = {
        "metadata": {"creationTimestamp": "2026-11-29T08:00:00Z"},
        "spec": {"schedule": "*/10 * * * *"},
        "status": {"lastScheduleTime": "2026-11-29T09:00:00Z"},
    }
    # Valid: the controller still starts the newest unmet time, 10:00.
    assert vc.invalid_field(base) == "" and vc.starts_runs(base)
    assert _hm(vc.missed_runs(base, NOW, [])) == ["09:10", "09:20", "09:30", "09:40", "09:50"]
    every = ["09:10", "09:20", "09:30", "09:40", "09:50", "10:00"]
    for field, value in (
        ("successfulJobsHistoryLimit", -1),
        ("failedJobsHistoryLimit", -2),
        ("startingDeadlineSeconds", -30),
    ):
        cj = {**base, "spec": {**base["spec"], field: value}}
        assert vc.negative_fields(cj) == [field] and vc.invalid_field(cj) == field, field
        assert not vc.starts_runs(cj), field
        assert _hm(vc.missed_runs(cj, NOW, [])) == every, field
    cj = {**base, "spec": {**base["spec"], "successfulJobsHistoryLimit": -1, "startingDeadlineSeconds": -30}}
    assert vc.history_limits(cj) == (-1, 1) and vc.starting_deadline(cj) == -30  # as written
    assert vc.negative_fields(cj) == ["successfulJobsHistoryLimit", "startingDeadlineSeconds"]
    # In the order the controller meets them: the history limits before the schedule and zone,
    # those before the deadline.
    assert (
        vc.invalid_field({**cj, "spec": {**cj["spec"], "timeZone": "Nowhere/X"}})
        == "successfulJobsHistoryLimit"
    )
    late = {"spec": {"schedule": "*/10 * * * *", "timeZone": "Nowhere/X", "startingDeadlineSeconds": -30}}
    assert vc.invalid_field(late) == "timeZone"
    # 0 is the CRD's minimum, not below it (a deadline of 0 lets no run start: test_cronjob_rules);
    # a boolean or a string is no integer.
    for value in (0, True, "-1", -0.5):
        odd = {"spec": {"schedule": "@hourly", "failedJobsHistoryLimit": value}}
        if value != 0:
            odd["spec"]["startingDeadlineSeconds"] = value
        assert vc.negative_fields(odd) == [] and vc.invalid_field(odd) == "", value
    zero = {"spec": {"schedule": "@hourly", "startingDeadlineSeconds": 0}}
    assert vc.negative_fields(zero) == [] and vc.invalid_field(zero) == "startingDeadlineSeconds"


def test_cron_time_zone_and_macros():
    cj = {"spec": {"schedule": "0 3 * * *", "timeZone": "Asia/Shanghai"}}
    (first,) = vc.next_runs(cj, NOW, 1)
    assert first.astimezone(UTC) == datetime(2026, 11, 29, 19, 0, tzinfo=UTC)
    assert vc.next_runs({"spec": {"schedule": "0 3 * * *", "timeZone": "Nowhere/X"}}, NOW) is None
    assert vc.schedule_reading({"spec": {"schedule": "@hourly"}}).expression == "0 * * * *"
    assert vc.next_runs({"spec": {"schedule": "not cron"}}, NOW) is None


def test_hypernode_example_label_match_and_tree():
    (rack,) = shared_yaml("examples/benchmark-readme-hypernode-rack.yaml")
    nodes = [
        {"metadata": {"name": "n1", "labels": {"topology-rack": "rack-0"}}},
        {"metadata": {"name": "n2", "labels": {"topology-rack": "rack-1"}}},
    ]
    spine = {
        "metadata": {"name": "spine"},
        "spec": {
            "tier": 2,
            "members": [{"type": "HyperNode", "selector": {"regexMatch": {"pattern": "rack"}}}],
        },
    }
    topo = vh.build_topology([rack, spine], nodes)
    assert topo.direct_nodes["rack-0"] == ["n1"]
    assert topo.roots == ["spine"] and topo.children["spine"] == ["rack-0"]
    assert topo.smallest_containing(["n1"]) == "rack-0"
    assert topo.smallest_containing(["n1", "n2"]) is None


def _hn(name: str, tier: int, *members: dict) -> dict:
    return {"metadata": {"name": name}, "spec": {"tier": tier, "members": list(members)}}


def _hn_member(how: str, value: str) -> dict:
    key = "name" if how == "exactMatch" else "pattern"
    return {"type": "HyperNode", "selector": {how: {key: value}}}


def test_a_hypernode_that_lists_itself_is_a_cycle_as_two_that_list_each_other_are():
    ring = [
        _hn("ring-a", 2, _hn_member("exactMatch", "ring-b")),
        _hn("ring-b", 3, _hn_member("exactMatch", "ring-a")),
    ]
    topo = vh.build_topology(ring, [])
    assert topo.cycle_of("ring-a") == ["ring-a", "ring-b", "ring-a"]
    assert topo.cycle_of("ring-b") == ["ring-b", "ring-a", "ring-b"]
    for how, value in (("exactMatch", "self"), ("regexMatch", "^sel")):
        spine = _hn("spine", 3, _hn_member("exactMatch", "self"))
        itself = _hn(
            "self", 2, _hn_member(how, value), {"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}
        )
        topo = vh.build_topology([spine, itself], [{"metadata": {"name": "n1"}}])
        assert topo.children["self"] == ["self"] and topo.parents["self"] == ["spine", "self"], how
        assert topo.cycle_of("self") == ["self", "self"], how
        assert topo.cycle_of("spine") == [], how  # above the cycle, not in it
        assert topo.roots == ["spine"], how
        assert topo.nodes_under("spine") == {"n1"} and topo.smallest_containing(["n1"]) == "self", how
        # Alone, it is still a root: no other HyperNode lists it.
        assert vh.build_topology([itself], []).roots == ["self"], how


def _ladder(tiers: int, *extra: dict) -> list[dict]:
    """Two HyperNodes per tier, each listing both of the tier below (``^dl-<k+1>-``): a dual-homed
    spine/core layout. dl-1-* at the top; dl-<tiers>-a holds n1 and n2, dl-<tiers>-b n2."""
    hns = []
    for k in range(1, tiers + 1):
        for side in "ab":
            if k < tiers:
                members = [{"type": "HyperNode", "selector": {"regexMatch": {"pattern": f"^dl-{k + 1}-"}}}]
            else:
                members = [
                    {"type": "Node", "selector": {"exactMatch": {"name": n}}}
                    for n in (("n1", "n2") if side == "a" else ("n2",))
                ]
            hns.append(_hn(f"dl-{k}-{side}", tiers + 1 - k, *members))
    return [*hns, *extra]


def test_a_shared_member_is_drawn_once_and_named_where_else_it_is_a_member():
    topo = vh.build_topology(_ladder(3), [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}])
    drawn = [(t.name, t.depth, t.repeat, t.under) for t in topo.tree()]
    assert drawn == [
        ("dl-1-a", 0, "", ""),
        ("dl-2-a", 1, "", "dl-1-a"),
        ("dl-3-a", 2, "", "dl-2-a"),
        ("dl-3-b", 2, "", "dl-2-a"),
        ("dl-2-b", 1, "", "dl-1-a"),
        ("dl-3-a", 2, "elsewhere", "dl-2-a"),
        ("dl-3-b", 2, "elsewhere", "dl-2-a"),
        ("dl-1-b", 0, "", ""),
        ("dl-2-a", 1, "elsewhere", "dl-1-a"),
        ("dl-2-b", 1, "elsewhere", "dl-1-a"),
    ]
    # A HyperNode's nodes are the union of its members' nodes: n2 under both leaves counts once.
    counts = {h: len(topo.nodes_under(h)) for h in topo.hypernodes}
    assert counts == {**dict.fromkeys(topo.hypernodes, 2), "dl-3-b": 1}


def test_the_tree_of_a_deep_ladder_has_a_line_per_membership():
    # 40 tiers: 2**40 lines if each path were drawn. Plus one HyperNode selecting every HyperNode,
    # itself included.
    star = _hn("all", 99, _hn_member("regexMatch", ".*"))
    nodes = [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}]
    topo = vh.build_topology(_ladder(40, star), nodes)
    lines = topo.tree()
    edges = sum(len(c) for c in topo.children.values())
    assert len(lines) == len(topo.roots) + edges == 1 + 81 + 2 * 2 * 39
    full = [t.name for t in lines if not t.repeat]
    assert sorted(full) == sorted(topo.hypernodes)  # each subtree drawn once
    assert [t for t in lines if t.repeat == "cycle"] == [vh.TreeLine("all", 1, "cycle", "all")]
    for t in lines:
        if t.repeat == "elsewhere":
            assert t.under in {"all", *topo.parents[t.name]} and t.name in full
    assert topo.nodes_under("all") == topo.nodes_under("dl-1-b") == {"n1", "n2"}
    assert len(topo.above_node("n2")) == 81 and len(topo.above_node("n1")) == 80
    assert topo.smallest_containing(["n1", "n2"]) == "dl-40-a"


def test_a_pattern_re2_cannot_compile_is_named_and_matches_nothing():
    hn = {"spec": {"members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "gpu-(a"}}}]}}
    member = vh.members(hn)[0]
    assert member.error == "missing ): gpu-(a"
    assert not vh.member_matches_node(member, {"metadata": {"name": "gpu-(a"}})
    assert (
        vh.pattern_error("^gpu-[ab]$") == ""
        and vh.members(
            {"spec": {"members": [{"type": "Node", "selector": {"exactMatch": {"name": "gpu-(a"}}}]}}
        )[0].error
        == ""
    )
    assert vh.pattern_error("a{1001}") == "invalid repetition size: {1001}"  # too large a repeat


def _regex_member(pattern: str) -> dict:
    return {"type": "Node", "selector": {"regexMatch": {"pattern": pattern}}}


def test_a_pattern_is_matched_in_linear_time():
    # Backtracking engines (Python's re) take exponential time for this pattern against this
    # name; RE2, as Go's regexp, takes linear time.
    long_name = "a" * 48 + "-y"
    hn = {"metadata": {"name": "leaf"}, "spec": {"tier": 1, "members": [_regex_member("(a+)+$")]}}
    (member,) = vh.members(hn)
    assert member.error == ""
    assert not vh.member_matches_node(member, {"metadata": {"name": long_name}})
    assert vh.member_matches_node(member, {"metadata": {"name": "a" * 48}})
    topo = vh.build_topology([hn], [{"metadata": {"name": long_name}}, {"metadata": {"name": "aaa"}}])
    assert topo.direct_nodes["leaf"] == ["aaa"]


def test_patterns_re2_does_not_support_are_invalid_and_match_nothing():
    cases = {
        "(a)\\1": "invalid escape sequence: \\1",  # a backreference
        "(?P<x>a)(?P=x)": "invalid perl operator: (?P",  # a named backreference
        "gpu(?=-a)": "invalid perl operator: (?=",  # lookahead
        "(?<!x)gpu": "invalid perl operator: (?<!",  # lookbehind
        "gpu-a++": "bad repetition operator: ++",  # possessive
    }
    for pattern, reason in cases.items():
        hn = {"metadata": {"name": "leaf"}, "spec": {"members": [_regex_member(pattern)]}}
        (member,) = vh.members(hn)
        assert member.error == reason, pattern
        assert not vh.member_matches_node(member, {"metadata": {"name": "aa"}})
        assert vh.build_topology([hn], [{"metadata": {"name": "aa"}}]).direct_nodes["leaf"] == []


def test_patterns_read_as_go_regexp_reads_them():
    def matches(pattern: str, node: str) -> bool:
        (member,) = vh.members({"spec": {"members": [_regex_member(pattern)]}})
        return vh.member_matches_node(member, {"metadata": {"name": node}})

    assert matches("gpu", "node-gpu-1")  # unanchored, as regexp.MatchString
    assert not matches("^gpu$", "gpu\n")  # $ is the end of the text, not before a final newline
    assert not matches("\\d", "node-\u0663")  # \d is ASCII digits only
    assert matches("(?i)^GPU-[[:digit:]]+$", "gpu-12")  # flags and POSIX classes
    assert matches("^(?P<rack>r[0-9])-", "r1-n1") and matches("^(?<rack>r[0-9])-", "r1-n1")


def test_free_amount_of_a_node():
    node = {"status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "lots"}}}
    pod = {"spec": {"nodeName": "n", "containers": [{"resources": {"requests": {"cpu": "1500m"}}}]}}
    usage = vn.node_usage(node, [pod])
    assert vn.free_amount(usage, "cpu") == Decimal("2.5")
    assert vn.free_amount(usage, "nvidia.com/gpu") is None  # unreadable allocatable: unknown
    assert vn.free_amount(usage, "example.com/fpga") == 0  # neither offered nor asked for


def test_node_fit_message_and_slots():
    total, reasons = vn.node_fit_reasons(
        "0/10 nodes are unavailable: 9 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable."
    )
    assert total == 10 and reasons[0].resource == "nvidia.com/gpu" and reasons[0].count == 9
    assert reasons[1].reason == "node(s) were unschedulable"
    node = {
        "metadata": {"name": "a"},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": {"cpu": "4", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    pod = {"spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"cpu": "3"}}}]}, "status": {}}
    usage = vn.node_usage(node, [pod])
    assert vn.free_of(usage)["cpu"] == Decimal(1)
    assert vn.nodes_fitting({"cpu": Decimal(1)}, [], {}, [(node, usage)]) == []
    assert vn.nodes_fitting({"cpu": Decimal(1)}, [{"operator": "Exists"}], {}, [(node, usage)]) == ["a"]
    assert vn.nodes_fitting({"cpu": Decimal(2)}, [{"operator": "Exists"}], {}, [(node, usage)]) == []


def test_scheduler_silence():
    assert not vs.scheduler_silent(None, NOW, 60, 0)
    assert vs.scheduler_silent(None, NOW, 60, 1)
    assert vs.scheduler_silent(NOW - timedelta(seconds=61), NOW, 60, 1)
    assert not vs.scheduler_silent(NOW - timedelta(seconds=59), NOW, 60, 1)
    r = vs.readiness({"metadata": {"name": "volcano-scheduler"}, "spec": {}, "status": {}})
    assert r.desired == 1 and r.ready == 0 and not r.ok


anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12), st.floats(allow_nan=True)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def shaped(draw, spec_keys, status_keys):
    """An object with the CRD's top-level spec/status keys, each holding any JSON value."""
    spec = {k: draw(anything) for k in draw(st.lists(st.sampled_from(spec_keys), max_size=len(spec_keys)))}
    status = {
        k: draw(anything) for k in draw(st.lists(st.sampled_from(status_keys), max_size=len(status_keys)))
    }
    return {
        "metadata": {"name": draw(st.text(max_size=10))},
        "spec": spec,
        "status": draw(st.sampled_from([status, None, []])),
    }


@settings(max_examples=60, deadline=None)
@given(
    shaped(
        ["schedule", "timeZone", "suspend", "concurrencyPolicy", "startingDeadlineSeconds", "jobTemplate"],
        ["active", "lastScheduleTime", "lastSuccessfulTime"],
    ),
    shaped(["flows", "jobRetainPolicy"], ["state", "jobStatusList", "completedJobs"]),
    shaped(["tier", "tierName", "members"], ["nodeCount", "conditions"]),
    shaped(["unschedulable", "taints"], ["allocatable", "conditions"]),
    shaped(["subGroupPolicy", "networkTopology", "replicas"], ["readyReplicas", "conditions"]),
)
def test_domain_reads_any_shape_without_raising(cj, jf, hn, node, pg):
    vc.next_runs(cj, NOW)
    vc.missed_runs(cj, NOW, [cj])
    vc.runs([cj])
    vc.active_refs(cj), vc.history_limits(cj), vc.suspended(cj)
    items = vf.flows(jf)
    vf.depths(items), vf.job_statuses(jf), vf.counted_jobs(jf), vf.jobflow_phase(jf)
    topo = vh.build_topology([hn, {"metadata": {"name": "x"}, "spec": hn.get("spec")}], [node])
    topo.smallest_containing(["a"]), vh.reported_node_count(hn), vh.network_topology(pg["spec"])
    vn.node_state(node), vn.node_taints(node)
    usage = vn.node_usage(node, [node])
    vn.largest_free([(node, usage)], [], {}), vn.nodes_fitting({"cpu": Decimal(1)}, [], {}, [(node, usage)])
    vsub.subgroup_policies(pg, [node])
    vs.readiness(pg), vs.last_scheduler_action([node], [pg], ["volcano"])


def test_invalid_field_names_the_schedule_or_the_zone():
    assert vc.invalid_field({"spec": {"schedule": "61 * * * *"}}) == "schedule"
    assert vc.invalid_field({"spec": {"schedule": "", "timeZone": "Nowhere/X"}}) == "schedule"
    assert vc.invalid_field({"spec": {"schedule": "0 * * * *", "timeZone": "Nowhere/X"}}) == "timeZone"
    assert vc.invalid_field({"spec": {"schedule": "@hourly", "timeZone": "Asia/Shanghai"}}) == ""


def test_a_zone_named_in_the_schedule_is_read_like_the_controller_reads_it():
    from datetime import UTC, datetime

    from dashboard.volcano import cronjobs as vc

    cj = {"spec": {"schedule": "CRON_TZ=Asia/Tokyo 0 9 * * *", "timeZone": "Europe/Paris"}}
    assert vc.schedule_valid(cj) and vc.zone_prefixed(cj) and vc.invalid_field(cj) == ""
    assert vc.time_zone_name(cj) == "Asia/Tokyo" and vc.schedule_reading(cj).expression == "0 9 * * *"
    (first,) = vc.next_runs(cj, datetime(2026, 12, 1, 1, 0, tzinfo=UTC), 1)
    assert first.astimezone(UTC) == datetime(2026, 12, 2, 0, 0, tzinfo=UTC)  # 09:00 in Tokyo
    assert not vc.zone_prefixed({"spec": {"schedule": "* * * * *"}})
    assert vc.invalid_field({"spec": {"schedule": "TZ=Nowhere/Land * * * * *"}}) == "timeZone"


def test_tolerations_follow_the_kubernetes_rules():
    taint = vn.Taint("gpu", "present", "NoSchedule")
    assert vn.tolerates([{"operator": "Exists"}], taint)  # empty key with Exists: every taint
    assert vn.tolerates([{"key": "gpu", "operator": "Exists"}], taint)
    assert vn.tolerates([{"key": "gpu", "value": "present"}], taint)  # operator defaults to Equal
    assert vn.tolerates([{"key": "gpu", "operator": "Equal", "value": "present", "effect": ""}], taint)
    assert not vn.tolerates([{"key": "gpu", "operator": "Equal", "value": "absent"}], taint)
    assert not vn.tolerates([{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}], taint)
    assert not vn.tolerates([{"key": "other", "operator": "Exists"}], taint)
    assert not vn.tolerates([{"key": "gpu", "operator": "Lt", "value": "present"}], taint)
    assert not vn.tolerates([], taint)


def _node(name, cpu="64", taints=(), ready="True", cordoned=False):
    return {
        "metadata": {"name": name},
        "spec": {"taints": list(taints), **({"unschedulable": True} if cordoned else {})},
        "status": {
            "allocatable": {"cpu": cpu, "pods": "110"},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def test_a_pod_no_node_can_ever_take_names_each_kind_of_node():
    gpu = {"key": "gpu", "value": "present", "effect": "NoSchedule"}
    nodes = [_node("s1"), _node("s0"), _node("big", "128", [gpu]), _node("off", "128", cordoned=True)]
    bars = vn.never_fits({"cpu": Decimal(96)}, [], {}, nodes)
    assert [(b.kind, b.nodes, b.example) for b in bars] == [
        ("too_small", 2, "s0"),
        ("taint", 1, "big"),
        ("cordoned", 1, "off"),
    ]
    assert bars[0].short == (("cpu", Decimal(64), Decimal(96)),)
    assert bars[1].taint == vn.Taint("gpu", "present", "NoSchedule")
    assert vn.never_fits({"cpu": Decimal(96)}, [{"operator": "Exists"}], {}, nodes) == []
    # A node only not Ready may come back, and an allocatable that is no amount may be enough.
    assert vn.never_fits({"cpu": Decimal(96)}, [], {}, [*nodes, _node("down", "128", ready="False")]) == []
    assert vn.never_fits({"cpu": Decimal(96)}, [], {}, [*nodes, _node("odd", "lots")]) == []
    assert vn.never_fits({"cpu": Decimal(96)}, [], {}, []) == []
    # A node that reports no allocatable at all is of unknown size, not too small; a taint or a
    # cordon on it still keeps the pod off.
    unreported = _node("new")
    del unreported["status"]["allocatable"]
    assert vn.never_fits({"cpu": Decimal(96)}, [], {}, [*nodes, unreported]) == []
    tainted = _node("new-tainted", taints=[gpu])
    del tainted["status"]["allocatable"]
    assert [b.kind for b in vn.never_fits({"cpu": Decimal(1)}, [], {}, [tainted])] == ["taint"]
    # A PreferNoSchedule taint does not keep the pod off.
    soft = {"key": "gpu", "value": "present", "effect": "PreferNoSchedule"}
    assert vn.never_fits({"cpu": Decimal(96)}, [], {}, [_node("soft", "128", [soft])]) == []


def test_a_pods_node_selector_excludes_the_nodes_whose_labels_differ():
    def labelled(name, cpu="64", taints=()):
        node = _node(name, cpu, taints)
        node["metadata"]["labels"] = {"kubernetes.io/hostname": name, "pool": "a"}
        return node

    hpc = {"key": "dedicated", "value": "hpc", "effect": "NoSchedule"}
    nodes = [labelled("gpu-node-04"), labelled("gpu-node-05"), labelled("h100-node-01", taints=[hpc])]
    pairs = [(n, vn.node_usage(n, [])) for n in nodes]
    pinned = {"kubernetes.io/hostname": "h100-node-01"}
    assert vn.nodes_fitting({"cpu": Decimal(1)}, [], pinned, pairs) == []
    assert vn.largest_free(pairs, [], pinned) == []
    assert vn.nodes_fitting({"cpu": Decimal(1)}, [], {"pool": "a"}, pairs) == ["gpu-node-04", "gpu-node-05"]
    assert vn.nodes_fitting({"cpu": Decimal(1)}, [], {"pool": "b"}, pairs) == []
    assert vn.nodes_fitting({"cpu": Decimal(1)}, [{"operator": "Exists"}], pinned, pairs) == ["h100-node-01"]
    bars = vn.never_fits({"cpu": Decimal(1)}, [], pinned, nodes)
    assert [(b.kind, b.nodes, b.example) for b in bars] == [
        ("selector", 2, "gpu-node-04"),
        ("taint", 1, "h100-node-01"),
    ]
    assert vn.never_fits({"cpu": Decimal(1)}, [{"operator": "Exists"}], pinned, nodes) == []
    template = {"spec": {"nodeSelector": pinned}}
    assert vn.pod_node_selector(template) == pinned and vn.pod_node_selector({}) == {}
