from __future__ import annotations

from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "dashboard.history"
    label = "history"
    verbose_name = "History"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard import kube
        from dashboard.history import service

        kube.on_start(service.attach, service.detach)
