"""Which namespaces a request may see: the one place where RBAC is enforced for every page.

Every view reads cluster data through ``get_cluster_cache().snapshot(namespaces=visible_namespaces(request))``,
so restricting a user's view of Jobs, PodGroups, Pods and Events needs only this function to change.
"""

from __future__ import annotations

from django.http import HttpRequest


def visible_namespaces(request: HttpRequest) -> frozenset[str] | None:
    """Return the namespaces ``request`` may read, or None for every namespace (cluster-wide).

    Queues are cluster-scoped and are not filtered by this set.
    """
    return None
