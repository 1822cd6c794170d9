"""States as Volcano users report them, loaded verbatim into a simulated cluster with its controllers
off: every page says what the state is, from the current reason and the pods, never the loudest
or the stale one.
"""

from __future__ import annotations

import itertools
import re
from datetime import timedelta

import pytest
from django.test import override_settings

from tests.pages.helpers import kind, text

_seq = itertools.count()

QUEUES = ("scheduling.volcano.sh", "queues")
PODGROUPS = ("scheduling.volcano.sh", "podgroups")
JOBS = ("batch.volcano.sh", "jobs")
EVENTS = ("", "events")
PODS = ("", "pods")
VIEWS = {"queues": "queues", "podgroups": "podgroups", "jobs": "jobs", "events": "events", "pods": "pods"}


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    from tests.pages.conftest import own_cluster

    with own_cluster(tmp_path_factory, seed=16, name="explained") as pair:
        yield pair


def _ago(reported, seconds: float) -> str:
    cluster, _cache = reported
    return (cluster.clock.now() - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _create(reported, plural: tuple[str, str], obj: dict, namespace: str | None = None) -> None:
    """Create ``obj`` verbatim (status as written) and wait until the cache holds it."""
    cluster, cache = reported
    store = cluster.store
    if namespace and store.try_get(kind("", "namespaces"), None, namespace) is None:
        store.create(kind("", "namespaces"), {"metadata": {"name": namespace}})
    store.create(kind(*plural), obj, namespace, replay=True)
    view, name = VIEWS[plural[1]], obj["metadata"]["name"]
    cache.wait_for(lambda s: getattr(s, view).get(namespace, name) is not None, timeout=10)


def _setup(reported, job_status: dict, *, tasks=None, min_available=2, pg_status=None, pods=(), events=()):
    """A queue, a Volcano Job ``j`` (with ``tasks``, default one task of 2 replicas), its PodGroup
    ``j-pg`` when ``pg_status`` is given, ``pods`` (name → (phase, extra metadata)) and Warning
    ``events`` on the Job ((reason, message, seconds ago)). Returns the namespace."""
    n = next(_seq)
    ns, qname = f"rep-{n}", f"q-rep-{n}"
    _create(
        reported, QUEUES, {"metadata": {"name": qname}, "spec": {"weight": 1}, "status": {"state": "Open"}}
    )
    uid = f"uid-j-{n}"
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": ns, "uid": uid, "creationTimestamp": _ago(reported, 3600)},
        "spec": {
            "queue": qname,
            "minAvailable": min_available,
            "tasks": [{"name": "worker", "replicas": 2}] if tasks is None else tasks,
        },
        "status": job_status,
    }
    _create(reported, JOBS, job, ns)
    if pg_status is not None:
        owner = {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "j",
            "uid": uid,
            "controller": True,
        }
        pg = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "j-pg", "namespace": ns, "ownerReferences": [owner]},
            "spec": {"minMember": min_available, "queue": qname},
            "status": pg_status,
        }
        _create(reported, PODGROUPS, pg, ns)
    for pod_name, (phase, extra) in dict(pods).items():
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name,
                "namespace": ns,
                "labels": {"volcano.sh/job-name": "j", "volcano.sh/task-spec": "worker"},
                "annotations": {"scheduling.k8s.io/group-name": "j-pg"},
                **extra,
            },
            "spec": {"schedulerName": "volcano", "containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": phase},
        }
        _create(reported, PODS, pod, ns)
    for i, (reason, message, seconds) in enumerate(events):
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"j.{i}", "namespace": ns},
            "involvedObject": {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "j",
                "namespace": ns,
                "uid": uid,
            },
            "type": "Warning",
            "reason": reason,
            "message": message,
            "firstTimestamp": _ago(reported, seconds),
            "lastTimestamp": _ago(reported, seconds),
        }
        _create(reported, EVENTS, event, ns)
    return ns


def _page(client, url: str) -> str:
    resp = client.get(url)
    assert resp.status_code == 200, (url, resp.status_code)
    return resp.content.decode()


# -- rule 2: the current reason, not the loudest one -------------------------------------------------


def test_two_true_conditions_show_the_newest_as_the_state_and_the_other_as_history(reported, client):
    conditions = [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "tasks in gang are ready to be scheduled",
            "lastTransitionTime": _ago(reported, 1800),
        },
        {
            "type": "Unschedulable",
            "status": "True",
            "reason": "NotEnoughResources",
            "message": "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable",
            "lastTransitionTime": _ago(reported, 180),
        },
    ]
    ns = _setup(
        reported, {"state": {"phase": "Pending"}}, pg_status={"phase": "Inqueue", "conditions": conditions}
    )
    pg_page = text(_page(client, f"/podgroups/{ns}/j-pg/"))
    assert re.search(r"current Unschedulable True NotEnoughResources", pg_page), pg_page
    assert re.search(r"history Scheduled True tasks in gang are ready", pg_page)
    # The job list's hint names the scheduler's reason; the detail shows the condition's age.
    assert "unschedulable: NotEnoughResources" in text(_page(client, f"/jobs/?ns={ns}"))
    job_page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "Scheduler said, 3m ago : 2/2 tasks in gang unschedulable" in job_page, job_page


def test_warnings_older_than_the_move_to_running_are_history(reported, client):
    conditions = [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "tasks in gang are ready to be scheduled",
            "lastTransitionTime": _ago(reported, 300),
        },
    ]
    ns = _setup(
        reported,
        {"state": {"phase": "Pending"}, "running": 1, "pending": 1},
        pg_status={"phase": "Running", "running": 1, "conditions": conditions},
        pods={"j-worker-0": ("Running", {}), "j-worker-1": ("Pending", {})},
        events=[("PodGroupPending", "PodGroup unschedulable, reason: old wait", 900)],
    )
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "Earlier warnings (history)" in page
    history = page.split("Earlier warnings (history)", 1)
    assert "old wait" in history[1] and "old wait" not in history[0]
    assert "Warnings (deduplicated)" not in page


def test_why_pending_card_only_while_the_job_waits(reported, client):
    # Restarting with the gang not back: the Job waits.
    ns = _setup(reported, {"state": {"phase": "Restarting"}, "running": 0}, pg_status={"phase": "Pending"})
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "Why is this Job pending?" in page
    assert "Transitional: the controller deletes the pods, then starts the Job again." in page
    # Aborted with a PodGroup left Pending: the phase explains itself, no "pending" card.
    ns = _setup(reported, {"state": {"phase": "Aborted"}}, pg_status={"phase": "Pending"})
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "Why is this Job pending?" not in page
    assert "It can be resumed" in page


# -- rule 3: counters are checked against the pods ----------------------------------------------------


def test_aborted_job_with_terminating_pods_says_so(reported, client):
    deleting = {"deletionTimestamp": _ago(reported, 30), "finalizers": ["example.com/hold"]}
    ns = _setup(
        reported,
        {"state": {"phase": "Aborted", "lastTransitionTime": _ago(reported, 60)}, "terminating": 0},
        pods={"j-worker-0": ("Running", deleting), "j-worker-1": ("Running", deleting)},
    )
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "2 pods still terminating" in page
    assert "The Job's counters disagree with the 2 pods the dashboard sees" in page
    assert "Terminating: 0 reported, 2 counted from the pods" in page
    assert "Aborted: its pods were released. It can be resumed (vcctl job resume)." in page


def test_a_gang_bar_whose_counters_the_pods_contradict_claims_nothing(reported, client):
    # status.running says 5 of minAvailable 2 while the cluster holds no pod of the Job.
    ns = _setup(reported, {"state": {"phase": "Running"}, "running": 5, "minAvailable": 2})
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "Running: 5 reported, 0 counted from the pods" in page
    assert "Its counters disagree with the pods (see below): the gang's progress is uncertain." in page
    assert "minAvailable reached" not in page


@pytest.mark.parametrize(
    "tasks", [[], [{"name": "worker", "replicas": 0}]], ids=["no-tasks", "zero-replicas"]
)
def test_zero_replicas_show_zero_desired_pods_and_warn(reported, client, tasks):
    ns = _setup(reported, {"state": {"phase": "Pending"}, "minAvailable": 2}, tasks=tasks)
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "0 desired pods" in page
    assert "minAvailable (2) exceeds total replicas (0)" in page
    assert "needs 2 pods" not in page
    assert "the Job's tasks have 0 replicas in all" in page
    assert "A Job whose PodGroup has not been admitted" not in page


# -- rule 4: why there are no pods, from the actual cause ---------------------------------------------


def test_admitted_job_whose_pod_creation_fails_shows_the_first_message(reported, client):
    ns = _setup(
        reported,
        {"state": {"phase": "Pending"}},
        pg_status={"phase": "Inqueue"},
        events=[
            ("FailedCreate", 'Error creating pods: [pods "j-worker-0" is forbidden: exceeded quota]', 20),
            ("FailedCreate", "Error creating pods: [an older failure]", 600),
        ],
    )
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert (
        'creating the pods fails: Error creating pods: [pods "j-worker-0" is forbidden: exceeded quota]'
        in page
    )
    assert "A Job whose PodGroup has not been admitted" not in page


def test_not_admitted_text_only_when_the_podgroup_is_pending(reported, client):
    ns = _setup(reported, {"state": {"phase": "Pending"}}, pg_status={"phase": "Pending"})
    assert "A Job whose PodGroup has not been admitted has no pods yet" in text(
        _page(client, f"/jobs/{ns}/j/")
    )
    ns = _setup(reported, {"state": {"phase": "Completed"}, "succeeded": 2})
    page = text(_page(client, f"/jobs/{ns}/j/"))
    assert "A Job whose PodGroup has not been admitted" not in page
    assert "the Job is Completed and its pods were removed" in page


# -- rule 7: every state explains itself -------------------------------------------------------------


def test_job_stuck_terminating_is_flagged_with_the_pod_that_holds_it(reported, client):
    hold = {"deletionTimestamp": _ago(reported, 1200), "finalizers": ["example.com/hold"]}
    ns = _setup(
        reported,
        {"state": {"phase": "Terminating", "lastTransitionTime": _ago(reported, 1200)}, "terminating": 1},
        pods={"j-worker-0": ("Running", hold)},
    )
    raw = _page(client, f"/jobs/{ns}/j/")
    page = text(raw)
    assert "Stuck: Terminating for longer than 10 minutes." in page
    assert "j-worker-0: Terminating, finalizers example.com/hold" in page
    assert re.search(r'class="badge tone-warn badge-transitional[^"]*"[^>]*>.*?Terminating', raw, re.S)
    for url in ("/", "/kiosk/"):
        board = text(_page(client, url))
        assert re.search(r"\d+ stuck Jobs? .*\bj\b " + ns, board), url
        assert "Held by j-worker-0: Terminating, finalizers example.com/hold" in board, url
    # The threshold is a setting.
    with override_settings(VOLCANO_UI_STUCK_SECONDS=3600):
        assert "Stuck:" not in text(_page(client, f"/jobs/{ns}/j/"))
