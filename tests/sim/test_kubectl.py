"""kubectl (the real binary) against the simulated cluster: apply every valid Volcano example,
get with short names and printer columns, -o yaml, watch, delete."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.kubectl

UID = "6f1c2a3b-0000-4000-8000-000000000001"


@pytest.fixture
def kubectl(cluster, kubectl_bin, tmp_path):
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    cache = tmp_path / "kube-cache"

    def run(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [kubectl_bin, f"--kubeconfig={kubeconfig}", f"--cache-dir={cache}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    run.argv = [kubectl_bin, f"--kubeconfig={kubeconfig}", f"--cache-dir={cache}"]  # type: ignore[attr-defined]
    return run


def example_files(shared: Path, tmp_path: Path) -> list[Path]:
    out = []
    for src in sorted((shared / "volcano" / "examples").glob("*.yaml")):
        if src.name.startswith("invalid_"):
            continue
        dst = tmp_path / src.name
        dst.write_text(src.read_text().replace("<jobUID>", UID))
        out.append(dst)
    return out


def test_apply_every_example_then_list(kubectl, cluster, shared, tmp_path):
    files = example_files(shared, tmp_path)
    assert len(files) >= 25
    for path in files:
        # kubectl refuses `apply` for generateName manifests (client-side rule); use create.
        verb = "create" if "generateName:" in path.read_text() else "apply"
        out = kubectl(verb, "-f", str(path)).stdout
        assert "created" in out or "configured" in out, (path.name, out)
    jobs = kubectl("get", "vcjob,pg", "-A").stdout
    assert "job.batch.volcano.sh/test-job " in jobs and "podgroup.scheduling.volcano.sh/test-pg " in jobs
    assert "STATUS" in jobs and "MINAVAILABLE" in jobs and "MINMEMBER" in jobs
    queues = kubectl("get", "q").stdout.split("\n")
    assert queues[0].split() == ["NAME", "PARENT"]
    assert any(line.split() == ["backend-team", "engineering"] for line in queues)
    assert kubectl("get", "q", "queue-a", "-o", "jsonpath={.spec.guarantee}").stdout == "{}"
    assert (
        kubectl("get", "vj", "lm-mpi-job", "-o", "jsonpath={.spec.queue}/{.spec.maxRetry}").stdout
        == "default/3"
    )
    assert "hypernode.topology.volcano.sh/rack-0" in kubectl("get", "hn", "-o", "name").stdout
    assert kubectl("get", "jf,jt,cronvcjob", "-o", "name").stdout.count("\n") == 7
    # Re-applying an unchanged manifest is a no-op; a changed core manifest is strategic-merge patched.
    assert "unchanged" in kubectl("apply", "-f", str(tmp_path / "job.yaml")).stdout
    deploy = tmp_path / "deployment-deployment.yaml"
    deploy.write_text(deploy.read_text().replace("replicas: 1", "replicas: 4"))
    assert "configured" in kubectl("apply", "-f", str(deploy)).stdout
    assert kubectl("get", "deploy", "deploy-with-volcano", "-o", "jsonpath={.spec.replicas}").stdout == "4"
    yaml_out = kubectl("get", "pg", "test-pg", "-o", "yaml").stdout
    assert "kind: PodGroup" in yaml_out and "kubectl.kubernetes.io/last-applied-configuration" in yaml_out
    assert "deleted" in kubectl("delete", "-f", str(tmp_path / "JobTemplate.yaml")).stdout
    assert kubectl("get", "jt", "-o", "name").stdout == ""


def test_get_watch_streams_a_change(kubectl, cluster):
    cluster.store.create("jobs", {"metadata": {"name": "watched", "namespace": "default"}, "spec": {}})
    proc = subprocess.Popen(
        [*kubectl.argv, "get", "vcjob", "-A", "-w"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while not cluster.server.stats()["watches"].get("jobs") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert cluster.server.stats()["watches"].get("jobs") == 1, "kubectl never opened its watch"
        cluster.store.mutate(
            "jobs",
            "default",
            "watched",
            lambda o: o.update(status={"state": {"phase": "Running"}, "running": 1}),
        )
        lines = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "Running" in line:
                break
    finally:
        proc.kill()
        proc.wait(5)
    assert lines[0].split()[:3] == ["NAMESPACE", "NAME", "STATUS"]
    assert any(line.split()[:3] == ["default", "watched", "Running"] for line in lines), lines


def test_namespace_user_is_forbidden_cluster_wide(kubectl, cluster, kubectl_bin, tmp_path):
    # `kubectl create namespace` sends a protobuf body (typed client): decoded by sim/protobuf.py.
    assert "namespace/team-a created" in kubectl("create", "namespace", "team-a").stdout
    cluster.add_user("alice", "alice-token", ["team-a"])
    kubeconfig = cluster.write_kubeconfig(tmp_path / "alice", "alice")
    base = [kubectl_bin, f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache-alice'}"]
    denied = subprocess.run([*base, "get", "vcjob", "-A"], capture_output=True, text=True, timeout=60)
    assert denied.returncode != 0 and "forbidden" in denied.stderr
    ok = subprocess.run([*base, "get", "vcjob"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "No resources found in team-a namespace." in ok.stderr
    for args, answer in (
        (["create", "commands.bus.volcano.sh"], "yes"),
        (["delete", "jobs.batch.volcano.sh"], "no"),
        (["list", "pods", "-n", "default"], "no"),
        (["watch", "queues.scheduling.volcano.sh"], "yes"),
    ):
        can = subprocess.run([*base, "auth", "can-i", *args], capture_output=True, text=True, timeout=60)
        assert can.stdout.strip() == answer, (args, can.stdout, can.stderr)


def test_imperative_create_commands(kubectl, cluster):
    kubectl("create", "configmap", "cm1", "--from-literal=a=b")
    assert cluster.store.get("configmaps", "default", "cm1")["data"] == {"a": "b"}
    kubectl("create", "secret", "generic", "s1", "--from-literal=k=v")
    assert cluster.store.get("secrets", "default", "s1")["data"] == {"k": "dg=="}
    kubectl("create", "priorityclass", "high", "--value=1000")
    assert cluster.store.get("priorityclasses", None, "high")["value"] == 1000
    unsupported = kubectl("create", "deployment", "d", "--image=nginx", check=False)
    assert unsupported.returncode != 0 and "are not supported; send JSON" in unsupported.stderr
