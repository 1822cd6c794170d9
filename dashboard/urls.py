"""Routes of the dashboard. Object pages are addressed by namespace/name (Queues by name), so every
page has a stable, shareable URL; list filters live in the query string."""

from django.urls import include, path
from django.views.i18n import set_language

from dashboard.views import (
    cronjobs,
    history,
    jobflows,
    jobs,
    kiosk,
    logs,
    nodes,
    overview,
    podgroups,
    pods,
    prefs,
    queues,
    topology,
)
from dashboard.views.yaml_download import object_yaml

jobs_urls = [
    path("", jobs.jobs, name="jobs"),
    path("<str:namespace>/<str:name>/", jobs.job_detail, name="job_detail"),
    path("<str:namespace>/<str:name>/logs/", logs.job_logs, name="job_logs"),
    path("<str:namespace>/<str:name>/yaml/", object_yaml, {"kind": "jobs"}, name="job_yaml"),
]
podgroups_urls = [
    path("", podgroups.podgroups, name="podgroups"),
    path("<str:namespace>/<str:name>/", podgroups.podgroup_detail, name="podgroup_detail"),
    path("<str:namespace>/<str:name>/yaml/", object_yaml, {"kind": "podgroups"}, name="podgroup_yaml"),
]
queues_urls = [
    path("", queues.queues, name="queues"),
    path("<str:name>/", queues.queue_detail, name="queue_detail"),
    path("<str:name>/yaml/", object_yaml, {"kind": "queues"}, name="queue_yaml"),
]

cronjobs_urls = [
    path("", cronjobs.cronjobs, name="cronjobs"),
    path("<str:namespace>/<str:name>/", cronjobs.cronjob_detail, name="cronjob_detail"),
]
jobflows_urls = [
    path("", jobflows.jobflows, name="jobflows"),
    path("<str:namespace>/<str:name>/", jobflows.jobflow_detail, name="jobflow_detail"),
]
jobtemplates_urls = [
    path("", jobflows.jobtemplates, name="jobtemplates"),
    path("<str:namespace>/<str:name>/", jobflows.jobtemplate_detail, name="jobtemplate_detail"),
]
nodes_urls = [
    path("", nodes.nodes, name="nodes"),
    path("<str:name>/", nodes.node_detail, name="node_detail"),
]
hypernodes_urls = [
    path("", topology.hypernodes, name="hypernodes"),
    path("<str:name>/", topology.hypernode_detail, name="hypernode_detail"),
]

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("jobs/", include(jobs_urls)),
    path("podgroups/", include(podgroups_urls)),
    path("queues/", include(queues_urls)),
    path("cronjobs/", include(cronjobs_urls)),
    path("jobflows/", include(jobflows_urls)),
    path("jobtemplates/", include(jobtemplates_urls)),
    path("nodes/", include(nodes_urls)),
    path("hypernodes/", include(hypernodes_urls)),
    path("pods/<str:namespace>/<str:name>/", pods.pod_detail, name="pod_detail"),
    path("pods/<str:namespace>/<str:name>/logs/", logs.pod_logs, name="pod_logs"),
    path("pods/<str:namespace>/<str:name>/yaml/", object_yaml, {"kind": "pods"}, name="pod_yaml"),
    path("usage/", history.usage, name="usage"),
    path("kiosk/", kiosk.kiosk, name="kiosk"),
    path("prefs/theme/", prefs.set_theme, name="set_theme"),
    # Django's set_language stores the choice in the language cookie (there are no sessions).
    path("i18n/setlang/", set_language, name="set_language"),
]
