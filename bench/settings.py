"""Django settings for benchmark runs: the production settings plus two measuring hooks.

- ``Server-Timing: app;dur=<ms>, cpu;dur=<ms>`` on every response (bench/middleware.py), which
  bench/loadgen.py reports next to client-observed latency;
- ``GET /_bench/cache`` (bench/views.py), the fault run's correctness check (bench/cachecheck.py).

The benchmark scripts select it with ``DJANGO_SETTINGS_MODULE=bench.settings`` (bench/common.py
sets it for the gunicorn it starts); production settings (volcano_ui.settings) load neither hook,
and the wheel does not ship bench/.
"""

from volcano_ui.settings import *  # noqa: F403
from volcano_ui.settings import MIDDLEWARE as _PRODUCTION_MIDDLEWARE

# First, so that it times every other middleware and the view.
MIDDLEWARE = ["bench.middleware.server_timing_middleware", *_PRODUCTION_MIDDLEWARE]
ROOT_URLCONF = "bench.urls"
