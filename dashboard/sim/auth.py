"""Bearer-token users and their permissions, answering requests, SubjectAccessReviews and
TokenReviews.

The model is a small subset of Kubernetes RBAC: a user has rules (verbs x API groups x resources)
that apply either cluster-wide (``namespaces=None``, a ClusterRoleBinding) or only inside the
listed namespaces (RoleBindings). A namespace-scoped user may additionally read the cluster-scoped
resources in ``cluster_read`` (default: Volcano queues, which a dashboard user needs to see), as a
small ClusterRole would grant. The group ``system:masters`` may do everything, as upstream.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

READ = frozenset({"get", "list", "watch"})
MASTERS = "system:masters"


@dataclass(frozen=True)
class Rule:
    """An RBAC PolicyRule: ``"*"`` in any set matches everything. Resources may name a
    subresource ("jobs/status"); "jobs" does not cover "jobs/status", as upstream."""

    verbs: frozenset[str]
    groups: frozenset[str] = frozenset({"*"})
    resources: frozenset[str] = frozenset({"*"})

    def allows(self, verb: str, group: str, resource: str) -> bool:
        return (
            ("*" in self.verbs or verb in self.verbs)
            and ("*" in self.groups or group in self.groups)
            and ("*" in self.resources or resource in self.resources)
        )


# Default for dashboard users: read everything, and create Commands (to suspend/resume Jobs, as
# `vcctl job suspend` does, volcano-sh/volcano pkg/cli/job).
DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(READ),
    Rule(frozenset({"create"}), frozenset({"bus.volcano.sh"}), frozenset({"commands"})),
)
ADMIN_RULES: tuple[Rule, ...] = (Rule(frozenset({"*"})),)


@dataclass(frozen=True)
class User:
    name: str
    token: str
    namespaces: frozenset[str] | None = None  # None = cluster-wide
    groups: tuple[str, ...] = ()
    rules: tuple[Rule, ...] = DEFAULT_RULES
    cluster_read: frozenset[str] = frozenset({"queues"})
    uid: str = field(default="")

    def describe(self) -> dict:
        return {
            "username": self.name,
            "uid": self.uid or f"sim-user-{self.name}",
            "groups": [*self.groups, "system:authenticated"],
        }


class Authorizer:
    """Thread-safe registry of token users plus the authorization decision."""

    def __init__(self, admin_token: str | None = None) -> None:
        self._lock = threading.Lock()
        self._by_token: dict[str, User] = {}
        self._by_name: dict[str, User] = {}
        self.admin_token = admin_token or f"sim-admin-{secrets.token_hex(16)}"
        self.add(User("admin", self.admin_token, None, (MASTERS,), ADMIN_RULES))

    def add(self, user: User) -> User:
        with self._lock:
            old = self._by_name.pop(user.name, None)
            if old is not None:
                self._by_token.pop(old.token, None)
            if user.token in self._by_token:
                raise ValueError(f"token already belongs to user {self._by_token[user.token].name!r}")
            self._by_token[user.token] = user
            self._by_name[user.name] = user
        return user

    def add_user(
        self,
        name: str,
        token: str,
        namespaces: Iterable[str] | None = None,
        groups: Iterable[str] = (),
        *,
        verbs: Iterable[str] | None = None,
        cluster_read: Iterable[str] = ("queues",),
    ) -> User:
        """Add (or replace) a token user. ``namespaces`` None = cluster-wide. ``verbs`` replaces the
        default rules (read + create commands) with "these verbs on every resource"."""
        rules = DEFAULT_RULES if verbs is None else (Rule(frozenset(verbs)),)
        return self.add(
            User(
                name,
                token,
                None if namespaces is None else frozenset(namespaces),
                tuple(groups),
                rules,
                frozenset(cluster_read),
            )
        )

    def authenticate(self, token: str | None) -> User | None:
        if not token:
            return None
        with self._lock:
            return self._by_token.get(token)

    def user_named(self, name: str) -> User | None:
        with self._lock:
            return self._by_name.get(name)

    def users(self) -> list[User]:
        with self._lock:
            return list(self._by_name.values())

    @staticmethod
    def decide(
        user: User | None,
        groups: Iterable[str],
        verb: str,
        group: str,
        resource: str,
        namespace: str | None,
        *,
        namespaced: bool,
    ) -> tuple[bool, str]:
        """(allowed, reason). ``resource`` is the plural, optionally "/subresource";
        ``namespace`` None/"" for cluster-wide requests; ``namespaced`` is the resource's scope."""
        all_groups = set(groups) | set(user.groups if user else ())
        if MASTERS in all_groups:
            return True, "member of system:masters"
        if user is None:
            return False, "no RBAC policy matched"
        base = resource.split("/", 1)[0]
        if user.namespaces is not None:
            if not namespaced:
                if base in user.cluster_read and verb in READ:
                    return True, f"user {user.name} may read {base}"
                return False, f"user {user.name} is limited to namespaces {sorted(user.namespaces)}"
            if not namespace or namespace not in user.namespaces:
                return False, f"user {user.name} is limited to namespaces {sorted(user.namespaces)}"
        for rule in user.rules:
            if rule.allows(verb, group, resource):
                return True, f"allowed for user {user.name}"
        return False, "no RBAC policy matched"

    def allowed(
        self, user: User, verb: str, group: str, resource: str, namespace: str | None, *, namespaced: bool
    ) -> tuple[bool, str]:
        return self.decide(user, (), verb, group, resource, namespace, namespaced=namespaced)


def forbidden_message(
    user: User, verb: str, group: str, resource: str, namespace: str | None, name: str | None = None
) -> str:
    """The upstream RBAC denial message."""
    full = f"{resource.split('/', 1)[0]}.{group}" if group else resource.split("/", 1)[0]
    what = f'{full} "{name}"' if name else full
    sub = f"/{resource.split('/', 1)[1]}" if "/" in resource else ""
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (
        f'{what} is forbidden: User "{user.name}" cannot {verb} resource "{resource.split("/", 1)[0]}{sub}" '
        f'in API group "{group}" {where}'
    )
