"""Nodes, HyperNodes, CronJobs, JobFlows and JobTemplates: lists, details and their fragments, on
objects created through the simulated API server (tests/pages/infra_objects.py)."""

from __future__ import annotations

import contextlib
import re

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import check_fragment, text

NS = io.NS


@contextlib.contextmanager
def added(infra, plural: str, group: str, objs: list[dict], namespace: str | None = NS):
    """``objs`` of one kind created in the shared infra cluster for one test, seen by the cache
    before the test reads a page, and deleted (and seen gone) after it."""
    cluster, cache, _now = infra
    k = io.kind(group, plural)
    names = [o["metadata"]["name"] for o in objs]
    for obj in objs:
        cluster.store.create(k, obj, namespace, replay=True)
    try:
        cache.wait_for(lambda s: all(getattr(s, plural).get(namespace, n) for n in names), timeout=10)
        yield
    finally:
        for n in names:
            cluster.store.delete(k, namespace, n)
        cache.wait_for(lambda s: not any(getattr(s, plural).get(namespace, n) for n in names), timeout=10)


@pytest.fixture(scope="module")
def infra(tmp_path_factory):
    pytest.importorskip("dashboard.sim.cluster")
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=3, name="infra") as (cluster, cache):
        now = io.load(cluster, cache)
        yield cluster, cache, now


def _get(client, url):
    resp = client.get(url)
    assert resp.status_code == 200, (url, resp.status_code)
    return resp.content.decode()


def test_nodes_list_shows_state_taints_and_gpus(infra, client):
    page = _get(client, "/nodes/")
    assert set(re.findall(r'<tr data-node="([^"]+)"', page)) == {"gpu-a", "gpu-b", "cpu-c", "cpu-d", "cpu-e"}
    row = page.split('data-node="gpu-a"')[1].split("</tr>")[0]
    assert "4 / 8" in row  # GPUs requested / allocatable
    assert "4 / 16" in row  # cpu: one pod of 4 cores on this node
    cordoned = page.split('data-node="cpu-c"')[1].split("</tr>")[0]
    assert "Ready,SchedulingDisabled" in cordoned
    assert "dedicated=infra:NoSchedule" in page.split('data-node="cpu-d"')[1].split("</tr>")[0]
    assert "NotReady" in page.split('data-node="cpu-e"')[1].split("</tr>")[0]
    filtered = _get(client, "/nodes/?phase=NotReady")
    assert re.findall(r'<tr data-node="([^"]+)"', filtered) == ["cpu-e"]
    check_fragment(client, page, "results")


def test_node_detail_resources_pods_and_hypernodes(infra, client):
    page = _get(client, "/nodes/gpu-a/")
    body = text(page)
    assert 'data-resource="nvidia.com/gpu"' in page
    assert 'href="/pods/pipeline/train-worker-0/"' in page
    assert 'href="/hypernodes/leaf-0/"' in page and 'href="/hypernodes/spine-0/"' in page
    assert "KubeletReady" in body
    check_fragment(client, page, "status")
    assert client.get("/nodes/nope/").status_code == 404


def test_hypernode_tree_resolves_members_and_places_gangs(infra, client):
    page = _get(client, "/hypernodes/")
    order = re.findall(r'data-hypernode="([^"]+)" data-depth="(\d)"', page)
    assert order == [("spine-0", "0"), ("leaf-0", "1"), ("leaf-1", "1")]
    leaf0 = page.split('data-hypernode="leaf-0"')[1].split("</li>")[0]
    assert 'href="/nodes/gpu-a/"' in leaf0 and 'href="/nodes/gpu-b/"' in leaf0
    assert 'data-gang="pipeline/train-uid-train"' in leaf0  # the gang sits under leaf-0, not the spine
    leaf1 = page.split('data-hypernode="leaf-1"')[1].split("</li>")[0]
    assert "2 nodes" in text(leaf1) and "status.nodeCount says 3" in text(leaf1)
    assert "gone-node" in text(leaf1)
    assert "invalid pattern “cpu-(e”: missing ): cpu-(e" in text(leaf1)
    assert "1 node is in no HyperNode" in text(page)
    held = page.split("data-held>")[1]
    assert 'href="/jobs/pipeline/tight/"' in held and "Insufficient cpu" in held
    check_fragment(client, page, "tree")


def test_a_membership_cycle_without_a_root_is_in_the_tree(infra, client):
    a = io.hypernode("ring-a", 2, "zone", [io.exact("HyperNode", "ring-b")])
    b = io.hypernode("ring-b", 3, "region", [io.exact("HyperNode", "ring-a")])
    with added(infra, "hypernodes", "topology.volcano.sh", [a, b], None):
        page = _get(client, "/hypernodes/")
        order = re.findall(r'data-hypernode="([^"]+)" data-depth="(\d)"', page)
        assert ("ring-a", "0") in order and ("ring-b", "1") in order, order
        assert "(already above: a membership cycle)" in text(page)
        for first, second in (("ring-a", "ring-b"), ("ring-b", "ring-a")):
            cycle = _get(client, f"/hypernodes/{first}/").split("data-cycle>")[1].split("</p>")[0]
            assert text(cycle).strip() == f"A membership cycle: {first} → {second} → {first}", cycle


@pytest.mark.parametrize(
    "selector",
    [{"exactMatch": {"name": "loop-0"}}, {"regexMatch": {"pattern": "^loop-"}}],
    ids=["exact", "regex"],
)
def test_a_hypernode_that_lists_itself_is_a_membership_cycle(infra, client, selector):
    loop = io.hypernode(
        "loop-0", 2, "zone", [{"type": "HyperNode", "selector": selector}, io.exact("Node", "cpu-e")]
    )
    with added(infra, "hypernodes", "topology.volcano.sh", [loop], None):
        page = _get(client, "/hypernodes/")
        order = re.findall(r'data-hypernode="([^"]+)" data-depth="(\d)"', page)
        assert [o for o in order if o[0] == "loop-0"] == [("loop-0", "0"), ("loop-0", "1")], order
        row = page.split('data-hypernode="loop-0" data-depth="1"')[1].split("</li>")[0]
        assert "(already above: a membership cycle)" in text(row)
        detail = _get(client, "/hypernodes/loop-0/")
        assert (
            text(detail.split("data-cycle>")[1].split("</p>")[0]).strip()
            == "A membership cycle: loop-0 → loop-0"
        )
        assert set(re.findall(r'<tr data-node="([^"]+)"', detail)) == {"cpu-e"}
        check_fragment(client, detail, "status")
    spine = _get(client, "/hypernodes/spine-0/")
    assert "data-cycle" not in spine


def _ladder(tiers: int) -> list[dict]:
    """Two HyperNodes per tier, each listing both of the tier below (``^dl-<k+1>-``): a dual-homed
    spine/core layout, dl-1-* at the top. The lowest pair share gpu-b; dl-<tiers>-a also holds
    gpu-a, so the running gang on gpu-a and gpu-b sits there."""
    hns = []
    for k in range(1, tiers + 1):
        for side in "ab":
            if k < tiers:
                members = [{"type": "HyperNode", "selector": {"regexMatch": {"pattern": f"^dl-{k + 1}-"}}}]
            else:
                members = [io.exact("Node", n) for n in (("gpu-a", "gpu-b") if side == "a" else ("gpu-b",))]
            hns.append(io.hypernode(f"dl-{k}-{side}", tiers + 1 - k, "layer", members))
    return hns


def _tree(page: str) -> list[tuple[str, int, bool, str]]:
    """The tree's rows: (HyperNode, depth, drawn in full here (it has the anchor), the row's HTML)."""
    out = []
    for chunk in page.split('<li class="hn-node')[1:]:
        head, _, rest = chunk.partition(">")
        m = re.search(r'data-hypernode="([^"]+)" data-depth="(\d)"', head)
        assert m, head
        out.append((m.group(1), int(m.group(2)), f'id="hn-{m.group(1)}"' in head, rest.split("</li>\n")[0]))
    return out


def test_hypernodes_sharing_members_are_drawn_once(infra, client):
    gang = 'data-gang="pipeline/train-uid-train"'
    # 8 tiers first: drawing every path there repeats the lowest pair 128 times each.
    for tiers in (8, 16):
        hns = _ladder(tiers)
        with added(infra, "hypernodes", "topology.volcano.sh", hns, None):
            page = _get(client, "/hypernodes/")
            # Linear in the HyperNodes and their memberships (about 1.4 kB a tier here).
            assert len(page) < 15_000 + 3_000 * tiers, len(page)
            for h in hns:  # drawn once, named once more under its second parent
                assert page.count(f'data-hypernode="{h["metadata"]["name"]}"') <= 2, h["metadata"]["name"]
            rows = [r for r in _tree(page) if r[0].startswith("dl-")]
            full = {name: (depth, html) for name, depth, whole, html in rows if whole}
            assert sorted(full) == sorted(h["metadata"]["name"] for h in hns)
            assert len(rows) == 2 + 4 * (tiers - 1)  # the two tops, then one row per membership
            assert page.count(gang) == 1 and gang in full[f"dl-{tiers}-a"][1]
            for name, (_depth, html) in full.items():
                want = "1 node" if name == f"dl-{tiers}-b" else "2 nodes"  # the union: gpu-b once
                assert want in text(html), (name, text(html))
            # Each HyperNode of a lower tier is a member of both above it: drawn under the "a" one,
            # named under the "b" one with a link to where it is drawn.
            for k in range(1, tiers):
                at = next(i for i, r in enumerate(rows) if r[0] == f"dl-{k}-b" and r[2])
                for side, (name, depth, whole, html) in zip("ab", rows[at + 1 : at + 3], strict=True):
                    assert (name, depth, whole) == (f"dl-{k + 1}-{side}", min(rows[at][1] + 1, 8), False)
                    assert f'href="#hn-dl-{k + 1}-{side}"' in html and 'href="/hypernodes/dl-' in html
                    assert f"also a member here: shown above under dl-{k}-a" in text(html), text(html)
            assert "membership cycle" not in text(page)
            check_fragment(client, page, "tree")
            detail = _get(client, "/hypernodes/dl-1-a/")
            assert re.search(r"data-resolved>2<", detail)
            node = _get(client, "/nodes/gpu-b/")
            for h in hns:
                assert node.count(f'href="/hypernodes/{h["metadata"]["name"]}/"') == 1


def test_hypernode_detail_lists_nodes_and_pods(infra, client):
    page = _get(client, "/hypernodes/spine-0/")
    assert set(re.findall(r'<tr data-node="([^"]+)"', page)) == {"gpu-a", "gpu-b", "cpu-c", "cpu-d"}
    assert 'href="/pods/pipeline/train-worker-1/"' in page
    assert 'href="/hypernodes/leaf-0/"' in page
    check_fragment(client, page, "status")


def test_hypernode_page_names_a_pattern_re2_cannot_compile(infra, client):
    page = _get(client, "/hypernodes/leaf-1/")
    members = page.split("data-members>")[1].split("</ul>")[0]
    assert "invalid pattern “cpu-(e”: missing ): cpu-(e" in text(members)
    assert set(re.findall(r'<tr data-node="([^"]+)"', page)) == {"cpu-c", "cpu-d"}  # cpu-e: not matched


def test_cronjobs_list_and_detail(infra, client):
    page = _get(client, "/cronjobs/")
    assert set(re.findall(r'<tr data-cronjob="([^"]+)"', page)) == {f"{NS}/nightly", f"{NS}/paused"}
    assert "Every 5 minutes" in text(page)
    detail = _get(client, f"/cronjobs/{NS}/nightly/")
    body = text(detail)
    assert "Asia/Shanghai" in body and "Forbid" in body
    assert len(re.findall(r"<li>", detail.split("data-next-runs")[1].split("</ol>")[0])) == 5
    runs = re.findall(r'data-run="([^"]+)"', detail)
    assert len(runs) == 3
    assert "Completed" in detail and "Failed" in detail
    assert "2m" in text(detail.split("data-runs")[1])  # duration of a finished run
    # Of the two scheduled times after lastScheduleTime (10 minutes ago) with no Job, the older
    # is past its 60 s starting deadline; the newer (now) may still start.
    missed = detail.split("data-missed")[1].split("</ul>")[0]
    assert len(re.findall(r"<li>", missed)) == 1
    check_fragment(client, detail, "status")


def test_a_schedule_that_matches_no_date_never_runs(infra, client):
    """30 February: croniter finds no date; the list and the page say "never", nothing fails."""
    _cluster, _cache, now = infra
    cj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "feb30", "namespace": NS, "creationTimestamp": io.iso(now)},
        "spec": {"schedule": "0 0 30 2 *", "jobTemplate": {"spec": {"tasks": []}}},
    }
    with added(infra, "cronjobs", "batch.volcano.sh", [cj]):
        listing = _get(client, "/cronjobs/")
        row = listing.split(f'data-cronjob="{NS}/feb30"')[1].split("</tr>")[0]
        assert "never" in text(row)
        detail = _get(client, f"/cronjobs/{NS}/feb30/")
        assert "This schedule matches no date: the CronJob never runs." in text(detail)
        # No timeZone: Volcano's controller reads the schedule in its local zone, UTC in its images.
        zone = text(detail.split("data-zone>")[1].split("</strong>")[0])
        assert zone.startswith("not set: UTC") and "UTC in Volcano's images" in zone
        assert "data-next-runs" not in detail


def test_suspended_cronjob_with_unknown_zone(infra, client):
    detail = _get(client, f"/cronjobs/{NS}/paused/")
    body = text(detail)
    assert "Suspended" in body
    assert "Mars/Olympus (not a known time zone)" in body
    assert "data-cronjob-problem" in detail


def test_flows_in_a_dependency_cycle_are_named(infra, client):
    jf = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "loop", "namespace": NS},
        "spec": {
            "flows": [
                {"name": "a", "dependsOn": {"targets": ["b"]}},
                {"name": "b", "dependsOn": {"targets": ["a"]}},
                {"name": "c", "dependsOn": {"targets": ["c"]}},
                {"name": "d", "dependsOn": {"targets": ["a"]}},
            ]
        },
    }
    with added(infra, "jobflows", "flow.volcano.sh", [jf]):
        page = _get(client, f"/jobflows/{NS}/loop/")
        note = text(page.split("data-flow-cycle>")[1].split("</p>")[0])
        assert "never start: a, b, c" in note, note  # d waits on the cycle but is not in it
        rows = dict(re.findall(r'data-flow-row="([^"]+)">(.*?)</tr>', page, re.S))
        assert {f for f, row in rows.items() if "data-in-cycle" in row} == {"a", "b", "c"}
        # Every dependency is drawn, the self-dependency as a loop, the way back around the boxes.
        svg = page.split('<svg class="flow-graph"')[1].split("</svg>")[0]
        assert set(re.findall(r'data-edge="([^"]+)"', svg)) == {"b→a", "a→b", "c→c", "a→d"}


def test_jobflow_graph_and_flows(infra, client):
    page = _get(client, "/jobflows/")
    assert re.findall(r'<tr data-jobflow="([^"]+)"', page) == [f"{NS}/pipe"]
    detail = _get(client, f"/jobflows/{NS}/pipe/")
    svg = detail.split('<svg class="flow-graph"')[1].split("</svg>")[0]
    assert set(re.findall(r'data-flow="([^"]+)"', svg)) == {"a", "b", "c", "d", "e", "ghost"}
    assert 'href="/jobs/pipeline/pipe-a/"' in svg
    # b -> c is unmet (b runs): dashed; a -> b is met.
    assert re.search(r'class="edge" d="[^"]+" data-edge="a→b"', svg)
    assert re.search(r'class="edge edge-unmet" d="[^"]+" data-edge="b→c"', svg)
    row_e = detail.split('data-flow-row="e"')[1].split("</tr>")[0]
    assert "c, d, ghost" in text(row_e)
    assert 'href="/jobtemplates/pipeline/e/"' in row_e
    assert "data-timeline" in detail and 'data-timeline-job="pipe-a"' in detail
    check_fragment(client, detail, "status")


def test_jobtemplates_list_and_detail(infra, client):
    page = _get(client, "/jobtemplates/")
    assert len(re.findall(r"<tr data-jobtemplate=", page)) == 5
    detail = _get(client, f"/jobtemplates/{NS}/a/")
    assert 'href="/jobflows/pipeline/pipe/"' in detail
    assert 'href="/jobs/pipeline/pipe-a/"' in detail
    body = text(detail)
    assert "PodEvicted" in body and "RestartJob" in body and "svc" in body and "soft" in body
    check_fragment(client, detail, "status")


def test_nav_links_every_new_page(infra, client):
    page = _get(client, "/nodes/")
    for url in ("/cronjobs/", "/jobflows/", "/jobtemplates/", "/nodes/", "/hypernodes/"):
        assert f'href="{url}"' in page


def test_job_page_links_node_fit_and_says_what_would_fit(infra, client):
    page = _get(client, f"/jobs/{NS}/tight/")
    fit = page.split("data-node-fit")[1].split("</section>")[0]
    assert 'data-fit-resource="cpu"' in fit and "3 Insufficient cpu" in text(fit)
    assert 'href="/nodes/' in fit
    # cpu-c is cordoned, cpu-d tainted NoSchedule, cpu-e NotReady: only the GPU nodes take a pod.
    row = fit.split('data-fit-task="worker"')[1].split("</tr>")[0]
    assert 'data-fitting="2"' in row and 'href="/nodes/gpu-a/"' in row and "cpu-d" not in row
    slots = fit.split("data-fit-slots")[1].split("</ul>")[0]
    assert "nvidia.com/gpu" in slots
    assert "networkTopology" in text(page) and "highestTierAllowed 1" in text(page)


def test_podgroup_page_shows_topology_and_sub_gangs(infra, client):
    page = _get(client, f"/podgroups/{NS}/train-uid-train/")
    sub = page.split('data-subgroup="worker"')[1].split("</div>")[0]
    assert "subGroupSize 2" in text(sub) and "volcano.sh/partition-id" in sub
    # Both pods lack the partition label: one sub-gang of two running pods, whole.
    assert "2/2 running" in text(sub) and "1 of 1 sub-gang is whole" in text(sub)
    assert "highestTierAllowed 2" in text(page)


def test_queue_page_shows_priority_dequeue_type_affinity_and_dra_keys(infra, client):
    page = _get(client, "/queues/dra-a/")
    body = text(page)
    assert "Priority 7" in body and "fifo" in body and "batch" in body
    assert "nodeGroupAffinity required group-a" in body
    assert "deviceclass/gpu.nvidia.com" in page


def test_overview_shows_scheduler_health_and_warns_when_silent(infra, client, settings):
    cluster, cache, now = infra
    cache.wait_for(lambda s: len(s.deployments) == 2, timeout=10)
    page = _get(client, "/")
    card = page.split("data-scheduler-health")[1].split("</section>")[0]
    assert 'data-component="volcano-scheduler" data-ok="true"' in card
    assert 'data-component="volcano-controllers" data-ok="false"' in card
    assert 'data-component-missing="volcano-admission"' in card
    assert "&lt;b&gt;minimum" in card  # the Deployment's words, escaped
    assert "5m ago" in text(card) and "data-silent" not in card  # the PodGroup condition, 5 min old
    check_fragment(client, page, "health")
    settings.VOLCANO_UI_SCHEDULER_SILENT_SECONDS = 60
    card = _get(client, "/").split("data-scheduler-health")[1].split("</section>")[0]
    assert "data-silent" in card and "1 gang is waiting" in text(card)
    kiosk = _get(client, "/kiosk/")
    strip = kiosk.split("data-scheduler-health")[1].split("</p>")[0]
    assert "Scheduler silent" in text(strip) and "volcano-controllers 0/1" in text(strip)
