"""Settings for volcano-ui: one module, every value read strictly from the environment.

See README.md "Configuration" for the table of variables; deploy/.env.example lists them all.
A bad value raises ImproperlyConfigured at start-up (volcano_ui/env.py).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from volcano_ui.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_str,
    env_time_zone,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# templates/, static/ and locale/ sit at the top of a checkout; an installed wheel carries them
# inside the volcano_ui package instead (setup.py).
ASSET_DIR = BASE_DIR if (BASE_DIR / "templates").is_dir() else Path(__file__).resolve().parent

DEBUG = env_bool("VOLCANO_UI_DEBUG", False)
SECRET_KEY = env_str("VOLCANO_UI_SECRET_KEY", "")
_SECRET_KEY_FROM_ENV = bool(SECRET_KEY)
if SECRET_KEY and (len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5):
    # Django's own deploy check asks for the same (security.W009); a short key can be guessed.
    raise ImproperlyConfigured(
        "VOLCANO_UI_SECRET_KEY (or VOLCANO_UI_SECRET_KEY_FILE) must be at least 50 characters with at "
        "least 5 different ones, e.g. python3 -c 'import secrets; print(secrets.token_urlsafe(50))'."
    )
if not SECRET_KEY:
    if not DEBUG and env_bool("VOLCANO_UI_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("VOLCANO_UI_SECRET_KEY (or VOLCANO_UI_SECRET_KEY_FILE) must be set.")
    # A per-process random key: fine for the demo and for the read-only modes, which sign nothing
    # that must outlive the process. The token sign-in mode requires a real key.
    from django.core.management.utils import get_random_secret_key

    SECRET_KEY = get_random_secret_key()

ALLOWED_HOSTS = env_list("VOLCANO_UI_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
if not ALLOWED_HOSTS and not DEBUG:
    # Set but empty (or only commas): Django would answer every page 400 while /healthz, answered
    # before host validation, stays 200, so the pod looks healthy. With DEBUG, Django itself
    # allows localhost when the list is empty.
    raise ImproperlyConfigured(
        f"VOLCANO_UI_ALLOWED_HOSTS={env_str('VOLCANO_UI_ALLOWED_HOSTS')!r} lists no host: it must list "
        "at least one host name (comma-separated); use * to allow any."
    )

INSTALLED_APPS = [
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "dashboard",
    "dashboard.history",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics are answered here, before host validation and the TLS redirect:
    # kubelet probes and Prometheus address the pod IP over plain HTTP (dashboard/health.py).
    "dashboard.middleware.HealthEndpointsMiddleware",
    # Request id, JSON log context, one log line and one latency observation per request.
    "dashboard.middleware.RequestContextMiddleware",
    # X-Forwarded-Proto (VOLCANO_UI_PROXY_SSL_HEADER) only from VOLCANO_UI_TRUSTED_PROXIES, when set.
    "dashboard.middleware.untrusted_forwarded_proto_middleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Content-Security-Policy; listed after XFrameOptionsMiddleware so that it runs first on the
    # response and can exempt kiosk framing (VOLCANO_UI_FRAME_ANCESTORS).
    "dashboard.middleware.SecurityHeadersMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Who is asking (VOLCANO_UI_ACCESS_MODE); requests without an identity never reach a view.
    "dashboard.middleware.IdentityMiddleware",
]

ROOT_URLCONF = "volcano_ui.urls"
WSGI_APPLICATION = "volcano_ui.wsgi.application"

TEMPLATES = [
    {
        # Django's backend, freeing each rendering's context when done (dashboard/template_backend.py);
        # named "django" like Django's own, which is the engine django-template-partials extends.
        "NAME": "django",
        "BACKEND": "dashboard.template_backend.DjangoTemplates",
        "DIRS": [ASSET_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.template.context_processors.tz",
                "django.template.context_processors.csrf",
                "dashboard.access.context",
            ],
        },
    }
]

# --- History (dashboard/history, docs/history.md) -------------------------------------------
# The one database holds the history of queues, Jobs and pods recorded from the watches. A path is
# a SQLite file (the embedded default: a replica's own store); postgresql://user:password@host:5432/db
# is a shared PostgreSQL, written by the one replica that holds VOLCANO_UI_HISTORY_LEASE.
VOLCANO_UI_HISTORY = env_bool("VOLCANO_UI_HISTORY", True)
VOLCANO_UI_HISTORY_DB = env_str("VOLCANO_UI_HISTORY_DB", "").strip() or str(
    Path(tempfile.gettempdir()) / f"volcano-ui-history-{os.getuid()}.sqlite3"
)
VOLCANO_UI_HISTORY_SAMPLE_SECONDS = env_int("VOLCANO_UI_HISTORY_SAMPLE_SECONDS", 60, minimum=5, maximum=3600)
VOLCANO_UI_HISTORY_RETENTION_DAYS = env_int("VOLCANO_UI_HISTORY_RETENTION_DAYS", 14, minimum=1, maximum=3660)
# Watch changes waiting for the recorder; beyond this they are dropped and counted.
VOLCANO_UI_HISTORY_QUEUE_SIZE = env_int(
    "VOLCANO_UI_HISTORY_QUEUE_SIZE", 20000, minimum=100, maximum=10_000_000
)
# "namespace/name" of a coordination.k8s.io/v1 Lease: the replica holding it records, the others
# read. Empty: every process records into its own store (a SQLite file is locked by one process).
VOLCANO_UI_HISTORY_LEASE = env_str("VOLCANO_UI_HISTORY_LEASE", "").strip()
if VOLCANO_UI_HISTORY_LEASE and not re.fullmatch(
    r"[a-z0-9-]{1,63}/[a-z0-9.-]{1,253}", VOLCANO_UI_HISTORY_LEASE
):
    raise ImproperlyConfigured(
        f"VOLCANO_UI_HISTORY_LEASE={VOLCANO_UI_HISTORY_LEASE!r} is not namespace/name of a Lease, "
        "e.g. volcano-system/volcano-ui-history."
    )


# A serving thread keeps its history connection between requests (opening one, with SQLite's
# PRAGMAs, was a tenth of a Job page's time); a kept connection is checked before its first use
# in a request, so after an outage the page reconnects (or shows the history notice) instead of
# failing on a dead connection. Connections are per thread (gthread: one per serving thread).
HISTORY_CONNECTION = {"CONN_MAX_AGE": 300, "CONN_HEALTH_CHECKS": True}


def _history_database(value: str) -> dict:
    from urllib.parse import unquote, urlsplit

    if not value.startswith(("postgresql://", "postgres://")):
        return {
            **HISTORY_CONNECTION,
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": value,
            # WAL: pages read while the recorder writes; a busy file waits at most 5 s.
            "OPTIONS": {"timeout": 5, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"},
        }
    url = urlsplit(value)
    try:
        port = url.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"VOLCANO_UI_HISTORY_DB: {exc}") from exc
    database = unquote(url.path.lstrip("/"))
    if not url.hostname or not database:
        raise ImproperlyConfigured(
            "VOLCANO_UI_HISTORY_DB must be a file path or postgresql://user:password@host:5432/database "
            "(host and database name required)."
        )
    return {
        **HISTORY_CONNECTION,
        "ENGINE": "django.db.backends.postgresql",
        "NAME": database,
        "USER": unquote(url.username or ""),
        "PASSWORD": unquote(url.password or ""),
        "HOST": url.hostname,
        "PORT": str(port or 5432),
        # A page waits at most 3 s for a database that does not answer, then shows a notice.
        "OPTIONS": {"connect_timeout": 3},
    }


DATABASES: dict = {"default": _history_database(VOLCANO_UI_HISTORY_DB)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
# The language and theme choices (dashboard/views/prefs.py THEME_COOKIE_AGE) last a year.
LANGUAGE_COOKIE_AGE = 365 * 86400
LOCALE_PATHS = [ASSET_DIR / "locale"]
USE_I18N = True
USE_TZ = True
TIME_ZONE = env_time_zone("VOLCANO_UI_TIME_ZONE", "UTC")

STATIC_URL = "static/"
STATICFILES_DIRS = [path for path in [ASSET_DIR / "static"] if path.is_dir()]
STATIC_ROOT = (
    Path(env_str("VOLCANO_UI_STATIC_ROOT", ""))
    if env_str("VOLCANO_UI_STATIC_ROOT", "")
    else (BASE_DIR / "staticfiles")
)
# Hashed, pre-compressed files served by WhiteNoise with far-future cache headers; the manifest is
# written by `collectstatic` (the image runs it at build time). DEBUG serves from the finders instead.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# --- Cluster access (dashboard/kube) --------------------------------------------------------
# "auto": in-cluster service account when running in a pod, else the kubeconfig.
VOLCANO_UI_CLUSTER = env_choice("VOLCANO_UI_CLUSTER", "auto", ("auto", "kubeconfig", "incluster"))
VOLCANO_UI_KUBECONFIG = env_str("VOLCANO_UI_KUBECONFIG", "") or env_str("KUBECONFIG", "")
VOLCANO_UI_KUBE_CONTEXT = env_str("VOLCANO_UI_KUBE_CONTEXT", "")
VOLCANO_UI_SCHEDULER_NAMES = env_list("VOLCANO_UI_SCHEDULER_NAMES", ["volcano"])
if not VOLCANO_UI_SCHEDULER_NAMES:
    # Set but empty: with VOLCANO_UI_POD_WATCH=selector no pod would be watched at all, and every
    # gang would read 0 pods with no notice.
    raise ImproperlyConfigured(
        f"VOLCANO_UI_SCHEDULER_NAMES={env_str('VOLCANO_UI_SCHEDULER_NAMES')!r} lists no scheduler: it must "
        "list at least one schedulerName (comma-separated), e.g. volcano."
    )
VOLCANO_UI_LIST_PAGE_SIZE = env_int("VOLCANO_UI_LIST_PAGE_SIZE", 500, minimum=1, maximum=10000)
VOLCANO_UI_WATCH_TIMEOUT = env_int("VOLCANO_UI_WATCH_TIMEOUT", 300, minimum=10, maximum=3600)
VOLCANO_UI_POLL_SECONDS = env_int("VOLCANO_UI_POLL_SECONDS", 2, minimum=1, maximum=3600)
# Whole-page requests a gunicorn worker renders at once (dashboard/gunicorn_worker.py PageGate); more
# wait for a slot while fragment polls pass. 0 (the default): no bound (docs/benchmarks.md).
VOLCANO_UI_RENDER_SLOTS = env_int("VOLCANO_UI_RENDER_SLOTS", 0, minimum=0, maximum=512)
# A timestamp at most this far in the future reads "just now" (clock skew); further, it is shown
# as an absolute time with "clock skew?" (dashboard.volcano.time.elapsed).
VOLCANO_UI_CLOCK_SKEW_SECONDS = env_int("VOLCANO_UI_CLOCK_SKEW_SECONDS", 300, minimum=0, maximum=86400)
# A Job longer than this in a transitional phase (Restarting, Aborting, Completing, Terminating), or
# a Job or PodGroup longer than this in deletion, is flagged "stuck" (seconds, default 10 minutes).
VOLCANO_UI_STUCK_SECONDS = env_int("VOLCANO_UI_STUCK_SECONDS", 600, minimum=1, maximum=604800)
# The namespace of the Volcano components' Deployments (scheduler, controllers, admission), whose
# readiness the overview and the kiosk show; a DNS label.
VOLCANO_UI_VOLCANO_NAMESPACE = env_str("VOLCANO_UI_VOLCANO_NAMESPACE", "volcano-system")
if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", VOLCANO_UI_VOLCANO_NAMESPACE):
    raise ImproperlyConfigured(
        f"VOLCANO_UI_VOLCANO_NAMESPACE={VOLCANO_UI_VOLCANO_NAMESPACE!r} is not a namespace name "
        "(a DNS label)."
    )
# With gangs waiting, a scheduler silent (no event, no PodGroup condition change) for longer than
# this many seconds is flagged on the overview and the kiosk.
VOLCANO_UI_SCHEDULER_SILENT_SECONDS = env_int(
    "VOLCANO_UI_SCHEDULER_SILENT_SECONDS", 300, minimum=10, maximum=86400
)
# Pods: "all" = one unfiltered watch filtered here (also catches pods of other schedulers that join
# a PodGroup by annotation); "selector" = one spec.schedulerName watch per scheduler name.
VOLCANO_UI_POD_WATCH = env_choice("VOLCANO_UI_POD_WATCH", "all", ("all", "selector"))
# Seconds without any byte on a watch (bookmarks included) before it is reconnected.
VOLCANO_UI_WATCH_INACTIVITY_TIMEOUT = env_int(
    "VOLCANO_UI_WATCH_INACTIVITY_TIMEOUT", 70, minimum=5, maximum=3600
)
# Ceiling of the informers' exponential reconnect backoff, in seconds.
VOLCANO_UI_BACKOFF_MAX = env_int("VOLCANO_UI_BACKOFF_MAX", 30, minimum=1, maximum=600)
# Events kept in memory: per involved object and in total (oldest dropped first).
VOLCANO_UI_EVENTS_PER_OBJECT = env_int("VOLCANO_UI_EVENTS_PER_OBJECT", 50, minimum=1, maximum=10000)
VOLCANO_UI_EVENTS_TOTAL = env_int("VOLCANO_UI_EVENTS_TOTAL", 20000, minimum=10, maximum=1000000)
# Seconds the final state of a deleted pod of a Volcano Job is kept (post-mortems; 0: not kept).
VOLCANO_UI_POD_RECORD_SECONDS = env_int("VOLCANO_UI_POD_RECORD_SECONDS", 86400, minimum=0, maximum=30 * 86400)

# "text" for a terminal, "json" for a log pipeline: one JSON object per line, each carrying the
# request id of the request it was logged in (dashboard/middleware.py).
VOLCANO_UI_LOG_FORMAT = env_choice("VOLCANO_UI_LOG_FORMAT", "text", ("text", "json"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "dashboard.logs.RequestIdFilter"},
        "readiness_probe": {"()": "dashboard.logs.ReadinessProbeFilter"},
    },
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "dashboard.logs.JsonFormatter"},
    },
    "handlers": {
        # Written from a thread of its own (dashboard/logs.py): no request waits for a write.
        "console": {
            "class": "dashboard.logs.BackgroundHandler",
            "filters": ["request_id"],
            "formatter": VOLCANO_UI_LOG_FORMAT,
        }
    },
    # /readyz's expected 503 (a kind not listed yet) is not an error worth a log line per probe.
    "loggers": {"django.request": {"filters": ["readiness_probe"]}},
    "root": {
        "handlers": ["console"],
        "level": env_choice(
            "VOLCANO_UI_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
        ),
    },
}

# --- Serving and security (deploy/, dashboard/middleware.py) -------------------------------
# Served to browsers over https, directly or behind a TLS-terminating proxy/Ingress: secure
# cookies, HSTS and a redirect from http (the health endpoints are answered before that redirect).
VOLCANO_UI_TLS = env_bool("VOLCANO_UI_TLS", False)
# The header a TLS-terminating proxy sets to "https", e.g. X-Forwarded-Proto. Only set this when
# every request passes through such a proxy: a client could otherwise claim https itself.
_proxy_ssl_header = env_str("VOLCANO_UI_PROXY_SSL_HEADER", "").strip()
if _proxy_ssl_header:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https")
SECURE_SSL_REDIRECT = VOLCANO_UI_TLS
SECURE_HSTS_SECONDS = (
    env_int("VOLCANO_UI_HSTS_SECONDS", 31536000, minimum=0, maximum=63072000) if VOLCANO_UI_TLS else 0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("VOLCANO_UI_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("VOLCANO_UI_HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    # Preloading is a one-way commitment that only the owner of the domain can make; it stays an
    # explicit opt-in instead of a warning in every `check --deploy`.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SESSION_COOKIE_SECURE = VOLCANO_UI_TLS
CSRF_COOKIE_SECURE = VOLCANO_UI_TLS
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
CSRF_TRUSTED_ORIGINS = env_list("VOLCANO_UI_CSRF_TRUSTED_ORIGINS", [])
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Who may embed the dashboard in a frame (CSP frame-ancestors): empty means nobody. A kiosk wall
# display may allow its own origin, e.g. "https://wall.example.com".
VOLCANO_UI_FRAME_ANCESTORS = env_list("VOLCANO_UI_FRAME_ANCESTORS", [])
for _source in VOLCANO_UI_FRAME_ANCESTORS:
    # CSP host-source / scheme-source / 'self' only: a ";" or a space would add or end directives.
    if not re.fullmatch(
        r"'self'|[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*://)?(?:\*\.)?[A-Za-z0-9.-]+(?::(?:\d{1,5}|\*))?",
        _source,
    ) or _source in ("*", "https:", "http:"):
        raise ImproperlyConfigured(
            f"VOLCANO_UI_FRAME_ANCESTORS: {_source!r} is not an origin such as https://wall.example.com "
            "(CSP frame-ancestors sources; wildcards for every site are not accepted)."
        )

# --- Access control (dashboard/access.py, docs/deployment.md#access-modes) -------------------------
# none: open and read-only (kiosk on a trusted network); proxy: identity from an authenticating
# reverse proxy's headers; token: sign in with a Kubernetes bearer token (TokenReview).
VOLCANO_UI_ACCESS_MODE = env_choice("VOLCANO_UI_ACCESS_MODE", "none", ("none", "proxy", "token"))
# Identity headers are believed only from these peers (REMOTE_ADDR), e.g. "127.0.0.1" for a
# sidecar proxy in the same pod.
VOLCANO_UI_TRUSTED_PROXIES = env_networks("VOLCANO_UI_TRUSTED_PROXIES", [])
if any(net.prefixlen == 0 for net in VOLCANO_UI_TRUSTED_PROXIES):
    raise ImproperlyConfigured(
        "VOLCANO_UI_TRUSTED_PROXIES must not trust every address (0.0.0.0/0 or ::/0): anyone could then "
        "claim any identity. List the proxy's addresses or its pod CIDR."
    )
VOLCANO_UI_PROXY_USER_HEADER = env_str("VOLCANO_UI_PROXY_USER_HEADER", "X-Forwarded-User")
VOLCANO_UI_PROXY_GROUPS_HEADER = env_str("VOLCANO_UI_PROXY_GROUPS_HEADER", "X-Forwarded-Groups")
# Peers allowed to read /metrics (cluster-wide totals), e.g. the Prometheus pods' CIDR; empty means
# any peer that did not come through the trusted proxy.
VOLCANO_UI_METRICS_ALLOWED_CIDRS = env_networks("VOLCANO_UI_METRICS_ALLOWED_CIDRS", [])
# A bearer token that may always read /metrics (Prometheus' authorization.credentials_file); in
# token mode /metrics needs it or a peer in VOLCANO_UI_METRICS_ALLOWED_CIDRS.
VOLCANO_UI_METRICS_TOKEN = env_str("VOLCANO_UI_METRICS_TOKEN", "").strip()
# How long a SubjectAccessReview answer is reused, in seconds.
VOLCANO_UI_ACCESS_CACHE_SECONDS = env_int("VOLCANO_UI_ACCESS_CACHE_SECONDS", 30, minimum=0, maximum=3600)
# While the API server cannot answer a review, its last answer is served (the page says "permissions
# as of <time>") for at most this many seconds more; 0 refuses as soon as an answer is old.
VOLCANO_UI_ACCESS_STALE_SECONDS = env_int("VOLCANO_UI_ACCESS_STALE_SECONDS", 3600, minimum=0, maximum=86400)
# The longest a request waits for the reviews it needs, in seconds (all of them together).
VOLCANO_UI_ACCESS_WAIT_SECONDS = env_float("VOLCANO_UI_ACCESS_WAIT_SECONDS", 1.5, minimum=0.05, maximum=30)
# Write actions (suspend/resume/restart/terminate/delete a Job, open/close a Queue): off unless
# asked for, and only ever with an authenticated access mode.
VOLCANO_UI_ENABLE_ACTIONS = env_bool("VOLCANO_UI_ENABLE_ACTIONS", False)
if VOLCANO_UI_ENABLE_ACTIONS and VOLCANO_UI_ACCESS_MODE == "none":
    raise ImproperlyConfigured(
        "VOLCANO_UI_ENABLE_ACTIONS=true needs VOLCANO_UI_ACCESS_MODE=proxy or token: "
        "write actions are never offered to anonymous users."
    )
if VOLCANO_UI_ACCESS_MODE == "proxy" and not VOLCANO_UI_TRUSTED_PROXIES:
    raise ImproperlyConfigured(
        "VOLCANO_UI_ACCESS_MODE=proxy needs VOLCANO_UI_TRUSTED_PROXIES (the proxy's addresses or CIDRs): "
        "identity headers from anyone else are ignored."
    )
if VOLCANO_UI_ACCESS_MODE == "token" and not _SECRET_KEY_FROM_ENV and not DEBUG:
    raise ImproperlyConfigured(
        "VOLCANO_UI_ACCESS_MODE=token needs VOLCANO_UI_SECRET_KEY (or VOLCANO_UI_SECRET_KEY_FILE): "
        "it signs the session cookie, which must stay valid across restarts and workers."
    )
# --- Container logs (dashboard/views/logs.py, dashboard/kube/logs.py) -------------------------
# Logs are read from the API server per request (never cached), after a SubjectAccessReview for
# "get pods/log" in proxy/token modes; false turns the logs pages off (e.g. a kiosk in mode none).
VOLCANO_UI_LOGS = env_bool("VOLCANO_UI_LOGS", True)
# Bytes read per container per request (the API's limitBytes).
VOLCANO_UI_LOGS_MAX_BYTES = env_int(
    "VOLCANO_UI_LOGS_MAX_BYTES", 2 * 1024 * 1024, minimum=1024, maximum=64 * 1024 * 1024
)
# Log reads open at once in one process; more wait briefly, then get a "busy" notice. By default
# half the worker's threads (deploy/gunicorn.conf.py reads VOLCANO_UI_THREADS too): a log read
# waits on the API server, and a slow one must not take every thread the pages need.
VOLCANO_UI_LOGS_MAX_STREAMS = env_int(
    "VOLCANO_UI_LOGS_MAX_STREAMS",
    max(1, env_int("VOLCANO_UI_THREADS", 8, minimum=1, maximum=512) // 2),
    minimum=1,
    maximum=256,
)
# Seconds a page keeps following a log before it stops and says so.
VOLCANO_UI_LOGS_FOLLOW_SECONDS = env_int("VOLCANO_UI_LOGS_FOLLOW_SECONDS", 900, minimum=10, maximum=86400)
# Seconds to connect and per read of one log answer.
VOLCANO_UI_LOGS_TIMEOUT_SECONDS = env_int("VOLCANO_UI_LOGS_TIMEOUT_SECONDS", 10, minimum=1, maximum=300)
# Pods whose logs a Job's merged log reads at once (the first by name; the page says so).
VOLCANO_UI_LOGS_JOB_MAX_PODS = env_int("VOLCANO_UI_LOGS_JOB_MAX_PODS", 20, minimum=1, maximum=1000)
# Sessions (token mode's sign-ins) are files in VOLCANO_UI_SESSION_DIR, shared by the workers of a
# pod: the cookie carries only a random key, the token stays on the server, and signing out deletes
# the file (dashboard/auth_views.py, dashboard/sessions.py). No database engine, no migrations;
# each file is written atomically with mode 0600. Replicas do not share the directory (use session
# affinity, or mount a shared volume there). The other modes write no session.
SESSION_ENGINE = "dashboard.sessions"
SESSION_FILE_PATH = env_str("VOLCANO_UI_SESSION_DIR", "").strip() or str(
    Path(tempfile.gettempdir()) / f"volcano-ui-sessions-{os.getuid()}"
)
SESSION_COOKIE_NAME = "volcano_ui_session"
SESSION_COOKIE_AGE = env_int("VOLCANO_UI_SESSION_SECONDS", 8 * 3600, minimum=60, maximum=30 * 86400)
SESSION_SERIALIZER = "django.contrib.sessions.serializers.JSONSerializer"
# token mode: seconds between TokenReviews of a signed-in session's token; a refused token ends it.
VOLCANO_UI_TOKEN_RECHECK_SECONDS = env_int("VOLCANO_UI_TOKEN_RECHECK_SECONDS", 60, minimum=1, maximum=3600)
# Sign-in attempts per minute and worker: from one client address, and from all together.
VOLCANO_UI_SIGN_IN_PER_MINUTE = env_int("VOLCANO_UI_SIGN_IN_PER_MINUTE", 10, minimum=1, maximum=10_000)
VOLCANO_UI_SIGN_IN_GLOBAL_PER_MINUTE = env_int(
    "VOLCANO_UI_SIGN_IN_GLOBAL_PER_MINUTE", 120, minimum=1, maximum=1_000_000
)
