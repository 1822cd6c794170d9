"""Readers of Kubernetes object fields that never raise on what the API may hold.

Objects come from the wire as JSON: any field may be missing, null or of another type than its
schema says. These readers turn such values into an empty dict, list or string, so callers handle
one shape. ``count`` is the one reader of integer counters.
"""

import math
import re
from typing import Any


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a dict, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a list, else an empty list."""
    return value if isinstance(value, list) else []


def as_str(value: object) -> str:
    """``value`` as text: "" for None, the string itself, else ``str(value)``."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def meta(obj: object) -> dict[str, Any]:
    """metadata of ``obj`` ({} when absent or not an object)."""
    return as_dict(as_dict(obj).get("metadata"))


def spec(obj: object) -> dict[str, Any]:
    """spec of ``obj`` ({} when absent)."""
    return as_dict(as_dict(obj).get("spec"))


def status(obj: object) -> dict[str, Any]:
    """status of ``obj`` ({} when absent: the controller has not written it yet)."""
    return as_dict(as_dict(obj).get("status"))


def name(obj: object) -> str:
    """metadata.name ("" when absent)."""
    return as_str(meta(obj).get("name"))


def namespace(obj: object) -> str:
    """metadata.namespace ("" when absent or cluster-scoped)."""
    return as_str(meta(obj).get("namespace"))


def uid(obj: object) -> str:
    """metadata.uid when it is a string, else ""."""
    value = meta(obj).get("uid")
    return value if isinstance(value, str) else ""


def resource_version(obj: object) -> str:
    """metadata.resourceVersion ("" when absent)."""
    return as_str(meta(obj).get("resourceVersion"))


def labels(obj: object) -> dict[str, str]:
    """metadata.labels with keys and values as text."""
    return {as_str(k): as_str(v) for k, v in as_dict(meta(obj).get("labels")).items()}


def annotations(obj: object) -> dict[str, str]:
    """metadata.annotations with keys and values as text."""
    return {as_str(k): as_str(v) for k, v in as_dict(meta(obj).get("annotations")).items()}


def label_or_annotation(obj: object, key: str) -> str:
    """The label ``key``, else the annotation ``key``, else "" (Volcano writes some keys, such as
    ``volcano.sh/task-spec``, as both)."""
    return labels(obj).get(key) or annotations(obj).get(key, "")


def is_deleting(obj: object) -> bool:
    """metadata.deletionTimestamp is set: Kubernetes is deleting the object (finalizers pending)."""
    return bool(meta(obj).get("deletionTimestamp"))


def owner_references(obj: object) -> list[dict[str, Any]]:
    """metadata.ownerReferences, each as a dict (non-dict entries read as {})."""
    return [as_dict(r) for r in as_list(meta(obj).get("ownerReferences"))]


def controller_owner(obj: object) -> dict[str, Any] | None:
    """The ownerReference with ``controller: true``, else the first one; None without owners."""
    refs = owner_references(obj)
    if not refs:
        return None
    return next((r for r in refs if r.get("controller") is True), refs[0])


def owner_uids(obj: object) -> tuple[str, ...]:
    """The uid of every ownerReference that has a string uid."""
    return tuple(r["uid"] for r in owner_references(obj) if isinstance(r.get("uid"), str))


def count(value: object) -> int:
    """An integer counter or size field (status.running, spec.minMember, replicas, restartCount...).

    The rule, for every value the wire may hold:

    - missing or null: 0 (Volcano and Kubernetes write counters with Go ``omitempty``, so an
      absent counter is zero);
    - an int: itself, negatives included (the schemas admit them; whoever judges a gang treats a
      negative counter as untrustworthy, see ``dashboard.volcano.gang``);
    - a bool: 0 (JSON ``true`` is no integer; Kubernetes' decoder rejects it in an int32 field);
    - a float: its value when integral (JSON does not distinguish 2 from 2.0), else 0 (1.5 is no
      count; truncating it would invent one);
    - a string spelling an integer ("3", " -2 "): that integer, else 0 ("1.5", "x");
    - anything else: 0.
    """
    value = integer(value)
    return 0 if value is None else value


def integer(value: object) -> int | None:
    """An integer field's value as ``count`` reads it (negatives included), None when it holds no
    integer: missing or null, a bool, a non-integral float, a string spelling no integer."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        try:
            return int(value.strip())
        except ValueError:  # more digits than Python converts: no counter is that large
            return None
    return None


def reported_count(st: object, key: str, reported: bool) -> int | None:
    """The counter ``key`` of a status object ``st``, or None when nobody has counted yet.

    Present (not null): as ``count`` reads it. Absent or null: 0 when ``reported`` (the status was
    written by its controller, which writes counters with Go ``omitempty``, so a zero is written
    as nothing), else None (no status yet, or one its controller did not write: unknown, not 0).
    """
    value = as_dict(st).get(key)
    if value is not None:
        return count(value)
    return 0 if reported else None


_INTEGER = re.compile(r"[+-]?[0-9]+")
