"""Routes of the production features: sign-in/out (token mode) and the write actions.

/healthz, /readyz and /metrics have no route: HealthEndpointsMiddleware answers them first.
"""

from django.urls import path

from dashboard import actions, auth_views

urlpatterns = [
    path("sign-in/", auth_views.sign_in, name="sign_in"),
    path("sign-out/", auth_views.sign_out, name="sign_out"),
    path("actions/jobs/<str:namespace>/<str:name>/<str:action>/", actions.job_action, name="job_action"),
    path("actions/queues/<str:name>/<str:action>/", actions.queue_action, name="queue_action"),
]
