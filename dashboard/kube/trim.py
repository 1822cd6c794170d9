"""Trim API objects to what the pages show, before they enter the cache.

The cache keeps tens of thousands of pods; a full pod spec with managedFields is 5-20 KiB of Python
objects, most of which no page displays. Each function takes the plain JSON dict decoded from the
API server (never a generated model class) and returns a new, smaller plain dict. Functions never
raise on odd shapes: a field of the wrong type is dropped, not trusted.

What is kept (the issue's list): metadata minus managedFields and the
``kubectl.kubernetes.io/last-applied-configuration`` annotation; for pods only the displayed spec
fields (containers' name/image/resources requests+limits/ports, env entries that are references
rather than literal values, nodeName, schedulerName, priorityClassName, restartPolicy) and the
status fields kubectl uses for its STATUS/READY/RESTARTS columns.
"""

from __future__ import annotations

from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_META_KEYS = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "ownerReferences",
    "finalizers",
    "generateName",
)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def trim_metadata(meta: Any) -> dict:
    """Return the metadata fields the pages use; annotations lose last-applied-configuration."""
    meta = _dict(meta)
    out = {k: meta[k] for k in _META_KEYS if k in meta}
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        if LAST_APPLIED in annotations:
            annotations = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        out["annotations"] = annotations
    return out


def trim_object(obj: dict) -> dict:
    """Generic trim for custom resources (Job, PodGroup, Queue, Command): drop managedFields only.

    Volcano objects are small and the pages show most of their spec (tasks, policies, plugins), so
    only the metadata is trimmed. Job task pod templates are kept: the Job detail page shows them.
    """
    out = dict(obj)
    out["metadata"] = trim_metadata(obj.get("metadata"))
    return out


def _trim_env(env: Any) -> list:
    # Literal env values may carry secrets pasted into manifests and are not shown; references
    # (valueFrom) say where a value comes from, which is useful and not sensitive.
    if not isinstance(env, list):
        return []
    return [
        {"name": e.get("name"), "valueFrom": e["valueFrom"]}
        for e in env
        if isinstance(e, dict) and isinstance(e.get("valueFrom"), dict)
    ]


def _trim_container(c: Any) -> dict | None:
    if not isinstance(c, dict):
        return None
    out: dict = {"name": c.get("name"), "image": c.get("image")}
    resources = _dict(c.get("resources"))
    kept = {k: resources[k] for k in ("requests", "limits") if isinstance(resources.get(k), dict)}
    if kept:
        out["resources"] = kept
    env = _trim_env(c.get("env"))
    if env:
        out["env"] = env
    if isinstance(c.get("ports"), list):
        out["ports"] = c["ports"]
    if isinstance(c.get("restartPolicy"), str):  # native sidecars (init containers with Always)
        out["restartPolicy"] = c["restartPolicy"]
    return out


_POD_SPEC_KEYS = ("nodeName", "schedulerName", "priorityClassName", "priority", "restartPolicy")
_POD_STATUS_KEYS = (
    "phase",
    "reason",
    "message",
    "conditions",
    "containerStatuses",
    "initContainerStatuses",
    "hostIP",
    "podIP",
    "startTime",
    "nominatedNodeName",
    "qosClass",
)


def trim_pod(pod: dict) -> dict:
    """Keep what the pod rows and the "why pending" explanation read (see module docstring)."""
    spec = _dict(pod.get("spec"))
    status = _dict(pod.get("status"))
    out_spec: dict = {k: spec[k] for k in _POD_SPEC_KEYS if k in spec}
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if isinstance(items, list):
            out_spec[key] = [t for t in map(_trim_container, items) if t is not None]
    out: dict = {
        "apiVersion": pod.get("apiVersion", "v1"),
        "kind": pod.get("kind", "Pod"),
        "metadata": trim_metadata(pod.get("metadata")),
        "spec": out_spec,
        "status": {k: status[k] for k in _POD_STATUS_KEYS if k in status},
    }
    return out


_EVENT_KEYS = (
    "involvedObject",
    "reason",
    "message",
    "type",
    "count",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
    "series",
    "source",
    "reportingComponent",
    "reportingController",
    "action",
)


def trim_event(event: dict) -> dict:
    """Keep the fields of a core/v1 Event that the event lists show."""
    meta = _dict(event.get("metadata"))
    out = {k: event[k] for k in _EVENT_KEYS if k in event}
    out["apiVersion"] = event.get("apiVersion", "v1")
    out["kind"] = event.get("kind", "Event")
    out["metadata"] = {
        k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
    }
    return out
