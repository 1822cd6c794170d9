"""Placeholder view until the pages land."""

from django.http import HttpRequest, HttpResponse


def overview(request: HttpRequest) -> HttpResponse:
    return HttpResponse("volcano-ui")
