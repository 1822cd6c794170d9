"""An object's YAML as a file: the text of its page's YAML card (the cached, trimmed object;
rows.yaml_text), for the same viewers (the request's snapshot holds only what they may see)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from dashboard.views.downloads import download_header
from dashboard.views.errors import find_object
from dashboard.views.rows import yaml_text


def _kind_label(kind: str) -> str:
    return {"jobs": _("Job"), "podgroups": _("PodGroup"), "queues": _("Queue"), "pods": _("Pod")}[kind]


@require_safe
def object_yaml(request: HttpRequest, kind: str, name: str, namespace: str | None = None) -> HttpResponse:
    """``kind`` ("jobs", "podgroups", "queues", "pods") ``namespace``/``name`` as an attachment
    ``<namespace>_<name>.<kind>.yaml`` (application/yaml, UTF-8); the page's 404/403/503 otherwise."""
    found = find_object(request, kind, _kind_label(kind), namespace, name)
    if isinstance(found, HttpResponse):
        return found
    _snap, obj = found
    resp = HttpResponse(yaml_text(obj), content_type="application/yaml; charset=utf-8")
    stem = f"{namespace}_{name}" if namespace else name
    resp["Content-Disposition"] = download_header(f"{stem}.{kind[:-1]}.yaml")
    resp["X-Content-Type-Options"] = "nosniff"
    resp["Cache-Control"] = "private, no-store"
    return resp
