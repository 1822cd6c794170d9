"""WSGI entry point for gunicorn (see deploy/gunicorn.conf.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")

application = get_wsgi_application()
