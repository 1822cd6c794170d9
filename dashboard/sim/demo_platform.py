"""The demo's platform side: Volcano's components, an H100 pod with its HyperNode tree, jobs with
network-topology constraints, a JobFlow pipeline and CronJobs (see demo_scenario.py for the rest).

- Nodes ``h100-node-01..06`` (112 cpu, 1Ti, 8 ``nvidia.com/gpu``), tainted ``dedicated=hpc:NoSchedule``
  so only the jobs below (which tolerate it) use them; the demo's other nodes keep their story.
- HyperNodes: tier 1 (``leaf``) ``leaf-h100-a`` (exactMatch h100-node-01/02), ``leaf-h100-b``
  (regexMatch ``^h100-node-0[34]$``), ``leaf-h100-c`` (labelMatch ``rack: h100-c``), ``leaf-a100``
  (labelMatch on the A100 product label), ``leaf-cpu`` (labelMatch on the CPU instance type); tier 2
  (``spine``) ``spine-gpu`` and ``spine-cpu``; tier 3 (``core``) ``core``.
- Queue ``hpc-training`` (64 GPUs) and, in ``ml-platform``: ``moe-rack-local`` (hard, tier 1: runs in one
  leaf), ``llm-spine`` (hard, ``highestTierName: spine``), ``allreduce-one-rack`` (hard, tier 1, three
  workers of 5 GPUs and a 1-GPU launcher: a leaf has two 8-GPU nodes, so it stays Pending with
  "In hyperNode leaf-h100-c: 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu."),
  ``etl-soft-topology`` (soft) and
  ``partitioned-sweep`` (partitions of 2 pods kept within a leaf; its PodGroup has subGroupPolicy).
- JobTemplates ``data-prep``, ``train``, ``evaluate``, ``publish`` and the JobFlow
  ``nightly-pipeline`` (data-prep -> train (patched) -> evaluate -> publish; Running at one minute,
  Succeed after about two), in ``ml-platform``. (The demo stays within one page of 50 Jobs at one
  minute.)
- CronJobs in ``ml-platform``: ``feature-refresh`` (every minute, Europe/Berlin, Forbid, history 2/1;
  created ten minutes before the demo starts, so its first Job comes at once) and
  ``weekly-report`` (Mondays 06:00 Asia/Shanghai, Replace, suspended).
"""

from __future__ import annotations

import copy

from .demo_scenario import GPU, _container, _node, _task, batch

HPC_TAINT = {"key": "dedicated", "value": "hpc", "effect": "NoSchedule"}
HPC_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "hpc", "effect": "NoSchedule"}
NAMESPACE = "ml-platform"
H100_SELECTOR = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def nodes() -> list[dict]:
    out = []
    for i in range(1, 7):
        node = _node(f"h100-node-{i:02d}", cpu=112, memory="1Ti", gpus=8, zone="zone-d")
        labels = node["metadata"]["labels"]
        labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
        labels["node.kubernetes.io/instance-type"] = "gpu.8xh100"
        labels["rack"] = f"h100-{'abc'[(i - 1) // 2]}"
        node["spec"]["taints"] = [dict(HPC_TAINT)]
        out.append(node)
    return out


def _hypernode(name: str, tier: int, tier_name: str, members: list[dict]) -> dict:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {
            "name": name,
            "labels": {"volcano-ui.demo/fabric": "infiniband" if "h100" in name else "ethernet"},
        },
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }


def _nodes_exact(*names: str) -> list[dict]:
    return [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in names]


def _children(*names: str) -> list[dict]:
    return [{"type": "HyperNode", "selector": {"exactMatch": {"name": n}}} for n in names]


def hypernodes() -> list[dict]:
    return [
        _hypernode("leaf-h100-a", 1, "leaf", _nodes_exact("h100-node-01", "h100-node-02")),
        _hypernode(
            "leaf-h100-b",
            1,
            "leaf",
            [{"type": "Node", "selector": {"regexMatch": {"pattern": "^h100-node-0[34]$"}}}],
        ),
        _hypernode(
            "leaf-h100-c",
            1,
            "leaf",
            [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "h100-c"}}}}],
        ),
        _hypernode(
            "leaf-a100",
            1,
            "leaf",
            [
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {"matchLabels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}
                    },
                }
            ],
        ),
        _hypernode(
            "leaf-cpu",
            1,
            "leaf",
            [
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {
                            "matchExpressions": [
                                {
                                    "key": "node.kubernetes.io/instance-type",
                                    "operator": "In",
                                    "values": ["cpu.32x128"],
                                }
                            ]
                        }
                    },
                }
            ],
        ),
        _hypernode(
            "spine-gpu", 2, "spine", _children("leaf-h100-a", "leaf-h100-b", "leaf-h100-c", "leaf-a100")
        ),
        _hypernode("spine-cpu", 2, "spine", _children("leaf-cpu")),
        _hypernode("core", 3, "core", _children("spine-gpu", "spine-cpu")),
    ]


def queues() -> list[dict]:
    return [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "hpc-training", "labels": {"volcano-ui.demo/tier": "hpc-training"}},
            "spec": {
                "weight": 2,
                "parent": "root",
                "reclaimable": False,
                "capability": {"cpu": "672", "memory": "6Ti", GPU: "64"},
                "deserved": {"cpu": "336", "memory": "3Ti", GPU: "32"},
            },
        }
    ]


def on_h100(spec: dict) -> dict:
    """Every task of a JobSpec onto the H100 pool (toleration and node selector), so the demo's
    other nodes keep their story."""
    for task in spec.get("tasks") or []:
        pod = task.setdefault("template", {}).setdefault("spec", {})
        pod["tolerations"] = [dict(HPC_TOLERATION)]
        pod["nodeSelector"] = dict(H100_SELECTOR)
    return spec


def _gpu_job(name: str, pods: int, gpus: int, network: dict, *, cpu: int = 16) -> dict:
    job = batch(NAMESPACE, name, "hpc-training", replicas=pods, cpu=cpu, memory="128Gi", behaviour="run")
    job["metadata"]["labels"]["volcano-ui.demo/topology"] = "constrained"
    spec = job["spec"]
    spec["networkTopology"] = network
    template = spec["tasks"][0]["template"]["spec"]
    template["tolerations"] = [dict(HPC_TOLERATION)]
    template["nodeSelector"] = dict(H100_SELECTOR)
    resources = template["containers"][0]["resources"]
    resources["requests"][GPU] = str(gpus)
    resources["limits"][GPU] = str(gpus)
    template["containers"][0]["image"] = "nvcr.io/nvidia/pytorch:25.10-py3"
    return job


def _allreduce() -> dict:
    job = _gpu_job("allreduce-one-rack", 3, 5, {"mode": "hard", "highestTierAllowed": 1})
    tasks = job["spec"]["tasks"]
    tasks[0]["name"] = "worker"
    launcher = copy.deepcopy(tasks[0])
    launcher.update(name="launcher", replicas=1)
    resources = launcher["template"]["spec"]["containers"][0]["resources"]
    resources["requests"][GPU] = resources["limits"][GPU] = "1"
    tasks.insert(0, launcher)
    job["spec"]["minAvailable"] = 4
    # With the other constrained jobs it holds the H100 pool's 48 GPUs (16 reserved here), so the
    # demo's other GPU jobs see the cluster's free GPUs as without the pool.
    return job


def topology_jobs() -> list[dict]:
    soft = batch(NAMESPACE, "etl-soft-topology", "hpc-training", replicas=2, cpu=2, behaviour="run")
    soft["spec"]["networkTopology"] = {"mode": "soft"}
    partitioned = batch(NAMESPACE, "partitioned-sweep", "hpc-training", replicas=4, cpu=1, behaviour="run")
    partitioned["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 2}
    partitioned["spec"]["tasks"][0]["partitionPolicy"] = {
        "totalPartitions": 2,
        "partitionSize": 2,
        "minPartitions": 2,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    for job in (soft, partitioned):
        on_h100(job["spec"])
    return [
        # Two 8-GPU pods inside one leaf (rack).
        _gpu_job("moe-rack-local", 2, 8, {"mode": "hard", "highestTierAllowed": 1}),
        # Tier named "spine": fits the first leaf with room.
        _gpu_job("llm-spine", 4, 4, {"mode": "hard", "highestTierName": "spine"}, cpu=8),
        # Three workers of 5 GPUs (and a 1-GPU launcher) within one leaf of two 8-GPU nodes: never
        # placeable (Pending).
        _allreduce(),
        soft,
        partitioned,
    ]


# ---------------------------------------------------------------------- JobFlow and JobTemplates
def _template_spec(name: str, *, duration: int, behaviour: str = "succeed", cpu: int = 1) -> dict:
    container = _container(name, f"registry.internal/research/{name}:2026.11", cpu=cpu, memory="2Gi")
    task = _task(
        "main",
        1,
        container,
        restart="Never",
        annotations={"sim.volcano-ui/duration": str(duration), "sim.volcano-ui/behaviour": behaviour},
    )
    spec = {
        "schedulerName": "volcano",
        "queue": "hpc-training",
        "minAvailable": 1,
        "maxRetry": 1,
        "tasks": [task],
    }
    return on_h100(spec)


def job_templates() -> list[dict]:
    specs = {
        "data-prep": _template_spec("data-prep", duration=12),
        "train": _template_spec("train", duration=25, cpu=4),
        "evaluate": _template_spec("evaluate", duration=10),
        "publish": _template_spec("publish", duration=5),
    }
    return [
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {
                "name": name,
                "namespace": NAMESPACE,
                "labels": {"volcano-ui.demo/pipeline": "nightly"},
            },
            "spec": spec,
        }
        for name, spec in specs.items()
    ]


def job_flows() -> list[dict]:
    train_patch = {
        "tasks": [
            {
                "name": "main",
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "train", "env": [{"name": "EPOCHS", "value": "3"}]},
                        ]
                    }
                },
            }
        ]
    }
    return [
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "nightly-pipeline", "namespace": NAMESPACE},
            "spec": {
                "jobRetainPolicy": "retain",
                "flows": [
                    {"name": "data-prep"},
                    {
                        "name": "train",
                        "dependsOn": {"targets": ["data-prep"]},
                        "patch": {"jobSpec": train_patch},
                    },
                    {"name": "evaluate", "dependsOn": {"targets": ["train"]}},
                    {"name": "publish", "dependsOn": {"targets": ["evaluate"]}},
                ],
            },
        },
    ]


# ---------------------------------------------------------------------- CronJobs
def cron_jobs() -> list[dict]:
    refresh = batch(
        NAMESPACE, "feature-refresh", "hpc-training", replicas=1, cpu=1, duration=20, restart="Never"
    )
    report = batch(
        NAMESPACE, "weekly-report", "hpc-training", replicas=1, cpu=1, duration=30, restart="Never"
    )
    out = []
    for job, extra in (
        (
            refresh,
            {
                "schedule": "* * * * *",
                "timeZone": "Europe/Berlin",
                "concurrencyPolicy": "Forbid",
                "startingDeadlineSeconds": 120,
                "successfulJobsHistoryLimit": 2,
                "failedJobsHistoryLimit": 1,
            },
        ),
        (
            report,
            {
                "schedule": "0 6 * * 1",
                "timeZone": "Asia/Shanghai",
                "concurrencyPolicy": "Replace",
                "suspend": True,
            },
        ),
    ):
        md = job["metadata"]
        template_meta = {"labels": {"volcano-ui.demo/cron": md["name"]}}
        if md.get("annotations"):
            template_meta["annotations"] = dict(md["annotations"])
        out.append(
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "CronJob",
                "metadata": {"name": md["name"], "namespace": md["namespace"], "labels": dict(md["labels"])},
                "spec": {
                    **extra,
                    "jobTemplate": {"metadata": template_meta, "spec": on_h100(copy.deepcopy(job["spec"]))},
                },
            }
        )
    return out


# CronJobs that existed before the demo began (seconds): feature-refresh catches up at once.
CRON_AGE_SECONDS = {"feature-refresh": 600}
