"""Copy-on-write structures whose first write after a publication copies only the part it touches.

``ShardedMap`` is the writer's side: a mutable mapping split into ``SHARDS`` dicts by key hash.
``publish()`` returns a ``FrozenShards``, a read-only mapping sharing every shard with the
writer, in O(SHARDS); the writer's next write to a shard the published view shares copies that
shard only (1/SHARDS of the entries), so publishing often costs a few small copies instead of a
copy of the whole mapping (50,000 pods: ~780 entries per shard).

``SortedChunks`` keeps keys in an order, each with a value, in chunks of CHUNK to 2 x CHUNK;
``publish()`` returns a ``SortedView`` sharing the chunks, and a later write copies the chunk it
changes.

Iteration order is by shard, then insertion order within the shard: callers that need an order
keep it themselves. That order is random in memory, so a walk over every value touches them
far slower than a dict walked in the order they were allocated (50,000 objects: ~70 ms against
~11 ms); the stores walk their SortedChunks instead. Keys must be hashable the same way for the
life of the process (tuples of strings, as the cache's keys are).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping
from itertools import chain
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

SHARDS = 64
_MASK = SHARDS - 1


class FrozenShards(Mapping[K, V], Generic[K, V]):
    """A read-only view of a ShardedMap at its ``publish()``: never changes."""

    __slots__ = ("_shards", "_len")

    def __init__(self, shards: tuple[dict[K, V], ...], length: int):
        self._shards = shards
        self._len = length

    def __getitem__(self, key: K) -> V:
        return self._shards[hash(key) & _MASK][key]

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        return self._shards[hash(key) & _MASK].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._shards[hash(key) & _MASK]

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        return chain.from_iterable(self._shards)

    def values(self) -> Iterator[V]:  # type: ignore[override]
        return chain.from_iterable(shard.values() for shard in self._shards)

    def items(self) -> Iterator[tuple[K, V]]:  # type: ignore[override]
        return chain.from_iterable(shard.items() for shard in self._shards)


class ShardedMap(Generic[K, V]):
    """The writer's mapping (one writer at a time: the store's lock). ``publish()`` shares the
    shards with the returned view; a later write copies the shard it changes first."""

    __slots__ = ("_shards", "_owned", "_len", "copied")

    def __init__(self, items: Mapping[K, V] | None = None):
        self._shards: list[dict[K, V]] = [{} for _ in range(SHARDS)]
        self._owned = bytearray(b"\x01" * SHARDS)  # 1: not shared with a published view
        self._len = 0
        self.copied = 0  # entries copied by copy-on-write so far (benchmark figure)
        for key, value in (items or {}).items():
            self[key] = value

    def _writable(self, key: K) -> dict[K, V]:
        i = hash(key) & _MASK
        shard = self._shards[i]
        if not self._owned[i]:
            self.copied += len(shard)
            # dict.copy() clones the hash table while at most a third of its entries are
            # deleted ones; dict(shard) re-inserts every key once the shard has had a deletion
            # (780 entries: ~5 us against ~95 us).
            shard = self._shards[i] = shard.copy()
            self._owned[i] = 1
        return shard

    def publish(self) -> FrozenShards[K, V]:
        self._owned[:] = bytes(SHARDS)
        return FrozenShards(tuple(self._shards), self._len)

    def __getitem__(self, key: K) -> V:
        return self._shards[hash(key) & _MASK][key]

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._shards[hash(key) & _MASK].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._shards[hash(key) & _MASK]

    def __setitem__(self, key: K, value: V) -> None:
        shard = self._writable(key)
        if key not in shard:
            self._len += 1
        shard[key] = value

    def __delitem__(self, key: K) -> None:
        del self._writable(key)[key]
        self._len -= 1

    def pop(self, key: K, default: V | None = None) -> V | None:
        if key not in self:
            return default
        value = self._writable(key).pop(key)
        self._len -= 1
        return value

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        return chain.from_iterable(self._shards)

    def keys(self) -> Iterator[K]:
        return iter(self)

    def values(self) -> Iterator[V]:
        return chain.from_iterable(shard.values() for shard in self._shards)

    def items(self) -> Iterator[tuple[K, V]]:
        return chain.from_iterable(shard.items() for shard in self._shards)


CHUNK = 512  # entries per chunk of a SortedChunks (split at twice that)


class SortedView(Generic[K, V]):
    """A published order of a SortedChunks: never changes. ``keys()`` and ``values()`` return
    new lists (the caller's to change), in order."""

    __slots__ = ("_keys", "_values", "_len")

    def __init__(self, keys: tuple[list[K], ...], values: tuple[list[V], ...], length: int):
        self._keys = keys
        self._values = values
        self._len = length

    def __len__(self) -> int:
        return self._len

    def keys(self) -> list[K]:
        return list(chain.from_iterable(self._keys))

    def values(self) -> list[V]:
        return list(chain.from_iterable(self._values))

    def items(self) -> Iterator[tuple[K, V]]:
        return zip(chain.from_iterable(self._keys), chain.from_iterable(self._values), strict=True)

    def iter_values(self) -> Iterator[V]:
        """The values in order, no list built."""
        return chain.from_iterable(self._values)


class SortedChunks(Generic[K, V]):
    """Keys kept in ``sort_key`` order with a value each, in chunks of at most 2 x CHUNK: an
    insertion moves one chunk's entries, not all of them, and after ``publish()`` the next write
    copies the chunk it changes (two lists of at most 1,024 entries) instead of the whole order.
    A copy of 50,000 entries touches every entry's reference count (~1.5 ms), and freeing the
    superseded copy as much again."""

    __slots__ = ("_sort_key", "_keys", "_values", "_firsts", "_owned", "_len", "copied")

    def __init__(self, sort_key: Callable[[K], Any]):
        self._sort_key = sort_key
        self._keys: list[list[K]] = []
        self._values: list[list[V]] = []
        self._firsts: list[Any] = []  # sort key of each chunk's first key
        self._owned: list[bool] = []  # False: a published view shares the chunk
        self._len = 0
        self.copied = 0  # entries copied by copy-on-write so far (benchmark figure)

    def __len__(self) -> int:
        return self._len

    def publish(self) -> SortedView[K, V]:
        self._owned = [False] * len(self._keys)
        return SortedView(tuple(self._keys), tuple(self._values), self._len)

    def rebuild(self, keys: list[K], values: list[V]) -> None:
        """Replace the contents by ``keys`` (already in order) and their ``values``."""
        self._keys = [keys[i : i + CHUNK] for i in range(0, len(keys), CHUNK)]
        self._values = [values[i : i + CHUNK] for i in range(0, len(values), CHUNK)]
        self._firsts = [self._sort_key(chunk[0]) for chunk in self._keys]
        self._owned = [True] * len(self._keys)
        self._len = len(keys)

    def _find(self, key: K) -> tuple[int, int, bool]:
        """(chunk, position in it, whether ``key`` is there) where ``key`` is or would go."""
        sk = self._sort_key(key)
        i = max(0, bisect.bisect_right(self._firsts, sk) - 1)
        chunk = self._keys[i]
        j = bisect.bisect_left(chunk, sk, key=self._sort_key)
        return i, j, j < len(chunk) and chunk[j] == key

    def _writable(self, i: int) -> tuple[list[K], list[V]]:
        if not self._owned[i]:
            self.copied += len(self._keys[i])
            self._keys[i] = list(self._keys[i])
            self._values[i] = list(self._values[i])
            self._owned[i] = True
        return self._keys[i], self._values[i]

    def set(self, key: K, value: V) -> None:
        """Insert ``key`` in order with ``value``, or replace its value."""
        if not self._keys:
            self.rebuild([key], [value])
            return
        i, j, found = self._find(key)
        keys, values = self._writable(i)
        if found:
            values[j] = value
            return
        keys.insert(j, key)
        values.insert(j, value)
        self._len += 1
        if j == 0:
            self._firsts[i] = self._sort_key(key)
        if len(keys) > 2 * CHUNK:
            self._keys[i : i + 1] = [keys[:CHUNK], keys[CHUNK:]]
            self._values[i : i + 1] = [values[:CHUNK], values[CHUNK:]]
            self._firsts.insert(i + 1, self._sort_key(keys[CHUNK]))
            self._owned.insert(i + 1, True)

    def remove(self, key: K) -> None:
        """Remove ``key`` (KeyError when absent)."""
        if not self._keys:
            raise KeyError(key)
        i, j, found = self._find(key)
        if not found:
            raise KeyError(key)
        keys, values = self._writable(i)
        del keys[j]
        del values[j]
        self._len -= 1
        if not keys:
            del self._keys[i], self._values[i], self._firsts[i], self._owned[i]
        elif j == 0:
            self._firsts[i] = self._sort_key(keys[0])
