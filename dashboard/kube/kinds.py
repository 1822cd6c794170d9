"""The kinds the cache watches, with their expected API group/version and their indexes.

Group/version/plural come from shared/volcano/REFERENCE.md §0 (the served CRD versions) and the
core API. ``accepted_versions`` lists other versions whose shape the pages can read: discovery
(dashboard/kube/discovery.py) picks the expected version when served, else the first accepted one,
else reports the kind as served in an unsupported version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dashboard.kube import trim

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"  # REFERENCE.md §4: the scheduler's only key
JOB_NAME_KEY = "volcano.sh/job-name"  # label and annotation on vcjob pods, REFERENCE.md §4

Indexer = Callable[[dict], Iterable[Any]]


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def obj_namespace(obj: dict) -> str | None:
    ns = _meta(obj).get("namespace")
    return ns if isinstance(ns, str) and ns else None


def obj_name(obj: dict) -> str:
    name = _meta(obj).get("name")
    return name if isinstance(name, str) else ""


def obj_uid(obj: dict) -> str:
    uid = _meta(obj).get("uid")
    return uid if isinstance(uid, str) else ""


def obj_key(obj: dict) -> tuple[str | None, str]:
    return (obj_namespace(obj), obj_name(obj))


def queue_of(obj: dict) -> str:
    """spec.queue of a Job or PodGroup; the CRD default is "default" (REFERENCE.md §1, §2)."""
    queue = _spec(obj).get("queue")
    return queue if isinstance(queue, str) and queue else "default"


def parent_of_queue(queue: dict) -> str | None:
    """spec.parent; an empty parent means "root" (the queue controller patches it so, §3)."""
    if obj_name(queue) == "root":
        return None
    parent = _spec(queue).get("parent")
    return parent if isinstance(parent, str) and parent else "root"


def _index_namespace(obj: dict) -> Iterable[Any]:
    return (obj_namespace(obj),)


def _index_uid(obj: dict) -> Iterable[Any]:
    uid = obj_uid(obj)
    return (uid,) if uid else ()


def _index_queue(obj: dict) -> Iterable[Any]:
    return (queue_of(obj),)


def _index_owner_uid(obj: dict) -> Iterable[Any]:
    refs = _meta(obj).get("ownerReferences")
    if not isinstance(refs, list):
        return ()
    return tuple(r["uid"] for r in refs if isinstance(r, dict) and isinstance(r.get("uid"), str))


def _index_parent(obj: dict) -> Iterable[Any]:
    parent = parent_of_queue(obj)
    return (parent,) if parent else ()


def pod_group_name(pod: dict) -> str | None:
    annotations = _meta(pod).get("annotations")
    if isinstance(annotations, dict):
        value = annotations.get(GROUP_NAME_ANNOTATION)
        if isinstance(value, str) and value:
            return value
    return None


def pod_job_name(pod: dict) -> str | None:
    meta = _meta(pod)
    for source in (meta.get("labels"), meta.get("annotations")):
        if isinstance(source, dict):
            value = source.get(JOB_NAME_KEY)
            if isinstance(value, str) and value:
                return value
    return None


def _index_pod_group(pod: dict) -> Iterable[Any]:
    group = pod_group_name(pod)
    return ((obj_namespace(pod), group),) if group else ()


def pod_is_crashlooping(pod: dict) -> bool:
    """True when a container or init container of the Pod waits with reason CrashLoopBackOff
    (Kubernetes ContainerStateWaiting.reason, as kubectl shows it)."""
    status = pod.get("status")
    if not isinstance(status, dict):
        return False
    for field_name in ("containerStatuses", "initContainerStatuses"):
        statuses = status.get(field_name)
        if not isinstance(statuses, list):
            continue
        for cs in statuses:
            state = cs.get("state") if isinstance(cs, dict) else None
            waiting = state.get("waiting") if isinstance(state, dict) else None
            if isinstance(waiting, dict) and waiting.get("reason") == "CrashLoopBackOff":
                return True
    return False


def _index_pod_crashloop(pod: dict) -> Iterable[Any]:
    # The overview lists crash-looping pods; an index spares it a walk over every pod (50,000 at
    # scale) on each recompute.
    return (True,) if pod_is_crashlooping(pod) else ()


def _index_pod_job(pod: dict) -> Iterable[Any]:
    job = pod_job_name(pod)
    return ((obj_namespace(pod), job),) if job else ()


def _phase_str(value: Any) -> str:
    # The pages' phase name of a raw status value (presenters.as_str): "" when absent.
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def job_phase_raw(job: dict) -> str:
    """status.state.phase of a Volcano Job as the pages name it ("" when absent)."""
    status = job.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    return _phase_str(state.get("phase")) if isinstance(state, dict) else ""


def podgroup_phase_raw(pg: dict) -> str:
    """status.phase of a PodGroup as the pages name it ("" when absent)."""
    status = pg.get("status")
    return _phase_str(status.get("phase")) if isinstance(status, dict) else ""


def to_int(value: Any) -> int:
    """A status counter as an int: Volcano's counters use Go ``omitempty``, so a missing key means 0
    (REFERENCE.md, preamble); anything not an integer reads as 0 (presenters re-exports this)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def podgroup_below_gang(pg: dict) -> bool:
    """A Running/Unknown PodGroup whose running + succeeded pods are fewer than spec.minMember
    (the overview's "gangs below minMember"; same arithmetic as presenters.podgroup_gang/make_gang:
    negative counters count as 0, a negative sum as not ready)."""
    if podgroup_phase_raw(pg) not in ("Running", "Unknown"):
        return False
    status = pg.get("status") if isinstance(pg.get("status"), dict) else {}
    running, succeeded = to_int(status.get("running")), to_int(status.get("succeeded"))
    ready = running + succeeded if min(running, succeeded) >= 0 else -1
    return max(0, ready) < max(0, to_int(_spec(pg).get("minMember")))


def _index_job_phase(job: dict) -> Iterable[Any]:
    # Overview counts and its pending/failed lists read buckets instead of walking 10,000 Jobs.
    return (job_phase_raw(job),)


def _index_pg_phase(pg: dict) -> Iterable[Any]:
    return (podgroup_phase_raw(pg),)


def _index_pg_queue_phase(pg: dict) -> Iterable[Any]:
    # PodGroup counts per queue and phase (the queue tables) without a walk per queue.
    return ((queue_of(pg), podgroup_phase_raw(pg)),)


def _index_pg_below_gang(pg: dict) -> Iterable[Any]:
    return (True,) if podgroup_below_gang(pg) else ()


def _involved(event: dict) -> dict:
    ref = event.get("involvedObject")
    return ref if isinstance(ref, dict) else {}


def _index_event_uid(event: dict) -> Iterable[Any]:
    uid = _involved(event).get("uid")
    return (uid,) if isinstance(uid, str) and uid else ()


def event_ref(event: dict) -> tuple[str, str | None, str]:
    """(kind, namespace, name) of the event's involvedObject; cluster-scoped objects get None."""
    ref = _involved(event)
    ns = ref.get("namespace")
    return (
        str(ref.get("kind") or ""),
        ns if isinstance(ns, str) and ns else None,
        str(ref.get("name") or ""),
    )


def _index_event_ref(event: dict) -> Iterable[Any]:
    return (event_ref(event),)


def _index_event_warning(event: dict) -> Iterable[Any]:
    # The overview's "recent warning events" reads this bucket instead of all 20,000 events.
    return (True,) if event.get("type") == "Warning" else ()


@dataclass(frozen=True)
class KindSpec:
    """One watched kind. ``name`` is the Snapshot attribute (jobs, podgroups, ...)."""

    name: str
    kind: str
    group: str  # "" for the core API
    version: str
    plural: str
    namespaced: bool
    trim: Callable[[dict], dict]
    indexers: dict[str, Indexer] = field(default_factory=dict)
    accepted_versions: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, version: str | None = None) -> str:
        """The cluster-wide collection path, e.g. /apis/batch.volcano.sh/v1alpha1/jobs."""
        version = version or self.version
        if self.group:
            return f"/apis/{self.group}/{version}/{self.plural}"
        return f"/api/{version}/{self.plural}"


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

ALL_KINDS: tuple[KindSpec, ...] = (JOBS, PODGROUPS, QUEUES, PODS, EVENTS)
KINDS_BY_NAME = {k.name: k for k in ALL_KINDS}
