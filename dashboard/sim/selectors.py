"""Label and field selectors, parsed once and matched against plain object dicts.

Grammar and supported fields follow the Kubernetes API ("Labels and Selectors", "Field
Selectors"): label requirements ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k``, ``!k``, ``k>n``, ``k<n``; field requirements ``f=v``, ``f==v``, ``f!=v`` on the few fields
each resource supports. Parse errors raise ``SelectorError`` (the server answers 400 BadRequest).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Matcher = Callable[[dict[str, Any]], bool]


class SelectorError(ValueError):
    """A selector string that cannot be parsed or names an unsupported field."""


_KEY_RE = re.compile(
    r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE_RE = re.compile(r"^(([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?)$")


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"unbalanced parentheses in selector {text!r}")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise SelectorError(f"unbalanced parentheses in selector {text!r}")
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _check_key(key: str, text: str) -> str:
    if not _KEY_RE.match(key) or len(key.rpartition("/")[2]) > 63:
        raise SelectorError(f"invalid label key {key!r} in selector {text!r}")
    return key


def _check_value(value: str, text: str) -> str:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise SelectorError(f"invalid label value {value!r} in selector {text!r}")
    return value


_SET_RE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_CMP_RE = re.compile(r"^(?P<key>[^=!<>\s]+)\s*(?P<op>==|=|!=|<|>)\s*(?P<value>\S*)$")


def parse_label_selector(text: str | None) -> Matcher | None:
    """Compile a label selector; None/"" -> None (everything matches)."""
    if not text or not text.strip():
        return None
    tests: list[Callable[..., bool]] = []
    for req in _split_top(text):
        if not req:
            raise SelectorError(f"empty requirement in label selector {text!r}")
        m = _SET_RE.match(req)
        if m:
            key = _check_key(m["key"], text)
            values = frozenset(_check_value(v.strip(), text) for v in m["values"].split(","))
            if m["op"] == "in":
                tests.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
            else:
                tests.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
            continue
        if req.startswith("!"):
            key = _check_key(req[1:].strip(), text)
            tests.append(lambda labels, k=key: k not in labels)
            continue
        m = _CMP_RE.match(req)
        if m:
            key, op, value = _check_key(m["key"], text), m["op"], m["value"]
            if op in ("=", "=="):
                value = _check_value(value, text)
                tests.append(lambda labels, k=key, v=value: labels.get(k) == v)
            elif op == "!=":
                value = _check_value(value, text)
                tests.append(lambda labels, k=key, v=value: labels.get(k) != v)
            else:
                try:
                    bound = int(value)
                except ValueError:
                    raise SelectorError(f"{op} needs an integer value in selector {text!r}") from None
                tests.append(_numeric(key, op, bound))
            continue
        key = _check_key(req, text)
        tests.append(lambda labels, k=key: k in labels)

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(t(labels) for t in tests)

    return match


def _numeric(key: str, op: str, bound: int) -> Callable[[dict[str, str]], bool]:
    def test(labels: dict[str, str]) -> bool:
        try:
            value = int(labels[key])
        except (KeyError, ValueError):
            return False
        return value > bound if op == ">" else value < bound

    return test


# Fields each resource supports in field selectors (besides metadata.name / metadata.namespace),
# mapped to their path in the object. Source: the upstream registry strategies' field label
# conversion functions (pods, events, namespaces, nodes, secrets).
_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "pods": {
        "spec.nodeName": ("spec", "nodeName"),
        "spec.schedulerName": ("spec", "schedulerName"),
        "spec.restartPolicy": ("spec", "restartPolicy"),
        "spec.serviceAccountName": ("spec", "serviceAccountName"),
        "status.phase": ("status", "phase"),
        "status.podIP": ("status", "podIP"),
        "status.nominatedNodeName": ("status", "nominatedNodeName"),
    },
    "events": {
        "involvedObject.kind": ("involvedObject", "kind"),
        "involvedObject.namespace": ("involvedObject", "namespace"),
        "involvedObject.name": ("involvedObject", "name"),
        "involvedObject.uid": ("involvedObject", "uid"),
        "involvedObject.apiVersion": ("involvedObject", "apiVersion"),
        "involvedObject.resourceVersion": ("involvedObject", "resourceVersion"),
        "involvedObject.fieldPath": ("involvedObject", "fieldPath"),
        "reason": ("reason",),
        "reportingComponent": ("reportingComponent",),
        "source": ("source", "component"),
        "type": ("type",),
    },
    "namespaces": {"status.phase": ("status", "phase")},
    "nodes": {"spec.unschedulable": ("spec", "unschedulable")},
    "secrets": {"type": ("type",)},
}
_COMMON = {"metadata.name": ("metadata", "name"), "metadata.namespace": ("metadata", "namespace")}


def _field_value(obj: dict[str, Any], path: tuple[str, ...]) -> str:
    cur: Any = obj
    for part in path:
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


_FIELD_RE = re.compile(r"^(?P<field>[^=!\s]+)\s*(?P<op>==|=|!=)\s*(?P<value>.*)$")


def parse_field_selector(text: str | None, plural: str) -> Matcher | None:
    """Compile a field selector for resource ``plural``; None/"" -> None.

    Raises SelectorError for bad syntax or a field the resource does not support (the API server's
    message is ``field label not supported: <field>``).
    """
    if not text or not text.strip():
        return None
    supported = {**_COMMON, **_FIELDS.get(plural, {})}
    tests: list[Callable[..., bool]] = []
    for req in _split_top(text):
        m = _FIELD_RE.match(req)
        if not m:
            raise SelectorError(f"invalid field selector requirement {req!r}")
        field, op, value = m["field"], m["op"], m["value"].strip()
        if field not in supported:
            raise SelectorError(f"field label not supported: {field}")
        path = supported[field]
        if op == "!=":
            tests.append(lambda o, p=path, v=value: _field_value(o, p) != v)
        else:
            tests.append(lambda o, p=path, v=value: _field_value(o, p) == v)

    def match(obj: dict[str, Any]) -> bool:
        return all(t(obj) for t in tests)

    return match


def combine(*matchers: Matcher | None) -> Matcher | None:
    """AND several optional matchers into one (None when all are None)."""
    active = [m for m in matchers if m is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(m(obj) for m in active)
