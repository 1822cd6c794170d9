"""Routes of the dashboard (filled in by the pages work)."""

from django.urls import path

from dashboard import bench_views, views

urlpatterns = [
    path("", views.overview, name="overview"),
    # Off (404) unless VOLCANO_UI_BENCH_ENDPOINTS: the fault benchmark's cache check (bench/).
    path("_bench/cache", bench_views.cache_dump, name="bench_cache"),
]
