"""``manage.py simcluster`` and ``manage.py demo`` as a user runs them: subprocesses, real ports, signals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from kubernetes import client, config

# Starts the simcluster and demo commands as processes.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.p = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.p.stdout:  # type: ignore[union-attr]
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, prefix: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.startswith(prefix):
                    return line
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no line starting with {prefix!r}; output:\n" + "\n".join(self.lines))

    def stop(self) -> int:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                return self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode


def test_simcluster_serves_the_demo_until_sigterm(tmp_path):
    kubeconfig = tmp_path / "kc"
    port = free_port()
    proc = Proc(
        "simcluster", "--port", str(port), "--kubeconfig", str(kubeconfig), "--seed", "4", "--speed", "5"
    )
    try:
        assert proc.wait_for("URL:").endswith(f"127.0.0.1:{port}")
        assert proc.wait_for("Kubeconfig:").endswith(str(kubeconfig))
        api = config.new_client_from_config(config_file=str(kubeconfig))
        custom = client.CustomObjectsApi(api)
        deadline = time.monotonic() + 30
        phases: set[str] = set()
        while time.monotonic() < deadline and "Running" not in phases:
            jobs = custom.list_cluster_custom_object("batch.volcano.sh", "v1alpha1", "jobs")["items"]
            phases = {((j.get("status") or {}).get("state") or {}).get("phase") for j in jobs}
            time.sleep(0.2)  # waiting on a condition with a deadline, not for state
        assert "Running" in phases  # realtime x5: the demo moves without anybody advancing it
        api.close()
    finally:
        code = proc.stop()
    assert code == 0
    assert "Stopped." in proc.lines


def test_simcluster_rejects_a_missing_scenario_file(tmp_path):
    proc = Proc("simcluster", "--kubeconfig", str(tmp_path / "kc"), "--scenario", str(tmp_path / "nope.yaml"))
    assert proc.p.wait(timeout=60) != 0
    time.sleep(0.2)
    assert any("not empty, demo, large, or an existing YAML/JSON file" in line for line in proc.lines)


def test_simcluster_replays_a_file_frozen(tmp_path):
    scenario = tmp_path / "state.yaml"
    scenario.write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: frozen\n  namespace: default\n"
        "  uid: 11111111-2222-4333-8444-555555555555\n  creationTimestamp: '2024-01-01T00:00:00Z'\n"
        "spec:\n  minAvailable: 1\n  tasks: [{name: t, replicas: 1, template: {spec: {containers: "
        "[{name: c, image: x}]}}}]\nstatus:\n  state: {phase: Aborting}\n  terminating: 1\n"
    )
    kubeconfig = tmp_path / "kc"
    proc = Proc(
        "simcluster",
        "--kubeconfig",
        str(kubeconfig),
        "--scenario",
        str(scenario),
        "--no-controllers",
        "--speed",
        "100",
    )
    try:
        proc.wait_for("Kubeconfig:")
        api = config.new_client_from_config(config_file=str(kubeconfig))
        got = client.CustomObjectsApi(api).get_namespaced_custom_object(
            "batch.volcano.sh", "v1alpha1", "default", "jobs", "frozen"
        )
        assert got["metadata"]["uid"] == "11111111-2222-4333-8444-555555555555"
        assert got["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"
        assert got["status"] == {"state": {"phase": "Aborting"}, "terminating": 1}
        api.close()
    finally:
        assert proc.stop() == 0


@pytest.mark.skipif(not (REPO / "manage.py").exists(), reason="needs the Django project")
def test_demo_command_serves_the_dashboard_against_the_demo_cluster():
    port = free_port()
    proc = Proc("demo", "--port", str(port), "--seed", "1", "--history-hours", "1")
    try:
        kc_line = proc.wait_for("Simulated Volcano cluster:")
        kubeconfig = kc_line.split("kubeconfig ", 1)[1].split(",", 1)[0]
        assert proc.wait_for("volcano-ui dashboard:").endswith(f"127.0.0.1:{port}/")
        deadline = time.monotonic() + 30
        status = None
        while time.monotonic() < deadline and status is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as resp:
                    status = resp.status
            except OSError:
                time.sleep(0.2)
        assert status == 200
        api = config.new_client_from_config(config_file=kubeconfig)
        queues = client.CustomObjectsApi(api).list_cluster_custom_object(
            "scheduling.volcano.sh", "v1beta1", "queues"
        )["items"]
        assert {"research", "production", "archive"} <= {q["metadata"]["name"] for q in queues}
        api.close()
    finally:
        assert proc.stop() == 0
    assert not Path(kubeconfig).exists()  # the temporary kubeconfig is removed on exit


def test_simcluster_restart_keeps_token_and_ca_so_old_kubeconfigs_work(tmp_path):
    """A restart with the same --kubeconfig is just an outage: same admin token, same CA and serving
    certificate (kept in <kubeconfig>.sim-state.json, mode 0600), so a client configured from the
    first run's kubeconfig talks to the second run unchanged."""
    import stat

    kubeconfig = tmp_path / "kc"
    port, tls_port = free_port(), free_port()
    args = ("simcluster", "--port", str(port), "--tls-port", str(tls_port), "--kubeconfig", str(kubeconfig))
    args += ("--scenario", "empty", "--no-controllers")
    first = Proc(*args)
    try:
        first.wait_for("Kubeconfig:")
        token_line = first.wait_for("Admin token")
        before = kubeconfig.read_text()
        api = config.new_client_from_config(config_file=str(kubeconfig))  # the first run's config
        assert client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
    finally:
        assert first.stop() == 0
    state = Path(f"{kubeconfig}.sim-state.json")
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
    second = Proc(*args)
    try:
        second.wait_for("Kubeconfig:")
        assert second.wait_for("Admin token") == token_line
        assert kubeconfig.read_text() == before  # same server, token and certificate-authority-data
        # The old client (its pooled connection died with the first server) reconnects and is trusted.
        assert client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
        api.close()
    finally:
        assert second.stop() == 0
    third = Proc(*args, "--fresh")  # --fresh: a new identity, the old kubeconfig no longer trusted
    try:
        third.wait_for("Kubeconfig:")
        assert third.wait_for("Admin token") != token_line
        assert kubeconfig.read_text() != before
    finally:
        assert third.stop() == 0
