#!/usr/bin/env python
"""Django's command-line utility for volcano-ui."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "volcano_ui.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        # Import the settings now: a bad environment variable (volcano_ui/env.py names it, its
        # value and what is allowed) is one line and exit status 2, not a page of traceback.
        settings.INSTALLED_APPS  # noqa: B018
    except ImproperlyConfigured as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except ImportError:
        pass  # a missing settings module or dependency: Django reports it as it always does
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
