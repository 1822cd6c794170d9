"""A Volcano JobSpec (a JobTemplate's spec, a CronJob's jobTemplate.spec) as rows to show."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.volcano import hypernodes as vh
from dashboard.volcano.gang import pod_template_requests
from dashboard.volcano.objects import as_dict, as_list, as_str
from dashboard.volcano.quantities import format_quantity, resource_sort_key


def _policies(raw: object) -> list[dict[str, str]]:
    out = []
    for p in (as_dict(x) for x in as_list(raw)):
        events = [as_str(e) for e in as_list(p.get("events"))] or (
            [as_str(p.get("event"))] if p.get("event") else []
        )
        exit_code = p.get("exitCode")
        out.append(
            {
                "events": ", ".join(events),
                "exit_code": as_str(exit_code) if exit_code is not None else "",
                "action": as_str(p.get("action")),
                "timeout": as_str(p.get("timeout")),
            }
        )
    return out


def _partition(task: Mapping[str, Any]) -> dict[str, Any] | None:
    pp = task.get("partitionPolicy")
    if not isinstance(pp, dict):
        return None
    return {
        "total": pp.get("totalPartitions"),
        "size": pp.get("partitionSize"),
        "min": pp.get("minPartitions"),
        "nt": vh.network_topology(pp),
    }


def _task(task: Mapping[str, Any]) -> dict[str, Any]:
    template = as_dict(task.get("template"))
    containers = [as_dict(c) for c in as_list(as_dict(template.get("spec")).get("containers"))]
    requests = pod_template_requests(template)
    return {
        "name": as_str(task.get("name")),
        "replicas": task.get("replicas"),
        "min_available": task.get("minAvailable"),
        "images": [as_str(c.get("image")) for c in containers if c.get("image")],
        "requests": [
            (res, format_quantity(res, v))
            for res, v in sorted(requests.items(), key=lambda kv: resource_sort_key(kv[0]))
        ],
        "policies": _policies(task.get("policies")),
        "partition": _partition(task),
        "depends_on": [as_str(x) for x in as_list(as_dict(task.get("dependsOn")).get("name"))],
    }


def job_spec_view(spec: object) -> dict[str, Any]:
    """The fields of a JobSpec the pages show, as written ("" / None when absent)."""
    sp = as_dict(spec)
    plugins = as_dict(sp.get("plugins"))
    return {
        "queue": as_str(sp.get("queue")),
        "scheduler": as_str(sp.get("schedulerName")),
        "priority_class": as_str(sp.get("priorityClassName")),
        "min_available": sp.get("minAvailable"),
        "min_success": sp.get("minSuccess"),
        "max_retry": sp.get("maxRetry"),
        "running_estimate": as_str(sp.get("runningEstimate")),
        "ttl": sp.get("ttlSecondsAfterFinished"),
        "nt": vh.network_topology(sp),
        "tasks": [_task(as_dict(t)) for t in as_list(sp.get("tasks"))],
        "policies": _policies(sp.get("policies")),
        "plugins": sorted((as_str(k), " ".join(as_str(a) for a in as_list(v))) for k, v in plugins.items()),
    }
