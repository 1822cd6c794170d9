"""Write actions over real HTTP against the simulated cluster: each is refused without the RBAC
permission and works with it — the Command appears exactly as vcctl builds it, and Volcano's
controller acts on it once the simulated clock advances."""

from __future__ import annotations

import logging
import re

import pytest
import requests

from tests.prod.conftest import proxy_session, proxy_settings

NS = "team-vision"
USERS = {
    # name: (namespaces, verbs) — verbs None: the simulator's default (read + create Commands).
    "ops": ([NS], None),
    "viewer": ([NS], ["get", "list", "watch"]),
    "janitor": ([NS], ["get", "list", "watch", "delete"]),
    "queue-ops": (["default"], None),
}


@pytest.fixture(scope="module")
def cluster(demo_cluster):
    for name, (namespaces, verbs) in USERS.items():
        demo_cluster.add_user(name, f"token-{name}-0123456789", namespaces, verbs=verbs)
    return demo_cluster


@pytest.fixture
def server(cluster, installed_cache, dashboard_server):
    return dashboard_server(**proxy_settings(VOLCANO_UI_ENABLE_ACTIONS=True))


def _kind(name: str, group: str):
    from dashboard.sim.kinds import kind_by_name

    return kind_by_name(name, group)


def _phase(job: dict | None) -> str:
    return ((job or {}).get("status") or {}).get("state", {}).get("phase", "") if job else ""


def _job_in_phase(cluster, phases: set[str]) -> dict:
    jobs, _ = cluster.store.list(_kind("Job", "batch.volcano.sh"), NS)
    for job in jobs:
        if _phase(job) in phases:
            return job
    pytest.fail(f"no Job in {NS} in phase {phases}")


def _commands(cluster, namespace: str) -> list[dict]:
    return cluster.store.list(_kind("Command", "bus.volcano.sh"), namespace)[0]


def _csrf(session: requests.Session, url: str) -> str:
    page = session.get(url)
    assert page.status_code == 200, (url, page.status_code)
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def _post(session: requests.Session, base: str, path: str, csrf: str) -> requests.Response:
    return session.post(base + path, data={"csrfmiddlewaretoken": csrf}, allow_redirects=False)


def _advance_until(cluster, cache, predicate, what: str, steps: int = 30):
    """Advance the simulated clock in 5 s steps until ``predicate(store)`` holds, then wait for
    the cache (watch) to catch up with the store."""
    for _ in range(steps):
        if predicate():
            break
        cluster.advance(5)
    assert predicate(), f"the controller never got to: {what}"


def test_job_actions_are_refused_without_permission(cluster, server):
    job = _job_in_phase(cluster, {"Running"})
    name = job["metadata"]["name"]
    viewer = proxy_session("viewer")
    page = viewer.get(f"{server.url}/jobs/{NS}/{name}/")
    assert page.status_code == 200 and "/actions/" not in page.text
    csrf = _csrf(viewer, f"{server.url}/jobs/{NS}/{name}/")
    before = len(_commands(cluster, NS))
    for action in ("suspend", "resume", "restart", "terminate", "delete"):
        path = f"/actions/jobs/{NS}/{name}/{action}/"
        assert viewer.get(server.url + path).status_code == 403
        assert _post(viewer, server.url, path, csrf).status_code == 403
    # ops may create Commands but not delete Jobs; someone from another namespace sees nothing.
    ops = proxy_session("ops")
    assert ops.get(f"{server.url}/actions/jobs/{NS}/{name}/delete/").status_code == 403
    assert (
        proxy_session("queue-ops").get(f"{server.url}/actions/jobs/{NS}/{name}/suspend/").status_code == 404
    )
    assert len(_commands(cluster, NS)) == before
    assert cluster.store.get(_kind("Job", "batch.volcano.sh"), NS, name)


def test_suspend_and_resume_create_vcctl_commands_that_the_controller_runs(
    cluster, server, installed_cache, caplog
):
    job = _job_in_phase(cluster, {"Running"})
    name, uid = job["metadata"]["name"], job["metadata"]["uid"]
    ops = proxy_session("ops")
    page = ops.get(f"{server.url}/jobs/{NS}/{name}/")
    assert f"/actions/jobs/{NS}/{name}/suspend/" in page.text
    confirm_url = f"{server.url}/actions/jobs/{NS}/{name}/suspend/"
    confirm = ops.get(confirm_url)
    assert confirm.status_code == 200 and 'method="post"' in confirm.text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', confirm.text).group(1)
    # Without the CSRF token the POST is refused and nothing is created.
    assert ops.post(confirm_url, data={}, allow_redirects=False).status_code == 403
    assert not [c for c in _commands(cluster, NS) if c["target"]["uid"] == uid]

    with caplog.at_level(logging.INFO, logger="volcano_ui.actions"):
        done = _post(ops, server.url, f"/actions/jobs/{NS}/{name}/suspend/", csrf)
    assert done.status_code == 200, done.text[:500]
    (command,) = [c for c in _commands(cluster, NS) if c["target"]["uid"] == uid]
    ref = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert command["action"] == "AbortJob"
    assert command["metadata"]["name"].startswith(f"{name}-abortjob-")
    assert command["metadata"]["generateName"] == f"{name}-abortjob-"
    assert command["metadata"]["ownerReferences"] == [ref]
    assert command["target"] == ref
    assert "ops" in command["message"]
    logged = [r for r in caplog.records if r.getMessage() == "action done"]
    assert logged and logged[-1].user == "ops" and logged[-1].action == "AbortJob"

    jobs = _kind("Job", "batch.volcano.sh")
    _advance_until(
        cluster,
        installed_cache,
        lambda: _phase(cluster.store.get(jobs, NS, name)) == "Aborted",
        "Job Aborted",
    )
    assert not [c for c in _commands(cluster, NS) if c["target"]["uid"] == uid], "the controller consumed it"
    installed_cache.wait_for(lambda s: _phase(s.jobs.get(NS, name)) == "Aborted", timeout=10)

    # An Aborted Job offers resume.
    page = ops.get(f"{server.url}/jobs/{NS}/{name}/")
    assert f"/actions/jobs/{NS}/{name}/resume/" in page.text
    csrf = _csrf(ops, f"{server.url}/actions/jobs/{NS}/{name}/resume/")
    assert _post(ops, server.url, f"/actions/jobs/{NS}/{name}/resume/", csrf).status_code == 200
    _advance_until(
        cluster,
        installed_cache,
        lambda: _phase(cluster.store.get(jobs, NS, name)) in ("Restarting", "Pending", "Running"),
        "Job resumed",
    )


@pytest.mark.parametrize(
    ("action", "command", "phases"),
    [
        ("restart", "RestartJob", {"Restarting", "Pending", "Running"}),
        ("terminate", "TerminateJob", {"Terminating", "Terminated"}),
    ],
)
def test_restart_and_terminate(cluster, server, installed_cache, action, command, phases):
    job = _job_in_phase(cluster, {"Running"})
    name, uid = job["metadata"]["name"], job["metadata"]["uid"]
    ops = proxy_session("ops")
    path = f"/actions/jobs/{NS}/{name}/{action}/"
    csrf = _csrf(ops, server.url + path)
    assert _post(ops, server.url, path, csrf).status_code == 200
    (created,) = [c for c in _commands(cluster, NS) if c["target"]["uid"] == uid]
    assert created["action"] == command
    jobs = _kind("Job", "batch.volcano.sh")
    retries = (job.get("status") or {}).get("retryCount", 0)

    def acted():
        current = cluster.store.get(jobs, NS, name)
        if action == "restart":
            return (current.get("status") or {}).get("retryCount", 0) > retries or _phase(
                current
            ) == "Restarting"
        return _phase(current) in phases

    _advance_until(cluster, installed_cache, acted, f"{command} acted on")


def test_delete_needs_delete_permission_and_removes_the_job(cluster, server, installed_cache):
    job = _job_in_phase(cluster, {"Running", "Pending", "Completed", "Aborted", "Terminated", "Failed"})
    name = job["metadata"]["name"]
    installed_cache.wait_for(lambda s: s.jobs.get(NS, name) is not None, timeout=10)
    janitor = proxy_session("janitor")
    page = janitor.get(f"{server.url}/jobs/{NS}/{name}/")
    assert f"/actions/jobs/{NS}/{name}/delete/" in page.text
    assert f"/actions/jobs/{NS}/{name}/suspend/" not in page.text  # no create on Commands
    path = f"/actions/jobs/{NS}/{name}/delete/"
    csrf = _csrf(janitor, server.url + path)
    assert _post(janitor, server.url, path, csrf).status_code == 200
    from dashboard.sim.store import ApiError

    with pytest.raises(ApiError):
        cluster.store.get(_kind("Job", "batch.volcano.sh"), NS, name)
    installed_cache.wait_for(lambda s: s.jobs.get(NS, name) is None, timeout=10)
    assert janitor.get(server.url + path).status_code == 404


def test_queue_close_and_open(cluster, server, installed_cache):
    queues = _kind("Queue", "scheduling.volcano.sh")
    queue = next(
        q
        for q in cluster.store.list(queues)[0]
        if (q.get("status") or {}).get("state") == "Open" and q["metadata"]["name"] not in ("root",)
    )
    qname = queue["metadata"]["name"]
    # ops cannot create Commands in "default", where queue Commands live.
    assert proxy_session("ops").get(f"{server.url}/actions/queues/{qname}/close/").status_code == 403
    qops = proxy_session("queue-ops")
    assert f"/actions/queues/{qname}/close/" in qops.get(f"{server.url}/queues/{qname}/").text
    csrf = _csrf(qops, f"{server.url}/actions/queues/{qname}/close/")
    assert _post(qops, server.url, f"/actions/queues/{qname}/close/", csrf).status_code == 200
    (command,) = [c for c in _commands(cluster, "default") if c["target"]["name"] == qname]
    assert command["action"] == "CloseQueue"
    assert command["metadata"]["generateName"] == f"{qname}-closequeue-"
    assert command["target"] == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "name": qname,
        "uid": queue["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }

    def state():
        return (cluster.store.get(queues, None, qname).get("status") or {}).get("state")

    _advance_until(cluster, installed_cache, lambda: state() in ("Closing", "Closed"), "Queue closed")
    installed_cache.wait_for(
        lambda s: (s.queues.get(None, qname).get("status") or {}).get("state") in ("Closing", "Closed"),
        timeout=10,
    )
    csrf = _csrf(qops, f"{server.url}/actions/queues/{qname}/open/")
    assert _post(qops, server.url, f"/actions/queues/{qname}/open/", csrf).status_code == 200
    _advance_until(cluster, installed_cache, lambda: state() == "Open", "Queue open again")


def test_actions_are_absent_unless_enabled(cluster, installed_cache, dashboard_server):
    server = dashboard_server(**proxy_settings())
    job = _job_in_phase(cluster, {"Running", "Pending", "Completed", "Aborted", "Terminated", "Failed"})
    name = job["metadata"]["name"]
    ops = proxy_session("ops")
    assert "/actions/" not in ops.get(f"{server.url}/jobs/{NS}/{name}/").text
    assert ops.get(f"{server.url}/actions/jobs/{NS}/{name}/suspend/").status_code == 404


def test_anonymous_requests_never_reach_an_action(cluster, server):
    job = _job_in_phase(cluster, {"Running", "Pending", "Completed", "Aborted", "Terminated", "Failed"})
    response = requests.get(f"{server.url}/actions/jobs/{NS}/{job['metadata']['name']}/delete/")
    assert response.status_code == 401
