"""gunicorn configuration for volcano-ui: ``gunicorn -c deploy/gunicorn.conf.py``.

gthread workers: each worker process serves requests from a pool of threads and holds ONE cluster
cache (one watch per kind). The informer threads are started after the fork (``post_fork``),
because threads do not survive ``fork``; ``preload_app`` stays off for the same reason. More
workers multiply the watch load on the API server and the memory held, so prefer threads
(VOLCANO_UI_THREADS) and scale out with replicas. /metrics is per worker
(docs/deployment.md#health-and-metrics).

Every value comes from the environment through the same strict parsers as the settings, and the
Django settings module is imported here, in the master, before any worker is forked: a bad
variable (ours or the settings') stops gunicorn with one line, "error: <variable, value, what is
allowed>", and exit status 2, instead of every worker failing to boot with three tracebacks.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys

from django.core.exceptions import ImproperlyConfigured

from dashboard.gunicorn_worker import limits_from_env
from dashboard.health_server import parse_bind
from volcano_ui.env import env_int, env_str


def _configuration_error(exc: ImproperlyConfigured):
    # SystemExit passes through gunicorn's config loader, which turns any Exception into
    # "Failed to read config file" plus a traceback.
    print(f"error: {exc}", file=sys.stderr, flush=True)
    sys.exit(2)


wsgi_app = "volcano_ui.wsgi:application"
# gthread with slow clients bounded and a fast 503 when every thread is busy (dashboard/gunicorn_worker.py).
worker_class = "dashboard.gunicorn_worker.GuardedThreadWorker"
try:
    bind = [env_str("VOLCANO_UI_BIND", "0.0.0.0:8000")]
    # /healthz, /readyz and /metrics on a listener of their own in every worker, which no page load
    # can hold up (dashboard/health_server.py); empty: only on the page port.
    health_bind = env_str("VOLCANO_UI_HEALTH_BIND", "0.0.0.0:8081").strip()
    if health_bind:
        parse_bind(health_bind)
    workers = env_int("VOLCANO_UI_WORKERS", 1, minimum=1, maximum=64)
    threads = env_int("VOLCANO_UI_THREADS", 8, minimum=1, maximum=512)
    # Connections a worker holds open (kept-alive ones included); more wait in the listen backlog.
    worker_connections = env_int("VOLCANO_UI_WORKER_CONNECTIONS", 200, minimum=threads + 1, maximum=100_000)
    limits_from_env()  # VOLCANO_UI_HEADER_TIMEOUT, VOLCANO_UI_MAX_QUEUED, read again by each worker
    timeout = env_int("VOLCANO_UI_WORKER_TIMEOUT", 30, minimum=5, maximum=3600)
    # Kubernetes sends SIGTERM and waits terminationGracePeriodSeconds (30 s by default) before SIGKILL.
    graceful_timeout = env_int("VOLCANO_UI_GRACEFUL_TIMEOUT", 20, minimum=1, maximum=3600)
    # Reads and checks every setting (volcano_ui/env.py). Importing the module starts nothing (the
    # informers start in post_fork); the workers reuse the imported module.
    importlib.import_module(os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings"))
except ImproperlyConfigured as exc:
    _configuration_error(exc)
except ValueError as exc:
    _configuration_error(ImproperlyConfigured(f"VOLCANO_UI_HEALTH_BIND: {exc}"))
keepalive = 5
preload_app = False
# The worker heartbeat file: /dev/shm is writable (and fast) on a read-only root filesystem.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
# The application logs one line per request, with its request id (dashboard/middleware.py).
accesslog = None
errorlog = "-"
loglevel = env_str("VOLCANO_UI_LOG_LEVEL", "INFO").lower()
proc_name = "volcano-ui"

# With VOLCANO_UI_LOG_FORMAT=json gunicorn's own lines (boot, worker start/exit, errors) are JSON
# objects too, like the application's, so a log pipeline gets one format from the process.
if env_str("VOLCANO_UI_LOG_FORMAT", "text").strip() == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "dashboard.logs.JsonFormatter"}},
        "filters": {"request_id": {"()": "dashboard.logs.RequestIdFilter"}},
        "handlers": {
            name: {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "filters": ["request_id"],
                "stream": stream,
            }
            for name, stream in (("console", "ext://sys.stdout"), ("error_console", "ext://sys.stderr"))
        },
        "root": {"level": loglevel.upper(), "handlers": ["console"]},
        "loggers": {
            "gunicorn.error": {"level": loglevel.upper(), "handlers": ["error_console"], "propagate": False},
            "gunicorn.access": {"level": loglevel.upper(), "handlers": ["console"], "propagate": False},
        },
    }

_log = logging.getLogger("volcano_ui.gunicorn")


def _kube_hook(name: str):
    """``dashboard.kube.<name>`` if the cache package provides it, else None."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")
    django.setup()
    import dashboard.kube

    return getattr(dashboard.kube, name, None)


def post_fork(server, worker):
    """In the new worker: fork its health listener process, then start the informers (list +
    watch per kind) before serving requests. The listener is a process of the worker's own, not
    the master's: its answers say what this worker's cache holds; and a process, not a thread, so
    that no load on the worker's interpreter lock delays a probe (dashboard/health_server.py). It
    is forked first, while the worker has no other thread and before Django's apps are loaded
    (it needs none of them)."""
    listener = None
    if health_bind:
        from dashboard import health_server

        pages = [sock.fileno() for sock in getattr(worker, "sockets", [])]
        listener = health_server.start_process(health_bind, stale_after=timeout, close_fds=pages)
        worker.health_listener = listener
        server.log.info("worker %s: health listener on %s (pid %s)", worker.pid, health_bind, listener.pid)
    start = _kube_hook("start")
    if start is not None:
        start()
        server.log.info("worker %s: cluster cache informers started", worker.pid)
    if listener is not None:
        listener.start_beacon()


def worker_exit(server, worker):
    """In the exiting worker: stop the watches cleanly (closes the streams, joins the threads)."""
    listener = getattr(worker, "health_listener", None)
    if listener is not None:
        listener.stop()
    try:
        stop = _kube_hook("stop")
        if stop is not None:
            stop()
    except Exception:  # a failed stop must not hide the reason the worker is exiting
        server.log.exception("worker %s: stopping the cluster cache failed", worker.pid)
