"""Write actions: suspend/resume/restart/terminate/delete a Volcano Job, open/close a Queue.

Off unless ``VOLCANO_UI_ENABLE_ACTIONS=true`` with an authenticated access mode (settings refuse
the combination with ``none``). Each action is a GET confirmation page and a CSRF-protected POST.
Both check, by SubjectAccessReview for the signed-in user, exactly the permission vcctl would need:

- Job suspend/resume/restart/terminate: ``create commands.bus.volcano.sh`` in the Job's namespace;
  the Command is built as vcctl builds it (volcano-sh/volcano pkg/cli/util): generateName
  ``<job>-<action lowercased>-``, ownerReferences and target = controller ref to the Job with uid.
- Job delete: ``delete jobs.batch.volcano.sh`` on that Job (with a uid precondition).
- Queue open/close: ``create commands.bus.volcano.sh`` in namespace ``default``, where vcctl puts
  queue Commands; target = controller ref to the Queue.

The request itself is sent with the dashboard's service-account credentials (which need the opt-in
ClusterRole in deploy/kubernetes/components/actions) on behalf of the authorized user, not by
impersonation: impersonation would need the far broader ``impersonate`` permission on every user
and group. The user's name goes into the Command's ``message`` and into the dashboard's log, since
the API server's audit log shows only the service account.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from kubernetes.client.exceptions import ApiException

from dashboard import access
from dashboard.health import ACTIONS
from dashboard.kube import reviews

log = logging.getLogger("volcano_ui.actions")

JOB_API_VERSION = "batch.volcano.sh/v1alpha1"
QUEUE_API_VERSION = "scheduling.volcano.sh/v1beta1"
#: vcctl always creates queue Commands in this namespace (pkg/cli/queue/util.go).
QUEUE_COMMAND_NAMESPACE = "default"
# Phases after which a Job does not run again by itself (volcano-sh/volcano pkg/controllers/job/state/).
_FINISHED = {"Completed", "Failed", "Terminated", "Terminating", "Aborted", "Aborting", "Completing"}


@dataclass(frozen=True)
class Action:
    """One offered action: URL slug, Volcano Command action (None for delete), label, explanation."""

    slug: str
    command: str | None
    label: str
    explanation: str
    danger: bool = False


JOB_ACTIONS = {
    a.slug: a
    for a in (
        Action(
            "suspend",
            "AbortJob",
            "Suspend",
            "Volcano aborts the Job: its pods are deleted and it waits in phase Aborted until resumed "
            "(vcctl job suspend).",
        ),
        Action("resume", "ResumeJob", "Resume", "Volcano starts the aborted Job again (vcctl job resume)."),
        Action(
            "restart",
            "RestartJob",
            "Restart",
            "Volcano deletes all pods of the Job and creates them again; the retry count grows.",
        ),
        Action(
            "terminate",
            "TerminateJob",
            "Terminate",
            "Volcano kills the Job's pods and ends it in phase Terminated; it cannot be resumed.",
            danger=True,
        ),
        Action(
            "delete",
            None,
            "Delete",
            "The Job and everything it owns (PodGroup, pods) are deleted from the cluster "
            "(vcctl job delete).",
            danger=True,
        ),
    )
}
QUEUE_ACTIONS = {
    a.slug: a
    for a in (
        Action(
            "open", "OpenQueue", "Open", "The Queue accepts new Jobs again (vcctl queue operate -a open)."
        ),
        Action(
            "close",
            "CloseQueue",
            "Close",
            "The Queue stops accepting new Jobs; running Jobs continue (vcctl queue operate -a close).",
            danger=True,
        ),
    )
}


def _enabled() -> bool:
    return settings.VOLCANO_UI_ENABLE_ACTIONS and settings.VOLCANO_UI_ACCESS_MODE != "none"


def controller_ref(obj: dict, api_version: str, kind: str) -> dict:
    """A controller OwnerReference to ``obj``, as metav1.NewControllerRef builds it."""
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def build_command(target_ref: dict, namespace: str, action: str, requested_by: str) -> dict:
    """The Command vcctl would create for ``action`` on ``target_ref`` (volcano-sh/volcano pkg/cli/util).

    ``reason``/``message`` (Command fields the controllers ignore) record who asked for it.
    """
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {
            "generateName": f"{target_ref['name']}-{action.lower()}-",
            "namespace": namespace,
            "ownerReferences": [dict(target_ref)],
        },
        "action": action,
        "target": dict(target_ref),
        "reason": "volcano-ui",
        "message": f"Requested by {requested_by} through volcano-ui",
    }


def _decision(identity, action: Action, namespace: str, name: str) -> access.Decision:
    if action.command is None:
        return access.decide(identity, "delete", "batch.volcano.sh", "jobs", namespace, name)
    return access.decide(identity, "create", "bus.volcano.sh", "commands", namespace)


def _permission(identity, action: Action, namespace: str, name: str) -> bool:
    return _decision(identity, action, namespace, name) is access.Decision.ALLOWED


def job_actions_for(request: HttpRequest, job: dict) -> list[dict]:
    """The actions the user may take on ``job`` now, as ``{"action", "url"}`` dicts (for templates).

    Empty when actions are disabled or the user lacks the permission. Suspend/restart/terminate are
    offered while the Job is not finished, resume only for an Aborted Job, delete always.
    """
    if not _enabled():
        return []
    identity = access.current_identity(request)
    meta = job.get("metadata") or {}
    namespace, name = meta.get("namespace", ""), meta.get("name", "")
    phase = ((job.get("status") or {}).get("state") or {}).get("phase") or ""
    offered = []
    for action in JOB_ACTIONS.values():
        if action.slug in ("suspend", "restart", "terminate") and phase in _FINISHED:
            continue
        if action.slug == "resume" and phase != "Aborted":
            continue
        if _permission(identity, action, namespace, name):
            offered.append(
                {"action": action, "url": reverse("job_action", args=[namespace, name, action.slug])}
            )
    return offered


def queue_actions_for(request: HttpRequest, queue: dict) -> list[dict]:
    """The open/close action the user may take on ``queue`` (by its ``status.state``)."""
    if not _enabled():
        return []
    identity = access.current_identity(request)
    name = (queue.get("metadata") or {}).get("name", "")
    state = (queue.get("status") or {}).get("state") or ""
    offered = []
    for action in QUEUE_ACTIONS.values():
        if (action.slug == "open" and state == "Open") or (action.slug == "close" and state == "Closed"):
            continue
        if _permission(identity, action, QUEUE_COMMAND_NAMESPACE, name):
            offered.append({"action": action, "url": reverse("queue_action", args=[name, action.slug])})
    return offered


def _snapshot(request: HttpRequest):
    from dashboard.kube import get_cluster_cache

    return get_cluster_cache().snapshot(namespaces=access.visible_namespaces(request))


def _result(request, ctx, status=200) -> HttpResponse:
    return render(request, "volcano_ui_prod/action_result.html", ctx, status=status)


def _chosen(table: dict[str, Action], slug: str) -> Action:
    chosen = table.get(slug)
    if not _enabled() or chosen is None:
        raise Http404("No such action.")
    return chosen


@dataclass(frozen=True)
class _Target:
    """The object an action is confirmed for or done on. ``namespace``: the object's (None for
    a Queue); ``command_namespace``: where the permission is checked and the Command created."""

    kind: str
    namespace: str | None
    name: str
    obj: dict
    command_namespace: str
    back_url: str


def _confirm_or_do(
    request: HttpRequest, chosen: Action, target: _Target, do: Callable[[Any], dict | None]
) -> HttpResponse:
    """The flow every action shares: 403 without the permission; GET: the confirmation page;
    POST: ``do(identity)`` (the created Command, or None), then the result page."""
    identity = access.current_identity(request)
    ctx: dict[str, Any] = {
        "action": chosen,
        "kind": target.kind,
        "namespace": target.namespace,
        "name": target.name,
        "object": target.obj,
        "back_url": target.back_url,
    }
    ns, name = target.namespace, target.name
    decision = _decision(identity, chosen, target.command_namespace, name)
    if decision is access.Decision.UNCHECKED:
        ACTIONS.labels(chosen.slug, "unchecked").inc()
        log.warning("action refused: permission unchecked", extra=_log_extra(identity, chosen, ns, name))
        ctx["unchecked"] = True
        resp = render(request, "volcano_ui_prod/action_forbidden.html", ctx, status=503)
        resp["Retry-After"] = str(access.UNCHECKED_RETRY_SECONDS)
        return resp
    if decision is not access.Decision.ALLOWED:
        ACTIONS.labels(chosen.slug, "forbidden").inc()
        log.warning("action refused: no permission", extra=_log_extra(identity, chosen, ns, name))
        return render(request, "volcano_ui_prod/action_forbidden.html", ctx, status=403)
    if request.method == "GET":
        ctx["post_url"] = request.path
        return render(request, "volcano_ui_prod/action_confirm.html", ctx)
    try:
        ctx["created"] = do(identity)
    except (ApiException, reviews.ReviewError) as exc:
        return _failed(request, ctx, identity, chosen, ns, name, exc)
    ACTIONS.labels(chosen.slug, "done").inc()
    log.info("action done", extra=_log_extra(identity, chosen, ns, name))
    return _result(request, ctx)


@never_cache
@csrf_protect
def job_action(request: HttpRequest, namespace: str, name: str, action: str) -> HttpResponse:
    """GET: confirm ``action`` on the Job; POST: do it. 404 when actions are off, the action is
    unknown or the Job is not visible to the user; 403 without the RBAC permission."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    chosen = _chosen(JOB_ACTIONS, action)
    job = _snapshot(request).jobs.get(namespace, name)
    if job is None:
        raise Http404("No such Job.")
    # After a delete the Job page is gone: go back to the list.
    deleted = chosen.command is None and request.method == "POST"
    back_url = reverse("jobs") if deleted else reverse("job_detail", args=[namespace, name])

    def do(identity: Any) -> dict | None:
        if chosen.command is None:
            reviews.delete_job(namespace, name, (job.get("metadata") or {}).get("uid", ""))
            return None
        ref = controller_ref(job, JOB_API_VERSION, "Job")
        body = build_command(ref, namespace, chosen.command, identity.username)
        return reviews.create_command(namespace, body)

    return _confirm_or_do(request, chosen, _Target("Job", namespace, name, job, namespace, back_url), do)


@never_cache
@csrf_protect
def queue_action(request: HttpRequest, name: str, action: str) -> HttpResponse:
    """GET: confirm opening/closing the Queue; POST: create the OpenQueue/CloseQueue Command."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    chosen = _chosen(QUEUE_ACTIONS, action)
    queue = _snapshot(request).queues.get(None, name)
    if queue is None:
        raise Http404("No such Queue.")

    def do(identity: Any) -> dict | None:
        ref = controller_ref(queue, QUEUE_API_VERSION, "Queue")
        body = build_command(ref, QUEUE_COMMAND_NAMESPACE, chosen.command or "", identity.username)
        return reviews.create_command(QUEUE_COMMAND_NAMESPACE, body)

    back_url = reverse("queue_detail", args=[name])
    target = _Target("Queue", None, name, queue, QUEUE_COMMAND_NAMESPACE, back_url)
    return _confirm_or_do(request, chosen, target, do)


def _failed(request, ctx, identity, chosen, namespace, name, exc: Exception) -> HttpResponse:
    ACTIONS.labels(chosen.slug, "failed").inc()
    if isinstance(exc, ApiException):
        detail = f"The API server answered {exc.status} {exc.reason}."
        status = 409 if exc.status == 409 else 502  # 409: the Job changed (uid precondition)
    else:
        detail, status = f"The API server could not be asked: {exc}", 502
    log.error("action failed: %s", detail, extra=_log_extra(identity, chosen, namespace, name))
    ctx["error"] = detail
    return _result(request, ctx, status=status)


def _log_extra(identity, action: Action, namespace: str | None, name: str) -> dict:
    return {
        "user": identity.username if identity is not None else None,
        "action": action.command or "DeleteJob",
        "target_namespace": namespace,
        "target_name": name,
    }
