"""Authentication and authorization questions put to the API server, and the write actions.

Every call here uses the dashboard's own credentials (its service account in a pod, or the
kubeconfig given by VOLCANO_UI_KUBECONFIG / VOLCANO_UI_KUBE_CONTEXT): the ApiClient of the
process's cluster cache, through the official client's generated API classes:

- ``token_review(token)``: TokenReview (authentication.k8s.io/v1) -> the identity, or None.
- ``subject_access_review(...)``: SubjectAccessReview (authorization.k8s.io/v1) -> allowed?
- ``create_command(...)`` / ``delete_job(...)``: the write actions (dashboard/actions.py decides
  whether the signed-in user may ask for them).
Errors: ``ReviewError`` when the API server cannot answer (unreachable, 5xx, our own RBAC missing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

_TIMEOUT = (3.05, 10)  # (connect, read) seconds for the write actions
# Reviews are asked in the background of a page view (dashboard/access.py bounds the wait) or at
# sign-in; an answer slower than this is a stalled API server, and the review counts as failed.
_REVIEW_TIMEOUT = (2.0, 5.0)


class ReviewError(Exception):
    """The API server could not answer a review or action (message says why)."""


@dataclass(frozen=True)
class ReviewedUser:
    """The identity a TokenReview returned (authentication.k8s.io/v1 TokenReview.status.user)."""

    username: str
    uid: str
    groups: tuple[str, ...]


def api_client() -> client.ApiClient:
    """The ApiClient of the process's cluster cache: the same connection and credentials as the
    informers (one per process; a forked gunicorn worker builds its own).

    Raises ReviewError when the cluster connection is not configured.
    """
    from dashboard.kube import get_cluster_cache

    kube_client = get_cluster_cache().client
    if kube_client is None or kube_client.api is None:
        raise ReviewError("the Kubernetes connection is not configured (see the cache's state)")
    return kube_client.api


def _raw(response: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(response.data)
    return data


def token_review(token: str) -> ReviewedUser | None:
    """Ask the API server who ``token`` belongs to; None when it is not a valid token.

    Shape: TokenReview.spec.token in, TokenReview.status.{authenticated, user{username, uid,
    groups}, error} out. Raises ReviewError when the API server cannot answer.
    """
    body = client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token))
    try:
        response = client.AuthenticationV1Api(api_client()).create_token_review(
            body, _preload_content=False, _request_timeout=_REVIEW_TIMEOUT
        )
    except ApiException as exc:
        raise ReviewError(f"TokenReview failed: {exc.status} {exc.reason}") from None
    except Exception as exc:  # connection refused, timeouts, TLS errors
        raise ReviewError(f"TokenReview failed: {exc}") from None
    status = _raw(response).get("status") or {}
    user = status.get("user") or {}
    if not status.get("authenticated") or not user.get("username"):
        return None
    return ReviewedUser(
        username=str(user["username"]),
        uid=str(user.get("uid") or ""),
        groups=tuple(str(g) for g in (user.get("groups") or ())),
    )


def subject_access_review(
    *,
    user: str,
    groups: tuple[str, ...],
    verb: str,
    group: str,
    resource: str,
    namespace: str = "",
    name: str = "",
) -> bool:
    """May ``user`` (with ``groups``) ``verb`` the ``resource`` of API ``group`` in ``namespace``?

    ``namespace=""`` asks about all namespaces (cluster-wide), as kubectl does. ``resource`` may name
    a subresource, "pods/log" (sent as resource "pods", subresource "log"). Shape:
    SubjectAccessReview.spec.{user, groups, resourceAttributes} in, status.allowed out.
    Raises ReviewError when the API server cannot answer.
    """
    resource, _, subresource = resource.partition("/")
    body = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            user=user,
            groups=list(groups),
            resource_attributes=client.V1ResourceAttributes(
                verb=verb,
                group=group,
                resource=resource,
                subresource=subresource or None,
                namespace=namespace or None,
                name=name or None,
            ),
        )
    )
    try:
        response = client.AuthorizationV1Api(api_client()).create_subject_access_review(
            body, _preload_content=False, _request_timeout=_REVIEW_TIMEOUT
        )
    except ApiException as exc:
        raise ReviewError(f"SubjectAccessReview failed: {exc.status} {exc.reason}") from None
    except Exception as exc:
        raise ReviewError(f"SubjectAccessReview failed: {exc}") from None
    status = _raw(response).get("status") or {}
    return bool(status.get("allowed")) and not status.get("denied")


def create_command(namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create a bus.volcano.sh/v1alpha1 Command in ``namespace``; returns the created object.

    Raises ApiException as the API server answered (e.g. 403, 404, 422).
    """
    api = client.CustomObjectsApi(api_client())
    response = api.create_namespaced_custom_object(
        "bus.volcano.sh",
        "v1alpha1",
        namespace,
        "commands",
        body,
        _preload_content=False,
        _request_timeout=_TIMEOUT,
    )
    return _raw(response)


def delete_job(namespace: str, name: str, uid: str) -> dict[str, Any]:
    """Delete the Volcano Job ``namespace/name``, only if it still has ``uid``.

    The uid precondition stops a stale confirmation page from deleting a newer Job that reuses
    the name (the API server answers 409). Raises ApiException as the API server answered.
    """
    api = client.CustomObjectsApi(api_client())
    response = api.delete_namespaced_custom_object(
        "batch.volcano.sh",
        "v1alpha1",
        namespace,
        "jobs",
        name,
        body=client.V1DeleteOptions(
            api_version="v1", kind="DeleteOptions", preconditions=client.V1Preconditions(uid=uid)
        ),
        _preload_content=False,
        _request_timeout=_TIMEOUT,
    )
    return _raw(response)
