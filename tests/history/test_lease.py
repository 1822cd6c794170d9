"""One recorder among replicas: the Lease elector against the simulated cluster's Leases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from kubernetes import client

from dashboard.history.lease import LeaseElector
from dashboard.history.models import QueuePhaseSample
from dashboard.history.recorder import Recorder, RecorderOptions
from dashboard.sim.kinds import LEASE
from tests.history.helpers import add_nodes, gpu_job


def _api(cache):
    return cache.client.api


def _elector(cache, cluster, identity, duration=30):
    # renew_seconds=0: every leading() call reads and writes (the tests step the clock instead).
    return LeaseElector(
        _api(cache),
        "default",
        "history",
        identity,
        duration_seconds=duration,
        renew_seconds=0,
        clock=cluster.clock.now,
    )


def test_the_simulator_answers_a_stale_lease_update_with_409(sim_cluster, make_live_cache):
    cache = make_live_cache(sim_cluster)
    api = client.CoordinationV1Api(_api(cache))
    body = client.V1Lease(
        metadata=client.V1ObjectMeta(name="l"), spec=client.V1LeaseSpec(holder_identity="a")
    )
    created = api.create_namespaced_lease("default", body)
    first = api.read_namespaced_lease("l", "default")
    first.spec.holder_identity = "b"
    api.replace_namespaced_lease("l", "default", first)
    created.spec.holder_identity = "c"  # still at the first resourceVersion
    with pytest.raises(client.exceptions.ApiException) as err:
        api.replace_namespaced_lease("l", "default", created)
    assert err.value.status == 409
    assert sim_cluster.store.get(LEASE, "default", "l")["spec"]["holderIdentity"] == "b"


def test_one_holder_takeover_after_expiry_and_release(sim_cluster, make_live_cache):
    cache = make_live_cache(sim_cluster)
    a, b = _elector(cache, sim_cluster, "a"), _elector(cache, sim_cluster, "b")
    assert a.leading() and not b.leading()
    sim_cluster.advance(10)
    assert a.leading() and not b.leading()  # a renewed
    # a stops renewing (a crashed replica): b takes over once the Lease expired.
    sim_cluster.advance(31)
    assert b.leading()
    lease = sim_cluster.store.get(LEASE, "default", "history")["spec"]
    assert lease["holderIdentity"] == "b" and lease["leaseTransitions"] == 1
    assert not a.leading()
    b.release()  # a clean stop hands over at once
    assert a.leading()


def test_two_recorders_one_writes_and_handover_loses_at_most_one_interval(
    sim_cluster, make_live_cache, history_db
):
    add_nodes(sim_cluster)
    gpu_job(sim_cluster, "long", replicas=1, seconds=None)
    sim_cluster.advance(5)
    interval = 30
    caches = [make_live_cache(sim_cluster), make_live_cache(sim_cluster)]
    recs = []
    for i, cache in enumerate(caches):
        elector = _elector(cache, sim_cluster, f"replica-{i}", duration=interval)
        opts = RecorderOptions(flush_seconds=0, sample_seconds=interval)
        rec = Recorder(cache, history_db, opts, clock=sim_cluster.clock.now, elector=elector)
        cache.add_listener(rec.listener)
        recs.append(rec)
    states = []
    for second in range(0, 600, 5):
        if second == 300:
            recs[0].elector.release()  # replica 0 stops (rolling update)
            recs[0].step = lambda **kw: None  # and is gone
        for rec in recs:
            rec.step(force_flush=True)
        states.append(
            tuple("gone" if (i == 0 and second >= 300) else r.status().state for i, r in enumerate(recs))
        )
        sim_cluster.advance(5)
    # Never two recorders at once; replica 1 takes over.
    assert all(s.count("recording") <= 1 for s in states)
    assert states[10][0] == "recording" and states[-1][1] == "recording"
    samples = sorted(
        set(QueuePhaseSample.objects.using(history_db).filter(queue="default").values_list("at", flat=True))
    )
    gaps = [b - a for a, b in zip(samples, samples[1:], strict=False)]
    assert max(gaps) <= timedelta(seconds=2 * interval), gaps  # at most one interval lost
    assert len(samples) >= 600 // interval - 1
