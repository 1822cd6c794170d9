"""Non-Volcano workloads scheduled by Volcano: Deployment -> ReplicaSet -> pods, and Volcano's
PodGroup controller for such pods (volcano-sh/volcano pkg/controllers/podgroup).

- A Deployment gets one ReplicaSet ``<deployment>-<pod-template-hash>``; a ReplicaSet keeps
  ``spec.replicas`` pods ``<replicaset>-<5 chars>``; both get ``status`` counters.
- A pod with ``schedulerName`` volcano, no ``scheduling.k8s.io/group-name`` annotation and no Volcano
  Job owner gets a PodGroup ``podgroup-<owner uid>`` (or ``podgroup-<pod uid>`` for a bare pod) with
  phase ``Pending``, the pod's ownerReferences, queue from the pod annotation
  ``scheduling.volcano.sh/queue-name``, minMember from the owner annotation
  ``scheduling.volcano.sh/group-min-member`` (default 1) and minResources from the pod; the pod is then
  annotated with the group name.

Deployments and ReplicaSets are only simulated when the store serves the ``apps`` kinds.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from . import resources as R
from .controllers import DEPLOYMENT, GROUP_NAME_ANNOTATION, POD, REPLICASET, controller_ref, owner_reference
from .kinds import kind_for_api_version
from .store import ApiError

_ALNUM = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict) -> str:
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_ALNUM[b % len(_ALNUM)] for b in digest[:10])


def _upper_kind(ref: dict | None):
    """The served kind of a pod's controller owner whose annotations Volcano's PodGroup controller
    reads (ReplicaSet, StatefulSet, DaemonSet, batch/v1 Job: ``inheritUpperAnnotations`` in
    pkg/controllers/podgroup), or None."""
    if not ref or ref.get("kind") not in ("ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
        return None
    api_version = str(ref.get("apiVersion") or "")
    if not api_version.startswith(("apps/", "batch/")):
        return None
    return kind_for_api_version(api_version, ref["kind"])


class WorkloadControllers:
    def __init__(self, controllers) -> None:
        self.c = controllers

    def sync(self) -> None:
        c = self.c
        dirty, c.dirty_workloads = c.dirty_workloads, {}
        handlers = {
            "Deployment": self._deployment,
            "ReplicaSet": self._replicaset,
            "Pod": self._podgroup_for_pod,
        }
        for kind, namespace, name in dirty:
            if (kind == "Deployment" and DEPLOYMENT is None) or (kind == "ReplicaSet" and REPLICASET is None):
                continue
            c.guard(f"{kind} {namespace}/{name}", handlers[kind], namespace, name)

    # ------------------------------------------------------------------ Deployment
    def _deployment(self, namespace: str, name: str) -> None:
        c = self.c
        try:
            dep = c.store.get(DEPLOYMENT, namespace, name)
        except ApiError:
            return
        if dep["metadata"].get("deletionTimestamp"):
            return
        spec = dep.get("spec") or {}
        template = spec.get("template") or {}
        rs_name = f"{name}-{template_hash(template)}"
        replicas = spec.get("replicas")
        replicas = int(replicas if replicas is not None else 1)
        try:
            rs = c.store.get(REPLICASET, namespace, rs_name)
        except ApiError:
            tmpl = json.loads(json.dumps(template))
            pth = rs_name.rsplit("-", 1)[1]
            tmpl.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = pth
            selector = json.loads(json.dumps(spec.get("selector") or {}))
            selector.setdefault("matchLabels", {})["pod-template-hash"] = pth
            rs_meta = {
                "name": rs_name,
                "namespace": namespace,
                "labels": dict(tmpl["metadata"]["labels"]),
                "annotations": {
                    k: v
                    for k, v in (dep["metadata"].get("annotations") or {}).items()
                    if k.startswith(("volcano.sh/", "scheduling.volcano.sh/"))
                },
                "ownerReferences": [owner_reference(dep)],
            }
            rs = c.create(
                "ReplicaSet",
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "metadata": rs_meta,
                    "spec": {"replicas": replicas, "selector": selector, "template": tmpl},
                },
                namespace,
            )
        if (rs.get("spec") or {}).get("replicas") != replicas:
            rs = c.write(
                "ReplicaSet",
                namespace,
                rs_name,
                lambda obj: obj.setdefault("spec", {}).__setitem__("replicas", replicas),
            )
            c.dirty_workloads[("ReplicaSet", namespace, rs_name)] = None
        rs_status = rs.get("status") or {}
        ready = int(rs_status.get("readyReplicas") or 0)
        stamp = c.stamp()
        status = {
            "observedGeneration": dep["metadata"].get("generation", 1),
            "replicas": int(rs_status.get("replicas") or 0),
            "updatedReplicas": int(rs_status.get("replicas") or 0),
        }
        if ready:
            status["readyReplicas"] = ready
            status["availableReplicas"] = ready
        if int(rs_status.get("replicas") or 0) - ready > 0:
            status["unavailableReplicas"] = int(rs_status.get("replicas") or 0) - ready
        old = dep.get("status") or {}
        conds = {cond.get("type"): cond for cond in old.get("conditions") or []}
        available = "True" if ready >= replicas else "False"
        for type_, value, reason, message in (
            (
                "Available",
                available,
                "MinimumReplicasAvailable" if available == "True" else "MinimumReplicasUnavailable",
                "Deployment has minimum availability."
                if available == "True"
                else "Deployment does not have minimum availability.",
            ),
            (
                "Progressing",
                "True",
                "NewReplicaSetAvailable" if available == "True" else "ReplicaSetUpdated",
                f'ReplicaSet "{rs_name}" has successfully progressed.'
                if available == "True"
                else f'ReplicaSet "{rs_name}" is progressing.',
            ),
        ):
            prev = conds.get(type_) or {}
            conds[type_] = {
                "type": type_,
                "status": value,
                "reason": reason,
                "message": message,
                "lastUpdateTime": stamp
                if prev.get("reason") != reason
                else prev.get("lastUpdateTime", stamp),
                "lastTransitionTime": stamp
                if prev.get("status") != value
                else prev.get("lastTransitionTime", stamp),
            }
        status["conditions"] = [conds["Available"], conds["Progressing"]]
        if status != old:
            c.write("Deployment", namespace, name, lambda obj: obj.__setitem__("status", status))

    # ------------------------------------------------------------------ ReplicaSet
    def _replicaset(self, namespace: str, name: str) -> None:
        c = self.c
        try:
            rs = c.store.get(REPLICASET, namespace, name)
        except ApiError:
            return
        if rs["metadata"].get("deletionTimestamp"):
            return
        spec = rs.get("spec") or {}
        replicas = spec.get("replicas")
        replicas = int(replicas if replicas is not None else 1)
        pods = [
            p for p in c.owned_pods(rs["metadata"]["uid"]) if not p.deleting and p.phase not in ("Failed",)
        ]
        rng = c.pod_rng(namespace, name, f"pods-{len(c.owned_pods(rs['metadata']['uid']))}-{c.ticks}")
        template = spec.get("template") or {}
        for _ in range(replicas - len(pods)):
            suffix = "".join(rng.choice(_ALNUM) for _ in range(5))
            meta = json.loads(json.dumps(template.get("metadata") or {}))
            meta.pop("name", None)
            meta.update(
                {"name": f"{name}-{suffix}", "namespace": namespace, "ownerReferences": [owner_reference(rs)]}
            )
            pod_spec = json.loads(json.dumps(template.get("spec") or {}))
            pod_spec.setdefault("restartPolicy", "Always")
            pod_spec.setdefault("schedulerName", "default-scheduler")
            try:
                c.create(
                    "Pod",
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": meta,
                        "spec": pod_spec,
                        "status": {"phase": "Pending"},
                    },
                    namespace,
                )
            except ApiError:
                continue
        for pod in pods[replicas:] if len(pods) > replicas else []:
            c.kubelet.terminate(pod, out_of_sync=False)
        pods = [p for p in c.owned_pods(rs["metadata"]["uid"]) if not p.deleting]
        ready = 0
        for pod in pods:
            if pod.phase == "Running" and pod.ready:
                ready += 1
        status = {
            "replicas": len(pods),
            "observedGeneration": rs["metadata"].get("generation", 1),
            "fullyLabeledReplicas": len(pods),
        }
        if ready:
            status["readyReplicas"] = ready
            status["availableReplicas"] = ready
        if status != (rs.get("status") or {}):
            c.write("ReplicaSet", namespace, name, lambda obj: obj.__setitem__("status", status))
            ref = controller_ref(rs)
            if ref is not None and ref.get("kind") == "Deployment":
                c.dirty_workloads[("Deployment", namespace, ref.get("name", ""))] = None

    # ------------------------------------------------------------------ PodGroup for plain pods
    def _podgroup_for_pod(self, namespace: str, name: str) -> None:
        c = self.c
        try:
            pod = c.store.get(POD, namespace, name)
        except ApiError:
            return
        md = pod["metadata"]
        annotations = md.get("annotations") or {}
        if annotations.get(GROUP_NAME_ANNOTATION) or md.get("deletionTimestamp"):
            return
        ref = controller_ref(pod)
        if (
            ref is not None
            and ref.get("kind") == "Job"
            and ref.get("apiVersion", "").startswith("batch.volcano.sh")
        ):
            return
        owner_uid = ref.get("uid") if ref else md["uid"]
        pg_name = f"podgroup-{owner_uid}"
        min_member = 1
        owner_annotations: dict = {}
        owner_kind = _upper_kind(ref)
        if owner_kind is not None and ref is not None:
            try:
                owner = c.store.get(owner_kind, namespace, ref.get("name", ""))
                owner_annotations = owner["metadata"].get("annotations") or {}
            except ApiError:
                pass
        try:
            min_member = int(owner_annotations.get("scheduling.volcano.sh/group-min-member", 1))
        except ValueError:
            min_member = 1
        if (namespace, pg_name) not in c.podgroups:
            spec = pod.get("spec") or {}
            requests = R.pod_requests(spec)
            usage = R.quota_usage(requests, R.pod_limits(spec))
            for key in list(usage):
                usage[key] = usage[key] * min_member
            pg_meta: dict[str, Any] = {
                "name": pg_name,
                "namespace": namespace,
                "ownerReferences": [dict(r) for r in md.get("ownerReferences") or []]
                or [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": name,
                        "uid": md["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            }
            inherited = {k: v for k, v in owner_annotations.items() if k.startswith("volcano.sh/")}
            if inherited:
                pg_meta["annotations"] = inherited
            pg_spec = {
                "minMember": min_member,
                "queue": annotations.get("scheduling.volcano.sh/queue-name") or "default",
                "minResources": R.format_list(usage),
            }
            if spec.get("priorityClassName"):
                pg_spec["priorityClassName"] = spec["priorityClassName"]
            try:
                c.create(
                    "PodGroup",
                    {
                        "apiVersion": "scheduling.volcano.sh/v1beta1",
                        "kind": "PodGroup",
                        "metadata": pg_meta,
                        "spec": pg_spec,
                        "status": {"phase": "Pending"},
                    },
                    namespace,
                )
            except ApiError as exc:
                if exc.code != 409:
                    return
        c.write(
            "Pod",
            namespace,
            name,
            lambda obj: (
                obj["metadata"].setdefault("annotations", {}).__setitem__(GROUP_NAME_ANNOTATION, pg_name)
            ),
        )
