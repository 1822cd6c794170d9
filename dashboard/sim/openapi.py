"""A minimal OpenAPI v3 discovery: enough for ``kubectl apply`` to learn that every resource
supports the ``fieldValidation`` query parameter (server-side field validation), so kubectl skips
client-side schema validation (which would need full schemas) and does not fail with "failed to
download openapi".

Served: ``/openapi/v3`` (the index, one entry per group-version) and
``/openapi/v3/<api|apis/<group>>/<version>`` (a document whose paths carry PATCH operations tagged
with ``x-kubernetes-group-version-kind`` and the query parameters a real server declares). No
component schemas are published; /openapi/v2 stays 404.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from .kinds import Kind

_PARAMS = [
    {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    for name in ("dryRun", "fieldManager", "fieldValidation", "force")
]


def _gv_path(kind: Kind) -> str:
    return f"api/{kind.version}" if not kind.group else f"apis/{kind.group}/{kind.version}"


def group_version_doc(kinds: Iterable[Kind]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for k in kinds:
        if k.review:
            continue
        base = f"/{_gv_path(k)}"
        item = (
            f"{base}/namespaces/{{namespace}}/{k.plural}/{{name}}"
            if k.namespaced
            else f"{base}/{k.plural}/{{name}}"
        )
        gvk = {"group": k.group, "version": k.version, "kind": k.kind}
        paths[item] = {
            "patch": {
                "operationId": f"patch{k.kind}",
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
                "parameters": _PARAMS,
                "responses": {"200": {"description": "OK"}},
            },
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.4"},
        "paths": paths,
        "components": {"schemas": {}},
    }


def documents(kinds: Iterable[Kind]) -> dict[str, dict[str, Any]]:
    """gv path ("api/v1", "apis/batch.volcano.sh/v1alpha1") -> OpenAPI v3 document."""
    by_gv: dict[str, list[Kind]] = {}
    for k in kinds:
        by_gv.setdefault(_gv_path(k), []).append(k)
    return {gv: group_version_doc(ks) for gv, ks in by_gv.items()}


def index(docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    paths = {}
    for gv, doc in docs.items():
        digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
        paths[gv] = {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}
