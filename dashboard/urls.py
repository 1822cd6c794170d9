"""Routes of the dashboard. Object pages are addressed by namespace/name (Queues by name), so every
page has a stable, shareable URL; list filters live in the query string."""

from django.urls import include, path
from django.views.i18n import set_language

from dashboard.views import jobs, kiosk, logs, overview, podgroups, pods, prefs, queues

jobs_urls = [
    path("", jobs.jobs, name="jobs"),
    path("<str:namespace>/<str:name>/", jobs.job_detail, name="job_detail"),
    path("<str:namespace>/<str:name>/logs/", logs.job_logs, name="job_logs"),
]
podgroups_urls = [
    path("", podgroups.podgroups, name="podgroups"),
    path("<str:namespace>/<str:name>/", podgroups.podgroup_detail, name="podgroup_detail"),
]
queues_urls = [
    path("", queues.queues, name="queues"),
    path("<str:name>/", queues.queue_detail, name="queue_detail"),
]

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("jobs/", include(jobs_urls)),
    path("podgroups/", include(podgroups_urls)),
    path("queues/", include(queues_urls)),
    path("pods/<str:namespace>/<str:name>/", pods.pod_detail, name="pod_detail"),
    path("pods/<str:namespace>/<str:name>/logs/", logs.pod_logs, name="pod_logs"),
    path("kiosk/", kiosk.kiosk, name="kiosk"),
    path("prefs/theme/", prefs.set_theme, name="set_theme"),
    # Django's set_language stores the choice in the language cookie (there are no sessions).
    path("i18n/setlang/", set_language, name="set_language"),
]
