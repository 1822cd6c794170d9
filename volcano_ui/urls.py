"""URL configuration: every page lives in the dashboard app."""

from django.urls import include, path

urlpatterns = [
    path("", include("dashboard.urls")),
]
