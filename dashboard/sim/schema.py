"""What the real API server does to an object on its way into storage, per kind: name validation,
dropping ``null``s, CRD structural defaults and pruning, and initial status of core kinds.

The few Volcano defaults are encoded here from the CRD structural schemas (volcano-sh/volcano
config/crd); the CRD YAML files are not read at run time.
"""

from __future__ import annotations

import re
from typing import Any

from .kinds import Kind

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def name_problem(kind: Kind, name: str) -> str | None:
    """None when ``name`` is valid for ``kind``, else the upstream-style message."""
    if kind.name_rule == "label":
        if len(name) > 63:
            return "must be no more than 63 characters"
        if not _DNS_LABEL.match(name):
            return (
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            )
        return None
    if len(name) > 253:
        return "must be no more than 253 characters"
    if not _DNS_SUBDOMAIN.match(name):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return None


# JSON scalars: drop_nulls returns them as they are, so it need not be called for them.
_LEAVES = frozenset({str, int, float, bool})


def drop_nulls(value: Any) -> Any:
    """Remove ``null`` map entries recursively (Go ``omitempty`` / CRD nullable=false)."""
    # Returns a fresh deep copy as a side effect (the store relies on that).
    t = type(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            if v is not None:
                out[k] = v if type(v) in _LEAVES else drop_nulls(v)
        return out
    if t is list:
        return [v if type(v) in _LEAVES else drop_nulls(v) for v in value]
    if isinstance(value, dict):  # dict subclasses (e.g. from YAML loaders)
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [drop_nulls(v) for v in value]
    return value


# Top-level fields a CRD schema knows; everything else is pruned (structural schema pruning).
_CRD_TOP = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_COMMAND_TOP = frozenset({"apiVersion", "kind", "metadata", "action", "target", "reason", "message"})


def _network_topology(holder: dict[str, Any]) -> None:
    nt = holder.get("networkTopology")
    if isinstance(nt, dict):
        nt.setdefault("mode", "hard")


def _job_spec_defaults(spec: dict[str, Any]) -> None:
    # batch.volcano.sh_jobs.yaml: spec.queue default "default", spec.maxRetry default 3,
    # networkTopology.mode default hard, tasks[].partitionPolicy.minPartitions default 0.
    spec.setdefault("queue", "default")
    spec.setdefault("maxRetry", 3)
    _network_topology(spec)
    for task in spec.get("tasks") or ():
        if isinstance(task, dict) and isinstance(task.get("partitionPolicy"), dict):
            task["partitionPolicy"].setdefault("minPartitions", 0)
            _network_topology(task["partitionPolicy"])


def apply_schema(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """Defaults and pruning for ``kind`` (in place; returns ``obj``)."""
    if kind.crd:
        allowed = _COMMAND_TOP if kind.kind == "Command" else _CRD_TOP
        for key in [k for k in obj if k not in allowed]:
            del obj[key]
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        if kind.crd and kind.kind in ("Job", "PodGroup", "Queue", "CronJob"):
            spec = obj["spec"] = {}
        else:
            return obj
    group = kind.group
    if group == "batch.volcano.sh" and kind.kind == "Job":
        _job_spec_defaults(spec)
    elif group == "batch.volcano.sh" and kind.kind == "CronJob":
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("failedJobsHistoryLimit", 1)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        template = spec.get("jobTemplate")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            _job_spec_defaults(template["spec"])
    elif group == "scheduling.volcano.sh" and kind.kind == "PodGroup":
        spec.setdefault("queue", "default")
        _network_topology(spec)
        for sub in spec.get("subGroupPolicy") or ():
            if isinstance(sub, dict):
                sub.setdefault("subGroupSize", 1)
                sub.setdefault("minSubGroups", 0)
                _network_topology(sub)
    elif group == "scheduling.volcano.sh" and kind.kind == "Queue":
        spec.setdefault("weight", 1)
        spec.setdefault("dequeueStrategy", "traverse")
        # The CRD only knows guarantee.resource; a flat guarantee map is pruned to {} (the Queue CRD,
        # https://volcano.sh/en/docs/queue/).
        guarantee = spec.get("guarantee")
        if isinstance(guarantee, dict):
            spec["guarantee"] = {k: v for k, v in guarantee.items() if k == "resource"}
    elif group == "flow.volcano.sh" and kind.kind == "JobFlow":
        for flow in spec.get("flows") or ():
            patch = flow.get("patch") if isinstance(flow, dict) else None
            if isinstance(patch, dict) and isinstance(patch.get("jobSpec"), dict):
                patch["jobSpec"].setdefault("maxRetry", 3)
                _network_topology(patch["jobSpec"])
    elif group == "flow.volcano.sh" and kind.kind == "JobTemplate":
        spec.setdefault("maxRetry", 3)
        _network_topology(spec)
    return obj


def _qos_class(spec: dict[str, Any]) -> str:
    """Pod QoS class from container requests/limits (upstream pkg/apis/core/helper/qos)."""
    containers = list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())
    any_set, guaranteed = False, True
    for c in containers:
        res = (c or {}).get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in lim or req.get(name, lim.get(name)) != lim.get(name):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def initial_status(kind: Kind, obj: dict[str, Any]) -> None:
    """The status a real API server sets on create (client-written status is dropped for kinds
    with a status subresource)."""
    if kind.group == "" and kind.kind == "Pod":
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj.get("spec") or {})}
    elif kind.group == "" and kind.kind == "Namespace":
        obj["status"] = {"phase": "Active"}
    elif kind.group == "" and kind.kind == "Node":
        pass  # upstream nodeStrategy lets clients (kubelets) set all of a Node, status included, on create
    elif kind.status_subresource:
        obj.pop("status", None)
