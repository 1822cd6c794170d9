"""The object store: metadata rules, defaults, updates, patches, deletion, lists and watches."""

from __future__ import annotations

import pytest

from dashboard.sim.clock import SimClock
from dashboard.sim.kinds import COMMAND, JOB, NAMESPACE, POD, PODGROUP, QUEUE
from dashboard.sim.store import ApiError, Store


@pytest.fixture
def store():
    s = Store(SimClock(), history_size=50, seed=3)
    s.create(NAMESPACE, {"metadata": {"name": "default"}})
    s.create(NAMESPACE, {"metadata": {"name": "team-a"}})
    return s


def job(name, ns="default", **spec):
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1, "template": {}}], **spec},
    }


def pod(name, ns="default", owner=None, labels=None):
    meta = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def test_create_sets_server_metadata_and_crd_defaults(store):
    created = store.create(JOB, job("j1"))
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] == "2026-11-29T10:00:00Z"
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) == store.resource_version
    assert created["spec"]["queue"] == "default" and created["spec"]["maxRetry"] == 3
    assert list(created)[:3] == ["apiVersion", "kind", "metadata"]


def test_uids_are_deterministic_for_a_seed():
    a, b = Store(SimClock(), seed=9), Store(SimClock(), seed=9)
    for s in (a, b):
        s.create(NAMESPACE, {"metadata": {"name": "x"}})
    assert a.get(NAMESPACE, None, "x")["metadata"]["uid"] == b.get(NAMESPACE, None, "x")["metadata"]["uid"]


def test_queue_defaults_and_flat_guarantee_pruned(store):
    q = store.create(
        QUEUE, {"metadata": {"name": "q1"}, "spec": {"guarantee": {"cpu": "1"}, "capability": None}}
    )
    assert q["spec"] == {"guarantee": {}, "weight": 1, "dequeueStrategy": "traverse"}


def test_podgroup_defaults_and_network_topology(store):
    pg = store.create(
        PODGROUP,
        {
            "metadata": {"name": "pg", "namespace": "default"},
            "spec": {"minMember": 2, "networkTopology": {"highestTierAllowed": 1}},
            "status": {"phase": "Running"},
        },
    )
    assert pg["spec"]["queue"] == "default"
    assert pg["spec"]["networkTopology"]["mode"] == "hard"
    # PodGroups have no status subresource: status written on create is kept.
    assert pg["status"] == {"phase": "Running"}


def test_status_subresource_kinds_drop_status_on_create(store):
    j = store.create(JOB, {**job("j"), "status": {"state": {"phase": "Running"}}})
    assert "status" not in j
    p = store.create(POD, pod("p"))
    assert p["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_command_top_level_fields_kept_unknown_pruned(store):
    c = store.create(
        COMMAND,
        {
            "metadata": {"generateName": "j-abortjob-", "namespace": "default"},
            "action": "AbortJob",
            "target": {"kind": "Job", "name": "j"},
            "junk": 1,
        },
    )
    assert c["action"] == "AbortJob" and "junk" not in c
    assert (
        c["metadata"]["name"].startswith("j-abortjob-")
        and len(c["metadata"]["name"]) == len("j-abortjob-") + 5
    )


@pytest.mark.parametrize("name", ["Upper", "has_underscore", "-lead", "x" * 254])
def test_invalid_names_are_422(store, name):
    with pytest.raises(ApiError) as err:
        store.create(JOB, job(name))
    assert err.value.code == 422 and err.value.reason == "Invalid"


def test_namespace_names_are_dns_labels(store):
    with pytest.raises(ApiError) as err:
        store.create(NAMESPACE, {"metadata": {"name": "a.b"}})
    assert err.value.code == 422


def test_duplicate_create_is_409_already_exists(store):
    store.create(JOB, job("j"))
    with pytest.raises(ApiError) as err:
        store.create(JOB, job("j"))
    assert (err.value.code, err.value.reason) == (409, "AlreadyExists")


def test_create_in_missing_namespace_is_404(store):
    with pytest.raises(ApiError) as err:
        store.create(JOB, job("j", ns="nope"))
    assert err.value.code == 404 and 'namespaces "nope" not found' in err.value.message


def test_replay_keeps_recorded_fields(store):
    recorded = {**job("r"), "status": {"state": {"phase": "Running"}}}
    recorded["metadata"].update(uid="u-1", creationTimestamp="2020-01-01T00:00:00Z", generation=4)
    out = store.create(JOB, recorded, replay=True)
    assert out["metadata"]["uid"] == "u-1" and out["metadata"]["generation"] == 4
    assert out["metadata"]["creationTimestamp"] == "2020-01-01T00:00:00Z"
    assert out["status"]["state"]["phase"] == "Running"
    assert store.by_uid("u-1")[1]["metadata"]["name"] == "r"


def test_update_rules_status_subresource_conflict_and_generation(store):
    j = store.create(JOB, job("j"))
    j["spec"]["minAvailable"] = 2
    j["status"] = {"state": {"phase": "Running"}}
    j2 = store.update(JOB, j)
    assert j2["metadata"]["generation"] == 2
    assert "status" not in j2  # main-resource PUT ignores status
    with pytest.raises(ApiError) as err:
        store.update(JOB, j)  # stale resourceVersion
    assert (err.value.code, err.value.reason) == (409, "Conflict")
    j2["status"] = {"state": {"phase": "Running"}}
    j2["spec"]["minAvailable"] = 5
    j3 = store.update(JOB, j2, status=True)
    assert j3["status"]["state"]["phase"] == "Running"
    assert j3["spec"]["minAvailable"] == 2 and j3["metadata"]["generation"] == 2  # /status ignores spec


def test_podgroup_status_update_is_404_and_put_replaces_status(store):
    pg = store.create(
        PODGROUP, {"metadata": {"name": "pg", "namespace": "default"}, "spec": {"minMember": 1}}
    )
    pg["status"] = {"phase": "Inqueue"}
    with pytest.raises(ApiError) as err:
        store.update(PODGROUP, pg, status=True)
    assert err.value.code == 404
    out = store.update(PODGROUP, pg)
    assert out["status"] == {"phase": "Inqueue"}
    # Without a status subresource, any non-metadata change bumps generation (upstream CRD rule).
    assert out["metadata"]["generation"] == 2


def test_noop_update_commits_nothing(store):
    j = store.create(JOB, job("j"))
    rv = store.resource_version
    assert store.update(JOB, j)["metadata"]["resourceVersion"] == j["metadata"]["resourceVersion"]
    assert store.resource_version == rv


def test_crd_update_without_resource_version_is_422(store):
    j = store.create(JOB, job("j"))
    del j["metadata"]["resourceVersion"]
    with pytest.raises(ApiError) as err:
        store.update(JOB, j)
    assert err.value.code == 422


def test_patches(store):
    store.create(JOB, job("j"))
    out = store.patch(
        JOB, "default", "j", {"metadata": {"labels": {"a": "1"}}, "spec": {"minAvailable": 3}}, "merge"
    )
    assert out["metadata"]["labels"] == {"a": "1"} and out["metadata"]["generation"] == 2
    out = store.patch(
        JOB,
        "default",
        "j",
        [
            {"op": "replace", "path": "/spec/minAvailable", "value": 4},
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        ],
        "json",
    )
    assert out["spec"]["minAvailable"] == 4 and out["metadata"]["labels"] == {"a": "1", "b": "2"}
    with pytest.raises(ApiError) as err:
        store.patch(JOB, "default", "j", [{"op": "test", "path": "/spec/minAvailable", "value": 9}], "json")
    assert err.value.code == 422
    out = store.patch(JOB, "default", "j", {"status": {"running": 2}}, "merge", status=True)
    assert out["status"] == {"running": 2}
    out = store.patch(JOB, "default", "j", {"spec": {"queue": None}}, "merge")
    assert out["spec"]["queue"] == "default"  # the CRD default comes back


def test_strategic_merge_on_core_kind_merges_containers_by_name(store):
    store.create(
        POD,
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]},
        },
    )
    out = store.patch(
        POD, "default", "p", {"spec": {"containers": [{"name": "b", "image": "z"}]}}, "strategic"
    )
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [("a", "x"), ("b", "z")]
    out = store.patch(
        POD, "default", "p", {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}, "strategic"
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["b"]


def test_mutate_for_controllers(store):
    store.create(JOB, job("j"))
    out = store.mutate(
        JOB, "default", "j", lambda o: o.setdefault("status", {}).update(state={"phase": "Pending"})
    )
    assert out["status"]["state"]["phase"] == "Pending"
    rv = store.resource_version
    store.mutate(JOB, "default", "j", lambda o: None)  # no change -> no commit
    assert store.resource_version == rv


def test_cascading_delete_background_foreground_and_orphan(store):
    j = store.create(JOB, job("j"))
    pg = store.create(
        PODGROUP,
        {
            "metadata": {
                "name": "pg",
                "namespace": "default",
                "ownerReferences": [
                    {"apiVersion": JOB.api_version, "kind": "Job", "name": "j", "uid": j["metadata"]["uid"]}
                ],
            },
            "spec": {},
        },
    )
    store.create(POD, pod("p0", owner=j))
    store.create(POD, pod("p1", owner=pg))  # grandchild through the PodGroup
    store.delete(JOB, "default", "j")
    assert store.list(POD)[0] == [] and store.list(PODGROUP)[0] == []

    j = store.create(JOB, job("k"))
    store.create(POD, pod("q0", owner=j))
    store.delete(JOB, "default", "k", propagation="Orphan")
    left = store.get(POD, "default", "q0")
    assert "ownerReferences" not in left["metadata"]

    j = store.create(JOB, job("f"))
    store.create(POD, pod("f0", owner=j))
    w = store.watch(POD, resource_version=str(store.resource_version))
    store.delete(JOB, "default", "f", propagation="Foreground")
    assert w.next(1)[0] == "DELETED"
    assert store.try_get(JOB, "default", "f") is None


def test_finalizers_delay_deletion(store):
    store.create(JOB, {**job("j"), "metadata": {"name": "j", "namespace": "default", "finalizers": ["x/y"]}})
    out = store.delete(JOB, "default", "j")
    assert out["metadata"]["deletionTimestamp"]
    assert store.get(JOB, "default", "j")["metadata"]["deletionTimestamp"]
    store.patch(JOB, "default", "j", {"metadata": {"finalizers": None}}, "merge")
    assert store.try_get(JOB, "default", "j") is None


def test_namespace_deletion_removes_its_objects(store):
    store.create(JOB, job("j", ns="team-a"))
    store.create(JOB, job("j", ns="default"))
    store.delete(NAMESPACE, None, "team-a")
    items, _ = store.list(JOB)
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [("default", "j")]


def test_list_order_namespace_and_pagination(store):
    for ns in ("team-a", "default"):
        for i in (3, 1, 2):
            store.create(JOB, job(f"j{i}", ns=ns))
    items, rv = store.list(JOB)
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [
        ("default", "j1"),
        ("default", "j2"),
        ("default", "j3"),
        ("team-a", "j1"),
        ("team-a", "j2"),
        ("team-a", "j3"),
    ]
    assert rv == str(store.resource_version)
    assert [i["metadata"]["name"] for i in store.list(JOB, "team-a")[0]] == ["j1", "j2", "j3"]
    page = store.list_page(JOB, limit=4)
    assert len(page.entries) == 4 and page.continue_token and page.remaining == 2
    store.create(JOB, job("j0", ns="default"))  # before the cursor: not seen by the next page
    page2 = store.list_page(JOB, limit=4, continue_token=page.continue_token)
    assert [e.obj["metadata"]["name"] for e in page2.entries] == ["j2", "j3"]
    assert page2.resource_version == page.resource_version and page2.continue_token == ""


def test_expired_and_bad_continue_tokens(store):
    for i in range(3):
        store.create(JOB, job(f"j{i}"))
    page = store.list_page(JOB, limit=1)
    store.compact()  # compaction at the list's own revision keeps it readable
    store.list_page(JOB, limit=1, continue_token=page.continue_token)
    store.create(JOB, job("later"))
    store.compact()
    with pytest.raises(ApiError) as err:
        store.list_page(JOB, limit=1, continue_token=page.continue_token)
    assert (err.value.code, err.value.reason) == (410, "Expired")
    with pytest.raises(ApiError) as err:
        store.list_page(JOB, continue_token="not-a-token")
    assert err.value.code == 400


def test_selectors_in_lists(store):
    store.create(POD, pod("a", labels={"app": "x", "tier": "web"}))
    store.create(POD, pod("b", labels={"app": "y"}))
    store.create(POD, pod("c"))
    names = lambda **kw: [i["metadata"]["name"] for i in store.list(POD, **kw)[0]]  # noqa: E731
    assert names(label_selector="app=x") == ["a"]
    assert names(label_selector="app!=x") == ["b", "c"]
    assert names(label_selector="app in (x,y),!tier") == ["b"]
    assert names(label_selector="app notin (x)") == ["b", "c"]
    assert names(label_selector="tier") == ["a"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="status.phase=Pending,metadata.name!=a") == ["b", "c"]
    with pytest.raises(ApiError) as err:
        store.list(POD, field_selector="spec.bogus=1")
    assert err.value.code == 400 and "field label not supported" in err.value.message


def test_watch_replay_synthetic_added_and_selector_transitions(store):
    store.create(POD, pod("a", labels={"app": "x"}))
    w = store.watch(POD, label_selector="app=x")
    assert w.next(1)[0] == "ADDED"
    store.patch(POD, "default", "a", {"metadata": {"labels": {"app": "y"}}}, "merge")
    assert w.next(1)[0] == "DELETED"  # stopped matching
    store.patch(POD, "default", "a", {"metadata": {"labels": {"app": "x"}}}, "merge")
    assert w.next(1)[0] == "ADDED"  # matches again
    store.create(POD, pod("other", ns="team-a"))
    assert w.next(0.05) is None
    w.close()
    assert w.closed


def test_watch_from_resource_version_and_410(store):
    start = store.resource_version
    for i in range(5):
        store.create(JOB, job(f"j{i}"))
    w = store.watch(JOB, resource_version=str(start + 2))
    names = []
    while (ev := w.next(0.05)) is not None:
        names.append(ev[1]["metadata"]["name"])
    assert names == ["j2", "j3", "j4"]
    for i in range(60):  # roll the 50-event history over
        store.create(POD, pod(f"p{i}"))
    with pytest.raises(ApiError) as err:
        store.watch(POD, resource_version=str(start))
    assert (err.value.code, err.value.reason) == (410, "Expired")
    store.watch(JOB, resource_version=str(start)).close()  # jobs' own history is intact
    store.compact()
    with pytest.raises(ApiError):
        store.watch(JOB, resource_version=str(start))
    store.watch(JOB, resource_version=str(store.resource_version)).close()


def test_listeners_see_committed_changes(store):
    seen = []
    store.add_listener(lambda t, k, o: seen.append((t, k.kind, o["metadata"]["name"])))
    store.create(JOB, job("j"))
    store.delete(JOB, "default", "j")
    assert seen == [("ADDED", "Job", "j"), ("DELETED", "Job", "j")]


def test_admission_hooks_can_reject(store):
    def deny(op, kind, new, old):
        if kind is JOB and new["spec"].get("queue") == "closed":
            raise ApiError(403, "Forbidden", "queue closed is not Open")

    store.add_admission(deny)
    with pytest.raises(ApiError) as err:
        store.create(JOB, job("j", queue="closed"))
    assert err.value.code == 403
    store.create(JOB, job("j"))
