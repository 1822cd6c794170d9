"""The container image's steps, without a Docker engine (deploy/Dockerfile does the same):

1. a fresh virtualenv with the project installed from the checkout, not editable;
2. ``collectstatic`` into a separate STATIC_ROOT (hashed, compressed files and their manifest);
3. gunicorn started with deploy/gunicorn.conf.py, from a directory outside the checkout so only
   the installed package is importable, against a simulated cluster's kubeconfig;
4. ``/healthz`` answers, ``/readyz`` turns 200 once every kind is synced, a page and a hashed
   static file are served, and SIGTERM stops gunicorn cleanly.

Run alone with ``make image-check``. Takes about a minute (pip reuses its cache).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{cmd}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except OSError as exc:  # connection refused while gunicorn boots
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("image")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", venv], timeout=120)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    # Build from a clean copy: an in-tree build/ directory left by an earlier build could ship
    # stale files. The copy leaves out what /.dockerignore keeps out of the image's context.
    source = root / "src"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "build",
            "*.egg-info",
            "__pycache__",
            "staticfiles",
            "node_modules",
            ".pytest_cache",
            ".hypothesis",
            "bench",
            "tests",
        ),
    )
    _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", source], timeout=600, env=env)
    return root, venv


def test_the_wheel_is_not_an_editable_install(installed):
    _, venv = installed
    out = _run(
        [venv / "bin" / "python", "-c", "import volcano_ui, dashboard; print(volcano_ui.__file__)"],
        cwd="/",
    ).stdout
    assert str(venv) in out and str(REPO) not in out


@pytest.fixture(scope="module")
def collected(installed):
    root, venv = installed
    static_root = root / "static"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VOLCANO_UI_")},
        "DJANGO_SETTINGS_MODULE": "volcano_ui.settings",
        "VOLCANO_UI_STATIC_ROOT": str(static_root),
    }
    _run([venv / "bin" / "django-admin", "collectstatic", "--noinput"], cwd=root, env=env, timeout=300)
    return root, venv, static_root, env


def test_collectstatic_writes_hashed_compressed_files_and_a_manifest(collected):
    _, _, static_root, _ = collected
    manifest = json.loads((static_root / "staticfiles.json").read_text())
    assert manifest["paths"], "the manifest maps static files to hashed names"
    hashed = static_root / next(iter(manifest["paths"].values()))
    assert hashed.exists() and Path(f"{hashed}.gz").exists()


def test_gunicorn_serves_and_turns_ready_once_synced(collected, tmp_path):
    cluster_mod = pytest.importorskip("dashboard.sim.cluster", reason="the simulated cluster has not landed")
    root, venv, static_root, env = collected
    controllers = importlib.util.find_spec("dashboard.sim.controllers") is not None
    cluster = cluster_mod.SimulatedCluster(seed=1, controllers=controllers)
    cluster.start()
    port = _free_port()
    kubeconfig = cluster.write_kubeconfig(tmp_path / "sim.kubeconfig")
    proc = subprocess.Popen(
        [str(venv / "bin" / "gunicorn"), "--config", str(REPO / "deploy" / "gunicorn.conf.py")],
        cwd=root,  # outside the checkout: only the installed package can be imported
        env={
            **env,
            "VOLCANO_UI_BIND": f"127.0.0.1:{port}",
            "VOLCANO_UI_CLUSTER": "kubeconfig",
            "VOLCANO_UI_KUBECONFIG": str(kubeconfig),
            "VOLCANO_UI_LOG_FORMAT": "json",
            "VOLCANO_UI_WORKERS": "1",
            "VOLCANO_UI_THREADS": "4",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: _get(f"{base}/healthz")[0] == 200, 60, "/healthz")

        def ready_response():
            response = _get(f"{base}/readyz")
            return response if response[0] == 200 else None

        status, _, body = _wait_for(ready_response, 90, "/readyz 200")
        ready = json.loads(body)
        assert ready["ready"] is True and set(ready["kinds"]) >= {"jobs", "podgroups", "queues", "pods"}
        status, headers, page = _get(f"{base}/")
        assert status == 200, page[:500]
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        static_urls = re.findall(rb'(?:src|href)="(/static/[^"]+)"', page)
        assert static_urls, "the page links its stylesheet and scripts"
        for url in static_urls:
            # Hashed names (name.0123456789ab.ext) are served with a far-future cache lifetime.
            assert re.search(rb"\.[0-9a-f]{12}\.", url), url
            code, static_headers, _ = _get(base + url.decode())
            assert code == 200
            assert "immutable" in static_headers.get("Cache-Control", "")
        metrics = _get(f"{base}/metrics")[2].decode()
        assert 'volcano_ui_cache_state{kind="jobs",state="synced"} 1.0' in metrics
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        cluster.stop()
    assert proc.returncode == 0, stderr[-3000:]
    # Every line, gunicorn's and the application's, is one JSON object (VOLCANO_UI_LOG_FORMAT=json).
    lines = [json.loads(line) for line in (stdout + stderr).splitlines() if line.strip()]
    messages = [line["message"] for line in lines]
    assert any("cluster cache informers started" in m for m in messages), "post_fork started them"
    assert any(line.get("path") == "/" and line.get("request_id") not in (None, "-") for line in lines)
