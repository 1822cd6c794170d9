"""Pure pieces of the simulated cluster: patches, selectors, tables, kinds, clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.sim import kinds, tables
from dashboard.sim.clock import SimClock
from dashboard.sim.patching import PatchError, json_patch, merge_patch, strategic_merge_patch
from dashboard.sim.selectors import SelectorError, parse_field_selector, parse_label_selector


def test_merge_patch_rfc7386():
    assert merge_patch({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": None, "e": 3}, "d": [2]}) == {
        "a": {"c": 2, "e": 3},
        "d": [2],
    }
    assert merge_patch({"a": 1}, {"a": {"b": None}}) == {"a": {}}


def test_json_patch_operations():
    doc = {"a": [1, 2], "b": {"c": 1}}
    out = json_patch(
        doc,
        [
            {"op": "add", "path": "/a/-", "value": 3},
            {"op": "add", "path": "/a/0", "value": 0},
            {"op": "remove", "path": "/a/1"},
            {"op": "copy", "from": "/b", "path": "/d"},
            {"op": "move", "from": "/b/c", "path": "/b/x~1y"},
            {"op": "replace", "path": "/d/c", "value": 5},
            {"op": "test", "path": "/a", "value": [0, 2, 3]},
        ],
    )
    assert out == {"a": [0, 2, 3], "b": {"x/y": 1}, "d": {"c": 5}}
    assert doc == {"a": [1, 2], "b": {"c": 1}}  # input untouched
    for bad in (
        [{"op": "remove", "path": "/nope"}],
        [{"op": "replace", "path": "/a/9", "value": 1}],
        [{"op": "test", "path": "/a", "value": []}],
    ):
        with pytest.raises(PatchError) as err:
            json_patch(doc, bad)
        assert err.value.code == 422
    with pytest.raises(PatchError) as err:
        json_patch(doc, {"op": "add"})
    assert err.value.code == 400


def test_strategic_merge_directives():
    pod = {
        "spec": {
            "containers": [
                {"name": "a", "image": "1", "env": [{"name": "X", "value": "1"}]},
                {"name": "b", "image": "2"},
            ],
            "tolerations": [{"key": "t1"}],
        },
        "metadata": {"finalizers": ["f1"]},
    }
    out = strategic_merge_patch(
        pod,
        {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
            "spec": {
                "containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}],
                "tolerations": [{"key": "t2"}],
            },
            "metadata": {"finalizers": ["f2"]},
        },
    )
    assert out["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]
    assert out["spec"]["tolerations"] == [{"key": "t2"}]  # no merge key: replaced
    assert out["metadata"]["finalizers"] == ["f1", "f2"]
    out = strategic_merge_patch({"spec": {"a": 1, "b": 2}}, {"spec": {"$retainKeys": ["b"], "b": 3}})
    assert out == {"spec": {"b": 3}}
    out = strategic_merge_patch({"spec": {"a": {"x": 1}}}, {"spec": {"a": {"$patch": "replace", "y": 2}}})
    assert out == {"spec": {"a": {"y": 2}}}


def test_label_selector_grammar():
    m = parse_label_selector("env in (prod, staging), tier notin (db), app, !legacy, version>2, x==y")
    assert m({"metadata": {"labels": {"env": "prod", "tier": "web", "app": "a", "version": "3", "x": "y"}}})
    assert not m(
        {"metadata": {"labels": {"env": "prod", "tier": "web", "app": "a", "version": "1", "x": "y"}}}
    )
    assert parse_label_selector("") is None and parse_label_selector(None) is None
    for bad in ("a in (b", "=x", "a in b", "a=b c", "a!=(x)", "a>b"):
        with pytest.raises(SelectorError):
            parse_label_selector(bad)


def test_field_selector_support_per_resource():
    m = parse_field_selector("involvedObject.kind=Job,type!=Normal,source=volcano", "events")
    assert m({"involvedObject": {"kind": "Job"}, "type": "Warning", "source": {"component": "volcano"}})
    assert not m({"involvedObject": {"kind": "Job"}, "type": "Normal", "source": {"component": "volcano"}})
    assert parse_field_selector("metadata.namespace=a", "jobs")({"metadata": {"namespace": "a"}})
    with pytest.raises(SelectorError, match="field label not supported: spec.nodeName"):
        parse_field_selector("spec.nodeName=x", "jobs")


@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["1", "2"]), max_size=3),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["1", "2"]),
)
def test_label_selector_matches_its_definition(labels, key, value):
    obj = {"metadata": {"labels": labels}}
    assert parse_label_selector(f"{key}={value}")(obj) == (labels.get(key) == value)
    assert parse_label_selector(f"{key}!={value}")(obj) == (labels.get(key) != value)
    assert parse_label_selector(f"{key} in ({value})")(obj) == (labels.get(key) == value)
    assert parse_label_selector(f"{key} notin ({value})")(obj) == (labels.get(key) != value)
    assert parse_label_selector(key)(obj) == (key in labels)
    assert parse_label_selector(f"!{key}")(obj) == (key not in labels)


@pytest.mark.parametrize(
    "seconds,text",
    [
        (0, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (150, "2m30s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 120, "3h2m"),
        (10 * 3600, "10h"),
        (50 * 3600, "2d2h"),
        (9 * 86400, "9d"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration_like_kubectl(seconds, text):
    assert tables.human_duration(seconds) == text


def test_pod_table_cells():
    now = datetime(2026, 11, 29, 10, 5, tzinfo=UTC)
    pod = {
        "metadata": {"name": "p", "creationTimestamp": "2026-11-29T10:00:00Z"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.1",
            "containerStatuses": [
                {"ready": True, "restartCount": 1, "state": {"running": {}}},
                {"ready": False, "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
            ],
        },
    }
    assert tables.cells(kinds.POD, pod, now)[:6] == ["p", "1/2", "CrashLoopBackOff", 3, "5m", "10.0.0.1"]


def test_kind_table_lookups():
    assert kinds.kind_for("scheduling.volcano.sh", "podgroups") is kinds.PODGROUP
    assert kinds.kind_by_name("Job", "batch") is not kinds.kind_by_name("Job", "batch.volcano.sh")
    assert kinds.resolve("vcjob") is kinds.JOB and kinds.resolve("jobs") is kinds.JOB
    assert kinds.resolve("jobs.batch").group == "batch" and kinds.resolve("q") is kinds.QUEUE
    assert kinds.QUEUE.api_version == "scheduling.volcano.sh/v1beta1" and kinds.POD.api_version == "v1"
    assert not kinds.PODGROUP.status_subresource and kinds.JOB.status_subresource
    with pytest.raises(KeyError):
        kinds.resolve("widgets")


def test_clock():
    c = SimClock()
    assert c.rfc3339() == "2026-11-29T10:00:00Z"
    c.advance(61.5)
    assert c.rfc3339() == "2026-11-29T10:01:01Z" and c.now().tzinfo is not None
    with pytest.raises(ValueError):
        c.advance(-1)
    with pytest.raises(ValueError):
        SimClock(datetime(2026, 1, 1))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.from_regex(r"[a-z][a-z0-9]{0,4}", fullmatch=True)),
        unique=True,
        max_size=30,
    ),
    st.integers(min_value=1, max_value=7),
    st.sets(st.integers(min_value=0, max_value=29)),
)
def test_pagination_returns_every_object_once_in_order(keys, limit, deleted):
    from dashboard.sim.store import Store

    store = Store(SimClock())
    for ns in ("a", "b", "c"):
        store.create(kinds.NAMESPACE, {"metadata": {"name": ns}})
    for ns, name in keys:
        store.create("configmaps", {"metadata": {"name": name, "namespace": ns}})
    for i in sorted(deleted):
        if i < len(keys):
            store.delete("configmaps", *keys[i])
    recreated = {i for i in deleted if i % 3 == 0 and i < len(keys)}
    for i in recreated:  # a deleted key that comes back must be listed exactly once
        ns, name = keys[i]
        store.create("configmaps", {"metadata": {"name": name, "namespace": ns}})
    expected = sorted(k for i, k in enumerate(keys) if i not in deleted or i in recreated)
    got, token = [], None
    while True:
        page = store.list_page("configmaps", limit=limit, continue_token=token)
        assert len(page.entries) <= limit
        got += [(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]) for e in page.entries]
        token = page.continue_token
        if not token:
            break
    assert got == expected


def _pb_field(number: int, value: bytes | int) -> bytes:
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b = n & 0x7F
            n >>= 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def test_protobuf_request_bodies():
    from dashboard.sim import protobuf

    meta = _pb_field(1, b"cm") + _pb_field(2, b"") + _pb_field(11, _pb_field(1, b"app") + _pb_field(2, b"x"))
    obj = _pb_field(1, meta) + _pb_field(2, _pb_field(1, b"k") + _pb_field(2, b"v")) + _pb_field(4, 1)
    envelope = _pb_field(1, _pb_field(1, b"v1") + _pb_field(2, b"ConfigMap")) + _pb_field(2, obj)
    assert protobuf.decode(b"k8s\x00" + envelope) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"app": "x"}},
        "data": {"k": "v"},
        "immutable": True,
    }
    other = _pb_field(1, _pb_field(1, b"apps/v1") + _pb_field(2, b"Deployment"))
    with pytest.raises(protobuf.ProtobufUnsupported):
        protobuf.decode(b"k8s\x00" + other)
    with pytest.raises(protobuf.ProtobufUnsupported):
        protobuf.decode(b"{}")
