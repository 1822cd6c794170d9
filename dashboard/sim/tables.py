"""Server-side printing: meta.k8s.io/v1 ``Table`` responses, which is what ``kubectl get`` asks for
(Accept ``application/json;as=Table;v=v1;g=meta.k8s.io``).

Custom resources use their CRD additionalPrinterColumns (Name + Age when there are
none); a few core kinds get the columns upstream's printers use. Ages are computed against the
simulated clock and formatted like apimachinery's ``duration.HumanDuration``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .kinds import Kind, PrinterColumn

Obj = dict[str, Any]


def human_duration(seconds: float) -> str:
    """Format a duration like Kubernetes ages: "45s", "2m30s", "3h", "5d2h", "2y10d"."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(value: Any, now: datetime) -> str:
    t = _parse_time(value)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


def _path(obj: Obj, json_path: str) -> Any:
    cur: Any = obj
    for part in json_path.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _coldef(name: str, type_: str = "string", priority: int = 0, fmt: str = "", description: str = "") -> Obj:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME = _coldef("Name", "string", 0, "name", "Name must be unique within a namespace.")
_AGE = _coldef(
    "Age",
    "string",
    0,
    "",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)


def _crd_columns(cols: tuple[PrinterColumn, ...]) -> list[Obj]:
    if not cols:
        return [_NAME, _AGE]
    return [_NAME] + [_coldef(c.name, c.type if c.type != "date" else "date", c.priority) for c in cols]


def _crd_cells(cols: tuple[PrinterColumn, ...], obj: Obj, now: datetime) -> list[Any]:
    meta = obj.get("metadata") or {}
    if not cols:
        return [meta.get("name", ""), age(meta.get("creationTimestamp"), now)]
    cells: list[Any] = [meta.get("name", "")]
    for c in cols:
        value = _path(obj, c.json_path)
        if c.type == "date":
            cells.append(age(value, now) if value is not None else None)
        else:
            cells.append(value)
    return cells


def _pod_cells(obj: Obj, now: datetime) -> list[Any]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    total = len(spec.get("containers") or ())
    ready = restarts = 0
    reason = status.get("reason") or status.get("phase") or ""
    for cs in status.get("containerStatuses") or ():
        restarts += int(cs.get("restartCount") or 0)
        state = cs.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
        elif "terminated" in state:
            term = state["terminated"] or {}
            reason = (
                f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}"
            )
        elif cs.get("ready") and "running" in state:
            ready += 1
    if meta.get("deletionTimestamp"):
        reason = "Terminating"
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts,
        age(meta.get("creationTimestamp"), now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        "<none>",
    ]


_POD_COLS = [
    _NAME,
    _coldef("Ready"),
    _coldef("Status"),
    _coldef("Restarts", "string"),
    _AGE,
    _coldef("IP", priority=1),
    _coldef("Node", priority=1),
    _coldef("Nominated Node", priority=1),
    _coldef("Readiness Gates", priority=1),
]


def _node_cells(obj: Obj, now: datetime) -> list[Any]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    ready = "Unknown"
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready":
            ready = "Ready" if cond.get("status") == "True" else "NotReady"
    if spec.get("unschedulable"):
        ready += ",SchedulingDisabled"
    roles = sorted(
        k.split("/", 1)[1]
        for k in (meta.get("labels") or {})
        if k.startswith("node-role.kubernetes.io/") and "/" in k
    )
    return [
        meta.get("name", ""),
        ready,
        ",".join(roles) or "<none>",
        age(meta.get("creationTimestamp"), now),
        ((status.get("nodeInfo") or {}).get("kubeletVersion")) or "",
    ]


_NODE_COLS = [_NAME, _coldef("Status"), _coldef("Roles"), _AGE, _coldef("Version")]


def _event_cells(obj: Obj, now: datetime) -> list[Any]:
    meta, inv = obj.get("metadata") or {}, obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or meta.get("creationTimestamp")
    return [
        age(last, now),
        obj.get("type", ""),
        obj.get("reason", ""),
        f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}",
        obj.get("message", ""),
    ]


_EVENT_COLS = [
    _coldef("Last Seen"),
    _coldef("Type"),
    _coldef("Reason"),
    _coldef("Object"),
    _coldef("Message"),
]


def _namespace_cells(obj: Obj, now: datetime) -> list[Any]:
    meta = obj.get("metadata") or {}
    return [
        meta.get("name", ""),
        (obj.get("status") or {}).get("phase", ""),
        age(meta.get("creationTimestamp"), now),
    ]


_NAMESPACE_COLS = [_NAME, _coldef("Status"), _AGE]


def _deployment_cells(obj: Obj, now: datetime) -> list[Any]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    return [
        meta.get("name", ""),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        age(meta.get("creationTimestamp"), now),
    ]


_DEPLOYMENT_COLS = [
    _NAME,
    _coldef("Ready"),
    _coldef("Up-to-date", "integer"),
    _coldef("Available", "integer"),
    _AGE,
]

_CORE = {
    ("", "Pod"): (_POD_COLS, _pod_cells),
    ("", "Node"): (_NODE_COLS, _node_cells),
    ("", "Event"): (_EVENT_COLS, _event_cells),
    ("", "Namespace"): (_NAMESPACE_COLS, _namespace_cells),
    ("apps", "Deployment"): (_DEPLOYMENT_COLS, _deployment_cells),
}


def columns(kind: Kind) -> list[Obj]:
    if kind.printer_columns is not None:
        return _crd_columns(kind.printer_columns)
    spec = _CORE.get((kind.group, kind.kind))
    return spec[0] if spec else [_NAME, _AGE]


def cells(kind: Kind, obj: Obj, now: datetime) -> list[Any]:
    if kind.printer_columns is not None:
        return _crd_cells(kind.printer_columns, obj, now)
    spec = _CORE.get((kind.group, kind.kind))
    if spec:
        return spec[1](obj, now)
    meta = obj.get("metadata") or {}
    return [meta.get("name", ""), age(meta.get("creationTimestamp"), now)]


def row(kind: Kind, obj: Obj, now: datetime, include_object: str = "Metadata") -> Obj:
    """One Table row; ``include_object`` is the request's includeObject: None|Metadata|Object."""
    out: Obj = {"cells": cells(kind, obj, now)}
    if include_object == "Object":
        out["object"] = obj
    elif include_object != "None":
        out["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {},
        }
    return out


def table(
    kind: Kind,
    objs: list[Obj],
    now: datetime,
    *,
    resource_version: str = "",
    continue_token: str = "",
    include_object: str = "Metadata",
    api_version: str = "meta.k8s.io/v1",
) -> Obj:
    meta: Obj = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": meta,
        "columnDefinitions": columns(kind),
        "rows": [row(kind, o, now, include_object) for o in objs],
    }
