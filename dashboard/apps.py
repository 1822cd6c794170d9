from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Volcano dashboard"

    def ready(self) -> None:
        from dashboard import threadlocal

        threadlocal.install()
