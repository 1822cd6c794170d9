"""The kinds the cache watches, with their expected API group/version and their indexes.

Group/version/plural are the served versions of Volcano's CRDs and the core API.
``accepted_versions`` lists other versions whose shape the pages can read: discovery
(dashboard/kube/discovery.py) picks the expected version when served, else the first accepted one,
else reports the kind as served in an unsupported version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dashboard.kube import trim
from dashboard.volcano.events import event_involved_uid, event_ref, is_warning
from dashboard.volcano.gang import podgroup_below_gang
from dashboard.volcano.nodes import pod_holds_resources
from dashboard.volcano.objects import as_str, namespace, owner_uids
from dashboard.volcano.objects import name as obj_name
from dashboard.volcano.objects import uid as obj_uid
from dashboard.volcano.phases import job_phase, podgroup_phase

# GROUP_NAME_ANNOTATION and event_ref are re-exported: the cache modules key and link objects by them.
from dashboard.volcano.pods import GROUP_NAME_ANNOTATION as GROUP_NAME_ANNOTATION
from dashboard.volcano.pods import pod_group_name, pod_is_crashlooping, pod_job_name
from dashboard.volcano.queues import parent_name as parent_of_queue
from dashboard.volcano.queues import queue_of

Indexer = Callable[[dict[str, Any]], Iterable[Any]]


def obj_namespace(obj: dict[str, Any]) -> str | None:
    """metadata.namespace as a cache key: None for cluster-scoped objects."""
    return namespace(obj) or None


def obj_key(obj: dict[str, Any]) -> tuple[str | None, str]:
    return (obj_namespace(obj), obj_name(obj))


def _index_namespace(obj: dict[str, Any]) -> Iterable[Any]:
    return (obj_namespace(obj),)


def _index_uid(obj: dict[str, Any]) -> Iterable[Any]:
    uid = obj_uid(obj)
    return (uid,) if uid else ()


def _index_queue(obj: dict[str, Any]) -> Iterable[Any]:
    return (queue_of(obj),)


def _index_owner_uid(obj: dict[str, Any]) -> Iterable[Any]:
    return owner_uids(obj)


def _index_parent(obj: dict[str, Any]) -> Iterable[Any]:
    parent = parent_of_queue(obj)
    return (parent,) if parent else ()


def _index_pod_group(pod: dict[str, Any]) -> Iterable[Any]:
    group = pod_group_name(pod)
    return ((obj_namespace(pod), group),) if group else ()


def _index_pod_crashloop(pod: dict[str, Any]) -> Iterable[Any]:
    # The overview lists crash-looping pods; an index spares it a walk over every pod (50,000 at
    # scale) on each recompute.
    return (True,) if pod_is_crashlooping(pod) else ()


def _index_pod_job(pod: dict[str, Any]) -> Iterable[Any]:
    job = pod_job_name(pod)
    return ((obj_namespace(pod), job),) if job else ()


def _index_pod_node(pod: dict[str, Any]) -> Iterable[Any]:
    # Pods per node (the nodes pages): spec.nodeName of bound pods.
    spec = pod.get("spec")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    return (node,) if isinstance(node, str) and node else ()


def _index_pod_holding_node(pod: dict[str, Any]) -> Iterable[Any]:
    # The pods holding resources per node: a spine HyperNode's page counts them on every node.
    if not pod_holds_resources(pod):
        return ()
    return (as_str(pod["spec"]["nodeName"]),)


def _index_pod_gang_node(pod: dict[str, Any]) -> Iterable[Any]:
    # ((namespace, PodGroup), node) of a pod holding resources: the HyperNode tree places every
    # running gang by the nodes its pods sit on, from these counts instead of a walk over the pods.
    group = pod_group_name(pod)
    if not group or not pod_holds_resources(pod):
        return ()
    return (((namespace(pod), group), as_str(pod["spec"]["nodeName"])),)


def _index_job_owner(job: dict[str, Any]) -> Iterable[Any]:
    # The Jobs a CronJob or a JobFlow created (their controller ownerReference).
    return owner_uids(job)


def _index_job_phase(job: dict[str, Any]) -> Iterable[Any]:
    # Overview counts and its pending/failed lists read buckets instead of walking 10,000 Jobs.
    return (job_phase(job),)


def _index_pg_phase(pg: dict[str, Any]) -> Iterable[Any]:
    return (podgroup_phase(pg),)


def _index_pg_queue_phase(pg: dict[str, Any]) -> Iterable[Any]:
    # PodGroup counts per queue and phase (the queue tables) without a walk per queue.
    return ((queue_of(pg), podgroup_phase(pg)),)


def _index_pg_below_gang(pg: dict[str, Any]) -> Iterable[Any]:
    return (True,) if podgroup_below_gang(pg) else ()


def _index_event_uid(event: dict[str, Any]) -> Iterable[Any]:
    uid = event_involved_uid(event)
    return (uid,) if uid else ()


def _index_event_ref(event: dict[str, Any]) -> Iterable[Any]:
    return (event_ref(event),)


def _index_event_warning(event: dict[str, Any]) -> Iterable[Any]:
    # The overview's "recent warning events" reads this bucket instead of all 20,000 events.
    return (True,) if is_warning(event) else ()


@dataclass(frozen=True)
class KindSpec:
    """One watched kind. ``name`` is the Snapshot attribute (jobs, podgroups, ...)."""

    name: str
    kind: str
    group: str  # "" for the core API
    version: str
    plural: str
    namespaced: bool
    trim: Callable[[dict[str, Any]], dict[str, Any]]
    indexers: dict[str, Indexer] = field(default_factory=dict[str, Any])
    accepted_versions: tuple[str, ...] = ()
    # Watched in this one namespace only ("" for cluster-wide): the Volcano components' Deployments.
    watch_namespace: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, version: str | None = None) -> str:
        """The cluster-wide collection path, e.g. /apis/batch.volcano.sh/v1alpha1/jobs."""
        version = version or self.version
        scope = f"namespaces/{self.watch_namespace}/" if self.watch_namespace else ""
        if self.group:
            return f"/apis/{self.group}/{version}/{scope}{self.plural}"
        return f"/api/{version}/{scope}{self.plural}"


JOBS = KindSpec(
    name="jobs",
    kind="Job",
    group="batch.volcano.sh",
    version="v1alpha1",
    plural="jobs",
    namespaced=True,
    trim=trim.trim_job,
    indexers={
        "namespace": _index_namespace,
        "uid": _index_uid,
        "queue": _index_queue,
        "phase": _index_job_phase,
        "owner_uid": _index_job_owner,
    },
)
PODGROUPS = KindSpec(
    name="podgroups",
    kind="PodGroup",
    group="scheduling.volcano.sh",
    version="v1beta1",
    plural="podgroups",
    namespaced=True,
    trim=trim.trim_podgroup,
    indexers={
        "namespace": _index_namespace,
        "queue": _index_queue,
        "owner_uid": _index_owner_uid,
        "phase": _index_pg_phase,
        "queue_phase": _index_pg_queue_phase,
        "below_gang": _index_pg_below_gang,
    },
)
QUEUES = KindSpec(
    name="queues",
    kind="Queue",
    group="scheduling.volcano.sh",
    version="v1beta1",
    plural="queues",
    namespaced=False,
    trim=trim.trim_object,
    indexers={"parent": _index_parent},
)
PODS = KindSpec(
    name="pods",
    kind="Pod",
    group="",
    version="v1",
    plural="pods",
    namespaced=True,
    trim=trim.trim_pod,
    indexers={
        "namespace": _index_namespace,
        "group": _index_pod_group,
        "job": _index_pod_job,
        "crashloop": _index_pod_crashloop,
        "node": _index_pod_node,
        "holding_node": _index_pod_holding_node,
        "gang_node": _index_pod_gang_node,
    },
)
EVENTS = KindSpec(
    name="events",
    kind="Event",
    group="",
    version="v1",
    plural="events",
    namespaced=True,
    trim=trim.trim_event,
    indexers={
        "namespace": _index_namespace,
        "involved_uid": _index_event_uid,
        "involved_ref": _index_event_ref,
        "warning": _index_event_warning,
    },
)

NODES = KindSpec(
    name="nodes",
    kind="Node",
    group="",
    version="v1",
    plural="nodes",
    namespaced=False,
    trim=trim.trim_node,
)
HYPERNODES = KindSpec(
    name="hypernodes",
    kind="HyperNode",
    group="topology.volcano.sh",
    version="v1alpha1",
    plural="hypernodes",
    namespaced=False,
    trim=trim.trim_object,
)
CRONJOBS = KindSpec(
    name="cronjobs",
    kind="CronJob",
    group="batch.volcano.sh",
    version="v1alpha1",
    plural="cronjobs",
    namespaced=True,
    trim=trim.trim_object,
    indexers={"namespace": _index_namespace, "uid": _index_uid},
)
JOBFLOWS = KindSpec(
    name="jobflows",
    kind="JobFlow",
    group="flow.volcano.sh",
    version="v1alpha1",
    plural="jobflows",
    namespaced=True,
    trim=trim.trim_object,
    indexers={"namespace": _index_namespace, "uid": _index_uid},
)
JOBTEMPLATES = KindSpec(
    name="jobtemplates",
    kind="JobTemplate",
    group="flow.volcano.sh",
    version="v1alpha1",
    plural="jobtemplates",
    namespaced=True,
    trim=trim.trim_object,
    indexers={"namespace": _index_namespace},
)
# The Volcano components (scheduler, controllers, admission) run as Deployments in one namespace;
# the cache (cache.py) watches them there, in CacheOptions.volcano_namespace.
DEPLOYMENTS = KindSpec(
    name="deployments",
    kind="Deployment",
    group="apps",
    version="v1",
    plural="deployments",
    namespaced=True,
    trim=trim.trim_deployment,
    indexers={"namespace": _index_namespace},
    watch_namespace="volcano-system",
)

ALL_KINDS: tuple[KindSpec, ...] = (
    JOBS,
    PODGROUPS,
    QUEUES,
    PODS,
    EVENTS,
    NODES,
    HYPERNODES,
    CRONJOBS,
    JOBFLOWS,
    JOBTEMPLATES,
    DEPLOYMENTS,
)
KINDS_BY_NAME = {k.name: k for k in ALL_KINDS}
