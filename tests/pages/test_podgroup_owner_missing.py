"""A PodGroup whose ownerReference names a Volcano Job the cache does not hold (deleted, or never
created) shows the Job's name unlinked with "(not found)", on the list and on its page, instead of
a link to a 404; an owner of another kind keeps its kind label."""

from __future__ import annotations

import pytest

from tests.pages.helpers import text

META = {"namespace": "ml", "resourceVersion": "3", "creationTimestamp": "2026-11-29T10:00:00Z"}


def _podgroup(name: str, owner: dict) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "uid": f"u-{name}", "ownerReferences": [owner], **META},
        "spec": {"queue": "default", "minMember": 1},
        "status": {"phase": "Pending"},
    }


VOLCANO_OWNER = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "name": "train",
    "uid": "u-gone",
    "controller": True,
}
OTHER_OWNER = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "name": "db",
    "uid": "u-sts",
    "controller": True,
}


@pytest.fixture
def cache(memory_cache):
    for k in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(k).mark_synced()
    memory_cache.store("queues").upsert(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "default", "uid": "u-q", "resourceVersion": "2"},
            "spec": {"weight": 1},
            "status": {"state": "Open"},
        }
    )
    memory_cache.store("podgroups").upsert(_podgroup("train-pg", VOLCANO_OWNER))
    memory_cache.store("podgroups").upsert(_podgroup("db-pg", OTHER_OWNER))
    return memory_cache


def _row(page: str, name: str) -> str:
    return page.split(f'data-podgroup="ml/{name}"')[1].split("</tr>")[0]


def test_list_says_a_missing_owner_job_is_not_found(client, cache):
    page = client.get("/podgroups/").content.decode()
    row = _row(page, "train-pg")
    assert "/jobs/ml/train/" not in row
    assert "train (not found)" in text(row)
    assert "not found" not in text(_row(page, "db-pg"))
    assert "StatefulSet" in text(_row(page, "db-pg"))


def test_detail_says_a_missing_owner_job_is_not_found(client, cache):
    page = client.get("/podgroups/ml/train-pg/").content.decode()
    assert "/jobs/ml/train/" not in page
    assert "Owner train (not found)" in text(page)
    other = text(client.get("/podgroups/ml/db-pg/").content.decode())
    assert "Owner db StatefulSet" in other and "not found" not in other


def test_owner_job_that_exists_is_linked(client, cache):
    cache.store("jobs").upsert(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "train", "uid": "u-gone", **META},
            "spec": {"queue": "default", "minAvailable": 1, "tasks": [{"name": "w", "replicas": 1}]},
            "status": {"state": {"phase": "Pending"}},
        }
    )
    page = client.get("/podgroups/ml/train-pg/").content.decode()
    assert 'href="/jobs/ml/train/"' in page and "not found" not in text(page)
    assert 'href="/jobs/ml/train/"' in _row(client.get("/podgroups/").content.decode(), "train-pg")
