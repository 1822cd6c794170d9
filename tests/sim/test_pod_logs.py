"""Pod logs (GET .../pods/{name}/log) of the simulated cluster: generated lines, the PodLogOptions,
the API server's errors, RBAC on pods/log, following while the clock advances, the official client
and the real kubectl."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from dashboard.sim.auth import READ, Rule, User
from dashboard.sim.clock import rfc3339
from dashboard.sim.kinds import resolve

POD = resolve("pods")
NS = "default"


def make_pod(
    cluster,
    name: str,
    *,
    containers: tuple[str, ...] = ("main",),
    image: str = "busybox:1.36",
    command: list[str] | None = None,
    state: dict[str, Any] | None = None,
    last: dict[str, Any] | None = None,
    restarts: int = 0,
    node: str = "node-1",
) -> dict:
    started = rfc3339(cluster.clock.now())
    cluster.store.create(
        POD,
        {
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "nodeName": node,
                "containers": [
                    {"name": c, "image": image, **({"command": command} if command else {})}
                    for c in containers
                ],
            },
        },
    )

    def status(obj: dict) -> None:
        obj["status"] = {
            "phase": "Running",
            "startTime": started,
            "containerStatuses": [
                {
                    "name": c,
                    "image": image,
                    "restartCount": restarts,
                    "state": state or {"running": {"startedAt": started}},
                    "lastState": {"terminated": last} if last else {},
                }
                for c in containers
            ],
        }

    return cluster.store.mutate(POD, NS, name, status)


def get_log(cluster, name: str, token: str | None = None, **params: Any) -> tuple[int, str, str]:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    req = urllib.request.Request(
        f"{cluster.url}/api/v1/namespaces/{NS}/pods/{name}/log?{query}",
        headers={"Authorization": f"Bearer {token or cluster.admin_token}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read().decode()


def terminated(cluster, started: str, code: int, reason: str) -> dict:
    return {
        "exitCode": code,
        "reason": reason,
        "startedAt": started,
        "finishedAt": rfc3339(cluster.clock.now()),
    }


def test_running_container_log_grows_with_the_clock_and_is_deterministic(cluster):
    make_pod(cluster, "train", image="pytorch/pytorch:2.5.1", command=["torchrun", "train.py"])
    assert get_log(cluster, "train")[2] == ""  # nothing written in its first instant
    cluster.advance(1)
    code, ctype, first = get_log(cluster, "train")
    assert code == 200 and ctype.startswith("text/plain")
    assert "Initializing process group" in first and "loss=" not in first
    cluster.advance(60)
    _, _, later = get_log(cluster, "train")
    assert later.startswith(first) and "loss=" in later
    assert later == get_log(cluster, "train")[2]  # generated, yet identical on every read
    assert len(later.splitlines()) > 10


def test_tail_since_timestamps_and_limit_bytes(cluster):
    make_pod(cluster, "batch")
    cluster.advance(120)
    _, _, full = get_log(cluster, "batch")
    lines = full.splitlines()
    _, _, tail = get_log(cluster, "batch", tailLines=5)
    assert tail.splitlines() == lines[-5:]
    assert get_log(cluster, "batch", tailLines=0)[2] == ""
    _, _, stamped = get_log(cluster, "batch", tailLines=3, timestamps="true")
    stamp, _, text = stamped.splitlines()[0].partition(" ")
    assert text == lines[-3] and stamp.endswith("Z") and len(stamp.split(".")[1]) == 10  # 9 digits + Z
    _, _, recent = get_log(cluster, "batch", sinceSeconds=10, timestamps="true")
    since = rfc3339(cluster.clock.now() - timedelta(seconds=10))[:19]
    assert recent and all(ln[:19] >= since for ln in recent.splitlines())
    assert 0 < len(recent.splitlines()) < len(lines)
    _, _, since_time = get_log(cluster, "batch", sinceTime=rfc3339(cluster.clock.now()).replace(":", "%3A"))
    assert len(since_time.splitlines()) <= 1
    _, _, limited = get_log(cluster, "batch", limitBytes=100)
    assert limited == full[:100]


def test_tail_of_a_long_running_container_is_cheap(cluster):
    make_pod(cluster, "forever")
    cluster.advance(30 * 86_400)  # a month at one line per 1.5 s: ~1.7 million lines
    began = time.perf_counter()
    _, _, tail = get_log(cluster, "forever", tailLines=100)
    assert len(tail.splitlines()) == 100
    assert time.perf_counter() - began < 2.0


def test_invalid_options_are_422_status(cluster):
    make_pod(cluster, "opts")
    code, _, body = get_log(cluster, "opts", tailLines=-1)
    status = json.loads(body)
    assert code == 422 and status["kind"] == "Status" and status["reason"] == "Invalid"
    assert "tailLines" in status["message"]
    assert get_log(cluster, "opts", sinceSeconds=5, sinceTime="2026-11-29T10:00:00Z")[0] == 422


def test_errors_are_the_api_servers(cluster):
    make_pod(cluster, "duo", containers=("trainer", "sidecar"))
    code, ctype, body = get_log(cluster, "duo")
    status = json.loads(body)
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")
    assert (
        status["message"]
        == "a container name must be specified for pod duo, choose one of: [trainer sidecar]"
    )
    assert get_log(cluster, "duo", container="sidecar")[0] == 200
    code, _, body = get_log(cluster, "duo", container="nope")
    assert code == 400 and json.loads(body)["message"] == "container nope is not valid for pod duo"
    code, _, body = get_log(cluster, "duo", container="trainer", previous="true")
    assert code == 400
    assert json.loads(body)["message"] == 'previous terminated container "trainer" in pod "duo" not found'
    code, _, body = get_log(cluster, "ghost")
    status = json.loads(body)
    assert (code, status["kind"], status["reason"], status["code"]) == (404, "Status", "NotFound", 404)
    assert status["message"] == 'pods "ghost" not found'
    make_pod(cluster, "pulling", state={"waiting": {"reason": "ImagePullBackOff"}})
    code, _, body = get_log(cluster, "pulling")
    assert code == 400 and json.loads(body)["message"] == (
        'container "main" in pod "pulling" is waiting to start: trying and failing to pull image'
    )
    make_pod(cluster, "unbound", node="")
    assert get_log(cluster, "unbound") == (200, "text/plain", "")


def test_failure_traceback_oom_and_crash_loop_previous(cluster):
    started = rfc3339(cluster.clock.now())
    make_pod(cluster, "doomed")
    cluster.advance(20)
    cluster.store.mutate(
        POD,
        NS,
        "doomed",
        lambda o: o["status"]["containerStatuses"][0].__setitem__(
            "state", {"terminated": terminated(cluster, started, 3, "Error")}
        ),
    )
    _, _, failed = get_log(cluster, "doomed")
    assert "Traceback (most recent call last):" in failed
    assert failed.rstrip().endswith("exited with status 3")

    make_pod(cluster, "hungry")
    cluster.advance(40)
    cluster.store.mutate(
        POD,
        NS,
        "hungry",
        lambda o: o["status"]["containerStatuses"][0].__setitem__(
            "state", {"terminated": terminated(cluster, started, 137, "OOMKilled")}
        ),
    )
    _, _, oom = get_log(cluster, "hungry")
    rss = [float(ln.split("rss ")[1].split()[0]) for ln in oom.splitlines() if "rss " in ln]
    assert "Traceback" not in oom and rss[-1] > rss[0] * 1.5  # memory climbs until the kill

    # A crash loop: the current (running) instance and the previous one log differently.
    prev_start = rfc3339(cluster.clock.now())
    cluster.advance(6)
    last = terminated(cluster, prev_start, 1, "Error")
    make_pod(cluster, "loop", last=last, restarts=4)
    cluster.advance(3)
    _, _, previous = get_log(cluster, "loop", previous="true")
    _, _, current = get_log(cluster, "loop")
    assert "Traceback" in previous and "Traceback" not in current and previous != current
    # Waiting in CrashLoopBackOff: the log is the last terminated instance's, as the kubelet serves.
    cluster.store.mutate(
        POD,
        NS,
        "loop",
        lambda o: o["status"]["containerStatuses"][0].__setitem__(
            "state", {"waiting": {"reason": "CrashLoopBackOff"}}
        ),
    )
    assert get_log(cluster, "loop")[2] == previous


def test_pods_log_needs_its_own_rbac_rule(cluster):
    cluster.auth.add(User("reader", "tok-reader", rules=(Rule(READ, frozenset({""}), frozenset({"pods"})),)))
    cluster.auth.add(
        User(
            "logger",
            "tok-logger",
            rules=(Rule(frozenset({"get"}), frozenset({""}), frozenset({"pods/log"})),),
        )
    )
    make_pod(cluster, "secret")
    code, _, body = get_log(cluster, "secret", token="tok-reader")
    status = json.loads(body)
    assert code == 403 and status["reason"] == "Forbidden"
    assert 'cannot get resource "pods/log" in API group "" in the namespace "default"' in status["message"]
    assert get_log(cluster, "secret", token="tok-logger")[0] == 200


def test_official_client_reads_and_follows(cluster, core):
    make_pod(cluster, "follow")
    cluster.advance(10)
    text = core.read_namespaced_pod_log("follow", NS, tail_lines=2)
    assert len(text.splitlines()) == 2
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("follow", NS, previous=True)
    assert exc.value.status == 400

    resp = core.read_namespaced_pod_log("follow", NS, follow=True, _preload_content=False, tail_lines=1)
    chunks: list[bytes] = []
    done = threading.Event()

    def read() -> None:
        for chunk in resp.stream(1024):
            chunks.append(chunk)
        done.set()

    def lines() -> list[str]:
        return b"".join(chunks).decode().splitlines()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 10
    while len(lines()) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)  # waiting on the reader thread, not on cluster state
    assert len(lines()) == 1
    cluster.advance(30)
    while len(lines()) < 10 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(lines()) >= 10 and not done.is_set()
    started = cluster.store.get(POD, NS, "follow")["status"]["startTime"]
    cluster.store.mutate(
        POD,
        NS,
        "follow",
        lambda o: o["status"]["containerStatuses"][0].__setitem__(
            "state", {"terminated": terminated(cluster, started, 0, "Completed")}
        ),
    )
    cluster.advance(1)
    assert done.wait(10), "the stream ends when the container stops"
    received = lines()
    assert received[-1] == "run-batch.sh: done"
    full = core.read_namespaced_pod_log("follow", NS).splitlines()
    assert received == full[-len(received) :]


@pytest.mark.kubectl
def test_kubectl_logs(cluster, kubectl_bin, tmp_path):
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")

    def kubectl(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [kubectl_bin, f"--kubeconfig={kubeconfig}", "-n", NS, "logs", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert not check or proc.returncode == 0, proc.stderr
        return proc

    prev_start = rfc3339(cluster.clock.now())
    cluster.advance(8)
    make_pod(
        cluster, "kc", containers=("trainer", "sidecar"), last=terminated(cluster, prev_start, 2, "Error")
    )
    cluster.advance(30)
    full = kubectl("kc", "-c", "trainer").stdout
    assert "processed chunk" in full
    assert kubectl("kc", "-c", "trainer", "--tail=3").stdout.splitlines() == full.splitlines()[-3:]
    assert "exited with status 2" in kubectl("kc", "-c", "trainer", "--previous").stdout
    stamped = kubectl("kc", "-c", "sidecar", "--timestamps", "--tail=1").stdout
    assert stamped.startswith("2026-11-29T")
    # Several containers and no -c: kubectl picks the first and says so.
    both = kubectl("kc")
    assert both.stdout == full
    make_pod(cluster, "kc-solo")
    cluster.advance(5)
    proc = subprocess.Popen(
        [kubectl_bin, f"--kubeconfig={kubeconfig}", "-n", NS, "logs", "-f", "kc-solo"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("+ ")
        cluster.advance(20)
        seen = [proc.stdout.readline() for _ in range(5)]
        assert all(seen)
        started = cluster.store.get(POD, NS, "kc-solo")["status"]["startTime"]
        cluster.store.mutate(
            POD,
            NS,
            "kc-solo",
            lambda o: o["status"]["containerStatuses"][0].__setitem__(
                "state", {"terminated": terminated(cluster, started, 0, "Completed")}
            ),
        )
        cluster.advance(1)
        rest = proc.stdout.read()
        assert proc.wait(timeout=20) == 0
        assert rest.rstrip().endswith("run-batch.sh: done")
    finally:
        if proc.poll() is None:
            proc.kill()
    code = kubectl("ghost", check=False)
    assert code.returncode != 0 and 'pods "ghost" not found' in code.stderr


def test_demo_failed_pods_have_tracebacks():
    from dashboard.sim.cluster import SimulatedCluster

    with SimulatedCluster(seed=7, scenario="demo") as demo:
        demo.advance(60)
        failed = [
            p
            for p in demo.store.list(POD, "research")[0]
            if p["metadata"]["name"].startswith("bad-config")
            and (p.get("status") or {}).get("phase") == "Failed"
        ]
        assert failed
        _, _, text = get_log_ns(demo, "research", failed[0]["metadata"]["name"])
        assert "Traceback (most recent call last):" in text and "exited with status 1" in text


def get_log_ns(cluster, ns: str, name: str) -> tuple[int, str, str]:
    req = urllib.request.Request(
        f"{cluster.url}/api/v1/namespaces/{ns}/pods/{name}/log",
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
