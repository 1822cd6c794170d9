"""Routes of the dashboard. Object pages are addressed by namespace/name (Queues by name), so every
page has a stable, shareable URL; list filters live in the query string."""

from django.urls import include, path
from django.views.i18n import set_language

from dashboard import views

jobs_urls = [
    path("", views.jobs, name="jobs"),
    path("<str:namespace>/<str:name>/", views.job_detail, name="job_detail"),
]
podgroups_urls = [
    path("", views.podgroups, name="podgroups"),
    path("<str:namespace>/<str:name>/", views.podgroup_detail, name="podgroup_detail"),
]
queues_urls = [
    path("", views.queues, name="queues"),
    path("<str:name>/", views.queue_detail, name="queue_detail"),
]

urlpatterns = [
    path("", views.overview, name="overview"),
    path("jobs/", include(jobs_urls)),
    path("podgroups/", include(podgroups_urls)),
    path("queues/", include(queues_urls)),
    path("pods/<str:namespace>/<str:name>/", views.pod_detail, name="pod_detail"),
    path("kiosk/", views.kiosk, name="kiosk"),
    path("prefs/theme/", views.set_theme, name="set_theme"),
    # Django's set_language stores the choice in the language cookie (there are no sessions).
    path("i18n/setlang/", set_language, name="set_language"),
]
