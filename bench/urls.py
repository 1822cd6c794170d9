"""The benchmark's URLconf: the dashboard's routes plus ``/_bench/cache`` (bench/views.py)."""

from django.urls import include, path

from bench.views import cache_dump
from volcano_ui.urls import handler404  # noqa: F401 - Django reads it from the root URLconf

urlpatterns = [
    path("_bench/cache", cache_dump, name="bench_cache"),
    path("", include("volcano_ui.urls")),
]
