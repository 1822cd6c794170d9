"""PodGroups of workloads that are not Volcano Jobs (Deployments, StatefulSets, batch/v1 Jobs, bare
pods; REFERENCE.md §4 "Other workloads") end to end: the large generator's small cluster over HTTP
behind a live cache; list and detail show the owner without a Job link, pods link both ways, the
PodGroup page says why it waits, queue pages count them."""

from __future__ import annotations

import re

import pytest

from tests.pages.helpers import podgroups, pods, text

GROUP = "scheduling.k8s.io/group-name"


@pytest.fixture(scope="module")
def workload_cluster(tmp_path_factory):
    from dashboard.sim.scenarios import load_scenario
    from tests.conftest import _new_cluster
    from tests.pages.conftest import installed_cache

    cluster = _new_cluster(seed=11, controllers=False)
    try:
        load_scenario(cluster, "large", jobs=80, pods=400, queues=12, events=800)
        with installed_cache(cluster, tmp_path_factory.mktemp("wl")):
            yield cluster
    finally:
        cluster.stop()


def _others(cluster) -> dict[str, dict]:
    """The non-Volcano PodGroups by owner kind label (the first of each kind/phase)."""
    out: dict[str, dict] = {}
    for pg in podgroups(cluster):
        ref = pg["metadata"]["ownerReferences"][0]
        if ref["apiVersion"].startswith("batch.volcano.sh"):
            continue
        out.setdefault(f"{ref['kind']}/{pg['status']['phase']}", pg)
    return out


def _url(pg: dict) -> str:
    return f"/podgroups/{pg['metadata']['namespace']}/{pg['metadata']['name']}/"


def test_list_shows_owner_kind_and_no_job_link(client, workload_cluster):
    page = client.get("/podgroups/?per_page=500").content.decode()
    others = _others(workload_cluster)
    assert {k.split("/")[0] for k in others} == {"ReplicaSet", "StatefulSet", "Job", "Pod"}
    for key, pg in others.items():
        marker = f'data-podgroup="{pg["metadata"]["namespace"]}/{pg["metadata"]["name"]}"'
        if marker not in page:
            continue  # beyond the first page
        row = page.split(marker)[1].split("</tr>")[0]
        ref = pg["metadata"]["ownerReferences"][0]
        assert ref["name"] in row and "/jobs/" not in row, key
        assert (ref["kind"] if ref["kind"] != "Job" else "Job (batch/v1)") in text(row), key


@pytest.mark.parametrize("owner_kind", ["ReplicaSet", "StatefulSet", "Job", "Pod"])
def test_detail_shows_owner_pods_and_links_back_from_the_pod(client, workload_cluster, owner_kind):
    pg = next(g for k, g in _others(workload_cluster).items() if k.startswith(f"{owner_kind}/"))
    ns, name = pg["metadata"]["namespace"], pg["metadata"]["name"]
    response = client.get(_url(pg))
    assert response.status_code == 200
    page = response.content.decode()
    ref = pg["metadata"]["ownerReferences"][0]
    owner_line = text(page.split('class="object-sub"')[1].split("</p>")[0])
    label = "Job (batch/v1)" if owner_kind == "Job" else owner_kind
    assert f"Owner {ref['name']} {label}" in owner_line
    assert not re.search(r'href="/jobs/[^"]+/"', page)
    members = [p for p in pods(workload_cluster, ns) if p["metadata"]["annotations"].get(GROUP) == name]
    assert members
    for pod in members:
        pod_url = f"/pods/{ns}/{pod['metadata']['name']}/"
        assert f'href="{pod_url}"' in page
        pod_page = client.get(pod_url)
        assert pod_page.status_code == 200
        body = pod_page.content.decode()
        assert f'href="{_url(pg)}"' in body
        assert f'href="/queues/{pg["spec"]["queue"]}/"' in body
        sub = text(body.split('class="object-sub"')[1].split("</p>")[0])
        pod_ref = (pod["metadata"].get("ownerReferences") or [{}])[0]
        if pod_ref:
            assert f"Owner {pod_ref['name']}" in sub and "Job none" not in sub


def test_waiting_podgroups_say_why(client, workload_cluster):
    others = _others(workload_cluster)
    pending = next(g for k, g in others.items() if k.endswith("/Pending"))
    page = text(client.get(_url(pending)).content.decode())
    assert "has not admitted it yet, so the scheduler does not place its pods" in page
    assert "queue resource quota insufficient" in page
    inqueue = next(g for k, g in others.items() if k.endswith("/Inqueue"))
    page = text(client.get(_url(inqueue)).content.decode())
    assert "admitted (Inqueue)" in page and "Insufficient nvidia.com/gpu" in page


def test_queue_page_counts_them(client, workload_cluster):
    pg = next(iter(_others(workload_cluster).values()))
    queue = pg["spec"]["queue"]
    in_queue = [g for g in podgroups(workload_cluster) if g["spec"]["queue"] == queue]
    page = client.get(f"/queues/{queue}/").content.decode()
    assert f'href="{_url(pg)}"' in page or len(in_queue) > 200
    # The PodGroup phase cards count every PodGroup in the queue, other workloads' included.
    counts = {
        phase: int(n)
        for phase, n in re.findall(r'phase=(\w+)"[^>]*>\s*<span class="phase-card-count">(\d+)<', page)
    }
    assert counts
    for phase in {g["status"]["phase"] for g in in_queue}:
        assert counts.get(phase) == sum(1 for g in in_queue if g["status"]["phase"] == phase), phase
