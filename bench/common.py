"""Process plumbing shared by the benchmark, soak and fault scripts.

Three processes take part in every run, so that none of them steals the others' interpreter lock:
the simulated cluster (``python -m bench.simproc``), the dashboard served by gunicorn with its
production settings plus the measuring hooks of bench/settings.py, and the load generator (the
calling script). All traffic stays on loopback.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
# The production settings plus Server-Timing and /_bench/cache (bench/settings.py).
SETTINGS = "bench.settings"


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so the scripts' ``finally`` blocks stop their child processes."""

    def handler(signum, frame):  # noqa: ANN001, ARG001
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def _die_with_parent() -> None:
    """In a child before exec: get SIGTERM when the benchmark process dies, even by SIGKILL (Linux)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """The simulated cluster's options every benchmark script takes: scale (``--scenario`` and
    per-kind counts that override it; ``--nodes``/``--hypernodes`` reach the simulator's generator),
    churn and which generator loads it (bench/simproc.py)."""
    parser.add_argument("--scenario", default="large", help="large (the benchmark scale) or tiny")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--pods", type=int)
    parser.add_argument("--queues", type=int)
    parser.add_argument("--events", type=int)
    parser.add_argument("--nodes", type=int, help="at least this many nodes (default: as the pods need)")
    parser.add_argument("--hypernodes", type=int, help="HyperNodes in the topology tree (default: none)")
    parser.add_argument("--churn", default="auto", choices=("auto", "bench", "controllers", "off"))
    parser.add_argument("--arrivals-per-min", type=float, help="default: 120 per 10,000 Jobs")
    parser.add_argument("--generator", default="auto", choices=("auto", "sim", "bench"))


def rss_mb() -> float:
    """This process's resident set size in MB (Linux /proc; NaN elsewhere)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def log(message: str) -> None:
    """Progress goes to stderr so that stdout carries only the result tables."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- numbers ------------------------------------------------------------------------------------


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile (``pct`` in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100.0 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def median(values: Iterable[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_ms(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def fmt_mb(nbytes: float | None) -> str:
    return "–" if nbytes is None else f"{nbytes / 2**20:.0f}"


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    """A GitHub-flavoured markdown table; every cell is str()-ed."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)


# --- machine ------------------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    """What the README's table must say about where it ran: nproc, memory, Python, load."""
    try:
        free = subprocess.run(["free", "-h"], capture_output=True, text=True, timeout=5).stdout
        mem_line = next((line for line in free.splitlines() if line.startswith("Mem:")), "")
        mem_total = mem_line.split()[1] if mem_line else "?"
    except (OSError, subprocess.SubprocessError):
        mem_total = "?"
    load1, load5, load15 = os.getloadavg()
    return {
        "nproc": str(os.cpu_count()),
        "memory": mem_total,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadavg": f"{load1:.2f} {load5:.2f} {load15:.2f}",
    }


def other_load() -> str:
    """The busiest other processes right now (this 2-core machine is shared with other test runs)."""
    try:
        import psutil
    except ImportError:
        return "?"
    me = os.getpid()
    procs = []
    for proc in psutil.process_iter(["pid", "name", "cpu_percent", "cmdline"]):
        procs.append(proc)
    # cpu_percent needs two samples; the first call primes it.
    time.sleep(1.0)
    busy = []
    for proc in procs:
        try:
            pct = proc.cpu_percent(None)
            if proc.pid != me and pct >= 10:
                cmd = " ".join(proc.info.get("cmdline") or [proc.info.get("name") or "?"])[:60]
                busy.append(f"{pct:.0f}% {cmd}")
        except psutil.Error:
            continue
    return "; ".join(sorted(busy, reverse=True)[:5]) or "idle"


# --- HTTP helpers for the simulated cluster's admin API --------------------------------------------


@dataclass
class SimHandle:
    """The simulated cluster process: its URL, admin token and kubeconfig path."""

    proc: subprocess.Popen
    url: str
    token: str
    kubeconfig: Path
    info: dict = field(default_factory=dict)

    def _request(self, method: str, path: str, body: dict | None = None, timeout: float = 30.0) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def stats(self) -> dict:
        return self._request("GET", "/_sim/stats")  # type: ignore[return-value]

    def faults(self, **faults: object) -> object:
        return self._request("POST", "/_sim/faults", faults)

    def compact(self) -> object:
        return self._request("POST", "/_sim/compact", {})

    def admin(self, method: str, path: str, body: dict | None = None) -> object:
        return self._request(method, path, body)

    def pause_churn(self) -> None:
        self.proc.send_signal(signal.SIGUSR1)

    def resume_churn(self) -> None:
        self.proc.send_signal(signal.SIGUSR2)

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout``; only this one process (and its own group)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def start_sim(
    workdir: Path,
    *,
    port: int = 0,
    scenario: str = "large",
    extra: list[str] | None = None,
    timeout: float = 900.0,
) -> SimHandle:
    """Start ``python -m bench.simproc`` and wait for its ready line (a JSON object on stdout).

    Raises RuntimeError with the process's stderr tail when it exits or does not get ready in time.
    """
    kubeconfig = workdir / "sim.kubeconfig"
    stderr_path = workdir / "sim.stderr.log"
    cmd = [
        sys.executable,
        "-m",
        "bench.simproc",
        "--port",
        str(port),
        "--scenario",
        scenario,
        "--kubeconfig",
        str(kubeconfig),
        *(extra or []),
    ]
    log("sim: " + " ".join(cmd[1:]))
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=open(stderr_path, "w"),  # noqa: SIM115 - the child owns it until exit
        text=True,
        env=_child_env(),
        preexec_fn=_die_with_parent,
    )
    line = _read_line_with_timeout(proc, timeout)
    if not line:
        stop_process(proc)
        raise RuntimeError(f"simulated cluster did not start:\n{_tail(stderr_path)}")
    info = json.loads(line)
    # Keep draining stdout so the child never blocks on a full pipe.
    threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
    return SimHandle(proc=proc, url=info["url"], token=info["token"], kubeconfig=kubeconfig, info=info)


def _read_line_with_timeout(proc: subprocess.Popen, timeout: float) -> str:
    result: list[str] = []

    def reader() -> None:
        result.append(proc.stdout.readline())  # type: ignore[union-attr]

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(timeout)
    return result[0].strip() if result else ""


def _drain(stream) -> None:  # noqa: ANN001
    for _ in stream:
        pass


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


# --- the dashboard under gunicorn ---------------------------------------------------------------------


@dataclass
class DashHandle:
    """The dashboard's gunicorn master process and where it listens."""

    proc: subprocess.Popen
    host: str
    port: int
    started_at: float
    command: list[str]
    log_path: Path
    health_port: int = 0  # the workers' health listener (VOLCANO_UI_HEALTH_BIND), on loopback

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def pids(self) -> list[int]:
        """The master followed by every process under it (the workers and their health listener
        processes): what the dashboard costs in memory and CPU."""
        import psutil

        try:
            master = psutil.Process(self.proc.pid)
            return [master.pid] + [child.pid for child in master.children(recursive=True)]
        except psutil.Error:
            return []

    def worker_pids(self) -> list[int]:
        """The gunicorn workers (the master's own children)."""
        import psutil

        try:
            return [child.pid for child in psutil.Process(self.proc.pid).children()]
        except psutil.Error:
            return []

    def stop(self) -> None:
        stop_process(self.proc, timeout=30)


def gunicorn_command(port: int, workers: int | None, threads: int | None) -> list[str]:
    """The production command: deploy/gunicorn.conf.py when present, else an equivalent command line.

    Command-line options override the config file in gunicorn, so the bind address (loopback, our
    port) and, when asked, the worker/thread counts are set here while everything else comes from
    the production config.
    """
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    if not Path(gunicorn).exists():
        gunicorn = shutil.which("gunicorn") or "gunicorn"
    cmd = [gunicorn]
    conf = REPO / "deploy" / "gunicorn.conf.py"
    if conf.exists():
        cmd += ["-c", str(conf)]
    else:
        # No production config yet: the equivalent of what it is expected to hold.
        cmd += ["--worker-class", "gthread", "--workers", "2", "--threads", "8", "--keep-alive", "5"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    # Access logging stays as the production config has it: it is part of what a request costs.
    # No control socket: its default path is per user, and parallel runs (tests, demo) would share it.
    cmd += ["--no-control-socket", "--bind", f"{LOOPBACK}:{port}", "volcano_ui.wsgi:application"]
    return cmd


_LISTEN_RE = re.compile(r"Listening at: http://[^:]+:(\d+)")


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (the kernel's pick)."""
    import socket

    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def start_dashboard(
    workdir: Path,
    sim: SimHandle,
    *,
    port: int = 0,
    workers: int | None = None,
    threads: int | None = None,
    extra_env: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> DashHandle:
    """Start gunicorn with DEBUG off against ``sim``'s kubeconfig; return once it listens.

    Readiness of the cache is *not* awaited here (see ``wait_ready``) so that the initial sync time
    can be measured from the moment the process was spawned. The workers' health listener gets a
    free loopback port (``DashHandle.health_port``) unless ``extra_env`` sets VOLCANO_UI_HEALTH_BIND;
    ``extra_env`` overrides any variable set here (e.g. VOLCANO_UI_ACCESS_MODE).
    """
    log_path = workdir / "gunicorn.log"
    cmd = gunicorn_command(port, workers, threads)
    health_port = free_port()
    env = _child_env(
        VOLCANO_UI_DEBUG="false",
        VOLCANO_UI_CLUSTER="kubeconfig",
        VOLCANO_UI_KUBECONFIG=str(sim.kubeconfig),
        VOLCANO_UI_ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SETTINGS_MODULE=SETTINGS,
        VOLCANO_UI_ACCESS_MODE="none",
        VOLCANO_UI_HEALTH_BIND=f"{LOOPBACK}:{health_port}",
        # A history store of the run's own: the default file is one per machine, and a recorder of
        # another run holding its lease would leave this run's recorder on standby.
        VOLCANO_UI_HISTORY_DB=str(workdir / "history.sqlite3"),
    )
    env.update(extra_env or {})
    bind = env["VOLCANO_UI_HEALTH_BIND"].strip()
    health_port = int(bind.rsplit(":", 1)[1]) if bind else 0
    env.pop("KUBECONFIG", None)
    # Production serves hashed static files from a manifest that `collectstatic` writes (the image
    # does it at build time); without it every page using {% static %} fails with DEBUG off.
    env["VOLCANO_UI_STATIC_ROOT"] = str(workdir / "static")
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if collect.returncode != 0:
        raise RuntimeError(f"collectstatic failed:\n{collect.stderr[-2000:]}")
    log("dashboard: " + " ".join(cmd[1:]))
    started = time.monotonic()
    logf = open(log_path, "w")  # noqa: SIM115 - the child owns it until exit
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=logf, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent
    )
    deadline = time.monotonic() + timeout
    actual = None
    while time.monotonic() < deadline and actual is None:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode}:\n{_tail(log_path)}")
        match = _LISTEN_RE.search(log_path.read_text(errors="replace"))
        if match:
            actual = int(match.group(1))
        else:
            time.sleep(0.05)
    if actual is None:
        stop_process(proc)
        raise RuntimeError(f"gunicorn did not listen within {timeout}s:\n{_tail(log_path)}")
    return DashHandle(
        proc=proc,
        host=LOOPBACK,
        port=actual,
        started_at=started,
        command=cmd,
        log_path=log_path,
        health_port=health_port,
    )


def http_get(
    url: str, timeout: float = 10.0, headers: dict[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    """One GET; returns (status, body, headers) and never raises for HTTP error statuses."""
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers or {}), timeout=timeout
        ) as resp:
            return resp.status, resp.read(), dict(resp.headers.items())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers.items())


def wait_ready(dash: DashHandle, timeout: float = 600.0, path: str = "/readyz") -> float:
    """Poll ``path`` until 200 and every worker has answered it; return seconds since spawn.

    With several gunicorn workers each holds its own cache, so one 200 is not enough: each new
    connection may land on another worker, and we wait until as many distinct 200s as there are
    workers came back in a row (a worker that is still syncing answers 503).
    """
    deadline = time.monotonic() + timeout
    workers = max(1, len(dash.worker_pids()))
    streak = 0
    while time.monotonic() < deadline:
        if dash.proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {dash.proc.returncode}:\n{_tail(dash.log_path)}")
        try:
            status, _, _ = http_get(dash.base + path, timeout=5)
        except OSError:
            status = 0
        if status == 200:
            streak += 1
            if streak >= max(3, 3 * workers):
                return time.monotonic() - dash.started_at
            continue
        streak = 0
        time.sleep(0.1)
    raise TimeoutError(f"{path} not ready within {timeout}s")


# --- memory -----------------------------------------------------------------------------------------


@dataclass
class MemorySample:
    rss: int  # bytes, summed over processes (shared pages counted once per process)
    pss: int | None  # bytes, proportional set size summed: a fair total after fork
    per_process: list[tuple[int, int, int]]  # (pid, rss, threads)

    @property
    def threads(self) -> int:
        return sum(t for _, _, t in self.per_process)


def memory(pids: list[int]) -> MemorySample:
    """RSS, PSS and thread counts of ``pids`` via psutil (PSS needs /proc/<pid>/smaps_rollup)."""
    import psutil

    rss = 0
    pss: int | None = 0
    per = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            info = proc.memory_info()
            rss += info.rss
            per.append((pid, info.rss, proc.num_threads()))
            try:
                full = proc.memory_full_info()
                if pss is not None:
                    pss += getattr(full, "pss", 0)
            except (psutil.AccessDenied, AttributeError):
                pss = None
        except psutil.Error:
            continue
    return MemorySample(rss=rss, pss=pss, per_process=per)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000.0, result


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by ``pids`` (processes that ended count as 0)."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.Error:
            continue
    return total


def wsgi_get(app: Callable, path: str, htmx: bool = False) -> tuple[int, bytes]:
    """GET ``path`` from a WSGI ``app`` in this process (what gunicorn calls, without a socket);
    returns (status code, body). For in-process diagnostics: Django's test client adds reference
    cycles and, per request, a ``weakref.finalize`` on the client that lives as long as the client
    (its exception signal receiver), ~500 bytes a request that a long-running diagnostic would
    count as growth (bench/memory_growth.py --census found 30,000 of them in 6 minutes)."""
    path_info, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "localhost",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    if htmx:
        environ["HTTP_HX_REQUEST"] = "true"
    status: list[str] = []
    chunks = app(environ, lambda line, headers, exc_info=None: status.append(line))
    try:
        body = b"".join(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()
    return int(status[0].split(" ", 1)[0]), body
