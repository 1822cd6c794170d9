"""Django's per-request state kept in plain thread-locals.

Django keeps the active language, the current time zone, the script prefix and the URLconf
override in ``asgiref.local.Local`` objects. In a synchronous thread these behave as
thread-locals, but every read takes the object's one lock, shared by all threads. A page reads
the active language once per translated string, hundreds of times. Under gunicorn's thread
worker a thread that holds that lock when the interpreter switches threads makes every other
reader wait for it, and the waits cost more CPU than the reads (measured by
``python -m bench.bench_locals``).

The dashboard serves WSGI only: no async views and no ``async_to_sync``, so nothing relies on a
``Local`` following a task across threads, and ``threading.local`` gives each request thread the
same view. ``install()`` swaps them once, at start-up, before any request thread runs.
"""

from __future__ import annotations

import threading

from asgiref.local import Local
from django.urls import base as urls_base
from django.utils import timezone
from django.utils.translation import trans_real

# (module, attribute) of each request-scoped Local that Django reads per request.
SWAPPED = (
    (trans_real, "_active"),
    (timezone, "_active"),
    (urls_base, "_prefixes"),
    (urls_base, "_urlconfs"),
)


def install() -> None:
    """Replace each of ``SWAPPED`` with a ``threading.local``; idempotent. One that is not an
    asgiref ``Local`` (already swapped, or changed by a Django release) is left alone."""
    for module, name in SWAPPED:
        if isinstance(getattr(module, name, None), Local):
            setattr(module, name, threading.local())


def installed() -> bool:
    return all(isinstance(getattr(module, name), threading.local) for module, name in SWAPPED)
