"""The Volcano components as a cluster runs them: Deployments in ``volcano-system`` (the names of
Volcano's helm chart and installer/volcano-development.yaml), and the fault that breaks them.

``deployments()`` gives the three Deployments (``volcano-scheduler``, ``volcano-controllers``,
``volcano-admission``, label ``app: <name>``); with the controllers on, the simulated Deployment
and ReplicaSet controllers run their pods like any other workload.

``set_down(cluster, names)`` (the ``components_down`` fault switch) makes exactly those components
unready: their pods crash-loop (container waiting ``CrashLoopBackOff``, last state terminated
``Error`` exit 1, Ready/ContainersReady False ``ContainersNotReady``) and their Deployment reports
``Available=False`` (``MinimumReplicasUnavailable``); the others recover (Running, Ready). While
``volcano-scheduler`` is down no scheduler session runs (no PodGroup condition, no scheduler event:
the silence a dashboard measures); while ``volcano-controllers`` is down the job, queue, CronJob,
JobFlow and hypernode controllers and Command handling pause.
"""

from __future__ import annotations

from collections.abc import Iterable

from .kinds import kind_by_name
from .store import ApiError

NAMESPACE = "volcano-system"
VERSION = "v1.15.1"
COMPONENTS = {
    "volcano-scheduler": ("vc-scheduler", ["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]),
    "volcano-controllers": ("vc-controller-manager", ["--enable-healthz=true", "--leader-elect=true"]),
    "volcano-admission": ("vc-webhook-manager", ["--port=8443", "--webhook-namespace=volcano-system"]),
}
DEPLOYMENT = kind_by_name("Deployment", "apps")
POD = kind_by_name("Pod", "")
NS = kind_by_name("Namespace", "")
CRASH_MESSAGE = "back-off 5m0s restarting failed container={container} pod={pod}"


def deployments() -> list[dict]:
    out = []
    for name, (image, args) in COMPONENTS.items():
        labels = {"app": name}
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels, "annotations": {"sim.volcano-ui/behaviour": "run"}},
                        "spec": {
                            "serviceAccountName": name,
                            "priorityClassName": "system-cluster-critical",
                            "containers": [
                                {
                                    "name": name,
                                    "image": f"docker.io/volcanosh/{image}:{VERSION}",
                                    "args": list(args),
                                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                }
                            ],
                        },
                    },
                },
            }
        )
    return out


def install(store) -> int:
    """Create ``volcano-system`` and the component Deployments (existing ones are kept)."""
    created = 0
    if store.try_get(NS, None, NAMESPACE) is None:
        store.create(NS, {"metadata": {"name": NAMESPACE}})
    for dep in deployments():
        if store.try_get(DEPLOYMENT, NAMESPACE, dep["metadata"]["name"]) is None:
            store.create(DEPLOYMENT, dep, NAMESPACE)
            created += 1
    return created


def check_names(names: Iterable[str]) -> set[str]:
    """The names as a set; ValueError naming an unknown component."""
    out = set(names)
    unknown = sorted(out - set(COMPONENTS))
    if unknown:
        raise ValueError(f"unknown Volcano components {unknown}: use {sorted(COMPONENTS)}")
    return out


def set_down(cluster, names: Iterable[str]) -> None:
    """Make exactly ``names`` (component Deployment names) unready, the others ready."""
    down = check_names(names)
    controllers = getattr(cluster, "controllers", None)
    if controllers is not None:
        controllers.components_down = set(down)
    store = cluster.store
    stamp = cluster.clock.rfc3339()
    for name in COMPONENTS:
        is_down = name in down
        pods, _ = store.list(POD, NAMESPACE, label_selector=f"app={name}")
        for pod in pods:
            if not (pod.get("spec") or {}).get("nodeName"):
                continue
            try:
                store.mutate(
                    POD, NAMESPACE, pod["metadata"]["name"], lambda o, d=is_down: _pod_state(o, d, stamp)
                )
            except ApiError:
                continue
        try:
            store.mutate(DEPLOYMENT, NAMESPACE, name, lambda o, d=is_down: _deployment_state(o, d, stamp))
        except ApiError:
            continue


def _pod_state(pod: dict, down: bool, stamp: str) -> None:
    status = pod.setdefault("status", {})
    crashing = any(
        ((cs.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff"
        for cs in status.get("containerStatuses") or []
    )
    if down == crashing:
        return
    statuses = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        old: dict = next(
            (cs for cs in status.get("containerStatuses") or [] if cs.get("name") == container["name"]), {}
        )
        cs = {
            "name": container["name"],
            "image": container.get("image", ""),
            "imageID": old.get("imageID", ""),
            "containerID": old.get("containerID", ""),
            "restartCount": int(old.get("restartCount") or 0),
        }
        if down:
            cs["restartCount"] += 1
            cs.update(
                ready=False,
                started=False,
                state={
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": CRASH_MESSAGE.format(
                            container=container["name"], pod=f"{pod['metadata']['name']}_{NAMESPACE}"
                        ),
                    }
                },
                lastState={
                    "terminated": {"exitCode": 1, "reason": "Error", "startedAt": stamp, "finishedAt": stamp}
                },
            )
        else:
            cs.update(ready=True, started=True, state={"running": {"startedAt": stamp}})
            if old.get("lastState"):
                cs["lastState"] = old["lastState"]
        statuses.append(cs)
    status["containerStatuses"] = statuses
    status["phase"] = "Running"
    names = ",".join(c["name"] for c in statuses)
    conds = [c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "ContainersReady")]
    for type_ in ("Ready", "ContainersReady"):
        cond = {"type": type_, "status": "False" if down else "True", "lastTransitionTime": stamp}
        if down:
            cond.update(reason="ContainersNotReady", message=f"containers with unready status: [{names}]")
        conds.append(cond)
    status["conditions"] = conds


def _deployment_state(dep: dict, down: bool, stamp: str) -> None:
    replicas = int((dep.get("spec") or {}).get("replicas") or 1)
    old = dep.get("status") or {}
    status: dict = {
        "observedGeneration": dep["metadata"].get("generation", 1),
        "replicas": replicas,
        "updatedReplicas": replicas,
    }
    if down:
        status["unavailableReplicas"] = replicas
    else:
        status["readyReplicas"] = status["availableReplicas"] = replicas
    conds = {c.get("type"): c for c in old.get("conditions") or []}
    value = "False" if down else "True"
    available = {
        "type": "Available",
        "status": value,
        "reason": "MinimumReplicasUnavailable" if down else "MinimumReplicasAvailable",
        "message": "Deployment does not have minimum availability."
        if down
        else "Deployment has minimum availability.",
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp
        if (conds.get("Available") or {}).get("status") != value
        else conds["Available"].get("lastTransitionTime", stamp),
    }
    rest = [c for t, c in conds.items() if t != "Available"]
    status["conditions"] = [available, *rest]
    dep["status"] = status
