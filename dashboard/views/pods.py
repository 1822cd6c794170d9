"""A Pod's page (fragments ``status``, ``events``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.kube.snapshot import Snapshot
from dashboard.presenters.clock import reference_now
from dashboard.presenters.pending import absent_hint, unreadable_reason
from dashboard.presenters.podgroups import owner_of
from dashboard.presenters.pods import exit_text, pod_row
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, kind_states
from dashboard.views.notices import page_ctx
from dashboard.views.rows import events_of, yaml_text
from dashboard.volcano import objects, phases
from dashboard.volcano.events import event_records
from dashboard.volcano.objects import as_dict, as_list, as_str
from dashboard.volcano.pods import restart_count_invalid
from dashboard.volcano.time import created_at

DETAIL_KINDS = ("pods", "events")


@require_safe
def pod_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "pods", _("Pod"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, pod = found
    now = reference_now(snap)
    ann, labels = objects.annotations(pod), objects.labels(pod)
    group = ann.get("scheduling.k8s.io/group-name", "")
    pg = snap.podgroups.get(namespace, group) if group else None
    job_name = labels.get("volcano.sh/job-name") or ann.get("volcano.sh/job-name", "")
    job = snap.jobs.get(namespace, job_name) if job_name else None
    events = cache(lambda: events_of(snap, pod))
    states = kind_states(snap, *DETAIL_KINDS)
    frags = Fragments(
        request,
        snap,
        now,
        DETAIL_KINDS,
        status=lambda: version_key(resource_versions([pod, pg, job]), states),
        events=lambda: version_key(resource_versions(events()), states),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "jobs")
    row = pod_row(pod)
    ctx.update(
        {
            "pod": pod,
            "name": name,
            "namespace": namespace,
            "row": row,
            "job": job,
            "job_name": job_name,
            "live": not phases.pod_is_final(phases.pod_phase(pod)),
        }
    )
    if frags.want("status"):
        ctx.update(_status_ctx(snap, pod, pg, job, group))
    if frags.want("events"):
        ctx["events"] = event_records(events(), 100)
        ctx["events_blocked"] = bool(unreadable_reason(snap.events.state))
    if frags.asked is None:  # the metadata and YAML below the fragments
        ctx["yaml"] = yaml_text(pod)
        ctx["labels"] = sorted(labels.items())
        ctx["annotations"] = sorted(ann.items())
    return frags.respond("dashboard/pod_detail.html", ctx)


def _queue_name(pod: dict, pg: dict | None) -> str:
    # A Volcano Job's pod names its queue in volcano.sh/queue-name; other workloads' pods in
    # scheduling.volcano.sh/queue-name, and their PodGroup has it too (volcano-sh/volcano
    # pkg/controllers/podgroup).
    labels, ann = objects.labels(pod), objects.annotations(pod)
    return (
        labels.get("volcano.sh/queue-name")
        or ann.get("volcano.sh/queue-name")
        or ann.get("scheduling.volcano.sh/queue-name")
        or (as_str(objects.spec(pg).get("queue")) if pg else "")
    )


def _status_ctx(snap: Snapshot, pod: dict, pg: dict | None, job: dict | None, group: str) -> dict[str, Any]:
    """The ``status`` fragment: links to Job, PodGroup and Queue, counts, containers, conditions."""
    status = objects.status(pod)
    queue_name = _queue_name(pod, pg)
    return {
        "pg": pg,
        "owner": owner_of(pod),
        "group_name": group,
        "pg_missing": absent_hint(pg, snap.podgroups.state),
        "job_missing": absent_hint(job, snap.jobs.state),
        "queue_missing": absent_hint(snap.queue(queue_name) if queue_name else None, snap.queues.state),
        "containers": _containers(pod),
        "conditions": [as_dict(c) for c in as_list(status.get("conditions"))],
        "phase_text": as_str(status.get("phase")),
        "pod_ip": as_str(status.get("podIP")),
        "created": created_at(pod),
        "queue_name": queue_name,
    }


def _containers(pod: dict) -> list[dict]:
    """One row per container of ``spec.containers``: its state, restarts, last state, requests."""
    statuses = {
        as_str(as_dict(c).get("name")): as_dict(c)
        for c in as_list(objects.status(pod).get("containerStatuses"))
    }
    containers = []
    for c in as_list(objects.spec(pod).get("containers")):
        c = as_dict(c)
        cs = statuses.get(as_str(c.get("name")), {})
        state = as_dict(cs.get("state"))
        state_name = next(iter(state), "")
        detail = as_dict(state.get(state_name)) if state_name else {}
        last = as_dict(cs.get("lastState"))
        last_name = next(iter(last), "")
        containers.append(
            {
                "name": as_str(c.get("name")),
                "image": as_str(c.get("image")),
                "state": state_name,
                "reason": as_str(detail.get("reason")),
                "message": as_str(detail.get("message")),
                "ready": cs.get("ready") is True,
                "restarts": objects.count(cs.get("restartCount")),
                "restarts_invalid": restart_count_invalid(cs),
                "last": last_name,
                "last_reason": as_str(as_dict(last.get(last_name)).get("reason")) if last_name else "",
                "exit": exit_text(detail) if state_name == "terminated" else "",
                "last_exit": exit_text(as_dict(last.get(last_name))) if last_name == "terminated" else "",
                "requests": sorted(
                    (as_str(k), as_str(v))
                    for k, v in as_dict(as_dict(c.get("resources")).get("requests")).items()
                ),
            }
        )
    return containers
