"""Process memory: the C allocator's settings and its free memory (glibc only; no-ops elsewhere),
and the cyclic garbage collector's young threshold (``tune_gc``, any CPython).

Why: the cache is filled by decoding a few hundred list pages of several MB each. Python's own
allocator returns its 1 MiB arenas to the system when they empty, but larger blocks (page bodies,
big strings and lists, dict tables) come from glibc's malloc, which keeps freed memory in its heaps
and, with many threads, opens one heap ("arena") per contending thread, up to 8 per core. A worker
with 5 informer threads and 8 request threads then holds freed memory in a dozen heaps that RSS
counts (docs/benchmarks.md: ~130 MB above the cache itself). Two remedies, both measured with
bench/bench_memory.py and ``python -m bench.run`` (docs/cache.md):

- ``limit_arenas()``: ``mallopt(M_ARENA_MAX, 2)`` before the threads start, unless the operator
  set ``MALLOC_ARENA_MAX`` (glibc's own environment variable, which then wins);
- ``release_free_memory()``: ``malloc_trim(0)`` after every full list (the page bodies are garbage
  by then) and, from ``MemoryReleaser``, every few seconds while serving: it hands the free pages of
  every heap back to the system (~4 ms at 50,000 pods).

Measured in-process (``python -m bench.bench_memory --pages 60``: 60 s of page rendering with 8
threads after a full sync at 50,000 pods): RSS 307 MB synced, 409 MB after the pages without
releases, 329-344 MB with them. Tried and dropped: a fixed ``M_MMAP_THRESHOLD`` of 256 KiB (large
blocks always mapped and unmapped) saved nothing more once the releases run and cost ~4 ms more
CPU per page (21 vs 25 ms, ``--pages 30 --mmap-threshold``, two runs each).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # <malloc.h>
M_MMAP_THRESHOLD = -3  # only for bench/bench_memory.py --mmap-threshold
DEFAULT_ARENAS = 2

_lock = threading.Lock()
_libc: ctypes.CDLL | None = None
_loaded = False


def _glibc() -> ctypes.CDLL | None:
    """The process's C library when it is glibc (has gnu_get_libc_version, mallopt, malloc_trim)."""
    global _libc, _loaded
    with _lock:
        if not _loaded:
            _loaded = True
            if sys.platform.startswith("linux"):
                try:
                    libc = ctypes.CDLL(None)
                    libc.gnu_get_libc_version.restype = ctypes.c_char_p
                    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
                    libc.malloc_trim.argtypes = (ctypes.c_size_t,)
                    _libc = libc
                except (OSError, AttributeError):  # musl, or symbols hidden: leave the allocator be
                    _libc = None
        return _libc


def describe() -> str:
    """A short text for benchmarks: which C library, and the arena limit in force."""
    libc = _glibc()
    if libc is None:
        return "not glibc: allocator left as is"
    version = libc.gnu_get_libc_version().decode()
    env = os.environ.get("MALLOC_ARENA_MAX")
    arenas = f"MALLOC_ARENA_MAX={env} (environment)" if env else f"M_ARENA_MAX={_arenas_set or 'default'}"
    return f"glibc {version}, {arenas}, malloc_trim after full lists and periodically"


_arenas_set = 0


def limit_arenas(n: int = DEFAULT_ARENAS) -> bool:
    """Cap glibc's malloc heaps at ``n`` (call before starting threads; heaps already opened stay).
    Returns True when set; False on another C library, or when MALLOC_ARENA_MAX is in the
    environment (the operator's choice, already applied by glibc at start-up)."""
    global _arenas_set
    libc = _glibc()
    if libc is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    if libc.mallopt(M_ARENA_MAX, n) != 1:
        log.warning("mallopt(M_ARENA_MAX, %d) failed", n)
        return False
    _arenas_set = n
    return True


# The cyclic garbage collector's first threshold (container allocations minus deallocations between
# young collections; CPython's default is 700). See tune_gc().
GC_THRESHOLD0 = 10_000


def tune_gc(threshold0: int = GC_THRESHOLD0) -> bool:
    """Raise the cyclic GC's young-generation threshold to ``threshold0`` (gc.set_threshold; the
    older generations' thresholds stay). Returns True when changed, False when it already was at
    least that or the collector is off (an embedding application's choice is kept).

    Why: a page allocates thousands of containers while it renders. With CPython's default of 700,
    one page triggers many young collections, so the objects it still holds survive two of them
    and land in the oldest generation, which is collected only when it grew by a quarter; each
    such collection walks the cache's ~600,000 GC-tracked objects. That was measured when every
    request was also held in reference cycles (the template contexts, ``request.htmx``; freed by
    reference counting since, see dashboard/template_backend.py): 4 full collections a minute in
    the soak's worker, and in-process (``python -m bench.memory_growth --gc-threshold0 700``
    against the default, side by side, 9.5 minutes each) 37,042 requests served at 10,000 instead
    of 19,465, full collections 10 instead of 39, memory level alike. It has not been measured
    again with requests that leave no cycles. Process-wide;
    the cache calls it once at start, with limit_arenas."""
    current = gc.get_threshold()
    if current[0] == 0 or current[0] >= threshold0:  # 0: the GC is disabled; leave it so
        return False
    gc.set_threshold(threshold0, *current[1:])
    return True


def release_free_memory() -> bool:
    """Return the C allocator's free memory to the system (``malloc_trim(0)``); True when the C
    library offers that. Costs a walk over the heaps (milliseconds): call after bulk work, not per
    event."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


class MemoryReleaser:
    """A daemon thread calling ``release_free_memory()`` every ``interval`` seconds (the serving
    worker: pages free tens of MB of large blocks a minute that glibc would otherwise keep), after
    every ``before_every``-th time the ``before`` callables (tables that drop entries nothing else
    uses, e.g. trim.share.purge, ~0.1-0.4 s at 50,000 pods: not worth running every few seconds).
    ``start()``/``stop()`` are idempotent; on another C library it runs only the ``before`` tasks."""

    def __init__(self, interval: float, before: tuple[Callable[[], object], ...] = (), before_every: int = 1):
        self.interval = interval
        self.before = before
        self.before_every = max(1, before_every)
        self.releases = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.interval <= 0 or self._thread is not None or (_glibc() is None and not self.before):
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-release", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        rounds = 0
        while not self._stop.wait(self.interval):
            rounds += 1
            for task in self.before if rounds % self.before_every == 0 else ():
                try:
                    task()
                except Exception:  # a failing table must not stop the releases
                    log.exception("memory release: %r failed", task)
            release_free_memory()
            self.releases += 1

    def stop(self, join_timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(join_timeout)
        self._thread = None
