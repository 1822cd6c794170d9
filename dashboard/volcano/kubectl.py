"""The kubectl command that prints an object of a page as the API server has it.

Resource names are those kubectl resolves through discovery: ``vcjob`` is the short name Volcano's
CRD declares for ``jobs.batch.volcano.sh`` (a bare ``job`` would be the batch/v1 Job);
``podgroup`` and ``queue`` are the singular names of ``podgroups.scheduling.volcano.sh`` and
``queues.scheduling.volcano.sh`` (Volcano's config/crd definitions).
"""

from __future__ import annotations

import shlex
from typing import Final

# The dashboard's kind (the first argument of templatetags objlink) -> kubectl's resource name.
KUBECTL_RESOURCES: Final[dict[str, str]] = {
    "job": "vcjob",
    "podgroup": "podgroup",
    "queue": "queue",
    "pod": "pod",
}


def kubectl_get_yaml(kind: str, namespace: str | None, name: str) -> str:
    """``kubectl get <resource> [-n <namespace>] <name> -o yaml`` for ``kind`` (a key of
    KUBECTL_RESOURCES; KeyError otherwise), ``namespace`` None for cluster-scoped Queues. Names are
    shell-quoted when they hold anything but the characters of a Kubernetes name."""
    parts = ["kubectl", "get", KUBECTL_RESOURCES[kind]]
    if namespace is not None:
        parts += ["-n", shlex.quote(namespace)]
    parts += [shlex.quote(name), "-o", "yaml"]
    return " ".join(parts)
