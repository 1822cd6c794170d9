"""URL configuration: every page lives in the dashboard app."""

from django.urls import include, path

urlpatterns = [
    # Sign-in/out and write actions; listed first so their fixed prefixes win.
    path("", include("dashboard.prod_urls")),
    path("", include("dashboard.urls")),
]

# The 404 page carries the real "data as of" and kind notices (Django's default has no cache context).
handler404 = "dashboard.views.errors.not_found"
