"""The Content-Disposition of the pages' downloads (logs, YAML, CSV)."""

from __future__ import annotations

from django.utils.http import content_disposition_header


def download_header(filename: str) -> str:
    """A Content-Disposition for ``filename`` built from names the API gave (a container name may
    hold quotes or control characters): quoted by Django, control characters replaced."""
    safe = "".join(c if c.isprintable() else "_" for c in filename)
    return content_disposition_header(True, safe) or "attachment"
