"""The session engine: Django's file-based sessions in SESSION_FILE_PATH (VOLCANO_UI_SESSION_DIR).

Server-side, so a session can be revoked (signing out deletes its file) and can hold the bearer
token of token mode without the cookie ever carrying it. The directory is created on first use,
private to the process's user (0700); one that belongs to someone else, or that others can read,
is refused, since it holds credentials.
"""

from __future__ import annotations

import os
import stat

from django.conf import settings
from django.contrib.sessions.backends import file
from django.core.exceptions import ImproperlyConfigured


class SessionStore(file.SessionStore):
    """``django.contrib.sessions.backends.file.SessionStore`` with a private, self-made directory
    (read from the settings at each use, so a changed setting applies at once)."""

    _checked: frozenset[str] = frozenset()

    @classmethod
    def _get_storage_path(cls) -> str:
        path = str(getattr(settings, "SESSION_FILE_PATH", "") or "")
        if path in cls._checked:
            return path
        if not path:
            raise ImproperlyConfigured("SESSION_FILE_PATH (VOLCANO_UI_SESSION_DIR) is empty.")
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.stat(path)
        except OSError as exc:
            raise ImproperlyConfigured(f"VOLCANO_UI_SESSION_DIR={path!r} cannot be used: {exc}") from None
        if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
            raise ImproperlyConfigured(
                f"VOLCANO_UI_SESSION_DIR={path!r} must belong to this user and be private (mode 0700): "
                "it holds the signed-in users' tokens."
            )
        cls._checked = cls._checked | {path}
        return path
