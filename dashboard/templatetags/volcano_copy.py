"""Copy buttons, the kubectl command of a page, and names shortened in the middle.

A copy button is ``hidden`` in the markup: static/dashboard/copy.js shows it and copies its
``data-copy`` text, so a page without JavaScript shows no button that does nothing (the text it
would copy is on the page, selectable).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from dashboard.hidden import as_text, reveal_html
from dashboard.volcano.kubectl import kubectl_get_yaml

register = template.Library()

_COPY_ICON = SafeString(
    '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">'
    '<rect x="8.5" y="8.5" width="11" height="11" rx="1.5"/>'
    '<path d="M15.5 8.5V6a1.5 1.5 0 0 0-1.5-1.5H6A1.5 1.5 0 0 0 4.5 6v8A1.5 1.5 0 0 0 6 15.5h2.5"/></svg>'
)

# Names longer than this are shortened in the middle where space is short (a PodGroup a Volcano
# Job creates is named <job>-<uid>: the start and the end tell them apart).
SHORTEN_OVER = 30
# Characters always kept at the end of a shortened name.
KEEP_TAIL = 8


@register.simple_tag
def copy_button(text: str, what: str = "") -> SafeString:
    """A button copying ``text``; ``what`` names it for screen readers and the tooltip ("name")."""
    label = _("Copy %(what)s") % {"what": what} if what else _("Copy")
    return format_html(
        '<button type="button" class="copy-btn" data-copy="{}" title="{}" data-copied-label="{}" hidden>{}'
        '<span class="visually-hidden">{}</span></button>',
        as_text(text),
        label,
        _("Copied"),
        _COPY_ICON,
        label,
    )


@register.simple_tag
def kubectl_line(kind: str, namespace: str | None, name: str) -> SafeString:
    """The page's ``kubectl get … -o yaml`` as code with its copy button."""
    command = kubectl_get_yaml(kind, namespace or None, name)
    return format_html(
        '<p class="kubectl small"><code data-kubectl>{}</code> {}</p>',
        reveal_html(command),
        copy_button(command, _("kubectl command")),
    )


def middle_short(name: str) -> SafeString:
    """``name`` in two spans: a head that CSS ellipsizes when space is short (.mid) and a tail kept
    whole, so the text (for selection and search) stays the full name. Short names unchanged."""
    if len(name) <= SHORTEN_OVER:
        return reveal_html(name)
    return format_html(
        '<span class="mid"><span class="mid-head">{}</span><span class="mid-tail">{}</span></span>',
        reveal_html(name[:-KEEP_TAIL]),
        reveal_html(name[-KEEP_TAIL:]),
    )


def is_long(name: str) -> bool:
    return len(name) > SHORTEN_OVER
