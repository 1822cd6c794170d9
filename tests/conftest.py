"""Shared test fixtures."""


def pytest_configure(config):
    # Production settings serve hashed static files from the collectstatic manifest, which a test
    # run does not build; tests resolve {% static %} without it. (The manifest path is exercised
    # by tests/prod/test_image_steps.py, which runs collectstatic and gunicorn.)
    from django.conf import settings

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
