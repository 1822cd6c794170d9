"""A mapping whose copy-on-write copies only the shard a write touches.

``ShardedMap`` is the writer's side: a mutable mapping split into ``SHARDS`` dicts by key hash.
``publish()`` returns a ``FrozenShards``, a read-only mapping sharing every shard with the
writer, in O(SHARDS); the writer's next write to a shard the published view shares copies that
shard only (1/SHARDS of the entries), so publishing often costs a few small copies instead of a
copy of the whole mapping (50,000 pods: ~780 entries per shard).

Iteration order is by shard, then insertion order within the shard: callers that need an order
keep it themselves. Keys must be hashable the same way for the life of the process (tuples of
strings, as the cache's keys are).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Generic, TypeVar

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
            shard = self._shards[i] = dict(shard)
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
