"""The demo scenario, written for volcano-ui: a small research/production cluster that shows every
state the dashboard renders within about a minute of simulated time.

Timeline (simulated seconds after load; default speed is realtime):
- t=0: namespaces, a queue hierarchy (root -> research, production, batch, legacy, archive; leaves
  below research and production), 10 nodes (4 with 8 GPUs each, one cordoned), a first wave of
  Jobs and a Deployment scheduled by Volcano;
- t=5..55: more Jobs arrive;
- t=20: CloseQueue on ``legacy`` (its Job keeps running, so it stays Closing);
- t=25: AbortJob on research/sweep-abort (Aborting -> Aborted);
- t=30: TerminateJob on platform/backfill-terminate (Terminating -> Terminated);
- t=35: AbortJob, and t=50 ResumeJob, on team-vision/detr-resume (Aborted -> Restarting -> Pending
  -> Running);
- t=10: team-nlp/embed-oom's pod is OOMKilled (exit 137): Failed; research/flaky-simulation's pods
  exit 1 on a Python exception, restarted once (RestartJob); the second RestartJob reaches maxRetry 2:
  Failed;
- t=15..18: RestartJob, TerminateJob, AbortJob and CompleteJob on four Jobs with one pod that hangs in
  Terminating (``sim.volcano-ui/stuck-terminating``), so Restarting, Terminating, Aborting and
  Completing persist for the rest of the demo.

What exists at once from t≈60 s on (``DEMO_SETTLE_SECONDS`` in scenarios.py): Job phases Pending
(gang cannot fit; queue quota; closed queue), Running, Restarting, Aborting, Aborted, Completing,
Completed, Terminating, Terminated, Failed; PodGroup phases Pending, Inqueue (fits the queue but no
node has room for its pod), Running, Completed (a bare pod's); pods Pending (unschedulable),
ContainerCreating, Running, Succeeded, Failed, CrashLoopBackOff, ImagePullBackOff/ErrImagePull,
Terminating; queues Open, Closing, Closed.

Pod behaviour is set with the ``sim.volcano-ui/*`` annotations documented in podlifecycle.py.
"""

from __future__ import annotations

import random

NAMESPACES = ("team-vision", "team-nlp", "research", "platform")

GPU = "nvidia.com/gpu"


def _res(cpu=None, memory=None, gpu=None, pods=None) -> dict:
    out = {}
    if cpu is not None:
        out["cpu"] = str(cpu)
    if memory is not None:
        out["memory"] = memory
    if gpu is not None:
        out[GPU] = str(gpu)
    if pods is not None:
        out["pods"] = str(pods)
    return out


def queues() -> list[dict]:
    """root -> research -> {research-vision, research-nlp}; root -> production -> {prod-training,
    prod-serving}; root -> batch, legacy, archive (Closed). ``default`` and ``root`` come from the
    cluster's bootstrap."""
    specs = [
        ("research", "root", 4, _res(160, "1280Gi", 16), _res(120, "960Gi", 12), _res(40, "320Gi", 4)),
        ("production", "root", 6, _res(256, "2Ti", 32), _res(200, "1600Gi", 20), _res(96, "768Gi", 8)),
        ("research-vision", "research", 2, _res(96, "768Gi", 12), _res(64, "512Gi", 8), _res(16, "128Gi", 2)),
        ("research-nlp", "research", 2, _res(96, "768Gi", 8), _res(56, "448Gi", 4), _res(16, "128Gi", 2)),
        (
            "prod-training",
            "production",
            4,
            _res(192, "1536Gi", 24),
            _res(128, "1Ti", 16),
            _res(64, "512Gi", 6),
        ),
        ("prod-serving", "production", 2, _res(64, "256Gi", 4), _res(48, "192Gi", 4), _res(24, "96Gi", 2)),
        ("batch", "root", 1, _res(8, "32Gi"), _res(8, "32Gi"), _res(4, "16Gi")),
        ("legacy", "root", 1, _res(16, "64Gi"), _res(8, "32Gi"), None),
        ("archive", "root", 1, _res(4, "16Gi"), None, None),
    ]
    out = []
    for name, parent, weight, capability, deserved, guarantee in specs:
        spec: dict = {
            "weight": weight,
            "parent": parent,
            "reclaimable": name != "prod-serving",
            "capability": capability,
        }
        if deserved:
            spec["deserved"] = deserved
        if guarantee:
            spec["guarantee"] = {"resource": guarantee}
        q = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {
                "name": name,
                "labels": {"volcano-ui.demo/tier": parent if parent != "root" else name},
            },
            "spec": spec,
        }
        out.append(q)
    return out


def nodes() -> list[dict]:
    out = []
    for i in range(1, 7):
        out.append(
            _node(
                f"cpu-node-{i:02d}",
                cpu=32,
                memory="128Gi",
                gpus=0,
                zone=f"zone-{'abc'[i % 3]}",
                cordoned=(i == 6),
            )
        )
    for i in range(1, 5):
        out.append(_node(f"gpu-node-{i:02d}", cpu=64, memory="512Gi", gpus=8, zone=f"zone-{'abc'[i % 3]}"))
    return out


def _node(name: str, *, cpu: int, memory: str, gpus: int, zone: str, cordoned: bool = False) -> dict:
    capacity = {"cpu": str(cpu), "memory": memory, "pods": "110", "ephemeral-storage": "500Gi"}
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": "gpu.8xa100" if gpus else "cpu.32x128",
    }
    if gpus:
        capacity[GPU] = str(gpus)
        labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
        labels["nvidia.com/gpu.count"] = str(gpus)
    spec: dict = {"podCIDR": "10.244.0.0/24"}
    if cordoned:
        spec["unschedulable"] = True
        spec["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                },
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure"},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.34.2",
                "containerRuntimeVersion": "containerd://2.1.4",
                "osImage": "Ubuntu 24.04.3 LTS",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        },
    }


def _container(
    name: str,
    image: str,
    *,
    cpu,
    memory: str,
    gpu: int = 0,
    command: list[str] | None = None,
    port: int | None = None,
) -> dict:
    resources: dict = {"requests": {"cpu": str(cpu), "memory": memory}, "limits": {"memory": memory}}
    if gpu:
        resources["requests"][GPU] = str(gpu)
        resources["limits"][GPU] = str(gpu)
    c: dict = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent", "resources": resources}
    if command:
        c["command"] = command
    if port:
        c["ports"] = [{"containerPort": port, "name": f"{name[:9]}-port", "protocol": "TCP"}]
    return c


def _task(
    name: str,
    replicas: int,
    container: dict,
    *,
    restart: str = "OnFailure",
    min_available: int | None = None,
    annotations: dict | None = None,
    policies: list | None = None,
) -> dict:
    task: dict = {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"labels": {"app.kubernetes.io/component": name}},
            "spec": {"restartPolicy": restart, "containers": [container]},
        },
    }
    if annotations:
        task["template"]["metadata"]["annotations"] = annotations
    if min_available is not None:
        task["minAvailable"] = min_available
    if policies:
        task["policies"] = policies
    return task


def _job(
    namespace: str,
    name: str,
    queue: str,
    tasks: list[dict],
    *,
    min_available: int | None = None,
    behaviour: str | None = None,
    duration: float | None = None,
    exit_code: int | None = None,
    plugins: dict | None = None,
    policies: list | None = None,
    max_retry: int | None = None,
    ttl: int | None = None,
    labels: dict | None = None,
    priority: str | None = None,
) -> dict:
    annotations: dict = {}
    if behaviour:
        annotations["sim.volcano-ui/behaviour"] = behaviour
    if duration is not None:
        annotations["sim.volcano-ui/duration"] = str(duration)
    if exit_code is not None:
        annotations["sim.volcano-ui/exit-code"] = str(exit_code)
    spec: dict = {
        "schedulerName": "volcano",
        "queue": queue,
        "minAvailable": min_available
        if min_available is not None
        else sum(t.get("minAvailable", t["replicas"]) for t in tasks),
        "maxRetry": 3 if max_retry is None else max_retry,
        "tasks": tasks,
    }
    if plugins:
        spec["plugins"] = plugins
    if policies:
        spec["policies"] = policies
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    if priority:
        spec["priorityClassName"] = priority
    meta: dict = {
        "name": name,
        "namespace": namespace,
        "labels": {"volcano-ui.demo/team": namespace, **(labels or {})},
    }
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta, "spec": spec}


def pytorch(
    namespace,
    name,
    queue,
    *,
    workers,
    gpus,
    cpu=8,
    memory="64Gi",
    image="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    **kw,
):
    master = _task(
        "master",
        1,
        _container(
            "pytorch",
            image,
            cpu=cpu,
            memory=memory,
            gpu=gpus,
            command=["torchrun", "--nproc_per_node=auto", "train.py"],
            port=23456,
        ),
        policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
    )
    worker = _task(
        "worker",
        workers,
        _container(
            "pytorch",
            image,
            cpu=cpu,
            memory=memory,
            gpu=gpus,
            command=["torchrun", "--nproc_per_node=auto", "train.py"],
            port=23456,
        ),
    )
    return _job(
        namespace,
        name,
        queue,
        [master, worker],
        plugins={"pytorch": ["--master=master", "--worker=worker", "--port=23456"], "svc": []},
        **kw,
    )


def mpi(
    namespace,
    name,
    queue,
    *,
    workers,
    cpu=4,
    memory="8Gi",
    launcher_annotations=None,
    worker_annotations=None,
    **kw,
):
    image = "volcanosh/example-mpi:0.0.3"
    launcher = _task(
        "mpimaster",
        1,
        _container(
            "mpimaster",
            image,
            cpu=1,
            memory="2Gi",
            command=["mpiexec", "--allow-run-as-root", "-np", str(workers), "mpi_hello_world"],
        ),
        policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
        annotations=launcher_annotations,
    )
    worker = _task(
        "mpiworker",
        workers,
        _container("mpiworker", image, cpu=cpu, memory=memory, command=["/usr/sbin/sshd", "-D"], port=22),
        annotations=worker_annotations,
    )
    return _job(namespace, name, queue, [launcher, worker], plugins={"ssh": [], "svc": []}, **kw)


def tensorflow(namespace, name, queue, *, ps=1, workers=2, gpus=0, **kw):
    image = "volcanosh/dist-mnist-tf-example:0.0.1"
    ps_task = _task(
        "ps",
        ps,
        _container("tensorflow", image, cpu=2, memory="4Gi", port=2222),
        restart="Never",
        policies=[{"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"}],
    )
    worker_task = _task(
        "worker",
        workers,
        _container("tensorflow", image, cpu=4, memory="8Gi", gpu=gpus, port=2222),
        restart="Never",
        policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
    )
    return _job(namespace, name, queue, [ps_task, worker_task], plugins={"env": [], "svc": []}, **kw)


def batch(
    namespace,
    name,
    queue,
    *,
    replicas,
    cpu=1,
    memory="2Gi",
    image="busybox:1.36",
    restart="OnFailure",
    min_available=None,
    **kw,
):
    task = _task(
        "main",
        replicas,
        _container("main", image, cpu=cpu, memory=memory, command=["sh", "-c", "run-batch.sh"]),
        restart=restart,
    )
    return _job(namespace, name, queue, [task], min_available=min_available, **kw)


def stuck(namespace: str, name: str, queue: str) -> dict:
    """A running Job whose ``agent`` pod never finishes terminating (a stuck finalizer)."""
    main = _task("main", 2, _container("main", "python:3.12-slim", cpu=1, memory="2Gi"))
    agent = _task(
        "agent",
        1,
        _container("agent", "registry.internal/infra/log-agent:1.4", cpu="250m", memory="256Mi"),
        annotations={"sim.volcano-ui/stuck-terminating": "true"},
    )
    return _job(namespace, name, queue, [main, agent], behaviour="run")


def bare_pod() -> dict:
    """A bare pod scheduled by Volcano: its PodGroup is ``podgroup-<pod uid>`` and ends Completed."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "schema-migration",
            "namespace": "platform",
            "annotations": {
                "scheduling.volcano.sh/queue-name": "prod-training",
                "sim.volcano-ui/duration": "12",
            },
        },
        "spec": {
            "schedulerName": "volcano",
            "restartPolicy": "Never",
            "containers": [
                _container(
                    "migrate", "registry.internal/platform/migrate:2026.11", cpu="500m", memory="512Mi"
                )
            ],
        },
    }


def deployment() -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "inference-gateway",
            "namespace": "platform",
            "labels": {"app": "inference-gateway"},
            "annotations": {"scheduling.volcano.sh/group-min-member": "1"},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "inference-gateway"}},
            "template": {
                "metadata": {
                    "labels": {"app": "inference-gateway"},
                    "annotations": {
                        "scheduling.volcano.sh/queue-name": "prod-serving",
                        "sim.volcano-ui/behaviour": "run",
                    },
                },
                "spec": {
                    "schedulerName": "volcano",
                    "containers": [
                        _container("gateway", "nginx:1.27", cpu="500m", memory="512Mi", port=8080)
                    ],
                },
            },
        },
    }


def initial_jobs() -> list[dict]:
    return [
        # Completes after ~45 s (master's TaskCompleted -> CompleteJob -> Completing -> Completed).
        pytorch(
            "team-vision",
            "resnet50-imagenet",
            "research-vision",
            workers=3,
            gpus=1,
            duration=45,
            labels={"model": "resnet50"},
        ),
        # Runs for the whole demo.
        pytorch("team-vision", "yolo-finetune", "research-vision", workers=2, gpus=2, behaviour="run"),
        # Crash-looping workers (restartPolicy OnFailure keeps the pods Running with restarts).
        batch(
            "team-vision",
            "augment-crashloop",
            "research-vision",
            replicas=3,
            cpu=2,
            behaviour="crashloop",
            duration=5,
        ),
        # The gang can never fit: 8 x 8 GPUs > the cluster's 32 (and research-nlp's 8).
        pytorch("team-nlp", "bert-pretrain-xl", "research-nlp", workers=7, gpus=8, behaviour="run"),
        pytorch(
            "team-nlp",
            "llama-sft",
            "prod-training",
            workers=3,
            gpus=4,
            cpu=16,
            memory="128Gi",
            behaviour="run",
            priority="high-priority",
        ),
        # Image never pulls: ErrImagePull / ImagePullBackOff, job stays Pending.
        batch(
            "team-nlp",
            "tokenizer-build",
            "research-nlp",
            replicas=1,
            image="registry.internal/nlp/tokenizer:v2-rc1",
            behaviour="imagepullbackoff",
        ),
        tensorflow("team-nlp", "mnist-dist", "research-nlp", ps=1, workers=2, duration=30, ttl=600),
        # MPI: launcher finishes after 40 s -> CompleteJob.
        mpi(
            "research",
            "allreduce-bench",
            "research-nlp",
            workers=4,
            launcher_annotations={"sim.volcano-ui/duration": "40"},
            worker_annotations={"sim.volcano-ui/behaviour": "run"},
        ),
        # Fails, restarts twice (PodFailed -> RestartJob), then Failed at maxRetry.
        batch(
            "research",
            "flaky-simulation",
            "research-vision",
            replicas=2,
            cpu=2,
            restart="Never",
            behaviour="fail",
            duration=12,
            policies=[{"event": "PodFailed", "action": "RestartJob"}],
            max_retry=2,
        ),
        # Aborted by a Command at t=25.
        batch("research", "sweep-abort", "research-vision", replicas=2, cpu=2, behaviour="run"),
        # All pods fail, no policy: Failed.
        batch(
            "research",
            "bad-config",
            "research-nlp",
            replicas=2,
            cpu=1,
            restart="Never",
            behaviour="fail",
            duration=8,
        ),
        batch("platform", "nightly-etl", "prod-training", replicas=4, cpu=4, memory="16Gi", duration=20),
        # Terminated by a Command at t=30.
        batch("platform", "backfill-terminate", "prod-training", replicas=2, cpu=2, behaviour="run"),
        # Queue quota: batch has 8 cpu, this gang needs 12.
        batch("platform", "quota-starved", "batch", replicas=3, cpu=4, behaviour="run"),
        # Fits the queue and the cluster's total, but no single node has 96 cpu: Inqueue forever.
        batch("platform", "wide-pod", "prod-training", replicas=1, cpu=96, memory="64Gi", behaviour="run"),
        # In a queue that is Closed: never enqueued.
        batch("platform", "archive-reindex", "archive", replicas=1, cpu=1, behaviour="run"),
        # Keeps the legacy queue Closing after CloseQueue.
        batch("platform", "legacy-report", "legacy", replicas=1, cpu=2, behaviour="run"),
        # Aborted at t=35 then resumed at t=50.
        pytorch("team-vision", "detr-resume", "research-vision", workers=1, gpus=1, behaviour="run"),
        # One pod of each of these hangs in Terminating once deleted, so the killing phases persist.
        stuck("research", "sweep-restart", "research-vision"),
        stuck("platform", "cleanup-terminate", "prod-training"),
        stuck("team-nlp", "eval-abort", "research-nlp"),
        stuck("team-vision", "export-complete", "research-vision"),
        # A gang bigger than minAvailable: 2 of 4 must run; extra replicas wait.
        batch(
            "team-nlp", "elastic-embed", "research-nlp", replicas=4, cpu=8, min_available=2, behaviour="run"
        ),
        # Killed for its memory (exit 137, OOMKilled) after 10 s, no policy: Failed.
        batch(
            "team-nlp",
            "embed-oom",
            "research-nlp",
            replicas=1,
            cpu=1,
            memory="8Gi",
            restart="Never",
            behaviour="fail",
            duration=10,
            exit_code=137,
        ),
    ]


def arrivals(rng: random.Random) -> list[tuple[float, dict]]:
    """Jobs that arrive later, with seeded variety."""
    out: list[tuple[float, dict]] = []
    teams = [
        ("team-vision", "research-vision"),
        ("team-nlp", "research-nlp"),
        ("research", "research-nlp"),
        ("platform", "prod-training"),
    ]
    kinds = ("pytorch", "mpi", "tensorflow", "batch")
    for i in range(16):
        t = 5.0 + i * 3.3
        namespace, queue = teams[i % len(teams)]
        kind = kinds[rng.randrange(len(kinds))]
        duration = rng.choice((15, 25, 35, 60, 90, 240))
        name = f"{kind}-{['exp', 'run', 'trial', 'job'][i % 4]}-{i + 1:02d}"
        if kind == "pytorch":
            job = pytorch(
                namespace,
                name,
                queue,
                workers=rng.randint(1, 3),
                gpus=rng.choice((1, 1, 2)),
                cpu=4,
                memory="32Gi",
                duration=duration,
            )
        elif kind == "mpi":
            job = mpi(
                namespace,
                name,
                queue,
                workers=rng.randint(2, 4),
                launcher_annotations={"sim.volcano-ui/duration": str(duration)},
                worker_annotations={"sim.volcano-ui/behaviour": "run"},
            )
        elif kind == "tensorflow":
            job = tensorflow(namespace, name, queue, workers=rng.randint(1, 3), duration=duration)
        else:
            job = batch(
                namespace,
                name,
                queue,
                replicas=rng.randint(1, 6),
                cpu=rng.choice((1, 2, 4)),
                duration=duration,
                restart=rng.choice(("OnFailure", "Never")),
            )
        out.append((t, job))
    return out


# After the first minute a Job arrives every PERIODIC_SECONDS (short-lived, garbage-collected
# ttlSecondsAfterFinished later), so a long-running demo keeps moving.
PERIODIC_START = 75.0
PERIODIC_SECONDS = 20.0


PERIODIC_MAX_LIVE = 4


def periodic_job(rng: random.Random, n: int) -> dict:
    """A short CPU Job (batch or TensorFlow) for the steady trickle after the first minute."""
    teams = [
        ("team-vision", "research-vision"),
        ("team-nlp", "research-nlp"),
        ("research", "research-nlp"),
        ("platform", "prod-training"),
    ]
    namespace, queue = teams[n % len(teams)]
    duration = rng.choice((20, 40, 60, 90))
    behaviour = rng.choice(("succeed",) * 8 + ("fail",))
    if n % 3 == 0:
        return tensorflow(
            namespace,
            f"periodic-tf-{n:04d}",
            queue,
            workers=rng.randint(1, 2),
            duration=duration,
            behaviour=behaviour,
            ttl=300,
        )
    return batch(
        namespace,
        f"periodic-batch-{n:04d}",
        queue,
        replicas=rng.randint(1, 4),
        cpu=1,
        duration=duration,
        behaviour=behaviour,
        restart="Never",
        ttl=300,
    )


def command(namespace: str, action: str, target_kind: str, name: str, uid: str) -> dict:
    api_version = "scheduling.volcano.sh/v1beta1" if target_kind == "Queue" else "batch.volcano.sh/v1alpha1"
    target = {
        "apiVersion": api_version,
        "kind": target_kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta: dict = {"generateName": f"{name}-{action.lower()}-", "namespace": namespace}
    if target_kind == "Job":
        meta["ownerReferences"] = [dict(target)]
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": meta,
        "action": action,
        "target": target,
    }


COMMANDS = (
    (15.0, "research", "RestartJob", "Job", "sweep-restart"),
    (16.0, "platform", "TerminateJob", "Job", "cleanup-terminate"),
    (17.0, "team-nlp", "AbortJob", "Job", "eval-abort"),
    (18.0, "team-vision", "CompleteJob", "Job", "export-complete"),
    (20.0, "default", "CloseQueue", "Queue", "legacy"),
    (25.0, "research", "AbortJob", "Job", "sweep-abort"),
    (30.0, "platform", "TerminateJob", "Job", "backfill-terminate"),
    (35.0, "team-vision", "AbortJob", "Job", "detr-resume"),
    (50.0, "team-vision", "ResumeJob", "Job", "detr-resume"),
)
