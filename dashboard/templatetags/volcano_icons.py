"""Template tags of the dashboard's icons (inline SVG, or drawn from one sprite per page) and the
``pct_class`` filter, also registered in the ``volcano`` library the pages load."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Small line icons (24x24 viewBox, stroke currentColor); decorative: status is always also text.
_ICONS = {
    "play": '<path d="M8 5.5v13l10.5-6.5z"/>',
    "clock": '<circle cx="12" cy="12" r="8.5"/><path d="M12 7.5V12l3 2"/>',
    "check": '<path d="M5 12.5l4.5 4.5L19 7.5"/>',
    "cross": '<path d="M6.5 6.5l11 11M17.5 6.5l-11 11"/>',
    "refresh": '<path d="M19 12a7 7 0 1 1-2.05-4.95"/><path d="M19 5v4h-4"/>',
    "stop": '<rect x="7" y="7" width="10" height="10" rx="1.5"/>',
    "ban": '<circle cx="12" cy="12" r="8.5"/><path d="M6 18L18 6"/>',
    "question": (
        '<circle cx="12" cy="12" r="8.5"/>'
        '<path d="M9.6 9.5a2.5 2.5 0 1 1 3.4 2.3c-.7.3-1 .8-1 1.5v.4"/><path d="M12 16.8v.2"/>'
    ),
    "enter": '<path d="M4 12h11M11 8l4 4-4 4"/><path d="M19 5v14"/>',
    "info": '<circle cx="12" cy="12" r="8.5"/><path d="M12 11v5.5M12 7.8v.2"/>',
    "lock": '<rect x="5.5" y="11" width="13" height="9" rx="1.5"/><path d="M8.5 11V8a3.5 3.5 0 0 1 7 0v3"/>',  # noqa: E501
    "unlock": (
        '<rect x="5.5" y="11" width="13" height="9" rx="1.5"/><path d="M8.5 11V8a3.5 3.5 0 0 1 6.8-1.2"/>'
    ),
    "alert": '<path d="M12 4l9 16H3z"/><path d="M12 10v4.5M12 17.3v.2"/>',
    "sun": '<circle cx="12" cy="12" r="4"/><path d="M12 2.5v2M12 19.5v2M2.5 12h2M19.5 12h2M5.3 5.3l1.4 1.4'
    'M17.3 17.3l1.4 1.4M5.3 18.7l1.4-1.4M17.3 6.7l1.4-1.4"/>',
    "moon": '<path d="M19.5 14.5A8 8 0 0 1 9.5 4.5a8 8 0 1 0 10 10z"/>',
    "screen": '<rect x="3" y="4.5" width="18" height="12" rx="1.5"/><path d="M8.5 20h7M12 16.5V20"/>',
    "globe": '<circle cx="12" cy="12" r="8.5"/><path d="M3.5 12h17M12 3.5c2.5 2.5 2.5 14.5 0 17M12 3.5'
    'c-2.5 2.5-2.5 14.5 0 17"/>',
    "menu": '<path d="M4 7h16M4 12h16M4 17h16"/>',
    "fire": '<path d="M12 3c1 3.5 5 5.5 5 10a5 5 0 0 1-10 0c0-2.5 1.5-3.8 2.5-5 .3 1.5 1 2.4 2 2.8'
    'C11 8.5 11 6 12 3z"/>',
}


@register.simple_tag
def icon(name: str, label: str = "") -> SafeString:
    """An inline SVG icon; ``label`` makes it meaningful to screen readers, else it is hidden."""
    body = _ICONS.get(name, _ICONS["question"])
    if label:
        return format_html(
            '<svg class="icon" viewBox="0 0 24 24" role="img" aria-label="{}">{}</svg>',
            label,
            mark_safe(body),
        )  # noqa: S308 - constant markup from _ICONS
    return format_html(
        '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">{}</svg>', mark_safe(body)
    )  # noqa: S308 - constant markup from _ICONS


@register.simple_tag
def icon_ref(name: str) -> SafeString:
    """A decorative icon drawn from the page's ``{% icon_sprite %}`` (``<use>``): ~60 bytes instead
    of the ~230 of an inline icon, for tables that repeat an icon on every row."""
    if name not in _ICONS:
        name = "question"
    return format_html(
        '<svg class="icon" aria-hidden="true" focusable="false"><use href="#vi-{}"></use></svg>', name
    )


@register.simple_tag
def icon_sprite() -> SafeString:
    """Every icon once, as ``<symbol>``s for ``icon_ref``; include it once in a page that uses them
    (outside any fragment that htmx swaps, so the symbols stay in the document)."""
    symbols = "".join(
        f'<symbol id="vi-{name}" viewBox="0 0 24 24">{body}</symbol>' for name, body in _ICONS.items()
    )
    return mark_safe(  # noqa: S308 - constant markup from _ICONS
        f'<svg class="icon-sprite" aria-hidden="true" focusable="false">{symbols}</svg>'
    )


@register.filter
def pct_class(value: int | None, prefix: str = "w") -> str:
    """CSS class for a 0-100 width/position (static/css classes w-0..w-100, l-0..l-100), so no inline
    style attribute is needed (a strict Content-Security-Policy may forbid them)."""
    try:
        v = max(0, min(100, int(value or 0)))
    except (TypeError, ValueError):
        v = 0
    return f"{prefix}-{v}"
