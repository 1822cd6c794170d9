"""The access layer: who is asking, and which namespaces they may see.

``VOLCANO_UI_ACCESS_MODE`` (README "Access control"):

- ``none``: no identity; every namespace is visible, nothing can be changed (kiosk).
- ``proxy``: identity from an authenticating reverse proxy's headers (``X-Forwarded-User`` and
  ``X-Forwarded-Groups`` by default), believed only when the peer address is in
  ``VOLCANO_UI_TRUSTED_PROXIES``.
- ``token``: identity returned by a TokenReview of the bearer token given on the sign-in form,
  kept in the signed session cookie (dashboard/auth_views.py).

In both authenticated modes a user sees the namespaces in which Kubernetes RBAC lets them *list
Volcano Jobs* (``list jobs.batch.volcano.sh``), as decided by SubjectAccessReviews sent with the
dashboard's own credentials and reused for ``VOLCANO_UI_ACCESS_CACHE_SECONDS``. Views pass
``visible_namespaces(request)`` to ``get_cluster_cache().snapshot(namespaces=...)``, so every page,
fragment, YAML view, count and total is computed from that restricted snapshot. When the API server
cannot answer a review the answer is "no" (fail closed) and is not cached.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest

from dashboard.kube import reviews

log = logging.getLogger("volcano_ui.access")

#: The RBAC question that decides namespace visibility: may the user list Volcano Jobs there?
VISIBILITY = ("list", "batch.volcano.sh", "jobs")
SESSION_KEY = "volcano_ui_identity"
_MAX_CACHED = 50_000


@dataclass(frozen=True)
class Identity:
    """An authenticated user as Kubernetes RBAC knows them (username and groups)."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""


def identity_from_request(request: HttpRequest) -> Identity | None:
    """The identity of ``request`` under the configured access mode, or None (anonymous)."""
    mode = settings.VOLCANO_UI_ACCESS_MODE
    if mode == "proxy":
        return _proxy_identity(request)
    if mode == "token":
        data = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
        if not isinstance(data, dict) or not data.get("username"):
            return None
        return Identity(
            username=str(data["username"]),
            groups=tuple(str(g) for g in data.get("groups") or ()),
            uid=str(data.get("uid") or ""),
        )
    return None


def _proxy_identity(request: HttpRequest) -> Identity | None:
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return None
    if not any(peer in network for network in settings.VOLCANO_UI_TRUSTED_PROXIES):
        # Anyone can send X-Forwarded-User; only the proxy's word counts.
        return None
    username = request.headers.get(settings.VOLCANO_UI_PROXY_USER_HEADER, "").strip()
    if not username:
        return None
    raw_groups = request.headers.get(settings.VOLCANO_UI_PROXY_GROUPS_HEADER, "")
    groups = [g.strip() for g in raw_groups.split(",") if g.strip()]
    # The API server adds system:authenticated to every authenticated user; a SubjectAccessReview
    # only knows the groups we send, so add it for RBAC bindings made to all signed-in users.
    if "system:authenticated" not in groups:
        groups.append("system:authenticated")
    return Identity(username=username, groups=tuple(groups))


def current_identity(request: HttpRequest) -> Identity | None:
    """``request.identity`` as set by IdentityMiddleware (computed here if the middleware did not run)."""
    # django-stubs' HttpRequest declares no such attribute: IdentityMiddleware adds it.
    if not hasattr(request, "identity"):
        request.identity = identity_from_request(request)  # type: ignore[attr-defined]
    identity: Identity | None = request.identity  # type: ignore[attr-defined]
    return identity


class _ReviewCache:
    """SubjectAccessReview answers keyed by (user, groups, verb, group, resource, namespace, name)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[tuple, tuple[bool, float]] = {}

    def get(self, key: tuple) -> bool | None:
        with self._lock:
            hit = self._answers.get(key)
        if hit is None or hit[1] < time.monotonic():
            return None
        return hit[0]

    def put(self, key: tuple, allowed: bool, ttl: float) -> None:
        if ttl <= 0:
            return
        now = time.monotonic()
        with self._lock:
            if len(self._answers) >= _MAX_CACHED:
                self._answers = {k: v for k, v in self._answers.items() if v[1] >= now}
                if len(self._answers) >= _MAX_CACHED:
                    self._answers.clear()
            self._answers[key] = (allowed, now + ttl)

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()


review_cache = _ReviewCache()


def _key(identity: Identity, verb: str, group: str, resource: str, namespace: str, name: str) -> tuple:
    return (identity.username, identity.groups, verb, group, resource, namespace, name)


def is_allowed(
    identity: Identity | None, verb: str, group: str, resource: str, namespace: str = "", name: str = ""
) -> bool:
    """May ``identity`` do ``verb`` on ``resource`` (API ``group``) in ``namespace``?

    ``namespace=""`` asks about every namespace at once. Anonymous identities may do nothing.
    Answers are reused for VOLCANO_UI_ACCESS_CACHE_SECONDS; an unanswerable review is "no".
    """
    from dashboard.health import ACCESS_REVIEWS

    if identity is None:
        return False
    key = _key(identity, verb, group, resource, namespace, name)
    cached = review_cache.get(key)
    if cached is not None:
        return cached
    try:
        allowed = reviews.subject_access_review(
            user=identity.username,
            groups=identity.groups,
            verb=verb,
            group=group,
            resource=resource,
            namespace=namespace,
            name=name,
        )
    except reviews.ReviewError as exc:
        ACCESS_REVIEWS.labels("SubjectAccessReview", "error").inc()
        log.warning("access denied because the review failed: %s", exc, extra={"user": identity.username})
        return False
    ACCESS_REVIEWS.labels("SubjectAccessReview", "allowed" if allowed else "denied").inc()
    review_cache.put(key, allowed, settings.VOLCANO_UI_ACCESS_CACHE_SECONDS)
    return allowed


def visible_namespaces(request: HttpRequest) -> frozenset[str] | None:
    """The namespaces ``request``'s user may see, for ``snapshot(namespaces=...)``.

    None means every namespace (access mode ``none``, or a user allowed to list Volcano Jobs
    cluster-wide). Otherwise a frozenset, empty for an anonymous request, of the namespaces known
    to the cache (``Snapshot.namespaces()``) in which the user may list Volcano Jobs. Computed once
    per request.
    """
    if settings.VOLCANO_UI_ACCESS_MODE == "none":
        return None
    if hasattr(request, "_volcano_visible_namespaces"):
        return request._volcano_visible_namespaces
    identity = current_identity(request)
    result: frozenset[str] | None
    if identity is None:
        result = frozenset()
    elif is_allowed(identity, *VISIBILITY, namespace=""):
        result = None
    else:
        from dashboard.kube import get_cluster_cache

        known = get_cluster_cache().snapshot().namespaces()
        result = frozenset(ns for ns, ok in zip(known, _ask_many(identity, known), strict=True) if ok)
    request._volcano_visible_namespaces = result  # type: ignore[attr-defined]
    return result


def _ask_many(identity: Identity, namespaces: list[str]) -> list[bool]:
    """``is_allowed(list jobs)`` for each namespace; the uncached ones are asked a few at a time,
    so a user's first page over hundreds of namespaces waits for rounds of reviews, not a queue."""
    uncached = [ns for ns in namespaces if review_cache.get(_key(identity, *VISIBILITY, ns, "")) is None]
    if len(uncached) > 1:
        with ThreadPoolExecutor(max_workers=min(8, len(uncached)), thread_name_prefix="sar") as pool:
            list(pool.map(lambda ns: is_allowed(identity, *VISIBILITY, namespace=ns), uncached))
    return [is_allowed(identity, *VISIBILITY, namespace=ns) for ns in namespaces]


def may_see_namespace(request: HttpRequest, namespace: str) -> bool:
    """Is ``namespace`` among ``visible_namespaces(request)``?"""
    visible = visible_namespaces(request)
    return visible is None or namespace in visible


def context(request: HttpRequest) -> dict:
    """Template context processor: the signed-in identity and the access mode, for the page header."""
    return {
        "volcano_identity": getattr(request, "identity", None),
        "volcano_access_mode": settings.VOLCANO_UI_ACCESS_MODE,
        "volcano_actions_enabled": settings.VOLCANO_UI_ENABLE_ACTIONS,
    }
