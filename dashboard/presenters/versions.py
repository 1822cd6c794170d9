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
    return tuple(f"{namespace(o)}/{name(o)}@{resource_version(o)}" if o else "-" for o in objs)
