"""kubectl (the real binary) with Volcano's CronJob, JobFlow, JobTemplate, HyperNode, network-topology,
partition and subGroupPolicy examples, against a simulated cluster with its controllers on."""

from __future__ import annotations

import subprocess

import pytest

from dashboard.sim.cluster import SimulatedCluster

pytestmark = pytest.mark.kubectl

UID = "6f1c2a3b-0000-4000-8000-000000000002"
EXAMPLES = (
    "cronjob.yaml",
    "JobTemplate.yaml",
    "JobFlow.yaml",
    "benchmark-readme-hypernode-rack.yaml",
    "docs-how_to_use_network_topology_aware_scheduling-job.yaml",
    "docs-how_to_use_network_topology_aware_scheduling-partition-job.yaml",
    "docs-network-topology-design-podgroup-subgrouppolicy.yaml",
)


@pytest.fixture
def live():
    c = SimulatedCluster(seed=5, controllers=True, bookmark_interval=0.2)
    c.start()
    for i in range(3):
        cap = {"cpu": "16", "memory": "64Gi", "pods": "110"}
        c.store.create(
            "nodes",
            {
                "metadata": {"name": f"node-{i}", "labels": {"topology-rack": "rack-0"}},
                "status": {
                    "capacity": cap,
                    "allocatable": cap,
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            },
        )
    yield c
    c.stop()


@pytest.fixture
def kubectl(live, kubectl_bin, tmp_path):
    kubeconfig = live.write_kubeconfig(tmp_path / "kubeconfig")

    def run(*args: str) -> str:
        proc = subprocess.run(
            [kubectl_bin, f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    return run


def test_apply_platform_examples_list_them_and_run_them(kubectl, live, shared, tmp_path):
    for name in EXAMPLES:
        path = tmp_path / name
        path.write_text((shared / "volcano" / "examples" / name).read_text().replace("<jobUID>", UID))
        out = kubectl("apply", "-f", str(path))
        assert "created" in out or "configured" in out, (name, out)  # both topology jobs share a name
    names = kubectl("get", "cronvcjob,jf,jt,hn", "-A", "-o", "name").split()
    assert "cronjob.batch.volcano.sh/volcano-cronjob-example" in names
    assert "jobflow.flow.volcano.sh/test" in names
    assert {f"jobtemplate.flow.volcano.sh/{t}" for t in "abcde"} <= set(names)
    assert "hypernode.topology.volcano.sh/rack-0" in names
    assert (
        kubectl("get", "pg", f"network-topology-job-{UID}", "-o", "jsonpath={.spec.subGroupPolicy[0].name}")
        == "task0"
    )

    live.advance(5)
    table = kubectl("get", "hn").split("\n")
    assert table[0].split() == ["NAME", "TIER", "TIERNAME", "NODECOUNT", "AGE"]
    assert table[1].split()[:4] == ["rack-0", "1", "rack", "3"]

    # The CronJob (*/5) creates its first Job at 10:05 of the simulated clock.
    live.advance(300)
    jobs = kubectl("get", "vcjob", "-o", "name").split()
    cron_jobs = [j for j in jobs if j.startswith("job.batch.volcano.sh/volcano-cronjob-example-")]
    assert len(cron_jobs) == 1, jobs
    last = kubectl("get", "cronvcjob", "volcano-cronjob-example", "-o", "jsonpath={.status.lastScheduleTime}")
    assert last == "2026-11-29T10:05:00Z"

    # The JobFlow a -> b -> {c, d} -> e runs to the end; jobRetainPolicy delete then removes its Jobs.
    for _ in range(60):
        if kubectl("get", "jf", "test", "-o", "jsonpath={.status.state.phase}") == "Succeed":
            break
        live.advance(30)
    assert kubectl("get", "jf", "test", "-o", "jsonpath={.status.state.phase}") == "Succeed"
    started = kubectl(
        "get",
        "jf",
        "test",
        "-o",
        r"jsonpath={range .status.jobStatusList[*]}{.name}={.startTimestamp}{'\n'}{end}",
    )
    when = dict(line.split("=") for line in started.split())
    assert when["test-a"] < when["test-b"] < when["test-c"] <= when["test-e"]
    assert when["test-d"] < when["test-e"]
    live.advance(2)
    assert not [
        j for j in kubectl("get", "vcjob", "-o", "name").split() if j.startswith("job.batch.volcano.sh/test-")
    ]
