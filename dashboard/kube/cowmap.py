"""Copy-on-write structures whose first write after a publication copies only the part it touches.

``ShardedMap`` is the writer's side: a mutable mapping split by key hash into dicts ("shards"),
about the square root of its size of them (50,000 pods: 256 shards of ~200 entries).
``publish()`` returns a ``FrozenShards``, a read-only mapping sharing every shard with the
writer, in O(shards); the writer's next write to a shard the published view shares copies that
shard only, so publishing often costs a few small copies instead of a copy of the whole mapping.

``SortedChunks`` keeps keys in an order, each with a value, in chunks of CHUNK to 2 x CHUNK;
``publish()`` returns a ``SortedView`` sharing the chunks, and a later write copies the chunk it
changes.

``ChunkedSet`` keeps keys in the order they were added, in dicts of at most SET_CHUNK keys (the
stores' index buckets of thousands of keys); ``view()`` returns a ``ChunkedSetView`` sharing
them, and after ``share()`` a write copies the chunks it changes.

A ShardedMap's iteration order is by shard, then insertion order within the shard: callers that
need an order keep it themselves. That order is random in memory, so a walk over every value
touches them far slower than a dict walked in the order they were allocated (50,000 objects:
~70 ms against ~11 ms); the stores walk their SortedChunks instead. Keys must be hashable the
same way for the life of the process (tuples of strings, as the cache's keys are).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping
from itertools import chain
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenShards(Mapping[K, V], Generic[K, V]):
    """A read-only view of a ShardedMap at its ``publish()``: never changes."""

    __slots__ = ("_shards", "_mask", "_len")

    def __init__(self, shards: tuple[dict[K, V], ...], length: int):
        self._shards = shards
        self._mask = len(shards) - 1
        self._len = length

    def __getitem__(self, key: K) -> V:
        return self._shards[hash(key) & self._mask][key]

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        return self._shards[hash(key) & self._mask].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._shards[hash(key) & self._mask]

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
    shards with the returned view; a later write copies the shard it changes first.

    The shards double when the mapping holds more entries than their count squared: about
    sqrt(entries) shards of sqrt(entries) entries. A write after a publication copies one shard
    (per entry the copy, its release and a visit by the next young garbage collection: ~0.1 us),
    a publication shares every shard (~0.04 us each): the two balance there at a few writes per
    publication. At 50,000 pods, 256 shards of ~200 entries; 64 shards copied ~780 entries per
    write and 1,024 shards doubled a publication's cost (bench/bench_publish.py, docs/cache.md).
    """

    __slots__ = ("_shards", "_mask", "_owned", "_len", "copied")

    def __init__(self, items: Mapping[K, V] | None = None):
        self._shards: list[dict[K, V]] = [{}]  # a power of two of them
        self._mask = 0  # len(self._shards) - 1: a key's shard is hash(key) & _mask
        self._owned = bytearray(b"\x01")  # per shard, 1: not shared with a published view
        self._len = 0
        self.copied = 0  # entries copied by copy-on-write so far (benchmark figure)
        for key, value in (items or {}).items():
            self[key] = value

    def _writable(self, key: K) -> dict[K, V]:
        i = hash(key) & self._mask
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
        self._owned = bytearray(len(self._shards))
        return FrozenShards(tuple(self._shards), self._len)

    def __getitem__(self, key: K) -> V:
        return self._shards[hash(key) & self._mask][key]

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._shards[hash(key) & self._mask].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._shards[hash(key) & self._mask]

    def __setitem__(self, key: K, value: V) -> None:
        shard = self._writable(key)
        if key in shard:
            shard[key] = value
            return
        shard[key] = value
        self._len += 1
        if self._len > len(self._shards) ** 2:
            self._split()

    def _split(self) -> None:
        """Twice the shards: shard i splits into i and i + n by one more bit of the key's hash.
        New dicts throughout, so a published view keeps its shards; O(entries), once per
        doubling. Shards are never merged again: a mapping keeps the count of its largest size."""
        n = len(self._shards)
        low: list[dict[K, V]] = []
        high: list[dict[K, V]] = []
        for shard in self._shards:
            stay: dict[K, V] = {}
            move: dict[K, V] = {}
            for key, value in shard.items():
                (move if hash(key) & n else stay)[key] = value
            low.append(stay)
            high.append(move)
        self._shards = low + high
        self._mask = 2 * n - 1
        self._owned = bytearray(b"\x01" * (2 * n))

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


# Entries per chunk of a SortedChunks (split at twice that). A write after a publication copies
# one chunk (two lists); 50,000 pods: 128 copies a quarter of what 512 did, with reads and
# insertions no slower (bench/bench_publish.py).
CHUNK = 128


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
    copies the chunk it changes (two lists of at most 256 entries) instead of the whole order.
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


SET_CHUNK = 128  # keys per chunk of a ChunkedSet at most


class ChunkedSetView(Generic[K]):
    """A published ChunkedSet: its keys in the order they were added; never changes. Read it
    with ``len``, iteration and ``in`` (``in`` tries every chunk: the writer does not need it)."""

    __slots__ = ("_chunks", "_len")

    def __init__(self, chunks: tuple[dict[K, None], ...], length: int):
        self._chunks = chunks
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        return chain.from_iterable(self._chunks)

    def __contains__(self, key: object) -> bool:
        return any(key in chunk for chunk in self._chunks)

    def __repr__(self) -> str:
        return f"ChunkedSetView({list(self)!r})"


class ChunkedSet(Generic[K]):
    """A set of keys kept in the order they were added, in dicts ("chunks") of at most
    SET_CHUNK keys. ``view()`` returns a ChunkedSetView sharing the chunks; after ``share()``
    (the owner's publication) the next write copies the chunk it changes, so a write copies at
    most two chunks (the removal's and a merge with a neighbour, or the last chunk for an
    addition), however many keys the set holds. An index bucket of 8,000 Jobs copied whole on
    such a write: ~8,000 entries, against at most 256 here.

    Every ``add`` passes a position greater than that of every earlier one (the store passes
    the change counter the object is about to get), and ``discard`` the position the key was
    added with: each chunk remembers a position no greater than its first key's, so a key's
    chunk is found by bisecting them, with no map of the keys. Two neighbouring chunks always
    hold more than SET_CHUNK keys together (a removal that leaves them fewer merges them), so a
    set of n keys has at most 2n / SET_CHUNK + 1 chunks."""

    __slots__ = ("_chunks", "_firsts", "_owned", "_len", "copied")

    def __init__(self, first: dict[K, None], owned: bool):
        """A set of the keys of ``first`` (in its order), which becomes the first chunk;
        ``owned`` False: a published view shares it."""
        self._chunks: list[dict[K, None]] = [first]
        self._firsts: list[int] = [0]  # per chunk: a position no greater than its keys'
        self._owned: list[bool] = [owned]  # False: a published view shares the chunk
        self._len = len(first)
        self.copied = 0  # entries copied by copy-on-write so far (benchmark figure)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        return chain.from_iterable(self._chunks)

    def share(self) -> None:
        """Every chunk is now shared with a published view: the next write to one copies it."""
        self._owned = [False] * len(self._chunks)

    def view(self) -> ChunkedSetView[K]:
        return ChunkedSetView(tuple(self._chunks), self._len)

    def single(self) -> tuple[dict[K, None], bool] | None:
        """(the chunk, whether it is the writer's own) when there is one chunk, else None."""
        return (self._chunks[0], self._owned[0]) if len(self._chunks) == 1 else None

    def _writable(self, i: int) -> dict[K, None]:
        chunk = self._chunks[i]
        if not self._owned[i]:
            self.copied += len(chunk)
            chunk = self._chunks[i] = chunk.copy()
            self._owned[i] = True
        return chunk

    def add(self, key: K, position: int) -> bool:
        """Add ``key`` at the end (False: it is there already; it can only be in the last
        chunk, as it was added at the latest position)."""
        chunks = self._chunks
        last = chunks[-1]
        if key in last:
            return False
        if len(last) >= SET_CHUNK:
            chunks.append({key: None})
            self._firsts.append(position)
            self._owned.append(True)
        else:
            if not self._owned[-1]:
                last = self._writable(len(chunks) - 1)
            last[key] = None
        self._len += 1
        return True

    def discard(self, key: K, position: int | None) -> bool:
        """Remove ``key``, added at ``position`` (None: unknown, every chunk is tried); False
        when it is not there. Merges the chunk it was in with a neighbour when both hold at
        most SET_CHUNK keys together."""
        chunks = self._chunks
        i = max(0, bisect.bisect_right(self._firsts, position) - 1) if position is not None else 0
        chunk = chunks[i]
        if key not in chunk:
            found = next((j for j, other in enumerate(chunks) if key in other), None)
            if found is None:
                return False
            i, chunk = found, chunks[found]
        if not self._owned[i]:
            chunk = self._writable(i)
        del chunk[key]
        self._len -= 1
        size = len(chunk)
        if i and len(chunks[i - 1]) + size <= SET_CHUNK:
            self._merge(i - 1)
        elif i + 1 < len(chunks) and size + len(chunks[i + 1]) <= SET_CHUNK:
            self._merge(i)
        return True

    def _merge(self, a: int) -> None:
        """Merge chunk ``a + 1`` into chunk ``a``."""
        chunks = self._chunks
        if not chunks[a]:
            # The empty chunk goes; its position, no greater than the next one's, stays.
            chunks[a], self._owned[a] = chunks[a + 1], self._owned[a + 1]
        elif chunks[a + 1]:
            self.copied += len(chunks[a + 1])
            self._writable(a).update(chunks[a + 1])
        del chunks[a + 1], self._firsts[a + 1], self._owned[a + 1]
