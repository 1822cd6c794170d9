"""resourceVersions the store has not reached, and resourceVersions of an earlier run of a simulator
restarted with the same state file: kube-apiserver's answers (504 "Too large resource version",
410 Expired), in the store and over HTTP."""

from __future__ import annotations

import json
import os

import pytest

from dashboard.sim.clock import SimClock
from dashboard.sim.cluster import EPOCH_SPAN, SimulatedCluster
from dashboard.sim.kinds import QUEUE
from dashboard.sim.store import ApiError, Store

from .test_auth import raw


def _queue(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"weight": 1}}


def _assert_too_large(status: dict, requested: int, current: int) -> None:
    # The Status apimachinery's NewTooLargeResourceVersionError builds; client-go's
    # apierrors.IsTooLargeResourceVersion looks for the cause.
    assert status["kind"] == "Status" and status["status"] == "Failure"
    assert status["code"] == 504 and status["reason"] == "Timeout"
    assert status["message"] == f"Timeout: Too large resource version: {requested}, current: {current}"
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    assert status["details"]["retryAfterSeconds"] == 1


def test_store_watch_from_a_resource_version_it_has_not_reached_is_too_large():
    store = Store(SimClock())
    store.create(QUEUE, _queue("q1"))
    current = store.resource_version
    with pytest.raises(ApiError) as err:
        store.watch(QUEUE, resource_version=str(current + 1))
    assert err.value.code == 504
    _assert_too_large(err.value.status(), current + 1, current)
    # The current resourceVersion itself is fine: changes after it are delivered.
    w = store.watch(QUEUE, resource_version=str(current))
    store.create(QUEUE, _queue("q2"))
    event = w.next(5)
    assert event is not None and event[0] == "ADDED" and event[1]["metadata"]["name"] == "q2"
    w.close()
    store.check_resource_version(str(current))  # a list "not older than" the current one
    with pytest.raises(ApiError) as err:
        store.check_resource_version(current + 5)
    assert err.value.code == 504


def test_store_without_a_base_numbers_from_1_and_with_one_counts_the_base_as_compacted():
    plain = Store(SimClock())
    assert plain.create(QUEUE, _queue("q"))["metadata"]["resourceVersion"] == "1"
    based = Store(SimClock(), 100, resource_version_base=5000)
    assert based.resource_version == 5000
    assert based.create(QUEUE, _queue("q"))["metadata"]["resourceVersion"] == "5001"
    with pytest.raises(ApiError) as err:
        based.watch(QUEUE, resource_version="4999")  # a version of an earlier history
    assert err.value.code == 410
    w = based.watch(QUEUE, resource_version="5000")  # the start of this history: nothing missed
    event = w.next(5)
    assert event is not None and event[1]["metadata"]["resourceVersion"] == "5001"
    w.close()
    with pytest.raises(ValueError):
        Store(SimClock(), resource_version_base=-1)


def test_http_watch_and_list_from_a_future_resource_version_answer_504(cluster):
    cluster.store.create(QUEUE, _queue("q1"))
    current = cluster.store.resource_version
    base = "/apis/scheduling.volcano.sh/v1beta1/queues"
    code, status = raw(
        cluster, "GET", f"{base}?watch=true&resourceVersion={current + 1000}", cluster.admin_token
    )
    assert code == 504
    _assert_too_large(status, current + 1000, current)
    code, status = raw(cluster, "GET", f"{base}?resourceVersion={current + 1000}", cluster.admin_token)
    assert code == 504
    _assert_too_large(status, current + 1000, current)
    code, body = raw(cluster, "GET", f"{base}?resourceVersion={current}", cluster.admin_token)
    assert code == 200 and "q1" in [q["metadata"]["name"] for q in body["items"]]
    assert raw(cluster, "GET", f"{base}?resourceVersion=0", cluster.admin_token)[0] == 200
    assert raw(cluster, "GET", f"{base}?resourceVersion=abc", cluster.admin_token)[0] == 400


def test_a_restart_with_the_same_state_file_starts_above_every_earlier_resource_version(tmp_path):
    state = tmp_path / "sim.json"
    first = SimulatedCluster(controllers=False, state_file=state)
    assert first.epoch == 1 and first.store.resource_version > EPOCH_SPAN
    for i in range(5):
        first.store.create(QUEUE, _queue(f"q{i}"))
    old_rvs = [int(q["metadata"]["resourceVersion"]) for q in first.store.list(QUEUE)[0]]
    last_old = first.store.resource_version
    assert json.loads(state.read_text())["epoch"] == 1
    assert oct(os.stat(state).st_mode & 0o777) == "0o600"

    second = SimulatedCluster(controllers=False, state_file=state)
    assert second.epoch == 2
    assert second.admin_token == first.admin_token  # the identity is kept alongside the epoch
    assert second.store.resource_version > max(old_rvs) and second.store.resource_version >= 2 * EPOCH_SPAN
    for rv in (*old_rvs, last_old):
        with pytest.raises(ApiError) as err:
            second.store.watch(QUEUE, resource_version=str(rv))
        assert err.value.code == 410  # older than the new history: the client re-lists

    # A new identity (rotated token) keeps the run counter.
    third = SimulatedCluster(controllers=False, state_file=state, admin_token="sim-admin-rotated")
    assert third.epoch == 3 and json.loads(state.read_text())["admin_token"] == "sim-admin-rotated"
    # A future resourceVersion (from a run whose state file was deleted, e.g. --fresh) is too large.
    with pytest.raises(ApiError) as err:
        third.store.watch(QUEUE, resource_version=str(9 * EPOCH_SPAN))
    assert err.value.code == 504
