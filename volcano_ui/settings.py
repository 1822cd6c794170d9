"""Settings for volcano-ui: one module, every value read strictly from the environment.

See README.md "Configuration" for the table of variables; deploy/.env.example lists them all.
A bad value raises ImproperlyConfigured at start-up (volcano_ui/env.py).
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from volcano_ui.env import env_bool, env_choice, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("VOLCANO_UI_DEBUG", False)
SECRET_KEY = env_str("VOLCANO_UI_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env_bool("VOLCANO_UI_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("VOLCANO_UI_SECRET_KEY (or VOLCANO_UI_SECRET_KEY_FILE) must be set.")
    # A per-process random key: fine for the demo and for the read-only modes, which sign nothing
    # that must outlive the process. The token sign-in mode requires a real key.
    from django.core.management.utils import get_random_secret_key

    SECRET_KEY = get_random_secret_key()

ALLOWED_HOSTS = env_list("VOLCANO_UI_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "volcano_ui.urls"
WSGI_APPLICATION = "volcano_ui.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.template.context_processors.tz",
            ],
        },
    }
]

# The dashboard is read-only and keeps nothing on disk: no database.
DATABASES: dict = {}

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
USE_TZ = True
TIME_ZONE = env_str("VOLCANO_UI_TIME_ZONE", "UTC")

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- Cluster access (dashboard/kube) --------------------------------------------------------
# "auto": in-cluster service account when running in a pod, else the kubeconfig.
VOLCANO_UI_CLUSTER = env_choice("VOLCANO_UI_CLUSTER", "auto", ("auto", "kubeconfig", "incluster"))
VOLCANO_UI_KUBECONFIG = env_str("VOLCANO_UI_KUBECONFIG", "") or env_str("KUBECONFIG", "")
VOLCANO_UI_KUBE_CONTEXT = env_str("VOLCANO_UI_KUBE_CONTEXT", "")
VOLCANO_UI_SCHEDULER_NAMES = env_list("VOLCANO_UI_SCHEDULER_NAMES", ["volcano"])
VOLCANO_UI_LIST_PAGE_SIZE = env_int("VOLCANO_UI_LIST_PAGE_SIZE", 500, minimum=1, maximum=10000)
VOLCANO_UI_WATCH_TIMEOUT = env_int("VOLCANO_UI_WATCH_TIMEOUT", 300, minimum=10, maximum=3600)
VOLCANO_UI_POLL_SECONDS = env_int("VOLCANO_UI_POLL_SECONDS", 2, minimum=1, maximum=3600)
# GET /_bench/cache (dashboard/bench_views.py) for the fault benchmark; never on in a deployment.
VOLCANO_UI_BENCH_ENDPOINTS = env_bool("VOLCANO_UI_BENCH_ENDPOINTS", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("VOLCANO_UI_LOG_LEVEL", "INFO").upper()},
}
