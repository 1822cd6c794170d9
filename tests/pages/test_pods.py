"""A Pod's page: links to its Job, PodGroup and Queue; polling stops when the pod is finished."""

from __future__ import annotations

import pytest

from tests.pages.helpers import check_fragment, pods


@pytest.mark.usefixtures("demo_cache")
def test_pod_page_links_back_to_job_podgroup_and_queue(client, demo_cluster):
    pod = next(
        p
        for p in pods(demo_cluster, "team-vision")
        if p["metadata"].get("labels", {}).get("volcano.sh/job-name") == "augment-crashloop"
    )
    name = pod["metadata"]["name"]
    page = client.get(f"/pods/team-vision/{name}/").content.decode()
    assert 'href="/jobs/team-vision/augment-crashloop/"' in page
    group = pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
    assert f'href="/podgroups/team-vision/{group}/"' in page
    assert 'href="/queues/research-vision/"' in page
    assert "CrashLoopBackOff" in page
    check_fragment(client, page, "status")
    assert client.get("/pods/team-vision/nope/").status_code == 404


def _pod(phase: str, state: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "w-0", "namespace": "ml", "uid": "u-w-0", "resourceVersion": "4"},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        "status": {"phase": phase, "containerStatuses": [{"name": "main", "state": state}]},
    }


@pytest.mark.parametrize(
    "phase,state,live",
    [
        ("Running", {"running": {}}, True),
        ("Succeeded", {"terminated": {"reason": "Completed", "exitCode": 0}}, False),
        ("Failed", {"terminated": {"reason": "Error", "exitCode": 1}}, False),  # STATUS "Error"
        ("Failed", {"terminated": {"reason": "OOMKilled", "exitCode": 137}}, False),
    ],
)
def test_a_finished_pod_stops_polling(client, memory_cache, phase, state, live):
    """The pod phase decides (dashboard.volcano.phases.pod_is_final), whatever kubectl's STATUS
    column shows for it."""
    for kind in ("pods", "events"):
        memory_cache.store(kind).mark_synced()
    memory_cache.store("pods").upsert(_pod(phase, state))
    page = client.get("/pods/ml/w-0/").content.decode()
    assert ('data-poll="' in page) is live
