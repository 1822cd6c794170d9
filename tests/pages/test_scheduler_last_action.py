"""The scheduler-health card's "last action" and "silent" verdict, computed once per change of the
Events and PodGroups (views.scheduler_health.last_action), equal the direct reading
(volcano.scheduler.last_scheduler_action) after every kind of change, on a simulated cluster with
its controllers off and its clock advanced."""

from __future__ import annotations

import pytest
from django.conf import settings

from dashboard.sim.clock import rfc3339
from dashboard.views import memo
from dashboard.views.scheduler_health import last_action, scheduler_health_ctx
from dashboard.volcano import scheduler as vs
from tests.pages.helpers import kind

EVENTS = kind("", "events")
PODGROUPS = kind("scheduling.volcano.sh", "podgroups")


@pytest.fixture(scope="module")
def quiet_cluster(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=29, name="lastaction") as pair:
        yield pair


def _base(cache, namespaces=None) -> tuple:
    return (memo.cache_token(cache), namespaces, "en", "UTC")


def _direct(snap):
    names = tuple(settings.VOLCANO_UI_SCHEDULER_NAMES)
    return vs.last_scheduler_action(snap.events.values(), snap.podgroups.values(), names)


def _agree(cache, namespaces=None):
    snap = cache.snapshot(namespaces=namespaces)
    memoised = last_action(snap, _base(cache, namespaces))
    assert memoised == _direct(snap)
    return snap, memoised


def _event(cluster, name: str, component: str, namespace: str = "default") -> dict:
    at = rfc3339(cluster.clock.now())
    return cluster.store.create(
        EVENTS,
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {
                "kind": "PodGroup",
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "namespace": namespace,
                "name": name,
            },
            "reason": "Scheduled",
            "message": "decided",
            "type": "Normal",
            "source": {"component": component},
            "firstTimestamp": at,
            "lastTimestamp": at,
            "count": 1,
        },
        namespace,
        replay=True,
    )


def _podgroup(cluster, name: str, at: str) -> dict:
    """A gang waiting (Pending) with the scheduler's condition written at ``at``."""
    return cluster.store.create(
        PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minMember": 2, "queue": "default"},
            "status": {
                "phase": "Pending",
                "conditions": [{"type": "Unschedulable", "status": "True", "lastTransitionTime": at}],
            },
        },
        "default",
        replay=True,
    )


def _has_event(name: str, namespace: str = "default"):
    return lambda s: s.events.get(namespace, name) is not None


def test_last_action_follows_every_change_exactly(quiet_cluster):
    cluster, cache = quiet_cluster
    _podgroup(cluster, "waiting", rfc3339(cluster.clock.now()))
    cache.wait_for(lambda s: s.podgroups.get("default", "waiting") is not None)
    _agree(cache)
    cluster.clock.advance(3600)
    _event(cluster, "sched-newest", "volcano")
    cache.wait_for(_has_event("sched-newest"))
    snap, seen = _agree(cache)
    assert seen == cluster.clock.now().replace(microsecond=0)

    # Another component's newer event is not a scheduler action.
    cluster.clock.advance(60)
    _event(cluster, "kubelet-newer", "kubelet")
    cache.wait_for(_has_event("kubelet-newer"))
    _snap, after_kubelet = _agree(cache)
    assert after_kubelet == seen

    # A PodGroup condition written later is.
    cluster.clock.advance(60)
    pg = cluster.store.get(PODGROUPS, "default", "waiting")
    at = rfc3339(cluster.clock.now())
    conditions = [*pg.get("status", {}).get("conditions", [])]
    conditions.append({"type": "Scheduled", "status": "True", "lastTransitionTime": at})
    pg.setdefault("status", {})["conditions"] = conditions
    cluster.store.update(PODGROUPS, pg)
    ns, name = pg["metadata"]["namespace"], pg["metadata"]["name"]
    cache.wait_for(
        lambda s: (
            vs.podgroup_last_transition(s.podgroups.get(ns, name)) is not None
            and rfc3339(vs.podgroup_last_transition(s.podgroups.get(ns, name))) == at
        )
    )
    _snap, after_pg = _agree(cache)
    assert after_pg is not None and rfc3339(after_pg) == at

    # Deleting the newest scheduler event lowers nothing while the PodGroup is newer; a viewer
    # restricted to other namespaces sees only its own objects.
    cluster.store.delete(EVENTS, "default", "sched-newest")
    cache.wait_for(lambda s: s.events.get("default", "sched-newest") is None)
    _agree(cache)
    _agree(cache, frozenset({"default"}))
    _agree(cache, frozenset({"no-such-namespace"}))


def test_a_deleted_newest_event_is_no_longer_the_last_action(quiet_cluster):
    cluster, cache = quiet_cluster
    cluster.clock.advance(7200)
    _event(cluster, "sched-latest", "volcano", namespace="default")
    cache.wait_for(_has_event("sched-latest"))
    _snap, with_it = _agree(cache)
    assert with_it == cluster.clock.now().replace(microsecond=0)
    cluster.store.delete(EVENTS, "default", "sched-latest")
    cache.wait_for(lambda s: s.events.get("default", "sched-latest") is None)
    _snap, without = _agree(cache)
    assert without is None or without < with_it


def test_the_silent_verdict_is_the_direct_one(quiet_cluster):
    cluster, cache = quiet_cluster
    threshold = settings.VOLCANO_UI_SCHEDULER_SILENT_SECONDS
    _event(cluster, "sched-now", "volcano")
    cache.wait_for(_has_event("sched-now"))
    verdicts = []
    for step in (0, threshold + 1, 10 * threshold):
        cluster.clock.advance(step)
        snap = cache.snapshot()
        now = cluster.clock.now()
        memoised = scheduler_health_ctx(snap, now, _base(cache))
        direct = scheduler_health_ctx(snap, now)
        assert memoised == direct
        verdicts.append((direct["waiting"], direct["silent"]))
    # The cluster has gangs waiting, so the verdict turns once the last action is old enough.
    assert verdicts[0][0] and not verdicts[0][1] and verdicts[-1][1]
