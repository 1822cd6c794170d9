"""The Job page's "why is it pending?" verdict over a simulated cluster built as a user's would
be: it leads with a Volcano component that is down (and says nothing of components it cannot
read), dates the scheduler's quoted message, and calls a gang that no node or the whole cluster
can ever hold "never" before any "not yet"."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.pages import infra_objects as io
from tests.pages.helpers import fragment_url, kind, sim_faults, text

NODES = kind("", "nodes")
JOBS = kind("batch.volcano.sh", "jobs")
PODGROUPS = kind("scheduling.volcano.sh", "podgroups")
QUEUES = kind("scheduling.volcano.sh", "queues")
DEPLOYMENTS = kind("apps", "deployments")
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _worker(cpu: str, gpu: str = "", tolerations: list | None = None, selector: dict | None = None) -> dict:
    requests = {"cpu": cpu, **({"nvidia.com/gpu": gpu} if gpu else {})}
    spec: dict = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": requests}}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    if selector is not None:
        spec["nodeSelector"] = selector
    return {"name": "worker", "replicas": 1, "template": {"spec": spec}}


def _add_job(cluster, name: str, worker: dict, phase: str = "Pending", message: str = "", at=None) -> None:
    now = cluster.clock.now()
    job = io.vcjob(name, "Pending", now=now, spec_extra={"minAvailable": 1, "tasks": [worker]})
    conditions = []
    if message:
        stamp = io.iso(at or now)
        conditions = [
            {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": message}
            | {"lastTransitionTime": stamp}
        ]
    pg = io.podgroup(job, phase, conditions)
    pg["spec"]["minMember"] = 1
    cluster.store.create(JOBS, job, io.NS, replay=True)
    cluster.store.create(PODGROUPS, pg, io.NS, replay=True)
    return pg["metadata"]["name"]


def _bare_podgroup(name: str, min_resources: dict) -> dict:
    """A PodGroup a user created by hand: no owner, Pending."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": io.NS, "uid": f"pg-{name}"},
        "spec": {"minMember": 1, "queue": "default", "minResources": min_resources},
        "status": {"phase": "Pending"},
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from dashboard.sim import components
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=23, name="pending-verdict") as (cluster, cache):
        store = cluster.store
        store.create(kind("", "namespaces"), {"metadata": {"name": io.NS}})
        if store.try_get(QUEUES, None, "default") is None:
            store.create(QUEUES, {"metadata": {"name": "default"}, "spec": {"weight": 1}})
        store.mutate(QUEUES, None, "default", lambda q: q.update(status={"state": "Open"}))
        for i in range(4):
            store.create(NODES, io.node(f"cpu-node-{i}", cpu="64"), replay=True)
        for i in range(2):
            store.create(
                NODES, io.node(f"h100-node-{i}", cpu="128", gpu="8", taints=[GPU_TAINT]), replay=True
            )
        components.install(store)
        sim_faults(cluster, components_down=[])  # every component ready
        then = cluster.clock.now() - timedelta(minutes=4)
        _add_job(
            cluster,
            "waiting",
            _worker("8"),
            message="0/6 nodes are unavailable: 6 Insufficient cpu.",
            at=then,
        )
        cache.wait_for(
            lambda s: len(s.nodes.all()) == 6 and s.podgroups.get(io.NS, "waiting-uid-waiting"), 10
        )
        big = _add_job(cluster, "bigger-than-cluster", _worker("1", gpu="1000"))
        store.mutate(
            PODGROUPS, io.NS, big, lambda pg: pg["spec"].update(minResources={"nvidia.com/gpu": "1000"})
        )
        store.create(PODGROUPS, _bare_podgroup("ownerless", {"cpu": "1e30"}), io.NS, replay=True)
        fit = (
            "0/6 nodes are unavailable: 4 Insufficient cpu, "
            "2 node(s) had untolerated taint {nvidia.com/gpu: present}."
        )
        _add_job(cluster, "wide-pod", _worker("96"), phase="Inqueue", message=fit)
        tolerant = _worker("96", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])
        _add_job(
            cluster, "tolerant-wide-pod", tolerant, phase="Inqueue", message="0/6 nodes are unavailable."
        )
        pinned = _worker("1", gpu="1", selector={"kubernetes.io/hostname": "h100-node-1"})
        _add_job(cluster, "pinned", pinned, phase="Inqueue", message="0/6 nodes are unavailable.")
        cache.wait_for(lambda s: len(s.deployments.all()) == 3, 10)
        cache.wait_for(lambda s: len(s.podgroups.all()) == 6, 10)
        cache.wait_for(lambda s: s.podgroups.get(io.NS, "ownerless") is not None, 10)
        yield cluster, cache


def _findings(client, name: str, plural: str = "jobs") -> list[str]:
    page = client.get(f"/{plural}/{io.NS}/{name}/").content.decode()
    assert 'class="findings"' in page, name
    part = page.split('class="findings"')[1].split("</ol>")[0]
    return [text(li.split(">", 1)[1]).strip() for li in part.split('<li class="finding ')[1:]]


def _components_are(cache, down: set[str]) -> None:
    def settled(snap) -> bool:
        for dep in snap.deployments.all():
            conds = (dep.get("status") or {}).get("conditions") or []
            ok = any(c.get("type") == "Available" and c.get("status") == "True" for c in conds)
            if ok == (dep["metadata"]["name"] in down):
                return False
        return True

    cache.wait_for(settled, 10)


def test_a_down_scheduler_leads_the_verdict_and_its_quoted_message_is_dated(cluster, client):
    cl, cache = cluster
    found = _findings(client, "waiting")
    assert not any("is not running" in f for f in found), found
    assert any("Scheduler said, 4m ago : 0/6 nodes are unavailable" in f for f in found), found
    sim_faults(cl, components_down=["volcano-scheduler"])
    try:
        _components_are(cache, {"volcano-scheduler"})
        found = _findings(client, "waiting")
        assert found[0].startswith(
            "The Volcano scheduler is not running (0/1 ready): nothing will be admitted or placed "
            "until it is back."
        ), found
        assert not any("controller manager" in f for f in found), found
        assert any("has not admitted it yet" in f for f in found[1:]), found
    finally:
        sim_faults(cl, components_down=[])
        _components_are(cache, set())


def test_the_status_fragment_follows_a_component_going_down(cluster, client):
    cl, cache = cluster
    page = client.get(f"/jobs/{io.NS}/waiting/").content.decode()
    frag = fragment_url(page, "status")
    assert client.get(frag, headers={"HX-Request": "true"}).status_code == 204
    sim_faults(cl, components_down=["volcano-scheduler"])
    try:
        _components_are(cache, {"volcano-scheduler"})
        resp = client.get(frag, headers={"HX-Request": "true"})
        assert resp.status_code == 200
        assert "The Volcano scheduler is not running" in text(resp.content.decode())
    finally:
        sim_faults(cl, components_down=[])
        _components_are(cache, set())


def test_components_the_user_cannot_read_are_not_called_down(cluster, client):
    from django.test import override_settings

    from dashboard.access import review_cache
    from tests.prod.conftest import proxy_settings

    cl, cache = cluster
    if cl.auth.user_named("dora") is None:
        cl.add_user("dora", "token-dora-0123456789", [io.NS])  # cannot read volcano-system
    sim_faults(cl, components_down=["volcano-scheduler"])
    review_cache.clear()
    try:
        _components_are(cache, {"volcano-scheduler"})
        assert _findings(client, "waiting")[0].startswith("The Volcano scheduler is not running")
        with override_settings(**proxy_settings()):
            page = client.get(f"/jobs/{io.NS}/waiting/", HTTP_X_FORWARDED_USER="dora").content.decode()
        assert "has not admitted it yet" in text(page)
        assert "is not running" not in text(page)
    finally:
        review_cache.clear()
        sim_faults(cl, components_down=[])
        _components_are(cache, set())


def test_a_down_controller_manager_is_named_for_a_volcano_job(cluster, client):
    cl, cache = cluster
    sim_faults(cl, components_down=["volcano-controllers"])
    try:
        _components_are(cache, {"volcano-controllers"})
        found = _findings(client, "waiting")
        assert found[0].startswith("The Volcano controller manager (volcano-controllers) is not running"), (
            found
        )
        assert "pods are not created" in found[0]
    finally:
        sim_faults(cl, components_down=[])
        _components_are(cache, set())


def test_a_gang_above_the_whole_cluster_never_starts(cluster, client):
    found = _findings(client, "bigger-than-cluster")
    assert found[0].startswith(
        "This will not start as the cluster stands: the gang's minimum resources are more than the "
        "allocatable of the whole cluster (6 nodes together): nvidia.com/gpu: needs 1k, the whole "
        "cluster has 16 allocatable"
    ), found
    assert any("has not admitted it yet" in f for f in found[1:]), found
    found = _findings(client, "ownerless", "podgroups")
    assert found[0].startswith("This will not start as the cluster stands"), found
    assert "cpu: needs" in found[0] and "the whole cluster has 512 allocatable" in found[0], found


def test_a_pod_no_node_can_ever_take_is_never_not_yet(cluster, client):
    found = _findings(client, "wide-pod")
    assert found[0] == (
        "This will not start as the cluster stands: no node can ever take a pod of task “worker” "
        "(requests cpu 96): 4 nodes are too small: cpu at most 64 allocatable, needs 96 (e.g. cpu-node-0) "
        "2 nodes have the taint nvidia.com/gpu=present:NoSchedule, which the pod does not tolerate "
        "(e.g. h100-node-0)"
    ), found
    assert any("the scheduler cannot place the whole gang" in f for f in found[1:]), found
    assert not any("cannot yet place" in f for f in found), found
    tolerant = _findings(client, "tolerant-wide-pod")
    assert not any("no node can ever take" in f for f in tolerant), tolerant
    assert any("cannot yet place" in f for f in tolerant), tolerant


def test_a_node_selector_no_tolerated_node_matches_is_never(cluster, client):
    found = _findings(client, "pinned")
    assert found[0] == (
        "This will not start as the cluster stands: no node can ever take a pod of task “worker” "
        "(requests cpu 1, nvidia.com/gpu 1): 5 nodes do not match its nodeSelector (e.g. cpu-node-0) "
        "1 node has the taint nvidia.com/gpu=present:NoSchedule, which the pod does not tolerate "
        "(h100-node-1)"
    ), found
    fit = _fit(client, "pinned")
    row = fit.split('data-fit-task="worker"')[1].split("</tr>")[0]
    assert 'data-fitting="0"' in row and "h100-node-0" not in row, row
    assert "nodeSelector and taints are judged, node affinity and ports are not." in text(fit)
    assert "No node is Ready, not cordoned, matched by their nodeSelector" in text(fit)


def _fit(client, name: str) -> str:
    page = client.get(f"/jobs/{io.NS}/{name}/").content.decode()
    return page.split("data-node-fit")[1].split("</section>")[0]


def test_the_largest_free_slots_count_only_nodes_the_pod_may_use(cluster, client):
    fit = _fit(client, "wide-pod")
    slots = text(fit.split("data-fit-slots")[1].split("</ul>")[0])
    assert (
        "Largest free amount on one node these pods may use (Ready, not cordoned, nodeSelector matched, "
        "taints tolerated):" in text(fit)
    )
    assert "h100-node" not in slots and "nvidia.com/gpu" not in slots, slots
    assert "cpu 64 ( cpu-node-" in slots, slots
    row = fit.split('data-fit-task="worker"')[1].split("</tr>")[0]
    assert 'data-fitting="0"' in row
    tolerant = text(_fit(client, "tolerant-wide-pod").split("data-fit-slots")[1].split("</ul>")[0])
    assert "cpu 128 ( h100-node-" in tolerant and "nvidia.com/gpu 8" in tolerant, tolerant
