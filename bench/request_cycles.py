"""Which objects does serving a request leave to the cyclic garbage collector? A diagnostic; prints
numbers, not a test.

    .venv/bin/python -m bench.request_cycles              # the demo cluster, every page kind
    .venv/bin/python -m bench.request_cycles --cycle      # plus one cycle per path, object by object

Objects in a reference cycle are not freed when the request ends but at the GC's next collection
of the generation they reached (dashboard/kube/memory.py ``tune_gc``). This starts the demo
simulated cluster, syncs a cache in this process, and calls Django's WSGI handler directly (what
gunicorn calls; the test client adds cycles of its own), each path a few times with the GC paused
and ``gc.DEBUG_SAVEALL`` set; it then prints per request how many objects the collection found and
their most common types, and with ``--cycle`` the objects of one cycle through the request.
"""

from __future__ import annotations

import argparse
import collections
import gc
import logging
import os
import sys
import tempfile
from collections import deque
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
os.environ["VOLCANO_UI_DEBUG"] = "false"
os.environ["VOLCANO_UI_ALLOWED_HOSTS"] = "localhost"


def one_cycle(start: object, members: set[int]) -> list[object]:
    """A shortest reference path from ``start`` back to itself through ``members`` (ids), or []."""
    parent: dict[int, int | None] = {id(start): None}
    objects = {id(start): start}
    queue = deque([start])
    while queue:
        obj = queue.popleft()
        for ref in gc.get_referents(obj):
            if ref is start:
                path, key = [obj], id(obj)
                while parent[key] is not None:
                    key = parent[key]
                    path.append(objects[key])
                return list(reversed(path))
            if id(ref) in members and id(ref) not in parent:
                parent[id(ref)] = id(obj)
                objects[id(ref)] = ref
                queue.append(ref)
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="requests per path")
    parser.add_argument("--cycle", action="store_true", help="print one cycle through the request per path")
    args = parser.parse_args(argv)

    import django

    django.setup()
    logging.disable(logging.CRITICAL)
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler

    from bench.common import start_sim, wsgi_get
    from dashboard.kube import build_cluster_cache, override_cluster_cache
    from dashboard.kube.cache import CacheOptions

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    tmp = tempfile.TemporaryDirectory(prefix="request-cycles-")
    sim = start_sim(Path(tmp.name), scenario="demo", extra=["--churn", "off"])
    cache = build_cluster_cache(
        kubeconfig=str(sim.kubeconfig), context="", mode="kubeconfig", options=CacheOptions()
    )
    try:
        cache.start()
        cache.wait_synced(timeout=120)
        snap = cache.snapshot()
        job = snap.jobs.all()[0]["metadata"]
        pgs = snap.podgroups.all()
        queue = snap.queues.all()[0]["metadata"]["name"]
        one = f"/jobs/{job['namespace']}/{job['name']}/"
        paths = [
            ("/", False),
            ("/jobs/", False),
            ("/jobs/?phase=Running", True),
            (one, False),
            (one + "?f=status&v=0", True),
            ("/queues/", False),
            (f"/queues/{queue}/", False),
            ("/podgroups/", False),
            *[(f"/podgroups/{m['namespace']}/{m['name']}/", False) for m in (o["metadata"] for o in pgs[:1])],
            ("/jobs/no-such-namespace/no-such-job/", False),
            ("/healthz", False),
        ]
        app = WSGIHandler()
        with override_cluster_cache(cache):
            for path, htmx in paths:  # warm the caches and memos: count the steady state
                wsgi_get(app, path, htmx)
                wsgi_get(app, path, htmx)
            for path, htmx in paths:
                gc.collect()
                gc.disable()
                gc.set_debug(gc.DEBUG_SAVEALL)
                try:
                    for _ in range(args.repeat):
                        status, _body = wsgi_get(app, path, htmx)
                    found = gc.collect()
                    garbage = list(gc.garbage)
                finally:
                    gc.garbage.clear()
                    gc.set_debug(0)
                    gc.enable()
                types = collections.Counter(type(o).__name__ for o in garbage)
                print(
                    f"{status} {path + (' (htmx)' if htmx else ''):52} "
                    f"{found / args.repeat:6.0f} objects/request  "
                    f"{', '.join(f'{name} {n / args.repeat:g}' for name, n in types.most_common(6))}",
                    flush=True,
                )
                if args.cycle:
                    members = {id(o) for o in garbage}
                    start = next((o for o in garbage if type(o).__name__ == "WSGIRequest"), None)
                    for obj in one_cycle(start, members) if start is not None else []:
                        print(f"      {type(obj).__name__:16} {repr(obj)[:100]}")
                del garbage
    finally:
        cache.stop()
        sim.stop()
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
