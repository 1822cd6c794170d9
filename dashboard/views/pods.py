"""A Pod's page (fragments ``status``, ``events``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard import presenters as p
from dashboard.kube.snapshot import Snapshot
from dashboard.views.errors import find_object
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.notices import page_ctx
from dashboard.views.rows import events_of, yaml_text

DETAIL_KINDS = ("pods", "events")


@require_safe
def pod_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    found = find_object(request, "pods", _("Pod"), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    snap, pod = found
    now = p.reference_now(snap)
    ann, labels = p.annotations_of(pod), p.labels_of(pod)
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
        status=lambda: p.version_key(p.resource_versions([pod, pg, job]), states, bucket(now)),
        events=lambda: p.version_key(p.resource_versions(events()), states, bucket(now)),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, DETAIL_KINDS, "jobs")
    row = p.pod_row(pod)
    ctx.update(
        {
            "pod": pod,
            "name": name,
            "namespace": namespace,
            "row": row,
            "job": job,
            "job_name": job_name,
            "live": row.status.label not in ("Succeeded", "Completed", "Failed"),
        }
    )
    if frags.want("status"):
        ctx.update(_status_ctx(snap, pod, pg, job, group))
    if frags.want("events"):
        ctx["events"] = p.event_rows(events(), 100)
    if frags.asked is None:  # the metadata and YAML below the fragments
        ctx["yaml"] = yaml_text(pod)
        ctx["labels"] = sorted(labels.items())
        ctx["annotations"] = sorted(ann.items())
    return frags.respond("dashboard/pod_detail.html", ctx)


def _queue_name(pod: dict, pg: dict | None) -> str:
    # A Volcano Job's pod names its queue in volcano.sh/queue-name; other workloads' pods in
    # scheduling.volcano.sh/queue-name, and their PodGroup has it too (REFERENCE.md §4).
    labels, ann = p.labels_of(pod), p.annotations_of(pod)
    return (
        labels.get("volcano.sh/queue-name")
        or ann.get("volcano.sh/queue-name")
        or ann.get("scheduling.volcano.sh/queue-name")
        or (p.as_str(p.spec_of(pg).get("queue")) if pg else "")
    )


def _status_ctx(snap: Snapshot, pod: dict, pg: dict | None, job: dict | None, group: str) -> dict[str, Any]:
    """The ``status`` fragment: links to Job, PodGroup and Queue, counts, containers, conditions."""
    status = p.status_of(pod)
    queue_name = _queue_name(pod, pg)
    return {
        "pg": pg,
        "owner": p.owner_of(pod),
        "group_name": group,
        "pg_missing": p.absent_hint(pg, snap.podgroups.state),
        "job_missing": p.absent_hint(job, snap.jobs.state),
        "queue_missing": p.absent_hint(snap.queue(queue_name) if queue_name else None, snap.queues.state),
        "containers": _containers(pod),
        "conditions": [p.as_dict(c) for c in p.as_list(status.get("conditions"))],
        "phase_text": p.as_str(status.get("phase")),
        "pod_ip": p.as_str(status.get("podIP")),
        "created": p.created_at(pod),
        "queue_name": queue_name,
    }


def _containers(pod: dict) -> list[dict]:
    """One row per container of ``spec.containers``: its state, restarts, last state, requests."""
    statuses = {
        p.as_str(p.as_dict(c).get("name")): p.as_dict(c)
        for c in p.as_list(p.status_of(pod).get("containerStatuses"))
    }
    containers = []
    for c in p.as_list(p.spec_of(pod).get("containers")):
        c = p.as_dict(c)
        cs = statuses.get(p.as_str(c.get("name")), {})
        state = p.as_dict(cs.get("state"))
        state_name = next(iter(state), "")
        detail = p.as_dict(state.get(state_name)) if state_name else {}
        last = p.as_dict(cs.get("lastState"))
        last_name = next(iter(last), "")
        containers.append(
            {
                "name": p.as_str(c.get("name")),
                "image": p.as_str(c.get("image")),
                "state": state_name,
                "reason": p.as_str(detail.get("reason")),
                "message": p.as_str(detail.get("message")),
                "ready": cs.get("ready") is True,
                "restarts": p.to_int(cs.get("restartCount")),
                "last": last_name,
                "last_reason": p.as_str(p.as_dict(last.get(last_name)).get("reason")) if last_name else "",
                "exit": p.exit_text(detail) if state_name == "terminated" else "",
                "last_exit": p.exit_text(p.as_dict(last.get(last_name))) if last_name == "terminated" else "",
                "requests": sorted(
                    (p.as_str(k), p.as_str(v))
                    for k, v in p.as_dict(p.as_dict(c.get("resources")).get("requests")).items()
                ),
            }
        )
    return containers
