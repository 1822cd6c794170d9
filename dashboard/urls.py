"""Routes of the dashboard (filled in by the pages work)."""

from django.urls import path

from dashboard import views

urlpatterns = [
    path("", views.overview, name="overview"),
]
