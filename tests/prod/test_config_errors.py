"""A bad setting stops manage.py and gunicorn with one line naming the variable, its value and what
is allowed (exit status 2); bad ports are argparse errors; the demo never leaks its temporary
directory; /readyz's expected 503 is not logged as an error. Real subprocesses throughout."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

# Starts the demo and gunicorn as processes.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).parent / "gunicorn"


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOLCANO_UI_") and k != "KUBECONFIG"}
    env.update(extra)
    return env


def _manage(env_extra: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO,
        env=_env(env_extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _gunicorn_args() -> list[str]:
    import gunicorn

    args = [str(GUNICORN), "-c", str(REPO / "deploy" / "gunicorn.conf.py")]
    if int(gunicorn.__version__.split(".")[0]) >= 27:
        # gunicorn 27's control socket is one path per user, shared with every other gunicorn.
        args.append("--no-control-socket")
    return args


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


BAD_SETTINGS = [
    (
        {"VOLCANO_UI_ACCESS_MODE": "bogus"},
        "error: VOLCANO_UI_ACCESS_MODE='bogus' is not one of: none, proxy, token.",
    ),
    (
        {"VOLCANO_UI_TIME_ZONE": "Mars/Base"},
        "error: VOLCANO_UI_TIME_ZONE='Mars/Base' is not a time zone of the tz database",
    ),
    (
        {"VOLCANO_UI_ALLOWED_HOSTS": ""},
        "error: VOLCANO_UI_ALLOWED_HOSTS='' lists no host: it must list at least one host name "
        "(comma-separated); use * to allow any.",
    ),
    (
        {"VOLCANO_UI_ALLOWED_HOSTS": " , "},
        "error: VOLCANO_UI_ALLOWED_HOSTS=' , ' lists no host",
    ),
    (
        {"VOLCANO_UI_SCHEDULER_NAMES": ","},
        "error: VOLCANO_UI_SCHEDULER_NAMES=',' lists no scheduler: it must list at least one schedulerName",
    ),
]


@pytest.mark.parametrize(("env", "message"), BAD_SETTINGS)
def test_manage_py_names_the_bad_setting_in_one_line_and_exits_2(env, message):
    result = _manage(env, "check")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr  # no traceback
    assert result.stdout == ""


@pytest.mark.parametrize(
    "env",
    [
        {"VOLCANO_UI_TIME_ZONE": "Europe/Berlin"},
        {"VOLCANO_UI_TIME_ZONE": ""},  # unset or empty: UTC
        {"VOLCANO_UI_ALLOWED_HOSTS": "*"},
        # With DEBUG, Django itself allows localhost when the list is empty.
        {"VOLCANO_UI_ALLOWED_HOSTS": "", "VOLCANO_UI_DEBUG": "true"},
    ],
)
def test_good_values_pass(env):
    result = _manage(env, "check")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        *BAD_SETTINGS[:3],
        # Read by deploy/gunicorn.conf.py itself, not by the Django settings.
        ({"VOLCANO_UI_WORKERS": "abc"}, "error: VOLCANO_UI_WORKERS='abc' is not an integer."),
    ],
)
def test_gunicorn_stops_in_the_master_with_one_line_and_exit_2(env, message):
    result = subprocess.run(
        _gunicorn_args(),
        cwd=REPO,
        env=_env({"VOLCANO_UI_BIND": f"127.0.0.1:{_free_port()}", **env}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    output = result.stdout + result.stderr
    assert output.startswith(message), output
    assert len(output.splitlines()) == 1, output  # no "Booting worker", no traceback


def test_gunicorn_does_not_log_the_expected_readyz_503_as_an_error(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        _gunicorn_args(),
        cwd=REPO,
        env=_env(
            {
                "VOLCANO_UI_BIND": f"127.0.0.1:{port}",
                "VOLCANO_UI_CLUSTER": "kubeconfig",
                # Never listable: every kind stays unready, so /readyz answers 503.
                "VOLCANO_UI_KUBECONFIG": str(tmp_path / "absent.kubeconfig"),
            }
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    codes = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(codes) < 3:
            try:
                codes.append(requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code)
            except (requests.ConnectionError, requests.Timeout):  # still booting
                # The listening socket exists before the worker: on a busy machine a request can
                # wait in its backlog longer than the timeout until the worker has booted.
                time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
    assert codes == [503, 503, 503], stderr[-3000:]
    assert "Booting worker" in stderr  # the log is the one the probes would have written to
    assert "/readyz" not in stderr, stderr[-3000:]


def test_the_readyz_filter_drops_only_the_readyz_503(client, memory_cache, caplog):
    for kind in ("jobs", "podgroups", "queues", "pods", "events"):
        memory_cache.store(kind).set_state("syncing")
    with caplog.at_level(logging.INFO, logger="django.request"):
        assert client.get("/readyz").status_code == 503
        assert client.get("/no-such-page/").status_code == 404
    logged = [r.getMessage() for r in caplog.records if r.name == "django.request"]
    assert logged == ["Not Found: /no-such-page/"]


# --- ports -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("demo", "--port", "99999"), "argument --port: '99999' is not a TCP port: use 1-65535"),
        (("demo", "--port", "0"), "argument --port: '0' is not a TCP port: use 1-65535"),
        (("demo", "--sim-port", "-1"), "argument --sim-port: '-1' is not a TCP port: use 0-65535"),
        (
            ("simcluster", "--kubeconfig", "kc", "--port", "65536"),
            "argument --port: '65536' is not a TCP port: use 0-65535 (0 = any free port)",
        ),
        (("simcluster", "--kubeconfig", "kc", "--tls-port", "https"), "argument --tls-port: 'https'"),
    ],
)
def test_a_bad_port_is_an_argparse_error(args, message):
    result = _manage({}, *args, timeout=60)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "dashboard:" not in result.stdout


def test_demo_on_a_taken_port_says_so_before_starting_and_leaves_no_directory(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = _manage({"TMPDIR": str(tmp_path)}, "demo", "--port", str(port), timeout=60)
    assert result.returncode == 1
    assert f"port {port} is in use on 127.0.0.1; pass another one: make demo PORT=N" in result.stderr
    assert "Traceback" not in result.stderr
    assert "dashboard:" not in result.stdout  # no URL printed for a server that never starts
    assert list(tmp_path.iterdir()) == []


def test_the_demo_server_turns_a_failed_bind_into_a_command_error():
    """The port taken between the check and the bind: runserver would os._exit(1), skipping the
    demo's cleanup; the demo's server class raises CommandError instead."""
    from django.core.management.base import CommandError
    from django.core.servers.basehttp import WSGIRequestHandler

    from dashboard.management.commands.demo import _DemoServer

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(CommandError, match=f"port {port} is in use on 127.0.0.1"):
            _DemoServer(("127.0.0.1", port), WSGIRequestHandler)


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGINT])
def test_demo_deletes_its_directory_on_sighup_and_ctrl_c(tmp_path, signum):
    # SIGTERM is covered by tests/sim_behaviour/test_commands_cli.py.
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "demo", "--port", str(port), "--history-hours", "0"],
        cwd=REPO,
        env=_env({"TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("Simulated Volcano cluster:"), first + proc.stderr.read()
        assert proc.stdout.readline().startswith("volcano-ui dashboard:")
        (workdir,) = tmp_path.iterdir()
        assert (workdir / "kubeconfig").exists()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        proc.send_signal(signum)
        # Its cleanup stops the cluster, the informers and the history's recorder: seconds on a
        # quiet machine, more on a loaded one.
        assert proc.wait(timeout=90) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert list(tmp_path.iterdir()) == []
