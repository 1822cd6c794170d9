"""The access layer: who is asking, and which namespaces they may see.

``VOLCANO_UI_ACCESS_MODE`` (docs/deployment.md#access-modes):

- ``none``: no identity; every namespace is visible, nothing can be changed (kiosk).
- ``proxy``: identity from an authenticating reverse proxy's headers (``X-Forwarded-User`` and
  ``X-Forwarded-Groups`` by default), believed only when the peer address is in
  ``VOLCANO_UI_TRUSTED_PROXIES``.
- ``token``: identity returned by a TokenReview of the bearer token given on the sign-in form,
  kept with the token in a server-side session (dashboard/auth_views.py); the token is reviewed
  again every ``VOLCANO_UI_TOKEN_RECHECK_SECONDS`` and the session ends when it is refused.

In both authenticated modes a user sees the namespaces in which Kubernetes RBAC lets them *list
Volcano Jobs* (``list jobs.batch.volcano.sh``), as decided by SubjectAccessReviews sent with the
dashboard's own credentials and reused for ``VOLCANO_UI_ACCESS_CACHE_SECONDS``. Views pass
``visible_namespaces(request)`` to ``get_cluster_cache().snapshot(namespaces=...)``, so every page,
fragment, YAML view, count and total is computed from that restricted snapshot.

Reviews never hold a page: they are asked in parallel and a request waits for them at most
``VOLCANO_UI_ACCESS_WAIT_SECONDS`` in total. When the API server cannot answer, the last known
answer is served (up to ``VOLCANO_UI_ACCESS_STALE_SECONDS`` old) and the page header says
"permissions as of <time>"; a failed review is retried after a backoff, not on every request. Only a
question that was never answered is "no" (fail closed), and the page says permissions could not be
checked.
"""

from __future__ import annotations

import enum
import hashlib
import ipaddress
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.http import HttpRequest

from dashboard.kube import reviews

log = logging.getLogger("volcano_ui.access")

#: The RBAC question that decides namespace visibility: may the user list Volcano Jobs there?
VISIBILITY = ("list", "batch.volcano.sh", "jobs")
SESSION_KEY = "volcano_ui_identity"
#: The session's bearer token (token mode); sessions are stored server-side, never in the cookie.
TOKEN_SESSION_KEY = "volcano_ui_token"
_MAX_CACHED = 50_000
# Reviews in flight at once per process; each holds one connection to the API server.
_REVIEW_THREADS = 16
# Seconds before a failed review is asked again: doubling from the first to the second value.
_BACKOFF_INITIAL, _BACKOFF_MAX = 1.0, 30.0
# At most one "a review failed" warning per this many seconds (a stall fails every namespace's).
_WARNING_EVERY = 30.0


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
        return _token_identity(request)
    return None


def token_key(token: str) -> tuple:
    """The key of ``token`` in ``token_checks``: its SHA-256, so the cache holds no credential."""
    return (hashlib.sha256(token.encode()).hexdigest(),)


def _token_identity(request: HttpRequest) -> Identity | None:
    """The signed-in identity of a token-mode session, after checking that its token is still valid.

    The token is kept server-side in the session (dashboard/auth_views.py) and asked about again
    with a TokenReview once its last verdict is older than VOLCANO_UI_TOKEN_RECHECK_SECONDS (within
    VOLCANO_UI_ACCESS_WAIT_SECONDS; while the API server cannot answer, the session goes on). A
    token the API server no longer authenticates ends the session.
    """
    session = getattr(request, "session", None)
    if session is None:
        return None
    data = session.get(SESSION_KEY)
    token = session.get(TOKEN_SESSION_KEY)
    if not isinstance(data, dict) or not data.get("username") or not isinstance(token, str) or not token:
        return None
    deadline = _deadline(request)
    verdict = token_checks.answers([token_key(token)], lambda _key: _token_valid(token), deadline)[0]
    if verdict.known and not verdict.allowed:
        log.info("session ended: the token is no longer valid", extra={"user": data["username"]})
        session.flush()
        return None
    return Identity(
        username=str(data["username"]),
        groups=tuple(str(g) for g in data.get("groups") or ()),
        uid=str(data.get("uid") or ""),
    )


def _token_valid(token: str) -> bool:
    return reviews.token_review(token) is not None


def _proxy_identity(request: HttpRequest) -> Identity | None:
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return None
    if not any(peer in network for network in settings.VOLCANO_UI_TRUSTED_PROXIES):
        # Anyone can send X-Forwarded-User; only the proxy's word counts.
        return None
    username = request.headers.get(settings.VOLCANO_UI_PROXY_USER_HEADER, "").strip()
    if not username or "," in username:
        # A comma is two user headers joined by the server (the gunicorn worker refuses those
        # outright, dashboard/gunicorn_worker.py): not one identity.
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


class _Entry:
    """One review's state: the last answer (``allowed`` None until one came), when it came (wall
    clock, for the page's notice, and monotonic, for freshness), the failures since, and the review
    in flight, if any."""

    __slots__ = ("allowed", "answered_at", "answered_mono", "failures", "retry_at", "future")

    def __init__(self) -> None:
        self.allowed: bool | None = None
        self.answered_at = 0.0
        self.answered_mono = 0.0
        self.failures = 0
        self.retry_at = 0.0
        self.future: Future | None = None


@dataclass(frozen=True)
class Answer:
    """A review's answer as a request may use it.

    ``allowed``: the decision (False when unknown). ``as_of``: the wall-clock time (epoch seconds) of
    the answer when it is older than VOLCANO_UI_ACCESS_CACHE_SECONDS and the API server could not
    give a newer one, else None. ``known``: False when no answer was ever received (fail closed).
    """

    allowed: bool
    as_of: float | None = None
    known: bool = True


class _ReviewCache:
    """Review answers (True/False) by key: for SubjectAccessReviews (user, groups, verb, group,
    resource, namespace, name); for TokenReviews (SHA-256 of the token,).

    An answer is fresh for the seconds of the setting named ``fresh_setting``
    (VOLCANO_UI_ACCESS_CACHE_SECONDS for SubjectAccessReviews); after that it is asked again, and while
    the API server cannot answer, the last answer is still served for up to
    VOLCANO_UI_ACCESS_STALE_SECONDS (marked with its time). A failed review is not asked again
    before a backoff (1 s doubling to 30 s per key), so a stall costs one round of reviews, not one
    per request. Reviews run on a small shared pool; one review per key is in flight at a time.
    """

    def __init__(
        self, review: str = "SubjectAccessReview", fresh_setting: str = "VOLCANO_UI_ACCESS_CACHE_SECONDS"
    ) -> None:
        self._review = review
        self._fresh_setting = fresh_setting
        self._lock = threading.Lock()
        self._entries: dict[tuple, _Entry] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        self._last_warning = 0.0

    # -- the pool: one per process (a forked gunicorn worker must not share its parent's threads)
    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None or self._pool_pid != os.getpid():
            self._pool = ThreadPoolExecutor(max_workers=_REVIEW_THREADS, thread_name_prefix="sar")
            self._pool_pid = os.getpid()
        return self._pool

    def answers(self, keys: list[tuple], ask: Callable[[tuple], bool], deadline: float) -> list[Answer]:
        """The answer to each of ``keys``, asking ``ask(key)`` (in parallel, on the pool) for those
        that are not fresh and not backing off, and waiting for them until ``deadline``
        (time.monotonic()) at the latest. Never raises for a failed review."""
        started = now = time.monotonic()
        fresh_for = getattr(settings, self._fresh_setting)
        waiting: list[Future] = []
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    self._make_room(now)
                    entry = self._entries[key] = _Entry()
                if entry.allowed is not None and now < entry.answered_mono + fresh_for:
                    continue
                if entry.future is None and now >= entry.retry_at:
                    entry.future = self._executor().submit(self._ask, key, entry, ask)
                if entry.future is not None:
                    waiting.append(entry.future)
        if waiting:
            wait(waiting, timeout=max(0.0, deadline - time.monotonic()))
        now = time.monotonic()
        stale_for = settings.VOLCANO_UI_ACCESS_STALE_SECONDS
        out = []
        with self._lock:
            for key in keys:
                entry = self._entries.get(key) or _Entry()
                if entry.allowed is None or now >= entry.answered_mono + fresh_for + stale_for:
                    out.append(Answer(False, known=False))
                elif now < entry.answered_mono + fresh_for or entry.answered_mono >= started:
                    out.append(Answer(entry.allowed))
                else:
                    out.append(Answer(entry.allowed, as_of=entry.answered_at))
        return out

    def _ask(self, key: tuple, entry: _Entry, ask: Callable[[tuple], bool]) -> None:
        from dashboard.health import ACCESS_REVIEWS

        try:
            allowed = ask(key)
        except reviews.ReviewError as exc:
            ACCESS_REVIEWS.labels(self._review, "error").inc()
            with self._lock:
                entry.failures += 1
                backoff = min(_BACKOFF_MAX, _BACKOFF_INITIAL * 2 ** (entry.failures - 1))
                entry.retry_at = time.monotonic() + backoff
                entry.future = None
                warn = time.monotonic() - self._last_warning > _WARNING_EVERY
                if warn:
                    self._last_warning = time.monotonic()
            if warn:
                log.warning("a %s failed (last known answers are served): %s", self._review, exc)
            return
        except BaseException:
            with self._lock:
                entry.future = None
            raise
        ACCESS_REVIEWS.labels(self._review, "allowed" if allowed else "denied").inc()
        with self._lock:
            entry.allowed = allowed
            entry.answered_at = time.time()
            entry.answered_mono = time.monotonic()
            entry.failures = 0
            entry.retry_at = 0.0
            entry.future = None

    def _make_room(self, now: float) -> None:
        if len(self._entries) < _MAX_CACHED:
            return
        keep = getattr(settings, self._fresh_setting) + settings.VOLCANO_UI_ACCESS_STALE_SECONDS
        self._entries = {
            k: e for k, e in self._entries.items() if e.future is not None or now < e.answered_mono + keep
        }
        if len(self._entries) >= _MAX_CACHED:
            self._entries = {k: e for k, e in self._entries.items() if e.future is not None}

    def record(self, key: tuple, allowed: bool) -> None:
        """Store an answer obtained elsewhere (the sign-in's own TokenReview) as fresh."""
        with self._lock:
            self._make_room(time.monotonic())
            entry = self._entries.setdefault(key, _Entry())
            entry.allowed, entry.answered_at, entry.answered_mono = allowed, time.time(), time.monotonic()
            entry.failures, entry.retry_at = 0, 0.0

    def expire(self) -> None:
        """Make every answer due for renewal now, as VOLCANO_UI_ACCESS_CACHE_SECONDS running out
        would (the answers stay as last known ones)."""
        age = getattr(settings, self._fresh_setting)
        with self._lock:
            for entry in self._entries.values():
                if entry.allowed is not None:
                    entry.answered_mono = min(entry.answered_mono, time.monotonic() - age)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


review_cache = _ReviewCache()
#: TokenReview verdicts of signed-in sessions' tokens (token mode), keyed by the token's SHA-256:
#: "still valid?", renewed every VOLCANO_UI_TOKEN_RECHECK_SECONDS.
token_checks = _ReviewCache("TokenReview", "VOLCANO_UI_TOKEN_RECHECK_SECONDS")


def _key(identity: Identity, verb: str, group: str, resource: str, namespace: str, name: str) -> tuple:
    return (identity.username, identity.groups, verb, group, resource, namespace, name)


def _review(key: tuple) -> bool:
    username, groups, verb, group, resource, namespace, name = key
    return reviews.subject_access_review(
        user=username,
        groups=groups,
        verb=verb,
        group=group,
        resource=resource,
        namespace=namespace,
        name=name,
    )


def _deadline(request: HttpRequest | None = None) -> float:
    """When waiting for reviews ends: VOLCANO_UI_ACCESS_WAIT_SECONDS after the request's first
    wait began, so the token re-check and the visibility reviews share one budget."""
    if request is None:
        return time.monotonic() + settings.VOLCANO_UI_ACCESS_WAIT_SECONDS
    if not hasattr(request, "_volcano_access_deadline"):
        request._volcano_access_deadline = time.monotonic() + settings.VOLCANO_UI_ACCESS_WAIT_SECONDS  # type: ignore[attr-defined]
    return request._volcano_access_deadline  # type: ignore[attr-defined]


#: Seconds a page refused for an unchecked permission asks the browser to wait (``Retry-After``):
#: a failed review is asked again after a backoff of 1 s doubling to 30 s.
UNCHECKED_RETRY_SECONDS = 5


class Decision(enum.Enum):
    """What the API server said about one permission: ALLOWED, DENIED, or UNCHECKED (it never
    answered, or its last answer is older than VOLCANO_UI_ACCESS_CACHE_SECONDS and could not be
    renewed within VOLCANO_UI_ACCESS_WAIT_SECONDS)."""

    ALLOWED = "allowed"
    DENIED = "denied"
    UNCHECKED = "unchecked"


def decide(
    identity: Identity | None, verb: str, group: str, resource: str, namespace: str = "", name: str = ""
) -> Decision:
    """May ``identity`` do ``verb`` on ``resource`` (API ``group``) in ``namespace``, by a fresh
    answer? ``namespace=""`` asks about every namespace at once. Anonymous identities may do
    nothing (DENIED). A page acts only on ALLOWED, and says which of the other two it got."""
    if identity is None:
        return Decision.DENIED
    key = _key(identity, verb, group, resource, namespace, name)
    answer = review_cache.answers([key], _review, _deadline())[0]
    if not answer.known or answer.as_of is not None:
        return Decision.UNCHECKED
    return Decision.ALLOWED if answer.allowed else Decision.DENIED


def is_allowed(
    identity: Identity | None, verb: str, group: str, resource: str, namespace: str = "", name: str = ""
) -> bool:
    """``decide(...)`` is ALLOWED: for a button offered or not, where unchecked is "not offered"."""
    return decide(identity, verb, group, resource, namespace, name) is Decision.ALLOWED


def _note(request: HttpRequest, answers: list[Answer]) -> None:
    """Remember on ``request`` the oldest stale answer used and whether any was unknown."""
    stale = [a.as_of for a in answers if a.as_of is not None]
    if stale:
        previous = getattr(request, "_volcano_access_as_of", None)
        request._volcano_access_as_of = min([*stale, *([previous] if previous else [])])  # type: ignore[attr-defined]
    if any(not a.known for a in answers):
        request._volcano_access_unknown = True  # type: ignore[attr-defined]


def visible_namespaces(request: HttpRequest) -> frozenset[str] | None:
    """The namespaces ``request``'s user may see, for ``snapshot(namespaces=...)``.

    None means every namespace (access mode ``none``, or a user allowed to list Volcano Jobs
    cluster-wide). Otherwise a frozenset, empty for an anonymous request, of the namespaces known
    to the cache (``Snapshot.namespaces()``) in which the user may list Volcano Jobs. Computed once
    per request, within VOLCANO_UI_ACCESS_WAIT_SECONDS: answers the API server cannot renew in time
    are served as last known (``access_as_of(request)``); namespaces never answered are not
    visible (``access_unknown(request, namespace)``).
    """
    if settings.VOLCANO_UI_ACCESS_MODE == "none":
        return None
    if hasattr(request, "_volcano_visible_namespaces"):
        return request._volcano_visible_namespaces
    identity = current_identity(request)
    result: frozenset[str] | None
    if identity is None:
        result = frozenset()
    else:
        deadline = _deadline(request)
        cluster_wide = review_cache.answers([_key(identity, *VISIBILITY, "", "")], _review, deadline)
        _note(request, cluster_wide)
        if cluster_wide[0].allowed:
            result = None
        else:
            from dashboard.kube import get_cluster_cache

            known = get_cluster_cache().snapshot().namespaces()
            keys = [_key(identity, *VISIBILITY, ns, "") for ns in known]
            answers = review_cache.answers(keys, _review, deadline)
            _note(request, answers)
            result = frozenset(ns for ns, a in zip(known, answers, strict=True) if a.allowed)
            request._volcano_unknown_namespaces = frozenset(  # type: ignore[attr-defined]
                ns for ns, a in zip(known, answers, strict=True) if not a.known
            )
    request._volcano_visible_namespaces = result  # type: ignore[attr-defined]
    return result


def may_see_namespace(request: HttpRequest, namespace: str) -> bool:
    """Is ``namespace`` among ``visible_namespaces(request)``?"""
    visible = visible_namespaces(request)
    return visible is None or namespace in visible


def access_as_of(request: HttpRequest) -> datetime | None:
    """When the oldest permission answer this request used was given, if the API server could not
    renew it (the page then says "permissions as of"); None when every answer was fresh."""
    as_of = getattr(request, "_volcano_access_as_of", None)
    return datetime.fromtimestamp(as_of, tz=UTC) if as_of is not None else None


def access_unknown(request: HttpRequest, namespace: str | None = None) -> bool:
    """Did the API server never answer whether this request's user may see ``namespace`` (any
    namespace when None)? Such a namespace is hidden, but an object in it is not known to be gone."""
    if namespace is None:
        return bool(getattr(request, "_volcano_access_unknown", False))
    visible_namespaces(request)
    return namespace in getattr(request, "_volcano_unknown_namespaces", frozenset())


def context(request: HttpRequest) -> dict:
    """Template context processor: the signed-in identity, the access mode, and whether the
    permissions behind the page are last known ones (``volcano_access_as_of``, a datetime) or could
    not be checked at all (``volcano_access_unknown``), for the page header."""
    return {
        "volcano_identity": getattr(request, "identity", None),
        "volcano_access_mode": settings.VOLCANO_UI_ACCESS_MODE,
        "volcano_actions_enabled": settings.VOLCANO_UI_ENABLE_ACTIONS,
        "volcano_access_as_of": access_as_of(request),
        "volcano_access_unknown": access_unknown(request),
    }
