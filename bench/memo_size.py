"""Size of the pages' memos (dashboard/views/) in bytes, excluding the cache's own objects.

``memo_bytes(cache)`` walks every module-level memo of the ``dashboard.views`` modules with ``sys.getsizeof``
and stops at any object the cluster cache holds (those belong to the cache, whose memory is
measured by bench/bench_sync.py); strings shared with cached objects are counted, so this slightly
overestimates. Used by ``python -m bench.inproc_pages --memos``. Numbers, not a test.
"""

from __future__ import annotations

import sys

# (module of dashboard.views, name): the memos kept between requests.
MEMOS = (
    ("memo", "SECTIONS"),
    ("memo", "LIST_MEMO"),
    ("listing", "LIST_FIELDS"),
    ("listing", "_PASSES"),
    ("nodes", "_ROWS"),
    ("rows", "_YAML"),
    ("scheduler_health", "_EVENT_TIMES"),
    ("scheduler_health", "_PODGROUP_TIMES"),
    ("memo", "ROW_HTML"),
    ("queue_summary", "QUEUE_FIELDS"),
)


def _cache_object_ids(cache) -> set[int]:
    ids: set[int] = set()
    snap = cache.snapshot()
    for view in snap.views().values():
        for obj in view.values():
            ids.add(id(obj))
    return ids


def deep_size(root, skip: set[int]) -> int:
    seen: set[int] = set()
    total = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        oid = id(obj)
        if oid in seen or oid in skip:
            continue
        seen.add(oid)
        if isinstance(obj, type) or callable(obj) and not hasattr(obj, "__dict__"):
            continue
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            stack.append(vars(obj))
        elif hasattr(obj, "__slots__"):
            stack.extend(getattr(obj, s) for s in obj.__slots__ if hasattr(obj, s))
    return total


def memo_bytes(cache) -> dict[str, int]:
    import importlib

    from dashboard.views.memo import SizedMemo

    skip = _cache_object_ids(cache)
    out = {}
    for module, name in MEMOS:
        memo = getattr(importlib.import_module(f"dashboard.views.{module}"), name, None)
        if memo is None:
            continue
        if isinstance(memo, SizedMemo):
            memo = dict(memo.values())
        out[name] = deep_size(memo, skip)
    return out
