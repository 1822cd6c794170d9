"""Django's template backend, with each rendering's context freed as soon as it is done.

A rendering's context holds itself in reference cycles (its ``ContextDict`` layers point back at
the ``Context`` that pushed them), and through ``request`` it holds the request, its environ and
the WSGI server's objects. Reference counting cannot free a cycle: it waited for the cyclic
garbage collector, whose collections then walked tens of thousands of such objects a second under
load and held the interpreter lock for tens of milliseconds each (``python -m
bench.request_cycles`` counts what a request leaves; docs/benchmarks.md). Emptying the context's
layer lists once the text is rendered breaks those cycles, so the rendering's objects go the moment
the last reference does. The rendered text is unaffected, and so is the test client's record of
contexts (it keeps copies).
"""

from __future__ import annotations

from typing import Any

from django.template import TemplateDoesNotExist
from django.template.backends.django import DjangoTemplates as _DjangoTemplates
from django.template.backends.django import Template as _Template
from django.template.backends.django import reraise
from django.template.context import make_context


class Template(_Template):
    def render(self, context: dict[str, Any] | None = None, request: Any = None) -> str:
        ctx = make_context(context, request, autoescape=self.backend.engine.autoescape)
        try:
            return self.template.render(ctx)
        except TemplateDoesNotExist as exc:
            reraise(exc, self.backend)
        finally:
            ctx.dicts.clear()
            ctx.render_context.dicts.clear()


class DjangoTemplates(_DjangoTemplates):
    """``django.template.backends.django.DjangoTemplates`` whose templates are ``Template``."""

    def from_string(self, template_code: str) -> Template:
        return Template(self.engine.from_string(template_code), self)

    def get_template(self, template_name: str) -> Template:
        try:
            return Template(self.engine.get_template(template_name), self)
        except TemplateDoesNotExist as exc:
            reraise(exc, self)
