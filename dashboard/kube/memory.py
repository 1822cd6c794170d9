"""Process memory: the C allocator's settings and its free memory (glibc only; no-ops elsewhere).

Why: the cache is filled by decoding a few hundred list pages of several MB each. Python's own
allocator returns its 1 MiB arenas to the system when they empty, but larger blocks (page bodies,
big strings and lists, dict tables) come from glibc's malloc, which keeps freed memory in its heaps
and, with many threads, opens one heap ("arena") per contending thread, up to 8 per core. A worker
with 5 informer threads and 8 request threads then holds freed memory in a dozen heaps that RSS
counts (README "Benchmarks": ~130 MB above the cache itself). Two remedies, both measured with
bench/bench_memory.py and ``python -m bench.run`` (README "Cluster cache"):

- ``limit_arenas()``: ``mallopt(M_ARENA_MAX, 2)`` before the threads start, unless the operator
  set ``MALLOC_ARENA_MAX`` (glibc's own environment variable, which then wins);
- ``release_free_memory()``: ``malloc_trim(0)`` after every full list (the page bodies are garbage
  by then), which hands the free pages of every heap back to the system.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # <malloc.h>
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
    return f"glibc {version}, {arenas}, malloc_trim after full lists"


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


def release_free_memory() -> bool:
    """Return the C allocator's free memory to the system (``malloc_trim(0)``); True when the C
    library offers that. Costs a walk over the heaps (milliseconds): call after bulk work, not per
    event."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
