"""Container logs of the simulated cluster, generated on demand from a pod's state and times.

Nothing is stored: the lines of one container instance (a pod uid, a container name and its restart
number) are a pure function of the cluster seed, that identity, the instance's start and finish
times and the simulated clock. Line ``i`` of an instance is computed on its own (its time and text
come from a hash of the identity and ``i``), so ``tailLines`` on a container that has run for days
costs only the lines it returns.

An instance's log has three parts: a few start-up lines when it starts, regular progress lines
(one every ``period`` seconds, with jitter below one period, so the count up to a time is
arithmetic), and, for an instance that has finished, closing lines just after ``finishedAt``
(which has whole seconds only): a
summary for exit 0, a Python traceback and the exit status for a failure, nothing after the last
progress line for an OOM kill (the kernel gives the process no chance to write).

What is read follows the kubelet (``validateContainerLogStatus`` in pkg/kubelet/kubelet_pods.go):
``previous`` reads ``lastState.terminated``; otherwise a running or terminated container is read,
and a container waiting to restart after a crash shows its last terminated instance. Errors are the
API server's: 400 for a missing or unknown container name, for a container still waiting to start
and for a missing previous instance.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .store import ApiError

# Seconds between the start of an instance and its first progress line.
_WARMUP = 1.5
# Nanoseconds between consecutive start-up (and closing) lines.
_BURST_NS = 3_000_000


@dataclass(frozen=True)
class Instance:
    """One run of one container: what its log is generated from. Times are POSIX seconds."""

    seed: int
    namespace: str
    pod: str
    uid: str
    container: str
    image: str
    command: str
    task: str
    index: int
    restart: int
    started: float
    finished: float | None
    exit_code: int | None
    reason: str

    @property
    def key(self) -> str:
        return f"{self.seed}/{self.uid}/{self.container}/{self.restart}"


@dataclass(frozen=True)
class Line:
    """One log line: ``at`` is POSIX nanoseconds, ``text`` has no newline."""

    at: int
    text: str

    def render(self, timestamps: bool) -> str:
        if not timestamps:
            return self.text + "\n"
        return f"{format_ns(self.at)} {self.text}\n"


def format_ns(at: int) -> str:
    """POSIX nanoseconds as the kubelet stamps log lines (RFC 3339, nine fraction digits, "Z")."""
    seconds, nanos = divmod(at, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


def _parse(stamp: Any) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _fractions(key: str, n: int) -> tuple[float, ...]:
    """``n`` (<= 8) deterministic floats in [0, 1) for ``key``."""
    digest = hashlib.blake2b(key.encode(), digest_size=8 * n).digest()
    return tuple(v / 2**64 for v in struct.unpack(f">{n}Q", digest))


# ---------------------------------------------------------------------------------- selection
def select(pod: dict[str, Any], container: str | None, previous: bool, seed: int) -> Instance | None:
    """The instance a log request reads, or None when the pod has no node yet (an empty log).

    Raises ApiError 400 with the API server's messages for a missing or unknown container name,
    a container waiting to start, or no previous instance.
    """
    md = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    name = md.get("name", "")
    containers = [c for c in spec.get("containers") or [] if c.get("name")]
    inits = [c for c in spec.get("initContainers") or [] if c.get("name")]
    names = [c["name"] for c in containers]
    if not container:
        if len(containers) == 1 and not inits:
            container = names[0]
        else:
            message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
            if inits:
                message += f" or one of the init containers: [{' '.join(c['name'] for c in inits)}]"
            raise ApiError(400, "BadRequest", message)
    spec_container = next((c for c in [*containers, *inits] if c["name"] == container), None)
    if spec_container is None:
        raise ApiError(400, "BadRequest", f"container {container} is not valid for pod {name}")
    if not spec.get("nodeName"):
        return None
    status = pod.get("status") or {}
    statuses = [*(status.get("containerStatuses") or []), *(status.get("initContainerStatuses") or [])]
    cs = next((s for s in statuses if s.get("name") == container), None)
    if cs is None:
        raise ApiError(400, "BadRequest", f'container "{container}" in pod "{name}" is waiting to start')
    restarts = int(cs.get("restartCount") or 0)
    state = cs.get("state") or {}
    last = (cs.get("lastState") or {}).get("terminated")

    def make(term: dict[str, Any] | None, started: Any, restart: int) -> Instance:
        labels = md.get("labels") or {}
        annotations = md.get("annotations") or {}
        task = str(annotations.get("volcano.sh/task-spec") or labels.get("volcano.sh/task-spec") or "")
        try:
            index = int(annotations.get("volcano.sh/task-index") or labels.get("volcano.sh/task-index") or 0)
        except ValueError:
            index = 0
        start = _parse(started) or _parse(status.get("startTime")) or 0.0
        return Instance(
            seed=seed,
            namespace=str(md.get("namespace") or ""),
            pod=str(name),
            uid=str(md.get("uid") or name),
            container=container,
            image=str(spec_container.get("image") or ""),
            command=" ".join(str(a) for a in [*(spec_container.get("command") or [])]),
            task=task,
            index=index,
            restart=max(0, restart),
            started=start,
            finished=_parse(term.get("finishedAt")) if term else None,
            exit_code=int(term.get("exitCode") or 0) if term else None,
            reason=str(term.get("reason") or "") if term else "",
        )

    if previous:
        if not last:
            raise ApiError(
                400, "BadRequest", f'previous terminated container "{container}" in pod "{name}" not found'
            )
        return make(last, last.get("startedAt"), restarts - 1)
    if state.get("running"):
        return make(None, state["running"].get("startedAt"), restarts)
    if state.get("terminated"):
        term = state["terminated"]
        return make(term, term.get("startedAt"), restarts)
    if last:
        return make(last, last.get("startedAt"), restarts - 1)
    reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
    what = {
        "ErrImagePull": "image can't be pulled",
        "ImagePullBackOff": "trying and failing to pull image",
    }.get(reason, reason)
    raise ApiError(400, "BadRequest", f'container "{container}" in pod "{name}" is waiting to start: {what}')


def same_run(a: Instance, b: Instance) -> bool:
    return a.uid == b.uid and a.container == b.container and a.restart == b.restart


# ---------------------------------------------------------------------------------- workloads
def flavour(inst: Instance) -> str:
    """Which kind of program the container runs, from its image, command and task name."""
    image, command, task = inst.image.lower(), inst.command.lower(), inst.task.lower()
    if "pytorch" in image or "torchrun" in command:
        return "pytorch"
    if "sshd" in command:
        return "sshd"
    if command.startswith(("mpiexec", "mpirun")) or inst.container == "mpimaster":
        return "mpi"
    if "tf" in image or "tensorflow" in image:
        return "tf-ps" if task == "ps" else "tf-worker"
    if "agent" in image:
        return "agent"
    return "batch"


# Seconds between progress lines, per flavour.
_PERIOD = {
    "pytorch": 3.0,
    "mpi": 2.0,
    "sshd": 45.0,
    "tf-ps": 30.0,
    "tf-worker": 2.5,
    "agent": 10.0,
    "batch": 1.5,
}


def _startup(inst: Instance, kind: str) -> list[str]:
    r = _fractions(inst.key + "/startup", 4)
    world = 1 + int(r[0] * 8)
    if kind == "pytorch":
        return [
            f"INFO:torch.distributed.run:Using nproc_per_node={world}.",
            f"[rank{inst.index}] Initializing process group: backend=nccl, world_size={world}, "
            f"master_addr={inst.pod.rsplit('-', 2)[0]}-master-0, master_port=23456",
            f"[rank{inst.index}] Loaded dataset: {int(1_000_000 + r[1] * 280_000)} training images, "
            f"{int(40_000 + r[2] * 10_000)} validation images",
            f"[rank{inst.index}] Model: resnet50, parameters: 25.6M, "
            f"batch_size={32 << int(r[3] * 3)}, lr=1e-03",
        ]
    if kind == "mpi":
        return [
            f"+ mpiexec --allow-run-as-root -np {world} mpi_hello_world",
            *(
                f"Hello world from processor worker-{i}, rank {i} out of {world} processors"
                for i in range(world)
            ),
        ]
    if kind == "sshd":
        return ["Server listening on 0.0.0.0 port 22.", "Server listening on :: port 22."]
    if kind == "tf-ps":
        return [
            f"Started server with target: grpc://localhost:2222 (task ps:{inst.index})",
            "Waiting for workers to connect...",
        ]
    if kind == "tf-worker":
        return [
            f"Started server with target: grpc://localhost:2222 (task worker:{inst.index})",
            "Extracting /tmp/mnist-data/train-images-idx3-ubyte.gz",
            "Extracting /tmp/mnist-data/train-labels-idx1-ubyte.gz",
            f"Worker {inst.index}: Session initialization complete.",
        ]
    if kind == "agent":
        return ["log-agent 1.4 starting", "tailing /var/log/containers/*.log"]
    return [
        f"+ {inst.command or 'run-batch.sh'}",
        f"run-batch.sh: job {inst.pod} (shard {inst.index}) starting",
        f"loading input: s3://batch-inputs/{inst.namespace}/{inst.pod.rsplit('-', 2)[0]}/"
        f"part-{inst.index:05d}",
    ]


def _progress(inst: Instance, kind: str, i: int) -> str:
    r = _fractions(f"{inst.key}/{i}", 3)
    step = (i + 1) * 10
    if kind == "pytorch":
        loss = 2.4 * math.exp(-i / 400) + 0.15 + (r[0] - 0.5) * 0.05
        mem = _memory(inst, i, 14.0)
        return (
            f"[rank{inst.index}] epoch {i // 500} step {step} loss={loss:.4f} lr=1.0e-03 "
            f"throughput={780 + r[1] * 90:.1f} img/s gpu_mem={mem:.1f}GiB"
        )
    if kind == "mpi":
        return (
            f"[allreduce] iteration {i + 1}: 256 MiB in {0.7 + r[0] * 0.3:.3f} s "
            f"(bus bandwidth {10 + r[1] * 4:.2f} GB/s)"
        )
    if kind == "sshd":
        peer = f"10.244.{int(r[0] * 255)}.{int(r[1] * 250) + 2}"
        return f"Accepted publickey for root from {peer} port {32768 + int(r[2] * 28000)} ssh2"
    if kind == "tf-ps":
        return f"ps {inst.index}: served {int(1000 + r[0] * 400) * (i + 1)} variable updates"
    if kind == "tf-worker":
        loss = 2.3 * math.exp(-i / 120) + 0.05 + (r[0] - 0.5) * 0.03
        accuracy = min(0.995, 1 - loss / 2.5)
        return f"step {step}, loss = {loss:.4f}, accuracy = {accuracy:.4f} ({0.2 + r[1] * 0.1:.3f} sec/step)"
    if kind == "agent":
        return f"flushed {int(50 + r[0] * 200)} records to sink (buffer {int(r[1] * 100)}%)"
    mem = _memory(inst, i, 1.5)
    return (
        f"processed chunk {i + 1}: {int(4000 + r[0] * 900)} records ok, {int(r[1] * 3)} skipped "
        f"(rss {mem:.2f} GiB)"
    )


def _memory(inst: Instance, i: int, base: float) -> float:
    """Memory use after ``i`` progress lines: flat, except in an instance that ends OOM-killed, whose
    use climbs towards its end."""
    if inst.reason != "OOMKilled" or inst.finished is None:
        return base
    total = max(1, _progress_count(inst, inst.finished))
    return base * (1 + 0.9 * ((i + 1) / total) ** 2)


_TRACEBACKS = (
    (
        "simulate.py",
        "solve",
        'raise RuntimeError(f"solver diverged at t={t:.3f}: residual {r:.2e} > tolerance 1e-06")',
        "RuntimeError: solver diverged at t={a:.3f}: residual {b:.2e} > tolerance 1e-06",
    ),
    (
        "io.py",
        "read_shard",
        "with open(path, 'rb') as fh:",
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/shards/part-{n:05d}.parquet'",
    ),
    (
        "config.py",
        "load",
        'return cfg["solver"]["tolerance"]',
        "KeyError: 'tolerance'",
    ),
    (
        "train.py",
        "all_reduce",
        "dist.all_reduce(tensor)",
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
        "remote process exited or there was a network error, NCCL version 2.21.5",
    ),
)


def _closing(inst: Instance, kind: str) -> list[str]:
    if inst.finished is None or inst.reason == "OOMKilled":
        return []
    code = inst.exit_code or 0
    if code == 0:
        if kind == "pytorch":
            return [
                f"[rank{inst.index}] Training finished: best val acc 0.7612",
                f"[rank{inst.index}] saved checkpoint",
            ]
        if kind in ("sshd", "agent", "tf-ps"):
            return ["Received signal 15; terminating."]
        if kind == "mpi":
            return ["[allreduce] all iterations complete", "mpiexec: all ranks exited with status 0"]
        if kind == "tf-worker":
            return [f"Worker {inst.index}: training complete, final accuracy 0.9912", "Done."]
        return ["run-batch.sh: all chunks processed, 0 errors", "run-batch.sh: done"]
    if code in (137, 143) and kind in ("sshd", "agent", "tf-ps"):
        return ["Received signal 15; terminating."]
    r = _fractions(inst.key + "/crash", 4)
    options = _TRACEBACKS[3:] if kind == "pytorch" else _TRACEBACKS[:3]
    module, func, source, error = options[int(r[0] * len(options))]
    program = "train.py" if kind == "pytorch" else "run_batch.py"
    lines = [
        "Traceback (most recent call last):",
        f'  File "/app/{program}", line {80 + int(r[1] * 40)}, in <module>',
        "    main()",
        f'  File "/app/{program}", line {40 + int(r[2] * 30)}, in main',
        f"    result = {func}(args)",
        f'  File "/app/{module}", line {100 + int(r[3] * 200)}, in {func}',
        f"    {source}",
        error.format(a=r[1] * 100, b=1e-3 + r[2], n=inst.index),
    ]
    if kind == "pytorch":
        lines.append(
            f"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {code}) "
            f"local_rank: 0 (pid: {100 + int(r[1] * 900)}) of binary: /opt/conda/bin/python"
        )
    else:
        lines.append(f"run-batch.sh: {program} exited with status {code}")
    return lines


# ---------------------------------------------------------------------------------- timing
def _ns(seconds: float) -> int:
    return int(round(seconds * 1_000_000_000))


def _progress_base(inst: Instance) -> float:
    return inst.started + _WARMUP


def _progress_time(inst: Instance, period: float, i: int) -> float:
    return _progress_base(inst) + (i + _fractions(f"{inst.key}/t{i}", 1)[0] * 0.8) * period


def _progress_count(inst: Instance, until: float) -> int:
    """How many progress lines are at or before ``until`` (POSIX seconds)."""
    period = _PERIOD[flavour(inst)]
    if until < _progress_base(inst):
        return 0
    n = int((until - _progress_base(inst)) // period) + 1
    while n > 0 and _progress_time(inst, period, n - 1) > until:
        n -= 1
    return n


def lines(inst: Instance, now: float) -> Iterator[Line]:
    """Every line of ``inst`` written by ``now`` (POSIX seconds), oldest first."""
    yield from lines_between(inst, None, now)


def lines_between(
    inst: Instance, after_ns: int | None, now: float, tail: int | None = None
) -> Iterator[Line]:
    """The lines written by ``now`` with a time after ``after_ns`` (None: from the start), oldest
    first; ``tail`` keeps only the last ``tail`` of them (computed without generating the others)."""
    kind = flavour(inst)
    period = _PERIOD[kind]
    # A finished instance's log is complete whatever the clock says; finishedAt has whole seconds,
    # so the closing lines go within the second after it.
    end = now if inst.finished is None else inst.finished
    start_ns = _ns(inst.started)
    head = [Line(start_ns + 100_000_000 + j * _BURST_NS, t) for j, t in enumerate(_startup(inst, kind))]
    head = [ln for ln in head if ln.at <= _ns(end)]
    count = _progress_count(inst, end)
    closing: list[Line] = []
    if inst.finished is not None:
        close_ns = _ns(inst.finished) + 500_000_000
        closing = [Line(close_ns + j * _BURST_NS, t) for j, t in enumerate(_closing(inst, kind))]

    def keep(ln: Line) -> bool:
        return after_ns is None or ln.at > after_ns

    first = 0
    if after_ns is not None:
        # Progress lines are in time order: skip those at or before after_ns arithmetically.
        first = min(count, max(0, _progress_count(inst, after_ns / 1e9) - 1))
    head = [ln for ln in head if keep(ln)]
    closing = [ln for ln in closing if keep(ln)]
    if tail is not None:
        tail = max(0, tail)
        take_closing = closing[len(closing) - min(len(closing), tail) :]
        room = tail - len(take_closing)
        first = max(first, count - room)
        room -= count - first
        take_head = head[len(head) - min(len(head), max(0, room)) :] if room > 0 else []
        head, closing = take_head, take_closing
    yield from head
    for i in range(first, count):
        ln = Line(_ns(_progress_time(inst, period, i)), _progress(inst, kind, i))
        if keep(ln):
            yield ln
    yield from closing
