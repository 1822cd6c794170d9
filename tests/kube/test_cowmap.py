"""ShardedMap, SortedChunks, ChunkedSet and a KindStore built of them against plain models: random
puts, removes and publications; every published view keeps the contents it had when published."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.kube import cowmap
from dashboard.kube import store as kstore
from dashboard.kube.cowmap import ChunkedSet, ShardedMap, SortedChunks

# The fixture below sets constants for a whole test, not per example: hypothesis's health check
# against function-scoped fixtures does not apply.
FIXTURE = [HealthCheck.function_scoped_fixture]


@pytest.fixture
def monkeypatch_chunk():
    """Chunks of 2 entries (split at 4), sets of 3 keys a chunk and tuple buckets of 2 keys: the
    random sequences below split, merge and empty chunks and move buckets between their forms
    (and split shards: a map of 100 entries has 16 shards)."""
    saved = cowmap.CHUNK, cowmap.SET_CHUNK, kstore.SMALL_BUCKET
    cowmap.CHUNK, cowmap.SET_CHUNK, kstore.SMALL_BUCKET = 2, 3, 2
    yield
    cowmap.CHUNK, cowmap.SET_CHUNK, kstore.SMALL_BUCKET = saved


keys = st.tuples(st.sampled_from([None, "a", "b"]), st.text(alphabet="xyz", min_size=1, max_size=3))
ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), keys, st.integers()),
        st.tuples(st.just("remove"), keys, st.none()),
        st.tuples(st.just("pop"), keys, st.none()),
        st.tuples(st.just("publish"), st.none(), st.none()),
    ),
    max_size=200,
)


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE)
@given(ops)
def test_matches_a_dict_and_published_views_never_change(monkeypatch_chunk, steps):
    m: ShardedMap = ShardedMap()
    model: dict = {}
    views: list = []
    for op, key, value in steps:
        if op == "put":
            m[key] = value
            model[key] = value
        elif op == "remove":
            if key in model:
                del m[key]
                del model[key]
        elif op == "pop":
            assert m.pop(key, "none") == model.pop(key, "none")
        else:
            views.append((m.publish(), dict(model)))
        assert len(m) == len(model)
        assert (key in m) == (key in model) if key is not None else True
    assert dict(m.items()) == model and sorted(m, key=repr) == sorted(model, key=repr)
    assert sorted(m.values(), key=repr) == sorted(model.values(), key=repr)
    for view, then in views:
        assert len(view) == len(then) and dict(view.items()) == then and dict(view) == then
        assert view == then
        for k, v in then.items():
            assert k in view and view[k] == v and view.get(k) == v
        assert view.get(("gone", "never")) is None and ("gone", "never") not in view
        assert sorted(view.values(), key=repr) == sorted(then.values(), key=repr)


def test_a_write_after_publish_copies_one_shard():
    m: ShardedMap = ShardedMap({(None, f"k{i}"): i for i in range(50_000)})
    assert len(m._shards) == 256  # doubled while above their count squared entries
    view = m.publish()
    m[(None, "k0")] = -1
    m[(None, "k0")] = -2  # the shard is the writer's own now: no second copy
    assert 0 < m.copied <= 2 * 256  # one shard of about 200 entries
    assert view[(None, "k0")] == 0 and m[(None, "k0")] == -2
    assert [len(ShardedMap(dict.fromkeys(range(n)))._shards) for n in (0, 1, 2, 5, 17, 16_384)] == [
        1,
        1,
        2,
        4,
        8,
        128,
    ]


def _pod(ns: str, name: str, rv: int, node: str, group: str) -> dict:
    return {
        "metadata": {
            "namespace": ns,
            "name": name,
            "uid": f"u-{ns}-{name}",
            "resourceVersion": str(rv),
            "annotations": {"scheduling.k8s.io/group-name": group},
        },
        "spec": {"nodeName": node},
        "status": {"phase": "Running"},
    }


namespaces = st.sampled_from(["a", "b", "c"])
names = st.text(alphabet="pqrs", min_size=1, max_size=2)
store_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("put"),
            namespaces,
            names,
            st.sampled_from(["n1", "n2"]),
            st.sampled_from(["g1", "g2", "g3"]),
        ),
        st.tuples(
            st.just("delete"),
            st.sampled_from(["a", "b", "c"]),
            st.text(alphabet="pqrs", min_size=1, max_size=2),
        ),
        st.tuples(st.just("publish")),
    ),
    max_size=120,
)


def _expect(model: dict) -> dict:
    """What a published view of ``model`` {(ns, name): pod} answers."""
    keys = sorted(model)
    by_node: dict = {}
    by_namespace: dict = {}
    by_group: dict = {}
    for key, pod in model.items():
        by_node.setdefault(pod["spec"]["nodeName"], set()).add(key)
        by_namespace.setdefault(key[0], set()).add(key)
        group = (key[0], pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"])
        by_group.setdefault(group, set()).add(key)
    return {
        "objects": dict(model),
        "keys": keys,
        "node": by_node,
        "namespace": by_namespace,
        "group": by_group,
    }


def _check(data, expected: dict) -> None:
    assert dict(data.objects.items()) == expected["objects"] and len(data.objects) == len(expected["objects"])
    assert data.sorted_keys() == expected["keys"]
    assert data.sorted_objects() == [expected["objects"][k] for k in expected["keys"]]
    assert set(data.versions) == set(expected["objects"])
    for index in ("node", "namespace", "group"):
        assert {value: set(bucket) for value, bucket in data.indexes[index].items()} == expected[index]
        for bucket in data.indexes[index].values():
            # Whatever its form, a bucket holds its keys in the order of their last write.
            assert list(bucket) == sorted(bucket, key=data.versions.__getitem__)
            assert len(bucket) == len(list(bucket)) and all(k in bucket for k in bucket)
        for value, keys in expected[index].items():
            assert {
                (o["metadata"]["namespace"], o["metadata"]["name"]) for o in data.lookup(index, value)
            } == keys


@settings(max_examples=200, deadline=None, suppress_health_check=FIXTURE)
@given(store_ops)
def test_a_sharded_store_matches_a_dict_model_and_keeps_every_published_view(monkeypatch_chunk, steps):
    from dashboard.kube.kinds import PODS
    from dashboard.kube.store import KindStore

    store = KindStore(PODS)
    model: dict = {}
    views: list = []
    rv = 0
    for step in steps:
        if step[0] == "put":
            _, ns, name, node, group = step
            rv += 1
            pod = _pod(ns, name, rv, node, group)
            store.upsert(pod)
            model[(ns, name)] = pod
        elif step[0] == "delete":
            _, ns, name = step
            store.delete((ns, name))
            model.pop((ns, name), None)
        else:
            views.append((store.data(), _expect(model)))
    views.append((store.data(), _expect(model)))
    for data, expected in views:
        _check(data, expected)


sorted_ops = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.integers(0, 60), st.integers()),
        st.tuples(st.just("remove"), st.integers(0, 60), st.none()),
        st.tuples(st.just("publish"), st.none(), st.none()),
        st.tuples(st.just("rebuild"), st.none(), st.none()),
    ),
    max_size=200,
)


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE)
@given(sorted_ops)
def test_sorted_chunks_match_a_sorted_model_and_published_orders_never_change(monkeypatch_chunk, steps):
    chunks: SortedChunks = SortedChunks(lambda k: k)
    model: dict = {}
    views = []
    for op, key, value in steps:
        if op == "set":
            chunks.set(key, value)
            model[key] = value
        elif op == "remove":
            if key in model:
                chunks.remove(key)
                del model[key]
            else:
                with pytest.raises(KeyError):
                    chunks.remove(key)
        elif op == "rebuild":
            keys = sorted(model)
            chunks.rebuild(keys, [model[k] for k in keys])
        else:
            views.append((chunks.publish(), sorted(model.items())))
        assert len(chunks) == len(model)
    views.append((chunks.publish(), sorted(model.items())))
    for view, then in views:
        assert len(view) == len(then) and list(view.items()) == then
        assert view.keys() == [k for k, _ in then] and view.values() == [v for _, v in then]


set_ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 30)),
        st.tuples(st.just("discard"), st.integers(0, 30)),
        st.tuples(st.just("discard-unknown"), st.integers(0, 30)),
        st.tuples(st.just("publish"), st.none()),
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE)
@given(set_ops)
def test_chunked_set_keeps_the_order_of_additions_and_published_views_never_change(monkeypatch_chunk, steps):
    chunked: ChunkedSet = ChunkedSet({}, owned=True)
    model: dict[int, int] = {}  # key -> the position it was added at, in order of addition
    views = []
    position = 0
    for op, key in steps:
        if op == "add":
            if key in model:  # the store removes a key from its buckets before adding it again
                chunked.discard(key, model.pop(key))
            position += 1
            assert chunked.add(key, position)
            assert not chunked.add(key, position)  # the same key twice at one position: once
            model[key] = position
        elif op in ("discard", "discard-unknown"):
            where = model.get(key) if op == "discard" else None
            assert chunked.discard(key, where) == (key in model)
            model.pop(key, None)
        else:
            chunked.share()
            views.append((chunked.view(), list(model)))
        assert list(chunked) == list(model) and len(chunked) == len(model)
        chunks = chunked._chunks
        assert all(len(c) <= cowmap.SET_CHUNK for c in chunks)
        # Neighbours hold more than a chunk together: at most 2n / SET_CHUNK + 1 chunks.
        assert all(len(a) + len(b) > cowmap.SET_CHUNK for a, b in zip(chunks, chunks[1:], strict=False))
        assert len(chunks) <= 2 * len(model) / cowmap.SET_CHUNK + 1
    views.append((chunked.view(), list(model)))
    for view, then in views:
        assert list(view) == then and len(view) == len(then)
        assert all(k in view for k in then) and not any(k in view for k in range(31) if k not in then)


def test_a_write_after_publish_copies_at_most_two_chunks_of_a_set():
    keys = [(None, f"k{i:05d}") for i in range(10_000)]
    chunked: ChunkedSet = ChunkedSet({}, owned=True)
    for position, key in enumerate(keys, start=1):
        chunked.add(key, position)
    chunked.share()
    view = chunked.view()
    chunked.discard(keys[5_000], 5_001)  # from a middle chunk
    chunked.add(keys[5_000], 10_001)  # to the last one
    assert 0 < chunked.copied <= 2 * cowmap.SET_CHUNK
    assert list(view) == keys and list(chunked) == [*keys[:5_000], *keys[5_001:], keys[5_000]]
