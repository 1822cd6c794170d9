"""Unit tests of dashboard/kube/derive.py on real object shapes (shared/volcano/REFERENCE.md)."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.kube import derive

# REFERENCE.md §1: a Running vcjob (zero counters omitted as Volcano does).
JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "tf-job", "namespace": "default", "uid": "6f1c0d3e-1111-2222-3333-444455556666"},
    "spec": {
        "minAvailable": 3,
        "queue": "default",
        "tasks": [
            {"name": "ps", "replicas": 1},
            {"name": "worker", "replicas": 2, "minAvailable": 2},
        ],
    },
    "status": {
        "state": {"phase": "Running", "lastTransitionTime": "2026-08-20T10:00:05Z"},
        "minAvailable": 3,
        "pending": 1,
        "running": 2,
        "taskStatusCount": {
            "ps": {"phase": {"Running": 1}},
            "worker": {"phase": {"Running": 1, "Pending": 1}},
        },
    },
}

# REFERENCE.md §2 example PodGroup.
PODGROUP = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "test-job-6f1c", "namespace": "default"},
    "spec": {
        "minMember": 3,
        "minTaskMember": {"default-nginx": 6},
        "queue": "default",
        "minResources": {"count/pods": "3", "cpu": "3", "pods": "3", "requests.cpu": "3"},
    },
    "status": {
        "phase": "Running",
        "running": 6,
        "conditions": [
            {
                "type": "Scheduled",
                "status": "True",
                "transitionID": "x",
                "lastTransitionTime": "2026-08-20T10:00:05Z",
                "reason": "tasks in gang are ready to be scheduled",
            }
        ],
    },
}

UNSCHED_MSG = (
    "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
    "Pending: 3 Unschedulable. Origin reason is insufficient cpu"
)


def pending_podgroup():
    pg = copy.deepcopy(PODGROUP)
    pg["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "Unschedulable",
                "status": "True",
                "reason": "NotEnoughResources",
                "message": UNSCHED_MSG,
                "lastTransitionTime": "2026-08-20T10:01:00Z",
            }
        ],
    }
    return pg


QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "default"},
    "spec": {
        "weight": 1,
        "capability": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2"},
        "deserved": {"cpu": "2", "memory": "4Gi"},
        "guarantee": {"resource": {"cpu": "1"}},
    },
    "status": {
        "state": "Open",
        "allocated": {"cpu": "2", "memory": "4Gi", "pods": "2", "nvidia.com/gpu": "3"},
    },
}


def pod(
    name="p-0", *, phase="Running", containers=None, init=None, conditions=None, deleting=False, **status
):
    spec_containers = [{"name": c.get("name", f"c{i}")} for i, c in enumerate(containers or [])]
    st_ = {"phase": phase, **status}
    if containers is not None:
        st_["containerStatuses"] = containers
    if init is not None:
        st_["initContainerStatuses"] = init
    if conditions is not None:
        st_["conditions"] = conditions
    meta = {"name": name, "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = "2026-08-20T10:05:00Z"
    spec = {"containers": spec_containers or [{"name": "c0"}]}
    if init is not None:
        spec["initContainers"] = [{"name": c.get("name", f"i{i}")} for i, c in enumerate(init)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": st_}


# -- gang progress ---------------------------------------------------------------------


def test_job_gang_progress_overall_and_per_task():
    g = derive.job_gang_progress(JOB)
    assert (g.ready, g.required, g.satisfied) == (2, 3, False)
    assert g.percent == 66
    tasks = {t.name: t for t in g.tasks}
    assert tasks["ps"].required == 1  # default: replicas
    assert tasks["ps"].ready == 1 and tasks["ps"].satisfied
    assert tasks["worker"].ready == 1 and tasks["worker"].required == 2 and not tasks["worker"].satisfied
    assert tasks["worker"].phases == {"Running": 1, "Pending": 1}


def test_job_gang_progress_counts_succeeded_and_missing_counters_are_zero():
    job = copy.deepcopy(JOB)
    job["status"] = {"state": {"phase": "Completed"}, "succeeded": 3}
    g = derive.job_gang_progress(job)
    assert (g.ready, g.required, g.running, g.failed) == (3, 3, 0, 0)
    assert g.satisfied


def test_job_gang_progress_without_status_or_spec():
    g = derive.job_gang_progress({"kind": "Job", "metadata": {"name": "x"}})
    assert (g.ready, g.required, g.tasks) == (0, 0, [])
    assert g.percent == 100


def test_podgroup_gang_progress_with_pods_per_task():
    pods = [pod(f"p-{i}") for i in range(3)]
    for p in pods:
        p["metadata"]["annotations"] = {"volcano.sh/task-spec": "default-nginx"}
    pods[2]["status"]["phase"] = "Pending"
    g = derive.podgroup_gang_progress(PODGROUP, pods)
    assert (g.ready, g.required) == (6, 3)
    (task,) = g.tasks
    assert (task.name, task.ready, task.required) == ("default-nginx", 2, 6)


def test_gang_progress_dispatches_on_kind():
    assert derive.gang_progress(JOB).required == 3
    assert derive.gang_progress(PODGROUP).required == 3


# -- pod display status ---------------------------------------------------------------


def test_pod_running_ready():
    p = pod(containers=[{"name": "c0", "ready": True, "restartCount": 0, "state": {"running": {}}}])
    d = derive.pod_display_status(p)
    assert (d.status, d.ready_text, d.restarts) == ("Running", "1/1", 0)


def test_pod_crashloopbackoff_with_restarts_and_last_restart():
    p = pod(
        containers=[
            {
                "name": "c0",
                "ready": False,
                "restartCount": 5,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
                "lastState": {
                    "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": "2026-08-20T10:03:00Z"}
                },
            }
        ]
    )
    d = derive.pod_display_status(p)
    assert (d.status, d.ready_text, d.restarts) == ("CrashLoopBackOff", "0/1", 5)
    assert d.last_restart is not None and d.last_restart.minute == 3


def test_pod_image_pull_backoff_pending():
    p = pod(
        phase="Pending",
        containers=[{"name": "c0", "ready": False, "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
    )
    assert derive.pod_display_status(p).status == "ImagePullBackOff"


def test_pod_terminating_and_node_lost():
    p = pod(deleting=True, containers=[{"name": "c0", "ready": True, "state": {"running": {}}}])
    assert derive.pod_display_status(p).status == "Terminating"
    p["status"]["reason"] = "NodeLost"
    assert derive.pod_display_status(p).status == "Unknown"


def test_pod_init_progress_and_init_errors():
    p = pod(
        phase="Pending",
        init=[
            {"name": "i0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "i1", "state": {"running": {}}},
            {"name": "i2", "state": {"waiting": {"reason": "PodInitializing"}}},
        ],
        containers=[{"name": "c0", "state": {"waiting": {"reason": "PodInitializing"}}}],
    )
    assert derive.pod_display_status(p).status == "Init:1/3"
    p["status"]["initContainerStatuses"][1] = {"name": "i1", "state": {"terminated": {"exitCode": 2}}}
    assert derive.pod_display_status(p).status == "Init:ExitCode:2"
    p["status"]["initContainerStatuses"][1] = {
        "name": "i1",
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
    }
    assert derive.pod_display_status(p).status == "Init:CrashLoopBackOff"


def test_pod_completed_and_multi_container_ready():
    p = pod(
        phase="Succeeded",
        containers=[{"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
    )
    assert derive.pod_display_status(p).status == "Completed"
    p = pod(
        containers=[
            {"name": "a", "ready": True, "state": {"running": {}}, "restartCount": 1},
            {"name": "b", "ready": False, "state": {"running": {}}, "restartCount": 2},
        ]
    )
    d = derive.pod_display_status(p)
    assert (d.status, d.ready_text, d.restarts) == ("Running", "1/2", 3)


def test_pod_completed_container_with_another_running_shows_running():
    p = pod(
        containers=[
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "b", "ready": True, "state": {"running": {}}},
        ],
        conditions=[{"type": "Ready", "status": "False"}],
    )
    assert derive.pod_display_status(p).status == "NotReady"


def test_pod_pending_without_statuses_and_scheduling_gated():
    p = pod(phase="Pending")
    assert derive.pod_display_status(p).status == "Pending"
    p = pod(
        phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    )
    assert derive.pod_display_status(p).status == "SchedulingGated"


def test_pod_status_on_empty_and_garbage():
    assert derive.pod_display_status({}).status == "Unknown"
    garbage = {"metadata": "x", "spec": {"containers": "no"}, "status": {"containerStatuses": [None, 3, "x"]}}
    assert derive.pod_display_status(garbage).ready == 0


# -- quantities and queue usage -------------------------------------------------------


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("500M", Decimal(500_000_000)),
        ("16k", Decimal(16_000)),
        ("1500m", Decimal("1.5")),
        ("0", Decimal(0)),
        ("4Gi", Decimal(4 * 2**30)),
        (2, Decimal(2)),
        ("garbage", None),
        ("", None),
        (None, None),
        ("1.2.3", None),
        (True, None),
        ([1], None),
    ],
)
def test_quantity(raw, expected):
    assert derive.quantity(raw) == expected


def test_queue_usage_with_guarantee_nested_and_extended_resources():
    usage = {u.name: u for u in derive.queue_usage(QUEUE)}
    assert list(usage)[:3] == ["cpu", "memory", "pods"]
    cpu = usage["cpu"]
    assert (cpu.allocated, cpu.capability, cpu.deserved, cpu.guarantee) == (2, 4, 2, 1)
    assert cpu.percent_of_capability == 50.0 and cpu.percent_of_deserved == 100.0
    gpu = usage["nvidia.com/gpu"]
    assert gpu.percent_of_capability == 150.0  # above 100 % shown as it is
    assert gpu.headroom == -1
    assert usage["pods"].capability is None and usage["pods"].percent_of_capability is None


def test_queue_usage_reports_unparseable_quantities():
    q = copy.deepcopy(QUEUE)
    q["spec"]["capability"]["cpu"] = "lots"
    cpu = {u.name: u for u in derive.queue_usage(q)}["cpu"]
    assert cpu.capability is None and cpu.errors and "lots" in cpu.errors[0]


def test_queue_usage_odd_shapes():
    assert derive.queue_usage({}) == []
    assert (
        derive.queue_usage({"spec": {"guarantee": {"cpu": "1"}}, "status": None}) == []
    )  # flat guarantee is pruned


def test_format_quantity():
    assert derive.format_quantity("cpu", Decimal("1.5")) == "1.5"
    assert derive.format_quantity("cpu", Decimal("0.25")) == "250m"
    assert derive.format_quantity("memory", Decimal(4 * 2**30)) == "4Gi"
    assert derive.format_quantity("nvidia.com/gpu", Decimal(2)) == "2"
    assert derive.format_quantity("cpu", None) == "—"


# -- PodGroup counts ------------------------------------------------------------------


def test_podgroup_counts_per_queue():
    pgs = [
        PODGROUP,
        pending_podgroup(),
        {"spec": {"queue": "q2"}},  # no status yet -> Pending
        {"spec": {}, "status": {"phase": "Weird"}},  # default queue, unknown phase kept
    ]
    counts = derive.podgroup_counts_per_queue(pgs)
    assert counts["default"]["Running"] == 1 and counts["default"]["Pending"] == 1
    assert counts["default"]["Weird"] == 1 and counts["default"]["Inqueue"] == 0
    assert counts["q2"]["Pending"] == 1


# -- events and pending explanation ----------------------------------------------------


def event(
    reason,
    message,
    *,
    kind="PodGroup",
    name="pg",
    count=1,
    first="2026-08-20T10:00:00Z",
    last=None,
    type_="Warning",
):
    return {
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason}.{count}", "namespace": "default"},
        "involvedObject": {"kind": kind, "name": name, "namespace": "default"},
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last or first,
    }


def test_summarize_events_dedupes_with_counts_and_times():
    evs = [
        event("Unschedulable", "m", count=3, first="2026-08-20T10:00:00Z", last="2026-08-20T10:02:00Z"),
        event("Unschedulable", "m", count=2, first="2026-08-20T09:00:00Z", last="2026-08-20T10:01:00Z"),
        event("Scheduled", "ok", type_="Normal"),
        event("Other", "x", first=None),
    ]
    s = derive.summarize_events(evs)
    assert [e.reason for e in s] == ["Unschedulable", "Other"]
    assert s[0].count == 5
    assert s[0].first_seen.hour == 9 and s[0].last_seen.minute == 2
    assert s[1].first_seen is None


def test_explain_pending_podgroup_unschedulable_with_queue_headroom():
    pg = pending_podgroup()
    q = copy.deepcopy(QUEUE)
    reasons = derive.explain_pending(
        job=JOB,
        podgroup=pg,
        queue=q,
        events=[event("Unschedulable", UNSCHED_MSG, count=4)],
        pods=[],
    )
    kinds = [r.kind for r in reasons]
    assert kinds[:2] == ["podgroup_phase", "unschedulable"]
    assert reasons[1].detail == UNSCHED_MSG  # verbatim
    headroom = [r for r in reasons if r.kind == "queue_headroom"]
    assert headroom and headroom[0].severity == "blocker" and "needs 3" in headroom[0].detail
    ev = [r for r in reasons if r.kind == "event"]
    assert ev and ev[0].count == 4


def test_explain_pending_closed_queue_missing_podgroup_and_pod_blockers():
    q = copy.deepcopy(QUEUE)
    q["status"]["state"] = "Closed"
    job = copy.deepcopy(JOB)
    job["status"] = {"state": {"phase": "Pending"}}
    pods = [
        pod(
            "a",
            phase="Pending",
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/3 nodes are available",
                }
            ],
        ),
        pod(
            "b",
            phase="Pending",
            containers=[
                {"name": "c0", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "bad"}}}
            ],
        ),
        pod("c", containers=[{"name": "c0", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]),
    ]
    reasons = derive.explain_pending(job=job, podgroup=None, queue=q, pods=pods)
    kinds = {r.kind for r in reasons}
    assert {"podgroup_missing", "queue_state", "pod_unschedulable", "pod_image", "pod_crashloop"} <= kinds
    unsched = next(r for r in reasons if r.kind == "pod_unschedulable")
    assert unsched.objects == ("a",) and unsched.detail == "0/3 nodes are available"


def test_explain_pending_missing_queue_and_nothing_wrong():
    reasons = derive.explain_pending(podgroup=PODGROUP, queue=None, queue_name="gone")
    assert [r.kind for r in reasons] == ["queue_missing"]
    assert derive.explain_pending(podgroup=PODGROUP, queue=QUEUE) == []


def test_parse_time():
    assert derive.parse_time("2026-08-20T10:00:05Z").tzinfo is not None
    assert derive.parse_time("2026-08-20T10:00:05.123456+02:00").hour == 8
    assert derive.parse_time(None) is None and derive.parse_time("yesterday") is None


# -- any object the schema admits -----------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
objects = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(["Job", "PodGroup", "Queue", "Pod", "Event"]),
        "metadata": json_values,
        "spec": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "tasks": json_values,
                "minMember": json_values,
                "minTaskMember": json_values,
                "capability": json_values,
                "containers": json_values,
                "minResources": json_values,
                "guarantee": json_values,
            },
        ),
        "status": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "phase": json_values,
                "state": json_values,
                "conditions": json_values,
                "allocated": json_values,
                "taskStatusCount": json_values,
                "containerStatuses": json_values,
                "running": json_values,
            },
        ),
    },
)


@settings(max_examples=300, deadline=None)
@given(obj=objects)
def test_every_function_survives_arbitrary_shapes(obj):
    derive.job_gang_progress(obj)
    derive.podgroup_gang_progress(obj, [obj])
    derive.pod_display_status(obj)
    derive.queue_usage(obj)
    derive.podgroup_counts([obj])
    derive.podgroup_counts_per_queue([obj])
    derive.summarize_events([obj], type_=None)
    derive.explain_pending(job=obj, podgroup=obj, queue=obj, pods=[obj], events=[obj])
