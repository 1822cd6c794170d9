"""The one table of kinds the simulated cluster serves.

Everything resource-specific in the simulated API server (URL routing, discovery, scope, short
names, the /status subresource, kubectl table columns, auth) is driven from ``KINDS``.
Volcano rows follow Volcano's CRDs (volcano-sh/volcano config/crd: their ``names`` and
``additionalPrinterColumns``); core rows follow the upstream Kubernetes API discovery documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

READ_VERBS = ("get", "list", "watch")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class PrinterColumn:
    """A CRD ``additionalPrinterColumns`` entry (served in meta.k8s.io/v1 Tables)."""

    name: str
    type: str  # "string" | "integer" | "date" | ...
    json_path: str  # a simple dotted path such as ".status.state.phase"
    priority: int = 0
    description: str = ""


@dataclass(frozen=True)
class Kind:
    """One served resource.

    ``group`` is "" for the core group. ``namespaced`` is the scope. ``status_subresource`` says
    whether ``.../<name>/status`` exists (and so whether main-resource writes ignore status).
    ``review`` kinds (SubjectAccessReview, TokenReview) are create-only and never stored.
    ``printer_columns`` is None for kinds whose Table columns are built in (core kinds), else the
    CRD's additionalPrinterColumns (an empty tuple gives the CRD default: Name, Age).
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    status_subresource: bool = False
    singular: str = ""
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] | None = None
    verbs: tuple[str, ...] = ALL_VERBS
    review: bool = False
    crd: bool = False
    # Names of namespaces/nodes/services must be DNS labels; most others DNS subdomains.
    name_rule: str = "subdomain"
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.plural}.{self.group}" if self.group else self.plural)
        if not self.singular:
            object.__setattr__(self, "singular", self.kind.lower())

    @property
    def api_version(self) -> str:
        """ "v1" for core, else "<group>/<version>"."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def resource(self) -> str:
        """The resource with its group, as Kubernetes error messages print it: "jobs.batch.volcano.sh"."""
        return self.key

    def __str__(self) -> str:  # pragma: no cover - debugging aid
        return self.key


def _c(name: str, type_: str, path: str, priority: int = 0) -> PrinterColumn:
    return PrinterColumn(name, type_, path, priority)


_AGE = _c("AGE", "date", ".metadata.creationTimestamp")

KINDS: tuple[Kind, ...] = (
    # --- core/v1 ---
    Kind("", "v1", "namespaces", "Namespace", False, ("ns",), True, name_rule="label"),
    Kind("", "v1", "nodes", "Node", False, ("no",), True, name_rule="subdomain"),
    Kind("", "v1", "pods", "Pod", True, ("po",), True, categories=("all",)),
    Kind("", "v1", "events", "Event", True, ("ev",)),
    Kind("", "v1", "services", "Service", True, ("svc",), True, categories=("all",), name_rule="label"),
    Kind("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    Kind("", "v1", "secrets", "Secret", True),
    Kind("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), True),
    # --- apps/v1, batch/v1 and friends: plain storage ---
    Kind("apps", "v1", "deployments", "Deployment", True, ("deploy",), True, categories=("all",)),
    Kind("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), True, categories=("all",)),
    Kind("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), True, categories=("all",)),
    Kind("batch", "v1", "jobs", "Job", True, (), True, categories=("all",)),
    Kind("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    Kind("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    # Leader election (client-go leaderelection, volcano-ui's history recorder): an update at a stale
    # resourceVersion is 409 Conflict, as for every kind here.
    Kind("coordination.k8s.io", "v1", "leases", "Lease", True),
    # --- Volcano (volcano-sh/volcano config/crd) ---
    Kind(
        "batch.volcano.sh",
        "v1alpha1",
        "jobs",
        "Job",
        True,
        ("vcjob", "vj"),
        True,
        crd=True,
        printer_columns=(
            _c("STATUS", "string", ".status.state.phase"),
            _c("minAvailable", "integer", ".status.minAvailable"),
            _c("RUNNINGS", "integer", ".status.running"),
            _AGE,
            _c("QUEUE", "string", ".spec.queue", 1),
        ),
    ),
    Kind(
        "batch.volcano.sh",
        "v1alpha1",
        "cronjobs",
        "CronJob",
        True,
        ("cronvcjob", "cronvj"),
        True,
        crd=True,
        printer_columns=(),
    ),
    Kind(
        "scheduling.volcano.sh",
        "v1beta1",
        "podgroups",
        "PodGroup",
        True,
        ("pg", "podgroup-v1beta1"),
        False,
        crd=True,
        printer_columns=(
            _c("STATUS", "string", ".status.phase"),
            _c("minMember", "integer", ".spec.minMember"),
            _c("RUNNINGS", "integer", ".status.running"),
            _AGE,
            _c("QUEUE", "string", ".spec.queue", 1),
        ),
    ),
    Kind(
        "scheduling.volcano.sh",
        "v1beta1",
        "queues",
        "Queue",
        False,
        ("q", "queue-v1beta1"),
        True,
        crd=True,
        printer_columns=(_c("PARENT", "string", ".spec.parent"),),
    ),
    Kind("bus.volcano.sh", "v1alpha1", "commands", "Command", True, (), False, crd=True, printer_columns=()),
    Kind(
        "flow.volcano.sh",
        "v1alpha1",
        "jobflows",
        "JobFlow",
        True,
        ("jf",),
        True,
        crd=True,
        printer_columns=(
            _c("Status", "string", ".status.state.phase"),
            _c("Age", "date", ".metadata.creationTimestamp"),
        ),
    ),
    Kind(
        "flow.volcano.sh",
        "v1alpha1",
        "jobtemplates",
        "JobTemplate",
        True,
        ("jt",),
        True,
        crd=True,
        printer_columns=(),
    ),
    Kind(
        "topology.volcano.sh",
        "v1alpha1",
        "hypernodes",
        "HyperNode",
        False,
        ("hn",),
        True,
        crd=True,
        printer_columns=(
            _c("Tier", "string", ".spec.tier"),
            _c("TierName", "string", ".spec.tierName"),
            _c("NodeCount", "integer", ".status.nodeCount"),
            _c("Age", "date", ".metadata.creationTimestamp"),
        ),
    ),
    Kind(
        "nodeinfo.volcano.sh",
        "v1alpha1",
        "numatopologies",
        "Numatopology",
        False,
        ("numatopo",),
        False,
        crd=True,
        printer_columns=(),
    ),
    Kind(
        "shard.volcano.sh",
        "v1alpha1",
        "nodeshards",
        "NodeShard",
        False,
        ("nsh",),
        True,
        crd=True,
        printer_columns=(_AGE,),
    ),
    Kind(
        "config.volcano.sh",
        "v1alpha1",
        "colocationconfigurations",
        "ColocationConfiguration",
        True,
        (),
        True,
        crd=True,
        printer_columns=(),
    ),
    # --- reviews: create-only, answered from the configured users, never stored ---
    Kind(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "SubjectAccessReview",
        False,
        verbs=("create",),
        review=True,
    ),
    Kind(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        verbs=("create",),
        review=True,
    ),
    Kind("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=("create",), review=True),
)

# Handy constants for the kinds everybody uses.
_BY_KEY = {k.key: k for k in KINDS}
NAMESPACE = _BY_KEY["namespaces"]
NODE = _BY_KEY["nodes"]
POD = _BY_KEY["pods"]
EVENT = _BY_KEY["events"]
JOB = _BY_KEY["jobs.batch.volcano.sh"]
PODGROUP = _BY_KEY["podgroups.scheduling.volcano.sh"]
QUEUE = _BY_KEY["queues.scheduling.volcano.sh"]
COMMAND = _BY_KEY["commands.bus.volcano.sh"]
CRONJOB = _BY_KEY["cronjobs.batch.volcano.sh"]
HYPERNODE = _BY_KEY["hypernodes.topology.volcano.sh"]
LEASE = _BY_KEY["leases.coordination.k8s.io"]

# Groups in discovery order: core first (kubectl resolves a bare plural such as "jobs" to the first
# group that serves it, exactly as with a real cluster: batch/v1 before batch.volcano.sh).
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(k.group for k in KINDS if k.group))


def kind_for(group: str, plural: str) -> Kind | None:
    """The kind served at ``/apis/<group>/<version>/<plural>`` (``group`` "" for core), or None."""
    return _BY_KEY.get(f"{plural}.{group}" if group else plural)


def kind_by_name(kind_name: str, group: str) -> Kind | None:
    """The kind named ``kind_name`` (e.g. "Job") in ``group``, or None. Always resolve by group:
    "Job" exists in both batch/v1 and batch.volcano.sh."""
    for k in KINDS:
        if k.kind == kind_name and k.group == group:
            return k
    return None


def kind_for_api_version(api_version: str, kind_name: str) -> Kind | None:
    """The kind for an object's ``apiVersion`` and ``kind`` fields, or None."""
    group = api_version.rpartition("/")[0]
    return kind_by_name(kind_name, group)


def resolve(ref: Kind | str) -> Kind:
    """Accept a Kind or a string and return the Kind.

    Strings may be "plural.group" ("jobs.batch.volcano.sh"), a bare plural, singular, kind name or
    short name ("pods", "Pod", "pg", "Queue"). Bare "jobs"/"job"/"Job" mean the **Volcano** Job
    (this is a Volcano simulator); use "jobs.batch" for batch/v1. Raises KeyError when unknown.
    """
    if isinstance(ref, Kind):
        return ref
    if ref in _BY_KEY:
        return _BY_KEY[ref]
    matches = [k for k in KINDS if ref in (k.plural, k.singular, k.kind) or ref in k.short_names]
    if not matches:
        raise KeyError(f"unknown kind {ref!r}")
    volcano = [k for k in matches if k.group.endswith("volcano.sh")]
    return (volcano or matches)[0]


def served_versions() -> dict[str, str]:
    """group -> its one served version (each group here serves exactly one)."""
    return {k.group: k.version for k in KINDS}
