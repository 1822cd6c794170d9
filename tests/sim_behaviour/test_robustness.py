"""Odd but admissible objects never stop the simulated controllers."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.sim.kinds import JOB, NODE, POD, PODGROUP, QUEUE

from .helpers import job, new_cluster, phase, run_until, task

quantities = st.one_of(
    st.sampled_from(["1", "500m", "0", "2Gi", "1e3", "0.1", "abc", "-1", "", "99999"]),
    st.integers(min_value=-5, max_value=10**6),
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12).filter(
    lambda s: s[0].isalnum() and s[-1].isalnum()
)


@st.composite
def odd_jobs(draw):
    tasks = []
    for i in range(draw(st.integers(min_value=0, max_value=3))):
        t: dict = {"name": draw(names) + str(i), "replicas": draw(st.integers(min_value=0, max_value=4))}
        if draw(st.booleans()):
            t["minAvailable"] = draw(st.integers(min_value=0, max_value=5))
        if draw(st.booleans()):
            t["template"] = {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": draw(st.sampled_from(["busybox", "", "x:y"])),
                            "resources": {
                                "requests": {"cpu": draw(quantities), "memory": draw(quantities)},
                                "limits": draw(st.sampled_from([{}, {"cpu": "1"}, {"nvidia.com/gpu": "1"}])),
                            },
                        }
                    ],
                    "restartPolicy": draw(st.sampled_from(["Never", "OnFailure", "Always", "Sometimes"])),
                },
                "metadata": {
                    "annotations": {
                        "sim.volcano-ui/behaviour": draw(
                            st.sampled_from(
                                ["succeed", "fail", "crashloop", "imagepullbackoff", "run", "weird"]
                            )
                        ),
                        "sim.volcano-ui/duration": draw(st.sampled_from(["3", "-1", "x", "0"])),
                    }
                },
            }
        if draw(st.booleans()):
            t["policies"] = [
                {
                    "event": draw(st.sampled_from(["PodFailed", "*", "TaskCompleted", "Nope"])),
                    "action": draw(
                        st.sampled_from(
                            ["RestartJob", "AbortJob", "CompleteJob", "TerminateJob", "RestartTask", "Bogus"]
                        )
                    ),
                }
            ]
        tasks.append(t)
    spec: dict = {"tasks": tasks, "queue": draw(st.sampled_from(["default", "missing-queue", ""]))}
    if draw(st.booleans()):
        spec["minAvailable"] = draw(st.integers(min_value=0, max_value=9))
    if draw(st.booleans()):
        spec["maxRetry"] = draw(st.integers(min_value=0, max_value=3))
    if draw(st.booleans()):
        spec["minSuccess"] = draw(st.integers(min_value=1, max_value=3))
    if draw(st.booleans()):
        spec["ttlSecondsAfterFinished"] = draw(st.integers(min_value=0, max_value=20))
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": draw(names), "namespace": "default"},
        "spec": spec,
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(odd_jobs(), min_size=1, max_size=4, unique_by=lambda j: j["metadata"]["name"]))
def test_odd_jobs_never_raise_and_never_stall_the_others(jobs):
    cluster = new_cluster(nodes=1, cpu=16)
    for obj in jobs:
        cluster.store.create(JOB, obj, replay=True)  # bypass defaults and admission
    cluster.store.create(JOB, job("canary", [task("main", 1, annotations={"sim.volcano-ui/duration": "5"})]))
    cluster.advance(60)
    assert cluster.controllers.errors == 0
    assert phase(cluster, "canary") == "Completed"


def test_replayed_garbage_is_tolerated():
    cluster = new_cluster(nodes=1)
    cluster.store.create(
        POD,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "p",
                "namespace": "default",
                "annotations": {"scheduling.k8s.io/group-name": "nope"},
            },
            "spec": {
                "nodeName": "node-0",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}],
            },
            "status": {
                "phase": "Running",
                "containerStatuses": [{"state": {"running": {"startedAt": "not a time"}}}],
            },
        },
        replay=True,
    )
    cluster.store.create(
        PODGROUP,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "default"},
            "spec": {"minMember": -3, "queue": "ghost", "minResources": {"cpu": "???"}},
        },
        replay=True,
    )
    cluster.store.create(
        QUEUE,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "loop-a"},
            "spec": {"parent": "loop-b", "capability": {"cpu": "x"}},
        },
        replay=True,
    )
    cluster.store.create(
        QUEUE,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "loop-b"},
            "spec": {"parent": "loop-a"},
        },
        replay=True,
    )
    cluster.store.create(
        NODE,
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "broken"},
            "status": {"allocatable": {"cpu": "many"}},
        },
        replay=True,
    )
    created = cluster.store.create(
        JOB, job("ok", [task("main", 1, annotations={"sim.volcano-ui/duration": "5"})], queue_name="loop-a")
    )
    run_until(cluster, lambda: phase(cluster, "ok") == "Completed", 60)
    assert cluster.controllers.errors == 0
    assert created
