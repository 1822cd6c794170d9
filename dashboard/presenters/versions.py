"""Version keys of page fragments: digests of what a fragment shows, for ``?v=`` and caches."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from dashboard.volcano.objects import name, namespace, resource_version


def version_key(*parts: Any) -> str:
    """A short stable digest of ``parts`` used as a fragment's ``?v=`` version."""
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()


def resource_versions(objs: Iterable[Mapping | None]) -> tuple[str, ...]:
    """ "namespace/name@resourceVersion" of each object ("-" for None). A Queue's page reads
    thousands per request: metadata with string fields (every object the API server sends) is
    read directly, anything else through the tolerant readers, with the same result."""
    out = []
    for o in objs:
        if not o:
            out.append("-")
            continue
        m = o.get("metadata") if type(o) is dict else None
        if type(m) is dict:
            ns, n, rv = m.get("namespace"), m.get("name"), m.get("resourceVersion")
            if type(ns) is str and type(n) is str and type(rv) is str:
                out.append(f"{ns}/{n}@{rv}")
                continue
        out.append(f"{namespace(o)}/{name(o)}@{resource_version(o)}")
    return tuple(out)
