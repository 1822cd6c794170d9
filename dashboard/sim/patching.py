"""Patch formats the API server accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
Kubernetes strategic merge patch.

All functions return a new document and never modify their inputs. Errors raise ``PatchError``
(the server answers 422 for a failed ``test``/bad path, 400 for a malformed patch, as upstream does).
"""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    """A patch that cannot be applied. ``code`` is the HTTP status the server should answer."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.code = code


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- RFC 6902 ---------------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}", 400)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list, token: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index {token!r}")
    idx = int(token)
    if idx > len(container) or (idx == len(container) and not allow_end):
        raise PatchError(f"array index {idx} out of range")
    return idx


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    cur = doc
    for token in tokens[:-1]:
        if isinstance(cur, dict):
            if token not in cur:
                raise PatchError(f"path {path!r} does not exist: missing {token!r}")
            cur = cur[token]
        elif isinstance(cur, list):
            cur = cur[_index(cur, token, allow_end=False)]
        else:
            raise PatchError(f"path {path!r} crosses a scalar")
    return cur


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {path!r} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False)]
    raise PatchError(f"path {path!r} crosses a scalar")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError(f"path {path!r} crosses a scalar")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key {last!r}: missing value")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, allow_end=False))
    raise PatchError(f"path {path!r} crosses a scalar")


def json_patch(target: Any, ops: Any) -> Any:
    """Apply an RFC 6902 operation list (add, remove, replace, move, copy, test)."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations", 400)
    doc = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid JSON patch operation {op!r}", 400)
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {kind} needs a value", 400)
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            doc, _ = _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)  # must exist
            if _pointer(path):
                doc, _ = _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "move":
            doc, value = _remove(doc, op.get("from", ""))
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, op.get("from", ""))))
        elif kind == "test":
            if _get(doc, path) != op["value"]:
                raise PatchError(f"testing value {path} failed")
        else:
            raise PatchError(f"unknown JSON patch operation {kind!r}", 400)
    return doc


# --- strategic merge patch -------------------------------------------------------------------------

# Merge keys of the list fields that core objects mark ``patchStrategy: merge`` (upstream
# k8s.io/api struct tags). Lists not named here are replaced atomically, as with merge patch.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "conditions": "type",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
}
# Primitive lists with ``patchStrategy: merge`` (union, keep order).
MERGE_PRIMITIVES = {"finalizers"}


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Kubernetes strategic merge patch for core objects, good enough for ``kubectl apply``:
    lists of objects listed in MERGE_KEYS merge by key; ``$patch: delete|replace``,
    ``$retainKeys``, ``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>``
    directives are honoured. For custom resources call ``merge_patch`` instead (CRDs have no
    patch strategy metadata, upstream treats them as merge)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    orders: dict[str, list] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS and isinstance(result.get(key), list):
            result[key] = _merge_list(result[key], value, MERGE_KEYS[key])
        elif isinstance(value, list) and key in MERGE_PRIMITIVES and isinstance(result.get(key), list):
            result[key] = result[key] + [v for v in value if v not in result[key]]
        elif isinstance(value, dict):
            merged = strategic_merge_patch(result.get(key), value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = _strip_directives(copy.deepcopy(value))
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _reorder(result[field], order, MERGE_KEYS.get(field))
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _merge_list(current: list, patch: list, key: str) -> list:
    result = [copy.deepcopy(x) for x in current]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            if isinstance(item, dict) and item.get("$patch") == "replace":
                return [
                    copy.deepcopy({k: v for k, v in x.items() if k != "$patch"})
                    for x in patch
                    if isinstance(x, dict) and x.get("$patch") != "replace"
                ]
            result.append(_strip_directives(copy.deepcopy(item)))
            continue
        pos = next((i for i, x in enumerate(result) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if pos is not None:
                result.pop(pos)
            continue
        if pos is None:
            result.append(_strip_directives(copy.deepcopy(item)))
        else:
            result[pos] = strategic_merge_patch(result[pos], item)
    return result


def _reorder(items: list, order: list, key: str | None) -> list:
    def ident(x: Any) -> Any:
        return x.get(key) if key and isinstance(x, dict) else x

    wanted = [ident(o) for o in order]
    ranked = {json_key(w): i for i, w in enumerate(wanted)}
    return sorted(items, key=lambda x: ranked.get(json_key(ident(x)), len(ranked)))


def json_key(value: Any) -> str:
    return repr(value)
