"""Volcano's admission webhooks (opt-in), through the store and through kubectl."""

from __future__ import annotations

import subprocess

import pytest

from dashboard.sim.cluster import SimulatedCluster
from dashboard.sim.store import ApiError


@pytest.fixture
def hooked():
    c = SimulatedCluster(seed=3, controllers=False, webhooks=True)
    yield c
    c.stop()


def job(name="j", **spec):
    base = {"tasks": [{"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]}
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {**base, **spec}}


def denied(fn, *args, **kwargs) -> str:
    with pytest.raises(ApiError) as err:
        fn(*args, **kwargs)
    assert err.value.code == 400 and "admission webhook" in err.value.message
    return err.value.message


def test_job_defaults_from_the_mutating_webhook(hooked):
    out = hooked.store.create("jobs", job(plugins={"mpi": ["--master=m"]}))
    spec = out["spec"]
    assert spec["schedulerName"] == "volcano" and spec["minAvailable"] == 2
    assert spec["tasks"][0]["name"] == "default0" and spec["tasks"][0]["minAvailable"] == 2
    assert spec["tasks"][0]["maxRetry"] == 3
    assert spec["plugins"] == {"mpi": ["--master=m"], "svc": [], "ssh": []}


def test_job_validation(hooked):
    store = hooked.store
    assert "greater than total replicas" in denied(store.create, "jobs", job(minAvailable=3))
    dup = job()
    dup["spec"]["tasks"] = [dict(dup["spec"]["tasks"][0], name="t"), dict(dup["spec"]["tasks"][0], name="t")]
    assert "duplicated task name t" in denied(store.create, "jobs", dup)
    policies = [
        {"event": "PodFailed", "action": "RestartJob"},
        {"events": ["PodFailed"], "action": "AbortJob"},
    ]
    assert "duplicate event PodFailed" in denied(store.create, "jobs", job(policies=policies))
    assert "not found" in denied(store.create, "jobs", job(queue="nope"))
    assert "root queue" in denied(store.create, "jobs", job(queue="root"))
    store.create("queues", {"metadata": {"name": "parent"}, "spec": {}})
    store.create("queues", {"metadata": {"name": "child"}, "spec": {"parent": "parent"}})
    assert "leaf queue" in denied(store.create, "jobs", job(queue="parent"))
    store.mutate("queues", None, "child", lambda q: q.update(status={"state": "Closed"}))
    assert "status is `Closed`" in denied(store.create, "jobs", job(queue="child"))
    created = store.create("jobs", job())
    created["spec"]["tasks"][0]["replicas"] = 5
    created["spec"]["minAvailable"] = 4
    store.update("jobs", created)  # allowed changes
    created = store.get("jobs", "default", "j")
    created["spec"]["queue"] = "child"
    assert "may only change" in denied(store.update, "jobs", created)


def test_queue_and_podgroup_rules(hooked):
    store = hooked.store
    assert "can not be deleted" in denied(store.delete, "queues", None, "default")
    store.create("queues", {"metadata": {"name": "p"}, "spec": {}})
    store.create("queues", {"metadata": {"name": "c"}, "spec": {"parent": "p"}})
    assert "child queues" in denied(store.delete, "queues", None, "p")
    assert store.get("queues", None, "c")["spec"]["reclaimable"] is True
    bad = {"metadata": {"name": "q"}, "spec": {"deserved": {"cpu": "4"}, "capability": {"cpu": "2"}}}
    assert "exceeds capability" in denied(store.create, "queues", bad)
    assert "weight" in denied(store.create, "queues", {"metadata": {"name": "w"}, "spec": {"weight": 0}})
    pg = {"metadata": {"name": "pg", "namespace": "default"}, "spec": {"minMember": 1, "queue": "missing"}}
    assert "not found" in denied(store.create, "podgroups", pg)
    store.create(
        "namespaces", {"metadata": {"name": "team", "annotations": {"scheduling.volcano.sh/queue-name": "c"}}}
    )
    out = store.create(
        "podgroups", {"metadata": {"name": "pg", "namespace": "team"}, "spec": {"minMember": 1}}
    )
    assert out["spec"]["queue"] == "c"


def test_webhooks_are_off_by_default(cluster):
    cluster.store.create("jobs", job(queue="nope", minAvailable=9))


@pytest.mark.kubectl
def test_kubectl_sees_invalid_examples_rejected(hooked, kubectl_bin, shared, tmp_path):
    hooked.start()
    kubeconfig = hooked.write_kubeconfig(tmp_path / "kc")
    examples = sorted((shared / "volcano" / "examples").glob("invalid_*.yaml"))
    assert len(examples) == 3
    for path in examples:
        proc = subprocess.run(
            [
                kubectl_bin,
                f"--kubeconfig={kubeconfig}",
                f"--cache-dir={tmp_path / 'c'}",
                "apply",
                "-f",
                str(path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode != 0 and "denied the request" in proc.stderr, (path.name, proc.stderr)
    ok = subprocess.run(
        [
            kubectl_bin,
            f"--kubeconfig={kubeconfig}",
            f"--cache-dir={tmp_path / 'c'}",
            "apply",
            "-f",
            str(shared / "volcano" / "examples" / "job.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
