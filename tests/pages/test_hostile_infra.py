"""Property-based: Nodes, HyperNodes, CronJobs, JobFlows and JobTemplates that the schemas admit,
with hostile free text, missing status and unknown fields, render escaped on every new page."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.pages.helpers import kind
from tests.pages.test_hostile_objects import _assert_safe, dns_label, hostile, timestamp

_ids = itertools.count()
maybe = st.one_of(st.none(), hostile)


@st.composite
def bundles(draw):
    n = next(_ids)
    ns = f"hi{n}"
    node_name = f"{draw(dns_label)}-{n}"
    text = draw(hostile)
    node = {
        "metadata": {"name": node_name, "labels": {"rack": f"r{n}"}},
        "spec": {
            "unschedulable": draw(st.booleans()),
            "taints": [{"key": "k", "value": text, "effect": "NoSchedule"}],
        },
        "status": draw(
            st.sampled_from(
                [
                    {},
                    {"allocatable": {"cpu": "4", "nvidia.com/gpu": text, text: "1"}},
                    {"conditions": [{"type": "Ready", "status": text, "message": text, "reason": text}]},
                ]
            )
        ),
    }
    member = draw(
        st.sampled_from(
            [
                {"type": "Node", "selector": {"exactMatch": {"name": node_name}}},
                {"type": "Node", "selector": {"regexMatch": {"pattern": text}}},
                {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": f"r{n}"}}}},
                {"type": "HyperNode", "selector": {"exactMatch": {"name": f"hn-{n}"}}},  # itself: a cycle
            ]
        )
    )
    hn = {
        "metadata": {"name": f"hn-{n}"},
        "spec": {
            "tier": draw(st.integers(0, 5)),
            "tierName": text,
            "members": [member],
            "unknownField": text,
        },
    }
    if draw(st.booleans()):
        hn["status"] = {"nodeCount": draw(st.integers(0, 10))}
    cj = {
        "metadata": {"name": f"cj-{n}", "namespace": ns},
        "spec": {
            "schedule": draw(st.sampled_from(["*/5 * * * *", "@daily", text, "61 25 * * *"])),
            "timeZone": draw(st.sampled_from(["", "Europe/Berlin", text])),
            "concurrencyPolicy": draw(st.sampled_from(["Allow", "Forbid", "Replace"])),
            "suspend": draw(st.booleans()),
            "jobTemplate": {"spec": {"tasks": [{"name": text, "replicas": 1}], "queue": text}},
        },
    }
    if draw(st.booleans()):
        cj["status"] = {"lastScheduleTime": draw(timestamp), "active": [{"name": text, "namespace": ns}]}
    flow_a, flow_b = f"a{n}", f"b{n}"
    jf = {
        "metadata": {"name": f"jf-{n}", "namespace": ns},
        "spec": {
            "jobRetainPolicy": draw(st.sampled_from(["retain", "delete"])),
            "flows": [{"name": flow_a}, {"name": flow_b, "dependsOn": {"targets": [flow_a, text]}}],
        },
    }
    if draw(st.booleans()):
        jf["status"] = {
            "state": {"phase": draw(st.sampled_from(["Running", "Succeed", text]))},
            "jobStatusList": [
                {
                    "name": f"jf-{n}-{flow_a}",
                    "state": text,
                    "runningHistories": [{"state": text, "startTimestamp": draw(timestamp)}],
                }
            ],
        }
    jt = {
        "metadata": {"name": flow_a, "namespace": ns},
        "spec": {
            "queue": text,
            "minAvailable": 1,
            "networkTopology": {"mode": "hard", "highestTierName": text},
            "policies": [{"event": "PodEvicted", "action": text}],
            "tasks": [
                {
                    "name": text,
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": text}]}},
                }
            ],
        },
    }
    return ns, node, hn, cj, jf, jt


@pytest.fixture(scope="module")
def hostile_infra(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=7, name="hostile-infra") as pair:
        yield pair


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(bundle=bundles())
def test_new_pages_render_escaped(hostile_infra, client, bundle):
    cluster, cache = hostile_infra
    ns, node, hn, cj, jf, jt = bundle
    store = cluster.store
    store.create(kind("", "namespaces"), {"metadata": {"name": ns}})
    store.create(kind("", "nodes"), node, replay=True)
    store.create(kind("topology.volcano.sh", "hypernodes"), hn, replay=True)
    store.create(kind("batch.volcano.sh", "cronjobs"), cj, ns, replay=True)
    store.create(kind("flow.volcano.sh", "jobtemplates"), jt, ns, replay=True)
    store.create(kind("flow.volcano.sh", "jobflows"), jf, ns, replay=True)
    cache.wait_for(
        lambda s: (
            s.jobflows.get(ns, jf["metadata"]["name"]) is not None
            and s.nodes.get(None, node["metadata"]["name"]) is not None
            and s.hypernodes.get(None, hn["metadata"]["name"]) is not None
            and s.cronjobs.get(ns, cj["metadata"]["name"]) is not None
            and s.jobtemplates.get(ns, jt["metadata"]["name"]) is not None
        ),
        timeout=10,
    )
    names = (node["metadata"]["name"], hn["metadata"]["name"], cj["metadata"]["name"], jf["metadata"]["name"])
    for url in (
        "/nodes/",
        f"/nodes/{names[0]}/",
        "/hypernodes/",
        f"/hypernodes/{names[1]}/",
        "/cronjobs/",
        f"/cronjobs/{ns}/{names[2]}/",
        "/jobflows/",
        f"/jobflows/{ns}/{names[3]}/",
        "/jobtemplates/",
        f"/jobtemplates/{ns}/{jt['metadata']['name']}/",
        "/",
        "/kiosk/",
    ):
        resp = client.get(url)
        assert resp.status_code == 200, (url, resp.status_code)
        _assert_safe(resp)
